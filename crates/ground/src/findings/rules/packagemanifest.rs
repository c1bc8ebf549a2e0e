//! The package-manifest rules (`bundle validate` on a `<package>.package.yaml` + version-folder
//! tree): what operator-framework/api's package manifest validator, opm's sqlite
//! `DirectoryLoader` (`initializer`, `opm index add`) and `opm alpha bundle generate` refuse, plus
//! warnings for what loads but loses data. The reasons cite LEGACY.md B.1 to B.3. opm has no
//! `validate` command for this format, so no record has an `opm_since`.

super::records! {
    /// The package-manifest family, in documentation order.
    family RULES = PackageManifest;

    PmUnreadable = "packagemanifest/unreadable", Error, Default [Load], since "0.1.0", opm None;
    summary "A file or folder of the package cannot be read."
    why "opm's sqlite loader and operator-sdk walk every non-dot file of the package tree; one they cannot read aborts the load, so nothing of the package is stored."
    bad "chmod 000 my-op/1.0.0/my-op.clusterserviceversion.yaml"
    fix "Make the file readable (or move it out of the package folder).";

    PmYamlSyntax = "packagemanifest/yaml-syntax", Error, Default [Load], since "0.1.0", opm None;
    summary "Every file of the package must be valid YAML or JSON: opm's loader refuses the package otherwise (`could not decode contents of file`)."
    why "The sqlite loader tries to decode every non-dot file of the tree as a package manifest (any file name works), so a README or a broken YAML file anywhere fails the whole load: `could not decode contents of file ... into package`, and `initializer` aborts unless --permissive."
    bad "my-op/README.md   (or a CSV with a tab-indented line)"
    fix "Move non-manifest files out of the package folder, and fix the YAML the message points at.";

    PmEmptyFile = "packagemanifest/empty-file", Error, Default [Load], since "0.1.0", opm None;
    summary "An empty file cannot be decoded; opm's loader refuses the package (`EOF`)."
    why "Decoding an empty file ends at once with `EOF`, which the sqlite loader reports as a decode error of the whole package."
    bad "my-op/1.0.0/placeholder.yaml   (0 bytes)"
    fix "Delete the empty file.";

    PmMultiDocument = "packagemanifest/multi-document", Warning, Default [Load], since "0.1.0", opm None;
    summary "A file holds several YAML documents; opm reads only the first."
    why "The loaders decode one object per file (a CSV is recognised by the first document's kind), so every object after the first `---` is silently left out of the bundle."
    bad "my-op/1.0.0/crds.yaml:\n  kind: CustomResourceDefinition ...\n  ---\n  kind: CustomResourceDefinition ..."
    fix "Put each object in its own file in the version folder.";

    PmPackageFileMissing = "packagemanifest/package-file-missing", Error, Default, since "0.1.0", opm None;
    summary "No file of the package declares a `packageName` (the `<package>.package.yaml`)."
    why "Without a package manifest there are no channels: the sqlite loader stores bundles no channel reaches, and operator-sdk's loader and `opm alpha bundle generate` refuse (`valid PackageManifest YAML file not found`)."
    bad "my-op/\n  1.0.0/my-op.clusterserviceversion.yaml   (no my-op.package.yaml)"
    fix "my-op/my-op.package.yaml:\n  packageName: my-op\n  defaultChannel: stable\n  channels:\n  - name: stable\n    currentCSV: my-op.v1.0.0";

    PmPackageFileMultiple = "packagemanifest/package-file-multiple", Error, Default, since "0.1.0", opm None;
    summary "Several files declare a package; operator-framework/api refuses (`multiple package manifest files found`)."
    why "operator-sdk's loader refuses a second package manifest, `opm alpha bundle generate` silently takes the first in file order, and the sqlite loader adds the channels of both: three tools, three different packages."
    bad "my-op/my-op.package.yaml and my-op/old.package.yaml both with packageName: my-op"
    fix "Keep one package file and delete (or merge) the other.";

    PmPackageDecode = "packagemanifest/package-decode", Error, Default [Load], since "0.1.0", opm None;
    summary "The package file's fields have the wrong type (`could not decode contents into package manifest`)."
    why "opm decodes the package file into a Go struct (`packageName`, `channels[].name`, `currentCSV`, `defaultChannel`); a field of the wrong type fails the decode and the package is refused."
    bad "channels:\n  name: stable\n  currentCSV: my-op.v1.0.0   # a mapping, not a list"
    fix "channels:\n- name: stable\n  currentCSV: my-op.v1.0.0";

    PmChannelsEmpty = "packagemanifest/channels-empty", Error, Default, since "0.1.0", opm None;
    summary "The package file must list at least one channel."
    why "operator-framework/api's validator refuses `channels empty`; with no channel no version is reachable, so a rendered catalog would hold no bundle of the package."
    bad "packageName: my-op\nchannels: []"
    fix "packageName: my-op\nchannels:\n- name: stable\n  currentCSV: my-op.v1.0.0";

    PmChannelNameEmpty = "packagemanifest/channel-name-empty", Error, Default, since "0.1.0", opm None;
    summary "Every channel needs a name."
    why "operator-framework/api refuses `channel N name is empty`; subscriptions name a channel, so one without a name cannot be subscribed to."
    bad "channels:\n- currentCSV: my-op.v1.0.0"
    fix "channels:\n- name: stable\n  currentCSV: my-op.v1.0.0";

    PmChannelHeadEmpty = "packagemanifest/channel-current-csv-empty", Error, Default, since "0.1.0", opm None;
    summary "Every channel needs a `currentCSV`."
    why "The channel head is where the sqlite loader starts its `replaces` walk; without it operator-framework/api refuses (`currentCSV is empty`) and the channel holds nothing."
    bad "channels:\n- name: stable"
    fix "channels:\n- name: stable\n  currentCSV: my-op.v1.0.0";

    PmChannelDuplicate = "packagemanifest/channel-duplicate", Error, Default, since "0.1.0", opm None;
    summary "A channel name appears twice in the package file."
    why "operator-framework/api refuses `duplicate package manifest channel name`; the loaders would otherwise merge or overwrite the two channels' entries, so which head wins depends on the tool."
    bad "channels:\n- name: stable\n  currentCSV: my-op.v1.0.0\n- name: stable\n  currentCSV: my-op.v1.1.0"
    fix "Rename one channel (e.g. `fast`) or delete the stale entry.";

    PmDefaultChannelMissing = "packagemanifest/default-channel-missing", Error, Default, since "0.1.0", opm None;
    summary "With several channels, `defaultChannel` must be set (opm: `no default channel specified`)."
    why "With more than one channel, no channel is the default unless `defaultChannel` names one; operator-framework/api refuses and opm's loader fails with `no default channel specified for <package>`."
    bad "packageName: my-op\nchannels:\n- name: stable ...\n- name: fast ..."
    fix "packageName: my-op\ndefaultChannel: stable\nchannels: ...";

    PmDefaultChannelUnknown = "packagemanifest/default-channel-unknown", Error, Default, since "0.1.0", opm None;
    summary "`defaultChannel` must name a declared channel."
    why "operator-framework/api refuses `default channel not found in the list of declared channels`, and opm's loader finds no default channel; a subscription without a channel would resolve nothing."
    bad "defaultChannel: stabel\nchannels:\n- name: stable ..."
    fix "defaultChannel: stable";

    PmDefaultChannelUnset = "packagemanifest/default-channel-unset", Warning, Default, since "0.1.0", opm None;
    summary "`defaultChannel` is not set: valid for opm with one channel, but operator-sdk's pkgman-to-bundle refuses the package."
    why "opm and operator-framework/api take the only channel as the default, but operator-sdk's pkgman-to-bundle, the usual migration path to bundles, requires the field, so the migration stops here."
    bad "packageName: my-op\nchannels:\n- name: stable\n  currentCSV: my-op.v1.0.0"
    fix "packageName: my-op\ndefaultChannel: stable\nchannels: ...";

    PmVersionNoCsv = "packagemanifest/version-no-csv", Warning, Default, since "0.1.0", opm None;
    summary "A version folder holds no ClusterServiceVersion: opm ignores its files, operator-sdk refuses the package."
    why "The sqlite loader builds a bundle only around a CSV, so the folder's CRDs are silently dropped; operator-sdk's loader (`no bundle csv found`) and `opm alpha bundle generate` (`no ClusterServiceVersion object found`) refuse the package."
    bad "my-op/1.1.0/my-op.crd.yaml   (the CSV was left out)"
    fix "Add the version's CSV to the folder, or delete the folder.";

    PmVersionMultipleCsvs = "packagemanifest/version-multiple-csvs", Error, Default, since "0.1.0", opm None;
    summary "A version folder holds several ClusterServiceVersions: a bundle has exactly one (operator-framework/api and `opm alpha bundle` refuse)."
    why "The sqlite loader makes one bundle per CSV from all files of the folder, so both CSVs share the same CRDs; but a bundle has exactly one CSV, so `opm alpha bundle generate` (`more than one ClusterServiceVersion is found in bundle`) and operator-sdk refuse, and the folder cannot be migrated to bundles."
    bad "my-op/1.0.0/my-op.v1.0.0.clusterserviceversion.yaml\nmy-op/1.0.0/my-op.v1.0.1.clusterserviceversion.yaml"
    fix "Give each CSV its own version folder:\nmy-op/1.0.0/my-op.v1.0.0.clusterserviceversion.yaml\nmy-op/1.0.1/my-op.v1.0.1.clusterserviceversion.yaml";

    PmCsvNameMissing = "packagemanifest/csv-name-missing", Error, Default, since "0.1.0", opm None;
    summary "A ClusterServiceVersion must have metadata.name (opm: `csv name not found`)."
    why "The CSV name is the bundle's name: channel heads, `replaces` and `skips` refer to it, so opm's loader refuses a CSV without one (`csv name not found`)."
    bad "kind: ClusterServiceVersion\nmetadata:\n  namespace: placeholder"
    fix "kind: ClusterServiceVersion\nmetadata:\n  name: my-op.v1.0.0";

    PmCsvNameDuplicate = "packagemanifest/csv-name-duplicate", Error, Default, since "0.1.0", opm None;
    summary "Two ClusterServiceVersions share a name: opm cannot store the second bundle."
    why "Bundle names are unique keys in opm's index, so the sqlite loader fails on the second CSV of the same name; which folder's content a user gets is otherwise undefined."
    bad "my-op/1.0.0/ and my-op/1.0.1/ both hold a CSV named my-op.v1.0.0"
    fix "Give the second CSV its own name (my-op.v1.0.1) and set its replaces.";

    PmCsvField = "packagemanifest/csv-field", Error, Default [Load], since "0.1.0", opm None;
    summary "A ClusterServiceVersion field opm reads (version, replaces, skips, owned and required CRDs) has the wrong type."
    why "opm decodes these fields into typed Go structs to build the channel graph and the provided/required APIs; a wrong type (or a CRD name that is not <plural>.<group>) fails the load of the bundle."
    bad "spec:\n  skips: my-op.v0.9.0   # a string, not a list"
    fix "spec:\n  skips:\n  - my-op.v0.9.0";

    PmProvidedApiMissing = "packagemanifest/provided-api-missing", Error, Default, since "0.1.0", opm None;
    summary "Every owned CRD of the CSV must be defined by a CRD in its folder (opm: `error checking provided apis in bundle`)."
    why "opm's sqlite loader checks `AllProvidedAPIsInBundle` for every bundle: an owned CRD (group, version, kind, plural) no CRD file of the folder defines fails the load (`couldn't find ... in bundle`), and OLM could not install the API."
    bad "owned:\n- name: widgets.example.com\n  version: v1\n  kind: Widget   # but 1.0.0/ has no widgets.example.com CRD"
    fix "Add the CRD manifest (serving version v1) to the version folder, or fix the owned entry to match it.";

    PmFolderVersionMismatch = "packagemanifest/folder-version-mismatch", Warning, Default, since "0.1.0", opm None;
    summary "A version folder's name differs from its CSV's spec.version."
    why "The loaders ignore folder names, but people and migration scripts (pkgman-to-bundle names bundles after folders) do not: a 1.2.0/ folder holding version 1.3.0 is usually a copy that was not fully edited."
    bad "my-op/1.2.0/ holding spec.version: 1.3.0"
    fix "Rename the folder to 1.3.0/ (or fix spec.version).";

    PmCrdV1beta1 = "packagemanifest/crd-v1beta1", Warning, Default, since "0.1.0", opm None;
    summary "A CRD is apiextensions.k8s.io/v1beta1: Kubernetes 1.22 and later cannot serve it."
    why "apiextensions.k8s.io/v1beta1 was removed in Kubernetes 1.22, so installing the bundle fails on any current cluster, and OLM v1 cannot install it."
    bad "apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition"
    fix "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition   (with spec.versions[].schema)";

    PmChannelHeadMissing = "packagemanifest/channel-head-missing", Error, Default, since "0.1.0", opm None;
    summary "A channel's `currentCSV` names no ClusterServiceVersion of the package (opm: `no bundle found for bundlename`)."
    why "The sqlite loader starts each channel's walk at currentCSV; when no CSV has that name the load fails (`no bundle found for bundlename`)."
    bad "channels:\n- name: stable\n  currentCSV: my-op.v1.2.0   # no folder holds my-op.v1.2.0"
    fix "Point currentCSV at the newest CSV the package holds (or add that version).";

    PmReplacesMissing = "packagemanifest/replaces-missing", Error, Default, since "0.1.0", opm None;
    summary "A CSV on a channel replaces a CSV the package does not have (opm: `replaces nonexistent bundle`)."
    why "Following `replaces` from the channel head, the sqlite loader fails at a name no CSV has (`Invalid bundle ..., replaces nonexistent bundle ...`), after the entry was already inserted."
    bad "spec:\n  replaces: my-op.v0.9.0   # no folder holds it"
    fix "Remove the replaces (and list the old version in skips if clusters may still run it), or add the missing version.";

    PmReplacesCycle = "packagemanifest/replaces-cycle", Error, Default, since "0.1.0", opm None;
    summary "Following `replaces` from a channel head comes back to a CSV already seen (opm: `Cycle detected`)."
    why "The sqlite loader walks `replaces` until it is empty; a cycle would never end, so it fails with `Cycle detected, X replaces Y` and the upgrade graph is unusable."
    bad "my-op.v1.0.0 replaces my-op.v1.1.0, and my-op.v1.1.0 replaces my-op.v1.0.0"
    fix "Make replaces point only at older versions; the oldest has none.";

    PmSkipsUnknown = "packagemanifest/skips-unknown", Warning, Default, since "0.1.0", opm None;
    summary "`skips` names a CSV the package does not have; it stays in skips but gets no channel entry."
    why "The sqlite loader adds a channel entry for each skipped name it can find; an unknown one is kept in the CSV's skips but nothing lands in the channel, which is usually a typo in the name."
    bad "spec:\n  skips:\n  - my-op.v0.9.O   # letter O"
    fix "spec:\n  skips:\n  - my-op.v0.9.0";

    PmOrphan = "packagemanifest/orphan", Warning, Default, since "0.1.0", opm None;
    summary "A version belongs to no channel: opm loads it but it vanishes from the rendered catalog."
    why "Channel membership is the `replaces` chain from each currentCSV plus the names it skips; a version on no chain is stored as a bundle without a channel entry, so `opm migrate` (and olmpack's render) drop it and no subscription can reach it."
    bad "my-op/0.8.0/ while stable's chain is my-op.v1.0.0 -> my-op.v0.9.0 (nothing replaces or skips v0.8.0)"
    fix "Link it (`replaces: my-op.v0.8.0` in v0.9.0, or list it in skips), or delete the folder.";
}
