//! An SPDX 2.3 JSON document (the predicate of an `spdxjson` attestation) listing every image
//! a bundle (or a catalog) references, each with the digest it is pinned to when it is: as a
//! SHA256 checksum and in its package URL (`pkg:oci/NAME@sha256%3AHEX?repository_url=…`),
//! so a scanner can find each image by digest and a reviewer sees which ones float on a tag.
//!
//! Deterministic: packages in image order, `SPDXID`s from their position and name, the
//! document namespace from a hash of the listed content, and `creationInfo.created` from
//! `SOURCE_DATE_EPOCH` (else 1970-01-01T00:00:00Z, the same zero the image itself is stamped
//! with): SPDX requires a creation time, and a wall-clock one would make every rebuild attest
//! differently.

use crate::reference::Reference;

/// What the document describes: the image attested (its repository and digest) and the
/// images it references.
#[derive(Debug, Clone, Default)]
pub struct SbomInput {
    /// A name for the document and the main package (the package name, else the repository).
    pub name: String,
    /// The version of what is described (the CSV's `spec.version`), when known.
    pub version: Option<String>,
    /// The attested image's repository (`registry/path`), when it is in a registry.
    pub repository: Option<String>,
    /// The attested image's manifest digest.
    pub digest: Option<String>,
    /// Every image referenced, as written (sorted and unique).
    pub images: Vec<String>,
    /// `SOURCE_DATE_EPOCH`, when set.
    pub epoch: Option<u64>,
}

/// `pkg:oci/...` for an image: the last path element as name, the digest as version, the
/// repository and tag as qualifiers (the purl spec's `oci` type).
pub fn purl(repository: &str, digest: Option<&str>, tag: Option<&str>) -> String {
    let name = repository
        .rsplit('/')
        .next()
        .unwrap_or(repository)
        .to_ascii_lowercase();
    let mut out = format!("pkg:oci/{}", encode(&name));
    if let Some(d) = digest {
        out.push('@');
        out.push_str(&encode(d));
    }
    out.push_str("?repository_url=");
    out.push_str(&encode_qualifier(repository));
    if let Some(t) = tag {
        out.push_str("&tag=");
        out.push_str(&encode_qualifier(t));
    }
    out
}

