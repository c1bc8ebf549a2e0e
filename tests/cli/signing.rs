//! `olmpack sign`, `verify` and `key generate` against independent parties, on a real registry
//! on loopback: cosign's format checked by an independent implementation in Python
//! (`tests/support/cosign_interop.py`: Debian's python3-cryptography and python3-nacl), simple
//! signing both ways with Debian's skopeo and GnuPG (a throwaway GNUPGHOME), and the tampering
//! matrix of both formats (olmpack refuses each case, and so does skopeo for simple signing).

use crate::support::cmd::olmpack_path;
use crate::support::gpg::GpgHome;
use crate::support::registry::{Mode, Registry, bundle_image, sha256, write_layout};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const PY: &str = "/usr/bin/python3";

/// The cosign key passphrase of these tests. A short one (it was "pw") turned up in the base64
/// of a random key about one time in eight, failing the "never written" check by chance.
const PASSPHRASE: &str = "olmpack-test-passphrase";

fn interop_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/cosign_interop.py")
}

pub(crate) fn tool(name: &str) -> Command {
    let found = Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {name}"))
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "{name} is not installed: run scripts/test.sh, which installs the test tools"
    );
    Command::new(name)
}

pub(crate) fn out(cmd: &mut Command) -> Output {
    cmd.output().expect("command runs")
}

pub(crate) fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

pub(crate) fn ok(cmd: &mut Command) -> String {
    let o = out(cmd);
    assert!(o.status.success(), "{cmd:?} failed: {}", text(&o));
    String::from_utf8_lossy(&o.stdout).into()
}

/// The Python implementation, with the key passphrase.
pub(crate) fn py(args: &[&str]) -> Command {
    let mut c = tool(PY);
    c.arg(interop_script())
        .args(args)
        .env("COSIGN_PASSWORD", PASSPHRASE);
    c
}

pub(crate) fn olmpack(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(olmpack_path());
    c.current_dir(dir)
        .args(args)
        .env("NO_COLOR", "1")
        .env("COSIGN_PASSWORD", PASSPHRASE)
        .env("HOME", dir)
        .env_remove("OLMPACK_POLICY");
    c
}

/// Pushes a small bundle image (different per `n`) with skopeo; returns its manifest digest.
pub(crate) fn push(reg: &Registry, tmp: &Path, repo: &str, tag: &str, n: usize) -> String {
    let dir = tmp.join(format!("img-{repo}-{tag}"));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let image = bundle_image(&dir, n, "signed-operator");
    let layout = dir.join("layout");
    write_layout(&image, &layout, "v1");
    ok(tool("skopeo").args([
        "copy",
        "--quiet",
        "--dest-tls-verify=false",
        &format!("oci:{}:v1", layout.display()),
        &format!("docker://{}", reg.reference(repo, tag)),
    ]));
    let raw = out(tool("skopeo").args([
        "inspect",
        "--raw",
        "--tls-verify=false",
        &format!("docker://{}", reg.reference(repo, tag)),
    ]));
    assert!(raw.status.success(), "{}", text(&raw));
    sha256(&raw.stdout)
}

pub(crate) fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

#[test]
fn cosign_keys_interoperate_with_python() {
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    ok(&mut olmpack(
        d,
        &["key", "generate", "--output-key-prefix", "ours"],
    ));
    let key = std::fs::read_to_string(d.join("ours.key")).expect("key");
    assert!(key.starts_with("-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----\n"));
    // The passphrase holds a `-`, which base64 never does, so finding it means it was written.
    assert!(!key.contains(PASSPHRASE));
    // The private key file is for its owner only.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(d.join("ours.key"))
        .expect("meta")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    assert_eq!(
        ok(py(&["checkkey", "ours.key", "ours.pub"]).current_dir(d)).trim(),
        "ok"
    );
    // A second run does not overwrite the pair.
    let again = out(&mut olmpack(
        d,
        &["key", "generate", "--output-key-prefix", "ours"],
    ));
    assert_eq!(code(&again), 2, "{}", text(&again));
    assert!(text(&again).contains("--force"));
    // A passphrase file instead of the environment; the passphrase is never printed.
    std::fs::write(d.join("pass.txt"), "file-secret\n").expect("write");
    let o = out(olmpack(
        d,
        &[
            "key",
            "generate",
            "--output-key-prefix",
            "f",
            "--passphrase-file",
            "pass.txt",
        ],
    )
    .env_remove("COSIGN_PASSWORD"));
    assert!(o.status.success(), "{}", text(&o));
    assert!(!text(&o).contains("file-secret"));
    let checked = out(py(&["checkkey", "f.key", "f.pub"])
        .current_dir(d)
        .env("COSIGN_PASSWORD", "file-secret"));
    assert!(checked.status.success(), "{}", text(&checked));
    // No passphrase at all is an error saying where one comes from.
    let none =
        out(olmpack(d, &["key", "generate", "--output-key-prefix", "n"])
            .env_remove("COSIGN_PASSWORD"));
    assert_eq!(code(&none), 2);
    assert!(text(&none).contains("COSIGN_PASSWORD"), "{}", text(&none));
}

