//! The plan of a mirror: every image a catalog needs, named once, resolved once.
//!
//! From the catalog model ([`collect`]): each bundle's image, its `relatedImages`, and the
//! container images of its CSV's deployments when the catalog carries the CSV
//! (`olm.bundle.object`), deduplicated (an image that is both a bundle and a related image is
//! a bundle), bundles first, each group in byte order of the reference, so two runs over the
//! same catalog list the same images in the same order. Then [`resolve`]: a tag is asked of
//! the registry once and the image is copied by that digest from then on, so the copy, the
//! results and a later re-run all speak of the same bytes even if the tag moves meanwhile.

use crate::catalog::model::{DeclarativeConfig, property_type};
use crate::location::Location;
use crate::mirror_config::{Attempt, NotServed};
use crate::reference::Reference;
use crate::registry::Repository;
use crate::transport::RegistryOptions;
use base64::Engine;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What an image is to the catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// The catalog image itself.
    Catalog,
    /// A bundle image named by an `olm.bundle`.
    Bundle,
    /// An image a bundle runs or names (`relatedImages`, CSV deployments).
    Related,
    /// An image the `ImageSetConfiguration` names itself (`mirror.additionalImages`).
    Additional,
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Kind::Catalog => "catalog",
            Kind::Bundle => "bundle",
            Kind::Related => "related",
            Kind::Additional => "additional",
        })
    }
}

/// One image of the plan. Kept in the archive's `plan.json`, so the fields are what a later
/// `--from-archive` run needs to name and push it without asking the source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedImage {
    /// Catalog, bundle or related.
    pub kind: Kind,
    /// The image as the catalog names it (or the catalog source as given).
    pub source: String,
    /// The repository path below its registry (`org/app`): what the target name keeps.
    pub repository: String,
    /// The tag it gets at the target: the source's own tag, or the derived one
    /// ([`super::naming::derived_tag`]) for an image named by digest only.
    pub tag: String,
    /// Whether the catalog names it by tag only (it goes into the ImageTagMirrorSet).
    pub by_tag: bool,
    /// The digest it resolved to; `None` when it could not be resolved (see `error`).
    pub digest: Option<String>,
    /// Bytes (manifests, configs, layers) when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Where it is read from in this run: a registry reference pinned by digest (the mirror
    /// that served it under `--mirror-config`) or a local image. Not kept in an archive's plan.
    #[serde(skip)]
    pub pull_from: Option<Location>,
    /// The mirror that served it (`--mirror-config`), when one did: what the run reports
    /// per image. Not kept in an archive's plan.
    #[serde(skip)]
    pub mirror: Option<String>,
    /// Why it cannot be mirrored, when it cannot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The text an image's record keeps (the plan's `error`, the results' `reason`) when a step
/// fails: the step's error with its causes, rendered here once, because the record is data
/// written to `plan.json` and the results and read back by a later run, not an error that
/// travels on.
pub fn reason_of(error: &dyn std::error::Error) -> String {
    crate::errors::error_chain(error)
}

/// Why a manifest could not be read from one place.
#[derive(Debug, thiserror::Error)]
enum FetchError {
    #[error(transparent)]
    Repository(crate::transport::TransportError),
    #[error(transparent)]
    Manifest(crate::registry::RepositoryError),
}

impl FetchError {
    /// The place served bytes that are not what it says they are: no other place is tried.
    fn is_wrong_content(&self) -> bool {
        matches!(
            self,
            FetchError::Manifest(crate::registry::RepositoryError::Registry(
                crate::registry::RegistryError::DigestMismatch { .. }
            ))
        )
    }
}

/// The whole plan.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// The catalog source as given.
    pub source: String,
    /// Every image, the catalog first.
    pub images: Vec<PlannedImage>,
    /// In an archive's `plan.json`: what the archive carries and which archives it follows
    /// (see [`super::delta`]); absent in a plan that was never written to an archive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archive: Option<super::archive_record::ArchiveRecord>,
}

impl Plan {
    /// Number of images and the sum of the sizes known, and how many sizes are unknown.
    pub fn totals(&self) -> (usize, u64, usize) {
        let bytes = self.images.iter().filter_map(|i| i.size).sum();
        let unknown = self.images.iter().filter(|i| i.size.is_none()).count();
        (self.images.len(), bytes, unknown)
    }
}

