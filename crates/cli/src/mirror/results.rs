//! What a mirror run writes for the cluster and for the user (`--results-dir`): only what the
//! target holds. An image goes into `mapping.txt`, the mirror sets and the catalog objects
//! only once its copy finished (status `copied`, or `present` when a re-run found it there);
//! `report.json` lists every image, failed ones with why.
//!
//! - `mapping.txt`: `source=target`, one line per image, as `oc adm catalog mirror` writes.
//! - `idms.yaml`: an OpenShift `ImageDigestMirrorSet`, one entry per source repository of an
//!   image named by digest, mirrored to its target repository.
//! - `itms.yaml`: an `ImageTagMirrorSet` for images named by tag (only when there are some).
//! - `catalogsource.yaml`: an OLM v0 `CatalogSource` (grpc, `openshift-marketplace`) and
//!   `clustercatalog.yaml`: an OLM v1 `ClusterCatalog`, both naming the mirrored catalog by
//!   digest.
//! - `report.json`: every image with its source, target, digest, size and status.

use super::plan::Kind;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::Path;

/// How an image's copy ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Copied in this run (blobs already there were skipped).
    Copied,
    /// Already complete at the target (a re-run): nothing was sent.
    Present,
    /// Not copied; `reason` says why.
    Failed,
}

/// One image of the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageResult {
    /// Catalog, bundle or related.
    pub kind: Kind,
    /// As the catalog names it.
    pub source: String,
    /// The target, tagged (`registry/ns/repo:tag`); for an archive, the name in its layout.
    pub target: String,
    /// The digest the source resolved to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_digest: Option<String>,
    /// The digest at the target: the source's, unless `--platform` rewrote an index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// Bytes of its blobs and manifests, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// How it ended.
    pub status: Status,
    /// Why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Whether the catalog names it by tag only.
    #[serde(default)]
    pub by_tag: bool,
    /// Set when `--platform` rewrote the index: the platforms kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub narrowed_to: Vec<String>,
    /// Blobs uploaded in this run.
    #[serde(default)]
    pub blobs_copied: usize,
    /// Blobs the target already had (or mounted from another repository).
    #[serde(default)]
    pub blobs_skipped: usize,
    /// Bytes uploaded in this run.
    #[serde(default)]
    pub bytes_copied: u64,
    /// Signatures, attestations, referrers and lookaside signatures copied along (the sum
    /// of `carried`).
    #[serde(default)]
    pub attached: usize,
    /// What was copied along, by kind (`sig 1, att 1, referrers 2 (bundle, spdx),
    /// lookaside 1` in the text report); absent when nothing was copied in this run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carried: Option<crate::transport::copy::Carried>,
    /// What `--signatures require` established for it: signatures verified (by the keys
    /// given, or the policy), only their presence checked, or nothing to require (built here
    /// from a folder).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature_check: Option<String>,
    /// The mirror it was read from (`--mirror-config`), when one served it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mirror: Option<String>,
}

impl ImageResult {
    /// The record of the planned image `p` at `target` before anything is copied for it:
    /// nothing copied, attached or checked, no reason, no digest at the target. Callers set what
    /// happened over it (present, failed), so every counter starts at zero in one place.
    pub fn planned(p: &super::plan::PlannedImage, target: String, status: Status) -> ImageResult {
        ImageResult {
            kind: p.kind,
            source: p.source.clone(),
            target,
            source_digest: p.digest.clone(),
            digest: None,
            size: p.size,
            status,
            reason: None,
            by_tag: p.by_tag,
            narrowed_to: Vec::new(),
            blobs_copied: 0,
            blobs_skipped: 0,
            bytes_copied: 0,
            attached: 0,
            carried: None,
            signature_check: None,
            mirror: None,
        }
    }

    /// Whether the target has it.
    pub fn done(&self) -> bool {
        matches!(self.status, Status::Copied | Status::Present)
    }

    /// `target@digest` (what the cluster objects name).
    pub fn pinned_target(&self) -> String {
        let repo = strip_tag(&self.target);
        match &self.digest {
            Some(d) => format!("{repo}@{d}"),
            None => self.target.clone(),
        }
    }
}

/// The settings a re-run must share with a report to trust it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunSettings {
    /// Signatures were copied along.
    pub signatures: bool,
    /// `--platform`s (empty: all).
    pub platforms: Vec<String>,
}

/// `report.json`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Report {
    /// The catalog source (or the archive) as given.
    pub source: String,
    /// `--to` (or the archive folder).
    pub target: String,
    /// The settings of the run.
    pub settings: RunSettings,
    /// Every image, in the plan's order.
    pub images: Vec<ImageResult>,
    /// Totals.
    pub summary: Summary,
}

