//! Which image a signature may stand for: the `signedIdentity` rules of containers-policy.json(5),
//! matched exactly as containers/image's `policy_reference_match.go` matches them, so a
//! signature olmpack accepts for an image is one skopeo and podman accept too, and the other way
//! round.
//!
//! Both sides are parsed with Docker's normalisation (`busybox` is
//! `docker.io/library/busybox`) and compared as whole references. A claimed identity that names
//! neither a tag nor a digest (what cosign writes: the repository alone) satisfies only the
//! repository rules (`matchRepository`, `exactRepository`); it never stands for `:latest` nor
//! for a digest.

use crate::reference::Reference;

/// How the identity a signature claims must relate to the image (containers' `signedIdentity`),
/// bound to the image being checked where the rule is relative to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdentityRule {
    /// `matchRepoDigestOrExact` (the default) for the image named here: an image named by tag
    /// needs a signature for that exact `repo:tag`; one named by digest needs one for the same
    /// repository, naming a tag or a digest.
    MatchRepoDigestOrExact(String),
    /// `matchRepository`: the same repository, whatever the tag or digest.
    MatchRepository(String),
    /// `matchExact`: exactly this reference; neither side may be a bare repository.
    MatchExact(String),
    /// `exactReference`: exactly this reference, whatever image is read.
    ExactReference(String),
    /// `exactRepository`: this repository, whatever image is read.
    ExactRepository(String),
    /// `remapIdentity`: the image's reference with `prefix` replaced by `signed_prefix`, then
    /// `matchRepoDigestOrExact` (images mirrored from where they were signed).
    RemapIdentity {
        /// The image being read.
        image: String,
        /// The prefix it was mirrored to (a host, or a host and namespace).
        prefix: String,
        /// The prefix it was signed under.
        signed_prefix: String,
    },
    /// No identity check (an `oci:` layout verified without `--identity`).
    Any,
}

/// The reference an image read from a registry is matched as (the docker transport's
/// `DockerReference`): a bare repository means `:latest`, and an image named by tag and digest
/// is matched by its tag (the digest is checked against the manifest anyway).
pub fn image_identity(r: &Reference) -> String {
    match (&r.tag, &r.digest) {
        (Some(t), _) => format!("{}:{t}", r.name()),
        (None, Some(d)) => format!("{}@{d}", r.name()),
        (None, None) => format!("{}:latest", r.name()),
    }
}

fn parse(s: &str) -> Option<Reference> {
    Reference::parse(s).ok()
}

fn name_only(r: &Reference) -> bool {
    r.tag.is_none() && r.digest.is_none()
}

/// `matchRepoDigestOrExactReferenceValues`: a tagged image needs the exact reference; one
/// pinned by digest only needs the repository; a bare signature identity never matches.
fn repo_digest_or_exact(intended: &Reference, signature: &Reference) -> bool {
    if name_only(signature) {
        return false;
    }
    if intended.tag.is_some() {
        // Includes the case of an image named by both a tag and a digest.
        signature.to_string() == intended.to_string()
    } else if intended.digest.is_some() {
        // The digest itself was compared with the manifest before the identity is looked at.
        signature.name() == intended.name()
    } else {
        false
    }
}

/// Both references exact (a tag or a digest) and equal.
fn exact(intended: &Reference, signature: &Reference) -> bool {
    !name_only(intended) && !name_only(signature) && signature.to_string() == intended.to_string()
}

/// Whether `name` (a normalised repository) lies under `prefix` (`refMatchesPrefix`): equal, or
/// followed by a `/`.
fn matches_prefix(name: &str, prefix: &str) -> bool {
    name == prefix
        || (name.len() > prefix.len()
            && name.starts_with(prefix)
            && name.as_bytes()[prefix.len()] == b'/')
}

/// `remapReferencePrefix`: `image` with `prefix` replaced by `signed_prefix` when it lies under
/// it; `Err` when the rewritten string is not a reference in canonical form (it would mean
/// another image once normalised).
pub fn remap(image: &Reference, prefix: &str, signed_prefix: &str) -> Result<Reference, String> {
    if !matches_prefix(&image.name(), prefix) {
        return Ok(image.clone());
    }
    let whole = image.to_string();
    let rewritten = format!("{signed_prefix}{}", &whole[prefix.len()..]);
    match Reference::parse(&rewritten) {
        Ok(r) if r.to_string() == rewritten => Ok(r),
        Ok(r) => Err(format!(
            "rewriting {whole:?} gives {rewritten:?}, which is not canonical (it would mean {r})"
        )),
        Err(e) => Err(format!("rewriting {whole:?} gives {rewritten:?}: {e}")),
    }
}

