//! What a command does, as a composition of models, rules, images and transports (opm calls
//! the same layer `alpha/action`). A command parses its flags into the options here, calls one
//! function, and prints the result; everything that is not flag parsing or printing lives here
//! so other front ends (tests, benches, a future API) get the same behaviour.
//!
//! - [`source`]: what a source is (the seven kinds: bundle, catalog and package-manifest
//!   folders, sqlite files, bundle, catalog and index database images), opened once, with the
//!   label and path rules of images;
//! - [`bundle_image`]: reading bundle images (annotations, the bundle's files, shape warnings);
//!   [`bundle_inspect`], [`bundle_pull`]: `bundle inspect` and `bundle pull`;
//!   [`bundle_validate`]: `bundle validate` (folders, packages and images, each isolated);
//!   [`bundle_migrate`]: `bundle migrate` (package manifests to bundle folders);
//!   [`bundle_init`], [`catalog_init`]: `bundle init` (scaffolding) and `catalog init`;
//! - [`catalog_render`]: `catalog render` (bundle folders, catalog folders and images to opm's
//!   exact output);
//! - [`bundle_source`], [`catalog_add`]: one bundle rendered under its published reference
//!   (templates, `catalog add`) and `catalog add` itself;
//! - [`bundle_build`]: `bundle build` (load, validate, build, deliver); [`bundle_republish`]:
//!   `bundle republish` (release bumped, CSV renamed, built, pushed, the substitution added);
//! - [`bundle_render`]: `bundle render` (the objects OLM v1 applies, from a folder, an image or
//!   a catalog);
//! - [`connection`]: the registry connection flags every image-reading command shares, as
//!   the library's registry options;
//! - [`labels`], [`delivery`]: the `--label` rules and the output and push flags both builds
//!   share;
//! - [`catalog_build`]: `catalog build` (validate or filter, then the build, deliver and sign
//!   steps); [`catalog_dockerfile`]: `catalog generate-dockerfile`;
//! - [`step`]: the steps commands are made of (build, filter, deliver, sign), each written
//!   once; a command's module (its door) calls steps, never another door;
//! - [`copy`]: `copy` (any image source to any sink, platforms and signatures included);
//! - [`catalog_filter`], [`catalog_diff`]: `catalog filter` (catalog-filter's semantics, the
//!   result validated) and `catalog diff` (changes and upgrade-path regressions);
//! - [`catalog_serve`], [`catalog_cache`]: `catalog serve` and `catalog cache verify`;
//! - [`catalog_validate`], [`catalog_graph`]: `catalog validate` (folders in parallel, inputs
//!   of another kind named, the OLM v1 group, opm's output shape) and `catalog graph`;
//! - [`catalog_template`]: `catalog template` (renderers wired to the bundle map and
//!   registries) and `catalog convert-template`;
//! - [`check`]: `check` (the pipelines' pull-request checks and their CI report forms);
//! - [`attest`]: `attest` and `verify-attestation` (in-toto statements attached beside an
//!   image and verified, with a key or keyless);
//! - [`verify_blob`]: `verify-blob` (a Sigstore bundle for a file or digest, keyless or with
//!   a key, offline against a trusted root);
//! - [`explain`]: `explain` (one rule's record as text); [`reference`]: the generated
//!   Markdown reference under `docs/reference/` (commands and rules).

pub mod attest;
pub mod bundle_build;
pub mod bundle_image;
pub mod bundle_init;
pub mod bundle_inspect;
pub mod bundle_migrate;
pub mod bundle_pin;
pub mod bundle_pull;
pub mod bundle_render;
pub mod bundle_republish;
pub mod bundle_source;
pub mod bundle_validate;
pub mod catalog_add;
pub mod catalog_build;
pub mod catalog_cache;
pub mod catalog_diff;
pub mod catalog_dockerfile;
pub mod catalog_filter;
pub mod catalog_graph;
pub mod catalog_init;
pub mod catalog_matrix;
pub mod catalog_mirror;
pub mod catalog_olmv1;
pub mod catalog_onboard;
pub mod catalog_query;
pub mod catalog_render;
pub mod catalog_serve;
pub mod catalog_template;
pub mod catalog_validate;
pub mod check;
pub mod connection;
pub mod copy;
pub mod delivery;
pub mod explain;
pub mod labels;
pub mod reference;
pub mod sign;
pub mod source;
pub mod step;
pub mod verify_blob;

/// Every action takes its sources as a parsed [`Location`]; commands parse them with this.
pub use crate::location::Location;
