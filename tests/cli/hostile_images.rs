//! Images and archives built by an attacker (issue 40 items 1, 4 and 8), run through the binary
//! from a real registry, an `oci:` layout, an `oci-archive:` and a `docker-archive:`.
//!
//! - Links: each layer is checked link by link while it is written, but a later entry can turn a
//!   component of an earlier link's target into a link: `configs/pkg/esc.json ->
//!   ../../a/a/…/../../…/HOST/canary.json` is inside the image when written (no `a` yet), and
//!   `a -> .` then makes it climb to `/` and down to a canary file planted outside. No command
//!   may print, pack, serve or leave a way to the canary, and each must fail cleanly.
//! - Tar extension headers that declare gigabytes (GNU long name, PAX) and archive metadata
//!   (`manifest.json`, a config, `index.json`) over containers/image's caps are refused before
//!   they are read, under a memory cap.

use crate::support::cmd::{SERVE_ON_FREE_PORTS, olmpack_path};
use crate::support::proc::Bounded;
use crate::support::registry::{self as support, Mode, Registry};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// What the canary file outside every image holds: a catalog blob (so a loader that reads it
/// renders it) with a marker no test output has otherwise.
const MARKER: &str = "canary-4711-host-secret";

/// Virtual memory a run may use (KiB for `ulimit -v`): a run that reads a gigabyte header or
/// `/dev/zero` whole dies instead of taking the machine.
const MEMORY_CAP_KIB: u64 = 3 << 20;

fn canary_json() -> String {
    format!("{{\"schema\":\"olm.package\",\"name\":\"{MARKER}\"}}\n")
}

/// A tar entry of a crafted layer.
pub enum E<'a> {
    Dir(&'a str),
    File(&'a str, &'a [u8]),
    Link(&'a str, &'a str),
}

pub fn tar_of(entries: &[E]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for e in entries {
        let mut h = tar::Header::new_gnu();
        h.set_mtime(0);
        match e {
            E::Dir(p) => {
                h.set_entry_type(tar::EntryType::Directory);
                h.set_mode(0o755);
                h.set_size(0);
                b.append_data(&mut h, p, &[][..]).unwrap();
            }
            E::File(p, data) => {
                h.set_mode(0o644);
                h.set_size(data.len() as u64);
                b.append_data(&mut h, p, *data).unwrap();
            }
            E::Link(p, target) => {
                h.set_entry_type(tar::EntryType::Symlink);
                h.set_mode(0o777);
                h.set_size(0);
                b.append_link(&mut h, p, target).unwrap();
            }
        }
    }
    b.into_inner().unwrap()
}

/// A link target, written from a link `depth` folders below the image root, that stays inside
/// the image read lexically but climbs to `/` and down to `host_file` once `a -> .` exists at
/// the root: `../…/a/a/…/../../…/host/file`.
pub fn chain_target(depth: usize, host_file: &Path) -> String {
    const CLIMB: usize = 30;
    format!(
        "{}{}{}{}",
        "../".repeat(depth),
        "a/".repeat(CLIMB),
        "../".repeat(CLIMB),
        host_file.display().to_string().trim_start_matches('/')
    )
}

pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

/// Writes an OCI layout at `dir` holding one image of these gzip layers and labels; returns its
/// `oci:` reference.
pub fn layout_of(dir: &Path, gz_layers: &[Vec<u8>], labels: serde_json::Value) -> String {
    let image = support::image_from_gz_layers(dir, gz_layers, labels, serde_json::json!({}));
    support::write_layout(&image, &dir.join("layout"), "v1");
    format!("oci:{}:v1", dir.join("layout").display())
}

fn catalog_labels() -> serde_json::Value {
    serde_json::json!({ olmpack::catalog::CONFIGS_LABEL: "/configs" })
}

/// One run of the binary under the memory cap and a time limit, with `TMPDIR` set.
fn run(args: &[&str], tmpdir: &Path, limit: Duration) -> Output {
    std::fs::create_dir_all(tmpdir).unwrap();
    Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {MEMORY_CAP_KIB}; exec \"$0\" \"$@\""))
        .arg(olmpack_path())
        .args(args)
        .env("NO_COLOR", "1")
        .env("TMPDIR", tmpdir)
        .stdin(Stdio::null())
        .output_within(limit)
        .unwrap()
}

