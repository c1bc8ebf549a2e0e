//! `olmpack sign`, `olmpack verify` and `olmpack key generate`: flags in, one call to
//! [`crate::action::sign`], the result printed. Exit codes of `verify`: 0 when a signature
//! verifies (its payload printed), 1 when none does (why, for each one found), 2 for errors.

use super::flags::{ConnectionArgs, KeylessArgs};
use super::{EXIT_FINDINGS, EXIT_OK, Failure, Outcome, error_chain};
use crate::action::Location;
use crate::action::sign::types::Platform;
use crate::action::sign::{self as action, PolicyCheckError, SignKeys, SignOptions};
use std::path::PathBuf;

/// The signing flags `sign`, `bundle build --push` and `catalog build --push` share.
#[derive(Clone, Debug, Default, clap::Args)]
#[command(next_help_heading = "Signing options")]
pub struct SignArgs {
    /// cosign private key file (`ENCRYPTED SIGSTORE PRIVATE KEY` or the older `ENCRYPTED
    /// COSIGN PRIVATE KEY`); passphrase from $COSIGN_PASSWORD or --passphrase-file.
    #[arg(long = "sign-key", visible_alias = "key", value_name = "FILE")]
    pub key: Option<PathBuf>,
    /// OpenPGP secret key for containers' simple signing: a key file (armored or binary), or
    /// the fingerprint of a key in your GnuPG keyring ($GNUPGHOME).
    #[arg(long, value_name = "FILE|FINGERPRINT")]
    pub gpg_key: Option<String>,
    /// File holding the passphrase of the cosign key (or of the OpenPGP key); one trailing
    /// newline is ignored.
    #[arg(long, value_name = "FILE")]
    pub passphrase_file: Option<PathBuf>,
    /// The reference the signature claims (`docker-reference`); default: the image reference.
    #[arg(long, value_name = "REF")]
    pub identity: Option<String>,
    /// registries.d folder naming the lookaside stores (default:
    /// ~/.config/containers/registries.d, else /etc/containers/registries.d).
    #[arg(long = "registries-d", value_name = "DIR")]
    pub registries_d: Option<PathBuf>,
    /// Where the --key signature goes: a Sigstore bundle stored as an OCI 1.1 referrer
    /// (bundle, cosign 3's default), the sha256-HEX.sig tag that podman, skopeo and CRI-O
    /// verify (legacy), or both. Default: both, so a cluster whose runtime reads only the tag
    /// (CRI-O, containers/image) still sees the signature.
    #[arg(long = "signature-format", value_enum, value_name = "FORMAT")]
    pub signature_format: Option<SignatureFormat>,
    /// What a bundle signs: an in-toto statement in a DSSE envelope (dsse, as cosign 3 signs
    /// images) or the manifest bytes themselves (message-signature).
    #[arg(long = "bundle-content", value_enum, default_value = "dsse")]
    pub bundle_content: BundleContentArg,
}

/// Where a cosign key's signature goes (`--format`, `--signature-format`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum SignatureFormat {
    /// A Sigstore bundle v0.3, an OCI 1.1 referrer of the image (cosign 3).
    Bundle,
    /// The sha256-HEX.sig tag (cosign 2; what containers/image verifies).
    Legacy,
    /// Both: the default, since the runtimes that enforce signatures in a cluster (CRI-O
    /// through containers/image) read only the tag while cosign 3 reads the bundle.
    #[default]
    Both,
}

/// What a Sigstore bundle signs (`--bundle-content`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum BundleContentArg {
    /// A DSSE envelope over an in-toto statement naming the image.
    #[default]
    Dsse,
    /// A signature over the manifest bytes.
    MessageSignature,
}

impl SignArgs {
    /// Whether any signing was asked for.
    pub fn wanted(&self) -> bool {
        self.key.is_some() || self.gpg_key.is_some()
    }

    /// The library's signing options: keys read and decrypted now, before anything is pushed,
    /// so a wrong passphrase costs no upload.
    pub fn options(&self) -> Result<SignOptions, Failure> {
        self.options_as(self.signature_format)
    }

    /// [`SignArgs::options`] with the signature format `format` (`sign --format`).
    fn options_as(&self, format: Option<SignatureFormat>) -> Result<SignOptions, Failure> {
        Ok(action::sign_options(&SignKeys {
            key: self.key.as_deref(),
            gpg_key: self.gpg_key.as_deref(),
            passphrase_file: self.passphrase_file.as_deref(),
            identity: self.identity.as_deref(),
            registries_d: self.registries_d.as_deref(),
            format: match format.unwrap_or_default() {
                SignatureFormat::Bundle => action::CosignFormat::Bundle,
                SignatureFormat::Legacy => action::CosignFormat::Legacy,
                SignatureFormat::Both => action::CosignFormat::Both,
            },
            bundle_content: match self.bundle_content {
                BundleContentArg::Dsse => action::BundleContent::Dsse,
                BundleContentArg::MessageSignature => action::BundleContent::MessageSignature,
            },
        })?)
    }
}

