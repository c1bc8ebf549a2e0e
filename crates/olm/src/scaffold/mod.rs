//! `bundle init` as a library: turn a folder of manifests (or an existing bundle) into a bundle
//! with `metadata/annotations.yaml`, `metadata/dependencies.yaml` and optionally a
//! `bundle.Dockerfile`, without ever clobbering what the user wrote.
//!
//! The work is split in two so that `--dry-run`, conflict reports and tests all see the same
//! thing: [`plan`] reads everything and computes every file's new bytes (writing nothing), and
//! [`apply`] writes the files whose bytes change, each atomically. Rules the plan follows:
//! - values come from the flags, else the existing annotations, else what the CSV implies; a flag
//!   that contradicts an existing value is a [`Conflict`], applied only with `--force`;
//! - annotations init does not own are kept in their order with their values; an annotations or
//!   dependencies file whose content already matches is left byte-for-byte alone;
//! - a flat folder is never reorganised in place: its manifests are copied to `OUT/manifests/`.
//!
//! Templates live in `scaffolds/` at the crate root and are embedded with `include_str!`.

pub mod dockerfile;
pub mod error;
pub mod manifests;
pub mod write;

/// The file `--dockerfile` writes at the bundle root (the name operator-sdk and opm use); `bundle
/// build` recognises it there as olmpack's own and does not warn that it is left out.
pub const DOCKERFILE: &str = "bundle.Dockerfile";

pub use error::ScaffoldError;

use crate::bundle::keys;
use crate::bundle::metadata::{annotations, dependencies};
use crate::fsio;
use annotations::Entry;
use std::fs;
use std::path::{Path, PathBuf};

/// The value of the media type annotation for the only bundle format init writes.
pub const MEDIATYPE: &str = crate::bundle::MediaType::RegistryV1.as_str();
/// The manifests folder as the annotation names it.
pub const MANIFESTS_DIR: &str = "manifests/";
/// The metadata folder as the annotation names it.
pub const METADATA_DIR: &str = "metadata/";
/// Mode of the files init creates (opm writes 0644 too).
const NEW_FILE_MODE: u32 = 0o644;

/// What the user asked for; every field is optional except the folder, so the plan can tell what
/// was given from what it infers.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The bundle folder or flat folder of manifests.
    pub dir: PathBuf,
    /// `--package`.
    pub package: Option<String>,
    /// `--channels`, already split on commas.
    pub channels: Option<Vec<String>>,
    /// `--default-channel`.
    pub default_channel: Option<String>,
    /// `--output-dir`: where the bundle is written when it is not `dir` itself.
    pub output_dir: Option<PathBuf>,
    /// `--dockerfile`: also write `bundle.Dockerfile`.
    pub dockerfile: bool,
}

/// One file the plan writes (or leaves alone because its bytes would not change).
#[derive(Debug, Clone)]
pub struct PlannedFile {
    /// Where it goes.
    pub path: PathBuf,
    /// The path relative to the bundle root, for messages.
    pub display: String,
    /// The current bytes, when the file exists.
    pub old: Option<Vec<u8>>,
    /// The bytes init writes.
    pub new: Vec<u8>,
    /// The source of a byte-identical copy (a manifest of a flat folder), `None` when generated.
    pub copied_from: Option<PathBuf>,
    /// Permission bits for a new file.
    pub mode: u32,
}

/// What happens to a planned file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// The file does not exist yet.
    Create,
    /// The file exists with other bytes.
    Update,
    /// The file already holds these bytes; it is not touched (its mtime stays).
    Unchanged,
}

impl PlannedFile {
    /// What writing this file would do.
    pub fn action(&self) -> Action {
        match &self.old {
            None => Action::Create,
            Some(old) if *old == self.new => Action::Unchanged,
            Some(_) => Action::Update,
        }
    }
}

/// An existing value that the requested one would replace; shown as a diff, applied only with
/// `--force`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// The file, relative to the bundle root.
    pub file: String,
    /// Why it conflicts.
    pub reason: String,
    /// `- old` / `+ new` lines.
    pub diff: String,
}

/// The annotation values init settled on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Values {
    /// Package name.
    pub package: String,
    /// Channels annotation text (comma-separated).
    pub channels: String,
    /// Default channel, when there is one.
    pub default_channel: Option<String>,
}