/// Asserts a run failed cleanly (exit 1 or 2, no signal), printed nothing on stdout, never the
/// canary, and said `why`.
fn refused(out: &Output, why: &str, what: &str) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stdout.contains(MARKER) && !stderr.contains(MARKER),
        "{what}: the host file leaked:\n{stdout}\n{stderr}"
    );
    assert!(
        matches!(out.status.code(), Some(1 | 2)),
        "{what}: expected a clean failure, got {:?}: {stderr}",
        out.status
    );
    assert!(stdout.is_empty(), "{what}: partial output: {stdout}");
    assert!(
        stderr.contains(why),
        "{what}: expected {why:?} in: {stderr}"
    );
    assert!(
        !stderr.contains("panicked") && !stderr.contains("internal error"),
        "{what}: {stderr}"
    );
}

fn no_marker_under(dir: &Path) {
    if !dir.exists() {
        return;
    }
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let meta = std::fs::symlink_metadata(&p).unwrap();
            if meta.is_dir() {
                stack.push(p);
            } else if meta.is_file() {
                let bytes = std::fs::read(&p).unwrap();
                assert!(
                    !String::from_utf8_lossy(&bytes).contains(MARKER),
                    "{} holds the host file",
                    p.display()
                );
            } else if meta.is_symlink() {
                // A link left in an output must not reach the canary either.
                let reached = std::fs::read(&p).unwrap_or_default();
                assert!(
                    !String::from_utf8_lossy(&reached).contains(MARKER),
                    "{} is a link to the host file",
                    p.display()
                );
            }
        }
    }
}

/// The scene: a temp folder with the canary outside every image, and a `TMPDIR` for runs.
struct Scene {
    tmp: tempfile::TempDir,
    canary: PathBuf,
}

impl Scene {
    fn new() -> Scene {
        let tmp = tempfile::tempdir().unwrap();
        let canary = tmp.path().join("host").join("canary.json");
        std::fs::create_dir_all(canary.parent().unwrap()).unwrap();
        std::fs::write(&canary, canary_json()).unwrap();
        Scene { tmp, canary }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.tmp.path().join(rel)
    }

    fn tmpdir(&self) -> PathBuf {
        self.path("t")
    }

    /// A catalog image whose `configs/pkg/esc.json` reaches `target` once `a -> .` is in
    /// place; `split` puts `a` in a second layer, else both are in one.
    fn chained_catalog(&self, name: &str, target: &Path, split: bool) -> String {
        self.chained_catalog_at(name, target, split, "a")
    }

    /// [`Scene::chained_catalog`] with the `a -> .` link at `a_at` (`a` or `configs/a`).
    fn chained_catalog_at(&self, name: &str, target: &Path, split: bool, a_at: &str) -> String {
        let dir = self.path(name);
        std::fs::create_dir_all(&dir).unwrap();
        let ups = if a_at == "a" { 2 } else { 1 };
        let link = chain_target(ups, target);
        let pkg = b"{\"schema\":\"olm.package\",\"name\":\"fine\"}\n";
        let mut first = vec![
            E::Dir("configs/"),
            E::Dir("configs/pkg/"),
            E::File("configs/pkg/fine.json", pkg),
            E::Link("configs/pkg/esc.json", &link),
        ];
        if a_at != "a" {
            // The loader must not read `configs/a` itself (a folder): it is ignored.
            first.push(E::File("configs/.indexignore", b"a\n"));
        }
        let layers = if split {
            vec![gzip(&tar_of(&first)), gzip(&tar_of(&[E::Link(a_at, ".")]))]
        } else {
            let mut all = first;
            all.push(E::Link(a_at, "."));
            vec![gzip(&tar_of(&all))]
        };
        layout_of(&dir, &layers, catalog_labels())
    }

    /// A bundle image whose `manifests/esc.yaml` reaches the canary once `a -> .` exists.
    fn chained_bundle(&self, name: &str) -> String {
        let dir = self.path(name);
        std::fs::create_dir_all(&dir).unwrap();
        let link = chain_target(1, &self.canary);
        let files = support::bundle_files(0);
        let mut entries = vec![E::Dir("manifests/"), E::Dir("metadata/")];
        for (p, d) in &files {
            entries.push(E::File(p, d));
        }
        entries.push(E::Link("manifests/esc.yaml", &link));
        entries.push(E::Link("a", "."));
        layout_of(&dir, &[gzip(&tar_of(&entries))], support::labels("testop"))
    }
}