/// Arguments of `olmpack sign`.
#[derive(Debug, clap::Args)]
pub struct SignCmd {
    /// Image: a registry reference or oci:PATH[:TAG].
    pub image: String,
    /// Where the --key signature goes: bundle (a Sigstore bundle v0.3 stored as an OCI 1.1
    /// referrer, or in the sha256-HEX referrers tag where the registry has no referrers API;
    /// cosign 3's default), legacy (the sha256-HEX.sig tag podman, skopeo and CRI-O verify),
    /// or both. Same as --signature-format. Default: both (CRI-O and containers/image verify
    /// only the tag).
    #[arg(
        long,
        value_enum,
        value_name = "FORMAT",
        conflicts_with = "signature_format"
    )]
    pub format: Option<SignatureFormat>,
    /// Keys and identity.
    #[command(flatten)]
    pub sign: SignArgs,
    /// Registry options.
    #[command(flatten)]
    pub connection: ConnectionArgs,
}

/// Runs `olmpack sign`.
pub fn run_sign(args: &SignCmd) -> Outcome {
    if !args.sign.wanted() {
        return Err(Failure::usage(
            "nothing to sign with: give --key FILE (cosign) and/or --gpg-key FILE|FINGERPRINT (simple signing)",
        ));
    }
    let location = Location::parse(&args.image)?.require_image()?;
    let opts = args
        .sign
        .options_as(args.format.or(args.sign.signature_format))?;
    let registry = args
        .connection
        .options(Platform::default(), &[&args.image])?;
    let (digest, written) = action::sign(&location, &registry, &opts)?;
    for w in written {
        let what = if w.added { "signed" } else { "already signed" };
        outln!("{what} {digest} ({}): {}", w.format, w.location)?;
    }
    Ok(EXIT_OK)
}

/// Output format of `verify`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// One line per signature, then the verified payloads.
    Text,
    /// One JSON object: image, digest, and each signature with its payload or reason.
    Json,
}

/// Arguments of `olmpack verify`.
#[derive(Debug, clap::Args)]
pub struct VerifyCmd {
    /// Image: a registry reference or oci:PATH[:TAG].
    pub image: String,
    /// cosign public key (PEM); repeat for several.
    #[arg(long, value_name = "FILE")]
    pub key: Vec<PathBuf>,
    /// OpenPGP keyring (armored or binary) for simple signatures; repeat for several.
    #[arg(long, value_name = "FILE")]
    pub gpg_keyring: Vec<PathBuf>,
    /// The image the signatures must name, for both formats (default: the image given). Give
    /// the source reference to verify a copy: `catalog mirror` and `copy` move signatures
    /// unchanged, so they still name where the image came from. cosign signatures must name
    /// its repository; simple signatures its tag (or its repository, when REF is a digest).
    /// For an oci: layout the default is any identity, and REF also names the lookaside entry.
    #[arg(long, value_name = "REF")]
    pub identity: Option<String>,
    /// registries.d folder naming the lookaside stores.
    #[arg(long = "registries-d", value_name = "DIR")]
    pub registries_d: Option<PathBuf>,
    /// Keyless (cosign signatures made with a Fulcio certificate, in the .sig tag or a
    /// Sigstore bundle referrer): the identity and issuer the certificate must name, and the
    /// trusted root. Checked offline: certificate chain, SCT, Rekor entry and its signed entry
    /// timestamp (or inclusion proof and checkpoint). Not with --key.
    #[command(flatten)]
    pub keyless: KeylessArgs,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value = "text")]
    pub output: OutputFormat,
    /// Registry options.
    #[command(flatten)]
    pub connection: ConnectionArgs,
}

