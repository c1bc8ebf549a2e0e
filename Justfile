# olmpack developer recipes. `just --list` shows them.

# The whole test suite (installs the registry and OCI tools it needs on Debian first).
test:
    ./scripts/test.sh

# Formatting and lints, as CI runs them.
lint:
    cargo fmt --all -- --check
    cargo clippy --all-targets --profile ci -- -D warnings

# Every benchmark; figures are printed, never asserted.
bench: bench-validate bench-build bench-push bench-catalog bench-catalog-build bench-render bench-template bench-gzip-size bench-legacy-sqlite bench-legacy-pm bench-serve bench-serve-load bench-copy bench-filter bench-olmv1 bench-sign bench-mirror bench-upgrade bench-check

# Validation throughput and peak memory over ../shared/corpus.
bench-validate:
    cargo bench --bench validate

# Catalog validation speed over ../shared/catalogs/fbc (MB/s, folders/s, peak memory, ratio to opm).
bench-catalog:
    cargo bench --bench catalog_validate

# Bundle build speed vs tar|gzip -6 and peak memory (largest corpus bundle, synthetic 50 MB).
bench-build:
    cargo bench --bench build

# Push to a local registry, cold and warm, against `skopeo copy` of the same image.
bench-push:
    cargo bench --bench registry_push

# Catalog image build (largest shared catalog) vs tar|gzip -6, and its push vs `skopeo copy`.
bench-catalog-build:
    cargo bench --bench catalog_build

# Damage real bundle, catalog and template files (testdata/, ../shared) and run every entry point
# on each (loading, every rule, init planning, render, graphs, templates, the image build and the
# built image read back damaged), in-process: 200,000 cases by default with a printed seed;
# reports cases/s and panics. Replay a run or one case: `just fuzz SEED=123`,
# `just fuzz SEED=123 CASE=42` (also CASES=N, JOBS=N, CORPUS=DIR|none, MAX_BUNDLE_KB=N).
fuzz *ARGS:
    cargo run --profile ci --example fuzz -- {{ARGS}}

# Validate every corpus bundle and compare with tests/corpus/expected-verdicts.tsv.
corpus:
    cargo test --profile ci --test library corpus -- --nocapture
    cargo run --profile ci --quiet -- bundle validate ../shared/corpus/bundles/*/* --color never | tail -n 1

# catalog render of every ../shared/catalogs/fbc folder in one call: MB/s, peak RSS, ratio to opm.
bench-render:
    cargo bench --bench render

# Template rendering from a local registry (-j 1 vs -j N) against the sum of single-bundle renders.
bench-template:
    cargo bench --bench catalog_template

# The bundle size rule's exact tier: ms/MB of Go's deflate length (goflate) vs zlib-rs level 6.
bench-gzip-size:
    cargo bench --bench gzip_size

# catalog render of every ../shared/legacy/sqlite database in one call: MB/s, ms per package,
# ratio to opm's `opm render index.db` per package (../shared/legacy/TIMES.tsv).
bench-legacy-sqlite:
    cargo bench --bench legacy_sqlite
# catalog render of every ../shared/legacy/packages package in one call: MB/s, ms per package,
# ratio to the reference's initializer + opm render index.db per package (TIMES.tsv).
bench-legacy-pm:
    cargo bench --bench legacy_pm
# catalog serve against opm v1.26.5 without a cache ($OLMPACK_OPM or opm on PATH; SERVE.md's
# figures when absent) in the same run, on the 61 shared 4.18 packages and a five-fold copy:
# OLM v0's call patterns (packageserver sweep, GetBundle, *Replace*, GetDefaultBundleThatProvides,
# ListBundles), time to SERVING, peak RSS alone and under 32 clients, ratios to opm.
# OLMPACK_SERVE_BEFORE=path/to/older/olmpack adds it as a third column.
bench-serve:
    cargo bench --bench serve
# catalog serve under load: 32 Python grpcio clients for 15 s on the largest shared catalog;
# calls/s, failures and peak RSS, as ratios to one client and to opm v1.26.5 (SERVE.md A.8).
bench-serve-load:
    cargo bench --bench serve_load

# olmpack copy of a 256 MiB layer (BENCH_LAYER_MB) registry->registry and registry->oci:, vs
# skopeo copy: wall time, MiB/s and peak RSS (as a fraction of the layer and a ratio to skopeo).
bench-copy:
    cargo bench --bench copy

# catalog filter (20 packages of a five-fold copy of the shared catalogs, every shared case) and
# catalog diff, against catalog-filter's figures in ../shared/filter/TIMES.tsv.
bench-filter:
    cargo bench --bench filter
# bundle render (OLM v1) of every ../shared/corpus bundle in three modes in one process:
# renders/s, peak RSS after a tenth and after all, ratio to operator-controller's renderer
# (../shared/olmv1/TIMES.tsv, one process per render).
bench-olmv1:
    cargo bench --bench olmv1_render

# Verify 1,000 cosign signatures of one OCI layout in one process (vs the 2 s budget), 1,000
# OpenPGP simple signatures in-process, and what a cosign signature adds to a push (vs 50 ms).
bench-sign:
    cargo bench --bench sign

# catalog mirror of a catalog naming 300 small images (BENCH_MIRROR_IMAGES) vs skopeo copy --all
# of the same list one after another (ratio), a second run over the complete target (fraction of
# the first, blobs uploaded), and peak RSS with a 256 MiB layer (BENCH_MIRROR_LAYER_MB).
bench-mirror:
    cargo bench --bench mirror

# CRD upgrade safety over every edge of a 500-bundle package and catalog query over the whole
# 4.18 catalog, against jq over opm's render of the same folders (scripts/bench-upgrade.sh).
bench-upgrade:
    cargo build --release
    OLMPACK=target/release/olmpack sh scripts/bench-upgrade.sh

# Two release binaries on the hot paths, alternately (a profile change must keep the speed;
# docs/design/binary-size.md): median CPU seconds, new/old, outputs compared byte for byte.
compare-binaries old new rounds="5":
    scripts/compare-binaries.sh {{old}} {{new}} {{rounds}}

# Regenerate the Markdown reference (commands and rules) in docs/reference/; the test suite
# fails when it is stale (tests/cli/reference_docs.rs).
docs:
    rm -rf docs/reference
    cargo run --quiet -- reference --output-dir docs/reference

# olmpack check (issue 43) on one operator and a whole checkout of community-operators-prod
# (CHECK_REPO; CHECK_OPERATOR, default kube-green), against operator-pipelines' checks
# (CHECK_REFERENCE_VENV, ../shared/pipelines/SOURCE.md) on the same data in the same run; the
# whole-checkout reference over BENCH_CHECK_SAMPLE operators (default 10, or all). Ratios printed.
bench-check:
    if [ -z "${OLMPACK:-}" ]; then cargo build --release; fi
    OLMPACK=${OLMPACK:-target/release/olmpack} sh scripts/bench-check.sh

