//! How `generate-manifests.go` writes a render: objects sorted by kind, namespace and name, each
//! marshalled with `sigs.k8s.io/yaml` (JSON, then go-yaml v2 with sorted keys) into
//! `NN_<lowercase kind>_<name>.yaml`.

use super::RenderedObject;

/// Sorts as `orderByKindNamespaceName` (byte order of kind, then namespace, then name).
pub fn sort(objects: &mut [RenderedObject]) {
    objects.sort_by(|a, b| {
        a.kind
            .cmp(&b.kind)
            .then_with(|| a.namespace.cmp(&b.namespace))
            .then_with(|| a.name.cmp(&b.name))
    });
}

/// One object's YAML, as `sigs.k8s.io/yaml.Marshal` writes it.
pub fn to_yaml(object: &RenderedObject) -> Vec<u8> {
    let mut out = Vec::new();
    crate::gocompat::goyaml::emit::json_to_yaml(&mut out, &object.value);
    out
}

/// The file name `generate-manifests.go` gives the object at `index` of the sorted list.
pub fn file_name(index: usize, object: &RenderedObject) -> String {
    format!(
        "{index:02}_{}_{}.yaml",
        object.kind.to_lowercase(),
        object.name
    )
}

/// The whole render as one YAML stream (`---` between objects), for stdout.
pub fn yaml_stream(objects: &[RenderedObject]) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, o) in objects.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(b"---\n");
        }
        out.extend_from_slice(&to_yaml(o));
    }
    out
}

/// The whole render as a JSON `List` (`kubectl apply -f` reads it), 2-space indented.
pub fn json_list(objects: &[RenderedObject]) -> Vec<u8> {
    let list = serde_json::json!({
        "apiVersion": "v1",
        "kind": "List",
        "items": objects.iter().map(|o| o.value.clone()).collect::<Vec<_>>(),
    });
    let mut out = serde_json::to_vec_pretty(&list).unwrap_or_default();
    out.push(b'\n');
    out
}