/// The link chain fails today: `catalog render` printed the canary from an `oci:` layout, an
/// `oci-archive:` and a real registry (either order of layers, one layer or two).
#[test]
fn catalog_render_never_follows_a_chain_of_links_out_of_the_image() {
    let scene = Scene::new();
    let t = scene.tmpdir();
    let limit = Duration::from_secs(120);
    let reg = Registry::start(Mode::Plain);
    for (n, split) in [false, true].into_iter().enumerate() {
        let layout = scene.chained_catalog(&format!("cat{n}"), &scene.canary, split);
        let out = run(&["catalog", "render", &layout], &t, limit);
        refused(&out, "leads out of the image", &format!("render {layout}"));

        // The same image as an oci-archive (a tar of the layout, made by tar(1)).
        let dir = layout.trim_start_matches("oci:").trim_end_matches(":v1");
        let archive = scene.path(&format!("cat{n}.tar"));
        crate::support::proc::tool_ok("tar", &["-C", dir, "-cf", archive.to_str().unwrap(), "."]);
        let out = run(
            &[
                "catalog",
                "render",
                &format!("oci-archive:{}:v1", archive.display()),
            ],
            &t,
            limit,
        );
        refused(&out, "leads out of the image", "render oci-archive");

        // And pushed to a registry by skopeo.
        let reference = reg.reference("evil/catalog", &format!("v{n}"));
        crate::support::proc::tool_ok(
            "skopeo",
            &[
                "copy",
                "--dest-tls-verify=false",
                &layout,
                &format!("docker://{reference}"),
            ],
        );
        let out = run(&["catalog", "render", &reference], &t, limit);
        refused(&out, "leads out of the image", "render from the registry");
    }
    // The other order: `a -> .` first, then the link through it, is refused as it is written.
    let dir = scene.path("first");
    std::fs::create_dir_all(&dir).unwrap();
    let link = chain_target(2, &scene.canary);
    let tar = tar_of(&[
        E::Link("a", "."),
        E::Dir("configs/"),
        E::Dir("configs/pkg/"),
        E::Link("configs/pkg/esc.json", &link),
    ]);
    let layout = layout_of(&dir, &[gzip(&tar)], catalog_labels());
    let out = run(&["catalog", "render", &layout], &t, limit);
    refused(&out, "through another link", "render, a first");
    // Nothing is left in the temp folder either.
    assert_eq!(std::fs::read_dir(&t).unwrap().count(), 0);
}

/// A link chain to `/dev/zero` hung (or filled memory) today: now refused at once.
#[test]
fn a_chain_of_links_to_a_device_is_refused_without_reading_it() {
    let scene = Scene::new();
    let layout = scene.chained_catalog("zero", Path::new("/dev/zero"), true);
    let started = Instant::now();
    let out = run(
        &["catalog", "render", &layout],
        &scene.tmpdir(),
        Duration::from_secs(60),
    );
    refused(&out, "leads out of the image", "render /dev/zero chain");
    assert!(started.elapsed() < Duration::from_secs(60));
}

/// `catalog build IMAGE --filter` put the canary into a new image today; `catalog serve`
/// served it; `bundle pull` left a link to it; `bundle validate --image` followed it.
#[test]
fn build_serve_pull_and_validate_refuse_a_chain_of_links() {
    let scene = Scene::new();
    let t = scene.tmpdir();
    let limit = Duration::from_secs(180);
    // `a` inside the catalog folder, so the build takes it out of the image with the catalog.
    let catalog = scene.chained_catalog_at("cat", &scene.canary, true, "configs/a");
    let cfg = scene.path("filter.yaml");
    std::fs::write(
        &cfg,
        "apiVersion: olm.operatorframework.io/filter/mirror/v1alpha1\nkind: FilterConfiguration\npackages:\n  - name: fine\n  - name: canary-4711-host-secret\n",
    )
    .unwrap();
    let built = scene.path("built");
    let out = run(
        &[
            "catalog",
            "build",
            &catalog,
            "--filter",
            cfg.to_str().unwrap(),
            "--output",
            &format!("oci:{}:v1", built.display()),
        ],
        &t,
        limit,
    );
    refused(&out, "leads out of the image", "catalog build --filter");
    assert!(!built.exists(), "no output is written");

    // serve: refuses to start (today it listened and answered with the canary).
    let out = run(
        &[&["catalog", "serve", &catalog][..], &SERVE_ON_FREE_PORTS].concat(),
        &t,
        Duration::from_secs(60),
    );
    refused(&out, "leads out of the image", "catalog serve");

    let bundle = scene.chained_bundle("bundle");
    let pulled = scene.path("pulled");
    let out = run(
        &["bundle", "pull", &bundle, pulled.to_str().unwrap()],
        &t,
        limit,
    );
    refused(&out, "leads out of the image", "bundle pull");
    no_marker_under(&pulled);

    let out = run(&["bundle", "validate", "--image", &bundle], &t, limit);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains(MARKER), "{stderr}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains(MARKER));
    assert!(stderr.contains("leads out of the image"), "{stderr}");
    assert!(matches!(out.status.code(), Some(1 | 2)), "{stderr}");
    assert_eq!(std::fs::read_dir(&t).unwrap().count(), 0);
}

