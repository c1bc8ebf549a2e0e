//! The OLM registry API types and service stubs, generated at build time from
//! `proto/registry.proto` (protox + tonic-prost-build, no `protoc`), plus the encoded descriptor
//! set that server reflection hands to clients such as grpcurl.

#![allow(missing_docs)]
#![allow(clippy::all, clippy::pedantic)]

tonic::include_proto!("api");

/// The encoded `FileDescriptorSet` of `registry.proto`: what reflection clients download to
/// learn the `api.Registry` methods and messages without a local copy of the proto.
pub const FILE_DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/registry_descriptor.bin"));
