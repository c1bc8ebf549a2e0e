#!/usr/bin/python3
# The call patterns of issue 32 with Python grpcio (the client of tests/support/serve_client.py),
# each server started 3 times (median time to SERVING) and measured on its last start.
# usage: serve_patterns.py proto/registry.proto CATALOG_DIR label=BINARY... (a BINARY ending in
# 'opm' is started as 'opm serve', others as 'olmpack catalog serve'); label 'opm' is the reference
# of the ratio columns. Figures only, nothing asserted.
import sys, os, time, subprocess, socket, threading, json
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'tests', 'support'))
import serve_client as sc
import grpc
proto, catalog = sys.argv[1], sys.argv[2]
impls = [a.split('=',1) for a in sys.argv[3:]]
s = sc.gen_stubs(proto)
api = s['api']
OPT = sc.OPTIONS
def free_port():
    so = socket.socket(); so.bind(('127.0.0.1',0)); p = so.getsockname()[1]; so.close(); return p
def hwm(pid):
    for l in open('/proc/%d/status'%pid):
        if l.startswith('VmHWM:'): return int(l.split()[1])/1024
def start(bin_):
    port = free_port()
    if bin_.endswith('opm'):
        cmd = [bin_, 'serve', catalog, '-p', str(port)]
    else:
        cmd = [bin_, 'catalog', 'serve', catalog, '--addr', '127.0.0.1', '-p', str(port)]
    t = time.time()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    addr = '127.0.0.1:%d'%port
    while True:
        try:
            ch = grpc.insecure_channel(addr, options=OPT)
            r = s['health_grpc'].HealthStub(ch).Check(s['health'].HealthCheckRequest(service=''), timeout=2)
            if r.status == 1: break
        except grpc.RpcError:
            time.sleep(0.005)
    return p, addr, time.time()-t, hwm(p.pid)
def pct(v, q):
    v = sorted(v); return v[min(len(v)-1, max(0, int(len(v)*q+0.999)-1))]*1e3 if v else 0
def run(bin_):
    starts = []
    for i in range(3):
        p, addr, t, h = start(bin_)
        starts.append((t, h))
        if i < 2: p.terminate(); p.wait()
    ch = grpc.insecure_channel(addr, options=OPT)
    st = s['api_grpc'].RegistryStub(ch)
    R = {}
    def timed(name, f, *a):
        t = time.perf_counter()
        try: f(*a); ok = True
        except grpc.RpcError: ok = False
        R.setdefault(name, []).append(time.perf_counter()-t)
        if not ok: R.setdefault(name+'_err', []).append(1)
    names = sorted(x.name for x in st.ListPackages(api.ListPackageRequest()))
    for n in names:
        t = time.perf_counter(); pk = st.GetPackage(api.GetPackageRequest(name=n)); R.setdefault('sweep', []).append(time.perf_counter()-t)
        for c in pk.channels:
            timed('sweep', st.GetBundleForChannel, api.GetBundleInChannelRequest(pkgName=n, channelName=c.name))
    t = time.perf_counter(); lb = list(st.ListBundles(api.ListBundlesRequest())); R['listbundles'] = [time.perf_counter()-t]
    keys = sorted((b.packageName, b.channelName, b.csvName) for b in lb)
    repl = sorted({(r, b.packageName, b.channelName) for b in lb for r in ([b.replaces] if b.replaces else []) + list(b.skips)})
    gvks = sorted({(g.group, g.version, g.kind) for b in lb for g in b.providedApis})
    del lb
    for k in keys: timed('getbundle', st.GetBundle, api.GetBundleRequest(pkgName=k[0], channelName=k[1], csvName=k[2]))
    for r in repl: timed('thatreplaces', st.GetBundleThatReplaces, api.GetReplacementRequest(csvName=r[0], pkgName=r[1], channelName=r[2]))
    for n in sorted({r[0] for r in repl}): timed('entriesreplace', lambda q: list(st.GetChannelEntriesThatReplace(q)), api.GetAllReplacementsRequest(csvName=n))
    for g in gvks: timed('defaultprovides', st.GetDefaultBundleThatProvides, api.GetDefaultProviderRequest(group=g[0], version=g[1], kind=g[2]))
    alone = hwm(p.pid)
    # 32 clients
    def worker(i):
        c2 = grpc.insecure_channel(addr, options=OPT); s2 = s['api_grpc'].RegistryStub(c2)
        for _ in s2.ListBundles(api.ListBundlesRequest()): pass
        for k in keys[i::32]: s2.GetBundle(api.GetBundleRequest(pkgName=k[0], channelName=k[1], csvName=k[2]))
        c2.close()
    t = time.time(); ths = [threading.Thread(target=worker, args=(i,)) for i in range(32)]
    [x.start() for x in ths]; [x.join() for x in ths]
    loadt = time.time()-t
    load = hwm(p.pid)
    p.terminate(); p.wait()
    st3 = sorted(starts)
    out = {k: (sum(v), pct(v, .5), pct(v, .99), len(v)) for k, v in R.items() if not k.endswith('_err')}
    out['errors'] = {k: len(v) for k, v in R.items() if k.endswith('_err')}
    out['serving'] = st3[1][0]; out['peak_serving'] = st3[1][1]; out['peak_alone'] = alone; out['load_s'] = loadt; out['peak_load'] = load
    out['keys'] = len(keys)
    return out
res = {}
for label, b in impls:
    res[label] = run(b)
    print(label, json.dumps(res[label]), flush=True)
ref = res.get('opm')
print('\n%-18s' % 'pattern' + ''.join('%34s' % l for l, _ in impls) + ''.join('%12s' % (l+'/opm') for l, _ in impls if l != 'opm'))
for k in ['sweep', 'getbundle', 'thatreplaces', 'entriesreplace', 'defaultprovides', 'listbundles']:
    line = '%-18s' % ('%s(%d)' % (k, res[impls[0][0]][k][3]))
    for l, _ in impls:
        v = res[l][k]; line += '%34s' % ('%.3fs p50 %.2f p99 %.2f ms' % (v[0], v[1], v[2]))
    for l, _ in impls:
        if l != 'opm' and ref: line += '%12.2f' % (res[l][k][0] / ref[k][0])
    print(line)
for k in ['serving', 'peak_serving', 'peak_alone', 'load_s', 'peak_load']:
    line = '%-18s' % k
    for l, _ in impls: line += '%34.3f' % res[l][k]
    for l, _ in impls:
        if l != 'opm' and ref: line += '%12.2f' % (res[l][k] / ref[k])
    print(line)
