//! The bundles of a catalog: each `olm.bundle` blob indexed by (package, name), with its
//! properties parsed once into a [`BundleInfo`] that the other checks read.

use super::*;
use crate::catalog::bundle_facts::PackageProperty;

/// Indexes the olm.bundle blobs by (package, name) (the first of each; the model check reports
/// the rest), parsing each one's properties ([`bundle_info`]).
pub(super) fn index<'a>(
    cfg: &'a DeclarativeConfig,
    packages: &Packages,
    out: &mut Vec<Diagnostic>,
) -> Bundles<'a> {
    let mut bundles: BTreeMap<(&str, &str), BundleInfo> = BTreeMap::new();
    for b in &cfg.bundles {
        if b.package.is_empty()
            || !packages.contains_key(b.package.as_str())
            || bundles.contains_key(&(b.package.as_str(), b.name.as_str()))
        {
            continue;
        }
        let info = bundle_info(b, out);
        bundles.insert((b.package.as_str(), b.name.as_str()), info);
    }
    bundles
}

/// What the rules know about one bundle after its properties are parsed.
pub(super) struct BundleInfo<'a> {
    pub(super) bundle: &'a Bundle,
    pub(super) packages: Vec<PackageProperty>,
    pub(super) version: Option<semver::Version>,
    /// `version[-release]`, opm's duplicate-version key.
    pub(super) version_key: Option<String>,
    pub(super) gvk_kinds: BTreeSet<String>,
    /// The `olm.csv.metadata` object, its members left as raw text: only the few that the
    /// checks read are parsed (the description, CRD descriptors and icons never are).
    pub(super) csv_metadata: Option<CsvMetadata<'a>>,
}

/// Parses a bundle's properties (reporting what opm's `property.Parse` refuses beyond the
/// `olm.package` property, which the model check reads) and its version.
pub(super) fn bundle_info<'a>(b: &'a Bundle, out: &mut Vec<Diagnostic>) -> BundleInfo<'a> {
    let mut info = BundleInfo {
        bundle: b,
        packages: Vec::new(),
        version: None,
        version_key: None,
        gvk_kinds: BTreeSet::new(),
        csv_metadata: None,
    };
    if !parse_properties(b, &mut info, out) {
        return info;
    }
    if let [pp] = info.packages.as_slice() {
        let pp = pp.clone();
        set_version(b, &pp, &mut info);
    }
    info
}

/// Parses every property into `info` (olm.package, olm.gvk kinds, olm.csv.metadata), reporting
/// what opm's `property.Parse` refuses; `false` when one could not be parsed.
fn parse_properties<'a>(
    b: &'a Bundle,
    info: &mut BundleInfo<'a>,
    out: &mut Vec<Diagnostic>,
) -> bool {
    let mut parse_failed = false;
    for (i, p) in b.properties.iter().enumerate() {
        if p.type_ == property_type::CSV_METADATA {
            match csv_metadata_property(b, i, p, out) {
                Ok(Some(m)) => info.csv_metadata = Some(m),
                Ok(None) => {}
                Err(()) => parse_failed = true,
            }
            continue;
        }
        let value: J = match serde_json::from_str(p.value.get()) {
            Ok(v) => v,
            Err(e) => {
                out.push(at(
                    Rule::CatalogPropertyInvalid,
                    &b.origin,
                    format!("parse properties for bundle {:?}: property[{i}] value is not valid json: {e}", b.name),
                ));
                parse_failed = true;
                continue;
            }
        };
        if p.type_.is_empty() {
            out.push(at(
                Rule::CatalogPropertyInvalid,
                &b.origin,
                format!("bundle {:?} property[{i}]: type must be set", b.name),
            ));
        }
        // The model check reports an `olm.package` value opm cannot decode.
        if p.type_ == property_type::PACKAGE {
            if let Ok(pp) = PackageProperty::decode(&p.value) {
                info.packages.push(pp);
            } else {
                parse_failed = true;
            }
            continue;
        }
        if let Err(e) = check_property(&p.type_, &value) {
            out.push(super::properties::shape_refused(b, i, &p.type_, &e));
            parse_failed = true;
            continue;
        }
        let J::Object(m) = &value else { continue };
        if p.type_ == property_type::GVK {
            let k = str_field(m, "kind").unwrap_or_default();
            if !k.is_empty() {
                info.gvk_kinds.insert(k);
            }
        }
    }
    !parse_failed
}

/// The olm.package version (strict semver) and opm's duplicate-version key (`version[-release]`).
fn set_version(b: &Bundle, pp: &PackageProperty, info: &mut BundleInfo) {
    info.version = crate::catalog::model_check::check_version(b, &pp.version).ok();
    let release_ok = pp.release.is_empty()
        || (pp.release.len() <= 20 && semver::Prerelease::new(&pp.release).is_ok());
    if let Some(v) = &info.version {
        info.version_key = Some(if !pp.release.is_empty() && release_ok {
            format!("{v}-{}", pp.release)
        } else {
            v.to_string()
        });
    }
}
