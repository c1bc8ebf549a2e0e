//! `olmpack verify-blob`: flags in, one call to [`crate::action::verify_blob`], the verdict
//! printed. Exit codes: 0 verified, 1 refused (the check that failed named), 2 for errors.

use super::flags::KeylessArgs;
use super::{EXIT_FINDINGS, EXIT_OK, Failure, Outcome};
use crate::action::verify_blob as action;
use std::path::PathBuf;

/// Arguments of `olmpack verify-blob`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The artifact: a file, or sha256:HEX for its digest (when no such file exists).
    #[arg(value_name = "FILE|sha256:HEX")]
    pub artifact: String,
    /// The Sigstore bundle (JSON, v0.1 to v0.3).
    #[arg(long, value_name = "FILE")]
    pub bundle: PathBuf,
    /// PEM public key, for a bundle signed with a key (not with --certificate-* flags).
    #[arg(long, value_name = "FILE")]
    pub key: Option<PathBuf>,
    /// Keyless identity flags and the trusted root.
    #[command(flatten)]
    pub keyless: KeylessArgs,
    /// Print the verdict as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `olmpack verify-blob`.
pub fn run(args: &Args) -> Outcome {
    let req = action::Request {
        artifact: args.artifact.clone(),
        bundle: args.bundle.clone(),
        key: args.key.clone(),
        identity: args.keyless.certificate_identity.clone(),
        identity_regexp: args.keyless.certificate_identity_regexp.clone(),
        issuer: args.keyless.certificate_oidc_issuer.clone(),
        issuer_regexp: args.keyless.certificate_oidc_issuer_regexp.clone(),
        trusted_root: args.keyless.trusted_root.clone(),
    };
    let verdict = action::verify_blob(&req).map_err(|e| Failure::usage(super::error_chain(&e)))?;
    let bundle = args.bundle.display();
    match verdict {
        Ok(v) => {
            if args.json {
                let j = serde_json::json!({
                    "verified": true,
                    "bundle": bundle.to_string(),
                    "signingTime": action::rfc3339(v.signing_time),
                    "identities": v.identities,
                    "issuer": v.issuer,
                    "logIndex": v.log_index,
                });
                outln!("{}", serde_json::to_string_pretty(&j).unwrap_or_default())?;
            } else {
                outln!(
                    "verified {bundle}: signed at {}{}{} (Rekor log index {})",
                    action::rfc3339(v.signing_time),
                    if v.identities.is_empty() { "" } else { " by " },
                    v.identities.join(", "),
                    v.log_index
                )?;
            }
            Ok(EXIT_OK)
        }
        Err(r) => {
            if args.json {
                let j = serde_json::json!({"verified": false, "bundle": bundle.to_string(), "reason": r.to_string()});
                outln!("{}", serde_json::to_string_pretty(&j).unwrap_or_default())?;
            }
            eprintln!("refused {bundle}: {r}");
            Ok(EXIT_FINDINGS)
        }
    }
}
