//! Which opm release's output to reproduce (`--opm-compat`), for render and templates alike.
//!
//! Why: the public pipelines pin opm (v1.46.0 in most Makefiles) and checked-in catalogs were
//! written by several releases side by side. opm's template output changed between releases
//! (semver edges twice, package metadata copied in v1.65.0, the basic wrapper in v1.44.0), and so
//! did render's bundle objects (CATALOG.md D.3), so a drop-in replacement has to reproduce the
//! release a user names, or a Makefile switch would rewrite every catalog. One type, so a
//! version means the same thing to `catalog render`, `catalog template` and `catalog add`.

use std::fmt;
use std::str::FromStr;

/// An opm release, `MAJOR.MINOR` (the patch level never changed template output).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OpmCompat {
    /// Major version (1 for every opm release so far).
    pub major: u32,
    /// Minor version.
    pub minor: u32,
}

impl OpmCompat {
    /// The newest opm release whose behaviour olmpack reproduces (v1.73.0, CATALOG.md sources).
    pub const NEWEST: OpmCompat = OpmCompat::new(1, 73);
    /// The oldest release whose behaviour olmpack reproduces (v1.26.5, CATALOG.md's OR-1.26):
    /// an older `--opm-compat` is refused rather than silently treated as this one.
    pub const OLDEST: OpmCompat = OpmCompat::new(1, 26);

    /// A release from its numbers.
    pub const fn new(major: u32, minor: u32) -> OpmCompat {
        OpmCompat { major, minor }
    }

    /// Whether this release is `major.minor` or newer.
    pub fn at_least(self, major: u32, minor: u32) -> bool {
        self >= OpmCompat::new(major, minor)
    }

    /// Bundle objects kept in manifest order instead of sorted by value (opm before 1.28).
    pub fn objects_in_file_order(self) -> bool {
        !self.at_least(1, 28)
    }

    /// A bundle rendered with an image gets only `olm.csv.metadata` (opm 1.28 to 1.45).
    pub fn csv_metadata_for_images(self) -> bool {
        self.at_least(1, 28) && !self.at_least(1, 46)
    }
}

impl OpmCompat {
    /// The opm release an image reference names, for an opm image tagged by release:
    /// `quay.io/operator-framework/opm:v1.26.5` is 1.26. Why: `catalog build --base` runs that
    /// opm on the catalog, so what it cannot load must be said before building. `None` for any
    /// other reference (another repository name, a digest only, `latest`, a local layout), and
    /// no range check: the caller decides what a release means.
    pub fn named_by_image(reference: &str) -> Option<OpmCompat> {
        let r = reference.strip_prefix("docker://").unwrap_or(reference);
        if ["oci:", "oci-archive:", "docker-archive:"]
            .iter()
            .any(|p| r.starts_with(p))
        {
            return None;
        }
        let r = r.split_once('@').map_or(r, |(name, _)| name);
        let (repo, tag) = r.rsplit_once(':')?;
        if tag.contains('/') {
            return None; // a registry port, no tag
        }
        if repo.rsplit('/').next() != Some("opm") {
            return None;
        }
        let mut parts = tag.strip_prefix('v')?.split('.');
        let major = parts.next()?.parse().ok()?;
        let minor = parts.next()?.parse().ok()?;
        Some(OpmCompat::new(major, minor))
    }
}

impl Default for OpmCompat {
    fn default() -> Self {
        OpmCompat::NEWEST
    }
}

impl fmt::Display for OpmCompat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// Why a `--opm-compat` value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid --opm-compat {0:?}: olmpack reproduces opm {oldest} to {newest}; give MAJOR.MINOR in that range such as 1.46 (a leading v and a patch level are accepted)",
    oldest = OpmCompat::OLDEST,
    newest = OpmCompat::NEWEST
)]
pub struct CompatParseError(pub String);

impl FromStr for OpmCompat {
    type Err = CompatParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || CompatParseError(s.to_string());
        let t = s.trim();
        let t = t.strip_prefix('v').unwrap_or(t);
        let mut parts = t.split('.');
        let major = parts
            .next()
            .and_then(|p| p.parse::<u32>().ok())
            .ok_or_else(err)?;
        let minor = parts
            .next()
            .and_then(|p| p.parse::<u32>().ok())
            .ok_or_else(err)?;
        if let Some(patch) = parts.next()
            && patch.parse::<u32>().is_err()
        {
            return Err(err());
        }
        if parts.next().is_some() || major != 1 {
            return Err(err());
        }
        let compat = OpmCompat::new(major, minor);
        if compat < OpmCompat::OLDEST || compat > OpmCompat::NEWEST {
            return Err(err());
        }
        Ok(compat)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_common_spellings() {
        assert_eq!("1.46".parse(), Ok(OpmCompat::new(1, 46)));
        assert_eq!("v1.46.0".parse(), Ok(OpmCompat::new(1, 46)));
        assert_eq!("1.73.2".parse(), Ok(OpmCompat::new(1, 73)));
        assert!("1".parse::<OpmCompat>().is_err());
        assert!("1.x".parse::<OpmCompat>().is_err());
        assert!("1.2.3.4".parse::<OpmCompat>().is_err());
        assert_eq!("1.26".parse(), Ok(OpmCompat::OLDEST));
        assert!("1.10".parse::<OpmCompat>().is_err());
        assert!("1.74".parse::<OpmCompat>().is_err());
        let why = "1.10".parse::<OpmCompat>().unwrap_err().to_string();
        assert!(why.contains("1.26 to 1.73"), "{why}");
        assert!(OpmCompat::new(1, 65).at_least(1, 65));
        assert!(!OpmCompat::new(1, 46).at_least(1, 57));
        assert!("2.0".parse::<OpmCompat>().is_err());
    }

    #[test]
    fn render_forms_by_release() {
        let v = |s: &str| s.parse::<OpmCompat>().unwrap();
        assert!(v("v1.26.5").objects_in_file_order());
        assert!(!v("1.28").objects_in_file_order());
        assert!(v("1.28").csv_metadata_for_images());
        assert!(v("1.45").csv_metadata_for_images());
        assert!(!v("1.46").csv_metadata_for_images());
        assert!(!OpmCompat::default().objects_in_file_order());
        assert!(!OpmCompat::default().csv_metadata_for_images());
    }
}