/// Everything init would do; computed without writing anything.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The bundle root written (the folder itself, or `--output-dir`).
    pub root: PathBuf,
    /// Every file, in writing order: copies first, then metadata, then the Dockerfile.
    pub files: Vec<PlannedFile>,
    /// Existing values the plan would replace.
    pub conflicts: Vec<Conflict>,
    /// Things the user should know (a default channel outside the channels, skipped files…).
    pub notes: Vec<String>,
    /// The resolved annotation values.
    pub values: Values,
}

/// Reads the folder and computes every file init writes; see the module docs for the rules.
pub fn plan(opts: &Options) -> Result<Plan, ScaffoldError> {
    let dir = opts.dir.as_path();
    match fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(ScaffoldError::NotADirectory(dir.to_path_buf())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ScaffoldError::NotFound(dir.to_path_buf()));
        }
        Err(e) => return Err(fsio::at("read", dir)(e).into()),
    }
    let is_bundle = dir.join("manifests").is_dir();
    let source_dir = if is_bundle {
        dir.join("manifests")
    } else {
        dir.to_path_buf()
    };
    let manifests = manifests::read_manifests(&source_dir)?;
    let root = match (&opts.output_dir, is_bundle) {
        (Some(out), _) => out.clone(),
        (None, true) => dir.to_path_buf(),
        (None, false) => {
            return Err(ScaffoldError::FlatWithoutOutputDir {
                dir: dir.to_path_buf(),
            });
        }
    };
    let same_root = same_dir(&root, dir);
    let mut plan = Plan {
        root: root.clone(),
        files: Vec::new(),
        conflicts: Vec::new(),
        notes: Vec::new(),
        values: Values {
            package: String::new(),
            channels: String::new(),
            default_channel: None,
        },
    };

    // 1. Manifests: copied byte for byte when the bundle is written elsewhere.
    if !(is_bundle && same_root) {
        let mut not_objects = Vec::new();
        for file in &manifests.files {
            if !is_bundle && !file.is_object {
                not_objects.push(file.name.clone());
                continue;
            }
            plan.copy(
                &file.path,
                file.bytes.clone(),
                &format!("manifests/{}", file.name),
            )?;
        }
        let target_manifests = root.join("manifests");
        if target_manifests.is_dir() && !same_dir(&target_manifests, &source_dir) {
            let stale: Vec<String> = list_files(&target_manifests)?
                .into_iter()
                .map(|(name, _)| name)
                .filter(|name| !manifests.files.iter().any(|f| f.name == *name))
                .collect();
            if !stale.is_empty() {
                plan.notes.push(format!(
                    "{} also holds files that are not in {} (init never deletes files; remove them if they are stale): {}",
                    target_manifests.display(),
                    source_dir.display(),
                    stale.join(", ")
                ));
            }
        }
        if !not_objects.is_empty() {
            plan.notes.push(format!(
                "not copied (no Kubernetes `kind`, so not a manifest): {}",
                not_objects.join(", ")
            ));
        }
    }
    let skipped: Vec<&String> = manifests
        .skipped
        .iter()
        .filter(|s| {
            !(s.as_str() == "manifests/" || s.as_str() == "metadata/" || is_root_of(s, dir, &root))
        })
        .collect();
    if !skipped.is_empty() {
        plan.notes.push(format!(
            "ignored in {} (subfolders, hidden and non-YAML files are not manifests): {}",
            source_dir.display(),
            skipped
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }

    // 2. Where existing metadata is read from: the target's, else the source folder's.
    let target_meta = root.join("metadata");
    let meta_src = if target_meta.is_dir() {
        Some(target_meta.clone())
    } else if dir.join("metadata").is_dir() {
        Some(dir.join("metadata"))
    } else {
        None
    };
    let meta_is_target = meta_src
        .as_deref()
        .is_some_and(|m| same_dir(m, &target_meta));
    let find = |names: [&str; 2]| -> Option<(String, PathBuf)> {
        let src = meta_src.as_ref()?;
        names
            .iter()
            .map(|n| (n.to_string(), src.join(n)))
            .find(|(_, p)| p.is_file())
    };
    let annotations_src = find(["annotations.yaml", "annotations.yml"]);
    let dependencies_src = find(["dependencies.yaml", "dependencies.yml"]);
    if let Some(src) = meta_src.as_ref().filter(|_| !meta_is_target) {
        plan.copy_other_metadata(src)?;
    }
    if !same_root && dir.join("tests").join("scorecard").is_dir() {
        plan.copy_tree(&dir.join("tests").join("scorecard"), "tests/scorecard")?;
    }

    // 3. annotations.yaml
    let existing = match &annotations_src {
        Some((_, path)) => {
            let text = read_text(path)?;
            Some((annotations::parse(path, &text)?, text))
        }
        None => None,
    };
    let existing_ann = existing.as_ref().map(|(a, _)| a);
    let core = plan.resolve(opts, existing_ann, &manifests)?;
    let entries = annotations::ordered(&core, existing_ann);
    let ann_name = annotations_src
        .as_ref()
        .filter(|_| meta_is_target)
        .map_or("annotations.yaml", |(n, _)| n.as_str())
        .to_string();
    let ann_path = target_meta.join(&ann_name);
    let new_text = match &existing {
        Some((a, text)) if a.all_strings && annotations::same_content(&a.entries, &entries) => {
            text.clone()
        }
        _ => annotations::render(&entries),
    };
    plan.push_generated(
        ann_path,
        format!("metadata/{ann_name}"),
        new_text.into_bytes(),
    )?;

    // 4. dependencies.yaml
    let (required, dep_notes) = dependencies::required(&manifests.csv_view());
    plan.notes.extend(dep_notes);
    let (dep_name, dep_text) = match &dependencies_src {
        Some((name, path)) => {
            let text = read_text(path)?;
            let new = match dependencies::merge(path, &text, &required)? {
                None => text,
                Some((new, note)) => {
                    plan.notes.extend(note);
                    new
                }
            };
            (name.clone(), new)
        }
        None => (
            "dependencies.yaml".to_string(),
            dependencies::render_new(&required),
        ),
    };
    let dep_name = if meta_is_target {
        dep_name
    } else {
        "dependencies.yaml".into()
    };
    plan.push_generated(
        target_meta.join(&dep_name),
        format!("metadata/{dep_name}"),
        dep_text.into_bytes(),
    )?;

    // 5. bundle.Dockerfile
    if opts.dockerfile {
        let mut extra = Vec::new();
        if let Some(cfg) = entries
            .iter()
            .find(|e| e.key == keys::TEST_CONFIG)
            .map(|e| e.value.trim().trim_matches('/').to_string())
            .filter(|v| !v.is_empty() && !v.split('/').any(|p| p == ".." || p.is_empty()))
            && (root.join(&cfg).is_dir()
                || (!same_root && cfg == "tests/scorecard" && dir.join(&cfg).is_dir()))
        {
            extra.push(cfg);
        }
        let text = dockerfile::render(&entries, &extra)?;
        let path = root.join(DOCKERFILE);
        let old = read_optional(&path)?;
        if let Some(old) = &old {
            let old_text = String::from_utf8_lossy(old);
            if !old_text.starts_with(dockerfile::marker()) && old_text != text {
                plan.conflicts.push(Conflict {
                    file: DOCKERFILE.into(),
                    reason: "was not written by olmpack bundle init; it would be replaced".into(),
                    diff: write::diff(&old_text, &text),
                });
            }
        }
        plan.files.push(PlannedFile {
            path,
            display: DOCKERFILE.into(),
            old,
            new: text.into_bytes(),
            copied_from: None,
            mode: NEW_FILE_MODE,
        });
    }
    Ok(plan)
}

/// Writes every file whose bytes change, each atomically, and returns how many were written.
/// Files are written in plan order (manifests before metadata), so an interruption leaves at
/// worst a bundle without its new metadata, never a half-written file.
pub fn apply(plan: &Plan) -> Result<usize, ScaffoldError> {
    let mut written = 0;
    for file in &plan.files {
        if file.action() != Action::Unchanged {
            write::atomic_write(&file.path, &file.new, file.mode)?;
            written += 1;
        }
    }
    Ok(written)
}

impl Plan {
    /// Plans a byte-identical copy; a different existing target is a conflict.
    fn copy(&mut self, from: &Path, bytes: Vec<u8>, display: &str) -> Result<(), ScaffoldError> {
        let path = self.root.join(display);
        let old = read_optional(&path)?;
        if let Some(old) = &old
            && *old != bytes
        {
            self.conflicts.push(Conflict {
                file: display.to_string(),
                reason: format!("differs from {}, which would replace it", from.display()),
                diff: write::diff(
                    &String::from_utf8_lossy(old),
                    &String::from_utf8_lossy(&bytes),
                ),
            });
        }
        self.files.push(PlannedFile {
            path,
            display: display.to_string(),
            old,
            new: bytes,
            copied_from: Some(from.to_path_buf()),
            mode: write::mode_of(from),
        });
        Ok(())
    }

    /// Copies metadata files init does not generate (properties.yaml…) to the new bundle.
    fn copy_other_metadata(&mut self, src: &Path) -> Result<(), ScaffoldError> {
        for (name, path) in list_files(src)? {
            let owned = ["annotations.", "dependencies."].iter().any(|p| {
                name.starts_with(p) && (name.ends_with(".yaml") || name.ends_with(".yml"))
            });
            if owned || name.starts_with('.') {
                continue;
            }
            let bytes = fsio::read(&path)?;
            self.copy(&path, bytes, &format!("metadata/{name}"))?;
        }
        Ok(())
    }

    /// Copies a folder tree (the scorecard tests) to the same relative place in the new bundle.
    fn copy_tree(&mut self, src: &Path, display: &str) -> Result<(), ScaffoldError> {
        let entries = fsio::read_dir(src)?;
        let mut list: Vec<(String, PathBuf)> = entries
            .filter_map(Result::ok)
            .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
            .collect();
        list.sort();
        for (name, path) in list {
            let rel = format!("{display}/{name}");
            if path.is_dir() {
                self.copy_tree(&path, &rel)?;
            } else if path.is_file() {
                let bytes = fsio::read(&path)?;
                self.copy(&path, bytes, &rel)?;
            }
        }
        Ok(())
    }

    /// Adds a generated file, reading what is there now.
    fn push_generated(
        &mut self,
        path: PathBuf,
        display: String,
        new: Vec<u8>,
    ) -> Result<(), ScaffoldError> {
        let old = read_optional(&path)?;
        self.files.push(PlannedFile {
            path,
            display,
            old,
            new,
            copied_from: None,
            mode: NEW_FILE_MODE,
        });
        Ok(())
    }

    /// Settles package, channels and default channel (flag, else existing, else inferred) and
    /// returns the six core entries; records conflicts and notes.
    fn resolve(
        &mut self,
        opts: &Options,
        existing: Option<&annotations::Existing>,
        manifests: &manifests::Manifests,
    ) -> Result<Vec<Entry>, ScaffoldError> {
        let old = |key: &str| {
            existing
                .and_then(|e| e.value(key))
                .map(str::to_string)
                .filter(|v| !v.trim().is_empty())
        };
        let mut conflict = |key: &str, old: &str, new: &str, why: &str| {
            self.conflicts.push(Conflict {
                file: "metadata/annotations.yaml".into(),
                reason: why.to_string(),
                diff: format!(
                    "-   {k}: {}\n+   {k}: {}\n",
                    annotations::yaml_quote(old),
                    annotations::yaml_quote(new),
                    k = key
                ),
            });
        };

        // Fixed values: a different existing value is the user's, so replacing it needs --force.
        let mut core = Vec::new();
        for (key, value) in [
            (keys::MEDIATYPE, MEDIATYPE),
            (keys::MANIFESTS, MANIFESTS_DIR),
            (keys::METADATA, METADATA_DIR),
        ] {
            if let Some(o) = old(key)
                && o != value
            {
                conflict(
                    key,
                    &o,
                    value,
                    "init writes registry+v1 bundles with manifests/ and metadata/ folders",
                );
            }
            core.push(entry(key, value));
        }

        // Package.
        let csv_name = manifests.csv_view().name().to_string();
        let implied = manifests::package_from_csv_name(&csv_name).map(str::to_string);
        let package = match (&opts.package, old(keys::PACKAGE)) {
            (Some(flag), existing) => {
                let flag = flag.trim().to_string();
                if flag.is_empty() || flag.contains(char::is_whitespace) || flag.contains(',') {
                    return Err(ScaffoldError::BadValue(format!(
                        "--package {flag:?} is not a package name (no spaces or commas)"
                    )));
                }
                if let Some(o) = existing.filter(|o| o.trim() != flag) {
                    conflict(
                        keys::PACKAGE,
                        &o,
                        &flag,
                        "--package differs from the package in the existing annotations",
                    );
                }
                flag
            }
            (None, Some(existing)) => {
                self.notes.push(format!(
                    "package {existing}: from the existing metadata/annotations.yaml"
                ));
                existing
            }
            (None, None) => {
                // Where the bundle already says its package, before guessing from the CSV.
                if let Some((p, file)) = manifests::package_from_dockerfile(&opts.dir) {
                    self.notes.push(format!(
                        "package {p}: from the package label of {} (pass --package to choose another)",
                        file.display()
                    ));
                    p
                } else if let Some((p, folder)) = manifests::package_from_layout(&opts.dir) {
                    self.notes.push(format!(
                        "package {p}: from the folder {} (a <package>/<version>/ layout; pass --package to choose another)",
                        folder.display()
                    ));
                    p
                } else {
                    let p = implied.clone().ok_or(ScaffoldError::NoPackage {
                        csv_name: csv_name.clone(),
                    })?;
                    self.notes.push(format!(
                        "package {p}: from the CSV name {csv_name} (pass --package if the package is named otherwise)"
                    ));
                    p
                }
            }
        };
        if let Some(implied) = implied.filter(|i| *i != package.trim()) {
            self.notes.push(format!(
                "package {package} differs from {implied}, the name the CSV {csv_name} implies; OLM uses the annotation"
            ));
        }
        core.push(entry(keys::PACKAGE, &package));

        // Channels.
        let existing_channels = old(keys::CHANNELS);
        let channels = match (&opts.channels, existing_channels) {
            (Some(flag), existing) => {
                let list = clean_channels(flag)?;
                match existing {
                    // Same channels in another order mean the same thing: keep the user's text.
                    Some(o) if same_set(&split_channels(&o), &list) => o,
                    Some(o) => {
                        let new = list.join(",");
                        conflict(
                            keys::CHANNELS,
                            &o,
                            &new,
                            "--channels differs from the channels in the existing annotations",
                        );
                        new
                    }
                    None => list.join(","),
                }
            }
            (None, Some(existing)) => existing,
            (None, None) => return Err(ScaffoldError::NoChannels),
        };
        let channel_list = split_channels(&channels);
        core.push(entry(keys::CHANNELS, &channels));

        // Default channel.
        let existing_default = old(keys::DEFAULT_CHANNEL);
        let default = match (&opts.default_channel, existing_default) {
            (Some(flag), existing) => {
                let flag = flag.trim().to_string();
                if flag.is_empty() || flag.contains(',') {
                    return Err(ScaffoldError::BadValue(format!(
                        "--default-channel {flag:?} must be one channel name"
                    )));
                }
                if let Some(o) = existing.filter(|o| o.trim() != flag) {
                    conflict(
                        keys::DEFAULT_CHANNEL,
                        &o,
                        &flag,
                        "--default-channel differs from the default channel in the existing annotations",
                    );
                }
                Some(flag)
            }
            (None, Some(existing)) => Some(existing),
            (None, None) => match channel_list.as_slice() {
                [only] => Some(only.clone()),
                _ => None,
            },
        };
        if existing
            .and_then(|e| e.value(keys::DEFAULT_CHANNEL))
            .is_some_and(|v| v.trim().is_empty())
            && default.is_none()
        {
            self.notes.push(
                "the empty default-channel annotation was removed (an empty value fails validation)"
                    .into(),
            );
        }
        if let Some(d) = &default {
            if !channel_list.iter().any(|c| c == d.trim()) {
                self.notes.push(format!(
                    "default channel {d} is not one of this bundle's channels ({channels}); that is allowed when another bundle of the package is in {d}"
                ));
            }
            core.push(entry(keys::DEFAULT_CHANNEL, d));
        } else if channel_list.len() > 1 {
            self.notes.push(format!(
                "no default channel set (several channels: {channels}); pass --default-channel to choose one"
            ));
        }
        self.values = Values {
            package,
            channels,
            default_channel: default,
        };
        Ok(core)
    }
}

fn entry(key: &str, value: &str) -> Entry {
    Entry {
        key: key.to_string(),
        value: value.to_string(),
    }
}

/// Splits a channels annotation the way opm does (commas, trimmed).
fn split_channels(text: &str) -> Vec<String> {
    text.split(',').map(|c| c.trim().to_string()).collect()
}

/// Whether two channel lists hold the same names, in any order.
fn same_set(a: &[String], b: &[String]) -> bool {
    let mut a: Vec<&String> = a.iter().collect();
    let mut b: Vec<&String> = b.iter().collect();
    a.sort();
    a.dedup();
    b.sort();
    b.dedup();
    a == b
}

/// Checks `--channels`: no empty names, no spaces, no duplicates.
fn clean_channels(flag: &[String]) -> Result<Vec<String>, ScaffoldError> {
    let mut out: Vec<String> = Vec::new();
    for c in flag.iter().flat_map(|c| c.split(',')) {
        let c = c.trim();
        if c.is_empty() || c.contains(char::is_whitespace) {
            return Err(ScaffoldError::BadValue(format!(
                "--channels {:?}: channel names must be non-empty and without spaces",
                flag.join(",")
            )));
        }
        if !out.iter().any(|o| o == c) {
            out.push(c.to_string());
        }
    }
    if out.is_empty() {
        return Err(ScaffoldError::NoChannels);
    }
    Ok(out)
}

fn read_text(path: &Path) -> Result<String, ScaffoldError> {
    let _reading = crate::guard::reading(path);
    let bytes = fsio::read(path)?;
    String::from_utf8(bytes).map_err(|_| ScaffoldError::NotText(path.to_path_buf()))
}

fn read_optional(path: &Path) -> Result<Option<Vec<u8>>, ScaffoldError> {
    match fs::read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(fsio::at("read", path)(e).into()),
    }
}

