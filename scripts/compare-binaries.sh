#!/bin/bash
# Two olmpack binaries on the hot paths, alternately (issue 42 item 7: a profile change must
# keep the speed). Usage: scripts/compare-binaries.sh OLD NEW [ROUNDS]
# Workloads (WORKLOADS= picks some): bundle validate -o jsonl over the corpus bundles, catalog
# validate / render -o json / build (serve cache included) of catalogs/fbc/certified-operators,
# bundle build of 40 corpus bundles into one oci: layout (the refused ones listed), catalog
# validate --select-optional olmv1 of catalogs/versions/certified-operators/v4.16, catalog
# render of every legacy SQLite index (ten times), and against a local docker-registry
# (Debian's, on a free loopback port): verify of 40 pushed bundle images each signed with a
# cosign key and an OpenPGP (RSA) key, and copy of an image with a 32 MiB layer oci: ->
# registry -> oci: (three times). Prints the median CPU seconds (user + system) of each and
# NEW/OLD, and whether outputs and image indexes are byte-for-byte equal.
# Figures are printed, never asserted.
set -u
A=$1; B=$2; N=${3:-5}
S=${OLMPACK_SHARED:-../shared}
DIRS=$(ls -d "$S"/corpus/bundles/*/* | tr "\n" " ")
BB=$(ls -d "$S"/corpus/bundles/*/* | head -40 | tr "\n" " ")
O=$(mktemp -d)
REG_PID=
trap '[ -n "$REG_PID" ] && kill "$REG_PID"; rm -rf "$O"' EXIT
# The registry workloads' fixture, made once with NEW: a docker-registry on a free loopback
# port, 40 bundle images pushed and signed (cosign key, OpenPGP key into a lookaside store),
# and a bundle image with a 32 MiB layer in an oci: layout.
registry_fixture() {
  [ -n "$REG_PID" ] && return 0
  PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  mkdir -p "$O/reg" "$O/fx/look" "$O/fx/rd" "$O/fx/gnupg"
  printf 'version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: 127.0.0.1:%s\n' "$O/reg" "$PORT" > "$O/reg.yml"
  docker-registry serve "$O/reg.yml" >"$O/reg.log" 2>&1 & REG_PID=$!
  for _ in $(seq 100); do curl -fs "http://127.0.0.1:$PORT/v2/" >/dev/null && break; sleep 0.1; done
  printf 'default-docker:\n  lookaside: file://%s\n  lookaside-staging: file://%s\n' "$O/fx/look" "$O/fx/look" > "$O/fx/rd/default.yaml"
  chmod 700 "$O/fx/gnupg"
  GNUPGHOME="$O/fx/gnupg" gpg --batch --quiet --passphrase '' --quick-gen-key "bench <bench@example.com>" rsa3072 sign never 2>/dev/null
  GNUPGHOME="$O/fx/gnupg" gpg --batch --quiet --armor --export-secret-keys > "$O/fx/sec.asc"
  GNUPGHOME="$O/fx/gnupg" gpg --batch --quiet --export > "$O/fx/pub.gpg"
  gpgconf --homedir "$O/fx/gnupg" --kill gpg-agent 2>/dev/null
  COSIGN_PASSWORD= "$B" key generate --output-key-prefix "$O/fx/cosign" >/dev/null
  i=0; for d in $BB; do i=$((i+1))
    "$B" bundle build "$d" --no-validate --push -t "127.0.0.1:$PORT/b:$i" >/dev/null 2>&1 || { echo "push of $d failed"; exit 1; }
    COSIGN_PASSWORD= "$B" sign "127.0.0.1:$PORT/b:$i" --sign-key "$O/fx/cosign.key" --gpg-key "$O/fx/sec.asc" --registries-d "$O/fx/rd" >/dev/null || { echo "signing b:$i failed"; exit 1; }
  done
  # A bundle with a 32 MiB incompressible file: the copy workload moves one large blob.
  cp -r "$(echo $BB | cut -d' ' -f1)" "$O/fx/big" && head -c 33554432 /dev/urandom > "$O/fx/big/manifests/blob.bin"
  "$B" bundle build "$O/fx/big" --no-validate --output "oci:$O/fx/img:v1" >/dev/null 2>&1 || { echo "big image failed"; exit 1; }
}
run() { # workload binary tag
  local w=$1 exe=$2 tag=$3 cmd
  rm -rf "$O/work.$tag"; mkdir -p "$O/work.$tag"
  case $w in
    validate) cmd="$exe bundle validate -o jsonl $DIRS";;
    catval) cmd="$exe catalog validate $S/catalogs/fbc/certified-operators";;
    render) cmd="$exe catalog render $S/catalogs/fbc/certified-operators -o json";;
    catbuild) cmd="$exe catalog build $S/catalogs/fbc/certified-operators --output oci:$O/work.$tag/cat:v1";;
    bundlebuild) cmd="i=0; for d in $BB; do i=\$((i+1)); $exe bundle build \$d --output oci:$O/work.$tag/b:\$i >/dev/null 2>&1 || echo refused \$d; done";;
    olmv1) cmd="$exe catalog validate --select-optional olmv1 $S/catalogs/versions/certified-operators/v4.16";;
    sqlite) cmd="for _ in 1 2 3 4 5 6 7 8 9 10; do $exe catalog render $(ls "$S"/legacy/sqlite/*/*.db | tr "\n" " ") -o json || exit 1; done";;
    verify) cmd="i=0; for d in $BB; do i=\$((i+1)); $exe verify 127.0.0.1:$PORT/b:\$i --key $O/fx/cosign.pub --gpg-keyring $O/fx/pub.gpg --registries-d $O/fx/rd || exit 1; done";;
    # A new repository each round; stderr (blobs pushed or mounted) depends on what the
    # registry already holds, so only stdout (the digests) is compared.
    copy) RUN=$((${RUN:-0}+1))
      cmd="for k in 1 2 3; do $exe copy oci:$O/fx/img:v1 127.0.0.1:$PORT/r$RUN-\$k/img:v1 2>/dev/null && $exe copy 127.0.0.1:$PORT/r$RUN-\$k/img:v1 oci:$O/work.$tag/cp:\$k 2>/dev/null || exit 1; done";;
  esac
  /usr/bin/time -o "$O/t" -f "%U %S" sh -c "$cmd" >"$O/$w.$tag.out" 2>"$O/$w.$tag.err"
  echo "$w $tag $(tail -1 "$O/t" | awk '{printf "%.2f", $1+$2}')" >> "$O/times"
}
for w in ${WORKLOADS:-validate catval render catbuild bundlebuild olmv1 sqlite verify copy}; do
  case $w in verify|copy) registry_fixture;; esac
  for _ in $(seq "$N"); do run "$w" "$A" A; run "$w" "$B" B; done
  sed -i -e "s,work\.[AB],work.X,g" -e "s,/r[0-9]*-,/rN-,g" "$O/$w.A.out" "$O/$w.B.out" "$O/$w.A.err" "$O/$w.B.err"
  same=same
  cmp -s "$O/$w.A.out" "$O/$w.B.out" && cmp -s "$O/$w.A.err" "$O/$w.B.err" || same=DIFFERENT
  for layout in cat b cp; do
    [ -f "$O/work.A/$layout/index.json" ] && { cmp -s "$O/work.A/$layout/index.json" "$O/work.B/$layout/index.json" || same="$same, INDEX DIFFERENT"; }
  done
  python3 - "$O/times" "$w" "$same" <<'PY'
import sys
times, w, same = sys.argv[1:]
t = {"A": [], "B": []}
for line in open(times):
    name, tag, cpu = line.split()
    if name == w:
        t[tag].append(float(cpu))
med = {k: sorted(v)[len(v) // 2] for k, v in t.items()}
print(f"{w:12} old {med['A']:.2f} s  new {med['B']:.2f} s  new/old {med['B'] / max(med['A'], 1e-9):.2f}  outputs {same}")
PY
done
