//! The `olmv1` group: OLM v1 (operator-controller v1.11.0) compatibility. The renderer's
//! validators and generation errors come from [`crate::olmv1`] itself (so a bundle that passes
//! renders), pointed at the line of the deployment, webhook or CRD they name; the installer's
//! refusals from [`crate::olmv1::compat`].

use super::Ctx;
use crate::findings::{Diagnostic, Rule};
use crate::olmv1::compat::{self, Refusal};
use crate::olmv1::load::RegistryV1;
use crate::olmv1::validators::{self, Check};
use crate::olmv1::{RenderOptions, generate};

fn rule_for(check: Check) -> Rule {
    match check {
        Check::DeploymentUnique => Rule::Olmv1DeploymentDuplicate,
        Check::DeploymentName => Rule::Olmv1DeploymentName,
        Check::CrdUnique => Rule::Olmv1CrdDuplicate,
        Check::OwnedCrdExists => Rule::Olmv1OwnedCrdMissing,
        Check::PackageName => Rule::Olmv1PackageName,
        Check::ConversionWebhookModes => Rule::Olmv1ConversionWebhookModes,
        Check::WebhookDeployment => Rule::Olmv1WebhookDeploymentMissing,
        Check::WebhookUnique => Rule::Olmv1WebhookDuplicate,
        Check::WebhookName => Rule::Olmv1WebhookName,
        Check::ConversionCrdUnique => Rule::Olmv1ConversionCrdShared,
        Check::ConversionCrdOwned => Rule::Olmv1ConversionCrdNotOwned,
        Check::WebhookRules => Rule::Olmv1WebhookForbiddenRule,
        Check::ObjectSupport => Rule::Olmv1UnsupportedKind,
    }
}

fn refusal_rule(r: Refusal) -> Rule {
    match r {
        Refusal::ApiService => Rule::Olmv1ApiService,
        Refusal::WebhookCertProvider => Rule::Olmv1WebhookCertProvider,
        Refusal::NoAllNamespaces => Rule::Olmv1NoAllNamespaces,
        Refusal::MultiNamespaceOnly => Rule::Olmv1MultiNamespaceOnly,
        Refusal::Dependency => Rule::Olmv1Dependency,
        Refusal::CrdV1beta1 => Rule::Olmv1CrdV1beta1,
    }
}

/// Runs the group on the bundle of `ctx`.
pub(crate) fn check(ctx: &mut Ctx<'_>) {
    for d in diagnostics(ctx.bundle) {
        ctx.push(d);
    }
}

/// Every `olmv1` finding of a loaded bundle.
pub fn diagnostics(bundle: &crate::bundle::Bundle) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let csv = bundle.csv_view();
    let rv1 = match RegistryV1::from_bundle(bundle) {
        Ok(rv1) => rv1,
        Err(e) => {
            // No CSV and YAML errors are the default rules' business.
            if bundle.csv().is_some() {
                let file = csv.map(|c| c.object.file.clone()).unwrap_or_default();
                out.push(Diagnostic::new(Rule::Olmv1Render, e).in_file(file));
            }
            return out;
        }
    };
    let violations = validators::validate(&rv1);
    for v in &violations {
        let mut d = Diagnostic::new(rule_for(v.check), v.message.clone());
        if let Some(o) = &v.origin {
            let line = csv
                .filter(|c| c.object.file == o.file)
                .and_then(|c| subject_line(&c, v.check, &v.subject))
                .unwrap_or(o.line);
            d = d.at(o.file.clone(), line);
        } else if let Some(a) = &bundle.annotations {
            d = d.at(a.file.clone(), a.line);
        }
        out.push(d);
    }
    if violations.is_empty() {
        // Generation errors (conversion CRDs, unsupported kinds) in the mode OLM v1 would use.
        let opts = RenderOptions {
            install_namespace: "olmv1-system".into(),
            ..RenderOptions::default()
        };
        if let Ok(targets) = generate::target_namespaces(&rv1, &opts)
            && let Err(e) = generate::generate(&rv1, &opts, &targets)
        {
            let origin = rv1.csv_origin.clone();
            let mut d = Diagnostic::new(Rule::Olmv1Render, e);
            if let Some(o) = origin {
                d = d.at(o.file, o.line);
            }
            out.push(d);
        }
    }
    for f in compat::installer_findings(bundle) {
        out.push(Diagnostic::new(refusal_rule(f.refusal), f.message).at(f.file, f.line));
    }
    out
}

fn subject_line(csv: &crate::bundle::Csv<'_>, check: Check, subject: &str) -> Option<usize> {
    match check {
        Check::DeploymentUnique | Check::DeploymentName => csv
            .deployments()
            .iter()
            .rev()
            .find(|d| d.name == subject)
            .map(|d| d.pos.line),
        Check::OwnedCrdExists => csv
            .owned_crds()
            .iter()
            .find(|c| c.name == subject)
            .map(|c| c.pos.line),
        Check::ConversionCrdUnique => csv
            .webhooks()
            .iter()
            .rev()
            .find(|w| w.conversion_crds.contains(&subject))
            .map(|w| w.pos.line),
        Check::ConversionWebhookModes
        | Check::WebhookDeployment
        | Check::WebhookUnique
        | Check::WebhookName
        | Check::ConversionCrdOwned
        | Check::WebhookRules => csv
            .webhooks()
            .iter()
            .rev()
            .find(|w| w.generate_name == subject)
            .map(|w| w.pos.line),
        _ => None,
    }
}
