//! A bundle's next release (CSV `spec.release`) and its new name, and both written into the
//! CSV's own text: what `bundle republish` needs from the bundle model, without registries.
//!
//! Why: republishing a fixed bundle of the same upstream version (operator-framework/api #454,
//! opm v1.62+) means a release that orders after the current one, the CSV renamed
//! `<package>-v<version>-<release>`, and nothing else of the file touched, so the user's diff is
//! two lines. The rules are the CSV CRD's and opm's (olm-docs #342): at most 20 characters of
//! dot-separated identifiers of `[0-9A-Za-z-]`, numbers without leading zeros, no build
//! metadata in `spec.version` beside a release; the name must still be a Kubernetes object name
//! and a label value (at most 63 characters), as OLM labels resources with it.
//!
//! The edit reuses the scalar edits of [`super::pin`]: each value is replaced at its text
//! position after checking the text there is the value read, and a missing `spec.release` is
//! inserted as one line after `spec.version`'s, in its indentation.

use super::pin::{
    EditError, end_line, indent_of, line_starts, line_text, newline_of, offset, scalar_span,
};
use crate::catalog::version_release::{RELEASE_MAX_LENGTH, compare_release, parse_release};
use crate::reference::dns1123_subdomain;
use crate::yaml::{Node, ScalarKind, Value};
use semver::{Prerelease, Version};
use std::cmp::Ordering;

/// The longest CSV name OLM can use as a label value.
pub const NAME_MAX_LENGTH: usize = 63;

/// How the next release is chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NextRelease {
    /// One more than the current: the last identifier incremented when it is a number, `.1`
    /// appended when it is not, `1` when there is no release yet.
    Bump,
    /// This release, which must order after the current one.
    Set(String),
}

/// What the CSV says now, with where each value is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Current {
    /// `metadata.name`.
    pub name: String,
    /// `spec.version`.
    pub version: Version,
    /// `spec.release` (empty when absent, null or empty).
    pub release: Prerelease,
    /// 1-based line of `metadata.name`'s value.
    pub name_line: usize,
    /// 1-based line of `spec.release`'s value, or of `spec.version`'s when absent.
    pub release_line: usize,
}

/// The republished identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    /// The new `spec.release`.
    pub release: Prerelease,
    /// The new `metadata.name`: `<package>-v<version>-<release>`.
    pub name: String,
}

/// Why a CSV cannot be republished as asked (each with the line it concerns).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct ReleaseError {
    /// 1-based line (0: the whole file).
    pub line: usize,
    /// What is refused and why.
    pub message: String,
}

fn refuse(line: usize, message: impl Into<String>) -> ReleaseError {
    ReleaseError {
        line,
        message: message.into(),
    }
}

/// Reads the name, version and release of the CSV whose root is `csv`.
pub fn current(csv: &Node) -> Result<Current, ReleaseError> {
    let name_node = csv
        .path(&["metadata", "name"])
        .ok_or_else(|| refuse(csv.line, "the CSV has no metadata.name"))?;
    let name = name_node
        .as_str()
        .ok_or_else(|| refuse(name_node.line, "metadata.name is not a string"))?;
    let version_node = csv
        .path(&["spec", "version"])
        .ok_or_else(|| refuse(csv.line, "the CSV has no spec.version"))?;
    let version_text = version_node
        .scalar_text()
        .ok_or_else(|| refuse(version_node.line, "spec.version is not a scalar"))?;
    let version = Version::parse(version_text).map_err(|e| {
        refuse(
            version_node.line,
            format!("spec.version {version_text:?} is not a semantic version: {e}"),
        )
    })?;
    let (release, release_line) = match csv.path(&["spec", "release"]) {
        None => (Prerelease::EMPTY, version_node.line),
        Some(n) if n.is_null() => (Prerelease::EMPTY, n.line),
        Some(n) => {
            // A number is read as its text (render does so too); the edit writes a string.
            let text = match &n.value {
                Value::Scalar(t, ScalarKind::Str | ScalarKind::Int) => t.as_str(),
                _ => {
                    return Err(refuse(
                        n.line,
                        format!(
                            "spec.release is a {}, not a string: fix it by hand first",
                            n.kind_name()
                        ),
                    ));
                }
            };
            let release = parse_release(text)
                .map_err(|why| refuse(n.line, format!("spec.release: {why}")))?;
            (release, n.line)
        }
    };
    Ok(Current {
        name: name.to_string(),
        version,
        release,
        name_line: name_node.line,
        release_line,
    })
}