#[test]
fn cosign_signatures_interoperate_with_python_on_a_registry() {
    let reg = Registry::start(Mode::Plain);
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    let host = reg.host.clone();
    ok(&mut olmpack(
        d,
        &["key", "generate", "--output-key-prefix", "a"],
    ));
    ok(py(&["genkey", "b"]).current_dir(d));
    let digest = push(&reg, d, "app", "v1", 1);
    let image = reg.reference("app", "v1");

    // olmpack signs with its key, then with the key Python wrote as cosign does: two layers.
    let s1 = ok(&mut olmpack(
        d,
        &["sign", &image, "--key", "a.key", "--format", "legacy"],
    ));
    assert!(
        s1.contains(&format!("app:sha256-{}.sig", &digest[7..])),
        "{s1}"
    );
    ok(&mut olmpack(
        d,
        &["sign", &image, "--key", "b.key", "--format", "legacy"],
    ));
    for pubkey in ["a.pub", "b.pub"] {
        let n = ok(py(&["verify", &host, "app", &digest, pubkey]).current_dir(d));
        assert_eq!(
            n.trim(),
            "1",
            "Python verifies the signature made with {pubkey}"
        );
    }
    // The same key again adds nothing.
    let again = ok(&mut olmpack(
        d,
        &["sign", &image, "--key", "a.key", "--format", "legacy"],
    ));
    assert!(again.starts_with("already signed"), "{again}");
    let sig_manifest = ok(tool("skopeo").args([
        "inspect",
        "--raw",
        "--tls-verify=false",
        &format!("docker://{host}/app:sha256-{}.sig", &digest[7..]),
    ]));
    let m: serde_json::Value = serde_json::from_str(&sig_manifest).expect("json");
    assert_eq!(m["layers"].as_array().map(Vec::len), Some(2));
    assert_eq!(
        m["layers"][0]["mediaType"],
        "application/vnd.dev.cosign.simplesigning.v1+json"
    );

    // olmpack verifies both, printing the payloads.
    for pubkey in ["a.pub", "b.pub"] {
        let v = ok(&mut olmpack(d, &["verify", &image, "--key", pubkey]));
        assert!(v.contains("cosign container image signature"), "{v}");
        assert!(v.contains(&digest), "{v}");
    }

    // Python signs another image as cosign does; olmpack verifies it.
    let d2 = push(&reg, d, "app", "v2", 2);
    ok(py(&["sign", &host, "app", &d2, "b.key"]).current_dir(d));
    let v = ok(&mut olmpack(
        d,
        &[
            "verify",
            &reg.reference("app", "v2"),
            "--key",
            "b.pub",
            "-o",
            "json",
        ],
    ));
    let j: serde_json::Value = serde_json::from_str(&v).expect("json");
    assert_eq!(j["verified"], true);
    assert_eq!(j["digest"], d2.as_str());
    assert_eq!(
        j["signatures"][0]["payload"]["critical"]["image"]["docker-manifest-digest"],
        d2.as_str()
    );
    let wrong = out(&mut olmpack(
        d,
        &["verify", &reg.reference("app", "v2"), "--key", "a.pub"],
    ));
    assert_eq!(code(&wrong), 1, "{}", text(&wrong));

    // cosign v3: a Sigstore bundle referrer (fallback tag schema), with a key, offline.
    let d3 = push(&reg, d, "app", "v3", 3);
    ok(py(&["bundle", &host, "app", &d3, "b.key"]).current_dir(d));
    let v = ok(&mut olmpack(
        d,
        &["verify", &reg.reference("app", "v3"), "--key", "b.pub"],
    ));
    assert!(v.contains("https://sigstore.dev/cosign/sign/v1"), "{v}");
    let wrong = out(&mut olmpack(
        d,
        &["verify", &reg.reference("app", "v3"), "--key", "a.pub"],
    ));
    assert_eq!(code(&wrong), 1, "{}", text(&wrong));
    assert!(text(&wrong).contains("wrong key"), "{}", text(&wrong));

    // An unsigned image: exit 1, saying nothing was found.
    push(&reg, d, "app", "v4", 4);
    let none = out(&mut olmpack(
        d,
        &["verify", &reg.reference("app", "v4"), "--key", "a.pub"],
    ));
    assert_eq!(code(&none), 1, "{}", text(&none));
    assert!(
        text(&none).contains("no signature found"),
        "{}",
        text(&none)
    );
    // A missing key file is an error (2), not a verdict.
    let missing = out(&mut olmpack(d, &["verify", &image, "--key", "nope.pub"]));
    assert_eq!(code(&missing), 2, "{}", text(&missing));
}

