//! The pull-request gates of the Operator ecosystem, run locally: operator-pipelines' static
//! checks (community-operators-prod, certified-operators) and Konflux's FBC checks, with the
//! pipelines' check ids and verdicts, on a checkout laid out as those repositories are. Each
//! finding adds a file, a line and a fix; the repository's `config.yaml` ignore lists apply.

pub mod checks;
pub mod finding;
pub mod fixes;
pub mod ocp;
pub mod repo;
pub mod waiver;

pub use finding::{Finding, Verdict};
pub use repo::{Repo, RepoError};

use checks::Target;
use std::path::PathBuf;

/// Which pipeline's checks run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// community-operators-prod: common + community.
    Community,
    /// certified-operators and redhat-marketplace: common + isv.
    Isv,
    /// Konflux FBC pipelines: validate-fbc's rules per OCP target.
    KonfluxFbc,
}

impl Profile {
    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Community => "community",
            Profile::Isv => "isv",
            Profile::KonfluxFbc => "konflux-fbc",
        }
    }
}

/// What to check.
#[derive(Debug, Clone)]
pub struct Request {
    /// The checkout's root.
    pub root: PathBuf,
    /// The profile.
    pub profile: Profile,
    /// One operator, or `None` for every operator of the repository.
    pub operator: Option<String>,
    /// The bundle folder to check (default: the newest).
    pub version: Option<String>,
    /// Affected catalogs (`v4.18/<package>`); `None`: every catalog holding the operator.
    pub catalogs: Option<Vec<String>>,
    /// Whether to run the operator-sdk suites (community) through olmpack's rules.
    pub osdk: bool,
    /// Registries allowed for bundle images under konflux-fbc (prefixes); empty: config.yaml's
    /// `allowed_bundle_registries`.
    pub allowed_registries: Vec<String>,
    /// The released catalogs `fbc-target-index-pruning-check` compares the fragments with
    /// (konflux-fbc): one FBC folder per OCP version (`DIR/v4.18/`); `None`: the check is not
    /// run (the task renders the index from the network; olmpack never downloads it).
    pub target_index: Option<PathBuf>,
}

/// The findings of one run.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Findings in the pipeline's order, operator by operator.
    pub findings: Vec<Finding>,
    /// Findings dropped by config.yaml's ignore lists: (operator, check).
    pub waived: Vec<(String, &'static str)>,
    /// What was checked: `operator/version` per operator.
    pub checked: Vec<String>,
    /// Whether the whole repository was checked (`--all`).
    pub whole_repo: bool,
}

impl Outcome {
    /// Whether the pipeline would pass (no failure).
    pub fn passed(&self) -> bool {
        !self.findings.iter().any(Finding::is_error)
    }
}

/// Runs a profile on one operator or on the whole repository.
pub fn run(req: &Request) -> Result<Outcome, RepoError> {
    let repo = Repo::open(&req.root)?;
    let waivers = waiver::Waivers::read(&repo)?;
    let index = match (&req.target_index, req.profile) {
        (Some(dir), Profile::KonfluxFbc) => {
            if !dir.is_dir() {
                return Err(RepoError::NoTargetIndex(dir.clone()));
            }
            Some(checks::pruning::TargetIndex::new(
                dir,
                repo.catalog_packages(),
            ))
        }
        (Some(_), _) => return Err(RepoError::TargetIndexProfile(req.profile.name())),
        (None, _) => None,
    };
    let index = index.as_ref();
    let mut outcome = Outcome {
        whole_repo: req.operator.is_none(),
        ..Outcome::default()
    };
    match &req.operator {
        Some(name) => run_one(
            &repo,
            req,
            name,
            req.version.as_deref(),
            req.catalogs.as_deref(),
            &Shared {
                waivers: &waivers,
                index,
            },
            &mut outcome,
        )?,
        None => {
            let names = repo.operator_names()?;
            let shared = Shared {
                waivers: &waivers,
                index,
            };
            let results: Vec<Result<Outcome, RepoError>> =
                crate::parallel::map_indexed(names.len(), crate::parallel::cores(), None, |i| {
                    let name = &names[i];
                    let mut one = Outcome::default();
                    run_one(&repo, req, name, None, None, &shared, &mut one).map(|()| one)
                });
            for r in results {
                match r {
                    Ok(one) => {
                        outcome.findings.extend(one.findings);
                        outcome.waived.extend(one.waived);
                        outcome.checked.extend(one.checked);
                    }
                    // An operator folder without a bundle: nothing for the bundle checks.
                    Err(RepoError::NoBundles(_)) => {}
                    Err(e) => return Err(e),
                }
            }
        }
    }
    Ok(outcome)
}

