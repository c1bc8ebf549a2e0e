//! Reading the JSON answers tests check: registry listings (`tags`, `repositories`) and the
//! fields of olmpack's `-o json` reports hold arrays of strings, read the same way everywhere.

use serde_json::Value;

/// The strings of the JSON array `v`, into any collection (a `Vec` keeps the order, a set
/// sorts); none when `v` is absent or not an array, so a missing listing compares as empty.
pub fn strings<C: FromIterator<String>>(v: &Value) -> C {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(String::from))
        .collect()
}
