//! `olmpack catalog serve` against `opm serve` (v1.26.5, no cache) in the same run, on the call
//! patterns OLM v0 makes (issue 32, SERVE.md A.5): the packageserver sweep (GetPackage for every
//! package, then GetBundleForChannel for every channel, one call at a time), GetBundle for every
//! bundle, GetBundleThatReplaces and GetChannelEntriesThatReplace for every replaced or skipped
//! name, GetDefaultBundleThatProvides for every provided API, ListBundles; time to SERVING; peak
//! RSS alone and under 32 concurrent clients (each streams ListBundles and asks GetBundle for its
//! share of the bundles).
//!
//! Catalogs: the 61 shared OpenShift 4.18 packages opm v1.26.5 can serve together (every folder of
//! `../shared/catalogs/fbc` that has a reference answer in `catalogs/serve/`, the second of two
//! folders with one package name left out), and a five-fold copy (305 packages; copies 1-4 rename
//! every package with a `-copyN` suffix). opm is `$OLMPACK_OPM`, else `opm` on PATH; without it the
//! reference figures of SERVE.md are printed instead. `$OLMPACK_BENCH_SLOWEST` (default 3) is how
//! many of the slowest calls of each pattern are listed, with what they asked for.
//! `$OLMPACK_SERVE_BEFORE` may name another
//! olmpack binary (e.g. a release build of main) to measure as "before" in the same run.
//! The client is tonic, in this process, one connection per client. Each server is started three
//! times (median time to SERVING) and measured on its last start.
//! Run with `just bench-serve`; figures are printed, never asserted.

use olmpack::serve::api;
use olmpack::serve::api::registry_client::RegistryClient;
use prost::Message as _;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tonic::transport::Channel;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_client::HealthClient;

fn shared() -> PathBuf {
    std::env::var_os("OLMPACK_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared"))
}

/// The shared 4.18 package folders opm v1.26.5 serves together: those with a reference answer
/// (opm v1.26.5 read them alone), first folder of a package name only. (folder name, text).
fn sources(catalogs: &Path) -> Vec<(String, String)> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for repo in ["community-operators-prod", "certified-operators"] {
        let dir = catalogs.join("fbc").join(repo).join("catalogs/v4.18");
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        for name in names {
            let golden = catalogs
                .join("serve")
                .join(repo)
                .join(format!("{name}.json"));
            if !golden.is_file() || !seen.insert(name.clone()) {
                continue;
            }
            let text =
                std::fs::read_to_string(dir.join(&name).join("catalog.yaml")).unwrap_or_default();
            out.push((name, text));
        }
    }
    out
}

/// Writes `copies` copies of `sources` into `out`; copy `n > 0` renames each package (and
/// everything naming it: channels' package, bundle names, images) with a `-copyN` suffix.
fn build_catalog(sources: &[(String, String)], out: &Path, copies: usize) -> (usize, u64) {
    let (mut packages, mut bytes) = (0, 0);
    for n in 0..copies {
        for (name, text) in sources {
            let (dir_name, text) = if n == 0 {
                (name.clone(), text.clone())
            } else {
                let mut text = text.clone();
                for pkg in package_names(&text) {
                    text = text.replace(&pkg, &format!("{pkg}-copy{n}"));
                }
                (format!("{name}-copy{n}"), text)
            };
            let dir = out.join(&dir_name);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("catalog.yaml"), &text).unwrap();
            packages += 1;
            bytes += text.len() as u64;
        }
    }
    (packages, bytes)
}

/// The packages a catalog file's blobs belong to (top-level `package:` keys of the YAML).
fn package_names(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("package: "))
        .map(|p| p.trim().to_string())
        .collect()
}

