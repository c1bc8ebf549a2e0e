//! Reading the catalog of a mirror run (a registry image, a local image, a folder built into
//! an image, or an archive's plan) into the plan: the catalog's own planned image first, then
//! every image it names, resolved and checked against the signature policy.

use super::{MirrorError, MirrorOptions, Prepared, Why};
use crate::action::catalog_render::{RenderOptions, load_source};
use crate::action::step::build::{self as catalog_build, CatalogBuildOptions};
use crate::action::step::filter::{self as catalog_filter, FilterOptions};
use crate::action::step::policy::PolicyGate;
use crate::catalog::filter::availability;
use crate::location::{LocalImage, Location, Place};
use crate::mirror::archive;
use crate::mirror::plan::{self, Kind, Plan, PlannedImage, ResolveOptions};
use crate::reference::Reference;
use crate::transport::RegistryOptions;
use std::collections::HashMap;
use std::path::Path;

/// The plan of an archive, each image read from its layout. Under a policy each image is
/// checked as the `oci:` image it is read from (the archive's layout and its name there), and
/// the digest verified must be the one the plan copies; a refusal fails that image.
pub(super) fn from_archive(dir: &Path, opts: &MirrorOptions) -> Result<Prepared, MirrorError> {
    let mut plan = archive::read_existing(dir)?;
    // A delta's images that an earlier archive carries are not in its layout: they are
    // checked at the target instead (`delta_apply::check`), not read here.
    let in_chain: std::collections::BTreeSet<String> = plan
        .archive
        .iter()
        .flat_map(|r| r.chain.iter().flat_map(|c| c.images.iter().cloned()))
        .filter(|d| !plan.archive.iter().any(|r| r.carries.images.contains(d)))
        .collect();
    for image in &mut plan.images {
        match &image.digest {
            Some(d) => match Location::local(archive::image_location(dir, d)) {
                Ok(l) => image.pull_from = Some(l),
                Err(e) => image.error = Some(e.to_string()),
            },
            None => image.error = Some("the archive records no digest for it".into()),
        }
        if image.digest.as_ref().is_some_and(|d| in_chain.contains(d)) {
            continue;
        }
        if let (Some(gate), Some(pull), None) = (&opts.policy, &image.pull_from, &image.error) {
            let checked = gate
                .admit(pull, &opts.source)
                .map_err(|e| crate::mirror::plan::reason_of(&e))
                .and_then(|c| same_digest(&c, image.digest.as_deref()));
            if let Err(e) = checked {
                image.error = Some(e);
            }
        }
    }
    Ok(Prepared {
        plan,
        warnings: Vec::new(),
        _spool: None,
        rows: Vec::new(),
        stopped: false,
        wanted: Vec::new(),
        packages: Vec::new(),
    })
}

/// The catalog read (and built, for a folder), every image it needs collected and resolved.
pub(super) fn prepare_catalog(
    source: &str,
    location: &Location,
    opts: &MirrorOptions,
) -> Result<Prepared, MirrorError> {
    let mut prepared = read_catalog(source, location, opts)?;
    let wanted = std::mem::take(&mut prepared.wanted);
    prepared.plan.images.extend(resolve_all(&wanted, opts));
    Ok(prepared)
}

/// The catalog read (and built, for a folder): its own planned image, and the images it
/// needs collected into `wanted`, not yet resolved (nothing asked of their registries).
pub(super) fn read_catalog(
    source: &str,
    location: &Location,
    opts: &MirrorOptions,
) -> Result<Prepared, MirrorError> {
    let read = CatalogRead {
        source,
        opts,
        render: RenderOptions {
            registry: opts.source.clone(),
            ..RenderOptions::default()
        },
        resolve: ResolveOptions {
            registry: opts.source.clone(),
            sizes: opts.dry_run,
        },
    };
    let mut warnings = Vec::new();
    let mut spool = None;
    let mut rows = Vec::new();
    let mut side = Side {
        warnings: &mut warnings,
        spool: &mut spool,
        rows: &mut rows,
    };
    let read_one = match location.place() {
        Place::Registry(_) => read.registry_image(location, &mut side)?,
        Place::Local(local) => read.local_image(location, local, &mut side)?,
        Place::Path(path) => read.folder(path, &mut side)?,
    };
    let (images, wanted, stopped, packages) = match read_one {
        Some((catalog, cfg)) => {
            let packages = crate::mirror::install::choices(&cfg, opts.filter.is_some());
            (vec![catalog], plan::collect(&cfg), false, packages)
        }
        // The check found requested content missing: nothing is planned for this catalog.
        None => (Vec::new(), Vec::new(), true, Vec::new()),
    };
    Ok(Prepared {
        plan: Plan {
            source: source.to_string(),
            images,
            archive: None,
        },
        warnings,
        _spool: spool,
        rows,
        stopped,
        wanted,
        packages,
    })
}

