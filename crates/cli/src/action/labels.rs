//! `--label KEY=VALUE` of `bundle build` and `catalog build`: one spelling rule and one rule for
//! a key given twice, so both builds accept and refuse the same values.

use std::collections::BTreeMap;

/// A key given twice with different values (rather than one silently winning).
#[derive(Debug, thiserror::Error)]
#[error("--label {key} is given twice with different values ({first:?} and {second:?})")]
pub struct LabelConflict {
    /// The key.
    pub key: String,
    /// Its first value.
    pub first: String,
    /// The value that contradicts it.
    pub second: String,
}

/// Splits `KEY=VALUE` (the key trimmed, the value kept as given); the command line's value
/// parser, so a bad spelling is a usage error before anything runs.
pub fn parse_label(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
        _ => Err(format!("expected KEY=VALUE, got {s:?}")),
    }
}

/// The `--label` pairs as a map; the same pair twice is fine, a key with two values is not.
pub fn label_map(pairs: &[(String, String)]) -> Result<BTreeMap<String, String>, LabelConflict> {
    let mut labels = BTreeMap::new();
    for (k, v) in pairs {
        if let Some(previous) = labels.insert(k.clone(), v.clone())
            && &previous != v
        {
            return Err(LabelConflict {
                key: k.clone(),
                first: previous,
                second: v.clone(),
            });
        }
    }
    Ok(labels)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_parse_and_conflict() {
        assert_eq!(parse_label(" a =b=c").unwrap(), ("a".into(), "b=c".into()));
        assert!(parse_label("=x").is_err() && parse_label("x").is_err());
        let same = [("a".into(), "1".into()), ("a".into(), "1".into())];
        assert_eq!(label_map(&same).unwrap().len(), 1);
        let clash = [("a".into(), "1".into()), ("a".into(), "2".into())];
        assert!(label_map(&clash).is_err());
    }
}
