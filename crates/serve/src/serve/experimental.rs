//! opm's experimental gRPC service `api.ExperimentalRegistry` (opm v1.69, #1981):
//! `ExperimentalListPackageCustomSchemas` streams the blobs of one other schema for one package
//! (or those with no package), each as a `google.protobuf.Struct`.
//!
//! Why: OLM clients that read custom blobs (not `olm.package`/`olm.channel`/`olm.bundle`/
//! `olm.deprecations`) from a catalog image query this RPC on current opm; a catalog served by
//! olmpack must answer it the same way. As upstream (`pkg/server/server.go`): without the
//! metadata `x-acknowledge-experimental: true` the stream is empty (clients unaware of it see
//! no change), an empty schema is `InvalidArgument` "schema is required", a schema or package
//! outside `^[a-zA-Z0-9][a-zA-Z0-9._-]*$` is `InvalidArgument` with opm's message. Blobs come in
//! catalog order (file order, then order in the file).

use super::api;
use super::index::ServeIndex;
use std::pin::Pin;
use std::sync::Arc;
use tonic::{Request, Response, Status};

/// The metadata key a caller sends to acknowledge that the endpoint may change.
pub const ACK_HEADER: &str = "x-acknowledge-experimental";

/// opm's pattern for the schema and package of a query.
const PATTERN: &str = "^[a-zA-Z0-9][a-zA-Z0-9._-]*$";

/// The experimental service over a served catalog.
#[derive(Clone)]
pub struct Experimental {
    index: Arc<ServeIndex>,
}

fn valid(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

impl Experimental {
    /// The service answering from `index` (the same catalog the registry serves).
    pub fn new(index: Arc<ServeIndex>) -> Self {
        Experimental { index }
    }

    /// The blobs of `schema` with package `package` (empty: blobs with no package), or opm's
    /// `InvalidArgument` for a query it refuses.
    pub fn custom_schemas(
        &self,
        schema: &str,
        package: &str,
    ) -> Result<Vec<prost_types::Struct>, Status> {
        if schema.is_empty() {
            return Err(Status::invalid_argument("schema is required"));
        }
        for (what, value) in [("schema", schema), ("packageName", package)] {
            if what == "packageName" && value.is_empty() {
                continue;
            }
            if !valid(value) {
                return Err(Status::invalid_argument(format!(
                    "invalid custom schema query: invalid {what} {}: must match {PATTERN}",
                    crate::gocompat::quote::go_quote(value)
                )));
            }
        }
        let mut out = Vec::new();
        for meta in &self.index.model().config().others {
            let pkg = if meta.schema == crate::catalog::model::SCHEMA_PACKAGE {
                &meta.name
            } else {
                &meta.package
            };
            if meta.schema != schema || pkg != package {
                continue;
            }
            let bytes = crate::gocompat::protowire::structpb_from_json(meta.blob.get().as_bytes())
                .map_err(|e| Status::internal(format!("parse meta JSON: {e}")))?;
            let st = <prost_types::Struct as prost::Message>::decode(bytes.as_slice())
                .map_err(|e| Status::internal(format!("unmarshal meta proto: {e}")))?;
            out.push(st);
        }
        Ok(out)
    }
}

type Stream<T> = Pin<Box<dyn tokio_stream::Stream<Item = Result<T, Status>> + Send + 'static>>;

#[tonic::async_trait]
impl api::experimental_registry_server::ExperimentalRegistry for Experimental {
    type ExperimentalListPackageCustomSchemasStream = Stream<prost_types::Struct>;

    async fn experimental_list_package_custom_schemas(
        &self,
        request: Request<api::ExperimentalListPackageCustomSchemasRequest>,
    ) -> Result<Response<Self::ExperimentalListPackageCustomSchemasStream>, Status> {
        let acknowledged = request
            .metadata()
            .get(ACK_HEADER)
            .and_then(|v| v.to_str().ok())
            == Some("true");
        if !acknowledged {
            let empty: Vec<Result<prost_types::Struct, Status>> = Vec::new();
            return Ok(Response::new(Box::pin(tokio_stream::iter(empty))));
        }
        let r = request.into_inner();
        let items: Vec<Result<prost_types::Struct, Status>> = self
            .custom_schemas(&r.schema, &r.package_name)?
            .into_iter()
            .map(Ok)
            .collect();
        Ok(Response::new(Box::pin(tokio_stream::iter(items))))
    }
}