fn status_kib(pid: u32, key: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// A server implementation under test.
#[derive(Clone)]
struct Impl {
    label: &'static str,
    bin: PathBuf,
    opm: bool,
}

struct Running {
    child: Child,
    pid: u32,
    addr: String,
    serving: Duration,
    peak_at_serving_kib: u64,
}

impl Running {
    fn stop(mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.pid.to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(imp: &Impl, catalog: &Path, rt: &tokio::runtime::Runtime) -> Running {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut cmd = Command::new(&imp.bin);
    if imp.opm {
        cmd.arg("serve")
            .arg(catalog)
            .args(["-p", &port.to_string()]);
    } else {
        cmd.args(["catalog", "serve"]).arg(catalog).args([
            "--addr",
            "127.0.0.1",
            "-p",
            &port.to_string(),
        ]);
    }
    let started = Instant::now();
    let child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("start {}: {e}", imp.bin.display()));
    let pid = child.id();
    let addr = format!("http://127.0.0.1:{port}");
    let serving = rt.block_on(async {
        let deadline = Instant::now() + Duration::from_secs(300);
        loop {
            if let Ok(ch) = tonic::transport::Endpoint::from_shared(addr.clone())
                .unwrap()
                .connect()
                .await
            {
                let mut h = HealthClient::new(ch);
                if let Ok(r) = h
                    .check(HealthCheckRequest {
                        service: String::new(),
                    })
                    .await
                    && r.get_ref().status == 1
                {
                    break started.elapsed();
                }
            }
            assert!(Instant::now() < deadline, "{} never SERVING", imp.label);
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    });
    Running {
        child,
        pid,
        addr,
        serving,
        peak_at_serving_kib: status_kib(pid, "VmHWM:"),
    }
}

async fn client(addr: &str) -> RegistryClient<Channel> {
    let ch = tonic::transport::Endpoint::from_shared(addr.to_string())
        .unwrap()
        .connect()
        .await
        .unwrap();
    RegistryClient::new(ch).max_decoding_message_size(usize::MAX)
}

/// Latencies of one pattern's calls.
#[derive(Default, Clone)]
struct Lat {
    calls: Vec<Duration>,
    /// What each call asked for (same order as `calls`).
    labels: Vec<String>,
    errors: usize,
}

impl Lat {
    fn total(&self) -> f64 {
        self.calls.iter().map(Duration::as_secs_f64).sum()
    }
    fn pct_ms(&self, p: f64) -> f64 {
        if self.calls.is_empty() {
            return 0.0;
        }
        let mut v = self.calls.clone();
        v.sort();
        let i = ((v.len() as f64 * p).ceil() as usize).clamp(1, v.len()) - 1;
        v[i].as_secs_f64() * 1e3
    }
    /// The `n` slowest calls, slowest first: (ms, what was asked).
    fn slowest(&self, n: usize) -> Vec<(f64, &str)> {
        let mut v: Vec<(f64, &str)> = self
            .calls
            .iter()
            .zip(&self.labels)
            .map(|(d, l)| (d.as_secs_f64() * 1e3, l.as_str()))
            .collect();
        v.sort_by(|a, b| b.0.total_cmp(&a.0));
        v.truncate(n);
        v
    }
}

/// What ListBundles says, the inputs of the other patterns.
#[derive(Default)]
struct Listing {
    secs: f64,
    msgs: usize,
    bytes: u64,
    /// (package, channel, bundle).
    keys: Vec<(String, String, String)>,
    /// (name replaced or skipped, package, channel).
    replaced: BTreeSet<(String, String, String)>,
    /// (group, version, kind).
    provided: BTreeSet<(String, String, String)>,
}

async fn list_bundles(c: &mut RegistryClient<Channel>) -> Listing {
    let t = Instant::now();
    let mut stream = c
        .list_bundles(api::ListBundlesRequest {})
        .await
        .unwrap()
        .into_inner();
    let mut l = Listing::default();
    while let Some(b) = stream.message().await.unwrap() {
        l.msgs += 1;
        l.bytes += b.encoded_len() as u64;
        let key = (b.package_name, b.channel_name, b.csv_name);
        if !b.replaces.is_empty() {
            l.replaced
                .insert((b.replaces.clone(), key.0.clone(), key.1.clone()));
        }
        for s in b.skips {
            l.replaced.insert((s, key.0.clone(), key.1.clone()));
        }
        for g in b.provided_apis {
            l.provided.insert((g.group, g.version, g.kind));
        }
        l.keys.push(key);
    }
    l.secs = t.elapsed().as_secs_f64();
    l.keys.sort();
    l
}

macro_rules! timed {
    ($lat:expr, $label:expr, $call:expr) => {{
        let label = $label;
        let t = Instant::now();
        let r = $call.await;
        let d = t.elapsed();
        $lat.calls.push(d);
        $lat.labels.push(label);
        if r.is_err() {
            $lat.errors += 1;
        }
        r
    }};
}

#[allow(deprecated)] // OLM's packageserver still calls it
async fn sweep(c: &mut RegistryClient<Channel>) -> Lat {
    let mut lat = Lat::default();
    let mut names = Vec::new();
    let mut s = c
        .list_packages(api::ListPackageRequest {})
        .await
        .unwrap()
        .into_inner();
    while let Some(p) = s.message().await.unwrap() {
        names.push(p.name);
    }
    names.sort();
    for name in names {
        let r = timed!(
            lat,
            format!("GetPackage {name}"),
            c.get_package(api::GetPackageRequest { name: name.clone() })
        );
        let Ok(p) = r else { continue };
        for ch in p.into_inner().channels {
            let _ = timed!(
                lat,
                format!("GetBundleForChannel {name} {}", ch.name),
                c.get_bundle_for_channel(api::GetBundleInChannelRequest {
                    pkg_name: name.clone(),
                    channel_name: ch.name,
                })
            );
        }
    }
    lat
}

async fn get_bundles(c: &mut RegistryClient<Channel>, keys: &[(String, String, String)]) -> Lat {
    let mut lat = Lat::default();
    for (p, ch, b) in keys {
        let _ = timed!(
            lat,
            format!("{p} {ch} {b}"),
            c.get_bundle(api::GetBundleRequest {
                pkg_name: p.clone(),
                channel_name: ch.clone(),
                csv_name: b.clone(),
            })
        );
    }
    lat
}

async fn replaces(c: &mut RegistryClient<Channel>, l: &Listing) -> (Lat, Lat) {
    let mut one = Lat::default();
    for (name, p, ch) in &l.replaced {
        let _ = timed!(
            one,
            format!("{name} in {p} {ch}"),
            c.get_bundle_that_replaces(api::GetReplacementRequest {
                csv_name: name.clone(),
                pkg_name: p.clone(),
                channel_name: ch.clone(),
            })
        );
    }
    let names: BTreeSet<&String> = l.replaced.iter().map(|(n, _, _)| n).collect();
    let mut all = Lat::default();
    for name in names {
        let t = Instant::now();
        let r = c
            .get_channel_entries_that_replace(api::GetAllReplacementsRequest {
                csv_name: name.clone(),
            })
            .await;
        let ok = match r {
            Ok(s) => {
                let mut s = s.into_inner();
                let mut ok = true;
                loop {
                    match s.message().await {
                        Ok(Some(_)) => {}
                        Ok(None) => break,
                        Err(_) => {
                            ok = false;
                            break;
                        }
                    }
                }
                ok
            }
            Err(_) => false,
        };
        all.calls.push(t.elapsed());
        all.labels.push(name.clone());
        if !ok {
            all.errors += 1;
        }
    }
    (one, all)
}

async fn default_provides(c: &mut RegistryClient<Channel>, l: &Listing) -> Lat {
    let mut lat = Lat::default();
    for (g, v, k) in &l.provided {
        let _ = timed!(
            lat,
            format!("{g}/{v} {k}"),
            c.get_default_bundle_that_provides(api::GetDefaultProviderRequest {
                group: g.clone(),
                version: v.clone(),
                kind: k.clone(),
                plural: String::new(),
            })
        );
    }
    lat
}

/// 32 clients at once, each on its own connection: one ListBundles stream, then GetBundle for
/// every 32nd bundle. Returns the wall time.
async fn load(addr: &str, keys: &[(String, String, String)], clients: usize) -> f64 {
    let t = Instant::now();
    let mut tasks = Vec::new();
    for i in 0..clients {
        let addr = addr.to_string();
        let mine: Vec<_> = keys.iter().skip(i).step_by(clients).cloned().collect();
        tasks.push(tokio::spawn(async move {
            let mut c = client(&addr).await;
            let _ = list_bundles(&mut c).await;
            let _ = get_bundles(&mut c, &mine).await;
        }));
    }
    for t in tasks {
        let _ = t.await;
    }
    t.elapsed().as_secs_f64()
}

/// Everything measured for one server on one catalog.
struct Figures {
    serving: f64,
    starts: Vec<f64>,
    peak_at_serving_mib: f64,
    sweep: Lat,
    list: Listing,
    get_bundle: Lat,
    that_replaces: Lat,
    entries_replace: Lat,
    default_provides: Lat,
    peak_alone_mib: f64,
    load_secs: f64,
    peak_load_mib: f64,
}

fn measure(imp: &Impl, catalog: &Path, rt: &tokio::runtime::Runtime) -> Figures {
    let mut runs: Vec<Running> = Vec::new();
    let mut starts = Vec::new();
    for i in 0..3 {
        let r = start(imp, catalog, rt);
        starts.push(r.serving.as_secs_f64());
        if i < 2 {
            r.stop();
        } else {
            runs.push(r);
        }
    }
    let r = runs.pop().unwrap();
    let mut sorted = starts.clone();
    sorted.sort_by(f64::total_cmp);
    let pid = r.pid;
    let f = rt.block_on(async {
        let mut c = client(&r.addr).await;
        let sweep = sweep(&mut c).await;
        let list = list_bundles(&mut c).await;
        let get_bundle = get_bundles(&mut c, &list.keys).await;
        let (that_replaces, entries_replace) = replaces(&mut c, &list).await;
        let default_provides = default_provides(&mut c, &list).await;
        let peak_alone_mib = status_kib(pid, "VmHWM:") as f64 / 1024.0;
        let load_secs = load(&r.addr, &list.keys, 32).await;
        Figures {
            serving: sorted[1],
            starts,
            peak_at_serving_mib: r.peak_at_serving_kib as f64 / 1024.0,
            sweep,
            list,
            get_bundle,
            that_replaces,
            entries_replace,
            default_provides,
            peak_alone_mib,
            load_secs,
            peak_load_mib: status_kib(pid, "VmHWM:") as f64 / 1024.0,
        }
    });
    r.stop();
    f
}

fn find_opm() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("OLMPACK_OPM") {
        let p = PathBuf::from(p);
        return p.is_file().then_some(p);
    }
    std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|d| d.join("opm"))
            .find(|p| p.is_file())
    })
}