/// Runs `olmpack verify`.
pub fn run_verify(args: &VerifyCmd) -> Outcome {
    let keyless = args.keyless.identity();
    let flags = action::VerifyFlags {
        identity: args.identity.as_deref(),
        registries_d: args.registries_d.as_deref(),
        cosign_keys: &args.key,
        gpg_keyrings: &args.gpg_keyring,
        keyless: Some(&keyless),
        trusted_root: args.keyless.trusted_root.as_ref(),
    };
    if args.key.is_empty() && args.gpg_keyring.is_empty() && !flags.keyless_asked() {
        return Err(Failure::usage(
            "nothing to verify with: give --key FILE (cosign public key), --certificate-identity and --certificate-oidc-issuer (keyless), and/or --gpg-keyring FILE",
        ));
    }
    let opts = action::verify_options(&flags)?;
    let location = Location::parse(&args.image)?.require_image()?;
    let registry = args
        .connection
        .options(Platform::default(), &[&args.image])?;
    let results = action::verify(&location, &registry, &opts)?;
    let mut all_ok = true;
    let mut images = Vec::new();
    for (image, v) in &results {
        let ok = v.any_valid();
        all_ok &= ok;
        match args.output {
            OutputFormat::Json => {
                let sigs: Vec<serde_json::Value> = v
                    .checked
                    .iter()
                    .map(|(format, c)| match &c.result {
                        Ok(p) => serde_json::json!({"format": format, "source": c.source, "verified": true, "payload": p}),
                        Err(r) => serde_json::json!({"format": format, "source": c.source, "verified": false, "reason": r.to_string()}),
                    })
                    .collect();
                images.push(serde_json::json!({
                    "image": image,
                    "digest": v.digest,
                    "verified": ok,
                    "signatures": sigs,
                }));
            }
            OutputFormat::Text => {
                for (format, c) in &v.checked {
                    match &c.result {
                        Ok(p) => {
                            let signer = &p["signer"];
                            if *format == "keyless" {
                                outln!(
                                    "verified ({format}) {}: signed at {} by {} (issuer {}, Rekor log index {})",
                                    c.source,
                                    signer["signingTime"].as_str().unwrap_or_default(),
                                    signer["identities"]
                                        .as_array()
                                        .into_iter()
                                        .flatten()
                                        .filter_map(|i| i.as_str())
                                        .collect::<Vec<_>>()
                                        .join(", "),
                                    signer["issuer"].as_str().unwrap_or_default(),
                                    signer["logIndex"]
                                )?;
                            } else {
                                outln!("verified ({format}) {}", c.source)?;
                            }
                            outln!("{p}")?;
                        }
                        Err(r) => eprintln!("refused ({format}) {}: {r}", c.source),
                    }
                }
            }
        }
        if let Some(r) = action::nothing_found(v) {
            eprintln!("error: {image}: {r}");
        } else if !ok {
            eprintln!("error: {image}: no signature of {} verifies", v.digest);
            if let Some(h) = action::identity_hint(image, v) {
                eprintln!("hint: {h}");
            }
        }
    }
    if args.output == OutputFormat::Json {
        let out = match images.len() {
            1 => images.remove(0),
            _ => serde_json::json!({"image": args.image, "verified": all_ok, "images": images}),
        };
        outln!("{}", serde_json::to_string_pretty(&out).unwrap_or_default())?;
    }
    Ok(if all_ok { EXIT_OK } else { EXIT_FINDINGS })
}

/// `olmpack key` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum KeyCmd {
    /// Generate a cosign key pair (ECDSA P-256): PREFIX.key (encrypted, as cosign writes it)
    /// and PREFIX.pub.
    Generate(GenerateArgs),
}

/// Arguments of `olmpack key generate`.
#[derive(Debug, clap::Args)]
pub struct GenerateArgs {
    /// Output prefix: writes PREFIX.key and PREFIX.pub.
    #[arg(long, default_value = "cosign", value_name = "PREFIX")]
    pub output_key_prefix: String,
    /// File holding the passphrase (else $COSIGN_PASSWORD, which may be empty).
    #[arg(long, value_name = "FILE")]
    pub passphrase_file: Option<PathBuf>,
    /// Overwrite existing files.
    #[arg(long)]
    pub force: bool,
}

/// Runs `olmpack key ...`.
pub fn run_key(cmd: &KeyCmd) -> Outcome {
    let KeyCmd::Generate(args) = cmd;
    let key_path = PathBuf::from(format!("{}.key", args.output_key_prefix));
    let pub_path = PathBuf::from(format!("{}.pub", args.output_key_prefix));
    if !args.force {
        for p in [&key_path, &pub_path] {
            if p.exists() {
                return Err(Failure::usage(format!(
                    "{} exists; give --force to overwrite it",
                    p.display()
                )));
            }
        }
    }
    let pair = action::generate_key(args.passphrase_file.as_deref())?;
    crate::fsio::write(
        &key_path,
        pair.private_pem.as_bytes(),
        crate::fsio::Options {
            mode: 0o600,
            keep_mode: false,
            create_parent: false,
        },
    )?;
    crate::fsio::write(
        &pub_path,
        pair.public_pem.as_bytes(),
        crate::fsio::Options {
            mode: 0o644,
            keep_mode: false,
            create_parent: false,
        },
    )?;
    eprintln!(
        "Private key written to {}\nPublic key written to {}",
        key_path.display(),
        pub_path.display()
    );
    Ok(EXIT_OK)
}

