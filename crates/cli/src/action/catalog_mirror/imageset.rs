//! `catalog mirror --config ISC.yaml` with no SOURCE: every catalog an oc-mirror v2
//! `ImageSetConfiguration` names ([`crate::mirror::imageset`]), each filtered by its own
//! entry, plus `additionalImages`, minus `blockedImages`, as one plan.
//!
//! Every catalog is read and each requested package, channel and version range checked against
//! it ([`crate::catalog::filter::availability`]) before anything is copied: one missing row
//! refuses the run with the whole table (`--allow-missing` drops what is missing and goes on).
//! Once a catalog lacks something, the catalogs after it are read for the table only.

use super::read::{read_catalog, resolve_all};
use super::{MirrorError, MirrorOptions, Prepared};
use crate::action::step::filter::FilterOptions;
use crate::catalog::filter::availability::Row;
use crate::location::{Location, Place};
use crate::mirror::imageset::{self, ImageSet, ImageSetCatalog};
use crate::mirror::plan::{Kind, Plan};
use std::collections::BTreeMap;
use std::path::Path;

/// One catalog's requested packages against what it holds.
#[derive(Debug, Clone)]
pub struct CatalogRows {
    /// The catalog as the configuration names it.
    pub catalog: String,
    /// One row per requested package, channel, range or bundle.
    pub rows: Vec<Row>,
}

impl CatalogRows {
    /// Whether a requested row is missing from this catalog.
    pub fn missing(&self) -> bool {
        self.rows.iter().any(|r| !r.found.is_present())
    }
}

/// The table the user reads: package, channel, range, then one column per catalog.
pub fn table(checks: &[CatalogRows]) -> String {
    // Row keys (package, channel, range) in first-seen order.
    let mut keys: Vec<(String, String, String)> = Vec::new();
    let mut cells: BTreeMap<(usize, usize), String> = BTreeMap::new();
    for (col, c) in checks.iter().enumerate() {
        for r in &c.rows {
            let key = (
                r.package.value.clone(),
                r.channel.clone().unwrap_or_else(|| "*".into()),
                r.range.clone().unwrap_or_else(|| "*".into()),
            );
            let at = match keys.iter().position(|k| *k == key) {
                Some(i) => i,
                None => {
                    keys.push(key);
                    keys.len() - 1
                }
            };
            cells.insert((at, col), r.found.to_string());
        }
    }
    if keys.is_empty() {
        return String::new();
    }
    let mut out = String::from("package\tchannel\trange");
    for c in checks {
        out.push('\t');
        out.push_str(&c.catalog);
    }
    out.push('\n');
    for (i, (p, ch, range)) in keys.iter().enumerate() {
        out.push_str(&format!("{p}\t{ch}\t{range}"));
        for col in 0..checks.len() {
            out.push('\t');
            out.push_str(cells.get(&(i, col)).map_or("-", String::as_str));
        }
        out.push('\n');
    }
    out
}

