//! The file-based catalog rules (`catalog validate`): every check of current `opm validate`
//! (errors, with the opm release that introduced each) and a few beyond opm (warnings). The
//! reasons cite CATALOG.md (opm's loader, `ConvertToModel` and `model.Validate`).

super::records! {
    /// The catalog family, in documentation order.
    family RULES = Catalog;

    CatalogUnreadable = "catalog/unreadable", Error, Default [Load], since "0.1.0", opm Some("always");
    summary "Every file and folder under the catalog must be readable (opm reads every file, whatever its name)."
    why "opm walks the whole tree and stops at the first file it cannot read, so the catalog cannot be served or validated."
    bad "chmod 000 catalog/my-op/catalog.json"
    fix "Make the file readable, or list it in a .indexignore file if it is not part of the catalog.";

    CatalogSyntax = "catalog/syntax", Error, Default [Load], since "0.1.0", opm Some("always");
    summary "Every file must be a JSON stream or multi-document YAML, with `---` separators followed only by a comment."
    why "opm parses every file under the catalog, with no extension filter (a README, .DS_Store or a .git/ folder included), and the first parse error fails the whole catalog."
    bad "catalog/README.md   (or a .git/ folder inside the catalog)"
    fix "Move it out of the catalog, or add a .indexignore beside it:\n  README.md\n  .git";

    CatalogBlobShape = "catalog/blob-shape", Error, Default [Load], since "0.1.0", opm Some("always");
    summary "Every document must be a mapping whose values JSON can hold."
    why "opm decodes each document into a JSON object; a list, a scalar or a comment-only document (null) fails the catalog."
    bad "---\n# just a comment\n---\nschema: olm.package"
    fix "Remove the comment-only document (or move the comment into the next one).";

    CatalogDuplicateKey = "catalog/duplicate-key", Error, Default [Load], since "0.1.0", opm Some("v1.28.0");
    summary "A blob must not have keys that differ only in case (opm matches keys case-insensitively)."
    why "opm matches keys case-insensitively and, since v1.28, rejects a blob with two spellings of one key: \"duplicate keys for key schema\"."
    bad "{\"schema\": \"olm.package\", \"Schema\": \"olm.package\", \"name\": \"my-op\"}"
    fix "{\"schema\": \"olm.package\", \"name\": \"my-op\"}";

    CatalogYamlDuplicateKey = "catalog/yaml-duplicate-key", Warning, Default [Load], since "0.1.0", opm None;
    summary "A YAML mapping repeats a key; opm silently keeps the last value."
    why "opm's lenient YAML decoding keeps the last value without a word, so the first value, the one a reviewer reads, is ignored."
    bad "schema: olm.package\nname: my-op\nname: my-operator"
    fix "schema: olm.package\nname: my-operator";

    CatalogMissingSchema = "catalog/missing-schema", Error, Default [Load], since "0.1.0", opm Some("always");
    summary "Every blob needs a `schema` key."
    why "opm dispatches blobs on schema; one without it fails the catalog (\"is missing root schema field\")."
    bad "{\"name\": \"my-op\", \"defaultChannel\": \"stable\"}"
    fix "{\"schema\": \"olm.package\", \"name\": \"my-op\", \"defaultChannel\": \"stable\"}";

    CatalogMetaType = "catalog/meta-type", Error, Default [Load], since "0.1.0", opm Some("always");
    summary "`schema`, `package` and `name` must be strings."
    why "opm reads these three keys before anything else and rejects a non-string (\"expected value for key to be a string\")."
    bad "name: 1.0   # YAML reads a number"
    fix "name: \"1.0\"";

    CatalogFieldType = "catalog/field-type", Error, Default [Load], since "0.1.0", opm Some("always");
    summary "Fields of olm.package, olm.channel, olm.bundle and olm.deprecations blobs must have the JSON type opm decodes them into."
    why "opm decodes the blobs into Go structs; one field of the wrong type fails the whole catalog (\"cannot unmarshal number into Go struct field Bundle.image of type string\")."
    bad "{\"schema\": \"olm.channel\", \"entries\": {\"name\": \"my-op.v1.0.0\"}}"
    fix "{\"schema\": \"olm.channel\", \"entries\": [{\"name\": \"my-op.v1.0.0\"}]}";

    CatalogBundleObject = "catalog/bundle-object", Error, Default [Load], since "0.1.0", opm Some("always");
    summary "olm.bundle.object properties must hold base64 of a JSON or YAML manifest (or, as in opm 1.26, a ref to a file inside the catalog)."
    why "opm decodes every olm.bundle.object when loading; data that is not base64 of a manifest fails the catalog (\"parse property at index N as bundle object\")."
    bad "{\"type\": \"olm.bundle.object\", \"value\": {\"data\": \"kind: CustomResourceDefinition\"}}"
    fix "\"data\": \"eyJhcGlWZXJzaW9uIjoi...\"   (base64 of the manifest; opm render writes it)";

    CatalogPackageName = "catalog/package-name", Error, Default, since "0.1.0", opm Some("v1.41.0 (DNS-1123; empty name always)");
    summary "A package needs a name that is a DNS-1123 label."
    why "Since v1.41 opm rejects a package name that is not a DNS-1123 label (lower case, digits, dashes, at most 63 characters); an empty name was always an error."
    bad "{\"schema\": \"olm.package\", \"name\": \"My_Operator\"}"
    fix "{\"schema\": \"olm.package\", \"name\": \"my-operator\"}";

    CatalogPackageDuplicate = "catalog/package-duplicate", Error, Default, since "0.1.0", opm Some("always");
    summary "A package must be declared by exactly one olm.package blob."
    why "opm fails with \"duplicate package\"; a package copied into two files usually means one of them is stale."
    bad "my-op/catalog.json and old/catalog.json both hold {\"schema\": \"olm.package\", \"name\": \"my-op\"}"
    fix "Keep one olm.package blob per package.";

    CatalogPackageUnknown = "catalog/package-unknown", Error, Default, since "0.1.0", opm Some("always");
    summary "Channels, bundles and deprecations must name a package declared by an olm.package blob."
    why "opm fails with \"unknown package\"; usually the olm.package blob is missing or its name is misspelt."
    bad "{\"schema\": \"olm.channel\", \"package\": \"my-operater\", ...}"
    fix "\"package\": \"my-operator\"   (or add the olm.package blob)";

    CatalogChannelName = "catalog/channel-name", Error, Default, since "0.1.0", opm Some("always");
    summary "A channel needs a name."
    why "Subscriptions select channels by name; opm fails with \"contains channel with no name\"."
    bad "{\"schema\": \"olm.channel\", \"package\": \"my-op\", \"entries\": [...]}"
    fix "{\"schema\": \"olm.channel\", \"name\": \"stable\", \"package\": \"my-op\", \"entries\": [...]}";

    CatalogChannelDuplicate = "catalog/channel-duplicate", Error, Default, since "0.1.0", opm Some("always");
    summary "A package must not declare the same channel twice."
    why "opm fails with \"has duplicate channel\"; two blobs for one channel usually come from a merge."
    bad "two olm.channel blobs named stable for package my-op"
    fix "Merge their entries into one olm.channel blob.";

    CatalogEntryDuplicate = "catalog/entry-duplicate", Error, Default, since "0.1.0", opm Some("always");
    summary "A channel must not list the same bundle twice."
    why "opm fails with \"duplicate entry\": a bundle has one set of edges per channel."
    bad "\"entries\": [{\"name\": \"my-op.v1.0.0\"}, {\"name\": \"my-op.v1.0.0\", \"replaces\": \"my-op.v0.9.0\"}]"
    fix "\"entries\": [{\"name\": \"my-op.v1.0.0\", \"replaces\": \"my-op.v0.9.0\"}]";

    CatalogBundleDuplicate = "catalog/bundle-duplicate", Error, Default, since "0.1.0", opm Some("always");
    summary "A package must not declare the same bundle twice."
    why "opm fails with \"has duplicate bundle\"; usually a bundle rendered twice into two files."
    bad "two olm.bundle blobs named my-op.v1.0.0"
    fix "Keep one.";

    CatalogBundleName = "catalog/bundle-name", Error, Default, since "0.1.0", opm Some("always (normalized name v1.62.0)");
    summary "A bundle needs a name; with a release it must be <package>-v<version>-<release>."
    why "Channel entries refer to bundles by name, so opm requires one; since v1.62 a bundle with a release must carry the normalized name."
    bad "{\"schema\": \"olm.bundle\", \"package\": \"my-op\", \"image\": \"...\"}"
    fix "{\"schema\": \"olm.bundle\", \"name\": \"my-op.v1.0.0\", \"package\": \"my-op\", ...}";

    CatalogBundlePackage = "catalog/bundle-package", Error, Default, since "0.1.0", opm Some("always");
    summary "A bundle needs a package, equal to its olm.package property's packageName."
    why "opm fails with \"package name must be set for bundle\" or \"does not match olm.package property\"; a mismatch means the bundle was rendered for another package."
    bad "\"package\": \"my-op\", properties: [{\"type\": \"olm.package\", \"value\": {\"packageName\": \"other-op\", ...}}]"
    fix "Make both name the same package (re-render the bundle).";

    CatalogPropertyInvalid = "catalog/property-invalid", Error, Default, since "0.1.0", opm Some("always");
    summary "Known property types (olm.package, olm.gvk, olm.csv.metadata, …) must have values of their shape."
    why "opm parses known property types when converting to its model; a malformed value fails the catalog (\"parse properties for bundle\")."
    bad "{\"type\": \"olm.gvk\", \"value\": \"example.com/v1/Db\"}"
    fix "{\"type\": \"olm.gvk\", \"value\": {\"group\": \"example.com\", \"kind\": \"Db\", \"version\": \"v1\"}}";

    CatalogPackageProperty = "catalog/package-property", Error, Default, since "0.1.0", opm Some("always");
    summary "A bundle needs exactly one olm.package property."
    why "It carries the bundle's version; opm fails with \"must have exactly 1 olm.package property\"."
    bad "\"properties\": [{\"type\": \"olm.gvk\", ...}]"
    fix "add {\"type\": \"olm.package\", \"value\": {\"packageName\": \"my-op\", \"version\": \"1.0.0\"}}";

    CatalogImageReference = "catalog/image-reference", Error, Default, since "0.1.0", opm Some("v1.64.0");
    summary "image and relatedImages[].image, when set, must be valid image pull specs."
    why "Since v1.64 opm refuses the whole catalog when one pull spec does not parse (\"invalid image pull spec\"), so opm serve and catalog builds fail."
    bad "\"image\": \"oci://quay.io/acme/my-op-bundle:v1\""
    fix "\"image\": \"quay.io/acme/my-op-bundle@sha256:...\"";

    CatalogBundleImage = "catalog/bundle-image", Error, Default, since "0.1.0", opm Some("always");
    summary "A bundle without olm.bundle.object properties needs an image."
    why "OLM installs a bundle from its image or from its embedded objects; with neither, opm fails with \"bundle image must be set\"."
    bad "{\"schema\": \"olm.bundle\", \"name\": \"my-op.v1.0.0\", \"image\": \"\", ...}"
    fix "\"image\": \"quay.io/acme/my-op-bundle@sha256:...\"";

    CatalogVersion = "catalog/version", Error, Default, since "0.1.0", opm Some("always (release v1.62.0)");
    summary "The olm.package version must be strict semver; a release must be a valid pre-release of at most 20 characters, with no build metadata in the version."
    why "opm orders bundles by this version with strict semver parsing and fails on one that does not parse; since v1.62 it also checks the release field."
    bad "{\"packageName\": \"my-op\", \"version\": \"v1.0\"}"
    fix "{\"packageName\": \"my-op\", \"version\": \"1.0.0\"}";

    CatalogBundleNotInChannel = "catalog/bundle-not-in-channel", Error, Default, since "0.1.0", opm Some("always");
    summary "Every bundle must be an entry of at least one channel."
    why "A bundle in no channel can never be installed; opm fails with \"not found in any channel entries\"."
    bad "olm.bundle my-op.v1.1.0, and no channel lists it"
    fix "Add {\"name\": \"my-op.v1.1.0\", \"replaces\": \"my-op.v1.0.0\"} to a channel's entries, or delete the bundle.";

    CatalogEntryMissingBundle = "catalog/entry-missing-bundle", Error, Default, since "0.1.0", opm Some("always");
    summary "Every channel entry must name an olm.bundle blob of the package."
    why "opm fails with \"no olm.bundle blobs found\" for the entry; usually the bundle was never rendered into the catalog, or a file that held it failed to parse (fix that first)."
    bad "\"entries\": [{\"name\": \"my-op.v1.1.0\"}], no olm.bundle named my-op.v1.1.0"
    fix "olmpack catalog render quay.io/acme/my-op-bundle:v1.1.0 >> catalog/my-op/catalog.json";

    CatalogDefaultChannel = "catalog/default-channel", Error, Default, since "0.1.0", opm Some("always");
    summary "A package needs a defaultChannel naming one of its channels."
    why "OLM uses it for subscriptions that name no channel; opm fails with \"default channel must be set\" or \"not found in channels list\"."
    bad "{\"schema\": \"olm.package\", \"name\": \"my-op\", \"defaultChannel\": \"\"}"
    fix "\"defaultChannel\": \"stable\"";

    CatalogPackageNoChannels = "catalog/package-no-channels", Error, Default, since "0.1.0", opm Some("always");
    summary "A package needs at least one channel."
    why "Without a channel nothing of the package can be installed; opm fails with \"package must contain at least one channel\"."
    bad "an olm.package blob and bundles, but no olm.channel"
    fix "Add {\"schema\": \"olm.channel\", \"name\": \"stable\", \"package\": \"my-op\", \"entries\": [...]}";

    CatalogChannelEmpty = "catalog/channel-empty", Error, Default, since "0.1.0", opm Some("always");
    summary "A channel needs at least one entry."
    why "opm fails with \"channel must contain at least one bundle\"; a subscription to the channel could install nothing."
    bad "{\"schema\": \"olm.channel\", \"name\": \"stable\", \"package\": \"my-op\", \"entries\": []}"
    fix "Add an entry, or remove the channel.";

    CatalogChannelHead = "catalog/channel-head", Error, Default, since "0.1.0", opm Some("always");
    summary "A channel needs exactly one head: one entry that no replaces or skips points at."
    why "OLM upgrades subscriptions to the head; with two heads (\"multiple channel heads found in graph\") or none, opm refuses the channel."
    bad "entries: [{name: v1.0.0}, {name: v1.1.0}]   # nothing links them"
    fix "entries: [{name: v1.0.0}, {name: v1.1.0, replaces: v1.0.0}]";

    CatalogReplacesCycle = "catalog/replaces-cycle", Error, Default, since "0.1.0", opm Some("always");
    summary "The replaces chain from the head must not loop."
    why "OLM follows replaces from the head to find upgrade paths; a loop (\"detected cycle in replaces chain\") makes the graph meaningless."
    bad "{name: a, replaces: b}, {name: b, replaces: a}"
    fix "{name: b, replaces: a}, {name: a}";

    CatalogStranded = "catalog/stranded", Error, Default, since "0.1.0", opm Some("always (v1.58.0 walk)");
    summary "Every entry must be on the replaces chain from the head or be skipped (opm 1.58 walk)."
    why "A stranded bundle can be installed but never upgraded from or to; opm fails with \"channel contains one or more stranded bundles\" (since v1.58 the walk stops at a skipped bundle, so more graphs fail)."
    bad "{name: v1.2.0, replaces: v1.1.0}, {name: v1.1.0}, {name: v1.0.0}"
    fix "{name: v1.1.0, replaces: v1.0.0}   (or skip v1.0.0 from the head)";

    CatalogDuplicateVersion = "catalog/duplicate-version", Error, Default, since "0.1.0", opm Some("v1.47.0");
    summary "Two bundles of a package must not have the same version (and release)."
    why "OLM orders bundles by version; since v1.47 opm fails with \"duplicate versions found in bundles\"."
    bad "my-op.v1.0.0 and my-op.v1.0.0-rebuild both with version 1.0.0"
    fix "Give the rebuild its own version (1.0.1) or a release.";

    CatalogSkipEmpty = "catalog/skip-empty", Error, Default, since "0.1.0", opm Some("always");
    summary "A channel entry's skips must not contain an empty name."
    why "opm fails with \"skip[N] is empty\"; an empty name usually comes from a template with a missing value."
    bad "{\"name\": \"my-op.v1.1.0\", \"skips\": [\"\"]}"
    fix "{\"name\": \"my-op.v1.1.0\", \"skips\": [\"my-op.v1.0.1\"]}";

    CatalogSkipRange = "catalog/skip-range", Error, Default, since "0.1.0", opm Some("v1.69.0");
    summary "A channel entry's skipRange must be a valid semver range."
    why "OLM ignores a range it cannot parse, losing those upgrade edges; since v1.69 opm fails with \"invalid skipRange\"."
    bad "\"skipRange\": \">=1.0 <1.1.0,\""
    fix "\"skipRange\": \">=1.0.0 <1.1.0\"";

    CatalogDeprecation = "catalog/deprecation", Error, Default, since "0.1.0", opm Some("v1.32.0");
    summary "olm.deprecations blobs: one per known package, entries with a schema, a message and an existing target, no duplicates."
    why "Since v1.32 opm validates deprecations strictly (\"cannot deprecate bundle: bundle not found\"); OLM shows the message to users of the deprecated package, channel or bundle."
    bad "{\"reference\": {\"schema\": \"olm.bundle\", \"name\": \"my-op.v0.9.0\"}}   # no message, no such bundle"
    fix "{\"reference\": {\"schema\": \"olm.bundle\", \"name\": \"my-op.v1.0.0\"}, \"message\": \"use 1.1.0\"}";

    CatalogHeadNotHighest = "catalog/head-not-highest", Warning, Default, since "0.1.0", opm None;
    summary "A channel's head is not its highest version: users are led to an older bundle."
    why "OLM upgrades to the head, not to the highest version; a mis-linked entry leaves users below the newest release without a word."
    bad "{name: v1.0.0, replaces: v1.1.0}, {name: v1.1.0}"
    fix "{name: v1.1.0, replaces: v1.0.0}, {name: v1.0.0}";

    CatalogUnreachable = "catalog/unreachable", Warning, Default, since "0.1.0", opm None;
    summary "An entry has no upgrade path to the channel head (not reached by replaces, skips or skipRange from the head)."
    why "Clusters running that bundle can never upgrade in this channel; opm does not check reachability."
    bad "an entry that nothing replaces, skips or covers by skipRange from the head's side"
    fix "Add it to the head's skips or widen the head's skipRange.";

    CatalogReplacesUnknown = "catalog/replaces-unknown", Warning, Default, since "0.1.0", opm None;
    summary "replaces names a bundle that is in no channel of the package."
    why "opm allows the tail to replace a missing bundle, but a typo there silently cuts the upgrade path from the release before."
    bad "{\"name\": \"my-op.v1.1.0\", \"replaces\": \"my-op.v1.0\"}"
    fix "\"replaces\": \"my-op.v1.0.0\"";

    CatalogSkipsUnknown = "catalog/skips-unknown", Warning, Default, since "0.1.0", opm None;
    summary "skips names a bundle the catalog does not know."
    why "opm never checks skips targets; a misspelt name skips nothing and the bundle meant to be skipped stays a stranded or reachable node."
    bad "\"skips\": [\"my-op.v1.0.O\"]"
    fix "\"skips\": [\"my-op.v1.0.0\"]";

    CatalogDefaultChannelStale = "catalog/default-channel-stale", Warning, Default, since "0.1.0", opm None;
    summary "The default channel's head is older than another channel's head (channels named as pre-release, such as nightly, candidate, alpha, beta, preview, rc, and heads with a pre-release version are not compared)."
    why "New subscriptions without a channel get the default channel; if it lags behind, they install an old release."
    bad "defaultChannel: stable (head 1.0.0); fast head 2.0.0"
    fix "Promote the release to stable, or make the newer channel the default.";

    CatalogCsvFields = "catalog/csv-fields", Warning, Default, since "0.1.0", opm None;
    summary "Bundle metadata (olm.csv.metadata or the CSV object) has fields of the wrong type or missing ones OLM shows."
    why "The console and OLM v1 read these fields from the catalog; a wrong type makes the listing fail to decode, a missing display name or description leaves it blank."
    bad "{\"type\": \"olm.csv.metadata\", \"value\": {\"keywords\": \"database\"}}"
    fix "\"keywords\": [\"database\"]";

    CatalogCsvInstallModes = "catalog/csv-install-modes", Warning, Default, since "0.1.0", opm None;
    summary "Bundle metadata install modes must be known, unique and support at least one mode."
    why "OLM picks an OperatorGroup mode from this list; with no supported mode the bundle cannot be installed."
    bad "\"installModes\": [{\"type\": \"OwnNamespace\", \"supported\": false}]"
    fix "\"installModes\": [{\"type\": \"AllNamespaces\", \"supported\": true}]";

    CatalogCsvMinKubeVersion = "catalog/csv-min-kube-version", Warning, Default, since "0.1.0", opm None;
    summary "Bundle metadata minKubeVersion must be a semantic version when set."
    why "OLM v0 leaves a CSV pending when minKubeVersion is not three dotted numbers after an optional v."
    bad "\"minKubeVersion\": \"1.19\""
    fix "\"minKubeVersion\": \"1.19.0\"";

    CatalogCsvAlmExamples = "catalog/csv-alm-examples", Warning, Default, since "0.1.0", opm None;
    summary "The CSV's alm-examples annotation must be a JSON list of objects of kinds the bundle provides."
    why "The console parses alm-examples to offer create forms; invalid JSON breaks the operator's page."
    bad "\"alm-examples\": \"[{kind: Db}]\""
    fix "\"alm-examples\": \"[{\\\"apiVersion\\\": \\\"example.com/v1\\\", \\\"kind\\\": \\\"Db\\\", ...}]\"";

    CatalogEmpty = "catalog/empty", Error, Default, since "0.1.0", opm None;
    summary "A catalog folder must hold at least one olm.* blob: an empty one is usually a wrong path (--allow-empty accepts it)."
    why "opm validates, renders and serves an empty folder without a word, so a mistyped path publishes a catalog image that offers nothing."
    bad "olmpack catalog build ./catalogs/  (the blobs are in ./catalog/)"
    fix "Point at the folder that holds the olm.package, olm.channel and olm.bundle blobs, or pass --allow-empty when an empty catalog is meant.";

    CatalogOpmLoad = "catalog/opm-load", Error, Default, since "0.1.0", opm Some("v1.18.1 to v1.26.x only (fixed in v1.27.0)");
    summary "The opm the catalog is for (--opm-compat, or the opm a catalog build's --base names) must be able to load every blob."
    why "opm v1.18.1 to v1.26.x rewrite the text \\u003c, \\u003e and \\u0026 in each document before decoding it, so a string holding that text literally (an alm-examples annotation written with Go's escaping, exposed by olm.csv.metadata in every OpenShift 4.17+ catalog) fails with \"invalid character '<' in string escape code\" and the whole catalog with it: opm validate and render fail, and an opm 1.26 image fails at start unless a shipped cache spares it the parse. Current opm loads the same catalog, so only naming the target opm reveals it."
    bad "olmpack catalog build catalog/ --base quay.io/operator-framework/opm:v1.26.5\n  (a bundle's alm-examples holds \"http://host/\\u003cworkspace\\u003e/\")"
    fix "Build on an opm v1.27 or later base image, or write the characters themselves (\"http://host/<workspace>/\").";

    CatalogMetadataForm = "catalog/metadata-form", Warning, Default, since "0.1.0", opm None;
    summary "With a --target of OpenShift 4.17 or later, a bundle carries olm.bundle.object properties that the pipelines replace by olm.csv.metadata."
    why "From OpenShift 4.17 the operator pipelines render catalogs with `opm ... --migrate-level bundle-object-to-csv-metadata` (render_catalogs.sh, is_catalog_v4_17_plus): the catalog shipped for those versions holds olm.csv.metadata, not the manifests checked here, so what OLM v0 and the console read differs from this folder (and an opm before v1.27 fails on escaped text in it, see catalog/opm-load)."
    bad "catalogs/v4.17/my-operator/catalog.yaml   (bundles with olm.bundle.object properties)"
    fix "Render the catalog for 4.17 and later with `--migrate-level bundle-object-to-csv-metadata` (olmpack catalog matrix does), and commit that form.";
}
