//! `trusted_root.json` (`dev.sigstore.trustroot.v1.TrustedRoot`), as Sigstore distributes it
//! through TUF: the Fulcio CAs, Rekor logs, CT logs and timestamp authorities a verifier
//! trusts, each for a time range. olmpack reads it from a file (no TUF, no network) and
//! carries the public-good instance's copy for when none is given.

use super::bundle::{B64, CertificateChain, LogId};
use serde::{Deserialize, Serialize};

/// sigstore's public-good trusted root (Fulcio, Rekor, CT log, TSA of sigstore.dev), as the
/// sigstore-python 4.5.1 wheel ships it.
pub const PRODUCTION: &str = include_str!("production_trusted_root.json");

/// The trust anchors of a Sigstore instance.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TrustedRoot {
    /// `application/vnd.dev.sigstore.trustedroot+json;version=0.1` or `...v0.2+json`.
    #[serde(default)]
    pub media_type: String,
    /// Rekor instances.
    #[serde(default)]
    pub tlogs: Vec<LogInstance>,
    /// Fulcio instances.
    #[serde(default)]
    pub certificate_authorities: Vec<CertificateAuthority>,
    /// Certificate Transparency logs (SCTs in Fulcio certificates).
    #[serde(default)]
    pub ctlogs: Vec<LogInstance>,
    /// RFC 3161 timestamp authorities.
    #[serde(default)]
    pub timestamp_authorities: Vec<CertificateAuthority>,
}

/// A transparency log (Rekor or CT) and its key.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LogInstance {
    /// Where the log is (informational offline).
    #[serde(default)]
    pub base_url: String,
    /// The tree's hash (`SHA2_256`).
    #[serde(default)]
    pub hash_algorithm: String,
    /// The log's key.
    #[serde(default)]
    pub public_key: TrustedKey,
    /// The SHA-256 of the key's DER, as entries and SCTs name it.
    #[serde(default)]
    pub log_id: LogId,
    /// Rekor v2: the id checkpoints are signed under, when it differs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint_key_id: Option<LogId>,
}

/// A key with the time range it may be used for.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TrustedKey {
    /// The PKIX DER of the key.
    #[serde(default)]
    pub raw_bytes: B64,
    /// `PKIX_ECDSA_P256_SHA_256`, `PKIX_ED25519`, ...
    #[serde(default)]
    pub key_details: String,
    /// When the key was in use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_for: Option<TimeRange>,
}

/// A CA (Fulcio) or timestamp authority.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CertificateAuthority {
    /// Its distinguished name, for messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<serde_json::Value>,
    /// Where it is.
    #[serde(default)]
    pub uri: String,
    /// Its certificates, the issuing one first, the root last.
    #[serde(default)]
    pub cert_chain: CertificateChain,
    /// When it issued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_for: Option<TimeRange>,
}

/// A validity range (RFC 3339 times; an open end when missing).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TimeRange {
    /// Start (required for a log key to be usable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<String>,
    /// End, inclusive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<String>,
}

impl TimeRange {
    /// Whether `t` (Unix seconds) is inside the range, both ends inclusive. A range without a
    /// start, or with a time that does not parse, contains nothing (fail closed).
    pub fn contains(&self, t: i64) -> bool {
        let Some(start) = self.start.as_deref().and_then(parse_rfc3339) else {
            return false;
        };
        if t < start {
            return false;
        }
        match self.end.as_deref() {
            None => true,
            Some(e) => parse_rfc3339(e).is_some_and(|end| t <= end),
        }
    }
}

/// Whether an optional range contains `t` (no range: always; a key without one is current).
pub fn in_range(range: &Option<TimeRange>, t: i64) -> bool {
    range.as_ref().is_none_or(|r| r.contains(t))
}

impl TrustedRoot {
    /// Reads a trusted root; the error says what is wrong with it.
    pub fn from_json(bytes: &[u8]) -> Result<TrustedRoot, String> {
        let mut de = serde_json::Deserializer::from_slice(bytes);
        let root: TrustedRoot = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            format!(
                "not a Sigstore trusted root: at {}: {}",
                e.path(),
                e.inner()
            )
        })?;
        if !root
            .media_type
            .starts_with("application/vnd.dev.sigstore.trustedroot")
        {
            return Err(format!(
                "not a Sigstore trusted root: media type {:?}",
                root.media_type
            ));
        }
        Ok(root)
    }

    /// sigstore.dev's public-good root, carried in the binary.
    pub fn production() -> TrustedRoot {
        TrustedRoot::from_json(PRODUCTION.as_bytes()).unwrap_or_default()
    }
}

/// Unix seconds of an RFC 3339 time (`2021-01-12T11:53:27Z`, fractions and offsets allowed).
pub fn parse_rfc3339(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = s.get(r)?;
        if !t.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        t.parse().ok()
    };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (h, mi, se) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || se > 60 {
        return None;
    }
    let mut rest = &s[19..];
    if let Some(r) = rest.strip_prefix('.') {
        let n = r.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return None;
        }
        rest = &r[n..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ if rest.len() == 6 && (rest.starts_with('+') || rest.starts_with('-')) => {
            let oh: i64 = rest.get(1..3)?.parse().ok()?;
            let om: i64 = rest.get(4..6)?.parse().ok()?;
            let o = oh * 3600 + om * 60;
            if rest.starts_with('-') { -o } else { o }
        }
        _ => return None,
    };
    Some(days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se - offset)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_parse_and_ranges_are_inclusive() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_rfc3339("2021-01-12T11:53:27Z"), Some(1610452407));
        assert_eq!(
            parse_rfc3339("2021-01-12T11:53:27.123+01:00"),
            Some(1610448807)
        );
        assert_eq!(parse_rfc3339("2021-01-12"), None);
        let r = TimeRange {
            start: Some("1970-01-01T00:00:10Z".into()),
            end: Some("1970-01-01T00:00:20Z".into()),
        };
        assert!(r.contains(10) && r.contains(20) && !r.contains(21) && !r.contains(9));
        assert!(!TimeRange::default().contains(0));
        assert!(!TrustedRoot::production().tlogs.is_empty());
    }
}
