//! The catalog half of the fuzz harness: catalog folders and templates, damaged like bundle
//! files, then every catalog entry point in-process: loading, every `catalog validate` rule and
//! both report renderers, `catalog render` (JSON or YAML, with and without the migration to
//! `olm.csv.metadata`), the channel graphs (mermaid, DOT, SVG) and template rendering with a
//! stand-in bundle renderer (no registry), in both template types and auto-detection.

use olmpack::action::catalog_render::{BundleImage, RenderOptions, render_catalog};
use olmpack::catalog::load::LoadOptions;
use olmpack::catalog::render::MigrateLevel;
use olmpack::catalog::template::{OpmCompat, TemplateOptions, TemplateType, render_template};
use olmpack::catalog::write::Format;
use olmpack::catalog::{graph, load, mermaid, write};
use olmpack::findings::rules::Subject;
use olmpack::validate::catalog as validate;
use std::path::{Path, PathBuf};

#[path = "../../tests/support/template_stand_in.rs"]
mod template_stand_in;
use super::Stages;
use template_stand_in::stand_in;

/// Name the damaged copy of a template gets in the work folder.
pub const TEMPLATE_FILE: &str = "template.yaml";

/// Catalog folders to damage: the ones under `testdata/catalogs` (valid and broken, one per
/// rule) and, when the shared data is there, every real package catalog beside the corpus.
pub fn catalog_roots(repo: &Path, corpus: Option<&Path>) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = ["valid-basic", "valid-json", "render-small", "build-small"]
        .iter()
        .map(|n| repo.join("testdata/catalogs").join(n))
        .collect();
    roots.extend(super::subdirs(&repo.join("testdata/catalogs/broken")));
    if let Some(shared) = corpus.and_then(Path::parent) {
        for r in super::subdirs(&shared.join("catalogs/fbc")) {
            for version in super::subdirs(&r.join("catalogs")) {
                roots.extend(super::subdirs(&version));
            }
        }
    }
    roots
}

/// Template files to damage: ours under `testdata/templates` and the real ones in the shared
/// packages (`operators/*/catalog-templates/*.yaml`).
pub fn template_files(repo: &Path, corpus: Option<&Path>) -> Vec<PathBuf> {
    let yaml = |dir: &Path| super::listed(dir, |p| p.extension().is_some_and(|e| e == "yaml"));
    let mut files = yaml(&repo.join("testdata/templates"));
    if let Some(shared) = corpus.and_then(Path::parent) {
        for r in super::subdirs(&shared.join("catalogs/packages")) {
            for package in super::subdirs(&r.join("operators")) {
                files.extend(yaml(&package.join("catalog-templates")));
            }
        }
    }
    files
}

/// `catalog render` options for a case: `variant` picks the output format and the migration, so
/// that successive cases cover every combination.
fn render_options(variant: u64) -> RenderOptions {
    RenderOptions {
        format: if variant.is_multiple_of(2) {
            Format::Json
        } else {
            Format::Yaml
        },
        migrate: if variant.is_multiple_of(3) {
            MigrateLevel::BundleObjectToCsvMetadata
        } else {
            MigrateLevel::None
        },
        ..RenderOptions::default()
    }
}

/// Every catalog entry point on the (damaged) catalog folder `dir`; `variant` picks the output
/// format and migration so that successive cases cover all of them.
pub fn run_catalog(dir: &Path, variant: u64, stages: &mut Stages) {
    stages.run("catalog validate", || {
        let opts = LoadOptions {
            jobs: Some(1 + (variant % 2) as usize),
            ..LoadOptions::default()
        };
        if let Ok(report) = validate::validate_dir(dir, &opts) {
            let mut sink = Vec::new();
            let _ = olmpack::validate::output::human(&report, &mut sink, false);
            let strict = variant.is_multiple_of(3);
            let _ = olmpack::validate::output::jsonl(
                std::slice::from_ref(&report),
                Subject::Catalog,
                strict,
                &mut sink,
            );
            let _ = olmpack::validate::output::json(&[report], Subject::Catalog, strict, &mut sink);
        }
    });
    stages.run("catalog render", || {
        if let Ok(at) = olmpack::location::Location::parse(&dir.to_string_lossy()) {
            let _ = render_catalog(&[at], &render_options(variant));
        }
    });
    stages.run("catalog graph", || {
        if let Ok(loaded) = load::load_dir_with(
            dir,
            &LoadOptions {
                jobs: Some(1),
                ..LoadOptions::default()
            },
        ) {
            let cfg = &loaded.config;
            let mut warnings = Vec::new();
            let _ = mermaid::write_mermaid(cfg, &mermaid::MermaidOptions::default(), &mut warnings);
            if let Ok(graphs) = graph::build(cfg, None, None) {
                let _ = graph::to_dot(&graphs);
                let _ = graph::to_svg(&graphs);
            }
        }
    });
}

/// Template rendering of the (damaged) template `text`, with the type detected or given.
pub fn run_template(text: &[u8], variant: u64, stages: &mut Stages) {
    let text = String::from_utf8_lossy(text);
    stages.run("template render", || {
        let template_type = match variant % 3 {
            0 => None,
            1 => Some(TemplateType::Basic),
            _ => Some(TemplateType::Semver),
        };
        let compat = if variant.is_multiple_of(2) {
            OpmCompat::NEWEST
        } else {
            "1.46".parse().unwrap_or(OpmCompat::NEWEST)
        };
        let options = TemplateOptions {
            template_type,
            compat,
            jobs: 1,
        };
        if let Ok(cfg) = render_template(TEMPLATE_FILE, &text, &options, &stand_in) {
            let mut out = Vec::new();
            let _ = write::write_config(&mut out, &cfg, Format::Yaml);
        }
    });
}

/// `catalog render` of a (damaged) bundle folder, as a catalog's bundle with a given image.
pub fn run_bundle_render(bundle: &Path, variant: u64, stages: &mut Stages) {
    stages.run("bundle render", || {
        let opts = RenderOptions {
            image: BundleImage::Fixed("quay.io/fuzz/bundle:v1".into()),
            ..render_options(variant)
        };
        if let Ok(at) = olmpack::location::Location::parse(&bundle.to_string_lossy()) {
            let _ = render_catalog(&[at], &opts);
        }
    });
}
