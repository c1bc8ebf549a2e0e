//! The support matrix `--target` reads: what each OpenShift release, OLM v0 and OLM v1 accept,
//! one record per fact, each with the public source it comes from. Why in the source and not
//! in a data file: a fact changes a verdict, so it is reviewed like code, and the reference
//! page (`docs/guide/targets.md`) is checked against these tables by a test.
//!
//! Adding a release is one line in [`OCP_KUBE`]; adding a fact is one record with its
//! citation. A fact that is not known (which OpenShift releases got OLM's NetworkPolicy
//! backport) is not guessed: the record names what is known and the source says so.

/// The Kubernetes minor version an OpenShift release is built on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OcpKube {
    /// OpenShift `(major, minor)`.
    pub ocp: (u32, u32),
    /// Kubernetes `1.minor`.
    pub kube_minor: u64,
    /// Where the pairing is stated.
    pub source: &'static str,
}

/// The pipelines' table, access.redhat.com/solutions/4870701 as operator-pipelines keeps it
/// (`OCP_TO_K8S`, mirrored in `crate::pipeline::ocp`).
const PIPELINES_TABLE: &str = "operator-pipelines OCP_TO_K8S (access.redhat.com/solutions/4870701)";

/// Every OpenShift release `--target ocp-X.Y` accepts, oldest first.
pub const OCP_KUBE: &[OcpKube] = &[
    OcpKube {
        ocp: (4, 12),
        kube_minor: 25,
        source: PIPELINES_TABLE,
    },
    OcpKube {
        ocp: (4, 13),
        kube_minor: 26,
        source: PIPELINES_TABLE,
    },
    OcpKube {
        ocp: (4, 14),
        kube_minor: 27,
        source: PIPELINES_TABLE,
    },
    OcpKube {
        ocp: (4, 15),
        kube_minor: 28,
        source: PIPELINES_TABLE,
    },
    OcpKube {
        ocp: (4, 16),
        kube_minor: 29,
        source: PIPELINES_TABLE,
    },
    OcpKube {
        ocp: (4, 17),
        kube_minor: 30,
        source: PIPELINES_TABLE,
    },
    OcpKube {
        ocp: (4, 18),
        kube_minor: 31,
        source: "openshift/kubernetes#2144 ([release-4.18] Update to Kubernetes 1.31.3)",
    },
    OcpKube {
        ocp: (4, 19),
        kube_minor: 32,
        source: "openshift/kubernetes#2411 (Rebase v1.32.8 to 4.19)",
    },
    OcpKube {
        ocp: (4, 20),
        kube_minor: 33,
        source: "grafana/tempo-operator#1248 (oc version: Server 4.20.0, Kubernetes v1.33.2)",
    },
    OcpKube {
        ocp: (4, 21),
        kube_minor: 34,
        source: "OpenLiberty/open-liberty-operator#825 (OCP 4.21 and Kubernetes 1.34)",
    },
    OcpKube {
        ocp: (4, 22),
        kube_minor: 35,
        source: "okd-project/okd#2327 (4.22 runs Kubernetes 1.35.4)",
    },
    OcpKube {
        ocp: (5, 0),
        kube_minor: 36,
        source: "openshift/kubernetes#2776 (Rebase release-5.0 to Kubernetes v1.36.4)",
    },
];

/// An API version Kubernetes stopped serving.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RemovedApi {
    /// `group/version`.
    pub group_version: &'static str,
    /// The kind, or `*` for every kind of that version.
    pub kind: &'static str,
    /// Removed in Kubernetes `1.minor`.
    pub removed_in: u64,
    /// Where the removal is stated.
    pub source: &'static str,
}

const GUIDE_16: &str = "kubernetes.io/docs/reference/using-api/deprecation-guide/#v1-16";
const GUIDE_22: &str = "kubernetes.io/docs/reference/using-api/deprecation-guide/#v1-22";
const GUIDE_25: &str = "kubernetes.io/docs/reference/using-api/deprecation-guide/#v1-25";
const GUIDE_26: &str = "kubernetes.io/docs/reference/using-api/deprecation-guide/#v1-26";
const GUIDE_27: &str = "kubernetes.io/docs/reference/using-api/deprecation-guide/#v1-27";
const GUIDE_29: &str = "kubernetes.io/docs/reference/using-api/deprecation-guide/#v1-29";
const GUIDE_32: &str = "kubernetes.io/docs/reference/using-api/deprecation-guide/#v1-32";

