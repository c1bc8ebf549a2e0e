//! Which image a signature may stand for, and how policy.json is read, checked side by side
//! with skopeo 1.9.3 (containers/image) on a real registry on loopback: the `signedIdentity`
//! table for simple signing (GnuPG) and cosign signatures (the independent Python signer), a
//! policy file broken each way issue 39 lists, `oci:` path scopes spelled around, and a cosign
//! signature copied to another repository (issue 41 item 8).

use crate::signing::{
    Gpg, code, ok, olmpack, out, push, py, rand_suffix, skopeo_accepts, text, tool,
};
use crate::support::registry::{Mode, Registry, bundle_image, write_layout};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// A registries.d with one lookaside store of its own and sigstore attachments read.
fn fresh_registries_d(d: &Path) -> (PathBuf, PathBuf) {
    let n = rand_suffix();
    let rd = d.join(format!("rd-{n}"));
    let store = d.join(format!("store-{n}"));
    std::fs::create_dir_all(&rd).expect("mkdir");
    std::fs::create_dir_all(&store).expect("mkdir");
    std::fs::write(
        rd.join("default.yaml"),
        format!(
            "default-docker:\n  lookaside: file://{0}\n  lookaside-staging: file://{0}\n  use-sigstore-attachments: true\n",
            store.display()
        ),
    )
    .expect("write");
    (rd, store)
}

fn write_json(path: &Path, v: &Value) {
    std::fs::write(path, serde_json::to_vec_pretty(v).expect("json")).expect("write");
}

/// Whether olmpack reads `image` under `policy` (`bundle inspect`, which checks the policy
/// before it reads), and what it said.
fn olmpack_accepts(d: &Path, image: &str, policy: &Path, rd: &Path) -> (bool, String) {
    let o = out(olmpack(
        d,
        &[
            "bundle",
            "inspect",
            image,
            "--policy",
            policy.to_str().expect("utf8"),
            "--no-files",
        ],
    )
    .env("OLMPACK_REGISTRIES_D", rd));
    (o.status.success(), text(&o))
}

/// The reference verdict for a sigstoreSigned policy: skopeo's, unless this skopeo is built
/// without sigstore (Debian's says "sigstore disabled" and refuses everything), then
/// `containers_image`: what containers/image decides for the case (`policy_eval_sigstore.go`
/// with `policy_reference_match.go`, whose tables the unit tests port).
fn sigstore_reference(
    d: &Path,
    image: &str,
    policy: &Path,
    rd: &Path,
    containers_image: bool,
) -> (bool, String) {
    let (accepted, why) = skopeo_accepts(d, image, policy, rd);
    if why.contains("sigstore disabled") {
        return (containers_image, format!("(skopeo has no sigstore) {why}"));
    }
    (accepted, why)
}

/// skopeo copies `docker://from` to `docker://to` (same manifest bytes, another tag).
fn retag(from: &str, to: &str) {
    ok(tool("skopeo").args([
        "copy",
        "--quiet",
        "--src-tls-verify=false",
        "--dest-tls-verify=false",
        &format!("docker://{from}"),
        &format!("docker://{to}"),
    ]));
}

#[derive(Clone, Copy, PartialEq)]
enum Format {
    /// Simple signing, written with GnuPG into a lookaside store.
    Simple,
    /// A cosign signature with this identity, written by the Python signer.
    Cosign,
    /// A cosign v3 Sigstore bundle (its statement names no image), by the Python signer.
    Bundle,
}

struct Case {
    format: Format,
    /// containers/image's verdict, used where skopeo has no sigstore (see
    /// [`sigstore_reference`]); simple signing is always skopeo's own.
    expect: bool,
    /// The reference read (`v1`, `latest` or `@` for the digest).
    read: &'static str,
    claimed: String,
    identity: Option<Value>,
}

