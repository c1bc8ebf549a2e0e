//! Child processes with bounded waits, as another user, and without a network: every process a
//! test starts ends by itself or is killed at a deadline (a hung child fails its test instead
//! of hanging the suite), root-only cases run in CI (which runs as root) through `setpriv`, and
//! tests that must not reach the internet run in a namespace without one (`unshare -n`).
#![allow(dead_code)]

use std::ffi::OsStr;
use std::io::Read;
use std::process::{Command, ExitStatus, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The bound for one child process of the suite: generous (the largest real-data run takes
/// seconds in release), so only a hang reaches it.
pub const LIMIT: Duration = Duration::from_secs(600);

/// The bound for a small tool call (openssl, kill, id, version probes).
pub const SHORT: Duration = Duration::from_secs(60);

/// `Command::output`/`status` with a deadline.
pub trait Bounded {
    /// Runs to completion within `limit` with stdout and stderr captured; kills the child and
    /// panics (naming the program) at the deadline. Spawn errors are returned as `Err` so that
    /// callers can tell "not installed" from a failure.
    fn output_within(&mut self, limit: Duration) -> std::io::Result<Output>;
    /// [`Bounded::output_within`] with [`LIMIT`].
    fn bounded_output(&mut self) -> std::io::Result<Output> {
        self.output_within(LIMIT)
    }
    /// Runs within `limit` with the streams as configured (inherited by default).
    fn status_within(&mut self, limit: Duration) -> std::io::Result<ExitStatus>;
    /// [`Bounded::status_within`] with [`LIMIT`].
    fn bounded_status(&mut self) -> std::io::Result<ExitStatus> {
        self.status_within(LIMIT)
    }
    /// [`Bounded::bounded_output`] that fails the test, with the command, its exit code and
    /// everything the child printed, unless it exits 0: the check most tests make before
    /// reading a run's output, written once instead of at every call site. The failure names
    /// the caller's line.
    #[track_caller]
    fn succeeds(&mut self) -> Output
    where
        Self: std::fmt::Debug,
    {
        let out = self.bounded_output().expect("the command starts");
        assert!(
            out.status.success(),
            "{self:?}: exit {:?}\nstdout:\n{}\nstderr:\n{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }
}

/// Reads a pipe to its end on a thread; the receiver gets the bytes.
fn drain<R: Read + Send + 'static>(r: Option<R>) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut r) = r {
            let _ = r.read_to_end(&mut buf);
        }
        let _ = tx.send(buf);
    });
    rx
}

fn describe(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args().take(6) {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}

/// Waits for `child` until `deadline`; kills it and panics after.
fn wait_until(child: &mut std::process::Child, deadline: Instant, what: &str) -> ExitStatus {
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return status,
            Ok(None) => {}
            Err(e) => panic!("waiting for `{what}`: {e}"),
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`{what}` did not finish within its time limit: killed");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Waits for `child` until `deadline` while its stdout and stderr are read on threads, and
/// returns all three: one place for the output of a bounded run, so a grandchild that holds a
/// pipe open after the child exits is bounded the same way everywhere.
fn collect(mut child: std::process::Child, deadline: Instant, what: &str) -> Output {
    let out = drain(child.stdout.take());
    let err = drain(child.stderr.take());
    let status = wait_until(&mut child, deadline, what);
    // A grandchild may hold a pipe open after the child exits: bounded too.
    let left = deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_secs(5));
    let stdout = out
        .recv_timeout(left)
        .unwrap_or_else(|_| panic!("`{what}`: its stdout stayed open past the time limit"));
    let stderr = err
        .recv_timeout(Duration::from_secs(5))
        .unwrap_or_else(|_| panic!("`{what}`: its stderr stayed open past the time limit"));
    Output {
        status,
        stdout,
        stderr,
    }
}

impl Bounded for Command {
    fn output_within(&mut self, limit: Duration) -> std::io::Result<Output> {
        let what = describe(self);
        let deadline = Instant::now() + limit;
        let child = self.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
        Ok(collect(child, deadline, &what))
    }

    fn status_within(&mut self, limit: Duration) -> std::io::Result<ExitStatus> {
        let what = describe(self);
        let deadline = Instant::now() + limit;
        let mut child = self.spawn()?;
        Ok(wait_until(&mut child, deadline, &what))
    }
}

/// Runs a tool (`umoci`, `skopeo`...) to completion within [`LIMIT`] and fails the test,
/// with the tool's stderr, when it does not succeed.
pub fn tool_ok(program: &str, args: &[&str]) -> Output {
    let out = Command::new(program)
        .args(args)
        .bounded_output()
        .unwrap_or_else(|e| panic!("run {program}: {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Whether this process runs as root (uid 0), read from `/proc/self/status`.
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|v| v.split_whitespace().next().map(|u| u == "0"))
        })
        .unwrap_or(false)
}

