//! Hostile and malformed input: olmpack must never panic, hang or crash on it. Every case builds a
//! bundle in a temporary folder (a copy of `testdata/bundles/valid-basic` with one defect), runs
//! `olmpack bundle validate` and checks the documented exit code (1 for findings, 2 for usage and
//! I/O problems), a clear message that names the file (and line when there is one), no `panicked`
//! on stderr, and that the run finishes within a guard timeout.

use crate::support::cmd::olmpack_through;
use crate::support::fixtures::valid_basic;
use crate::support::fs::copy_dir;
use crate::support::proc::{Bounded, read_limited_prefix};
use assert_cmd::Command;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const CSV: &str = "manifests/kvstore-operator.clusterserviceversion.yaml";
const ANN: &str = "metadata/annotations.yaml";
const SERVICE: &str = "manifests/kvstore-operator-metrics_v1_service.yaml";
const GUARD: Duration = Duration::from_secs(30);

/// A fresh copy of valid-basic in a temporary folder (kept alive by the returned guard).
fn bundle() -> (tempfile::TempDir, PathBuf) {
    let temp = tempfile::tempdir().expect("temp dir");
    let dir = temp.path().join("bundle");
    copy_dir(&valid_basic(), &dir);
    (temp, dir)
}

fn read(dir: &Path, rel: &str) -> String {
    fs::read_to_string(dir.join(rel)).expect("read")
}

fn write(dir: &Path, rel: &str, content: impl AsRef<[u8]>) {
    let path = dir.join(rel);
    fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    fs::write(path, content).expect("write");
}

/// Replaces exactly one occurrence of `old` in a bundle file.
fn edit(dir: &Path, rel: &str, old: &str, new: &str) {
    let text = read(dir, rel);
    assert_eq!(text.matches(old).count(), 1, "{old:?} in {rel}");
    write(dir, rel, text.replacen(old, new, 1));
}

