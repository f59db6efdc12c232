#!/usr/bin/python3
# convert_diff.py - graft convert against ONNX's own version converter
# (onnx.version_converter of python3-onnx, which goes up to opset 17): every
# conformance node model and every corpus model from opset 7 on is converted
# by both to each target opset of TARGETS other than its own, up and down,
# and each result is judged in ONNX Runtime against the original
# (tests/ort_gate.mjs: loads, and agrees on the test data or on generated
# inputs):
#   right    loads and agrees;
#   wrong    written, but ORT refuses it or it computes something else;
#   refused  the converter declined (graft: an error naming the node; onnx:
#            an exception, or a crash of the process, counted apart).
# Pairs whose original ORT refuses or cannot feed are left out.  Models at
# opsets 1..6 (ORT refuses most of them: it has no Add-6 kernel ...) go to 7
# and each target above their own, and are judged by the test data's
# output_K.pb in ORT instead (ort_gate.mjs --expect-refused), in a tally of
# their own.  Prints the tally (both right, graft right / onnx wrong, ...) and, with --list, each
# pair where the two differ.
#
# usage: tests/convert_diff.py ORT_TOOLS [--corpus DIR] [--list] [--limit N]
import os
import subprocess
import sys
import tempfile

import onnx
from onnx import version_converter

TARGETS = [9, 11, 13, 15, 17]
OLD_TARGETS = [7, 9, 11, 13, 15, 17]  # from opsets 1..6
TESTDATA = "/usr/include/onnx/backend/test/data/node"


def models(corpus):
    for d in sorted(os.listdir(TESTDATA)):
        p = os.path.join(TESTDATA, d, "model.onnx")
        if os.path.exists(p):
            yield "node/" + d, p
    if corpus and os.path.isdir(corpus):
        for root, _, files in os.walk(corpus, followlinks=True):
            for f in sorted(files):
                if f.endswith(".onnx"):
                    p = os.path.join(root, f)
                    yield "corpus/" + os.path.relpath(p, corpus), p


def opset_of(m):
    for o in m.opset_import:
        if o.domain in ("", "ai.onnx"):
            return o.version
    return 0


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit("usage: tests/convert_diff.py ORT_TOOLS [--corpus DIR] [--list] [--limit N]")
    ort = args[0]
    corpus = os.environ.get("GRAFT_CORPUS", "../shared/corpus")
    listing = "--list" in args
    limit = None
    if "--corpus" in args:
        corpus = args[args.index("--corpus") + 1]
    if "--limit" in args:
        limit = int(args[args.index("--limit") + 1])
    graft = os.environ.get("GRAFT", "build/graft")
    tmp = tempfile.mkdtemp(prefix="convdiff-")
    pairs = []  # (name, orig, sets, graft_out or None, onnx_out or None)
    crashes = 0  # models on which onnx's converter crashed (its targets count as refused)
    for i, (name, path) in enumerate(models(corpus)):
        if limit and i >= limit:
            break
        try:
            m = onnx.load(path)
        except Exception:
            continue
        src = opset_of(m)
        old = src < 7
        if not src:
            continue
        sets = sorted(os.path.join(os.path.dirname(path), s) for s in os.listdir(os.path.dirname(path))
                      if s.startswith("test_data_set_"))
        targets = [t for t in (OLD_TARGETS if old else TARGETS) if t != src]
        # onnx's converter crashes the process on some models: run it in a child
        pid = os.fork()
        if pid == 0:
            for t in targets:
                try:
                    onnx.save(version_converter.convert_version(m, t), os.path.join(tmp, "o%d_%d.onnx" % (i, t)))
                except Exception:
                    pass
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        if status:
            crashes += 1
        for t in targets:
            tag = "%s@%d" % (name, t)
            gout = os.path.join(tmp, "g%d_%d.onnx" % (i, t))
            r = subprocess.run([graft, "convert", path, "--opset", str(t), "-o", gout],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            gout = gout if r.returncode == 0 else None
            oout = os.path.join(tmp, "o%d_%d.onnx" % (i, t))
            pairs.append((tag, path, sets, gout, oout if os.path.exists(oout) else None, old))

    def judge(which):
        lst = os.path.join(tmp, which + ".list")
        with open(lst, "w") as f:
            for tag, path, sets, gout, oout, _ in pairs:
                out = gout if which == "graft" else oout
                if out:
                    f.write("\t".join([tag, path, out] + sets) + "\n")
        res = subprocess.run(["node", "tests/ort_gate.mjs", ort, lst, "--verbose", "--expect-refused"],
                             capture_output=True, text=True)
        verdict = {}
        for line in res.stdout.splitlines():
            if line.startswith("TESTDATA "):
                verdict[line[len("TESTDATA "):].strip()] = "testdata"
                continue
            if line.startswith("REFUSED "):
                refused_orig.add(line[len("REFUSED "):].strip())
            for key, v in (("FAIL ", "wrong"), ("REFUSED ", "orig"), ("NOFEED ", "nofeed"), ("skip ", "orig")):
                if line.startswith(key):
                    tag = line[len(key):].split(":")[0].strip()
                    if verdict.get(tag) != "wrong":
                        verdict[tag] = v
        return verdict

    refused_orig = set()  # tags whose original ORT refuses
    vg, vo = judge("graft"), judge("onnx")
    tally = [{}, {}]  # from opset 7 on; from opsets 1..6
    excluded = [0, 0]
    diffs = []
    for tag, path, sets, gout, oout, old in pairs:
        g = "refused" if not gout else vg.get(tag, "right")
        o = "refused" if not oout else vo.get(tag, "right")
        if old:  # judged by the test data where ORT refuses the original
            g = "right" if g == "testdata" else g
            o = "right" if o == "testdata" else o
        elif tag in refused_orig:
            g = o = "orig"
        if "orig" in (g, o) or "nofeed" in (g, o):
            excluded[old] += 1
            continue
        g = "right" if g == "right" else "refused" if g == "refused" else "wrong"
        o = "right" if o == "right" else "refused" if o == "refused" else "wrong"
        tally[old][(g, o)] = tally[old].get((g, o), 0) + 1
        if g != o:
            diffs.append("%s: graft %s, onnx %s" % (tag, g, o))
    for old in (0, 1):
        n = sum(tally[old].values())
        if old:
            print("from opsets 1..6: %d pairs judged (%d left out); targets %s, judged by the test data where ORT "
                  "refuses the original" % (n, excluded[old], ",".join(map(str, OLD_TARGETS))))
        else:
            print("convert_diff: %d pairs judged (%d left out: original refused, not runnable or not feedable in ORT); "
                  "targets %s; onnx's converter crashed on %d models" % (n, excluded[old], ",".join(map(str, TARGETS)),
                                                                           crashes))
        for g in ("right", "wrong", "refused"):
            print("  graft %-7s: " % g + ", ".join("onnx %s %d" % (o, tally[old].get((g, o), 0))
                                                  for o in ("right", "wrong", "refused")))
    if listing:
        for line in diffs:
            print("  " + line)
    subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
