//! Rules for `metadata/dependencies.yaml` and `metadata/properties.yaml`.
//!
//! Dependencies follow operator-registry's types (`olm.package`, `olm.gvk`, `olm.label`,
//! `olm.constraint`). Unlike opm, compound constraints (`all`, `any`, `not`) and the `package` /
//! `gvk` constraint forms of operator-framework/api are accepted and checked recursively: OLM's
//! resolver supports them, opm's validator only knows the `cel` form.

use super::{Ctx, Diagnostic, Rule};
use crate::catalog::model::property_type::{CONSTRAINT, GVK, PACKAGE};
use crate::semver_range::Range;
use crate::yaml::Node;

pub(crate) fn check(ctx: &mut Ctx<'_>) {
    if let Some(deps) = &ctx.bundle.dependencies {
        let file = deps.file.clone();
        dependencies(ctx, &file, &deps.root);
    }
    if let Some(props) = &ctx.bundle.properties {
        let file = props.file.clone();
        properties(ctx, &file, &props.root);
    }
}

fn dependencies(ctx: &mut Ctx<'_>, file: &str, root: &Node) {
    if root.is_null() {
        return; // an empty file (or only comments) declares nothing
    }
    let Some(list) = root.get("dependencies") else {
        ctx.push(
            Diagnostic::new(Rule::Dependencies, "no top-level `dependencies:` list")
                .at(file, root.line),
        );
        return;
    };
    if list.is_null() {
        return;
    }
    let Some(items) = list.as_seq() else {
        ctx.push(
            Diagnostic::new(
                Rule::Dependencies,
                format!(
                    "`dependencies` must be a list, found a {}",
                    list.kind_name()
                ),
            )
            .at(file, list.line),
        );
        return;
    };
    for (i, item) in items.iter().enumerate() {
        let err = |ctx: &mut Ctx<'_>, line: usize, msg: String| {
            ctx.push(
                Diagnostic::new(Rule::Dependencies, format!("dependencies[{i}]: {msg}"))
                    .at(file, line),
            );
        };
        let ty = item.get("type").and_then(Node::scalar_text).unwrap_or("");
        if ty.is_empty() {
            err(
                ctx,
                item.line,
                "dependency has no `type` (olm.package, olm.gvk, olm.label or olm.constraint)"
                    .into(),
            );
            continue;
        }
        let Some(value) = item.get("value").filter(|v| v.as_map().is_some()) else {
            err(
                ctx,
                item.line,
                format!("couldn't parse dependency of type {ty}: `value` must be a mapping"),
            );
            continue;
        };
        match ty {
            PACKAGE => {
                let name = str_field(value, "packageName");
                if name.is_empty() {
                    err(ctx, value.line, "Package name is empty".into());
                }
                let version_node = value.get("version");
                let version = str_field(value, "version");
                if version.is_empty() {
                    err(ctx, value.line, "Package version is empty".into());
                } else if let Err(e) = Range::parse(version) {
                    ctx.push(
                        Diagnostic::new(
                            Rule::DependencyRange,
                            format!("dependencies[{i}]: Invalid semver format version \"{version}\" for package {name}: {e}"),
                        )
                        .at(file, version_node.map_or(value.line, |n| n.line)),
                    );
                }
            }
            GVK => {
                for (field, label) in [
                    ("group", "API Group"),
                    ("version", "API Version"),
                    ("kind", "API Kind"),
                ] {
                    if str_field(value, field).is_empty() {
                        err(ctx, value.line, format!("{label} is empty"));
                    }
                }
            }
            "olm.label" => {
                if str_field(value, "label").is_empty() {
                    err(ctx, value.line, "Label information is missing".into());
                }
            }
            CONSTRAINT => constraint(ctx, file, &format!("dependencies[{i}]"), value, 0),
            other => err(
                ctx,
                item.line,
                format!(
                    "couldn't parse dependency of type {other}: known types are olm.package, olm.gvk, olm.label, olm.constraint"
                ),
            ),
        }
    }
}

fn str_field<'a>(node: &'a Node, key: &str) -> &'a str {
    node.get(key)
        .and_then(Node::scalar_text)
        .map(str::trim)
        .unwrap_or("")
}

