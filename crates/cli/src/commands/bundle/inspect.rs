//! `olmpack bundle inspect`: digest, media type, platform, labels, layers and the files of each
//! layer of a bundle image, read by streaming the layer tars (nothing is unpacked to disk), plus
//! `metadata/annotations.yaml` when present.

use super::{EXIT_OK, Failure, Outcome};
use crate::action::Location;
use crate::action::bundle_inspect::{Inspected, inspect_image};
use std::io::Write;

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// Human-readable text.
    Text,
    /// One JSON object.
    Json,
}

/// Arguments of `olmpack bundle inspect`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Image: REF, oci:PATH[:TAG], oci-archive:FILE[:TAG] or docker-archive:FILE.
    pub image: String,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value = "text")]
    pub output: OutputFormat,
    /// Skip per-layer file lists and read only the layer holding metadata/annotations.yaml
    /// (the last layer first when it is small, then the other small layers, smallest first).
    #[arg(long)]
    pub no_files: bool,
    /// Registry, mirror and policy options; the policy is
    /// checked before the image is read.
    #[command(flatten)]
    pub read: super::super::sign::ImageReadArgs,
}

/// Runs `olmpack bundle inspect`.
pub fn run(args: &Args) -> Outcome {
    let location = Location::parse(&args.image)?;
    let registry = args.read.registry_options(&[&args.image])?;
    let location = args.read.policy.check(&location, &registry)?;
    let inspected = inspect_image(&location, &registry, args.no_files)
        .map_err(|e| Failure::usage(super::error_chain(&e)))?;
    let mut out = std::io::stdout().lock();
    let res = match args.output {
        OutputFormat::Json => render_json(&mut out, &inspected),
        OutputFormat::Text => render_text(&mut out, &inspected),
    };
    match res {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(EXIT_OK),
        Err(e) => return Err(Failure::usage(format!("cannot write output: {e}"))),
    }
    for w in &inspected.warnings {
        eprintln!("warning: {w}");
    }
    Ok(EXIT_OK)
}

fn render_json(out: &mut dyn Write, o: &Inspected) -> std::io::Result<()> {
    let r = &o.report;
    let layers: Vec<serde_json::Value> = r
        .layers
        .iter()
        .map(|(d, files)| {
            let mut v =
                serde_json::json!({"digest": d.digest, "size": d.size, "mediaType": d.media_type});
            if let Some(f) = files {
                v["files"] = serde_json::to_value(f).unwrap_or_default();
            }
            v
        })
        .collect();
    let v = serde_json::json!({
        "image": o.name,
        "digest": o.digest,
        "mediaType": o.media_type,
        "platform": o.platform,
        "readFrom": o.read_from.as_ref().map(|(place, mirror)| serde_json::json!({"reference": place, "mirror": mirror})),
        "config": {"digest": o.config.digest, "size": o.config.size, "mediaType": o.config.media_type},
        "labels": o.labels,
        "layers": layers,
        "annotations": r.annotations.as_ref().map(|(_, a)| a),
        "annotationsLayer": r.annotations.as_ref().map(|(i, _)| i),
        "layersRead": r.layers_read,
        "warnings": o.warnings,
    });
    serde_json::to_writer_pretty(&mut *out, &v).map_err(std::io::Error::other)?;
    writeln!(out)
}

fn render_text(out: &mut dyn Write, o: &Inspected) -> std::io::Result<()> {
    let r = &o.report;
    writeln!(out, "Image:      {}", o.name)?;
    if let Some((place, mirror)) = &o.read_from {
        let what = if *mirror {
            "mirror"
        } else {
            "source (no mirror had it)"
        };
        writeln!(out, "Read from:  {place} ({what})")?;
    }
    writeln!(out, "Digest:     {}", o.digest)?;
    writeln!(out, "Media type: {}", o.media_type)?;
    writeln!(out, "Platform:   {}", o.platform)?;
    // The image ID: the one digest a docker-archive and the registry image it came from share.
    writeln!(out, "Image ID:   {}", o.config.digest)?;
    let labels = &o.labels;
    writeln!(
        out,
        "Labels:{}",
        if labels.is_empty() { " (none)" } else { "" }
    )?;
    for (k, v) in labels {
        writeln!(out, "  {k}={v}")?;
    }
    writeln!(out, "Layers:")?;
    for (i, (d, files)) in r.layers.iter().enumerate() {
        writeln!(
            out,
            "  [{i}] {} {} bytes {}",
            d.digest, d.size, d.media_type
        )?;
        for f in files.iter().flatten() {
            match f.kind {
                "file" => writeln!(out, "      {} ({} bytes)", f.path, f.size)?,
                "dir" => writeln!(out, "      {}", f.path)?,
                k => writeln!(out, "      {} ({k})", f.path)?,
            }
        }
    }
    match &r.annotations {
        Some((i, a)) => {
            writeln!(out, "Annotations (metadata/annotations.yaml in layer {i}):")?;
            for (k, v) in a {
                writeln!(out, "  {k}: {v}")?;
            }
        }
        None => writeln!(out, "Annotations: metadata/annotations.yaml not found")?,
    }
    Ok(())
}
