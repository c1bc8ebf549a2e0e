//! Certificate checks as containers/image makes them for policy.json `sigstoreSigned` with
//! `fulcio` or `pki` (`fulcio_cert.go`, `pki_cert.go`): Go's `x509.Certificate.Verify` with
//! a root pool, an intermediate pool, a time and the code-signing usage; Fulcio's OIDC issuer
//! extension read as `fulcioIssuerInCertificate` reads it; the subject email matched exactly;
//! the hostname matched as Go's `VerifyHostname` matches it.
//!
//! The chain is built as Go builds it: from the leaf, each parent is a certificate of the
//! intermediate or root pool whose subject is the child's issuer and whose key verifies the
//! child's signature; every certificate of the chain must be valid at the time (both ends
//! inclusive), every intermediate a CA within its path length, and every certificate that
//! lists extended key usages must allow code signing. Name constraints are not evaluated:
//! a chain through a CA that has them is refused (fail closed).

use super::cert::Cert;
use x509_cert::der::Decode as _;
use x509_cert::ext::pkix::name::GeneralName;

const OID_BASIC_CONSTRAINTS: &str = "2.5.29.19";
const OID_EXT_KEY_USAGE: &str = "2.5.29.37";
const OID_NAME_CONSTRAINTS: &str = "2.5.29.30";
const OID_SAN: &str = "2.5.29.17";
const OID_CODE_SIGNING: &str = "1.3.6.1.5.5.7.3.3";
const OID_ANY_EKU: &str = "2.5.29.37.0";
/// The extensions Go's parser handles; any other marked critical makes Go refuse the leaf.
const HANDLED: [&str; 10] = [
    "2.5.29.15",
    OID_BASIC_CONSTRAINTS,
    OID_SAN,
    OID_NAME_CONSTRAINTS,
    "2.5.29.31",
    "2.5.29.35",
    OID_EXT_KEY_USAGE,
    "2.5.29.14",
    "2.5.29.32",
    "1.3.6.1.5.5.7.1.1",
];
/// How deep a chain may be built (Go stops after 100 signature checks; real chains have 3).
const MAX_DEPTH: usize = 8;

fn ext<'a>(c: &'a Cert, oid: &str) -> Option<&'a x509_cert::ext::Extension> {
    c.cert
        .tbs_certificate
        .extensions
        .as_ref()?
        .iter()
        .find(|e| e.extn_id.to_string() == oid)
}

/// Every `CERTIFICATE` block of a PEM text, parsed (sigstore's
/// `cryptoutils.UnmarshalCertificatesFromPEM`: any other block or an unparsable certificate
/// is an error).
pub fn certificates_from_pem(pem: &[u8]) -> Result<Vec<Cert>, String> {
    let mut out = Vec::new();
    for block in pem_blocks(pem)? {
        if block.0 != "CERTIFICATE" {
            return Err(format!(
                "a PEM block of type {:?}, not CERTIFICATE",
                block.0
            ));
        }
        out.push(Cert::from_der(&block.1)?);
    }
    Ok(out)
}

/// The certificates of a PEM text as Go's `CertPool.AppendCertsFromPEM` takes them: other
/// blocks and unparsable certificates skipped; an error when none is left.
pub fn pool_from_pem(pem: &[u8], what: &str) -> Result<Vec<Cert>, String> {
    let certs: Vec<Cert> = pem_blocks(pem)
        .unwrap_or_default()
        .into_iter()
        .filter(|b| b.0 == "CERTIFICATE")
        .filter_map(|b| Cert::from_der(&b.1).ok())
        .collect();
    if certs.is_empty() {
        return Err(format!(
            "error loading {what} certificates: no PEM certificate in it"
        ));
    }
    Ok(certs)
}

