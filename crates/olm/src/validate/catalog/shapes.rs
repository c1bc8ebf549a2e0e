//! Typed one-pass readers for the two large JSON values the checks look into (an
//! `annotations` map and the `alm-examples` text): they accept and refuse exactly what parsing
//! into a `serde_json::Value` accepts and refuses (every value goes through `deserialize_any`,
//! so the same strings, numbers and nesting depth are checked and the same errors come out),
//! but keep only what the checks read instead of building the tree.

use serde::Deserializer;
use serde::de::{self, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// Any JSON value, checked as `serde_json::Value` reads it.
pub struct Checked;

impl<'de> de::Deserialize<'de> for Checked {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Checked;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any valid JSON value")
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Checked, E> {
                Ok(Checked)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Checked, E> {
                Ok(Checked)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Checked, E> {
                Ok(Checked)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Checked, E> {
                Ok(Checked)
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Checked, E> {
                Ok(Checked)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Checked, E> {
                Ok(Checked)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Checked, A::Error> {
                while seq.next_element::<Checked>()?.is_some() {}
                Ok(Checked)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Checked, A::Error> {
                while map.next_key::<Checked>()?.is_some() {
                    map.next_value::<Checked>()?;
                }
                Ok(Checked)
            }
        }
        d.deserialize_any(V)
    }
}

/// A value's Go kind, and its text when it is a string and the caller wants it.
pub(super) struct Member<const KEEP: bool>(&'static str, Option<String>);

impl<'de, const KEEP: bool> de::Deserialize<'de> for Member<KEEP> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<const KEEP: bool>;
        impl<'de, const KEEP: bool> Visitor<'de> for V<KEEP> {
            type Value = Member<KEEP>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any valid JSON value")
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Member<KEEP>, E> {
                Ok(Member("bool", None))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Member<KEEP>, E> {
                Ok(Member("number", None))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Member<KEEP>, E> {
                Ok(Member("number", None))
            }
            fn visit_f64<E: de::Error>(self, f: f64) -> Result<Member<KEEP>, E> {
                Ok(Member(if f.is_finite() { "number" } else { "null" }, None))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Member<KEEP>, E> {
                Ok(Member("string", KEEP.then(|| v.to_string())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Member<KEEP>, E> {
                Ok(Member("string", KEEP.then_some(v)))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Member<KEEP>, E> {
                Ok(Member("null", None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Member<KEEP>, A::Error> {
                while seq.next_element::<Checked>()?.is_some() {}
                Ok(Member("array", None))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Member<KEEP>, A::Error> {
                while map.next_key::<Checked>()?.is_some() {
                    map.next_value::<Checked>()?;
                }
                Ok(Member("object", None))
            }
        }
        d.deserialize_any(V::<KEEP>)
    }
}

/// A key as text.
pub(super) struct Key(String);

impl<'de> de::Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key, E> {
                Ok(Key(v.to_string()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Key, E> {
                Ok(Key(v))
            }
        }
        d.deserialize_str(V)
    }
}

/// A Go `map[string]string` member (`annotations`, `labels`) as the checks read it.
pub enum StringMap {
    /// An object: the kind of its first value that is neither a string nor null, in the
    /// order of a `serde_json::Map` (keys sorted, the last of a repeated key kept), and the
    /// `alm-examples` string.
    Object {
        /// Kind of the first wrongly typed value.
        bad: Option<&'static str>,
        /// `alm-examples` when it is a string.
        alm_examples: Option<String>,
    },
    /// Not an object: its kind.
    Other(&'static str),
}

impl<'de> de::Deserialize<'de> for StringMap {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = StringMap;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any valid JSON value")
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<StringMap, E> {
                Ok(StringMap::Other("bool"))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<StringMap, E> {
                Ok(StringMap::Other("number"))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<StringMap, E> {
                Ok(StringMap::Other("number"))
            }
            fn visit_f64<E: de::Error>(self, f: f64) -> Result<StringMap, E> {
                Ok(StringMap::Other(if f.is_finite() {
                    "number"
                } else {
                    "null"
                }))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<StringMap, E> {
                Ok(StringMap::Other("string"))
            }
            fn visit_unit<E: de::Error>(self) -> Result<StringMap, E> {
                Ok(StringMap::Other("null"))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<StringMap, A::Error> {
                while seq.next_element::<Checked>()?.is_some() {}
                Ok(StringMap::Other("array"))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<StringMap, A::Error> {
                // (key, kind, alm-examples text)
                let mut members: Vec<(String, &'static str, Option<String>)> = Vec::new();
                while let Some(Key(k)) = map.next_key::<Key>()? {
                    let Member(kind, text) = if k == "alm-examples" {
                        let Member(kind, text) = map.next_value::<Member<true>>()?;
                        Member::<false>(kind, text)
                    } else {
                        map.next_value::<Member<false>>()?
                    };
                    members.push((k, kind, text));
                }
                // `serde_json::Map`: sorted by key, the last of a repeated key kept.
                members.sort_by(|a, b| a.0.cmp(&b.0));
                members.dedup_by(|later, kept| {
                    if later.0 == kept.0 {
                        std::mem::swap(later, kept);
                        true
                    } else {
                        false
                    }
                });
                let bad = members
                    .iter()
                    .map(|m| m.1)
                    .find(|kind| !matches!(*kind, "string" | "null"));
                let alm_examples = members
                    .into_iter()
                    .find(|m| m.0 == "alm-examples")
                    .and_then(|m| m.2);
                Ok(StringMap::Object { bad, alm_examples })
            }
        }
        d.deserialize_any(V)
    }
}

/// `alm-examples` as the check reads it: a list, with the `kind` of each entry when that
/// entry is an object whose `kind` is a string; `None` when not a list.
pub struct AlmExamples(pub Option<Vec<Option<String>>>);

impl<'de> de::Deserialize<'de> for AlmExamples {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = AlmExamples;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any valid JSON value")
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<AlmExamples, E> {
                Ok(AlmExamples(None))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<AlmExamples, E> {
                Ok(AlmExamples(None))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<AlmExamples, E> {
                Ok(AlmExamples(None))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<AlmExamples, E> {
                Ok(AlmExamples(None))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<AlmExamples, E> {
                Ok(AlmExamples(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<AlmExamples, E> {
                Ok(AlmExamples(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<AlmExamples, A::Error> {
                while map.next_key::<Checked>()?.is_some() {
                    map.next_value::<Checked>()?;
                }
                Ok(AlmExamples(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<AlmExamples, A::Error> {
                let mut kinds = Vec::new();
                while let Some(Example(kind)) = seq.next_element::<Example>()? {
                    kinds.push(kind);
                }
                Ok(AlmExamples(Some(kinds)))
            }
        }
        d.deserialize_any(V)
    }
}

/// One example: its `kind` when it is an object whose (last) `kind` is a string.
pub(super) struct Example(Option<String>);

impl<'de> de::Deserialize<'de> for Example {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Example;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any valid JSON value")
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Example, E> {
                Ok(Example(None))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Example, E> {
                Ok(Example(None))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Example, E> {
                Ok(Example(None))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Example, E> {
                Ok(Example(None))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Example, E> {
                Ok(Example(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Example, E> {
                Ok(Example(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Example, A::Error> {
                while seq.next_element::<Checked>()?.is_some() {}
                Ok(Example(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Example, A::Error> {
                let mut kind = None;
                while let Some(Key(k)) = map.next_key::<Key>()? {
                    if k == "kind" {
                        kind = map.next_value::<Member<true>>()?.1;
                    } else {
                        map.next_value::<Checked>()?;
                    }
                }
                Ok(Example(kind))
            }
        }
        d.deserialize_any(V)
    }
}
