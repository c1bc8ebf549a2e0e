//! Does a serve cache fit the opm that will serve it? The digest says whether opm starts on a
//! cache; it does not say what opm then answers. opm serves the bundles as the cache stores
//! them, so a cache written for another opm version makes it answer like that version (a
//! v1.26-style cache on a v1.69 base: no CSV synthesized from `olm.csv.metadata`, the metadata
//! sent as a property, no deprecations, and no `metas/` for `ExperimentalListPackageCustomSchemas`).
//!
//! Why a module: `catalog cache verify` checks the layout of each opm generation (JSON before
//! v1.41, pogreb since; `metas/` since v1.69) by writing what each generation writes for this
//! catalog and comparing it with the cache, so it can say which opm the cache was written for.

use super::profile::{OpmVersion, Semantics};
use super::report::{CacheFit, VerifyReport};
use crate::serve::model::ServeModel;
use std::collections::BTreeMap;
use std::path::Path;

/// The opm generations whose caches hold different things, oldest first: the first version of
/// each, and what it stores.
const GENERATIONS: [(&str, Semantics); 4] = [
    (
        "v1.26.3",
        Semantics {
            csv_from_metadata: false,
            deprecations: false,
            metas: false,
        },
    ),
    (
        "v1.28.0",
        Semantics {
            csv_from_metadata: true,
            deprecations: false,
            metas: false,
        },
    ),
    (
        "v1.32.0",
        Semantics {
            csv_from_metadata: true,
            deprecations: true,
            metas: false,
        },
    ),
    (
        "v1.69.0",
        Semantics {
            csv_from_metadata: true,
            deprecations: true,
            metas: true,
        },
    ),
];

fn semantics_of(v: OpmVersion) -> Semantics {
    let mut s = GENERATIONS[0].1;
    for (since, sem) in GENERATIONS {
        if since.parse::<OpmVersion>().is_ok_and(|since| v >= since) {
            s = sem;
        }
    }
    s
}

/// Largest cache file read (opm's biggest bundles with their CSVs are a few MiB).
const MAX_CACHE_FILE: u64 = 256 << 20;

/// The cache's content as files (JSON: path under the cache folder; pogreb: key) and bytes.
type Content = BTreeMap<String, Vec<u8>>;

/// Most bytes of cache content held at once, all files together: the total an image unpack
/// allows (`Limits::default`), so a cache read here is never larger than one olmpack unpacks.
fn max_cache_total() -> u64 {
    crate::transport::unpack::Limits::default().max_total_bytes
}

fn json_content(base: &Path) -> Result<Content, String> {
    let dir = base.join("cache");
    let mut out = Content::new();
    let tree = crate::gocompat::tar::tree_of_dir(&dir, None)
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut left = max_cache_total();
    for e in tree {
        if let Some((_, crate::gocompat::tar::Content::Path(p))) = e.file {
            let bytes = crate::fsio::untrusted::read_limited(&p, MAX_CACHE_FILE.min(left))
                .map_err(|e| match left < MAX_CACHE_FILE {
                    true => format!(
                        "{} (the cache's files hold more than {} bytes together)",
                        e,
                        max_cache_total()
                    ),
                    false => e.to_string(),
                })?;
            left = left.saturating_sub(bytes.len() as u64);
            out.insert(format!("cache/{}", e.path), bytes);
        }
    }
    Ok(out)
}

fn expected_json(model: &ServeModel, s: Semantics) -> Result<Content, String> {
    let tmp = crate::interrupt::temp_dir("olmpack-fit-")
        .map_err(|e| format!("create a temp folder: {e}"))?;
    super::write::write_cache_files_for(model, tmp.path(), s).map_err(|e| e.to_string())?;
    json_content(tmp.path())
}

fn pogreb_content(base: &Path) -> Result<Content, String> {
    let db = base.join(super::pogreb::POGREB_DIR).join("db");
    let reader = crate::gocompat::pogreb::Reader::open(&db).map_err(|e| e.to_string())?;
    Ok(reader
        .items()
        .map_err(|e| e.to_string())?
        .into_iter()
        .map(|(k, v)| (String::from_utf8_lossy(&k).into_owned(), v))
        .collect())
}

fn expected_pogreb(model: &ServeModel, s: Semantics) -> Result<Content, String> {
    Ok(super::pogreb::expected_entries_for(model, s)
        .map_err(|e| e.to_string())?
        .into_iter()
        .collect())
}

/// What differs between `have` and `want`, one line each (`changed`, `missing`, `extra`).
fn differences(have: &Content, want: &Content) -> Vec<String> {
    let mut out = Vec::new();
    for (k, v) in want {
        match have.get(k) {
            None => out.push(format!("missing {k}")),
            Some(h) if h != v => out.push(format!("changed {k}")),
            Some(_) => {}
        }
    }
    for k in have.keys().filter(|k| !want.contains_key(*k)) {
        out.push(format!("extra {k}"));
    }
    out
}