/// The run's totals.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Images in the plan.
    pub images: usize,
    /// Copied in this run.
    pub copied: usize,
    /// Found complete at the target.
    pub present: usize,
    /// Failed.
    pub failed: usize,
    /// Blobs uploaded.
    pub blobs_copied: usize,
    /// Blobs skipped (present or mounted).
    pub blobs_skipped: usize,
    /// Bytes uploaded.
    pub bytes_copied: u64,
    /// Wall time in seconds.
    pub seconds: f64,
}

impl Summary {
    /// Adds up `images`.
    pub fn of(images: &[ImageResult], seconds: f64) -> Summary {
        let count = |s: Status| images.iter().filter(|i| i.status == s).count();
        Summary {
            images: images.len(),
            copied: count(Status::Copied),
            present: count(Status::Present),
            failed: count(Status::Failed),
            blobs_copied: images.iter().map(|i| i.blobs_copied).sum(),
            blobs_skipped: images.iter().map(|i| i.blobs_skipped).sum(),
            bytes_copied: images.iter().map(|i| i.bytes_copied).sum(),
            seconds,
        }
    }
}

/// `registry/repo:tag` → `registry/repo` (a port's colon is before the last `/`).
pub fn strip_tag(target: &str) -> &str {
    let last_slash = target.rfind('/').map_or(0, |i| i + 1);
    match target[last_slash..].rfind(':') {
        Some(i) => &target[..last_slash + i],
        None => target,
    }
}

/// The source's repository (`registry/repo`), without tag or digest.
fn source_repository(source: &str) -> String {
    match crate::reference::Reference::parse(source) {
        Ok(r) => r.name(),
        Err(_) => strip_tag(source.split('@').next().unwrap_or(source)).to_string(),
    }
}

/// Whether a source reference names a tag as well as a digest.
fn named_by_tag_and_digest(source: &str) -> bool {
    crate::reference::Reference::parse(source).is_ok_and(|r| r.tag.is_some() && r.digest.is_some())
}

/// A Kubernetes object name from a catalog's repository and tag: lowercase alphanumerics and
/// `-`, at most 63 characters.
pub fn object_name(target: &str) -> String {
    let repo = strip_tag(target);
    let last = repo.rsplit('/').next().unwrap_or(repo);
    let tag = target[repo.len()..].trim_start_matches(':');
    let raw = if tag.is_empty() || tag == "latest" {
        last.to_string()
    } else {
        format!("{last}-{tag}")
    };
    let mut name: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    while name.contains("--") {
        name = name.replace("--", "-");
    }
    let mut name = name.trim_matches('-').to_string();
    name.truncate(63);
    let name = name.trim_end_matches('-').to_string();
    if name.is_empty() {
        "catalog".to_string()
    } else {
        name
    }
}

/// The contents of every results file, by file name (`itms.yaml` only when some image was
/// named by tag; the catalog objects only when the catalog image is at the target).
pub fn files(report: &Report) -> BTreeMap<&'static str, Vec<u8>> {
    let done: Vec<&ImageResult> = report.images.iter().filter(|i| i.done()).collect();
    let mut out = BTreeMap::new();
    let mut mapping = String::new();
    for i in &done {
        mapping.push_str(&format!("{}={}\n", i.source, i.target));
    }
    out.insert("mapping.txt", mapping.into_bytes());
    let mut by_digest: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut by_tag: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for i in done.iter().filter(|i| i.kind != Kind::Catalog) {
        // An image named by tag and digest (`repo:tag@sha256:…`) goes into both sets, as
        // oc-mirror v2 writes it: a pull by either name finds the mirror.
        let sets: &[bool] = if i.by_tag {
            &[true]
        } else if named_by_tag_and_digest(&i.source) {
            &[false, true]
        } else {
            &[false]
        };
        for &tagged in sets {
            let set = if tagged { &mut by_tag } else { &mut by_digest };
            let mirrors = set.entry(source_repository(&i.source)).or_default();
            let target = strip_tag(&i.target).to_string();
            if !mirrors.contains(&target) {
                mirrors.push(target);
            }
        }
    }
    let entries = |set: &BTreeMap<String, Vec<String>>| -> Vec<serde_json::Value> {
        set.iter()
            .map(|(source, mirrors)| json!({"source": source, "mirrors": mirrors}))
            .collect()
    };
    let catalog = done.iter().find(|i| i.kind == Kind::Catalog);
    let name = catalog.map_or_else(|| "catalog".to_string(), |c| object_name(&c.target));
    out.insert(
        "idms.yaml",
        yaml(&json!({
            "apiVersion": "config.openshift.io/v1",
            "kind": "ImageDigestMirrorSet",
            "metadata": {"name": format!("{name}-digests")},
            "spec": {"imageDigestMirrors": entries(&by_digest)},
        })),
    );
    if !by_tag.is_empty() {
        out.insert(
            "itms.yaml",
            yaml(&json!({
                "apiVersion": "config.openshift.io/v1",
                "kind": "ImageTagMirrorSet",
                "metadata": {"name": format!("{name}-tags")},
                "spec": {"imageTagMirrors": entries(&by_tag)},
            })),
        );
    }
    // One CatalogSource and one ClusterCatalog per catalog at the target (an
    // ImageSetConfiguration names several), each file a YAML stream of them.
    let mut sources = Vec::new();
    let mut catalogs = Vec::new();
    for c in done.iter().filter(|i| i.kind == Kind::Catalog) {
        let image = c.pinned_target();
        let name = object_name(&c.target);
        sources.push(json!({
            "apiVersion": "operators.coreos.com/v1alpha1",
            "kind": "CatalogSource",
            "metadata": {"name": name, "namespace": "openshift-marketplace"},
            "spec": {"sourceType": "grpc", "image": image, "displayName": name},
        }));
        catalogs.push(json!({
            "apiVersion": "olm.operatorframework.io/v1",
            "kind": "ClusterCatalog",
            "metadata": {"name": name},
            "spec": {"source": {"type": "Image", "image": {"ref": image}}},
        }));
    }
    if !sources.is_empty() {
        out.insert("catalogsource.yaml", yaml_stream(&sources));
        out.insert("clustercatalog.yaml", yaml_stream(&catalogs));
    }
    let mut json_bytes = serde_json::to_vec_pretty(report).unwrap_or_default();
    json_bytes.push(b'\n');
    out.insert("report.json", json_bytes);
    out
}