/// The PEM blocks of a text: `(type, DER)`. Text around and between blocks is skipped, as Go's
/// `pem.Decode` skips it.
pub fn pem_blocks(pem: &[u8]) -> Result<Vec<(String, Vec<u8>)>, String> {
    let text = std::str::from_utf8(pem).map_err(|_| "PEM data is not UTF-8 text".to_string())?;
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("-----BEGIN ") {
        let after = &rest[start + 11..];
        let Some(close) = after.find("-----") else {
            return Err("a PEM BEGIN line is not closed".into());
        };
        let kind = after[..close].to_string();
        let body_start = &after[close + 5..];
        let end_line = format!("-----END {kind}-----");
        let Some(end) = body_start.find(&end_line) else {
            return Err(format!("the PEM block {kind} has no END line"));
        };
        let b64: String = body_start[..end]
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        let der = super::bundle::decode_b64(&b64)
            .ok_or_else(|| format!("the PEM block {kind} is not base64"))?;
        out.push((kind, der));
        rest = &body_start[end + end_line.len()..];
    }
    Ok(out)
}

/// Go's `pem.Decode` of exactly one block with nothing after it (containers/image's check of
/// the key or certificate a Rekor entry names): the DER, or why not.
pub fn single_pem(pem: &[u8], what: &str) -> Result<Vec<u8>, String> {
    let text = std::str::from_utf8(pem).map_err(|_| format!("{what} is not in PEM format"))?;
    let blocks = pem_blocks(pem).map_err(|_| format!("{what} is not in PEM format"))?;
    let Some((kind, der)) = blocks.first() else {
        return Err(format!("{what} is not in PEM format"));
    };
    let end_line = format!("-----END {kind}-----");
    let tail = text
        .find(&end_line)
        .map(|i| &text[i + end_line.len()..])
        .unwrap_or_default();
    let tail = tail
        .strip_prefix("\r\n")
        .or_else(|| tail.strip_prefix('\n'))
        .unwrap_or(tail);
    if !tail.is_empty() {
        return Err(format!("{what} has trailing data"));
    }
    Ok(der.clone())
}

fn is_ca(c: &Cert) -> (bool, Option<u8>) {
    ext(c, OID_BASIC_CONSTRAINTS)
        .and_then(|e| {
            x509_cert::ext::pkix::BasicConstraints::from_der(e.extn_value.as_bytes()).ok()
        })
        .map(|b| (b.ca, b.path_len_constraint))
        .unwrap_or((false, None))
}

/// Whether the certificate's extended key usages allow code signing (none listed allows all).
fn allows_code_signing(c: &Cert) -> Result<bool, String> {
    let Some(e) = ext(c, OID_EXT_KEY_USAGE) else {
        return Ok(true);
    };
    let eku = x509_cert::ext::pkix::ExtendedKeyUsage::from_der(e.extn_value.as_bytes())
        .map_err(|e| format!("the extended key usage cannot be read: {e}"))?;
    Ok(eku
        .0
        .iter()
        .any(|o| matches!(o.to_string().as_str(), OID_CODE_SIGNING | OID_ANY_EKU)))
}

fn name_of(c: &Cert) -> String {
    let s = c.cert.tbs_certificate.subject.to_string();
    if s.is_empty() {
        "(no subject)".into()
    } else {
        s
    }
}

/// Checks `leaf` against `roots` through `intermediates` at `t` (Unix seconds) for code
/// signing, as Go's `Verify` does for containers/image; the error says what failed.
pub fn verify(leaf: &Cert, intermediates: &[Cert], roots: &[Cert], t: i64) -> Result<(), String> {
    if let Some(e) = leaf
        .cert
        .tbs_certificate
        .extensions
        .iter()
        .flatten()
        .find(|e| e.critical && !HANDLED.contains(&e.extn_id.to_string().as_str()))
    {
        return Err(format!(
            "the certificate has an unhandled critical extension {}",
            e.extn_id
        ));
    }
    let mut chain = vec![leaf.clone()];
    let mut last = String::from("no certificate of the trusted roots or intermediates issued it");
    if build(&mut chain, intermediates, roots, t, &mut last) {
        Ok(())
    } else {
        Err(last)
    }
}

