//! Validating many bundle folders at once: a pool of threads over the folders, each bundle
//! isolated so that olmpack's own failure on one (a caught panic) becomes that bundle's
//! `internal/error` finding while every other bundle still gets its full report. Used by
//! `bundle validate` and its benchmark.

use super::{Diagnostic, Options, Report, Rule};
use crate::bundle::Bundle;
use crate::parallel::map_indexed;
use std::path::{Path, PathBuf};

/// Validates folders on up to `jobs` threads; reports keep the input order. A folder that cannot
/// be loaded gets a report with one `file/unreadable` finding.
///
/// The largest bundles go first (longest-processing-time order): one multi-MB bundle taken last
/// would otherwise run alone on one core while the others sit idle. Sizes come from a quick
/// parallel pass of directory listings, a few microseconds per bundle.
pub fn validate_dirs(dirs: &[PathBuf], opts: &Options, jobs: Option<usize>) -> Vec<Report> {
    let workers = jobs
        .unwrap_or_else(crate::parallel::cores)
        .clamp(1, dirs.len().max(1));
    // With one worker the order cannot matter and no folder is listed.
    let sizes = (workers > 1).then(|| {
        map_indexed(dirs.len(), workers, None, |i| {
            dirs.get(i).map_or(0, |dir| shallow_size(dir))
        })
    });
    map_indexed(dirs.len(), workers, sizes.as_deref(), |i| {
        let Some(dir) = dirs.get(i) else {
            return unreadable(Path::new(""), "validation did not run".into());
        };
        // Each bundle is isolated: a bug hit on one becomes its internal/error finding, and
        // every other bundle still gets its full report.
        let checked = crate::guard::catch(|| {
            let _reading = crate::guard::reading(dir);
            match Bundle::load(dir) {
                Ok(bundle) => super::validate(&bundle, opts),
                Err(e) => unreadable(dir, crate::errors::error_chain(&e)),
            }
        });
        checked.unwrap_or_else(|failure| {
            internal_error_report(&dir.display().to_string(), Some(dir), &failure)
        })
    })
}

/// Bytes in the files of a bundle folder and of its direct subfolders (`manifests/`,
/// `metadata/`): enough to rank bundles by the work they cost. Unreadable entries count 0.
fn shallow_size(dir: &std::path::Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut total = 0;
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            for inner in std::fs::read_dir(entry.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                total += inner.metadata().map_or(0, |m| m.len());
            }
        } else {
            total += entry.metadata().map_or(0, |m| m.len());
        }
    }
    total
}

/// The report of a bundle on which olmpack failed internally: one `internal/error` finding that
/// names the file being read (relative to the bundle when it is inside it) and asks for a bug
/// report.
pub fn internal_error_report(
    bundle: &str,
    root: Option<&std::path::Path>,
    failure: &crate::guard::InternalFailure,
) -> Report {
    let mut diagnostic = Diagnostic::new(Rule::InternalError, failure.describe());
    // `file` is relative to the bundle, as for every finding; a path elsewhere (a temporary
    // folder, the bundle folder itself) stays in the message only.
    let rel = failure.file.as_deref().and_then(|file| match root {
        Some(root) => file.strip_prefix(root).ok(),
        None => file.is_relative().then_some(file),
    });
    if let Some(rel) = rel.filter(|r| !r.as_os_str().is_empty()) {
        diagnostic = diagnostic.in_file(rel.to_string_lossy().into_owned());
    }
    Report {
        bundle: bundle.to_string(),
        diagnostics: vec![diagnostic],
    }
}

fn unreadable(dir: &std::path::Path, message: String) -> Report {
    Report {
        bundle: dir.display().to_string(),
        diagnostics: vec![Diagnostic::new(Rule::FileUnreadable, message)],
    }
}
