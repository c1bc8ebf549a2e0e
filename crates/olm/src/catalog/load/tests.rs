use super::*;
use crate::findings::Rule;
use base64::Engine as _;
use std::fs;

fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for (rel, text) in files {
        let path = dir.path().join(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).expect("mkdir");
        }
        fs::write(path, text).expect("write");
    }
    dir
}

fn rules(loaded: &Loaded) -> Vec<(String, String, usize)> {
    loaded
        .diagnostics
        .iter()
        .map(|d| {
            (
                d.rule.id().to_string(),
                d.file.clone().unwrap_or_default(),
                d.line.unwrap_or(0),
            )
        })
        .collect()
}

const PKG: &str = "---\nschema: olm.package\nname: foo\ndefaultChannel: stable\n";

#[test]
fn walks_every_file_in_lexical_order_without_extension_filter() {
    let dir = tree(&[
        ("b.yaml", "schema: olm.package\nname: b\n"),
        ("a/z.json", "{\"schema\":\"olm.package\",\"name\":\"az\"}"),
        ("a.yaml", "schema: olm.package\nname: a\n"),
        ("README", "schema: olm.package\nname: readme\n"),
    ]);
    let loaded = load_dir(dir.path()).expect("load");
    let names: Vec<&str> = loaded
        .config
        .packages
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    // fs.WalkDir order: "README" < "a" < "a.yaml" < "b.yaml" (bytes), folders entered in place.
    assert_eq!(names, ["readme", "az", "a", "b"]);
    assert_eq!(loaded.files, ["README", "a/z.json", "a.yaml", "b.yaml"]);
    assert!(loaded.diagnostics.is_empty(), "{:?}", loaded.diagnostics);
}

#[test]
fn indexignore_at_any_depth_with_reinclusion() {
    let dir = tree(&[
        (
            ".indexignore",
            "# docs\nREADME.md\nobjects/\n!objects/keep.yaml\n",
        ),
        ("README.md", "# not yaml: {"),
        ("pkg/README.md", "# not yaml: {"),
        ("pkg/objects/csv.json", "not json"),
        ("objects/keep.yaml", "schema: olm.package\nname: kept\n"),
        ("objects/drop.yaml", "garbage: ["),
        ("sub/.indexignore", "*.txt\n"),
        ("sub/notes.txt", "garbage: ["),
        ("notes.txt", "schema: olm.package\nname: root-txt\n"),
        ("pkg/catalog.yaml", PKG),
    ]);
    let loaded = load_dir(dir.path()).expect("load");
    assert!(loaded.diagnostics.is_empty(), "{:?}", loaded.diagnostics);
    assert_eq!(
        loaded.files,
        ["notes.txt", "objects/keep.yaml", "pkg/catalog.yaml"]
    );
}

#[test]
fn every_broken_file_is_reported_and_the_rest_loads() {
    let dir = tree(&[
        ("a.yaml", "schema: olm.package\nname: [\n"),
        ("b.yaml", PKG),
        ("c.json", "{\"schema\": \"olm.bundle\", \"image\": 3}"),
        (
            "d.yaml",
            "---\nname: x\n---\nschema: olm.channel\nname: s\npackage: foo\n",
        ),
        ("e.yaml", "Schema: olm.package\nschema: olm.package\n"),
        ("f.yaml", "schema: 1\n"),
        ("g.yaml", "- a\n- b\n"),
    ]);
    let loaded = load_dir_with(
        dir.path(),
        &LoadOptions {
            jobs: Some(3),
            ..LoadOptions::default()
        },
    )
    .expect("load");
    assert_eq!(
        rules(&loaded),
        [
            ("catalog/syntax".into(), "a.yaml".into(), 2),
            ("catalog/field-type".into(), "c.json".into(), 1),
            ("catalog/missing-schema".into(), "d.yaml".into(), 2),
            ("catalog/duplicate-key".into(), "e.yaml".into(), 1),
            ("catalog/meta-type".into(), "f.yaml".into(), 1),
            ("catalog/blob-shape".into(), "g.yaml".into(), 1),
        ]
    );
    assert_eq!(loaded.config.packages.len(), 1);
    assert_eq!(loaded.config.channels.len(), 1);
    assert_eq!(loaded.config.channels[0].origin.line, 4);
    let message = &loaded.diagnostics[1].message;
    assert!(
        message.contains(
            "json: cannot unmarshal number into Go struct field Bundle.image of type string"
        ),
        "{message}"
    );
}

