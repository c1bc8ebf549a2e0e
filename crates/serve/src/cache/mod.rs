//! opm's serve cache, at build time: writing it as the base's opm reads it (the JSON cache in
//! `write.rs`, pogreb for opm v1.41+ in `pogreb.rs`), who owns it inside an image (`owner.rs`),
//! and checking that an image's cache is the one its catalog gives (`verify.rs`). Apart from
//! `serve`, which reads a cache to answer queries: these open images and write layers, the
//! servers do neither.

pub mod error;
pub mod fit;
pub mod format;
pub mod owner;
pub mod pogreb;
pub mod profile;
pub mod report;
pub mod verify;
pub mod write;

pub use error::CacheError;
pub use profile::{CacheProfile, OpmVersion, Semantics};
pub use report::{CacheEntryOwner, CacheFit, CacheSummary, ChangedFile, VerifyReport};
pub use write::*;
