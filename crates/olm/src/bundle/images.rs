//! The images a bundle's CSV names, computed once for every reader: rendering a bundle into a
//! catalog, listing what a mirror copies, building an sqlite index from package manifests, and
//! converting an sqlite index back. The rules are operator-registry's (`pkg/registry/csv.go`
//! `GetOperatorImages` and `GetRelatedImages`, `alpha/action/render.go` `getRelatedImages`,
//! `pkg/api/api_to_model.go` `getRelatedImages`), including how each matches keys:
//!
//! - the CSV object becomes a `registry.ClusterServiceVersion` through apimachinery's
//!   `FromUnstructured`, which looks `spec` up exactly;
//! - `relatedImages` is looked up exactly in a `map[string]*json.RawMessage`, its entries'
//!   `name` and `image` are struct fields, matched as Go's `encoding/json` matches them (exact
//!   first, else ignoring ASCII case);
//! - the install strategy and the deployments' pod templates are struct fields all the way
//!   down (`install`, `strategy`, `spec`, `deployments`, `template`, `containers`,
//!   `initContainers`, `image`): any case; images are listed only for the `deployment`
//!   strategy, the one OLM knows;
//! - an sqlite index's stored CSV is decoded into a struct, so there `spec` and
//!   `relatedImages` match in any case too ([`decode_related_images`]).
//!
//! The CSV may be a decoded JSON value (catalogs, sqlite, serve) or the positioned YAML of a
//! bundle folder: both are read through [`Tree`].

use crate::gocompat::json::kind_name as go_kind;
use crate::gocompat::marshal::get_ci;
use crate::yaml::Node;
use serde_json::Value;
use std::collections::{BTreeSet, HashSet};

/// The few reads the image rules need, over a JSON value or a YAML node.
pub trait Tree: Sized {
    /// A mapping member looked up exactly (a Go map lookup, `FromUnstructured`).
    fn member(&self, key: &str) -> Option<&Self>;
    /// A mapping member matched as `encoding/json` matches a struct field.
    fn field(&self, key: &str) -> Option<&Self>;
    /// The items of a sequence (none for any other shape).
    fn items(&self) -> &[Self];
    /// The text of a string (for YAML, of any scalar: how Kubernetes' string fields read
    /// `image: 1.0`); `None` for other shapes.
    fn text(&self) -> Option<&str>;
}

impl Tree for Value {
    fn member(&self, key: &str) -> Option<&Self> {
        self.get(key)
    }

    fn field(&self, key: &str) -> Option<&Self> {
        get_ci(self, key)
    }

    fn items(&self) -> &[Self] {
        self.as_array().map_or(&[], Vec::as_slice)
    }

    fn text(&self) -> Option<&str> {
        self.as_str()
    }
}

impl Tree for Node {
    fn member(&self, key: &str) -> Option<&Self> {
        self.get(key)
    }

    fn field(&self, key: &str) -> Option<&Self> {
        let entries = self.as_map()?;
        // The parser keeps the later of two equal keys (as go-yaml does), so only case matters.
        entries
            .iter()
            .find(|(k, _)| k.text == key)
            .or_else(|| {
                entries
                    .iter()
                    .rev()
                    .find(|(k, _)| k.text.eq_ignore_ascii_case(key))
            })
            .map(|(_, v)| v)
    }

    fn items(&self) -> &[Self] {
        self.as_seq().unwrap_or(&[])
    }

    fn text(&self) -> Option<&str> {
        self.scalar_text()
    }
}

/// One `relatedImages` entry, or an image added to the list (with an empty name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelatedImage {
    /// `name` (empty for added images).
    pub name: String,
    /// `image`, the pull spec.
    pub image: String,
}

fn field_text<T: Tree>(node: &T, key: &str) -> String {
    node.field(key)
        .and_then(Tree::text)
        .unwrap_or_default()
        .to_string()
}