/// Every image the bundles of `cfg` need, with what it is to the catalog, in the plan's order
/// (see the module documentation). Empty references are skipped (opm writes `image: ""` for a
/// bundle rendered without one: there is nothing to copy).
pub fn collect(cfg: &DeclarativeConfig) -> Vec<(Kind, String)> {
    let mut seen: BTreeMap<String, Kind> = BTreeMap::new();
    let mut add = |image: &str, kind: Kind| {
        let image = image.trim();
        if image.is_empty() {
            return;
        }
        let entry = seen.entry(image.to_string()).or_insert(kind);
        if kind < *entry {
            *entry = kind;
        }
    };
    for b in &cfg.bundles {
        add(&b.image, Kind::Bundle);
        for r in &b.related_images {
            add(&r.image, Kind::Related);
        }
        for csv in bundle_csvs(b) {
            for image in deployment_images(&csv) {
                add(&image, Kind::Related);
            }
        }
    }
    let mut out: Vec<(Kind, String)> = seen.into_iter().map(|(i, k)| (k, i)).collect();
    out.sort();
    out
}

/// The CSVs a catalog bundle carries as `olm.bundle.object` properties (decoded), if any.
fn bundle_csvs(b: &crate::catalog::model::Bundle) -> Vec<serde_json::Value> {
    let mut out = Vec::new();
    if let Some(csv) = b
        .csv_json
        .as_deref()
        .and_then(|t| serde_json::from_str(t).ok())
    {
        out.push(csv);
    }
    for p in &b.properties {
        if p.type_ != property_type::BUNDLE_OBJECT {
            continue;
        }
        let Ok(v) = serde_json::from_str::<serde_json::Value>(p.value.get()) else {
            continue;
        };
        let Some(data) = v.get("data").and_then(serde_json::Value::as_str) else {
            continue;
        };
        let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(data) else {
            continue;
        };
        let Ok(obj) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
            continue;
        };
        if crate::bundle::CsvJson::new(&obj).is_some() {
            out.push(obj);
        }
    }
    out
}

/// The container and init-container images of a CSV's install deployments, as opm lists
/// them (`GetOperatorImages`: the `deployment` strategy only, Go's key matching; see
/// [`crate::bundle::images`]).
pub fn deployment_images(csv: &serde_json::Value) -> Vec<String> {
    crate::bundle::images::operator_images(csv)
        .into_iter()
        .collect()
}

/// How images are resolved.
#[derive(Debug, Clone, Default)]
pub struct ResolveOptions {
    /// Credentials and TLS for the source registries.
    pub registry: RegistryOptions,
    /// Also fetch the per-platform manifests of an index to add up its size (`--dry-run`).
    pub sizes: bool,
}

/// Resolves one registry image: its digest (a tag asked once), where to read it, its target
/// tag and, when asked, its size. Never fails: a problem is recorded in `error`.
pub fn resolve(kind: Kind, source: &str, opts: &ResolveOptions) -> PlannedImage {
    let mut planned = PlannedImage {
        kind,
        source: source.to_string(),
        repository: String::new(),
        tag: String::new(),
        by_tag: false,
        digest: None,
        size: None,
        pull_from: None,
        mirror: None,
        error: None,
    };
    let reference = match Reference::parse(source) {
        Ok(r) => r,
        Err(e) => {
            planned.error = Some(format!("not an image reference: {}", e.reason));
            return planned;
        }
    };
    planned.repository = reference.repository.clone();
    planned.by_tag = reference.digest.is_none();
    // The places the options' mirror configuration gives, in containers/image's order (the
    // reference itself when no rule names it); the first that has the manifest serves.
    let served = opts.registry.mirrors.first_served(&reference, |place| {
        let what = place.reference.manifest_reference().to_string();
        match fetch(
            &place.reference,
            &what,
            &opts.registry.at(place),
            opts.sizes,
        ) {
            Ok(found) => Attempt::Served(found),
            Err(e @ FetchError::Manifest(_)) if e.is_wrong_content() => Attempt::Refused(e),
            Err(e) => Attempt::Passed(reason_of(&e)),
        }
    });
    let ((digest, size), place) = match served {
        Ok(found) => found,
        Err(NotServed::Passed { attempts, .. }) => {
            planned.error = Some(format!(
                "cannot resolve: {}",
                crate::mirror_config::describe_attempts(&attempts)
            ));
            return planned;
        }
        Err(e) => {
            planned.error = Some(format!("cannot resolve: {}", reason_of(&e)));
            return planned;
        }
    };
    planned.tag = match (&reference.tag, reference.digest.is_some()) {
        (Some(t), _) => t.clone(),
        (None, true) => super::naming::derived_tag(&digest),
        (None, false) => "latest".to_string(),
    };
    match Location::reference(&place.reference.pinned(&digest)) {
        Ok(pinned) => planned.pull_from = Some(pinned),
        Err(e) => planned.error = Some(e.to_string()),
    }
    if place.mirror {
        planned.mirror = Some(place.reference.to_string());
    }
    planned.digest = Some(digest);
    planned.size = size;
    planned
}

