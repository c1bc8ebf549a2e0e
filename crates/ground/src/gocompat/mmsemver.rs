//! Masterminds/semver v3 constraints (`github.com/Masterminds/semver/v3`), as catalog-filter and
//! oc-mirror read a `versionRange`.
//!
//! Why not [`crate::semver_range`]: that module is blang's range grammar, OLM's `skipRange`. A
//! filter's `versionRange` is read by Masterminds, whose rules differ where it matters: a
//! constraint without a pre-release never matches a pre-release version (`>=1.0.0` does not
//! match `1.2.0-rc1`, while `>=1.0.0-0` does), partial versions fill with zeros (`>=3.11` is
//! `>=3.11.0`), `x`/`*` wildcards, `~`, `^`, hyphen ranges (`1.2 - 1.4.5`), `,` or a space for
//! AND and `||` for OR. Comparison ignores build metadata.

use semver::{Prerelease, Version};
use std::cmp::Ordering;

/// A parsed constraint: alternatives (`||`), each a list of comparators that must all hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Constraints {
    groups: Vec<Vec<Comparator>>,
    text: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Eq,
    Ne,
    Gt,
    Lt,
    Ge,
    Le,
    Tilde,
    Caret,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Comparator {
    op: Op,
    con: Version,
    dirty: bool,
    minor_dirty: bool,
    patch_dirty: bool,
}

/// Why a constraint does not parse (Masterminds' own wording where it has one).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("improper constraint: {0}")]
pub struct ConstraintError(pub String);

impl Constraints {
    /// Parses a constraint as Masterminds' `NewConstraint` does.
    pub fn parse(text: &str) -> Result<Constraints, ConstraintError> {
        let mut groups = Vec::new();
        for alt in text.split("||") {
            groups.push(parse_and(alt).map_err(|_| ConstraintError(text.trim().to_string()))?);
        }
        Ok(Constraints {
            groups,
            text: text.to_string(),
        })
    }

    /// Whether `v` satisfies the constraint.
    pub fn matches(&self, v: &Version) -> bool {
        self.groups.iter().any(|g| g.iter().all(|c| c.check(v)))
    }

