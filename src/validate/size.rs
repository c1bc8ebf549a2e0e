//! The bundle size rule. OLM v0 unpacks a bundle into one ConfigMap, and Kubernetes objects are
//! capped at 1 MiB, so operator-framework/api measures the manifests as gzip + base64 and fails
//! above 1 MiB (warning above 85 %). Files are only compressed when the raw size could possibly
//! reach the warning threshold, so typical bundles cost nothing here.

use super::{Ctx, Diagnostic, Rule, Severity};
use flate2::Compression;
use flate2::write::GzEncoder;
use std::io::Write;

/// OLM's limit on the compressed, encoded manifests.
pub const MAX_BUNDLE_SIZE: u64 = 1 << 20;
/// Fraction of the limit above which a warning is given.
const WARN_FRACTION: f64 = 0.85;

pub(crate) fn check(ctx: &mut Ctx<'_>) {
    let manifests: Vec<&crate::bundle::FileEntry> =
        ctx.bundle.files.iter().filter(|f| f.in_manifests).collect();
    let raw: u64 = manifests.iter().map(|f| f.size).sum();
    // gzip never grows data by more than ~0.1 % plus headers; base64 adds a third.
    let upper_bound = base64_len(raw + raw / 500 + 64);
    let warn_at = (MAX_BUNDLE_SIZE as f64 * WARN_FRACTION) as u64;
    if upper_bound < warn_at {
        return;
    }
    // Only large bundles get here: read the files again rather than keep every one in memory.
    let contents: Vec<Vec<u8>> = manifests
        .iter()
        .filter_map(|f| std::fs::read(ctx.bundle.root.join(&f.file)).ok())
        .collect();
    let files: Vec<&[u8]> = contents.iter().map(Vec::as_slice).collect();
    // A fast level-1 pass first: level 6 (what Go's gzip uses) only compresses better, so when
    // level 1 already stays under the warning threshold the exact figure is not needed.
    let Some(fast) = gzip_len(&files, Compression::fast()) else {
        return;
    };
    if base64_len(fast) < warn_at {
        return;
    }
    let Some(compressed) = gzip_len(&files, Compression::default()) else {
        return;
    };
    let size = base64_len(compressed);
    let dir = ctx
        .bundle
        .manifests_dir
        .clone()
        .unwrap_or_else(|| "manifests".into());
    if size > MAX_BUNDLE_SIZE {
        ctx.push(
            Diagnostic::new(
                Rule::BundleSize,
                format!(
                    "maximum bundle compressed size with gzip size exceeded: size=~{} , max={}. Bundle uncompressed size is {}; OLM cannot unpack it: move large content (icons, CRD descriptions) out of the manifests",
                    human(size),
                    human(MAX_BUNDLE_SIZE),
                    human(raw)
                ),
            )
            .in_file(format!("{dir}/")),
        );
    } else if size >= warn_at {
        ctx.push(
            Diagnostic::new(
                Rule::BundleSize,
                format!(
                    "nearing maximum bundle compressed size with gzip: size=~{} , max={}. Bundle uncompressed size is {}",
                    human(size),
                    human(MAX_BUNDLE_SIZE),
                    human(raw)
                ),
            )
            .with_severity(Severity::Warning)
            .in_file(format!("{dir}/")),
        );
    }
}

/// Length of the gzip stream of all files concatenated (as operator-framework/api measures).
fn gzip_len(files: &[&[u8]], level: Compression) -> Option<u64> {
    let mut encoder = GzEncoder::new(CountingSink(0), level);
    for f in files {
        encoder.write_all(f).ok()?;
    }
    encoder.finish().ok().map(|sink| sink.0)
}

/// Counts bytes instead of storing them.
struct CountingSink(u64);

impl Write for CountingSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn base64_len(n: u64) -> u64 {
    n.div_ceil(3) * 4
}

fn human(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{:.2} MiB", bytes as f64 / f64::from(1u32 << 20))
    } else {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    }
}