fn yaml(value: &serde_json::Value) -> Vec<u8> {
    let mut out = Vec::new();
    crate::gocompat::goyaml::emit::json_to_yaml(&mut out, value);
    out
}

/// Documents as one YAML stream, `---` between them (one document reads as [`yaml`] writes it).
fn yaml_stream(values: &[serde_json::Value]) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(b"---\n");
        }
        out.extend(yaml(v));
    }
    out
}

/// Every results file of an earlier run that this run does not write (an `itms.yaml` from a
/// run that had tag images), so a folder never mixes two runs.
pub const ALL_FILES: [&str; 6] = [
    "mapping.txt",
    "idms.yaml",
    "itms.yaml",
    "catalogsource.yaml",
    "clustercatalog.yaml",
    "report.json",
];

/// Writes the results into `dir` (created when missing), each file atomically, and removes
/// the files of [`ALL_FILES`] this run does not write.
pub fn write(dir: &Path, report: &Report) -> Result<Vec<String>, crate::fsio::FsError> {
    let files = files(report);
    let mut written = Vec::new();
    for (name, bytes) in &files {
        crate::fsio::write(&dir.join(name), bytes, crate::fsio::Options::edit(0o644))?;
        written.push(name.to_string());
    }
    for name in ALL_FILES {
        if !files.contains_key(name) {
            let _ = std::fs::remove_file(dir.join(name));
        }
    }
    Ok(written)
}