/// A docker-archive whose `manifest.json` names a config that a chain of links turns into the
/// canary: `copy` took it as the image config today.
#[test]
fn docker_archive_config_behind_a_chain_of_links_is_refused() {
    let scene = Scene::new();
    let layer = tar_of(&[E::File("f", b"x")]);
    let manifest = br#"[{"Config":"cfg/c.json","RepoTags":[],"Layers":["layer.tar"]}]"#;
    let link = chain_target(1, &scene.canary);
    let archive = tar_of(&[
        E::File("manifest.json", manifest),
        E::File("layer.tar", &layer),
        E::Dir("cfg/"),
        E::Link("cfg/c.json", &link),
        E::Link("a", "."),
    ]);
    let path = scene.path("evil.tar");
    std::fs::write(&path, &archive).unwrap();
    let out_dir = scene.path("copied");
    let out = run(
        &[
            "copy",
            &format!("docker-archive:{}", path.display()),
            &format!("oci:{}:v1", out_dir.display()),
        ],
        &scene.tmpdir(),
        Duration::from_secs(60),
    );
    refused(&out, "leads out of the image", "copy docker-archive");
    no_marker_under(&out_dir);
}

/// A gzip stream of `prefix` followed by `zeros` zero bytes, made without compressing them:
/// one deflate block of 1 MiB of zeros after a full flush (which resets the dictionary) is
/// repeated. The trailer's CRC is not computed: a reader is expected to refuse long before.
fn gzip_with_zeros(prefix: &[u8], zeros_mib: usize) -> Vec<u8> {
    use flate2::{Compress, Compression, FlushCompress};
    let mut c = Compress::new(Compression::best(), false);
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    let mut head = Vec::with_capacity(prefix.len() + 1024);
    c.compress_vec(prefix, &mut head, FlushCompress::Full)
        .unwrap();
    out.extend_from_slice(&head);
    let chunk = vec![0u8; 1 << 20];
    let mut block = Vec::with_capacity(1 << 16);
    c.compress_vec(&chunk, &mut block, FlushCompress::Full)
        .unwrap();
    for _ in 0..zeros_mib {
        out.extend_from_slice(&block);
    }
    let mut tail = Vec::with_capacity(64);
    c.compress_vec(&[], &mut tail, FlushCompress::Finish)
        .unwrap();
    out.extend_from_slice(&tail);
    out.extend_from_slice(&0u32.to_le_bytes());
    let size = (prefix.len() as u64 + ((zeros_mib as u64) << 20)) as u32;
    out.extend_from_slice(&size.to_le_bytes());
    out
}

fn extension_header(kind: tar::EntryType, size: u64) -> Vec<u8> {
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(kind);
    h.set_size(size);
    let name = b"././@LongLink";
    h.as_old_mut().name[..name.len()].copy_from_slice(name);
    h.set_cksum();
    h.as_bytes().to_vec()
}

/// A ~4 MiB gzip layer whose first header is a GNU long name (or PAX header) declaring 4 GiB:
/// the tar reader buffered it whole and the run died of memory today.
#[test]
fn gigabyte_tar_extension_headers_are_refused_under_a_memory_cap() {
    let scene = Scene::new();
    for (n, kind) in [tar::EntryType::GNULongName, tar::EntryType::XHeader]
        .into_iter()
        .enumerate()
    {
        let layer = gzip_with_zeros(&extension_header(kind, 4 << 30), 4 << 10);
        assert!(layer.len() < 8 << 20, "{}", layer.len());
        let dir = scene.path(&format!("big{n}"));
        std::fs::create_dir_all(&dir).unwrap();
        let layout = layout_of(&dir, &[layer], catalog_labels());
        let out = run(
            &["catalog", "render", &layout],
            &scene.tmpdir(),
            Duration::from_secs(120),
        );
        refused(
            &out,
            "header of 4294967296 bytes (over the 1048576-byte limit)",
            &format!("{kind:?}"),
        );
    }
}

/// `json` after `size` blanks: still valid JSON, and over `size` bytes.
fn blank_padded(json: &[u8], size: usize) -> Vec<u8> {
    let mut v = vec![b' '; size];
    v.extend_from_slice(json);
    v
}

