//! `check_required_fields`: the CSV fields OperatorHub needs, with the pipeline's validators
//! (operator-pipelines' `community/validations.py`) read on the YAML values PyYAML would give.

use super::super::finding::Finding;
use super::super::repo::Bundle;
use super::no_csv;
use super::schema::py_repr;
use crate::yaml::{Node, ScalarKind, Value};
use base64::Engine as _;

const ID: &str = "check_required_fields";

const CAPABILITIES: &[&str] = &[
    "Basic Install",
    "Seamless Upgrades",
    "Full Lifecycle",
    "Deep Insights",
    "Auto Pilot",
];

const CATEGORIES: &[&str] = &[
    "AI/Machine Learning",
    "Application Runtime",
    "Big Data",
    "Cloud Provider",
    "Developer Tools",
    "Database",
    "Drivers and plugins",
    "Integration & Delivery",
    "Logging & Tracing",
    "Modernization & Migration",
    "Monitoring",
    "Networking",
    "OpenShift Optional",
    "Security",
    "Storage",
    "Streaming & Messaging",
];

/// How one field is judged.
enum Rule {
    /// A regular expression matched at the start of `str(value)`.
    Pattern(&'static str),
    /// A validator of the value.
    Func(fn(&Node) -> bool),
}

/// (field path, validator, fatal) in the pipeline's order.
const FIELDS: &[(&str, Rule, bool)] = &[
    (
        "metadata.annotations.capabilities",
        Rule::Func(capabilities),
        false,
    ),
    (
        "metadata.annotations.categories",
        Rule::Func(categories),
        false,
    ),
    (
        "metadata.annotations.containerImage",
        Rule::Pattern(r"^([^/]+/){1,}[^/:]+:.+"),
        false,
    ),
    (
        "metadata.annotations.createdAt",
        Rule::Func(timestamp),
        false,
    ),
    (
        "metadata.annotations.repository",
        Rule::Pattern(r"^https?://.+"),
        false,
    ),
    (
        "metadata.annotations.support",
        Rule::Pattern(r"^(?s).{3,}"),
        false,
    ),
    (
        "metadata.annotations.description",
        Rule::Pattern(r"^(?s).{10,}"),
        false,
    ),
    ("spec.displayName", Rule::Pattern(r"^.{3,50}"), true),
    ("spec.description", Rule::Pattern(r"^(?s).{20,}"), true),
    ("spec.icon", Rule::Func(icon), true),
    ("spec.version", Rule::Func(semver_value), true),
    ("spec.maintainers", Rule::Func(maintainers), true),
    ("spec.provider.name", Rule::Pattern(r"^.{3,}"), true),
    ("spec.links", Rule::Func(links), true),
    ("spec.keywords", Rule::Func(list_of_strings), false),
];

/// Runs `check_required_fields` on a bundle's CSV.
pub fn check_required_fields(b: &Bundle, out: &mut Vec<Finding>) {
    let Some(csv) = b.csv.as_ref().filter(|c| c.node().is_some()) else {
        out.push(no_csv(ID, b));
        return;
    };
    for (field, rule, fatal) in FIELDS {
        let keys: Vec<&str> = field.split('.').collect();
        let value = csv.at(&keys).filter(|n| !n.is_null());
        let (ok, message) = match value {
            None => (false, format!("CSV does not define {field}")),
            Some(node) => {
                let ok = match rule {
                    Rule::Pattern(p) => regex::Regex::new(p)
                        .map(|re| re.is_match(&py_str_of(node)))
                        .unwrap_or(false),
                    Rule::Func(f) => f(node),
                };
                (ok, format!("CSV contains an invalid value for {field}"))
            }
        };
        if ok {
            continue;
        }
        let finding = if *fatal {
            Finding::error(ID, message)
        } else {
            Finding::warning(ID, message)
        };
        out.push(finding.at(&csv.file, csv.line_of(&keys)));
    }
}

/// Python's `str(value)`.
fn py_str_of(node: &Node) -> String {
    match &node.value {
        Value::Scalar(text, ScalarKind::Str) => text.to_string(),
        _ => py_repr(node),
    }
}

fn as_str(node: &Node) -> Option<&str> {
    node.as_str()
}

fn capabilities(node: &Node) -> bool {
    as_str(node).is_some_and(|s| CAPABILITIES.contains(&s))
}

fn categories(node: &Node) -> bool {
    py_str_of(node)
        .split(',')
        .all(|c| CATEGORIES.contains(&c.trim()))
}

/// PyYAML turns a plain scalar that looks like a timestamp into a date; the rest goes through
/// dateutil's `isoparse`: a date (`YYYY`, `YYYY-MM`, `YYYY-MM-DD`, `YYYYMMDD`), then optionally
/// `T` or a space and a time with an optional zone.
fn timestamp(node: &Node) -> bool {
    let text = py_str_of(node);
    isoparse(text.trim_end_matches(['\n']))
}

fn isoparse(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = |r: std::ops::Range<usize>| {
        b.get(r.clone())
            .is_some_and(|x| x.iter().all(u8::is_ascii_digit))
    };
    if !digits(0..4) {
        return false;
    }
    let mut i = 4;
    let date_ok = if b.get(4) == Some(&b'-') {
        if !digits(5..7) {
            return false;
        }
        i = 7;
        if b.get(7) == Some(&b'-') {
            if !digits(8..10) {
                return false;
            }
            i = 10;
        }
        true
    } else if digits(4..8) {
        i = 8;
        true
    } else {
        b.len() == 4
    };
    if !date_ok {
        return false;
    }
    if i == b.len() {
        return true;
    }
    if b[i] != b'T' && b[i] != b' ' {
        return false;
    }
    let time = &s[i + 1..];
    let (clock, _zone) = match time.find(['Z', 'z', '+', '-']) {
        Some(p) => (&time[..p], &time[p..]),
        None => (time, ""),
    };
    let clock = clock.split(['.', ',']).next().unwrap_or(clock);
    let parts: Vec<&str> = if clock.contains(':') {
        clock.split(':').collect()
    } else {
        clock
            .as_bytes()
            .chunks(2)
            .map(|c| std::str::from_utf8(c).unwrap_or("x"))
            .collect()
    };
    !parts.is_empty()
        && parts.len() <= 3
        && parts
            .iter()
            .all(|p| p.len() == 2 && p.bytes().all(|c| c.is_ascii_digit()))
}

fn semver_value(node: &Node) -> bool {
    as_str(node).is_some_and(|s| semver::Version::parse(s).is_ok())
}

fn list_of_dicts(node: &Node, fields: &[&str]) -> Option<usize> {
    let Value::Seq(items) = &node.value else {
        return None;
    };
    for item in items {
        let Value::Map(_) = &item.value else {
            return None;
        };
        for f in fields {
            item.get(f).and_then(Node::as_str)?;
        }
    }
    Some(items.len())
}

fn icon(node: &Node) -> bool {
    let Some(n) = list_of_dicts(node, &["base64data", "mediatype"]) else {
        return false;
    };
    if n < 1 {
        return false;
    }
    node.as_seq().unwrap_or(&[]).iter().all(|icon| {
        let data: String = icon
            .get("base64data")
            .and_then(Node::as_str)
            .unwrap_or("")
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        let media = icon.get("mediatype").and_then(Node::as_str).unwrap_or("");
        data.len() >= 4
            && base64::engine::general_purpose::STANDARD
                .decode(data.as_bytes())
                .is_ok()
            && ["image/png", "image/jpeg", "image/gif", "image/svg+xml"].contains(&media)
    })
}

fn maintainers(node: &Node) -> bool {
    list_of_dicts(node, &["name", "email"]).is_some_and(|n| n > 0)
}

fn links(node: &Node) -> bool {
    list_of_dicts(node, &["name", "url"]).is_some_and(|n| n > 0)
}

fn list_of_strings(node: &Node) -> bool {
    node.as_seq()
        .is_some_and(|items| !items.is_empty() && items.iter().all(|i| i.as_str().is_some()))
}

#[cfg(test)]
mod tests {
    use super::isoparse;

    #[test]
    fn isoparse_forms() {
        for ok in [
            "2021-01-01",
            "2021-01-01T10:00:00Z",
            "2021-01-01 10:00:00",
            "20210101T1000",
            "2021-01-01T10:00:00.123+02:00",
        ] {
            assert!(isoparse(ok), "{ok}");
        }
        for bad in ["yesterday", "2021/01/01", "01-01-2021", ""] {
            assert!(!isoparse(bad), "{bad}");
        }
    }
}
