//! `catalog mirror --config ISC.yaml --install-sketches DIR`: an OLM v1 `ClusterExtension` and
//! an OLM v0 `OperatorGroup` + `Subscription` per mirrored package, on two real packages of the
//! community 4.18 catalog (their images replaced by loopback stand-ins, as in
//! `catalog_mirror_prune`), read back with Python's PyYAML, an independent reader:
//!
//! - the ClusterExtension meets the rules of operator-controller's CRD
//!   (`helm/olmv1/base/operator-controller/crd/standard/olm.operatorframework.io_clusterextensions.yaml`:
//!   required `namespace` and `source`, `sourceType: Catalog` with `catalog.packageName`, the
//!   DNS-1123 patterns of namespace, package, channels and service account, the version's
//!   64-character limit and its CEL pattern), with the channel and the version range the
//!   ImageSetConfiguration chose, and selects the ClusterCatalog the run wrote by name;
//! - the Subscription names the CatalogSource the run wrote, in `openshift-marketplace`;
//! - no file the run wrote (results and sketches) has a `status` or a `creationTimestamp`, and
//!   every value that looks like a time is RFC 3339 (issue 48 item 6; oc-mirror v2 writes a
//!   `createdAt` annotation in Go's RFC 850 layout instead).

use super::catalog_mirror_prune::{run, setup};
use crate::support::proc::Bounded;
use crate::support::registry::{Mode, Registry};
use crate::support::shared::{shared_catalogs, tool};

const CHECK: &str = r#"
import glob, json, os, re, sys, yaml
results, sketches = sys.argv[1], sys.argv[2]
dns1123_label = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
dns1123_sub = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
# The CRD's CEL rule for spec.source.catalog.version (RE2; Python's re reads it the same).
version_re = re.compile(r"^(\s*(=||!=|>|<|>=|=>|<=|=<|~|~>|\^)\s*(v?(0|[1-9]\d*|[x|X|\*])(\.(0|[1-9]\d*|x|X|\*]))?(\.(0|[1-9]\d*|x|X|\*))?(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?)\s*)((?:\s+|,\s*|\s*\|\|\s*)(=||!=|>|<|>=|=>|<=|=<|~|~>|\^)\s*(v?(0|[1-9]\d*|x|X|\*])(\.(0|[1-9]\d*|x|X|\*))?(\.(0|[1-9]\d*|x|X|\*]))?(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?)\s*)*$")
rfc3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")
timeish = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}|\d{2}-[A-Z][a-z]{2}-\d{2}")
def walk(v, path, f):
    if isinstance(v, dict):
        for k, x in v.items():
            assert k not in ("status", "creationTimestamp"), (f, path + "." + k)
            walk(x, path + "." + k, f)
    elif isinstance(v, list):
        for i, x in enumerate(v):
            walk(x, path + "[%d]" % i, f)
    elif isinstance(v, str) and timeish.search(v):
        assert rfc3339.match(v), (f, path, v)
docs = {}
for f in sorted(glob.glob(results + "/*.yaml") + glob.glob(sketches + "/**/*.yaml", recursive=True)):
    for d in yaml.safe_load_all(open(f)):
        walk(d, "", f)
        docs.setdefault(d["kind"], []).append(d)
catalog_sources = {d["metadata"]["name"] for d in docs["CatalogSource"]}
cluster_catalogs = {d["metadata"]["name"] for d in docs["ClusterCatalog"]}
out = {}
for e in docs["ClusterExtension"]:
    spec = e["spec"]
    assert dns1123_label.match(spec["namespace"]) and len(spec["namespace"]) <= 63, e
    sa = spec["serviceAccount"]["name"]
    assert dns1123_sub.match(sa) and len(sa) <= 253, e
    src = spec["source"]
    assert src["sourceType"] == "Catalog" and "ociImage" not in src, e
    cat = src["catalog"]
    assert dns1123_sub.match(cat["packageName"]), e
    for ch in cat.get("channels", []):
        assert dns1123_sub.match(ch) and len(ch) <= 253, e
    if "version" in cat:
        assert len(cat["version"]) <= 64 and version_re.match(cat["version"]), e
    sel = cat["selector"]["matchLabels"]["olm.operatorframework.io/metadata.name"]
    assert sel in cluster_catalogs, (sel, cluster_catalogs)
    out[cat["packageName"]] = {"channels": cat.get("channels"), "version": cat.get("version")}
for s in docs["Subscription"]:
    assert s["spec"]["source"] in catalog_sources, (s, catalog_sources)
    assert s["spec"]["sourceNamespace"] == "openshift-marketplace"
    out[s["spec"]["name"]]["subscription_channel"] = s["spec"]["channel"]
for g in docs["OperatorGroup"]:
    out[g["metadata"]["name"]]["operatorgroup"] = g["spec"]
print(json.dumps(out, sort_keys=True))
"#;

/// The channel and range the configuration asks for, in both sketches; the head-only package
/// pinned to its head; every object checked against the CRD's rules and the catalog objects
/// the run wrote.
#[test]
fn install_sketches_name_the_mirrored_catalog_and_the_chosen_channel_and_versions() {
    let Some(catalogs) = shared_catalogs("fbc") else {
        return;
    };
    if !tool("python3", "python3-yaml") {
        return;
    }
    let s = setup(
        &catalogs,
        &["kairos-operator", "project-onboarding-operator"],
    );
    let d = s.dir.path();
    let dst = Registry::start(Mode::Plain);
    let to = format!("{}/mirror", dst.host);
    let isc = format!(
        "kind: ImageSetConfiguration\napiVersion: mirror.openshift.io/v2alpha1\nmirror:\n  operators:\n    - catalog: {}\n      packages:\n        - name: kairos-operator\n          channels:\n            - name: candidate-v2\n              minVersion: 2.1.0\n              maxVersion: 2.1.1\n        - name: project-onboarding-operator\n",
        d.join("catalog").display()
    );
    std::fs::write(d.join("isc.yaml"), isc).expect("write isc");
    // Refused where the sketches cannot name the catalog at a target.
    let (code, _, err) = run(
        &[
            "catalog",
            "mirror",
            "--config",
            "isc.yaml",
            "--to-archive",
            "arch",
            "--install-sketches",
            "sk",
        ],
        d,
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--install-sketches"), "{err}");
    let (code, _, err) = run(
        &[
            "catalog",
            "mirror",
            "--config",
            "isc.yaml",
            "--to",
            &to,
            "--install-sketches",
            "sk",
        ],
        d,
    );
    assert_eq!(code, 0, "{err}");
    let out = std::process::Command::new("python3")
        .args(["-c", CHECK, "mirror-results", "sk"])
        .current_dir(d)
        .succeeds();
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        got["kairos-operator"],
        serde_json::json!({
            "channels": ["candidate-v2"],
            "version": ">=2.1.0, <=2.1.1",
            "subscription_channel": "candidate-v2",
            "operatorgroup": {},
        }),
        "{got}"
    );
    let p = &got["project-onboarding-operator"];
    assert_eq!(p["channels"].as_array().map(Vec::len), Some(1), "{got}");
    assert_eq!(p["version"], "0.0.51", "only the head is mirrored: {got}");
}