/// `GetOperatorImages`: the images of the install deployments' containers and init containers
/// (an absent image is `""`, as Go's zero value), when the install strategy is `deployment`.
pub fn operator_images<T: Tree>(csv: &T) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let install = csv.member("spec").and_then(|s| s.field("install"));
    if install
        .and_then(|i| i.field("strategy"))
        .and_then(Tree::text)
        != Some("deployment")
    {
        return out;
    }
    let deployments = install
        .and_then(|i| i.field("spec"))
        .and_then(|s| s.field("deployments"));
    for d in deployments.map(Tree::items).unwrap_or_default() {
        let pod = d
            .field("spec")
            .and_then(|s| s.field("template"))
            .and_then(|t| t.field("spec"));
        for list in ["containers", "initContainers"] {
            for c in pod
                .and_then(|p| p.field(list))
                .map(Tree::items)
                .unwrap_or_default()
            {
                out.insert(field_text(c, "image"));
            }
        }
    }
    out
}

/// `GetRelatedImages`: `spec.relatedImages` as written (entries that are not mappings read as
/// empty ones).
pub fn related_images<T: Tree>(csv: &T) -> Vec<RelatedImage> {
    csv.member("spec")
        .and_then(|s| s.member("relatedImages"))
        .map(Tree::items)
        .unwrap_or_default()
        .iter()
        .map(|i| RelatedImage {
            name: field_text(i, "name"),
            image: field_text(i, "image"),
        })
        .collect()
}

/// `Bundle.Images`: every image the bundle needs to run (operator images and related images),
/// as the package-manifest loader stores them.
pub fn images<T: Tree>(csv: &T) -> BTreeSet<String> {
    let mut out = operator_images(csv);
    out.extend(related_images(csv).into_iter().map(|r| r.image));
    out
}

/// Render's `getRelatedImages`: the CSV's list as written, then the bundle image (when set),
/// then the operator images not listed yet, in image order (opm appends them in Go's random
/// map order).
pub fn render_related_images<T: Tree>(csv: &T, bundle_image: &str) -> Vec<RelatedImage> {
    let mut out = related_images(csv);
    let mut all: HashSet<String> = out.iter().map(|r| r.image.clone()).collect();
    if !bundle_image.is_empty() && !all.contains(bundle_image) {
        out.push(RelatedImage {
            name: String::new(),
            image: bundle_image.to_string(),
        });
    }
    for image in operator_images(csv) {
        if all.insert(image.clone()) {
            out.push(RelatedImage {
                name: String::new(),
                image,
            });
        }
    }
    out
}

