//! `bundle init`: the scaffolding plan ([`crate::scaffold`]), applied, then the written bundle
//! validated; the command prints the plan and the report and picks the exit code.

use crate::bundle::Bundle;
use crate::findings::Report;

pub use crate::scaffold::write::diff;
pub use crate::scaffold::{Action, Options, Plan, ScaffoldError};

/// What `bundle init` would write (nothing is written yet).
pub fn plan(opts: &Options) -> Result<Plan, ScaffoldError> {
    crate::scaffold::plan(opts)
}

/// Writes the plan; the number of files written.
pub fn apply(plan: &Plan) -> Result<usize, ScaffoldError> {
    crate::scaffold::apply(plan)
}

/// Validates the bundle just written. The files are written by now: an internal failure of the
/// check says so, rather than reading as if init itself had failed.
pub fn validate_written(plan: &Plan) -> Result<Report, String> {
    let checked = crate::guard::catch(|| {
        Bundle::load(&plan.root)
            .map(|bundle| crate::validate::validate(&bundle, &crate::validate::Options::default()))
    });
    match checked {
        Ok(loaded) => loaded.map_err(|e| crate::errors::error_chain(&e)),
        Err(failure) => Err(format!(
            "init wrote the files listed above, but checking the bundle failed: {}",
            failure.describe()
        )),
    }
}
