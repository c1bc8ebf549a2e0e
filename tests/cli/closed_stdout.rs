//! A closed stdout (`olmpack … | head`, issue 41 item 6) is the reader's choice, not a bug,
//! never "internal error … This is a bug in olmpack" and exit 2: a command whose job is
//! something else (copy, verify, validate) finishes it silently and keeps its exit code (the
//! image is copied, a failed verification still exits 1); a command whose job is the printing
//! (render) stops as coreutils and skopeo stop, killed by SIGPIPE (141 in a shell).

use crate::support::cmd::olmpack_path;
use crate::support::proc::wait_output;
use crate::support::registry::{Mode, Registry, bundle_image, write_layout};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// SIGPIPE's number on Linux.
const SIGPIPE: i32 = 13;

/// Runs olmpack with `args` in `dir`, its stdout a pipe whose reader has already gone.
fn with_stdout_closed(dir: &Path, args: &[&str]) -> Output {
    with_stdout_closed_program(olmpack_path(), dir, args)
}

/// [`with_stdout_closed`] for any program.
fn with_stdout_closed_program(
    program: impl AsRef<std::ffi::OsStr>,
    dir: &Path,
    args: &[&str],
) -> Output {
    // The reader goes before the program starts, so its first write to stdout gets EPIPE
    // however soon it writes. (Dropping the reader after `spawn` raced a short output: while
    // the test thread was descheduled, the whole output fit in the pipe's buffer and the
    // program exited 0.)
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let child = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("COSIGN_PASSWORD", "olmpack-test-passphrase")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .expect("start olmpack");
    wait_output(child, std::time::Duration::from_secs(300))
}

/// Exit `code`, nothing on stderr that reads as a failure.
fn assert_quiet_exit(what: &str, o: &Output, code: i32) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !err.contains("internal error") && !err.contains("error:") && !err.contains("bug"),
        "{what}: {err}"
    );
    assert_eq!(o.status.code(), Some(code), "{what}: {:?}: {err}", o.status);
}

/// Killed by SIGPIPE, nothing on stderr that reads as a failure.
fn assert_quiet_sigpipe(what: &str, o: &Output) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !err.contains("internal error") && !err.contains("error:") && !err.contains("bug"),
        "{what}: {err}"
    );
    assert_eq!(
        o.status.signal(),
        Some(SIGPIPE),
        "{what}: ended with {:?} (wanted: killed by SIGPIPE, as coreutils): {err}",
        o.status
    );
}

#[test]
fn a_closed_stdout_ends_copy_verify_and_render_as_coreutils_do() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // The reference: coreutils' `seq` into a reader that has gone is killed by SIGPIPE.
    let seq = with_stdout_closed_program("seq", d, &["1", "100000"]);
    assert_eq!(seq.status.signal(), Some(SIGPIPE), "{seq:?}");
    let reg = Registry::start(Mode::Plain);
    let image = bundle_image(d, 3, "piped-operator");
    let layout = d.join("layout");
    write_layout(&image, &layout, "v1");
    let target = reg.reference("app", "v1");

    // copy: the image is copied, the digest line is lost, the copy's exit code stays.
    let o = with_stdout_closed(
        d,
        &["copy", &format!("oci:{}:v1", layout.display()), &target],
    );
    assert_quiet_exit("copy", &o, 0);
    let raw = Command::new("skopeo")
        .args(["inspect", "--raw", "--tls-verify=false"])
        .arg(format!("docker://{target}"))
        .output()
        .expect("skopeo");
    assert!(
        raw.status.success(),
        "the copy finished: skopeo finds the image"
    );
    assert_eq!(
        crate::support::registry::sha256(&raw.stdout),
        image.manifest.descriptor.digest
    );

    // verify: a signed image, the verdict lines going nowhere.
    let run = |args: &[&str]| {
        let o = Command::new(olmpack_path())
            .args(args)
            .current_dir(d)
            .env("COSIGN_PASSWORD", "olmpack-test-passphrase")
            .output()
            .expect("run");
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    };
    run(&["key", "generate", "--output-key-prefix", "k"]);
    run(&["sign", &target, "--key", "k.key", "--format", "legacy"]);
    let o = with_stdout_closed(d, &["verify", &target, "--key", "k.pub"]);
    assert_quiet_exit("verify", &o, 0);
    // ... and a verdict against it is still the verdict: exit 1, said on stderr.
    run(&["key", "generate", "--output-key-prefix", "other"]);
    let o = with_stdout_closed(d, &["verify", &target, "--key", "other.pub"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("no signature of"),
        "{o:?}"
    );
    assert!(
        !String::from_utf8_lossy(&o.stderr).contains("internal error"),
        "{o:?}"
    );

    // A command whose job is the printing stops there, as coreutils stop.
    let catalog = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/catalogs/build-small");
    let o = with_stdout_closed(d, &["catalog", "render", catalog.to_str().unwrap()]);
    assert_quiet_sigpipe("catalog render", &o);
    // A verdict keeps its exit code (as before).
    let bundle = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/bundles/valid-basic");
    let o = with_stdout_closed(d, &["bundle", "validate", bundle.to_str().unwrap()]);
    assert_quiet_exit("bundle validate", &o, 0);
    // A real failure is still reported when stdout is closed too: the exit code and message
    // are the command's, not SIGPIPE's.
    let o = with_stdout_closed(d, &["catalog", "render", "/nonexistent/catalog"]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent/catalog"));
}