#[test]
fn cosign_tampering_matrix_is_refused() {
    let reg = Registry::start(Mode::Plain);
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    let host = reg.host.clone();
    ok(py(&["genkey", "k"]).current_dir(d));
    ok(py(&["genkey", "other"]).current_dir(d));
    let other_digest = push(&reg, d, "t", "other", 99);
    // (case, python sign options, verify key, expected reason)
    let cases: Vec<(&str, Vec<String>, &str, &str)> = vec![
        (
            "changed payload",
            vec!["--tamper".into(), "payload".into()],
            "k.pub",
            "wrong key",
        ),
        (
            "changed digest in payload",
            vec!["--payload-digest".into(), other_digest.clone()],
            "k.pub",
            "digest mismatch",
        ),
        (
            "changed identity",
            vec!["--identity".into(), format!("{host}/elsewhere")],
            "k.pub",
            "identity mismatch",
        ),
        (
            "truncated signature",
            vec!["--tamper".into(), "truncate".into()],
            "k.pub",
            "malformed",
        ),
        ("wrong key", vec![], "other.pub", "wrong key"),
        (
            "wrong media type",
            vec!["--media-type".into(), "application/json".into()],
            "k.pub",
            "media type",
        ),
    ];
    let mut ran = 0;
    for (i, (case, opts, pubkey, reason)) in cases.iter().enumerate() {
        let tag = format!("c{i}");
        let digest = push(&reg, d, "t", &tag, i + 10);
        let mut args = vec![
            "sign".to_string(),
            host.clone(),
            "t".into(),
            digest.clone(),
            "k.key".into(),
        ];
        args.extend(opts.iter().cloned());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        ok(py(&args).current_dir(d));
        let o = out(&mut olmpack(
            d,
            &["verify", &reg.reference("t", &tag), "--key", pubkey],
        ));
        assert_eq!(code(&o), 1, "{case}: {}", text(&o));
        assert!(
            text(&o).contains(reason),
            "{case}: expected {reason:?} in {}",
            text(&o)
        );
        ran += 1;
    }
    // A signature moved to another image: the .sig manifest of image A under image B's tag.
    let a = push(&reg, d, "t", "moved-a", 50);
    let b = push(&reg, d, "t", "moved-b", 51);
    ok(py(&["sign", &host, "t", &a, "k.key", "--tag-digest", &b]).current_dir(d));
    let o = out(&mut olmpack(
        d,
        &["verify", &reg.reference("t", "moved-b"), "--key", "k.pub"],
    ));
    assert_eq!(code(&o), 1, "{}", text(&o));
    assert!(text(&o).contains("digest mismatch"), "{}", text(&o));
    ran += 1;
    // A Sigstore bundle for another image attached to this one.
    let c = push(&reg, d, "t", "bundle-moved", 52);
    ok(py(&["bundle", &host, "t", &c, "k.key", "--subject-digest", &a]).current_dir(d));
    let o = out(&mut olmpack(
        d,
        &[
            "verify",
            &reg.reference("t", "bundle-moved"),
            "--key",
            "k.pub",
        ],
    ));
    assert_eq!(code(&o), 1, "{}", text(&o));
    assert!(text(&o).contains("digest mismatch"), "{}", text(&o));
    ran += 1;
    assert_eq!(ran, 8, "every tampering case ran");
}

#[test]
fn cosign_signs_and_verifies_an_oci_layout_offline() {
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    ok(&mut olmpack(
        d,
        &["key", "generate", "--output-key-prefix", "k"],
    ));
    ok(py(&["genkey", "other"]).current_dir(d));
    let image = bundle_image(d, 1, "layout-operator");
    write_layout(&image, &d.join("layout"), "v1");
    let digest = image.manifest.descriptor.digest.clone();
    ok(&mut olmpack(
        d,
        &[
            "sign",
            "oci:layout:v1",
            "--key",
            "k.key",
            "--format",
            "legacy",
            "--identity",
            "quay.io/example/op:v1",
        ],
    ));
    // An independent reader sees the signature manifest under cosign's tag.
    let raw = ok(tool("skopeo").args([
        "inspect",
        "--raw",
        &format!(
            "oci:{}:sha256-{}.sig",
            d.join("layout").display(),
            &digest[7..]
        ),
    ]));
    assert!(raw.contains("dev.cosignproject.cosign/signature"), "{raw}");
    // Verified with no network at all.
    let v = out(Command::new("unshare")
        .args(["-n", "--"])
        .arg(olmpack_path())
        .args(["verify", "oci:layout:v1", "--key", "k.pub"])
        .current_dir(d));
    if v.status.code().is_none() || text(&v).contains("unshare failed") {
        let v = ok(&mut olmpack(
            d,
            &["verify", "oci:layout:v1", "--key", "k.pub"],
        ));
        assert!(v.contains(&digest), "{v}");
    } else {
        assert!(v.status.success(), "{}", text(&v));
        assert!(text(&v).contains("quay.io/example/op"), "{}", text(&v));
    }
    let wrong = out(&mut olmpack(
        d,
        &["verify", "oci:layout:v1", "--key", "other.pub"],
    ));
    assert_eq!(code(&wrong), 1, "{}", text(&wrong));
    // An archive has nowhere to keep a signature.
    std::fs::write(d.join("x.tar"), b"").expect("write");
    let arch = out(&mut olmpack(
        d,
        &["sign", "oci-archive:x.tar", "--key", "k.key"],
    ));
    assert_eq!(code(&arch), 2, "{}", text(&arch));
}

/// skopeo copies tag `v1` of the OCI layout `layout` to `reference` (a plain-HTTP registry),
/// signing it with GnuPG key 0 of `gpg` into the lookaside `registries_d` names.
pub(crate) fn skopeo_copy_signed(gpg: &Gpg, registries_d: &str, layout: &Path, reference: &str) {
    ok(tool("skopeo").env("GNUPGHOME", gpg.home.path()).args([
        "--registries.d",
        registries_d,
        "copy",
        "--quiet",
        "--dest-tls-verify=false",
        "--sign-by",
        &gpg.fprs[0],
        &format!("oci:{}:v1", layout.display()),
        &format!("docker://{reference}"),
    ]));
}