#[test]
fn unknown_schemas_are_kept_as_sorted_compact_json() {
    let loaded = load_bytes(
        "t.yaml",
        b"schema: olm.template.basic\nzeta: 1.0\nalpha: {b: <x>, a: 2}\npackage: p\n",
    );
    assert!(loaded.diagnostics.is_empty());
    let other = &loaded.config.others[0];
    assert_eq!(other.schema, "olm.template.basic");
    assert_eq!(other.package, "p");
    assert_eq!(
        other.blob.get(),
        r#"{"alpha":{"a":2,"b":"<x>"},"package":"p","schema":"olm.template.basic","zeta":1}"#
    );
}

#[test]
fn bundle_objects_are_decoded_and_the_csv_found() {
    let csv = r#"{"apiVersion":"operators.coreos.com/v1alpha1","kind":"ClusterServiceVersion","metadata":{"name":"foo.v1"}}"#;
    let crd = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n";
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let text = format!(
        "schema: olm.bundle\nname: foo.v1\npackage: foo\nimage: x\nproperties:\n- type: olm.bundle.object\n  value: {{data: {}}}\n- type: olm.bundle.object\n  value: {{data: {}}}\n",
        b64(crd),
        b64(csv)
    );
    let loaded = load_bytes("c.yaml", text.as_bytes());
    assert!(loaded.diagnostics.is_empty(), "{:?}", loaded.diagnostics);
    let b = &loaded.config.bundles[0];
    assert_eq!(b.objects.len(), 2);
    assert!(b.objects[0].starts_with("{\"apiVersion\""));
    assert_eq!(b.csv_json.as_deref(), Some(csv));
    // Line breaks inside the base64 text are skipped, as Go's decoder skips them.
    let encoded = b64(csv);
    let (head, tail) = encoded.split_at(20);
    let wrapped = format!(
        "{{\"schema\":\"olm.bundle\",\"name\":\"foo.v1\",\"package\":\"foo\",\"properties\":[{{\"type\":\"olm.bundle.object\",\"value\":{{\"data\":\"{head}\\r\\n{tail}\\n\"}}}}]}}"
    );
    let loaded = load_bytes("c.json", wrapped.as_bytes());
    assert!(loaded.diagnostics.is_empty(), "{:?}", loaded.diagnostics);
    assert_eq!(loaded.config.bundles[0].csv_json.as_deref(), Some(csv));
    let bad = load_bytes(
        "c.yaml",
        b"schema: olm.bundle\nname: x\nproperties:\n- type: olm.bundle.object\n  value: {data: '!!'}\n",
    );
    assert_eq!(
        rules(&bad),
        [("catalog/bundle-object".into(), "c.yaml".into(), 1)]
    );
}

#[test]
fn opm_1_26_refs_are_read_relative_to_the_file() {
    let dir = tree(&[
        (".indexignore", "objects\n"),
        (
            "pkg/catalog.yaml",
            "schema: olm.bundle\nname: foo.v1\nproperties:\n- type: olm.bundle.object\n  value: {ref: objects/csv.yaml}\n- type: olm.bundle.object\n  value: {ref: ../../etc/passwd}\n",
        ),
        (
            "pkg/objects/csv.yaml",
            "kind: ClusterServiceVersion\nmetadata: {name: foo.v1}\n",
        ),
    ]);
    let loaded = load_dir(dir.path()).expect("load");
    let b = &loaded.config.bundles[0];
    assert!(b.csv_json.as_deref().is_some_and(|c| c.contains("foo.v1")));
    assert!(b.properties[0].value.get().starts_with("{\"data\":\""));
    assert_eq!(
        rules(&loaded),
        [("catalog/bundle-object".into(), "pkg/catalog.yaml".into(), 1)]
    );
    assert!(
        loaded.diagnostics[0]
            .message
            .contains("outside the catalog")
    );
}

