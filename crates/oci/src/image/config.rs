//! The image config: labels, platform, `rootfs.diff_ids`, a fixed `created`; and the canonical
//! JSON encoding every JSON document of the image goes through.
//!
//! History is left out entirely rather than written without timestamps: it is optional in both
//! the OCI and Docker config formats, nothing that reads bundle images uses it, and an entry's
//! `created_by` text would be one more thing that could change the digest between olmpack
//! versions (`buildah --omit-history` makes the same choice for reproducible builds).

use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt;

/// Serialises a JSON value canonically: object keys sorted, no insignificant whitespace.
///
/// `serde_json::Map` is a `BTreeMap` unless some crate in the tree enables serde_json's
/// `preserve_order` feature; a unit test fails if that ever happens, because the digests
/// would then depend on insertion order.
pub fn canonical_json(value: &Value) -> Vec<u8> {
    // Serialising a `Value` cannot fail: its keys are strings and it holds no non-finite floats.
    serde_json::to_vec(value).unwrap_or_default()
}

/// The platform an image claims (`os`, `architecture`, optional `variant`). A bundle image holds
/// only YAML, so this is a label of convention: catalogs and tools expect `linux/amd64`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Platform {
    /// Operating system, e.g. `linux`.
    pub os: String,
    /// CPU architecture, e.g. `amd64`.
    pub architecture: String,
    /// Variant, e.g. `v8` for `arm64/v8`.
    pub variant: Option<String>,
}

impl Default for Platform {
    fn default() -> Self {
        Platform {
            os: "linux".into(),
            architecture: "amd64".into(),
            variant: None,
        }
    }
}

/// Why a `--platform` value was refused.
#[derive(Debug, thiserror::Error)]
#[error("invalid platform {0:?}: expected OS/ARCH or OS/ARCH/VARIANT, e.g. linux/amd64")]
pub struct PlatformError(pub String);

impl std::str::FromStr for Platform {
    type Err = PlatformError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let parts: Vec<&str> = s.split('/').collect();
        let ok = |p: &str| {
            !p.is_empty()
                && p.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        };
        if !(2..=3).contains(&parts.len()) || !parts.iter().all(|p| ok(p)) {
            return Err(PlatformError(s.to_string()));
        }
        Ok(Platform {
            os: parts[0].to_string(),
            architecture: parts[1].to_string(),
            variant: parts.get(2).map(|v| (*v).to_string()),
        })
    }
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.os, self.architecture)?;
        if let Some(v) = &self.variant {
            write!(f, "/{v}")?;
        }
        Ok(())
    }
}

/// Formats seconds since the epoch as RFC 3339 UTC (`1970-01-01T00:00:00Z`), the form `created`
/// takes in image configs. Written by hand to avoid a date crate for one function.
pub fn rfc3339_utc(epoch: u64) -> String {
    let days = epoch / 86_400;
    let secs = epoch % 86_400;
    // Howard Hinnant's civil_from_days, for days >= 0.
    let z = days as i64 + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let mut year = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    if month <= 2 {
        year += 1;
    }
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        (secs % 3600) / 60,
        secs % 60
    )
}

/// Builds the config JSON. The same document serves OCI and Docker v2-2: the fields used here
/// mean the same in both; only the media type the manifest gives it differs.
pub fn config_json(
    labels: &BTreeMap<String, String>,
    platform: &Platform,
    diff_ids: &[String],
    created_epoch: u64,
) -> Value {
    let mut labels_obj = Map::new();
    for (k, v) in labels {
        labels_obj.insert(k.clone(), Value::String(v.clone()));
    }
    let mut obj = Map::new();
    obj.insert(
        "architecture".into(),
        Value::String(platform.architecture.clone()),
    );
    obj.insert(
        "config".into(),
        serde_json::json!({ "Labels": Value::Object(labels_obj) }),
    );
    obj.insert("created".into(), Value::String(rfc3339_utc(created_epoch)));
    obj.insert("os".into(), Value::String(platform.os.clone()));
    obj.insert(
        "rootfs".into(),
        serde_json::json!({ "type": "layers", "diff_ids": diff_ids }),
    );
    if let Some(variant) = &platform.variant {
        obj.insert("variant".into(), Value::String(variant.clone()));
    }
    Value::Object(obj)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epoch_formats() {
        assert_eq!(rfc3339_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339_utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339_utc(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(rfc3339_utc(4_102_444_799), "2099-12-31T23:59:59Z");
    }

    #[test]
    fn platforms_parse() {
        assert_eq!(
            "linux/amd64".parse::<Platform>().unwrap(),
            Platform::default()
        );
        let p: Platform = "linux/arm64/v8".parse().unwrap();
        assert_eq!(p.variant.as_deref(), Some("v8"));
        assert_eq!(p.to_string(), "linux/arm64/v8");
        assert!("linux".parse::<Platform>().is_err());
        assert!("linux//amd64".parse::<Platform>().is_err());
        assert!("a/b/c/d".parse::<Platform>().is_err());
    }

    /// Guards canonical JSON: if any dependency turned on serde_json's `preserve_order`, keys
    /// would come out in insertion order and every digest would depend on it.
    #[test]
    fn serialized_config_keys_are_sorted() {
        let mut labels = BTreeMap::new();
        labels.insert("z.last".to_string(), "1".to_string());
        labels.insert("a.first".to_string(), "2".to_string());
        let mut value = config_json(&labels, &Platform::default(), &["sha256:x".into()], 0);
        // Insert out of order on purpose.
        if let Value::Object(map) = &mut value {
            map.insert("zzz".into(), Value::Null);
            map.insert("aaa".into(), Value::Null);
        }
        let text = String::from_utf8(canonical_json(&value)).unwrap();
        assert_eq!(
            text,
            concat!(
                r#"{"aaa":null,"architecture":"amd64","config":{"Labels":{"a.first":"2","z.last":"1"}},"#,
                r#""created":"1970-01-01T00:00:00Z","os":"linux","#,
                r#""rootfs":{"diff_ids":["sha256:x"],"type":"layers"},"zzz":null}"#
            )
        );
    }
}
