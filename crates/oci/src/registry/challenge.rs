//! `WWW-Authenticate` parsing (RFC 7235): a scheme followed by `key=value` or `key="quoted"`
//! parameters. Registries send `Basic realm="..."` or
//! `Bearer realm="...",service="...",scope="..."`; scope values contain commas and spaces, so a
//! naive split on `,` is wrong.

use std::collections::BTreeMap;

/// One parsed challenge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Challenge {
    /// The scheme, lowercased: `basic` or `bearer` (others are kept but unused).
    pub scheme: String,
    /// Parameters with lowercased keys.
    pub params: BTreeMap<String, String>,
}

impl Challenge {
    /// A parameter by (lowercase) name.
    pub fn param(&self, key: &str) -> Option<&str> {
        self.params.get(key).map(String::as_str)
    }
}

/// Parses every challenge in a header value; unknown tokens are skipped, never an error, since
/// the caller falls back to anonymous access when nothing usable is found.
pub fn parse(header: &str) -> Vec<Challenge> {
    let mut out: Vec<Challenge> = Vec::new();
    let b = header.as_bytes();
    let mut i = 0;
    let skip_ws = |i: &mut usize| {
        while *i < b.len() && (b[*i] == b' ' || b[*i] == b'\t' || b[*i] == b',') {
            *i += 1;
        }
    };
    loop {
        skip_ws(&mut i);
        if i >= b.len() {
            break;
        }
        // Read a token.
        let start = i;
        while i < b.len() && !matches!(b[i], b' ' | b'\t' | b',' | b'=') {
            i += 1;
        }
        let token = &header[start..i];
        let mut j = i;
        while j < b.len() && (b[j] == b' ' || b[j] == b'\t') {
            j += 1;
        }
        if j < b.len() && b[j] == b'=' && !out.is_empty() {
            // A parameter of the current challenge.
            i = j + 1;
            while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
                i += 1;
            }
            let value = if i < b.len() && b[i] == b'"' {
                i += 1;
                let mut v = String::new();
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' && i + 1 < b.len() {
                        i += 1;
                    }
                    // Push the whole UTF-8 character.
                    let ch_len = header[i..].chars().next().map_or(1, char::len_utf8);
                    v.push_str(&header[i..i + ch_len]);
                    i += ch_len;
                }
                i += 1; // closing quote
                v
            } else {
                let vs = i;
                while i < b.len() && b[i] != b',' {
                    i += 1;
                }
                header[vs..i].trim().to_string()
            };
            if let Some(last) = out.last_mut() {
                last.params.insert(token.to_ascii_lowercase(), value);
            }
        } else {
            out.push(Challenge {
                scheme: token.to_ascii_lowercase(),
                params: BTreeMap::new(),
            });
        }
    }
    out
}

/// The challenge to answer: Bearer if offered, else Basic.
pub fn pick(header: &str) -> Option<Challenge> {
    let all = parse(header);
    all.iter()
        .find(|c| c.scheme == "bearer")
        .or_else(|| all.iter().find(|c| c.scheme == "basic"))
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_with_scope_containing_spaces_and_commas() {
        let c = pick(r#"Bearer realm="http://127.0.0.1:1/token",service="test",scope="repository:a/b:pull,push repository:c:pull""#)
            .unwrap();
        assert_eq!(c.scheme, "bearer");
        assert_eq!(c.param("realm"), Some("http://127.0.0.1:1/token"));
        assert_eq!(c.param("service"), Some("test"));
        assert_eq!(
            c.param("scope"),
            Some("repository:a/b:pull,push repository:c:pull")
        );
    }

    #[test]
    fn basic_and_several_challenges() {
        let c = pick(r#"Basic realm="Registry Realm""#).unwrap();
        assert_eq!(
            (c.scheme.as_str(), c.param("realm")),
            ("basic", Some("Registry Realm"))
        );
        let all = parse(r#"Basic realm="x", Bearer realm="y", service=svc"#);
        assert_eq!(all.len(), 2);
        assert_eq!(all[1].param("service"), Some("svc"));
        assert_eq!(
            pick(r#"Basic realm="x", Bearer realm="y""#).unwrap().scheme,
            "bearer"
        );
        assert_eq!(
            parse(r#"Bearer realm="a\"b""#)[0].param("realm"),
            Some("a\"b")
        );
        assert!(pick("").is_none());
    }
}