/// The registry API's `getRelatedImages` (`pkg/api/api_to_model.go`): an sqlite index's stored
/// CSV JSON decoded into a struct, so `spec` and `relatedImages` match in any case, and a value
/// of the wrong kind fails as `json.Unmarshal` fails (the error is its text). An empty CSV has
/// no images.
pub fn decode_related_images(csv_json: &str) -> Result<Vec<RelatedImage>, String> {
    if csv_json.is_empty() {
        return Ok(Vec::new());
    }
    let v: Value = serde_json::from_str(csv_json).map_err(|e| e.to_string())?;
    if !(v.is_object() || v.is_null()) {
        return Err(format!(
            "json: cannot unmarshal {} into Go value of type api.csv",
            go_kind(&v)
        ));
    }
    let Some(spec) = get_ci(&v, "spec").filter(|s| !s.is_null()) else {
        return Ok(Vec::new());
    };
    if !spec.is_object() {
        return Err(format!(
            "json: cannot unmarshal {} into Go struct field csv.spec of type struct",
            go_kind(spec)
        ));
    }
    let Some(list) = get_ci(spec, "relatedImages").filter(|s| !s.is_null()) else {
        return Ok(Vec::new());
    };
    let wrong = |v: &Value| {
        format!(
            "json: cannot unmarshal {} into Go struct field .spec.relatedImages",
            go_kind(v)
        )
    };
    let string = |entry: &Value, name: &str| match get_ci(entry, name) {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(format!(
            "json: cannot unmarshal {} into Go struct field relatedImages.{name} of type string",
            go_kind(other)
        )),
    };
    let mut out = Vec::new();
    for entry in list.as_array().ok_or_else(|| wrong(list))? {
        if entry.is_null() {
            out.push(RelatedImage {
                name: String::new(),
                image: String::new(),
            });
            continue;
        }
        if !entry.is_object() {
            return Err(wrong(entry));
        }
        out.push(RelatedImage {
            name: string(entry, "name")?,
            image: string(entry, "image")?,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn csv_with(install: Value) -> Value {
        json!({"kind": "ClusterServiceVersion", "spec": {"install": install,
            "relatedImages": [{"name": "op", "image": "r/op:1"}, {"Image": "r/x:1"}]}})
    }

    #[test]
    fn operator_images_follow_gos_field_matching() {
        let csv = csv_with(json!({"Strategy": "deployment", "spec": {"Deployments": [
            {"spec": {"template": {"spec": {"containers": [{"image": "a"}, {"IMAGE": "b"}],
                "InitContainers": [{"image": "c"}, {}]}}}}
        ]}}));
        let listed: Vec<String> = operator_images(&csv).into_iter().collect();
        assert_eq!(listed, ["", "a", "b", "c"]);
        let other = csv_with(json!({"strategy": "other", "spec": {"deployments": [
            {"spec": {"template": {"spec": {"containers": [{"image": "a"}]}}}}]}}));
        assert!(operator_images(&other).is_empty());
        // `spec` itself is looked up exactly, as apimachinery's FromUnstructured does.
        let upper = json!({"Spec": {"install": {"strategy": "deployment"}, "relatedImages": [{"image": "z"}]}});
        assert!(images(&upper).is_empty());
    }

    #[test]
    fn related_images_key_is_exact_entries_any_case() {
        let csv = csv_with(json!({}));
        let related = related_images(&csv);
        assert_eq!(related[1].image, "r/x:1");
        let other_case = json!({"spec": {"RelatedImages": [{"image": "z"}]}});
        assert!(related_images(&other_case).is_empty());
        assert_eq!(
            decode_related_images(&other_case.to_string()).unwrap()[0].image,
            "z"
        );
    }

    #[test]
    fn yaml_and_json_read_the_same() {
        let text = "spec:\n  install:\n    strategy: deployment\n    spec:\n      deployments:\n      - spec:\n          template:\n            spec:\n              Containers:\n              - image: a\n  relatedImages:\n  - name: op\n    image: b\n";
        let node = crate::yaml::parse_stream(text).unwrap().remove(0).root;
        let json: Value = node.to_json();
        assert_eq!(images(&node), images(&json));
        assert_eq!(
            render_related_images(&node, "bundle"),
            render_related_images(&json, "bundle")
        );
    }

    #[test]
    fn render_lists_written_then_bundle_then_operator_images() {
        let csv = json!({"spec": {"install": {"strategy": "deployment", "spec": {"deployments": [
            {"spec": {"template": {"spec": {"containers": [{"image": "r/op:1"}, {"image": "bundle"}, {"image": "d"}]}}}}]}},
            "relatedImages": [{"name": "op", "image": "r/op:1"}]}});
        let listed: Vec<String> = render_related_images(&csv, "bundle")
            .into_iter()
            .map(|r| r.image)
            .collect();
        // The bundle image is not remembered as listed (opm does not add it to its set either).
        assert_eq!(listed, ["r/op:1", "bundle", "bundle", "d"]);
    }

    #[test]
    fn stored_csvs_fail_as_go_decodes_them() {
        assert_eq!(
            decode_related_images(r#"{"spec":{"relatedImages":[{"image":1}]}}"#).unwrap_err(),
            "json: cannot unmarshal number into Go struct field relatedImages.image of type string"
        );
        assert_eq!(
            decode_related_images(r#"{"spec":[]}"#).unwrap_err(),
            "json: cannot unmarshal array into Go struct field csv.spec of type struct"
        );
        assert!(decode_related_images("").unwrap().is_empty());
    }
}
