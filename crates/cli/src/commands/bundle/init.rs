//! `olmpack bundle init`: flags in, [`crate::action::bundle_init`] (plan, apply, then the
//! validator on the result); this module only prints and picks the exit code.

use super::{EXIT_FINDINGS, EXIT_OK, Failure, Outcome};
use crate::action::bundle_init::{self, Action, Plan, ScaffoldError};
use crate::validate::output;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

/// Exit codes and behaviour, shown under `--help`.
const AFTER_HELP: &str = "\
Values: --package, else the existing annotation, else the CSV name minus its .vX.Y.Z suffix.
--channels, else the existing annotation (init never invents a channel). --default-channel,
else the existing annotation, else the only channel.

Existing annotations that init does not own are kept, in order, with their values (written as
quoted strings: a YAML `true` becomes \"true\", as an image label would carry it). Existing
dependencies are kept; missing olm.gvk entries are appended. A file whose content would not
change is not touched. Re-running init on its output changes nothing.

A flat folder of manifests is never reorganised: --output-dir OUT copies the manifests to
OUT/manifests/ and writes OUT/metadata/ (and OUT/bundle.Dockerfile with --dockerfile).

After writing, init validates the bundle and prints the findings on stderr.

Exit codes:
  0  the bundle was written (or already up to date) and validates
  1  a flag conflicts with an existing value (nothing written; see the diff, or pass --force),
     or the bundle was written but has validation errors
  2  init could not do its job: bad flags, a folder without exactly one CSV, unreadable or
     invalid YAML (the message names the file and line), or a write error";

/// Arguments of `olmpack bundle init`.
#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct Args {
    /// The bundle folder (holding manifests/) or a flat folder of manifests.
    #[arg(value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
    /// Package name (default: the existing annotation, else the CSV name without its version).
    #[arg(long, value_name = "NAME")]
    pub package: Option<String>,
    /// Channels of this bundle, comma-separated (default: the existing annotation; required otherwise).
    #[arg(long, value_name = "A,B", value_delimiter = ',')]
    pub channels: Option<Vec<String>>,
    /// Default channel of the package (default: the existing annotation, else the only channel).
    #[arg(long = "default-channel", value_name = "CHANNEL")]
    pub default_channel: Option<String>,
    /// Write the bundle here (copies of the manifests plus metadata) instead of into DIR.
    #[arg(long = "output-dir", short = 'u', value_name = "OUT")]
    pub output_dir: Option<PathBuf>,
    /// Also write bundle.Dockerfile in the bundle folder (one LABEL per annotation, COPY paths
    /// relative to that folder); `bundle build` knows it as its own and leaves it out silently.
    #[arg(long)]
    pub dockerfile: bool,
    /// Replace existing values that conflict with the flags.
    #[arg(long)]
    pub force: bool,
    /// Print what would be written and write nothing.
    #[arg(long = "dry-run")]
    pub dry_run: bool,
}

