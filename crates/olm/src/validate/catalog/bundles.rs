//! The bundles of a catalog: each `olm.bundle` blob indexed by (package, name), with its
//! properties parsed once into a [`BundleInfo`] that the other checks read.

use super::*;
use crate::catalog::bundle_facts::{self, ModelProblem, PackageProperty};

/// Indexes the olm.bundle blobs by (package, name), reporting those opm's `ConvertToModel`
/// refuses and parsing each one's properties ([`bundle_info`]).
pub(super) fn index<'a>(
    cfg: &'a DeclarativeConfig,
    packages: &Packages,
    out: &mut Vec<Diagnostic>,
) -> Bundles<'a> {
    let mut bundles: BTreeMap<(&str, &str), BundleInfo> = BTreeMap::new();
    for b in &cfg.bundles {
        if b.package.is_empty() {
            out.push(at(
                Rule::CatalogBundlePackage,
                &b.origin,
                format!(
                    "package name must be set for bundle {:?}: set `package`",
                    b.name
                ),
            ));
            continue;
        }
        if !packages.contains_key(b.package.as_str()) {
            out.push(at(
                Rule::CatalogPackageUnknown,
                &b.origin,
                format!(
                    "unknown package {:?} for bundle {:?}: add an olm.package blob for it or fix `package`",
                    b.package, b.name
                ),
            ));
            continue;
        }
        if b.name.is_empty() {
            out.push(at(
                Rule::CatalogBundleName,
                &b.origin,
                format!("bundle of package {:?}: name must be set", b.package),
            ));
            continue;
        }
        if let Some(first) = bundles.get(&(b.package.as_str(), b.name.as_str())) {
            out.push(at(
                Rule::CatalogBundleDuplicate,
                &b.origin,
                format!(
                    "package {:?} has duplicate bundle {:?} (first at {}:{}): keep one",
                    b.package, b.name, first.bundle.origin.file, first.bundle.origin.line
                ),
            ));
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

/// Parses a bundle's properties and checks what opm's `ConvertToModel` checks of it: one
/// olm.package property naming its package, image pull specs, an image or objects, the version
/// and release.
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
    if info.packages.len() != 1 {
        out.push(at(
            Rule::CatalogPackageProperty,
            &b.origin,
            ModelProblem::PackageCount {
                package: b.package.clone(),
                bundle: b.name.clone(),
                count: info.packages.len(),
            }
            .to_string(),
        ));
        return info;
    }
    let pp = info.packages[0].clone();
    if pp.package_name != b.package {
        out.push(at(
            Rule::CatalogBundlePackage,
            &b.origin,
            format!(
                "{}: make them equal",
                ModelProblem::PackageMismatch {
                    package: b.package.clone(),
                    property: pp.package_name.clone(),
                }
            ),
        ));
    }
    check_images(b, out);
    check_version(b, &pp, &mut info, out);
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
        if let Err(e) = check_property(&p.type_, &value) {
            out.push(at(
                Rule::CatalogPropertyInvalid,
                &b.origin,
                format!(
                    "parse properties for bundle {:?}: parse property[{i}] of type {:?}: {e}: fix the value's shape",
                    b.name, p.type_
                ),
            ));
            parse_failed = true;
            continue;
        }
        let J::Object(m) = &value else { continue };
        match p.type_.as_str() {
            property_type::PACKAGE => {
                info.packages
                    .push(PackageProperty::decode(&p.value).unwrap_or_default());
            }
            property_type::GVK => {
                let k = str_field(m, "kind").unwrap_or_default();
                if !k.is_empty() {
                    info.gvk_kinds.insert(k);
                }
            }
            _ => {}
        }
    }
    !parse_failed
}

/// The bundle image and related images must be pull specs when set; a bundle without objects
/// needs an image.
fn check_images(b: &Bundle, out: &mut Vec<Diagnostic>) {
    if !b.image.is_empty()
        && let Err(e) = reference::image_pullspec(&b.image)
    {
        out.push(at(
            Rule::CatalogImageReference,
            &b.origin,
            format!(
                "package {:?} bundle {:?} image: invalid image pull spec {:?}: {e}",
                b.package, b.name, b.image
            ),
        ));
    }
    for (i, r) in b.related_images.iter().enumerate() {
        if !r.image.is_empty()
            && let Err(e) = reference::image_pullspec(&r.image)
        {
            out.push(at(
                Rule::CatalogImageReference,
                &b.origin,
                format!(
                    "package {:?} bundle {:?} relatedImages[{i}].image: invalid image pull spec {:?}: {e}",
                    b.package, b.name, r.image
                ),
            ));
        }
    }
    if b.image.is_empty() && b.objects.is_empty() {
        out.push(at(
            Rule::CatalogBundleImage,
            &b.origin,
            format!(
                "invalid bundle {:?}: bundle image must be set (a bundle without olm.bundle.object properties is pulled by its image)",
                b.name
            ),
        ));
    }
}

/// The olm.package version (strict semver) and release, the normalized name a release asks for,
/// and opm's duplicate-version key.
fn check_version(
    b: &Bundle,
    pp: &PackageProperty,
    info: &mut BundleInfo,
    out: &mut Vec<Diagnostic>,
) {
    match bundle_facts::check_version(b, &pp.version) {
        Ok(v) => info.version = Some(v),
        Err(e) => out.push(at(
            Rule::CatalogVersion,
            &b.origin,
            format!("{e}: use a strict semantic version such as 1.2.3"),
        )),
    }
    let mut release_ok = true;
    if !pp.release.is_empty() {
        if pp.release.len() > 20 {
            release_ok = false;
            out.push(at(
                Rule::CatalogVersion,
                &b.origin,
                format!(
                    "error parsing bundle {:?} release version {:?}: invalid release {:?}: exceeds maximum length of 20 characters",
                    b.name, pp.release, pp.release
                ),
            ));
        } else if let Err(e) = semver::Prerelease::new(&pp.release) {
            release_ok = false;
            out.push(at(
                Rule::CatalogVersion,
                &b.origin,
                format!(
                    "error parsing bundle {:?} release version {:?}: {e}: use dot-separated alphanumeric identifiers",
                    b.name, pp.release
                ),
            ));
        }
    }
    if let Some(v) = &info.version {
        let base = v.to_string();
        if !pp.release.is_empty() && release_ok {
            if !v.build.is_empty() {
                out.push(at(
                    Rule::CatalogVersion,
                    &b.origin,
                    format!(
                        "invalid bundle {:?}: cannot use build metadata in version with a release version",
                        b.name
                    ),
                ));
            }
            let expected = format!("{}-v{}-{}", b.package, v, pp.release);
            if b.name != expected {
                out.push(at(
                    Rule::CatalogBundleName,
                    &b.origin,
                    format!(
                        "invalid bundle {:?}: name {:?} does not match normalized name {expected:?}: rename the bundle",
                        b.name, b.name
                    ),
                ));
            }
            info.version_key = Some(format!("{base}-{}", pp.release));
        } else {
            info.version_key = Some(base);
        }
    }
}
