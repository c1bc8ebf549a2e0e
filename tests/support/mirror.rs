//! What the `catalog mirror` tests share (`tests/cli/catalog_mirror*.rs`, `mirror_signatures.rs`):
//! the olmpack run with a mirror's time limit, the target registry's listings asked with curl
//! (an independent client, not olmpack's own), skopeo's raw manifest, and the small catalog
//! folders of one-bundle packages they mirror. Written once so the three test files read a
//! registry the same way.

use crate::support::cmd::olmpack;
use crate::support::json::strings;
use crate::support::proc::tool_ok;
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;

/// Runs `olmpack ARGS` in `cwd` with three minutes to finish (a mirror run copies images);
/// returns its exit code (-1 when killed), stdout and stderr.
pub fn run(args: &[&str], cwd: &Path) -> (i32, String, String) {
    let out = olmpack()
        .args(args)
        .current_dir(cwd)
        .timeout(Duration::from_secs(180))
        .output()
        .expect("run olmpack");
    super::cmd::code_and_text(&out)
}

/// The strings of `v[key]` (an array), sorted; none when it is absent.
fn sorted_strings(v: &Value, key: &str) -> Vec<String> {
    let mut out: Vec<String> = strings(&v[key]);
    out.sort();
    out
}

/// The JSON body of `GET url` asked with curl within 30 s (`null` when it fails or is not JSON).
fn curl_json(url: &str) -> Value {
    let out = std::process::Command::new("curl")
        .args(["-sf", "--max-time", "30", url])
        .output()
        .expect("curl");
    serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
}

/// The repositories a registry holds (`/v2/_catalog`), sorted.
pub fn registry_catalog(host: &str) -> Vec<String> {
    sorted_strings(
        &curl_json(&format!("http://{host}/v2/_catalog")),
        "repositories",
    )
}

/// The tags of one repository (`/v2/<repo>/tags/list`), sorted; none for an unknown one.
pub fn tags(host: &str, repo: &str) -> Vec<String> {
    sorted_strings(
        &curl_json(&format!("http://{host}/v2/{repo}/tags/list")),
        "tags",
    )
}

/// The manifest of `image` as the registry serves it, read by skopeo (`inspect --raw`).
pub fn skopeo_manifest(image: &str) -> Value {
    let out = tool_ok(
        "skopeo",
        &[
            "inspect",
            "--raw",
            "--tls-verify=false",
            &format!("docker://{image}"),
        ],
    );
    serde_json::from_slice(&out.stdout).expect("manifest json")
}

/// skopeo's digest of `reference` (`host/repo:tag` on a plain-HTTP registry): the independent
/// client's answer that the pin, mirror, republish and CI-recipe tests compare olmpack's with.
pub fn skopeo_digest(reference: &str) -> String {
    let out = tool_ok(
        "skopeo",
        &[
            "inspect",
            "--tls-verify=false",
            "--format",
            "{{.Digest}}",
            &format!("docker://{reference}"),
        ],
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A catalog folder with one package per `(package, bundle image, related images)`: channel
/// `stable` holding the one bundle `<package>.v1.0.0`, its related images named `r0`, `r1`, ...
pub fn write_catalog(dir: &Path, packages: &[(&str, &str, Vec<String>)]) {
    for (name, bundle, related) in packages {
        let pkg = dir.join(name);
        std::fs::create_dir_all(&pkg).expect("mkdir");
        let rel: Vec<Value> = related
            .iter()
            .enumerate()
            .map(|(i, r)| json!({"name": format!("r{i}"), "image": r}))
            .collect();
        let blobs = [
            json!({"schema": "olm.package", "name": name, "defaultChannel": "stable"}),
            json!({"schema": "olm.channel", "package": name, "name": "stable", "entries": [{"name": format!("{name}.v1.0.0")}]}),
            json!({"schema": "olm.bundle", "name": format!("{name}.v1.0.0"), "package": name, "image": bundle,
                "properties": [{"type": "olm.package", "value": {"packageName": name, "version": "1.0.0"}}],
                "relatedImages": rel}),
        ];
        let text: String = blobs
            .iter()
            .map(|b| serde_json::to_string(b).expect("json") + "\n")
            .collect();
        std::fs::write(pkg.join("catalog.json"), text).expect("write catalog");
    }
}
