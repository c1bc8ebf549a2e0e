//! Compiles `proto/registry.proto` (the OLM registry API) with protox, a pure-Rust protoc, so
//! building olmpack needs no `protoc` binary; the encoded descriptor set is kept for gRPC server
//! reflection.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=../../proto/registry.proto");
    let fds = protox::compile(["registry.proto"], ["../../proto"])?;
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(
        out.join("registry_descriptor.bin"),
        prost::Message::encode_to_vec(&fds),
    )?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        // prost's codec with each answer's buffer reserved at its size (crates/serve/src/serve/codec.rs).
        .codec_path("crate::serve::codec::SizedCodec")
        .compile_fds(fds)?;
    Ok(())
}
