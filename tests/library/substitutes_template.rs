//! Every test case of operator-registry's `alpha/template/substitutes/substitutes_test.go`
//! (current main, read at 4f9d6f22), ported: `TestParseSpec` (6), `TestRender` (9), `TestProcessSubstitution`
//! (5) and `TestBoundaryCases` (13). Upstream checks structure and error substrings, not bytes;
//! so do these. Case names are upstream's.

use base64::Engine;
use olmpack::catalog::load::load_bytes;
use olmpack::catalog::model::{Bundle, ChannelEntry, DeclarativeConfig};
use olmpack::catalog::template::substitutes::{SCHEMA, Substitution, process, read_spec};
use olmpack::catalog::template::{
    BundleRenderError, OpmCompat, TemplateError, TemplateOptions, TemplateType,
    render_template_checked,
};
use olmpack::findings::Severity;
use olmpack::validate::catalog::first_model_error;
use serde_json::{Value as J, json};

const CSV: &str = r#"{"kind": "ClusterServiceVersion", "apiVersion": "operators.coreos.com/v1alpha1", "metadata":{"name":NAME}}"#;
const CRD: &str =
    r#"{"kind": "CustomResourceDefinition", "apiVersion": "apiextensions.k8s.io/v1"}"#;

fn csv(name: &str) -> String {
    CSV.replace("NAME", &json!(name).to_string())
}

fn object(data: &str) -> J {
    json!({"type": "olm.bundle.object", "value": {"data": base64::engine::general_purpose::STANDARD.encode(data)}})
}

fn package_prop(package: &str, version: &str, release: &str) -> J {
    if release.is_empty() {
        json!({"type": "olm.package", "value": {"packageName": package, "version": version}})
    } else {
        json!({"type": "olm.package", "value": {"packageName": package, "version": version, "release": release}})
    }
}

/// `createValidTestPackageMeta`.
fn package_meta(name: &str, default_channel: &str) -> J {
    json!({"schema": "olm.package", "name": name, "defaultChannel": default_channel, "description": format!("{name} operator")})
}

/// `createValidTestChannelMeta`; entries are (name, replaces).
fn channel_meta(name: &str, package: &str, entries: &[(&str, &str)]) -> J {
    let entries: Vec<J> = entries
        .iter()
        .map(|(n, r)| {
            if r.is_empty() {
                json!({"name": n})
            } else {
                json!({"name": n, "replaces": r})
            }
        })
        .collect();
    json!({"schema": "olm.channel", "name": name, "package": package, "entries": entries})
}

/// `createValidTestBundleMeta`.
fn bundle_meta(name: &str, package: &str, version: &str, release: &str) -> J {
    let name = if release.is_empty() {
        name.to_string()
    } else {
        format!("{package}-v{version}-{release}")
    };
    let image = format!("quay.io/test/{package}-bundle:v{version}");
    json!({
        "schema": "olm.bundle", "name": name, "package": package, "image": image,
        "properties": [package_prop(package, version, release), object(&csv(&name)), object(CRD)],
        "relatedImages": [{"name": "bundle", "image": image}],
    })
}

/// A bundle blob with only an `olm.package` property (upstream's bare `declcfg.Bundle`s).
fn bare_bundle(name: &str, package: &str, image: &str, version: &str, release: &str) -> J {
    json!({"schema": "olm.bundle", "name": name, "package": package, "image": image,
        "properties": [package_prop(package, version, release)]})
}

/// A bundle blob like upstream's fully populated ones in `TestProcessSubstitution`.
fn full_bundle(name: &str, image: &str, version: &str, release: &str) -> J {
    json!({
        "schema": "olm.bundle", "name": name, "package": "testoperator", "image": image,
        "properties": [package_prop("testoperator", version, release), object(&csv(name)), object(CRD)],
        "relatedImages": [{"name": "bundle", "image": image}],
    })
}

/// A declarative config from blobs, as the loader reads them.
fn cfg(blobs: &[J]) -> DeclarativeConfig {
    let text: String = blobs.iter().map(|b| format!("{b}\n")).collect();
    let loaded = load_bytes("test", text.as_bytes());
    assert!(
        loaded
            .diagnostics
            .iter()
            .all(|d| d.severity != Severity::Error),
        "{:?}",
        loaded.diagnostics
    );
    loaded.config
}

