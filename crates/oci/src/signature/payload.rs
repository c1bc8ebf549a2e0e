//! The signed JSON payload both formats share (`{"critical": {...}, "optional": {...}}`), read
//! as strictly as containers/image reads it (`untrustedSignature.strictUnmarshalJSON` for
//! simple signing, `UntrustedSigstorePayload.strictUnmarshalJSON` for cosign): no duplicate
//! key anywhere (serde_json would keep the last one silently, so a payload could show one
//! digest to one reader and another to the next), no unknown member outside `optional`, every
//! required member present with its type, keys matched exactly (not case-insensitively, as
//! Go's plain `encoding/json` would).

use super::Rejection;
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// A JSON value read with duplicate object keys refused at every level.
struct NoDuplicates(Value);

impl<'de> Deserialize<'de> for NoDuplicates {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NoDupVisitor).map(NoDuplicates)
    }
}

struct NoDupVisitor;

impl<'de> Visitor<'de> for NoDupVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(NoDuplicates(v)) = seq.next_element()? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if out.contains_key(&key) {
                return Err(de::Error::custom(format!("duplicate key {key:?}")));
            }
            let NoDuplicates(v) = map.next_value()?;
            out.insert(key, v);
        }
        Ok(Value::Object(out))
    }
}

/// Parses `bytes` as JSON, refusing duplicate keys at any depth.
pub fn parse_no_duplicates(bytes: &[u8]) -> Result<Value, String> {
    serde_json::from_slice::<NoDuplicates>(bytes)
        .map(|v| v.0)
        .map_err(|e| e.to_string())
}

/// What a payload claims, once its shape is checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claims {
    /// `critical.image.docker-manifest-digest`.
    pub digest: String,
    /// `critical.identity.docker-reference`.
    pub identity: String,
}

/// Which of the two payload flavours is read: their `critical.type`, and whether `optional`
/// may be `null` (cosign writes `"optional":null`; containers/image's simple signing requires
/// an object).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavour {
    /// containers' simple signing (`atomic container signature`).
    Simple,
    /// cosign / sigstore (`cosign container image signature`).
    Cosign,
}

/// `critical.type` of a simple signing payload.
pub const SIMPLE_PAYLOAD_TYPE: &str = "atomic container signature";
/// `critical.type` of a cosign payload.
pub const COSIGN_PAYLOAD_TYPE: &str = "cosign container image signature";

impl Flavour {
    fn typ(self) -> &'static str {
        match self {
            Flavour::Simple => SIMPLE_PAYLOAD_TYPE,
            Flavour::Cosign => COSIGN_PAYLOAD_TYPE,
        }
    }
}

fn bad(why: String) -> Rejection {
    Rejection::Malformed(format!("payload: {why}"))
}

/// The members of `v` (named `what` in messages), which must be exactly `fields`.
fn exact<'a>(
    v: &'a Value,
    what: &str,
    fields: &[&str],
) -> Result<&'a Map<String, Value>, Rejection> {
    let obj = v
        .as_object()
        .ok_or_else(|| bad(format!("{what} is not a JSON object")))?;
    if let Some(extra) = obj.keys().find(|k| !fields.contains(&k.as_str())) {
        return Err(bad(format!("unknown member {extra:?} in {what}")));
    }
    if let Some(missing) = fields.iter().find(|f| !obj.contains_key(**f)) {
        return Err(bad(format!("{what} has no {missing:?} member")));
    }
    Ok(obj)
}

fn string<'a>(obj: &'a Map<String, Value>, key: &str, what: &str) -> Result<&'a str, Rejection> {
    obj.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| bad(format!("{what}.{key} is not a string")))
}