/// The report of an earlier run in `dir`, if it can be read.
pub fn read_previous(dir: &Path) -> Option<Report> {
    let bytes = std::fs::read(dir.join("report.json")).ok()?;
    serde_json::from_slice(&bytes).ok()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A copied-image record: one blob of 10 bytes, the same digest at source and target.
    pub(crate) fn result(
        kind: Kind,
        source: &str,
        target: &str,
        by_tag: bool,
        status: Status,
    ) -> ImageResult {
        ImageResult {
            kind,
            source: source.into(),
            target: target.into(),
            source_digest: Some(format!("sha256:{}", "a".repeat(64))),
            digest: Some(format!("sha256:{}", "a".repeat(64))),
            size: Some(10),
            status,
            reason: None,
            by_tag,
            narrowed_to: vec![],
            blobs_copied: 1,
            blobs_skipped: 0,
            bytes_copied: 10,
            attached: 0,
            carried: None,
            signature_check: None,
            mirror: None,
        }
    }

    #[test]
    fn only_what_the_target_has_is_written() {
        let report = Report {
            images: vec![
                result(
                    Kind::Catalog,
                    "quay.io/o/index:v4.16",
                    "m:5000/ns/o/index:v4.16",
                    true,
                    Status::Copied,
                ),
                result(
                    Kind::Bundle,
                    "quay.io/o/b@sha256:00",
                    "m:5000/ns/o/b:mirror-00",
                    false,
                    Status::Present,
                ),
                result(
                    Kind::Related,
                    "quay.io/o/op:v1",
                    "m:5000/ns/o/op:v1",
                    true,
                    Status::Copied,
                ),
                result(
                    Kind::Related,
                    "quay.io/o/bad:v1",
                    "m:5000/ns/o/bad:v1",
                    true,
                    Status::Failed,
                ),
            ],
            ..Report::default()
        };
        let files = files(&report);
        let mapping = String::from_utf8(files["mapping.txt"].clone()).unwrap();
        assert_eq!(mapping.lines().count(), 3);
        assert!(!mapping.contains("bad"));
        let itms = String::from_utf8(files["itms.yaml"].clone()).unwrap();
        assert!(
            itms.contains("m:5000/ns/o/op") && !itms.contains("bad"),
            "{itms}"
        );
        let cs = String::from_utf8(files["catalogsource.yaml"].clone()).unwrap();
        assert!(cs.contains("name: index-v4-16"), "{cs}");
        assert!(
            cs.contains(&format!("m:5000/ns/o/index@sha256:{}", "a".repeat(64))),
            "{cs}"
        );
    }

    #[test]
    fn an_image_named_by_tag_and_digest_is_in_both_mirror_sets() {
        let digest = "a".repeat(64);
        let report = Report {
            images: vec![
                result(
                    Kind::Related,
                    &format!("quay.io/o/op:v1@sha256:{digest}"),
                    "m:5000/ns/o/op:v1",
                    false,
                    Status::Copied,
                ),
                result(
                    Kind::Related,
                    &format!("quay.io/o/only-digest@sha256:{digest}"),
                    "m:5000/ns/o/only-digest:mirror",
                    false,
                    Status::Copied,
                ),
            ],
            ..Report::default()
        };
        let files = files(&report);
        let idms = String::from_utf8(files["idms.yaml"].clone()).unwrap();
        let itms = String::from_utf8(files["itms.yaml"].clone()).unwrap();
        assert!(idms.contains("source: quay.io/o/op\n"), "{idms}");
        assert!(idms.contains("source: quay.io/o/only-digest\n"), "{idms}");
        assert!(itms.contains("source: quay.io/o/op\n"), "{itms}");
        assert!(!itms.contains("only-digest"), "{itms}");
        // No status and no timestamps: nothing a cluster would have to strip.
        for text in [&idms, &itms] {
            assert!(
                !text.contains("status") && !text.contains("creationTimestamp"),
                "{text}"
            );
        }
    }

    /// Issue 48 item 6: one CatalogSource and one ClusterCatalog per catalog at the target
    /// (an ImageSetConfiguration names several), and no file a cluster reads carries a status
    /// or a time (oc-mirror v2 stamps a non-RFC 3339 `createdAt`; these carry none).
    #[test]
    fn each_catalog_gets_its_objects_and_no_file_has_status_or_times() {
        let report = Report {
            images: vec![
                result(
                    Kind::Catalog,
                    "cat-v4.16",
                    "m:5000/ns/catalog:v4.16",
                    true,
                    Status::Copied,
                ),
                result(
                    Kind::Catalog,
                    "cat-v4.18",
                    "m:5000/ns/catalog:v4.18",
                    true,
                    Status::Present,
                ),
                result(
                    Kind::Related,
                    "quay.io/o/op:v1",
                    "m:5000/ns/o/op:v1",
                    true,
                    Status::Copied,
                ),
            ],
            ..Report::default()
        };
        let files = files(&report);
        for name in ["catalogsource.yaml", "clustercatalog.yaml"] {
            let text = String::from_utf8(files[name].clone()).unwrap();
            assert_eq!(text.matches("---\n").count(), 1, "{text}");
            assert!(
                text.contains("name: catalog-v4-16\n") && text.contains("name: catalog-v4-18\n"),
                "{text}"
            );
        }
        for (name, bytes) in &files {
            if !name.ends_with(".yaml") {
                continue;
            }
            let text = String::from_utf8(bytes.clone()).unwrap();
            for word in ["status", "Timestamp", "createdAt", "Time"] {
                assert!(!text.contains(word), "{name}: {text}");
            }
        }
    }

    #[test]
    fn names_and_tags() {
        assert_eq!(strip_tag("127.0.0.1:5000/a/b:v1"), "127.0.0.1:5000/a/b");
        assert_eq!(strip_tag("127.0.0.1:5000/a/b"), "127.0.0.1:5000/a/b");
        assert_eq!(
            object_name("r:1/ns/redhat-operator-index:v4.16"),
            "redhat-operator-index-v4-16"
        );
        assert_eq!(object_name("r:1/ns/catalog:latest"), "catalog");
    }
}
