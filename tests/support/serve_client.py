#!/usr/bin/python3
"""A gRPC client olmpack did not write (Python grpcio, stubs generated at run time by
grpc_tools from olmpack's proto/registry.proto) for `olmpack catalog serve`.

Modes (each prints one JSON object on stdout; progress and mismatches go to stderr):
  compare OLMPACK FBC_DIR GOLDEN_DIR PROTO   serve every folder that has a golden, query every
                                              RPC, compare with opm's answers (SOURCE.md rules)
  smoke OLMPACK FOLDER PROTO [ARG...]        serve one folder (or image; ARGs go to catalog serve),
                                              ListPackages/GetPackage/ListBundles/GetBundle of every
                                              membership, health, reflection
  dump OLMPACK FOLDER PROTO                   GetPackage, ListBundles and GetBundle answers as JSON
  load OLMPACK FOLDER PROTO CLIENTS SECONDS   CLIENTS threads streaming ListBundles and calling
                                              GetBundle for SECONDS; failures and server RSS
  readme OLMPACK FOLDER PROTO                 the grpcurl queries of opm's README, as a transcript
  experimental OLMPACK FOLDER PROTO           upstream's TestExperimentalListPackageCustomSchemas cases
Every server is started on 127.0.0.1 with port 0 (the port is read from its stderr), and
stopped with SIGTERM; a non-zero exit after SIGTERM is a failure.
"""

import atexit
import json
import os
import queue
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import grpc
from grpc_tools import protoc
from google.protobuf import json_format, descriptor_pb2

HEALTH_PROTO = """
syntax = "proto3";
package grpc.health.v1;
message HealthCheckRequest { string service = 1; }
message HealthCheckResponse {
  enum ServingStatus { UNKNOWN = 0; SERVING = 1; NOT_SERVING = 2; SERVICE_UNKNOWN = 3; }
  ServingStatus status = 1;
}
service Health {
  rpc Check(HealthCheckRequest) returns (HealthCheckResponse);
  rpc Watch(HealthCheckRequest) returns (stream HealthCheckResponse);
}
"""

# The parts of grpc/reflection/{v1,v1alpha}/reflection.proto a listing and a describe need.
REFLECTION_PROTO = """
syntax = "proto3";
package grpc.reflection.%(v)s;
message ServerReflectionRequest {
  string host = 1;
  oneof message_request {
    string file_by_filename = 3;
    string file_containing_symbol = 4;
    string list_services = 7;
  }
}
message FileDescriptorResponse { repeated bytes file_descriptor_proto = 1; }
message ServiceResponse { string name = 1; }
message ListServiceResponse { repeated ServiceResponse service = 1; }
message ErrorResponse { int32 error_code = 1; string error_message = 2; }
message ServerReflectionResponse {
  string valid_host = 1;
  ServerReflectionRequest original_request = 2;
  oneof message_response {
    FileDescriptorResponse file_descriptor_response = 4;
    ListServiceResponse list_services_response = 6;
    ErrorResponse error_response = 7;
  }
}
service ServerReflection {
  rpc ServerReflectionInfo(stream ServerReflectionRequest) returns (stream ServerReflectionResponse);
}
"""

