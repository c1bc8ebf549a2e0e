//! The CI recipes in docs/guide/ci.md (GitHub Actions, GitLab CI) and the Tekton Task in
//! `ci/tekton/` are run here, command for command, against Debian's `docker-registry` on
//! loopback, with the olmpack under test on PATH: a recipe that stops working fails this test.
//! Only the install step (`cargo install`) is left out. The pushed images are then checked with
//! skopeo, an independent client.

use crate::support::fixtures::repo_root;
use crate::support::proc::Bounded;
use crate::support::registry as support;

use crate::support::fs::copy_dir;
use crate::support::mirror::skopeo_digest;
use olmpack::yaml::parse_stream;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use support::{Mode, Registry};

const PACKAGE: &str = "kvstore-operator";
const VERSION: &str = "1.2.0";

/// The fenced ```yaml block that follows `heading` in docs/guide/ci.md.
fn readme_block(heading: &str) -> String {
    let readme = std::fs::read_to_string(repo_root().join("docs/guide/ci.md")).unwrap();
    let start = readme
        .find(heading)
        .unwrap_or_else(|| panic!("docs/guide/ci.md has no heading {heading:?}"));
    let rest = &readme[start..];
    let open = rest
        .find("```yaml\n")
        .expect("a yaml block after the heading")
        + "```yaml\n".len();
    let close = rest[open..].find("```").expect("the block is closed");
    rest[open..open + close].to_string()
}

fn yaml_to_json(text: &str) -> Value {
    let docs = parse_stream(text).expect("the recipe is valid YAML");
    docs.first().expect("one document").root.to_json()
}

/// An operator repository as the recipes expect it: `bundle/` and `catalog-template.yaml`
/// naming the bundle image the recipe will push under `image_prefix`.
fn operator_repo(image_prefix: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(
        &repo_root().join("testdata/bundles/valid-basic"),
        &dir.path().join("bundle"),
    );
    let template = format!(
        "schema: olm.template.basic\n\
         entries:\n\
         - schema: olm.package\n  name: {PACKAGE}\n  defaultChannel: stable\n\
         - schema: olm.channel\n  package: {PACKAGE}\n  name: stable\n  entries:\n  - name: kvstore-operator.v1.2.0\n\
         - schema: olm.bundle\n  image: {image_prefix}/{PACKAGE}-bundle:v{VERSION}\n"
    );
    std::fs::write(dir.path().join("catalog-template.yaml"), template).unwrap();
    dir
}

