//! `olmpack catalog validate DIR...`: load and check file-based catalogs, print one report per
//! folder and a total, and exit 0 (valid), 1 (errors, or warnings under `--strict`) or 2 (a
//! folder could not be read, olmpack failed internally on one, or a usage error). Output as
//! `bundle validate`.

use super::flags::{ColorChoice, ReportFormat as OutputFormat};
use super::{EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, Failure, Outcome};
use crate::action::catalog_validate::{self, CatalogValidateOptions};
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
    /// The opm release that will load the catalog (e.g. 1.26 for an opm v1.26.5 image): blobs
    /// it cannot load, though current opm can, become errors (catalog/opm-load). Default: the
    /// newest opm.
    #[arg(long, value_name = "VERSION")]
    pub opm_compat: Option<crate::action::catalog_render::OpmCompat>,
    /// Where the catalog will run: ocp-4.12 ... ocp-4.22, ocp-5.0, olmv0, olmv1
    /// (comma-separated or repeated). Every finding names the targets it affects; olmv1 runs
    /// the OLM v1 group; OpenShift 4.17 and later add catalog/metadata-form. The facts and
    /// their sources: docs/guide/targets.md.
    #[arg(long = "target", value_name = "TARGET", value_delimiter = ',')]
    pub targets: Vec<String>,
    /// Reproduce the verdict of a past opm release, opm=vX.Y[.Z]: errors of rules that
    /// release does not check become warnings naming the release that added them, and
    /// findings of rules changed since say so (the rule records' opm release, see
    /// --list-rules). Also sets --opm-compat to that release when olmpack knows its loader.
    #[arg(long, value_name = "opm=VERSION")]
    pub compat: Option<String>,
}

/// Runs `olmpack catalog validate`.
pub fn run(args: &Args) -> Outcome {
    if args.list_rules {
        return list_rules();
    }
    let opts = CatalogValidateOptions {
        jobs: args.jobs,
        allow_empty: args.allow_empty,
        select_optional: args.select_optional.clone(),
        opm_compat: args.opm_compat,
        targets: args.targets.clone(),
        compat: args.compat.clone(),
    };
    let validated = catalog_validate::validate(&args.dirs, &opts)?;
    let color = match args.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => super::color_on(std::io::stdout().is_terminal()),
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let (reports, kind) = (&validated.reports, validated.subject);
    let written = match args.output {
        _ if args.output_format.is_some() => {
            let yaml = args.output_format.as_deref() == Some("opm-yaml");
            out.write_all(validated.opm_output(yaml).as_bytes())
        }
        OutputFormat::Json if validated.olmv1 => {
            let mut buf = Vec::new();
            output::json(reports, kind, args.strict, &mut buf).and_then(|()| {
                let mut v: serde_json::Value =
                    serde_json::from_slice(&buf).map_err(std::io::Error::other)?;
                if let Some(obj) = v.as_object_mut() {
                    obj.insert(
                        "olmv1".into(),
                        serde_json::Value::Object(validated.readiness.clone()),
                    );
                    obj.insert(
                        "olmv1UpgradeEdges".into(),
                        serde_json::Value::Object(validated.upgrade_edges.clone()),
                    );
                }
                serde_json::to_writer_pretty(&mut out, &v).map_err(std::io::Error::other)?;
                writeln!(out)
            })
        }
        OutputFormat::Json => output::json(reports, kind, args.strict, &mut out),
        OutputFormat::Jsonl => output::jsonl(reports, kind, args.strict, &mut out),
        OutputFormat::Text => output::text(reports, kind, args.strict, color, &mut out),
    };
    if let Err(e) = written
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        return Err(Failure::usage(format!("cannot write output: {e}")));
    }
    // olmpack failing on a catalog is not a finding about the user's files: exit 2.
    if validated.incomplete() {
        Ok(EXIT_USAGE)
    } else if validated.passed(args.strict) {
        Ok(EXIT_OK)
    } else {
        Ok(EXIT_FINDINGS)
    }
}

fn list_rules() -> Outcome {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for line in catalog_validate::rule_lines() {
        let _ = writeln!(out, "{line}");
    }
    Ok(EXIT_OK)
}
