#!/usr/bin/env python3
"""Independent check of a filtered catalog's dependency closure (no olmpack code involved).

usage: check-closure.py FILTERED.json PACKAGE[,PACKAGE...]

FILTERED.json is `olmpack catalog filter` output (a JSON stream of blobs); the packages are the
ones the filter configuration names. Checks, and exits 1 naming every failure:
  1. every olm.package.required and olm.gvk.required of every bundle in the output is met by a
     bundle in the output (package name and blang version range; provided olm.gvk);
  2. nothing unneeded was added: every bundle of a package the configuration does not name
     meets some requirement of another bundle in the output.
Version ranges are read as blang/semver (OLM's grammar): `||` alternatives of space-separated
comparators (an operator may stand apart from its version: `< 1.23.0`), `x` wildcards are not
used by the catalogs this checks and are refused.
"""
import json
import re
import sys


def parse_version(text):
    core, _, pre = text.split("+")[0].partition("-")
    major, minor, patch = (int(x) for x in core.split("."))
    return (major, minor, patch, pre)


def pre_key(pre):
    # semver 2.0 precedence: a release is greater than any pre-release of it.
    if not pre:
        return (1,)
    parts = []
    for p in pre.split("."):
        parts.append((0, int(p), "") if p.isdigit() else (1, 0, p))
    return (0, tuple(parts))


def key(v):
    major, minor, patch, pre = v
    return (major, minor, patch, pre_key(pre))


def in_range(version, rng):
    v = key(parse_version(version))
    text = re.sub(r"([<>=!]+)\s+", r"\1", rng.strip())
    for alt in text.split("||"):
        ok = True
        tokens = alt.split()
        if not tokens:
            ok = False
        for tok in tokens:
            m = re.fullmatch(r"(>=|<=|>|<|==|=|!=|!)?v?([0-9][0-9A-Za-z.+-]*)", tok)
            if not m or "x" in m.group(2).lower().split("-")[0]:
                raise SystemExit(f"range {rng!r}: cannot read {tok!r}")
            op, want = m.group(1) or "=", key(parse_version(m.group(2)))
            ok = ok and {
                ">=": v >= want, "<=": v <= want, ">": v > want, "<": v < want,
                "=": v == want, "==": v == want, "!=": v != want, "!": v != want,
            }[op]
        if ok:
            return True
    return False


def main():
    path, named = sys.argv[1], set(sys.argv[2].split(","))
    blobs = []
    decoder = json.JSONDecoder()
    text = open(path, encoding="utf-8").read()
    i = 0
    while i < len(text):
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            break
        obj, i = decoder.raw_decode(text, i)
        blobs.append(obj)
    bundles = [b for b in blobs if b.get("schema") == "olm.bundle"]

    def props(b, t):
        return [p["value"] for p in b.get("properties", []) if p.get("type") == t]

    def version(b):
        package = props(b, "olm.package")
        return package[0]["version"] if package else "0.0.0-missing"


    def meets(b, req):
        kind, value = req
        if kind == "package":
            return b["package"] == value["packageName"] and in_range(version(b), value["versionRange"])
        return any(g == value for g in props(b, "olm.gvk"))

    failures = []
    needed = set()
    for b in bundles:
        reqs = [("package", r) for r in props(b, "olm.package.required")]
        reqs += [("gvk", r) for r in props(b, "olm.gvk.required")]
        for req in reqs:
            # A bundle may provide an API it requires (OLM counts it).
            providers = [o for o in bundles if meets(o, req)]
            if not providers:
                failures.append(f"{b['name']}: requirement {req} is not met")
            for o in providers:
                if o is not b:
                    needed.add(o["name"])
    for b in bundles:
        if b["package"] not in named and b["name"] not in needed:
            failures.append(f"{b['name']} (package {b['package']}) was added but nothing requires it")
    added = sorted({b["package"] for b in bundles if b["package"] not in named})
    print(f"{len(bundles)} bundles, {len(added)} packages added ({', '.join(added)}), "
          f"{len(failures)} failures")
    for f in failures:
        print("  " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
