#!/bin/bash
# Two olmpack binaries on the hot paths, alternately (issue 42 item 7: a profile change must
# keep the speed). Usage: scripts/compare-binaries.sh OLD NEW [ROUNDS]
# Workloads (WORKLOADS= picks some): bundle validate -o jsonl over the corpus bundles, catalog
# validate / render -o json / build (serve cache included) of catalogs/fbc/certified-operators,
# bundle build of 40 corpus bundles into one oci: layout, catalog validate --select-optional
# olmv1 of catalogs/versions/certified-operators/v4.16. Prints the median CPU seconds (user +
# system) of each and NEW/OLD, and whether outputs and image indexes are byte-for-byte equal.
# Figures are printed, never asserted.
set -u
A=$1; B=$2; N=${3:-5}
S=${OLMPACK_SHARED:-../shared}
DIRS=$(ls -d "$S"/corpus/bundles/*/* | tr "\n" " ")
BB=$(ls -d "$S"/corpus/bundles/*/* | head -40 | tr "\n" " ")
O=$(mktemp -d)
trap 'rm -rf "$O"' EXIT
run() { # workload binary tag
  local w=$1 exe=$2 tag=$3 cmd
  rm -rf "$O/work.$tag"; mkdir -p "$O/work.$tag"
  case $w in
    validate) cmd="$exe bundle validate -o jsonl $DIRS";;
    catval) cmd="$exe catalog validate $S/catalogs/fbc/certified-operators";;
    render) cmd="$exe catalog render $S/catalogs/fbc/certified-operators -o json";;
    catbuild) cmd="$exe catalog build $S/catalogs/fbc/certified-operators --output oci:$O/work.$tag/cat:v1";;
    bundlebuild) cmd="i=0; for d in $BB; do i=\$((i+1)); $exe bundle build \$d --output oci:$O/work.$tag/b:\$i >/dev/null || exit 1; done";;
    olmv1) cmd="$exe catalog validate --select-optional olmv1 $S/catalogs/versions/certified-operators/v4.16";;
  esac
  /usr/bin/time -o "$O/t" -f "%U %S" sh -c "$cmd" >"$O/$w.$tag.out" 2>"$O/$w.$tag.err"
  echo "$w $tag $(tail -1 "$O/t" | awk '{printf "%.2f", $1+$2}')" >> "$O/times"
}
for w in ${WORKLOADS:-validate catval render catbuild bundlebuild olmv1}; do
  for _ in $(seq "$N"); do run "$w" "$A" A; run "$w" "$B" B; done
  sed -i "s,work\.[AB],work.X,g" "$O/$w.A.out" "$O/$w.B.out" "$O/$w.A.err" "$O/$w.B.err"
  same=same
  cmp -s "$O/$w.A.out" "$O/$w.B.out" && cmp -s "$O/$w.A.err" "$O/$w.B.err" || same=DIFFERENT
  for layout in cat b; do
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