/// Reads the configuration, checks and plans every catalog, then the additional images;
/// returns each catalog's preparation (their temporary folders live as long as the run) and
/// the availability rows.
pub(super) fn prepare(
    path: &Path,
    given: &MirrorOptions,
) -> Result<(Vec<Prepared>, Vec<CatalogRows>), MirrorError> {
    let set = imageset::read(path)?;
    let mut opts = given.clone();
    if let Some(platforms) = &set.platforms {
        if opts.platforms.is_some() {
            return Err(MirrorError::Usage(format!(
                "{}: mirror.platform.architectures and --platform both select platforms: give one",
                path.display()
            )));
        }
        opts.platforms = Some(platforms.clone());
    }
    opts.check_targets = true;
    let mut prepared = Vec::new();
    let mut checks = Vec::new();
    let mut refused = false;
    for c in &set.catalogs {
        let copts = catalog_options(path, c, &opts, refused)?;
        let location = Location::parse(&c.location).map_err(|e| MirrorError::Catalog {
            source_name: c.catalog.value.clone(),
            source: format!("{}:{}: {e}", path.display(), c.catalog.line).into(),
        })?;
        let mut p = read_catalog(&c.catalog.value, &location, &copts)?;
        if let (Some(first), Place::Registry(_)) = (p.plan.images.first_mut(), location.place())
            && first.kind == Kind::Catalog
        {
            if let Some(t) = &c.target_catalog {
                first.repository = t.value.clone();
            }
            if let Some(t) = &c.target_tag {
                first.tag = t.value.clone();
            }
        }
        let rows = CatalogRows {
            catalog: c.catalog.value.clone(),
            rows: std::mem::take(&mut p.rows),
        };
        if rows.missing() && !opts.allow_missing {
            refused = true;
        }
        if p.stopped && opts.allow_missing && !refused {
            p.warnings.push(format!(
                "{}:{}: catalog {} holds none of the packages requested from it; nothing of it is mirrored (--allow-missing)",
                path.display(),
                c.catalog.line,
                c.catalog.value
            ));
        }
        checks.push(rows);
        prepared.push(p);
    }
    if refused {
        return Err(MirrorError::Missing(checks));
    }
    same_targets(path, &set, &prepared)?;
    let mut wanted: Vec<(Kind, String)> = Vec::new();
    for p in &mut prepared {
        wanted.append(&mut p.wanted);
    }
    let warning = block(&set, &mut wanted);
    let resolved = resolve_all(&wanted, &opts);
    prepared.push(Prepared {
        plan: Plan {
            source: path.display().to_string(),
            images: resolved,
            archive: None,
        },
        warnings: warning.into_iter().collect(),
        _spool: None,
        rows: Vec::new(),
        stopped: false,
        wanted: Vec::new(),
        packages: Vec::new(),
    });
    Ok((prepared, checks))
}

/// The options one catalog is read with: its own entry as the filter, its target name.
fn catalog_options(
    path: &Path,
    c: &ImageSetCatalog,
    opts: &MirrorOptions,
    check_only: bool,
) -> Result<MirrorOptions, MirrorError> {
    let mut copts = opts.clone();
    copts.check_only = check_only;
    copts.filter = Some(FilterOptions {
        config: path.to_path_buf(),
        catalog: Some(c.catalog.value.clone()),
        prepared: Some(c.filter.clone()),
        registry: opts.source.clone(),
        ..FilterOptions::default()
    });
    // A folder's catalog image is named by targetCatalog (default `catalog`) and tagged by
    // targetTag (default: the folder's name, so one folder per OpenShift version gets one tag
    // each); a local image keeps its own tag unless targetTag is given.
    let folder_tag = match Location::parse(&c.location).ok().map(|l| l.place().clone()) {
        Some(Place::Path(p)) => p.file_name().and_then(|n| n.to_str()).map(sanitize_tag),
        _ => None,
    };
    let repository = c
        .target_catalog
        .as_ref()
        .map_or("catalog", |t| t.value.as_str());
    let tag = c
        .target_tag
        .as_ref()
        .map(|t| t.value.clone())
        .or(folder_tag);
    copts.catalog_name = match (&c.target_catalog, &tag) {
        (None, None) => None,
        (_, Some(tag)) => Some(format!("{repository}:{tag}")),
        (Some(_), None) => Some(repository.to_string()),
    };
    Ok(copts)
}

/// A folder name as a tag: `[A-Za-z0-9_.-]`, at most 128 characters, not starting with `.`
/// or `-`.
fn sanitize_tag(name: &str) -> String {
    let mut t: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .take(128)
        .collect();
    if t.starts_with(['.', '-']) || t.is_empty() {
        t.insert(0, 'v');
        t.truncate(128);
    }
    t
}

