//! `grpc.health.v1.Health` as opm serves it: `Check` answers SERVING for any service name (the
//! kubelet probes `""`, OLM asks for `"Registry"`; tonic-health's stock service would answer
//! NOT_FOUND for the latter), and `Watch` is Unimplemented, as opm's embedded
//! `UnimplementedHealthServer` leaves it.

use tonic::{Request, Response, Status};
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_server::Health;
use tonic_health::pb::{HealthCheckRequest, HealthCheckResponse};

/// The health service: the process only listens once the catalog is loaded, so it is always
/// serving.
#[derive(Debug, Clone, Copy, Default)]
pub struct AlwaysServing;

#[tonic::async_trait]
impl Health for AlwaysServing {
    async fn check(
        &self,
        _: Request<HealthCheckRequest>,
    ) -> Result<Response<HealthCheckResponse>, Status> {
        Ok(Response::new(HealthCheckResponse {
            status: ServingStatus::Serving as i32,
        }))
    }

    type WatchStream = std::pin::Pin<
        Box<dyn tokio_stream::Stream<Item = Result<HealthCheckResponse, Status>> + Send>,
    >;

    async fn watch(
        &self,
        _: Request<HealthCheckRequest>,
    ) -> Result<Response<Self::WatchStream>, Status> {
        Err(Status::unimplemented("method Watch not implemented"))
    }
}