/// A throwaway GnuPG home with two ed25519 signing keys; the agent is stopped on drop.
pub(crate) struct Gpg {
    pub(crate) home: GpgHome,
    pub(crate) fprs: Vec<String>,
}

impl Gpg {
    pub(crate) fn new() -> Gpg {
        let home = GpgHome::new();
        let mut fprs = Vec::new();
        for name in [
            "Signer One <one@example.invalid>",
            "Signer Two <two@example.invalid>",
        ] {
            ok(tool("gpg").env("GNUPGHOME", home.path()).args([
                "--batch",
                "--quiet",
                "--passphrase",
                "",
                "--quick-gen-key",
                name,
                "ed25519",
                "sign",
                "never",
            ]));
            let list = ok(tool("gpg").env("GNUPGHOME", home.path()).args([
                "--batch",
                "--with-colons",
                "--list-secret-keys",
                name,
            ]));
            let fpr = list
                .lines()
                .find(|l| l.starts_with("fpr:"))
                .and_then(|l| l.split(':').nth(9))
                .expect("fingerprint")
                .to_string();
            fprs.push(fpr);
        }
        Gpg { home, fprs }
    }

    pub(crate) fn cmd(&self) -> Command {
        let mut c = tool("gpg");
        c.env("GNUPGHOME", self.home.path()).arg("--batch");
        c
    }

    pub(crate) fn export(&self, i: usize, to: &Path) {
        let bytes = out(self.cmd().args(["--export", &self.fprs[i]]));
        std::fs::write(to, &bytes.stdout).expect("write keyring");
    }

    pub(crate) fn export_secret(&self, i: usize, to: &Path) {
        let bytes = out(self
            .cmd()
            .args(["--armor", "--export-secret-keys", &self.fprs[i]]));
        std::fs::write(to, &bytes.stdout).expect("write key");
    }

    /// Signs `payload` as skopeo's gpgme does (an OpenPGP signed message).
    pub(crate) fn sign(&self, i: usize, payload: &[u8], dir: &Path) -> Vec<u8> {
        let input = dir.join("payload.json");
        std::fs::write(&input, payload).expect("write");
        let output = dir.join("payload.sig");
        let _ = std::fs::remove_file(&output);
        ok(self.cmd().args([
            "--yes",
            "--local-user",
            &self.fprs[i],
            "--output",
            output.to_str().expect("utf8"),
            "--sign",
            input.to_str().expect("utf8"),
        ]));
        std::fs::read(&output).expect("read sig")
    }
}

/// registries.d naming one file:// store for reading and writing.
pub(crate) fn registries_d(d: &Path) -> (PathBuf, PathBuf) {
    let rd = d.join("registries.d");
    let store = d.join("sigstore");
    std::fs::create_dir_all(&rd).expect("mkdir");
    std::fs::create_dir_all(&store).expect("mkdir");
    std::fs::write(
        rd.join("default.yaml"),
        format!(
            "default-docker:\n  lookaside: file://{0}\n  lookaside-staging: file://{0}\n",
            store.display()
        ),
    )
    .expect("write");
    (rd, store)
}

fn policy(d: &Path, name: &str, host: &str, keyring: &Path) -> PathBuf {
    let p = d.join(name);
    let v = serde_json::json!({
        "default": [{"type": "reject"}],
        "transports": {"docker": {host: [{"type": "signedBy", "keyType": "GPGKeys", "keyPath": keyring}]}}
    });
    std::fs::write(&p, serde_json::to_vec_pretty(&v).expect("json")).expect("write");
    p
}

/// `skopeo copy` of a registry image to a layout under `policy`: whether skopeo accepted it.
pub(crate) fn skopeo_accepts(d: &Path, image: &str, policy: &Path, rd: &Path) -> (bool, String) {
    let dest = d.join(format!("copy-{}", rand_suffix()));
    let o = out(tool("skopeo").args([
        "--policy",
        policy.to_str().expect("utf8"),
        "--registries.d",
        rd.to_str().expect("utf8"),
        "copy",
        "--quiet",
        // An oci: layout cannot store simple signatures; the policy is checked on the source
        // all the same.
        "--remove-signatures",
        "--src-tls-verify=false",
        &format!("docker://{image}"),
        &format!("oci:{}:x", dest.display()),
    ]));
    (o.status.success(), text(&o))
}

pub(crate) fn rand_suffix() -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    N.fetch_add(1, Ordering::Relaxed).to_string()
}

