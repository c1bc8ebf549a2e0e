//! Beyond opm: the bundle metadata OLM shows and installs by (from `olm.csv.metadata` or the
//! ClusterServiceVersion among the bundle objects): field types, install modes,
//! minKubeVersion, alm-examples.

use super::*;

/// install modes, minKubeVersion, displayName, annotations, owned CRD kinds.
pub(super) type CsvView<'a> = (
    Option<&'a J>,
    Option<&'a J>,
    Option<&'a J>,
    Option<&'a str>,
    BTreeSet<String>,
);

/// Beyond opm: the bundle metadata OLM shows and installs by, from `olm.csv.metadata` or from
/// the ClusterServiceVersion among the bundle objects.
pub(super) fn check(info: &BundleInfo, out: &mut Vec<Diagnostic>) {
    let b = info.bundle;
    // Parsed only when read: the metadata's few members, or else the whole CSV.
    let fields: [Option<std::borrow::Cow<J>>; 3];
    let csv_value: Option<J>;
    // (install modes, minKubeVersion, displayName, alm-examples, owned CRD kinds)
    let (modes, min_kube, display, alm_examples, mut owned): CsvView =
        if let Some(m) = &info.csv_metadata {
            fields = [
                m.member("installModes"),
                m.member("minKubeVersion"),
                m.member("displayName"),
            ];
            let [modes, min_kube, display] = &fields;
            (
                modes.as_deref(),
                min_kube.as_deref(),
                display.as_deref(),
                m.alm_examples.as_deref(),
                raw_owned_kinds(m.members.get("crdDescriptions").copied()),
            )
        } else if let Some(csv) = {
            csv_value = b
                .csv_json
                .as_deref()
                .and_then(|t| serde_json::from_str::<J>(t).ok());
            &csv_value
        } {
            let spec = csv.get("spec");
            if let Some(s) = spec
                && !s.is_object()
            {
                out.push(at(
                    Rule::CatalogCsvFields,
                    &b.origin,
                    format!("bundle {:?}: the CSV's spec is not a mapping", b.name),
                ));
                return;
            }
            (
                spec.and_then(|s| s.get("installModes")),
                spec.and_then(|s| s.get("minKubeVersion")),
                spec.and_then(|s| s.get("displayName")),
                csv.get("metadata")
                    .and_then(|m| m.get("annotations"))
                    .and_then(|a| a.get("alm-examples"))
                    .and_then(J::as_str),
                owned_kinds(spec.and_then(|s| s.get("customresourcedefinitions"))),
            )
        } else {
            return;
        };
    let name = &b.name;
    if display.and_then(J::as_str).is_none_or(str::is_empty) {
        out.push(at(
            Rule::CatalogCsvFields,
            &b.origin,
            format!("bundle {name:?}: the CSV has no displayName: OperatorHub and the console list it by that name"),
        ));
    }
    match modes.and_then(J::as_array) {
        None => out.push(at(
            Rule::CatalogCsvInstallModes,
            &b.origin,
            format!("bundle {name:?}: the CSV has no installModes: OLM cannot install it; list the four modes with `supported`"),
        )),
        Some(list) => {
            let mut seen = HashSet::new();
            let mut any = false;
            for m in list {
                let t = m.get("type").and_then(J::as_str).unwrap_or("");
                if !matches!(t, "OwnNamespace" | "SingleNamespace" | "MultiNamespace" | "AllNamespaces") {
                    out.push(at(
                        Rule::CatalogCsvInstallModes,
                        &b.origin,
                        format!("bundle {name:?}: unknown install mode type {t:?}: use OwnNamespace, SingleNamespace, MultiNamespace or AllNamespaces"),
                    ));
                } else if !seen.insert(t) {
                    out.push(at(
                        Rule::CatalogCsvInstallModes,
                        &b.origin,
                        format!("bundle {name:?}: install mode {t:?} is listed twice"),
                    ));
                }
                any |= m.get("supported").and_then(J::as_bool).unwrap_or(false);
            }
            if !any {
                out.push(at(
                    Rule::CatalogCsvInstallModes,
                    &b.origin,
                    format!("bundle {name:?}: no install mode is supported: OLM cannot install it"),
                ));
            }
        }
    }
    if let Some(v) = min_kube.and_then(J::as_str)
        && !v.is_empty()
    {
        let t = v.trim().trim_start_matches('v');
        let padded = match t.matches('.').count() {
            0 => format!("{t}.0.0"),
            1 => format!("{t}.0"),
            _ => t.to_string(),
        };
        if semver::Version::parse(&padded).is_err() {
            out.push(at(
                Rule::CatalogCsvMinKubeVersion,
                &b.origin,
                format!(
                    "bundle {name:?}: minKubeVersion {v:?} is not a semantic version (e.g. 1.25.0)"
                ),
            ));
        }
    }
    owned.extend(info.gvk_kinds.iter().cloned());
    if let Some(text) = alm_examples
        && !text.trim().is_empty()
    {
        // Only each entry's kind is read: a one-pass reader, not a tree of the examples.
        match serde_json::from_str::<shapes::AlmExamples>(text) {
            Ok(shapes::AlmExamples(Some(kinds))) => {
                for kind in kinds {
                    match kind.as_deref() {
                        Some(k) if owned.contains(k) || owned.is_empty() => {}
                        Some(k) => out.push(at(
                            Rule::CatalogCsvAlmExamples,
                            &b.origin,
                            format!("bundle {name:?}: alm-examples has an example of kind {k:?}, which the bundle does not provide"),
                        )),
                        None => out.push(at(
                            Rule::CatalogCsvAlmExamples,
                            &b.origin,
                            format!("bundle {name:?}: an alm-examples entry has no kind"),
                        )),
                    }
                }
            }
            Ok(_) => out.push(at(
                Rule::CatalogCsvAlmExamples,
                &b.origin,
                format!("bundle {name:?}: alm-examples must be a JSON list of objects"),
            )),
            Err(e) => out.push(at(
                Rule::CatalogCsvAlmExamples,
                &b.origin,
                format!("bundle {name:?}: alm-examples is not valid JSON: {e}"),
            )),
        }
    }
}

