//! `olmpack reference --output-dir DIR` (hidden): writes the Markdown reference kept in
//! `docs/reference/` (the command reference and one page per rule). Hidden because it serves
//! the project's documentation build (`just docs`), not users' daily work; the test suite runs it
//! and compares with what is committed. The pages are made by [`crate::action::reference`].

use super::{EXIT_OK, Failure, Outcome};
use crate::action::reference;
use std::path::PathBuf;

/// Arguments of `olmpack reference`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The folder to write into (created if missing); pages already there are replaced, others
    /// left alone.
    #[arg(long, short = 'o', value_name = "DIR")]
    pub output_dir: PathBuf,
}

/// Writes every page, staged first so a failure leaves the previous set in place.
pub fn run(args: &Args, cmd: clap::Command) -> Outcome {
    let dir = &args.output_dir;
    if dir.exists() && !dir.is_dir() {
        return Err(Failure::usage(format!(
            "--output-dir {}: not a folder",
            dir.display()
        )));
    }
    let pages = reference::pages(cmd)
        .map_err(|e| Failure::usage(format!("cannot render the reference: {e}")))?;
    let mut staged = Vec::new();
    for page in &pages {
        let path = dir.join(&page.path);
        crate::fsio::create_dir_all(&crate::fsio::parent_of(&path))
            .map_err(|e| Failure::usage(e.to_string()))?;
        staged.push(
            crate::fsio::stage(&path, page.text.as_bytes(), crate::fsio::Options::OUTPUT)
                .map_err(|e| Failure::usage(e.to_string()))?,
        );
    }
    for file in staged {
        file.commit().map_err(|e| Failure::usage(e.to_string()))?;
    }
    eprintln!("wrote {} reference pages to {}", pages.len(), dir.display());
    Ok(EXIT_OK)
}