/// The digest `what` names in `reference`'s repository, and its size when asked. The manifest
/// read stays with the run's client ([`crate::registry::cache`]): the copy that follows reads
/// it from there, not from the registry again.
fn fetch(
    reference: &Reference,
    what: &str,
    registry: &RegistryOptions,
    sizes: bool,
) -> Result<(String, Option<u64>), FetchError> {
    let repository = registry
        .repository(reference)
        .map_err(FetchError::Repository)?;
    let manifest = repository
        .manifest_get(what)
        .map_err(FetchError::Manifest)?;
    let size = size_of(&repository, &manifest.bytes, sizes);
    Ok((manifest.digest, size))
}

/// Manifest plus config plus layers; for an index, every child when `deep` (else unknown).
fn size_of(repository: &dyn Repository, bytes: &[u8], deep: bool) -> Option<u64> {
    use crate::image::parse::{parse_index, parse_manifest};
    let own = bytes.len() as u64;
    match parse_index(bytes).ok()? {
        None => {
            let m = parse_manifest(bytes).ok()?;
            Some(own + m.config.size + m.layers.iter().map(|l| l.size).sum::<u64>())
        }
        Some(entries) if deep => {
            let mut total = own;
            for e in entries {
                let child = repository.manifest_get(&e.descriptor.digest).ok()?;
                total += size_of(repository, &child.bytes, false)?;
            }
            Some(total)
        }
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_are_collected_once_bundles_first_in_order() {
        let text = r#"{"schema":"olm.package","name":"p"}
{"schema":"olm.bundle","name":"p.v1","package":"p","image":"quay.io/o/b@sha256:1111111111111111111111111111111111111111111111111111111111111111","properties":[],"relatedImages":[{"name":"","image":"quay.io/o/b@sha256:1111111111111111111111111111111111111111111111111111111111111111"},{"name":"op","image":"quay.io/o/op:v1"},{"name":"x","image":""}]}
{"schema":"olm.bundle","name":"p.v2","package":"p","image":"quay.io/o/a:v2","properties":[],"relatedImages":[{"name":"op","image":"quay.io/o/op:v1"},{"name":"z","image":"docker.io/library/busybox:1"}]}
"#;
        let loaded = crate::catalog::load::load_bytes("c.json", text.as_bytes());
        let images = collect(&loaded.config);
        let names: Vec<String> = images.iter().map(|(k, i)| format!("{k} {i}")).collect();
        assert_eq!(
            names,
            [
                "bundle quay.io/o/a:v2",
                "bundle quay.io/o/b@sha256:1111111111111111111111111111111111111111111111111111111111111111",
                "related docker.io/library/busybox:1",
                "related quay.io/o/op:v1",
            ]
        );
    }

    #[test]
    fn deployment_images_are_read_from_a_csv() {
        let csv = serde_json::json!({"spec": {"install": {"strategy": "deployment", "spec": {"deployments": [
            {"spec": {"template": {"spec": {"containers": [{"image": "a"}], "initContainers": [{"image": "b"}]}}}}
        ]}}}});
        assert_eq!(deployment_images(&csv), ["a", "b"]);
    }

    /// opm decodes the install strategy into Go structs, so `Image`, `InitContainers` and
    /// the like are read whatever their case; the plan copies what opm's render lists.
    #[test]
    fn deployment_images_match_keys_as_go_does() {
        let text = r#"{"schema":"olm.package","name":"p"}
{"schema":"olm.bundle","name":"p.v1","package":"p","image":"quay.io/o/b:v1","properties":[{"type":"olm.bundle.object","value":{"data":"CSV"}}]}
"#;
        let csv = r#"{"apiVersion":"operators.coreos.com/v1alpha1","kind":"ClusterServiceVersion","metadata":{"name":"p.v1"},"spec":{"install":{"strategy":"deployment","spec":{"deployments":[{"name":"d","spec":{"template":{"spec":{"Containers":[{"name":"c","Image":"quay.io/o/op:v1"}],"initContainers":[{"name":"i","image":"quay.io/o/init:v1"}]}}}}]}}}}"#;
        let data = base64::engine::general_purpose::STANDARD.encode(csv);
        let text = text.replace("CSV", &data);
        let loaded = crate::catalog::load::load_bytes("c.json", text.as_bytes());
        let names: Vec<String> = collect(&loaded.config)
            .iter()
            .map(|(k, i)| format!("{k} {i}"))
            .collect();
        assert_eq!(
            names,
            [
                "bundle quay.io/o/b:v1",
                "related quay.io/o/init:v1",
                "related quay.io/o/op:v1",
            ]
        );
    }
}