/// Parses and checks a payload as containers/image does; returns the JSON (for printing) and
/// the claims to check against the image.
pub fn parse(body: &[u8], flavour: Flavour) -> Result<(Value, Claims), Rejection> {
    let v = parse_no_duplicates(body).map_err(|e| bad(format!("not valid JSON: {e}")))?;
    let top = exact(&v, "the payload", &["critical", "optional"])?;
    let optional = &top["optional"];
    match optional {
        Value::Null if flavour == Flavour::Cosign => {}
        Value::Object(o) => {
            if let Some(c) = o.get("creator")
                && !c.is_string()
            {
                return Err(bad("optional.creator is not a string".into()));
            }
            if let Some(t) = o.get("timestamp") {
                let integral = t.is_i64()
                    || t.is_u64()
                    || t.as_f64()
                        .is_some_and(|f| f.fract() == 0.0 && f.is_finite());
                if !integral {
                    return Err(bad("optional.timestamp is not an integer".into()));
                }
            }
        }
        _ => return Err(bad("optional is not a JSON object".into())),
    }
    let critical = exact(&top["critical"], "critical", &["type", "image", "identity"])?;
    let typ = string(critical, "type", "critical")?;
    if typ != flavour.typ() {
        return Err(bad(format!(
            "critical.type is {typ:?}, expected {:?}",
            flavour.typ()
        )));
    }
    let image = exact(
        &critical["image"],
        "critical.image",
        &["docker-manifest-digest"],
    )?;
    let digest = string(image, "docker-manifest-digest", "critical.image")?;
    if !crate::reference::valid_digest(digest) {
        return Err(bad(format!(
            "critical.image.docker-manifest-digest {digest:?} is not a valid digest"
        )));
    }
    let identity = exact(
        &critical["identity"],
        "critical.identity",
        &["docker-reference"],
    )?;
    let reference = string(identity, "docker-reference", "critical.identity")?;
    let claims = Claims {
        digest: digest.to_string(),
        identity: reference.to_string(),
    };
    Ok((v, claims))
}

#[cfg(test)]
mod tests {
    use super::*;

    const D: &str = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

    fn valid() -> Value {
        serde_json::json!({
            "critical": {"type": "atomic container signature",
                         "image": {"docker-manifest-digest": D},
                         "identity": {"docker-reference": "reference#@!"}},
            "optional": {"creator": "CREATOR", "timestamp": 1484683104}
        })
    }