/// Each image resolved once (a tag asked of its registry) and checked by the policy, `jobs`
/// at a time, in the order given.
pub(super) fn resolve_all(wanted: &[(Kind, String)], opts: &MirrorOptions) -> Vec<PlannedImage> {
    let resolve = ResolveOptions {
        registry: opts.source.clone(),
        sizes: opts.dry_run,
    };
    crate::parallel::map_indexed(wanted.len(), opts.jobs.max(1), None, |i| {
        let (kind, image) = &wanted[i];
        let mut planned = plan::resolve(*kind, image, &resolve);
        if let Some(gate) = &opts.policy
            && planned.error.is_none()
            && let Err(e) = admit_planned(gate, &planned, &opts.source)
        {
            planned.error = Some(e);
        }
        planned
    })
}

/// What reading a catalog leaves besides the catalog: notes for the user, the temporary
/// folder the run reads from (a filtered or built image), and the availability rows.
struct Side<'a> {
    warnings: &'a mut Vec<String>,
    spool: &'a mut Option<tempfile::TempDir>,
    rows: &'a mut Vec<availability::Row>,
}

/// Reading the catalog of a run, one method per kind of source: each gives the catalog's
/// planned image and its model, adds its notes to `warnings` and hands a temporary folder
/// the run reads from (a filtered or built image) to `spool`.
struct CatalogRead<'a> {
    /// The source as given.
    source: &'a str,
    opts: &'a MirrorOptions,
    render: RenderOptions,
    resolve: ResolveOptions,
}

/// The catalog's planned image and its (filtered) model; `None` when the availability check
/// stopped the catalog before it was filtered.
type CatalogAndModel = Option<(PlannedImage, crate::catalog::model::DeclarativeConfig)>;

