//! `bundle.Dockerfile`: the image recipe for `docker build` users, with one LABEL per annotation.
//!
//! opm writes only the six core labels and operator-sdk drops custom ones, so images built from
//! their Dockerfiles lose annotations (operator-sdk#4992, #5002; FIELD.md d.2). Here every
//! annotation becomes a LABEL in annotations.yaml order, and the COPY sources are relative to the
//! Dockerfile's own folder (the bundle root), unlike opm, which writes them relative to the
//! current directory (openshift/windows-machine-config-operator#158).

use super::error::ScaffoldError;
use crate::bundle::metadata::annotations::Entry;

/// The template, embedded so the binary needs no data files.
const TEMPLATE: &str = include_str!("../../../../scaffolds/bundle.Dockerfile");

/// How every Dockerfile init writes begins; an existing Dockerfile that does not begin this way
/// is the user's, and init will not replace it without `--force`. Kept short and stable so
/// Dockerfiles from older olmpack versions (whose comment may differ) are still recognised.
pub fn marker() -> &'static str {
    "# Written by `olmpack bundle init"
}

/// Renders the Dockerfile. `extra_copies` are folders (relative to the bundle root, no trailing
/// slash) copied to the same path in the image, such as `tests/scorecard`.
pub fn render(entries: &[Entry], extra_copies: &[String]) -> Result<String, ScaffoldError> {
    let mut labels = Vec::with_capacity(entries.len());
    for e in entries {
        if e.key.contains(['\n', '\r']) || e.value.contains(['\n', '\r']) {
            return Err(ScaffoldError::DockerfileValue { key: e.key.clone() });
        }
        labels.push(format!("LABEL {}={}", label_word(&e.key), quote(&e.value)));
    }
    let mut copies = vec![
        "COPY manifests /manifests/".to_string(),
        "COPY metadata /metadata/".to_string(),
    ];
    for dir in extra_copies {
        copies.push(format!("COPY {dir} /{dir}/"));
    }
    Ok(TEMPLATE
        .replace("{{labels}}", &labels.join("\n"))
        .replace("{{copies}}", &copies.join("\n")))
}

/// A LABEL key: bare when it has no character the Dockerfile parser treats specially.
fn label_word(key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '/' | '-' | '_'));
    if bare { key.to_string() } else { quote(key) }
}

/// A double-quoted Dockerfile word: inside double quotes the Dockerfile shell lexer treats `\`
/// before `"`, `$` or `\` as an escape and expands `$VAR`, so exactly those three are escaped.
pub fn quote(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        if matches!(c, '"' | '$' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_quoted_and_escaped() {
        let entries = vec![Entry {
            key: "k".into(),
            value: "a \"b\" $HOME \\".into(),
        }];
        let text = render(&entries, &[]).expect("renders");
        assert!(
            text.contains("LABEL k=\"a \\\"b\\\" \\$HOME \\\\\"\n"),
            "{text}"
        );
        assert!(text.starts_with(marker()));
        assert!(text.ends_with("COPY metadata /metadata/\n"));
    }

    #[test]
    fn line_breaks_are_refused() {
        let entries = vec![Entry {
            key: "k".into(),
            value: "a\nb".into(),
        }];
        assert!(render(&entries, &[]).is_err());
    }
}
