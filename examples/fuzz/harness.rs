//! The fuzz harness, shared by `cargo run --profile ci --example fuzz` (`just fuzz`, long runs) and
//! `tests/library/fuzz.rs` (a bounded fixed-seed pass in CI). It runs on stable Rust: no libFuzzer, no
//! coverage feedback, but real inputs damaged in the ways real files get damaged (cut transfers,
//! bad merges, editors, encodings) and every entry point a user reaches with them.
//!
//! One case = one file of one real bundle, catalog folder or template damaged by one to three
//! mutations, then, in-process: the YAML layer on the damaged text; for a bundle, loading, every
//! validation rule (every optional group, with and without a target Kubernetes version),
//! `bundle init` planning, `catalog render` of the folder, the image build into a spool folder
//! and the built image read back damaged (`image.rs`); for a catalog or a template, the entry
//! points in `catalog.rs`. A case is fully determined by (seed, case number), so any finding
//! can be replayed alone. A panic anywhere counts, even one caught inside the library (the YAML
//! layer turns parser panics into errors; the harness still sees them through the panic hook).

#![allow(dead_code)]

#[path = "catalog.rs"]
mod catalog;
#[path = "image.rs"]
mod image;

use olmpack::bundle::Bundle;
use olmpack::image::BuildOptions;
use olmpack::image::build::{BundleInput, build_in};
use olmpack::scaffold;
use olmpack::validate::{self, Group};
use olmpack::yaml;
use std::cell::RefCell;
use std::fs;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Once;

/// Cases in a row that damage the same source bundle (so its copy on disk is reused).
pub const BATCH: u64 = 16;

/// SplitMix64: tiny, fast, good enough to pick mutations, and identical on every platform.
pub struct Rng(u64);

impl Rng {
    /// The generator for one case: the seed and case number fully determine the case.
    pub fn for_case(seed: u64, case: u64) -> Rng {
        let mut rng = Rng(seed ^ case.wrapping_mul(0xD1B5_4A32_D192_ED03));
        rng.next();
        rng
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when n is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// What a source is, and so which entry points its cases run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A bundle folder.
    Bundle,
    /// A catalog (FBC) folder.
    Catalog,
    /// One template file (basic or semver).
    Template,
}

/// A bundle folder, catalog folder or template the harness damages, with its files in memory.
pub struct Source {
    /// Where it came from, for reports.
    pub root: PathBuf,
    /// Relative path and bytes of every file.
    pub files: Vec<(PathBuf, Vec<u8>)>,
    /// Bundle, catalog or template.
    pub kind: Kind,
}

impl Source {
    fn template(file: &Path) -> Option<Source> {
        Some(Source {
            root: file.to_path_buf(),
            files: vec![(PathBuf::from(catalog::TEMPLATE_FILE), fs::read(file).ok()?)],
            kind: Kind::Template,
        })
    }

    fn load(root: &Path, kind: Kind) -> Option<Source> {
        let mut files = Vec::new();
        let mut stack = vec![root.to_path_buf()];
        while let Some(dir) = stack.pop() {
            for entry in fs::read_dir(&dir).ok()?.flatten() {
                let path = entry.path();
                let kind = entry.file_type().ok()?;
                if kind.is_dir() {
                    stack.push(path);
                } else if kind.is_file() {
                    let rel = path.strip_prefix(root).ok()?.to_path_buf();
                    files.push((rel, fs::read(&path).ok()?));
                }
            }
        }
        files.sort();
        (!files.is_empty()).then(|| Source {
            root: root.to_path_buf(),
            files,
            kind,
        })
    }