/// Checks a certificate of the chain being built at `t`: its validity, and for a parent its
/// authority and path length.
fn valid(c: &Cert, t: i64, below: usize, intermediate: bool) -> Result<(), String> {
    if !c.valid_at(t) {
        return Err(format!(
            "certificate {} was valid from {} to {}, not at {}",
            name_of(c),
            super::rfc3339(c.not_before),
            super::rfc3339(c.not_after),
            super::rfc3339(t)
        ));
    }
    if below > 0 {
        if ext(c, OID_NAME_CONSTRAINTS).is_some() {
            return Err(format!(
                "certificate {} has name constraints, which olmpack does not evaluate",
                name_of(c)
            ));
        }
        let (ca, path_len) = is_ca(c);
        if intermediate && !ca {
            return Err(format!(
                "certificate {} is not a certificate authority",
                name_of(c)
            ));
        }
        if let Some(n) = path_len
            && below - 1 > n as usize
        {
            return Err(format!(
                "certificate {} allows {n} intermediates below it, the chain has {}",
                name_of(c),
                below - 1
            ));
        }
    }
    Ok(())
}

fn build(
    chain: &mut Vec<Cert>,
    inters: &[Cert],
    roots: &[Cert],
    t: i64,
    last: &mut String,
) -> bool {
    let Some(cur) = chain.last().cloned() else {
        return false;
    };
    if let Err(e) = valid(&cur, t, chain.len() - 1, chain.len() > 1) {
        *last = e;
        return false;
    }
    for r in roots {
        if cur.signed_by(r) {
            match valid(r, t, chain.len(), false) {
                Ok(()) => {
                    chain.push(r.clone());
                    let usage = chain
                        .iter()
                        .try_fold(true, |acc, c| allows_code_signing(c).map(|ok| acc && ok));
                    match usage {
                        Ok(true) => return true,
                        Ok(false) => {
                            *last = "the certificate chain does not allow code signing (extended key usage)".into();
                        }
                        Err(e) => *last = e,
                    }
                    chain.pop();
                }
                Err(e) => *last = e,
            }
        }
    }
    if chain.len() >= MAX_DEPTH {
        return false;
    }
    for i in inters {
        if chain.iter().any(|c| c.der == i.der) || !cur.signed_by(i) {
            continue;
        }
        chain.push(i.clone());
        if build(chain, inters, roots, t, last) {
            return true;
        }
        chain.pop();
    }
    false
}

/// The OIDC issuer Fulcio recorded (`fulcioIssuerInCertificate`): the v1 extension's raw
/// value, the v2 extension's DER UTF8String, and both equal when both are there.
pub fn fulcio_issuer(c: &Cert) -> Result<String, String> {
    let v1 = ext(c, super::cert::OID_ISSUER_V1).map(|e| e.extn_value.as_bytes());
    let v2 = ext(c, super::cert::OID_ISSUER_V2).map(|e| e.extn_value.as_bytes());
    let v1 = v1
        .map(|b| {
            String::from_utf8(b.to_vec())
                .map_err(|_| "the OIDC issuer v1 extension is not UTF-8".to_string())
        })
        .transpose()?;
    let v2 = v2
        .map(|b| {
            x509_cert::der::asn1::Utf8StringRef::from_der(b)
                .map(|s| s.as_str().to_string())
                .map_err(|e| format!("invalid ASN.1 in OIDC issuer v2 extension: {e}"))
        })
        .transpose()?;
    match (v1, v2) {
        (Some(a), Some(b)) if a != b => Err(format!(
            "inconsistent OIDC issuer extension values: v1 {a:?}, v2 {b:?}"
        )),
        (Some(a), _) => Ok(a),
        (None, Some(b)) => Ok(b),
        (None, None) => Err("Fulcio certificate is missing the issuer extension".into()),
    }
}

fn san(c: &Cert) -> Vec<GeneralName> {
    ext(c, OID_SAN)
        .and_then(|e| x509_cert::ext::pkix::SubjectAltName::from_der(e.extn_value.as_bytes()).ok())
        .map(|s| s.0)
        .unwrap_or_default()
}

/// The email addresses of the subject alternative names (Go's `EmailAddresses`).
pub fn emails(c: &Cert) -> Vec<String> {
    san(c)
        .into_iter()
        .filter_map(|n| match n {
            GeneralName::Rfc822Name(s) => Some(s.to_string()),
            _ => None,
        })
        .collect()
}