/// [`owned_kinds`] of a raw `crdDescriptions`, in one pass that skips everything but the
/// `kind` of each `owned` entry.
pub(super) fn raw_owned_kinds(crds: Option<&RawValue>) -> BTreeSet<String> {
    crds.and_then(|c| serde_json::from_str::<kinds::OwnedKinds>(c.get()).ok())
        .map(|k| k.0)
        .unwrap_or_default()
}

pub(super) fn owned_kinds(crds: Option<&J>) -> BTreeSet<String> {
    crds.and_then(|c| c.get("owned"))
        .and_then(J::as_array)
        .map(|owned| {
            owned
                .iter()
                .filter_map(|o| o.get("kind").and_then(J::as_str).map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod owned_kinds_tests {
    use super::*;
    use crate::validate::catalog::properties::kind;

    /// The one-pass readers of `annotations` and `alm-examples` must read exactly what the parsed
    /// value gives, and fail exactly where parsing it fails, with the same message.
    #[test]
    fn one_pass_readers_agree_with_the_parsed_value() {
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let alm_cases = [
            r#"[{"kind":"A"},{"kind":5},{"Kind":"B"},[],"x",null,{"kind":"A","kind":"C"}]"#,
            r#"[{"kind":"A","kind":null},{"spec":{"kind":"B"}},{"kind":{"a":1}}]"#,
            r#"{"kind":"A"}"#,
            "12",
            r#""s""#,
            "null",
            "[1e400]",
            r#"["\ud800"]"#,
            r#"[{"k\ud800":1}]"#,
            "[1,]",
            "[",
            r#"[{"a":"b"}] x"#,
            "[\"a\u{1}\"]",
            deep.as_str(),
            "[-0.0, 18446744073709551616, true, false]",
        ];
        for case in alm_cases {
            let want = serde_json::from_str::<J>(case)
                .map(|v| match v {
                    J::Array(items) => Some(
                        items
                            .iter()
                            .map(|i| i.get("kind").and_then(J::as_str).map(str::to_string))
                            .collect::<Vec<_>>(),
                    ),
                    _ => None,
                })
                .map_err(|e| e.to_string());
            let got = serde_json::from_str::<shapes::AlmExamples>(case)
                .map(|a| a.0)
                .map_err(|e| e.to_string());
            assert_eq!(got, want, "{case}");
        }
        let deep_map = format!("{{\"a\":{deep}}}");
        let map_cases = [
            r#"{"a":"x","b":1,"a":2}"#,
            r#"{"b":true,"a":[1]}"#,
            r#"{"b":"x","a":"y","b":null,"c":{}}"#,
            r#"{"alm-examples":"[]","x":null}"#,
            r#"{"alm-examples":"[1]","alm-examples":"[2]"}"#,
            r#"{"alm-examples":5,"z":"q"}"#,
            r#"{"a":1e400}"#,
            r#"{"a":"\ud800"}"#,
            "[1]",
            "\"s\"",
            "3",
            "false",
            "{",
            deep_map.as_str(),
        ];
        for case in map_cases {
            let want = serde_json::from_str::<J>(case)
                .map(|v| match &v {
                    J::Object(map) => (
                        map.values()
                            .find(|x| !x.is_string() && !x.is_null())
                            .map(kind),
                        map.get("alm-examples")
                            .and_then(J::as_str)
                            .map(str::to_string),
                        "object",
                    ),
                    other => (None, None, kind(other)),
                })
                .map_err(|e| e.to_string());
            let got = serde_json::from_str::<shapes::StringMap>(case)
                .map(|m| match m {
                    shapes::StringMap::Object { bad, alm_examples } => {
                        (bad, alm_examples, "object")
                    }
                    shapes::StringMap::Other(k) => (None, None, k),
                })
                .map_err(|e| e.to_string());
            assert_eq!(got, want, "{case}");
        }
    }

    /// The one-pass reader of raw `crdDescriptions` must find exactly what reading the parsed
    /// value finds, whatever the shapes around `owned[].kind`.
    #[test]
    fn raw_and_parsed_readers_agree_on_every_shape() {
        let cases = [
            r#"{"owned":[{"kind":"A"},{"kind":"B","name":"b"}]}"#,
            r#"{"owned":[{"kind":"A","kind":"B"}]}"#,
            r#"{"owned":[{"Kind":"A"},{"kind":5},{"kind":null},{"kind":["A"]},{"kind":{"x":1}}]}"#,
            r#"{"owned":[1,true,null,"A",1.5,[],{}]}"#,
            r#"{"owned":{"kind":"A"}}"#,
            r#"{"owned":"A"}"#,
            r#"{"owned":null}"#,
            r#"{"owned":7,"required":[{"kind":"R"}]}"#,
            r#"{"owned":[{"kind":"A"}],"owned":[{"kind":"B"}]}"#,
            r#"[{"kind":"A"}]"#,
            r#""text""#,
            r#"12"#,
            r#"false"#,
            r#"null"#,
            r#"{}"#,
        ];
        for case in cases {
            let raw: Box<RawValue> = serde_json::from_str(case).expect("raw");
            let value: J = serde_json::from_str(case).expect("value");
            assert_eq!(
                raw_owned_kinds(Some(&raw)),
                owned_kinds(Some(&value)),
                "{case}"
            );
        }
    }
}