    fn size(&self) -> usize {
        self.files.iter().map(|(_, b)| b.len()).sum()
    }
}

/// Every bundle folder under `testdata/` and, when present, the shared corpus, then the catalog
/// folders and templates ([`catalog::catalog_roots`], [`catalog::template_files`]); sources up
/// to `max_bytes` (so that cases stay fast), in a stable order.
pub fn sources(repo: &Path, corpus: Option<&Path>, max_bytes: usize) -> Vec<Source> {
    let mut roots = vec![
        repo.join("testdata/bundles/valid-basic"),
        repo.join("testdata/init/bundle-custom"),
        repo.join("testdata/init/flat"),
        // Hand-written YAML full of what the fast path reads (comments, flow, folded scalars).
        repo.join("testdata/yaml-fast"),
    ];
    roots.extend(subdirs(&repo.join("testdata/bundles/broken")));
    if let Some(corpus) = corpus {
        for package in subdirs(&corpus.join("bundles")) {
            roots.extend(subdirs(&package));
        }
    }
    let bundles = roots.iter().filter_map(|r| Source::load(r, Kind::Bundle));
    let catalogs = catalog::catalog_roots(repo, corpus)
        .into_iter()
        .filter_map(|r| Source::load(&r, Kind::Catalog));
    let templates = catalog::template_files(repo, corpus)
        .into_iter()
        .filter_map(|f| Source::template(&f));
    bundles
        .chain(catalogs)
        .chain(templates)
        .filter(|s| s.size() <= max_bytes)
        .collect()
}

fn subdirs(dir: &Path) -> Vec<PathBuf> {
    listed(dir, |p| p.is_dir())
}

/// The entries of `dir` that `keep` accepts, sorted; none when it cannot be read.
fn listed(dir: &Path, keep: impl Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| keep(p))
        .collect();
    out.sort();
    out
}

/// The ways a file gets damaged. Each returns a short name for the report.
pub const MUTATIONS: &[&str] = &[
    "cut at a random byte",
    "flip bits",
    "drop a line",
    "duplicate a line",
    "shift indentation",
    "insert ---",
    "add anchor and alias",
    "swap a scalar for a map",
    "insert NUL",
    "insert invalid UTF-8",
    "re-encode as UTF-16 without BOM",
    "giant number",
    "giant string",
    "deep nesting",
    "tabs for spaces",
    "CRLF line ends",
    "BOM mid-file",
    "block scalar cut at end",
    "insert YAML syntax",
    "swap two lines",
    "drop a byte range",
    "empty the file",
    "alias bomb",
];

/// Applies one to three mutations; returns the names applied.
pub fn damage(rng: &mut Rng, bytes: &mut Vec<u8>) -> Vec<&'static str> {
    let count = 1 + rng.below(3);
    (0..count)
        .map(|_| {
            let which = rng.below(MUTATIONS.len());
            mutate(rng, bytes, which);
            MUTATIONS[which]
        })
        .collect()
}

