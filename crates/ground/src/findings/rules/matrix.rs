//! The catalog matrix rules (`catalog matrix`): consistency between the catalogs one operator
//! ships for several OpenShift versions (`catalogs/<ocp>/<package>/catalog.yaml`, rendered from
//! the templates its `ci.yaml` maps). Each target is a valid catalog on its own; these rules
//! catch what only shows when the targets are read side by side (issue 44 item 2).

super::records! {
    /// The catalog matrix family, in documentation order.
    family RULES = Repository;

    MatrixImageDiffers = "matrix/image-differs", Error, Default, since "0.1.0", opm None;
    summary "One bundle name points at different images (or digests) in two OpenShift targets."
    why "A bundle name is one release of the operator; if v4.16 and v4.17 install it from two different images, clusters on the two versions run different content under one version number (reviewers catch this by eye today, e.g. sandboxed-containers-operator #2306)."
    bad "basic-4.16.yaml: image: quay.io/a/op@sha256:1111…   basic-4.17.yaml: image: registry.example.com/a/op@sha256:2222…   (both render op.v1.2.0)"
    fix "Name the same published image in every template that lists the release.";

    MatrixBundleMissing = "matrix/bundle-missing", Warning, Default, since "0.1.0", opm None;
    summary "A bundle is in the catalogs of neighbouring OpenShift versions but missing from one inside the range its com.redhat.openshift.versions supports."
    why "A bundle that supports v4.14 to v4.18 and ships in v4.14, v4.15, v4.17 and v4.18 but not v4.16 leaves v4.16 clusters without that release and breaks upgrades that pass through it; usually a template was not updated."
    bad "operators/op/1.2.0/metadata/annotations.yaml: com.redhat.openshift.versions: v4.14-v4.18; catalogs/v4.16/op lacks op.v1.2.0"
    fix "Add the bundle to the template rendered for v4.16, or narrow com.redhat.openshift.versions.";

    MatrixChannelHeadDiffers = "matrix/channel-head-differs", Warning, Default, since "0.1.0", opm None;
    summary "A channel has different heads in two OpenShift targets, and the newer head's supported range includes both."
    why "A user on the older OpenShift version is offered an older release in the same channel although the newer one supports their cluster: the templates drifted apart."
    bad "stable: head op.v1.3.0 in v4.17, op.v1.2.0 in v4.16; op.v1.3.0 supports v4.14 and later"
    fix "Add the newer release to the template of the other target, or limit its com.redhat.openshift.versions.";

    MatrixDefaultChannelDiffers = "matrix/default-channel-differs", Warning, Default, since "0.1.0", opm None;
    summary "Two OpenShift targets that both have the same channels set different default channels."
    why "The default channel decides what a user gets without choosing; when both targets hold both channels, a different default is almost always a template that was not updated."
    bad "v4.16: defaultChannel: stable   v4.17: defaultChannel: fast   (both have stable and fast)"
    fix "Set the same defaultChannel in every template.";

    MatrixUnmappedCatalog = "matrix/unmapped-catalog", Warning, Default, since "0.1.0", opm None;
    summary "A catalogs/<ocp>/<package>/ folder exists that no template in ci.yaml's fbc.catalog_mapping produces."
    why "Nothing regenerates it, so it keeps old content while every other target moves on, and the pipelines' make catalogs deletes it (its clean step removes every catalogs/*/<package> folder first)."
    bad "catalogs/v4.12/op/catalog.yaml exists; ci.yaml maps v4.13 to v4.18 only"
    fix "Add v4.12 to a catalog_mapping row, or delete the folder.";
}