struct Outcome {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Outcome {
    fn all(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }
}

/// Runs `olmpack ARGS...` (through `prefix` when given) under the guard: a thread does the work
/// and the test fails if it has not answered within [`GUARD`]. The child is killed at the same
/// deadline by assert_cmd, so a hang cannot outlive the test.
fn olmpack_as(prefix: &[&'static str], args: Vec<String>) -> Outcome {
    let prefix: Vec<&'static str> = prefix.to_vec();
    let shown = args.join(" ");
    let (tx, rx) = mpsc::channel();
    let started = Instant::now();
    std::thread::spawn(move || {
        let mut cmd = Command::from_std(olmpack_through(&prefix));
        let out = cmd.args(&args).timeout(GUARD).bounded_output();
        let _ = tx.send(out);
    });
    let out = match rx.recv_timeout(GUARD + Duration::from_secs(2)) {
        Ok(out) => out.expect("run olmpack"),
        Err(_) => panic!("olmpack {shown} did not finish within {GUARD:?}"),
    };
    let outcome = Outcome {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert!(
        !outcome.stderr.contains("panicked"),
        "olmpack {shown} panicked:\n{}",
        outcome.stderr
    );
    assert_ne!(
        outcome.code,
        -1,
        "olmpack {shown} was killed after {:?} (timeout or signal):\n{}",
        started.elapsed(),
        outcome.stderr
    );
    outcome
}

fn validate(dir: &Path, extra: &[&str]) -> Outcome {
    validate_as(&[], dir, extra)
}

fn validate_as(prefix: &[&'static str], dir: &Path, extra: &[&str]) -> Outcome {
    let mut args: Vec<String> = ["bundle", "validate", "--color", "never"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.push(dir.display().to_string());
    args.extend(extra.iter().map(|s| s.to_string()));
    olmpack_as(prefix, args)
}

/// Asserts the exit code and that the output holds each needle.
fn expect(out: &Outcome, code: i32, needles: &[&str]) {
    let all = out.all();
    assert_eq!(out.code, code, "exit code; output:\n{all}");
    for needle in needles {
        assert!(all.contains(needle), "output lacks {needle:?}:\n{all}");
    }
}

// ---------------------------------------------------------------------------------------------

#[test]
fn not_yaml() {
    let (_t, dir) = bundle();
    write(&dir, "manifests/notes.yaml", "this: is: not yaml\n");
    let out = validate(&dir, &[]);
    expect(
        &out,
        1,
        &["error[yaml/syntax] manifests/notes.yaml:1:", "column"],
    );
}

#[test]
fn binary_file() {
    let (_t, dir) = bundle();
    let mut bytes = b"apiVersion: v1\nkind: ConfigMap\n".to_vec();
    bytes.extend([0xff, 0xfe, 0x00, 0x89, b'P', b'N', b'G']);
    write(&dir, "manifests/blob.yaml", bytes);
    let out = validate(&dir, &[]);
    expect(
        &out,
        1,
        &["error[file/not-text] manifests/blob.yaml:3:", "not UTF-8"],
    );
}

#[test]
fn nul_bytes_are_text_but_not_yaml() {
    let (_t, dir) = bundle();
    write(&dir, "manifests/zeros.yaml", vec![0u8; 4096]);
    let out = validate(&dir, &[]);
    expect(&out, 1, &["manifests/zeros.yaml:1:"]);
}

#[test]
fn binary_annotations() {
    let (_t, dir) = bundle();
    write(&dir, ANN, [0xc3, 0x28, b'\n', 0xa0, 0xa1]);
    let out = validate(&dir, &[]);
    expect(
        &out,
        1,
        &["error[file/not-text] metadata/annotations.yaml:1:"],
    );
}

#[test]
fn truncated_yaml() {
    let (_t, dir) = bundle();
    let text = read(&dir, CSV);
    let cut = text.find("storage, database]").expect("keywords");
    write(&dir, CSV, &text[..cut]);
    let out = validate(&dir, &[]);
    expect(
        &out,
        1,
        &[
            &format!("error[yaml/syntax] {CSV}:"),
            "error[csv/missing] manifests/: no parsable ClusterServiceVersion",
            CSV,
        ],
    );
}

#[test]
fn duplicate_keys_name_the_line_of_both() {
    let (_t, dir) = bundle();
    edit(
        &dir,
        CSV,
        "  version: 1.2.0\n",
        "  version: 1.2.0\n  version: 1.3.0\n",
    );
    let out = validate(&dir, &[]);
    expect(
        &out,
        1,
        &[
            &format!("error[yaml/duplicate-key] {CSV}:27: duplicate key \"version\""),
            "first defined on line 26",
        ],
    );
}

#[test]
fn wrong_types_named_in_the_brief() {
    // spec is a list.
    let (_t, dir) = bundle();
    let text = read(&dir, CSV);
    let spec = text.find("\nspec:\n").expect("spec");
    write(&dir, CSV, format!("{}\nspec: []\n", &text[..spec]));
    let out = validate(&dir, &[]);
    expect(
        &out,
        1,
        &[&format!(
            "error[csv/required-field] {CSV}:1: spec is missing or not a mapping"
        )],
    );

    // installModes is a string.
    let (_t, dir) = bundle();
    let text = read(&dir, CSV);
    let start = text.find("  installModes:\n").expect("installModes");
    let end = text.find("  customresourcedefinitions:\n").expect("crds");
    write(
        &dir,
        CSV,
        format!("{}  installModes: \"x\"\n{}", &text[..start], &text[end..]),
    );
    let out = validate(&dir, &[]);
    expect(&out, 1, &[&format!("error[csv/install-modes] {CSV}:42:")]);

    // annotations is a list.
    let (_t, dir) = bundle();
    write(
        &dir,
        ANN,
        "annotations:\n  - operators.operatorframework.io.bundle.package.v1\n",
    );
    let out = validate(&dir, &[]);
    expect(
        &out,
        1,
        &[
            "error[format/annotations-missing] metadata/annotations.yaml:2: `annotations` must be a mapping",
        ],
    );
}

/// Every field the rules read, replaced by each wrong type in turn: no panic, a verdict, and
/// (for the fields whose type OLM checks) a failure.
#[test]
fn wrong_types_everywhere_never_panic() {
    let replacements: &[(&str, &str, &str)] = &[
        (
            CSV,
            "metadata:\n  name: kvstore-operator.v1.2.0\n  namespace: placeholder\n  annotations:\n",
            "metadata: 7\nxannotations:\n",
        ),
        (CSV, "  name: kvstore-operator.v1.2.0\n", "  name: [a, b]\n"),
        (CSV, "  version: 1.2.0\n", "  version: {major: 1}\n"),
        (
            CSV,
            "  replaces: kvstore-operator.v1.1.0\n",
            "  replaces: [x]\n",
        ),
        (
            CSV,
            "  minKubeVersion: 1.25.0\n",
            "  minKubeVersion: [1, 25]\n",
        ),
        (
            CSV,
            "  provider:\n    name: Example Inc.\n",
            "  provider: Example\n",
        ),
        (
            CSV,
            "  keywords: [kv, storage, database]\n",
            "  keywords: {a: b}\n",
        ),
        (
            CSV,
            "  maintainers:\n",
            "  maintainers: 3\n  xmaintainers:\n",
        ),
        (CSV, "  links:\n", "  links: true\n  xlinks:\n"),
        (CSV, "  icon:\n", "  icon: abc\n  xicon:\n"),
        (
            CSV,
            "    capabilities: Seamless Upgrades\n",
            "    capabilities: [a]\n",
        ),
        (
            CSV,
            "    categories: Database\n",
            "    categories: {a: b}\n",
        ),
        (
            CSV,
            "    createdAt: \"2026-01-15T10:00:00Z\"\n",
            "    olm.skipRange: [1]\n",
        ),
        (
            CSV,
            "  installModes:\n",
            "  installModes: {a: b}\n  xinstallModes:\n",
        ),
        (
            CSV,
            "    - type: OwnNamespace\n",
            "    - type: [OwnNamespace]\n",
        ),
        (
            CSV,
            "  customresourcedefinitions:\n",
            "  customresourcedefinitions: []\n  xcustomresourcedefinitions:\n",
        ),
        (CSV, "    owned:\n", "    owned: \"x\"\n    xowned:\n"),
        (
            CSV,
            "      - name: kvclusters.kvstore.example.com\n",
            "      - name: {a: b}\n",
        ),
        (CSV, "  install:\n", "  install: deployment\n  xinstall:\n"),
        (
            CSV,
            "      deployments:\n",
            "      deployments: {a: b}\n      xdeployments:\n",
        ),
        (
            CSV,
            "        - name: kvstore-operator\n",
            "        - name: 5\n",
        ),
        (
            CSV,
            "                containers:\n",
            "                containers: 5\n                xcontainers:\n",
        ),
        (
            CSV,
            "            - apiGroups: [kvstore.example.com]\n",
            "            - apiGroups: kvstore.example.com\n",
        ),
        (
            CSV,
            "  relatedImages:\n",
            "  relatedImages: \"x\"\n  xrelatedImages:\n",
        ),
        (
            CSV,
            "    alm-examples: |-\n",
            "    alm-examples: 5\n    xalm-examples: |-\n",
        ),
        (
            "manifests/kvstore.example.com_kvclusters.yaml",
            "  versions:\n",
            "  versions: v1\n  xversions:\n",
        ),
        (
            "manifests/kvstore.example.com_kvclusters.yaml",
            "  names:\n",
            "  names: [a]\n  xnames:\n",
        ),
        (
            "manifests/kvstore.example.com_kvclusters.yaml",
            "      served: true\n",
            "      served: [true]\n",
        ),
        (
            "manifests/kvstore.example.com_kvclusters.yaml",
            "\nspec:\n  group:",
            "\nspec: 1\nxspec:\n  group:",
        ),
        (SERVICE, "metadata:\n", "metadata: [a]\nxmetadata:\n"),
        (SERVICE, "  labels:\n", "  labels: [a]\n  xlabels:\n"),
        (
            ANN,
            "  operators.operatorframework.io.bundle.channels.v1: \"stable,fast\"\n",
            "  operators.operatorframework.io.bundle.channels.v1: {a: b}\n",
        ),
        (
            "metadata/dependencies.yaml",
            "dependencies:\n",
            "dependencies: x\nxdependencies:\n",
        ),
        (
            "metadata/dependencies.yaml",
            "  - type: olm.package\n    value:\n",
            "  - type: olm.package\n    value: 5\n    xvalue:\n",
        ),
    ];
    // Wrong types olmpack does not report yet (operator-sdk's typed decoding rejects them; the
    // API server rejects the Service labels): only "no panic, a verdict" is checked for these
    // until src reports them. Remove an entry once it is reported.
    // An integer where a string belongs is read as its text, as YAML-to-JSON decoding
    // in the reference tools does for most string fields.
    const NOT_REPORTED_YET: &[&str] = &["        - name: 5\n"];
    let mut failures = Vec::new();
    for (rel, old, new) in replacements {
        let (_t, dir) = bundle();
        edit(&dir, rel, old, new);
        let out = validate(&dir, &["--select-optional", "all"]);
        if NOT_REPORTED_YET.contains(new) {
            if out.code != 0 && out.code != 1 {
                failures.push(format!("{rel}: {new:?}: exit {}\n{}", out.code, out.all()));
            }
        } else if out.code != 1 {
            failures.push(format!(
                "{rel}: {new:?}: exit {} (expected 1: a wrong type is a finding)\n{}",
                out.code,
                out.all()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn folder_where_a_file_is_expected() {
    let (_t, dir) = bundle();
    fs::remove_file(dir.join(ANN)).expect("rm");
    fs::create_dir(dir.join(ANN)).expect("mkdir");
    let out = validate(&dir, &[]);
    expect(
        &out,
        1,
        &["error[file/not-text] metadata/annotations.yaml: is a folder"],
    );
}

#[test]
fn symlink_outside_the_bundle() {
    let (_t, dir) = bundle();
    std::os::unix::fs::symlink("/etc/hostname", dir.join("manifests/host.yaml")).expect("ln");
    let out = validate(&dir, &[]);
    expect(
        &out,
        1,
        &["error[file/symlink] manifests/host.yaml: symlink points outside the bundle"],
    );
}

#[test]
fn symlink_escaping_through_dot_dot() {
    let (t, dir) = bundle();
    write(
        t.path(),
        "secret.yaml",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n",
    );
    std::os::unix::fs::symlink("../../secret.yaml", dir.join("manifests/secret.yaml")).expect("ln");
    let out = validate(&dir, &[]);
    expect(
        &out,
        1,
        &["error[file/symlink] manifests/secret.yaml: symlink points outside the bundle"],
    );
}

#[test]
fn symlink_inside_the_bundle_is_followed() {
    let (_t, dir) = bundle();
    let target = dir.join(SERVICE);
    fs::rename(&target, dir.join("service.yaml")).expect("mv");
    std::os::unix::fs::symlink("../service.yaml", &target).expect("ln");
    let out = validate(&dir, &[]);
    expect(&out, 0, &["valid (0 errors, 0 warnings)"]);
}

#[test]
fn symlink_loop() {
    let (_t, dir) = bundle();
    std::os::unix::fs::symlink("b.yaml", dir.join("manifests/a.yaml")).expect("ln");
    std::os::unix::fs::symlink("a.yaml", dir.join("manifests/b.yaml")).expect("ln");
    let out = validate(&dir, &[]);
    expect(
        &out,
        1,
        &[
            "error[file/symlink] manifests/a.yaml: symlink cannot be followed",
            "error[file/symlink] manifests/b.yaml: symlink cannot be followed",
        ],
    );
}

#[test]
fn symlinked_metadata_folder_loop() {
    let (_t, dir) = bundle();
    fs::remove_dir_all(dir.join("metadata")).expect("rm");
    std::os::unix::fs::symlink("metadata", dir.join("metadata")).expect("ln");
    let out = validate(&dir, &[]);
    assert!(out.code == 1 || out.code == 2, "{}", out.all());
    assert!(out.all().contains("metadata"), "{}", out.all());
}

#[test]
fn huge_sparse_file() {
    let (_t, dir) = bundle();
    let f = fs::File::create(dir.join("manifests/huge.yaml")).expect("create");
    f.set_len(200 * 1024 * 1024).expect("set_len");
    drop(f);
    // Bounded by the guard (the file is refused by its size, never read); speed is not asserted.
    let out = validate(&dir, &[]);
    expect(
        &out,
        1,
        &["error[file/too-large] manifests/huge.yaml: file is 200 MiB"],
    );
}

#[test]
fn huge_sparse_metadata_file() {
    let (_t, dir) = bundle();
    let f = fs::File::create(dir.join("metadata/properties.yaml")).expect("create");
    f.set_len(200 * 1024 * 1024).expect("set_len");
    drop(f);
    let out = validate(&dir, &[]);
    expect(
        &out,
        1,
        &["error[file/too-large] metadata/properties.yaml: file is 200 MiB"],
    );
}

#[test]
fn fifo_in_manifests() {
    let (_t, dir) = bundle();
    let fifo = dir.join("manifests/pipe.yaml");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .bounded_status()
        .expect("mkfifo");
    assert!(status.success());
    let out = validate(&dir, &[]);
    expect(
        &out,
        1,
        &["error[file/not-text] manifests/pipe.yaml: not a regular file"],
    );
}

#[test]
fn fifo_in_metadata() {
    let (_t, dir) = bundle();
    fs::remove_file(dir.join("metadata/dependencies.yaml")).expect("rm");
    let status = std::process::Command::new("mkfifo")
        .arg(dir.join("metadata/dependencies.yaml"))
        .bounded_status()
        .expect("mkfifo");
    assert!(status.success());
    let out = validate(&dir, &[]);
    expect(
        &out,
        1,
        &["error[file/not-text] metadata/dependencies.yaml: not a regular file"],
    );
}

#[test]
fn empty_file() {
    let (_t, dir) = bundle();
    write(&dir, "manifests/empty.yaml", "");
    let out = validate(&dir, &[]);
    expect(
        &out,
        1,
        &["error[object/shape] manifests/empty.yaml: file holds no YAML document"],
    );
}

#[test]
fn only_document_markers() {
    let (_t, dir) = bundle();
    write(&dir, "manifests/dashes.yaml", "---\n");
    let out = validate(&dir, &[]);
    expect(
        &out,
        1,
        &["error[object/shape] manifests/dashes.yaml: file holds no YAML document"],
    );
    write(&dir, "manifests/dashes.yaml", "---\n---\n...\n---\n");
    let out = validate(&dir, &[]);
    expect(&out, 1, &["manifests/dashes.yaml"]);
}

#[test]
fn empty_annotations_file() {
    let (_t, dir) = bundle();
    write(&dir, ANN, "");
    let out = validate(&dir, &[]);
    expect(
        &out,
        1,
        &["error[format/annotations-missing] metadata/annotations.yaml:1:"],
    );
}

#[test]
fn deeply_nested_yaml() {
    let (_t, dir) = bundle();
    write(&dir, "manifests/deep.yaml", "[".repeat(100_000));
    let out = validate(&dir, &[]);
    expect(&out, 1, &["error[yaml/syntax] manifests/deep.yaml:1:"]);
    // Closed properly, still too deep; and as nested mappings in a metadata file.
    let (_t, dir) = bundle();
    write(
        &dir,
        "manifests/deep.yaml",
        format!("{}{}", "[".repeat(100_000), "]".repeat(100_000)),
    );
    write(&dir, "metadata/properties.yaml", "{a: ".repeat(100_000));
    let out = validate(&dir, &[]);
    expect(
        &out,
        1,
        &[
            "error[yaml/syntax] manifests/deep.yaml:1:",
            "error[yaml/syntax] metadata/properties.yaml:1:",
        ],
    );
}

#[test]
fn alias_bomb() {
    let mut text = String::from(
        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    for (prev, name) in ["a", "b", "c", "d", "e", "f", "g", "h"]
        .iter()
        .zip(["b", "c", "d", "e", "f", "g", "h", "i"])
    {
        let refs = vec![format!("*{prev}"); 9].join(",");
        text.push_str(&format!("{name}: &{name} [{refs}]\n"));
    }
    let (_t, dir) = bundle();
    write(&dir, "manifests/bomb.yaml", &text);
    write(&dir, "metadata/properties.yaml", &text);
    let out = validate(&dir, &[]);
    expect(
        &out,
        1,
        &[
            "error[yaml/syntax] manifests/bomb.yaml:",
            "error[yaml/syntax] metadata/properties.yaml:",
            "alias bomb",
        ],
    );
}

#[test]
fn missing_bundle_folder() {
    let temp = tempfile::tempdir().expect("temp");
    let dir = temp.path().join("no-such-bundle");
    let out = validate(&dir, &[]);
    expect(&out, 2, &["no-such-bundle", "does not exist"]);
}

#[test]
fn regular_file_instead_of_folder() {
    let temp = tempfile::tempdir().expect("temp");
    let file = temp.path().join("bundle.yaml");
    fs::write(&file, "annotations: {}\n").expect("write");
    let out = validate(&file, &[]);
    expect(&out, 2, &["bundle.yaml", "is not a folder"]);
}

#[test]
fn missing_folder_among_good_ones_still_reports_the_good_ones() {
    let temp = tempfile::tempdir().expect("temp");
    let missing = temp.path().join("gone");
    let out = olmpack_as(
        &[],
        vec![
            "bundle".into(),
            "validate".into(),
            "--color".into(),
            "never".into(),
            valid_basic().display().to_string(),
            missing.display().to_string(),
        ],
    );
    expect(&out, 2, &["gone", "does not exist", "valid-basic: valid"]);
}

#[test]
fn unreadable_file() {
    use std::os::unix::fs::PermissionsExt;
    let prefix = match read_limited_prefix() {
        None => Vec::new(),
        Some(Some(prefix)) => prefix,
        Some(None) => {
            crate::support::shared::skip(
                "unreadable_file: running as root and setpriv cannot drop CAP_DAC_OVERRIDE here (util-linux)",
            );
            return;
        }
    };
    let (_t, dir) = bundle();
    fs::set_permissions(dir.join(SERVICE), fs::Permissions::from_mode(0o000)).expect("chmod");
    let out = validate_as(&prefix, &dir, &[]);
    expect(
        &out,
        2,
        &[&format!("error[file/unreadable] {SERVICE}: cannot read")],
    );
}

#[test]
fn unreadable_folder() {
    use std::os::unix::fs::PermissionsExt;
    let prefix = match read_limited_prefix() {
        None => Vec::new(),
        Some(Some(prefix)) => prefix,
        Some(None) => {
            crate::support::shared::skip(
                "unreadable_folder: running as root and setpriv cannot drop CAP_DAC_OVERRIDE here (util-linux)",
            );
            return;
        }
    };
    let (_t, dir) = bundle();
    fs::set_permissions(dir.join("metadata"), fs::Permissions::from_mode(0o000)).expect("chmod");
    let out = validate_as(&prefix, &dir, &[]);
    fs::set_permissions(dir.join("metadata"), fs::Permissions::from_mode(0o755)).expect("chmod");
    expect(&out, 2, &["error[file/unreadable] metadata"]);
}

#[test]
fn unreadable_bundle_root() {
    use std::os::unix::fs::PermissionsExt;
    let prefix = match read_limited_prefix() {
        None => Vec::new(),
        Some(Some(prefix)) => prefix,
        Some(None) => {
            crate::support::shared::skip(
                "unreadable_bundle_root: running as root and setpriv cannot drop CAP_DAC_OVERRIDE here (util-linux)",
            );
            return;
        }
    };
    let (_t, dir) = bundle();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o000)).expect("chmod");
    let out = validate_as(&prefix, &dir, &[]);
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).expect("chmod");
    expect(&out, 2, &["cannot read bundle folder", "bundle"]);
}

#[test]
fn json_output_stays_valid_json_on_hostile_input() {
    let (_t, dir) = bundle();
    write(&dir, "manifests/deep.yaml", "[".repeat(100_000));
    write(&dir, "manifests/quote\"and tab\t.yaml", "key: \"\u{7}\n");
    let out = olmpack_as(
        &[],
        vec![
            "bundle".into(),
            "validate".into(),
            "-o".into(),
            "json".into(),
            dir.display().to_string(),
        ],
    );
    assert_eq!(out.code, 1, "{}", out.all());
    let json: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
    let files: Vec<&str> = json["outputs"]
        .as_array()
        .expect("outputs")
        .iter()
        .filter_map(|o| o["file"].as_str())
        .collect();
    assert!(files.contains(&"manifests/deep.yaml"), "{files:?}");
    assert!(
        files.contains(&"manifests/quote\"and tab\t.yaml"),
        "{files:?}"
    );
}
