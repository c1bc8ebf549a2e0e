//! The cryptographic checks of `olmpack verify` against independent references (issue 39 items
//! 3, 10, 11, 12): OpenPGP keys made with GnuPG in every state a key can be in (revoked,
//! expired, with an expired signature, a revoked subkey, a foreign subkey appended to the
//! trusted file), each judged by olmpack, by gpg itself and by skopeo (containers/image with
//! gpgme); strict payloads against skopeo; bounded lookaside and `.sig` walks against crafted
//! servers; cosign keys on other curves against the Python cosign implementation.

use crate::support::gpg::GpgHome;
use crate::support::registry::{Mode, Registry};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const PY: &str = "/usr/bin/python3";
const ATOMIC: &str = "atomic container signature";

use super::signing::{code, ok, olmpack, out, push, py, text, tool};

/// registries.d naming one lookaside store (a `file://` folder or an `http://` URL).
fn registries_d(d: &Path, name: &str, store: &str) -> PathBuf {
    let rd = d.join(name);
    std::fs::create_dir_all(&rd).expect("mkdir");
    std::fs::write(
        rd.join("default.yaml"),
        format!("default-docker:\n  lookaside: {store}\n  use-sigstore-attachments: true\n"),
    )
    .expect("write");
    rd
}

/// A policy trusting `keyring` for `host`, everything else rejected.
fn policy(d: &Path, name: &str, host: &str, keyring: &Path) -> PathBuf {
    let p = d.join(name);
    let v = serde_json::json!({
        "default": [{"type": "reject"}],
        "transports": {"docker": {host: [{"type": "signedBy", "keyType": "GPGKeys", "keyPath": keyring}]}}
    });
    std::fs::write(&p, serde_json::to_vec_pretty(&v).expect("json")).expect("write");
    p
}

/// `skopeo copy` of a registry image under `policy`: whether containers/image accepts it.
fn skopeo_accepts(d: &Path, image: &str, policy: &Path, rd: &Path) -> (bool, String) {
    let dest = d.join(format!("copy-{}", image.replace(['/', ':'], "_")));
    let o = out(tool("skopeo").args([
        "--policy",
        policy.to_str().expect("utf8"),
        "--registries.d",
        rd.to_str().expect("utf8"),
        "copy",
        "--quiet",
        "--remove-signatures",
        "--src-tls-verify=false",
        &format!("docker://{image}"),
        &format!("oci:{}:x", dest.display()),
    ]));
    (o.status.success(), text(&o))
}

fn payload(identity: &str, digest: &str) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "critical": {"type": ATOMIC, "image": {"docker-manifest-digest": digest}, "identity": {"docker-reference": identity}},
        "optional": {"creator": "test"}
    }))
    .expect("json")
}

/// A throwaway GnuPG home.
struct Gpg {
    home: GpgHome,
}

impl Gpg {
    fn new() -> Gpg {
        Gpg {
            home: GpgHome::new(),
        }
    }

    fn cmd(&self) -> Command {
        let mut c = tool("gpg");
        c.env("GNUPGHOME", self.home.path())
            .args(["--batch", "--quiet", "--passphrase", ""]);
        c
    }

    /// Fingerprints of `uid`'s key: primary first, then subkeys.
    fn fprs(&self, uid: &str) -> Vec<String> {
        ok(self.cmd().args([
            "--with-colons",
            "--with-subkey-fingerprints",
            "--list-keys",
            uid,
        ]))
        .lines()
        .filter(|l| l.starts_with("fpr:"))
        .filter_map(|l| l.split(':').nth(9).map(str::to_string))
        .collect()
    }

    /// A new ed25519 key; `faked` runs gpg at that time (`--faked-system-time`).
    fn new_key(&self, uid: &str, usage: &str, expire: &str, faked: Option<&str>) -> String {
        let mut c = self.cmd();
        if let Some(t) = faked {
            c.args(["--faked-system-time", t]);
        }
        ok(c.args(["--quick-gen-key", uid, "ed25519", usage, expire]));
        self.fprs(uid)[0].clone()
    }