fn pick_bytes(rng: &mut Rng, items: &[&'static [u8]]) -> &'static [u8] {
    items[rng.below(items.len())]
}

fn line_starts(bytes: &[u8]) -> Vec<usize> {
    std::iter::once(0)
        .chain(
            bytes
                .iter()
                .enumerate()
                .filter(|(_, b)| **b == b'\n')
                .map(|(i, _)| i + 1),
        )
        .filter(|i| *i <= bytes.len())
        .collect()
}

/// The byte range of a random line (without its newline).
fn random_line(rng: &mut Rng, bytes: &[u8]) -> (usize, usize) {
    let starts = line_starts(bytes);
    let start = *rng.pick(&starts);
    let end = bytes[start..]
        .iter()
        .position(|b| *b == b'\n')
        .map_or(bytes.len(), |p| start + p);
    (start, end)
}

fn mutate(rng: &mut Rng, v: &mut Vec<u8>, which: usize) {
    let n = v.len();
    let at = rng.below(n + 1);
    match which {
        0 => v.truncate(at),
        1 => {
            for _ in 0..1 + rng.below(8) {
                if !v.is_empty() {
                    let i = rng.below(v.len());
                    v[i] ^= 1 << rng.below(8);
                }
            }
        }
        2 => {
            let (s, e) = random_line(rng, v);
            v.drain(s..(e + 1).min(v.len()));
        }
        3 => {
            let (s, e) = random_line(rng, v);
            let line: Vec<u8> = v[s..e].iter().copied().chain([b'\n']).collect();
            v.splice(s..s, line);
        }
        4 => {
            let (s, _) = random_line(rng, v);
            if rng.below(2) == 0 {
                let pad = vec![b' '; 1 + rng.below(4)];
                v.splice(s..s, pad);
            } else {
                let spaces = v[s..].iter().take(4).take_while(|b| **b == b' ').count();
                v.drain(s..s + spaces.min(1 + rng.below(2)));
            }
        }
        5 => {
            let (s, _) = random_line(rng, v);
            v.splice(s..s, b"---\n".iter().copied());
        }
        6 => {
            let (s, e) = random_line(rng, v);
            let colon = v[s..e]
                .windows(2)
                .position(|w| w == b": ")
                .map(|p| s + p + 2);
            match colon {
                Some(c) => v.splice(c..c, b"&fz ".iter().copied()),
                None => v.splice(s..s, b"x: &fz [a, b]\n".iter().copied()),
            };
            let (s2, _) = random_line(rng, v);
            let alias: &[u8] = pick_bytes(
                rng,
                &[&b"y: *fz\n"[..], b"- *fz\n", b"<<: *fz\n", b"*fz: v\n"],
            );
            v.splice(s2..s2, alias.iter().copied());
        }
        7 => {
            let (s, e) = random_line(rng, v);
            if let Some(p) = v[s..e].windows(2).position(|w| w == b": ") {
                let c = s + p + 2;
                let indent = v[s..e].iter().take_while(|b| **b == b' ').count();
                let map = format!("\n{}  k: {{a: [1, {{b: c}}]}}", " ".repeat(indent));
                v.splice(c..e, map.into_bytes());
            }
        }
        8 => {
            for _ in 0..1 + rng.below(3) {
                let i = rng.below(v.len() + 1);
                v.insert(i, 0);
            }
        }
        9 => {
            let bad: &[u8] = pick_bytes(
                rng,
                &[
                    &b"\xff"[..],
                    b"\xc3",
                    b"\xe2\x82",
                    b"\xed\xa0\x80",
                    b"\xf8\x88\x80\x80\x80",
                    b"\xc0\xaf",
                ],
            );
            v.splice(at..at, bad.iter().copied());
        }
        10 => {
            let text = String::from_utf8_lossy(v).into_owned();
            let big = rng.below(2) == 0;
            *v = text
                .encode_utf16()
                .flat_map(|u| {
                    if big {
                        u.to_be_bytes()
                    } else {
                        u.to_le_bytes()
                    }
                })
                .collect();
        }
        11 => {
            let digits = "9".repeat(20 + rng.below(5000));
            let num: String = rng
                .pick(&[
                    format!("n: {digits}\n"),
                    format!("n: -{digits}.{digits}e{digits}\n"),
                    format!("n: 0x{}\n", "f".repeat(40)),
                    "n: 1e999999\n".to_string(),
                    "n: 0b1111111111111111111111111111111111111111111111111111111111111111111\n"
                        .to_string(),
                ])
                .clone();
            let (s, _) = random_line(rng, v);
            v.splice(s..s, num.into_bytes());
        }
        12 => {
            let len = 1000 + rng.below(200_000);
            let s = format!("s: \"{}\"\n", "x".repeat(len));
            let (at, _) = random_line(rng, v);
            v.splice(at..at, s.into_bytes());
        }
        13 => {
            let depth = 100 + rng.below(2000);
            let nest = match rng.below(3) {
                0 => format!("d: {}{}\n", "[".repeat(depth), "]".repeat(depth)),
                1 => format!("d: {}1{}\n", "{a: ".repeat(depth), "}".repeat(depth)),
                _ => {
                    let mut s = String::from("d:\n");
                    for i in 1..depth.min(700) {
                        s.push_str(&" ".repeat(i));
                        s.push_str("k:\n");
                    }
                    s
                }
            };
            let (s, _) = random_line(rng, v);
            v.splice(s..s, nest.into_bytes());
        }
        14 => {
            let (s, e) = random_line(rng, v);
            let spaces = v[s..e].iter().take_while(|b| **b == b' ').count();
            v.splice(
                s..s + spaces,
                std::iter::repeat_n(b'\t', spaces.div_ceil(2).max(1)),
            );
        }
        15 => {
            *v = v
                .iter()
                .flat_map(|b| {
                    if *b == b'\n' {
                        vec![b'\r', b'\n']
                    } else {
                        vec![*b]
                    }
                })
                .collect();
        }
        16 => v.splice(at..at, "\u{feff}".bytes()).for_each(drop),
        17 => {
            v.truncate(at);
            let tail: &[u8] = pick_bytes(
                rng,
                &[
                    &b"\nz: |\n  b"[..],
                    b"\nz: >\n  b",
                    b"\nz: |-\n",
                    b"\nz: |2\n   b",
                    b"\n- |\n b",
                    b"\nz: \"a\n  b",
                ],
            );
            v.extend_from_slice(tail);
        }
        18 => {
            let syntax: &[u8] = pick_bytes(
                rng,
                &[
                    &b"{"[..],
                    b"}",
                    b"[",
                    b"]",
                    b"? ",
                    b": ",
                    b"- ",
                    b"|",
                    b">",
                    b"\"",
                    b"'",
                    b"&",
                    b"*",
                    b"!",
                    b"!!str ",
                    b"!!binary ",
                    b"!<tag:x> ",
                    b"%YAML 1.1\n",
                    b"%TAG ! !x\n",
                    b"#",
                    b",",
                    b"...\n",
                    b"<<: ",
                    b"@",
                    b"`",
                    b"\\",
                    b"\r",
                ],
            );
            v.splice(at..at, syntax.iter().copied());
        }
        19 => {
            let a = random_line(rng, v);
            let b = random_line(rng, v);
            let (first, second) = if a.0 <= b.0 { (a, b) } else { (b, a) };
            if first.1 < second.0 {
                let l1 = v[first.0..first.1].to_vec();
                let l2 = v[second.0..second.1].to_vec();
                v.splice(second.0..second.1, l1);
                v.splice(first.0..first.1, l2);
            }
        }
        20 => {
            let end = (at + rng.below(400)).min(n);
            v.drain(at..end);
        }
        21 => v.clear(),
        _ => {
            let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
            for (name, prev) in ["b", "c", "d", "e", "f", "g", "h", "i"]
                .iter()
                .zip(["a", "b", "c", "d", "e", "f", "g", "h"])
            {
                bomb.push_str(&format!("{name}: &{name} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"));
            }
            let (s, _) = random_line(rng, v);
            v.splice(s..s, bomb.into_bytes());
        }
    }
}

thread_local! {
    static PANICS: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// Records every panic of the calling thread, caught or not, instead of printing it.
pub fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            let location = info
                .location()
                .map(|l| format!("{}:{}", l.file(), l.line()))
                .unwrap_or_default();
            let payload = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| info.payload().downcast_ref::<String>().cloned())
                .unwrap_or_default();
            PANICS.with(|p| p.borrow_mut().push(format!("{payload} at {location}")));
        }));
    });
}

