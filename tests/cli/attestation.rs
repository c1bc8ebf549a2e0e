//! `olmpack attest` and `olmpack verify-attestation`, and `bundle build --push` /
//! `catalog build --push` with `--attest-provenance --attest-sbom`, on Debian's
//! `docker-registry` (no referrers API: the `sha256-<hex>` referrers tag lists the bundles).
//! Independent readers: `tests/support/cosign_interop.py` (python3-cryptography) finds the
//! bundle referrers and the cosign 2 `.att` layers by plain HTTP reads and verifies their DSSE
//! envelopes; the SPDX document is checked against the SPDX 2.3 JSON schema's requirements
//! with python3-jsonschema, and by spdx-tools' validator when `$OLMPACK_SPDX_PYTHON` names a
//! python that has PyPI `spdx-tools`. Forged attestations are written by that script (not by
//! olmpack), and each is refused with its reason.

use super::signing::{code, ok, olmpack, out, push, py, text, tool};
use crate::support::registry::{Mode, Registry};
use std::path::Path;

const BUNDLE_MT: &str = "application/vnd.dev.sigstore.bundle.v0.3+json";
const SLSA: &str = "https://slsa.dev/provenance/v1";
const SPDX: &str = "https://spdx.dev/Document";

fn curl_json(url: &str) -> serde_json::Value {
    let o = out(tool("curl").args([
        "-s",
        "--max-time",
        "30",
        "-H",
        "Accept: application/vnd.oci.image.index.v1+json, application/vnd.oci.image.manifest.v1+json",
        url,
    ]));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "{url}: not JSON ({e}): {}",
            String::from_utf8_lossy(&o.stdout)
        )
    })
}

fn status(url: &str) -> String {
    let o = out(tool("curl").args([
        "-s",
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        "--max-time",
        "30",
        url,
    ]));
    String::from_utf8_lossy(&o.stdout).to_string()
}

fn count(args: &[&str], d: &Path) -> String {
    ok(py(args).current_dir(d)).trim().to_string()
}

fn keys(d: &Path) {
    ok(&mut olmpack(
        d,
        &["key", "generate", "--output-key-prefix", "a"],
    ));
    ok(py(&["genkey", "b"]).current_dir(d));
}