/// Whether `s` may be a `remapIdentity` prefix (`validateIdentityRemappingPrefix`): a host, or a
/// host followed by repository path components, with no tag, digest or trailing `/`.
pub fn valid_remap_prefix(s: &str) -> bool {
    let (host, path) = match s.split_once('/') {
        Some((h, p)) => (h, Some(p)),
        None => (s, None),
    };
    if !valid_domain(host) {
        return false;
    }
    match path {
        None => true,
        Some(p) => {
            !p.is_empty()
                && p.split('/').all(|c| {
                    Reference::parse(&format!("example.com/{c}"))
                        .is_ok_and(|r| r.tag.is_none() && r.digest.is_none() && r.repository == c)
                })
        }
    }
}

/// distribution's `DomainRegexp` without IPv6: dot-separated labels of letters, digits and
/// inner `-`, with an optional `:port`.
fn valid_domain(s: &str) -> bool {
    let (host, port) = match s.rsplit_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (s, None),
    };
    if port.is_some_and(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit())) {
        return false;
    }
    !host.is_empty()
        && host.split('.').all(|l| {
            !l.is_empty()
                && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        })
}

impl IdentityRule {
    /// Whether `claimed` (a signature's `docker-reference`) satisfies the rule. An empty or
    /// unparsable claim satisfies nothing but [`IdentityRule::Any`].
    pub fn accepts(&self, claimed: &str) -> bool {
        if let IdentityRule::Any = self {
            return true;
        }
        let Some(sig) = parse(claimed) else {
            return false;
        };
        match self {
            IdentityRule::Any => true,
            IdentityRule::MatchRepoDigestOrExact(image) => {
                parse(image).is_some_and(|i| repo_digest_or_exact(&i, &sig))
            }
            IdentityRule::MatchRepository(image) | IdentityRule::ExactRepository(image) => {
                parse(image).is_some_and(|i| i.name() == sig.name())
            }
            IdentityRule::MatchExact(image) | IdentityRule::ExactReference(image) => {
                parse(image).is_some_and(|i| exact(&i, &sig))
            }
            IdentityRule::RemapIdentity {
                image,
                prefix,
                signed_prefix,
            } => parse(image)
                .and_then(|i| remap(&i, prefix, signed_prefix).ok())
                .is_some_and(|i| repo_digest_or_exact(&i, &sig)),
        }
    }

    /// What the rule expects, for messages.
    pub fn describe(&self) -> String {
        match self {
            IdentityRule::Any => "any".into(),
            IdentityRule::MatchRepoDigestOrExact(s) => match parse(s) {
                Some(r) if r.tag.is_none() && r.digest.is_some() => {
                    format!("{} (any tag or digest)", r.name())
                }
                _ => s.clone(),
            },
            IdentityRule::MatchRepository(s) | IdentityRule::ExactRepository(s) => {
                format!(
                    "{} (any tag or digest)",
                    parse(s).map(|r| r.name()).unwrap_or(s.clone())
                )
            }
            IdentityRule::MatchExact(s) | IdentityRule::ExactReference(s) => s.clone(),
            IdentityRule::RemapIdentity {
                image,
                prefix,
                signed_prefix,
            } => match parse(image).map(|i| remap(&i, prefix, signed_prefix)) {
                Some(Ok(r)) => format!("{r} (remapped from {image})"),
                Some(Err(e)) => format!("nothing ({e})"),
                None => image.clone(),
            },
        }
    }
}

/// Why a signature claiming `claimed` is refused where `expected` (a rule's description) was
/// wanted, saying when the claim is empty, unparsable or a bare repository.
pub fn explain(expected: &str, claimed: &str) -> String {
    if claimed.is_empty() {
        return format!(
            "the signature claims no identity (no docker-reference), expected {expected}"
        );
    }
    let Some(sig) = parse(claimed) else {
        return format!(
            "the signature claims {claimed:?}, which is not an image reference; expected {expected}"
        );
    };
    let mut text = format!("the signature claims {claimed}, expected {expected}");
    if name_only(&sig) && !expected.ends_with("(any tag or digest)") {
        text.push_str(
            " (it names a repository without a tag or digest, as cosign writes, which only signedIdentity matchRepository or exactRepository accepts)",
        );
    }
    text
}

