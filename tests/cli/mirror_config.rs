//! `--mirror-config FILE` on the commands that read images by name (catalog render, bundle
//! render, catalog template, bundle validate --image, bundle inspect, catalog mirror): a real
//! bundle image (testdata's valid bundle, built and pushed by olmpack) and a small operand
//! image (pushed by skopeo) sit in a loopback `docker-registry` under `mirror/...`; the
//! commands are given only their public names (`quay.io/olmpack-test/...`, which nothing here
//! serves) and a mirror configuration written by the test that maps them there. The public
//! registry is never asked: every rule says `NeverContactSource` (`blocked = true`), and the
//! first mirror of each rule is a dead port, so the order (mirrors in turn, a failed one passed
//! over) is exercised too. Each test first runs the command without the flag and sees it fail
//! on the public name; that run is in a network namespace of its own (`unshare -n`), so the
//! public registry is not asked then either (tests reach loopback only). Digests are checked
//! against skopeo's.

use crate::support::cmd::{code_and_text, olmpack_path, run_in};
use crate::support::fixtures::valid_basic;
use crate::support::mirror::skopeo_digest;
use crate::support::proc::{Bounded, without_network};
use crate::support::registry::{Mode, Registry, image_from_layers, write_layout};
use crate::support::shared::tool;
use serde_json::{Value, json};
use std::path::Path;

/// The public repository namespace the commands are given.
const PUBLIC: &str = "quay.io/olmpack-test";
/// A mirror that is never up: the first place of every rule.
const DEAD: &str = "127.0.0.1:1/dead";

/// A loopback registry holding the bundle (`mirror/olmpack-test/kvstore-bundle:v1`) and an
/// operand (`mirror/olmpack-test/operand:v1`), with their digests as skopeo reads them.
struct Fixture {
    reg: Registry,
    dir: tempfile::TempDir,
    bundle_digest: String,
    operand_digest: String,
}

impl Fixture {
    fn start() -> Option<Fixture> {
        if !tool("skopeo", "skopeo") {
            return None;
        }
        let reg = Registry::start(Mode::Plain);
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        let bundle = format!("{}/mirror/olmpack-test/kvstore-bundle:v1", reg.host);
        let folder = valid_basic().display().to_string();
        let (code, _, err) = run_in(d, &["bundle", "build", &folder, "--push", "-t", &bundle]);
        assert_eq!(code, 0, "push the bundle: {err}");
        let operand_dir = d.join("operand");
        std::fs::create_dir_all(&operand_dir).expect("mkdir");
        let image = image_from_layers(
            &operand_dir,
            &[vec![("etc/operand", &b"the operand\n"[..])]],
            json!({}),
            json!({}),
        );
        write_layout(&image, &operand_dir.join("layout"), "v1");
        std::process::Command::new("skopeo")
            .args([
                "copy",
                "--quiet",
                "--dest-tls-verify=false",
                &format!("oci:{}:v1", operand_dir.join("layout").display()),
                &format!("docker://{}/mirror/olmpack-test/operand:v1", reg.host),
            ])
            .succeeds();
        let bundle_digest = skopeo_digest(&bundle);
        let operand_digest = skopeo_digest(&format!("{}/mirror/olmpack-test/operand:v1", reg.host));
        Some(Fixture {
            reg,
            dir,
            bundle_digest,
            operand_digest,
        })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The mirror location of [`PUBLIC`].
    fn mirror(&self) -> String {
        format!("{}/mirror/olmpack-test", self.reg.host)
    }

    /// An IDMS and an ITMS in one file (two documents): [`PUBLIC`] to the dead mirror, then
    /// the loopback one, never to the source.
    fn mirror_sets(&self) -> String {
        let mut out = String::new();
        for (kind, list) in [
            ("ImageDigestMirrorSet", "imageDigestMirrors"),
            ("ImageTagMirrorSet", "imageTagMirrors"),
        ] {
            out.push_str(&format!(
                "apiVersion: config.openshift.io/v1\nkind: {kind}\nmetadata:\n  name: loopback\nspec:\n  {list}:\n  - source: {PUBLIC}\n    mirrors:\n    - {DEAD}\n    - {}\n    mirrorSourcePolicy: NeverContactSource\n---\n",
                self.mirror()
            ));
        }
        out
    }

    /// The same as a registries.conf (mirrors for tags and digests, source blocked).
    fn registries_conf(&self) -> String {
        format!(
            "[[registry]]\nprefix = \"{PUBLIC}\"\nlocation = \"{PUBLIC}\"\nblocked = true\n\n[[registry.mirror]]\nlocation = \"{DEAD}\"\n\n[[registry.mirror]]\nlocation = \"{}\"\n",
            self.mirror()
        )
    }

    /// Writes `text` as `name` in the work folder; returns its path as text.
    fn write(&self, name: &str, text: &str) -> String {
        let p = self.path().join(name);
        std::fs::write(&p, text).expect("write");
        p.display().to_string()
    }

    /// `olmpack ARGS` in the work folder, with one attempt per request (a refused or
    /// unresolvable public registry fails at once).
    fn run(&self, args: &[&str]) -> (i32, String, String) {
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["--retries", "1", "--timeout", "20"]);
        run_in(self.path(), &all)
    }