#[test]
fn simple_signing_interoperates_with_skopeo_and_gnupg() {
    let reg = Registry::start(Mode::Plain);
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    let gpg = Gpg::new();
    let (rd, store) = registries_d(d);
    gpg.export(0, &d.join("one.gpg"));
    gpg.export(1, &d.join("two.gpg"));
    gpg.export_secret(0, &d.join("one.sec.asc"));
    let p_one = policy(d, "policy-one.json", &reg.host, &d.join("one.gpg"));
    let p_two = policy(d, "policy-two.json", &reg.host, &d.join("two.gpg"));
    let rd_s = rd.to_str().expect("utf8");

    // skopeo signs → olmpack verifies.
    let layout_dir = d.join("src");
    std::fs::create_dir_all(&layout_dir).expect("mkdir");
    let image = bundle_image(&layout_dir, 7, "simple-operator");
    write_layout(&image, &layout_dir.join("layout"), "v1");
    let by_skopeo = reg.reference("simple", "skopeo");
    skopeo_copy_signed(&gpg, rd_s, &layout_dir.join("layout"), &by_skopeo);
    let v = ok(&mut olmpack(
        d,
        &[
            "verify",
            &by_skopeo,
            "--gpg-keyring",
            "one.gpg",
            "--registries-d",
            rd_s,
        ],
    ));
    assert!(v.contains("atomic container signature"), "{v}");
    let wrong = out(&mut olmpack(
        d,
        &[
            "verify",
            &by_skopeo,
            "--gpg-keyring",
            "two.gpg",
            "--registries-d",
            rd_s,
        ],
    ));
    assert_eq!(code(&wrong), 1, "{}", text(&wrong));
    assert!(text(&wrong).contains("wrong key"), "{}", text(&wrong));

    // olmpack signs (key file) → skopeo accepts under signedBy one, refuses under two.
    let digest = push(&reg, d, "simple", "ours", 8);
    let ours = reg.reference("simple", "ours");
    let s = ok(&mut olmpack(
        d,
        &[
            "sign",
            &ours,
            "--gpg-key",
            "one.sec.asc",
            "--registries-d",
            rd_s,
        ],
    ));
    assert!(s.contains("signature-1"), "{s}");
    assert!(
        store
            .join(format!("simple@sha256={}/signature-1", &digest[7..]))
            .is_file(),
        "containers/image's lookaside layout"
    );
    let (accepted, why) = skopeo_accepts(d, &ours, &p_one, &rd);
    assert!(accepted, "skopeo accepts olmpack's signature: {why}");
    let (accepted, why) = skopeo_accepts(d, &ours, &p_two, &rd);
    assert!(!accepted, "skopeo refuses it under another key");
    assert!(why.contains("Source image rejected"), "{why}");

    // By fingerprint, from the GnuPG home: a second signature, signature-2.
    ok(olmpack(
        d,
        &[
            "sign",
            &ours,
            "--gpg-key",
            &gpg.fprs[1],
            "--registries-d",
            rd_s,
        ],
    )
    .env("GNUPGHOME", gpg.home.path()));
    assert!(
        store
            .join(format!("simple@sha256={}/signature-2", &digest[7..]))
            .is_file()
    );
    let (accepted, why) = skopeo_accepts(d, &ours, &p_two, &rd);
    assert!(accepted, "skopeo accepts the second signature: {why}");
    let v = ok(&mut olmpack(
        d,
        &[
            "verify",
            &ours,
            "--gpg-keyring",
            "two.gpg",
            "--registries-d",
            rd_s,
        ],
    ));
    assert!(v.contains("verified (simple)"), "{v}");
}

