//! The package-manifest rules: one record per rule (stable id, default severity, summary), kept
//! as a separate family so it can be folded into the main rule table (`src/findings/rules.rs`)
//! without renumbering anything. Ids are public interface: CI configs key on them.

use crate::findings::Severity;
use std::fmt;

macro_rules! pm_rules {
    ($( $variant:ident => $id:literal, $sev:ident, $summary:literal; )*) => {
        /// A package-manifest rule. Variant names are for code; ids (`PmRule::id`) are for users.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum PmRule { $( #[doc = $summary] $variant, )* }

        impl PmRule {
            /// Every rule, in documentation order.
            pub const ALL: &'static [PmRule] = &[ $( PmRule::$variant, )* ];

            /// The stable id shown in output.
            pub fn id(self) -> &'static str {
                match self { $( PmRule::$variant => $id, )* }
            }

            /// Severity of the rule.
            pub fn severity(self) -> Severity {
                match self { $( PmRule::$variant => Severity::$sev, )* }
            }

            /// One line saying what the rule checks.
            pub fn summary(self) -> &'static str {
                match self { $( PmRule::$variant => $summary, )* }
            }
        }
    };
}

pm_rules! {
    // --- reading the files (opm's sqlite loader decodes every file of the tree) ---
    Unreadable => "packagemanifest/unreadable", Error, "A file or folder of the package cannot be read.";
    YamlSyntax => "packagemanifest/yaml-syntax", Error, "Every file of the package must be valid YAML or JSON: opm's loader refuses the package otherwise (`could not decode contents of file`).";
    EmptyFile => "packagemanifest/empty-file", Error, "An empty file cannot be decoded; opm's loader refuses the package (`EOF`).";
    MultiDocument => "packagemanifest/multi-document", Warning, "A file holds several YAML documents; opm reads only the first.";
    // --- the package file (operator-framework/api's package manifest validator) ---
    PackageFileMissing => "packagemanifest/package-file-missing", Error, "No file of the package declares a `packageName` (the `<package>.package.yaml`).";
    PackageFileMultiple => "packagemanifest/package-file-multiple", Error, "Several files declare a package; operator-framework/api refuses (`multiple package manifest files found`).";
    PackageDecode => "packagemanifest/package-decode", Error, "The package file's fields have the wrong type (`could not decode contents into package manifest`).";
    ChannelsEmpty => "packagemanifest/channels-empty", Error, "The package file must list at least one channel.";
    ChannelNameEmpty => "packagemanifest/channel-name-empty", Error, "Every channel needs a name.";
    ChannelHeadEmpty => "packagemanifest/channel-current-csv-empty", Error, "Every channel needs a `currentCSV`.";
    ChannelDuplicate => "packagemanifest/channel-duplicate", Error, "A channel name appears twice in the package file.";
    DefaultChannelMissing => "packagemanifest/default-channel-missing", Error, "With several channels, `defaultChannel` must be set (opm: `no default channel specified`).";
    DefaultChannelUnknown => "packagemanifest/default-channel-unknown", Error, "`defaultChannel` must name a declared channel.";
    DefaultChannelUnset => "packagemanifest/default-channel-unset", Warning, "`defaultChannel` is not set: valid for opm with one channel, but operator-sdk's pkgman-to-bundle refuses the package.";
    // --- versions (opm's sqlite loader) ---
    VersionNoCsv => "packagemanifest/version-no-csv", Warning, "A version folder holds no ClusterServiceVersion: opm ignores its files, operator-sdk refuses the package.";
    VersionMultipleCsvs => "packagemanifest/version-multiple-csvs", Error, "A version folder holds several ClusterServiceVersions: a bundle has exactly one (operator-framework/api and `opm alpha bundle` refuse).";
    CsvNameMissing => "packagemanifest/csv-name-missing", Error, "A ClusterServiceVersion must have metadata.name (opm: `csv name not found`).";
    CsvNameDuplicate => "packagemanifest/csv-name-duplicate", Error, "Two ClusterServiceVersions share a name: opm cannot store the second bundle.";
    CsvField => "packagemanifest/csv-field", Error, "A ClusterServiceVersion field opm reads (version, replaces, skips, owned and required CRDs) has the wrong type.";
    ProvidedApiMissing => "packagemanifest/provided-api-missing", Error, "Every owned CRD of the CSV must be defined by a CRD in its folder (opm: `error checking provided apis in bundle`).";
    FolderVersionMismatch => "packagemanifest/folder-version-mismatch", Warning, "A version folder's name differs from its CSV's spec.version.";
    CrdV1beta1 => "packagemanifest/crd-v1beta1", Warning, "A CRD is apiextensions.k8s.io/v1beta1: Kubernetes 1.22 and later cannot serve it.";
    // --- channels (opm's sqlite loader walk) ---
    ChannelHeadMissing => "packagemanifest/channel-head-missing", Error, "A channel's `currentCSV` names no ClusterServiceVersion of the package (opm: `no bundle found for bundlename`).";
    ReplacesMissing => "packagemanifest/replaces-missing", Error, "A CSV on a channel replaces a CSV the package does not have (opm: `replaces nonexistent bundle`).";
    ReplacesCycle => "packagemanifest/replaces-cycle", Error, "Following `replaces` from a channel head comes back to a CSV already seen (opm: `Cycle detected`).";
    SkipsUnknown => "packagemanifest/skips-unknown", Warning, "`skips` names a CSV the package does not have; it stays in skips but gets no channel entry.";
    Orphan => "packagemanifest/orphan", Warning, "A version belongs to no channel: opm loads it but it vanishes from the rendered catalog.";
}

impl fmt::Display for PmRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// One finding about a package-manifest folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The rule.
    pub rule: PmRule,
    /// What is wrong and what to do.
    pub message: String,
    /// File or folder relative to the package folder (`/` separators), when there is one.
    pub file: Option<String>,
    /// 1-based line, when known.
    pub line: Option<usize>,
}

impl Finding {
    /// A finding without a location.
    pub fn new(rule: PmRule, message: impl Into<String>) -> Self {
        Finding {
            rule,
            message: message.into(),
            file: None,
            line: None,
        }
    }

    /// Points the finding at a file (and line when `line > 0`).
    pub fn at(mut self, file: impl Into<String>, line: usize) -> Self {
        self.file = Some(file.into());
        self.line = (line > 0).then_some(line);
        self
    }

    /// Whether it is an error.
    pub fn is_error(&self) -> bool {
        self.rule.severity() == Severity::Error
    }

    /// `file:line`, `file` or empty.
    pub fn location(&self) -> String {
        match (&self.file, self.line) {
            (Some(f), Some(l)) => format!("{f}:{l}"),
            (Some(f), None) => f.clone(),
            _ => String::new(),
        }
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let loc = self.location();
        if loc.is_empty() {
            write!(
                f,
                "{}[{}]: {}",
                self.rule.severity(),
                self.rule,
                self.message
            )
        } else {
            write!(
                f,
                "{}[{}] {}: {}",
                self.rule.severity(),
                self.rule,
                loc,
                self.message
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn ids_are_unique_and_prefixed() {
        let mut seen = HashSet::new();
        for r in PmRule::ALL {
            assert!(r.id().starts_with("packagemanifest/"), "{}", r.id());
            assert!(seen.insert(r.id()), "duplicate id {}", r.id());
            assert!(!r.summary().is_empty());
        }
    }
}