    /// [`Fixture::run`] without a network (`unshare -n`): the runs without `--mirror-config`
    /// go to the public name, which a test may not ask. Nothing is reachable there, the
    /// loopback registries included: each such run fails at its first image.
    fn run_without_network(&self, args: &[&str]) -> (i32, String, String) {
        let out = without_network(olmpack_path())
            .current_dir(self.path())
            .env("NO_COLOR", "1")
            .args(args)
            .args(["--retries", "1", "--timeout", "20"])
            .bounded_output()
            .expect("run");
        code_and_text(&out)
    }

    /// Runs `args` without and then with `--mirror-config config`: the first must fail on the
    /// public name (run without a network), the second succeed; returns the second's output.
    fn without_then_with(&self, args: &[&str], config: &str) -> (String, String) {
        let (code, out, err) = self.run_without_network(args);
        assert_ne!(
            code, 0,
            "{args:?} succeeded without --mirror-config:\n{out}\n{err}"
        );
        assert!(
            err.contains("quay.io"),
            "{args:?} without --mirror-config did not go to the public name:\n{err}"
        );
        let mut with = args.to_vec();
        with.extend(["--mirror-config", config]);
        let (code, out, err) = self.run(&with);
        assert_eq!(code, 0, "{with:?}:\n{out}\n{err}");
        (out, err)
    }
}

fn public_bundle() -> String {
    format!("{PUBLIC}/kvstore-bundle:v1")
}

/// The olm.bundle blob of a rendered JSON stream.
fn bundle_blob(stream: &str) -> Value {
    serde_json::Deserializer::from_str(stream)
        .into_iter::<Value>()
        .map(|v| v.expect("json"))
        .find(|v| v["schema"] == "olm.bundle")
        .expect("an olm.bundle blob")
}

#[test]
fn catalog_render_reads_a_public_name_through_an_idms_and_itms() {
    let Some(f) = Fixture::start() else { return };
    let config = f.write("sets.yaml", &f.mirror_sets());
    // By tag (the ITMS serves it) and by digest (the IDMS does).
    let by_digest = format!("{PUBLIC}/kvstore-bundle@{}", f.bundle_digest);
    for public in [public_bundle(), by_digest] {
        let (out, _) = f.without_then_with(&["catalog", "render", "-o", "json", &public], &config);
        let blob = bundle_blob(&out);
        // The catalog names the image as it was given, not the mirror it was read from.
        assert_eq!(blob["image"], public.as_str(), "{out}");
        assert_eq!(blob["name"], "kvstore-operator.v1.2.0", "{out}");
        assert!(
            !out.contains(&f.reg.host),
            "the mirror leaked into the catalog"
        );
    }
}

#[test]
fn bundle_render_reads_a_public_digest_through_a_registries_conf() {
    let Some(f) = Fixture::start() else { return };
    let config = f.write("registries.conf", &f.registries_conf());
    let public = format!("{PUBLIC}/kvstore-bundle@{}", f.bundle_digest);
    let (out, _) = f.without_then_with(
        &["bundle", "render", &public, "--install-namespace", "ns"],
        &config,
    );
    // The bundle's own manifests, rendered: its CSV's deployment and service.
    assert!(out.contains("kind: Deployment"), "{out}");
    assert!(out.contains("kvstore-operator"), "{out}");
}