/// Upstream's mock `renderBundle`: `…:vX.Y.Z[-RELEASE]` renders a bundle of `testoperator`
/// (`test` when the reference names `test-bundle`), named `pkg-vX.Y.Z-RELEASE` or `pkg.vX.Y.Z`.
fn mock(image_ref: &str) -> Result<Vec<Bundle>, String> {
    let package = if image_ref.contains("test-bundle") {
        "test"
    } else {
        "testoperator"
    };
    let mut version = "1.0.0".to_string();
    let mut release = String::new();
    let parts: Vec<&str> = image_ref.split(":v").collect();
    if let [_, tag] = parts.as_slice() {
        match tag.split_once('-') {
            Some((v, r)) => {
                version = v.to_string();
                release = r.to_string();
            }
            None => version = tag.to_string(),
        }
    }
    let name = if release.is_empty() {
        format!("{package}.v{version}")
    } else {
        format!("{package}-v{version}-{release}")
    };
    let blob = json!({
        "schema": "olm.bundle", "name": name, "package": package, "image": image_ref,
        "properties": [package_prop(package, &version, &release), object(&csv(image_ref)), object(CRD)],
        "relatedImages": [{"name": "bundle", "image": image_ref}],
    });
    let mut c = cfg(&[blob]);
    for b in &mut c.bundles {
        b.csv_json = Some(csv(image_ref));
    }
    Ok(c.bundles)
}

/// `TestRender`'s mock: always package `testoperator`.
fn render_mock(image_ref: &str) -> Result<Vec<Bundle>, BundleRenderError> {
    mock(&image_ref.replace("test-bundle", "testoperator-bundle")).map_err(BundleRenderError::new)
}

fn sub(name: &str, base: &str) -> Substitution {
    Substitution {
        name: name.to_string(),
        base: base.to_string(),
        line: 0,
    }
}

fn template(entries: &[J], substitutions: &[Substitution]) -> String {
    let subs: Vec<J> = substitutions
        .iter()
        .map(|s| json!({"name": s.name, "base": s.base}))
        .collect();
    json!({"schema": SCHEMA, "entries": entries, "substitutions": subs}).to_string()
}

fn render_with(
    text: &str,
    options: &TemplateOptions,
    renderer: &dyn olmpack::catalog::template::BundleRenderer,
) -> Result<DeclarativeConfig, TemplateError> {
    render_template_checked("t.yaml", text, options, renderer, &first_model_error)
        .map(|(cfg, _)| cfg)
}

fn render_text(text: &str, ty: Option<TemplateType>) -> Result<DeclarativeConfig, String> {
    let options = TemplateOptions {
        template_type: ty,
        jobs: 2,
        ..TemplateOptions::default()
    };
    render_with(text, &options, &render_mock).map_err(|e| e.message)
}

fn entries_of(c: &DeclarativeConfig, channel: usize) -> &[ChannelEntry] {
    c.channels
        .get(channel)
        .and_then(|ch| ch.entries.as_deref())
        .unwrap_or(&[])
}

fn entry<'a>(c: &'a DeclarativeConfig, channel: usize, name: &str) -> &'a ChannelEntry {
    entries_of(c, channel)
        .iter()
        .find(|e| e.name == name)
        .unwrap_or_else(|| panic!("no entry {name}"))
}

fn process_mock(c: &mut DeclarativeConfig, s: &Substitution) -> Result<(), String> {
    process(c, s, &mock, &first_model_error)
}

// ---- TestParseSpec ----

fn parse_text(text: &str) -> Result<(usize, Vec<Substitution>), String> {
    let docs = olmpack::yaml::parse_stream(text)
        .map_err(|e| format!("decoding template schema: {}", e.message))?;
    read_spec(docs.first().map(|d| &d.root))
}

