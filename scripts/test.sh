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
# Signing (tests/cli/signing.rs): GnuPG for simple signing both ways with skopeo, and an
# independent cosign implementation in Python (Debian's python3-cryptography and python3-nacl).
command -v gpg >/dev/null 2>&1 || need+=(gnupg)
/usr/bin/python3 -c 'import cryptography, nacl' >/dev/null 2>&1 || need+=(python3-cryptography python3-nacl)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing test tools: ${need[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}"
fi

# `test-hooks` compiles in the test-only panic hook that tests/cli/isolation.rs drives (src/guard.rs).
cargo test --release --all-targets --features test-hooks --no-fail-fast "$@"
