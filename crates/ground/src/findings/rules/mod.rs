//! The rule registry: every rule a record (the ruff / cargo-deny pattern), for bundles and
//! catalogs alike. A record carries the rule's stable id, default severity, group, the olmpack
//! release it appeared in and, for catalogs, since which opm release `opm validate` checks it, a
//! one-line summary, and a short *why* with an example (`olmpack explain ID` prints it).
//!
//! Ids are part of the public interface (CI configs and JSON consumers key on them), so a test
//! pins the whole list. Rules come in families, one file and one slice of records each
//! ([`bundle`], [`catalog`]); a new family (package manifests, say) is one more file whose
//! records are added to [`FAMILIES`] and [`Rule::ALL`], with no change to the checking code.
//!
//! [`Rule`] is a small `Copy` handle on a `'static` record. Check code names rules by their
//! associated constants (`Rule::CsvMissing`), and two handles are equal when their ids are.

mod bundle;
mod catalog;
mod matrix;
mod olmv1;
mod packagemanifest;

use super::severity::Severity;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};

/// Which set a rule belongs to. Only `Default` runs unless the user selects more
/// (like operator-sdk's `--select-optional`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Group {
    /// Always on: the registry+v1 format and content rules.
    Default,
    /// OperatorHub listing requirements (operator-sdk's operatorhub/v2, capabilities, categories).
    OperatorHub,
    /// Recommendations from operator-framework's good-practices validator.
    GoodPractices,
    /// Checks of the non-CSV objects shipped in the bundle (PDBs, priority classes, RBAC).
    BundleObjects,
    /// What OLM v1 (operator-controller) refuses to install.
    Olmv1,
}

impl Group {
    /// Every group, in help order.
    pub const ALL: &'static [Group] = &[
        Group::Default,
        Group::OperatorHub,
        Group::GoodPractices,
        Group::BundleObjects,
        Group::Olmv1,
    ];

    /// The name users pass to `--select-optional`.
    pub fn name(self) -> &'static str {
        match self {
            Group::Default => "default",
            Group::OperatorHub => "operatorhub",
            Group::GoodPractices => "good-practices",
            Group::BundleObjects => "bundle-objects",
            Group::Olmv1 => "olmv1",
        }
    }

    /// Parses a group name, accepting operator-sdk's spellings (`name=operatorhub`,
    /// `operatorhubv2`, `suite=operatorframework` selects all optional groups).
    pub fn parse_selection(text: &str) -> Result<Vec<Group>, String> {
        let value = text.trim();
        let value = value
            .strip_prefix("name=")
            .or_else(|| value.strip_prefix("suite="))
            .unwrap_or(value);
        match value {
            "operatorhub"
            | "operatorhubv2"
            | "operatorhub/v2"
            | "capabilities"
            | "categories"
            | "standardcapabilities"
            | "standardcategories" => Ok(vec![Group::OperatorHub]),
            "good-practices" | "goodpractices" | "good_practices" => Ok(vec![Group::GoodPractices]),
            "bundle-objects" | "objects" => Ok(vec![Group::BundleObjects]),
            "olmv1" | "olm-v1" => Ok(vec![Group::Olmv1]),
            "all" | "operatorframework" => Ok(vec![
                Group::OperatorHub,
                Group::GoodPractices,
                Group::BundleObjects,
            ]),
            other => Err(format!(
                "unknown optional rule group \"{other}\": choose from operatorhub, good-practices, bundle-objects, olmv1, all"
            )),
        }
    }
}

/// What kind of input a rule judges. `--list-rules` of each command shows its own subject's
/// rules; `explain` knows them all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Subject {
    /// registry+v1 bundle folders and images (`bundle validate`).
    Bundle,
    /// File-based catalog folders (`catalog validate`).
    Catalog,
    /// Legacy package-manifest folders (`<package>.package.yaml` + version folders), checked by
    /// `bundle validate`.
    PackageManifest,
    /// An operator repository's catalogs for several OpenShift versions, side by side
    /// (`catalog matrix`).
    Repository,
}

impl Subject {
    /// The word used in output (`explain`, report totals).
    pub fn name(self) -> &'static str {
        match self {
            Subject::Bundle => "bundle",
            Subject::Catalog => "catalog",
            Subject::PackageManifest => "package manifest",
            Subject::Repository => "repository",
        }
    }

    /// The word used as a JSON value (`"kind"` of JSON Lines): [`Subject::name`] without spaces.
    pub fn key(self) -> &'static str {
        match self {
            Subject::PackageManifest => "package-manifest",
            other => other.name(),
        }
    }
}

/// When a rule's problem arises: while reading files, or while judging what was read. A load
/// problem is often the cause of check findings (a bundle blob lost to a syntax error is then
/// "missing"), so reports that list root causes first order by stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    /// Reading a file failed or what it holds is not the shape the loader reads.
    Load,
    /// A rule judged what was loaded.
    Check,
}

/// A broken input and its repair, so the *why* of a rule is concrete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Example {
    /// A snippet (or layout) that triggers the rule.
    pub bad: &'static str,
    /// What to write or do instead.
    pub fix: &'static str,
}

