//! OpenShift's signature policies for what a mirror run copied: `ClusterImagePolicy` (or the
//! namespaced `ImagePolicy`), `config.openshift.io/v1`, as openshift/api
//! `config/v1/types_image_policy.go` and `types_cluster_image_policy.go` define them, so a
//! cluster that pulls the mirrored images through the run's IDMS also checks their
//! signatures (CRI-O evaluates it through containers/image's `sigstoreSigned`).
//!
//! What goes in, from the trust the user names: a cosign public key (`policyType:
//! PublicKey`, with a Rekor key when given), or a Fulcio CA with a Rekor key and the OIDC
//! issuer and signer email (`FulcioCAWithRekor`). Scopes:
//! - each mirrored image's source repository, with the default identity rule
//!   (`MatchRepoDigestOrExact`): pods name the source, the IDMS sends the pull to the mirror,
//!   and the signature, copied unchanged, names the source;
//! - the catalog image's target repository (`catalogsource.yaml` names the mirror itself),
//!   in a second object whose `RemapIdentity` maps it back to the source repository its
//!   signature names.
//!
//! The API's limits are kept: at most 256 scopes per object (more are split into numbered
//! objects), key data at most 8192 base64 characters, object names of at most 253
//! characters.

use super::plan::Kind;
use super::results::{ImageResult, Report, object_name, strip_tag};
use base64::Engine as _;
use serde_json::json;
use std::collections::BTreeSet;

/// The trust a policy names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RootOfTrust {
    /// A cosign public key (PEM bytes), and optionally the Rekor public key (PEM).
    PublicKey {
        /// The key's PEM.
        key: Vec<u8>,
        /// The Rekor key's PEM, when entries must be in a log.
        rekor: Option<Vec<u8>>,
    },
    /// Keyless: the Fulcio CA (PEM), the Rekor key (PEM), and who signed.
    FulcioCaWithRekor {
        /// Fulcio's CA certificate(s), PEM.
        fulcio_ca: Vec<u8>,
        /// The Rekor public key, PEM.
        rekor: Vec<u8>,
        /// The OIDC issuer URL the certificate must name.
        oidc_issuer: String,
        /// The signer's email the certificate must name.
        signed_email: String,
    },
}

/// What to write: the trust, and a namespace for `ImagePolicy` (none: `ClusterImagePolicy`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyRequest {
    /// The root of trust.
    pub trust: RootOfTrust,
    /// Write a namespaced `ImagePolicy` in this namespace instead.
    pub namespace: Option<String>,
}

impl PolicyRequest {
    /// The file the policy is written to, beside `idms.yaml`.
    pub fn file_name(&self) -> &'static str {
        if self.namespace.is_some() {
            IMAGE_POLICY_FILE
        } else {
            CLUSTER_IMAGE_POLICY_FILE
        }
    }
}

/// The results file holding the `ClusterImagePolicy` objects.
pub const CLUSTER_IMAGE_POLICY_FILE: &str = "clusterimagepolicy.yaml";
/// The results file holding the `ImagePolicy` objects.
pub const IMAGE_POLICY_FILE: &str = "imagepolicy.yaml";

/// The API's bound on scopes per object (`+kubebuilder:validation:MaxItems=256`).
pub const MAX_SCOPES: usize = 256;
/// The API's bound on each key data field (`+kubebuilder:validation:MaxLength=8192`).
pub const MAX_KEY_DATA: usize = 8192;

/// Why the policy could not be made.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// A key or certificate is longer than the API takes.
    #[error(
        "{what} is {len} characters in base64, more than the {MAX_KEY_DATA} the OpenShift API takes"
    )]
    TooLong {
        /// Which field.
        what: &'static str,
        /// Its base64 length.
        len: usize,
    },
    /// A field the API checks has a value it refuses.
    #[error("{0}")]
    Invalid(String),
}

fn key_data(what: &'static str, pem: &[u8]) -> Result<String, PolicyError> {
    let data = base64::engine::general_purpose::STANDARD.encode(pem);
    if data.len() > MAX_KEY_DATA {
        return Err(PolicyError::TooLong {
            what,
            len: data.len(),
        });
    }
    Ok(data)
}

fn root_of_trust(trust: &RootOfTrust) -> Result<serde_json::Value, PolicyError> {
    Ok(match trust {
        RootOfTrust::PublicKey { key, rekor } => {
            let mut public_key = json!({"keyData": key_data("the public key", key)?});
            if let Some(r) = rekor {
                public_key["rekorKeyData"] = key_data("the Rekor key", r)?.into();
            }
            json!({"policyType": "PublicKey", "publicKey": public_key})
        }
        RootOfTrust::FulcioCaWithRekor {
            fulcio_ca,
            rekor,
            oidc_issuer,
            signed_email,
        } => {
            if !(oidc_issuer.starts_with("https://") || oidc_issuer.starts_with("http://")) {
                return Err(PolicyError::Invalid(format!(
                    "the OIDC issuer {oidc_issuer:?} is not a URL (the API requires one)"
                )));
            }
            let (user, domain) = signed_email.split_once('@').unwrap_or(("", ""));
            if user.is_empty() || domain.is_empty() || signed_email.contains(char::is_whitespace) {
                return Err(PolicyError::Invalid(format!(
                    "the signer email {signed_email:?} is not an email address"
                )));
            }
            json!({
                "policyType": "FulcioCAWithRekor",
                "fulcioCAWithRekor": {
                    "fulcioCAData": key_data("the Fulcio CA", fulcio_ca)?,
                    "rekorKeyData": key_data("the Rekor key", rekor)?,
                    "fulcioSubject": {"oidcIssuer": oidc_issuer, "signedEmail": signed_email},
                },
            })
        }
    })
}

