//! policy.json read as containers/image reads it (`policy_config.go`,
//! `policy_config_sigstore.go`, `ParanoidUnmarshalJSONObject`): every object with each key at
//! most once and no key it does not know, every requirement and identity rule checked when the
//! file is loaded, every scope checked against its transport. One fault anywhere refuses the
//! whole file, with where it is and why; nothing is skipped in favour of a laxer default.
//!
//! Parsing is serde's: `deny_unknown_fields` on each object, derive's own refusal of repeated
//! fields, [`UniqueMap`] for the objects keyed by transport and scope (where serde_json would let
//! the last one win), and `serde_path_to_error` to say where in the file a fault is.
//! Requirements olmpack cannot check are never skipped: X.509 key types and `signedBaseLayer`
//! load (containers/image loads them too) and refuse every image they apply to, by name, as
//! containers/image does when it evaluates them. `sigstoreSigned` with Fulcio, PKI or Rekor
//! keys loads as a [`SigstoreTrust`] (evaluated by `policy::sigstore_trust`).

use base64::Engine as _;
use serde::Deserialize;
use serde::de::{Deserializer, Error as _, MapAccess, Visitor};
use std::marker::PhantomData;

/// A JSON object read with each key at most once, in file order.
#[derive(Debug, Clone)]
pub struct UniqueMap<V>(pub Vec<(String, V)>);

impl<V> Default for UniqueMap<V> {
    fn default() -> Self {
        UniqueMap(Vec::new())
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for UniqueMap<V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit<V>(PhantomData<V>);
        impl<'de, V: Deserialize<'de>> Visitor<'de> for Visit<V> {
            type Value = UniqueMap<V>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
                let mut out: Vec<(String, V)> = Vec::new();
                while let Some(k) = m.next_key::<String>()? {
                    if out.iter().any(|(seen, _)| *seen == k) {
                        return Err(A::Error::custom(format!("duplicate key {k:?}")));
                    }
                    let v = m.next_value()?;
                    out.push((k, v));
                }
                Ok(UniqueMap(out))
            }
        }
        d.deserialize_map(Visit(PhantomData))
    }
}

/// A member that, when present, must hold a value (`null` is refused, as containers/image
/// refuses an explicit `null` for `signedIdentity`, `fulcio` or `pki`).
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// An object with no member besides `type`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NoFields {}

/// The file: `default` and the optional `transports`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyFile {
    /// Requirements for images no scope names.
    pub default: Requirements,
    /// transport name → scope → requirements.
    #[serde(default)]
    pub transports: UniqueMap<UniqueMap<Requirements>>,
}

/// A non-empty list of requirements, each checked.
#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "Vec<Requirement>")]
pub struct Requirements(pub Vec<Requirement>);

impl TryFrom<Vec<Requirement>> for Requirements {
    type Error = String;
    fn try_from(v: Vec<Requirement>) -> Result<Self, String> {
        if v.is_empty() {
            return Err("a list of requirements must not be empty (use [{\"type\": \"reject\"}] to refuse everything)".into());
        }
        Ok(Requirements(v))
    }
}

/// Where the trusted keys of a requirement are: files (relative ones beside the policy) or
/// inline data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Keys {
    /// `keyPath` or `keyPaths`.
    Paths(Vec<String>),
    /// `keyData` or `keyDatas`, decoded.
    Data(Vec<Vec<u8>>),
}

/// A `signedIdentity` rule, not yet bound to an image.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "RawIdentity")]
pub enum IdentitySpec {
    /// `matchExact`.
    MatchExact,
    /// `matchRepoDigestOrExact` (the default).
    MatchRepoDigestOrExact,
    /// `matchRepository`.
    MatchRepository,
    /// `exactReference` with its `dockerReference`.
    ExactReference(String),
    /// `exactRepository` with its `dockerRepository`.
    ExactRepository(String),
    /// `remapIdentity` with its `prefix` and `signedPrefix`.
    RemapIdentity(String, String),
}

impl IdentitySpec {
    /// The rule's name in the file.
    pub fn name(&self) -> &'static str {
        match self {
            IdentitySpec::MatchExact => "matchExact",
            IdentitySpec::MatchRepoDigestOrExact => "matchRepoDigestOrExact",
            IdentitySpec::MatchRepository => "matchRepository",
            IdentitySpec::ExactReference(_) => "exactReference",
            IdentitySpec::ExactRepository(_) => "exactRepository",
            IdentitySpec::RemapIdentity(..) => "remapIdentity",
        }
    }
}