/// The release after `current` as `next` asks, and the name it gives the bundle of `package`,
/// refused when it breaks the CRD's grammar, does not order after the current release, sits
/// beside build metadata, or makes a name Kubernetes or OLM cannot use.
pub fn plan(current: &Current, package: &str, next: &NextRelease) -> Result<Planned, ReleaseError> {
    let line = current.release_line;
    if !current.version.build.is_empty() {
        return Err(refuse(
            line,
            format!(
                "spec.version {} has build metadata: a release replaces it (remove \"+{}\" first; opm refuses both together)",
                current.version, current.version.build
            ),
        ));
    }
    let release = match next {
        NextRelease::Set(text) => {
            if text.is_empty() {
                return Err(refuse(0, "--release cannot be empty"));
            }
            parse_release(text).map_err(|why| refuse(0, format!("--release: {why}")))?
        }
        NextRelease::Bump => bump(&current.release).map_err(|why| refuse(line, why))?,
    };
    if compare_release(&release, &current.release) != Ordering::Greater {
        return Err(refuse(
            line,
            format!(
                "release {release} does not order after the current release {}: opm's substitutes template refuses a substitute that is not newer than its base",
                if current.release.is_empty() {
                    "(none)".to_string()
                } else {
                    current.release.to_string()
                }
            ),
        ));
    }
    let name = format!("{package}-v{}-{release}", current.version);
    if let Err(why) = dns1123_subdomain(&name) {
        return Err(refuse(
            current.name_line,
            format!("the new name {name:?} is not a Kubernetes object name: {why}"),
        ));
    }
    if name.len() > NAME_MAX_LENGTH {
        return Err(refuse(
            current.name_line,
            format!(
                "the new name {name:?} has {} characters: OLM uses it as a label value, at most {NAME_MAX_LENGTH}",
                name.len()
            ),
        ));
    }
    Ok(Planned { release, name })
}

/// The release one step after `current`.
fn bump(current: &Prerelease) -> Result<Prerelease, String> {
    if current.is_empty() {
        return parse_release("1");
    }
    let text = current.as_str();
    let (head, last) = match text.rsplit_once('.') {
        Some((h, l)) => (Some(h), l),
        None => (None, text),
    };
    let next = if last.bytes().all(|b| b.is_ascii_digit()) {
        let n: u64 = last
            .parse()
            .map_err(|_| format!("release {text}: {last} is not a number"))?;
        let n = n
            .checked_add(1)
            .ok_or_else(|| format!("release {text}: {last} cannot be incremented"))?;
        match head {
            Some(h) => format!("{h}.{n}"),
            None => n.to_string(),
        }
    } else {
        format!("{text}.1")
    };
    if next.len() > RELEASE_MAX_LENGTH {
        return Err(format!(
            "the release after {text} would be {next}, longer than {RELEASE_MAX_LENGTH} characters: give one with --release"
        ));
    }
    parse_release(&next)
}

