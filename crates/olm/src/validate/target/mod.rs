//! `--target`: validation that knows where a bundle or catalog will run. A target is an
//! OpenShift release (`ocp-4.12` ... `ocp-5.0`: its Kubernetes version, its pipelines and its
//! OLM v0), upstream OLM v0 (`olmv0`) or OLM v1 (`olmv1`). The facts behind it are in
//! [`matrix`], each with its source; here they become findings, and every finding of a run
//! with targets says which of them it affects ([`Diagnostic::targets`]).
//!
//! `--compat opm=vX` ([`OpmRelease`], [`apply_compat`]) is the other axis: which opm release's
//! `opm validate` rule set the verdict reproduces, read from the rule records' `opm_since`.

pub mod matrix;

use crate::findings::{Diagnostic, Rule, Severity};
use std::fmt;
use std::str::FromStr;

/// Where a bundle or catalog is meant to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Target {
    /// An OpenShift release, `(major, minor)`, one of [`matrix::OCP_KUBE`].
    Ocp(u32, u32),
    /// Upstream OLM v0 on any Kubernetes.
    OlmV0,
    /// OLM v1 (operator-controller) on any Kubernetes.
    OlmV1,
}

/// Why a `--target` value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown target \"{typed}\": choose olmv0, olmv1 or ocp-X.Y for an OpenShift release from {first} to {last}"
)]
pub struct TargetError {
    /// The value as typed.
    pub typed: String,
    /// The oldest OpenShift target known.
    pub first: String,
    /// The newest OpenShift target known.
    pub last: String,
}

impl FromStr for Target {
    type Err = TargetError;

    fn from_str(text: &str) -> Result<Target, TargetError> {
        let t = text.trim().to_ascii_lowercase();
        let found = match t.as_str() {
            "olmv0" | "olm-v0" => Some(Target::OlmV0),
            "olmv1" | "olm-v1" => Some(Target::OlmV1),
            _ => t
                .strip_prefix("ocp-")
                .or_else(|| t.strip_prefix("openshift-"))
                .map(|v| v.strip_prefix('v').unwrap_or(v))
                .and_then(|v| v.split_once('.'))
                .and_then(|(ma, mi)| Some((ma.parse::<u32>().ok()?, mi.parse::<u32>().ok()?)))
                .filter(|v| matrix::OCP_KUBE.iter().any(|row| row.ocp == *v))
                .map(|(ma, mi)| Target::Ocp(ma, mi)),
        };
        found.ok_or_else(|| {
            let name = |row: &matrix::OcpKube| Target::Ocp(row.ocp.0, row.ocp.1).to_string();
            TargetError {
                typed: text.to_string(),
                first: matrix::OCP_KUBE.first().map(name).unwrap_or_default(),
                last: matrix::OCP_KUBE.last().map(name).unwrap_or_default(),
            }
        })
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Ocp(major, minor) => write!(f, "ocp-{major}.{minor}"),
            Target::OlmV0 => f.write_str("olmv0"),
            Target::OlmV1 => f.write_str("olmv1"),
        }
    }
}

impl Target {
    /// The Kubernetes minor version the target runs, when the target fixes one (OpenShift).
    pub fn kube_minor(self) -> Option<u64> {
        match self {
            Target::Ocp(major, minor) => matrix::OCP_KUBE
                .iter()
                .find(|row| row.ocp == (major, minor))
                .map(|row| row.kube_minor),
            _ => None,
        }
    }

    /// Which installer scope of the matrix the target is.
    pub fn scope(self) -> matrix::Scope {
        match self {
            Target::Ocp(..) => matrix::Scope::OpenShift,
            Target::OlmV0 => matrix::Scope::OlmV0,
            Target::OlmV1 => matrix::Scope::OlmV1,
        }
    }

    /// Whether the OpenShift pipelines render this target's catalog with `olm.csv.metadata`
    /// in place of `olm.bundle.object` ([`matrix::CSV_METADATA_FROM`]).
    pub fn csv_metadata_form(self) -> bool {
        matches!(self, Target::Ocp(major, minor) if (major, minor) >= matrix::CSV_METADATA_FROM)
    }
}

/// Names of targets, in the order given, for a finding.
fn names(targets: impl IntoIterator<Item = Target>) -> Vec<String> {
    targets.into_iter().map(|t| t.to_string()).collect()
}

/// An API removed in Kubernetes `1.removed_in`: which targets it breaks and whether that makes
/// it an error. An OpenShift target breaks when its Kubernetes is that version or newer.
/// `olmv0` and `olmv1` fix no Kubernetes version: with `--k8s-version` (`named`) they break
/// when it has removed the API, without it they are counted as broken (they may run on any
/// current cluster, and a CSV's `minKubeVersion` is only a floor). An error when an OpenShift
/// target or the named version breaks.
pub fn removed_api(
    targets: &[Target],
    removed_in: u64,
    named: Option<&semver::Version>,
) -> (Vec<String>, Severity) {
    let named_breaks = named.is_some_and(|v| v.major == 1 && v.minor >= removed_in);
    let mut error = named_breaks;
    let mut affected = Vec::new();
    for t in targets {
        let breaks = match t.kube_minor() {
            Some(kube) => {
                error |= kube >= removed_in;
                kube >= removed_in
            }
            None => named.is_none() || named_breaks,
        };
        if breaks {
            affected.push(*t);
        }
    }
    let severity = if error {
        Severity::Error
    } else {
        Severity::Warning
    };
    (names(affected), severity)
}