fn report(label: &str, shape: &str, figs: &[(Impl, Figures)]) {
    println!("\n== {label}: {shape}");
    let opm = figs.iter().find(|(i, _)| i.opm).map(|(_, f)| f);
    let mut head = format!("{:<44}", "pattern (calls)");
    for (i, _) in figs {
        head.push_str(&format!("{:>26}", i.label));
    }
    for (i, _) in figs.iter().filter(|(i, _)| !i.opm) {
        if opm.is_some() {
            head.push_str(&format!("{:>16}", format!("{} / opm", i.label)));
        }
    }
    println!("{head}");
    type Pick = fn(&Figures) -> &Lat;
    let rows: [(&str, Pick); 5] = [
        ("packageserver sweep", |f| &f.sweep),
        ("GetBundle, every bundle", |f| &f.get_bundle),
        ("GetBundleThatReplaces", |f| &f.that_replaces),
        ("GetChannelEntriesThatReplace", |f| &f.entries_replace),
        ("GetDefaultBundleThatProvides", |f| &f.default_provides),
    ];
    for (name, pick) in rows {
        let n = figs.first().map_or(0, |(_, f)| pick(f).calls.len());
        let mut line = format!("{:<44}", format!("{name} ({n})"));
        for (_, f) in figs {
            let l = pick(f);
            line.push_str(&format!(
                "{:>26}",
                format!(
                    "{:.3} s p50 {:.2} p99 {:.2}",
                    l.total(),
                    l.pct_ms(0.5),
                    l.pct_ms(0.99)
                )
            ));
        }
        if let Some(o) = opm {
            for (_, f) in figs.iter().filter(|(i, _)| !i.opm) {
                line.push_str(&format!(
                    "{:>16}",
                    format!("{:.2}", pick(f).total() / pick(o).total())
                ));
            }
        }
        println!("{line}");
    }
    type Num = fn(&Figures) -> f64;
    let nums: [(&str, Num, &str); 6] = [
        ("ListBundles (s)", |f| f.list.secs, "s"),
        ("time to SERVING, median of 3 (s)", |f| f.serving, "s"),
        (
            "peak RSS at SERVING (MiB)",
            |f| f.peak_at_serving_mib,
            "MiB",
        ),
        (
            "peak RSS after the patterns (MiB)",
            |f| f.peak_alone_mib,
            "MiB",
        ),
        ("32 clients: wall time (s)", |f| f.load_secs, "s"),
        ("32 clients: peak RSS (MiB)", |f| f.peak_load_mib, "MiB"),
    ];
    for (name, pick, unit) in nums {
        let mut line = format!("{name:<44}");
        for (_, f) in figs {
            line.push_str(&format!("{:>26}", format!("{:.3} {unit}", pick(f))));
        }
        if let Some(o) = opm {
            for (_, f) in figs.iter().filter(|(i, _)| !i.opm) {
                line.push_str(&format!("{:>16}", format!("{:.2}", pick(f) / pick(o))));
            }
        }
        println!("{line}");
    }
    let slowest: usize = std::env::var("OLMPACK_BENCH_SLOWEST")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    for (i, f) in figs {
        for (name, pick) in rows {
            let top: Vec<String> = pick(f)
                .slowest(slowest)
                .into_iter()
                .map(|(ms, what)| format!("{ms:.2} ms {what}"))
                .collect();
            if !top.is_empty() {
                println!("    {} slowest {name}: {}", i.label, top.join("; "));
            }
        }
    }
    for (i, f) in figs {
        let errors = f.sweep.errors
            + f.get_bundle.errors
            + f.that_replaces.errors
            + f.entries_replace.errors;
        println!(
            "    {}: ListBundles {} msgs, {:.1} MB; starts {:?} s; errors: {} (+{} GetDefaultBundleThatProvides for APIs no default-channel head provides)",
            i.label,
            f.list.msgs,
            f.list.bytes as f64 / 1e6,
            f.starts,
            errors,
            f.default_provides.errors
        );
    }
}

