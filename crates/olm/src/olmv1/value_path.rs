//! Writing into a JSON object by key path: what the generators and the deployment config both
//! do to the objects they shape, in a module below both.

use serde_json::{Map, Value};

/// Sets a nested key, creating (or replacing non-object) parents.
pub fn set_path(v: &mut Value, path: &[&str], value: Value) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut cur = v;
    for p in parents {
        if !cur.is_object() {
            *cur = Value::Object(Map::new());
        }
        let Some(m) = cur.as_object_mut() else {
            return;
        };
        cur = m
            .entry(p.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
        if cur.is_null() {
            *cur = Value::Object(Map::new());
        }
    }
    if !cur.is_object() {
        *cur = Value::Object(Map::new());
    }
    if let Some(m) = cur.as_object_mut() {
        m.insert(last.to_string(), value);
    }
}