/// PATH with the olmpack under test first.
fn path_with_olmpack() -> String {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_olmpack"));
    let dir = bin.parent().unwrap().to_path_buf();
    format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// Runs one shell script as the CI system would (bash, errexit and pipefail) in `cwd`.
fn run_script(what: &str, script: &str, cwd: &Path, env: &BTreeMap<String, String>) {
    let out = Command::new("bash")
        .args(["--noprofile", "--norc", "-eo", "pipefail", "-c", script])
        .current_dir(cwd)
        .env("PATH", path_with_olmpack())
        .env("HOME", cwd)
        .envs(env)
        .bounded_output()
        .unwrap();
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{script}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The images a recipe pushed are in the registry (checked by skopeo), their digests are the ones
/// the recipe wrote to its digest files, and the catalog holds the bundle.
fn check_published(repo: &Path, image_prefix: &str, digest_files: bool) {
    let bundle = skopeo_digest(&format!("{image_prefix}/{PACKAGE}-bundle:v{VERSION}"));
    let catalog = skopeo_digest(&format!("{image_prefix}/{PACKAGE}-catalog:v{VERSION}"));
    assert!(bundle.starts_with("sha256:") && catalog.starts_with("sha256:"));
    if digest_files {
        let read = |f: &str| std::fs::read_to_string(repo.join(f)).unwrap();
        assert_eq!(read("bundle.digest").trim(), bundle);
        assert_eq!(read("catalog.digest").trim(), catalog);
    }
    let rendered =
        std::fs::read_to_string(repo.join(format!("catalog/{PACKAGE}/catalog.yaml"))).unwrap();
    assert!(
        rendered.contains("name: kvstore-operator.v1.2.0")
            && rendered.contains(&format!(
                "image: {image_prefix}/{PACKAGE}-bundle:v{VERSION}"
            )),
        "the rendered catalog holds the pushed bundle:\n{rendered}"
    );
}

fn strings(map: Option<&Value>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    if let Some(Value::Object(m)) = map {
        for (k, v) in m {
            let v = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            out.insert(k.clone(), v);
        }
    }
    out
}

#[test]
fn github_actions_recipe_publishes_bundle_and_catalog() {
    let reg = Registry::start(Mode::Plain);
    let workflow = yaml_to_json(&readme_block("## GitHub Actions"));
    let prefix = format!("{}/example", reg.host);
    let repo = operator_repo(&prefix);
    let mut env = strings(workflow.get("env"));
    assert!(env.contains_key("REGISTRY"), "the workflow sets REGISTRY");
    env.insert("REGISTRY".into(), prefix.clone());
    assert_eq!(env.get("PACKAGE").map(String::as_str), Some(PACKAGE));
    let steps = workflow["jobs"]["publish"]["steps"]
        .as_array()
        .expect("jobs.publish.steps");
    let mut ran = 0;
    for step in steps {
        let Some(run) = step.get("run").and_then(Value::as_str) else {
            continue;
        };
        if run.contains("cargo install") {
            continue;
        }
        let mut step_env = env.clone();
        for (k, v) in strings(step.get("env")) {
            // `${{ secrets.X }}` comes from the repository's settings: any value will do for a
            // registry without authentication.
            let v = if v.contains("${{") {
                "ci-secret".to_string()
            } else {
                v
            };
            step_env.insert(k, v);
        }
        run_script(
            step["name"].as_str().unwrap_or("step"),
            run,
            repo.path(),
            &step_env,
        );
        ran += 1;
    }
    assert_eq!(ran, 2, "both publishing steps ran");
    check_published(repo.path(), &prefix, true);
}

#[test]
fn gitlab_ci_recipe_publishes_bundle_and_catalog() {
    let reg = Registry::start(Mode::Plain);
    let pipeline = yaml_to_json(&readme_block("## GitLab CI"));
    let prefix = format!("{}/group/project", reg.host);
    let repo = operator_repo(&prefix);
    let mut env = strings(pipeline.get("variables"));
    // GitLab's predefined variables for its registry.
    env.insert("CI_REGISTRY".into(), reg.host.clone());
    env.insert("CI_REGISTRY_IMAGE".into(), prefix.clone());
    env.insert("CI_REGISTRY_USER".into(), "gitlab-ci-token".into());
    env.insert("CI_REGISTRY_PASSWORD".into(), "ci-job-token".into());
    let job = &pipeline["publish-operator"];
    let before = job["before_script"].as_array().expect("before_script");
    assert!(
        before
            .iter()
            .all(|l| l.as_str().unwrap_or("").contains("cargo install")),
        "before_script only installs olmpack"
    );
    let script: Vec<&str> = job["script"]
        .as_array()
        .expect("script")
        .iter()
        .map(|l| l.as_str().expect("script lines are strings"))
        .collect();
    assert!(script.len() >= 6);
    // GitLab runs a job's script lines in one shell, stopping at the first failure.
    run_script("publish-operator", &script.join("\n"), repo.path(), &env);
    check_published(repo.path(), &prefix, false);
}

#[test]
fn tekton_task_publishes_bundle_and_catalog() {
    let reg = Registry::start(Mode::Plain);
    let text =
        std::fs::read_to_string(repo_root().join("ci/tekton/olmpack-operator-task.yaml")).unwrap();
    let task = yaml_to_json(&text);
    assert_eq!(task["kind"], "Task");
    let prefix = format!("{}/tekton", reg.host);
    let repo = operator_repo(&prefix);
    let results = tempfile::tempdir().unwrap();
    // What Tekton substitutes before the step runs: params (given or default), the workspace
    // paths, and the result files.
    let mut subst: BTreeMap<String, String> = BTreeMap::new();
    for p in task["spec"]["params"].as_array().expect("params") {
        let name = p["name"].as_str().unwrap();
        if let Some(d) = p.get("default").and_then(Value::as_str) {
            subst.insert(format!("$(params.{name})"), d.to_string());
        }
    }
    for (name, value) in [
        ("registry", prefix.as_str()),
        ("version", VERSION),
        ("package", PACKAGE),
    ] {
        subst.insert(format!("$(params.{name})"), value.to_string());
    }
    subst.insert(
        "$(workspaces.source.path)".into(),
        repo.path().display().to_string(),
    );
    subst.insert("$(workspaces.dockerconfig.bound)".into(), "false".into());
    subst.insert("$(workspaces.dockerconfig.path)".into(), String::new());
    for r in task["spec"]["results"].as_array().expect("results") {
        let name = r["name"].as_str().unwrap();
        subst.insert(
            format!("$(results.{name}.path)"),
            results.path().join(name).display().to_string(),
        );
    }
    let apply = |s: &str| {
        let mut s = s.to_string();
        for (k, v) in &subst {
            s = s.replace(k, v);
        }
        assert!(!s.contains("$(params."), "unsubstituted param in {s}");
        s
    };
    let steps = task["spec"]["steps"].as_array().expect("steps");
    assert_eq!(steps.len(), 1);
    let step = &steps[0];
    let mut env = BTreeMap::new();
    for e in step["env"].as_array().expect("env") {
        env.insert(
            e["name"].as_str().unwrap().to_string(),
            apply(e["value"].as_str().unwrap()),
        );
    }
    let script = apply(step["script"].as_str().expect("script"));
    let cwd = PathBuf::from(apply(step["workingDir"].as_str().unwrap()));
    run_script("tekton step publish", &script, &cwd, &env);
    check_published(repo.path(), &prefix, true);
    let bundle = std::fs::read_to_string(results.path().join("bundle-digest")).unwrap();
    assert_eq!(
        bundle,
        skopeo_digest(&format!("{prefix}/{PACKAGE}-bundle:v{VERSION}"))
    );
    let catalog = std::fs::read_to_string(results.path().join("catalog-digest")).unwrap();
    assert!(catalog.starts_with("sha256:"));
}