fn take_panics() -> Vec<String> {
    PANICS.with(|p| std::mem::take(&mut *p.borrow_mut()))
}

/// A panic seen while running one case.
#[derive(Debug, Clone)]
pub struct Crash {
    /// Which entry point.
    pub stage: &'static str,
    /// Panic message and location.
    pub message: String,
}

/// The folder a worker damages bundles in (on tmpfs when there is one: cases write files).
pub struct Workspace {
    temp: tempfile::TempDir,
    current: Option<usize>,
}

impl Workspace {
    pub fn new() -> std::io::Result<Workspace> {
        let base = Path::new("/dev/shm");
        let temp = if base.is_dir() {
            tempfile::Builder::new()
                .prefix("olmpack-fuzz-")
                .tempdir_in(base)?
        } else {
            tempfile::Builder::new().prefix("olmpack-fuzz-").tempdir()?
        };
        Ok(Workspace {
            temp,
            current: None,
        })
    }

    fn bundle(&self) -> PathBuf {
        self.temp.path().join("bundle")
    }

    fn spool(&self) -> PathBuf {
        self.temp.path().join("spool")
    }

    /// Puts a pristine copy of `source` in place (rewriting only what the last case touched
    /// when the source is the same).
    fn prepare(
        &mut self,
        index: usize,
        source: &Source,
        touched: Option<&Path>,
    ) -> std::io::Result<()> {
        let root = self.bundle();
        if self.current == Some(index) {
            if let Some(rel) = touched
                && let Some((_, bytes)) = source.files.iter().find(|(p, _)| p == rel)
            {
                fs::write(root.join(rel), bytes)?;
            }
            return Ok(());
        }
        let _ = fs::remove_dir_all(&root);
        for (rel, bytes) in &source.files {
            let path = root.join(rel);
            if let Some(parent) = path.parent() {
                fs::create_dir_all(parent)?;
            }
            fs::write(path, bytes)?;
        }
        self.current = Some(index);
        Ok(())
    }
}