/// The verified statements `verify-attestation -o json` printed, and its exit code.
fn verify_json(d: &Path, args: &[&str]) -> (i32, serde_json::Value, String) {
    let mut all = vec!["verify-attestation"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-o", "json"]);
    let o = out(&mut olmpack(d, &all));
    let v = serde_json::from_slice(&o.stdout).unwrap_or(serde_json::Value::Null);
    (code(&o), v, text(&o))
}

#[test]
fn attest_attaches_a_bundle_referrer_and_an_att_layer_that_others_verify() {
    let reg = Registry::start(Mode::Plain);
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    let host = reg.host.clone();
    keys(d);
    let digest = push(&reg, d, "app", "v1", 1);
    let hex = &digest[7..];
    let image = reg.reference("app", "v1");
    std::fs::write(d.join("pred.json"), r#"{"builder": {"id": "urn:test"}}"#).expect("write");
    let s = ok(&mut olmpack(
        d,
        &[
            "attest",
            &image,
            "--key",
            "a.key",
            "--predicate",
            "pred.json",
            "--type",
            "slsaprovenance1",
            "--format",
            "both",
        ],
    ));
    assert_eq!(
        s.lines().filter(|l| l.starts_with("attested")).count(),
        2,
        "{s}"
    );
    assert!(
        s.contains(SLSA) && s.contains("(referrer)") && s.contains(".att"),
        "{s}"
    );

    // cosign 3's place: the referrers tag (the registry has no referrers API) lists a bundle
    // announcing the predicate type; cosign 2's: the .att tag, one DSSE layer.
    assert_eq!(
        status(&format!("http://{host}/v2/app/referrers/{digest}")),
        "404"
    );
    let index = curl_json(&format!("http://{host}/v2/app/manifests/sha256-{hex}"));
    let entries = index["manifests"].as_array().expect("manifests");
    assert_eq!(entries.len(), 1, "{index}");
    assert_eq!(entries[0]["artifactType"], BUNDLE_MT);
    assert_eq!(
        entries[0]["annotations"]["dev.sigstore.bundle.predicateType"],
        SLSA
    );
    assert_eq!(
        entries[0]["annotations"]["dev.sigstore.bundle.content"],
        "dsse-envelope"
    );
    let att = curl_json(&format!("http://{host}/v2/app/manifests/sha256-{hex}.att"));
    assert_eq!(
        att["layers"][0]["mediaType"],
        "application/vnd.dsse.envelope.v1+json"
    );
    assert_eq!(att["layers"][0]["annotations"]["predicateType"], SLSA);

    // The independent reader verifies both with the right key only.
    let verify_bundle = |k: &str| {
        count(
            &[
                "verify-bundle",
                &host,
                "app",
                &digest,
                k,
                "--predicate-type",
                SLSA,
            ],
            d,
        )
    };
    assert_eq!(verify_bundle("a.pub"), "1");
    assert_eq!(verify_bundle("b.pub"), "0");
    assert_eq!(
        count(
            &[
                "verify-att",
                &host,
                "app",
                &digest,
                "a.pub",
                "--predicate-type",
                SLSA
            ],
            d
        ),
        "1"
    );
    assert_eq!(
        count(&["verify-att", &host, "app", &digest, "b.pub"], d),
        "0"
    );

    // olmpack verifies both and prints the verified statement.
    let (c, v, t) = verify_json(d, &[&image, "--key", "a.pub", "--type", "slsaprovenance1"]);
    assert_eq!(c, 0, "{t}");
    let found = v["attestations"].as_array().expect("attestations");
    assert_eq!(found.len(), 2, "{v}");
    for f in found {
        assert_eq!(f["verified"], true, "{f}");
        assert_eq!(f["statement"]["predicate"]["builder"]["id"], "urn:test");
        assert_eq!(f["statement"]["subject"][0]["digest"]["sha256"], hex);
        assert_eq!(f["statement"]["subject"][0]["name"], format!("{host}/app"));
    }
    // The type filter refuses the other type; another key refuses both.
    let (c, v, _) = verify_json(d, &[&image, "--key", "a.pub", "--type", "spdxjson"]);
    assert_eq!(c, 1);
    assert!(
        v["attestations"][0]["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("predicate type"),
        "{v}"
    );
    let (c, v, _) = verify_json(d, &[&image, "--key", "b.pub"]);
    assert_eq!(c, 1);
    assert!(
        v["attestations"][0]["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("does not verify"),
        "{v}"
    );
    // An attestation is not a signature: `verify` does not count it.
    let o = out(&mut olmpack(d, &["verify", &image, "--key", "a.pub"]));
    assert_eq!(code(&o), 1, "{}", text(&o));
    // The same statement again writes nothing (deterministic signatures).
    let again = ok(&mut olmpack(
        d,
        &[
            "attest",
            &image,
            "--key",
            "a.key",
            "--predicate",
            "pred.json",
            "--type",
            "slsaprovenance1",
            "--format",
            "both",
        ],
    ));
    assert_eq!(
        again
            .lines()
            .filter(|l| l.starts_with("already attested"))
            .count(),
        2,
        "{again}"
    );

    // Bad inputs: each names its file, exit 2, nothing written.
    let o = out(&mut olmpack(
        d,
        &[
            "attest",
            &image,
            "--key",
            "a.key",
            "--predicate",
            "nosuch.json",
        ],
    ));
    assert_eq!(code(&o), 2);
    assert!(text(&o).contains("nosuch.json"), "{}", text(&o));
    std::fs::write(d.join("bad.json"), "{\n  \"a\": 1,\n  oops\n}").expect("write");
    let o = out(&mut olmpack(
        d,
        &[
            "attest",
            &image,
            "--key",
            "a.key",
            "--predicate",
            "bad.json",
        ],
    ));
    assert_eq!(code(&o), 2);
    assert!(text(&o).contains("bad.json:3:"), "{}", text(&o));
    let o = out(&mut olmpack(
        d,
        &[
            "attest",
            &image,
            "--key",
            "a.key",
            "--predicate",
            "pred.json",
            "--type",
            "nonsense",
        ],
    ));
    assert_eq!(code(&o), 2);
    assert!(text(&o).contains("--type"), "{}", text(&o));
    let index = curl_json(&format!("http://{host}/v2/app/manifests/sha256-{hex}"));
    assert_eq!(index["manifests"].as_array().map(Vec::len), Some(1));
}

#[test]
fn forged_attestations_are_refused_each_with_its_reason() {
    let reg = Registry::start(Mode::Plain);
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    let host = reg.host.clone();
    keys(d);
    let other = format!("sha256:{}", "e".repeat(64));
    let pred = r#"{"buildDefinition": {}}"#;
    // (tag, forging options, the reason olmpack must give)
    let cases: [(&str, Vec<&str>, &str); 5] = [
        ("good", vec![], ""),
        ("moved", vec!["--subject-digest", &other], "subject digest"),
        ("altered", vec!["--alter-payload", "1"], "does not verify"),
        ("announced", vec!["--announce", SPDX], "announces"),
        ("wrongkey", vec![], "does not verify"),
    ];
    for (i, (tag, forge, reason)) in cases.iter().enumerate() {
        let digest = push(&reg, d, "app", tag, 10 + i);
        let key = if *tag == "wrongkey" { "b.key" } else { "a.key" };
        let mut args = vec![
            "bundle",
            &host,
            "app",
            &digest,
            key,
            "--predicate-type",
            SLSA,
            "--predicate",
            pred,
        ];
        args.extend(forge.iter().copied());
        ok(py(&args).current_dir(d));
        let image = reg.reference("app", tag);
        let (c, v, t) = verify_json(d, &[&image, "--key", "a.pub", "--type", "slsaprovenance1"]);
        let found = v["attestations"].as_array().cloned().unwrap_or_default();
        assert_eq!(found.len(), 1, "{tag}: {t}");
        if reason.is_empty() {
            assert_eq!(c, 0, "{tag}: {t}");
            assert_eq!(found[0]["statement"]["predicateType"], SLSA);
        } else {
            assert_eq!(c, 1, "{tag} was accepted: {t}");
            let why = found[0]["reason"].as_str().unwrap_or_default();
            assert!(
                why.contains(reason),
                "{tag}: expected {reason:?}, got {why:?}"
            );
            assert!(
                found[0].get("statement").is_none(),
                "{tag}: a refused statement was printed"
            );
        }
    }
    // The wrong predicate type, asked for: the good one is refused under --type spdxjson.
    let image = reg.reference("app", "good");
    let (c, v, _) = verify_json(d, &[&image, "--key", "a.pub", "--type", "spdxjson"]);
    assert_eq!(c, 1);
    assert!(
        v["attestations"][0]["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("predicate type"),
        "{v}"
    );
}

/// The SPDX 2.3 JSON schema's requirements for what an SBOM of images holds (required
/// members, enumerations, identifier pattern), written from the specification's schema.
const SPDX_CHECK: &str = r#"
import json, sys, jsonschema
doc = json.load(open(sys.argv[1]))
ident = {"type": "string", "pattern": "^SPDXRef-[A-Za-z0-9.-]+$"}
schema = {
  "type": "object",
  "required": ["SPDXID", "creationInfo", "dataLicense", "name", "spdxVersion", "documentNamespace"],
  "properties": {
    "spdxVersion": {"const": "SPDX-2.3"},
    "dataLicense": {"const": "CC0-1.0"},
    "SPDXID": {"const": "SPDXRef-DOCUMENT"},
    "documentNamespace": {"type": "string", "pattern": "^[a-z]+://[^#]+$"},
    "creationInfo": {"type": "object", "required": ["created", "creators"], "additionalProperties": False,
      "properties": {"created": {"type": "string", "pattern": "^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ$"},
                     "creators": {"type": "array", "minItems": 1, "items": {"type": "string", "pattern": "^(Tool|Person|Organization): "}}}},
    "packages": {"type": "array", "items": {"type": "object",
      "required": ["SPDXID", "downloadLocation", "name"],
      "properties": {"SPDXID": ident, "name": {"type": "string"}, "versionInfo": {"type": "string"},
        "filesAnalyzed": {"type": "boolean"},
        "primaryPackagePurpose": {"enum": ["OTHER", "INSTALL", "ARCHIVE", "FIRMWARE", "APPLICATION", "FRAMEWORK", "LIBRARY", "CONTAINER", "SOURCE", "DEVICE", "OPERATING-SYSTEM", "FILE"]},
        "checksums": {"type": "array", "items": {"type": "object", "required": ["algorithm", "checksumValue"], "additionalProperties": False,
          "properties": {"algorithm": {"enum": ["SHA1", "SHA224", "SHA256", "SHA384", "SHA512", "MD5"]}, "checksumValue": {"type": "string", "pattern": "^[0-9a-f]+$"}}}},
        "externalRefs": {"type": "array", "items": {"type": "object", "required": ["referenceCategory", "referenceLocator", "referenceType"], "additionalProperties": False,
          "properties": {"referenceCategory": {"enum": ["OTHER", "PERSISTENT-ID", "SECURITY", "PACKAGE-MANAGER", "PACKAGE_MANAGER", "PERSISTENT_ID"]},
                         "referenceType": {"type": "string"}, "referenceLocator": {"type": "string", "pattern": "^pkg:oci/"}}}}}}},
    "relationships": {"type": "array", "items": {"type": "object", "required": ["spdxElementId", "relatedSpdxElement", "relationshipType"],
      "properties": {"spdxElementId": ident, "relatedSpdxElement": ident, "relationshipType": {"enum": ["DESCRIBES", "DEPENDS_ON", "CONTAINS"]}}}}}}
jsonschema.validate(doc, schema)
ids = {p["SPDXID"] for p in doc["packages"]} | {"SPDXRef-DOCUMENT"}
assert len(ids) == len(doc["packages"]) + 1, "SPDXIDs are not unique"
for r in doc["relationships"]:
    assert r["spdxElementId"] in ids and r["relatedSpdxElement"] in ids, r
print("ok")
"#;

/// spdx-tools' own parser and validator (PyPI `spdx-tools`), when a python with it is named.
const SPDX_TOOLS: &str = r#"
import sys
from spdx_tools.spdx.parser.parse_anything import parse_file
from spdx_tools.spdx.validation.document_validator import validate_full_spdx_document
msgs = validate_full_spdx_document(parse_file(sys.argv[1]))
for m in msgs:
    print(m.validation_message)
sys.exit(1 if msgs else 0)
"#;

fn check_spdx(d: &Path, doc: &serde_json::Value) {
    let file = d.join("sbom.spdx.json");
    std::fs::write(&file, serde_json::to_vec_pretty(doc).expect("json")).expect("write");
    let o = out(tool("/usr/bin/python3")
        .arg("-c")
        .arg(SPDX_CHECK)
        .arg(&file));
    assert!(
        o.status.success(),
        "the SBOM fails the SPDX 2.3 schema: {}",
        text(&o)
    );
    match std::env::var_os("OLMPACK_SPDX_PYTHON") {
        Some(p) => {
            let o = out(std::process::Command::new(p)
                .arg("-c")
                .arg(SPDX_TOOLS)
                .arg(&file));
            assert!(
                o.status.success(),
                "spdx-tools refuses the SBOM: {}",
                text(&o)
            );
        }
        None => eprintln!("OLMPACK_SPDX_PYTHON unset: spdx-tools not run"),
    }
}

fn git(dir: &Path, args: &[&str]) -> String {
    ok(tool("git")
        .current_dir(dir)
        .args([
            "-c",
            "user.email=t@example.com",
            "-c",
            "user.name=t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args))
    .trim()
    .to_string()
}

#[test]
fn builds_attest_provenance_and_an_sbom_after_the_push() {
    let reg = Registry::start(Mode::Plain);
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    keys(d);
    let src = d.join("src");
    let bundle = src.join("bundle");
    crate::support::fs::copy_dir(
        &crate::support::fixtures::testdata("bundles/valid-basic"),
        &bundle,
    );
    git(&src, &["init", "-q"]);
    git(&src, &["add", "."]);
    git(&src, &["commit", "-q", "-m", "x"]);
    let commit = git(&src, &["rev-parse", "HEAD"]);
    let image = reg.reference("bundle", "v1");
    let b = ok(&mut olmpack(
        d,
        &[
            "bundle",
            "build",
            "src/bundle",
            "-t",
            &image,
            "--push",
            "--sign-key",
            "a.key",
            "--attest-provenance",
            "--attest-sbom",
            "--signature-format",
            "bundle",
            "--digest-file",
            "dig.txt",
        ],
    ));
    let digest = std::fs::read_to_string(d.join("dig.txt"))
        .expect("digest file")
        .trim()
        .to_string();
    assert!(digest.starts_with("sha256:"), "{b}");
    let host = reg.host.clone();
    // Two bundle referrers besides the signature: provenance and SBOM, both verified by the
    // independent reader.
    assert_eq!(
        count(
            &[
                "verify-bundle",
                &host,
                "bundle",
                &digest,
                "a.pub",
                "--predicate-type",
                SLSA
            ],
            d
        ),
        "1"
    );
    assert_eq!(
        count(
            &[
                "verify-bundle",
                &host,
                "bundle",
                &digest,
                "a.pub",
                "--predicate-type",
                SPDX
            ],
            d
        ),
        "1"
    );

    let (c, v, t) = verify_json(d, &[&image, "--key", "a.pub", "--type", "slsaprovenance1"]);
    assert_eq!(c, 0, "{t}");
    let prov = &v["attestations"]
        .as_array()
        .and_then(|a| a.iter().find(|f| f["verified"] == true))
        .expect("verified")["statement"]["predicate"];
    let deps = prov["buildDefinition"]["resolvedDependencies"]
        .as_array()
        .expect("deps");
    assert!(
        deps.iter()
            .any(|x| x["digest"]["gitCommit"] == commit.as_str()),
        "{prov}"
    );
    let csv = "manifests/kvstore-operator.clusterserviceversion.yaml";
    let want = {
        use sha2::Digest as _;
        let bytes = std::fs::read(bundle.join(csv)).expect("read csv");
        sha2::Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    assert!(
        deps.iter()
            .any(|x| x["name"] == csv && x["digest"]["sha256"] == want.as_str()),
        "{prov}"
    );
    assert!(
        deps.iter()
            .any(|x| x["name"] == "metadata/annotations.yaml"),
        "{prov}"
    );
    assert_eq!(
        prov["buildDefinition"]["buildType"],
        "urn:olmpack:build-type:bundle-build:v1"
    );
    assert!(
        prov["runDetails"]["metadata"]
            .as_object()
            .is_some_and(|m| m.is_empty()),
        "a clock in the provenance: {prov}"
    );

    let (c, v, t) = verify_json(d, &[&image, "--key", "a.pub", "--type", "spdxjson"]);
    assert_eq!(c, 0, "{t}");
    let sbom = v["attestations"]
        .as_array()
        .and_then(|a| a.iter().find(|f| f["verified"] == true))
        .expect("verified")["statement"]["predicate"]
        .clone();
    let pkgs = sbom["packages"].as_array().expect("packages");
    let op = pkgs
        .iter()
        .find(|p| p["name"] == "registry.example.com/kvstore/operator")
        .expect("operator image listed");
    assert_eq!(
        op["checksums"][0]["checksumValue"],
        "2c1d2e7f1c3b4a5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5"
    );
    assert!(
        op["externalRefs"][0]["referenceLocator"]
            .as_str()
            .unwrap_or_default()
            .starts_with("pkg:oci/operator@sha256%3A2c1d"),
        "{op}"
    );
    assert!(
        pkgs.iter()
            .any(|p| p["name"] == "registry.example.com/kvstore/server"),
        "{sbom}"
    );
    assert_eq!(pkgs[0]["checksums"][0]["checksumValue"], &digest[7..]);
    check_spdx(d, &sbom);

    // Rebuilt unchanged: the same image, the same statements, nothing new written.
    let again = out(&mut olmpack(
        d,
        &[
            "bundle",
            "build",
            "src/bundle",
            "-t",
            &image,
            "--push",
            "--sign-key",
            "a.key",
            "--attest-provenance",
            "--attest-sbom",
            "--signature-format",
            "bundle",
        ],
    ));
    assert!(again.status.success(), "{}", text(&again));
    assert_eq!(
        text(&again).matches("already attested").count(),
        2,
        "{}",
        text(&again)
    );

    // Without a key, or without --push, the build refuses before building.
    let o = out(&mut olmpack(
        d,
        &[
            "bundle",
            "build",
            "src/bundle",
            "-t",
            &image,
            "--push",
            "--attest-sbom",
        ],
    ));
    assert_eq!(code(&o), 2, "{}", text(&o));
    assert!(text(&o).contains("--sign-key"), "{}", text(&o));

    // A catalog build attests the same way: its files, and every bundle image it names.
    let cat = reg.reference("catalog", "v1");
    ok(&mut olmpack(
        d,
        &[
            "catalog",
            "build",
            &crate::support::fixtures::testdata("catalogs/valid-basic")
                .display()
                .to_string(),
            "-t",
            &cat,
            "--push",
            "--sign-key",
            "a.key",
            "--attest-provenance",
            "--attest-sbom",
        ],
    ));
    let (c, v, t) = verify_json(d, &[&cat, "--key", "a.pub"]);
    assert_eq!(c, 0, "{t}");
    let found = v["attestations"].as_array().expect("attestations");
    // Both formats (the default is both): two referrers and two .att layers.
    assert_eq!(
        found.iter().filter(|f| f["verified"] == true).count(),
        4,
        "{v}"
    );
    let sbom = found
        .iter()
        .find(|f| f["statement"]["predicateType"] == SPDX)
        .expect("sbom")["statement"]["predicate"]
        .clone();
    assert!(
        sbom["packages"]
            .as_array()
            .expect("packages")
            .iter()
            .any(|p| p["name"] == "quay.io/example/foo-bundle" && p["versionInfo"] == "v0.1.0"),
        "{sbom}"
    );
    check_spdx(d, &sbom);
    let prov = found
        .iter()
        .find(|f| f["statement"]["predicateType"] == SLSA)
        .expect("provenance")["statement"]["predicate"]
        .clone();
    assert!(
        prov["buildDefinition"]["resolvedDependencies"]
            .as_array()
            .expect("deps")
            .iter()
            .any(|x| x["name"] == "catalog.yaml"),
        "{prov}"
    );
}
