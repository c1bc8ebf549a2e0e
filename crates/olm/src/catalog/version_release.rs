//! A bundle's version and release (opm's `model.VersionRelease`, operator-registry v1.62+).
//!
//! Why: since opm v1.62 a bundle may carry a `release` next to its `version` in the
//! `olm.package` property (CSV `spec.release`), so two builds of one upstream version can be
//! ordered. The substitutes template refuses a substitute that does not order after its base,
//! and opm orders by version first, then release (a bundle without a release orders before one
//! with a release). Bundles that still use the older `olm.substitutesFor` convention encode
//! the release as build metadata (`1.2.3+4`); opm reads that as the release, and so does
//! olmpack.

use crate::catalog::model::Bundle;
use crate::catalog::model::property_type::{self, PACKAGE};
use crate::catalog::property_value::{PackageProperty, PropertyValue};
use base64::Engine;
use semver::{Prerelease, Version};
use serde_json::Value as J;
use std::cmp::Ordering;

/// opm's limit on a release's length (the CSV CRD's constraint).
pub const RELEASE_MAX_LENGTH: usize = 20;

/// The annotation of the older substitution convention.
pub const SUBSTITUTES_FOR_ANNOTATION: &str = "olm.substitutesFor";

/// A semantic version and an optional release, ordered as opm's `VersionRelease.Compare`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionRelease {
    /// The bundle's version (build metadata removed when it was read as the release).
    pub version: Version,
    /// The release, dot-separated pre-release style identifiers; empty when absent.
    pub release: Prerelease,
}

impl VersionRelease {
    /// opm's `Compare`: version precedence (build metadata ignored, as blang/semver does), then
    /// release, where an absent release orders before any present one.
    pub fn compare(&self, other: &VersionRelease) -> Ordering {
        self.version
            .cmp_precedence(&other.version)
            .then_with(|| compare_release(&self.release, &other.release))
    }
}

impl std::fmt::Display for VersionRelease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.release.is_empty() {
            write!(f, "{}", self.version)
        } else {
            write!(f, "{} (release {})", self.version, self.release)
        }
    }
}

/// opm's `Release.Compare`: absent < present; otherwise semver pre-release precedence.
pub fn compare_release(a: &Prerelease, b: &Prerelease) -> Ordering {
    match (a.is_empty(), b.is_empty()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        (false, false) => a.cmp(b),
    }
}

/// opm's `NewRelease`: empty is no release; otherwise at most 20 characters of dot-separated
/// pre-release identifiers.
pub fn parse_release(text: &str) -> Result<Prerelease, String> {
    if text.is_empty() {
        return Ok(Prerelease::EMPTY);
    }
    if text.len() > RELEASE_MAX_LENGTH {
        return Err(format!(
            "invalid release {text:?}: exceeds maximum length of {RELEASE_MAX_LENGTH} characters"
        ));
    }
    // blang/semver's NewPRVersion parses a numeric identifier as a uint64: a longer number is
    // refused there (the semver crate would accept it).
    if let Some(big) = text.split('.').find(|id| {
        id.bytes().all(|b| b.is_ascii_digit()) && id.parse::<u64>().is_err() && !id.is_empty()
    }) {
        return Err(format!(
            "invalid release {text:?}: numeric identifier {big} does not fit a 64-bit unsigned integer"
        ));
    }
    Prerelease::new(text).map_err(|e| format!("invalid release {text:?}: {e}"))
}

/// operator-controller's `ParseLegacyVersionRelease` (OLM v1 without the release gate, and
/// registry+v1 bundles): the version's build metadata is the release when it parses as one
/// (and is then dropped from the version); otherwise the version keeps it and has no release.
pub fn legacy_version_release(version: &str) -> Result<VersionRelease, String> {
    let mut version = Version::parse(version).map_err(|e| e.to_string())?;
    let build = version.build.as_str().to_string();
    match parse_release(&build) {
        Ok(release) if !release.is_empty() => {
            version.build = semver::BuildMetadata::EMPTY;
            Ok(VersionRelease { version, release })
        }
        _ => Ok(VersionRelease {
            version,
            release: Prerelease::EMPTY,
        }),
    }
}