    /// The one version the constraint admits when it is written as an exact version
    /// (`=V`, `V`, or `>=V <=V`), for catalog-filter v0.0.5's exact-version rule.
    pub fn exact(&self) -> Option<&Version> {
        let [group] = self.groups.as_slice() else {
            return None;
        };
        let clean = |c: &Comparator| !c.dirty;
        match group.as_slice() {
            [c] if c.op == Op::Eq && clean(c) => Some(&c.con),
            [a, b] if clean(a) && clean(b) && cmp(&a.con, &b.con) == Ordering::Equal => {
                match (a.op, b.op) {
                    (Op::Ge, Op::Le) | (Op::Le, Op::Ge) => Some(&a.con),
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

impl std::fmt::Display for Constraints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// Masterminds' `Version.Compare`: major, minor, patch, then pre-release; build ignored.
fn cmp(a: &Version, b: &Version) -> Ordering {
    (a.major, a.minor, a.patch)
        .cmp(&(b.major, b.minor, b.patch))
        .then_with(|| match (a.pre.is_empty(), b.pre.is_empty()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => a.pre.cmp(&b.pre),
        })
}

fn parse_and(text: &str) -> Result<Vec<Comparator>, ()> {
    let spaced = text.replace(',', " ");
    let tokens: Vec<&str> = spaced.split_whitespace().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let mut tok = tokens[i].to_string();
        // An operator written apart from its version: `>= 1.2`.
        if tok.chars().all(|c| "=!<>~^".contains(c)) {
            let next = tokens.get(i + 1).ok_or(())?;
            tok.push_str(next);
            i += 1;
        }
        // A hyphen range: `A - B`.
        if tokens.get(i + 1) == Some(&"-") {
            let hi = tokens.get(i + 2).ok_or(())?;
            out.push(comparator(&format!(">={tok}"))?);
            out.push(comparator(&format!("<={hi}"))?);
            i += 3;
            continue;
        }
        out.push(comparator(&tok)?);
        i += 1;
    }
    if out.is_empty() {
        // An empty constraint is `*`.
        out.push(comparator("*")?);
    }
    Ok(out)
}

fn is_x(s: &str) -> bool {
    matches!(s, "x" | "X" | "*")
}

fn comparator(tok: &str) -> Result<Comparator, ()> {
    let ops: [(&str, Op); 11] = [
        ("!=", Op::Ne),
        (">=", Op::Ge),
        ("=>", Op::Ge),
        ("<=", Op::Le),
        ("=<", Op::Le),
        ("~>", Op::Tilde),
        (">", Op::Gt),
        ("<", Op::Lt),
        ("=", Op::Eq),
        ("~", Op::Tilde),
        ("^", Op::Caret),
    ];
    let (op, rest) = ops
        .iter()
        .find_map(|(p, op)| tok.strip_prefix(p).map(|r| (*op, r)))
        .unwrap_or((Op::Eq, tok));
    let rest = rest.trim();
    let rest = rest.strip_prefix(['v', 'V']).unwrap_or(rest);
    // Split off build and pre-release.
    let (core_pre, build) = match rest.split_once('+') {
        Some((a, b)) => (a, Some(b)),
        None => (rest, None),
    };
    let (core, pre) = match core_pre.split_once('-') {
        Some((a, b)) => (a, Some(b)),
        None => (core_pre, None),
    };
    let parts: Vec<&str> = core.split('.').collect();
    if parts.is_empty() || parts.len() > 3 || parts.iter().any(|p| p.is_empty()) {
        return Err(());
    }
    let num = |s: &str| -> Result<u64, ()> {
        if s.chars().all(|c| c.is_ascii_digit()) {
            s.parse().map_err(|_| ())
        } else {
            Err(())
        }
    };
    let (mut dirty, mut minor_dirty, mut patch_dirty) = (false, false, false);
    let (major, minor, patch);
    if is_x(parts[0]) {
        dirty = true;
        (major, minor, patch) = (0, 0, 0);
    } else if parts.get(1).is_some_and(|p| is_x(p)) {
        dirty = true;
        minor_dirty = true;
        (major, minor, patch) = (num(parts[0])?, 0, 0);
    } else if parts.get(2).is_some_and(|p| is_x(p)) {
        dirty = true;
        patch_dirty = true;
        (major, minor, patch) = (num(parts[0])?, num(parts[1])?, 0);
    } else {
        major = num(parts[0])?;
        minor = parts.get(1).map(|p| num(p)).transpose()?.unwrap_or(0);
        patch = parts.get(2).map(|p| num(p)).transpose()?.unwrap_or(0);
    }
    let mut con = Version::new(major, minor, patch);
    if let Some(pre) = pre {
        con.pre = Prerelease::new(pre).map_err(|_| ())?;
    }
    if let Some(build) = build {
        con.build = semver::BuildMetadata::new(build).map_err(|_| ())?;
    }
    Ok(Comparator {
        op,
        con,
        dirty,
        minor_dirty,
        patch_dirty,
    })
}

impl Comparator {
    fn check(&self, v: &Version) -> bool {
        let c = &self.con;
        // A pre-release version only matches a constraint that names a pre-release.
        if !v.pre.is_empty() && c.pre.is_empty() {
            return false;
        }
        let ord = cmp(v, c);
        match self.op {
            Op::Eq => {
                if self.dirty {
                    self.tilde(v)
                } else {
                    ord == Ordering::Equal
                }
            }
            Op::Ne => {
                if self.dirty {
                    if c.major != v.major {
                        return true;
                    }
                    if c.minor != v.minor && !self.minor_dirty {
                        return true;
                    }
                    if self.minor_dirty {
                        return false;
                    }
                    if c.patch != v.patch && !self.patch_dirty {
                        return true;
                    }
                    return false;
                }
                ord != Ordering::Equal
            }
            Op::Gt => {
                if !self.dirty {
                    return ord == Ordering::Greater;
                }
                if v.major != c.major {
                    return v.major > c.major;
                }
                if self.minor_dirty {
                    return false;
                }
                if self.patch_dirty {
                    return v.minor > c.minor;
                }
                ord == Ordering::Greater
            }
            Op::Lt => ord == Ordering::Less,
            Op::Ge => ord != Ordering::Less,
            Op::Le => {
                if !self.dirty {
                    return ord != Ordering::Greater;
                }
                if v.major > c.major {
                    return false;
                }
                if v.major == c.major && v.minor > c.minor && !self.minor_dirty {
                    return false;
                }
                true
            }
            Op::Tilde => self.tilde(v),
            Op::Caret => {
                if ord == Ordering::Less {
                    return false;
                }
                if c.major > 0 || self.minor_dirty {
                    return v.major == c.major;
                }
                if v.major > 0 {
                    return false;
                }
                if c.minor > 0 || self.patch_dirty {
                    return v.minor == c.minor;
                }
                if v.minor > 0 {
                    return false;
                }
                c.patch == v.patch
            }
        }
    }

    fn tilde(&self, v: &Version) -> bool {
        let c = &self.con;
        if cmp(v, c) == Ordering::Less {
            return false;
        }
        if c.major == 0 && c.minor == 0 && c.patch == 0 && !self.minor_dirty && !self.patch_dirty {
            return true;
        }
        if v.major != c.major {
            return false;
        }
        if v.minor != c.minor && !self.minor_dirty {
            return false;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(c: &str, v: &str) -> bool {
        Constraints::parse(c)
            .unwrap()
            .matches(&Version::parse(v).unwrap())
    }

    #[test]
    fn ranges_and_prereleases() {
        assert!(m(">=1.47.1-5", "1.51.0-1"));
        assert!(!m(">=1.0.0", "1.2.0-rc1"));
        assert!(m(">=1.0.0-0", "1.2.0-rc1"));
        assert!(m(">=3.11", "3.11.0"));
        assert!(!m(">=3.11", "3.10.9"));
        assert!(m(">=1.34.1-5 <=1.42.0-5", "1.42.0-5"));
        assert!(!m(">=1.34.1-5 <=1.42.0-5", "1.42.0-5-0.1687199951.p"));
        assert!(m(">=1.34.1-5, <=1.42.0-5", "1.40.0-1"));
        assert!(m("<=0.8.0+0.1634606167.p", "0.8.0"));
        assert!(m("1.2 - 1.4.5", "1.4.5"));
        assert!(!m("1.2 - 1.4.5", "1.4.6"));
        assert!(m("~1.2.3", "1.2.9"));
        assert!(!m("~1.2.3", "1.3.0"));
        assert!(m("^1.2.3", "1.9.0"));
        assert!(!m("^0.2.3", "0.3.0"));
        assert!(m("1.2.x", "1.2.7"));
        assert!(m("<1.0.0 || >=2.0.0", "2.1.0"));
        assert!(!m("<1.0.0 || >=2.0.0", "1.5.0"));
        assert!(m(">= 1.2", "1.2.0"));
        assert!(m("!=1.2.3", "1.2.4"));
        assert!(Constraints::parse("something-isnt-right").is_err());
    }

    #[test]
    fn exact_versions() {
        let c = Constraints::parse(">=26.0.8-opr.1 <=26.0.8-opr.1").unwrap();
        assert_eq!(c.exact(), Some(&Version::parse("26.0.8-opr.1").unwrap()));
        assert!(
            Constraints::parse(">=1.0.0 <=1.0.1")
                .unwrap()
                .exact()
                .is_none()
        );
        assert!(Constraints::parse("=1.0.0").unwrap().exact().is_some());
        assert!(Constraints::parse(">=1.0.0").unwrap().exact().is_none());
    }
}
