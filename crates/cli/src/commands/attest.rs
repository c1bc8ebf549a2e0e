//! `olmpack attest` and `olmpack verify-attestation`: flags in, one call to
//! [`crate::action::attest`], the result printed. Exit codes of `verify-attestation`: 0 when
//! an attestation verifies (its verified statement printed), 1 when none does (why, for each
//! one found), 2 for errors.

use super::flags::{ConnectionArgs, KeylessArgs};
use super::sign::SignatureFormat;
use super::{EXIT_FINDINGS, EXIT_OK, Failure, Outcome, error_chain};
use crate::action::Location;
use crate::action::attest as action;
use crate::action::sign::types::Platform;
use std::path::PathBuf;

/// Arguments of `olmpack attest`.
#[derive(Debug, clap::Args)]
pub struct AttestCmd {
    /// Image: a registry reference or oci:PATH[:TAG].
    pub image: String,
    /// cosign private key file; passphrase from $COSIGN_PASSWORD or --passphrase-file.
    #[arg(long, value_name = "FILE")]
    pub key: PathBuf,
    /// File holding the passphrase of the key; one trailing newline is ignored.
    #[arg(long, value_name = "FILE")]
    pub passphrase_file: Option<PathBuf>,
    /// The predicate (JSON): the body of the in-toto statement about the image.
    #[arg(long, value_name = "FILE")]
    pub predicate: PathBuf,
    /// The predicate type: slsaprovenance1, slsaprovenance02, spdxjson, cyclonedx, vuln,
    /// custom, or a URI.
    #[arg(long = "type", value_name = "TYPE", default_value = "custom")]
    pub predicate_type: String,
    /// Where the attestation goes: bundle (a Sigstore bundle v0.3 with a DSSE envelope, an
    /// OCI 1.1 referrer, or listed in the sha256-HEX referrers tag where the registry has no
    /// referrers API; cosign 3), legacy (a layer of the sha256-HEX.att tag; cosign 2), or both.
    #[arg(long, value_enum, value_name = "FORMAT", default_value = "bundle")]
    pub format: SignatureFormat,
    /// Registry options.
    #[command(flatten)]
    pub connection: ConnectionArgs,
}

/// Runs `olmpack attest`.
pub fn run_attest(args: &AttestCmd) -> Outcome {
    let image = Location::parse(&args.image)?.require_image()?;
    let registry = args
        .connection
        .options(Platform::default(), &[&args.image])?;
    let req = action::AttestRequest {
        image,
        key: args.key.clone(),
        passphrase_file: args.passphrase_file.clone(),
        predicate: args.predicate.clone(),
        predicate_type: args.predicate_type.clone(),
        format: match args.format {
            SignatureFormat::Bundle => action::CosignFormat::Bundle,
            SignatureFormat::Legacy => action::CosignFormat::Legacy,
            SignatureFormat::Both => action::CosignFormat::Both,
        },
    };
    let (digest, attached) =
        action::attest(&req, &registry).map_err(|e| Failure::usage(error_chain(&e)))?;
    for a in attached {
        let what = if a.added {
            "attested"
        } else {
            "already attested"
        };
        outln!("{what} {digest} ({}): {}", a.predicate_type, a.location)?;
    }
    Ok(EXIT_OK)
}

/// Output format of `verify-attestation`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// One line per attestation, then each verified statement (JSON, one line).
    Text,
    /// One JSON object: image, digest, and each attestation with its statement or reason.
    Json,
}

/// Arguments of `olmpack verify-attestation`.
#[derive(Debug, clap::Args)]
pub struct VerifyAttestationCmd {
    /// Image: a registry reference or oci:PATH[:TAG].
    pub image: String,
    /// cosign public key (PEM); repeat for several.
    #[arg(long, value_name = "FILE")]
    pub key: Vec<PathBuf>,
    /// Keyless identity flags and the trusted root.
    #[command(flatten)]
    pub keyless: KeylessArgs,
    /// Only attestations of this predicate type pass: slsaprovenance1, spdxjson, ... or a URI.
    #[arg(long = "type", value_name = "TYPE")]
    pub predicate_type: Option<String>,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value = "text")]
    pub output: OutputFormat,
    /// Registry options.
    #[command(flatten)]
    pub connection: ConnectionArgs,
}

/// Runs `olmpack verify-attestation`.
pub fn run_verify_attestation(args: &VerifyAttestationCmd) -> Outcome {
    let image = Location::parse(&args.image)?.require_image()?;
    let registry = args
        .connection
        .options(Platform::default(), &[&args.image])?;
    let req = action::VerifyRequest {
        image,
        keys: args.key.clone(),
        identity: args.keyless.identity(),
        trusted_root: args.keyless.trusted_root.clone(),
        predicate_type: args.predicate_type.clone(),
    };
    let v = action::verify(&req, &registry).map_err(|e| Failure::usage(error_chain(&e)))?;
    let ok = v.any_valid();
    match args.output {
        OutputFormat::Json => {
            let found: Vec<serde_json::Value> = v
                .found
                .iter()
                .map(|f| match &f.result {
                    Ok(st) => serde_json::json!({"format": f.format, "source": f.source, "verified": true, "statement": st}),
                    Err(r) => serde_json::json!({"format": f.format, "source": f.source, "verified": false, "reason": r.to_string()}),
                })
                .collect();
            let out = serde_json::json!({
                "image": args.image,
                "digest": v.digest,
                "verified": ok,
                "attestations": found,
            });
            outln!("{}", serde_json::to_string_pretty(&out).unwrap_or_default())?;
        }
        OutputFormat::Text => {
            for f in &v.found {
                match &f.result {
                    Ok(st) => {
                        outln!(
                            "verified ({}) {}: {}",
                            f.format,
                            f.source,
                            st["predicateType"].as_str().unwrap_or_default()
                        )?;
                        outln!("{st}")?;
                    }
                    Err(r) => eprintln!("refused ({}) {}: {r}", f.format, f.source),
                }
            }
        }
    }
    if v.found.is_empty() {
        eprintln!(
            "error: {}: no attestation found for {} (no bundle referrer announcing one, no .att tag)",
            args.image, v.digest
        );
    } else if !ok {
        eprintln!(
            "error: {}: no attestation of {} verifies",
            args.image, v.digest
        );
    }
    Ok(if ok { EXIT_OK } else { EXIT_FINDINGS })
}