/// opm's `Bundle.VersionRelease()`: exactly one `olm.package` property, its version parsed
/// strictly and its release (or, for a bundle using `olm.substitutesFor`, its version's build
/// metadata) as the release. Errors are opm's texts.
pub fn of_bundle(b: &Bundle) -> Result<VersionRelease, String> {
    let mut found: Option<VersionRelease> = None;
    for p in &b.properties {
        if p.type_ != property_type::PACKAGE {
            continue;
        }
        if found.is_some() {
            return Err(format!(
                "must be exactly one property of type {:?}",
                property_type::PACKAGE
            ));
        }
        let value = PropertyValue::decode(&p.value, PackageProperty::GO_TYPE)
            .ok()
            .filter(|v| !v.is_null())
            .ok_or_else(|| {
                format!(
                    "unable to unmarshal {PACKAGE:?} property for bundle {:?}: not an object",
                    b.name
                )
            })?;
        let field = |name: &str| -> Result<String, String> {
            value.string(name).map_err(|_| {
                format!(
                    "unable to unmarshal {PACKAGE:?} property for bundle {:?}: json: field {name} is not a string",
                    b.name
                )
            })
        };
        let version_text = field("version")?;
        let version = Version::parse(&version_text).map_err(|e| {
            format!(
                "invalid semver version {version_text:?} in {PACKAGE:?} property for bundle {:?}: {e}",
                b.name
            )
        })?;
        let release_text = field("release")?;
        let release = parse_release(&release_text).map_err(|e| {
            format!(
                "invalid release {release_text:?} in {PACKAGE:?} property for bundle {:?}: {e}",
                b.name
            )
        })?;
        found = Some(VersionRelease { version, release });
    }
    let Some(mut vr) = found else {
        return Err(format!(
            "no {PACKAGE:?} property found for bundle {:?}",
            b.name
        ));
    };
    if vr.release.is_empty() && !vr.version.build.is_empty() && uses_substitutes_for(b) {
        let text = vr.version.build.as_str().to_string();
        vr.release = parse_release(&text).map_err(|e| {
            format!(
                "unable to convert build metadata to release for bundle {:?}: {e}",
                b.name
            )
        })?;
        vr.version.build = semver::BuildMetadata::EMPTY;
    }
    Ok(vr)
}