#[test]
fn results_do_not_depend_on_worker_count() {
    let mut files = Vec::new();
    for i in 0..40 {
        files.push((
            format!("p{i:02}/catalog.yaml"),
            format!("schema: olm.package\nname: p{i}\n---\nschema: olm.channel\nname: c\npackage: p{i}\nentries: [{{name: b{i}}}]\n---\nbroken: [\n"),
        ));
    }
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let dir = tree(&refs);
    let one = load_dir_with(
        dir.path(),
        &LoadOptions {
            jobs: Some(1),
            ..LoadOptions::default()
        },
    )
    .expect("load");
    let four = load_dir_with(
        dir.path(),
        &LoadOptions {
            jobs: Some(4),
            ..LoadOptions::default()
        },
    )
    .expect("load");
    let names =
        |l: &Loaded| -> Vec<String> { l.config.packages.iter().map(|p| p.name.clone()).collect() };
    assert_eq!(names(&one), names(&four));
    assert_eq!(rules(&one), rules(&four));
    assert_eq!(one.diagnostics.len(), 40);
    assert_eq!(
        one.config.channels[3].entries.as_ref().map(Vec::len),
        Some(1)
    );
}

#[test]
fn root_errors() {
    let dir = tree(&[("f.yaml", PKG)]);
    assert!(matches!(
        load_dir(&dir.path().join("f.yaml")),
        Err(LoadError::NotADirectory { .. })
    ));
    assert!(matches!(
        load_dir(&dir.path().join("missing")),
        Err(LoadError::Unreadable { .. })
    ));
    // An empty folder is a valid, empty catalog.
    let empty = tempfile::tempdir().expect("tempdir");
    let loaded = load_dir(empty.path()).expect("load");
    assert!(loaded.diagnostics.is_empty() && loaded.config.packages.is_empty());
    let _ = Rule::CatalogSyntax;
}

/// A catalog folder taken out of an image is read beneath its root: a file that is a link out
/// of it and a `ref` object through such a link give diagnostics naming the file, never the
/// host file's content; a folder of the user's still follows its links. (A link to
/// `/dev/zero` is refused too: `tests/cli/hostile_images.rs`, under a memory cap.)
#[test]
fn a_confined_load_reads_nothing_outside_the_folder() {
    let outside = tempfile::tempdir().expect("tempdir");
    let secret = outside.path().join("secret.json");
    fs::write(
        &secret,
        "{\"schema\":\"olm.package\",\"name\":\"host-secret\"}",
    )
    .unwrap();
    let dir = tree(&[(
        "pkg/bundle.json",
        "{\"schema\":\"olm.bundle\",\"name\":\"b.v1\",\"package\":\"foo\",\"image\":\"x\",\"properties\":[{\"type\":\"olm.bundle.object\",\"value\":{\"ref\":\"obj/o.json\"}}]}",
    )]);
    let up = "../".repeat(40);
    let host = secret.display().to_string();
    let host = host.trim_start_matches('/');
    std::os::unix::fs::symlink(format!("{up}{host}"), dir.path().join("pkg/esc.json")).unwrap();
    fs::create_dir_all(dir.path().join("pkg/obj")).unwrap();
    std::os::unix::fs::symlink(format!("../{up}{host}"), dir.path().join("pkg/obj/o.json"))
        .unwrap();

    let confined = load_dir_with(dir.path(), &LoadOptions::for_image()).expect("load");
    let shown = format!("{:?} {:?}", confined.config, confined.diagnostics);
    assert!(!shown.contains("host-secret"), "{shown}");
    assert!(confined.config.packages.is_empty());
    let files: Vec<String> = confined
        .diagnostics
        .iter()
        .filter(|d| d.message.contains("leads out of the folder"))
        .filter_map(|d| d.file.clone())
        .collect();
    assert_eq!(
        files,
        ["pkg/bundle.json", "pkg/esc.json", "pkg/obj/o.json",],
        "{shown}"
    );

    // A folder of the user's: opm follows its links, and so does olmpack.
    let open = load_dir(dir.path()).expect("load");
    assert!(format!("{:?}", open.config).contains("host-secret"));
}
