//! The bundle model: a bundle folder loaded into typed annotations, dependencies and manifest
//! objects that remember where they came from, and a typed view of its CSV ([`csv`]).

pub mod csv;
pub mod loader;
pub mod model;

pub use csv::Csv;
pub use loader::{LoadError, MAX_FILE_SIZE};
pub use model::{Annotation, Annotations, Bundle, FileEntry, MetadataFile, Object, keys};