/// `text` (holding the CSV whose root is `csv`) with `metadata.name` and `spec.release` set as
/// `planned` says; nothing else of the text changes. A release is always written as a string.
pub fn rewrite(text: &str, csv: &Node, planned: &Planned) -> Result<String, EditError> {
    let starts = line_starts(text);
    let err = |line: usize, message: String| EditError { line, message };
    let mut changes: Vec<(usize, usize, String)> = Vec::new();
    let mut replace = |node: &Node, what: &str, new: &str| -> Result<(), EditError> {
        let old = node
            .scalar_text()
            .ok_or_else(|| err(node.line, format!("{what} is not a scalar")))?;
        let at = offset(text, &starts, node.line, node.col)
            .ok_or_else(|| err(node.line, format!("no column {} on this line", node.col)))?;
        let (from, to) = scalar_span(text, at, old, node.line, what)?;
        let quoted = from > 0 && matches!(text.as_bytes().get(from - 1), Some(b'"' | b'\''));
        // A plain `1` would read back as a number: a new plain value is written in quotes.
        let new = if quoted || what == "metadata.name" {
            new.to_string()
        } else {
            format!("\"{new}\"")
        };
        changes.push((from, to, new));
        Ok(())
    };
    let name = csv
        .path(&["metadata", "name"])
        .ok_or_else(|| err(csv.line, "the CSV has no metadata.name".to_string()))?;
    replace(name, "metadata.name", &planned.name)?;
    let release = planned.release.as_str();
    match csv.path(&["spec", "release"]) {
        Some(node) if !node.is_null() || node.scalar_text().is_some_and(|t| !t.is_empty()) => {
            replace(node, "spec.release", release)?;
        }
        Some(node) => {
            return Err(err(
                node.line,
                "spec.release is written without a value: give it one or remove the key".into(),
            ));
        }
        None => changes.push(insert_after_version(text, &starts, csv, release)?),
    }
    super::pin::splice(text, changes).ok_or_else(|| err(0, "two edits overlap".into()))
}

