//! What a cluster administrator asks of a catalog before installing from it: its packages,
//! channels and versions; which bundles OLM v1 installs today; and, from an installed version,
//! where OLM v1 and OLM v0 would upgrade it. What `opm render | jq` pipelines are written for.

use super::upgrade::{UpgradeChoice, choices};
use crate::catalog::channel::ChannelGraph;
use crate::catalog::model::{DeclarativeConfig, property_type};
use crate::validate::catalog::olmv1::PackageReadiness;
use serde::Serialize;

/// Whether OLM v1 installs a bundle on a default cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Installable {
    /// Yes (webhooks still need a certificate provider: see the reasons).
    Yes,
    /// Only with the alpha feature gate SingleOwnNamespaceInstallSupport (no AllNamespaces).
    AlphaGate,
    /// No: the reasons say why.
    No,
    /// Not decided from the catalog: it carries no manifests (only `olm.csv.metadata`, or
    /// nothing), and OLM v1 decides on the manifests of the bundle image.
    Unknown,
}

/// One bundle of a package.
#[derive(Debug, Clone, Serialize)]
pub struct QueryBundle {
    /// Bundle name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// The channels that list it.
    pub channels: Vec<String>,
    /// OLM v1's verdict.
    pub olmv1: Installable,
    /// Why (rule: message), when not a plain yes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<String>,
}

/// One channel.
#[derive(Debug, Clone, Serialize)]
pub struct QueryChannel {
    /// Channel name.
    pub name: String,
    /// Its head (empty when the graph has none or several).
    pub head: String,
    /// Entries, in channel order.
    pub entries: Vec<String>,
}

/// One package.
#[derive(Debug, Clone, Serialize)]
pub struct QueryPackage {
    /// Package name.
    pub name: String,
    /// Default channel.
    pub default_channel: String,
    /// Channels.
    pub channels: Vec<QueryChannel>,
    /// Bundles, in catalog order (only the installable ones under `--installable`).
    pub bundles: Vec<QueryBundle>,
    /// Upgrade choices from `--upgrades-from`, per channel holding that version.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub upgrades: Vec<UpgradeChoice>,
}

/// What to ask.
#[derive(Debug, Clone, Default)]
pub struct Query {
    /// Only this package.
    pub package: Option<String>,
    /// Only bundles OLM v1 installs today (`Yes`).
    pub installable: bool,
    /// The installed version (or bundle name) to upgrade from.
    pub upgrades_from: Option<String>,
}

/// Answers `query` over `cfg`, with the OLM v1 rule verdicts of bundles that carry their
/// manifests (`readiness`, from `catalog validate`'s olmv1 group).
pub fn answer(
    cfg: &DeclarativeConfig,
    readiness: &[PackageReadiness],
    query: &Query,
) -> Vec<QueryPackage> {
    let mut names: Vec<&str> = cfg.packages.iter().map(|p| p.name.as_str()).collect();
    names.sort_unstable();
    let mut out = Vec::new();
    for name in names {
        if query.package.as_deref().is_some_and(|p| p != name) {
            continue;
        }
        let pkg = cfg.packages.iter().find(|p| p.name == name);
        let channels: Vec<QueryChannel> = cfg
            .channels
            .iter()
            .filter(|c| c.package == name)
            .map(|c| QueryChannel {
                name: c.name.clone(),
                head: ChannelGraph::new(c, |_| None)
                    .head()
                    .unwrap_or("")
                    .to_string(),
                entries: c.entries.iter().flatten().map(|e| e.name.clone()).collect(),
            })
            .collect();
        let ready = readiness.iter().find(|r| r.package == name);
        let mut bundles = Vec::new();
        for b in cfg.bundles.iter().filter(|b| b.package == name) {
            let in_channels: Vec<String> = channels
                .iter()
                .filter(|c| c.entries.contains(&b.name))
                .map(|c| c.name.clone())
                .collect();
            let (olmv1, reasons) = verdict(b, ready);
            if query.installable && olmv1 != Installable::Yes {
                continue;
            }
            bundles.push(QueryBundle {
                name: b.name.clone(),
                version: b.version_text(),
                channels: in_channels,
                olmv1,
                reasons,
            });
        }
        let upgrades = match &query.upgrades_from {
            Some(v) => {
                let installed: Vec<String> = cfg
                    .bundles
                    .iter()
                    .filter(|b| b.package == name && (b.version_text() == *v || b.name == *v))
                    .map(|b| b.name.clone())
                    .collect();
                choices(cfg, name)
                    .into_iter()
                    .filter(|c| installed.contains(&c.installed))
                    .collect()
            }
            None => Vec::new(),
        };
        if query.upgrades_from.is_some() && upgrades.is_empty() && query.package.is_none() {
            continue;
        }
        out.push(QueryPackage {
            name: name.to_string(),
            default_channel: pkg.map(|p| p.default_channel.clone()).unwrap_or_default(),
            channels,
            bundles,
            upgrades,
        });
    }
    out
}