#[test]
fn catalog_template_renders_bundles_named_by_public_names() {
    let Some(f) = Fixture::start() else { return };
    let config = f.write("sets.yaml", &f.mirror_sets());
    let template = f.write(
        "template.yaml",
        &format!(
            "schema: olm.template.basic\nentries:\n- schema: olm.package\n  name: kvstore-operator\n  defaultChannel: stable\n- schema: olm.channel\n  package: kvstore-operator\n  name: stable\n  entries:\n  - name: kvstore-operator.v1.2.0\n- schema: olm.bundle\n  image: {}\n",
            public_bundle()
        ),
    );
    let (out, _) = f.without_then_with(&["catalog", "template", &template, "-o", "json"], &config);
    let blob = bundle_blob(&out);
    assert_eq!(blob["image"], public_bundle().as_str(), "{out}");
    assert_eq!(blob["package"], "kvstore-operator", "{out}");
}

#[test]
fn bundle_validate_image_reads_through_the_mirror() {
    let Some(f) = Fixture::start() else { return };
    let config = f.write("registries.conf", &f.registries_conf());
    let public = public_bundle();
    let (out, _) = f.without_then_with(&["bundle", "validate", "--image", &public], &config);
    assert!(out.contains("valid (0 errors, 0 warnings)"), "{out}");
}

#[test]
fn bundle_inspect_says_which_mirror_served_it() {
    let Some(f) = Fixture::start() else { return };
    let config = f.write("sets.yaml", &f.mirror_sets());
    let public = public_bundle();
    let (out, _) = f.without_then_with(&["bundle", "inspect", &public, "--no-files"], &config);
    let mirror = format!("{}/kvstore-bundle:v1", f.mirror());
    assert!(
        out.contains(&format!("Read from:  {mirror} (mirror)")),
        "{out}"
    );
    assert!(
        out.contains(&format!("Digest:     {}", f.bundle_digest)),
        "{out}"
    );
    let mut args = vec!["bundle", "inspect", &public, "-o", "json"];
    args.extend(["--mirror-config", &config]);
    let (code, out, err) = f.run(&args);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["image"], public.as_str());
    assert_eq!(v["digest"], f.bundle_digest.as_str());
    assert_eq!(v["readFrom"], json!({"reference": mirror, "mirror": true}));
}

#[test]
fn catalog_mirror_pulls_sources_from_their_mirror() {
    let Some(f) = Fixture::start() else { return };
    let config = f.write("sets.yaml", &f.mirror_sets());
    let operand = format!("{PUBLIC}/operand@{}", f.operand_digest);
    let pkg = f.path().join("catalog/kvstore-operator");
    std::fs::create_dir_all(&pkg).expect("mkdir");
    let blobs = [
        json!({"schema": "olm.package", "name": "kvstore-operator", "defaultChannel": "stable"}),
        json!({"schema": "olm.channel", "package": "kvstore-operator", "name": "stable",
            "entries": [{"name": "kvstore-operator.v1.2.0"}]}),
        json!({"schema": "olm.bundle", "name": "kvstore-operator.v1.2.0",
            "package": "kvstore-operator", "image": public_bundle(),
            "properties": [{"type": "olm.package",
                "value": {"packageName": "kvstore-operator", "version": "1.2.0"}}],
            "relatedImages": [{"name": "operand", "image": operand}]}),
    ];
    let text: String = blobs.iter().map(|b| format!("{b}\n")).collect();
    std::fs::write(pkg.join("catalog.json"), text).expect("write catalog");
    let dst = Registry::start(Mode::Plain);
    let to = format!("{}/copied", dst.host);
    let args = ["catalog", "mirror", "catalog", "--to", &to];
    let (code, _, err) = f.run_without_network(&args);
    assert_eq!(
        code, 1,
        "without --mirror-config both images must fail:\n{err}"
    );
    assert!(
        err.contains(&format!("failed  bundle {}", public_bundle())),
        "{err}"
    );
    let mut with = args.to_vec();
    with.extend(["--mirror-config", &config]);
    let (code, _, err) = f.run(&with);
    assert_eq!(code, 0, "{err}");
    // Each image's line says the mirror it came from (the dead first mirror passed over).
    let bundle_line = format!(
        "copied  bundle {} -> {to}/olmpack-test/kvstore-bundle:v1",
        public_bundle()
    );
    let line = err
        .lines()
        .find(|l| l.starts_with(&bundle_line))
        .unwrap_or_else(|| panic!("no line {bundle_line}:\n{err}"));
    assert!(
        line.ends_with(&format!("[from mirror {}/kvstore-bundle:v1]", f.mirror())),
        "{line}"
    );
    let operand_line = err
        .lines()
        .find(|l| l.starts_with(&format!("copied  related {operand}")))
        .unwrap_or_else(|| panic!("no operand line:\n{err}"));
    assert!(
        operand_line.ends_with(&format!(
            "[from mirror {}/operand@{}]",
            f.mirror(),
            f.operand_digest
        )),
        "{operand_line}"
    );
    // The target holds the same bytes the mirror served (skopeo's digests).
    assert_eq!(
        skopeo_digest(&format!("{to}/olmpack-test/kvstore-bundle:v1")),
        f.bundle_digest
    );
    let results: Value = serde_json::from_str(
        &std::fs::read_to_string(f.path().join("mirror-results/report.json")).expect("report"),
    )
    .expect("report json");
    let images = results["images"].as_array().expect("images");
    let bundle = images
        .iter()
        .find(|i| i["source"] == public_bundle().as_str())
        .expect("bundle result");
    assert_eq!(bundle["source_digest"], f.bundle_digest.as_str());
    assert_eq!(
        bundle["mirror"],
        format!("{}/kvstore-bundle:v1", f.mirror()).as_str()
    );
}

