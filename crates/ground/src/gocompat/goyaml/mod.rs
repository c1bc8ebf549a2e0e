//! go-yaml v2 (behind `sigs.k8s.io/yaml`), the parts whose bytes and types opm's output and
//! Kubernetes' decoding depend on: how a plain scalar resolves ([`resolve`]) and the emitter
//! opm's YAML catalogs are written with ([`emit`]).

pub mod emit;
pub mod resolve;