/// Shorthand for a [`RemovedApi`] record.
const fn removed(
    group_version: &'static str,
    kind: &'static str,
    removed_in: u64,
    source: &'static str,
) -> RemovedApi {
    RemovedApi {
        group_version,
        kind,
        removed_in,
        source,
    }
}

/// Every API version removed from Kubernetes that a bundle may still carry
/// (`object/deprecated-api`, `crd/api-version`).
pub const REMOVED_APIS: &[RemovedApi] = &[
    removed("extensions/v1beta1", "*", 16, GUIDE_16),
    removed("apps/v1beta1", "*", 16, GUIDE_16),
    removed("apps/v1beta2", "*", 16, GUIDE_16),
    removed("apiextensions.k8s.io/v1beta1", "*", 22, GUIDE_22),
    removed("apiregistration.k8s.io/v1beta1", "*", 22, GUIDE_22),
    removed("authentication.k8s.io/v1beta1", "*", 22, GUIDE_22),
    removed("authorization.k8s.io/v1beta1", "*", 22, GUIDE_22),
    removed("certificates.k8s.io/v1beta1", "*", 22, GUIDE_22),
    removed("coordination.k8s.io/v1beta1", "*", 22, GUIDE_22),
    removed("networking.k8s.io/v1beta1", "*", 22, GUIDE_22),
    removed("rbac.authorization.k8s.io/v1beta1", "*", 22, GUIDE_22),
    removed("rbac.authorization.k8s.io/v1alpha1", "*", 22, GUIDE_22),
    removed("scheduling.k8s.io/v1beta1", "*", 22, GUIDE_22),
    removed("scheduling.k8s.io/v1alpha1", "*", 22, GUIDE_22),
    removed("storage.k8s.io/v1beta1", "CSIDriver", 22, GUIDE_22),
    removed("storage.k8s.io/v1beta1", "CSINode", 22, GUIDE_22),
    removed("storage.k8s.io/v1beta1", "StorageClass", 22, GUIDE_22),
    removed("storage.k8s.io/v1beta1", "VolumeAttachment", 22, GUIDE_22),
    removed("admissionregistration.k8s.io/v1beta1", "*", 22, GUIDE_22),
    removed("batch/v1beta1", "CronJob", 25, GUIDE_25),
    removed("discovery.k8s.io/v1beta1", "*", 25, GUIDE_25),
    removed("events.k8s.io/v1beta1", "*", 25, GUIDE_25),
    removed("autoscaling/v2beta1", "*", 25, GUIDE_25),
    removed("policy/v1beta1", "PodDisruptionBudget", 25, GUIDE_25),
    removed("policy/v1beta1", "PodSecurityPolicy", 25, GUIDE_25),
    removed("node.k8s.io/v1beta1", "*", 25, GUIDE_25),
    removed("autoscaling/v2beta2", "*", 26, GUIDE_26),
    removed("flowcontrol.apiserver.k8s.io/v1beta1", "*", 26, GUIDE_26),
    removed("storage.k8s.io/v1beta1", "CSIStorageCapacity", 27, GUIDE_27),
    removed("flowcontrol.apiserver.k8s.io/v1beta2", "*", 29, GUIDE_29),
    removed("flowcontrol.apiserver.k8s.io/v1beta3", "*", 32, GUIDE_32),
];

/// The removal record for an object's `apiVersion` and kind, if that API is gone.
pub fn removed_api(api_version: &str, kind: &str) -> Option<&'static RemovedApi> {
    REMOVED_APIS
        .iter()
        .find(|r| r.group_version == api_version && (r.kind == "*" || r.kind == kind))
}

/// Which installers a fact is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Every `ocp-*` target: bundles published for OpenShift through its pipelines and
    /// installed by its OLM v0.
    OpenShift,
    /// The `olmv0` target: upstream OLM v0 with a current opm.
    OlmV0,
    /// The `olmv1` target: operator-controller.
    OlmV1,
}