/// What one case did.
pub struct Outcome {
    pub source: usize,
    pub file: PathBuf,
    pub mutations: Vec<&'static str>,
    pub damaged: Vec<u8>,
    pub crashes: Vec<Crash>,
}

/// The source, file and damaged bytes of a case, without running it.
pub fn plan_case(
    sources: &[Source],
    seed: u64,
    case: u64,
) -> (usize, PathBuf, Vec<u8>, Vec<&'static str>) {
    let mut batch = Rng::for_case(seed, case / BATCH);
    let index = batch.below(sources.len());
    let source = &sources[index];
    let mut rng = Rng::for_case(seed, case);
    // Prefer YAML and JSON files (what the parsers see), but damage any file now and then.
    let yaml: Vec<&(PathBuf, Vec<u8>)> = source
        .files
        .iter()
        .filter(|(p, _)| {
            matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("yaml" | "yml" | "json")
            )
        })
        .collect();
    let (rel, bytes) = if !yaml.is_empty() && rng.below(8) != 0 {
        *rng.pick(&yaml)
    } else {
        rng.pick(&source.files)
    };
    let mut damaged = bytes.clone();
    let mutations = damage(&mut rng, &mut damaged);
    (index, rel.clone(), damaged, mutations)
}

/// Runs one case: damages the file, then every entry point. Never panics itself.
pub fn run_case(
    ws: &mut Workspace,
    sources: &[Source],
    seed: u64,
    case: u64,
    last: Option<&Path>,
) -> std::io::Result<Outcome> {
    let (index, rel, damaged, mutations) = plan_case(sources, seed, case);
    ws.prepare(index, &sources[index], last)?;
    fs::write(ws.bundle().join(&rel), &damaged)?;
    let crashes = match sources[index].kind {
        Kind::Bundle => run_pipeline(&ws.bundle(), &ws.spool(), &damaged, case),
        Kind::Catalog => run_catalog_pipeline(&ws.bundle(), &damaged, case),
        Kind::Template => run_template_pipeline(&damaged, case),
    };
    Ok(Outcome {
        source: index,
        file: rel,
        mutations,
        damaged,
        crashes,
    })
}

/// Why the fast YAML path's answer for `text` is wrong, if it answers and differs from libyaml.
pub fn fast_path_mismatch(text: &str) -> Option<String> {
    let fast = yaml::parse_stream_fast(text)?;
    // Documents and duplicate-key reports must both be libyaml's.
    match yaml::parse_stream_general(text) {
        Ok(general) => (fast != general).then(|| {
            format!("fast path tree differs from libyaml's:\nfast: {fast:?}\nlibyaml: {general:?}")
        }),
        Err(e) => Some(format!("fast path accepted text libyaml rejects: {e}")),
    }
}

/// The stages of one case. Each runs under a panic guard; a panic in it (even one the library
/// caught: the panic hook sees it) or a wrong answer it reports is recorded against its name.
pub struct Stages {
    crashes: Vec<Crash>,
}

impl Stages {
    fn new() -> Stages {
        install_panic_hook();
        take_panics();
        Stages {
            crashes: Vec::new(),
        }
    }

