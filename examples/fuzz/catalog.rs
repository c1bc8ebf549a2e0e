//! The catalog half of the fuzz harness: catalog folders and templates, damaged like bundle
//! files, then every catalog entry point in-process: loading, every `catalog validate` rule and
//! both report renderers, `catalog render` (JSON or YAML, with and without the migration to
//! `olm.csv.metadata`), the channel graphs (mermaid, DOT, SVG) and template rendering with a
//! stand-in bundle renderer (no registry), in both template types and auto-detection.

use olmpack::action::catalog_render::{BundleImage, RenderOptions, render_catalog};
use olmpack::catalog::load::LoadOptions;
use olmpack::catalog::model::{Bundle, Origin, Property};
use olmpack::catalog::render::MigrateLevel;
use olmpack::catalog::template::{
    BundleRenderError, OpmCompat, TemplateOptions, TemplateType, render_template,
};
use olmpack::catalog::write::Format;
use olmpack::catalog::{graph, load, mermaid, validate, write};
use std::path::{Path, PathBuf};

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
    let yaml = |dir: &Path| -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
            .collect();
        files.sort();
        files
    };
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

/// A stand-in for pulling bundle images: `HOST/PKG:VERSION` is bundle `PKG.vVERSION` of
/// package PKG; a reference without a tag fails as an unknown manifest would.
fn stand_in(image: &str) -> Result<Vec<Bundle>, BundleRenderError> {
    let (repo, version) = image
        .rsplit_once(':')
        .filter(|(r, _)| !r.is_empty())
        .ok_or_else(|| BundleRenderError::new(format!("{image}: manifest unknown")))?;
    let package = repo.rsplit('/').next().unwrap_or(repo);
    let value = serde_json::json!({ "packageName": package, "version": version }).to_string();
    let property = Property::new("olm.package", value).map_err(BundleRenderError::new)?;
    Ok(vec![Bundle {
        schema: "olm.bundle".into(),
        name: format!("{package}.v{version}"),
        package: package.into(),
        image: image.into(),
        properties: vec![property],
        related_images: Vec::new(),
        objects: Vec::new(),
        csv_json: None,
        origin: Origin::default(),
    }])
}

/// Every catalog entry point on the (damaged) catalog folder `dir`; `variant` picks the output
/// format and migration so that successive cases cover all of them.
pub fn run_catalog(dir: &Path, variant: u64, stage: &mut super::Stage) {
    stage("catalog validate", &mut || {
        let opts = LoadOptions {
            jobs: Some(1 + (variant % 2) as usize),
        };
        if let Ok(report) = validate::validate_dir(dir, &opts) {
            let mut sink = Vec::new();
            let _ = olmpack::validate::render::human(&report, &mut sink, false);
            let _ =
                olmpack::validate::render::json(&[report], variant.is_multiple_of(3), &mut sink);
        }
    });
    stage("catalog render", &mut || {
        let opts = RenderOptions {
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
        };
        let _ = render_catalog(&[dir.to_string_lossy().into_owned()], &opts);
    });
    stage("catalog graph", &mut || {
        if let Ok(loaded) = load::load_dir_with(dir, &LoadOptions { jobs: Some(1) }) {
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

/// Template rendering of the (damaged) template file `file`, with the type detected or given.
pub fn run_template(file: &Path, variant: u64, stage: &mut super::Stage) {
    let text = String::from_utf8_lossy(&std::fs::read(file).unwrap_or_default()).into_owned();
    stage("template render", &mut || {
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
pub fn run_bundle_render(bundle: &Path, variant: u64, stage: &mut super::Stage) {
    stage("bundle render", &mut || {
        let opts = RenderOptions {
            format: if variant.is_multiple_of(2) {
                Format::Yaml
            } else {
                Format::Json
            },
            image: BundleImage::Fixed("quay.io/fuzz/bundle:v1".into()),
            migrate: if variant.is_multiple_of(5) {
                MigrateLevel::BundleObjectToCsvMetadata
            } else {
                MigrateLevel::None
            },
            ..RenderOptions::default()
        };
        let _ = render_catalog(&[bundle.to_string_lossy().into_owned()], &opts);
    });
}
