//! Transports: where images come from and where they go, for every command.
//!
//! The data flow of olmpack reads top to bottom:
//! - models (`bundle`, `catalog`) and shared vocabulary (`findings`, `reference`);
//! - rules (`validate`, and the catalog rules) over the models;
//! - [`crate::image`]: the immutable image value and how it is built;
//! - **transports (this module)**: one place that turns a [`crate::location::Location`] (a
//!   registry reference, `oci:`, `oci-archive:`, `docker-archive:`, classified once) into the
//!   image model, the same image or index value whichever the source ([`open::open`]; an
//!   index's images open on demand through it); each local format is one module, read and written there
//!   ([`layout`] for `oci:`, [`archive`] for `oci-archive:` and `docker-archive:`, with
//!   [`local`] choosing between them when writing), and one place that sends an image to its destinations
//!   ([`sink`]: a local `--output`, or every `-t` of a push); [`copy()`] composes the two: any
//!   source, opened as the one image model ([`open_artifact`]), written to any sink, with its
//!   platforms narrowed and its signatures and referrers along when asked;
//! - [`crate::registry`]: the distribution-API client that the registry transport uses;
//! - `action`: what a command does, as a composition of the above;
//! - `commands`: flag parsing and exit codes only.
//!
//! Nothing here knows about bundles or catalogs (which layer holds `metadata/`, which label
//! names `/configs`): that is the callers' business. Errors are [`TransportError`] values, never
//! command failures.
//!
//! Convenience for callers that need an image's files: [`open::unpack_image`] opens any source,
//! unpacks its layers safely into a temp folder and returns its labels and config.

pub mod archive;
pub mod attached;
pub mod copy;
pub mod copy_options;
pub mod error;
pub mod layout;
pub mod layout_repository;
pub mod local;
pub mod open;
pub mod options;
pub mod sink;
pub mod tar_members;
pub mod unpack;

pub use copy::{CopyOptions, CopyReport, Target, copy};
pub use error::{LocalError, TransportError};
pub use local::{write_artifact, write_image, write_index};
pub use open::{
    Opened, OpenedArtifact, OpenedImage, UnpackedImage, open, open_artifact, open_image,
    unpack_image, unpack_image_opened,
};
pub use options::RegistryOptions;