#[test]
fn a_mistyped_or_malformed_mirror_config_is_named_with_its_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let public = public_bundle();
    for command in [
        vec!["catalog", "render", public.as_str()],
        vec!["bundle", "inspect", public.as_str()],
        vec!["catalog", "mirror", ".", "--to", "127.0.0.1:1/x"],
    ] {
        let mut args = command.clone();
        args.extend(["--mirror-config", "no-such-idms.yaml"]);
        let (code, _, err) = run_in(d, &args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(
            err.contains("no-such-idms.yaml") && err.contains("cannot read"),
            "{args:?}: {err}"
        );
    }
    // A malformed IDMS: a mirror with a URI scheme, in the second document.
    std::fs::write(
        d.join("bad.yaml"),
        format!(
            "apiVersion: config.openshift.io/v1\nkind: ImageTagMirrorSet\nmetadata:\n  name: a\nspec:\n  imageTagMirrors:\n  - source: {PUBLIC}\n    mirrors: [127.0.0.1:5000/x]\n---\napiVersion: config.openshift.io/v1\nkind: ImageDigestMirrorSet\nmetadata:\n  name: b\nspec:\n  imageDigestMirrors:\n  - source: {PUBLIC}\n    mirrors:\n    - https://mirror.example.com/x\n"
        ),
    )
    .expect("write");
    let (code, _, err) = run_in(
        d,
        &["bundle", "inspect", &public, "--mirror-config", "bad.yaml"],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("bad.yaml"), "{err}");
    assert!(err.contains("line 18"), "the mirror's own line: {err}");
    assert!(err.contains("URI schemes are not supported"), "{err}");
    // Broken YAML: the parser's line.
    std::fs::write(
        d.join("broken.yaml"),
        "kind: ImageDigestMirrorSet\nspec: [\n",
    )
    .expect("write");
    let (code, _, err) = run_in(
        d,
        &[
            "catalog",
            "render",
            &public,
            "--mirror-config",
            "broken.yaml",
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("broken.yaml") && err.contains("line"), "{err}");
    // A registries.conf key that does not exist: TOML's line.
    std::fs::write(
        d.join("r.conf"),
        "[[registry]]\nlocation = \"quay.io\"\nmirror-by-tag = true\n",
    )
    .expect("write");
    let (code, _, err) = run_in(
        d,
        &["bundle", "inspect", &public, "--mirror-config", "r.conf"],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("r.conf") && err.contains("line 3"), "{err}");
}