fn main() {
    let catalogs = shared().join("catalogs");
    if !catalogs.join("fbc").is_dir() {
        eprintln!("SKIPPED: {} not found", catalogs.join("fbc").display());
        return;
    }
    let srcs = sources(&catalogs);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut impls = vec![Impl {
        label: "olmpack",
        bin: PathBuf::from(env!("CARGO_BIN_EXE_olmpack")),
        opm: false,
    }];
    if let Some(before) = std::env::var_os("OLMPACK_SERVE_BEFORE") {
        impls.push(Impl {
            label: "olmpack before",
            bin: PathBuf::from(before),
            opm: false,
        });
    }
    match find_opm() {
        Some(bin) => impls.push(Impl {
            label: "opm v1.26.5",
            bin,
            opm: true,
        }),
        None => println!(
            "opm not found ($OLMPACK_OPM or PATH): reference figures of opm v1.26.5 without a cache \
             (SERVE.md, catalogs/serve/SOURCE.md): 61 packages: 3.7-4.0 s to SERVING, 115-118 MiB peak, \
             ListBundles 0.4-0.6 s; 344 packages / 141 MB: 22.4 s to SERVING, 583 MiB peak, \
             ListBundles 3.3 s, packageserver sweep 0.9 s; with its prebuilt cache: 1.24 s, 84 MiB. \
             Issue 32 (Python grpcio): sweep 0.09 s (61) / 0.43 s (305); GetBundle 0.4 ms per call."
        ),
    }
    for (label, copies) in [("61 packages", 1usize), ("five-fold copy", 5)] {
        let dir = tempfile::tempdir().unwrap();
        let (packages, bytes) = build_catalog(&srcs, dir.path(), copies);
        let figs: Vec<(Impl, Figures)> = impls
            .iter()
            .map(|i| (i.clone(), measure(i, dir.path(), &rt)))
            .collect();
        let channels: BTreeMap<(&str, &str), ()> = figs[0]
            .1
            .list
            .keys
            .iter()
            .map(|(p, c, _)| ((p.as_str(), c.as_str()), ()))
            .collect();
        let bundles: BTreeSet<(&str, &str)> = figs[0]
            .1
            .list
            .keys
            .iter()
            .map(|(p, _, b)| (p.as_str(), b.as_str()))
            .collect();
        report(
            label,
            &format!(
                "{packages} packages, {} channels, {} bundles ({} memberships), {:.1} MB of YAML",
                channels.len(),
                bundles.len(),
                figs[0].1.list.keys.len(),
                bytes as f64 / 1e6
            ),
            &figs,
        );
    }
    println!(
        "\ncolumns: total seconds of the calls made one at a time, p50 and p99 per call in ms; \
         ratio = olmpack / opm (below 1: olmpack faster or smaller)."
    );
}
