//! `catalog validate --output-format opm-json|opm-yaml`: the structure `opm validate -o
//! json|yaml` prints (opm v1.68, #1971), for pipelines written against opm.
//!
//! opm's shape (`cmd/opm/validate/validate.go`): `{"passed": bool, "error": {"message": …}}`,
//! `error` left out when passed; JSON with `json.MarshalIndent(…, "", "  ")` (HTML characters
//! escaped), YAML with `sigs.k8s.io/yaml`; either followed by a newline (`fmt.Fprintln`). The
//! verdict is opm's (errors only; olmpack's warnings are checks opm does not make); the message
//! lists olmpack's error findings one per line (`file:line: message`), not opm's error tree.

use crate::findings::{Report, Severity};
use serde_json::{Map, Value};

/// opm's result object for one catalog folder.
pub fn result(report: &Report) -> Value {
    let errors: Vec<String> = report
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| match (&d.file, d.line) {
            (Some(f), Some(l)) => format!("{f}:{l}: {}", d.message),
            (Some(f), None) => format!("{f}: {}", d.message),
            _ => d.message.clone(),
        })
        .collect();
    let mut m = Map::new();
    m.insert("passed".into(), Value::Bool(errors.is_empty()));
    if !errors.is_empty() {
        let mut e = Map::new();
        e.insert("message".into(), Value::String(errors.join("\n")));
        m.insert("error".into(), Value::Object(e));
    }
    Value::Object(m)
}

/// `json.MarshalIndent(result, "", "  ")` and a newline (`passed` before `error`, as opm's
/// struct declares them).
pub fn json(result: &Value) -> String {
    let mut out = String::from("{\n  \"passed\": ");
    out.push_str(if result["passed"] == Value::Bool(true) {
        "true"
    } else {
        "false"
    });
    if let Some(msg) = result["error"]["message"].as_str() {
        out.push_str(",\n  \"error\": {\n    \"message\": ");
        crate::gocompat::marshal::write_str(&mut out, msg, true);
        out.push_str("\n  }");
    }
    out.push_str("\n}\n");
    out
}

/// `sigs.k8s.io/yaml.Marshal(result)` and a newline.
pub fn yaml(result: &Value) -> String {
    let mut out = Vec::new();
    crate::gocompat::goyaml::emit::json_to_yaml(&mut out, result);
    let mut s = String::from_utf8_lossy(&out).into_owned();
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The bytes opm's code gives for the two shapes (worked out from `validate.go`: struct
    /// field order, two-space indent, `Fprintln`'s newline, go-yaml's sorted keys).
    #[test]
    fn opm_bytes_for_passed_and_failed() {
        let ok = json!({"passed": true});
        assert_eq!(json(&ok), "{\n  \"passed\": true\n}\n");
        assert_eq!(yaml(&ok), "passed: true\n\n");
        let bad = json!({"passed": false, "error": {"message": "a <b> & c"}});
        assert_eq!(
            json(&bad),
            "{\n  \"passed\": false,\n  \"error\": {\n    \"message\": \"a \\u003cb\\u003e \\u0026 c\"\n  }\n}\n"
        );
        assert_eq!(
            yaml(&bad),
            "error:\n  message: a <b> & c\npassed: false\n\n"
        );
    }
}