/// Go's `Certificate.VerifyHostname`: an IP address matches an IP SAN; a name matches a DNS
/// SAN case-insensitively, a leading `*` label matching one label; the Common Name is never
/// read.
pub fn verify_hostname(c: &Cert, host: &str) -> Result<(), String> {
    let names = san(c);
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    if let Ok(ip) = bare.parse::<std::net::IpAddr>() {
        let want = match ip {
            std::net::IpAddr::V4(v) => v.octets().to_vec(),
            std::net::IpAddr::V6(v) => v.octets().to_vec(),
        };
        let v4_in_v6 =
            |b: &[u8]| b.len() == 16 && b[..12] == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff];
        for n in &names {
            if let GeneralName::IpAddress(o) = n {
                let got = o.as_bytes();
                let same = got == want.as_slice()
                    || (v4_in_v6(got) && got[12..] == want[..])
                    || (v4_in_v6(&want) && want[12..] == *got);
                if same {
                    return Ok(());
                }
            }
        }
        return Err(format!(
            "x509: certificate is not valid for IP address {bare}"
        ));
    }
    let candidate = host.to_ascii_lowercase();
    let valid_candidate = valid_hostname(&candidate, false);
    let dns: Vec<String> = names
        .iter()
        .filter_map(|n| match n {
            GeneralName::DnsName(s) => Some(s.to_string()),
            _ => None,
        })
        .collect();
    for m in &dns {
        let ok = if valid_candidate && valid_hostname(m, true) {
            match_hostnames(m, &candidate)
        } else {
            !m.is_empty()
                && m != "."
                && !candidate.is_empty()
                && candidate != "."
                && m.to_ascii_lowercase() == candidate
        };
        if ok {
            return Ok(());
        }
    }
    Err(if dns.is_empty() {
        format!("x509: certificate is not valid for any names, but wanted to match {host}")
    } else {
        format!(
            "x509: certificate is valid for {}, not {host}",
            dns.join(", ")
        )
    })
}

/// Go's `validHostname` (crypto/x509/verify.go).
fn valid_hostname(host: &str, pattern: bool) -> bool {
    let host = if pattern {
        host
    } else {
        host.strip_suffix('.').unwrap_or(host)
    };
    if host.is_empty() {
        return false;
    }
    if host == "*" {
        return false;
    }
    for (i, part) in host.split('.').enumerate() {
        if part.is_empty() {
            return false;
        }
        if pattern && i == 0 && part == "*" {
            continue;
        }
        for (j, c) in part.chars().enumerate() {
            let ok = c.is_ascii_alphanumeric() || (c == '-' && j != 0) || c == '_';
            if !ok {
                return false;
            }
        }
    }
    true
}

/// Go's `matchHostnames`.
fn match_hostnames(pattern: &str, host: &str) -> bool {
    let pattern = pattern.to_ascii_lowercase();
    let host = host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase();
    if pattern.is_empty() || host.is_empty() {
        return false;
    }
    let p: Vec<&str> = pattern.split('.').collect();
    let h: Vec<&str> = host.split('.').collect();
    if p.len() != h.len() {
        return false;
    }
    p.iter()
        .zip(&h)
        .enumerate()
        .all(|(i, (a, b))| (i == 0 && *a == "*") || a == b)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Go's `TestValidHostname`/`matchHostnames` cases that decide a `pki` subjectHostname.
    #[test]
    fn hostnames_match_as_go_matches_them() {
        for (p, h, want) in [
            ("a.example.com", "a.example.com", true),
            ("A.Example.com", "a.example.COM", true),
            ("*.example.com", "a.example.com", true),
            ("*.example.com", "a.b.example.com", false),
            ("*.example.com", "example.com", false),
            ("a.example.com", "a.example.com.", true),
            ("a.*.com", "a.b.com", false),
            ("example.com", "other.com", false),
        ] {
            let got = valid_hostname(p, true) && match_hostnames(p, &h.to_ascii_lowercase())
                || (!valid_hostname(p, true) && p.eq_ignore_ascii_case(h));
            assert_eq!(got, want, "{p} vs {h}");
        }
        assert!(!valid_hostname("a.*.com", true));
        assert!(!valid_hostname("-a.com", false));
    }
}