/// A scope as the API's CEL rule takes it: a host with a dot (or `localhost`) and a path.
fn valid_scope(scope: &str) -> bool {
    let host = scope.split('/').next().unwrap_or_default();
    let hostname = host.split(':').next().unwrap_or_default();
    (hostname.contains('.') || hostname == "localhost") && scope.len() <= 512
}

/// The source repository of a mirrored image (`registry/repo`, no tag or digest).
fn source_repository(i: &ImageResult) -> String {
    match crate::reference::Reference::parse(&i.source) {
        Ok(r) => r.name(),
        Err(_) => strip_tag(i.source.split('@').next().unwrap_or(&i.source)).to_string(),
    }
}

/// The policy objects for the images `report` says the target holds.
pub fn objects(
    report: &Report,
    request: &PolicyRequest,
) -> Result<Vec<serde_json::Value>, PolicyError> {
    let done: Vec<&ImageResult> = report.images.iter().filter(|i| i.done()).collect();
    let catalog = done.iter().find(|i| i.kind == Kind::Catalog);
    let base = catalog.map_or_else(|| "catalog".to_string(), |c| object_name(&c.target));
    let mut scopes: BTreeSet<String> = BTreeSet::new();
    let mut skipped: Vec<String> = Vec::new();
    for i in done.iter().filter(|i| i.kind != Kind::Catalog) {
        let scope = source_repository(i);
        if valid_scope(&scope) {
            scopes.insert(scope);
        } else {
            skipped.push(scope);
        }
    }
    if !skipped.is_empty() {
        return Err(PolicyError::Invalid(format!(
            "these source repositories are not fully qualified (a host with a dot, or localhost), which the OpenShift API refuses as scopes: {}",
            skipped.join(", ")
        )));
    }
    let policy = json!({"rootOfTrust": root_of_trust(&request.trust)?});
    let (kind, metadata_ns) = match &request.namespace {
        Some(ns) => ("ImagePolicy", Some(ns.clone())),
        None => ("ClusterImagePolicy", None),
    };
    let object = |name: String, scopes: Vec<String>, policy: serde_json::Value| {
        let mut metadata = json!({"name": name});
        if let Some(ns) = &metadata_ns {
            metadata["namespace"] = ns.clone().into();
        }
        json!({
            "apiVersion": "config.openshift.io/v1",
            "kind": kind,
            "metadata": metadata,
            "spec": {"scopes": scopes, "policy": policy},
        })
    };
    let mut out = Vec::new();
    let scopes: Vec<String> = scopes.into_iter().collect();
    let chunks: Vec<&[String]> = scopes.chunks(MAX_SCOPES).collect();
    for (n, chunk) in chunks.iter().enumerate() {
        let name = if chunks.len() == 1 {
            format!("{base}-signatures")
        } else {
            format!("{base}-signatures-{}", n + 1)
        };
        out.push(object(name, chunk.to_vec(), policy.clone()));
    }
    if let Some(c) = catalog {
        let target = strip_tag(&c.target).to_string();
        let source = source_repository(c);
        // Only a catalog read from a registry has a signature naming its source; one built
        // here from a folder or a local image (`catalog`, `oci:…`) has none to remap to.
        let from_registry = crate::reference::Reference::parse(&c.source)
            .is_ok_and(|r| c.source.starts_with(&format!("{}/", r.registry)));
        if from_registry && valid_scope(&target) && valid_scope(&source) {
            let mut p = policy.clone();
            p["signedIdentity"] = if target == source {
                json!({"matchPolicy": "MatchRepoDigestOrExact"})
            } else {
                json!({
                    "matchPolicy": "RemapIdentity",
                    "remapIdentity": {"prefix": target, "signedPrefix": source},
                })
            };
            out.push(object(
                format!("{base}-catalog-signatures"),
                vec![target],
                p,
            ));
        }
    }
    Ok(out)
}

/// Checks the trust alone (lengths, issuer URL, email), before a run copies anything.
pub fn check(request: &PolicyRequest) -> Result<(), PolicyError> {
    root_of_trust(&request.trust).map(|_| ())
}