/// The `target/kind` findings for one object: each fact of [`matrix::KIND_FACTS`] about its
/// kind that some named target is in scope of.
pub fn kind_findings(targets: &[Target], api_version: &str, kind: &str) -> Vec<Diagnostic> {
    matrix::KIND_FACTS
        .iter()
        .filter(|f| f.kind == kind && api_version.starts_with(f.api_prefix))
        .filter_map(|fact| {
            let hit: Vec<Target> = targets
                .iter()
                .copied()
                .filter(|t| t.scope() == fact.refused_on)
                .collect();
            if hit.is_empty() {
                return None;
            }
            Some(
                Diagnostic::new(
                    Rule::TargetKind,
                    format!(
                        "{kind} on {}: {} ({}); remove it from manifests/ and create it from the operator at run time",
                        names(hit.iter().copied()).join(", "),
                        fact.says,
                        fact.source
                    ),
                )
                .for_targets(names(hit)),
            )
        })
        .collect()
}

/// Gives every finding that has not said so which targets it affects: a rule family scoped to
/// one installer ([`matrix::RULE_SCOPES`]) affects the targets of that scope, any other rule
/// every target named. Without targets nothing changes.
pub fn annotate(diagnostics: &mut [Diagnostic], targets: &[Target]) {
    if targets.is_empty() {
        return;
    }
    for d in diagnostics.iter_mut().filter(|d| d.targets.is_none()) {
        let scoped = matrix::RULE_SCOPES
            .iter()
            .find(|s| d.rule.id().starts_with(s.id_prefix));
        let hit = targets
            .iter()
            .copied()
            .filter(|t| scoped.is_none_or(|s| t.scope() == s.scope));
        d.targets = Some(names(hit.collect::<Vec<_>>()));
    }
}

/// An opm release for `--compat opm=vX`: `MAJOR.MINOR[.PATCH]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct OpmRelease(pub u64, pub u64, pub u64);

/// Why a `--compat` value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--compat \"{0}\" is not opm=vX.Y[.Z] (for example opm=v1.46.0)")]
pub struct CompatError(pub String);

impl FromStr for OpmRelease {
    type Err = CompatError;

    fn from_str(text: &str) -> Result<OpmRelease, CompatError> {
        let bad = || CompatError(text.to_string());
        let value = text.trim().strip_prefix("opm=").ok_or_else(bad)?;
        parse_version(value).ok_or_else(bad)
    }
}

impl fmt::Display for OpmRelease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}.{}.{}", self.0, self.1, self.2)
    }
}

/// `v1.46.0`, `1.46` as a release; `None` for anything else.
fn parse_version(text: &str) -> Option<OpmRelease> {
    let t = text.trim();
    let t = t.strip_prefix('v').unwrap_or(t);
    let mut parts = t.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    let patch = match parts.next() {
        Some(p) => p.parse().ok()?,
        None => 0,
    };
    parts
        .next()
        .is_none()
        .then_some(OpmRelease(major, minor, patch))
}

/// What a rule record's `opm_since` says about one opm release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpmCheck {
    /// That release checks it as olmpack does.
    Same,
    /// That release does not check it: added in the release named.
    NotYet(OpmRelease),
    /// That release checks it, but the check changed in a later release (named, with the
    /// record's note), so its verdict may differ on this finding.
    ChangedSince(OpmRelease, String),
    /// Only that range of releases checks it (`v1.18.1 to v1.26.x only`): outside it, no.
    NotInRange,
}

/// Reads `opm_since` (`always`, `v1.64.0`, `always (release v1.62.0)`, `v1.41.0 (DNS-1123;
/// empty name always)`, `v1.18.1 to v1.26.x only (fixed in v1.27.0)`) for release `opm`.
pub fn opm_check(opm_since: &str, opm: OpmRelease) -> OpmCheck {
    let (head, note) = match opm_since.split_once(" (") {
        Some((head, rest)) => (head.trim(), rest.trim_end_matches(')').trim()),
        None => (opm_since.trim(), ""),
    };
    if let Some((from, to)) = head.split_once(" to ") {
        let from = parse_version(from);
        let fixed = note
            .strip_prefix("fixed in ")
            .and_then(parse_version)
            .or_else(|| parse_version(&to.trim_end_matches(" only").replace(".x", ".999")));
        return match (from, fixed) {
            (Some(from), Some(fixed)) if opm >= from && opm < fixed => OpmCheck::Same,
            _ => OpmCheck::NotInRange,
        };
    }
    if head != "always"
        && let Some(since) = parse_version(head)
        && opm < since
    {
        return OpmCheck::NotYet(since);
    }
    // A later change named in the note: the first version in it.
    let changed = note
        .split(|c: char| c.is_whitespace() || c == ';' || c == ',')
        .find_map(|w| w.starts_with('v').then(|| parse_version(w)).flatten());
    match changed {
        Some(v) if opm < v => OpmCheck::ChangedSince(v, note.to_string()),
        _ => OpmCheck::Same,
    }
}

