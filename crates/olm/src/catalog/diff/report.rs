//! The three faces of a [`CatalogDiff`]: text for terminals, markdown for a pull-request
//! comment, JSON (stable keys) for tools.

use super::{CatalogDiff, PackageDiff, Status, Summary};
use std::fmt::Write as _;

/// JSON, pretty, keys in a fixed order, newline-terminated.
pub fn render_json(d: &CatalogDiff) -> String {
    let mut s = serde_json::to_string_pretty(d).unwrap_or_else(|_| "{}".to_string());
    s.push('\n');
    s
}

fn status(p: &PackageDiff) -> &'static str {
    match p.status {
        Status::Added => "added",
        Status::Removed => "removed",
        Status::Changed => "changed",
    }
}

/// Lines describing one package's changes (without regressions), shared by text and markdown.
fn change_lines(p: &PackageDiff) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(c) = &p.default_channel {
        out.push(format!("default channel: {} -> {}", c.old, c.new));
    }
    let list = |label: &str, v: &[String], out: &mut Vec<String>| {
        if !v.is_empty() {
            out.push(format!("{label}: {}", v.join(", ")));
        }
    };
    list("channels added", &p.channels_added, &mut out);
    list("channels removed", &p.channels_removed, &mut out);
    for h in &p.head_moves {
        let or_none = |s: &str| {
            if s.is_empty() {
                "(none)".to_string()
            } else {
                s.to_string()
            }
        };
        out.push(format!(
            "head of {}: {} -> {}",
            h.channel,
            or_none(&h.old),
            or_none(&h.new)
        ));
    }
    list("bundles added", &p.bundles_added, &mut out);
    list("bundles removed", &p.bundles_removed, &mut out);
    for b in &p.bundles_changed {
        let mut line = format!("bundle changed: {} ({})", b.name, b.what.join(", "));
        if let Some(i) = &b.image {
            let _ = write!(line, "; image {} -> {}", i.old, i.new);
        }
        if let Some(v) = &b.version {
            let _ = write!(line, "; version {} -> {}", v.old, v.new);
        }
        out.push(line);
    }
    for e in &p.edges_added {
        out.push(format!(
            "edge added in {}: {} -> {} ({})",
            e.channel, e.from, e.to, e.kind
        ));
    }
    for e in &p.edges_removed {
        out.push(format!(
            "edge removed in {}: {} -> {} ({})",
            e.channel, e.from, e.to, e.kind
        ));
    }
    let dep = |r: &super::DeprecationRef| {
        if r.name.is_empty() {
            r.schema.clone()
        } else {
            format!("{} {}", r.schema, r.name)
        }
    };
    for r in &p.deprecations_added {
        out.push(format!("deprecation added: {}", dep(r)));
    }
    for r in &p.deprecations_removed {
        out.push(format!("deprecation removed: {}", dep(r)));
    }
    out
}

/// One line per format migration: said once, as such, not as a change of every bundle.
fn migration_lines(d: &CatalogDiff) -> Vec<String> {
    d.migrations
        .iter()
        .map(|m| {
            let how = if m.to == crate::catalog::model::property_type::CSV_METADATA {
                " (opm's bundle-object-to-csv-metadata migration)"
            } else {
                ""
            };
            format!(
                "format migration: {} bundle(s) store their CSV as {} instead of {}{how}; the CSV facts are the same, so they are not counted as changed",
                m.bundles, m.to, m.from
            )
        })
        .collect()
}

/// Text for a terminal: per package its status, changes and regressions, then a total.
pub fn render_text(d: &CatalogDiff) -> String {
    let mut s = String::new();
    for l in migration_lines(d) {
        let _ = writeln!(s, "{l}");
    }
    if !d.has_changes() {
        s.push_str("no changes\n");
        return s;
    }
    for p in &d.packages {
        let _ = writeln!(s, "package {} ({})", p.name, status(p));
        for r in &p.regressions {
            let _ = writeln!(s, "  REGRESSION [{}] {}", kind(r.kind), r.message);
        }
        for l in change_lines(p) {
            let _ = writeln!(s, "  {l}");
        }
    }
    let [pa, pr, pc, ba, br, bc, rg] = counts(&d.summary);
    let _ = writeln!(
        s,
        "{pa} package(s) added, {pr} removed, {pc} changed; {ba} bundle(s) added, {br} removed, {bc} changed; {rg} regression(s)"
    );
    s
}

fn kind(k: super::RegressionKind) -> &'static str {
    use super::RegressionKind::*;
    match k {
        PackageRemoved => "package removed",
        ChannelRemoved => "channel removed",
        ChannelInvalid => "channel invalid",
        Dangling => "dangling",
        NoPath => "no path",
    }
}

/// Escapes text for a markdown table cell or list item.
fn md(s: &str) -> String {
    s.replace('|', "\\|")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A pull-request comment: a summary table, then per package its regressions and changes.
pub fn render_markdown(d: &CatalogDiff) -> String {
    let mut s = String::from("## Catalog changes\n\n");
    for l in migration_lines(d) {
        let _ = writeln!(s, "{}\n", md(&l));
    }
    if !d.has_changes() {
        s.push_str("No changes.\n");
        return s;
    }
    let m = &d.summary;
    let _ = writeln!(
        s,
        "{}\n",
        if m.regressions > 0 {
            format!(
                "**{} upgrade-path regression(s)**: some installed versions can no longer upgrade.",
                m.regressions
            )
        } else {
            "No upgrade-path regression.".to_string()
        }
    );
    s.push_str("| Package | Status | Bundles + | Bundles − | Bundles changed | Head moves | Regressions |\n");
    s.push_str("|---|---|---:|---:|---:|---:|---:|\n");
    for p in &d.packages {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} |",
            md(&p.name),
            status(p),
            p.bundles_added.len(),
            p.bundles_removed.len(),
            p.bundles_changed.len(),
            p.head_moves.len(),
            p.regressions.len()
        );
    }
    let [pa, pr, pc, ba, br, bc, rg] = counts(m);
    let _ = writeln!(
        s,
        "| **total** | {pa} added, {pr} removed, {pc} changed | {ba} | {br} | {bc} | | {rg} |"
    );
    for p in &d.packages {
        let _ = writeln!(s, "\n### {} ({})\n", md(&p.name), status(p));
        for r in &p.regressions {
            let _ = writeln!(s, "- :warning: **{}**: {}", kind(r.kind), md(&r.message));
        }
        for l in change_lines(p) {
            let _ = writeln!(s, "- {}", md(&l));
        }
    }
    s
}

/// The summary's seven counts in the order both reports print them: packages added, removed,
/// changed; bundles added, removed, changed; regressions.
fn counts(m: &Summary) -> [usize; 7] {
    [
        m.packages_added,
        m.packages_removed,
        m.packages_changed,
        m.bundles_added,
        m.bundles_removed,
        m.bundles_changed,
        m.regressions,
    ]
}