    fn at<'a>(v: &'a mut Value, path: &[&str]) -> &'a mut Map<String, Value> {
        let mut cur = v;
        for p in path {
            cur = &mut cur[*p];
        }
        cur.as_object_mut().expect("object")
    }

    /// containers/image's `TestUnmarshalJSON` (signature/simple_test.go), case by case.
    #[test]
    fn containers_image_unmarshal_cases() {
        let ok = serde_json::to_vec(&valid()).expect("json");
        assert!(parse(&ok, Flavour::Simple).is_ok());
        assert!(parse(b"&", Flavour::Simple).is_err());
        assert!(parse(b"1", Flavour::Simple).is_err());
        type Break = fn(&mut Value);
        let breaks: Vec<(&str, Break)> = vec![
            ("no critical", |v| drop(at(v, &[]).remove("critical"))),
            ("no optional", |v| drop(at(v, &[]).remove("optional"))),
            ("extra top", |v| {
                drop(at(v, &[]).insert("unexpected".into(), 1.into()))
            }),
            ("critical not object", |v| v["critical"] = 1.into()),
            ("optional not object", |v| v["optional"] = 1.into()),
            ("no type", |v| drop(at(v, &["critical"]).remove("type"))),
            ("no image", |v| drop(at(v, &["critical"]).remove("image"))),
            ("no identity", |v| {
                drop(at(v, &["critical"]).remove("identity"))
            }),
            ("extra critical", |v| {
                drop(at(v, &["critical"]).insert("unexpected".into(), 1.into()))
            }),
            ("type number", |v| v["critical"]["type"] = 1.into()),
            ("type other", |v| {
                v["critical"]["type"] = "unexpected".into()
            }),
            ("image number", |v| v["critical"]["image"] = 1.into()),
            ("no digest", |v| {
                drop(at(v, &["critical", "image"]).remove("docker-manifest-digest"))
            }),
            ("extra image", |v| {
                drop(at(v, &["critical", "image"]).insert("unexpected".into(), 1.into()))
            }),
            ("digest number", |v| {
                v["critical"]["image"]["docker-manifest-digest"] = 1.into()
            }),
            ("digest invalid", |v| {
                v["critical"]["image"]["docker-manifest-digest"] = "sha256:../..".into()
            }),
            ("identity number", |v| v["critical"]["identity"] = 1.into()),
            ("no reference", |v| {
                drop(at(v, &["critical", "identity"]).remove("docker-reference"))
            }),
            ("extra identity", |v| {
                drop(at(v, &["critical", "identity"]).insert("unexpected".into(), 1.into()))
            }),
            ("reference number", |v| {
                v["critical"]["identity"]["docker-reference"] = 1.into()
            }),
            ("creator number", |v| v["optional"]["creator"] = 1.into()),
            ("timestamp string", |v| {
                v["optional"]["timestamp"] = "unexpected".into()
            }),
            ("timestamp fraction", |v| {
                v["optional"]["timestamp"] = 0.5.into()
            }),
        ];
        for (name, f) in &breaks {
            let mut v = valid();
            f(&mut v);
            let bytes = serde_json::to_vec(&v).expect("json");
            assert!(
                parse(&bytes, Flavour::Simple).is_err(),
                "{name} must be refused"
            );
        }
        // Unknown members of optional are allowed and ignored; optional members may be missing.
        let mut v = valid();
        v["optional"]["unexpected"] = 1.into();
        assert!(parse(&serde_json::to_vec(&v).expect("json"), Flavour::Simple).is_ok());
        let mut v = valid();
        v["optional"] = serde_json::json!({});
        assert!(parse(&serde_json::to_vec(&v).expect("json"), Flavour::Simple).is_ok());
        assert_eq!(breaks.len(), 23);
    }

    #[test]
    fn duplicates_case_and_null_optional() {
        let dup = format!(
            r#"{{"critical":{{"type":"atomic container signature","image":{{"docker-manifest-digest":"{D}","docker-manifest-digest":"{D}"}},"identity":{{"docker-reference":"a/b:c"}}}},"optional":{{}}}}"#
        );
        let e = parse(dup.as_bytes(), Flavour::Simple).unwrap_err();
        assert!(e.to_string().contains("duplicate key"), "{e}");
        let top_dup = format!(
            r#"{{"critical":{{"type":"atomic container signature","image":{{"docker-manifest-digest":"{D}"}},"identity":{{"docker-reference":"a/b:c"}}}},"optional":{{}},"optional":{{}}}}"#
        );
        assert!(parse(top_dup.as_bytes(), Flavour::Simple).is_err());
        let upper = format!(
            r#"{{"Critical":{{"type":"atomic container signature","image":{{"docker-manifest-digest":"{D}"}},"identity":{{"docker-reference":"a/b:c"}}}},"optional":{{}}}}"#
        );
        assert!(parse(upper.as_bytes(), Flavour::Simple).is_err());
        let cosign_null = format!(
            r#"{{"critical":{{"identity":{{"docker-reference":"a/b"}},"image":{{"docker-manifest-digest":"{D}"}},"type":"cosign container image signature"}},"optional":null}}"#
        );
        assert!(parse(cosign_null.as_bytes(), Flavour::Cosign).is_ok());
        let simple_null = cosign_null.replace(
            "cosign container image signature",
            "atomic container signature",
        );
        assert!(parse(simple_null.as_bytes(), Flavour::Simple).is_err());
        let cosign_missing = cosign_null.replace(r#","optional":null"#, "");
        assert!(parse(cosign_missing.as_bytes(), Flavour::Cosign).is_err());
    }
}