/// Percent-encoding of a purl name or version (`:` and everything outside the unreserved set).
fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Percent-encoding of a qualifier value (`/` and `:` kept, as the purl examples write a
/// repository URL).
fn encode_qualifier(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' | b':' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// An `SPDXID` suffix: only the characters SPDX allows (`[A-Za-z0-9.-]`).
fn spdx_id(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// The SPDX 2.3 document.
pub fn document(input: &SbomInput) -> serde_json::Value {
    let main_id = "SPDXRef-Package-main";
    let mut main = serde_json::json!({
        "SPDXID": main_id,
        "name": input.name,
        "downloadLocation": "NOASSERTION",
        "filesAnalyzed": false,
        "primaryPackagePurpose": "CONTAINER",
    });
    if let Some(v) = &input.version {
        main["versionInfo"] = v.clone().into();
    }
    if let (Some(repo), Some(d)) = (&input.repository, &input.digest) {
        main["externalRefs"] = serde_json::json!([{
            "referenceCategory": "PACKAGE-MANAGER",
            "referenceType": "purl",
            "referenceLocator": purl(repo, Some(d), None),
        }]);
        if let Some(hex) = d.strip_prefix("sha256:") {
            main["checksums"] = serde_json::json!([{"algorithm": "SHA256", "checksumValue": hex}]);
        }
    }
    let mut packages = vec![main];
    let mut relationships = vec![serde_json::json!({
        "spdxElementId": "SPDXRef-DOCUMENT",
        "relationshipType": "DESCRIBES",
        "relatedSpdxElement": main_id,
    })];
    for (i, image) in input.images.iter().enumerate() {
        let id = format!("SPDXRef-Image-{}-{}", i + 1, spdx_id(image));
        let mut p = match Reference::parse(image) {
            Ok(r) => {
                let repository = r.name();
                let mut p = serde_json::json!({
                    "SPDXID": id,
                    "name": repository,
                    "versionInfo": r.digest.clone().or_else(|| r.tag.clone()).unwrap_or_else(|| "latest".into()),
                    "downloadLocation": "NOASSERTION",
                    "filesAnalyzed": false,
                    "primaryPackagePurpose": "CONTAINER",
                    "externalRefs": [{
                        "referenceCategory": "PACKAGE-MANAGER",
                        "referenceType": "purl",
                        "referenceLocator": purl(&repository, r.digest.as_deref(), r.tag.as_deref()),
                    }],
                });
                match r.digest.as_deref().and_then(|d| d.split_once(':')) {
                    Some((algo, hex)) => {
                        let algorithm = match algo {
                            "sha512" => "SHA512",
                            "sha384" => "SHA384",
                            _ => "SHA256",
                        };
                        p["checksums"] =
                            serde_json::json!([{"algorithm": algorithm, "checksumValue": hex}]);
                    }
                    None => {
                        p["comment"] =
                            "not pinned: the image is named by tag, so what it is can change"
                                .into();
                    }
                }
                p
            }
            Err(e) => serde_json::json!({
                "SPDXID": id,
                "name": image,
                "downloadLocation": "NOASSERTION",
                "filesAnalyzed": false,
                "comment": format!("not a valid image reference: {e}"),
            }),
        };
        p["primaryPackagePurpose"] = "CONTAINER".into();
        packages.push(p);
        relationships.push(serde_json::json!({
            "spdxElementId": main_id,
            "relationshipType": "DEPENDS_ON",
            "relatedSpdxElement": id,
        }));
    }
    // The namespace names this document: a hash of what it lists, so the same content gets
    // the same namespace and another content another one.
    let listed = serde_json::json!([
        input.name,
        input.version,
        input.repository,
        input.digest,
        input.images
    ]);
    let hash = crate::image::digest::sha256_digest(listed.to_string().as_bytes());
    let hash = hash.trim_start_matches("sha256:");
    let created = crate::image::config::rfc3339_utc(input.epoch.unwrap_or(0));
    serde_json::json!({
        "spdxVersion": "SPDX-2.3",
        "dataLicense": "CC0-1.0",
        "SPDXID": "SPDXRef-DOCUMENT",
        "name": input.name,
        "documentNamespace": format!("https://spdx.org/spdxdocs/olmpack/{}-{}", spdx_id(&input.name), &hash[..32]),
        "creationInfo": {
            "created": created,
            "creators": [format!("Tool: olmpack-{}", env!("CARGO_PKG_VERSION"))],
        },
        "packages": packages,
        "relationships": relationships,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn purls_follow_the_oci_type() {
        assert_eq!(
            purl("quay.io/org/Op", Some("sha256:ab"), Some("v1")),
            "pkg:oci/op@sha256%3Aab?repository_url=quay.io/org/Op&tag=v1"
        );
        assert_eq!(
            purl("quay.io/org/op", None, None),
            "pkg:oci/op?repository_url=quay.io/org/op"
        );
    }

    #[test]
    fn pinned_images_carry_their_digest_and_the_rest_say_so() {
        let d = format!("sha256:{}", "a".repeat(64));
        let doc = document(&SbomInput {
            name: "kv".into(),
            images: vec![
                format!("quay.io/x/y@{d}"),
                "quay.io/x/z:v1".into(),
                "::bad".into(),
            ],
            ..SbomInput::default()
        });
        let p = doc["packages"].as_array().unwrap();
        assert_eq!(p.len(), 4);
        assert_eq!(p[1]["checksums"][0]["checksumValue"], "a".repeat(64));
        assert!(p[2]["checksums"].is_null());
        assert!(p[2]["comment"].as_str().unwrap().contains("not pinned"));
        assert!(p[3]["comment"].as_str().unwrap().contains("not a valid"));
        assert_eq!(doc["creationInfo"]["created"], "1970-01-01T00:00:00Z");
        assert_eq!(doc["relationships"].as_array().unwrap().len(), 4);
    }
}