    fn add_signing_subkey(&self, fpr: &str) -> String {
        ok(self
            .cmd()
            .args(["--quick-add-key", fpr, "ed25519", "sign", "never"]));
        self.fprs(fpr)[1].clone()
    }

    fn sign(&self, key: &str, payload: &[u8], dir: &Path, extra: &[&str]) -> Vec<u8> {
        let input = dir.join("payload.json");
        std::fs::write(&input, payload).expect("write");
        let output = dir.join("payload.sig");
        let _ = std::fs::remove_file(&output);
        ok(self
            .cmd()
            .args(extra)
            .args(["--yes", "--local-user", key, "--output"])
            .arg(&output)
            .arg("--sign")
            .arg(&input));
        std::fs::read(&output).expect("read sig")
    }

    fn export(&self, fpr: &str) -> Vec<u8> {
        out(self.cmd().args(["--export", fpr])).stdout
    }

    /// Revokes the primary key with the revocation certificate gpg made with it.
    fn revoke(&self, fpr: &str) {
        let rev = self.home.path().join(format!("openpgp-revocs.d/{fpr}.rev"));
        let cert = std::fs::read_to_string(&rev)
            .expect("revocation certificate")
            .replace(":-----BEGIN", "-----BEGIN");
        let file = self.home.path().join("rev.asc");
        std::fs::write(&file, cert).expect("write");
        ok(self.cmd().arg("--import").arg(&file));
    }

    /// Revokes subkey number 1 of `fpr` (gpg --edit-key, answers on the command fd).
    fn revoke_subkey(&self, fpr: &str) {
        let mut child = self
            .cmd()
            .args(["--command-fd", "0", "--status-fd", "2", "--edit-key", fpr])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("gpg");
        use std::io::Write as _;
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(b"key 1\nrevkey\ny\n0\n\ny\nsave\n")
            .expect("answers");
        assert!(child.wait().expect("gpg").success(), "revkey");
    }
}

/// The packets of a binary OpenPGP export from the first subkey on (the subkey and its
/// binding signature): what an attacker appends to someone else's key file.
fn subkey_packets(export: &[u8]) -> Vec<u8> {
    let mut at = 0;
    while at < export.len() {
        let ctb = export[at];
        let (tag, header, len) = if ctb & 0x40 == 0 {
            let n = [1usize, 2, 4][usize::from(ctb & 3)];
            let len = export[at + 1..at + 1 + n]
                .iter()
                .fold(0usize, |a, b| (a << 8) | usize::from(*b));
            ((ctb >> 2) & 0xf, 1 + n, len)
        } else {
            let o1 = usize::from(export[at + 1]);
            match o1 {
                0..=191 => (ctb & 0x3f, 2, o1),
                192..=223 => (
                    ctb & 0x3f,
                    3,
                    ((o1 - 192) << 8) + usize::from(export[at + 2]) + 192,
                ),
                _ => panic!("unexpected packet length"),
            }
        };
        if tag == 14 {
            return export[at..].to_vec();
        }
        at += header + len;
    }
    panic!("no subkey packet")
}

/// gpg's own verdict: a fresh home with only `keyring` imported, then `--verify`; good means a
/// plain GOODSIG (not EXPKEYSIG, REVKEYSIG, EXPSIG or no signature at all).
fn gpg_says_good(keyring: &Path, sig: &[u8]) -> (bool, String) {
    let g = Gpg::new();
    let _ = out(g.cmd().arg("--import").arg(keyring));
    let file = g.home.path().join("sig");
    std::fs::write(&file, sig).expect("write");
    let o = out(g.cmd().args(["--status-fd", "1", "--verify"]).arg(&file));
    let status = String::from_utf8_lossy(&o.stdout).to_string();
    (
        status.lines().any(|l| l.starts_with("[GNUPG:] GOODSIG")),
        status,
    )
}

fn store_signature(store: &Path, repo: &str, digest: &str, sig: &[u8]) {
    let dir = store.join(format!("{repo}@sha256={}", &digest[7..]));
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join("signature-1"), sig).expect("write");
}