/// Runs `olmpack bundle init`.
pub fn run(args: &Args) -> Outcome {
    let opts = bundle_init::Options {
        dir: args.dir.clone(),
        package: args.package.clone(),
        channels: args.channels.clone(),
        default_channel: args.default_channel.clone(),
        output_dir: args.output_dir.clone(),
        dockerfile: args.dockerfile,
    };
    let plan = bundle_init::plan(&opts).map_err(|e| failure(&e))?;
    for note in &plan.notes {
        eprintln!("note: {note}");
    }
    if !plan.conflicts.is_empty() && !args.force {
        return Err(Failure::with_code(
            EXIT_FINDINGS,
            format!(
                "existing content differs from what init would write; nothing was written (pass --force to replace it):\n{}",
                conflicts_text(&plan)
            ),
        ));
    }
    if !plan.conflicts.is_empty() {
        eprintln!(
            "note: --force: replacing existing values:\n{}",
            conflicts_text(&plan)
        );
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.dry_run {
        print_dry_run(&plan, &mut out)
            .map_err(|e| Failure::usage(format!("cannot write output: {e}")))?;
        return Ok(EXIT_OK);
    }
    bundle_init::apply(&plan).map_err(|e| failure(&e))?;
    print_summary(&plan, &mut out)
        .map_err(|e| Failure::usage(format!("cannot write output: {e}")))?;
    drop(out);
    validate_result(&plan)
}

fn failure(err: &ScaffoldError) -> Failure {
    Failure::usage(super::error_chain(err))
}

/// The conflicts as a diff grouped by file: a `--- file` header, then each reason as a comment
/// followed by its `- old` / `+ new` lines.
fn conflicts_text(plan: &Plan) -> String {
    let mut text = String::new();
    let mut current: Option<&str> = None;
    for c in &plan.conflicts {
        if current != Some(c.file.as_str()) {
            text.push_str(&format!("--- {}\n", c.file));
            current = Some(c.file.as_str());
        }
        text.push_str(&format!("# {}\n{}", c.reason, c.diff));
    }
    text
}

fn print_dry_run(plan: &Plan, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "dry run: nothing is written; init would do this in {}:",
        plan.root.display()
    )?;
    for file in &plan.files {
        match (file.action(), &file.copied_from) {
            (Action::Unchanged, _) => writeln!(out, "unchanged {}", file.display)?,
            (action, Some(from)) => writeln!(
                out,
                "would {} {} (copy of {})",
                verb(action),
                file.display,
                from.display()
            )?,
            (Action::Create, None) => {
                writeln!(out, "would create {}:", file.display)?;
                for line in String::from_utf8_lossy(&file.new).lines() {
                    writeln!(out, "  {line}")?;
                }
            }
            (Action::Update, None) => {
                writeln!(out, "would update {}:", file.display)?;
                let old = file.old.as_deref().unwrap_or_default();
                out.write_all(
                    bundle_init::diff(
                        &String::from_utf8_lossy(old),
                        &String::from_utf8_lossy(&file.new),
                    )
                    .as_bytes(),
                )?;
            }
        }
    }
    Ok(())
}

fn verb(action: Action) -> &'static str {
    match action {
        Action::Create => "create",
        Action::Update => "update",
        Action::Unchanged => "keep",
    }
}

fn print_summary(plan: &Plan, out: &mut dyn Write) -> std::io::Result<()> {
    let copies: Vec<_> = plan
        .files
        .iter()
        .filter(|f| f.copied_from.is_some())
        .collect();
    if !copies.is_empty() {
        let changed = copies
            .iter()
            .filter(|f| f.action() != Action::Unchanged)
            .count();
        writeln!(
            out,
            "copied {changed} file(s) into {} ({} already up to date)",
            plan.root.display(),
            copies.len() - changed
        )?;
    }
    for file in plan.files.iter().filter(|f| f.copied_from.is_none()) {
        let word = match file.action() {
            Action::Create => "created",
            Action::Update => "updated",
            Action::Unchanged => "unchanged",
        };
        writeln!(out, "{word} {}", plan.root.join(&file.display).display())?;
    }
    writeln!(
        out,
        "package {}, channels {}, default channel {}",
        plan.values.package,
        plan.values.channels,
        plan.values.default_channel.as_deref().unwrap_or("(none)")
    )
}

/// Validates the written bundle; validation errors make the exit code 1 so CI notices.
fn validate_result(plan: &Plan) -> Outcome {
    let report =
        bundle_init::validate_written(plan).map_err(|e| Failure::usage(super::error_chain(&e)))?;
    let stderr = std::io::stderr();
    let mut err = stderr.lock();
    let color = super::color_on(std::io::stderr().is_terminal());
    let _ = output::human(&report, &mut err, color);
    if report.has_errors() {
        let _ = writeln!(
            err,
            "error: init finished, but the bundle does not validate; fix the errors above (exit 1)"
        );
        Ok(EXIT_FINDINGS)
    } else {
        Ok(EXIT_OK)
    }
}
