//! The bundle size rule. OLM v0 unpacks a bundle into one ConfigMap, and Kubernetes objects are
//! capped at 1 MiB, so operator-framework/api measures the manifests as gzip + base64 and fails
//! above 1 MiB (warning above 85 %). Compressing a multi-MB bundle costs as much as parsing it, so
//! the exact figure is computed only when cheaper bounds cannot decide:
//! 1. the raw size: gzip never grows data by more than ~0.1 %, so a bundle whose raw size stays
//!    under the warning threshold is fine (every typical bundle stops here, at no cost);
//! 2. a sampled estimate: 4 KiB windows every 32 KiB, compressed at level 1 and scaled up. The
//!    fastest level compresses worse than level 6, and each window sees only the other windows as
//!    history instead of the 32 KiB before it, so the estimate errs high; a bundle is passed here only when 1.5 times the
//!    estimate is still under the warning threshold. Real bundles (CRDs, CSVs, icons) compress
//!    evenly enough for this margin; a file crafted to hide incompressible bytes between the
//!    windows could slip through, which costs its author a failed OLM v0 unpack, nothing more;
//! 3. otherwise, near or above the limit, the exact size at Go's default level (6), as
//!    operator-framework/api measures it.

use super::{Ctx, Diagnostic, Rule, Severity};
use flate2::write::GzEncoder;
use flate2::{Compress, Compression, FlushCompress};
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
    let estimate = sampled_estimate(&files);
    if base64_len(estimate + estimate / 2) < warn_at {
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

/// Side of the windows the estimate compresses, and the distance between their starts.
const WINDOW: usize = 4 * 1024;
const STRIDE: usize = 32 * 1024;

/// An estimate of the gzip length of all files concatenated that errs high (see the module docs):
/// compresses one eighth of the bytes at the fastest level, as one stream with a sync flush after
/// each window (no per-window reset, whose table clearing would cost more than the window).
fn sampled_estimate(files: &[&[u8]]) -> u64 {
    let mut deflate = Compress::new(Compression::fast(), false);
    let mut out = vec![0u8; WINDOW * 2 + 64];
    let (mut sampled, mut total) = (0u64, 0u64);
    for file in files {
        total += file.len() as u64;
        for chunk in file.chunks(STRIDE) {
            let window = &chunk[..WINDOW.min(chunk.len())];
            if deflate
                .compress(window, &mut out, FlushCompress::Sync)
                .is_err()
                || deflate.total_in() < sampled + window.len() as u64
            {
                // Cannot estimate: assume nothing compresses.
                return total_len(files);
            }
            sampled += window.len() as u64;
        }
    }
    if sampled == 0 {
        return 0;
    }
    // gzip header and trailer: 18 bytes.
    (total as u128 * deflate.total_out() as u128 / sampled as u128) as u64 + 18
}

fn total_len(files: &[&[u8]]) -> u64 {
    files.iter().map(|f| f.len() as u64).sum()
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

#[cfg(test)]
mod tests {
    use super::*;

    /// CRD-like text: repetitive structure with varying names and numbers.
    fn yamlish(len: usize) -> Vec<u8> {
        let mut out = String::new();
        let mut i = 0u64;
        while out.len() < len {
            i += 1;
            let word = i.wrapping_mul(2654435761) % 9973;
            out.push_str(&format!(
                "        field{word}:\n          description: value {i} of the field named f{word}, see docs\n          type: string\n"
            ));
        }
        out.into_bytes()
    }

    /// Bytes that do not compress (a xorshift stream).
    fn noise(len: usize) -> Vec<u8> {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect()
    }

    #[test]
    fn the_estimate_errs_high_on_text_and_matches_noise() {
        let text = yamlish(3 << 20);
        let exact = gzip_len(&[&text], Compression::default()).expect("gzip");
        let estimate = sampled_estimate(&[&text]);
        assert!(estimate >= exact, "estimate {estimate} under exact {exact}");
        let random = noise(1 << 20);
        let estimate = sampled_estimate(&[&random]);
        assert!(estimate >= random.len() as u64, "{estimate}");
    }

    #[test]
    fn mixed_content_is_not_underestimated() {
        // A large icon (incompressible) inside a text manifest, as real CSVs carry.
        let mut file = yamlish(2 << 20);
        file.extend(noise(600 * 1024));
        file.extend(yamlish(1 << 20));
        let exact = gzip_len(&[&file], Compression::default()).expect("gzip");
        assert!(sampled_estimate(&[&file]) * 3 / 2 >= exact);
    }
}