/// `--policy`: the containers policy.json every image read is checked against first.
#[derive(Clone, Debug, Default, clap::Args)]
#[command(next_help_heading = "Signature policy")]
pub struct PolicyArgs {
    /// containers policy.json to check images against before reading them (`default`:
    /// ~/.config/containers/policy.json, else /etc/containers/policy.json). Also
    /// $OLMPACK_POLICY. Lookaside stores come from registries.d ($OLMPACK_REGISTRIES_D, else
    /// ~/.config/containers/registries.d, else /etc/containers/registries.d).
    #[arg(long, value_name = "FILE|default")]
    pub policy: Option<String>,
}

impl PolicyArgs {
    /// Checks `location` against the policy, when one is given, and gives back the location
    /// to read: pinned to the digest whose signatures were verified, so the read gets what was
    /// checked. Registry references and local images are checked, folders are not images and
    /// pass.
    pub fn check(
        &self,
        location: &Location,
        registry: &action::RegistryOptions,
    ) -> Result<Location, Failure> {
        action::check_policy(self.policy.as_deref(), location, registry).map_err(policy_failure)
    }

    /// The policy loaded once, for a command that checks several images with it (`None`: no
    /// policy given, nothing is checked).
    pub fn gate(&self) -> Result<Option<action::PolicyGate>, Failure> {
        action::PolicyGate::load(self.policy.as_deref()).map_err(policy_failure)
    }
}

/// The option groups every command that reads bundle or catalog images by name takes together
/// (`bundle inspect`, `bundle render`, `bundle validate --image`, `catalog render`, `catalog
/// template`): registry access, mirror configuration and the signature policy. One group so
/// the commands cannot drift apart, and one place that puts the mirrors over the registry
/// options.
#[derive(Debug, clap::Args)]
pub struct ImageReadArgs {
    /// Registry options.
    #[command(flatten)]
    pub registry: super::flags::RegistryArgs,
    /// Mirror configuration.
    #[command(flatten)]
    pub mirrors: super::flags::MirrorConfigArgs,
    /// Signature policy checked before an image is read.
    #[command(flatten)]
    pub policy: PolicyArgs,
}

impl ImageReadArgs {
    /// The registry options (`--creds` bound to the registries of `named`), read through the
    /// mirror configuration files given.
    pub fn registry_options(&self, named: &[&str]) -> Result<action::RegistryOptions, Failure> {
        self.mirrors.apply(self.registry.options(named)?)
    }
}

/// A refusal exits 1, a policy or store that cannot be read exits 2.
pub fn policy_failure(e: PolicyCheckError) -> Failure {
    match e {
        PolicyCheckError::Refused(r) => Failure::with_code(EXIT_FINDINGS, r),
        e => Failure::usage(error_chain(&e)),
    }
}

/// Reads the signing keys of a build before anything is built or pushed; signing needs
/// `--push` (a signature names a registry image).
pub fn build_sign_options(sign: &SignArgs, push: bool) -> Result<Option<SignOptions>, Failure> {
    if !sign.wanted() {
        return Ok(None);
    }
    if !push {
        return Err(Failure::usage(
            "--sign-key/--gpg-key sign what is pushed: add --push (or sign a layout with olmpack sign oci:PATH)",
        ));
    }
    sign.options().map(Some)
}

/// The attestation flags `bundle build --push` and `catalog build --push` share: in-toto
/// statements signed with --sign-key and attached after the push (and the signature).
#[derive(Clone, Copy, Debug, Default, clap::Args)]
#[command(next_help_heading = "Attestations")]
pub struct BuildAttestArgs {
    /// Attach SLSA provenance v1 of the build (the source files' digests, the git commit,
    /// the base image by digest), signed with --sign-key, as --signature-format says.
    #[arg(long)]
    pub attest_provenance: bool,
    /// Attach an SPDX 2.3 SBOM listing every image the bundle (or catalog) references, with
    /// the digests of those pinned, signed with --sign-key.
    #[arg(long)]
    pub attest_sbom: bool,
}

impl BuildAttestArgs {
    /// The attestations asked for; they need --push and a cosign --sign-key.
    pub fn wanted(
        &self,
        sign: &SignArgs,
        push: bool,
    ) -> Result<action::BuildAttestations, Failure> {
        let wanted = action::BuildAttestations {
            provenance: self.attest_provenance,
            sbom: self.attest_sbom,
        };
        if wanted.any() && (!push || sign.key.is_none()) {
            return Err(Failure::usage(
                "--attest-provenance/--attest-sbom attach signed statements to what is pushed: add --push and --sign-key FILE",
            ));
        }
        Ok(wanted)
    }
}
