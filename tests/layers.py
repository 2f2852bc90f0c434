#!/usr/bin/env python3
"""Dependencies between objects, from their symbols: object A uses B when A's undefined symbols
include one B defines (nm). Fails on a cycle between objects (a strongly connected component of
more than one object) and, in the analyzer, on a use that goes up the layers of analyzer/README.md
(base < input < analyses < model < render < main.c).

The renderers that read only the report model (tests/cases/layers.sh lists them) must not use an
object of analyses/ or input/ either, even through a model header: --model-only checks that.

Usage: layers.py OBJDIR [SUBDIR...]   (OBJDIR: $O/obj; SUBDIR default: analyzer preload)
       layers.py --model-only OBJDIR OBJ...   (OBJ: e.g. analyzer/render/text_multi.c.o)
       layers.py --self-test          (the checks find cycles and a use upwards made on purpose,
                                       in the analyzer and in the shim)
"""
import os
import subprocess
import sys

LAYERS = ["base", "input", "analyses", "model", "render", "main"]


def layer_of(rel):
    """rel: object path under the objdir, e.g. analyzer/analyses/memory.c.o."""
    parts = rel.split("/")
    if parts[0] != "analyzer":
        return None
    return "main" if len(parts) == 2 else parts[1]


def symbols(path):
    out = subprocess.run(["nm", "-P", path], check=True, capture_output=True, text=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) < 2:
            continue
        name, kind = f[0], f[1]
        if kind == "U":
            used.add(name)
        elif kind.isupper() and kind not in "N":  # global definitions (T, D, B, R, C, W, V ...)
            defined.add(name)
    return defined, used


def graph(objs):
    """objs: {name: (defined, used)} -> {name: {name it uses: [symbols]}}."""
    owner = {}
    for n, (d, _) in objs.items():
        for s in d:
            owner.setdefault(s, n)
    g = {n: {} for n in objs}
    for n, (_, u) in objs.items():
        for s in sorted(u):
            o = owner.get(s)
            if o is not None and o != n:
                g[n].setdefault(o, []).append(s)
    return g


