#!/usr/bin/env python3
"""check_layers.py - `make check-layers`: the layers of graft's sources hold.

Two checks, run from the repository root after a build (they read the
sources and build/obj/):

1. Includes name their layer, and none goes up.  A header of the file's
   own folder may be written bare ("eval.h"); any other project header is
   written with its path from the repository root ("ir/ir.h",
   "runtime/eval/kernels/nn_util.h"), a generated one as "gen/NAME.h"
   (build/gen/; the Makefile's include path is the root and build/ only).
   A .re or .y source is compiled from build/gen/, so it writes every
   project header with its path.  Each folder may include its own headers
   and those of the folders LAYERS lists for it: ir/ <- dsl/ <- compiler/,
   and dsl/ <- runtime/, whose parts stack eval/ <- infer/ <- plan/ <-
   engine/, convert/ <- verify/ <- api/ <- cli/, with report/ (the HTML
   report, over engine/'s audit) below cli/ (the Makefile's order; a
   subfolder is its folder's layer).  tests/ and examples/ sit above every
   layer: only the way they write includes is checked.

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
`check_layers.py --self-test` runs both checks on a small tree of planted
problems and exits 1 unless each is reported exactly.
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
# the folders whose sources are checked (tests/ and examples/: the way they write includes only)
TOPS = ["ir", "dsl", "compiler", "runtime", "tests", "examples"]
# generated headers (build/gen/, included as "gen/NAME.h"): the layer of what they were generated from
GENERATED = {"onnx.pb-c.h": "ir", "text_grammar.h": "ir", "dsl_grammar.h": "dsl",
             "kernel_families.h": "runtime/eval", "suites.h": "tests"}
# headers only their own layer may include
PRIVATE = {"onnx.pb-c.h": "ir"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def sources():
    for top in TOPS:
        for root, _, files in os.walk(top):
            for f in sorted(files):
                if f.endswith((".c", ".h", ".re", ".y")):
                    yield os.path.join(root, f)


def resolve(includer, name):
    """Where the header `name` that `includer` includes is, and how it is
    written: (path, "here") next to the file, bare; (path, "root") a path
    from the repository root; (None, "gen") a generated header, gen/NAME;
    (path, "bare") a project header of another folder written without its
    path from the root, which the check refuses; (None, None) not found."""
    base = os.path.basename(name)
    here = os.path.dirname(includer)
    if "/" not in name and not includer.endswith((".re", ".y")) and os.path.isfile(os.path.join(here, name)):
        return os.path.join(here, name), "here"
    if name == "gen/" + base and base in GENERATED:
        return None, "gen"
    if base in GENERATED:
        return "gen/" + base, "bare"
    if os.path.isfile(name) and not name.startswith(("./", "../")):
        return name, "root"
    for f in sorted(sources()):
        if f.endswith("/" + name.lstrip("./")):
            return f, "bare"
    return None, None


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
            name = m.group(1)
            path, how = resolve(f, name)
            line = text.count("\n", 0, m.start()) + 1
            base = os.path.basename(name)
            if how is None:
                problems.append(f"{f}:{line}: includes \"{name}\", which is no project header")
                continue
            if how == "bare":
                problems.append(f"{f}:{line}: includes \"{name}\" without its layer path: write \"{path}\"")
                continue
            if folder not in LAYERS:
                continue
            to = GENERATED[base] if how == "gen" else layer(os.path.dirname(path))
            if base in PRIVATE and folder != PRIVATE[base]:
                problems.append(f"{f}:{line}: includes \"{name}\", which only {PRIVATE[base]}/ may "
                                f"(the layers above it go through ir.h)")
            elif to != folder and to not in LAYERS[folder]:
                problems.append(f"{f}:{line}: includes \"{name}\" of {to}/, which {folder}/ may not "
                                f"(it may include {', '.join(LAYERS[folder]) or 'only its own'})")
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


def check():
    """Every problem of the tree under the current folder, the circles found and the call graph."""
    problems = check_includes()
    graph = calls()
    found = circles(graph)
    for comp in found:
        edges = "; ".join(f"{a} calls {b} ({graph[a][b]})" for a in sorted(comp) for b in sorted(graph[a])
                          if b in comp)
        problems.append(f"files calling each other in a circle: {edges}")
    return problems, found, graph


# --self-test: a tree with one problem of each kind planted, and what the check must say of it
SELF_TEST_TREE = {
    "ir/a.h": "",
    "ir/a.c": '#include "a.h"\n#include "runtime/eval/e.h"\nint b(void);\nint a(void) { return b(); }\n',
    "ir/b.c": '#include "ir/a.h"\nint a(void);\nint b(void) { return a(); }\n',
    "ir/text.y": '#include "a.h"\n#include "gen/text_grammar.h"\n',
    "dsl/d.c": '#include "a.h"\n#include "ir/a.h"\n#include "dsl_grammar.h"\nint a(void);\n'
               'int d(void) { return a(); }\n',
    "runtime/eval/e.h": "",
    "runtime/eval/kernels/k.h": "",
    "runtime/eval/e.c": '#include "e.h"\n#include "kernels/k.h"\n#include "runtime/eval/kernels/k.h"\n'
                        '#include "gen/onnx.pb-c.h"\n#include "nowhere.h"\n',
    "tests/t.c": '#include "runtime/eval/e.h"\n#include "e.h"\n#include "gen/onnx.pb-c.h"\n',
}
SELF_TEST_WANT = [
    'dsl/d.c:1: includes "a.h" without its layer path: write "ir/a.h"',
    'dsl/d.c:3: includes "dsl_grammar.h" without its layer path: write "gen/dsl_grammar.h"',
    'ir/a.c:2: includes "runtime/eval/e.h" of runtime/eval/, which ir/ may not (it may include only its own)',
    'ir/text.y:1: includes "a.h" without its layer path: write "ir/a.h"',
    'runtime/eval/e.c:2: includes "kernels/k.h" without its layer path: write "runtime/eval/kernels/k.h"',
    'runtime/eval/e.c:4: includes "gen/onnx.pb-c.h", which only ir/ may (the layers above it go through ir.h)',
    'runtime/eval/e.c:5: includes "nowhere.h", which is no project header',
    'tests/t.c:2: includes "e.h" without its layer path: write "runtime/eval/e.h"',
    "files calling each other in a circle: ir/a.c calls ir/b.c (b); ir/b.c calls ir/a.c (a)",
]


def self_test():
    import tempfile
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        try:
            for path, text in SELF_TEST_TREE.items():
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w") as fp:
                    fp.write(text)
                if path.endswith(".c") and not path.startswith("tests/"):
                    obj = os.path.join("build/obj", path[:-2] + ".o")
                    os.makedirs(os.path.dirname(obj), exist_ok=True)
                    subprocess.run(["cc", "-c", "-x", "c", "-o", obj, "-"], input="\n".join(
                        l for l in text.splitlines() if not l.startswith("#")), text=True, check=True)
            got = sorted(check()[0])
        finally:
            os.chdir(cwd)
    for p in sorted(set(got) | set(SELF_TEST_WANT)):
        if (p in got) != (p in SELF_TEST_WANT):
            print(f"check_layers --self-test: {'reported but not planted' if p in got else 'not reported'}: {p}",
                  file=sys.stderr)
    ok = got == sorted(SELF_TEST_WANT)
    print(f"check_layers --self-test: {'each planted problem reported' if ok else 'FAILED'} "
          f"({len(SELF_TEST_WANT)} problems)")
    return 0 if ok else 1


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if not os.path.isdir("build/obj"):
        print("check_layers: no build/obj: run make first", file=sys.stderr)
        return 1
    problems, found, graph = check()
    for p in problems:
        print(f"check_layers: {p}", file=sys.stderr)
    print(f"check_layers: {len(problems)} problem{'s' if len(problems) != 1 else ''} "
          f"({len(found)} circle{'s' if len(found) != 1 else ''} of files, {len(graph)} files)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
