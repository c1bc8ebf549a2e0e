//! The ground floor of olmpack: what every model and every transport stands on, importing no
//! domain crate. Positioned YAML ([`yaml`]), blang/semver ranges ([`semver_range`]), every
//! reproduction of Go behaviour opm's output depends on, written once ([`gocompat`]), atomic
//! writes and the one file-error type ([`fsio`]), the shared vocabulary of diagnostics and rule
//! records ([`findings`]), image references and source strings parsed without the network
//! ([`reference`], [`location`]), the registry+v1 annotation keys both the bundle model and the
//! bundle image use ([`bundle_keys`]), and the process plumbing: failure isolation ([`guard`]),
//! interrupts ([`interrupt`]), bounded parallelism ([`parallel`]) and error text ([`errors`]).

#![deny(missing_docs)]

pub mod bundle_keys;
pub mod errors;
pub mod findings;
pub mod fsio;
pub mod gocompat;
pub mod guard;
pub mod interrupt;
pub mod location;
pub mod parallel;
pub mod reference;
pub mod semver_range;
pub mod yaml;