MAX_MSG = 256 * 1024 * 1024
OPTIONS = [("grpc.max_receive_message_length", MAX_MSG), ("grpc.max_send_message_length", MAX_MSG)]


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def gen_stubs(proto_path):
    """Generates Python stubs into a temp dir and imports them."""
    out = tempfile.mkdtemp(prefix="olmpack-pystubs-")
    # The stubs are imported at once; the folder goes when the client exits (no junk in $TMPDIR).
    atexit.register(shutil.rmtree, out, True)
    src = os.path.join(out, "src")
    os.makedirs(os.path.join(src, "refl"))
    with open(proto_path) as f:
        text = f.read()
    open(os.path.join(src, "registry.proto"), "w").write(text)
    open(os.path.join(src, "health.proto"), "w").write(HEALTH_PROTO)
    open(os.path.join(src, "refl", "reflection_v1.proto"), "w").write(REFLECTION_PROTO % {"v": "v1"})
    open(os.path.join(src, "refl", "reflection_v1alpha.proto"), "w").write(REFLECTION_PROTO % {"v": "v1alpha"})
    for p in ["registry.proto", "health.proto", "refl/reflection_v1.proto", "refl/reflection_v1alpha.proto"]:
        # registry.proto imports google/protobuf/struct.proto (the experimental service).
        wkt = os.path.join(os.path.dirname(protoc.__file__), "_proto")
        rc = protoc.main(["protoc", "-I" + src, "-I" + wkt, "--python_out=" + out, "--grpc_python_out=" + out, p])
        if rc != 0:
            raise SystemExit("protoc failed on %s" % p)
    open(os.path.join(out, "refl", "__init__.py"), "w").close()
    sys.path.insert(0, out)
    import registry_pb2, registry_pb2_grpc, health_pb2, health_pb2_grpc  # noqa: E401
    from refl import reflection_v1_pb2, reflection_v1_pb2_grpc, reflection_v1alpha_pb2, reflection_v1alpha_pb2_grpc
    return {
        "api": registry_pb2, "api_grpc": registry_pb2_grpc,
        "health": health_pb2, "health_grpc": health_pb2_grpc,
        "v1": (reflection_v1_pb2, reflection_v1_pb2_grpc),
        "v1alpha": (reflection_v1alpha_pb2, reflection_v1alpha_pb2_grpc),
    }


