//! The bundle model: a bundle folder (or manifests held in memory) loaded into typed
//! annotations, dependencies and manifest objects that remember where they came from, its format
//! ([`MediaType`]), typed views of its CSV as YAML ([`csv`]) and as JSON ([`csv_json`]), and the
//! images it needs ([`images`]), and the metadata files written for it ([`metadata`]), and the edits `bundle pin` and `bundle republish` make to a CSV's text ([`pin`], [`release`]).

pub mod csv;
pub mod csv_json;
pub mod images;
pub mod loader;
pub mod media_type;
pub mod metadata;
pub mod model;
pub mod pin;
pub mod release;

pub use csv::Csv;
pub use csv_json::CsvJson;
pub use loader::{LoadError, MAX_FILE_SIZE};
pub use media_type::MediaType;
pub use model::{Annotation, Annotations, Bundle, FileEntry, MetadataFile, Object, keys};