#[test]
fn openpgp_key_states_are_judged_as_gnupg_and_skopeo_judge_them() {
    let reg = Registry::start(Mode::Plain);
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    let store = d.join("sigstore");
    std::fs::create_dir_all(&store).expect("mkdir");
    let rd = registries_d(d, "registries.d", &format!("file://{}", store.display()));
    let rd_s = rd.to_str().expect("utf8").to_string();
    let g = Gpg::new();

    // (case, expected reason; "" = accepted, what the key file holds and the signature).
    type Make<'a> = Box<dyn Fn(&[u8]) -> (Vec<u8>, Vec<u8>) + 'a>;
    let cases: Vec<(&str, &str, Make)> = vec![
        (
            "valid key",
            "",
            Box::new(|p: &[u8]| {
                let k = g.new_key("Valid <valid@example.invalid>", "sign", "never", None);
                (g.export(&k), g.sign(&k, p, d, &[]))
            }),
        ),
        (
            "revoked key",
            "is revoked",
            Box::new(|p: &[u8]| {
                let k = g.new_key("Revoked <revoked@example.invalid>", "sign", "never", None);
                let sig = g.sign(&k, p, d, &[]);
                g.revoke(&k);
                (g.export(&k), sig)
            }),
        ),
        (
            "expired key",
            "expired on 2020-01-02",
            Box::new(|p: &[u8]| {
                let k = g.new_key(
                    "Expired <expired@example.invalid>",
                    "sign",
                    "1d",
                    Some("20200101T000000"),
                );
                let sig = g.sign(&k, p, d, &["--faked-system-time", "20200101T120000"]);
                (g.export(&k), sig)
            }),
        ),
        (
            "expired signature",
            "the signature expired on 2020-01-02",
            Box::new(|p: &[u8]| {
                let k = g.new_key(
                    "Old <old@example.invalid>",
                    "sign",
                    "never",
                    Some("20200101T000000"),
                );
                let sig = g.sign(
                    &k,
                    p,
                    d,
                    &[
                        "--faked-system-time",
                        "20200101T120000",
                        "--default-sig-expire",
                        "1d",
                    ],
                );
                (g.export(&k), sig)
            }),
        ),
        (
            "signature expiring next year",
            "",
            Box::new(|p: &[u8]| {
                let k = g.new_key("Fresh <fresh@example.invalid>", "sign", "never", None);
                let sig = g.sign(&k, p, d, &["--default-sig-expire", "1y"]);
                (g.export(&k), sig)
            }),
        ),
        (
            "signing subkey",
            "",
            Box::new(|p: &[u8]| {
                let k = g.new_key("Sub <sub@example.invalid>", "cert", "never", None);
                let s = g.add_signing_subkey(&k);
                (g.export(&k), g.sign(&format!("{s}!"), p, d, &[]))
            }),
        ),
        (
            "revoked subkey",
            "is revoked",
            Box::new(|p: &[u8]| {
                let k = g.new_key("RevSub <revsub@example.invalid>", "cert", "never", None);
                let s = g.add_signing_subkey(&k);
                let sig = g.sign(&format!("{s}!"), p, d, &[]);
                g.revoke_subkey(&k);
                (g.export(&k), sig)
            }),
        ),
        (
            "foreign subkey appended to the trusted key file",
            "is not bound to the key",
            Box::new(|p: &[u8]| {
                let genuine = g.new_key("Genuine <genuine@example.invalid>", "sign", "never", None);
                let attacker =
                    g.new_key("Mallory <mallory@example.invalid>", "cert", "never", None);
                let s = g.add_signing_subkey(&attacker);
                let sig = g.sign(&format!("{s}!"), p, d, &[]);
                let mut ring = g.export(&genuine);
                ring.extend(subkey_packets(&g.export(&attacker)));
                (ring, sig)
            }),
        ),
    ];
    let mut ran = 0;
    for (i, (case, reason, make)) in cases.iter().enumerate() {
        let tag = format!("k{i}");
        let digest = push(&reg, d, "kv", &tag, i + 50);
        let reference = reg.reference("kv", &tag);
        let (ring, sig) = make(&payload(&reference, &digest));
        let keyring = d.join(format!("ring-{i}.gpg"));
        std::fs::write(&keyring, &ring).expect("write");
        store_signature(&store, "kv", &digest, &sig);
        let o = out(&mut olmpack(
            d,
            &[
                "verify",
                &reference,
                "--gpg-keyring",
                keyring.to_str().expect("utf8"),
                "--registries-d",
                &rd_s,
            ],
        ));
        let (gpg_good, status) = gpg_says_good(&keyring, &sig);
        let p = policy(d, &format!("policy-{i}.json"), &reg.host, &keyring);
        let (skopeo_ok, why) = skopeo_accepts(d, &reference, &p, &rd);
        if reason.is_empty() {
            assert_eq!(code(&o), 0, "{case}: olmpack must accept: {}", text(&o));
            assert!(gpg_good, "{case}: gpg must call it good: {status}");
            // skopeo 1.9.3 (Debian 12) predates containers/image mapping a signing subkey to
            // its primary key (`keyIdentityForVerificationKeyIdentity`, which upstream's
            // "Successful verification using a subkey" case tests), so it refuses every
            // subkey signature by the subkey's fingerprint; gpg is the reference there.
            let old_skopeo_subkey = case.contains("subkey") && why.contains("is not accepted");
            assert!(
                skopeo_ok || old_skopeo_subkey,
                "{case}: skopeo must accept: {why}"
            );
        } else {
            assert_eq!(code(&o), 1, "{case}: olmpack must refuse: {}", text(&o));
            assert!(
                text(&o).contains("key not valid: ") && text(&o).contains(reason),
                "{case}: expected key not valid: …{reason}…: {}",
                text(&o)
            );
            assert!(!gpg_good, "{case}: gpg must not call it good: {status}");
            assert!(!skopeo_ok, "{case}: skopeo must refuse: {why}");
            assert!(why.contains("Source image rejected"), "{case}: {why}");
        }
        ran += 1;
    }
    assert_eq!(ran, 8, "every key state ran");
}