#[test]
fn simple_signing_tampering_matrix_is_refused_by_olmpack_and_skopeo() {
    let reg = Registry::start(Mode::Plain);
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    let gpg = Gpg::new();
    let (rd, store) = registries_d(d);
    gpg.export(0, &d.join("one.gpg"));
    let p_one = policy(d, "policy-one.json", &reg.host, &d.join("one.gpg"));
    let rd_s = rd.to_str().expect("utf8");
    let payload = |identity: &str, digest: &str, typ: &str| {
        serde_json::to_vec(&serde_json::json!({
            "critical": {"type": typ, "image": {"docker-manifest-digest": digest}, "identity": {"docker-reference": identity}},
            "optional": {"creator": "test"}
        }))
        .expect("json")
    };
    const ATOMIC: &str = "atomic container signature";
    let other = push(&reg, d, "tm", "other", 99);
    let mut ran = 0;
    // (case, reason olmpack gives, how to make signature-1 for (reference, digest))
    type Make<'a> = Box<dyn Fn(&str, &str) -> Vec<u8> + 'a>;
    let cases: Vec<(&str, &str, Make)> = vec![
        (
            "changed payload",
            // A specific reason: an empty one matched every output (issue 39). The signature
            // names a key of the keyring that does not verify it: tampered, not a wrong key
            // (GnuPG says "BAD signature" too; issue 41 item 9).
            "the signed payload or the signature was altered after signing",
            Box::new(|r: &str, dg: &str| {
                // Signed uncompressed, so the literal data is in the clear: one byte of the
                // signed JSON is changed (the payload still parses), and only the OpenPGP
                // signature can tell.
                let input = d.join("payload-plain.json");
                std::fs::write(&input, payload(r, dg, ATOMIC)).expect("write");
                let output = d.join("payload-plain.sig");
                let _ = std::fs::remove_file(&output);
                ok(gpg
                    .cmd()
                    .args([
                        "--yes",
                        "--compress-algo",
                        "none",
                        "--local-user",
                        &gpg.fprs[0],
                    ])
                    .arg("--output")
                    .arg(&output)
                    .arg("--sign")
                    .arg(&input));
                let mut sig = std::fs::read(&output).expect("read sig");
                let at = sig
                    .windows(7)
                    .position(|w| w == b"\"test\"}")
                    .expect("the literal data is in the clear");
                sig[at + 1] = b'T';
                sig
            }),
        ),
        (
            "changed digest in payload",
            "digest mismatch",
            Box::new(|r: &str, _dg: &str| gpg.sign(0, &payload(r, &other, ATOMIC), d)),
        ),
        (
            "changed identity",
            "identity mismatch",
            Box::new(|_r: &str, dg: &str| {
                gpg.sign(
                    0,
                    &payload(&format!("{}/elsewhere:v1", reg.host), dg, ATOMIC),
                    d,
                )
            }),
        ),
        (
            "truncated signature",
            "malformed",
            Box::new(|r: &str, dg: &str| {
                let sig = gpg.sign(0, &payload(r, dg, ATOMIC), d);
                sig[..sig.len() / 2].to_vec()
            }),
        ),
        (
            "wrong key",
            "wrong key",
            Box::new(|r: &str, dg: &str| gpg.sign(1, &payload(r, dg, ATOMIC), d)),
        ),
        (
            "wrong type (cosign's payload type)",
            "critical.type",
            Box::new(|r: &str, dg: &str| {
                gpg.sign(0, &payload(r, dg, "cosign container image signature"), d)
            }),
        ),
    ];
    for (i, (case, reason, make)) in cases.iter().enumerate() {
        let tag = format!("c{i}");
        let digest = push(&reg, d, "tm", &tag, i + 20);
        let reference = reg.reference("tm", &tag);
        let sig = make(&reference, &digest);
        let dir = store.join(format!("tm@sha256={}", &digest[7..]));
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(dir.join("signature-1"), sig).expect("write");
        let o = out(&mut olmpack(
            d,
            &[
                "verify",
                &reference,
                "--gpg-keyring",
                "one.gpg",
                "--registries-d",
                rd_s,
            ],
        ));
        assert_eq!(code(&o), 1, "{case}: {}", text(&o));
        assert!(
            text(&o).contains("refused (simple)"),
            "{case}: {}",
            text(&o)
        );
        assert!(
            text(&o).contains(reason),
            "{case}: expected {reason:?}: {}",
            text(&o)
        );
        let (accepted, why) = skopeo_accepts(d, &reference, &p_one, &rd);
        assert!(!accepted, "{case}: skopeo must refuse too: {why}");
        assert!(why.contains("Source image rejected"), "{case}: {why}");
        ran += 1;
    }
    // A valid signature of image A moved to image B.
    let a = push(&reg, d, "tm", "moved-a", 40);
    let b = push(&reg, d, "tm", "moved-b", 41);
    let ref_b = reg.reference("tm", "moved-b");
    let sig = gpg.sign(0, &payload(&reg.reference("tm", "moved-a"), &a, ATOMIC), d);
    let dir = store.join(format!("tm@sha256={}", &b[7..]));
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join("signature-1"), sig).expect("write");
    let o = out(&mut olmpack(
        d,
        &[
            "verify",
            &ref_b,
            "--gpg-keyring",
            "one.gpg",
            "--registries-d",
            rd_s,
        ],
    ));
    assert_eq!(code(&o), 1, "moved: {}", text(&o));
    assert!(text(&o).contains("digest mismatch"), "moved: {}", text(&o));
    let (accepted, why) = skopeo_accepts(d, &ref_b, &p_one, &rd);
    assert!(!accepted, "moved: skopeo must refuse too: {why}");
    assert!(why.contains("Source image rejected"), "moved: {why}");
    ran += 1;
    assert_eq!(ran, 7, "every tampering case ran");
}

