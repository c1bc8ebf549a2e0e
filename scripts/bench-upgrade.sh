#!/bin/sh
# CRD upgrade safety and catalog query speed (issue 45 item 4). Figures are printed, never asserted.
#  1. every upgrade edge of a 500-bundle package: a synthetic package made from the real
#     stackable-commons-operator bundles of ../shared/catalogs/versions (4.16, olm.bundle.object),
#     alternating its 25.7.0 and 25.11.0 manifests (whose CRDs differ: 4 unsafe changes), each
#     entry replacing the previous one, skipping the two before and with a skipRange over the
#     ten before: `catalog validate --select-optional olmv1`.
#  2. a query over a whole catalog (../shared/catalogs/fbc/*/catalogs/v4.18, 67 packages):
#     `catalog query --upgrade-report -o json`, against `jq` over opm's render of the same
#     folders (../shared/catalogs/opm-render; opm render's own time is in OPM-VERDICTS.tsv).
set -eu
BIN=${OLMPACK:-target/release/olmpack}
SHARED=${OLMPACK_SHARED:-../shared}
N=${BENCH_BUNDLES:-500}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$BIN" catalog render "$SHARED/catalogs/versions/certified-operators/v4.16/stackable-commons-operator" -o json > "$work/src.json"
python3 - "$work" "$N" <<'PY'
import json, sys, os
work, n = sys.argv[1], int(sys.argv[2])
dec = json.JSONDecoder(); text = open(f"{work}/src.json").read(); i = 0; blobs = []
while i < len(text):
    if text[i].isspace(): i += 1; continue
    b, i = dec.raw_decode(text, i); blobs.append(b)
byv = {b["name"]: b for b in blobs if b["schema"] == "olm.bundle"}
a, b = byv["commons-operator.v25.7.0"], byv["commons-operator.v25.11.0"]
os.makedirs(f"{work}/cat/synthetic", exist_ok=True)
out = [{"schema": "olm.package", "name": "synthetic", "defaultChannel": "stable"}]
entries = []
for k in range(n):
    v = f"1.0.{k}"; name = f"synthetic.v{v}"
    src = a if k % 2 == 0 else b
    props = [p for p in src["properties"] if p["type"] != "olm.package"]
    props.insert(0, {"type": "olm.package", "value": {"packageName": "synthetic", "version": v}})
    out.append({"schema": "olm.bundle", "name": name, "package": "synthetic", "image": f"example.com/s:{v}", "properties": props})
    e = {"name": name}
    if k: e["replaces"] = f"synthetic.v1.0.{k-1}"
    if k > 2: e["skips"] = [f"synthetic.v1.0.{k-3}", f"synthetic.v1.0.{k-2}"]
    if k > 10: e["skipRange"] = f">=1.0.{k-10} <1.0.{k}"
    entries.append(e)
out.append({"schema": "olm.channel", "name": "stable", "package": "synthetic", "entries": entries})
with open(f"{work}/cat/synthetic/catalog.json", "w") as f:
    for o in out: f.write(json.dumps(o) + "\n")
PY
echo "== every edge of a $N-bundle package (catalog validate --select-optional olmv1)"
/usr/bin/time -f "wall %e s, peak RSS %M KB" "$BIN" catalog validate "$work/cat" --select-optional olmv1 -o json > "$work/v.json" || true
python3 -c "import json,sys; d=json.load(open('$work/v.json')); print('edges', list(d['olmv1UpgradeEdges'].values())[0])"
mkdir -p "$work/fbc"
for d in "$SHARED"/catalogs/fbc/*/catalogs/v4.18/*; do cp -r "$d" "$work/fbc/$(basename "$(dirname "$(dirname "$(dirname "$d")")")")-$(basename "$d")"; done
echo "== catalog query over the whole 4.18 catalog ($(ls "$work/fbc" | wc -l) packages)"
/usr/bin/time -f "olmpack catalog query --upgrade-report: wall %e s, peak RSS %M KB" "$BIN" catalog query "$work/fbc" --upgrade-report -o json > "$work/q.json"
echo "== jq over opm render's JSON of the same folders (packages, channels, bundle versions)"
/usr/bin/time -f "jq: wall %e s" sh -c "find $SHARED/catalogs/opm-render -name "*.render.json" -exec cat {} + 2>/dev/null | jq -c 'select(.schema==\"olm.bundle\") | {package, name, v: (.properties[] | select(.type==\"olm.package\") | .value.version)}' > /dev/null" || true
awk -F"\t" '!/^#/ {s+=$5} END {printf "opm render (OPM-VERDICTS.tsv, one process per folder): %.1f s total\n", s/1000}' "$SHARED/catalogs/OPM-VERDICTS.tsv" 2>/dev/null || true
