//! The image policy `catalog mirror` writes for the cluster (`ClusterImagePolicy` or
//! `ImagePolicy`): its flags read into a request, each key or certificate file checked now
//! (capped, PEM, public) so a mistake is named before anything is copied.

use super::MirrorError;

/// The image policy flags of `catalog mirror`, as typed.
#[derive(Debug, Clone, Copy, Default)]
pub struct ImagePolicyFlags<'a> {
    /// A cosign public key file.
    pub key: Option<&'a std::path::Path>,
    /// A Fulcio CA file (keyless).
    pub fulcio_ca: Option<&'a std::path::Path>,
    /// A Rekor public key file.
    pub rekor_key: Option<&'a std::path::Path>,
    /// The OIDC issuer (keyless).
    pub oidc_issuer: Option<&'a str>,
    /// The signer's email (keyless).
    pub email: Option<&'a str>,
    /// A namespace: write an `ImagePolicy` there.
    pub namespace: Option<&'a str>,
}

/// The image policy the flags ask for (files read now, each error naming its file), `None`
/// when none is asked for.
pub fn image_policy_request(
    flags: &ImagePolicyFlags<'_>,
) -> Result<Option<crate::mirror::image_policy::PolicyRequest>, MirrorError> {
    use crate::mirror::image_policy::{PolicyRequest, RootOfTrust};
    let read = |p: &std::path::Path| -> Result<Vec<u8>, MirrorError> {
        use std::io::Read as _;
        let cannot =
            |e: std::io::Error| MirrorError::Usage(format!("cannot read {}: {e}", p.display()));
        let mut bytes = Vec::new();
        std::fs::File::open(p)
            .map_err(cannot)?
            .take(64 << 10)
            .read_to_end(&mut bytes)
            .map_err(cannot)?;
        if bytes.len() >= 64 << 10 {
            return Err(MirrorError::Usage(format!(
                "{}: larger than 64 KiB, not a key or certificate file",
                p.display()
            )));
        }
        let text = String::from_utf8_lossy(&bytes);
        if !text.contains("-----BEGIN ") {
            return Err(MirrorError::Usage(format!(
                "{}: not a PEM file (no -----BEGIN line)",
                p.display()
            )));
        }
        // The policy carries what it is given in clear, into files meant for a cluster.
        if text.contains("PRIVATE KEY-----") {
            return Err(MirrorError::Usage(format!(
                "{}: holds a private key; give the public key or certificate (the image policy is written in clear)",
                p.display()
            )));
        }
        Ok(bytes)
    };
    let trust = match (flags.key, flags.fulcio_ca) {
        (Some(k), _) => {
            let key = read(k)?;
            crate::signature::keys::parse_public_key(&key, &k.display().to_string())
                .map_err(MirrorError::ImagePolicyKey)?;
            RootOfTrust::PublicKey {
                key,
                rekor: flags.rekor_key.map(read).transpose()?,
            }
        }
        (None, Some(ca)) => RootOfTrust::FulcioCaWithRekor {
            fulcio_ca: read(ca)?,
            rekor: read(flags.rekor_key.ok_or_else(|| {
                MirrorError::Usage("--image-policy-fulcio-ca needs --image-policy-rekor-key".into())
            })?)?,
            oidc_issuer: flags.oidc_issuer.unwrap_or_default().to_string(),
            signed_email: flags.email.unwrap_or_default().to_string(),
        },
        (None, None) => {
            if flags.namespace.is_some() || flags.rekor_key.is_some() {
                return Err(MirrorError::Usage(
                    "an image policy needs its trust: give --image-policy-key FILE or --image-policy-fulcio-ca FILE".into(),
                ));
            }
            return Ok(None);
        }
    };
    Ok(Some(PolicyRequest {
        trust,
        namespace: flags.namespace.map(str::to_string),
    }))
}
