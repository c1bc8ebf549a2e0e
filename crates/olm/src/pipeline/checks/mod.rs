//! operator-pipelines' static checks (`operatorcert/static_tests/{common,community,isv}`), one
//! function per check, named and ordered as the pipeline runs them (suite by suite, operator
//! checks, then bundle checks, then catalog checks, each module's checks alphabetically).

pub mod common;
pub mod community;
pub mod fields;
pub mod isv;
pub mod konflux;
pub mod pruning;
pub mod schema;

use super::finding::Finding;
pub use super::fixes::{CHECKS, fix_for};
use super::repo::{Bundle, Operator, OperatorCatalog, Repo};

/// What one run checks: the repository, one operator, its bundle under test (absent when the
/// pull request removes it) and the affected catalogs.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    /// The checkout.
    pub repo: &'a Repo,
    /// The operator.
    pub operator: &'a Operator,
    /// The bundle under test.
    pub bundle: Option<&'a Bundle>,
    /// The affected catalogs.
    pub catalogs: &'a [OperatorCatalog],
}

/// Python's `repr` of a list of strings (`['a', 'b']`), as the pipeline's messages print lists.
pub fn py_list<S: AsRef<str>>(items: &[S]) -> String {
    let inner: Vec<String> = items.iter().map(|s| py_str(s.as_ref())).collect();
    format!("[{}]", inner.join(", "))
}

/// Python's `repr` of a string.
pub fn py_str(s: &str) -> String {
    if s.contains('\'') && !s.contains('"') {
        format!("\"{s}\"")
    } else {
        format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
    }
}

/// A bundle's CSV could not be read: what the pipeline shows as a traceback, said plainly.
pub fn no_csv(check: &'static str, bundle: &Bundle) -> Finding {
    let why = match &bundle.csv {
        None => format!(
            "CSV file for {}/{} not found (no manifests/*.clusterserviceversion.yaml)",
            bundle.operator, bundle.dir
        ),
        Some(doc) => match &doc.root {
            Err(e) => format!("Invalid CSV contents ({}): {e}", doc.file),
            Ok(_) => format!("CSV for {} has invalid .metadata.name", bundle.display()),
        },
    };
    Finding::error(check, why).at(&bundle.csv_file(), bundle.csv_line(&["metadata", "name"]))
}