/// The identity a verified payload claims: a simple-signing or cosign payload's
/// `critical.identity.docker-reference`, or the name of the subject of an in-toto statement
/// (a Sigstore bundle) whose digest is `digest`. `None` when it claims none.
pub fn claimed(payload: &serde_json::Value, digest: &str) -> Option<String> {
    if let Some(critical) = payload.get("critical") {
        return critical["identity"]["docker-reference"]
            .as_str()
            .filter(|s| !s.is_empty())
            .map(str::to_string);
    }
    let (algo, hex) = digest.split_once(':')?;
    payload["subject"]
        .as_array()?
        .iter()
        .find(|s| s["digest"][algo].as_str() == Some(hex))
        .and_then(|s| s["name"].as_str())
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// Checks the identity a verified signature claims (`claimed`, `None` when it claims none)
/// against `rule`. A signature that claims nothing passes only [`IdentityRule::Any`], or
/// `accept_unnamed` (the `verify` command, as cosign, accepts a key-signed image whatever it
/// names; a policy never does).
pub fn check(
    rule: &IdentityRule,
    claimed: Option<&str>,
    accept_unnamed: bool,
) -> Result<(), super::Rejection> {
    match claimed {
        None if accept_unnamed || *rule == IdentityRule::Any => Ok(()),
        Some(c) if rule.accepts(c) => Ok(()),
        other => Err(super::Rejection::IdentityMismatch {
            expected: rule.describe(),
            found: other.unwrap_or_default().to_string(),
        }),
    }
}

/// A hint for a verification refused only because the signatures name another repository
/// (typically the one the image was copied from): how to accept them, on the command line and
/// in policy.json. `image` is the reference that was verified.
pub fn mismatch_hint(image: &str, claimed: &str) -> Option<String> {
    let sig = parse(claimed)?;
    let here = parse(image);
    if here.as_ref().is_some_and(|h| h.name() == sig.name()) {
        return None;
    }
    let rule = match &here {
        // cosign names the bare repository, which remapIdentity (a matchRepoDigestOrExact)
        // never accepts: only a repository rule does.
        Some(_) if name_only(&sig) => format!(
            "{{\"type\": \"exactRepository\", \"dockerRepository\": \"{}\"}}",
            sig.name()
        ),
        Some(h) => {
            let (signed_prefix, prefix) = split_common_tail(&sig.name(), &h.name());
            format!(
                "{{\"type\": \"remapIdentity\", \"prefix\": \"{prefix}\", \"signedPrefix\": \"{signed_prefix}\"}}"
            )
        }
        None => format!(
            "{{\"type\": \"exactRepository\", \"dockerRepository\": \"{}\"}}",
            sig.name()
        ),
    };
    Some(format!(
        "the signatures name {claimed}: if {image} is a copy of it (catalog mirror, copy), verify with --identity {claimed}, or in policy.json give its scope \"signedIdentity\": {rule}"
    ))
}

/// The line `catalog mirror` ends with on how its copies verify at the target: signatures are
/// copied unchanged, so they still name where each image came from. `example` is one mirrored
/// image (source reference, target reference).
pub fn mirror_note(signatures: bool, example: Option<(&str, &str)>) -> Option<String> {
    if !signatures {
        return Some(
            "signatures: not copied (--no-signatures); the mirrored images carry none".into(),
        );
    }
    let (source, target) = example?;
    let (s, t) = (parse(source)?, parse(target)?);
    let (signed_prefix, prefix) = split_common_tail(&s.name(), &t.name());
    Some(format!(
        "signatures: copied unchanged, so they name the source: verify with `olmpack verify {target} --key KEY --identity {source}`; in policy.json use signedIdentity remapIdentity (prefix {prefix:?}, signedPrefix {signed_prefix:?}) for simple signatures, exactRepository (the source repository) for cosign's"
    ))
}

/// Two repository names without the trailing path components they share (at least the host is
/// kept on each side): `quay.io/org/app`, `mirror:5000/ns/org/app` → `quay.io`, `mirror:5000/ns`.
fn split_common_tail(a: &str, b: &str) -> (String, String) {
    let (mut x, mut y): (Vec<&str>, Vec<&str>) = (a.split('/').collect(), b.split('/').collect());
    while x.len() > 1 && y.len() > 1 && x.last() == y.last() {
        x.pop();
        y.pop();
    }
    (x.join("/"), y.join("/"))
}

#[cfg(test)]
mod tests;