def cycles(g):
    """Tarjan's strongly connected components of more than one node."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in g[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def problems(g):
    msgs = []
    for comp in cycles(g):
        members = set(comp)
        edges = ["%s -> %s (%s)" % (a, b, ", ".join(g[a][b][:3]))
                 for a in comp for b in sorted(g[a]) if b in members]
        msgs.append("cycle between %s: %s" % (", ".join(comp), "; ".join(edges)))
    for a in sorted(g):
        la = layer_of(a)
        for b, syms in sorted(g[a].items()):
            lb = layer_of(b)
            if la is None or lb is None or la not in LAYERS or lb not in LAYERS:
                continue
            if LAYERS.index(lb) > LAYERS.index(la):
                msgs.append("%s (%s) uses %s (%s), a layer above it: %s" %
                            (a, la, b, lb, ", ".join(syms[:3])))
    return msgs


def below_model(g, names):
    """Uses by the objects `names` of an analyses/ or input/ object."""
    msgs = []
    for a in names:
        for b, syms in sorted(g.get(a, {}).items()):
            if layer_of(b) in ("analyses", "input"):
                msgs.append("%s reads the model only, but uses %s: %s" % (a, b, ", ".join(syms[:3])))
    return msgs


def self_test():
    objs = {
        "analyzer/base/util.c.o": ({"ga_xmalloc"}, set()),
        "analyzer/analyses/a.c.o": ({"fa"}, {"fb", "ga_xmalloc"}),
        "analyzer/analyses/b.c.o": ({"fb"}, {"fa"}),
        "analyzer/render/r.c.o": ({"fr"}, {"fa"}),
        "analyzer/input/up.c.o": ({"fu"}, {"fr"}),
    }
    msgs = problems(graph(objs))
    want_cycle = any(m.startswith("cycle between analyzer/analyses/a.c.o, analyzer/analyses/b.c.o")
                     for m in msgs)
    want_up = any(m.startswith("analyzer/input/up.c.o (input) uses analyzer/render/r.c.o") for m in msgs)
    if not (want_cycle and want_up and len(msgs) == 2):
        print("self-test: the checks missed what they must find: %r" % msgs)
        return 1
    if problems(graph({k: v for k, v in objs.items() if "/b.c.o" not in k and "/up.c.o" not in k})):
        print("self-test: a clean graph was flagged")
        return 1
    # The shim (no layers, cycles only): the runtime calling a module above it by name, which
    # calls the runtime back, is a cycle of three objects; through a table of calls, none.
    shim = {
        "preload/runtime.c.o": ({"gt_reserve_slow", "gt_tracing_here"}, {"gt_hostsample_stop"}),
        "preload/hostsample.c.o": ({"gt_hostsample_stop"}, {"gt_py_sample_read"}),
        "preload/python.c.o": ({"gt_py_sample_read"}, {"gt_reserve_slow"}),
        "preload/lifecycle.c.o": ({"gt_configure"}, {"gt_hostsample_stop", "gt_tracing_here"}),
    }
    msgs = problems(graph(shim))
    want = "cycle between preload/hostsample.c.o, preload/python.c.o, preload/runtime.c.o"
    if len(msgs) != 1 or not msgs[0].startswith(want):
        print("self-test: the shim's planted cycle was missed: %r" % msgs)
        return 1
    shim["preload/runtime.c.o"] = ({"gt_reserve_slow", "gt_tracing_here"}, set())
    if problems(graph(shim)):
        print("self-test: the shim's graph without its cycle was flagged")
        return 1
    # A renderer that reads only the model: render/r.c.o uses the analysis a.c.o.
    m = below_model(graph(objs), ["analyzer/render/r.c.o"])
    if len(m) != 1 or "uses analyzer/analyses/a.c.o" not in m[0]:
        print("self-test: a renderer's use of an analysis was missed: %r" % m)
        return 1
    if below_model(graph(objs), ["analyzer/input/up.c.o"]):
        print("self-test: an object that uses only a renderer was flagged")
        return 1
    print("self-test: cycles and a use upwards found, clean graphs passed")
    return 0


def load(objdir, sub, srcdir):
    objs = {}
    for root, _, files in os.walk(os.path.join(objdir, sub)):
        for f in files:
            if f.endswith(".o"):
                p = os.path.join(root, f)
                rel = os.path.relpath(p, objdir)
                # an object whose source is gone (a file moved or deleted since that build)
                # is not part of the program: it would only report a stale dependency
                if srcdir and not os.path.exists(os.path.join(srcdir, rel[:-2])):
                    continue
                objs[rel] = symbols(p)
    return objs


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if argv[1:2] == ["--model-only"]:
        objs = load(argv[2], "analyzer", os.environ.get("SRC"))
        missing = [n for n in argv[3:] if n not in objs]
        if missing:
            print("no such objects: %s" % ", ".join(missing))
            return 1
        msgs = below_model(graph(objs), argv[3:])
        for m in msgs:
            print(m)
        print("%d renderers that read only the model, %d problems" % (len(argv) - 3, len(msgs)))
        return 1 if msgs else 0
    objdir = argv[1]
    subs = argv[2:] or ["analyzer", "preload"]
    srcdir = os.environ.get("SRC")  # the source tree (tests/run.sh sets it)
    status = 0
    for sub in subs:
        objs = load(objdir, sub, srcdir)
        if not objs:
            print("%s: no objects under %s" % (sub, objdir))
            return 1
        g = graph(objs)
        msgs = problems(g)
        for m in msgs:
            print(m)
        n_edges = sum(len(v) for v in g.values())
        print("%s: %d objects, %d uses between them, %d problems" % (sub, len(objs), n_edges, len(msgs)))
        status |= 1 if msgs else 0
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