/// As root, file modes do not stop reads; `setpriv` without the DAC capabilities makes them
/// count again: the prefix that does it, for tests of unreadable files. `None` when not root
/// (modes already count), `Some(None)` when root and setpriv is unusable here.
pub fn read_limited_prefix() -> Option<Option<Vec<&'static str>>> {
    const PREFIX: [&str; 5] = [
        "setpriv",
        "--bounding-set",
        "-dac_override,-dac_read_search",
        "--inh-caps",
        "-dac_override,-dac_read_search",
    ];
    if !is_root() {
        return None;
    }
    let works = Command::new(PREFIX[0])
        .args(&PREFIX[1..])
        .arg("true")
        .status_within(SHORT)
        .is_ok_and(|s| s.success());
    Some(works.then(|| PREFIX.to_vec()))
}

/// The uid and gid of the non-root user that root-only cases run as (the opm image's user).
pub const USER_ID: u32 = 1001;

/// `program` started as uid/gid [`USER_ID`] with no supplementary groups when this process is
/// root (`setpriv --reuid --regid --clear-groups`, util-linux), as itself otherwise: the way to
/// test "a file the user cannot read" when CI runs as root. Files the child must reach need to
/// be readable by that user (temp dirs are 0700 by default: see [`open_up`]).
pub fn as_user(program: impl AsRef<OsStr>) -> Command {
    if is_root() {
        let mut c = Command::new("setpriv");
        c.args([
            format!("--reuid={USER_ID}"),
            format!("--regid={USER_ID}"),
            "--clear-groups".to_string(),
            "--".to_string(),
        ])
        .arg(program);
        c
    } else {
        Command::new(program)
    }
}

/// Makes `dir` and every folder above it up to `/` traversable (`o+x`) and `dir` readable, so
/// a child started by [`as_user`] reaches the files a test wrote there.
pub fn open_up(dir: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    let mut p = Some(dir);
    while let Some(d) = p {
        if let Ok(meta) = std::fs::metadata(d) {
            let mode = meta.permissions().mode();
            let want = if d == dir { mode | 0o005 } else { mode | 0o001 };
            if want != mode {
                let _ = std::fs::set_permissions(d, std::fs::Permissions::from_mode(want));
            }
        }
        p = d.parent();
    }
}

/// Whether `setpriv` can switch to [`USER_ID`] here (root with util-linux): a probe run once.
pub fn can_switch_user() -> bool {
    if !is_root() {
        return true;
    }
    as_user("true")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status_within(SHORT)
        .is_ok_and(|s| s.success())
}

/// `program` in a new network namespace with only a loopback that is down (`unshare -n`, as
/// root; `unshare -rn` maps the user otherwise): a test that must not reach the internet fails
/// there instead of reaching it if the refusal it checks regresses.
pub fn without_network(program: impl AsRef<OsStr>) -> Command {
    let mut c = Command::new("unshare");
    if is_root() {
        c.arg("-n");
    } else {
        c.args(["-r", "-n"]);
    }
    c.arg("--").arg(program);
    c
}

/// Whether [`without_network`] works here (a probe).
pub fn can_unshare_network() -> bool {
    without_network("true")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status_within(SHORT)
        .is_ok_and(|s| s.success())
}

/// Starts `cmd` with stdout discarded and stderr piped, its stderr lines handed over a channel
/// read on a thread: a test waiting for a server's line (its address, "serving ...") then has a
/// deadline (`recv_timeout`) even when the server prints nothing and never exits.
pub fn spawn_with_stderr_lines(cmd: &mut Command) -> (std::process::Child, mpsc::Receiver<String>) {
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("start `{}`: {e}", describe(cmd)));
    let stderr = child.stderr.take().expect("stderr is piped");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx.send(line);
        }
    });
    (child, rx)
}

/// Stops a server a test started as a cluster stops a pod: SIGTERM, then up to 30 s for it to
/// end (olmpack's `catalog serve` removes the image it unpacked), then SIGKILL. A SIGKILL alone
/// left each unpacked image in the machine's temp folder.
pub fn stop(child: &mut std::process::Child) {
    if let Ok(None) = child.try_wait() {
        let _ = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// `Child::wait_with_output` with a deadline, for children a test spawned itself (to write
/// their stdin, or to run several at once): the child is killed and the test fails at `limit`.
pub fn wait_output(child: std::process::Child, limit: Duration) -> Output {
    let what = format!("child {}", child.id());
    collect(child, Instant::now() + limit, &what)
}

/// assert_cmd's command has its own time limit: the same trait, so a call site reads the same
/// whichever builder it has. `bounded_output` keeps the limit the builder has (support::cmd sets
/// [`LIMIT`]; a test may have set a shorter one).
impl Bounded for assert_cmd::Command {
    fn output_within(&mut self, limit: Duration) -> std::io::Result<Output> {
        self.timeout(limit).output()
    }

    fn bounded_output(&mut self) -> std::io::Result<Output> {
        self.output()
    }

    fn bounded_status(&mut self) -> std::io::Result<ExitStatus> {
        self.output().map(|o| o.status)
    }

    fn status_within(&mut self, limit: Duration) -> std::io::Result<ExitStatus> {
        self.output_within(limit).map(|o| o.status)
    }
}
