//! Reading manifests and indexes (OCI and Docker v2-2), whatever transport brought their bytes:
//! a registry, an OCI layout, an archive. One parser, so a layout and a registry can never
//! disagree on what a manifest says, and its failures are [`ImageError`]s, never registry ones.

use super::config::Platform;
use super::descriptor::Descriptor;
use super::error::ImageError;
use serde::Deserialize;

/// Manifests and indexes are small; anything bigger is refused before it is read (the
/// distribution spec suggests registries accept at least 4 MiB, and none of ours comes close).
pub const MAX_MANIFEST_BYTES: u64 = 4 << 20;

#[derive(Deserialize)]
struct RawDescriptor {
    #[serde(rename = "mediaType", default)]
    media_type: String,
    digest: String,
    size: u64,
    #[serde(default)]
    platform: Option<RawPlatform>,
}

#[derive(Deserialize)]
struct RawPlatform {
    #[serde(default)]
    os: String,
    #[serde(default)]
    architecture: String,
    #[serde(default)]
    variant: Option<String>,
}

#[derive(Deserialize)]
struct RawManifest {
    #[serde(rename = "schemaVersion", default)]
    schema_version: u32,
    #[serde(rename = "mediaType", default)]
    media_type: Option<String>,
    #[serde(default)]
    config: Option<RawDescriptor>,
    #[serde(default)]
    layers: Option<Vec<RawDescriptor>>,
    #[serde(default)]
    manifests: Option<Vec<serde_json::Value>>,
    #[serde(default)]
    subject: Option<RawDescriptor>,
}

/// A single-image manifest reduced to what olmpack uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedManifest {
    /// Config descriptor.
    pub config: Descriptor,
    /// Layer descriptors in order.
    pub layers: Vec<Descriptor>,
    /// The manifest this one is attached to (OCI 1.1 `subject`: a signature, an SBOM), if any.
    pub subject: Option<Descriptor>,
}

fn to_desc(d: RawDescriptor) -> Result<Descriptor, ImageError> {
    if !crate::reference::valid_digest(&d.digest) {
        return Err(ImageError::Malformed(format!(
            "manifest names an invalid digest {:?}",
            d.digest
        )));
    }
    Ok(Descriptor {
        media_type: d.media_type,
        digest: d.digest,
        size: d.size,
    })
}

fn raw(bytes: &[u8]) -> Result<RawManifest, ImageError> {
    serde_json::from_slice(bytes)
        .map_err(|e| ImageError::Malformed(format!("manifest is not valid JSON: {e}")))
}

/// The `mediaType` a manifest or index names for itself, if it names one (optional in OCI).
pub fn declared_media_type(bytes: &[u8]) -> Option<String> {
    raw(bytes)
        .ok()
        .and_then(|m| m.media_type)
        .filter(|m| !m.is_empty())
}

/// Parses an image manifest (OCI or Docker v2-2). Schema 1 and indexes are refused here.
pub fn parse_manifest(bytes: &[u8]) -> Result<ParsedManifest, ImageError> {
    let raw = raw(bytes)?;
    if raw.schema_version == 1 {
        return Err(ImageError::Malformed(
            "Docker schema 1 manifests are not supported; rebuild the image".into(),
        ));
    }
    if raw.manifests.is_some() {
        return Err(ImageError::Malformed(
            "expected an image manifest, got an index".into(),
        ));
    }
    let config = raw
        .config
        .ok_or_else(|| ImageError::Malformed("manifest has no config".into()))?;
    let layers = raw
        .layers
        .unwrap_or_default()
        .into_iter()
        .map(to_desc)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ParsedManifest {
        config: to_desc(config)?,
        layers,
        subject: raw.subject.map(to_desc).transpose()?,
    })
}

/// One entry of an image index (or Docker manifest list): the manifest it points at and the
/// platform it claims, kept as raw JSON too so a derived index can copy fields olmpack does not
/// model (`os.version`, `os.features`).
#[derive(Debug, Clone, PartialEq)]
pub struct IndexEntry {
    /// The per-platform manifest.
    pub descriptor: Descriptor,
    /// `os/architecture[/variant]`, when the entry names one (attestations and other
    /// artifacts in an index often do not, or say `unknown/unknown`).
    pub platform: Option<Platform>,
    /// The entry's `platform` object as written.
    pub platform_json: Option<serde_json::Value>,
    /// The whole entry as written (annotations included), so a narrowed index keeps every
    /// field of the entries it keeps.
    pub raw: serde_json::Value,
}

/// Parses an image index or manifest list into its entries; `Ok(None)` when `bytes` is a
/// single-image manifest instead.
pub fn parse_index(bytes: &[u8]) -> Result<Option<Vec<IndexEntry>>, ImageError> {
    let Some(list) = raw(bytes)?.manifests else {
        return Ok(None);
    };
    let mut out = Vec::with_capacity(list.len());
    for value in list {
        let platform_json = value.get("platform").cloned();
        let d: RawDescriptor = serde_json::from_value(value.clone())
            .map_err(|e| ImageError::Malformed(format!("index entry is not a descriptor: {e}")))?;
        let platform = d.platform.as_ref().and_then(|p| {
            let mut text = format!("{}/{}", p.os, p.architecture);
            if let Some(v) = p.variant.as_deref().filter(|v| !v.is_empty()) {
                text = format!("{text}/{v}");
            }
            text.parse::<Platform>().ok()
        });
        out.push(IndexEntry {
            descriptor: to_desc(d)?,
            platform,
            platform_json,
            raw: value,
        });
    }
    Ok(Some(out))
}

/// Whether an index entry serves `platform`: the same os and architecture, and the same
/// variant when one is asked for (`linux/arm64` takes `linux/arm64/v8`, as the registries'
/// own clients do).
pub fn platform_matches(entry: &Platform, wanted: &Platform) -> bool {
    entry.os == wanted.os
        && entry.architecture == wanted.architecture
        && (wanted.variant.is_none() || entry.variant == wanted.variant)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifests_parse_and_schema1_is_refused() {
        let m = br#"{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"c","digest":"sha256:0000000000000000000000000000000000000000000000000000000000000000","size":2},"layers":[]}"#;
        assert_eq!(parse_manifest(m).unwrap().config.size, 2);
        assert!(parse_manifest(br#"{"schemaVersion":1}"#).is_err());
        assert!(parse_manifest(br#"{"schemaVersion":2,"manifests":[]}"#).is_err());
        assert!(parse_index(m).unwrap().is_none());
    }

    #[test]
    fn index_entries_keep_their_raw_fields() {
        let z = "0".repeat(64);
        let idx = format!(
            r#"{{"schemaVersion":2,"manifests":[{{"mediaType":"m","digest":"sha256:{z}","size":1,"platform":{{"os":"linux","architecture":"arm64","variant":"v8"}},"annotations":{{"a":"b"}}}}]}}"#
        );
        let entries = parse_index(idx.as_bytes()).unwrap().unwrap();
        assert_eq!(
            entries[0].platform.as_ref().unwrap().to_string(),
            "linux/arm64/v8"
        );
        assert_eq!(entries[0].raw["annotations"]["a"], "b");
        let wanted: Platform = "linux/arm64".parse().unwrap();
        assert!(platform_matches(
            entries[0].platform.as_ref().unwrap(),
            &wanted
        ));
    }
}