/// Why the policy file could not be made or written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The objects cannot be made.
    #[error(transparent)]
    Policy(#[from] PolicyError),
    /// The file cannot be written.
    #[error(transparent)]
    Write(#[from] crate::fsio::FsError),
}

/// Writes the policy file for `report` into `dir` atomically (its path returned), or, when
/// none is asked for, removes one an earlier run left there, so the folder never mixes two
/// runs.
pub fn write(
    dir: &std::path::Path,
    report: &Report,
    request: Option<&PolicyRequest>,
) -> Result<Option<std::path::PathBuf>, WriteError> {
    let wanted = request.map(PolicyRequest::file_name);
    for name in [CLUSTER_IMAGE_POLICY_FILE, IMAGE_POLICY_FILE] {
        if Some(name) != wanted {
            let _ = std::fs::remove_file(dir.join(name));
        }
    }
    let Some(request) = request else {
        return Ok(None);
    };
    let bytes = yaml(&objects(report, request)?);
    let path = dir.join(request.file_name());
    crate::fsio::write(&path, &bytes, crate::fsio::Options::edit(0o644))?;
    Ok(Some(path))
}

/// The file's bytes: every object as a YAML document.
pub fn yaml(objects: &[serde_json::Value]) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, o) in objects.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(b"---\n");
        }
        crate::gocompat::goyaml::emit::json_to_yaml(&mut out, o);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mirror::results::Status;

    fn image(kind: Kind, source: &str, target: &str) -> ImageResult {
        // As the results' test record, without a source digest, size or bytes copied.
        let copied =
            crate::mirror::results::tests::result(kind, source, target, false, Status::Copied);
        ImageResult {
            source_digest: None,
            size: None,
            blobs_copied: 0,
            bytes_copied: 0,
            ..copied
        }
    }

    fn key() -> PolicyRequest {
        PolicyRequest {
            trust: RootOfTrust::PublicKey {
                key: b"-----BEGIN PUBLIC KEY-----\nX\n-----END PUBLIC KEY-----\n".to_vec(),
                rekor: None,
            },
            namespace: None,
        }
    }

    #[test]
    fn scopes_are_source_repositories_and_the_catalog_is_remapped() {
        let d = format!("@sha256:{}", "b".repeat(64));
        let report = Report {
            images: vec![
                image(
                    Kind::Catalog,
                    "quay.io/cat/index:v1",
                    "mirror.example.com/ns/cat/index:v1",
                ),
                image(
                    Kind::Bundle,
                    &format!("quay.io/op/bundle{d}"),
                    "mirror.example.com/ns/op/bundle:x",
                ),
                image(
                    Kind::Related,
                    &format!("registry.example.com/op/controller{d}"),
                    "mirror.example.com/ns/op/controller:y",
                ),
                image(
                    Kind::Related,
                    &format!("quay.io/op/bundle{d}"),
                    "mirror.example.com/ns/op/bundle:z",
                ),
            ],
            ..Report::default()
        };
        let o = objects(&report, &key()).expect("objects");
        assert_eq!(o.len(), 2);
        assert_eq!(o[0]["kind"], "ClusterImagePolicy");
        assert_eq!(o[0]["metadata"]["name"], "index-v1-signatures");
        assert_eq!(
            o[0]["spec"]["scopes"],
            json!(["quay.io/op/bundle", "registry.example.com/op/controller"])
        );
        assert_eq!(
            o[0]["spec"]["policy"]["rootOfTrust"]["policyType"],
            "PublicKey"
        );
        assert_eq!(
            o[1]["spec"]["policy"]["signedIdentity"]["remapIdentity"],
            json!({"prefix": "mirror.example.com/ns/cat/index", "signedPrefix": "quay.io/cat/index"})
        );
    }

    #[test]
    fn limits_of_the_api_are_kept() {
        let d = format!("@sha256:{}", "b".repeat(64));
        let images: Vec<ImageResult> = (0..300)
            .map(|n| {
                image(
                    Kind::Related,
                    &format!("quay.io/op/i{n}{d}"),
                    &format!("m.example.com/i{n}:t"),
                )
            })
            .collect();
        let report = Report {
            images,
            ..Report::default()
        };
        let o = objects(&report, &key()).expect("objects");
        assert_eq!(o.len(), 2);
        assert_eq!(o[0]["spec"]["scopes"].as_array().map(Vec::len), Some(256));
        assert_eq!(o[1]["metadata"]["name"], "catalog-signatures-2");
        let big = PolicyRequest {
            trust: RootOfTrust::PublicKey {
                key: vec![b'x'; 7000],
                rekor: None,
            },
            namespace: None,
        };
        assert!(matches!(
            objects(&report, &big),
            Err(PolicyError::TooLong { .. })
        ));
        let unqualified = Report {
            images: vec![image(
                Kind::Related,
                &format!("busybox{d}"),
                "m.example.com/b:t",
            )],
            ..Report::default()
        };
        // `busybox` parses to docker.io/library/busybox, which is qualified.
        assert!(objects(&unqualified, &key()).is_ok());
        // A catalog built from a folder has no source signature: no remapped object.
        let built = Report {
            images: vec![image(
                Kind::Catalog,
                "catalog",
                "m.example.com/ns/catalog:latest",
            )],
            ..Report::default()
        };
        assert!(objects(&built, &key()).expect("objects").is_empty());
    }
}
