//! Package manifests to a file-based catalog, the way the reference does it: opm's `initializer`
//! loads the folder into an index database, then `opm render index.db` converts it. Here the
//! loader is replayed into the in-memory tables ([`crate::legacy::index::IndexDb`], the same
//! model the sqlite reader fills), row for row as operator-registry v1.26.5's `sqlLoader` writes
//! them, and the shared conversion turns them into the catalog.

use super::graph::Loaded;
use super::{PackageDir, Version, validate};
use crate::bundle::Csv;
use crate::catalog::model::DeclarativeConfig;
use crate::catalog::model::property_type;
use crate::findings::Diagnostic;
use crate::gocompat::marshal::marshal_string;
use crate::legacy::index::{IndexDb, OperatorBundleRow, ValueTable};
use crate::yaml::Node;
use std::collections::BTreeSet;
use std::path::Path;

/// Why a package could not be converted.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// The folder could not be read.
    #[error(transparent)]
    Read(#[from] super::ReadError),
    /// opm's loader refuses the package: every reason, one per line, at file:line.
    #[error("opm's loader refuses this package:\n{}", .0.iter().map(|f| format!("  {f}")).collect::<Vec<_>>().join("\n"))]
    Refused(Vec<Diagnostic>),
    /// A CSV field the loader decodes is malformed.
    #[error("{file}: {message}")]
    Csv {
        /// The CSV file.
        file: String,
        /// What is wrong.
        message: String,
    },
    /// The conversion of the loaded tables failed (opm's own error).
    #[error("{0}")]
    Convert(#[from] crate::legacy::index::ConvertError),
}

/// Reads, validates and converts a package folder: the catalog `opm render` prints for the
/// database `initializer` makes of it (before render's post-processing, which the caller applies
/// as for every source).
pub fn render_dir(dir: &Path) -> Result<DeclarativeConfig, CatalogError> {
    let pkg = PackageDir::read(dir)?;
    let report = validate::validate(&pkg);
    let errors: Vec<Diagnostic> = report.loader_errors().cloned().collect();
    let (true, Some(loaded)) = (errors.is_empty(), &report.loaded) else {
        return Err(CatalogError::Refused(errors));
    };
    let db = to_index(&pkg, loaded)?;
    let mut cfg = db.to_declarative_config()?;
    for b in &mut cfg.bundles {
        // opm v1.26 prints the objects in the order of the bundle column (folder file order).
        crate::catalog::render::objects_in_file_order(b);
    }
    Ok(cfg)
}

/// Go's `json.Marshal` of a value (sorted keys, `<>&` escaped).
fn go_json(node: &Node) -> String {
    marshal_string(&node.to_json(), true)
}

/// `{"group":…,"kind":…,"version":…}` as `json.Marshal(GVKProperty{…})` writes it.
fn gvk(group: &str, kind: &str, version: &str) -> String {
    let s = |v: &str| marshal_string(&serde_json::Value::from(v), true);
    format!(
        "{{\"group\":{},\"kind\":{},\"version\":{}}}",
        s(group),
        s(kind),
        s(version)
    )
}

/// The tables opm's loader writes for this package: pass 1 (every bundle, in tree order) then
/// pass 2 (the package, its channels and the entries walked from each head).
pub fn to_index(pkg: &PackageDir, loaded: &Loaded) -> Result<IndexDb, CatalogError> {
    let mut db = IndexDb::new();
    for v in &pkg.versions {
        add_bundle(&mut db, v)?;
    }
    db.add_package(&loaded.package, &loaded.default_channel);
    for c in &loaded.channels {
        db.add_channel(&loaded.package, &c.name, &c.head);
    }
    for e in &loaded.entries {
        db.add_channel_entry(&loaded.package, &e.channel, &e.bundle, e.depth);
    }
    for e in &loaded.entries {
        if let Some(r) = e.replaces {
            db.set_replaces(e.id, r);
        }
    }
    for name in &loaded.package_property_visits {
        let Some(v) = pkg.version(name) else { continue };
        let value = format!(
            "{{\"packageName\":{},\"version\":{}}}",
            marshal_string(&serde_json::Value::from(loaded.package.as_str()), true),
            marshal_string(&serde_json::Value::from(v.version.as_str()), true)
        );
        db.add_value(
            ValueTable::Properties,
            name,
            &v.version,
            "",
            property_type::PACKAGE,
            &value,
        );
    }
    Ok(db)
}

/// `addOperatorBundle` for one version: the bundle row, related images, dependencies (required
/// APIs) and properties (provided APIs, the CSV's `olm.properties` annotation).
fn add_bundle(db: &mut IndexDb, v: &Version) -> Result<(), CatalogError> {
    let csv_node = &v.csv().root;
    let csv_json = format!("{}\n", go_json(csv_node));
    let mut bundle = String::new();
    for o in &v.objects {
        bundle.push_str(&go_json(&o.root));
        bundle.push('\n');
    }
    db.add_bundle(OperatorBundleRow {
        name: v.name.clone(),
        csv: Some(csv_json),
        bundle: Some(bundle),
        bundlepath: Some(String::new()),
        skiprange: Some(v.skip_range.clone()),
        version: Some(v.version.clone()),
        replaces: Some(v.replaces.clone()),
        skips: Some(v.skips.join(",")),
        substitutesfor: Some(String::new()),
    });
    let csv = v.csv_view();
    for image in images(&csv) {
        db.add_related_image(&v.name, &image);
    }
    let mut required = BTreeSet::new();
    for d in csv.required_crds() {
        let name = d.name;
        let Some((_plural, group)) = name.split_once('.') else {
            return Err(CatalogError::Csv {
                file: v.csv().file.clone(),
                message: format!("couldn't parse plural.group from crd name: {name}"),
            });
        };
        required.insert(gvk(group, d.kind, d.version));
    }
    for d in csv.required_apis() {
        required.insert(gvk(d.written_group.unwrap_or_default(), d.kind, d.version));
    }
    for value in &required {
        db.add_value(
            ValueTable::Dependencies,
            &v.name,
            &v.version,
            "",
            property_type::GVK,
            value,
        );
    }
    let mut props: Vec<(String, String)> = Vec::new();
    let mut push = |t: String, val: String| {
        if !props.iter().any(|(a, b)| *a == t && *b == val) {
            props.push((t, val));
        }
    };
    for (g, ver, k, _plural) in validate::provided_apis(v) {
        push(property_type::GVK.into(), gvk(&g, &k, &ver));
    }
    if let Some(raw) = csv_node
        .path(&[
            "metadata",
            "annotations",
            crate::bundle::keys::OLM_PROPERTIES,
        ])
        .and_then(Node::scalar_text)
    {
        let parsed: Vec<serde_json::Value> =
            serde_json::from_str(raw).map_err(|e| CatalogError::Csv {
                file: v.csv().file.clone(),
                message: format!(
                    "the olm.properties annotation is not a JSON list of properties: {e}"
                ),
            })?;
        for p in parsed {
            let t = crate::gocompat::marshal::get_ci(&p, "type")
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default()
                .to_string();
            let value = crate::gocompat::marshal::get_ci(&p, "value")
                .map_or_else(|| "null".to_string(), |x| marshal_string(x, true));
            push(t, value);
        }
    }
    for (t, val) in props {
        db.add_value(ValueTable::Properties, &v.name, &v.version, "", &t, &val);
    }
    Ok(())
}

/// `Bundle.Images`: the deployments' container and init-container images (for the
/// `deployment` install strategy) and `spec.relatedImages[].image` ([`crate::bundle::images`]).
fn images(csv: &Csv<'_>) -> BTreeSet<String> {
    crate::bundle::images::images(&csv.object.root)
}