/// A kind a registry+v1 bundle may carry by operator-registry's list but that some installer
/// refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KindFact {
    /// The kind.
    pub kind: &'static str,
    /// The `apiVersion` prefix it applies to (the group).
    pub api_prefix: &'static str,
    /// Where it is refused.
    pub refused_on: Scope,
    /// What happens, for the finding's message.
    pub says: &'static str,
    /// Where it is stated.
    pub source: &'static str,
}

/// Kinds refused by some target although opm accepts them.
///
/// For the record (no finding comes of it): opm accepts NetworkPolicy since
/// operator-framework/operator-registry#1675 (merged 2025-05-17), and upstream OLM v0 installs
/// it from v0.32 (openshift-kni/cluster-group-upgrades-operator#2116); an older opm fails
/// render with "unsupported media type registry+v1 for bundle object"
/// (operator-framework/operator-lifecycle-manager#1858).
pub const KIND_FACTS: &[KindFact] = &[
    KindFact {
        kind: "NetworkPolicy",
        api_prefix: "networking.k8s.io/",
        refused_on: Scope::OpenShift,
        says: "the OpenShift pipelines refuse a bundle holding a NetworkPolicy for every OpenShift version until OLM's backport ships",
        source: "redhat-openshift-ecosystem/operator-pipelines#852",
    },
    KindFact {
        kind: "NetworkPolicy",
        api_prefix: "networking.k8s.io/",
        refused_on: Scope::OlmV1,
        says: "OLM v1 installs of a bundle holding a NetworkPolicy fail",
        source: "tektoncd/operator#3873",
    },
];

/// From which OpenShift release the pipelines render catalogs with `opm ... --migrate-level
/// bundle-object-to-csv-metadata` (`catalog/metadata-form`).
pub const CSV_METADATA_FROM: (u32, u32) = (4, 17);

/// Where [`CSV_METADATA_FROM`] is stated.
pub const CSV_METADATA_SOURCE: &str =
    "operator-pipelines render_catalogs.sh requires_migrate_level and utils.is_catalog_v4_17_plus";

/// A family of rules that only one installer applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleScope {
    /// Rule ids starting with this.
    pub id_prefix: &'static str,
    /// The one installer whose refusals they are.
    pub scope: Scope,
    /// What they cover.
    pub covers: &'static str,
    /// Where the behaviour is stated.
    pub source: &'static str,
}

/// Rule families scoped to one installer: OLM v1's install modes (AllNamespaces, and
/// Single/OwnNamespace only with a watch namespace), webhooks (cert-manager or the service-ca
/// provider; conversion webhooks only with AllNamespaces), kinds and API services.
pub const RULE_SCOPES: &[RuleScope] = &[RuleScope {
    id_prefix: "olmv1/",
    scope: Scope::OlmV1,
    covers: "install modes, webhooks, kinds, API services, dependencies and CRD upgrades as operator-controller checks them",
    source: "operator-framework/operator-controller internal/operator-controller/rukpak/render/registryv1/validators.go (v1.11.0), crdupgradesafety",
}];

#[cfg(test)]
mod tests {
    use super::*;

    /// Every record names a source, and the OpenShift table agrees with the pipelines' own
    /// table where both have a row (one fact written twice must not drift).
    #[test]
    fn every_fact_is_cited_and_the_tables_agree() {
        for row in OCP_KUBE {
            assert!(!row.source.is_empty());
            let pipelines = crate::pipeline::ocp::OCP_TO_K8S
                .iter()
                .find(|(o, _)| *o == (u64::from(row.ocp.0), u64::from(row.ocp.1)));
            if let Some((_, (1, kube))) = pipelines {
                assert_eq!(*kube, row.kube_minor, "{:?}", row.ocp);
            }
        }
        assert!(OCP_KUBE.windows(2).all(|w| w[0].ocp < w[1].ocp));
        assert!(
            OCP_KUBE
                .windows(2)
                .all(|w| w[0].kube_minor < w[1].kube_minor)
        );
        for r in REMOVED_APIS {
            assert!(
                r.source.ends_with(&format!("#v1-{}", r.removed_in)),
                "{r:?}"
            );
        }
        assert!(KIND_FACTS.iter().all(|k| k.source.contains('#')));
        assert_eq!(
            removed_api("batch/v1beta1", "CronJob").map(|r| r.removed_in),
            Some(25)
        );
        assert!(removed_api("batch/v1beta1", "Job").is_none());
    }
}
