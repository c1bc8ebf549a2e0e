//! `olmpack catalog mirror prune`: flags in, one call to
//! [`crate::action::catalog_mirror::prune::run`], the manifests grouped by repository out
//! (text or `--json`); exit 1 when a deletion failed.

use super::{EXIT_FINDINGS, EXIT_OK, Failure, Outcome};
use crate::action::catalog_mirror::prune::{
    self, Outcome as Deletion, PruneError, PruneOptions, What,
};
use std::path::PathBuf;

/// Arguments of `olmpack catalog mirror prune`.
#[derive(clap::Args)]
pub struct Args {
    /// The record of the previous run: its --results-dir (report.json) or its --to-archive
    /// folder (plan.json), or either file.
    #[arg(long, value_name = "DIR|FILE")]
    pub previous: PathBuf,
    /// The record of the new run, in the same forms: what is still used.
    #[arg(long, value_name = "DIR|FILE")]
    pub plan: PathBuf,
    /// The REGISTRY/NAMESPACE both runs mirrored to (checked against a report's own).
    #[arg(long, value_name = "REGISTRY/NAMESPACE")]
    pub to: String,
    /// Delete what is listed (by digest: the registry drops the tags pointing at it).
    /// Without it nothing is changed.
    #[arg(long)]
    pub delete: bool,
    /// The --max-components of the runs (names an archive plan's images at the target).
    #[arg(long, value_name = "N")]
    pub max_components: Option<usize>,
    /// Print the listing as JSON (one object: repositories, each with its manifests).
    #[arg(long)]
    pub json: bool,
    /// Auth file for the target registry.
    #[arg(long, value_name = "FILE")]
    pub dest_authfile: Option<PathBuf>,
    /// Credentials for the target registry (--to's host; or REGISTRY=USER:PASSWORD).
    #[arg(long, value_name = "[REGISTRY=]USER:PASSWORD")]
    pub dest_creds: Option<String>,
    /// Talk plain HTTP to the target registry (automatic for localhost and 127.0.0.0/8).
    #[arg(long)]
    pub dest_plain_http: bool,
    /// PEM file of extra CA certificates for the target registry's TLS.
    #[arg(long, value_name = "FILE")]
    pub dest_ca_file: Option<PathBuf>,
    /// Verify the target registry's TLS certificate (--dest-tls-verify=false to skip).
    #[arg(long, value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set)]
    pub dest_tls_verify: bool,
    /// Attempts per request on connection errors, 408, 429 and 5xx (1 = no retry).
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub retries: u32,
}

impl std::fmt::Debug for Args {
    /// Written by hand so credentials never reach a debug print of the arguments.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Args")
            .field("previous", &self.previous)
            .field("plan", &self.plan)
            .field("to", &self.to)
            .field("delete", &self.delete)
            .finish_non_exhaustive()
    }
}

/// Runs `olmpack catalog mirror prune`.
pub fn run(args: &Args) -> Outcome {
    if args.max_components == Some(0) {
        return Err(Failure::usage("--max-components must be at least 1"));
    }
    let named = [args.to.as_str()];
    let mut target = crate::commands::copy::end(
        &args.dest_authfile,
        &args.dest_creds,
        (&named, "--dest-creds"),
        args.dest_plain_http,
        &args.dest_ca_file,
        args.retries,
    )?;
    target.client.insecure = !args.dest_tls_verify;
    let opts = PruneOptions {
        target,
        max_components: args.max_components,
        delete: args.delete,
    };
    let outcome = match prune::run(&args.previous, &args.plan, &args.to, &opts) {
        Ok(o) => o,
        Err(e @ PruneError::Unsupported { .. }) => {
            return Err(Failure::with_code(EXIT_FINDINGS, super::error_chain(&e)));
        }
        Err(e) => return Err(e.into()),
    };
    if args.json {
        let text = serde_json::to_string_pretty(&outcome)
            .map_err(|e| Failure::usage(format!("cannot write JSON: {e}")))?;
        outln!("{text}")?;
    } else {
        for r in &outcome.repositories {
            outln!("{}", r.repository)?;
            for d in &r.deletions {
                let what = match &d.what {
                    What::Image {
                        kind,
                        sources,
                        tags,
                    } => format!(
                        "{kind} {}{}",
                        sources.join(", "),
                        if tags.is_empty() {
                            String::new()
                        } else {
                            format!(" (tags: {})", tags.join(", "))
                        }
                    ),
                    What::Child { of, platform } => format!(
                        "manifest of the index {of}{}",
                        platform
                            .as_deref()
                            .map_or_else(String::new, |p| format!(" ({p})"))
                    ),
                    What::Attached { of, tag } => format!(
                        "attached to {of}{}",
                        tag.as_deref()
                            .map_or_else(|| " (referrer)".to_string(), |t| format!(" (tag {t})"))
                    ),
                };
                let done = match &d.outcome {
                    None => String::new(),
                    Some(Deletion::Deleted) => "deleted\t".into(),
                    Some(Deletion::Absent) => "already gone\t".into(),
                    Some(Deletion::Failed(why)) => format!("FAILED ({why})\t"),
                };
                outln!("  {done}{}\t{what}", d.digest)?;
            }
            for g in &r.gone {
                outln!("  {g}\tno longer at the target")?;
            }
            for h in &r.held {
                outln!("  {}\tkept: {}", h.digest, h.reason)?;
            }
        }
    }
    let count = outcome.count();
    let repositories = outcome
        .repositories
        .iter()
        .filter(|r| !r.deletions.is_empty())
        .count();
    if outcome.deleted {
        let failed = outcome.failures();
        eprintln!(
            "deleted {} of {count} manifest(s) in {repositories} repositories of {} that {} no longer uses{}; the registry frees their blobs at its next garbage collection",
            count - failed,
            outcome.target,
            outcome.plan.display(),
            if failed > 0 {
                format!("; {failed} failed")
            } else {
                String::new()
            }
        );
        if failed > 0 {
            return Ok(EXIT_FINDINGS);
        }
    } else {
        eprintln!(
            "{count} manifest(s) in {repositories} repositories of {} are not used by {}; nothing deleted (--delete removes them)",
            outcome.target,
            outcome.plan.display()
        );
    }
    Ok(EXIT_OK)
}