#[test]
fn parse_spec_success_valid_template_with_substitutions() {
    let text = "
schema: olm.template.substitutes
entries:
  - schema: olm.channel
    name: stable
    package: testoperator
    blob: '{\"schema\":\"olm.channel\",\"name\":\"stable\",\"package\":\"testoperator\",\"entries\":[{\"name\":\"testoperator.v1.0.0\"}]}'
substitutions:
  - name: testoperator.v1.1.0
    base: testoperator.v1.0.0
";
    let (entries, subs) = parse_text(text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(entries, 1);
    assert_eq!(
        subs.iter()
            .map(|s| (s.name.as_str(), s.base.as_str()))
            .collect::<Vec<_>>(),
        vec![("testoperator.v1.1.0", "testoperator.v1.0.0")]
    );
    assert_eq!(subs.first().map(|s| s.line), Some(9));
}

#[test]
fn parse_spec_error_invalid_schema() {
    let err = parse_text("schema: olm.template.invalid\nentries: []\nsubstitutions: []\n");
    assert!(err.is_err_and(|e| e.contains("template has unknown schema")));
}

#[test]
fn parse_spec_error_missing_schema() {
    let err = parse_text("entries: []\nsubstitutions: []\n");
    assert!(err.is_err_and(|e| e.contains("template has unknown schema")));
}

#[test]
fn parse_spec_error_invalid_yaml() {
    let text = "\nschema: olm.template.substitutes\nentries: [\nsubstitutions: []\n";
    let err = render_text(text, Some(TemplateType::Substitutes));
    assert!(err.is_err_and(|e| e.contains("decoding template schema")));
}

#[test]
fn parse_spec_success_empty_template() {
    let parsed = parse_text("schema: olm.template.substitutes\nentries: []\nsubstitutions: []\n");
    assert_eq!(parsed.map(|(e, s)| (e, s.len())), Ok((0, 0)));
}

#[test]
fn parse_spec_success_multiple_substitutions() {
    let text = "
schema: olm.template.substitutes
entries:
  - schema: olm.channel
    name: stable
    package: testoperator
    blob: '{}'
substitutions:
  - name: testoperator.v1.1.0
    base: testoperator.v1.0.0
  - name: testoperator.v1.2.0
    base: testoperator.v1.1.0
";
    let (entries, subs) = parse_text(text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(entries, 1);
    assert_eq!(
        subs.iter()
            .map(|s| (s.name.as_str(), s.base.as_str()))
            .collect::<Vec<_>>(),
        vec![
            ("testoperator.v1.1.0", "testoperator.v1.0.0"),
            ("testoperator.v1.2.0", "testoperator.v1.1.0")
        ]
    );
}

// ---- TestRender ----

fn two_bundle_entries() -> Vec<J> {
    vec![
        package_meta("testoperator", "stable"),
        channel_meta(
            "stable",
            "testoperator",
            &[
                ("testoperator.v1.0.0", ""),
                ("testoperator.v1.1.0", "testoperator.v1.0.0"),
            ],
        ),
        bundle_meta("testoperator.v1.0.0", "testoperator", "1.0.0", ""),
        bundle_meta("testoperator.v1.1.0", "testoperator", "1.1.0", ""),
    ]
}

#[test]
fn render_success_single_substitution() {
    let text = template(
        &two_bundle_entries(),
        &[sub(
            "quay.io/test/testoperator-bundle:v1.1.0-alpha",
            "testoperator.v1.1.0",
        )],
    );
    let c = render_text(&text, None).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(c.channels.len(), 1);
    assert_eq!(entries_of(&c, 0).len(), 3);
    let e = entry(&c, 0, "testoperator-v1.1.0-alpha");
    assert_eq!(e.replaces, "testoperator.v1.0.0");
    assert!(e.skips.contains(&"testoperator.v1.1.0".to_string()));
}

#[test]
fn render_success_multiple_substitutions() {
    let text = template(
        &two_bundle_entries(),
        &[
            sub(
                "quay.io/test/testoperator-bundle:v1.2.0-alpha",
                "testoperator.v1.1.0",
            ),
            sub(
                "quay.io/test/testoperator-bundle:v1.3.0-alpha",
                "testoperator-v1.2.0-alpha",
            ),
        ],
    );
    let c = render_text(&text, None).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(c.channels.len(), 1);
    assert_eq!(entries_of(&c, 0).len(), 4);
    let first = entry(&c, 0, "testoperator-v1.2.0-alpha");
    assert!(first.replaces.is_empty());
    assert!(first.skips.is_empty());
    let second = entry(&c, 0, "testoperator-v1.3.0-alpha");
    assert_eq!(second.replaces, "testoperator.v1.0.0");
    assert!(
        second
            .skips
            .contains(&"testoperator-v1.2.0-alpha".to_string())
    );
}

#[test]
fn render_success_no_substitutions() {
    let entries = vec![
        package_meta("testoperator", "stable"),
        channel_meta("stable", "testoperator", &[("testoperator.v1.0.0", "")]),
        bundle_meta("testoperator.v1.0.0", "testoperator", "1.0.0", ""),
    ];
    let c = render_text(&template(&entries, &[]), None).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(c.channels.len(), 1);
    assert_eq!(
        entries_of(&c, 0)
            .iter()
            .map(|e| e.name.as_str())
            .collect::<Vec<_>>(),
        vec!["testoperator.v1.0.0"]
    );
}

#[test]
fn render_error_substitution_with_no_matching_base() {
    let entries = vec![
        package_meta("testoperator", "stable"),
        channel_meta("stable", "testoperator", &[("testoperator.v1.0.0", "")]),
        bundle_meta("testoperator.v1.0.0", "testoperator", "1.0.0", ""),
    ];
    let text = template(
        &entries,
        &[sub(
            "quay.io/test/testoperator-bundle:v1.2.0-alpha",
            "nonexistent.v1.0.0",
        )],
    );
    let err = render_text(&text, None);
    assert!(err.is_err_and(|e| {
        e.contains("base bundle \"nonexistent.v1.0.0\" does not exist in catalog")
    }));
}

fn render_error(substitutions: &[Substitution], three: bool, want: &str) {
    let mut entries = two_bundle_entries();
    if three {
        entries = vec![
            package_meta("testoperator", "stable"),
            channel_meta(
                "stable",
                "testoperator",
                &[
                    ("testoperator.v1.0.0", ""),
                    ("testoperator.v1.1.0", "testoperator.v1.0.0"),
                    ("testoperator.v1.2.0", "testoperator.v1.1.0"),
                ],
            ),
            bundle_meta("testoperator.v1.0.0", "testoperator", "1.0.0", ""),
            bundle_meta("testoperator.v1.1.0", "testoperator", "1.1.0", ""),
            bundle_meta("testoperator.v1.2.0", "testoperator", "1.2.0", ""),
        ];
    }
    let err = render_text(&template(&entries, substitutions), None);
    assert!(
        matches!(&err, Err(e) if e.contains(want)),
        "{err:?} should contain {want}"
    );
}

#[test]
fn render_error_invalid_substitution_empty_name() {
    render_error(
        &[sub("", "testoperator.v1.1.0")],
        false,
        "substitution name cannot be empty",
    );
}

#[test]
fn render_error_invalid_substitution_empty_base() {
    render_error(
        &[sub("quay.io/test/testoperator-bundle:v1.2.0-alpha", "")],
        false,
        "substitution base cannot be empty",
    );
}

#[test]
fn render_error_invalid_substitution_same_name_and_base() {
    render_error(
        &[sub("testoperator.v1.1.0", "testoperator.v1.1.0")],
        false,
        "substitution name and base cannot be the same",
    );
}

#[test]
fn render_error_duplicate_base_in_substitutions() {
    render_error(
        &[
            sub(
                "quay.io/test/testoperator-bundle:v1.2.0-alpha",
                "testoperator.v1.1.0",
            ),
            sub(
                "quay.io/test/testoperator-bundle:v1.3.0-alpha",
                "testoperator.v1.1.0",
            ),
        ],
        false,
        "cannot reuse the same substitution base \"testoperator.v1.1.0\"",
    );
}

#[test]
fn render_error_same_substitution_name_for_different_bases() {
    render_error(
        &[
            sub(
                "quay.io/test/testoperator-bundle:v1.3.0-alpha",
                "testoperator.v1.1.0",
            ),
            sub(
                "quay.io/test/testoperator-bundle:v1.3.0-alpha",
                "testoperator.v1.2.0",
            ),
        ],
        true,
        "cannot reuse the same substitution \"quay.io/test/testoperator-bundle:v1.3.0-alpha\" for different bases (\"testoperator.v1.1.0\" and \"testoperator.v1.2.0\")",
    );
}

// ---- TestProcessSubstitution ----

fn alpha_pair(skips: &[&str], skip_range: &str) -> Vec<J> {
    let mut second =
        json!({"name": "testoperator-v1.1.0-alpha", "replaces": "testoperator-v1.0.0-alpha"});
    if !skips.is_empty() {
        second["skips"] = json!(skips);
    }
    if !skip_range.is_empty() {
        second["skipRange"] = json!(skip_range);
    }
    vec![
        json!({"schema": "olm.package", "name": "testoperator", "defaultChannel": "stable", "description": "testoperator operator"}),
        json!({"schema": "olm.channel", "name": "stable", "package": "testoperator",
            "entries": [{"name": "testoperator-v1.0.0-alpha"}, second]}),
        full_bundle(
            "testoperator-v1.0.0-alpha",
            "quay.io/test/testoperator-bundle:v1.0.0",
            "1.0.0",
            "alpha",
        ),
        full_bundle(
            "testoperator-v1.1.0-alpha",
            "quay.io/test/testoperator-bundle:v1.1.0-alpha",
            "1.1.0",
            "alpha",
        ),
    ]
}

#[test]
fn process_success_substitution_with_replaces_relationship() {
    let mut c = cfg(&alpha_pair(&[], ""));
    let s = sub(
        "quay.io/test/testoperator-bundle:v1.2.0-alpha",
        "testoperator-v1.1.0-alpha",
    );
    assert_eq!(process_mock(&mut c, &s), Ok(()));
    assert_eq!(entries_of(&c, 0).len(), 3);
    let e = entry(&c, 0, "testoperator-v1.2.0-alpha");
    assert_eq!(e.replaces, "testoperator-v1.0.0-alpha");
    assert!(e.skips.contains(&"testoperator-v1.1.0-alpha".to_string()));
    let original = entry(&c, 0, "testoperator-v1.1.0-alpha");
    assert!(
        original.replaces.is_empty() && original.skips.is_empty() && original.skip_range.is_empty()
    );
}

#[test]
fn process_success_substitution_with_skips_and_skip_range() {
    let mut c = cfg(&alpha_pair(
        &["testoperator-v0.9.0-alpha"],
        ">=0.9.0 <1.1.0",
    ));
    let s = sub(
        "quay.io/test/testoperator-bundle:v1.2.0-alpha",
        "testoperator-v1.1.0-alpha",
    );
    assert_eq!(process_mock(&mut c, &s), Ok(()));
    assert_eq!(entries_of(&c, 0).len(), 3);
    let e = entry(&c, 0, "testoperator-v1.2.0-alpha");
    assert_eq!(e.replaces, "testoperator-v1.0.0-alpha");
    assert!(e.skips.contains(&"testoperator-v0.9.0-alpha".to_string()));
    assert!(e.skips.contains(&"testoperator-v1.1.0-alpha".to_string()));
    assert_eq!(e.skip_range, ">=0.9.0 <1.1.0");
}

#[test]
fn process_error_substitution_with_no_matching_base() {
    let mut c = cfg(&[
        json!({"schema": "olm.package", "name": "testoperator", "defaultChannel": "stable"}),
        json!({"schema": "olm.channel", "name": "stable", "package": "testoperator", "entries": [{"name": "testoperator.v1.0.0"}]}),
        bare_bundle(
            "testoperator.v1.0.0",
            "testoperator",
            "quay.io/test/testoperator-bundle:v1.0.0",
            "1.0.0",
            "",
        ),
    ]);
    let s = sub(
        "quay.io/test/testoperator-bundle:v1.2.0-alpha",
        "nonexistent.v1.0.0",
    );
    assert!(process_mock(&mut c, &s).is_err());
}

#[test]
fn process_success_substitution_with_multiple_channels() {
    let entries = json!([{"name": "testoperator-v1.0.0-alpha"}, {"name": "testoperator-v1.1.0-alpha", "replaces": "testoperator-v1.0.0-alpha"}]);
    let mut c = cfg(&[
        json!({"schema": "olm.package", "name": "testoperator", "defaultChannel": "stable"}),
        json!({"schema": "olm.channel", "name": "stable", "package": "testoperator", "entries": entries}),
        json!({"schema": "olm.channel", "name": "beta", "package": "testoperator", "entries": entries}),
        bare_bundle(
            "testoperator-v1.0.0-alpha",
            "testoperator",
            "quay.io/test/testoperator-bundle:v1.0.0",
            "1.0.0",
            "alpha",
        ),
        bare_bundle(
            "testoperator-v1.1.0-alpha",
            "testoperator",
            "quay.io/test/testoperator-bundle:v1.1.0-alpha",
            "1.1.0",
            "alpha",
        ),
    ]);
    let s = sub(
        "quay.io/test/testoperator-bundle:v1.2.0-alpha",
        "testoperator-v1.1.0-alpha",
    );
    assert_eq!(process_mock(&mut c, &s), Ok(()));
    assert_eq!(c.channels.len(), 2);
    for ch in 0..2 {
        assert_eq!(entries_of(&c, ch).len(), 3);
        let e = entry(&c, ch, "testoperator-v1.2.0-alpha");
        assert_eq!(e.replaces, "testoperator-v1.0.0-alpha");
        assert!(e.skips.contains(&"testoperator-v1.1.0-alpha".to_string()));
    }
}

/// `createTestDeclarativeConfig`.
fn three_plain() -> DeclarativeConfig {
    cfg(&[
        json!({"schema": "olm.package", "name": "testoperator", "defaultChannel": "stable"}),
        json!({"schema": "olm.channel", "name": "stable", "package": "testoperator", "entries": [
            {"name": "testoperator.v1.0.0"},
            {"name": "testoperator.v1.1.0", "replaces": "testoperator.v1.0.0"},
            {"name": "testoperator.v1.2.0", "replaces": "testoperator.v1.1.0", "skips": ["testoperator.v1.0.0"]}]}),
        bare_bundle(
            "testoperator.v1.0.0",
            "testoperator",
            "quay.io/test/testoperator-bundle:v1.0.0",
            "1.0.0",
            "",
        ),
        bare_bundle(
            "testoperator.v1.1.0",
            "testoperator",
            "quay.io/test/testoperator-bundle:v1.1.0",
            "1.1.0",
            "",
        ),
        bare_bundle(
            "testoperator.v1.2.0",
            "testoperator",
            "quay.io/test/testoperator-bundle:v1.2.0",
            "1.2.0",
            "",
        ),
    ])
}

#[test]
fn process_success_substitution_updates_existing_references() {
    let mut c = cfg(&[
        json!({"schema": "olm.package", "name": "testoperator", "defaultChannel": "stable"}),
        json!({"schema": "olm.channel", "name": "stable", "package": "testoperator", "entries": [
            {"name": "testoperator.v1.0.0"},
            {"name": "testoperator.v1.1.0", "replaces": "testoperator.v1.0.0"},
            {"name": "testoperator.v1.2.0", "replaces": "testoperator.v1.1.0"}]}),
        bare_bundle(
            "testoperator.v1.0.0",
            "testoperator",
            "quay.io/test/testoperator-bundle:v1.0.0",
            "1.0.0",
            "",
        ),
        bare_bundle(
            "testoperator.v1.1.0",
            "testoperator",
            "quay.io/test/testoperator-bundle:v1.1.0",
            "1.1.0",
            "",
        ),
        bare_bundle(
            "testoperator.v1.2.0",
            "testoperator",
            "quay.io/test/testoperator-bundle:v1.2.0",
            "1.2.0",
            "",
        ),
    ]);
    let s = sub(
        "quay.io/test/testoperator-bundle:v1.1.0-alpha",
        "testoperator.v1.1.0",
    );
    assert_eq!(process_mock(&mut c, &s), Ok(()));
    assert_eq!(entries_of(&c, 0).len(), 4);
    let e = entry(&c, 0, "testoperator.v1.2.0");
    assert_eq!(e.replaces, "testoperator-v1.1.0-alpha");
    assert!(e.skips.contains(&"testoperator.v1.1.0".to_string()));
}

// ---- TestBoundaryCases ----

fn boundary(blobs: &[J], s: Substitution, want: &str) {
    let mut c = cfg(blobs);
    let err = process_mock(&mut c, &s);
    assert!(
        matches!(&err, Err(e) if e.contains(want)),
        "{err:?} should contain {want}"
    );
}

fn test_bundle_v090() -> J {
    bare_bundle(
        "test.v0.9.0",
        "test",
        "quay.io/test/test-bundle:v0.9.0",
        "0.9.0",
        "",
    )
}

#[test]
fn boundary_error_empty_declarative_config() {
    boundary(
        &[test_bundle_v090()],
        sub("quay.io/test/test-bundle:v1.0.0-alpha", "test.v0.9.0"),
        "unknown package",
    );
}

#[test]
fn boundary_error_declarative_config_with_empty_channels() {
    // Upstream's empty `Channels` slice is the same catalog as above once loaded.
    boundary(
        &[test_bundle_v090()],
        sub("quay.io/test/test-bundle:v1.0.0-alpha", "test.v0.9.0"),
        "unknown package",
    );
}

#[test]
fn boundary_error_channel_with_empty_entries() {
    boundary(
        &[
            json!({"schema": "olm.package", "name": "testoperator", "defaultChannel": "stable"}),
            json!({"schema": "olm.channel", "name": "stable", "package": "testoperator", "entries": []}),
            test_bundle_v090(),
        ],
        sub("quay.io/test/test-bundle:v1.0.0-alpha", "test.v0.9.0"),
        "unknown package",
    );
}

#[test]
fn boundary_error_substitution_with_empty_name() {
    let mut c = three_plain();
    let err = process_mock(&mut c, &sub("", "testoperator.v1.1.0"));
    assert_eq!(err, Err("substitution name cannot be empty".to_string()));
    assert_eq!(entries_of(&c, 0).len(), 3);
}

#[test]
fn boundary_error_substitution_with_empty_base() {
    let mut c = three_plain();
    let err = process_mock(
        &mut c,
        &sub("quay.io/test/testoperator-bundle:v1.2.0-alpha", ""),
    );
    assert_eq!(err, Err("substitution base cannot be empty".to_string()));
    assert_eq!(entries_of(&c, 0).len(), 3);
}

#[test]
fn boundary_error_substitution_with_same_name_and_base() {
    let mut c = three_plain();
    let same = "quay.io/test/testoperator-bundle:v1.1.0-alpha";
    let err = process_mock(&mut c, &sub(same, same));
    assert_eq!(
        err,
        Err("substitution name and base cannot be the same".to_string())
    );
    assert_eq!(entries_of(&c, 0).len(), 3);
}

#[test]
fn boundary_error_template_with_malformed_json_in_blob() {
    // Upstream shows Go's marshaller refusing a malformed blob; here the template text holding
    // it is refused when it is read.
    let text =
        r#"{"schema":"olm.template.substitutes","entries":[{"invalid": json, "missing": quote}"#;
    let err = render_text(text, Some(TemplateType::Substitutes));
    assert!(err.is_err_and(|e| e.contains("decoding template schema")));
}

#[test]
fn boundary_success_template_with_nil_context() {
    let entries = vec![
        package_meta("testoperator", "stable"),
        channel_meta(
            "stable",
            "testoperator",
            &[("testoperator-v1.0.0-alpha", "")],
        ),
        bundle_meta(
            "testoperator-v1.0.0-alpha",
            "testoperator",
            "1.0.0",
            "alpha",
        ),
    ];
    // No renderer is needed when there is nothing to substitute.
    let text = template(&entries, &[]);
    let never = |r: &str| -> Result<Vec<Bundle>, BundleRenderError> {
        Err(BundleRenderError::new(format!("unexpected render of {r}")))
    };
    let out = render_with(&text, &TemplateOptions::default(), &never);
    assert!(out.is_ok_and(|c| c.bundles.len() == 1));
}

#[test]
fn boundary_error_invalid_declarative_config_missing_package() {
    boundary(
        &[
            json!({"schema": "olm.package", "name": "testoperator", "defaultChannel": "stable"}),
            json!({"schema": "olm.channel", "name": "stable", "package": "testoperator", "entries": [{"name": "testoperator.v1.0.0"}]}),
            bare_bundle("testoperator.v1.0.0", "testoperator", "", "1.0.0", ""),
            bare_bundle("testoperator.v1.1.0", "testoperator", "", "1.1.0", ""),
        ],
        sub(
            "quay.io/test/testoperator-bundle:v1.1.0-alpha",
            "testoperator.v1.0.0",
        ),
        "not found in any channel entries",
    );
}

#[test]
fn boundary_error_bundle_missing_olm_package_property() {
    boundary(
        &[
            json!({"schema": "olm.package", "name": "testoperator", "defaultChannel": "stable"}),
            json!({"schema": "olm.bundle", "name": "testoperator.v1.0.0", "package": "testoperator", "image": ""}),
        ],
        sub(
            "quay.io/test/testoperator-bundle:v1.1.0-alpha",
            "testoperator.v1.0.0",
        ),
        "no \"olm.package\" property found for bundle",
    );
}

#[test]
fn boundary_error_base_bundle_does_not_exist_in_catalog() {
    boundary(
        &[
            json!({"schema": "olm.package", "name": "testoperator", "defaultChannel": "stable"}),
            bare_bundle("testoperator.v1.1.0", "testoperator", "", "1.1.0", ""),
        ],
        sub(
            "quay.io/test/testoperator-bundle:v1.2.0-alpha",
            "testoperator.v1.0.0",
        ),
        "does not exist in catalog",
    );
}

#[test]
fn boundary_error_substitute_version_not_greater_than_base() {
    boundary(
        &[
            json!({"schema": "olm.package", "name": "testoperator", "defaultChannel": "stable"}),
            bare_bundle(
                "testoperator-v1.2.0-beta",
                "testoperator",
                "",
                "1.2.0",
                "beta",
            ),
        ],
        sub(
            "quay.io/test/testoperator-bundle:v1.2.0-alpha",
            "testoperator-v1.2.0-beta",
        ),
        "is not less than",
    );
}

// ---- beyond upstream: what the command adds ----

#[test]
fn errors_carry_the_substitution_line_and_opms_prefix() {
    let text = format!(
        "schema: olm.template.substitutes\nentries: {}\nsubstitutions:\n- name: quay.io/test/testoperator-bundle:v1.2.0-alpha\n  base: testoperator.v1.1.0\n- name: quay.io/test/testoperator-bundle:v1.3.0-alpha\n  base: testoperator.v1.1.0\n",
        J::Array(two_bundle_entries())
    );
    let options = TemplateOptions::default();
    let err = render_with(&text, &options, &render_mock);
    let err = err.err().map(|e| e.to_string());
    assert_eq!(
        err.as_deref(),
        Some(
            "t.yaml:6: rendering template: render: cannot reuse the same substitution base \"testoperator.v1.1.0\""
        )
    );
}

#[test]
fn older_opm_compat_does_not_know_the_schema() {
    let text = template(&two_bundle_entries(), &[]);
    let options = TemplateOptions {
        compat: OpmCompat::new(1, 61),
        ..TemplateOptions::default()
    };
    let err = render_with(&text, &options, &render_mock);
    assert!(err.is_err_and(|e| {
        e.message
            .contains("unknown template schema: olm.template.substitutes")
    }));
}

#[test]
fn without_a_model_check_the_template_says_so() {
    let text = template(&two_bundle_entries(), &[]);
    let options = TemplateOptions::default();
    let err = olmpack::catalog::template::render_template("t.yaml", &text, &options, &render_mock);
    assert!(err.is_err_and(|e| e.message.contains("needs a catalog model check")));
}
