//! `olm.deprecations` blobs, checked as opm >= 1.32 does: one per known package, entries with
//! a schema, a message and an existing target, no duplicates.

use super::*;

pub(super) fn check(
    cfg: &DeclarativeConfig,
    packages: &BTreeMap<&str, &Package>,
    channels: &BTreeMap<(&str, &str), &Channel>,
    bundles: &BTreeMap<(&str, &str), BundleInfo>,
    out: &mut Vec<Diagnostic>,
) {
    let mut seen_pkg: HashMap<&str, &Origin> = HashMap::new();
    for d in &cfg.deprecations {
        let o = &d.origin;
        if d.package.is_empty() {
            out.push(at(
                Rule::CatalogDeprecation,
                o,
                "package name must be set for deprecation item: set `package`".into(),
            ));
            continue;
        }
        if !packages.contains_key(d.package.as_str()) {
            out.push(at(
                Rule::CatalogPackageUnknown,
                o,
                format!(
                    "cannot apply deprecations to an unknown package {:?}: fix `package` or add the package",
                    d.package
                ),
            ));
            continue;
        }
        if let Some(first) = seen_pkg.get(d.package.as_str()) {
            out.push(at(
                Rule::CatalogDeprecation,
                o,
                format!(
                    "expected a maximum of one deprecation per package: {:?} (first at {}:{}): merge the entries",
                    d.package, first.file, first.line
                ),
            ));
            continue;
        }
        seen_pkg.insert(&d.package, o);
        let mut refs: HashSet<(&str, &str)> = HashSet::new();
        for (j, e) in d.entries.iter().enumerate() {
            let (schema, name) = (e.reference.schema.as_str(), e.reference.name.as_str());
            let problem = match schema {
                model::SCHEMA_BUNDLE if !bundles.contains_key(&(d.package.as_str(), name)) => {
                    Some(format!(
                        "cannot deprecate bundle {name:?} for package {:?}: bundle not found",
                        d.package
                    ))
                }
                model::SCHEMA_CHANNEL if !channels.contains_key(&(d.package.as_str(), name)) => {
                    Some(format!(
                        "cannot deprecate channel {name:?} for package {:?}: channel not found",
                        d.package
                    ))
                }
                model::SCHEMA_PACKAGE if !name.is_empty() => Some(format!(
                    "package name must be empty for deprecated package {:?} (specified {name:?})",
                    d.package
                )),
                "" => Some(format!(
                    "schema must be set for deprecation entry [{j}] for package {:?}",
                    d.package
                )),
                model::SCHEMA_BUNDLE | model::SCHEMA_CHANNEL | model::SCHEMA_PACKAGE => None,
                other => Some(format!(
                    "cannot deprecate object declcfg.PackageScopedReference{{Schema:{other:?}, Name:{name:?}}} referenced by entry {j} for package {:?}: object schema unknown",
                    d.package
                )),
            };
            if let Some(problem) = problem {
                out.push(at(Rule::CatalogDeprecation, o, problem));
            }
            if !refs.insert((schema, name)) {
                out.push(at(
                    Rule::CatalogDeprecation,
                    o,
                    format!(
                        "duplicate deprecation entry declcfg.PackageScopedReference{{Schema:{schema:?}, Name:{name:?}}} for package {:?}",
                        d.package
                    ),
                ));
            }
            if e.message.is_empty() {
                out.push(at(
                    Rule::CatalogDeprecation,
                    o,
                    format!(
                        "deprecation entry [{j}] for package {:?}: invalid deprecation: message must be set",
                        d.package
                    ),
                ));
            }
        }
    }
}
