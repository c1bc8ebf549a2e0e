//! `olmpack bundle republish DIR --to REF [--template FILE] [--release N|--bump]`: a published
//! bundle fixed without a new operator version: release bumped, CSV renamed, image built and
//! pushed, the substitution added to the catalog template, in one step
//! ([`crate::action::bundle_republish`]).
//!
//! Output contract: stdout gets the pushed `REF:TAG@sha256:<digest>` line (as `bundle build
//! --push` prints it); what changed goes to stderr.

use super::flags::RegistryArgs;
use super::{EXIT_FINDINGS, EXIT_OK, Failure, Outcome, error_chain};
use crate::action::bundle_build::{Format, build_options};
use crate::action::bundle_republish::{
    self, Release, RepublishEvent, RepublishOutcome, RepublishRun,
};
use crate::action::labels::parse_label;
use std::io::IsTerminal;
use std::path::PathBuf;

/// Arguments of `olmpack bundle republish`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
The CSV gets spec.release (bumped: the last number + 1, `.1` after a word, `1` when there was
none) and metadata.name <package>-v<version>-<release>; a release is at most 20 characters of
dot-separated [0-9A-Za-z-] identifiers, numbers without leading zeros, and must order after the
current one; spec.version may not carry build metadata beside it (opm, olm-docs #342).
The template must be an olm.template.substitutes template; the substitution added is
{name: REPOSITORY@sha256:<pushed digest>, base: <the old CSV name>}. A base already substituted,
a reused image, a name already in the template, or a cycle of substitutions is refused, and the
edited template is rendered in full before the push.
All or nothing: the CSV and the template are written only after the push (and signing) succeeded;
on any error they are unchanged.
Exit codes: 0 republished, 1 the edited bundle has validation errors (nothing pushed or written),
2 usage, refused release or template, or I/O or registry error (nothing written).")]
pub struct Args {
    /// The bundle folder (holding manifests/ and metadata/); its CSV is edited.
    pub dir: PathBuf,
    /// Registry reference to push the republished bundle to; without a tag,
    /// `v<version>-<release>` is used.
    #[arg(long, value_name = "REF")]
    pub to: String,
    /// The catalog's olm.template.substitutes template to add the substitution to.
    #[arg(long, value_name = "FILE")]
    pub template: Option<PathBuf>,
    /// The new release (instead of bumping the current one).
    #[arg(long, value_name = "N", conflicts_with = "bump")]
    pub release: Option<String>,
    /// Bump the current release (the default).
    #[arg(long)]
    pub bump: bool,
    /// Media types of the manifest, config and layers.
    #[arg(long, value_enum, default_value_t = super::build::FormatArg::Oci)]
    pub format: super::build::FormatArg,
    /// Extra image label KEY=VALUE (repeatable); may not contradict an annotation.
    #[arg(long = "label", value_name = "KEY=VALUE", value_parser = parse_label)]
    pub labels: Vec<(String, String)>,
    /// Put all folders in one layer instead of one layer per folder.
    #[arg(long)]
    pub single_layer: bool,
    /// Registry connection flags; `--platform` is the platform recorded in the image.
    #[command(flatten)]
    pub registry: RegistryArgs,
    /// Sign what is pushed (cosign and/or simple signing).
    #[command(flatten)]
    pub sign: Box<super::super::sign::SignArgs>,
}

/// Runs `olmpack bundle republish`.
pub fn run(args: &Args) -> Outcome {
    let signing = super::super::sign::build_sign_options(&args.sign, true)?;
    let registry = args.registry.options(&[args.to.as_str()])?;
    let options = build_options(
        match args.format {
            super::build::FormatArg::Oci => Format::Oci,
            super::build::FormatArg::Docker => Format::Docker,
        },
        &args.registry.platform,
        &args.labels,
        args.single_layer,
    )?;
    let request = RepublishRun {
        dir: args.dir.clone(),
        to: args.to.clone(),
        template: args.template.clone(),
        release: match &args.release {
            Some(r) => Release::Set(r.clone()),
            None => Release::Bump,
        },
        options,
        registry,
        sign: signing.map(std::sync::Arc::new),
    };
    let color = super::color_on(std::io::stderr().is_terminal());
    let mut printed: Result<(), Failure> = Ok(());
    let outcome = bundle_republish::run(&request, &mut |event| match event {
        RepublishEvent::Planned(p) => {
            let old = if p.old_release.is_empty() {
                "no release".to_string()
            } else {
                format!("release {}", p.old_release)
            };
            eprintln!(
                "{}: {} ({old}) -> {} (release {}), pushing to {}",
                p.csv.display(),
                p.old_name,
                p.name,
                p.release,
                p.to
            );
        }
        RepublishEvent::Findings(report) => {
            let _ = crate::validate::output::human(report, &mut std::io::stderr().lock(), color);
        }
        RepublishEvent::Warning(w) => eprintln!("warning: {w}"),
        RepublishEvent::Pushed(shown) => {
            if printed.is_ok() {
                printed = outln!("{shown}");
            }
        }
        RepublishEvent::Signed(pushed, w) => {
            eprintln!("signed {} ({}): {}", pushed.digest, w.format, w.location);
        }
    });
    printed?;
    match outcome.map_err(|e| Failure::usage(error_chain(&e)))? {
        RepublishOutcome::Invalid => {
            eprintln!(
                "not republishing {}: the edited bundle has the errors above; nothing was pushed or written",
                args.dir.display()
            );
            Ok(EXIT_FINDINGS)
        }
        RepublishOutcome::Done(done) => {
            eprintln!("wrote {}", done.plan.csv.display());
            if let Some((name, base, template)) = &done.substitution {
                eprintln!(
                    "added to {}: substitution {{name: {name}, base: {base}}}",
                    template.display()
                );
            }
            Ok(EXIT_OK)
        }
    }
}
