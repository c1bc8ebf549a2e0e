//! The `olm.template.substitutes` template (opm `alpha/template/substitutes`, v1.62+, with the
//! reuse guards of v1.66).
//!
//! Why it matters: a rebuilt bundle (same upstream version, new `release`) must take the place
//! of the bundle it fixes in every channel without the author hand-editing `replaces`/`skips`
//! across channels, which is error-prone. The template is plain FBC (`entries`) plus a list of
//! `substitutions: [{name: <bundle pullspec>, base: <bundle name>}]`. For each substitution,
//! in order: the pullspec is rendered; its bundle must order after the base by version then
//! release ([`crate::catalog::version_release`]); in every channel it gets a new entry taking
//! over the base's `replaces`/`skips`/`skipRange` plus `skips: [base]`, the base's entry loses
//! its edges, and every entry that replaced or skipped the base now points at the substitute;
//! the result must still be a valid catalog. A base or a substitute may appear only once.
//!
//! A cycle of substitutions cannot arise here: each substitute must order strictly after its
//! base, and a base must exist in the catalog when its substitution is processed.

use super::basic::{load_entries, wrapped_fields};
use super::{
    BundleRenderer, Located, ModelCheck, TemplateOptions, go_field, json_kind, render_all,
};
use crate::catalog::model::{Bundle, ChannelEntry, DeclarativeConfig};
use crate::catalog::version_release;
use crate::yaml::{Document, Node, ScalarKind, Value};
use std::collections::HashMap;

/// `schema` of a substitutes template.
pub const SCHEMA: &str = "olm.template.substitutes";

/// One `substitutions` item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Substitution {
    /// The substitute's bundle image pull spec.
    pub name: String,
    /// The name of the bundle it substitutes for.
    pub base: String,
    /// Where the item is in the template (1-based, 0 when unknown).
    pub line: usize,
}

/// Renders a substitutes template.
pub(crate) fn render(
    docs: &[Document],
    options: &TemplateOptions,
    renderer: &dyn BundleRenderer,
    check: ModelCheck,
) -> Result<DeclarativeConfig, Located> {
    let parse = |l: Located| {
        Located::new(
            l.line,
            format!("render: unable to parse template: {}", l.message),
        )
    };
    let (entries, substitutions) = parse_spec(docs.first().map(|d| &d.root)).map_err(parse)?;
    let mut cfg = load_entries(&entries).map_err(|l| {
        Located::new(
            l.line,
            format!(
                "render: unable to create declarative config from entries: {}",
                l.message
            ),
        )
    })?;
    if let Some(message) = check(&cfg) {
        return Err(Located::new(
            0,
            format!("render: entries are not valid FBC: {message}"),
        ));
    }

    // Render every distinct substitute once, in parallel; processing stays in template order.
    let mut refs: Vec<String> = Vec::new();
    for s in &substitutions {
        if !s.name.is_empty() && !refs.contains(&s.name) {
            refs.push(s.name.clone());
        }
    }
    let rendered: HashMap<String, Result<Vec<Bundle>, String>> = refs
        .iter()
        .cloned()
        .zip(
            render_all(&refs, renderer, options.jobs)
                .into_iter()
                .map(|r| r.map_err(|e| e.message)),
        )
        .collect();
    let lookup = |name: &str| -> Result<Vec<Bundle>, String> {
        rendered
            .get(name)
            .cloned()
            .unwrap_or_else(|| Err("not rendered".to_string()))
    };
    apply(&mut cfg, &substitutions, &lookup, check)?;
    Ok(cfg)
}

/// opm's `parseSpec`: the first document as `{schema, entries, substitutions}`, schema checked.
fn parse_spec(root: Option<&Node>) -> Result<(Vec<&Node>, Vec<Substitution>), Located> {
    let (entries, fields) = wrapped_fields(root, SCHEMA, "substitutes.SubstitutesTemplateData")?;
    Ok((entries, read_substitutions(fields)?))
}

/// What a template's first document holds: how many entries and the substitutions, or opm's
/// parse error (`template has unknown schema …`). For tools that inspect a template without
/// rendering it.
pub fn read_spec(root: Option<&Node>) -> Result<(usize, Vec<Substitution>), String> {
    parse_spec(root)
        .map(|(entries, subs)| (entries.len(), subs))
        .map_err(|l| l.message)
}

/// Applies the substitutions to a catalog in order, with opm's guards and messages (each
/// `render: …`, at the substitution's line). `render` gives a pull spec's bundles.
pub(crate) fn apply(
    cfg: &mut DeclarativeConfig,
    substitutions: &[Substitution],
    render: &dyn Fn(&str) -> Result<Vec<Bundle>, String>,
    check: ModelCheck,
) -> Result<(), Located> {
    let mut seen_bases: HashMap<&str, ()> = HashMap::new();
    let mut seen_candidates: HashMap<&str, &str> = HashMap::new();
    for s in substitutions {
        if seen_bases.insert(s.base.as_str(), ()).is_some() {
            return Err(Located::new(
                s.line,
                format!(
                    "render: cannot reuse the same substitution base {:?}",
                    s.base
                ),
            ));
        }
        if let Some(previous) = seen_candidates.get(s.name.as_str()) {
            return Err(Located::new(
                s.line,
                format!(
                    "render: cannot reuse the same substitution {:?} for different bases ({:?} and {:?})",
                    s.name, previous, s.base
                ),
            ));
        }
        seen_candidates.insert(s.name.as_str(), s.base.as_str());
        process(cfg, s, render, check).map_err(|message| {
            Located::new(
                s.line,
                format!(
                    "render: error processing substitution {:?} -> {:?}: {message}",
                    s.base, s.name
                ),
            )
        })?;
    }
    Ok(())
}