/// `--compat opm=vX` on catalog findings: an error of a rule opm vX does not check becomes a
/// warning saying since which release opm checks it (so the verdict is opm vX's), and a
/// finding of a rule whose check changed after vX says so. Findings of rules opm never checks
/// (`opm_since` none) are left as they are: they are warnings already.
pub fn apply_compat(diagnostics: &mut [Diagnostic], opm: OpmRelease) {
    for d in diagnostics.iter_mut() {
        let Some(since) = d.rule.opm_since() else {
            continue;
        };
        match opm_check(since, opm) {
            OpmCheck::Same => {}
            OpmCheck::NotYet(v) => {
                d.severity = Severity::Warning;
                d.message.push_str(&format!(
                    " (opm {opm} does not check this: opm checks it since {v})"
                ));
            }
            OpmCheck::NotInRange => {
                d.severity = Severity::Warning;
                d.message
                    .push_str(&format!(" (opm {opm} does not fail on this: {since})"));
            }
            OpmCheck::ChangedSince(v, note) => {
                d.message.push_str(&format!(
                    " (opm {opm} checks this, but the check changed in {v}: {note})"
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_and_print() {
        assert_eq!("ocp-4.12".parse(), Ok(Target::Ocp(4, 12)));
        assert_eq!("OCP-v5.0".parse(), Ok(Target::Ocp(5, 0)));
        assert_eq!("olmv1".parse(), Ok(Target::OlmV1));
        let err = "ocp-4.11".parse::<Target>().unwrap_err();
        assert!(err.to_string().contains("ocp-4.12 to ocp-5.0"), "{err}");
        assert_eq!(Target::Ocp(4, 17).to_string(), "ocp-4.17");
        assert_eq!(Target::Ocp(4, 17).kube_minor(), Some(30));
        assert!(Target::Ocp(4, 17).csv_metadata_form() && !Target::Ocp(4, 16).csv_metadata_form());
        assert!(Target::Ocp(5, 0).csv_metadata_form() && !Target::OlmV0.csv_metadata_form());
    }

    #[test]
    fn removed_apis_break_the_targets_at_or_after_the_removal() {
        let t = [Target::Ocp(4, 12), Target::Ocp(4, 13), Target::OlmV1];
        // autoscaling/v2beta2: removed in 1.26 = OpenShift 4.13.
        let (hit, sev) = removed_api(&t, 26, None);
        assert_eq!(hit, ["ocp-4.13", "olmv1"]);
        assert_eq!(sev, Severity::Error);
        let (hit, sev) = removed_api(&t[..1], 26, None);
        assert!(hit.is_empty());
        assert_eq!(sev, Severity::Warning);
        let old = semver::Version::new(1, 24, 0);
        assert_eq!(removed_api(&t[2..], 26, Some(&old)).0, Vec::<String>::new());
    }

    #[test]
    fn opm_since_is_read_for_a_release() {
        let v = |a, b| OpmRelease(1, a, b);
        assert_eq!(opm_check("always", v(26, 0)), OpmCheck::Same);
        assert_eq!(opm_check("v1.69.0", v(68, 9)), OpmCheck::NotYet(v(69, 0)));
        assert_eq!(opm_check("v1.69.0", v(69, 0)), OpmCheck::Same);
        assert!(matches!(
            opm_check("always (v1.58.0 walk)", v(57, 0)),
            OpmCheck::ChangedSince(x, _) if x == v(58, 0)
        ));
        assert_eq!(opm_check("always (v1.58.0 walk)", v(58, 0)), OpmCheck::Same);
        assert_eq!(
            opm_check("v1.41.0 (DNS-1123; empty name always)", v(40, 0)),
            OpmCheck::NotYet(v(41, 0))
        );
        let load = "v1.18.1 to v1.26.x only (fixed in v1.27.0)";
        assert_eq!(opm_check(load, v(26, 5)), OpmCheck::Same);
        assert_eq!(opm_check(load, v(27, 0)), OpmCheck::NotInRange);
        assert_eq!("opm=v1.46".parse(), Ok(v(46, 0)));
        assert!("opm=latest".parse::<OpmRelease>().is_err());
        assert!("1.46".parse::<OpmRelease>().is_err());
        // Every record's opm_since reads as something.
        for rule in Rule::ALL {
            if let Some(since) = rule.opm_since() {
                let head = since.split(" (").next().unwrap_or(since);
                assert!(
                    head == "always" || head.contains(" to ") || parse_version(head).is_some(),
                    "{}: {since}",
                    rule.id()
                );
            }
        }
    }
}