#[test]
fn identity_table_matches_skopeo() {
    let reg = Registry::start(Mode::Plain);
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    let gpg = Gpg::new();
    gpg.export(0, &d.join("one.gpg"));
    ok(&mut py(&["genkey", d.join("c").to_str().expect("utf8")]));
    let h = reg.host.clone();
    let di = push(&reg, d, "idt", "v1", 1);
    retag(&reg.reference("idt", "v1"), &reg.reference("idt", "latest"));
    let dc = push(&reg, d, "cos", "v1", 2);
    retag(&reg.reference("cos", "v1"), &reg.reference("cos", "latest"));
    let db = push(&reg, d, "bun", "v1", 3);

    let simple = |read, claimed: String, identity: Option<Value>| Case {
        format: Format::Simple,
        expect: false,
        read,
        claimed,
        identity,
    };
    let cosign = |expect, read, claimed: String, identity: Option<Value>| Case {
        format: Format::Cosign,
        expect,
        read,
        claimed,
        identity,
    };
    let t = |ty: &str| Some(json!({"type": ty}));
    let cases = vec![
        simple("v1", format!("{h}/idt:v1"), None),
        simple("v1", format!("{h}/idt:v2"), None),
        simple("v1", format!("{h}/idt"), None),
        simple("latest", format!("{h}/idt"), None),
        simple("@", format!("{h}/idt"), None),
        simple("@", format!("{h}/idt:v1"), None),
        simple("@", format!("{h}/idt@{di}"), None),
        simple("v1", format!("{h}/idt@{di}"), None),
        simple("v1", format!("{h}/idt:v2"), t("matchRepository")),
        simple("v1", format!("{h}/idt@{di}"), t("matchRepository")),
        simple("@", format!("{h}/idt@{di}"), t("matchExact")),
        simple("v1", format!("{h}/idt:v1"), t("matchExact")),
        simple("@", format!("{h}/idt:v1"), t("matchExact")),
        simple(
            "v1",
            format!("{h}/other:v9"),
            Some(json!({"type": "exactReference", "dockerReference": format!("{h}/other:v9")})),
        ),
        simple(
            "v1",
            format!("{h}/other@{di}"),
            Some(json!({"type": "exactReference", "dockerReference": format!("{h}/other@{di}")})),
        ),
        simple(
            "v1",
            format!("{h}/other@{di}"),
            Some(json!({"type": "exactRepository", "dockerRepository": format!("{h}/other")})),
        ),
        simple(
            "v1",
            format!("{h}/idt:v1"),
            Some(json!({"type": "exactRepository", "dockerRepository": format!("{h}/other")})),
        ),
        simple(
            "v1",
            "vendor.example/idt:v1".into(),
            Some(json!({"type": "remapIdentity", "prefix": h, "signedPrefix": "vendor.example"})),
        ),
        simple(
            "v1",
            format!("{h}/idt:v1"),
            Some(json!({"type": "remapIdentity", "prefix": h, "signedPrefix": "vendor.example"})),
        ),
        simple("v1", format!("{h}/other:v1"), None),
        simple("v1", String::new(), None),
        cosign(false, "v1", format!("{h}/cos"), None),
        cosign(false, "latest", format!("{h}/cos"), None),
        cosign(true, "v1", format!("{h}/cos"), t("matchRepository")),
        cosign(
            false,
            "v1",
            String::new(),
            Some(json!({"type": "exactReference", "dockerReference": format!("{h}/other:v1")})),
        ),
        cosign(false, "v1", String::new(), t("matchRepository")),
        cosign(true, "v1", format!("{h}/cos:v1"), None),
        cosign(true, "@", format!("{h}/cos@{dc}"), None),
        cosign(
            true,
            "v1",
            format!("{h}/other"),
            Some(json!({"type": "exactRepository", "dockerRepository": format!("{h}/other")})),
        ),
        cosign(false, "v1", format!("{h}/other"), t("matchRepository")),
        // containers/image reads no Sigstore bundle: nothing it could accept.
        Case {
            format: Format::Bundle,
            expect: false,
            read: "v1",
            claimed: "(none)".into(),
            identity: None,
        },
        // containers/image reads no Sigstore bundle: nothing it could accept.
        Case {
            format: Format::Bundle,
            expect: false,
            read: "v1",
            claimed: "(none)".into(),
            identity: t("matchRepository"),
        },
    ];
    let mut table = Vec::new();
    let mut accepted = 0;
    for (i, c) in cases.iter().enumerate() {
        let (repo, digest) = match c.format {
            Format::Simple => ("idt", &di),
            Format::Cosign => ("cos", &dc),
            Format::Bundle => ("bun", &db),
        };
        let image = match c.read {
            "@" => format!("{h}/{repo}@{digest}"),
            tag => reg.reference(repo, tag),
        };
        let (rd, store) = fresh_registries_d(d);
        let mut req = match c.format {
            Format::Simple => {
                let payload = json!({"critical": {"identity": {"docker-reference": c.claimed},
                    "image": {"docker-manifest-digest": digest}, "type": "atomic container signature"},
                    "optional": {}});
                let sig = gpg.sign(0, payload.to_string().as_bytes(), d);
                let dir = store.join(format!("{repo}@sha256={}", &digest[7..]));
                std::fs::create_dir_all(&dir).expect("mkdir");
                std::fs::write(dir.join("signature-1"), sig).expect("write");
                json!({"type": "signedBy", "keyType": "GPGKeys", "keyPath": d.join("one.gpg")})
            }
            Format::Cosign => {
                ok(&mut py(&[
                    "sign",
                    &h,
                    repo,
                    digest,
                    d.join("c.key").to_str().expect("utf8"),
                    "--identity",
                    &c.claimed,
                ]));
                json!({"type": "sigstoreSigned", "keyPath": d.join("c.pub")})
            }
            Format::Bundle => {
                ok(&mut py(&[
                    "bundle",
                    &h,
                    repo,
                    digest,
                    d.join("c.key").to_str().expect("utf8"),
                ]));
                json!({"type": "sigstoreSigned", "keyPath": d.join("c.pub")})
            }
        };
        if let Some(id) = &c.identity {
            req["signedIdentity"] = id.clone();
        }
        let policy = d.join(format!("policy-{i}.json"));
        write_json(
            &policy,
            &json!({"default": [{"type": "reject"}],
                "transports": {"docker": {format!("{h}/{repo}"): [req]}}}),
        );
        let (by_skopeo, why_s) = match c.format {
            Format::Simple => skopeo_accepts(d, &image, &policy, &rd),
            _ => sigstore_reference(d, &image, &policy, &rd, c.expect),
        };
        let (by_olmpack, why_o) = olmpack_accepts(d, &image, &policy, &rd);
        accepted += usize::from(by_skopeo);
        let rule = c
            .identity
            .as_ref()
            .map_or("(default)".to_string(), |v| v.to_string());
        table.push((
            format!(
                "{i:2} {:6} read {image} claims {:?} rule {rule}",
                match c.format {
                    Format::Simple => "simple",
                    Format::Cosign => "cosign",
                    Format::Bundle => "bundle",
                },
                c.claimed
            ),
            by_skopeo,
            by_olmpack,
            why_s,
            why_o,
        ));
    }
    let mut disagree = Vec::new();
    for (case, s, o, why_s, why_o) in &table {
        eprintln!(
            "{case}: skopeo {} olmpack {}",
            if *s { "accepts" } else { "refuses" },
            if *o { "accepts" } else { "refuses" }
        );
        if s != o {
            disagree.push(format!("{case}\n  skopeo: {why_s}\n  olmpack: {why_o}"));
        }
    }
    assert!(
        disagree.is_empty(),
        "olmpack and skopeo disagree:\n{}",
        disagree.join("\n")
    );
    // The table has both verdicts in it, so agreeing is not trivial.
    assert!(accepted >= 10 && accepted + 10 <= table.len(), "{accepted}");
}

