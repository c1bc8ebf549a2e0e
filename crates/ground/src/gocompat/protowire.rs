//! `google.protobuf.Struct` from JSON, encoded as protobuf-go's
//! `proto.MarshalOptions{Deterministic: true}` encodes it.
//!
//! Why: opm's pogreb serve cache (v1.69+) stores each blob of a non-OLM schema as
//! `structpb.Struct` (parsed with protojson, so every number is a double), and the cache's digest
//! covers those bytes. prost's own map encoding differs from protobuf-go's in one way that
//! matters here (it leaves out an empty key or an empty value inside a map entry; protobuf-go
//! always writes both), so the few messages involved are written by hand.

use serde_json::Value;

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn len_field(out: &mut Vec<u8>, tag: u8, bytes: &[u8]) {
    out.push(tag);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// A `google.protobuf.Value`.
fn value(v: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    match v {
        Value::Null => out.extend_from_slice(&[0x08, 0x00]),
        Value::Bool(b) => out.extend_from_slice(&[0x20, u8::from(*b)]),
        Value::Number(n) => {
            out.push(0x11);
            out.extend_from_slice(&n.as_f64().unwrap_or(0.0).to_le_bytes());
        }
        Value::String(s) => len_field(&mut out, 0x1a, s.as_bytes()),
        Value::Array(items) => {
            let mut list = Vec::new();
            for i in items {
                len_field(&mut list, 0x0a, &value(i));
            }
            len_field(&mut out, 0x32, &list);
        }
        Value::Object(map) => len_field(&mut out, 0x2a, &structpb(map)),
    }
    out
}

/// A `google.protobuf.Struct` of `map` (entries sorted by key bytes, as deterministic
/// marshalling sorts them).
pub fn structpb(map: &serde_json::Map<String, Value>) -> Vec<u8> {
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort();
    let mut out = Vec::new();
    for k in keys {
        let mut entry = Vec::new();
        len_field(&mut entry, 0x0a, k.as_bytes());
        len_field(&mut entry, 0x12, &value(&map[k]));
        len_field(&mut out, 0x0a, &entry);
    }
    out
}

/// A JSON object's `Struct` bytes, or why it is not one (protojson accepts only an object).
pub fn structpb_from_json(json: &[u8]) -> Result<Vec<u8>, String> {
    match serde_json::from_slice::<Value>(json) {
        Ok(Value::Object(map)) => Ok(structpb(&map)),
        Ok(_) => Err("not a JSON object".into()),
        Err(e) => Err(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes worked out from the protobuf encoding rules for `struct.proto` (field numbers:
    /// Struct.fields 1; Value null 1, number 2, string 3, bool 4, struct 5, list 6;
    /// ListValue.values 1) and protobuf-go's map entries (key 1 and value 2, both always
    /// written).
    #[test]
    fn struct_bytes_follow_protobuf_go() {
        let got = structpb_from_json(br#"{"b":true,"a":null,"":1}"#).unwrap();
        let mut want = vec![0x0a, 0x0d, 0x0a, 0x00, 0x12, 0x09, 0x11];
        want.extend_from_slice(&1f64.to_le_bytes());
        want.extend_from_slice(&[0x0a, 0x07, 0x0a, 0x01, b'a', 0x12, 0x02, 0x08, 0x00]);
        want.extend_from_slice(&[0x0a, 0x07, 0x0a, 0x01, b'b', 0x12, 0x02, 0x20, 0x01]);
        assert_eq!(got, want);
        let list = structpb_from_json(br#"{"l":["x",{}]}"#).unwrap();
        assert_eq!(
            list,
            [
                0x0a, 0x10, 0x0a, 0x01, b'l', 0x12, 0x0b, 0x32, 0x09, 0x0a, 0x03, 0x1a, 0x01, b'x',
                0x0a, 0x02, 0x2a, 0x00
            ]
        );
        assert!(structpb_from_json(b"[1]").is_err());
    }
}
