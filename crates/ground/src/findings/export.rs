//! Findings in the forms CI systems read: SARIF 2.1.0 (GitHub code scanning and other SARIF
//! viewers) and GitHub workflow annotations (`::error file=…,line=…::`). Generic over what
//! produced the findings, so `check` uses them today and the validate commands can later.

use serde_json::{Value, json};

/// Whether a finding blocks (`Error`) or informs (`Warning`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// SARIF `error`, GitHub `::error`.
    Error,
    /// SARIF `warning`, GitHub `::warning`.
    Warning,
}

/// One finding as the exporters see it.
#[derive(Debug, Clone)]
pub struct Item<'a> {
    /// The rule or check id.
    pub rule: &'a str,
    /// Error or warning.
    pub level: Level,
    /// The message.
    pub message: &'a str,
    /// The file, relative to the repository root with `/` separators.
    pub file: Option<&'a str>,
    /// 1-based line.
    pub line: Option<usize>,
}

/// A rule as SARIF's `tool.driver.rules` lists it.
#[derive(Debug, Clone)]
pub struct RuleInfo<'a> {
    /// The id findings name.
    pub id: &'a str,
    /// What to do about its findings (SARIF `help.text`).
    pub help: &'a str,
}

/// A SARIF 2.1.0 log of one run: every rule of `rules` and one result per item. Results
/// without a file get no location (SARIF allows it; GitHub then shows them on the repository).
pub fn sarif(
    tool: &str,
    version: &str,
    information_uri: &str,
    rules: &[RuleInfo<'_>],
    items: &[Item<'_>],
) -> Value {
    let rule_values: Vec<Value> = rules
        .iter()
        .map(|r| {
            json!({
                "id": r.id,
                "name": r.id,
                "shortDescription": {"text": r.id},
                "help": {"text": r.help},
            })
        })
        .collect();
    let results: Vec<Value> = items
        .iter()
        .map(|item| {
            let mut result = json!({
                "ruleId": item.rule,
                "level": match item.level { Level::Error => "error", Level::Warning => "warning" },
                "message": {"text": item.message},
            });
            if let Some(index) = rules.iter().position(|r| r.id == item.rule) {
                result["ruleIndex"] = json!(index);
            }
            if let Some(file) = item.file {
                let mut physical =
                    json!({"artifactLocation": {"uri": uri_path(file), "uriBaseId": "%SRCROOT%"}});
                if let Some(line) = item.line.filter(|l| *l > 0) {
                    physical["region"] = json!({"startLine": line});
                }
                result["locations"] = json!([{"physicalLocation": physical}]);
            }
            result
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": tool,
                "version": version,
                "informationUri": information_uri,
                "rules": rule_values,
            }},
            "results": results,
        }],
    })
}

/// One GitHub workflow command line for an item: `::error file=F,line=N,title=RULE::MESSAGE`,
/// with the property and data escapes GitHub's toolkit applies.
pub fn github_annotation(item: &Item<'_>) -> String {
    let kind = match item.level {
        Level::Error => "error",
        Level::Warning => "warning",
    };
    let mut props = Vec::new();
    if let Some(file) = item.file {
        props.push(format!("file={}", escape_property(file)));
        if let Some(line) = item.line {
            props.push(format!("line={line}"));
        }
    }
    props.push(format!("title={}", escape_property(item.rule)));
    format!(
        "::{kind} {}::{}",
        props.join(","),
        escape_data(item.message)
    )
}

fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// A relative path as a SARIF `uri` (a URI reference): every byte outside RFC 3986's unreserved
/// set and `/` percent-encoded, so a file named with a space, `#` or `%` stays one valid path.
fn uri_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotation_escapes_message_and_properties() {
        let item = Item {
            rule: "check_x",
            level: Level::Error,
            message: "50% done\nnext: a,b",
            file: Some("operators/a,b/ci.yaml"),
            line: Some(3),
        };
        assert_eq!(
            github_annotation(&item),
            "::error file=operators/a%2Cb/ci.yaml,line=3,title=check_x::50%25 done%0Anext: a,b"
        );
    }

    #[test]
    fn paths_become_uri_references() {
        assert_eq!(
            super::uri_path("operators/a b/#1%.yaml"),
            "operators/a%20b/%231%25.yaml"
        );
        assert_eq!(
            super::uri_path("catalogs/v4.18/op/catalog.yaml"),
            "catalogs/v4.18/op/catalog.yaml"
        );
    }
}