/// A bundle's OLM v1 verdict: from the rules when the catalog carries its manifests, else from
/// its `olm.csv.metadata` (install modes, owned APIServices) and dependency properties.
fn verdict(
    b: &crate::catalog::model::Bundle,
    ready: Option<&PackageReadiness>,
) -> (Installable, Vec<String>) {
    if let Some(r) = ready.and_then(|r| r.bundles.iter().find(|x| x.name == b.name))
        && let Some(ok) = r.installable
    {
        let alpha = r.reasons.iter().all(|x| {
            x.starts_with("olmv1/no-all-namespaces") || x.starts_with("olmv1/webhook-cert-provider")
        }) && r
            .reasons
            .iter()
            .any(|x| x.starts_with("olmv1/no-all-namespaces"));
        let state = if ok {
            Installable::Yes
        } else if alpha {
            Installable::AlphaGate
        } else {
            Installable::No
        };
        return (state, r.reasons.clone());
    }
    let mut reasons = Vec::new();
    for p in &b.properties {
        if crate::olmv1::compat::DEPENDENCY_PROPERTIES.contains(&p.type_.as_str()) {
            reasons.push(format!(
                "olmv1/dependency: {}",
                crate::olmv1::compat::dependency_message(&b.name, &p.type_)
            ));
            break;
        }
    }
    let Some(meta) = b
        .properties
        .iter()
        .find(|p| p.type_ == property_type::CSV_METADATA)
        .and_then(|p| serde_json::from_str::<serde_json::Value>(p.value.get()).ok())
    else {
        return if reasons.is_empty() {
            (
                Installable::Unknown,
                vec![
                    "not judged: the catalog carries neither manifests nor olm.csv.metadata".into(),
                ],
            )
        } else {
            (Installable::No, reasons)
        };
    };
    let modes: Vec<&str> = meta["installModes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["supported"].as_bool() == Some(true))
        .filter_map(|m| m["type"].as_str())
        .collect();
    let owned_api = meta["apiServiceDefinitions"]["owned"]
        .as_array()
        .is_some_and(|a| !a.is_empty());
    if owned_api {
        reasons.push(
            "olmv1/apiservice: unsupported bundle: apiServiceDefintions are not supported".into(),
        );
    }
    let all = modes.contains(&"AllNamespaces");
    let single_own = modes.contains(&"SingleNamespace") || modes.contains(&"OwnNamespace");
    if !all && !single_own {
        reasons.push("olmv1/multinamespace-only: unsupported bundle: bundle must support at least one of [AllNamespaces SingleNamespace OwnNamespace] install modes".into());
    }
    // operator-controller installs a registry+v1 bundle by converting the manifests of the
    // bundle image (its `render/registryv1` validators read the CSV's install strategy,
    // webhook definitions and every object of the bundle): olm.csv.metadata holds none of
    // these, so a bundle the metadata does not already refuse is not decided from the catalog.
    if !reasons.is_empty() {
        reasons.push(CSV_METADATA_ONLY.into());
        return (Installable::No, reasons);
    }
    if !all {
        reasons.push("olmv1/no-all-namespaces: needs the alpha feature gate SingleOwnNamespaceInstallSupport".into());
    }
    reasons.push(CSV_METADATA_ONLY.into());
    (Installable::Unknown, reasons)
}

/// Why a bundle known from `olm.csv.metadata` alone is not judged installable.
const CSV_METADATA_ONLY: &str = "not decided: the catalog carries only olm.csv.metadata, and OLM v1 decides on the bundle image's manifests (install strategy, webhooks and their certificate provider, object kinds); check it with `olmpack bundle validate --image IMAGE --select-optional olmv1`";

/// Per channel, every installed version where OLM v0 and OLM v1 upgrade differently (or one
/// of them not at all): the v0-against-v1 report.
pub fn upgrade_differences(
    cfg: &DeclarativeConfig,
    package: Option<&str>,
) -> Vec<(String, UpgradeChoice)> {
    let mut names: Vec<&str> = cfg.packages.iter().map(|p| p.name.as_str()).collect();
    names.sort_unstable();
    names
        .into_iter()
        .filter(|n| package.is_none_or(|p| p == *n))
        .flat_map(|n| {
            choices(cfg, n)
                .into_iter()
                .filter(UpgradeChoice::differs)
                .map(move |c| (n.to_string(), c))
        })
        .collect()
}
