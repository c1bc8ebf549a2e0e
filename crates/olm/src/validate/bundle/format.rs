//! Format rules: the folders and `metadata/annotations.yaml` (opm's `ValidateBundleFormat`, with
//! the checks it skips by mistake: the manifests/metadata values and an empty package).

use super::{Ctx, Diagnostic, Rule, Severity};
use crate::bundle::keys;
use crate::yaml::{ScalarKind, Value};

const REQUIRED: [&str; 5] = [
    keys::MEDIATYPE,
    keys::MANIFESTS,
    keys::METADATA,
    keys::PACKAGE,
    keys::CHANNELS,
];

pub(crate) fn check(ctx: &mut Ctx<'_>) {
    let bundle = ctx.bundle;
    let already = |rule: Rule| bundle.load_findings.iter().any(|d| d.rule == rule);
    if bundle.metadata_dir.is_none() {
        if already(Rule::MetadataMissing) {
            return;
        }
        ctx.push(Diagnostic::new(
            Rule::MetadataMissing,
            format!("no metadata/ folder in {}: create metadata/annotations.yaml (olmpack bundle init writes it)", bundle.root.display()),
        ));
        return;
    }
    let Some(ann) = &bundle.annotations else {
        if !bundle.annotations_unparsable
            && !bundle.metadata_path().join("annotations.yaml").is_dir()
        {
            ctx.push(
                Diagnostic::new(
                    Rule::AnnotationsMissing,
                    "metadata/annotations.yaml not found: it names the package and channels (olmpack bundle init writes it)",
                )
                .in_file("metadata/"),
            );
        }
        return;
    };
    let file = ann.file.clone();
    for key in REQUIRED {
        if ann.get(key).is_none() {
            ctx.push(
                Diagnostic::new(
                    Rule::AnnotationMissing,
                    format!("missing annotation \"{key}\""),
                )
                .at(&file, ann.line),
            );
        }
    }
    for key in REQUIRED.iter().chain([&keys::DEFAULT_CHANNEL]) {
        if let Some(a) = ann.get(key)
            && a.value.trim().is_empty()
        {
            ctx.push(
                Diagnostic::new(
                    Rule::AnnotationEmpty,
                    format!("annotation \"{key}\" must have a non-empty value"),
                )
                .at(&file, a.line),
            );
        }
    }
    for a in &ann.entries {
        if let Value::Scalar(
            _,
            kind @ (ScalarKind::Bool(_) | ScalarKind::Int | ScalarKind::Float),
        ) = &a.node.value
        {
            let what = match kind {
                ScalarKind::Bool(_) => "a boolean",
                _ => "a number",
            };
            ctx.push(
                Diagnostic::new(
                    Rule::AnnotationNotString,
                    format!("annotation \"{}\" is {what} in YAML; image labels are strings: quote it (\"{}\")", a.key, a.value),
                )
                .at(&file, a.line),
            );
        }
    }

    // Media type: olmpack builds and checks registry+v1 bundles.
    if let Some(a) = ann.get(keys::MEDIATYPE) {
        let value = a.value.trim();
        let has_csv = bundle.objects.iter().any(|o| o.is_csv());
        let registry_v1 = crate::bundle::MediaType::RegistryV1;
        if !value.is_empty() && crate::bundle::MediaType::parse(value) != Some(registry_v1) {
            let detail = if has_csv {
                "the bundle holds a ClusterServiceVersion, so its media type is registry+v1"
            } else {
                "olmpack validates registry+v1 bundles (plain and helm bundles are not installable by OLM v0)"
            };
            ctx.push(
                Diagnostic::new(
                    Rule::MediaType,
                    format!(
                        "annotation \"{}\" is \"{value}\", expected \"{registry_v1}\": {detail}",
                        keys::MEDIATYPE
                    ),
                )
                .at(&file, a.line),
            );
        }
    }

    // The folder annotations must name the real folders (opm never compares them).
    if let (Some(a), Some(dir)) = (ann.get(keys::MANIFESTS), &bundle.manifests_dir) {
        let value = a.value.trim();
        if !value.is_empty() && normalize_dir(value) != *dir {
            ctx.push(
                Diagnostic::new(
                    Rule::ManifestsPath,
                    format!("annotation \"{}\" is \"{value}\" but the manifests are in {dir}/: set it to \"{dir}/\"", keys::MANIFESTS),
                )
                .at(&file, a.line),
            );
        }
    }
    if let (Some(a), Some(dir)) = (ann.get(keys::METADATA), &bundle.metadata_dir) {
        let value = a.value.trim();
        if !value.is_empty() && normalize_dir(value) != *dir {
            ctx.push(
                Diagnostic::new(
                    Rule::MetadataPath,
                    format!("annotation \"{}\" is \"{value}\" but the metadata is in {dir}/: set it to \"{dir}/\"", keys::METADATA),
                )
                .at(&file, a.line),
            );
        }
    }

    // Channels.
    let channels = ann.channels();
    if let Some(a) = ann.get(keys::CHANNELS) {
        for name in &channels {
            if name.is_empty() {
                ctx.push(
                    Diagnostic::new(
                        Rule::ChannelName,
                        format!("channel list \"{}\" contains an empty channel name: remove the extra comma", a.value.trim()),
                    )
                    .at(&file, a.line),
                );
            } else if let Some(problem) = channel_name_problem(name) {
                ctx.push(
                    Diagnostic::new(Rule::ChannelName, format!("channel \"{name}\" {problem}"))
                        .with_severity(Severity::Warning)
                        .at(&file, a.line),
                );
            }
        }
        if a.value.contains(", ") || a.value.contains(" ,") {
            ctx.push(
                Diagnostic::new(
                    Rule::ChannelName,
                    format!("channel list \"{}\" has spaces around commas; OLM trims them but other tools may not: write \"{}\"", a.value, channels.join(",")),
                )
                .with_severity(Severity::Warning)
                .at(&file, a.line),
            );
        }
    }
    if let Some(a) = ann.get(keys::DEFAULT_CHANNEL) {
        let default = a.value.trim();
        if !default.is_empty() && !channels.is_empty() && !channels.iter().any(|c| c == default) {
            ctx.push(
                Diagnostic::new(
                    Rule::DefaultChannelOutside,
                    format!(
                        "default channel \"{default}\" is not among this bundle's channels ({}); fine if another bundle of the package is in it, otherwise OLM cannot resolve the package",
                        channels.join(",")
                    ),
                )
                .at(&file, a.line),
            );
        }
    }

    if let Some(a) = ann.get(keys::PACKAGE) {
        let pkg = a.value.trim();
        if !pkg.is_empty()
            && let Err(why) = super::names::dns1123_label(pkg)
        {
            // The rule `catalog add` and `catalog validate` apply (catalog/package-name): a
            // bundle that passes here must not be refused when it enters a catalog.
            ctx.push(
                Diagnostic::new(
                    Rule::PackageName,
                    format!(
                        "package name \"{pkg}\" is not a DNS-1123 label ({why}): a catalog refuses it (opm 1.41 and later); use lowercase letters, digits and '-'"
                    ),
                )
                .at(&file, a.line),
            );
        }
    }
}

/// `manifests/`, `/manifests`, `./manifests/` → `manifests`.
fn normalize_dir(value: &str) -> String {
    value
        .trim()
        .trim_start_matches("./")
        .trim_matches('/')
        .to_string()
}

fn channel_name_problem(name: &str) -> Option<&'static str> {
    if name.starts_with('-') {
        Some("starts with a dash: a command-line flag ended up in the channel list?")
    } else if name.chars().any(char::is_whitespace) {
        Some("contains white space")
    } else if name
        .chars()
        .any(|c| c.is_control() || matches!(c, '"' | '\'' | '/' | '\\'))
    {
        Some("contains characters that are not valid in a channel name")
    } else {
        None
    }
}
