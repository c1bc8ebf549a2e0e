//! OCP versions as the pipelines resolve them: `com.redhat.openshift.versions` read with Pyxis'
//! range semantics (`v4.12` = 4.12 and later, `v4.12-v4.14` a range, `=v4.14` that one only,
//! the legacy `v4.5,v4.6` = the first and later) against the catalogs a repository holds, and
//! the OCP-to-Kubernetes table operator-pipelines keeps for `minKubeVersion`. No network.

use crate::catalog::repo_layout::OcpVersion;

/// `vX.Y` (a `catalogs/` folder name) as numbers: the repository layout's reading
/// ([`OcpVersion::parse`]), as a pair the range arithmetic here compares.
pub fn catalog_version(name: &str) -> Option<(u64, u64)> {
    OcpVersion::parse(name).map(|v| (u64::from(v.major), u64::from(v.minor)))
}

/// `v4.12`, `4.12.3`, `"v4.12"` as (major, minor); `None` when it is not a version.
pub fn parse_major_minor(text: &str) -> Option<(u64, u64)> {
    let t = text.trim().trim_matches('"').trim_matches('\'');
    let t = t.strip_prefix('v').unwrap_or(t);
    let mut parts = t.split('.');
    let major = parts.next()?.trim().parse().ok()?;
    let minor = match parts.next() {
        Some(m) => m.trim().parse().ok()?,
        None => 0,
    };
    Some((major, minor))
}

/// The OCP versions (newest first) an annotation value selects among `known` (newest first), as
/// Pyxis answers `ocp_versions_range`; no annotation selects them all. A value that is not a
/// version selects none.
pub fn resolve(spec: Option<&str>, known: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let spec = spec
        .unwrap_or("")
        .trim()
        .trim_matches('"')
        .trim_matches('\'');
    if spec.is_empty() {
        return known.to_vec();
    }
    let pick = |f: &dyn Fn((u64, u64)) -> bool| known.iter().copied().filter(|v| f(*v)).collect();
    if let Some(exact) = spec.strip_prefix('=') {
        return match parse_major_minor(exact) {
            Some(want) => pick(&|v| v == want),
            None => Vec::new(),
        };
    }
    if let Some((lo, hi)) = spec.split_once('-') {
        return match (parse_major_minor(lo), parse_major_minor(hi)) {
            (Some(lo), Some(hi)) => pick(&|v| lo <= v && v <= hi),
            _ => Vec::new(),
        };
    }
    let first = spec.split(',').next().unwrap_or(spec);
    match parse_major_minor(first) {
        Some(min) => pick(&|v| v >= min),
        None => Vec::new(),
    }
}

/// A (major, minor) version pair.
pub type MajorMinor = (u64, u64);

/// operator-pipelines' `OCP_TO_K8S` (access.redhat.com/solutions/4870701), as of its HEAD.
pub const OCP_TO_K8S: &[(MajorMinor, MajorMinor)] = &[
    ((4, 1), (1, 13)),
    ((4, 2), (1, 14)),
    ((4, 3), (1, 16)),
    ((4, 4), (1, 17)),
    ((4, 5), (1, 18)),
    ((4, 6), (1, 19)),
    ((4, 7), (1, 20)),
    ((4, 8), (1, 21)),
    ((4, 9), (1, 22)),
    ((4, 10), (1, 23)),
    ((4, 11), (1, 24)),
    ((4, 12), (1, 25)),
    ((4, 13), (1, 26)),
    ((4, 14), (1, 27)),
    ((4, 15), (1, 28)),
    ((4, 16), (1, 29)),
    ((4, 17), (1, 30)),
];

/// The closest known OCP version at or below `v` (the oldest when `v` is older than all).
pub fn closest_known(v: (u64, u64)) -> (u64, u64) {
    OCP_TO_K8S
        .iter()
        .map(|(o, _)| *o)
        .filter(|o| *o <= v)
        .max()
        .unwrap_or(OCP_TO_K8S[0].0)
}

/// The Kubernetes version of an OCP version (of the closest known one when it is newer).
pub fn k8s_of(v: (u64, u64)) -> (u64, u64) {
    let known = closest_known(v);
    OCP_TO_K8S
        .iter()
        .find(|(o, _)| *o == known)
        .map(|(_, k)| *k)
        .unwrap_or((1, 13))
}

#[cfg(test)]
mod tests {
    use super::*;

    const KNOWN: &[(u64, u64)] = &[
        (4, 18),
        (4, 17),
        (4, 16),
        (4, 15),
        (4, 14),
        (4, 13),
        (4, 12),
    ];

    #[test]
    fn pyxis_ranges() {
        assert_eq!(
            resolve(Some("v4.16"), KNOWN),
            vec![(4, 18), (4, 17), (4, 16)]
        );
        assert_eq!(resolve(Some("v4.13-v4.14"), KNOWN), vec![(4, 14), (4, 13)]);
        assert_eq!(resolve(Some("=v4.15"), KNOWN), vec![(4, 15)]);
        assert_eq!(resolve(Some("\"v4.17\""), KNOWN), vec![(4, 18), (4, 17)]);
        assert_eq!(resolve(Some("v4.5,v4.6"), KNOWN).len(), 7);
        assert_eq!(resolve(None, KNOWN).len(), 7);
        assert!(resolve(Some("=v4.99"), KNOWN).is_empty());
        assert!(resolve(Some("latest"), KNOWN).is_empty());
    }

    #[test]
    fn kubernetes_of_ocp() {
        assert_eq!(k8s_of((4, 12)), (1, 25));
        assert_eq!(k8s_of((4, 21)), (1, 30));
        assert_eq!(closest_known((3, 11)), (4, 1));
    }
}
