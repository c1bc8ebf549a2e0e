//! Kubernetes name grammars (k8s.io/apimachinery `validation`) and image pullspecs, written once
//! so every rule words its complaint the same way.
//!
//! The grammars the catalog model's rules need too (DNS-1123 names, pull specs, strict semver)
//! live in [`crate::reference`], below both the models and the rule layer, and are re-exported
//! here so the bundle rules keep one vocabulary.

pub use olmpack_ground::reference::{dns1123_label, dns1123_subdomain, image_pullspec, semver};

/// RFC 1035 label (CRD version names): like an RFC 1123 label but starting with a letter.
pub fn dns1035_label(name: &str) -> Result<(), String> {
    dns1123_label(name)?;
    if name.starts_with(|c: char| c.is_ascii_lowercase()) {
        Ok(())
    } else {
        Err("a DNS-1035 label must start with a lowercase letter".into())
    }
}

/// Kubernetes label value: empty, or at most 63 alphanumerics, `-`, `_`, `.`, starting and ending
/// alphanumeric.
pub fn label_value(value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Ok(());
    }
    if value.len() > 63 {
        return Err(format!(
            "must be no more than 63 characters (it has {})",
            value.len()
        ));
    }
    let b = value.as_bytes();
    let ok = b
        .iter()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric();
    if ok {
        Ok(())
    } else {
        Err("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character".into())
    }
}

/// Kubernetes qualified name (label and annotation keys): `[prefix/]name`, the prefix a DNS-1123
/// subdomain, the name at most 63 alphanumerics, `-`, `_`, `.`, starting and ending alphanumeric.
pub fn qualified_name(key: &str) -> Result<(), String> {
    let (prefix, name) = match key.rsplit_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    if let Some(prefix) = prefix {
        if prefix.is_empty() {
            return Err("prefix part must be non-empty".into());
        }
        dns1123_subdomain(prefix).map_err(|e| format!("prefix part {e}"))?;
    }
    if name.is_empty() {
        return Err("name part must be non-empty".into());
    }
    if name.len() > 63 {
        return Err(format!(
            "name part must be no more than 63 characters (it has {})",
            name.len()
        ));
    }
    label_value(name).map_err(|_| {
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character".to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subdomains() {
        assert!(dns1123_subdomain("etcd-operator.v0.9.4").is_ok());
        assert!(dns1123_subdomain("Etcd").is_err());
        assert!(dns1123_subdomain("a..b").is_err());
        assert!(dns1123_subdomain("-a").is_err());
        assert!(dns1123_subdomain(&"a".repeat(254)).is_err());
    }

    #[test]
    fn labels() {
        assert!(dns1123_label("manager").is_ok());
        assert!(dns1123_label("a.b").is_err());
        assert!(dns1035_label("v1beta1").is_ok());
        assert!(dns1035_label("1v").is_err());
        assert!(label_value("v1.2.3_x").is_ok());
        assert!(label_value(&"a".repeat(64)).is_err());
    }

    #[test]
    fn pullspecs() {
        for good in [
            "busybox",
            "quay.io/org/app:v1.2.3",
            "registry.example.com:5000/a/b/c@sha256:2c1d2e7f1c3b4a5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5",
            "localhost/app:latest",
            "quay.io/org/app:1.0@sha256:2c1d2e7f1c3b4a5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5",
        ] {
            assert!(
                image_pullspec(good).is_ok(),
                "{good}: {:?}",
                image_pullspec(good)
            );
        }
        for bad in [
            "",
            "Quay.io/Org/App",
            "quay.io/org/App:v1",
            "app:",
            "app@sha256:abc",
            "a//b",
            " app",
        ] {
            assert!(image_pullspec(bad).is_err(), "{bad} should be rejected");
        }
    }
}