/// opm's `usesLegacyReleaseVersion`: the CSV carries a non-empty `olm.substitutesFor`
/// annotation. Like opm, the first CSV source that decodes decides (the CSV JSON, then each
/// `olm.csv.metadata`, then the first `olm.bundle.object` that decodes as an object).
pub fn uses_substitutes_for(b: &Bundle) -> bool {
    fn annotation(obj: &J, nested_in_metadata: bool) -> bool {
        let annotations = if nested_in_metadata {
            obj.get("metadata").and_then(|m| m.get("annotations"))
        } else {
            obj.get("annotations")
        };
        annotations
            .and_then(|a| a.get(SUBSTITUTES_FOR_ANNOTATION))
            .and_then(J::as_str)
            .is_some_and(|s| !s.is_empty())
    }
    if let Some(csv) = &b.csv_json
        && let Ok(obj @ J::Object(_)) = serde_json::from_str::<J>(csv)
    {
        return annotation(&obj, true);
    }
    for p in &b.properties {
        match p.type_.as_str() {
            property_type::CSV_METADATA => {
                if let Ok(obj @ J::Object(_)) = serde_json::from_str::<J>(p.value.get())
                    && annotation(&obj, false)
                {
                    return true;
                }
            }
            property_type::BUNDLE_OBJECT => {
                let data = serde_json::from_str::<J>(p.value.get())
                    .ok()
                    .and_then(|v| v.get("data").and_then(J::as_str).map(str::to_string))
                    .and_then(|d| base64::engine::general_purpose::STANDARD.decode(d).ok());
                if let Some(bytes) = data
                    && let Ok(obj @ J::Object(_)) = serde_json::from_slice::<J>(&bytes)
                {
                    return annotation(&obj, true);
                }
            }
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::model::Property;
    use crate::catalog::model::SCHEMA_BUNDLE;

    fn bundle(name: &str, props: &[(&str, String)], csv: Option<&str>) -> Bundle {
        Bundle {
            schema: SCHEMA_BUNDLE.to_string(),
            name: name.to_string(),
            package: "p".to_string(),
            image: String::new(),
            properties: props
                .iter()
                .filter_map(|(t, v)| Property::new(*t, v.clone()).ok())
                .collect(),
            related_images: Vec::new(),
            objects: Vec::new(),
            csv_json: csv.map(str::to_string),
            origin: Default::default(),
        }
    }

    fn pkg(version: &str, release: &str) -> (&'static str, String) {
        (
            property_type::PACKAGE,
            format!(r#"{{"packageName":"p","version":"{version}","release":"{release}"}}"#),
        )
    }

    fn vr(version: &str, release: &str) -> VersionRelease {
        of_bundle(&bundle("b", &[pkg(version, release)], None)).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn orders_by_version_then_release() {
        assert_eq!(vr("1.0.0", "").compare(&vr("1.0.0", "1")), Ordering::Less);
        assert_eq!(vr("1.0.0", "2").compare(&vr("1.0.0", "10")), Ordering::Less);
        assert_eq!(
            vr("1.0.0", "beta").compare(&vr("1.0.0", "alpha")),
            Ordering::Greater
        );
        assert_eq!(
            vr("1.0.1", "").compare(&vr("1.0.0", "9")),
            Ordering::Greater
        );
        assert_eq!(
            vr("1.0.0+a", "").compare(&vr("1.0.0+b", "")),
            Ordering::Equal
        );
    }

    #[test]
    fn errors_are_opms() {
        let none = of_bundle(&bundle("b", &[], None));
        assert_eq!(
            none,
            Err("no \"olm.package\" property found for bundle \"b\"".to_string())
        );
        let two = of_bundle(&bundle("b", &[pkg("1.0.0", ""), pkg("1.0.0", "")], None));
        assert_eq!(
            two,
            Err("must be exactly one property of type \"olm.package\"".to_string())
        );
        let long = of_bundle(&bundle("b", &[pkg("1.0.0", "012345678901234567890")], None));
        assert!(long.is_err_and(|e| e.contains("exceeds maximum length of 20")));
        let zero = of_bundle(&bundle("b", &[pkg("1.0.0", "01")], None));
        assert!(zero.is_err());
        let bad = of_bundle(&bundle("b", &[pkg("1.0", "")], None));
        assert!(bad.is_err_and(|e| e.starts_with("invalid semver version \"1.0\"")));
    }

    #[test]
    fn build_metadata_is_the_release_only_with_substitutes_for() {
        let plain = of_bundle(&bundle("b", &[pkg("1.0.0+3", "")], None));
        assert_eq!(plain.map(|v| v.release.is_empty()), Ok(true));
        let csv = r#"{"kind":"ClusterServiceVersion","metadata":{"name":"b","annotations":{"olm.substitutesFor":"a"}}}"#;
        let legacy = of_bundle(&bundle("b", &[pkg("1.0.0+3", "")], Some(csv)));
        let legacy = legacy.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(legacy.release.as_str(), "3");
        assert!(legacy.version.build.is_empty());
        let meta = (
            property_type::CSV_METADATA,
            r#"{"annotations":{"olm.substitutesFor":"a"}}"#.to_string(),
        );
        let via_meta = of_bundle(&bundle("b", &[pkg("1.0.0+3", ""), meta], None));
        assert_eq!(via_meta.map(|v| v.release.to_string()), Ok("3".to_string()));
        let obj = base64::engine::general_purpose::STANDARD.encode(csv);
        let object = (
            property_type::BUNDLE_OBJECT,
            format!(r#"{{"data":"{obj}"}}"#),
        );
        let via_object = of_bundle(&bundle("b", &[pkg("1.0.0+3", ""), object], None));
        assert_eq!(
            via_object.map(|v| v.release.to_string()),
            Ok("3".to_string())
        );
    }

    /// operator-registry `alpha/model/versionrelease_test.go` `TestNewRelease`, ported: the
    /// input, and the identifiers or the words of the error.
    #[test]
    fn opm_new_release_table() {
        let ok: &[(&str, &[&str])] = &[
            ("", &[]),
            ("alpha", &["alpha"]),
            ("1", &["1"]),
            ("alpha.1.beta.2", &["alpha", "1", "beta", "2"]),
            ("rc-1.beta-2", &["rc-1", "beta-2"]),
            ("12345678901234567890", &["12345678901234567890"]),
            ("0", &["0"]),
            ("0alpha", &["0alpha"]),
        ];
        for (input, ids) in ok {
            let got = parse_release(input).unwrap_or_else(|e| panic!("{input}: {e}"));
            let got: Vec<&str> = if got.is_empty() {
                Vec::new()
            } else {
                got.as_str().split('.').collect()
            };
            assert_eq!(&got, ids, "{input}");
        }
        for (input, says) in [
            (
                "123456789012345678901",
                "exceeds maximum length of 20 characters",
            ),
            ("01", "leading zero"),
            ("001", "leading zero"),
            ("alpha_beta", "invalid"),
            // Beyond opm's table: blang/semver refuses a numeric identifier past uint64.
            ("99999999999999999999", "64-bit"),
            ("a..b", "empty"),
        ] {
            let err = parse_release(input).expect_err(input);
            assert!(err.to_lowercase().contains(says), "{input}: {err}");
        }
    }

    /// operator-controller `catalogmetadata/compare/compare_test.go` `TestByVersionAndRelease`
    /// ("all bundles valid"), ported: sorted highest first, the build metadata read as the
    /// release (`ParseLegacyVersionRelease`); and `bundleutil` `TestGetVersionAndRelease`.
    #[test]
    fn operator_controller_by_version_and_release_table() {
        let mut bundles = vec!["1.0.0-alpha+1", "0.0.1", "1.0.0-alpha+2", "1.0.0"];
        bundles.sort_by(|a, b| {
            let (a, b) = (
                legacy_version_release(a).expect("a"),
                legacy_version_release(b).expect("b"),
            );
            b.compare(&a)
        });
        assert_eq!(
            bundles,
            vec!["1.0.0", "1.0.0-alpha+2", "1.0.0-alpha+1", "0.0.1"]
        );
        let v = legacy_version_release("1.0.0-pre+1.alpha.2").expect("parses");
        assert_eq!(
            (v.version.to_string().as_str(), v.release.as_str()),
            ("1.0.0-pre", "1.alpha.2")
        );
        // Build metadata that is not a release (a leading zero) stays in the version.
        let v = legacy_version_release("1.0.0+001").expect("parses");
        assert_eq!(
            (v.version.to_string().as_str(), v.release.as_str()),
            ("1.0.0+001", "")
        );
        assert!(legacy_version_release("abcd").is_err());
    }

    /// An ordering written independently from the semver 2.0 text (clause 11) and opm's
    /// `Release.Compare`, on strings: the reference the property test holds `compare` to.
    fn oracle(a: (&str, &str), b: (&str, &str)) -> Ordering {
        fn core(v: &str) -> (&str, &str) {
            let v = v.split('+').next().unwrap_or(v);
            v.split_once('-').unwrap_or((v, ""))
        }
        fn ids(a: &str, b: &str) -> Ordering {
            let (xs, ys): (Vec<&str>, Vec<&str>) = (a.split('.').collect(), b.split('.').collect());
            for (x, y) in xs.iter().zip(&ys) {
                let num = |s: &str| s.bytes().all(|c| c.is_ascii_digit());
                let o = match (num(x), num(y)) {
                    (true, true) => x.len().cmp(&y.len()).then(x.cmp(y)),
                    (true, false) => Ordering::Less,
                    (false, true) => Ordering::Greater,
                    (false, false) => x.cmp(y),
                };
                if o != Ordering::Equal {
                    return o;
                }
            }
            xs.len().cmp(&ys.len())
        }
        fn pre(a: &str, b: &str) -> Ordering {
            match (a.is_empty(), b.is_empty()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => ids(a, b),
            }
        }
        let ((an, ap), (bn, bp)) = (core(a.0), core(b.0));
        let nums = |n: &str| {
            n.split('.')
                .map(|x| x.parse::<u64>().unwrap_or(0))
                .collect::<Vec<_>>()
        };
        nums(an)
            .cmp(&nums(bn))
            .then_with(|| pre(ap, bp))
            .then_with(|| match (a.1.is_empty(), b.1.is_empty()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Less,
                (false, true) => Ordering::Greater,
                (false, false) => ids(a.1, b.1),
            })
    }

    mod property {
        use super::*;
        use proptest::prelude::*;

        fn identifier() -> impl Strategy<Value = String> {
            prop_oneof![
                (0u64..4).prop_map(|n| n.to_string()),
                any::<u64>().prop_map(|n| n.to_string()),
                "[a-c]{1,2}",
                "[0-9][a-z-]{1,2}",
                "-[0-9]",
            ]
        }

        fn dotted(max: usize) -> impl Strategy<Value = String> {
            prop::collection::vec(identifier(), 1..=max).prop_map(|v| v.join("."))
        }

        fn version() -> impl Strategy<Value = String> {
            (
                0u64..3,
                0u64..3,
                0u64..3,
                prop::option::of(dotted(3)),
                prop::option::of("[a-z0-9]{1,3}"),
            )
                .prop_map(|(a, b, c, pre, build)| {
                    let mut v = format!("{a}.{b}.{c}");
                    if let Some(p) = pre {
                        v.push('-');
                        v.push_str(&p);
                    }
                    if let Some(b) = build {
                        v.push('+');
                        v.push_str(&b);
                    }
                    v
                })
        }

        fn release() -> impl Strategy<Value = String> {
            prop_oneof![
                Just(String::new()),
                dotted(3).prop_filter("at most 20", |r| r.len() <= 20)
            ]
        }

        fn parsed(v: &str, r: &str) -> VersionRelease {
            VersionRelease {
                version: Version::parse(v).unwrap_or_else(|e| panic!("{v}: {e}")),
                release: parse_release(r).unwrap_or_else(|e| panic!("{r}: {e}")),
            }
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 4000, failure_persistence: None, ..ProptestConfig::default() })]

            /// `compare` equals the independent ordering on every generated pair.
            #[test]
            fn compare_equals_the_reference(a in (version(), release()), b in (version(), release())) {
                let got = parsed(&a.0, &a.1).compare(&parsed(&b.0, &b.1));
                prop_assert_eq!(got, oracle((&a.0, &a.1), (&b.0, &b.1)), "{:?} vs {:?}", a, b);
            }

            /// A total order: antisymmetric and transitive over generated triples.
            #[test]
            fn compare_is_a_total_order(a in (version(), release()), b in (version(), release()), c in (version(), release())) {
                let (x, y, z) = (parsed(&a.0, &a.1), parsed(&b.0, &b.1), parsed(&c.0, &c.1));
                prop_assert_eq!(x.compare(&y), y.compare(&x).reverse());
                if x.compare(&y) != Ordering::Greater && y.compare(&z) != Ordering::Greater {
                    prop_assert_ne!(x.compare(&z), Ordering::Greater);
                }
            }
        }
    }
}