/// What every operator of a run reads the same: the ignore lists and the released index.
struct Shared<'a> {
    waivers: &'a waiver::Waivers,
    index: Option<&'a checks::pruning::TargetIndex>,
}

fn run_one(
    repo: &Repo,
    req: &Request,
    name: &str,
    version: Option<&str>,
    catalogs: Option<&[String]>,
    shared: &Shared<'_>,
    out: &mut Outcome,
) -> Result<(), RepoError> {
    let (waivers, index) = (shared.waivers, shared.index);
    let operator = repo.operator(name)?;
    let bundle = match version {
        Some(v) => Some(operator.bundle(v).ok_or_else(|| {
            RepoError::NoBundle {
                operator: name.to_string(),
                version: v.to_string(),
                known: operator
                    .bundles
                    .iter()
                    .map(|b| b.dir.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            }
        })?),
        None => operator.newest(),
    };
    if bundle.is_none() && !operator.fbc_enabled() {
        return Err(RepoError::NoBundles(name.to_string()));
    }
    let entries: Vec<String> = match catalogs {
        Some(list) => list.to_vec(),
        None => repo.catalogs_of(name),
    };
    let mut opened = Vec::new();
    for entry in &entries {
        if let Some(c) = repo.operator_catalog(entry)? {
            opened.push(c);
        }
    }
    let t = Target {
        repo,
        operator: &operator,
        bundle,
        catalogs: &opened,
    };
    let mut found = Vec::new();
    // A catalog that cannot be read fails the checks that read it (the pipeline stops with a
    // traceback there); nothing of it is silently skipped.
    let catalog_check = match req.profile {
        Profile::KonfluxFbc => "check_fbc_bundle_metadata",
        Profile::Community | Profile::Isv => "check_bundle_images_in_fbc",
    };
    for c in &opened {
        if let Err(e) = &c.blobs {
            found.push(
                Finding::error(
                    catalog_check,
                    format!("Catalog {} cannot be read: {e}", c.name()),
                )
                .at(&c.file, None),
            );
        }
    }
    match req.profile {
        Profile::KonfluxFbc => {
            let allowed: Vec<String> = if req.allowed_registries.is_empty() {
                repo.config
                    .as_ref()
                    .and_then(|c| c.at(&["allowed_bundle_registries"]))
                    .and_then(crate::yaml::Node::as_seq)
                    .unwrap_or(&[])
                    .iter()
                    .filter_map(|n| n.scalar_text().map(str::to_string))
                    .collect()
            } else {
                req.allowed_registries.clone()
            };
            checks::konflux::catalogs(&t, &allowed, &mut found);
            if let Some(index) = index {
                checks::pruning::catalogs(&opened, index, &mut found);
            }
        }
        Profile::Community | Profile::Isv => {
            checks::common::operator(&t, &mut found);
            if let Some(b) = bundle {
                checks::common::bundle(&t, b, &mut found);
            }
            checks::common::catalogs(&t, &mut found);
            if req.profile == Profile::Community {
                checks::community::operator(&t, &mut found);
                if let Some(b) = bundle {
                    checks::community::bundle(&t, b, req.osdk, &mut found);
                }
            } else if let Some(b) = bundle {
                checks::isv::bundle(&t, b, &mut found);
            }
        }
    }
    for f in found {
        if waivers.ignores(f.check, name) {
            out.waived.push((name.to_string(), f.check));
        } else {
            out.findings.push(f);
        }
    }
    out.checked.push(match bundle {
        Some(b) => format!("{name}/{}", b.dir),
        None => name.to_string(),
    });
    Ok(())
}
