//! `olmpack man [--output-dir DIR]`: manual pages in roff, one per command (`olmpack.1`,
//! `olmpack-bundle-validate.1`, …) into a folder, or the top page on stdout.
//!
//! Why generated: clap_mangen reads the same definitions the parser uses, so `man olmpack-…`
//! says exactly what `--help` says. Pages are rendered in memory first, then each is staged
//! next to its final path and renamed into place only when all of them could be written, so a
//! failure leaves no half-written set.

use super::{EXIT_OK, Failure, Outcome};

use std::io::Write;
use std::path::PathBuf;

/// Arguments of `olmpack man`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    olmpack man | man -l -\n  \
    olmpack man --output-dir ~/.local/share/man/man1")]
pub struct Args {
    /// Write one page per command into this folder (created if missing) instead of printing
    /// the top page to stdout.
    #[arg(long, short = 'o', value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
}

/// Every page of `cmd` (the command line's definition, passed in by `cli`): (file name, roff
/// text), the top command first, then depth first.
pub fn pages(cmd: clap::Command) -> Result<Vec<(String, Vec<u8>)>, std::io::Error> {
    fn walk(cmd: &clap::Command, out: &mut Vec<(String, Vec<u8>)>) -> std::io::Result<()> {
        let page = cmd.clone().override_usage(synopsis(cmd));
        let man = clap_mangen::Man::new(page);
        let mut text = Vec::new();
        man.render(&mut text)?;
        out.push((man.get_filename(), text));
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            walk(sub, out)?;
        }
        Ok(())
    }
    let mut cmd = cmd.disable_help_subcommand(true);
    cmd.build();
    let mut out = Vec::new();
    walk(&cmd, &mut out)?;
    Ok(out)
}

/// The SYNOPSIS line of a page with every option's value name (`[-p|--port PORT]`):
/// clap_mangen writes options without them (`[-p|--port]`), which reads as a flag.
fn synopsis(cmd: &clap::Command) -> String {
    let mut line = cmd
        .get_bin_name()
        .unwrap_or_else(|| cmd.get_name())
        .to_string();
    let value = |arg: &clap::Arg| -> String {
        let names: Vec<String> = arg
            .get_value_names()
            .map(|v| v.iter().map(ToString::to_string).collect())
            .unwrap_or_else(|| vec![arg.get_id().as_str().to_uppercase()]);
        names.join(" ")
    };
    let repeated = |arg: &clap::Arg| {
        matches!(
            arg.get_action(),
            clap::ArgAction::Append | clap::ArgAction::Count
        )
    };
    for arg in cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set() && !a.is_positional())
    {
        let mut text = match (arg.get_short(), arg.get_long()) {
            (Some(s), Some(l)) => format!("-{s}|--{l}"),
            (Some(s), None) => format!("-{s}"),
            (None, Some(l)) => format!("--{l}"),
            (None, None) => continue,
        };
        if arg.get_num_args().is_some_and(|n| n.takes_values()) {
            text.push(' ');
            text.push_str(&value(arg));
        }
        if repeated(arg) {
            text.push_str("...");
        }
        if arg.is_required_set() {
            line.push_str(&format!(" {text}"));
        } else {
            line.push_str(&format!(" [{text}]"));
        }
    }
    for arg in cmd.get_positionals().filter(|a| !a.is_hide_set()) {
        let mut text = value(arg);
        if repeated(arg) || arg.get_num_args().is_some_and(|n| n.max_values() > 1) {
            text.push_str("...");
        }
        if arg.is_required_set() {
            line.push_str(&format!(" {text}"));
        } else {
            line.push_str(&format!(" [{text}]"));
        }
    }
    if cmd.has_subcommands() {
        line.push_str(" <COMMAND>");
    }
    line
}

/// Prints the top page of `cmd`, or writes every page into `--output-dir`.
pub fn run(args: &Args, cmd: clap::Command) -> Outcome {
    let pages =
        pages(cmd).map_err(|e| Failure::usage(format!("cannot render the man pages: {e}")))?;
    let Some(dir) = &args.output_dir else {
        let top = pages.first().map(|p| p.1.as_slice()).unwrap_or_default();
        let mut stdout = std::io::stdout().lock();
        stdout
            .write_all(top)
            .and_then(|()| stdout.flush())
            .map_err(|e| Failure::usage(format!("cannot write the man page: {e}")))?;
        return Ok(EXIT_OK);
    };
    if dir.exists() && !dir.is_dir() {
        return Err(Failure::usage(format!(
            "--output-dir {}: not a folder",
            dir.display()
        )));
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| Failure::usage(format!("cannot create {}: {e}", dir.display())))?;
    let mut staged = Vec::new();
    for (name, text) in &pages {
        staged.push(
            crate::fsio::stage(&dir.join(name), text, crate::fsio::Options::OUTPUT)
                .map_err(|e| Failure::usage(e.to_string()))?,
        );
    }
    for file in staged {
        file.commit().map_err(|e| Failure::usage(e.to_string()))?;
    }
    eprintln!("wrote {} man pages to {}", pages.len(), dir.display());
    Ok(EXIT_OK)
}