#[test]
fn loose_payloads_are_refused_as_skopeo_refuses_them() {
    let reg = Registry::start(Mode::Plain);
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    let store = d.join("sigstore");
    std::fs::create_dir_all(&store).expect("mkdir");
    let rd = registries_d(d, "registries.d", &format!("file://{}", store.display()));
    let rd_s = rd.to_str().expect("utf8").to_string();
    let g = Gpg::new();
    let k = g.new_key("Payload <payload@example.invalid>", "sign", "never", None);
    let keyring = d.join("ring.gpg");
    std::fs::write(&keyring, g.export(&k)).expect("write");
    let p = policy(d, "policy.json", &reg.host, &keyring);
    let other = format!("sha256:{}", "0".repeat(64));
    // (case, reason, payload text for (identity, digest)).
    type Text = fn(&str, &str, &str) -> String;
    let cases: Vec<(&str, &str, Text)> = vec![
        (
            "duplicate digest (the last one is the image's)",
            "duplicate key",
            |r, dg, other| {
                format!(
                    r#"{{"critical":{{"type":"{ATOMIC}","image":{{"docker-manifest-digest":"{other}","docker-manifest-digest":"{dg}"}},"identity":{{"docker-reference":"{r}"}}}},"optional":{{}}}}"#
                )
            },
        ),
        (
            "unknown member in critical.image",
            "unknown member",
            |r, dg, _| {
                format!(
                    r#"{{"critical":{{"type":"{ATOMIC}","image":{{"docker-manifest-digest":"{dg}","extra":1}},"identity":{{"docker-reference":"{r}"}}}},"optional":{{}}}}"#
                )
            },
        ),
        ("unknown top-level member", "unknown member", |r, dg, _| {
            format!(
                r#"{{"critical":{{"type":"{ATOMIC}","image":{{"docker-manifest-digest":"{dg}"}},"identity":{{"docker-reference":"{r}"}}}},"optional":{{}},"extra":{{}}}}"#
            )
        }),
        ("missing optional", "no \"optional\" member", |r, dg, _| {
            format!(
                r#"{{"critical":{{"type":"{ATOMIC}","image":{{"docker-manifest-digest":"{dg}"}},"identity":{{"docker-reference":"{r}"}}}}}}"#
            )
        }),
        (
            "member name in another case",
            "unknown member",
            |r, dg, _| {
                format!(
                    r#"{{"Critical":{{"type":"{ATOMIC}","image":{{"docker-manifest-digest":"{dg}"}},"identity":{{"docker-reference":"{r}"}}}},"optional":{{}}}}"#
                )
            },
        ),
    ];
    for (i, (case, reason, make)) in cases.iter().enumerate() {
        let tag = format!("p{i}");
        let digest = push(&reg, d, "pl", &tag, i + 70);
        let reference = reg.reference("pl", &tag);
        let sig = g.sign(&k, make(&reference, &digest, &other).as_bytes(), d, &[]);
        store_signature(&store, "pl", &digest, &sig);
        let o = out(&mut olmpack(
            d,
            &[
                "verify",
                &reference,
                "--gpg-keyring",
                keyring.to_str().expect("utf8"),
                "--registries-d",
                &rd_s,
            ],
        ));
        assert_eq!(code(&o), 1, "{case}: olmpack must refuse: {}", text(&o));
        assert!(
            text(&o).contains("malformed: payload: ") && text(&o).contains(reason),
            "{case}: expected {reason:?}: {}",
            text(&o)
        );
        let (accepted, why) = skopeo_accepts(d, &reference, &p, &rd);
        assert!(!accepted, "{case}: skopeo refuses it too: {why}");
    }
}