/// Everything known about one rule, written once in its family's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleRecord {
    /// Stable id shown in output and accepted in configuration (`family/name`).
    pub id: &'static str,
    /// Severity when no option raises it.
    pub severity: Severity,
    /// The group that enables it (`--select-optional`).
    pub group: Group,
    /// What kind of input it judges.
    pub subject: Subject,
    /// Whether it reports a loading problem or a judgement of what was loaded.
    pub stage: Stage,
    /// The olmpack release that introduced the id (ids are never reused).
    pub since: &'static str,
    /// Since which opm release `opm validate` makes the same check; `None` when only olmpack
    /// checks it (or, for bundles, when opm has no equivalent validate command).
    pub opm_since: Option<&'static str>,
    /// One line: what the rule checks.
    pub summary: &'static str,
    /// Why it matters: what breaks, in which tool, if the rule is ignored.
    pub why: &'static str,
    /// A triggering input and its repair.
    pub example: Example,
}

/// A validation rule: a `Copy` handle on its [`RuleRecord`]. The associated constants
/// (`Rule::CsvMissing`) are for code; the ids ([`Rule::id`]) are for users.
#[derive(Clone, Copy)]
pub struct Rule(&'static RuleRecord);

/// Declares a family of rules: one associated constant on [`Rule`] per record, plus the
/// family's slice in documentation order.
macro_rules! records {
    (
        $(#[$family_doc:meta])*
        family $family:ident = $subject:ident;
        $(
            $variant:ident = $id:literal, $sev:ident, $group:ident $([$stage:ident])?, since $since:literal, opm $opm:expr;
            summary $summary:literal
            why $why:literal
            bad $bad:literal
            fix $fix:literal;
        )*
    ) => {
        #[allow(non_upper_case_globals)]
        impl crate::findings::rules::Rule {
            $(
                #[doc = $summary]
                pub const $variant: crate::findings::rules::Rule =
                    crate::findings::rules::Rule(&crate::findings::rules::RuleRecord {
                        id: $id,
                        severity: crate::findings::severity::Severity::$sev,
                        group: crate::findings::rules::Group::$group,
                        subject: crate::findings::rules::Subject::$subject,
                        stage: crate::findings::rules::stage!($($stage)?),
                        since: $since,
                        opm_since: $opm,
                        summary: $summary,
                        why: $why,
                        example: crate::findings::rules::Example { bad: $bad, fix: $fix },
                    });
            )*
        }

        $(#[$family_doc])*
        pub(super) const $family: &[crate::findings::rules::Rule] =
            &[ $( crate::findings::rules::Rule::$variant, )* ];
    };
}
pub(crate) use records;

/// A record's stage: `[Load]` after the group marks a loading rule, no marker a check.
macro_rules! stage {
    () => {
        crate::findings::rules::Stage::Check
    };
    ($stage:ident) => {
        crate::findings::rules::Stage::$stage
    };
}
pub(crate) use stage;

/// Every family of rules, in documentation order. A new family adds its slice here and in
/// [`Rule::ALL`].
pub const FAMILIES: &[&[Rule]] = &[
    bundle::RULES,
    olmv1::RULES,
    catalog::RULES,
    packagemanifest::RULES,
    matrix::RULES,
];

const RULE_COUNT: usize = bundle::RULES.len()
    + olmv1::RULES.len()
    + catalog::RULES.len()
    + packagemanifest::RULES.len()
    + matrix::RULES.len();

/// The families laid end to end at compile time, so [`Rule::ALL`] stays a plain slice.
const ALL_RULES: [Rule; RULE_COUNT] = {
    let mut all = [Rule::InternalError; RULE_COUNT];
    let mut next = 0;
    let mut family = 0;
    while family < FAMILIES.len() {
        let rules = FAMILIES[family];
        let mut i = 0;
        while i < rules.len() {
            all[next] = rules[i];
            next += 1;
            i += 1;
        }
        family += 1;
    }
    all
};

impl Rule {
    /// Every rule of every family, in documentation order.
    pub const ALL: &'static [Rule] = &ALL_RULES;

    /// The whole record.
    pub fn record(self) -> &'static RuleRecord {
        self.0
    }

    /// The stable id shown in output and accepted in configuration.
    pub fn id(self) -> &'static str {
        self.0.id
    }

    /// Severity when nothing raises it.
    pub fn default_severity(self) -> Severity {
        self.0.severity
    }

    /// The group that enables the rule.
    pub fn group(self) -> Group {
        self.0.group
    }

    /// One line saying what the rule checks.
    pub fn summary(self) -> &'static str {
        self.0.summary
    }

    /// What kind of input the rule judges.
    pub fn subject(self) -> Subject {
        self.0.subject
    }

    /// Whether the rule reports a loading problem or a judgement of what was loaded.
    pub fn stage(self) -> Stage {
        self.0.stage
    }

    /// Since which opm release `opm validate` makes this check (catalog rules), if it does.
    pub fn opm_since(self) -> Option<&'static str> {
        self.0.opm_since
    }

    /// Looks a rule up by id.
    pub fn from_id(id: &str) -> Option<Rule> {
        Rule::ALL.iter().copied().find(|r| r.id() == id)
    }

    /// Whether the rule judges file-based catalogs (`catalog validate`) rather than bundles.
    pub fn is_catalog(self) -> bool {
        self.0.subject == Subject::Catalog
    }

    /// Ids close to a mistyped one, best first (for "unknown rule" messages): ids whose whole
    /// text or whose name after the `/` is similar, and ids containing the text typed.
    pub fn close_matches(typed: &str) -> Vec<&'static str> {
        let typed = typed.trim().to_ascii_lowercase();
        let mut scored: Vec<(f64, &'static str)> = Rule::ALL
            .iter()
            .filter_map(|rule| {
                let id = rule.id();
                let name = id.split_once('/').map_or(id, |(_, name)| name);
                let score = strsim::normalized_damerau_levenshtein(&typed, id)
                    .max(strsim::normalized_damerau_levenshtein(&typed, name))
                    .max(if typed.len() >= 3 && id.contains(typed.as_str()) {
                        0.9
                    } else {
                        0.0
                    });
                (score >= 0.7).then_some((score, id))
            })
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
        scored.into_iter().take(5).map(|(_, id)| id).collect()
    }
}

