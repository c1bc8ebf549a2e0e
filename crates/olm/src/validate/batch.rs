//! Validating many folders at once, for bundles and catalogs alike: a pool of threads over the
//! folders, each folder isolated so that olmpack's own failure on one (a caught panic) becomes
//! that folder's `internal/error` finding while every other folder still gets its full report.
//! What a folder is loaded as is the [`Check`] given; the scheduling, the isolation and the size
//! hint are written once here. Used by `bundle validate`, `catalog validate` and their benchmarks.

use super::{Diagnostic, Report, Rule};
use crate::parallel::map_indexed;
use std::path::{Path, PathBuf};

/// What a batch run does with one folder.
pub trait Check: Sync {
    /// Why a folder could not be checked at all (it, not a file in it, is unreadable).
    type Error: Send;

    /// Loads and checks one folder. `inner_jobs` is the number of threads the check may use
    /// itself: all of them when the run has a single folder, 1 otherwise.
    fn check(&self, dir: &Path, inner_jobs: usize) -> Result<Report, Self::Error>;
}

/// Checks folders on up to `jobs` threads (default: the number of CPUs); results keep the
/// input order.
///
/// The largest folders go first (longest-processing-time order): one multi-MB bundle or
/// catalog taken last would otherwise run alone on one core while the others sit idle. Sizes
/// come from a quick parallel pass of directory listings ([`size_hint`]), a few microseconds per
/// folder.
pub fn run<C: Check>(
    check: &C,
    dirs: &[PathBuf],
    jobs: Option<usize>,
) -> Vec<Result<Report, C::Error>> {
    let jobs = jobs.unwrap_or_else(crate::parallel::cores).max(1);
    let workers = jobs.min(dirs.len().max(1));
    // One folder gets every thread for itself; with several, the threads go to the folders.
    let inner_jobs = if dirs.len() <= 1 { jobs } else { 1 };
    // With one worker the order cannot matter and no folder is listed.
    let sizes = (workers > 1).then(|| {
        map_indexed(dirs.len(), workers, None, |i| {
            dirs.get(i).map_or(0, |dir| size_hint(dir))
        })
    });
    map_indexed(dirs.len(), workers, sizes.as_deref(), |i| {
        match dirs.get(i) {
            Some(dir) => isolated(check, dir, inner_jobs),
            None => Ok(Report::default()),
        }
    })
}

/// Checks one folder, isolated: a bug hit on it becomes its `internal/error` finding.
pub fn isolated<C: Check>(check: &C, dir: &Path, inner_jobs: usize) -> Result<Report, C::Error> {
    crate::guard::catch(|| {
        let _reading = crate::guard::reading(dir);
        check.check(dir, inner_jobs)
    })
    .unwrap_or_else(|failure| {
        Ok(internal_error_report(
            &dir.display().to_string(),
            Some(dir),
            &failure,
        ))
    })
}

/// Bytes in the files of a folder and of its direct subfolders (a bundle's `manifests/` and
/// `metadata/`, a catalog's package folders): enough to rank folders by the work they cost.
/// Unreadable entries count 0.
pub fn size_hint(dir: &Path) -> u64 {
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

/// The report of a folder (or image) on which olmpack failed internally: one `internal/error`
/// finding that names the file being read (relative to the folder when it is inside it) and
/// asks for a bug report.
pub fn internal_error_report(
    subject: &str,
    root: Option<&Path>,
    failure: &crate::guard::InternalFailure,
) -> Report {
    let mut diagnostic = Diagnostic::new(Rule::InternalError, failure.describe());
    // `file` is relative to the folder, as for every finding; a path elsewhere (a temporary
    // folder, the folder itself) stays in the message only.
    let rel = failure.file.as_deref().and_then(|file| match root {
        Some(root) => file.strip_prefix(root).ok(),
        None => file.is_relative().then_some(file),
    });
    if let Some(rel) = rel.filter(|r| !r.as_os_str().is_empty()) {
        diagnostic = diagnostic.in_file(rel.to_string_lossy().replace('\\', "/"));
    }
    let mut report = Report::new(subject, vec![diagnostic]);
    report.root = root.map(|root| root.display().to_string());
    report
}