    /// Runs the stage `name`, recording any panic in it.
    pub fn run(&mut self, name: &'static str, f: impl FnOnce()) {
        let result = catch_unwind(AssertUnwindSafe(f));
        let mut seen = take_panics();
        if seen.is_empty() && result.is_err() {
            seen.push("panic (no message)".to_string());
        }
        for message in seen {
            self.fail(name, message);
        }
    }

    /// Records a failure of the stage `name` that is not a panic (a wrong answer).
    pub fn fail(&mut self, name: &'static str, message: String) {
        self.crashes.push(Crash {
            stage: name,
            message,
        });
    }
}

/// The YAML layer on the damaged text, both paths. When the fast path answers, its tree must be
/// exactly libyaml's (and libyaml must accept the text without duplicate keys): a difference is
/// a failure like a panic.
fn yaml_stages(text: &[u8], stages: &mut Stages) {
    stages.run("yaml", || {
        let text = String::from_utf8_lossy(text);
        // parse_stream is parse_stream_lenient plus the duplicate-key verdict: both paths run.
        let _ = yaml::parse_stream(&text);
    });
    let mut mismatch = None;
    stages.run("yaml fast path", || {
        mismatch = fast_path_mismatch(&String::from_utf8_lossy(text));
    });
    if let Some(message) = mismatch {
        stages.fail("yaml fast path", message);
    }
}

/// Every catalog entry point on a catalog folder; `text` (the damaged file) also goes to the
/// YAML layer directly.
pub fn run_catalog_pipeline(dir: &Path, text: &[u8], variant: u64) -> Vec<Crash> {
    let mut stages = Stages::new();
    yaml_stages(text, &mut stages);
    catalog::run_catalog(dir, variant, &mut stages);
    stages.crashes
}

/// The YAML layer and template rendering on the damaged text of a template.
pub fn run_template_pipeline(text: &[u8], variant: u64) -> Vec<Crash> {
    let mut stages = Stages::new();
    yaml_stages(text, &mut stages);
    catalog::run_template(text, variant, &mut stages);
    stages.crashes
}

/// Runs every entry point on a bundle folder; `text` is also given to the YAML layer directly.
pub fn run_pipeline(bundle: &Path, spool: &Path, text: &[u8], variant: u64) -> Vec<Crash> {
    let mut stages = Stages::new();
    yaml_stages(text, &mut stages);
    let all = validate::Options {
        optional: Group::ALL.to_vec(),
        k8s_version: variant
            .is_multiple_of(2)
            .then(|| semver::Version::new(1, 25, 0)),
        categories: None,
        // Every third variant judges for targets too (target/kind, per-target removed APIs).
        targets: if variant.is_multiple_of(3) {
            ["ocp-4.12", "ocp-4.19", "ocp-5.0", "olmv0", "olmv1"]
                .iter()
                .filter_map(|t| t.parse().ok())
                .collect()
        } else {
            Vec::new()
        },
    };
    stages.run("load+validate", || {
        if let Ok(bundle) = Bundle::load(bundle) {
            let report = validate::validate(&bundle, &all);
            let mut sink = Vec::new();
            let _ = validate::output::human(&report, &mut sink, false);
            let _ = validate::output::json(
                &[report],
                olmpack::findings::rules::Subject::Bundle,
                false,
                &mut sink,
            );
        }
    });
    stages.run("init plan", || {
        let _ = scaffold::plan(&scaffold::Options {
            dir: bundle.to_path_buf(),
            dockerfile: variant.is_multiple_of(3),
            ..Default::default()
        });
    });
    let mut built = None;
    stages.run("build", || {
        let _ = fs::remove_dir_all(spool);
        if fs::create_dir_all(spool).is_err() {
            return;
        }
        if let Ok(layout) = Bundle::load_layout(bundle)
            && let Ok(input) = BundleInput::new(
                &layout.root,
                layout.manifests_path(),
                layout.metadata_path(),
                layout.annotations_labels(),
            )
        {
            built = build_in(&input, &BuildOptions::default(), spool)
                .ok()
                .map(|(image, _)| image);
        }
    });
    if let Some(image) = &built {
        image::run_image_read(image, spool, variant, &mut stages);
    }
    catalog::run_bundle_render(bundle, variant, &mut stages);
    stages.crashes
}
