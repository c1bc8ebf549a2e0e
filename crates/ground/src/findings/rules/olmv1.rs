//! The OLM v1 compatibility rules (`--select-optional olmv1`): what operator-controller v1.11.0
//! refuses when it installs a registry+v1 bundle. The first thirteen are its renderer's bundle
//! validators (`rukpak/render/registryv1/validators`), the rest its installer's refusals
//! (`applier/provider.go`, `resolve/validation.go`) and what its renderer fails on while
//! generating. Messages quote upstream's words. See OLMV1.md A.3 and A.4 in the field notes.

super::records! {
    /// The OLM v1 family, in documentation order.
    family RULES = Bundle;

    Olmv1DeploymentDuplicate = "olmv1/deployment-duplicate", Error, Olmv1, since "0.1.0", opm None;
    summary "Two install strategy deployments share a name (OLM v1: \"cluster service version contains duplicate strategy deployment spec\")."
    why "OLM v1 renders one Deployment per entry of spec.install.spec.deployments under its name; two entries with one name would be one object, so its validator refuses the bundle."
    bad "deployments:\n- name: my-op\n  spec: ...\n- name: my-op\n  spec: ..."
    fix "Give each deployment its own name, or merge them.";

    Olmv1DeploymentName = "olmv1/deployment-name", Error, Olmv1, since "0.1.0", opm None;
    summary "A deployment name is not a DNS-1123 subdomain (OLM v1: \"invalid cluster service version strategy deployment name\")."
    why "The name becomes a Deployment's metadata.name, which the API server requires to be a lowercase RFC 1123 subdomain; OLM v1 checks it before rendering."
    bad "deployments:\n- name: My_Operator"
    fix "deployments:\n- name: my-operator";

    Olmv1CrdDuplicate = "olmv1/crd-duplicate", Error, Olmv1, since "0.1.0", opm None;
    summary "The bundle ships the same CRD twice (OLM v1: \"bundle contains duplicate custom resource definition\")."
    why "OLM v1 applies every CRD of the bundle by name; two files with one CRD name are ambiguous, so its validator refuses the bundle."
    bad "manifests/widgets.crd.yaml and manifests/widgets-copy.yaml, both widgets.example.com"
    fix "Keep one file per CRD.";

    Olmv1OwnedCrdMissing = "olmv1/owned-crd-missing", Error, Olmv1, since "0.1.0", opm None;
    summary "The CSV owns a CRD the bundle does not ship (OLM v1: \"cluster service definition references owned custom resource definition ... not found in bundle\")."
    why "OLM v1 installs only the CRDs in manifests/; an owned CRD that is missing would leave the operator's API uninstalled."
    bad "customresourcedefinitions:\n  owned:\n  - name: widgets.example.com   # no such CRD in manifests/"
    fix "Add the CRD's manifest, or remove it from owned.";

    Olmv1PackageName = "olmv1/package-name", Error, Olmv1, since "0.1.0", opm None;
    summary "metadata/annotations.yaml names no package (OLM v1: \"package name is empty\")."
    why "OLM v1 reads only the package annotation of annotations.yaml and refuses a bundle without one."
    bad "annotations:\n  operators.operatorframework.io.bundle.package.v1: \"\""
    fix "annotations:\n  operators.operatorframework.io.bundle.package.v1: my-op";

    Olmv1ConversionWebhookModes = "olmv1/conversion-webhook-install-modes", Error, Olmv1, since "0.1.0", opm None;
    summary "A conversion webhook in a bundle that supports more than AllNamespaces (OLM v1: \"conversion webhooks are only supported for bundles that only support AllNamespaces install mode\")."
    why "A CRD conversion webhook serves every namespace; OLM v1 accepts one only when the operator can only be installed cluster-wide."
    bad "installModes: [{type: OwnNamespace, supported: true}, {type: AllNamespaces, supported: true}]\nwebhookdefinitions: [{type: ConversionWebhook, ...}]"
    fix "Support only AllNamespaces, or drop the conversion webhook.";

    Olmv1WebhookDeploymentMissing = "olmv1/webhook-deployment-missing", Error, Olmv1, since "0.1.0", opm None;
    summary "A webhook names a deployment the CSV does not define (OLM v1: \"references non-existent deployment\")."
    why "OLM v1 points the webhook's Service at the pods of deploymentName; with no such deployment nothing serves it and every matching API call fails."
    bad "webhookdefinitions:\n- deploymentName: my-op-webhook   # deployments has only my-op"
    fix "Set deploymentName to a deployment of spec.install.spec.deployments.";

    Olmv1WebhookDuplicate = "olmv1/webhook-duplicate", Error, Olmv1, since "0.1.0", opm None;
    summary "Two webhooks of one type share a generateName (OLM v1: \"duplicate webhook ... of type ...\")."
    why "Each webhook becomes one configuration object named after generateName; duplicates would collide."
    bad "- generateName: vwidget.example.com\n  type: ValidatingAdmissionWebhook\n- generateName: vwidget.example.com\n  type: ValidatingAdmissionWebhook"
    fix "Give each webhook its own generateName.";

    Olmv1WebhookName = "olmv1/webhook-name", Error, Olmv1, since "0.1.0", opm None;
    summary "A webhook generateName is not a DNS-1123 subdomain (OLM v1: \"webhook of type ... has invalid name\")."
    why "The name becomes the webhook configuration's metadata.name and the webhook's name, which must be lowercase RFC 1123 subdomains."
    bad "- generateName: Validate_Widgets"
    fix "- generateName: vwidgets.example.com";

    Olmv1ConversionCrdShared = "olmv1/conversion-crd-shared", Error, Olmv1, since "0.1.0", opm None;
    summary "Two conversion webhooks convert the same CRD (OLM v1: \"conversion webhooks [...] reference same custom resource definition\")."
    why "A CRD has one conversion setting; OLM v1 cannot point it at two webhooks."
    bad "two ConversionWebhook entries both listing conversionCRDs: [widgets.example.com]"
    fix "List each CRD in one conversion webhook only.";

    Olmv1ConversionCrdNotOwned = "olmv1/conversion-crd-not-owned", Error, Olmv1, since "0.1.0", opm None;
    summary "A conversion webhook converts a CRD the CSV does not own (OLM v1: \"references custom resource definition ... not owned bundle\")."
    why "OLM v1 rewrites spec.conversion of the CRDs it installs; a CRD the bundle does not own is not its to change."
    bad "conversionCRDs: [gadgets.example.com]   # not in customresourcedefinitions.owned"
    fix "Own the CRD (and ship it), or remove it from conversionCRDs.";

    Olmv1WebhookForbiddenRule = "olmv1/webhook-forbidden-rule", Error, Olmv1, since "0.1.0", opm None;
    summary "An admission webhook intercepts `*`, OLM's own API group or webhook configurations (OLM v1: \"contains forbidden rule\")."
    why "A webhook on every API group, on olm.operatorframework.io or on admission webhook configurations could block OLM itself or the cluster's ability to remove the webhook; OLM v1 refuses such rules."
    bad "rules:\n- apiGroups: ['*']\n  resources: ['*']"
    fix "rules:\n- apiGroups: [example.com]\n  resources: [widgets]";

    Olmv1UnsupportedKind = "olmv1/unsupported-kind", Error, Olmv1, since "0.1.0", opm None;
    summary "The bundle ships an object kind OLM does not install (OLM v1: \"unsupported resource ... with kind ...\")."
    why "OLM v1 installs only the kinds operator-registry supports (Secret, ConfigMap, Service, RBAC, monitoring objects, PodDisruptionBudget, PriorityClass, VerticalPodAutoscaler, NetworkPolicy, console objects); any other kind makes it refuse the whole bundle."
    bad "manifests/route.yaml   (kind: Route)"
    fix "Create the object from the operator at run time, or ship it separately.";

    Olmv1ApiService = "olmv1/apiservice", Error, Olmv1, since "0.1.0", opm None;
    summary "The CSV owns APIServices (OLM v1: \"unsupported bundle: apiServiceDefintions are not supported\")."
    why "OLM v1 never installs owned APIServices (its limitations document says so); the bundle is refused at install time."
    bad "apiservicedefinitions:\n  owned:\n  - group: metrics.example.com ..."
    fix "Serve the API with a CRD, or install the aggregated API server outside OLM.";

    Olmv1WebhookCertProvider = "olmv1/webhook-cert-provider", Warning, Olmv1, since "0.1.0", opm None;
    summary "The bundle has webhooks: OLM v1 installs it only with a certificate provider (cert-manager or OpenShift service-ca) on the cluster."
    why "Without a provider OLM v1 refuses it: \"unsupported bundle: webhookDefinitions are not supported\". cert-manager support is on by default, so the cluster needs cert-manager installed (or OpenShift)."
    bad "webhookdefinitions: [...]   on a cluster without cert-manager"
    fix "Install cert-manager before the operator, or render with --cert-provider to see the certificate objects.";

    Olmv1NoAllNamespaces = "olmv1/no-all-namespaces", Error, Olmv1, since "0.1.0", opm None;
    summary "The bundle does not support AllNamespaces (OLM v1: \"unsupported bundle: bundle does not support AllNamespaces install mode\")."
    why "Single- and own-namespace installs are behind the alpha feature gate SingleOwnNamespaceInstallSupport, off by default; on a default OLM v1 cluster such a bundle cannot be installed."
    bad "installModes:\n- {type: OwnNamespace, supported: true}\n- {type: AllNamespaces, supported: false}"
    fix "- {type: AllNamespaces, supported: true}   (if the operator can watch all namespaces)";

    Olmv1MultiNamespaceOnly = "olmv1/multinamespace-only", Error, Olmv1, since "0.1.0", opm None;
    summary "The bundle supports only MultiNamespace (OLM v1: \"bundle must support at least one of [AllNamespaces SingleNamespace OwnNamespace] install modes\")."
    why "A ClusterExtension cannot express several watch namespaces, so OLM v1 refuses bundles that support nothing else."
    bad "installModes:\n- {type: MultiNamespace, supported: true}   # the only supported mode"
    fix "Support AllNamespaces (or Single/OwnNamespace).";

    Olmv1Dependency = "olmv1/dependency", Error, Olmv1, since "0.1.0", opm None;
    summary "The bundle declares a dependency (OLM v1: \"has a dependency declared via property ... which is currently not supported\")."
    why "OLM v1 does not resolve dependencies: olm.package.required, olm.gvk.required (which opm derives from required CRDs and APIs) and olm.constraint make it refuse the bundle."
    bad "metadata/dependencies.yaml:\n  dependencies:\n  - type: olm.package\n    value: {packageName: etcd, version: '>=0.9.0'}"
    fix "Install the dependency separately and drop the declaration (and required CRDs/APIs).";

    Olmv1CrdV1beta1 = "olmv1/crd-v1beta1", Error, Olmv1, since "0.1.0", opm None;
    summary "A CRD uses apiextensions.k8s.io/v1beta1, which OLM v1 reads as v1 (losing v1beta1-only fields) and the API server no longer serves."
    why "OLM v1 decodes every CRD into the v1 type whatever its apiVersion, so a v1beta1 CRD loses its validation and versions layout; Kubernetes removed v1beta1 CRDs in 1.22, and OLM v1's own catalog scripts reject them."
    bad "apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition"
    fix "apiVersion: apiextensions.k8s.io/v1   (convert with the v1 schema per version)";

    Olmv1Render = "olmv1/render", Error, Olmv1, since "0.1.0", opm None;
    summary "OLM v1's renderer fails on the bundle (a manifest it cannot parse, a conversion CRD with preserveUnknownFields, a CRD claimed by two conversion webhooks)."
    why "These failures happen while OLM v1 reads or renders the bundle, after its validators; the bundle cannot be installed. The message is OLM v1's own."
    bad "a conversion CRD with spec.preserveUnknownFields: true"
    fix "Do what the message says; `olmpack bundle render` shows the same error offline.";
}
