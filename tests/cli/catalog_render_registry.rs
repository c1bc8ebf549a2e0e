//! `catalog render` of a bundle image in a real registry (the Debian `docker-registry`, plain
//! HTTP and TLS with Basic auth): the same blob as rendering the folder with `--image` set to
//! that reference, with the same registry flags as `bundle validate --image`.

use crate::support::registry as support;

use std::path::PathBuf;
use support::{Mode, PASSWORD, Registry, USER};

fn olmpack(args: &[&str]) -> std::process::Output {
    crate::support::cmd::olmpack_cmd()
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn bundle_image_in_a_registry_renders_like_its_folder() {
    let folder = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/bundles/valid-basic");
    let folder = folder.to_str().unwrap();
    for mode in [Mode::Plain, Mode::TlsBasic] {
        let reg = Registry::start(mode);
        let reference = reg.reference("olm/kvstore-bundle", "v1.2.0");
        let mut conn: Vec<String> = Vec::new();
        if mode != Mode::Plain {
            conn.push("--creds".into());
            conn.push(format!("{USER}:{PASSWORD}"));
        }
        if let Some(ca) = &reg.ca {
            conn.push("--ca-file".into());
            conn.push(ca.display().to_string());
        }
        let conn: Vec<&str> = conn.iter().map(String::as_str).collect();
        let mut build = vec!["bundle", "build", folder, "--push", "-t", &reference];
        build.extend(&conn);
        let built = olmpack(&build);
        assert!(
            built.status.success(),
            "{}",
            String::from_utf8_lossy(&built.stderr)
        );

        let mut render = vec!["catalog", "render", "-o", "yaml", &reference];
        render.extend(&conn);
        let from_image = olmpack(&render);
        assert!(
            from_image.status.success(),
            "{}",
            String::from_utf8_lossy(&from_image.stderr)
        );
        let from_folder = olmpack(&[
            "catalog", "render", "-o", "yaml", "--image", &reference, folder,
        ]);
        assert!(from_folder.status.success());
        assert_eq!(
            String::from_utf8(from_image.stdout).unwrap(),
            String::from_utf8(from_folder.stdout).unwrap()
        );

        // A reference that is not there: an error naming it, nothing on stdout.
        let missing = reg.reference("olm/nothing", "v0");
        let mut render = vec!["catalog", "render", &missing];
        render.extend(&conn);
        let out = olmpack(&render);
        assert_eq!(out.status.code(), Some(2));
        assert!(out.stdout.is_empty());
        assert!(String::from_utf8_lossy(&out.stderr).contains("olm/nothing"));
    }
}