class Server:
    """`olmpack catalog serve FOLDER` on 127.0.0.1, a free port."""

    def __init__(self, olmpack, folder, extra=()):
        self.proc = subprocess.Popen(
            [olmpack, "catalog", "serve", folder, "--addr", "127.0.0.1", "-p", "0"] + list(extra),
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.started = time.time()
        self.addr = None
        self.stderr = []
        # The server's stderr is read on a thread that hands lines over a queue, so the wait for
        # the address line has a deadline even if the server prints nothing and never exits.
        lines = queue.Queue()

        def read():
            for line in self.proc.stderr:
                self.stderr.append(line)
                lines.put(line)
            lines.put(None)

        threading.Thread(target=read, daemon=True).start()
        deadline = time.time() + 120
        while self.addr is None:
            left = deadline - time.time()
            if left <= 0:
                break
            try:
                line = lines.get(timeout=left)
            except queue.Empty:
                break
            if line is None:
                break
            if " gRPC on " in line:
                self.addr = line.split(" gRPC on ")[1].split(" ")[0]
        if self.addr is None:
            self.proc.kill()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
            raise RuntimeError("server did not start on %s within 120 s: %s" % (folder, "".join(self.stderr)))

    def rss_kib(self):
        out = {}
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                if line.startswith(("VmRSS:", "VmHWM:")):
                    k, v = line.split(":")
                    out[k] = int(v.split()[0])
        return out

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return "killed"


def wait_serving(s, addr):
    ch = grpc.insecure_channel(addr, options=OPTIONS)
    stub = s["health_grpc"].HealthStub(ch)
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            r = stub.Check(s["health"].HealthCheckRequest(service=""), timeout=5)
            if r.status == 1:
                return ch
        except grpc.RpcError:
            time.sleep(0.05)
    raise RuntimeError("never SERVING")


def health(s, ch, names):
    stub = s["health_grpc"].HealthStub(ch)
    out = {}
    for n in names:
        r = stub.Check(s["health"].HealthCheckRequest(service=n), timeout=10)
        out[n] = s["health"].HealthCheckResponse.ServingStatus.Name(r.status)
    try:
        next(iter(stub.Watch(s["health"].HealthCheckRequest(service=""), timeout=10)))
        watch = "answered"
    except grpc.RpcError as e:
        watch = e.code().name
    return out, watch


def reflection(s, ch, version, describe=None):
    pb2, grpc_mod = s[version]
    stub = grpc_mod.ServerReflectionStub(ch)
    reqs = [pb2.ServerReflectionRequest(list_services="")]
    if describe:
        reqs.append(pb2.ServerReflectionRequest(file_containing_symbol=describe))
    services, files = [], []
    for resp in stub.ServerReflectionInfo(iter(reqs), timeout=10):
        kind = resp.WhichOneof("message_response")
        if kind == "list_services_response":
            services = sorted(x.name for x in resp.list_services_response.service)
        elif kind == "file_descriptor_response":
            for raw in resp.file_descriptor_response.file_descriptor_proto:
                fd = descriptor_pb2.FileDescriptorProto()
                fd.ParseFromString(raw)
                files.append(fd)
        elif kind == "error_response":
            raise RuntimeError(resp.error_response.error_message)
    return services, files


def to_dict(msg):
    return json_format.MessageToDict(msg)


def code_name(code):
    # Go's codes.Code.String(): "Unknown", "Unimplemented", "InvalidArgument", ...
    return "".join(w.capitalize() for w in code.name.split("_"))


def call(s, ch, rpc, request):
    """(answer, error) of one RPC; a stream's error is the one its first receive returns."""
    api = s["api"]
    stub = s["api_grpc"].RegistryStub(ch)
    req_types = {
        "GetPackage": api.GetPackageRequest, "GetBundle": api.GetBundleRequest,
        "GetBundleForChannel": api.GetBundleInChannelRequest,
        "GetBundleThatReplaces": api.GetReplacementRequest,
        "GetChannelEntriesThatReplace": api.GetAllReplacementsRequest,
        "GetChannelEntriesThatProvide": api.GetAllProvidersRequest,
        "GetLatestChannelEntriesThatProvide": api.GetLatestProvidersRequest,
        "GetDefaultBundleThatProvides": api.GetDefaultProviderRequest,
        "ListPackages": api.ListPackageRequest, "ListBundles": api.ListBundlesRequest,
    }
    streaming = {"GetChannelEntriesThatReplace", "GetChannelEntriesThatProvide",
                 "GetLatestChannelEntriesThatProvide", "ListPackages", "ListBundles"}
    req = json_format.ParseDict(request, req_types[rpc]())
    fn = getattr(stub, rpc)
    try:
        if rpc in streaming:
            return [to_dict(m) for m in fn(req, timeout=300)], None
        return to_dict(fn(req, timeout=300)), None
    except grpc.RpcError as e:
        return None, {"code": code_name(e.code()), "message": e.details()}


# --- canonicalization (SOURCE.md) -------------------------------------------------------------

def gvk_key(g):
    return (g.get("group", ""), g.get("version", ""), g.get("kind", ""), g.get("plural", ""))


def tv_key(p):
    return (p.get("type", ""), json.dumps(p.get("_parsed"), sort_keys=True))


def canon_bundle(b, drop_csv_metadata=False):
    b = json.loads(json.dumps(b))
    for k in ("providedApis", "requiredApis"):
        if k in b:
            b[k] = sorted(b[k], key=gvk_key)
    for k in ("dependencies", "properties"):
        if k in b:
            items = []
            for p in b[k]:
                if drop_csv_metadata and p.get("type") == "olm.csv.metadata":
                    continue
                q = dict(p)
                try:
                    q["value"] = json.loads(p.get("value", "null"))
                except ValueError:
                    pass
                items.append(q)
            items.sort(key=lambda p: (p.get("type", ""), json.dumps(p.get("value"), sort_keys=True)))
            if items:
                b[k] = items
            else:
                del b[k]
    if "skips" in b:
        b["skips"] = sorted(b["skips"])
    return b


def csv_metadata_of(golden_bundle):
    for p in golden_bundle.get("properties", []):
        if p.get("type") == "olm.csv.metadata":
            return json.loads(p["value"])
    return None


def check_synthesized(ours, golden):
    """Current opm synthesizes csvJson from olm.csv.metadata where v1.26.5 sent none: check
    what we sent against the metadata the golden still carries, then drop it for the compare."""
    if "csvJson" not in ours or "csvJson" in golden:
        return ours, None
    meta = csv_metadata_of(golden)
    if meta is None:
        return ours, "csvJson sent but the bundle has no olm.csv.metadata and opm sent none"
    csv = json.loads(ours["csvJson"])
    problems = []
    if csv.get("kind") != "ClusterServiceVersion" or csv.get("apiVersion") != "operators.coreos.com/v1alpha1":
        problems.append("kind/apiVersion")
    if csv.get("metadata", {}).get("name") != ours.get("csvName"):
        problems.append("metadata.name")
    spec = csv.get("spec", {})
    if spec.get("version") != ours.get("version"):
        problems.append("spec.version")
    if spec.get("displayName", "") != meta.get("displayName", ""):
        problems.append("spec.displayName")
    if csv.get("metadata", {}).get("annotations") != meta.get("annotations"):
        problems.append("metadata.annotations")
    if spec.get("install", {}).get("strategy") != "deployment":
        problems.append("spec.install.strategy")
    if ours.get("object") != [ours["csvJson"]]:
        problems.append("object != [csvJson]")
    ours = dict(ours)
    del ours["csvJson"]
    ours.pop("object", None)
    return ours, (", ".join(problems) or None)


def entries_key(e):
    return (e.get("packageName", ""), e.get("channelName", ""), e.get("bundleName", ""), e.get("replaces", ""))


class Tally:
    def __init__(self):
        self.ok, self.bad, self.synth = 0, 0, 0
        self.notes = []

    def check(self, cond, what):
        if cond:
            self.ok += 1
        else:
            self.bad += 1
            if len(self.notes) < 10:
                self.notes.append(what)


def diff_hint(a, b):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if a.get(k) != b.get(k):
                return "%s: ours=%s opm=%s" % (k, json.dumps(a.get(k))[:200], json.dumps(b.get(k))[:200])
    return "ours=%s opm=%s" % (json.dumps(a)[:200], json.dumps(b)[:200])


def compare_one(s, ch, golden):
    t = Tally()
    h, _watch = health(s, ch, sorted(golden["health"]))
    t.check(h == golden["health"], "health %s" % h)
    v1a, _ = reflection(s, ch, "v1alpha")
    # Current opm also registers reflection v1 and, since v1.69, api.ExperimentalRegistry.
    want = sorted(golden["reflectionV1alpha"] + ["grpc.reflection.v1.ServerReflection", "api.ExperimentalRegistry"])
    t.check(v1a == want, "reflection v1alpha %s" % v1a)
    v1, _ = reflection(s, ch, "v1")
    t.check(v1 == want, "reflection v1 %s" % v1)

    pk, err = call(s, ch, "ListPackages", {})
    t.check(err is None and sorted(p["name"] for p in pk) == golden["listPackages"], "listPackages")

    for g in golden["getPackage"]:
        ours, err = call(s, ch, "GetPackage", g["request"])
        # Current opm sorts channels (the golden is sorted): compare as sent.
        t.check(err is None and ours == g["response"], "GetPackage %s: %s" % (g["request"], diff_hint(ours, g["response"])))

    lb, err = call(s, ch, "ListBundles", {})
    t.check(err is None, "ListBundles error %s" % err)
    lb = lb or []
    order = [(b.get("channelName", ""), b.get("packageName", ""), b.get("csvName", "")) for b in lb]
    t.check(order == sorted(order), "ListBundles not in (channel, package, name) order")
    ours_lb = sorted((canon_bundle(b) for b in lb), key=lambda b: (b.get("packageName", ""), b.get("channelName", ""), b.get("csvName", "")))
    want_lb = [canon_bundle(b, drop_csv_metadata=True) for b in golden["listBundles"]]
    t.check(len(ours_lb) == len(want_lb), "ListBundles count %d vs %d" % (len(ours_lb), len(want_lb)))
    for o, w in zip(ours_lb, want_lb):
        t.check(o == w, "ListBundles %s/%s: %s" % (w.get("channelName"), w.get("csvName"), diff_hint(o, w)))

    got_bundles = {}
    for g in golden["getBundle"]:
        r = g["request"]
        ours, err = call(s, ch, "GetBundle", r)
        if err is not None:
            t.check(False, "GetBundle %s: %s" % (r, err))
            continue
        key = (r["pkgName"], r["channelName"], r["csvName"])
        got_bundles[key] = ours
        stripped, problem = check_synthesized(ours, g["response"])
        if stripped is not ours:
            t.synth += 1
        t.check(problem is None, "GetBundle %s synthesized CSV: %s" % (key, problem))
        o, w = canon_bundle(stripped), canon_bundle(g["response"], drop_csv_metadata=True)
        t.check(o == w, "GetBundle %s: %s" % (key, diff_hint(o, w)))

    def same_as_get_bundle(ours, pkg, chn, csv):
        ref = got_bundles.get((pkg, chn, csv))
        if ref is None:
            ref, _ = call(s, ch, "GetBundle", {"pkgName": pkg, "channelName": chn, "csvName": csv})
        return canon_bundle(ours) == canon_bundle(ref)

    for g in golden["getBundleForChannel"]:
        r = g["request"]
        ours, err = call(s, ch, "GetBundleForChannel", r)
        ok = err is None and ours.get("csvName") == g["csvName"] and (not g.get("equalsGetBundle") or same_as_get_bundle(ours, r["pkgName"], r["channelName"], g["csvName"]))
        t.check(ok, "GetBundleForChannel %s" % r)

    for g in golden["getBundleThatReplaces"]:
        r = g["request"]
        ours, err = call(s, ch, "GetBundleThatReplaces", r)
        allowed = g["anyOf"] if "anyOf" in g else [g["csvName"]]
        ok = err is None and ours.get("csvName") in allowed and same_as_get_bundle(ours, r["pkgName"], r["channelName"], ours.get("csvName"))
        t.check(ok, "GetBundleThatReplaces %s: %s" % (r, err or ours.get("csvName")))

    for g in golden["getChannelEntriesThatReplace"]:
        ours, err = call(s, ch, "GetChannelEntriesThatReplace", g["request"])
        if "error" in g:
            t.check(err == g["error"], "GetChannelEntriesThatReplace %s: %s" % (g["request"], err))
        else:
            t.check(err is None and sorted(ours, key=entries_key) == g["response"], "GetChannelEntriesThatReplace %s" % g["request"])

    for rpc, key in (("GetChannelEntriesThatProvide", "getChannelEntriesThatProvide"),
                     ("GetLatestChannelEntriesThatProvide", "getLatestChannelEntriesThatProvide")):
        for g in golden[key]:
            ours, err = call(s, ch, rpc, g["request"])
            if "error" in g:
                t.check(err == g["error"], "%s %s: %s vs %s" % (rpc, g["request"], err, g["error"]))
            else:
                t.check(err is None and sorted(ours, key=entries_key) == g["response"], "%s %s: %s" % (rpc, g["request"], err or diff_hint(sorted(ours, key=entries_key), g["response"])))

    for g in golden["getDefaultBundleThatProvides"]:
        ours, err = call(s, ch, "GetDefaultBundleThatProvides", g["request"])
        if "error" in g:
            t.check(err == g["error"], "GetDefaultBundleThatProvides %s: %s" % (g["request"], err))
        else:
            ok = (err is None and ours.get("packageName") == g["packageName"] and ours.get("channelName") == g["channelName"]
                  and ours.get("csvName") == g["csvName"]
                  and same_as_get_bundle(ours, g["packageName"], g["channelName"], g["csvName"]))
            t.check(ok, "GetDefaultBundleThatProvides %s" % g["request"])

    for g in golden["badRequests"]:
        _, err = call(s, ch, g["rpc"], g["request"])
        t.check(err == g["error"], "%s %s: %s vs %s" % (g["rpc"], g["request"], err, g["error"]))
    return t


def cmd_compare(olmpack, fbc, goldens, proto):
    s = gen_stubs(proto)
    result = {"goldens": 0, "matched": 0, "checks": 0, "failed_checks": 0, "synthesized_csvs": 0,
              "clean_exits": 0, "mismatches": {}}
    for repo in sorted(os.listdir(goldens)):
        rdir = os.path.join(goldens, repo)
        if not os.path.isdir(rdir):
            continue
        for name in sorted(os.listdir(rdir)):
            if not name.endswith(".json"):
                continue
            pkg = name[:-5]
            folder = os.path.join(fbc, repo, "catalogs", "v4.18", pkg)
            golden = json.load(open(os.path.join(rdir, name)))
            result["goldens"] += 1
            srv = Server(olmpack, folder)
            try:
                ch = wait_serving(s, srv.addr)
                t = compare_one(s, ch, golden)
                ch.close()
            finally:
                rc = srv.stop()
            result["checks"] += t.ok + t.bad
            result["failed_checks"] += t.bad
            result["synthesized_csvs"] += t.synth
            if rc == 0:
                result["clean_exits"] += 1
            if t.bad == 0 and rc == 0:
                result["matched"] += 1
            else:
                result["mismatches"]["%s/%s" % (repo, pkg)] = t.notes + ([] if rc == 0 else ["exit after SIGTERM: %s" % rc])
                log("MISMATCH %s/%s: %s" % (repo, pkg, "\n  ".join(t.notes)))
            log("%s/%s: %d checks, %d failed" % (repo, pkg, t.ok + t.bad, t.bad))
    print(json.dumps(result, indent=1, sort_keys=True))


def cmd_smoke(olmpack, folder, proto, *extra):
    s = gen_stubs(proto)
    srv = Server(olmpack, folder, extra)
    out = {"folder": folder}
    try:
        ch = wait_serving(s, srv.addr)
        out["health"], out["healthWatch"] = health(s, ch, ["", "Registry", "api.Registry", "nonsense"])
        out["reflectionV1"], _ = reflection(s, ch, "v1")
        out["reflectionV1alpha"], _ = reflection(s, ch, "v1alpha")
        pk, err = call(s, ch, "ListPackages", {})
        out["packages"] = sorted(p["name"] for p in pk) if pk else err
        lb, err = call(s, ch, "ListBundles", {})
        out["listBundles"] = len(lb) if lb is not None else err
        failures = []
        for p in out["packages"]:
            pkg, err = call(s, ch, "GetPackage", {"name": p})
            if err:
                failures.append(err)
                continue
            for c in pkg.get("channels", []):
                b, err = call(s, ch, "GetBundleForChannel", {"pkgName": p, "channelName": c["name"]})
                if err or not b.get("csvJson"):
                    failures.append({"GetBundleForChannel": [p, c["name"]], "error": err, "csvJson": bool(b and b.get("csvJson"))})
        for b in lb or []:
            g, err = call(s, ch, "GetBundle", {"pkgName": b["packageName"], "channelName": b["channelName"], "csvName": b["csvName"]})
            if err:
                failures.append(err)
        out["failures"] = failures
        ch.close()
    finally:
        out["exitAfterSigterm"] = srv.stop()
    print(json.dumps(out, indent=1, sort_keys=True))


def cmd_dump(olmpack, folder, proto):
    """GetPackage of every package, ListBundles as sent, GetBundle of every membership."""
    s = gen_stubs(proto)
    srv = Server(olmpack, folder)
    out = {}
    try:
        ch = wait_serving(s, srv.addr)
        pk, _ = call(s, ch, "ListPackages", {})
        out["getPackage"] = {p["name"]: call(s, ch, "GetPackage", {"name": p["name"]})[0] for p in pk}
        lb, err = call(s, ch, "ListBundles", {})
        out["listBundles"] = lb if err is None else err
        out["getBundle"] = [call(s, ch, "GetBundle", {"pkgName": b["packageName"], "channelName": b["channelName"], "csvName": b["csvName"]})[0] for b in lb or []]
        ch.close()
    finally:
        out["exitAfterSigterm"] = srv.stop()
    print(json.dumps(out, indent=1, sort_keys=True))


def cmd_load(olmpack, folder, proto, clients, seconds):
    s = gen_stubs(proto)
    srv = Server(olmpack, folder)
    stats = {"listBundles": 0, "listBundlesMessages": 0, "getBundle": 0, "failures": [], "rssSamplesKiB": []}
    lock = threading.Lock()
    try:
        ch0 = wait_serving(s, srv.addr)
        keys = [(b["packageName"], b["channelName"], b["csvName"]) for b in call(s, ch0, "ListBundles", {})[0]]
        ch0.close()
        stop_at = time.time() + seconds

        def worker(i):
            rnd = random.Random(i)
            ch = grpc.insecure_channel(srv.addr, options=OPTIONS)
            stub = s["api_grpc"].RegistryStub(ch)
            api = s["api"]
            # Every client makes at least one round, however late its thread started on a
            # loaded machine: the test counts at least one ListBundles per client.
            rounds = 0
            while rounds == 0 or time.time() < stop_at:
                rounds += 1
                try:
                    n = 0
                    for _ in stub.ListBundles(api.ListBundlesRequest(), timeout=120):
                        n += 1
                    with lock:
                        stats["listBundles"] += 1
                        stats["listBundlesMessages"] += n
                    for _ in range(5):
                        p, c, b = rnd.choice(keys)
                        stub.GetBundle(api.GetBundleRequest(pkgName=p, channelName=c, csvName=b), timeout=60)
                        with lock:
                            stats["getBundle"] += 1
                except grpc.RpcError as e:
                    with lock:
                        stats["failures"].append("%s: %s" % (e.code().name, e.details()))
            ch.close()

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(clients)]
        for th in threads:
            th.start()
        while any(th.is_alive() for th in threads):
            stats["rssSamplesKiB"].append(srv.rss_kib().get("VmRSS", 0))
            time.sleep(0.5)
        for th in threads:
            th.join()
        rss = srv.rss_kib()
        stats["peakRssKiB"] = rss.get("VmHWM")
        stats["finalRssKiB"] = rss.get("VmRSS")
        stats["maxSampledRssKiB"] = max(stats["rssSamplesKiB"] or [0])
        del stats["rssSamplesKiB"]
        stats["bundles"] = len(keys)
        stats["clients"] = clients
        stats["seconds"] = seconds
    finally:
        stats["exitAfterSigterm"] = srv.stop()
    print(json.dumps(stats, indent=1, sort_keys=True))


