//! olmpack: package, validate and push Kubernetes Operator bundles (OLM `registry+v1`) as OCI
//! images without a container daemon.
//!
//! The workspace is split by what each part holds, so every command is a composition of them.
//! This crate is the command line; it re-exports the modules of the crates below under their
//! old paths (`olmpack::catalog`, ...), so tests and benches name one crate:
//! - [`bundle`]: loading a bundle folder (or an unpacked image) into a typed model whose objects
//!   remember their file and line;
//! - [`validate`]: the registry+v1 rules, each with a stable id and severity, and the renderers;
//! - [`image`]: the image model every source yields and every sink takes (its blobs, and an
//!   opened index's images, fetch themselves), reproducible layers, config and manifest;
//! - [`transport`]: the one place a source string becomes an image, and an image reaches its
//!   destinations (layout, archives, registry);
//! - [`registry`]: credentials and the distribution-API client (the registry transport);
//! - [`catalog`]: the FBC model, its loader and writers, templates, the channel graph
//!   (`catalog::channel`), filter and diff;
//! - [`serve`]: opm's serve cache and the gRPC/HTTP server with its point-query index;
//! - [`olmv1`]: the objects OLM v1 (operator-controller) applies for a bundle, and its refusals;
//! - [`signature`]: cosign and containers' simple signing, key files, lookaside stores and
//!   `policy.json`;
//! - [`interrupt`]: Ctrl-C and SIGTERM remove what a command staged, then exit 130;
//! - [`pipe`]: a closed stdout (`| head`) ends olmpack silently, as it ends coreutils;
//! - [`action`]: what each command does, composed from the above (one door per subcommand),
//!   and `action::source`, the one place that says what a source is (folder, file or image,
//!   and which of seven kinds, with or without opening it);
//! - [`cli`] and [`commands`]: the command line, one thin module per subcommand, importing
//!   only `action` (the types they print come through it), the flags and the printers;
//! - [`guard`]: isolation of olmpack's own failures (a caught panic names the file being read).
//!
//! Below them all, the ground floor imports no domain module: [`yaml`] (positioned YAML),
//! [`semver_range`], [`gocompat`] (every reproduction of Go behaviour, once: JSON formatting,
//! `%q`, go-yaml's resolution and emitter, the serve-cache tar digest), [`fsio`] (atomic writes
//! and [`fsio::FsError`], the one file-error type) and [`findings`].

#![deny(missing_docs)]

pub mod action;
pub mod alloc;
pub mod cli;
pub mod commands;
pub mod mirror;
pub mod pipe;

pub use olmpack_ground::{
    bundle_keys, errors, findings, fsio, gocompat, guard, interrupt, location, parallel, reference,
    semver_range, yaml,
};
pub use olmpack_oci::{image, mirror_config, registry, signature, transport};
pub use olmpack_olm::{bundle, catalog, legacy, olmv1, pipeline, scaffold, validate};
pub use olmpack_serve::{cache, serve};
