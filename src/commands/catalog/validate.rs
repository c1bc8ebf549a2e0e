//! `olmpack catalog validate DIR...`: load and check file-based catalogs, print one report per
//! folder and a total, and exit 0 (valid), 1 (errors, or warnings under `--strict`) or 2 (a
//! folder could not be read, olmpack failed internally on one, or a usage error). Output as
//! `bundle validate`.

use super::flags::{ColorChoice, ReportFormat as OutputFormat};
use super::{EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, Failure, Outcome};
use crate::findings::rules::Subject;
use crate::findings::{Diagnostic, Report, Rule};
use crate::validate::catalog::validate_dirs;
use crate::validate::output;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

/// Arguments of `olmpack catalog validate`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Catalog folders (every file under each is read, as opm does). Several are checked in parallel.
    #[arg(value_name = "DIR", required_unless_present = "list_rules")]
    pub dirs: Vec<PathBuf>,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value = "text")]
    pub output: OutputFormat,
    /// Print what `opm validate -o json|yaml` prints (opm v1.68+): `{passed, error: {message}}`
    /// per folder, for pipelines that parse opm's output (replaces -o).
    #[arg(long, value_name = "FORMAT", value_parser = ["opm-json", "opm-yaml"])]
    pub output_format: Option<String>,
    /// Fail on warnings too (the checks opm does not make).
    #[arg(long)]
    pub strict: bool,
    /// List every catalog rule with its id, severity and whether opm checks it, then exit.
    #[arg(long = "list-rules")]
    pub list_rules: bool,
    /// When to use colour in text output.
    #[arg(long, value_enum, default_value = "auto")]
    pub color: ColorChoice,
    /// Number of folders validated at once (default: the number of CPUs).
    #[arg(short = 'j', long = "jobs", value_name = "N")]
    pub jobs: Option<usize>,
    /// Accept a catalog with no olm.* blob (an empty folder is otherwise refused as a likely
    /// wrong path).
    #[arg(long)]
    pub allow_empty: bool,
    /// Also run an optional group: `olmv1` checks every bundle that carries its manifests
    /// against what OLM v1 refuses, and `-o json` adds a per-package readiness report.
    #[arg(long = "select-optional", value_name = "GROUP")]
    pub select_optional: Vec<String>,
}

/// Runs `olmpack catalog validate`.
pub fn run(args: &Args) -> Outcome {
    if args.list_rules {
        return list_rules();
    }
    let mut olmv1 = false;
    for sel in &args.select_optional {
        match sel.trim() {
            "olmv1" | "olm-v1" => olmv1 = true,
            other => {
                return Err(Failure::usage(format!(
                    "unknown optional rule group \"{other}\" for catalogs: choose olmv1"
                )));
            }
        }
    }
    let mut io_failure = false;
    let mut readiness = serde_json::Map::new();
    // Inputs of another kind (an image, a bundle or package-manifest folder, an sqlite
    // database) are named as such, with the command that reads them; the rest are validated.
    let wrong: Vec<Option<String>> = args
        .dirs
        .iter()
        .map(|d| crate::validate::catalog::not_a_catalog(d))
        .collect();
    let catalogs: Vec<std::path::PathBuf> = args
        .dirs
        .iter()
        .zip(&wrong)
        .filter(|(_, w)| w.is_none())
        .map(|(d, _)| d.clone())
        .collect();
    let mut validated = validate_dirs(&catalogs, args.jobs).into_iter();
    let mut reports: Vec<Report> = Vec::with_capacity(args.dirs.len());
    for (dir, wrong) in args.dirs.iter().zip(wrong) {
        let result = match wrong {
            Some(message) => Err(message),
            None => validated
                .next()
                .map(|r| r.map_err(|e| e.to_string()))
                .unwrap_or_else(|| Err("not validated".to_string())),
        };
        reports.push(match result {
            Ok(mut report) => {
                if args.allow_empty {
                    report.diagnostics.retain(|d| d.rule != Rule::CatalogEmpty);
                }
                report
            }
            Err(message) => {
                io_failure = true;
                Report::new(
                    dir.display().to_string(),
                    vec![Diagnostic::new(Rule::CatalogUnreadable, message)],
                )
            }
        });
    }
    if olmv1 {
        for (report, dir) in reports.iter_mut().zip(&args.dirs) {
            if crate::validate::catalog::not_a_catalog(dir).is_some() {
                continue;
            }
            let (found, packages) = crate::action::catalog_olmv1::check_dir(dir);
            report.diagnostics.extend(found);
            report.sort();
            readiness.insert(
                dir.display().to_string(),
                serde_json::to_value(packages).unwrap_or_default(),
            );
        }
    }
    let color = match args.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => super::color_on(std::io::stdout().is_terminal()),
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let written = match args.output {
        _ if args.output_format.is_some() => {
            let yaml = args.output_format.as_deref() == Some("opm-yaml");
            let mut text = String::new();
            for r in &reports {
                let v = crate::validate::opm_output::result(r);
                if yaml {
                    text.push_str(&crate::validate::opm_output::yaml(&v));
                } else {
                    text.push_str(&crate::validate::opm_output::json(&v));
                }
            }
            out.write_all(text.as_bytes())
        }
        OutputFormat::Json if olmv1 => {
            let mut buf = Vec::new();
            output::json(&reports, Subject::Catalog, args.strict, &mut buf).and_then(|()| {
                let mut v: serde_json::Value =
                    serde_json::from_slice(&buf).map_err(std::io::Error::other)?;
                if let Some(obj) = v.as_object_mut() {
                    obj.insert("olmv1".into(), serde_json::Value::Object(readiness));
                }
                serde_json::to_writer_pretty(&mut out, &v).map_err(std::io::Error::other)?;
                writeln!(out)
            })
        }
        OutputFormat::Json => output::json(&reports, Subject::Catalog, args.strict, &mut out),
        OutputFormat::Jsonl => output::jsonl(&reports, Subject::Catalog, args.strict, &mut out),
        OutputFormat::Text => {
            output::text(&reports, Subject::Catalog, args.strict, color, &mut out)
        }
    };
    if let Err(e) = written
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        return Err(Failure::usage(format!("cannot write output: {e}")));
    }
    // olmpack failing on a catalog is not a finding about the user's files: exit 2.
    let internal_failure = reports.iter().any(|r| r.has_rule(Rule::InternalError));
    if io_failure || internal_failure {
        Ok(EXIT_USAGE)
    } else if reports.iter().all(|r| r.passed(args.strict)) {
        Ok(EXIT_OK)
    } else {
        Ok(EXIT_FINDINGS)
    }
}

fn list_rules() -> Outcome {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for rule in Rule::ALL.iter().filter(|r| r.is_catalog()) {
        let opm = match rule.opm_since() {
            Some(since) => format!("opm {since}"),
            None => "olmpack only".to_string(),
        };
        let _ = writeln!(
            out,
            "{:<32} {:<8} {:<40} {}",
            rule.id(),
            rule.default_severity().as_str(),
            opm,
            rule.summary()
        );
    }
    Ok(EXIT_OK)
}
