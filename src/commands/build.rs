//! `olmpack bundle build`: validate a bundle folder, build its reproducible image, write it to an
//! OCI layout or an archive, and print the manifest digest.
//!
//! Output contract: stdout holds one line, `sha256:<hex> <size>` (the manifest digest and its
//! size in bytes, like `sha256sum` puts the hash first), then with `--push` one `REF@sha256:<hex>`
//! line per pushed tag, so
//! `read -r digest size < <(olmpack bundle build)` works; everything meant for humans (warnings,
//! validation findings, where the image went) goes to stderr. `--digest-file` gets the bare
//! digest (no newline, as buildah's and podman's `--digestfile`), written atomically.
//!
//! Names: an `oci:`/`oci-archive:` destination uses its own `:TAG`, else the tag part of each
//! `-t REF`, else `latest`. A `docker-archive:` destination records its own `:REF`, else every
//! `-t REF`, as `RepoTags` (`:latest` added when a reference has no tag).

use super::image_source::RegistryArgs;
use super::{EXIT_FINDINGS, EXIT_OK, Failure, Outcome, error_chain};
use crate::bundle::Bundle;
use crate::image::build::{BundleInput, source_date_epoch_from_env};
use crate::image::layout::stage_file;
use crate::image::{BuildOptions, BuiltImage, Destination, Format, Platform, write_image};
use crate::validate;
use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

/// Where the image goes when neither `--output` nor `--push` is given.
pub const DEFAULT_OUTPUT: &str = "oci:bundle-image";

/// Arguments of `olmpack bundle build`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Output: stdout gets `sha256:<manifest digest> <manifest size>`, then `REF@sha256:<digest>` per tag
pushed with --push; messages go to stderr.
Reproducible: mtimes are SOURCE_DATE_EPOCH (or 0), owners 0, modes 0644/0755, so the same bundle
gives the same digest on any machine.
Concurrent builds into one oci: layout are safe: each updates index.json under a lock on
LAYOUT/.olmpack.lock, waiting up to OLMPACK_LOCK_TIMEOUT seconds (default 60) for it.
Exit codes: 0 built, 1 validation errors (nothing written), 2 usage or I/O error (nothing written).")]
pub struct Args {
    /// The bundle folder (holding manifests/ and metadata/).
    #[arg(default_value = ".")]
    pub dir: PathBuf,
    /// Image reference to name the image with (repeatable); its tag names the image in OCI
    /// outputs, the whole reference goes to docker-archive RepoTags.
    #[arg(short = 't', long = "tag", value_name = "REF")]
    pub tags: Vec<String>,
    /// oci:PATH[:TAG], oci-archive:FILE[:TAG] or docker-archive:FILE[:REF]
    /// [default: oci:bundle-image]
    #[arg(long, value_name = "DEST", value_parser = check::<Destination>)]
    pub output: Option<String>,
    /// Media types of the manifest, config and layers.
    #[arg(long, value_enum, default_value_t = FormatArg::Oci)]
    pub format: FormatArg,
    /// Extra image label KEY=VALUE (repeatable); may not contradict an annotation.
    #[arg(long = "label", value_name = "KEY=VALUE", value_parser = parse_label)]
    pub labels: Vec<(String, String)>,
    /// Push the image to every `-t REF` (a registry reference each). Without `--output`, nothing
    /// is written locally.
    #[arg(long)]
    pub push: bool,
    /// Repository to mount existing blobs from when pushing (cross-repository blob mount).
    #[arg(long, value_name = "REPO", requires = "push")]
    pub mount_from: Option<String>,
    /// Also write the manifest digest (sha256:...) to this file.
    #[arg(long, value_name = "FILE")]
    pub digest_file: Option<PathBuf>,
    /// Build even when validation finds errors (validation is skipped).
    #[arg(long)]
    pub no_validate: bool,
    /// Put all folders in one layer instead of one layer per folder.
    #[arg(long)]
    pub single_layer: bool,
    /// Registry connection flags for --push; `--platform` is the platform recorded in the image.
    #[command(flatten)]
    pub registry: RegistryArgs,
}

/// `--format` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FormatArg {
    /// OCI image manifest and media types.
    Oci,
    /// Docker image manifest v2 schema 2.
    Docker,
}

/// Checks a value at parse time but keeps it as a string, so `Args` stays small (clippy's
/// `large_enum_variant` on the command enum) and the parsed form is made where it is used.
fn check<T: std::str::FromStr>(s: &str) -> Result<String, String>
where
    T::Err: std::fmt::Display,
{
    s.parse::<T>()
        .map(|_| s.to_string())
        .map_err(|e| e.to_string())
}

