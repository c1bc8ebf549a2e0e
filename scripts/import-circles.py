#!/usr/bin/env python3
"""Import circles between source files of the workspace (issue 42: "import circles 6 -> 0").

A file imports another when it names a path (`crate::a::b`, `super::x`, `use super::{..}`,
`olmpack_ground::a`) that resolves to that file; a circle is a strongly connected component of
more than one file (Tarjan). Comments and inline `mod tests { .. }` blocks are left out.
Usage: scripts/import-circles.py [WORKSPACE_ROOT]; prints the count, then each circle.
"""
import os,re,sys,collections
root=sys.argv[1] if len(sys.argv)>1 else '.'
crates={'olmpack':'src','olmpack_ground':'crates/ground/src','olmpack_oci':'crates/oci/src','olmpack_olm':'crates/olm/src','olmpack_serve':'crates/serve/src'}
reexp={'ground':'yaml gocompat fsio findings semver_range guard interrupt parallel errors reference location bundle_keys'.split(),
 'oci':'image registry transport signature'.split(),'olm':'bundle catalog legacy validate olmv1 scaffold'.split(),'serve':['serve']}
top2src={}
for c,ms in reexp.items():
    for m in ms: top2src[m]=os.path.join(root,f'crates/{c}/src')
for m in ['action','commands','cli','mirror','pipe','alloc']: top2src[m]=os.path.join(root,'src')
def modfile(base,parts):
    # longest prefix of parts that is a file
    best=None
    p=base
    for i,part in enumerate(parts):
        cand=[os.path.join(p,part+'.rs'),os.path.join(p,part,'mod.rs')]
        found=[x for x in cand if os.path.isfile(x)]
        if not found: break
        best=found[0]; p=os.path.join(p,part)
    return best
files=[]
for base in set(top2src.values()):
    for dp,dn,fn in os.walk(base):
        for f in fn:
            if f.endswith('.rs'): files.append(os.path.join(dp,f))
edges=collections.defaultdict(set)
for f in files:
    txt=open(f).read()
    txt=re.sub(r'#\[cfg\(test\)\]\s*mod tests\s*\{.*','',txt,flags=re.S)  # drop inline tests (rough)
    txt=re.sub(r'//[^\n]*','',txt)
    # expand use crate::{a::b, c}
    paths=[]
    for m in re.finditer(r'\b(crate|olmpack_\w+)::((?:\w+::)*\w+)',txt):
        paths.append(m.group(2).split('::'))
    for m in re.finditer(r'\buse\s+(crate|olmpack_\w+)::((?:\w+::)*)\{([^;]*)\};',txt,flags=re.S):
        pre=[x for x in m.group(2).split('::') if x]
        for item in re.split(r',',m.group(3)):
            item=item.strip().split(' as ')[0]
            if not item or '{' in item: continue
            paths.append(pre+item.split('::'))
    # super:: paths, resolved against this file's module folder
    here=os.path.dirname(f) if not (f.endswith('mod.rs') or f.endswith('lib.rs')) else os.path.dirname(os.path.dirname(f))
    if f.endswith('mod.rs'): here=os.path.dirname(os.path.dirname(f))
    else:
        here=os.path.dirname(f)
    for m in re.finditer(r'\b((?:super::)+)((?:\w+::)*\w+)',txt):
        n=m.group(1).count('super::')
        base=here
        for _ in range(n-1): base=os.path.dirname(base)
        t=modfile(base,m.group(2).split('::'))
        if t is None:
            # super itself (the parent module file)
            cand=[base+'.rs',os.path.join(base,'mod.rs')]
            t=next((x for x in cand if os.path.isfile(x)),None)
        if t and t!=f and not t.endswith('lib.rs'): edges[f].add(t)
    for m in re.finditer(r'\buse\s+((?:super::)+)((?:\w+::)*)\{([^;]*)\};',txt,flags=re.S):
        n=m.group(1).count('super::'); base=here
        for _ in range(n-1): base=os.path.dirname(base)
        pre=[x for x in m.group(2).split('::') if x]
        for item in m.group(3).split(','):
            item=item.strip().split(' as ')[0]
            if not item or '{' in item or item=='self': continue
            t=modfile(base,pre+item.split('::'))
            if t and t!=f and not t.endswith('lib.rs'): edges[f].add(t)
    for parts in paths:
        if not parts or parts[0] not in top2src: continue
        t=modfile(top2src[parts[0]],parts)
        if t and t!=f and not t.endswith('lib.rs'): edges[f].add(t)
# tarjan
idx={};low={};st=[];on=set();sccs=[];c=[0]
sys.setrecursionlimit(100000)
def sc(v):
    idx[v]=low[v]=c[0];c[0]+=1;st.append(v);on.add(v)
    for w in edges[v]:
        if w not in idx: sc(w);low[v]=min(low[v],low[w])
        elif w in on: low[v]=min(low[v],idx[w])
    if low[v]==idx[v]:
        comp=[]
        while True:
            w=st.pop();on.discard(w);comp.append(w)
            if w==v:break
        if len(comp)>1: sccs.append(comp)
for v in files:
    if v not in idx: sc(v)
print(len(sccs),'circles')
for s in sccs: print(' ', ' <-> '.join(sorted(os.path.relpath(x,root) for x in s)))
