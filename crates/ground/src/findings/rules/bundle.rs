//! The registry+v1 bundle rules (`bundle validate`): loading, format, CSV, CRDs, other objects,
//! metadata files, size, and the optional operatorhub, good-practices and bundle-objects groups.
//! The reasons cite FIELD.md (the upstream tools' behaviour) where a tool is named.

super::records! {
    /// The bundle family, in documentation order.
    family RULES = Bundle;

    // --- loading and YAML ---
    YamlSyntax = "yaml/syntax", Error, Default [Load], since "0.1.0", opm None;
    summary "Every manifest and metadata file must be valid YAML or JSON."
    why "opm render skips a manifest that does not parse (with only a warning), so its object silently disappears from the catalog; operator-sdk and OLM fail on it. A CSV that does not parse is reported by OLM as \"no CSV in bundle\", hiding the real cause."
    bad "spec:\n  version: 0.1.0\n   replaces: my-op.v0.0.9   # indented one space too far"
    fix "spec:\n  version: 0.1.0\n  replaces: my-op.v0.0.9";

    YamlDuplicateKey = "yaml/duplicate-key", Error, Default [Load], since "0.1.0", opm None;
    summary "A mapping must not repeat a key (Kubernetes' strict decoding rejects it; lenient decoders silently keep the last value)."
    why "Which value wins depends on the reader: kubectl and the API server's strict decoding reject the object, opm and OLM keep the last value. The first value, the one a reviewer usually reads, may never take effect."
    bad "metadata:\n  name: my-op.v1.0.0\n  name: my-op.v1.0.1"
    fix "metadata:\n  name: my-op.v1.0.1   # one key, the value you mean";

    YamlMultiDocument = "yaml/multi-document", Warning, Default, since "0.1.0", opm None;
    summary "A manifest file holds several YAML documents; OLM v0 and opm read only the first."
    why "opm render and OLM v0's unpack job read only the first document of each manifest file (opm says \"using only the first one\"); OLM v1 reads all of them. The later objects are installed by one OLM and not the other."
    bad "# manifests/rbac.yaml\nkind: Role\n...\n---\nkind: RoleBinding\n..."
    fix "Put each object in its own file: manifests/role.yaml and manifests/rolebinding.yaml.";

    ObjectShape = "object/shape", Error, Default [Load], since "0.1.0", opm None;
    summary "A manifest document must be a Kubernetes object with apiVersion, kind and metadata.name."
    why "OLM applies each manifest as a Kubernetes object; without apiVersion and kind it cannot be decoded, and opm drops it from the rendered bundle."
    bad "- name: not-an-object   # a list, not an object"
    fix "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: my-config";

    FileTooLarge = "file/too-large", Error, Default [Load], since "0.1.0", opm None;
    summary "A file is larger than olmpack reads (far above any real bundle)."
    why "The largest real bundle file is a 2.6 MiB CRD; a file far beyond that is a mistake (a binary, a dump) and could never fit OLM's 1 MiB ConfigMap anyway. olmpack refuses it instead of reading it into memory."
    bad "manifests/operator-image.tar   (400 MB)"
    fix "Remove the file; a bundle holds manifests, not images.";

    FileUnreadable = "file/unreadable", Error, Default [Load], since "0.1.0", opm None;
    summary "A file or folder could not be read (permissions, I/O error): the command exits 2."
    why "A file olmpack cannot read would be missing from the image, and the verdict on the rest would be incomplete; so the run exits 2 rather than pass or fail on partial input."
    bad "chmod 000 manifests/csv.yaml"
    fix "Make the file readable (chmod 644 manifests/csv.yaml) or check the path.";

    FileNotText = "file/not-text", Error, Default [Load], since "0.1.0", opm None;
    summary "A manifest or metadata file is not UTF-8 text, or a YAML file is a folder."
    why "Kubernetes manifests are UTF-8 YAML or JSON; a binary or UTF-16 file cannot be decoded by opm or OLM, and a folder named like a YAML file breaks OLM v0's unpack (it reads every entry as a file)."
    bad "manifests/csv.yaml saved as UTF-16 by an editor"
    fix "Save it as UTF-8 (iconv -f UTF-16 -t UTF-8).";

    FileSymlink = "file/symlink", Error, Default [Load], since "0.1.0", opm None;
    summary "A symlink leaves the bundle or cannot be followed; images cannot carry it."
    why "An image layer would carry either a dangling link or a file from outside the bundle folder; what is built would not be what is in the folder."
    bad "manifests/crd.yaml -> ../../config/crd/bases/crd.yaml"
    fix "Copy the file into manifests/ (make bundle does), or link only within the bundle.";

    FileNearConfigMapLimit = "file/size", Warning, Default, since "0.1.0", opm None;
    summary "A single manifest above 1 MiB cannot be stored uncompressed in the ConfigMap OLM v0 unpacks bundles into."
    why "OLM v0's unpack job writes each file into one ConfigMap of at most 1 MiB; installs fail with \"Too long: must have at most 1048576 bytes\" (operator-framework/api#228 asks for this per-file check)."
    bad "manifests/big.crd.yaml   1.4 MiB (a CRD with a huge OpenAPI schema)"
    fix "Shrink the schema (drop descriptions, use x-kubernetes-preserve-unknown-fields for free-form parts).";

    FileHidden = "file/hidden", Warning, Default, since "0.1.0", opm None;
    summary "Hidden files (and OCI whiteouts) in manifests/ or metadata/ are skipped by opm but copied into images by docker builds."
    why "Real bundles carry .DS_Store and .wh..wh..opq files; opm ignores dot files, but a docker build copies them into the image, so the image holds content nobody reviewed."
    bad "metadata/.DS_Store"
    fix "Delete the file (and add it to .gitignore).";

    FileSubdirectory = "file/subdirectory", Error, Default, since "0.1.0", opm None;
    summary "manifests/ holds a subfolder: operator-framework/api and opm alpha bundle validate reject it, opm render loses its files, OLM v0's unpack job and OLM v1 fail (a subfolder of metadata/ is a warning)."
    why "Each tool treats a subfolder differently: opm render drops its files silently, OLM v0's unpack job fails reading it as a file, and OLM v1 refuses the bundle (\"subdirectories are not allowed within the manifests directory\")."
    bad "manifests/crds/my-crd.yaml"
    fix "manifests/my-crd.yaml   (every manifest at the top level of manifests/)";

    FileExtension = "file/extension", Warning, Default, since "0.1.0", opm None;
    summary "A manifest file does not end in .yaml, .yml or .json; OLM reads it anyway."
    why "OLM and opm read every file in manifests/ whatever its name, so a README or a backup there is parsed as a manifest; an unusual extension is usually such a file."
    bad "manifests/csv.yaml.orig"
    fix "Remove stray files from manifests/, or rename a real manifest to .yaml.";

    FileSecret = "file/secret", Warning, Default, since "0.1.0", opm None;
    summary "A file looks like a registry credential (auth.json, .dockerconfigjson): it would be published inside the image."
    why "Thirteen public bundles ship an auth.json with a real registry credential: everything in the folder goes into a public image."
    bad "metadata/auth.json"
    fix "Delete the file, rotate the credential, and keep credentials outside the bundle folder.";

    MetadataUnknownFile = "metadata/unknown-file", Warning, Default, since "0.1.0", opm None;
    summary "metadata/ holds a file OLM does not read (a misspelled dependencies.yaml, a backup)."
    why "opm tries every metadata file as annotations, dependencies and properties, and the first that decodes wins; a misspelled dependencies file means the dependencies are silently ignored, and a backup can shadow the real annotations."
    bad "metadata/dependency.yaml   (singular)"
    fix "metadata/dependencies.yaml";

    // --- format: folders and annotations ---
    ManifestsMissing = "format/manifests-missing", Error, Default, since "0.1.0", opm None;
    summary "The bundle must have a manifests/ folder."
    why "registry+v1 bundles carry their objects in manifests/; without it there is nothing for OLM to install and every tool rejects the bundle."
    bad "my-bundle/\n  metadata/annotations.yaml"
    fix "my-bundle/\n  manifests/my-op.clusterserviceversion.yaml\n  metadata/annotations.yaml";

    ManifestsEmpty = "format/manifests-empty", Error, Default, since "0.1.0", opm None;
    summary "manifests/ must contain at least one YAML file."
    why "An empty manifests/ is one of operator-framework/api's most common rejections; OLM has no CSV to install."
    bad "manifests/   (empty)"
    fix "Generate the manifests (operator-sdk generate bundle, or copy the CSV and CRDs in).";

    MetadataMissing = "format/metadata-missing", Error, Default, since "0.1.0", opm None;
    summary "The bundle must have a metadata/ folder."
    why "metadata/annotations.yaml names the package and channels; opm render fails with \"Could not find annotations file\" and OLM cannot place the bundle."
    bad "my-bundle/\n  manifests/..."
    fix "olmpack bundle init my-bundle --package my-op --channels stable";

    AnnotationsMissing = "format/annotations-missing", Error, Default, since "0.1.0", opm None;
    summary "metadata/annotations.yaml must exist and hold an `annotations` mapping."
    why "The annotations are the bundle's identity (package, channels, media type); opm and OLM read them from this file, not from image labels."
    bad "# metadata/annotations.yaml\noperators.operatorframework.io.bundle.package.v1: my-op"
    fix "annotations:\n  operators.operatorframework.io.bundle.package.v1: my-op\n  ...";

    AnnotationsFallback = "format/annotations-file-name", Warning, Default, since "0.1.0", opm None;
    summary "The annotations were found in a file other than metadata/annotations.yaml; OLM v1 reads only that name."
    why "opm accepts annotations in any metadata file, but OLM v1 reads only metadata/annotations.yaml, so the bundle works with one OLM and not the other."
    bad "metadata/annotations.yml"
    fix "metadata/annotations.yaml";

    AnnotationMissing = "format/annotation-missing", Error, Default, since "0.1.0", opm None;
    summary "A required annotation (media type, manifests, metadata, package, channels) is missing."
    why "opm's ValidateBundleFormat requires these five keys; without the package or channels OLM cannot place the bundle in a catalog."
    bad "annotations:\n  operators.operatorframework.io.bundle.package.v1: my-op"
    fix "annotations:\n  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n  operators.operatorframework.io.bundle.manifests.v1: manifests/\n  operators.operatorframework.io.bundle.metadata.v1: metadata/\n  operators.operatorframework.io.bundle.package.v1: my-op\n  operators.operatorframework.io.bundle.channels.v1: stable";

    AnnotationEmpty = "format/annotation-empty", Error, Default, since "0.1.0", opm None;
    summary "A required annotation (or a present default channel) has an empty value."
    why "opm checks that the keys exist but lets an empty package pass; the bundle then lands in a package named \"\" that no subscription can name."
    bad "operators.operatorframework.io.bundle.package.v1: \"\""
    fix "operators.operatorframework.io.bundle.package.v1: my-op";

    AnnotationNotString = "format/annotation-type", Warning, Default, since "0.1.0", opm None;
    summary "An annotation value is not a string; image labels are strings, so quote it."
    why "Image labels are strings: an unquoted true or 4.12 becomes a YAML boolean or number, and tools that copy annotations into labels write it differently (True, 4.1), so labels and annotations drift."
    bad "com.redhat.openshift.versions: 4.10"
    fix "com.redhat.openshift.versions: \"4.10\"";

    MediaType = "format/media-type", Error, Default, since "0.1.0", opm None;
    summary "The media type annotation must be registry+v1 and match the content (a CSV is present)."
    why "OLM v0 installs only registry+v1 bundles; opm reports a bundle without a parsable CSV as a media-type mismatch, so olmpack says which of the two is wrong."
    bad "operators.operatorframework.io.bundle.mediatype.v1: plain+v0"
    fix "operators.operatorframework.io.bundle.mediatype.v1: registry+v1";

    ManifestsPath = "format/manifests-path", Error, Default, since "0.1.0", opm None;
    summary "The manifests.v1 annotation must name the bundle's manifests folder."
    why "opm never compares this value with the folder, but OLM v0's unpack job reads the manifests from the path it names; a wrong value installs nothing."
    bad "operators.operatorframework.io.bundle.manifests.v1: manifest/"
    fix "operators.operatorframework.io.bundle.manifests.v1: manifests/";

    MetadataPath = "format/metadata-path", Error, Default, since "0.1.0", opm None;
    summary "The metadata.v1 annotation must name the bundle's metadata folder."
    why "Like manifests.v1, opm does not check it but OLM reads the metadata from the folder it names."
    bad "operators.operatorframework.io.bundle.metadata.v1: meta/"
    fix "operators.operatorframework.io.bundle.metadata.v1: metadata/";

    ChannelName = "format/channel-name", Error, Default, since "0.1.0", opm None;
    summary "Channel names must be non-empty; a name with spaces or a leading dash is almost always a mistake."
    why "An empty name from a trailing comma creates a channel no one can subscribe to; real bundles have a channel literally named --default-channel (a flag pasted into the list) and 'alpha, stable' with a space that some tools keep."
    bad "operators.operatorframework.io.bundle.channels.v1: alpha,"
    fix "operators.operatorframework.io.bundle.channels.v1: alpha";

    DefaultChannelOutside = "format/default-channel", Warning, Default, since "0.1.0", opm None;
    summary "The default channel is not one of this bundle's channels (legal when another bundle of the package carries it)."
    why "If no bundle of the package is in the default channel, OLM cannot resolve a subscription without a channel; 633 real bundles do this on purpose, so it is a warning."
    bad "channels.v1: alpha\nchannel.default.v1: stable"
    fix "channels.v1: alpha,stable\nchannel.default.v1: stable";

    DockerfileLabels = "format/dockerfile-labels", Warning, Default, since "0.1.0", opm None;
    summary "bundle.Dockerfile LABELs must equal the bundle annotations (annotations.yaml wins on the cluster)."
    why "operator-sdk regenerates the two separately and they drift (operator-sdk#4992, #5002); registries and certification read the labels while OLM reads annotations.yaml."
    bad "LABEL operators.operatorframework.io.bundle.channels.v1=alpha   # annotations.yaml says stable"
    fix "Make the LABEL lines match annotations.yaml, or build with olmpack bundle build, which writes labels from the annotations.";

    ImageLabels = "image/labels", Error, Default, since "0.1.0", opm None;
    summary "An image's bundle labels must equal its metadata/annotations.yaml (missing on either side or different)."
    why "No upstream validator compares them; catalogs and registries index by the labels while OLM installs by the annotations, so a mismatch puts the bundle in the wrong package or channel."
    bad "label channels.v1=alpha, metadata/annotations.yaml channels.v1: stable"
    fix "Rebuild the image from the folder (olmpack bundle build copies annotations into labels).";

    ImageShape = "image/shape", Warning, Default, since "0.1.0", opm None;
    summary "A bundle image should be a single-platform manifest with only /manifests, /metadata and /tests, and nothing to run."
    why "A multi-platform index is rejected by release policies (conforma) and confuses pull-by-digest; extra files or an entrypoint mean the image was built from the wrong context."
    bad "docker buildx build --platform linux/amd64,linux/arm64 -f bundle.Dockerfile ."
    fix "olmpack bundle build DIR -t REF   (one manifest, only the bundle folders)";

    PackageName = "format/package-name", Error, Default, since "0.1.0", opm None;
    summary "The package name must be a DNS-1123 label, the rule catalogs enforce (catalog/package-name; opm 1.41 and later refuse others)."
    why "opm >= 1.41 rejects a catalog whose package name is not a DNS-1123 label, so the bundle cannot be added to a current catalog."
    bad "operators.operatorframework.io.bundle.package.v1: My_Operator"
    fix "operators.operatorframework.io.bundle.package.v1: my-operator";

    // --- CSV ---
    CsvMissing = "csv/missing", Error, Default, since "0.1.0", opm None;
    summary "The bundle must contain exactly one ClusterServiceVersion; it has none."
    why "The CSV is what OLM installs; opm says \"no csv in bundle\", operator-sdk \"unable to find a csv\"."
    bad "manifests/ holds only CRDs"
    fix "Add manifests/my-op.clusterserviceversion.yaml (kind: ClusterServiceVersion).";

    CsvMultiple = "csv/multiple", Error, Default, since "0.1.0", opm None;
    summary "The bundle must contain exactly one ClusterServiceVersion; it has several."
    why "opm render silently keeps the first CSV in file order and drops the rest; operator-sdk rejects the bundle. Which version is shipped depends on file names."
    bad "manifests/my-op.v1.0.0.csv.yaml\nmanifests/my-op.v1.1.0.csv.yaml"
    fix "One bundle folder per version, each with its own CSV.";

    CsvApiVersion = "csv/api-version", Warning, Default, since "0.1.0", opm None;
    summary "A ClusterServiceVersion should use apiVersion operators.coreos.com/v1alpha1."
    why "operators.coreos.com/v1alpha1 is the only version of the ClusterServiceVersion API that OLM defines; tools that go by apiVersion do not recognise the CSV under another one (109 real CSVs have one)."
    bad "apiVersion: operators.coreos.com/v1"
    fix "apiVersion: operators.coreos.com/v1alpha1";

    CsvFieldType = "csv/field-type", Error, Default, since "0.1.0", opm None;
    summary "CSV fields must have the type OLM decodes them into (a list, a mapping, a string, a boolean)."
    why "OLM decodes the CSV into Go structs: a field of the wrong type makes the whole CSV fail to decode, and the install stays pending."
    bad "spec:\n  keywords: database   # a string"
    fix "spec:\n  keywords: [database]";

    CsvRequiredField = "csv/required-field", Error, Default, since "0.1.0", opm None;
    summary "A field the CSV schema requires is missing or has the wrong type."
    why "The CSV CRD's schema requires these fields (install strategy, display name, ...); the API server rejects a CSV without them."
    bad "spec:\n  version: 1.0.0   # no install:"
    fix "spec:\n  install:\n    strategy: deployment\n    spec:\n      deployments: [...]";

    CsvName = "csv/name", Error, Default, since "0.1.0", opm None;
    summary "metadata.name and spec.replaces must be DNS-1123 subdomains."
    why "The CSV name is a Kubernetes object name and the node of the upgrade graph; an invalid one is refused by the API server."
    bad "metadata:\n  name: My_Operator.v1.0.0"
    fix "metadata:\n  name: my-operator.v1.0.0";

    CsvVersion = "csv/version", Error, Default, since "0.1.0", opm None;
    summary "spec.version must be a semantic version."
    why "OLM orders bundles and opm builds the catalog's olm.package property from spec.version; opm rejects a version that is not strict semver."
    bad "spec:\n  version: v1.0"
    fix "spec:\n  version: 1.0.0";

    CsvRelease = "csv/release", Error, Default, since "0.1.0", opm None;
    summary "spec.release must be a string of dot-separated pre-release identifiers (at most 20 characters, no leading zeros), spec.version must have no build metadata beside it, and the CSV must be named <package>-v<version>-<release>."
    why "operator-framework/api (#454) and opm v1.62+ order builds of one version by release; the CSV CRD refuses a release outside this grammar and the bundle validator a name that does not carry it (olm-docs #342)."
    bad "metadata:\n  name: acme.v1.2.0\nspec:\n  version: 1.2.0+build\n  release: \"01\""
    fix "metadata:\n  name: acme-v1.2.0-1\nspec:\n  version: 1.2.0\n  release: \"1\"";

    CsvInstallModes = "csv/install-modes", Error, Default, since "0.1.0", opm None;
    summary "Install modes must be present, of known types, not duplicated, and at least one supported."
    why "OLM picks an OperatorGroup mode from this list; an unknown type (a real CSV has OwnNamespacejl) or none supported means the operator can never be installed."
    bad "installModes:\n- type: OwnNamespacejl\n  supported: true"
    fix "installModes:\n- type: OwnNamespace\n  supported: true\n- type: AllNamespaces\n  supported: true";

    CsvDeployments = "csv/deployments", Error, Default, since "0.1.0", opm None;
    summary "Install-strategy deployments need unique DNS-1123 names."
    why "OLM creates one Deployment per entry, named by it; a duplicate name overwrites the other and an invalid one is refused by the API server."
    bad "deployments:\n- name: controller\n- name: controller"
    fix "deployments:\n- name: controller\n- name: webhook";

    CsvWebhooks = "csv/webhooks", Error, Default, since "0.1.0", opm None;
    summary "Webhook definitions must reference existing deployments, be unique, and conversion webhooks need AllNamespaces only."
    why "OLM wires each webhook to the named deployment's service; a missing deployment leaves the webhook without a backend, and a conversion webhook serves a cluster-wide CRD, so OLM requires AllNamespaces mode."
    bad "webhookdefinitions:\n- type: ValidatingAdmissionWebhook\n  deploymentName: controler   # typo"
    fix "  deploymentName: controller";

    CsvExamples = "csv/alm-examples", Error, Default, since "0.1.0", opm None;
    summary "alm-examples must be a JSON list of objects whose kinds the CSV provides."
    why "The console parses alm-examples to offer \"create\" forms; invalid JSON (4 real CSVs) breaks the whole operator page."
    bad "alm-examples: '[{\"kind\": \"Db\",}]'"
    fix "alm-examples: '[{\"apiVersion\": \"example.com/v1\", \"kind\": \"Db\", \"metadata\": {\"name\": \"db\"}}]'";

    CsvExampleMissing = "csv/example-missing", Warning, Default, since "0.1.0", opm None;
    summary "Each owned API should have an example in alm-examples."
    why "Without an example the console's create form for that API starts empty; users have to write the object from the CRD schema."
    bad "owned CRDs Db and Backup; alm-examples lists only a Db"
    fix "Add a Backup example to alm-examples.";

    CsvMinKubeVersion = "csv/min-kube-version", Error, Default, since "0.1.0", opm None;
    summary "spec.minKubeVersion must be a semantic version without a leading v (operator-sdk >= 1.33 rejects one); not three numbers leaves the CSV pending in OLM v0."
    why "OLM v0 parses it as three dotted numbers after an optional v: 1.19 fails and the CSV stays pending; operator-sdk >= 1.33 (operator-framework/api >= 0.17.7) rejects the leading v."
    bad "spec:\n  minKubeVersion: v1.19"
    fix "spec:\n  minKubeVersion: 1.19.0";

    CsvMinKubeVersionUnset = "csv/min-kube-version-unset", Warning, Default, since "0.1.0", opm None;
    summary "spec.minKubeVersion is not set, so the operator claims to run on every Kubernetes version."
    why "Without it OLM installs the operator on clusters whose removed APIs it still uses; with it, olmpack can also judge deprecated APIs against the right version."
    bad "spec:\n  version: 1.0.0   # no minKubeVersion"
    fix "spec:\n  minKubeVersion: 1.25.0";

    CsvAnnotationCase = "csv/annotation-case", Error, Default, since "0.1.0", opm None;
    summary "OLM annotation keys are case-sensitive (olm.skipRange, not olm.skiprange)."
    why "OLM looks the keys up exactly; a misspelt case is silently ignored, and the upgrade edges it was meant to add are lost."
    bad "metadata:\n  annotations:\n    olm.skiprange: '<1.0.0'"
    fix "    olm.skipRange: '<1.0.0'";

    CsvPropertiesAnnotation = "csv/olm-properties-annotation", Warning, Default, since "0.1.0", opm None;
    summary "Properties should live in metadata/properties.yaml, not the olm.properties annotation."
    why "operator-framework/api warns about the annotation, and opm render only warns when its JSON is bad, so the properties are dropped from the catalog with no error."
    bad "metadata:\n  annotations:\n    olm.properties: '[{\"type\": \"olm.maxOpenShiftVersion\", \"value\": \"4.14\"}]'"
    fix "# metadata/properties.yaml\nproperties:\n- type: olm.maxOpenShiftVersion\n  value: \"4.14\"";

    CsvSkipRange = "csv/skip-range", Warning, Default, since "0.1.0", opm None;
    summary "A non-empty olm.skipRange must be a valid semver range: OLM ignores one that is not (its upgrade edges are lost) and opm >= 1.69 rejects it in a catalog. An empty one means none."
    why "OLM v0 discards a range that does not parse, so the upgrades it should allow silently disappear; opm >= 1.69 refuses the catalog (\"invalid skipRange\")."
    bad "olm.skipRange: '>=1.0 <1.2.0,'"
    fix "olm.skipRange: '>=1.0.0 <1.2.0'";

    ServiceAccountClash = "csv/service-account", Error, Default, since "0.1.0", opm None;
    summary "A ServiceAccount manifest must not duplicate one the CSV's deployments use: OLM creates that one."
    why "OLM creates the service accounts named in the CSV's permissions; shipping the same one as a manifest makes the install fight over ownership. It is one of operator-framework/api's most common rejections."
    bad "manifests/controller-manager.serviceaccount.yaml, and the CSV's permissions name controller-manager"
    fix "Delete the ServiceAccount manifest; keep the name in the CSV's permissions.";

    RelatedImages = "csv/related-images", Error, Default, since "0.1.0", opm None;
    summary "relatedImages entries need a valid image pull spec: opm >= 1.64 refuses the whole catalog and operator-framework/api >= 0.40 errors (an empty image is a warning)."
    why "Mirroring tools read relatedImages to copy images for disconnected clusters; since opm 1.64 an invalid pull spec makes opm validate, opm serve and catalog builds fail for the whole catalog."
    bad "relatedImages:\n- name: db\n  image: oci://quay.io/acme/db:v1"
    fix "- name: db\n  image: quay.io/acme/db@sha256:...";

    // --- CRDs ---
    CrdOwnedMissing = "crd/owned-missing", Error, Default, since "0.1.0", opm None;
    summary "Every CRD the CSV owns must be in the bundle, with the owned version served."
    why "OLM installs owned CRDs from the bundle; opm render fails (\"couldn't find ... in bundle\") and the install waits for an API that never appears."
    bad "spec.customresourcedefinitions.owned names dbs.example.com v1; no such CRD in manifests/"
    fix "Add manifests/dbs.example.com.crd.yaml serving v1.";

    CrdOwnedGroup = "crd/owned-group", Error, Default, since "0.1.0", opm None;
    summary "An owned-CRD entry in the CSV must not carry a group: key (operator-sdk then cannot find the CRD)."
    why "operator-registry's content check, the first thing operator-sdk bundle validate runs, keys owned CRDs by {group, kind, name, version} as written in the CSV but keys the bundle's CRDs without a group (CSVs have no group field), so an entry with group: never matches and the bundle is rejected with \"owned CRD NAME/VERSION not found in bundle\". opm render and OLM ignore the key. Seen in gpu-operator-certified, aqua-operator-certified, sap-btp-operator and ibm-block-csi-operator."
    bad "owned:\n- name: dbs.example.com\n  group: example.com\n  kind: DB\n  version: v1"
    fix "owned:\n- name: dbs.example.com   # the group is the part after the first dot\n  kind: DB\n  version: v1";

    CrdNotOwned = "crd/not-owned", Warning, Default, since "0.1.0", opm None;
    summary "A CRD in the bundle is not owned by the CSV (opm warns; operator-sdk errors; --strict fails)."
    why "A CRD the CSV does not list as owned belongs to no API of the operator: operator-sdk (operator-framework/api) rejects the bundle, one of its most common rejections of real bundles, while opm only warns."
    bad "manifests/backups.example.com.crd.yaml, not in spec.customresourcedefinitions.owned"
    fix "List it under spec.customresourcedefinitions.owned (name, version, kind).";

    CrdDuplicate = "crd/duplicate", Error, Default, since "0.1.0", opm None;
    summary "The same CRD must not appear twice."
    why "Two files defining one CRD: whichever OLM applies last wins, so which schema is installed depends on file order."
    bad "manifests/db.crd.yaml and manifests/db-copy.crd.yaml both define dbs.example.com"
    fix "Keep one file per CRD.";

    CrdInvalid = "crd/invalid", Error, Default, since "0.1.0", opm None;
    summary "The CRD fails Kubernetes' apiextensions validation (names, versions, scope, conversion, approval)."
    why "The API server runs the same validation when OLM creates the CRD; the install fails on the cluster instead of in CI. Protected *.k8s.io groups also need the api-approved.kubernetes.io annotation."
    bad "spec:\n  versions:\n  - name: v1\n    served: true\n    storage: false   # no storage version"
    fix "    storage: true";

    CrdPreserveUnknownFields = "crd/preserve-unknown-fields", Error, Default, since "0.1.0", opm None;
    summary "A CRD's spec.preserveUnknownFields must be false: set to true in an apiextensions.k8s.io/v1 CRD, or left unset in a v1beta1 CRD (where it defaults to true)."
    why "The API server rejects true for v1 CRDs, and operator-framework/api (operator-sdk bundle validate since 1.17) rejects the v1beta1 default the same way: it is the most common reason it rejects a real bundle, mostly old v1beta1 CRDs. The same unchanged CRD gets this error wherever olmpack judges it as a bundle: bundle validate, and the bundles bundle migrate writes from a package-manifest package."
    bad "apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition\nspec:\n  group: example.com   # no preserveUnknownFields: defaults to true"
    fix "Convert the CRD to apiextensions.k8s.io/v1 with a structural schema (x-kubernetes-preserve-unknown-fields: true where free-form); or, in v1beta1, set spec.preserveUnknownFields: false.";

    CrdApiVersion = "crd/api-version", Error, Default, since "0.1.0", opm None;
    summary "CRDs must be apiextensions.k8s.io/v1 (v1beta1 is removed in Kubernetes 1.22: a warning unless the target version is newer)."
    why "Clusters from Kubernetes 1.22 on do not serve apiextensions.k8s.io/v1beta1, so the CRD cannot be created there."
    bad "apiVersion: apiextensions.k8s.io/v1beta1"
    fix "apiVersion: apiextensions.k8s.io/v1   (with a structural schema per version)";

    // --- other objects ---
    KindUnsupported = "object/kind", Error, Default, since "0.1.0", opm None;
    summary "Only the kinds OLM's registry+v1 format installs may be in manifests/."
    why "OLM v0 installs a fixed list of 22 kinds; any other (a Deployment, an IngressClass) makes the install fail with \"unsupported media type registry+v1 for bundle object\"."
    bad "manifests/deployment.yaml (kind: Deployment)"
    fix "Move the Deployment into the CSV's spec.install.spec.deployments.";

    ObjectNamespace = "object/namespace", Error, Default, since "0.1.0", opm None;
    summary "Bundle objects must not set metadata.namespace: OLM chooses the namespace at install time."
    why "OLM installs bundle objects into the OperatorGroup's namespace; a hard-coded one fails or lands in the wrong place."
    bad "metadata:\n  name: my-config\n  namespace: my-op-system"
    fix "metadata:\n  name: my-config";

    ObjectName = "object/name", Error, Default, since "0.1.0", opm None;
    summary "Bundle objects need a metadata.name (a malformed one is a warning)."
    why "The API server refuses an object without a name, so the install fails half-way."
    bad "kind: ConfigMap\nmetadata: {}"
    fix "metadata:\n  name: my-config";

    ObjectMetadata = "object/metadata", Error, Default, since "0.1.0", opm None;
    summary "Labels and annotations must be valid Kubernetes keys and values."
    why "The API server validates label and annotation syntax and refuses the object."
    bad "labels:\n  app name: my-op"
    fix "labels:\n  app.kubernetes.io/name: my-op";

    ObjectDuplicate = "object/duplicate", Warning, Default, since "0.1.0", opm None;
    summary "Two objects share kind and name; one silently replaces the other at install time."
    why "OLM applies both; the second overwrites the first, so which content is installed depends on file order (18 real bundles do this)."
    bad "manifests/a.yaml and manifests/b.yaml both hold ConfigMap my-config"
    fix "Rename one or delete the duplicate.";

    DeprecatedApi = "object/deprecated-api", Warning, Default, since "0.1.0", opm None;
    summary "An object uses an API removed in a Kubernetes version (an error when --k8s-version or minKubeVersion reaches it)."
    why "A removed API cannot be created on newer clusters; the install fails there."
    bad "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget"
    fix "apiVersion: policy/v1";

    // --- metadata files ---
    Dependencies = "dependencies/invalid", Error, Default, since "0.1.0", opm None;
    summary "dependencies.yaml entries must have a known type and a complete value."
    why "OLM resolves dependencies from this file; an entry of unknown type or with a missing field makes resolution fail for every install of the package."
    bad "dependencies:\n- type: olm.package\n  value:\n    packageName: etcd"
    fix "  value:\n    packageName: etcd\n    version: \">=0.9.0\"";

    DependencyRange = "dependencies/version-range", Error, Default, since "0.1.0", opm None;
    summary "olm.package dependency versions must be valid blang semver ranges."
    why "OLM parses the range with blang/semver; one that does not parse makes the dependency unresolvable."
    bad "version: \">= 0.9\""
    fix "version: \">=0.9.0\"";

    Properties = "properties/invalid", Warning, Default, since "0.1.0", opm None;
    summary "properties.yaml must be a list of {type, value} entries."
    why "opm render copies these into the catalog's bundle properties; a malformed entry is dropped or breaks opm validate later."
    bad "properties:\n  olm.maxOpenShiftVersion: 4.14"
    fix "properties:\n- type: olm.maxOpenShiftVersion\n  value: \"4.14\"";

    BundleSize = "bundle/size", Error, Default, since "0.1.0", opm None;
    summary "The gzip+base64 size of manifests/ must stay below OLM's 1 MiB ConfigMap limit (a warning above 85 %)."
    why "OLM v0 stores the unpacked bundle compressed in one ConfigMap; above 1 MiB the install fails at unpack time (\"bundle files exceeded limit\"), long after the image was published."
    bad "manifests/ of 9 MiB of CRD schemas"
    fix "Trim CRD descriptions and examples, or split the operator.";

    // --- robustness and tool fidelity ---
    InternalError = "internal/error", Error, Default, since "0.1.0", opm None;
    summary "olmpack itself failed while handling this bundle (a bug: please report it); the other bundles of the run are still checked and the run exits 2."
    why "A failure of olmpack is not a finding about your files; it is reported per bundle (or catalog) so the others keep their reports, and the run exits 2 so CI does not mistake it for a verdict."
    bad "error[internal/error] olmpack failed while reading manifests/csv.yaml"
    fix "Report it at the olmpack issue tracker with the file named; meanwhile validate the other folders.";

    YamlFirstDocumentEmpty = "yaml/first-document-empty", Error, Default [Load], since "0.1.0", opm None;
    summary "A manifest's first YAML document is empty (only comments) and its object is in a later one: opm and OLM v0 read only the first document, so they find nothing."
    why "A comment-only first document decodes to null: opm then reports \"no csv in bundle\" and OLM v0's unpack retries forever, while OLM v1 works. The file looks fine in review."
    bad "# Copyright Acme\n---\napiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion"
    fix "# Copyright Acme\napiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion";

    MetadataNoContent = "metadata/no-content", Error, Default [Load], since "0.1.0", opm None;
    summary "A metadata file holds only comments or `---`: operator-sdk bundle validate and opm alpha bundle validate crash on it (nil-pointer panic)."
    why "opm's ValidateBundleFormat decodes every metadata file into a pointer that a null document sets to nil, then panics; an empty (0-byte) file is fine."
    bad "# metadata/dependencies.yaml\n# no dependencies yet"
    fix "dependencies: []   (or delete the file)";

    // --- optional: operatorhub ---
    HubProvider = "operatorhub/provider", Error, OperatorHub, since "0.1.0", opm None;
    summary "spec.provider.name must be set."
    why "OperatorHub lists the provider on every card; operator-sdk's operatorhub validator rejects a CSV without one."
    bad "spec:\n  provider: {}"
    fix "spec:\n  provider:\n    name: Acme";

    HubMaintainers = "operatorhub/maintainers", Error, OperatorHub, since "0.1.0", opm None;
    summary "Maintainers need a name and a valid email."
    why "OperatorHub shows them as contacts; operator-sdk's operatorhub validator rejects an invalid email."
    bad "maintainers:\n- name: Ops\n  email: ops-at-acme"
    fix "  email: ops@acme.example";

    HubLinks = "operatorhub/links", Error, OperatorHub, since "0.1.0", opm None;
    summary "Links need a name and a valid URL."
    why "OperatorHub renders them as links; operator-sdk's operatorhub validator rejects an invalid URL."
    bad "links:\n- name: Docs\n  url: docs.acme"
    fix "  url: https://docs.acme.example";

    HubIcon = "operatorhub/icon", Error, OperatorHub, since "0.1.0", opm None;
    summary "One icon with base64 data and an image media type."
    why "OperatorHub shows exactly one icon; data that is not base64 or a media type that is not an image renders a broken picture."
    bad "icon:\n- base64data: icon.png\n  mediatype: png"
    fix "icon:\n- base64data: iVBORw0KGgo...\n  mediatype: image/png";

    HubCapabilities = "operatorhub/capabilities", Error, OperatorHub, since "0.1.0", opm None;
    summary "The capabilities annotation must be one of the five capability levels."
    why "OperatorHub filters by capability level; any other value is rejected by operator-sdk's capabilities validator."
    bad "capabilities: Full Auto"
    fix "capabilities: Auto Pilot   (Basic Install, Seamless Upgrades, Full Lifecycle, Deep Insights, Auto Pilot)";

    HubCategories = "operatorhub/categories", Error, OperatorHub, since "0.1.0", opm None;
    summary "Each comma-separated value of the categories annotation (trimmed) must be one of operator-framework/api's standard categories, or of the custom list in the JSON file OPERATOR_BUNDLE_CATEGORIES names."
    why "OperatorHub filters by category; operator-sdk's categories validator rejects unknown ones (standard: AI/Machine Learning, Application Runtime, Big Data, Cloud Provider, Database, Developer Tools, Integration & Delivery, Logging & Tracing, Modernization & Migration, Monitoring, Networking, Observability, OpenShift Optional, Security, Storage, Streaming & Messaging)."
    bad "categories: Databases"
    fix "categories: Database";

    HubDescription = "operatorhub/description", Warning, OperatorHub, since "0.1.0", opm None;
    summary "The CSV needs a description and keywords for the listing (olmpack's own check: operator-sdk's operatorhub validator does not make it)."
    why "They are the listing's text and search terms; without them the operator is hard to find. A warning, so operator-sdk's verdict is unchanged."
    bad "spec:\n  displayName: \"\""
    fix "spec:\n  displayName: Acme DB\n  description: |\n    Runs Acme DB clusters.\n  keywords: [database]";

    // --- optional: good practices ---
    PracticeResources = "good-practices/resource-requests", Warning, GoodPractices, since "0.1.0", opm None;
    summary "Containers should have resource requests (operator-sdk warns only when `resources.requests` is absent)."
    why "Without requests the scheduler cannot place the operator sensibly and it is first to be evicted under pressure (operator-framework's good-practices validator)."
    bad "containers:\n- name: manager\n  image: ..."
    fix "  resources:\n    requests:\n      cpu: 10m\n      memory: 64Mi";

    PracticeCrdDescription = "good-practices/crd-description", Warning, GoodPractices, since "0.1.0", opm None;
    summary "Owned and required CRDs should have a description."
    why "The console shows it to explain each API; an empty one leaves users guessing."
    bad "owned:\n- name: dbs.example.com\n  kind: Db\n  version: v1"
    fix "  description: A database cluster managed by the operator.";

    PracticeChannelNaming = "good-practices/channel-naming", Warning, GoodPractices, since "0.1.0", opm None;
    summary "Channel names should follow the candidate/fast/stable convention."
    why "Users and tools (the semver template) expect candidate, fast and stable, optionally with a version suffix."
    bad "channels.v1: production"
    fix "channels.v1: stable";

    PracticeCrdPermission = "good-practices/crd-permission", Warning, GoodPractices, since "0.1.0", opm None;
    summary "An operator should not have permission to create CRDs."
    why "OLM installs CRDs from the bundle; an operator that creates CRDs itself bypasses OLM's upgrade checks and needs cluster-admin-like rights."
    bad "rules:\n- apiGroups: [apiextensions.k8s.io]\n  resources: [customresourcedefinitions]\n  verbs: [create]"
    fix "Ship the CRDs in manifests/ and drop the create verb.";

    PracticeCsvName = "good-practices/csv-name", Warning, GoodPractices, since "0.1.0", opm None;
    summary "The CSV name should be <package>.v<semver>."
    why "Catalog tools and humans derive the version from the name; a different pattern makes the upgrade graph hard to read."
    bad "metadata:\n  name: acme-release-7"
    fix "metadata:\n  name: acme.v1.7.0";

    PracticeImageDigest = "good-practices/image-digest", Warning, GoodPractices, since "0.1.0", opm None;
    summary "Images should be pinned by digest for reproducible, disconnected installs (olmpack's own check: operator-sdk's good-practices validator does not make it)."
    why "A tag can move; mirroring for disconnected clusters and reproducible installs need digests (openshift/enhancements#379)."
    bad "image: quay.io/acme/operator:v1.7.0"
    fix "image: quay.io/acme/operator@sha256:...";

    // --- optional: bundle objects ---
    ObjectsPdb = "bundle-objects/pod-disruption-budget", Error, BundleObjects, since "0.1.0", opm None;
    summary "A PodDisruptionBudget must not block all evictions: maxUnavailable 0 (operator-sdk also refuses any string value, such as 25%, which it reads as 0) or minAvailable 100%."
    why "maxUnavailable: 0 or minAvailable: 100% blocks node drains and cluster upgrades; operator-framework/api's bundle-objects validator rejects it."
    bad "spec:\n  maxUnavailable: 0"
    fix "spec:\n  maxUnavailable: 1";

    ObjectsPriorityClass = "bundle-objects/priority-class", Error, BundleObjects, since "0.1.0", opm None;
    summary "A PriorityClass must not be the global default."
    why "globalDefault: true changes the priority of every pod in the cluster that names none."
    bad "globalDefault: true"
    fix "globalDefault: false";

    ObjectsRbac = "bundle-objects/rbac", Error, BundleObjects, since "0.1.0", opm None;
    summary "RBAC must not modify (delete, update, patch, *) a default SecurityContextConstraints named in resourceNames; create/update/patch on policy poddisruptionbudgets is a warning."
    why "Editing OpenShift's default SCCs weakens every workload's security; opm's bundle-objects validator rejects it."
    bad "resources: [securitycontextconstraints]\nresourceNames: [restricted]\nverbs: [update]"
    fix "Create and use your own SCC instead of changing the default ones.";

    // --- targets (only with --target) ---
    TargetKind = "target/kind", Error, Default, since "0.1.0", opm None;
    summary "The bundle ships a kind that a --target refuses although opm accepts it (NetworkPolicy on OpenShift's pipelines and on OLM v1)."
    why "opm accepts NetworkPolicy since operator-registry#1675, but the OpenShift pipelines refuse any bundle holding one for every OpenShift version (operator-pipelines#852) and OLM v1 installs of such a bundle fail (tektoncd/operator#3873): the bundle validates locally and is refused where it is published or installed."
    bad "manifests/operator-netpol.yaml   (kind: NetworkPolicy), validated with --target ocp-4.18,olmv1"
    fix "Remove the NetworkPolicy from manifests/ and have the operator create it at run time (tektoncd/operator did).";
}