/// The `--label KEY=VALUE` value parser of `bundle build` and `catalog build`, so both accept
/// and refuse the same spellings.
pub(crate) fn parse_label(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
        _ => Err(format!("expected KEY=VALUE, got {s:?}")),
    }
}

/// The `--label` pairs as a map; a key given twice with different values is a usage error
/// (rather than one silently winning), the same for `bundle build` and `catalog build`.
pub(crate) fn label_map(pairs: &[(String, String)]) -> Result<BTreeMap<String, String>, Failure> {
    let mut labels = BTreeMap::new();
    for (k, v) in pairs {
        if let Some(previous) = labels.insert(k.clone(), v.clone())
            && &previous != v
        {
            return Err(Failure::usage(format!(
                "--label {k} is given twice with different values ({previous:?} and {v:?})"
            )));
        }
    }
    Ok(labels)
}

/// Runs `olmpack bundle build`.
///
/// The order is what makes "no partial output" hold: arguments are checked, the bundle is
/// validated, the image is built into a spool folder, the digest file is staged, and only then
/// is anything written where the user asked. (`--push` goes after [`build_from_args`] as one more
/// sink of `built.image`; without `--output` it should then write no local layout.)
pub fn run(args: &Args) -> Outcome {
    if args.push && args.tags.is_empty() {
        return Err(Failure::usage(
            "--push needs at least one -t REF to push to",
        ));
    }
    // With --push, a local copy is written only when --output asks for one.
    let dest: Option<Destination> = match (&args.output, args.push) {
        (Some(out), _) => Some(out.parse()?),
        (None, false) => Some(DEFAULT_OUTPUT.parse()?),
        (None, true) => None,
    };
    let names = match &dest {
        Some(dest) => output_names(dest, &args.tags)?,
        None => Vec::new(),
    };
    let built = match build_from_args(args)? {
        Ok(built) => built,
        Err(code) => return Ok(code),
    };
    // Not locked: the pusher reports progress on stderr from its own threads.
    let mut stderr = std::io::stderr();
    for warning in &built.warnings {
        let _ = writeln!(stderr, "warning: {warning}");
    }
    let manifest = &built.image.manifest.descriptor;
    // Staged before the image is written, so a digest file that cannot be written stops the
    // build before any output appears. No trailing newline, like buildah/podman --digestfile.
    let digest_file = match &args.digest_file {
        Some(file) => Some(
            stage_file(file, manifest.digest.as_bytes())
                .map_err(|e| Failure::usage(error_chain(&e)))?,
        ),
        None => None,
    };
    let pushed = if args.push {
        let opts = crate::registry::push::PushOptions {
            mount_from: args.mount_from.clone(),
            ..crate::registry::push::PushOptions::default()
        };
        crate::transport::sink::push(
            crate::image::Artifact::Image(&built.image),
            &args.tags,
            &args.registry.options()?,
            &opts,
        )?
        .into_iter()
        .flat_map(|(report, _)| report.refs)
        .collect()
    } else {
        Vec::new()
    };
    if let Some(dest) = &dest {
        write_image(&built.image, dest, &names)
            .map_err(|e| Failure::usage(format!("cannot write {dest}: {}", error_chain(&e))))?;
        let _ = writeln!(
            stderr,
            "wrote {} ({} layer{}, {}) as {}",
            dest,
            built.image.layers.len(),
            if built.image.layers.len() == 1 {
                ""
            } else {
                "s"
            },
            manifest.media_type,
            if names.is_empty() {
                "(untagged)".to_string()
            } else {
                names.join(", ")
            },
        );
    }
    if let Some(staged) = digest_file {
        staged
            .commit()
            .map_err(|e| Failure::usage(error_chain(&e)))?;
    }
    println!("{} {}", manifest.digest, manifest.size);
    for reference in pushed {
        println!("{reference}");
    }
    Ok(EXIT_OK)
}

/// Everything up to a built image: label and platform arguments, `SOURCE_DATE_EPOCH`,
/// loading and validating the bundle, building into a spool folder. Returns `Ok(Err(code))`
/// when validation stopped the build (findings already on stderr). Sinks (`--output`, and
/// `--push` later) take the returned image; its blobs live as long as the value.
pub fn build_from_args(args: &Args) -> Result<Result<BuiltImage, u8>, Failure> {
    let extra_labels = label_map(&args.labels)?;
    let platform: Platform = if args.registry.platform.is_empty() {
        Platform::default()
    } else {
        args.registry.platform.parse()?
    };
    let source_date_epoch = source_date_epoch_from_env()?;
    let input = match load_and_validate(&args.dir, args.no_validate)? {
        Ok(input) => input,
        Err(code) => return Ok(Err(code)),
    };
    let options = BuildOptions {
        format: match args.format {
            FormatArg::Oci => Format::Oci,
            FormatArg::Docker => Format::Docker,
        },
        platform,
        extra_labels,
        single_layer: args.single_layer,
        source_date_epoch,
    };
    let built = crate::image::build(&input, &options).map_err(|e| {
        Failure::usage(format!(
            "cannot build {}: {}",
            args.dir.display(),
            error_chain(&e)
        ))
    })?;
    Ok(Ok(built))
}