impl CatalogRead<'_> {
    /// The catalog image the run copies, by tag, read from `pull_from` (the image given, or
    /// the one built here), named as [`catalog_name`] names it.
    fn planned_catalog(
        &self,
        opts: &MirrorOptions,
        default_tag: Option<&str>,
        digest: String,
        size: Option<u64>,
        pull_from: Location,
    ) -> Result<PlannedImage, MirrorError> {
        let (repository, tag) = catalog_name(opts, default_tag)?;
        Ok(PlannedImage {
            kind: Kind::Catalog,
            source: self.source.to_string(),
            repository,
            tag,
            by_tag: true,
            digest: Some(digest),
            size,
            pull_from: Some(pull_from),
            mirror: None,
            error: None,
        })
    }

    fn fail(&self, why: impl Into<Why>) -> MirrorError {
        MirrorError::Catalog {
            source_name: self.source.to_string(),
            source: why.into(),
        }
    }

    /// The filter this catalog is filtered with, after the availability check when the run
    /// asks for one (`check_targets`): each requested package, channel and range against
    /// `cfg` into `rows`; `None` when something is missing and the run does not go on
    /// (`--allow-missing`), or when nothing requested is left.
    fn narrow(
        &self,
        cfg: &crate::catalog::model::DeclarativeConfig,
        rows: &mut Vec<availability::Row>,
    ) -> Result<Option<Option<FilterOptions>>, MirrorError> {
        let Some(filter) = &self.opts.filter else {
            return Ok(Some(None));
        };
        if !self.opts.check_targets {
            return Ok(Some(Some(filter.clone())));
        }
        let fc = catalog_filter::read_config(filter).map_err(|e| self.fail(e))?;
        *rows = availability::check(cfg, &fc);
        if self.opts.check_only {
            return Ok(None);
        }
        if rows.iter().all(|r| r.found.is_present()) {
            return Ok(Some(Some(filter.clone())));
        }
        if !self.opts.allow_missing {
            return Ok(None);
        }
        Ok(availability::without(&fc, rows).map(|fc| {
            Some(FilterOptions {
                prepared: Some(fc),
                ..filter.clone()
            })
        }))
    }

    /// A registry image: checked by the policy before anything else is read, then read at the
    /// digest the plan pins, which must be the one whose signatures were verified.
    fn registry_image(
        &self,
        location: &Location,
        side: &mut Side<'_>,
    ) -> Result<CatalogAndModel, MirrorError> {
        let opts = self.opts;
        let checked = match &opts.policy {
            Some(gate) => Some(gate.admit(location, &opts.source)?),
            None => None,
        };
        let mut catalog = plan::resolve(Kind::Catalog, self.source, &self.resolve);
        let (Some(pull), None) = (&catalog.pull_from, &catalog.error) else {
            return Err(self.fail(catalog.error.clone().unwrap_or_default()));
        };
        if let Some(checked) = &checked {
            same_digest(checked, catalog.digest.as_deref()).map_err(|e| self.fail(e))?;
        }
        let pinned = pull.clone();
        let (cfg, w) = load_source(&pinned, &self.render).map_err(|e| self.fail(e.to_string()))?;
        side.warnings.extend(w);
        let Some(filter) = self.narrow(&cfg, side.rows)? else {
            return Ok(None);
        };
        let cfg = filter_image(&pinned, cfg, filter.as_ref(), opts, &mut catalog, side)
            .map_err(|e| self.fail(e))?;
        Ok(Some((catalog, cfg)))
    }

    /// A local image (`oci:`, an archive): copied by its own name, tagged with its tag.
    fn local_image(
        &self,
        given: &Location,
        local: &LocalImage,
        side: &mut Side<'_>,
    ) -> Result<CatalogAndModel, MirrorError> {
        let opts = self.opts;
        let location = match &opts.policy {
            Some(gate) => gate.admit(given, &opts.source)?,
            None => given.clone(),
        };
        let opened =
            crate::action::source::open_all(&location, &opts.source).map_err(|e| self.fail(e))?;
        let digest = opened.value.digest().to_string();
        drop(opened);
        let (cfg, w) =
            load_source(&location, &self.render).map_err(|e| self.fail(e.to_string()))?;
        side.warnings.extend(w);
        let Some(filter) = self.narrow(&cfg, side.rows)? else {
            return Ok(None);
        };
        let default_tag = local
            .name()
            .filter(|n| !n.contains('/') && !n.contains(':'));
        let mut catalog = self.planned_catalog(opts, default_tag, digest, None, given.clone())?;
        let cfg = filter_image(&location, cfg, filter.as_ref(), opts, &mut catalog, side)
            .map_err(|e| self.fail(e))?;
        Ok(Some((catalog, cfg)))
    }

    /// A catalog folder: filtered (`--filter`) and built into a catalog image on `--base` in
    /// a temporary layout, which the run copies from.
    fn folder(&self, path: &Path, side: &mut Side<'_>) -> Result<CatalogAndModel, MirrorError> {
        let opts = self.opts;
        if !path.is_dir() {
            return Err(
                self.fail("is a file: pass a catalog folder, an image reference or oci:DIR[:TAG]")
            );
        }
        let dir = crate::interrupt::temp_dir("olmpack-mirror-")
            .map_err(|e| self.fail(format!("cannot create a temp folder: {e}")))?;
        let filter = match (&opts.filter, opts.check_targets) {
            (Some(_), true) => {
                let whole =
                    Location::path(path.to_path_buf()).map_err(|e| self.fail(e.to_string()))?;
                let (cfg, _) =
                    load_source(&whole, &self.render).map_err(|e| self.fail(e.to_string()))?;
                match self.narrow(&cfg, side.rows)? {
                    Some(f) => f,
                    None => return Ok(None),
                }
            }
            (f, _) => f.clone(),
        };
        let folder = match &filter {
            Some(f) => {
                let (filtered, w) =
                    catalog_filter::filter_folder(path, f, dir.path()).map_err(|e| self.fail(e))?;
                side.warnings.extend(w);
                filtered
            }
            None => path.to_path_buf(),
        };
        let folder_location =
            Location::path(folder.clone()).map_err(|e| self.fail(e.to_string()))?;
        let (cfg, w) =
            load_source(&folder_location, &self.render).map_err(|e| self.fail(e.to_string()))?;
        side.warnings.extend(w);
        let base = opts.base.clone();
        let base_verified = match (&opts.policy, &base) {
            (Some(gate), Some(base)) => {
                let checked = gate.admit(base, &opts.source)?;
                checked.verified_digest().map(str::to_string)
            }
            _ => None,
        };
        let build_opts = CatalogBuildOptions {
            base,
            base_verified,
            registry: opts.source.clone(),
            platforms: opts.platforms.clone().unwrap_or_default(),
            ..CatalogBuildOptions::default()
        };
        let built = catalog_build::build(&folder, &build_opts).map_err(|e| self.fail(e))?;
        side.warnings.extend(built.warnings.iter().cloned());
        let (digest, size, local) = into_layout(built, dir.path()).map_err(|e| self.fail(e))?;
        let catalog = self.planned_catalog(opts, None, digest, Some(size), local)?;
        *side.spool = Some(dir);
        Ok(Some((catalog, cfg)))
    }
}

/// Checks a bundle or operand image against the policy: its reference as the catalog names it
/// (Docker Hub's for a short name, as skopeo reads it), and the digest whose signatures were
/// verified must be the one the plan pinned for the copy. `Err` is the reason it fails.
fn admit_planned(
    gate: &PolicyGate,
    planned: &PlannedImage,
    registry: &RegistryOptions,
) -> Result<(), String> {
    let location = Location::reference(&planned.source).map_err(|e| e.to_string())?;
    let checked = gate
        .admit(&location, registry)
        .map_err(|e| crate::mirror::plan::reason_of(&e))?;
    same_digest(&checked, planned.digest.as_deref())
}

