#!/usr/bin/env python3
"""check_layers.py - `make check-layers`: the layers of graft's sources hold.

Two checks, run from the repository root after a build (they read the
sources and build/obj/):

1. No upward include.  Each folder may include its own headers and those
   of the folders LAYERS lists for it: ir/ <- dsl/ <- compiler/, and
   dsl/ <- runtime/, whose parts stack eval/ <- infer/ <- plan/ <- engine/,
   convert/ <- verify/ <- api/ <- cli/, with report/ (the HTML report,
   over engine/'s audit) below cli/ (the Makefile's order; a subfolder is
   its folder's layer).  A header is found
   as the compiler finds it: next to the file, then in the -I folders.

   A private header may be included in its own folder only: ONNX's
   protobuf (onnx.pb-c.h) is the IR's business, the layers above see
   tensors and value types through ir.h.

2. No circle of files calling each other.  From the object files (nm):
   file A calls file B when A uses a symbol B defines.  Files that reach
   each other through such calls form a circle; each is printed with the
   calls that close it.  A lower file that must reach an upper one does it
   through an interface the upper one fills in (EvCtx.run_body,
   RwRuleSet.back_end), never by name.

Exit status 0 when both hold, 1 otherwise (each problem on stderr).
"""
import os
import re
import subprocess
import sys

# folder -> the folders whose headers it may include (besides its own)
RUNTIME = ["runtime/eval", "runtime/infer", "runtime/plan", "runtime/engine", "runtime/convert",
           "runtime/verify", "runtime/cli"]
LAYERS = {
    "ir": [],
    "dsl": ["ir"],
    "compiler": ["ir", "dsl"],
    "runtime/eval": ["ir"],
    "runtime/infer": ["ir", "runtime/eval"],
    "runtime/plan": ["ir", "runtime/eval", "runtime/infer"],
    "runtime/engine": ["ir", "dsl", "runtime/eval", "runtime/infer", "runtime/plan"],
    "runtime/convert": ["ir", "runtime/eval", "runtime/infer", "runtime/plan"],
    "runtime/verify": ["ir", "dsl", "runtime/eval", "runtime/infer", "runtime/plan", "runtime/engine",
                       "runtime/convert"],
    "runtime/api": ["ir", "dsl", "runtime/eval", "runtime/infer", "runtime/plan", "runtime/engine",
                    "runtime/convert", "runtime/verify"],
    "runtime/report": ["ir", "runtime/eval", "runtime/infer", "runtime/plan", "runtime/engine"],
    "runtime/cli": ["ir", "dsl", "runtime/eval", "runtime/infer", "runtime/plan", "runtime/engine",
                    "runtime/convert", "runtime/verify", "runtime/api", "runtime/report"],
}
# the -I folders, in the Makefile's order (build/gen last)
INCLUDE_DIRS = [".", "ir", "runtime/eval", "runtime/infer", "runtime/plan", "runtime/engine", "runtime/convert",
                "runtime/verify", "runtime/api", "runtime/report", "dsl", "build/gen"]
# generated headers: the layer of what they were generated from
GENERATED = {"onnx.pb-c.h": "ir", "text_grammar.h": "ir", "dsl_grammar.h": "dsl",
             "kernel_families.h": "runtime/eval"}
# headers only their own layer may include
PRIVATE = {"onnx.pb-c.h": "ir"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def sources():
    for top in ["ir", "dsl", "compiler", "runtime"]:
        for root, _, files in os.walk(top):
            for f in sorted(files):
                if f.endswith((".c", ".h")):
                    yield os.path.join(root, f)


def header_folder(includer, name):
    """The folder of the header `name` that `includer` includes, or None."""
    base = os.path.basename(name)
    if base in GENERATED and not os.path.exists(os.path.join(os.path.dirname(includer), name)):
        return GENERATED[base]
    for d in [os.path.dirname(includer)] + INCLUDE_DIRS:
        p = os.path.normpath(os.path.join(d, name))
        if os.path.exists(p):
            return os.path.dirname(p) or "."
    return None


def layer(folder):
    """The LAYERS folder that folder is in (runtime/eval/kernels: runtime/eval)."""
    while folder not in LAYERS and "/" in folder:
        folder = os.path.dirname(folder)
    return folder


def check_includes():
    problems = []
    for f in sources():
        folder = layer(os.path.dirname(f))
        with open(f, encoding="utf-8", errors="replace") as fp:
            text = fp.read()
        for m in INCLUDE.finditer(text):
            to = header_folder(f, m.group(1))
            to = layer(to) if to else None
            line = text.count("\n", 0, m.start()) + 1
            base = os.path.basename(m.group(1))
            if base in PRIVATE and folder != PRIVATE[base]:
                problems.append(f"{f}:{line}: includes \"{m.group(1)}\", which only {PRIVATE[base]}/ may "
                                f"(the layers above it go through ir.h)")
            elif to is None:
                problems.append(f"{f}:{line}: includes \"{m.group(1)}\", which is in none of its folders")
            elif to != folder and to not in LAYERS.get(folder, []):
                problems.append(f"{f}:{line}: includes \"{m.group(1)}\" of {to}/, which {folder}/ may not "
                                f"(it may include {', '.join(LAYERS.get(folder, [])) or 'only its own'})")
    return problems


def symbols(obj):
    """(defined, used) global symbols of an object file."""
    out = subprocess.run(["nm", "-g", obj], capture_output=True, text=True, check=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            used.add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDBRCV":
            defined.add(parts[2])
    return defined, used


def calls():
    """file -> {file it calls: a symbol that call uses}, from build/obj/."""
    defs, uses = {}, {}
    for top in ["ir", "dsl", "compiler", "runtime"]:
        for root, _, files in os.walk(os.path.join("build/obj", top)):
            for f in files:
                if f.endswith(".o"):
                    src = os.path.relpath(os.path.join(root, f[:-2] + ".c"), "build/obj")
                    if os.path.exists(src):
                        defs[src], uses[src] = symbols(os.path.join(root, f))
    owner = {s: f for f, d in defs.items() for s in d}
    graph = {f: {} for f in defs}
    for f, u in uses.items():
        for s in sorted(u):
            g = owner.get(s)
            if g and g != f:
                graph[f].setdefault(g, s)
    return graph


def circles(graph):
    """The strongly connected components of more than one file (Tarjan)."""
    index, low, on, stack, out = {}, {}, set(), [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    if not os.path.isdir("build/obj"):
        print("check_layers: no build/obj: run make first", file=sys.stderr)
        return 1
    problems = check_includes()
    graph = calls()
    found = circles(graph)
    for comp in found:
        edges = "; ".join(f"{a} calls {b} ({graph[a][b]})" for a in sorted(comp) for b in sorted(graph[a])
                          if b in comp)
        problems.append(f"files calling each other in a circle: {edges}")
    for p in problems:
        print(f"check_layers: {p}", file=sys.stderr)
    print(f"check_layers: {len(problems)} problem{'s' if len(problems) != 1 else ''} "
          f"({len(found)} circle{'s' if len(found) != 1 else ''} of files, {len(graph)} files)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
