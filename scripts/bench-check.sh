#!/bin/sh
# `olmpack check` speed (issue 43 item 3) against operator-pipelines' own checks run on the same
# checkout in the same run. Figures are printed, never asserted.
#  1. one operator: `check --profile community OPERATOR` (its newest bundle, ci.yaml, every
#     catalog that holds it), best of 3, against `run-reference.py` on the same bundle and
#     catalogs (operator-pipelines' static checks offline, ../shared/pipelines/SOURCE.md).
#  2. the whole checkout: `check --profile community --all`, against the reference run operator
#     by operator over BENCH_CHECK_SAMPLE operators (default 10; `all` for every one), its total
#     extrapolated to the checkout's count when it is a sample.
# Both sides without the two operator-sdk runs (the reference skips them). Needs a checkout
# laid out as community-operators-prod (CHECK_REPO); the reference runs when CHECK_REFERENCE_VENV
# names the venv SOURCE.md describes, and is reported as absent otherwise.
set -eu
BIN=${OLMPACK:-target/release/olmpack}
SHARED=${OLMPACK_SHARED:-../shared}
REPO=${CHECK_REPO:?set CHECK_REPO to a checkout of community-operators-prod}
OP=${CHECK_OPERATOR:-kube-green}
VENV=${CHECK_REFERENCE_VENV:-}
SAMPLE=${BENCH_CHECK_SAMPLE:-10}
exec python3 - "$BIN" "$SHARED" "$REPO" "$OP" "$VENV" "$SAMPLE" <<'PY'
import os, subprocess, sys, tempfile, time
binary, shared, repo, op, venv, sample = sys.argv[1:]
ref_script = os.path.join(shared, "pipelines", "run-reference.py")
ref_python = os.path.join(venv, "bin", "python3") if venv else ""
have_ref = bool(venv) and os.path.exists(ref_python) and os.path.exists(ref_script)
work = tempfile.mkdtemp()

def timed(cmd):
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    return time.perf_counter() - t, p

def olmpack(*args):
    return [binary, "check", "--profile", "community", "--repo", repo, *args, "--no-operator-sdk"]

def target(name):
    """The bundle olmpack checks (its text report's last line) and the catalogs holding it."""
    p = subprocess.run(olmpack(name), capture_output=True, text=True)
    if p.returncode == 2:
        return None
    last = p.stdout.strip().splitlines()[-1].split(":")[0]
    bundle = last.split("/", 1)[1] if "/" in last else "none"
    cdir = os.path.join(repo, "catalogs")
    cats = [f"{v}/{name}" for v in sorted(os.listdir(cdir)) if os.path.isdir(os.path.join(cdir, v, name))] if os.path.isdir(cdir) else []
    return bundle, ",".join(cats)

def reference(name):
    t = target(name)
    if t is None:
        return None
    out = os.path.join(work, name + ".json")
    secs, p = timed([ref_python, ref_script, repo, "community", name, t[0], t[1], out])
    return secs if os.path.exists(out) else None

print(f"== one operator: {op} (binary {binary})")
best = min(timed(olmpack(op, "-o", "json"))[0] for _ in range(3))
print(f"olmpack check: {best:.3f} s (best of 3)")
if have_ref:
    r = reference(op)
    if r is None:
        print("reference: did not run on this operator")
    else:
        print(f"reference (run-reference.py): {r:.3f} s; olmpack is {r / best:.0f}x faster")
else:
    print("reference: not available (set CHECK_REFERENCE_VENV)")

ops = sorted(d for d in os.listdir(os.path.join(repo, "operators")) if os.path.isdir(os.path.join(repo, "operators", d)))
print(f"== the whole checkout: {len(ops)} operators")
secs, p = timed(olmpack("--all", "-o", "json"))
print(f"olmpack check --all: {secs:.2f} s (exit {p.returncode})")
if have_ref:
    chosen = ops if sample == "all" else ops[:: max(1, len(ops) // max(1, int(sample)))][: int(sample)]
    times = [t for t in (reference(o) for o in chosen) if t is not None]
    if times:
        total = sum(times) / len(times) * len(ops)
        how = "every operator" if sample == "all" else f"{len(times)} operators, mean {sum(times)/len(times):.2f} s, times {len(ops)}"
        print(f"reference: {total:.1f} s ({how}); olmpack is {total / secs:.0f}x faster")
else:
    print("reference: not available (set CHECK_REFERENCE_VENV)")
subprocess.run(["rm", "-rf", work])
PY