#[test]
fn policy_json_gates_every_read() {
    let reg = Registry::start(Mode::Plain);
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    let gpg = Gpg::new();
    let (rd, store) = registries_d(d);
    gpg.export(0, &d.join("one.gpg"));
    gpg.export_secret(0, &d.join("one.sec.asc"));
    ok(&mut olmpack(
        d,
        &["key", "generate", "--output-key-prefix", "c"],
    ));
    let rd_s = rd.to_str().expect("utf8");
    let host = reg.host.clone();
    push(&reg, d, "pol", "signed", 1);
    push(&reg, d, "pol", "unsigned", 2);
    push(&reg, d, "open", "v1", 3);
    push(&reg, d, "cos", "v1", 4);
    ok(&mut olmpack(
        d,
        &[
            "sign",
            &reg.reference("pol", "signed"),
            "--gpg-key",
            "one.sec.asc",
            "--registries-d",
            rd_s,
        ],
    ));
    ok(&mut olmpack(
        d,
        &[
            "sign",
            &reg.reference("cos", "v1"),
            "--key",
            "c.key",
            "--format",
            "legacy",
        ],
    ));
    let policy = serde_json::json!({
        "default": [{"type": "reject"}],
        "transports": {"docker": {
            format!("{host}/pol"): [{"type": "signedBy", "keyType": "GPGKeys", "keyPath": d.join("one.gpg")}],
            format!("{host}/open"): [{"type": "insecureAcceptAnything"}],
            format!("{host}/cos"): [{"type": "sigstoreSigned", "keyPath": d.join("c.pub"), "signedIdentity": {"type": "matchRepository"}}],
        }}
    });
    std::fs::write(
        d.join("policy.json"),
        serde_json::to_vec(&policy).expect("json"),
    )
    .expect("write");
    let inspect = |image: &str| {
        out(olmpack(
            d,
            &[
                "bundle",
                "inspect",
                image,
                "--policy",
                "policy.json",
                "--no-files",
            ],
        )
        .env("OLMPACK_REGISTRIES_D", &rd))
    };
    let o = inspect(&reg.reference("pol", "signed"));
    assert!(o.status.success(), "signedBy passes: {}", text(&o));
    let o = inspect(&reg.reference("open", "v1"));
    assert!(
        o.status.success(),
        "insecureAcceptAnything passes: {}",
        text(&o)
    );
    let o = inspect(&reg.reference("pol", "unsigned"));
    assert_eq!(code(&o), 1, "{}", text(&o));
    let msg = text(&o);
    assert!(
        msg.contains(&reg.reference("pol", "unsigned"))
            && msg.contains("signedBy")
            && msg.contains("no signature found"),
        "{msg}"
    );
    // A signature that is present but invalid is no signature: one by a key the policy does
    // not trust, and one by the trusted key with its bytes tampered with (issue 39: "any
    // present signature satisfies the policy" must fail this test).
    push(&reg, d, "pol", "wrongkey", 5);
    let tampered_digest = push(&reg, d, "pol", "tampered", 6);
    gpg.export_secret(1, &d.join("two.sec.asc"));
    for (tag, key) in [("wrongkey", "two.sec.asc"), ("tampered", "one.sec.asc")] {
        ok(&mut olmpack(
            d,
            &[
                "sign",
                &reg.reference("pol", tag),
                "--gpg-key",
                key,
                "--registries-d",
                rd_s,
            ],
        ));
    }
    let sig_dir = std::fs::read_dir(&store)
        .expect("store")
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.to_string_lossy()
                .ends_with(tampered_digest.trim_start_matches("sha256:"))
        })
        .expect("the tampered image's signature folder");
    let sig_file = sig_dir.join("signature-1");
    let mut sig = std::fs::read(&sig_file).expect("signature");
    let mid = sig.len() / 2;
    sig[mid] ^= 0x01;
    std::fs::write(&sig_file, sig).expect("tamper");
    for tag in ["wrongkey", "tampered"] {
        let o = inspect(&reg.reference("pol", tag));
        assert_eq!(code(&o), 1, "{tag}: {}", text(&o));
        let msg = text(&o);
        assert!(
            msg.contains("signedBy") && !msg.contains("no signature found"),
            "{tag}: {msg}"
        );
    }
    // The default rule rejects before anything is sent: a host that does not exist is refused
    // by the policy, not by a connection error.
    let o = inspect("registry.nowhere.invalid/x/y:v1");
    assert_eq!(code(&o), 1, "{}", text(&o));
    assert!(text(&o).contains("rule default reject"), "{}", text(&o));
    // sigstoreSigned needs use-sigstore-attachments, as in containers/image.
    let o = inspect(&reg.reference("cos", "v1"));
    assert_eq!(code(&o), 1, "{}", text(&o));
    assert!(
        text(&o).contains("use-sigstore-attachments"),
        "{}",
        text(&o)
    );
    std::fs::write(
        rd.join("zz-attach.yaml"),
        format!("docker:\n  {host}/cos:\n    use-sigstore-attachments: true\n"),
    )
    .expect("write");
    let o = inspect(&reg.reference("cos", "v1"));
    assert!(o.status.success(), "sigstoreSigned passes: {}", text(&o));
    // OLMPACK_POLICY, and bundle pull leaves nothing behind when refused.
    let o = out(olmpack(
        d,
        &[
            "bundle",
            "pull",
            &reg.reference("pol", "unsigned"),
            "pulled",
        ],
    )
    .env("OLMPACK_POLICY", d.join("policy.json"))
    .env("OLMPACK_REGISTRIES_D", &rd));
    assert_eq!(code(&o), 1, "{}", text(&o));
    assert!(!d.join("pulled").exists());
    // An invalid policy is an error (2) naming the file.
    std::fs::write(d.join("bad.json"), b"{").expect("write");
    let o = out(&mut olmpack(
        d,
        &[
            "bundle",
            "inspect",
            &reg.reference("open", "v1"),
            "--policy",
            "bad.json",
        ],
    ));
    assert_eq!(code(&o), 2, "{}", text(&o));
    assert!(text(&o).contains("bad.json"), "{}", text(&o));
}