/// Whether the digest a policy verified (if it verified one) is the digest to be copied.
fn same_digest(checked: &Location, planned: Option<&str>) -> Result<(), String> {
    match checked.verified_digest() {
        Some(v) if Some(v) != planned => Err(format!(
            "{} changed while it was checked: its signatures were verified for {v}, the copy would read {}",
            checked.as_str(),
            planned.unwrap_or("nothing")
        )),
        _ => Ok(()),
    }
}

/// A built catalog image written into `spool/catalog-image` (base layers fetched first):
/// its digest, size and `oci:` location.
fn into_layout(
    mut built: catalog_build::BuiltCatalog,
    spool: &Path,
) -> Result<(String, u64, Location), Why> {
    built.fetch_base_layers()?;
    let layout = spool.join("catalog-image");
    std::fs::create_dir_all(&layout).map_err(|e| e.to_string())?;
    let local = LocalImage::OciLayout {
        path: layout,
        tag: Some("catalog".into()),
    };
    crate::transport::write_artifact(built.artifact(), &local, &["catalog".to_string()])?;
    // Everything the image holds: manifests, configs and layers (each blob once).
    let mut blobs: HashMap<&str, u64> = HashMap::new();
    let artifact = built.artifact();
    let top = &artifact.top().descriptor;
    blobs.insert(top.digest.as_str(), top.size);
    let images: Vec<&crate::image::Image> = match artifact {
        crate::image::Artifact::Image(i) => vec![i],
        crate::image::Artifact::Index(x) => x.images.iter().collect(),
    };
    for image in images {
        for b in std::iter::once(&image.manifest)
            .chain(std::iter::once(&image.config))
            .chain(image.layers.iter())
        {
            blobs.insert(b.descriptor.digest.as_str(), b.descriptor.size);
        }
    }
    let size = blobs.values().sum();
    let (digest, _) = built.digest();
    let local = Location::local(local).map_err(|e| e.to_string())?;
    Ok((digest.to_string(), size, local))
}

/// `--filter` on a catalog image: the model filtered (for the images to mirror) and the image
/// rebuilt by `catalog build IMAGE --filter` ([`catalog_build::build_from_image`]: base layers
/// kept, `/configs` and the serve cache replaced, every platform), written into a temp layout.
/// Without `--filter`, `cfg` comes back as it is. With it, `catalog` is pointed at the rebuilt
/// image (digest, size, the spool layout it is read from), whose folder goes to `spool`.
fn filter_image(
    image: &Location,
    cfg: crate::catalog::model::DeclarativeConfig,
    filter: Option<&FilterOptions>,
    opts: &MirrorOptions,
    catalog: &mut PlannedImage,
    side: &mut Side<'_>,
) -> Result<crate::catalog::model::DeclarativeConfig, Why> {
    use crate::action::step::filter::{filter_config, read_config};
    let Some(filter) = filter else {
        return Ok(cfg);
    };
    let fc = read_config(filter)?;
    let out = filter_config(cfg, &fc, filter.format)?;
    let build_opts = CatalogBuildOptions {
        registry: opts.source.clone(),
        platforms: opts.platforms.clone().unwrap_or_default(),
        ..CatalogBuildOptions::default()
    };
    let built = catalog_build::build_from_image(image, &fc, filter.format, &build_opts)?;
    let dir = crate::interrupt::temp_dir("olmpack-mirror-")
        .map_err(|e| format!("cannot create a temp folder: {e}"))?;
    side.warnings.extend(out.warnings);
    side.warnings.extend(built.warnings.iter().cloned());
    let (digest, size, local) = into_layout(built, dir.path())?;
    catalog.digest = Some(digest);
    catalog.size = Some(size);
    catalog.pull_from = Some(local);
    *side.spool = Some(dir);
    Ok(out.config)
}

/// `--catalog-name NAME[:TAG]` split, with defaults.
fn catalog_name(
    opts: &MirrorOptions,
    default_tag: Option<&str>,
) -> Result<(String, String), MirrorError> {
    let given = opts.catalog_name.as_deref().unwrap_or("catalog");
    let probe = format!("localhost/{given}");
    let r = Reference::parse(&probe)
        .ok()
        .filter(|r| r.digest.is_none())
        .ok_or_else(|| {
            MirrorError::Usage(format!(
                "invalid --catalog-name {given:?}: expected NAME[:TAG], e.g. my-catalog:v1"
            ))
        })?;
    let tag = r
        .tag
        .or_else(|| default_tag.map(str::to_string))
        .unwrap_or_else(|| "latest".to_string());
    Ok((r.repository, tag))
}