/// Judges whether the cache under `cache_base` (for the catalog folder `catalog`) fits opm
/// `target` (`from`: where that version was read) and records it in `r`: the format the
/// target reads (a pogreb-only cache does not start an opm before v1.41), and the content:
/// equal to what `target` writes, else which opm generation's content it holds and the files
/// that differ. A cache that does not fit makes the report fail.
pub fn check(
    r: &mut VerifyReport,
    catalog: &Path,
    cache_base: &Path,
    target: OpmVersion,
    from: String,
) {
    let mut fit = CacheFit {
        target,
        from,
        fits: false,
        holds: None,
        differ: Vec::new(),
        why: Vec::new(),
    };
    let pogreb = cache_base.join(super::pogreb::POGREB_DIR).is_dir();
    let json = cache_base.join("cache").is_dir() && cache_base.join("digest").is_file();
    let reads_pogreb = target >= "v1.41.0".parse().unwrap_or(target);
    let (content, label) = match (pogreb && reads_pogreb, json) {
        (true, _) => (pogreb_content(cache_base), "pogreb.v1"),
        (false, true) => (json_content(cache_base), "JSON"),
        (false, false) => {
            fit.why.push(if pogreb {
                format!(
                    "opm {target} reads no pogreb cache (since v1.41.0) and finds no JSON one (cache/ and digest): it exits at start (`read existing cache digest`) or rebuilds it"
                )
            } else {
                format!("opm {target} finds no serve cache here")
            });
            if pogreb {
                r.accepted = false;
            }
            r.fit = Some(fit);
            return;
        }
    };
    let have = match content {
        Ok(c) => c,
        Err(e) => {
            fit.why.push(format!("cannot read the {label} cache: {e}"));
            r.fit = Some(fit);
            return;
        }
    };
    let model = match ServeModel::from_dir(catalog) {
        Ok(m) => m,
        Err(e) => {
            fit.why.push(format!(
                "the catalog cannot be served ({e}), so no cache fits it"
            ));
            r.fit = Some(fit);
            return;
        }
    };
    let expected = |s: Semantics| {
        if label == "JSON" {
            expected_json(&model, s)
        } else {
            expected_pogreb(&model, s)
        }
    };
    let wanted = semantics_of(target);
    let want = match expected(wanted) {
        Ok(w) => w,
        Err(e) => {
            // e.g. a custom blob whose schema opm v1.69+ refuses: the build fails there.
            fit.why.push(format!(
                "opm {target} cannot build a cache for this catalog: {e}"
            ));
            r.fit = Some(fit);
            return;
        }
    };
    fit.differ = differences(&have, &want);
    fit.fits = fit.differ.is_empty();
    // Which generations' content it holds (several when the catalog has nothing that tells
    // them apart).
    let mut holds = Vec::new();
    for (i, (since, s)) in GENERATIONS.iter().enumerate() {
        let same = if *s == wanted {
            fit.fits
        } else {
            expected(*s).is_ok_and(|w| differences(&have, &w).is_empty())
        };
        if same {
            let until = GENERATIONS
                .get(i + 1)
                .map(|(next, _)| format!(" up to before {next}"))
                .unwrap_or_else(|| " and later".into());
            holds.push(format!("opm {since}{until}"));
        }
    }
    fit.holds = (!holds.is_empty()).then(|| holds.join(", "));
    if !fit.fits {
        let mut why = Vec::new();
        let metas_missing = fit
            .differ
            .iter()
            .filter(|d| d.starts_with("missing") && d.contains("metas/"))
            .count();
        if metas_missing > 0 {
            why.push(format!(
                "{metas_missing} metas/ entries of other schemas missing: opm {target} answers ExperimentalListPackageCustomSchemas with nothing for them"
            ));
        }
        let bundles = fit
            .differ
            .iter()
            .filter(|d| d.contains("bundles/") || (label == "JSON" && d.contains('_')))
            .count();
        if bundles > 0 {
            why.push(format!(
                "{bundles} stored bundles differ from what opm {target} writes: it serves them as stored (other properties, CSV or deprecations than its own answers)"
            ));
        }
        fit.why = why;
    }
    r.fit = Some(fit);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generations_follow_the_opm_changes() {
        let v = |s: &str| semantics_of(s.parse().unwrap());
        assert!(!v("v1.26.5").csv_from_metadata);
        assert!(v("v1.28.0").csv_from_metadata && !v("v1.28.0").deprecations);
        assert!(v("v1.32.0").deprecations && !v("v1.68.9").metas);
        assert_eq!(v("v1.73.0"), Semantics::CURRENT);
    }
}