/// A lookaside web server that offers endless small signatures (`many`) or one 5 MiB
/// signature (`big`), counting requests in a file; it stops by itself after a minute and is
/// killed on drop.
struct Lookaside {
    child: std::process::Child,
    port: u16,
    count: PathBuf,
}

impl Drop for Lookaside {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const LOOKASIDE_PY: &str = r#"
import http.server, sys, time
mode, count_file = sys.argv[1], sys.argv[2]
n = 0
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass
    def do_GET(self):
        global n
        n += 1
        open(count_file, "w").write(str(n))
        first = self.path.endswith("/signature-1")
        if mode == "many" or first:
            body = b"x" * (5 * 1024 * 1024 + 1 if mode == "big" else 100)
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        else:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
srv = http.server.HTTPServer(("127.0.0.1", 0), H)
srv.timeout = 1
print(srv.server_address[1], flush=True)
end = time.time() + 60
while time.time() < end:
    srv.handle_request()
"#;

impl Lookaside {
    fn start(mode: &str, dir: &Path) -> Lookaside {
        use std::io::BufRead as _;
        let count = dir.join(format!("count-{mode}"));
        let mut child = tool(PY)
            .args(["-c", LOOKASIDE_PY, mode])
            .arg(&count)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("python");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("port");
        let port = line.trim().parse().expect("port number");
        Lookaside { child, port, count }
    }

    fn requests(&self) -> usize {
        std::fs::read_to_string(&self.count)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0)
    }
}