fn list_files(dir: &Path) -> Result<Vec<(String, PathBuf)>, ScaffoldError> {
    let mut out: Vec<(String, PathBuf)> = fsio::read_dir(dir)?
        .filter_map(Result::ok)
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .filter(|(_, p)| p.is_file())
        .collect();
    out.sort();
    Ok(out)
}

/// Whether two paths name the same folder (both must exist to be compared by identity).
fn same_dir(a: &Path, b: &Path) -> bool {
    match (fs::canonicalize(a), fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// Whether a skipped entry (`name/`) is the output folder itself, nested in the source folder.
fn is_root_of(skipped: &str, dir: &Path, root: &Path) -> bool {
    skipped
        .strip_suffix('/')
        .is_some_and(|name| same_dir(&dir.join(name), root))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn testdata(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/init")
            .join(name)
    }

    #[test]
    fn a_plan_reads_values_from_existing_annotations_and_writes_nothing() {
        let dir = testdata("bundle-custom");
        let plan = plan(&Options {
            dir: dir.clone(),
            dockerfile: true,
            ..Options::default()
        })
        .expect("plan");
        assert_eq!(
            plan.values,
            Values {
                package: "kvstore-operator".into(),
                channels: "stable,fast".into(),
                default_channel: Some("stable".into()),
            }
        );
        assert!(plan.conflicts.is_empty());
        assert!(!dir.join("bundle.Dockerfile").exists());
        let actions: Vec<(&str, Action)> = plan
            .files
            .iter()
            .map(|f| (f.display.as_str(), f.action()))
            .collect();
        assert_eq!(
            actions,
            vec![
                ("metadata/annotations.yaml", Action::Update),
                ("metadata/dependencies.yaml", Action::Unchanged),
                ("bundle.Dockerfile", Action::Create),
            ]
        );
    }

    #[test]
    fn flags_that_contradict_the_annotations_are_conflicts() {
        let plan = plan(&Options {
            dir: testdata("bundle-custom"),
            package: Some("other".into()),
            channels: Some(vec!["stable".into(), "fast".into()]),
            default_channel: Some("fast".into()),
            ..Options::default()
        })
        .expect("plan");
        let reasons: Vec<&str> = plan.conflicts.iter().map(|c| c.reason.as_str()).collect();
        assert_eq!(reasons.len(), 2, "{reasons:?}");
        assert!(reasons[0].contains("--package"));
        assert!(reasons[1].contains("--default-channel"));
        assert_eq!(plan.values.package, "other");
    }

    #[test]
    fn a_flat_folder_needs_an_output_dir() {
        let err = plan(&Options {
            dir: testdata("flat"),
            channels: Some(vec!["stable".into()]),
            ..Options::default()
        })
        .expect_err("refused");
        assert!(matches!(err, ScaffoldError::FlatWithoutOutputDir { .. }));
    }

    #[test]
    fn channels_are_checked() {
        assert!(clean_channels(&["a".into(), "".into()]).is_err());
        assert!(clean_channels(&["a b".into()]).is_err());
        assert_eq!(
            clean_channels(&["a".into(), "b,a".into()]).expect("ok"),
            vec!["a".to_string(), "b".to_string()]
        );
    }
}
