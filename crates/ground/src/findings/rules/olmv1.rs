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

    Olmv1CrdUpgradeScope = "olmv1/crd-upgrade-scope", Error, Olmv1, since "0.1.0", opm None;
    summary "A CRD's scope changes between a bundle and its upgrade (OLM v1: \"scope: scope changed\")."
    why "Namespaced and Cluster objects cannot be converted into each other; operator-controller's crdupgradesafety preflight refuses the upgrade, so the ClusterExtension stays on the old bundle."
    bad "old: scope: Namespaced\nnew: scope: Cluster"
    fix "Keep the scope; ship a new CRD (another name) for the other scope.";

    Olmv1CrdUpgradeStoredVersionRemoval = "olmv1/crd-upgrade-stored-version-removal", Error, Olmv1, since "0.1.0", opm None;
    summary "An upgrade drops a CRD version objects are stored at (OLM v1: \"storedVersionRemoval: stored versions removed\")."
    why "Objects stored at a version the new CRD no longer lists cannot be read; the preflight refuses the upgrade. Offline, the stored versions are the old bundle's storage version(s) (or its status.storedVersions)."
    bad "old: versions [v1alpha1 (storage)]\nnew: versions [v1 (storage)]"
    fix "Keep the old version (served: false) for one release and migrate stored objects before removing it.";

    Olmv1CrdUpgradeFieldRemoval = "olmv1/crd-upgrade-field-removal", Error, Olmv1, since "0.1.0", opm None;
    summary "An upgrade removes a field from a CRD version that both bundles have (OLM v1: \"existingFieldRemoval: removed field\")."
    why "Existing objects may set the field; removing it from the schema prunes or rejects their data, so the preflight refuses the upgrade."
    bad "old: spec.properties.size\nnew: (no size)"
    fix "Keep the field (deprecate it in its description), or add a new CRD version without it.";

    Olmv1CrdUpgradeType = "olmv1/crd-upgrade-type", Error, Olmv1, since "0.1.0", opm None;
    summary "An upgrade changes a property's type (OLM v1: \"type: type changed\")."
    why "Stored objects hold values of the old type, which the new schema rejects."
    bad "old: size: {type: integer}\nnew: size: {type: string}"
    fix "Add a new field (or a new version with conversion) instead of changing the type.";

    Olmv1CrdUpgradeEnum = "olmv1/crd-upgrade-enum", Error, Olmv1, since "0.1.0", opm None;
    summary "An upgrade removes allowed enum values, or adds an enum to a property that had none (OLM v1: \"enum: ...\")."
    why "Objects already using a removed value become invalid; adding values is allowed by OLM's configuration."
    bad "old: enum: [a, b, c]\nnew: enum: [a, b]"
    fix "Keep every allowed value; add new ones only.";

    Olmv1CrdUpgradeRequired = "olmv1/crd-upgrade-required", Error, Olmv1, since "0.1.0", opm None;
    summary "An upgrade makes more fields required (OLM v1: \"required: new required fields\")."
    why "Objects written before the upgrade lack the new required field and fail validation on their next update."
    bad "old: required: [name]\nnew: required: [name, size]"
    fix "Make the field optional with a default in the controller.";

    Olmv1CrdUpgradeDefault = "olmv1/crd-upgrade-default", Error, Olmv1, since "0.1.0", opm None;
    summary "An upgrade adds, removes or changes a property's default (OLM v1: \"default: ...\")."
    why "A default changes what existing objects mean when read back; the preflight refuses any default change."
    bad "old: size: {type: integer}\nnew: size: {type: integer, default: 3}"
    fix "Keep the default as it was; apply new defaults in the controller.";

    Olmv1CrdUpgradeMaximum = "olmv1/crd-upgrade-maximum", Error, Olmv1, since "0.1.0", opm None;
    summary "An upgrade adds or lowers a maximum, maxItems, maxLength or maxProperties (OLM v1: \"maximum decreased\" / \"maximum constraint added\")."
    why "Existing values above the new bound become invalid."
    bad "old: replicas: {type: integer}\nnew: replicas: {type: integer, maximum: 5}"
    fix "Keep bounds as loose as before.";

    Olmv1CrdUpgradeMinimum = "olmv1/crd-upgrade-minimum", Error, Olmv1, since "0.1.0", opm None;
    summary "An upgrade adds or raises a minimum, minItems, minLength or minProperties (OLM v1: \"minimum increased\" / \"minimum constraint added\")."
    why "Existing values below the new bound become invalid."
    bad "old: name: {type: string}\nnew: name: {type: string, minLength: 3}"
    fix "Keep bounds as loose as before.";

    Olmv1CrdUpgradePattern = "olmv1/crd-upgrade-pattern", Error, Olmv1, since "0.1.0", opm None;
    summary "An upgrade adds, changes or removes a property's pattern (OLM v1: \"pattern: ...\")."
    why "Existing values may not match the new pattern; crdify refuses every pattern change by default."
    bad "old: host: {type: string}\nnew: host: {type: string, pattern: '^[a-z]+$'}"
    fix "Validate in the controller or a new version instead.";

    Olmv1CrdUpgradeNullable = "olmv1/crd-upgrade-nullable", Error, Olmv1, since "0.1.0", opm None;
    summary "An upgrade makes a property nullable or no longer nullable (OLM v1: \"nullable: ...\")."
    why "Clients and stored objects disagree on whether null is a value; the preflight refuses either change."
    bad "old: size: {type: integer}\nnew: size: {type: integer, nullable: true}"
    fix "Keep nullable as it was.";

    Olmv1CrdUpgradeOneOf = "olmv1/crd-upgrade-oneof", Error, Olmv1, since "0.1.0", opm None;
    summary "An upgrade adds a oneOf constraint or adds or removes oneOf subschemas (OLM v1: \"oneOf: ...\")."
    why "A new or narrower oneOf rejects objects that were valid."
    bad "old: tls: {type: object}\nnew: tls: {type: object, oneOf: [{required: [mode]}]}"
    fix "Keep oneOf as it was.";

    Olmv1CrdUpgradeUnhandled = "olmv1/crd-upgrade-unhandled", Error, Olmv1, since "0.1.0", opm None;
    summary "An upgrade changes a schema field no specific check covers (format, x-kubernetes-*, allOf, additionalProperties, ...) (OLM v1: \"unhandled: unhandled changes found\")."
    why "operator-controller fails closed on changes it cannot judge, so the upgrade is refused; olmpack prints the old and new values in full."
    bad "old: email: {type: string}\nnew: email: {type: string, format: email}"
    fix "Keep the field as it was, or make the change in a new CRD version.";
}
