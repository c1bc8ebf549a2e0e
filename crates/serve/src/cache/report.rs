//! What a cache write and a cache check report: in a module of their own, below the writers
//! (JSON and pogreb) and the verifier, which all fill them in.

/// What was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheSummary {
    /// The digest opm will recompute and compare (16 hex digits).
    pub digest: String,
    /// Files under `cache/` (packages.json, bundles, metas).
    pub files: usize,
    /// Their total size.
    pub bytes: u64,
}

/// One cache file that differs from what the catalog gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedFile {
    /// Path under the cache folder (`cache/…`).
    pub path: String,
    /// What it holds and where that comes from in the catalog.
    pub about: String,
}

/// The verdict.
#[derive(Debug, Clone, Default)]
pub struct VerifyReport {
    /// The catalog folder (as named in the image or given).
    pub catalog: String,
    /// The cache folder.
    pub cache_dir: String,
    /// The digest the cache records (`digest` file), if any.
    pub recorded: Option<String>,
    /// The digest opm computes now.
    pub computed: String,
    /// Whether `opm serve --cache-dir … --cache-enforce-integrity` starts on it.
    pub accepted: bool,
    /// Why not, or things to know (one sentence each).
    pub notes: Vec<String>,
    /// Cache files whose bytes differ from what the catalog gives.
    pub changed: Vec<ChangedFile>,
    /// Cache files the catalog gives but the cache lacks.
    pub missing: Vec<ChangedFile>,
    /// Cache files the catalog does not give.
    pub extra: Vec<String>,
    /// Cache entries whose mode is not opm's (the digest covers modes).
    pub modes: Vec<String>,
    /// Files in the catalog folder / in the cache.
    pub counts: (usize, usize),
    /// The image has no serve cache and needs none (its CMD names no `--cache-dir`): opm
    /// builds one at start, which is fine (`accepted` is set).
    pub no_cache: bool,
    /// Owner and mode of every entry of the cache folder (itself as `.`).
    pub ownership: Vec<CacheEntryOwner>,
    /// Who can read the cache (images: the image's user, an arbitrary uid in group 0).
    pub readers: Vec<String>,
    /// What works as the image is run by default but breaks in another pod setting.
    pub warnings: Vec<String>,
    /// Whether the cache fits the opm that will serve it (when that opm's version is known).
    pub fit: Option<CacheFit>,
    /// The cache folder inside an unpacked image (relative to its root), once found.
    pub cache_base: Option<String>,
}

/// Whether a cache holds what the opm that serves it writes ([`crate::cache::fit`]).
#[derive(Debug, Clone)]
pub struct CacheFit {
    /// The opm that will serve it.
    pub target: crate::cache::OpmVersion,
    /// Where that version was read (`--opm-version`, the image's opm binary).
    pub from: String,
    /// The cache is what the target writes for this catalog.
    pub fits: bool,
    /// Which opm generations' content the cache holds, when one matches.
    pub holds: Option<String>,
    /// Files (JSON) or keys (pogreb) that differ from what the target writes.
    pub differ: Vec<String>,
    /// What that means for the answers, one sentence each.
    pub why: Vec<String>,
}

impl VerifyReport {
    /// opm starts on the cache, and (when its version is known) serves what it would have
    /// written itself: `catalog cache verify` exits 0 only then.
    pub fn passes(&self) -> bool {
        self.accepted && self.fit.as_ref().is_none_or(|f| f.fits)
    }
}

/// Owner and mode of one entry of the cache folder, as the image (or the disk) gives them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheEntryOwner {
    /// Path under the cache folder (`.` for the folder itself).
    pub path: String,
    /// Owner uid.
    pub uid: u32,
    /// Owner gid.
    pub gid: u32,
    /// Permission bits.
    pub mode: u32,
    /// A folder (needs read and execute).
    pub dir: bool,
}
