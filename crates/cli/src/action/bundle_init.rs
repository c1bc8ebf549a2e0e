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

/// Why the bundle just written could not be checked (the files are written by now).
#[derive(Debug, thiserror::Error)]
pub enum CheckWrittenError {
    /// The bundle does not load.
    #[error(transparent)]
    Load(#[from] crate::bundle::loader::LoadError),
    /// The check itself failed.
    #[error("init wrote the files listed above, but checking the bundle failed: {0}")]
    Crashed(String),
}

/// Validates the bundle just written. The files are written by now: an internal failure of the
/// check says so, rather than reading as if init itself had failed.
pub fn validate_written(plan: &Plan) -> Result<Report, CheckWrittenError> {
    let checked = crate::guard::catch(|| {
        Bundle::load(&plan.root)
            .map(|bundle| crate::validate::validate(&bundle, &crate::validate::Options::default()))
    });
    match checked {
        Ok(loaded) => Ok(loaded?),
        Err(failure) => Err(CheckWrittenError::Crashed(failure.describe().to_string())),
    }
}