/// One constraint: exactly one of `cel`, `package`, `gvk`, `all`, `any`, `not`.
fn constraint(ctx: &mut Ctx<'_>, file: &str, at: &str, value: &Node, depth: usize) {
    let err = |ctx: &mut Ctx<'_>, line: usize, msg: String| {
        ctx.push(Diagnostic::new(Rule::Dependencies, format!("{at}: {msg}")).at(file, line));
    };
    if depth > 32 {
        err(
            ctx,
            value.line,
            "constraints nested deeper than 32 levels".into(),
        );
        return;
    }
    let forms: Vec<&str> = ["cel", "package", "gvk", "all", "any", "not"]
        .into_iter()
        .filter(|f| value.get(f).is_some())
        .collect();
    match forms.as_slice() {
        [] => {
            err(ctx, value.line, "The CEL field is missing: an olm.constraint needs one of cel, package, gvk, all, any, not".into());
            return;
        }
        [_] => {}
        many => {
            err(
                ctx,
                value.line,
                format!(
                    "a constraint must have exactly one of cel, package, gvk, all, any, not (found {})",
                    many.join(", ")
                ),
            );
            return;
        }
    }
    let Some(body) = value.get(forms[0]) else {
        return;
    };
    match forms[0] {
        "cel" => {
            let rule = body
                .get("rule")
                .and_then(Node::scalar_text)
                .map(str::trim)
                .unwrap_or("");
            if rule.is_empty() {
                err(
                    ctx,
                    body.line,
                    "The CEL expression is missing (cel.rule)".into(),
                );
            } else if let Err(why) = cel_syntax(rule) {
                err(ctx, body.line, format!("Invalid CEL expression: {why}"));
            }
        }
        "package" => {
            if str_field(body, "packageName").is_empty() {
                err(
                    ctx,
                    body.line,
                    "package constraint: Package name is empty".into(),
                );
            }
            let range = str_field(body, "versionRange");
            if range.is_empty() {
                err(
                    ctx,
                    body.line,
                    "package constraint: versionRange is empty".into(),
                );
            } else if let Err(e) = Range::parse(range) {
                ctx.push(
                    Diagnostic::new(
                        Rule::DependencyRange,
                        format!("{at}: invalid versionRange \"{range}\": {e}"),
                    )
                    .at(file, body.line),
                );
            }
        }
        "gvk" => {
            for field in ["group", "version", "kind"] {
                if str_field(body, field).is_empty() {
                    err(ctx, body.line, format!("gvk constraint: {field} is empty"));
                }
            }
        }
        "all" | "any" => match body.get("constraints").and_then(Node::as_seq) {
            Some(list) if !list.is_empty() => {
                for (j, c) in list.iter().enumerate() {
                    constraint(ctx, file, &format!("{at}.{}[{j}]", forms[0]), c, depth + 1);
                }
            }
            _ => err(
                ctx,
                body.line,
                format!(
                    "{} constraint needs a non-empty `constraints` list",
                    forms[0]
                ),
            ),
        },
        _ => match body.get("constraints").and_then(Node::as_seq) {
            Some(list) if !list.is_empty() => {
                for (j, c) in list.iter().enumerate() {
                    constraint(ctx, file, &format!("{at}.not[{j}]"), c, depth + 1);
                }
            }
            _ => err(
                ctx,
                body.line,
                "not constraint needs a non-empty `constraints` list".into(),
            ),
        },
    }
}

/// A lexical check of a CEL expression: balanced brackets and closed string literals. It catches
/// the mistakes YAML quoting causes without embedding a CEL implementation.
fn cel_syntax(rule: &str) -> Result<(), String> {
    let mut stack = Vec::new();
    let mut chars = rule.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' | '\'' => {
                let mut closed = false;
                while let Some(n) = chars.next() {
                    if n == '\\' {
                        chars.next();
                    } else if n == c {
                        closed = true;
                        break;
                    }
                }
                if !closed {
                    return Err(format!("unterminated string literal starting with {c}"));
                }
            }
            '(' | '[' | '{' => stack.push(c),
            ')' | ']' | '}' => {
                let open = match c {
                    ')' => '(',
                    ']' => '[',
                    _ => '{',
                };
                if stack.pop() != Some(open) {
                    return Err(format!("unbalanced '{c}'"));
                }
            }
            _ => {}
        }
    }
    match stack.last() {
        Some(open) => Err(format!("unclosed '{open}'")),
        None => Ok(()),
    }
}

fn properties(ctx: &mut Ctx<'_>, file: &str, root: &Node) {
    if root.is_null() {
        return;
    }
    let Some(list) = root.get("properties") else {
        let hint = if root.get("dependencies").is_some() {
            " (this looks like a dependencies file: move it to dependencies.yaml)"
        } else {
            ""
        };
        ctx.push(
            Diagnostic::new(
                Rule::Properties,
                format!(
                    "no top-level `properties:` list, so OLM reads no properties from it{hint}"
                ),
            )
            .at(file, root.line),
        );
        return;
    };
    let Some(items) = list.as_seq() else {
        if !list.is_null() {
            ctx.push(
                Diagnostic::new(
                    Rule::Properties,
                    format!("`properties` must be a list, found a {}", list.kind_name()),
                )
                .at(file, list.line),
            );
        }
        return;
    };
    for (i, item) in items.iter().enumerate() {
        let ty = item.get("type").and_then(Node::scalar_text).unwrap_or("");
        if ty.is_empty() {
            ctx.push(
                Diagnostic::new(Rule::Properties, format!("properties[{i}] has no `type`"))
                    .at(file, item.line),
            );
        }
        if item.get("value").is_none() {
            ctx.push(
                Diagnostic::new(
                    Rule::Properties,
                    format!("properties[{i}] ({ty}) has no `value`"),
                )
                .at(file, item.line),
            );
        }
        if ty == PACKAGE || ty == GVK {
            ctx.push(
                Diagnostic::new(
                    Rule::Properties,
                    format!("properties[{i}] declares {ty}, which opm derives from the CSV; remove it to avoid conflicting values"),
                )
                .with_severity(super::Severity::Warning)
                .at(file, item.line),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::cel_syntax;

    #[test]
    fn cel_lexical_check() {
        assert!(cel_syntax("properties.exists(p, p.type == 'certified')").is_ok());
        assert!(cel_syntax("semver_compare(properties.version, \"1.0.0\") >= 0").is_ok());
        assert!(cel_syntax("properties.exists(p, p.type == 'x'").is_err());
        assert!(cel_syntax("p.type == 'x").is_err());
        assert!(cel_syntax("a)").is_err());
    }
}