def cmd_readme(olmpack, folder, proto):
    """opm README's "Using the catalog locally" grpcurl queries, answered by olmpack."""
    s = gen_stubs(proto)
    srv = Server(olmpack, folder)
    lines = []
    try:
        ch = wait_serving(s, srv.addr)
        services, _ = reflection(s, ch, "v1alpha")
        lines.append("$ grpcurl -plaintext %s list" % srv.addr)
        lines.extend(services)
        _, files = reflection(s, ch, "v1alpha", describe="api.Registry")
        lines.append("$ grpcurl -plaintext %s list api.Registry" % srv.addr)
        for fd in files:
            for svc in fd.service:
                if fd.package + "." + svc.name == "api.Registry":
                    lines.extend("api.Registry." + m.name for m in svc.method)
                    lines.append("$ grpcurl -plaintext %s describe api.Registry.GetBundleForChannel" % srv.addr)
                    for m in svc.method:
                        if m.name == "GetBundleForChannel":
                            lines.append("api.Registry.GetBundleForChannel is a method:")
                            lines.append("rpc GetBundleForChannel ( %s ) returns ( %s )%s" % (
                                m.input_type, m.output_type, " (deprecated)" if m.options.deprecated else ""))
            for msg in fd.message_type:
                if msg.name == "GetBundleInChannelRequest":
                    lines.append("$ grpcurl -plaintext %s describe api.GetBundleInChannelRequest" % srv.addr)
                    lines.append("message GetBundleInChannelRequest {")
                    for f in msg.field:
                        lines.append("  string %s = %d;" % (f.name, f.number))
                    lines.append("}")
        pk, _ = call(s, ch, "ListPackages", {})
        lines.append("$ grpcurl -plaintext %s api.Registry/ListPackages" % srv.addr)
        lines.extend(json.dumps(p, indent=2) for p in pk)
        name = sorted(p["name"] for p in pk)[0]
        pkg, _ = call(s, ch, "GetPackage", {"name": name})
        lines.append("$ grpcurl -plaintext -d '{\"name\":\"%s\"}' %s api.Registry/GetPackage" % (name, srv.addr))
        lines.append(json.dumps(pkg, indent=2))
        chn = pkg["defaultChannelName"]
        b, _ = call(s, ch, "GetBundleForChannel", {"pkgName": name, "channelName": chn})
        short = dict(b)
        for k in ("csvJson",):
            if k in short:
                short[k] = short[k][:120] + "…(%d bytes)" % len(b[k])
        if "object" in short:
            short["object"] = ["…(%d bytes)" % len(o) for o in short["object"]]
        lines.append("$ grpcurl -plaintext -d '{\"pkgName\":\"%s\",\"channelName\":\"%s\"}' %s api.Registry/GetBundleForChannel" % (name, chn, srv.addr))
        lines.append(json.dumps(short, indent=2))
        _, err = call(s, ch, "GetPackage", {"name": "nope"})
        lines.append("$ grpcurl -plaintext -d '{\"name\":\"nope\"}' %s api.Registry/GetPackage" % srv.addr)
        lines.append("ERROR:\n  Code: %s\n  Message: %s" % (err["code"], err["message"]))
        h, watch = health(s, ch, ["", "Registry"])
        lines.append("$ grpcurl -plaintext -d '{\"service\":\"Registry\"}' %s grpc.health.v1.Health/Check" % srv.addr)
        lines.append(json.dumps({"status": h["Registry"]}, indent=2))
        ch.close()
    finally:
        rc = srv.stop()
    print(json.dumps({"transcript": lines, "exitAfterSigterm": rc}, indent=1))


