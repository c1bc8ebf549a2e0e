//! `olmpack completions SHELL`: the shell completion script for every command and option,
//! printed to stdout for the user to source or install where their shell looks.
//!
//! Why generated: clap_complete reads the same definitions the parser uses, so the completions
//! can never drift from the commands.

use super::Failure;
use super::{EXIT_OK, Outcome};
use std::io::Write;

/// Arguments of `olmpack completions`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    olmpack completions bash > ~/.local/share/bash-completion/completions/olmpack\n  \
    olmpack completions zsh > \"${fpath[1]}/_olmpack\"\n  \
    olmpack completions fish > ~/.config/fish/completions/olmpack.fish\n  \
    olmpack completions powershell >> $PROFILE")]
pub struct Args {
    /// The shell to write the script for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Writes the completion script for `cmd` (the command line's definition, which `cli` passes
/// in, so this module does not import it back) to stdout.
pub fn run(args: &Args, mut cmd: clap::Command) -> Outcome {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "olmpack", &mut script);
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(&script)
        .and_then(|()| stdout.flush())
        .map_err(|e| Failure::usage(format!("cannot write the completion script: {e}")))?;
    Ok(EXIT_OK)
}