#[test]
fn signing_by_digest_writes_an_identity_skopeo_accepts() {
    let reg = Registry::start(Mode::Plain);
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    let gpg = Gpg::new();
    gpg.export(0, &d.join("one.gpg"));
    gpg.export_secret(0, &d.join("one.sec.asc"));
    let digest = push(&reg, d, "bydigest", "v1", 4);
    let image = format!("{}/bydigest@{digest}", reg.host);
    let (rd, store) = fresh_registries_d(d);
    ok(&mut olmpack(
        d,
        &[
            "sign",
            &image,
            "--gpg-key",
            "one.sec.asc",
            "--registries-d",
            rd.to_str().expect("utf8"),
        ],
    ));
    let sig = store.join(format!("bydigest@sha256={}/signature-1", &digest[7..]));
    assert!(sig.is_file());
    let policy = d.join("policy.json");
    write_json(
        &policy,
        &json!({"default": [{"type": "reject"}], "transports": {"docker": {
            reg.host.clone(): [{"type": "signedBy", "keyType": "GPGKeys", "keyPath": d.join("one.gpg")}]}}}),
    );
    let (accepted, why) = skopeo_accepts(d, &image, &policy, &rd);
    assert!(
        accepted,
        "skopeo accepts olmpack's by-digest signature: {why}"
    );
    let (accepted, why) = olmpack_accepts(d, &image, &policy, &rd);
    assert!(accepted, "{why}");
    // The payload names the digest, as skopeo copy --sign-by writes it.
    let v = ok(&mut olmpack(
        d,
        &[
            "verify",
            &image,
            "--gpg-keyring",
            "one.gpg",
            "--registries-d",
            rd.to_str().expect("utf8"),
        ],
    ));
    assert!(
        v.contains(&format!("\"docker-reference\":\"{image}\"")),
        "{v}"
    );
}