#[allow(dead_code)]
#[derive(Debug, Deserialize)]
#[serde(tag = "type")]
enum RawIdentity {
    #[serde(rename = "matchExact")]
    MatchExact(NoFields),
    #[serde(rename = "matchRepoDigestOrExact")]
    MatchRepoDigestOrExact(NoFields),
    #[serde(rename = "matchRepository")]
    MatchRepository(NoFields),
    #[serde(rename = "exactReference")]
    ExactReference(RawExactReference),
    #[serde(rename = "exactRepository")]
    ExactRepository(RawExactRepository),
    #[serde(rename = "remapIdentity")]
    RemapIdentity(RawRemap),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawExactReference {
    docker_reference: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawExactRepository {
    docker_repository: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawRemap {
    prefix: String,
    signed_prefix: String,
}

impl TryFrom<RawIdentity> for IdentitySpec {
    type Error = String;
    fn try_from(r: RawIdentity) -> Result<Self, String> {
        use crate::reference::Reference;
        use crate::signature::identity::valid_remap_prefix;
        Ok(match r {
            RawIdentity::MatchExact(_) => IdentitySpec::MatchExact,
            RawIdentity::MatchRepoDigestOrExact(_) => IdentitySpec::MatchRepoDigestOrExact,
            RawIdentity::MatchRepository(_) => IdentitySpec::MatchRepository,
            RawIdentity::ExactReference(e) => {
                let r = Reference::parse(&e.docker_reference)
                    .map_err(|err| format!("exactReference: invalid dockerReference: {err}"))?;
                if r.tag.is_none() && r.digest.is_none() {
                    return Err(format!(
                        "exactReference: dockerReference {:?} names neither a tag nor a digest",
                        e.docker_reference
                    ));
                }
                IdentitySpec::ExactReference(e.docker_reference)
            }
            RawIdentity::ExactRepository(e) => {
                Reference::parse(&e.docker_repository)
                    .map_err(|err| format!("exactRepository: invalid dockerRepository: {err}"))?;
                IdentitySpec::ExactRepository(e.docker_repository)
            }
            RawIdentity::RemapIdentity(m) => {
                for (what, p) in [("prefix", &m.prefix), ("signedPrefix", &m.signed_prefix)] {
                    if !valid_remap_prefix(p) {
                        return Err(format!(
                            "remapIdentity: {what} {p:?} is not a host or a host/namespace"
                        ));
                    }
                }
                IdentitySpec::RemapIdentity(m.prefix, m.signed_prefix)
            }
        })
    }
}

/// One requirement, checked.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "RawRequirement")]
pub enum Requirement {
    /// `insecureAcceptAnything`.
    Accept,
    /// `reject`.
    Reject,
    /// `signedBy`: simple signing with OpenPGP keys.
    SignedBy {
        /// `keyType` (only `GPGKeys` is enforced; the others refuse the image).
        key_type: String,
        /// The trusted keys.
        keys: Keys,
        /// `signedIdentity`.
        identity: IdentitySpec,
    },
    /// `signedBaseLayer`: valid, never satisfied (containers/image does not implement it).
    SignedBaseLayer,
    /// `sigstoreSigned` with public keys alone.
    Sigstore {
        /// The public keys.
        keys: Keys,
        /// `signedIdentity`.
        identity: IdentitySpec,
    },
    /// `sigstoreSigned` with Fulcio, PKI or Rekor public keys: a certificate or a log vouches
    /// for the signer.
    SigstoreTrust(Box<SigstoreTrust>),
}

/// A `sigstoreSigned` requirement whose signer is vouched for by more than a key: Fulcio (a
/// certificate from a CA, logged in Rekor), PKI (a certificate chaining to given roots), or
/// keys whose signatures must also be in Rekor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SigstoreTrust {
    /// Who may sign.
    pub signer: Signer,
    /// `rekorPublicKey*`: the Rekor keys whose signed entry timestamp must cover the signature.
    pub rekor_keys: Option<Keys>,
    /// `signedIdentity`.
    pub identity: IdentitySpec,
}

/// Who may sign under a [`SigstoreTrust`] requirement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Signer {
    /// `keyPath`, `keyPaths`, `keyData` or `keyDatas` (with Rekor).
    Keys(Keys),
    /// `fulcio`: a certificate issued by `ca` for `subject_email`, with `oidc_issuer`.
    Fulcio {
        /// `caPath` or `caData` (PEM certificates).
        ca: Keys,
        /// `oidcIssuer`.
        oidc_issuer: String,
        /// `subjectEmail`.
        subject_email: String,
    },
    /// `pki`: a certificate chaining to `roots`, naming the subject email and/or hostname.
    Pki {
        /// `caRootsPath` or `caRootsData` (PEM certificates).
        roots: Keys,
        /// `caIntermediatesPath` or `caIntermediatesData`.
        intermediates: Option<Keys>,
        /// `subjectEmail` (empty counts as not given, as in containers/image).
        subject_email: Option<String>,
        /// `subjectHostname`.
        subject_hostname: Option<String>,
    },
}

// The `NoFields` members are read only to refuse unknown keys.
#[allow(dead_code)]
#[derive(Debug, Deserialize)]
#[serde(tag = "type")]
enum RawRequirement {
    #[serde(rename = "insecureAcceptAnything")]
    Accept(NoFields),
    #[serde(rename = "reject")]
    Reject(NoFields),
    #[serde(rename = "signedBy")]
    SignedBy(RawSignedBy),
    #[serde(rename = "signedBaseLayer")]
    SignedBaseLayer(RawBaseLayer),
    #[serde(rename = "sigstoreSigned")]
    Sigstore(Box<RawSigstore>),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawSignedBy {
    key_type: String,
    #[serde(default, deserialize_with = "present")]
    key_path: Option<String>,
    #[serde(default, deserialize_with = "present")]
    key_paths: Option<Vec<String>>,
    #[serde(default, deserialize_with = "present")]
    key_data: Option<String>,
    #[serde(default, deserialize_with = "present")]
    signed_identity: Option<IdentitySpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawBaseLayer {
    #[allow(dead_code)]
    base_layer_identity: IdentitySpec,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawSigstore {
    #[serde(default, deserialize_with = "present")]
    key_path: Option<String>,
    #[serde(default, deserialize_with = "present")]
    key_paths: Option<Vec<String>>,
    #[serde(default, deserialize_with = "present")]
    key_data: Option<String>,
    #[serde(default, deserialize_with = "present")]
    key_datas: Option<Vec<String>>,
    #[serde(default, deserialize_with = "present")]
    fulcio: Option<RawFulcio>,
    #[serde(default, deserialize_with = "present")]
    pki: Option<RawPki>,
    #[serde(default, deserialize_with = "present")]
    rekor_public_key_path: Option<String>,
    #[serde(default, deserialize_with = "present")]
    rekor_public_key_paths: Option<Vec<String>>,
    #[serde(default, deserialize_with = "present")]
    rekor_public_key_data: Option<String>,
    #[serde(default, deserialize_with = "present")]
    rekor_public_key_datas: Option<Vec<String>>,
    #[serde(default, deserialize_with = "present")]
    signed_identity: Option<IdentitySpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawFulcio {
    #[serde(default, deserialize_with = "present")]
    ca_path: Option<String>,
    #[serde(default, deserialize_with = "present")]
    ca_data: Option<String>,
    #[serde(default, deserialize_with = "present")]
    oidc_issuer: Option<String>,
    #[serde(default, deserialize_with = "present")]
    subject_email: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawPki {
    #[serde(default, deserialize_with = "present")]
    ca_roots_path: Option<String>,
    #[serde(default, deserialize_with = "present")]
    ca_roots_data: Option<String>,
    #[serde(default, deserialize_with = "present")]
    ca_intermediates_path: Option<String>,
    #[serde(default, deserialize_with = "present")]
    ca_intermediates_data: Option<String>,
    #[serde(default, deserialize_with = "present")]
    subject_email: Option<String>,
    #[serde(default, deserialize_with = "present")]
    subject_hostname: Option<String>,
}

fn b64(what: &str, s: &str) -> Result<Vec<u8>, String> {
    base64::engine::general_purpose::STANDARD
        .decode(s)
        .map_err(|e| format!("{what} is not base64: {e}"))
}

fn non_empty(what: &str, v: &[String]) -> Result<(), String> {
    if v.is_empty() {
        return Err(format!("{what} contains no entries"));
    }
    Ok(())
}

/// The requirement's `keyType` values containers/image knows (only `GPGKeys` is enforced).
const KEY_TYPES: [&str; 4] = [
    "GPGKeys",
    "signedByGPGKeys",
    "X509Certificates",
    "signedByX509CAs",
];

impl TryFrom<RawRequirement> for Requirement {
    type Error = String;
    fn try_from(r: RawRequirement) -> Result<Self, String> {
        match r {
            RawRequirement::Accept(_) => Ok(Requirement::Accept),
            RawRequirement::Reject(_) => Ok(Requirement::Reject),
            RawRequirement::SignedBaseLayer(_) => Ok(Requirement::SignedBaseLayer),
            RawRequirement::SignedBy(s) => signed_by(s),
            RawRequirement::Sigstore(s) => sigstore(*s),
        }
    }
}

fn signed_by(s: RawSignedBy) -> Result<Requirement, String> {
    if !KEY_TYPES.contains(&s.key_type.as_str()) {
        return Err(format!("signedBy: unrecognized keyType {:?}", s.key_type));
    }
    let keys = match (s.key_path, s.key_paths, s.key_data) {
        (Some(p), None, None) if !p.is_empty() => Keys::Paths(vec![p]),
        (None, Some(ps), None) => {
            non_empty("signedBy: keyPaths", &ps)?;
            Keys::Paths(ps)
        }
        (None, None, Some(d)) => Keys::Data(vec![b64("signedBy: keyData", &d)?]),
        (None, None, None) => {
            return Err(
                "signedBy: exactly one of keyPath, keyPaths and keyData must be specified, none is"
                    .into(),
            );
        }
        (Some(_), None, None) => return Err("signedBy: keyPath is empty".into()),
        _ => {
            return Err(
                "signedBy: exactly one of keyPath, keyPaths and keyData must be specified, more than one is"
                    .into(),
            );
        }
    };
    Ok(Requirement::SignedBy {
        key_type: s.key_type,
        keys,
        identity: s
            .signed_identity
            .unwrap_or(IdentitySpec::MatchRepoDigestOrExact),
    })
}

/// The signer source of a `sigstoreSigned` requirement checked (exactly one of the keys,
/// `fulcio` and `pki`, each complete) and its keys read; `None` for `fulcio` and `pki`.
fn sigstore_keys(s: &RawSigstore) -> Result<Option<Keys>, String> {
    let mut sources: Vec<&str> = Vec::new();
    let mut keys = None;
    if let Some(p) = &s.key_path {
        sources.push("keyPath");
        keys = Some(Keys::Paths(vec![p.clone()]));
    }
    if let Some(ps) = &s.key_paths {
        non_empty("sigstoreSigned: keyPaths", ps)?;
        sources.push("keyPaths");
        keys = Some(Keys::Paths(ps.clone()));
    }
    if let Some(d) = &s.key_data {
        sources.push("keyData");
        keys = Some(Keys::Data(vec![b64("sigstoreSigned: keyData", d)?]));
    }
    if let Some(ds) = &s.key_datas {
        non_empty("sigstoreSigned: keyDatas", ds)?;
        sources.push("keyDatas");
        let decoded = ds
            .iter()
            .map(|d| b64("sigstoreSigned: keyDatas entry", d))
            .collect::<Result<Vec<_>, _>>()?;
        keys = Some(Keys::Data(decoded));
    }
    if let Some(f) = &s.fulcio {
        sources.push("fulcio");
        if f.ca_path.is_some() == f.ca_data.is_some() {
            return Err("sigstoreSigned: fulcio needs exactly one of caPath and caData".into());
        }
        if let Some(d) = &f.ca_data {
            b64("sigstoreSigned: fulcio caData", d)?;
        }
        if f.oidc_issuer.as_deref().unwrap_or_default().is_empty() {
            return Err("sigstoreSigned: fulcio needs oidcIssuer".into());
        }
        if f.subject_email.as_deref().unwrap_or_default().is_empty() {
            return Err("sigstoreSigned: fulcio needs subjectEmail".into());
        }
    }
    if let Some(p) = &s.pki {
        sources.push("pki");
        if p.ca_roots_path.is_some() == p.ca_roots_data.is_some() {
            return Err(
                "sigstoreSigned: pki needs exactly one of caRootsPath and caRootsData".into(),
            );
        }
        if p.ca_intermediates_path.is_some() && p.ca_intermediates_data.is_some() {
            return Err(
                "sigstoreSigned: pki takes at most one of caIntermediatesPath and caIntermediatesData"
                    .into(),
            );
        }
        if p.subject_email.as_deref().unwrap_or_default().is_empty()
            && p.subject_hostname.as_deref().unwrap_or_default().is_empty()
        {
            return Err("sigstoreSigned: pki needs subjectEmail or subjectHostname".into());
        }
    }
    if sources.len() != 1 {
        return Err(format!(
            "sigstoreSigned: exactly one of keyPath, keyPaths, keyData, keyDatas, fulcio and pki must be specified, {}",
            if sources.is_empty() {
                "none is".to_string()
            } else {
                format!("found {}", sources.join(" and "))
            }
        ));
    }
    Ok(keys)
}

/// The Rekor keys of a `sigstoreSigned` requirement (at most one of the four forms).
fn sigstore_rekor(s: &RawSigstore) -> Result<Option<Keys>, String> {
    let mut rekor: Vec<&str> = Vec::new();
    if s.rekor_public_key_path.is_some() {
        rekor.push("rekorPublicKeyPath");
    }
    if let Some(ps) = &s.rekor_public_key_paths {
        non_empty("sigstoreSigned: rekorPublicKeyPaths", ps)?;
        rekor.push("rekorPublicKeyPaths");
    }
    if let Some(d) = &s.rekor_public_key_data {
        b64("sigstoreSigned: rekorPublicKeyData", d)?;
        rekor.push("rekorPublicKeyData");
    }
    if let Some(ds) = &s.rekor_public_key_datas {
        non_empty("sigstoreSigned: rekorPublicKeyDatas", ds)?;
        for d in ds {
            b64("sigstoreSigned: rekorPublicKeyDatas entry", d)?;
        }
        rekor.push("rekorPublicKeyDatas");
    }
    if rekor.len() > 1 {
        return Err(format!(
            "sigstoreSigned: at most one of rekorPublicKeyPath, rekorPublicKeyPaths, rekorPublicKeyData and rekorPublicKeyDatas, found {}",
            rekor.join(" and ")
        ));
    }
    Ok(
        match (
            &s.rekor_public_key_path,
            &s.rekor_public_key_paths,
            &s.rekor_public_key_data,
            &s.rekor_public_key_datas,
        ) {
            (Some(p), ..) => Some(Keys::Paths(vec![p.clone()])),
            (_, Some(ps), ..) => Some(Keys::Paths(ps.clone())),
            (_, _, Some(d), _) => Some(Keys::Data(vec![b64(
                "sigstoreSigned: rekorPublicKeyData",
                d,
            )?])),
            (.., Some(ds)) => Some(Keys::Data(
                ds.iter()
                    .map(|d| b64("sigstoreSigned: rekorPublicKeyDatas entry", d))
                    .collect::<Result<Vec<_>, _>>()?,
            )),
            _ => None,
        },
    )
}

fn sigstore(mut s: RawSigstore) -> Result<Requirement, String> {
    // containers/image's path fields are strings with `omitempty`: "" is no path.
    let set = |p: &mut Option<String>| *p = p.take().filter(|p| !p.is_empty());
    if let Some(f) = s.fulcio.as_mut() {
        set(&mut f.ca_path);
    }
    if let Some(p) = s.pki.as_mut() {
        set(&mut p.ca_roots_path);
        set(&mut p.ca_intermediates_path);
    }
    let keys = sigstore_keys(&s)?;
    let rekor_keys = sigstore_rekor(&s)?;
    if s.fulcio.is_some() && rekor_keys.is_none() {
        return Err("sigstoreSigned: fulcio needs a rekorPublicKey* as well".into());
    }
    if s.pki.is_some() && rekor_keys.is_some() {
        return Err("sigstoreSigned: rekorPublicKey* is not supported with pki".into());
    }
    let identity = s
        .signed_identity
        .unwrap_or(IdentitySpec::MatchRepoDigestOrExact);
    let signer = match (s.fulcio, s.pki) {
        (Some(f), _) => Signer::Fulcio {
            ca: match (f.ca_path, f.ca_data) {
                (Some(p), _) => Keys::Paths(vec![p]),
                (_, Some(d)) => Keys::Data(vec![b64("sigstoreSigned: fulcio caData", &d)?]),
                _ => {
                    return Err(
                        "sigstoreSigned: fulcio needs exactly one of caPath and caData".into(),
                    );
                }
            },
            oidc_issuer: f.oidc_issuer.unwrap_or_default(),
            subject_email: f.subject_email.unwrap_or_default(),
        },
        (_, Some(p)) => Signer::Pki {
            roots: match (p.ca_roots_path, p.ca_roots_data) {
                (Some(path), _) => Keys::Paths(vec![path]),
                (_, Some(d)) => Keys::Data(vec![b64("sigstoreSigned: pki caRootsData", &d)?]),
                _ => {
                    return Err(
                        "sigstoreSigned: pki needs exactly one of caRootsPath and caRootsData"
                            .into(),
                    );
                }
            },
            intermediates: match (p.ca_intermediates_path, p.ca_intermediates_data) {
                (Some(path), _) => Some(Keys::Paths(vec![path])),
                (_, Some(d)) => Some(Keys::Data(vec![b64(
                    "sigstoreSigned: pki caIntermediatesData",
                    &d,
                )?])),
                _ => None,
            },
            subject_email: p.subject_email.filter(|e| !e.is_empty()),
            subject_hostname: p.subject_hostname.filter(|h| !h.is_empty()),
        },
        _ => {
            let Some(keys) = keys else {
                return Err("sigstoreSigned: no key".into());
            };
            if rekor_keys.is_none() {
                return Ok(Requirement::Sigstore { keys, identity });
            }
            Signer::Keys(keys)
        }
    };
    Ok(Requirement::SigstoreTrust(Box::new(SigstoreTrust {
        signer,
        rekor_keys,
        identity,
    })))
}

/// Checks a scope name against its transport (`ValidatePolicyConfigurationScope`); `""` is
/// always valid and unknown transports are not checked, as in containers/image.
pub fn check_scope(transport: &str, scope: &str) -> Result<(), String> {
    if scope.is_empty() {
        return Ok(());
    }
    match transport {
        "oci" | "oci-archive" | "dir" => {
            if !scope.starts_with('/') {
                return Err(format!("scope {scope:?} must be an absolute path"));
            }
            if scope == "/" {
                return Err("scope \"/\": use the default scope \"\"".into());
            }
            let clean = clean_path(scope);
            if clean != scope {
                return Err(format!(
                    "scope {scope:?} is not in canonical form (write {clean:?})"
                ));
            }
            Ok(())
        }
        "docker-archive" => Err(format!(
            "scope {scope:?}: docker-archive supports no scope but the default \"\""
        )),
        _ => Ok(()),
    }
}

/// Go's `filepath.Clean` for absolute paths: repeated `/`, `.` and `..` resolved lexically, no
/// trailing `/`.
pub fn clean_path(p: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for c in p.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            c => parts.push(c),
        }
    }
    format!("/{}", parts.join("/"))
}

/// Parses and checks a whole policy file; the error says where the fault is (a JSON path and
/// line) and what it is.
pub fn parse(bytes: &[u8]) -> Result<PolicyFile, String> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let file: PolicyFile = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        if path == "." {
            e.into_inner().to_string()
        } else {
            format!("{path}: {}", e.into_inner())
        }
    })?;
    de.end().map_err(|e| e.to_string())?;
    // serde takes a variant's index for its name: `"type": 1` must not mean the second type.
    let v: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    let mut lists: Vec<(String, &serde_json::Value)> = vec![("default".into(), &v["default"])];
    for (t, scopes) in v["transports"].as_object().into_iter().flatten() {
        for (s, reqs) in scopes.as_object().into_iter().flatten() {
            lists.push((format!("transports.{t}.{s}"), reqs));
        }
    }
    for (at, reqs) in lists {
        for (i, req) in reqs.as_array().into_iter().flatten().enumerate() {
            let nested = ["signedIdentity", "baseLayerIdentity"].map(|k| (k, &req[k]));
            for (what, o) in [("", req)].into_iter().chain(nested) {
                if o.is_object() && !o["type"].is_string() {
                    let dot = if what.is_empty() { "" } else { "." };
                    return Err(format!("{at}[{i}]{dot}{what}.type: must be a string"));
                }
            }
        }
    }
    for (transport, scopes) in &file.transports.0 {
        for (scope, _) in &scopes.0 {
            check_scope(transport, scope).map_err(|e| format!("transports.{transport}: {e}"))?;
        }
    }
    Ok(file)
}

#[cfg(test)]
mod tests;