/// A docker-archive's metadata over containers/image's caps: `manifest.json` (1 MiB) and the
/// config (4 MiB). Each is valid JSON padded with blanks, which today was read whole and
/// accepted.
#[test]
fn oversize_docker_archive_metadata_is_refused_naming_the_file() {
    let scene = Scene::new();
    let t = scene.tmpdir();
    let limit = Duration::from_secs(60);
    let layer = tar_of(&[E::File("f", b"x")]);
    let diff_id = support::sha256(&layer);
    let config = format!(
        "{{\"architecture\":\"amd64\",\"os\":\"linux\",\"rootfs\":{{\"type\":\"layers\",\"diff_ids\":[\"{diff_id}\"]}}}}"
    );
    let manifest = br#"[{"Config":"c.json","RepoTags":[],"Layers":["layer.tar"]}]"#;
    for (name, manifest, config, why) in [
        (
            "big-manifest",
            blank_padded(manifest, 2 << 20),
            config.as_bytes().to_vec(),
            "manifest.json: larger than the 1048576-byte limit",
        ),
        (
            "big-config",
            manifest.to_vec(),
            blank_padded(config.as_bytes(), 5 << 20),
            "c.json: larger than the 4194304-byte limit",
        ),
    ] {
        let archive = tar_of(&[
            E::File("manifest.json", &manifest),
            E::File("c.json", &config),
            E::File("layer.tar", &layer),
        ]);
        let path = scene.path(&format!("{name}.tar"));
        std::fs::write(&path, &archive).unwrap();
        let out_dir = scene.path(&format!("{name}-out"));
        let out = run(
            &[
                "copy",
                &format!("docker-archive:{}", path.display()),
                &format!("oci:{}:v1", out_dir.display()),
            ],
            &t,
            limit,
        );
        refused(&out, why, name);
        assert!(!out_dir.exists());
    }
}

/// An oci-archive whose `index.json` is 5 MiB of valid JSON (blank-padded): read whole and
/// accepted today; over the 4 MiB manifest cap now.
#[test]
fn oversize_oci_archive_index_is_refused_naming_the_file() {
    let scene = Scene::new();
    let t = scene.tmpdir();
    let limit = Duration::from_secs(60);
    let layer = tar_of(&[E::File("f", b"x")]);
    let dir = scene.path("idx");
    std::fs::create_dir_all(&dir).unwrap();
    let layout = layout_of(&dir, &[gzip(&layer)], catalog_labels());
    let layout_dir = PathBuf::from(layout.trim_start_matches("oci:").trim_end_matches(":v1"));
    let index = std::fs::read(layout_dir.join("index.json")).unwrap();
    std::fs::write(layout_dir.join("index.json"), blank_padded(&index, 5 << 20)).unwrap();
    let archive = scene.path("idx.tar");
    crate::support::proc::tool_ok(
        "tar",
        &[
            "-C",
            layout_dir.to_str().unwrap(),
            "-cf",
            archive.to_str().unwrap(),
            ".",
        ],
    );
    let out_dir = scene.path("idx-out");
    let out = run(
        &[
            "copy",
            &format!("oci-archive:{}:v1", archive.display()),
            &format!("oci:{}:v1", out_dir.display()),
        ],
        &t,
        limit,
    );
    refused(
        &out,
        "index.json: larger than the 4194304-byte limit",
        "oci-archive index.json",
    );
}

/// Listing a layer (`bundle inspect`) reads every byte too: a layer whose file declares more
/// than the 1 GiB unpack limit (1.1 GiB of zeros, about 1 MiB of gzip) is refused at its
/// header instead of being decompressed to the end.
#[test]
fn listing_a_bomb_layer_stops_at_the_byte_limit() {
    let scene = Scene::new();
    let mut h = tar::Header::new_gnu();
    h.set_size(1100 << 20);
    h.set_mode(0o644);
    h.set_path("manifests/bomb.yaml").unwrap();
    h.set_cksum();
    let layer = gzip_with_zeros(h.as_bytes(), 1100);
    let dir = scene.path("bomb");
    std::fs::create_dir_all(&dir).unwrap();
    let layout = layout_of(&dir, &[layer], support::labels("testop"));
    let started = Instant::now();
    let out = run(
        &["bundle", "inspect", &layout],
        &scene.tmpdir(),
        Duration::from_secs(60),
    );
    refused(
        &out,
        "more than 1073741824 bytes of content",
        "bundle inspect",
    );
    assert!(started.elapsed() < Duration::from_secs(20));
}