impl PartialEq for Rule {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.0, other.0) || self.0.id == other.0.id
    }
}

impl Eq for Rule {}

impl Hash for Rule {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.id.hash(state);
    }
}

impl PartialOrd for Rule {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Rule {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.id.cmp(other.0.id)
    }
}

impl fmt::Debug for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Rule({})", self.0.id)
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn ids_are_unique_and_well_formed() {
        let mut seen = HashSet::new();
        for rule in Rule::ALL {
            assert!(seen.insert(rule.id()), "duplicate id {}", rule.id());
            let (prefix, name) = rule.id().split_once('/').expect("group/name");
            assert!(!prefix.is_empty() && !name.is_empty());
            assert!(
                rule.id()
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '/'),
                "{}",
                rule.id()
            );
            assert_eq!(Rule::from_id(rule.id()), Some(*rule));
        }
    }

    #[test]
    fn optional_groups_parse_like_operator_sdk() {
        assert_eq!(
            Group::parse_selection("name=operatorhub"),
            Ok(vec![Group::OperatorHub])
        );
        assert_eq!(
            Group::parse_selection("good-practices"),
            Ok(vec![Group::GoodPractices])
        );
        assert!(Group::parse_selection("nope").is_err());
    }

    /// The published ids, in documentation order. Ids are a public interface: renaming or
    /// dropping one breaks users' CI configs, so any change must show up in review here.
    #[test]
    fn ids_are_pinned() {
        let pinned: Vec<&str> = include_str!("ids.txt").lines().collect();
        let ids: Vec<&str> = Rule::ALL.iter().map(|r| r.id()).collect();
        assert_eq!(ids, pinned);
    }

    #[test]
    fn every_record_is_complete() {
        for rule in Rule::ALL {
            let r = rule.record();
            for (what, text) in [
                ("summary", r.summary),
                ("why", r.why),
                ("example.bad", r.example.bad),
                ("example.fix", r.example.fix),
            ] {
                assert!(!text.trim().is_empty(), "{}: empty {what}", r.id);
            }
            assert!(
                semver::Version::parse(r.since).is_ok(),
                "{}: since {:?}",
                r.id,
                r.since
            );
            // The family decides the subject, and the id prefix says it to users.
            for (subject, prefix) in [
                (Subject::Catalog, "catalog/"),
                (Subject::PackageManifest, "packagemanifest/"),
                (Subject::Repository, "matrix/"),
            ] {
                let prefixed = r.id.starts_with(prefix);
                assert_eq!(r.subject == subject, prefixed, "{}: {prefix}", r.id);
            }
            // opm's checks are errors, olmpack's own catalog checks warnings; the one exception
            // is catalog/empty, an error opm lacks (an empty folder is almost always a wrong path).
            if r.subject == Subject::Catalog && r.id != "catalog/empty" {
                assert_eq!(
                    r.opm_since.is_some(),
                    r.severity == Severity::Error,
                    "{}",
                    r.id
                );
            }
        }
    }

    #[test]
    fn families_hold_every_rule_once() {
        let total: usize = FAMILIES.iter().map(|f| f.len()).sum();
        assert_eq!(total, Rule::ALL.len());
        assert_eq!(Rule::ALL[0], Rule::YamlSyntax);
        assert_ne!(Rule::CsvMissing, Rule::CsvMultiple);
    }

    #[test]
    fn close_matches_find_typos_and_bare_names() {
        assert_eq!(
            Rule::close_matches("csv/mising").first(),
            Some(&"csv/missing")
        );
        assert!(Rule::close_matches("skip-range").contains(&"catalog/skip-range"));
        assert!(Rule::close_matches("skip-range").contains(&"csv/skip-range"));
        assert!(Rule::close_matches("zzzzzz").is_empty());
    }
}