#[test]
fn build_push_signs_what_it_pushes() {
    let reg = Registry::start(Mode::Plain);
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    ok(&mut olmpack(
        d,
        &["key", "generate", "--output-key-prefix", "c"],
    ));
    let bundle = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/bundles/valid-basic");
    let image = reg.reference("built/bundle", "v1");
    let o = out(&mut olmpack(
        d,
        &[
            "bundle",
            "build",
            bundle.to_str().expect("utf8"),
            "-t",
            &image,
            "--push",
            "--sign-key",
            "c.key",
            "--signature-format",
            "legacy",
        ],
    ));
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("signed sha256:"),
        "{}",
        text(&o)
    );
    let v = ok(&mut olmpack(d, &["verify", &image, "--key", "c.pub"]));
    assert!(v.contains("cosign container image signature"), "{v}");
    // A wrong passphrase stops the build before anything is pushed.
    let other = reg.reference("built/never", "v1");
    let o = out(olmpack(
        d,
        &[
            "bundle",
            "build",
            bundle.to_str().expect("utf8"),
            "-t",
            &other,
            "--push",
            "--sign-key",
            "c.key",
            "--signature-format",
            "legacy",
        ],
    )
    .env("COSIGN_PASSWORD", "wrong"));
    assert_eq!(code(&o), 2, "{}", text(&o));
    assert!(text(&o).contains("wrong passphrase"), "{}", text(&o));
    let probe = out(tool("skopeo").args([
        "inspect",
        "--raw",
        "--tls-verify=false",
        &format!("docker://{other}"),
    ]));
    assert!(!probe.status.success(), "nothing was pushed");
    // Signing without --push is refused.
    let o = out(&mut olmpack(
        d,
        &[
            "bundle",
            "build",
            bundle.to_str().expect("utf8"),
            "--sign-key",
            "c.key",
        ],
    ));
    assert_eq!(code(&o), 2, "{}", text(&o));
    // catalog build --push with simple signing by a key file.
    let gpg = Gpg::new();
    gpg.export(0, &d.join("one.gpg"));
    gpg.export_secret(0, &d.join("one.sec.asc"));
    let (rd, _store) = registries_d(d);
    let rd_s = rd.to_str().expect("utf8");
    let catalog = d.join("catalog/pkg");
    std::fs::create_dir_all(&catalog).expect("mkdir");
    std::fs::write(
        catalog.join("catalog.json"),
        br#"{"schema":"olm.package","name":"pkg","defaultChannel":"stable"}
{"schema":"olm.channel","package":"pkg","name":"stable","entries":[{"name":"pkg.v1.0.0"}]}
{"schema":"olm.bundle","package":"pkg","name":"pkg.v1.0.0","image":"quay.io/x/pkg-bundle:v1.0.0","properties":[{"type":"olm.package","value":{"packageName":"pkg","version":"1.0.0"}}]}
"#,
    )
    .expect("write");
    let cat_image = reg.reference("built/catalog", "v1");
    let o = out(&mut olmpack(
        d,
        &[
            "catalog",
            "build",
            "catalog",
            "--no-validate",
            "-t",
            &cat_image,
            "--push",
            "--gpg-key",
            "one.sec.asc",
            "--registries-d",
            rd_s,
        ],
    ));
    assert!(o.status.success(), "{}", text(&o));
    let p_one = policy(d, "policy-one.json", &reg.host, &d.join("one.gpg"));
    let (accepted, why) = skopeo_accepts(d, &cat_image, &p_one, &rd);
    assert!(accepted, "skopeo accepts the signed catalog image: {why}");
}

/// Signing is the last delivery step (issue 42 item 4): `bundle build --push --sign-key` signs
/// the digest it has just pushed, without asking the registry again what the tag points at (a
/// second read would be wasted at best, and at worst would sign whatever the tag was moved to
/// in between). Counted through the proxy: after the manifest PUT, no manifest of the pushed
/// tag is read again.
#[test]
fn build_push_signs_the_pushed_digest_without_reading_it_back() {
    use crate::support::registry::{Fault, Proxy};
    let reg = Registry::start(Mode::Plain);
    let proxy = Proxy::start(reg.port, |_, _| Fault::Pass);
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    ok(&mut olmpack(
        d,
        &["key", "generate", "--output-key-prefix", "c"],
    ));
    let bundle = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/bundles/valid-basic");
    let image = format!("{}/built/bundle:v1", proxy.host());
    let o = out(&mut olmpack(
        d,
        &[
            "bundle",
            "build",
            bundle.to_str().expect("utf8"),
            "-t",
            &image,
            "--push",
            "--sign-key",
            "c.key",
            "--signature-format",
            "legacy",
        ],
    ));
    assert!(o.status.success(), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout).to_string();
    let digest = stdout
        .split_whitespace()
        .next()
        .expect("a digest line")
        .to_string();
    assert!(
        String::from_utf8_lossy(&o.stderr).contains(&format!("signed {digest} (cosign)")),
        "{}",
        text(&o)
    );
    let seen = proxy.seen();
    let put = seen
        .iter()
        .position(|s| s.method == "PUT" && s.path == "/v2/built/bundle/manifests/v1")
        .expect("the manifest was pushed through the proxy");
    let read_back: Vec<String> = seen[put + 1..]
        .iter()
        .filter(|s| {
            (s.method == "GET" || s.method == "HEAD")
                && (s.path.ends_with("/manifests/v1")
                    || s.path.ends_with(&format!("/manifests/{digest}")))
        })
        .map(|s| format!("{} {}", s.method, s.path))
        .collect();
    assert!(
        read_back.is_empty(),
        "the pushed manifest was read again to sign it: {read_back:?}"
    );
    // The signature verifies against the digest printed.
    let v = ok(&mut olmpack(d, &["verify", &image, "--key", "c.pub"]));
    assert!(v.contains(&digest), "{v}");
}
