//! YAML aliases judged by the bytes they copy, not only by the values (issue 40.7): a 3 MiB
//! file with one anchored scalar of 1 MiB and 3,000 aliases of it (plus a few plain values,
//! which keep go-yaml's alias-to-value ratio under its limit) expanded to 3 GB and ran out of
//! memory, reported as an internal error. Each command that reads such a file (`catalog
//! render`, `catalog validate`, `bundle validate`) runs under an address-space limit (`prlimit
//! --as`, util-linux) and must refuse it clearly (file, line, the reason), with its own exit
//! code, no partial output, no panic; on the fast path (a block sequence of aliases) and on
//! the general one (a flow sequence). Aliases that copy little text are judged as go-yaml
//! judges them, and pass.

use crate::support::cmd::olmpack_path;
use crate::support::fixtures::valid_basic;
use crate::support::fs::copy_dir;
use crate::support::proc::Bounded;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

/// Far above what olmpack needs for these files once bounded; far below what 3,000 copies of
/// 1 MiB take.
const ADDRESS_SPACE: u64 = 1536 << 20;

/// An `olm.package` blob whose description is an anchored scalar of `size` bytes, copied by
/// `aliases` aliases (a block sequence, or a flow one with `flow`), after 100 plain values.
fn aliased_package(size: usize, aliases: usize, flow: bool) -> String {
    let mut text = format!(
        "schema: olm.package\nname: demo\ndescription: &big {}\nfiller:\n",
        "A".repeat(size)
    );
    for i in 0..100 {
        text.push_str(&format!("  - f{i}\n"));
    }
    if flow {
        text.push_str(&format!("copies: [{}]\n", vec!["*big"; aliases].join(", ")));
    } else {
        text.push_str("copies:\n");
        text.push_str(&"  - *big\n".repeat(aliases));
    }
    text
}

fn bounded(args: &[&str], dir: &Path) -> Output {
    Command::new("prlimit")
        .arg(format!("--as={ADDRESS_SPACE}"))
        .arg("--")
        .arg(olmpack_path())
        .args(args)
        .arg(dir)
        .env("NO_COLOR", "1")
        .output_within(Duration::from_secs(300))
        .expect("run prlimit (util-linux)")
}

/// Checks a refusal: the exit code, the file and line, the reason; nothing else went wrong.
fn refused(out: &Output, code: i32, file: &str, what: &str) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let all = format!("{stdout}{stderr}");
    assert_eq!(out.status.code(), Some(code), "{what}: {all}");
    let located = all
        .split(&format!("{file}:"))
        .skip(1)
        .any(|rest| rest.starts_with(|c: char| c.is_ascii_digit()));
    assert!(located, "{what}: names {file}:LINE\n{all}");
    assert!(
        all.contains("excessive aliasing"),
        "{what}: the reason\n{all}"
    );
    for bad in ["panicked", "internal error", "memory"] {
        assert!(!all.contains(bad), "{what}: {bad}\n{all}");
    }
}

#[test]
fn aliases_of_a_large_scalar_are_refused_in_bounded_memory() {
    for flow in [false, true] {
        let what = if flow {
            "flow aliases"
        } else {
            "block aliases"
        };
        let text = aliased_package(1 << 20, 3000, flow);
        let tmp = tempfile::tempdir().unwrap();

        let catalog = tmp.path().join("catalog");
        std::fs::create_dir_all(catalog.join("demo")).unwrap();
        std::fs::write(catalog.join("demo/catalog.yaml"), &text).unwrap();
        let out = bounded(&["catalog", "render"], &catalog);
        refused(
            &out,
            2,
            "demo/catalog.yaml",
            &format!("catalog render, {what}"),
        );
        assert!(out.stdout.is_empty(), "no partial output");
        let out = bounded(&["catalog", "validate"], &catalog);
        refused(
            &out,
            1,
            "demo/catalog.yaml",
            &format!("catalog validate, {what}"),
        );

        let bundle = tmp.path().join("bundle");
        copy_dir(&valid_basic(), &bundle);
        std::fs::write(bundle.join("manifests/bomb.yaml"), &text).unwrap();
        let out = bounded(&["bundle", "validate", "--color", "never"], &bundle);
        refused(
            &out,
            1,
            "manifests/bomb.yaml",
            &format!("bundle validate, {what}"),
        );
    }
}

/// A thousand aliases of a 1 KB scalar copy 1 MB: go-yaml's rule alone decides, and accepts.
#[test]
fn aliases_of_small_text_are_judged_as_go_yaml_judges_them() {
    for flow in [false, true] {
        let tmp = tempfile::tempdir().unwrap();
        let catalog = tmp.path().join("catalog");
        std::fs::create_dir_all(catalog.join("demo")).unwrap();
        std::fs::write(
            catalog.join("demo/catalog.yaml"),
            // A blob of a schema olmpack does not know is rendered as written.
            format!(
                "schema: olm.package\nname: demo\n---\n{}",
                aliased_package(1000, 1000, flow).replace("olm.package", "example.com/copies")
            ),
        )
        .unwrap();
        let out = bounded(&["catalog", "render", "--output", "json"], &catalog);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let copies = serde_json::Deserializer::from_slice(&out.stdout)
            .into_iter::<serde_json::Value>()
            .map(Result::unwrap)
            .find(|blob| blob["schema"] == "example.com/copies")
            .expect("the blob is rendered");
        let copies = copies["copies"].as_array().expect("its copies");
        assert_eq!(copies.len(), 1000);
        assert!(
            copies
                .iter()
                .all(|c| c.as_str() == Some(&*"A".repeat(1000)))
        );
    }
}