/// opm's `validateSubstitution` and `processSubstitution` for one substitution: `render` gives
/// a pull spec's bundles, `check` judges the result as opm's `ConvertToModel` would. On error
/// the catalog may be partly changed (as in opm); the template discards it.
pub fn process(
    cfg: &mut DeclarativeConfig,
    s: &Substitution,
    render: &dyn Fn(&str) -> Result<Vec<Bundle>, String>,
    check: ModelCheck,
) -> Result<(), String> {
    if s.name.is_empty() {
        return Err("substitution name cannot be empty".to_string());
    }
    if s.base.is_empty() {
        return Err("substitution base cannot be empty".to_string());
    }
    if s.name == s.base {
        return Err("substitution name and base cannot be the same".to_string());
    }
    let bundles = render(&s.name)
        .map_err(|e| format!("failed to render bundle image reference {:?}: {e}", s.name))?;
    let Some(substitute) = bundles.into_iter().next() else {
        return Err(format!(
            "rendered bundle image reference {:?} contains no bundles",
            s.name
        ));
    };
    let substitute_vr = version_release::of_bundle(&substitute).map_err(|e| {
        format!(
            "failed to get VersionRelease for substitute bundle {:?}: {e}",
            s.name
        )
    })?;
    let Some(base) = cfg.bundles.iter().find(|b| b.name == s.base) else {
        return Err(format!(
            "base bundle {:?} does not exist in catalog",
            s.base
        ));
    };
    let base_vr = version_release::of_bundle(base).map_err(|e| {
        format!(
            "failed to get VersionRelease for base bundle {:?}: {e}",
            s.base
        )
    })?;
    if base_vr.compare(&substitute_vr) != std::cmp::Ordering::Less {
        return Err(format!(
            "base bundle {:?} is not less than substitute bundle {:?}",
            s.base, s.name
        ));
    }

    for channel in &mut cfg.channels {
        let Some(entries) = channel.entries.as_mut() else {
            continue;
        };
        let original = entries.len();
        // The substitute takes over each base entry's edges, in reverse order as opm appends.
        let bases: Vec<usize> = (0..original)
            .filter(|&j| entries.get(j).is_some_and(|e| e.name == s.base))
            .collect();
        for &j in bases.iter().rev() {
            let Some(entry) = entries.get_mut(j) else {
                continue;
            };
            let mut skips = std::mem::take(&mut entry.skips);
            skips.push(s.base.clone());
            let new_entry = ChannelEntry {
                name: substitute.name.clone(),
                replaces: std::mem::take(&mut entry.replaces),
                skips,
                skip_range: std::mem::take(&mut entry.skip_range),
                origin: entry.origin.clone(),
            };
            entries.push(new_entry);
        }
        // Every original entry that pointed at the base now points at the substitute.
        for entry in entries.iter_mut().take(original) {
            if entry.replaces == s.base {
                entry.replaces = substitute.name.clone();
                entry.skips.push(s.base.clone());
            } else if entry.skips.contains(&s.base) {
                entry.skips.push(substitute.name.clone());
                entry.skips.retain(|k| k != &s.base);
            }
        }
    }
    cfg.bundles.push(substitute);
    if let Some(message) = check(cfg) {
        return Err(format!("resulting config is not valid FBC: {message}"));
    }
    Ok(())
}

/// Decodes `substitutions` as Go's `encoding/json` decodes `[]Substitute` (keys matched
/// case-insensitively, null as empty).
fn read_substitutions(fields: &[(crate::yaml::Key, Node)]) -> Result<Vec<Substitution>, Located> {
    let unmarshal = |node: &Node, what: String| {
        Located::new(
            node.line,
            format!("unmarshalling template: json: cannot unmarshal {what}"),
        )
    };
    let Some(node) = go_field(fields, "substitutions") else {
        return Ok(Vec::new());
    };
    let items = match &node.value {
        Value::Seq(items) => items,
        Value::Scalar(_, ScalarKind::Null) => return Ok(Vec::new()),
        _ => {
            return Err(unmarshal(
                node,
                format!(
                    "{} into Go struct field SubstitutesTemplateData.substitutions of type []substitutes.Substitute",
                    json_kind(node)
                ),
            ));
        }
    };
    let mut out = Vec::new();
    for item in items {
        let mut s = Substitution {
            name: String::new(),
            base: String::new(),
            line: item.line,
        };
        match &item.value {
            Value::Map(kv) => {
                for (key, target) in [("name", &mut s.name), ("base", &mut s.base)] {
                    if let Some(v) = go_field(kv, key) {
                        match &v.value {
                            Value::Scalar(text, ScalarKind::Str) => *target = text.to_string(),
                            Value::Scalar(_, ScalarKind::Null) => {}
                            _ => {
                                return Err(unmarshal(
                                    v,
                                    format!(
                                        "{} into Go struct field Substitute.substitutions.{key} of type string",
                                        json_kind(v)
                                    ),
                                ));
                            }
                        }
                    }
                }
            }
            Value::Scalar(_, ScalarKind::Null) => {}
            _ => {
                return Err(unmarshal(
                    item,
                    format!(
                        "{} into Go struct field SubstitutesTemplateData.substitutions of type substitutes.Substitute",
                        json_kind(item)
                    ),
                ));
            }
        }
        out.push(s);
    }
    Ok(out)
}