def cmd_experimental(olmpack, folder, proto, *extra):
    """operator-registry's TestExperimentalListPackageCustomSchemas, case by case: each gives
    the list of blobs received (as dicts) or the status code and message. `extra`: more
    `catalog serve` arguments (e.g. --cache-dir DIR)."""
    from google.protobuf import json_format as jf
    s = gen_stubs(proto)
    srv = Server(olmpack, folder, extra)
    out = {}
    ack = [("x-acknowledge-experimental", "true")]
    cases = [
        ("FBCCacheWithCustomSchemas", ack, {"schema": "custom.operator.io", "packageName": "testpkg"}, False),
        ("FBCCacheNoResults", ack, {"schema": "custom.operator.io", "packageName": "nonexistent"}, False),
        ("FBCCacheInvalidArgument", ack, {}, False),
        ("FBCCachePackageless", ack, {"schema": "custom.packageless", "packageName": ""}, False),
        ("FBCCacheMissingExperimentalHeader", [], {"schema": "custom.operator.io", "packageName": "testpkg"}, False),
        ("FBCCacheCancelledContext", ack, {"schema": "custom.operator.io", "packageName": "testpkg"}, True),
        # Beyond upstream's table: opm's messages for a schema or package outside its pattern.
        ("InvalidSchema", ack, {"schema": "../etc", "packageName": "testpkg"}, False),
        ("InvalidPackage", ack, {"schema": "custom.operator.io", "packageName": "a/b"}, False),
        ("HeaderNotTrue", [("x-acknowledge-experimental", "yes")], {"schema": "custom.operator.io", "packageName": "testpkg"}, False),
    ]
    try:
        ch = wait_serving(s, srv.addr)
        stub = s["api_grpc"].ExperimentalRegistryStub(ch)
        for name, md, req, cancel in cases:
            try:
                call = stub.ExperimentalListPackageCustomSchemas(
                    s["api"].ExperimentalListPackageCustomSchemasRequest(**req), metadata=md, timeout=30)
                if cancel:
                    call.cancel()
                out[name] = [jf.MessageToDict(m) for m in call]
            except grpc.RpcError as e:
                out[name] = {"code": e.code().name, "message": e.details()}
        ch.close()
    finally:
        out["exitAfterSigterm"] = srv.stop()
    print(json.dumps(out, indent=1, sort_keys=True))


def main(argv):
    mode = argv[1]
    if mode == "compare":
        cmd_compare(*argv[2:6])
    elif mode == "smoke":
        cmd_smoke(*argv[2:])
    elif mode == "dump":
        cmd_dump(*argv[2:5])
    elif mode == "load":
        cmd_load(argv[2], argv[3], argv[4], int(argv[5]), float(argv[6]))
    elif mode == "readme":
        cmd_readme(*argv[2:5])
    elif mode == "experimental":
        cmd_experimental(*argv[2:])
    else:
        raise SystemExit("unknown mode %s" % mode)


if __name__ == "__main__":
    main(sys.argv)
