//! `catalog/opm-load`: blobs the opm a catalog is built for (`--opm-compat`, or the opm a
//! `--base` image names) cannot load, although current opm can.
//!
//! Why a rule of its own: opm v1.18.1 to v1.26.x (operator-registry `alpha/declcfg/load.go`
//! `LoadReader`) rewrite the text `\u003c`, `\u003e` and `\u0026` of every document's JSON back
//! to `<`, `>` and `&` with a plain `strings.Replacer` before decoding it. A string that holds
//! those six characters literally (an `alm-examples` annotation whose JSON was written with Go's
//! HTML escaping, copied into `olm.csv.metadata` since OpenShift 4.17's catalogs) is encoded as
//! `\\u003c`; the rewrite leaves `\<`, and the decode fails with "invalid character '<' in
//! string escape code". The first such blob stops the whole catalog: `opm validate`, `opm serve`
//! without a cache and `opm render` all fail, so every v4.17+ catalog of the public repositories
//! is unloadable for opm 1.26 while newer opm (the rewrite was removed in v1.27.0,
//! operator-registry #1089) reads it. The other rules judge the catalog as current opm does and
//! cannot see this.

use super::Origin;
use crate::catalog::OpmCompat;
use crate::catalog::model::{
    DeclarativeConfig, SCHEMA_BUNDLE, SCHEMA_CHANNEL, SCHEMA_DEPRECATIONS, SCHEMA_PACKAGE,
};
use crate::findings::{Diagnostic, Rule};
use serde::Serialize;
use serde_json::Value;

/// The escapes the old loader rewrites, with the character each becomes.
const REWRITTEN: [(&str, char); 3] = [("\\u003c", '<'), ("\\u003e", '>'), ("\\u0026", '&')];

/// Whether `opm` is one of the releases whose loader rewrites escapes (v1.18.1 to v1.26.x).
pub fn rewrites_escapes(opm: OpmCompat) -> bool {
    opm.at_least(1, 18) && !opm.at_least(1, 27)
}

/// One `catalog/opm-load` error per blob `opm` cannot load; none for an opm that loads them.
pub fn check(cfg: &DeclarativeConfig, opm: OpmCompat) -> Vec<Diagnostic> {
    if !rewrites_escapes(opm) {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut blob = |what: String, origin: &Origin, value: Option<Value>| {
        let Some(found) = value.as_ref().and_then(|v| first_literal_escape(v, "")) else {
            return;
        };
        let (path, escape, ch) = found;
        let message = format!(
            "opm {opm} cannot load {what}: \"unmarshal error: invalid character '{ch}' in string escape code\"; the string at {path} holds the text {escape} literally, which opm v1.18 to v1.26 rewrite to {ch} before decoding (fixed in opm v1.27.0, operator-registry #1089), and the first such blob fails the whole catalog. Build on an opm v1.27 or later base image, or keep the text out of the catalog (for an alm-examples annotation, write the character {ch} itself)"
        );
        let d = Diagnostic::new(Rule::CatalogOpmLoad, message);
        out.push(if origin.file.is_empty() {
            d
        } else {
            d.at(origin.file.clone(), origin.line.max(1))
        });
    };
    // The typed blob as the JSON value opm decodes (serializing it cannot fail in practice; a
    // failure only skips the blob).
    fn to_value<T: Serialize>(v: &T) -> Option<Value> {
        serde_json::to_value(v).ok()
    }
    for p in &cfg.packages {
        blob(
            format!("{SCHEMA_PACKAGE} {:?}", p.name),
            &p.origin,
            to_value(p),
        );
    }
    for c in &cfg.channels {
        blob(
            format!("{SCHEMA_CHANNEL} {:?} of package {:?}", c.name, c.package),
            &c.origin,
            to_value(c),
        );
    }
    for b in &cfg.bundles {
        blob(
            format!("{SCHEMA_BUNDLE} {:?}", b.name),
            &b.origin,
            to_value(b),
        );
    }
    for d in &cfg.deprecations {
        blob(
            format!("{SCHEMA_DEPRECATIONS} of package {:?}", d.package),
            &d.origin,
            to_value(d),
        );
    }
    for m in &cfg.others {
        blob(
            format!("the {} blob {:?}", m.schema, m.name),
            &m.origin,
            serde_json::from_str(m.blob.get()).ok(),
        );
    }
    out
}

/// The first string (key or value, keys in Go's sorted order, as the JSON opm decodes lists
/// them) holding one of [`REWRITTEN`] literally: its JSON path, the text, and the character the
/// old loader makes of it.
fn first_literal_escape(v: &Value, path: &str) -> Option<(String, &'static str, char)> {
    match v {
        Value::String(s) => hit(s).map(|(e, c)| (display(path), e, c)),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, item)| first_literal_escape(item, &format!("{path}[{i}]"))),
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            keys.into_iter().find_map(|k| {
                let here = format!("{path}.{k}");
                if let Some((e, c)) = hit(k) {
                    return Some((format!("the key {}", display(&here)), e, c));
                }
                first_literal_escape(&map[k], &here)
            })
        }
        _ => None,
    }
}

/// The escape text that comes first in `s`.
fn hit(s: &str) -> Option<(&'static str, char)> {
    REWRITTEN
        .iter()
        .filter_map(|&(e, c)| s.find(e).map(|at| (at, e, c)))
        .min_by_key(|&(at, _, _)| at)
        .map(|(_, e, c)| (e, c))
}

fn display(path: &str) -> String {
    if path.is_empty() {
        "the blob".to_string()
    } else {
        path.trim_start_matches('.').to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finds_literal_escapes_not_characters() {
        // `<` itself is fine: the old loader's rewrite only breaks the six-character text.
        assert_eq!(first_literal_escape(&json!({"a": "x<y>&"}), ""), None);
        let v = json!({"properties": [{"value": {"annotations": {"alm-examples": "[{\"u\": \"a\\u003cb\"}]"}}}]});
        let (path, e, c) = first_literal_escape(&v, "").unwrap();
        assert_eq!(path, "properties[0].value.annotations.alm-examples");
        assert_eq!((e, c), ("\\u003c", '<'));
        // The first in the text wins.
        assert_eq!(hit("a\\u0026b\\u003e"), Some(("\\u0026", '&')));
    }

    #[test]
    fn only_the_releases_with_the_rewrite() {
        assert!(rewrites_escapes(OpmCompat::new(1, 26)));
        assert!(!rewrites_escapes(OpmCompat::new(1, 27)));
        assert!(!rewrites_escapes(OpmCompat::new(1, 28)));
        assert!(!rewrites_escapes(OpmCompat::NEWEST));
    }
}
