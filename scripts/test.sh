#!/usr/bin/env bash
# The whole test suite, on a fresh Debian machine or a developer's one.
# Installs what the integration tests need (a real OCI registry, independent OCI clients, and Go
# as the reference for the bundle-size figure)
# when it is missing, then runs every test. The README's second set-up command runs this.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v docker-registry >/dev/null 2>&1 || need+=(docker-registry)
command -v skopeo >/dev/null 2>&1 || need+=(skopeo)
command -v umoci >/dev/null 2>&1 || need+=(umoci)
command -v openssl >/dev/null 2>&1 || need+=(openssl)
# Go itself is the reference for the bundle-size figure (tests/library/goflate_go.rs).
command -v go >/dev/null 2>&1 || need+=(golang-go)
# tests/cli/sources.rs proves with strace that mistyped paths and --offline open no socket.
command -v strace >/dev/null 2>&1 || need+=(strace)
# The graph render test lays labels out in a real sans font; the man page test reads pages with
# groff and man (tests/cli/catalog_graph.rs, tests/cli/completions_man.rs).
[ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need+=(fonts-dejavu-core)
command -v groff >/dev/null 2>&1 || need+=(groff-base)
command -v man >/dev/null 2>&1 || need+=(man-db)
# catalog serve is checked by clients olmpack did not write: Python grpcio (stubs generated at test
# time by grpc_tools) and curl (tests/cli/catalog_serve.rs).
/usr/bin/python3 -c 'import grpc, grpc_tools' >/dev/null 2>&1 || need+=(python3-grpcio python3-grpc-tools)
command -v curl >/dev/null 2>&1 || need+=(curl)
# The zsh completion script is parsed by zsh (tests/cli/completions_man.rs); `catalog graph -o
# dot` is laid out by Graphviz (tests/cli/catalog_template_cases.rs).
command -v zsh >/dev/null 2>&1 || need+=(zsh)
command -v dot >/dev/null 2>&1 || need+=(graphviz)
# Root-only cases run as uid 1001 through setpriv, and tests that must not reach the internet run
# under `unshare -n` (tests/support/proc.rs): both from util-linux.
{ command -v setpriv && command -v unshare; } >/dev/null 2>&1 || need+=(util-linux)
# Signing (tests/cli/signing.rs): GnuPG for simple signing both ways with skopeo, and an
# independent cosign implementation in Python (Debian's python3-cryptography and python3-nacl).
command -v gpg >/dev/null 2>&1 || need+=(gnupg)
/usr/bin/python3 -c 'import cryptography, nacl' >/dev/null 2>&1 || need+=(python3-cryptography python3-nacl)
# Attestations (tests/cli/attestation.rs): the SBOM checked against SPDX 2.3's schema rules.
/usr/bin/python3 -c 'import jsonschema' >/dev/null 2>&1 || need+=(python3-jsonschema)
command -v git >/dev/null 2>&1 || need+=(git)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing test tools: ${need[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}"
fi

# Every test that loops over ../shared reports how many cases it ran (tests/support/shared.rs):
# the table is printed after the suite. Under OLMPACK_REQUIRE_CORPUS=1 (or OLMPACK_CI=1, as in CI)
# a missing datum, tool or privilege fails its test instead of skipping it.
cases_log="$(mktemp)"
trap 'rm -f "$cases_log"' EXIT
# The `ci` profile (Cargo.toml: optimized, without the release profile's whole-program LTO,
# which every test binary would pay at link time) and the features of the README's
# `cargo run --profile ci`, so this build reuses every crate that one compiled (only the test
# targets are new).
status=0
OLMPACK_CASES_LOG="$cases_log" cargo test --profile ci --all-targets --no-fail-fast "$@" || status=$?
if [ -s "$cases_log" ]; then
  echo "real-data cases per test (cases, floor):"
  sort "$cases_log" | awk -F '\t' '{ printf "  %-70s %7d  (floor %d)\n", $1, $2, $3 }'
fi
exit "$status"