/// A `release: "…"` line after the whole `spec.version` entry, in its indentation.
fn insert_after_version(
    text: &str,
    starts: &[usize],
    csv: &Node,
    release: &str,
) -> Result<(usize, usize, String), EditError> {
    let spec = csv.get("spec").and_then(Node::as_map).unwrap_or(&[]);
    let Some((key, value)) = spec.iter().find(|(k, _)| k.text == "version") else {
        return Err(EditError {
            line: csv.line,
            message: "the CSV has no spec.version to put spec.release beside".into(),
        });
    };
    let line = line_text(text, starts, key.line);
    let indent = key.col.saturating_sub(1);
    // Only a block mapping whose key starts its line takes a new line safely.
    if indent_of(line) != indent || !line[indent..].starts_with("version") {
        return Err(EditError {
            line: key.line,
            message: "spec is not a block mapping with version on its own line (flow style?); add spec.release by hand".into(),
        });
    }
    let last = end_line(text, starts, value, indent).max(key.line);
    let nl = newline_of(text);
    let new = format!("{}release: \"{release}\"{nl}", " ".repeat(indent));
    match starts.get(last) {
        Some(&at) => Ok((at, at, new)),
        None => {
            let lead = if text.ends_with('\n') { "" } else { nl };
            Ok((text.len(), text.len(), format!("{lead}{new}")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse_stream;

    const CSV: &str = "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: acme.v1.2.0 # the CSV\n  annotations: {a: b}\nspec:\n  displayName: Acme\n  version: 1.2.0\n  maturity: stable\n";

    fn root(text: &str) -> Node {
        parse_stream(text).expect("yaml").remove(0).root
    }

    #[test]
    fn bump_follows_the_last_identifier() {
        let b = |s: &str| {
            bump(&parse_release(s).expect("release"))
                .map(|r| r.to_string())
                .map_err(|e| e.contains("--release"))
        };
        assert_eq!(b(""), Ok("1".into()));
        assert_eq!(b("1"), Ok("2".into()));
        assert_eq!(b("9"), Ok("10".into()));
        assert_eq!(b("2.9"), Ok("2.10".into()));
        assert_eq!(b("alpha"), Ok("alpha.1".into()));
        assert_eq!(b("hotfix-a"), Ok("hotfix-a.1".into()));
        assert_eq!(b("aaaaaaaaaaaaaaaaaaa"), Err(true));
        assert!(bump(&parse_release("18446744073709551615").expect("max")).is_err());
    }

    #[test]
    fn plan_refuses_what_opm_and_the_crd_refuse() {
        let c = current(&root(CSV)).expect("current");
        assert_eq!(c.release, Prerelease::EMPTY);
        let p = plan(&c, "acme", &NextRelease::Bump).expect("plan");
        assert_eq!(p.name, "acme-v1.2.0-1");
        let set = |s: &str| plan(&c, "acme", &NextRelease::Set(s.into())).map(|p| p.name);
        assert_eq!(set("2.a-b"), Ok("acme-v1.2.0-2.a-b".into()));
        for bad in ["", "01", "1..2", "a_b", "+1", "123456789012345678901"] {
            assert!(set(bad).is_err(), "{bad:?} accepted");
        }
        // Upper case is a valid release but not a Kubernetes name.
        assert!(set("RC1").is_err_and(|e| e.message.contains("Kubernetes object name")));
        let long = "a".repeat(60);
        assert!(
            plan(&c, &long, &NextRelease::Bump).is_err_and(|e| e.message.contains("label value"))
        );
        let with = CSV.replace("  version: 1.2.0\n", "  version: 1.2.0\n  release: \"3\"\n");
        let c3 = current(&root(&with)).expect("current");
        assert!(
            plan(&c3, "acme", &NextRelease::Set("2".into()))
                .is_err_and(|e| e.message.contains("does not order after"))
        );
        assert!(plan(&c3, "acme", &NextRelease::Set("3".into())).is_err());
        let build = CSV.replace("version: 1.2.0", "version: 1.2.0+git");
        let cb = current(&root(&build)).expect("current");
        assert!(plan(&cb, "acme", &NextRelease::Bump).is_err_and(|e| e.message.contains("build")));
    }

    #[test]
    fn rewrite_touches_two_values_only() {
        let r = root(CSV);
        let p = plan(&current(&r).expect("c"), "acme", &NextRelease::Bump).expect("plan");
        let out = rewrite(CSV, &r, &p).expect("rewrite");
        assert_eq!(
            out,
            CSV.replace("acme.v1.2.0 #", "acme-v1.2.0-1 #")
                .replace("  version: 1.2.0\n", "  version: 1.2.0\n  release: \"1\"\n")
        );
        // Again on the result: the release is replaced in its quotes.
        let r2 = root(&out);
        let p2 = plan(&current(&r2).expect("c"), "acme", &NextRelease::Bump).expect("plan");
        let out2 = rewrite(&out, &r2, &p2).expect("rewrite");
        assert_eq!(
            out2,
            out.replace("acme-v1.2.0-1", "acme-v1.2.0-2")
                .replace("release: \"1\"", "release: \"2\"")
        );
        // A plain number is written quoted; CRLF line endings kept; version last in the file.
        let crlf = "metadata:\r\n  name: x\r\nspec:\r\n  release: 4\r\n  version: 1.0.0";
        let r3 = root(crlf);
        let p3 = plan(&current(&r3).expect("c"), "acme", &NextRelease::Bump).expect("p");
        assert_eq!(
            rewrite(crlf, &r3, &p3).expect("rewrite"),
            "metadata:\r\n  name: acme-v1.0.0-5\r\nspec:\r\n  release: \"5\"\r\n  version: 1.0.0"
        );
        let tail = "metadata:\n  name: x\nspec:\n  version: 1.0.0";
        let r4 = root(tail);
        let p4 = plan(&current(&r4).expect("c"), "a", &NextRelease::Bump).expect("p");
        assert_eq!(
            rewrite(tail, &r4, &p4).expect("rewrite"),
            "metadata:\n  name: a-v1.0.0-1\nspec:\n  version: 1.0.0\n  release: \"1\"\n"
        );
        // Flow style is refused with its line, not guessed.
        let flow = "metadata: {name: x}\nspec: {version: 1.0.0}\n";
        let r5 = root(flow);
        let p5 = plan(&current(&r5).expect("c"), "a", &NextRelease::Bump).expect("p");
        assert!(rewrite(flow, &r5, &p5).is_err_and(|e| e.line == 2));
    }
}
