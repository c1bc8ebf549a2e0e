//! Visitors reading `owned[].kind` as `serde_json::Value::get` would find it: keys matched
//! exactly, the last of repeated keys wins, anything of another shape reads as absent.

use serde::Deserializer;
use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::collections::BTreeSet;
use std::fmt;

/// The visitor methods for the scalar values (booleans, numbers, null) that a visitor reads
/// as absent: `$value` for each.
macro_rules! other_values_are {
    ($ty:ty, $value:expr) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<$ty, E> {
            Ok($value)
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<$ty, E> {
            Ok($value)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<$ty, E> {
            Ok($value)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<$ty, E> {
            Ok($value)
        }
        fn visit_unit<E: de::Error>(self) -> Result<$ty, E> {
            Ok($value)
        }
    };
}

/// The kinds of `owned` (empty unless `crdDescriptions` is an object with a list there).
pub struct OwnedKinds(pub BTreeSet<String>);

impl<'de> de::Deserialize<'de> for OwnedKinds {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = OwnedKinds;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<OwnedKinds, A::Error> {
                let mut owned = Vec::new();
                while let Some(key) = map.next_key::<Key<OWNED>>()? {
                    if key.0 {
                        owned = map.next_value::<List>()?.0;
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(OwnedKinds(owned.into_iter().flatten().collect()))
            }
        }
        d.deserialize_map(V)
    }
}

const OWNED: u8 = 0;
const KIND: u8 = 1;

/// Whether a key is the one looked for: `owned` (crdDescriptions) or `kind` (an entry).
pub(super) struct Key<const WHICH: u8>(bool);

impl<'de, const WHICH: u8> de::Deserialize<'de> for Key<WHICH> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<const WHICH: u8>;
        impl<const WHICH: u8> Visitor<'_> for V<WHICH> {
            type Value = Key<WHICH>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<WHICH>, E> {
                let wanted = if WHICH == OWNED { "owned" } else { "kind" };
                Ok(Key(v == wanted))
            }
        }
        d.deserialize_str(V::<WHICH>)
    }
}

/// `owned`: each entry's `kind` when it is a string; empty when not a list.
pub(super) struct List(Vec<Option<String>>);

impl<'de> de::Deserialize<'de> for List {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = List;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<List, A::Error> {
                let mut out = Vec::new();
                while let Some(Entry(kind)) = seq.next_element::<Entry>()? {
                    out.push(kind);
                }
                Ok(List(out))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<List, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(List(Vec::new()))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<List, E> {
                Ok(List(Vec::new()))
            }
            other_values_are!(List, List(Vec::new()));
        }
        d.deserialize_any(V)
    }
}

/// One `owned` entry: its `kind` when it is an object whose `kind` is a string.
pub(super) struct Entry(Option<String>);

impl<'de> de::Deserialize<'de> for Entry {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Entry;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entry, A::Error> {
                let mut kind = None;
                while let Some(key) = map.next_key::<Key<KIND>>()? {
                    if key.0 {
                        kind = map.next_value::<Scalar>()?.0;
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(Entry(kind))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Entry, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Entry(None))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Entry, E> {
                Ok(Entry(None))
            }
            other_values_are!(Entry, Entry(None));
        }
        d.deserialize_any(V)
    }
}

/// A `kind` value: the string, or `None` for any other value (skipped).
pub(super) struct Scalar(Option<String>);

impl<'de> de::Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Scalar;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Scalar, E> {
                Ok(Scalar(Some(v.to_string())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Scalar, E> {
                Ok(Scalar(Some(v)))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Scalar, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Scalar(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Scalar, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Scalar(None))
            }
            other_values_are!(Scalar, Scalar(None));
        }
        d.deserialize_any(V)
    }
}