#[test]
fn lookaside_and_sig_walks_are_bounded() {
    let reg = Registry::start(Mode::Plain);
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    let g = Gpg::new();
    let k = g.new_key("Bound <bound@example.invalid>", "sign", "never", None);
    std::fs::write(d.join("ring.gpg"), g.export(&k)).expect("write");
    push(&reg, d, "bound", "v1", 90);
    let reference = reg.reference("bound", "v1");

    // `verify` through a lookaside server in `mode` (registries.d `rd-MODE`): refused with
    // `exit`; the server (to count its requests) and what was said. The store's URL carries
    // user-info and a query token, which nothing said may repeat.
    const SECRET: &str = "LoOkAsIdE-pw";
    let refused_through_with = |mode: &str, exit: i32| {
        let server = Lookaside::start(mode, d);
        let url = format!("http://reader:{SECRET}@127.0.0.1:{}", server.port);
        let rd = registries_d(d, &format!("rd-{mode}"), &url);
        let o = out(&mut olmpack(
            d,
            &[
                "verify",
                &reference,
                "--gpg-keyring",
                "ring.gpg",
                "--registries-d",
                rd.to_str().expect("utf8"),
            ],
        ));
        assert_eq!(code(&o), exit, "{mode}: {}", text(&o));
        assert!(!text(&o).contains(SECRET), "{mode}: {}", text(&o));
        (server, text(&o))
    };
    let refused_through = |mode: &str| refused_through_with(mode, 2);

    // One signature that is not one: refused as such (exit 1), naming the store's URL without
    // its user-info.
    let (_junk, said) = refused_through_with("junk", 1);
    assert!(said.contains("http://127.0.0.1:"), "{said}");

    // Endless signatures: read up to containers/image's 128, then an error (exit 2).
    let (many, said) = refused_through("many");
    assert!(said.contains("more than 128 signatures"), "{said}");
    assert!(
        many.requests() <= 129,
        "read {} signatures",
        many.requests()
    );

    // One signature over 4 MiB: an error naming the limit, not a truncated signature.
    let (_big, said) = refused_through("big");
    assert!(said.contains("larger than 4 MiB"), "{said}");

    // A cosign .sig manifest listing 2000 copies of a valid signature: refused whole, not
    // walked blob by blob.
    ok(&mut py(&["genkey", d.join("c").to_str().expect("utf8")]));
    let digest = push(&reg, d, "bound", "v2", 91);
    ok(&mut py(&[
        "sign",
        &reg.host,
        "bound",
        &digest,
        d.join("c.key").to_str().expect("utf8"),
        "--copies",
        "2000",
    ]));
    let o = out(&mut olmpack(
        d,
        &["verify", &reg.reference("bound", "v2"), "--key", "c.pub"],
    ));
    assert_eq!(code(&o), 2, "{}", text(&o));
    assert!(
        text(&o).contains("lists 2000 signatures, more than the 128"),
        "{}",
        text(&o)
    );
}

#[test]
fn cosign_keys_on_other_curves_interoperate_with_python() {
    let reg = Registry::start(Mode::Plain);
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    ok(&mut py(&[
        "genkey",
        d.join("other").to_str().expect("utf8"),
        "p256",
    ]));
    for (i, kind) in ["p384", "p521", "ed25519", "rsa"].iter().enumerate() {
        let prefix = d.join(kind);
        ok(&mut py(&["genkey", prefix.to_str().expect("utf8"), kind]));
        let tag = format!("c{i}");
        let digest = push(&reg, d, "curves", &tag, i + 100);
        ok(&mut py(&[
            "sign",
            &reg.host,
            "curves",
            &digest,
            prefix.with_extension("key").to_str().expect("utf8"),
        ]));
        let reference = reg.reference("curves", &tag);
        let pubkey = format!("{kind}.pub");
        let v = ok(&mut olmpack(d, &["verify", &reference, "--key", &pubkey]));
        assert!(v.contains("verified (cosign)"), "{kind}: {v}");
        let count = ok(&mut py(&[
            "verify",
            &reg.host,
            "curves",
            &digest,
            prefix.with_extension("pub").to_str().expect("utf8"),
        ]));
        assert_eq!(
            count.trim(),
            "1",
            "{kind}: python verifies its own signature"
        );
        // Another key, and a key set holding both (containers/image's keyPaths).
        let wrong = out(&mut olmpack(
            d,
            &["verify", &reference, "--key", "other.pub"],
        ));
        assert_eq!(code(&wrong), 1, "{kind}: {}", text(&wrong));
        // A P-256 key cannot have made a signature of another kind or size: "malformed".
        assert!(
            text(&wrong).contains("wrong key") || text(&wrong).contains("malformed"),
            "{kind}: {}",
            text(&wrong)
        );
        let both = ok(&mut olmpack(
            d,
            &["verify", &reference, "--key", "other.pub", "--key", &pubkey],
        ));
        assert!(both.contains("verified (cosign)"), "{kind}: {both}");
    }
    // A private key given where the public key belongs is named as such.
    let o = out(&mut olmpack(
        d,
        &[
            "verify",
            &reg.reference("curves", "c0"),
            "--key",
            "p384.key",
        ],
    ));
    assert_eq!(code(&o), 2, "{}", text(&o));
    assert!(text(&o).contains("holds a private key"), "{}", text(&o));
}