#[test]
fn broken_policies_are_refused_whole_as_skopeo_refuses_them() {
    let reg = Registry::start(Mode::Plain);
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    push(&reg, d, "open", "v1", 5);
    let image = reg.reference("open", "v1");
    let (rd, _) = fresh_registries_d(d);
    let h = reg.host.clone();
    let accept = json!([{"type": "insecureAcceptAnything"}]);
    let gpg = json!({"type": "signedBy", "keyType": "GPGKeys", "keyPath": "/nonexistent.gpg"});
    let cases: Vec<(&str, String, &str)> = vec![
        ("scope-object", json!({"default": accept, "transports": {"docker": {h.clone(): {"type": "insecureAcceptAnything"}}}}).to_string(), "transports.docker"),
        ("transport-typo", json!({"default": accept, "transport": {"docker": {h.clone(): [gpg]}}}).to_string(), "unknown field `transport`"),
        ("transports-list", json!({"default": accept, "transports": [{"docker": {}}]}).to_string(), "transports"),
        ("duplicate-scope", format!(r#"{{"default": [{{"type": "insecureAcceptAnything"}}], "transports": {{"docker": {{"{h}": [{{"type": "reject"}}], "{h}": [{{"type": "insecureAcceptAnything"}}]}}}}}}"#), "duplicate key"),
        ("unknown-key", json!({"default": accept, "transports": {"docker": {h.clone(): [{"type": "signedBy", "keyType": "GPGKeys", "keyPath": "/k.gpg", "signedIdentiy": {"type": "matchRepository"}}]}}}).to_string(), "signedIdentiy"),
        ("no-keytype", json!({"default": accept, "transports": {"docker": {h.clone(): [{"type": "signedBy", "keyPath": "/k.gpg"}]}}}).to_string(), "keyType"),
        ("path-and-data", json!({"default": accept, "transports": {"docker": {h.clone(): [{"type": "signedBy", "keyType": "GPGKeys", "keyPath": "/k.gpg", "keyData": "YWJj"}]}}}).to_string(), "more than one"),
        ("fulcio-and-key", json!({"default": accept, "transports": {"docker": {h.clone(): [{"type": "sigstoreSigned", "keyPath": "/k.pub", "fulcio": {"caPath": "/ca", "oidcIssuer": "https://issuer.invalid", "subjectEmail": "a@example.invalid"}, "rekorPublicKeyPath": "/r.pub"}]}}}).to_string(), "keyPath and fulcio"),
        ("null-scope", json!({"default": accept, "transports": {"docker": {h.clone(): null}}}).to_string(), "transports.docker"),
        ("unknown-type", json!({"default": accept, "transports": {"docker": {h.clone(): [{"type": "signedByy"}]}}}).to_string(), "signedByy"),
        ("empty-default", json!({"default": []}).to_string(), "must not be empty"),
        ("docker-archive-scope", json!({"default": accept, "transports": {"docker-archive": {"/tmp/x.tar": [{"type": "reject"}]}}}).to_string(), "docker-archive supports no scope"),
        ("relative-oci-scope", json!({"default": accept, "transports": {"oci": {"layouts/x": [{"type": "reject"}]}}}).to_string(), "absolute path"),
        ("identity-type-number", json!({"default": accept, "transports": {"docker": {h.clone(): [{"type": "signedBy", "keyType": "GPGKeys", "keyPath": "/k.gpg", "signedIdentity": {"type": 1}}]}}}).to_string(), "type"),
    ];
    let mut failures = Vec::new();
    for (name, body, reason) in &cases {
        let file = d.join(format!("{name}.json"));
        std::fs::write(&file, body).expect("write");
        let (s, why_s) = skopeo_accepts(d, &image, &file, &rd);
        let o = out(olmpack(
            d,
            &[
                "bundle",
                "inspect",
                &image,
                "--policy",
                file.to_str().expect("utf8"),
                "--no-files",
            ],
        )
        .env("OLMPACK_REGISTRIES_D", &rd));
        let msg = text(&o);
        let named = msg.contains(&format!("{name}.json")) && msg.contains(reason);
        if s || code(&o) != 2 || !named {
            failures.push(format!(
                "{name}: skopeo {} ({}); olmpack exit {} {msg}",
                if s { "accepted" } else { "refused" },
                why_s.trim(),
                code(&o)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Valid policies that ask for Fulcio, PKI or Rekor (skopeo 1.9.3 cannot load them; newer
    // containers/image can): they load (issue 47 item 3). On the image, the files they name
    // (missing here) refuse it, naming the file; in another scope they do not apply.
    let fulcio = json!({"caPath": "/ca", "oidcIssuer": "https://issuer.invalid", "subjectEmail": "a@example.invalid"});
    let kinds = [
        (
            "rekor",
            json!({"type": "sigstoreSigned", "keyPath": "/k.pub", "rekorPublicKeyPath": "/r.pub"}),
            "/k.pub",
        ),
        (
            "rekor-datas",
            json!({"type": "sigstoreSigned", "keyPath": "/k.pub", "rekorPublicKeyDatas": ["YWJj"]}),
            "/k.pub",
        ),
        (
            "fulcio",
            json!({"type": "sigstoreSigned", "fulcio": fulcio, "rekorPublicKeyPath": "/r.pub"}),
            "/ca",
        ),
        (
            "pki",
            json!({"type": "sigstoreSigned", "pki": {"caRootsPath": "/roots.pem", "subjectEmail": "a@example.invalid"}}),
            "/roots.pem",
        ),
    ];
    for (name, req, word) in kinds {
        for (how, scopes) in [
            ("on the image", json!({h.clone(): [req.clone()]})),
            (
                "elsewhere",
                json!({h.clone(): accept.clone(), "other.invalid/x": [req.clone()]}),
            ),
        ] {
            let file = d.join(format!("{name}-{}.json", how.replace(' ', "-")));
            write_json(
                &file,
                &json!({"default": [{"type": "reject"}], "transports": {"docker": scopes}}),
            );
            let (accepted, msg) = olmpack_accepts(d, &image, &file, &rd);
            let right = if how == "elsewhere" {
                accepted
            } else {
                !accepted && msg.contains(word) && msg.contains("sigstoreSigned")
            };
            if !right {
                failures.push(format!("{name} {how}: accepted {accepted}: {msg}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A layout `real/app` with one bundle image tagged `v1`, a folder `real/other` and a link
/// `link` → `real`.
fn layouts(d: &Path) -> PathBuf {
    let app = d.join("real/app");
    std::fs::create_dir_all(d.join("real/other")).expect("mkdir");
    let image = bundle_image(&d.join("real/other"), 6, "scoped-operator");
    write_layout(&image, &app, "v1");
    std::os::unix::fs::symlink(d.join("real"), d.join("link")).expect("symlink");
    std::fs::canonicalize(&app).expect("canonical")
}

#[test]
fn a_layout_scope_holds_through_slashes_dots_and_links() {
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    let canon = layouts(d);
    let (rd, _) = fresh_registries_d(d);
    let policy = d.join("policy.json");
    write_json(
        &policy,
        &json!({"default": [{"type": "insecureAcceptAnything"}],
            "transports": {"oci": {canon.display().to_string(): [{"type": "reject"}]}}}),
    );
    let root = d.display().to_string();
    let spellings = [
        format!("{root}/real/app"),
        format!("{root}/real/app/"),
        format!("{root}/real/other/../app"),
        format!("{root}/link/app"),
        format!("{root}/link/other/../app/"),
    ];
    let mut bypassed = Vec::new();
    for s in &spellings {
        let image = format!("oci:{s}:v1");
        let (o, why) = olmpack_accepts(d, &image, &policy, &rd);
        // skopeo, the reference, refuses each spelling.
        let dest = d.join(format!("copy-{}", rand_suffix()));
        let sk = out(tool("skopeo").args([
            "--policy",
            policy.to_str().expect("utf8"),
            "copy",
            "--quiet",
            &image,
            &format!("oci:{}:x", dest.display()),
        ]));
        if o || sk.status.success() {
            bypassed.push(format!(
                "{image}: olmpack {}, skopeo {}: {why}",
                if o { "read it" } else { "refused" },
                if sk.status.success() {
                    "copied it"
                } else {
                    "refused"
                }
            ));
        } else {
            assert!(why.contains("reject"), "{why}");
        }
    }
    assert!(bypassed.is_empty(), "{}", bypassed.join("\n"));
    // The same image outside the scope is read: the scope is what refuses.
    let open = d.join("open.json");
    write_json(
        &open,
        &json!({"default": [{"type": "insecureAcceptAnything"}]}),
    );
    let (o, why) = olmpack_accepts(d, &format!("oci:{root}/link/app:v1"), &open, &rd);
    assert!(o, "{why}");
}

#[test]
fn an_oci_archive_scope_is_applied() {
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    let canon = layouts(d);
    let tar = canon.with_file_name("app.tar");
    ok(tool("skopeo").args([
        "copy",
        "--quiet",
        &format!("oci:{}:v1", canon.display()),
        &format!("oci-archive:{}:v1", tar.display()),
    ]));
    let (rd, _) = fresh_registries_d(d);
    let policy = d.join("policy.json");
    write_json(
        &policy,
        &json!({"default": [{"type": "insecureAcceptAnything"}],
            "transports": {"oci-archive": {tar.display().to_string(): [{"type": "reject"}]}}}),
    );
    let image = format!("oci-archive:{}/link/app.tar:v1", d.display());
    let (o, why) = olmpack_accepts(d, &image, &policy, &rd);
    assert!(!o && why.contains("reject"), "{why}");
    let sk = out(tool("skopeo").args([
        "--policy",
        policy.to_str().expect("utf8"),
        "copy",
        "--quiet",
        &image,
        &format!("oci:{}:x", d.join("x").display()),
    ]));
    assert!(!sk.status.success(), "skopeo applies the scope too");
}

#[test]
fn a_copied_cosign_signature_says_how_to_accept_it() {
    let reg = Registry::start(Mode::Plain);
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    ok(&mut olmpack(
        d,
        &["key", "generate", "--output-key-prefix", "c"],
    ));
    push(&reg, d, "src/app", "v1", 7);
    let source = reg.reference("src/app", "v1");
    let mirrored = reg.reference("mirror/src/app", "v1");
    ok(&mut olmpack(
        d,
        &["sign", &source, "--key", "c.key", "--format", "legacy"],
    ));
    ok(&mut olmpack(
        d,
        &["copy", &source, &mirrored, "--with-signatures"],
    ));
    let o = out(&mut olmpack(d, &["verify", &mirrored, "--key", "c.pub"]));
    let msg = text(&o);
    assert_eq!(code(&o), 1, "{msg}");
    let src_repo = format!("{}/src/app", reg.host);
    assert!(
        msg.contains(&format!(
            "the signature claims {src_repo}, expected {}/mirror/src/app",
            reg.host
        )),
        "{msg}"
    );
    assert!(
        msg.contains(&format!("--identity {src_repo}")) && msg.contains("exactRepository"),
        "{msg}"
    );
    let v = ok(&mut olmpack(
        d,
        &[
            "verify",
            &mirrored,
            "--key",
            "c.pub",
            "--identity",
            &src_repo,
        ],
    ));
    assert!(v.contains("verified (cosign)"), "{v}");
    // The policy side, as the hint says, accepted by skopeo and olmpack alike.
    let (rd, _) = fresh_registries_d(d);
    let policy = d.join("policy.json");
    write_json(
        &policy,
        &json!({"default": [{"type": "reject"}], "transports": {"docker": {
            format!("{}/mirror", reg.host): [{"type": "sigstoreSigned", "keyPath": d.join("c.pub"),
                "signedIdentity": {"type": "exactRepository", "dockerRepository": src_repo}}]}}}),
    );
    let (s, why) = sigstore_reference(d, &mirrored, &policy, &rd, true);
    assert!(s, "{why}");
    let (o, why) = olmpack_accepts(d, &mirrored, &policy, &rd);
    assert!(o, "{why}");
    // Without it, the policy refusal carries the same hint.
    let plain = d.join("plain.json");
    write_json(
        &plain,
        &json!({"default": [{"type": "reject"}], "transports": {"docker": {
            format!("{}/mirror", reg.host): [{"type": "sigstoreSigned", "keyPath": d.join("c.pub"),
                "signedIdentity": {"type": "matchRepository"}}]}}}),
    );
    let (o, why) = olmpack_accepts(d, &mirrored, &plain, &rd);
    assert!(
        !o && why.contains("hint:") && why.contains(&src_repo),
        "{why}"
    );
    // The help presents --identity for both formats.
    let help = ok(&mut olmpack(d, &["verify", "--help"]));
    assert!(
        help.contains("for both formats") && help.contains("catalog mirror"),
        "{help}"
    );
}
