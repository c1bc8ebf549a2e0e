//! The integration tests that run the olmpack binary, one module per area, folded into one
//! test binary so the suite compiles and links once (issue 19 item 5).

#[path = "../support/mod.rs"]
mod support;

mod build_cli;
mod build_corpus;
mod build_interop;
mod bundle_render;
mod cache_owner;
mod catalog_add;
mod catalog_build;
mod catalog_build_filter;
mod catalog_diff;
mod catalog_filter;
mod catalog_graph;
mod catalog_graph_opm;
mod catalog_init;
mod catalog_mirror;
mod catalog_render;
mod catalog_render_registry;
mod catalog_serve;
mod catalog_serve_experimental;
mod catalog_template;
mod catalog_template_cases;
mod catalog_template_substitutes;
mod catalog_validate;
mod catalog_validate_opm;
mod ci_recipes;
mod completions_man;
mod convert_template;
mod copy;
mod filter_diff_substitutes;
mod first_hour;
mod hostile_images;
mod init;
mod init_corpus;
mod isolation;
mod legacy_pm;
mod legacy_sqlite;
mod malformed_input;
mod registry;
mod release_versions;
mod rules_and_reports;
mod second_hour;
mod serve_cache;
mod serve_cache_pogreb;
mod signing;
mod sources;
mod validate_image;
mod validate_rules;