/// Two catalogs going to the same repository and tag would overwrite each other: refused.
fn same_targets(path: &Path, set: &ImageSet, prepared: &[Prepared]) -> Result<(), MirrorError> {
    let mut seen: BTreeMap<(String, String), &str> = BTreeMap::new();
    for (c, p) in set.catalogs.iter().zip(prepared) {
        let Some(first) = p.plan.images.first().filter(|i| i.kind == Kind::Catalog) else {
            continue;
        };
        let key = (first.repository.clone(), first.tag.clone());
        if let Some(other) = seen.insert(key, &c.catalog.value) {
            return Err(MirrorError::Usage(format!(
                "{}:{}: catalogs {other} and {} would both go to {}:{}; give one of them targetCatalog or targetTag",
                path.display(),
                c.catalog.line,
                c.catalog.value,
                first.repository,
                first.tag
            )));
        }
    }
    Ok(())
}

/// Every image once (the first kind any catalog gives it: a bundle in one catalog and a
/// related image in another is a bundle), then the `additionalImages` not already named, minus
/// the `blockedImages` (a catalog image itself is never blocked); returns the note saying what
/// was blocked.
fn block(set: &ImageSet, wanted: &mut Vec<(Kind, String)>) -> Option<String> {
    let mut kinds: BTreeMap<String, Kind> = BTreeMap::new();
    for (kind, image) in wanted.drain(..) {
        let entry = kinds.entry(image).or_insert(kind);
        *entry = (*entry).min(kind);
    }
    let mut merged: Vec<(Kind, String)> = kinds.into_iter().map(|(i, k)| (k, i)).collect();
    merged.sort();
    for a in &set.additional_images {
        if !merged.iter().any(|(_, i)| *i == a.value) {
            merged.push((Kind::Additional, a.value.clone()));
        }
    }
    let mut blocked: Vec<String> = Vec::new();
    merged.retain(|(_, image)| {
        let out = imageset::is_blocked(image, &set.blocked_images);
        if out {
            blocked.push(image.clone());
        }
        !out
    });
    *wanted = merged;
    (!set.blocked_images.is_empty()).then(|| {
        format!(
            "{}: {} image(s) left out by mirror.blockedImages{}{}",
            set.file.display(),
            blocked.len(),
            if blocked.is_empty() { "" } else { ": " },
            blocked.join(", ")
        )
    })
}

/// The plans of every catalog and the images they need as one: the catalog images first, in
/// the configuration's order, then every other image (each once, resolved after the check).
pub(super) fn merge(path: &Path, prepared: &[Prepared]) -> Plan {
    let all = prepared.iter().flat_map(|p| &p.plan.images);
    let mut images: Vec<_> = all
        .clone()
        .filter(|i| i.kind == Kind::Catalog)
        .cloned()
        .collect();
    images.extend(all.filter(|i| i.kind != Kind::Catalog).cloned());
    Plan {
        source: path.display().to_string(),
        images,
        archive: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::filter::availability::Found;
    use crate::catalog::filter::config::At;

    #[test]
    fn table_has_one_column_per_catalog() {
        let row = |p: &str, found: Found| Row {
            package: At {
                value: p.into(),
                line: 3,
            },
            channel: Some("stable".into()),
            range: None,
            found,
        };
        let checks = [
            CatalogRows {
                catalog: "v4.12".into(),
                rows: vec![row("a", Found::Yes(2)), row("b", Found::NoPackage)],
            },
            CatalogRows {
                catalog: "v4.18".into(),
                rows: vec![row("a", Found::Yes(3)), row("b", Found::Yes(1))],
            },
        ];
        let t = table(&checks);
        assert_eq!(
            t,
            "package\tchannel\trange\tv4.12\tv4.18\na\tstable\t*\tok (2 bundles)\tok (3 bundles)\nb\tstable\t*\tMISSING package\tok (1 bundles)\n"
        );
        assert!(checks[0].missing() && !checks[1].missing());
        assert_eq!(sanitize_tag("v4.18"), "v4.18");
        assert_eq!(sanitize_tag(".x y"), "v.x-y");
    }
}