/// The tags (OCI) or RepoTags (docker-archive) to record; see the module docs.
pub(crate) fn output_names(dest: &Destination, refs: &[String]) -> Result<Vec<String>, Failure> {
    let mut names: Vec<String> = Vec::new();
    match dest {
        Destination::DockerArchive { reference, .. } => {
            let given: Vec<&String> = match reference {
                Some(r) => vec![r],
                None => refs.iter().collect(),
            };
            for r in given {
                if r.contains('@') {
                    return Err(Failure::usage(format!(
                        "{r} is a digest reference; a docker-archive needs a tag (REPO:TAG)"
                    )));
                }
                names.push(if tag_of(r).is_some() {
                    r.clone()
                } else {
                    format!("{r}:latest")
                });
            }
        }
        Destination::OciLayout { tag, .. } | Destination::OciArchive { tag, .. } => match tag {
            Some(t) => names.push(t.clone()),
            None => {
                names.extend(
                    refs.iter()
                        .filter(|r| !r.contains('@'))
                        .map(|r| tag_of(r).unwrap_or("latest").to_string()),
                );
                if names.is_empty() {
                    names.push("latest".to_string());
                }
            }
        },
    }
    let mut unique = Vec::with_capacity(names.len());
    for n in names {
        if !unique.contains(&n) {
            unique.push(n);
        }
    }
    Ok(unique)
}

/// The tag of a reference (`quay.io:443/o/b:v1` → `v1`), `None` when it has none.
fn tag_of(reference: &str) -> Option<&str> {
    let last = reference.rsplit('/').next().unwrap_or(reference);
    last.split_once(':')
        .map(|(_, t)| t)
        .filter(|t| !t.is_empty())
}

/// Glue between the bundle model/validator and the image builder. Returns `Ok(Err(code))` when
/// validation found errors (already printed on stderr). Warnings are printed and do not stop
/// the build. The loaded bundle is dropped before building: the builder streams files from
/// disk, so the model's copies of them are not needed any more.
fn load_and_validate(dir: &Path, no_validate: bool) -> Result<Result<BundleInput, u8>, Failure> {
    let loaded = if no_validate {
        Bundle::load_layout(dir)
    } else {
        Bundle::load(dir)
    };
    let bundle = loaded.map_err(|e| Failure::usage(error_chain(&e)))?;
    if !no_validate {
        let report = validate::validate(&bundle, &validate::Options::default());
        if !report.diagnostics.is_empty() {
            let color = super::color_on(std::io::stderr().is_terminal());
            let mut stderr = std::io::stderr().lock();
            let _ = validate::output::human(&report, &mut stderr, color);
            if report.has_errors() {
                let _ = writeln!(
                    stderr,
                    "not building {}: fix the errors above, or pass --no-validate",
                    dir.display()
                );
                return Ok(Err(EXIT_FINDINGS));
            }
        }
    }
    let input = BundleInput::new(
        &bundle.root,
        bundle.manifests_path(),
        bundle.metadata_path(),
        bundle.annotations_labels(),
    )
    .map_err(|e| Failure::usage(error_chain(&e)))?;
    Ok(Ok(input))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_come_from_the_destination_then_the_references() {
        let oci: Destination = "oci:x".parse().unwrap();
        assert_eq!(output_names(&oci, &[]).unwrap(), ["latest"]);
        let refs = vec!["quay.io:443/o/b:v1".to_string(), "o/b".to_string()];
        assert_eq!(output_names(&oci, &refs).unwrap(), ["v1", "latest"]);
        let tagged: Destination = "oci:x:t".parse().unwrap();
        assert_eq!(output_names(&tagged, &refs).unwrap(), ["t"]);
        let docker: Destination = "docker-archive:x.tar".parse().unwrap();
        assert_eq!(
            output_names(&docker, &refs).unwrap(),
            ["quay.io:443/o/b:v1", "o/b:latest"]
        );
        assert!(output_names(&docker, &[]).unwrap().is_empty());
        let named: Destination = "docker-archive:x.tar:r/b:v2".parse().unwrap();
        assert_eq!(output_names(&named, &refs).unwrap(), ["r/b:v2"]);
    }
}
