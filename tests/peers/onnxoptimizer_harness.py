# onnxoptimizer_harness.py: runs onnxoptimizer's own test suite with graft in place of its optimizer.
#
# Not part of `make test`. It measures how many of the tests the onnxoptimizer authors wrote for
# their passes graft satisfies, and checks every graft output against the original in ONNX Runtime.
#
#   # extract the peer's test file to a temp folder (never commit it):
#   git -C MIRROR show HEAD:onnxoptimizer/test/optimizer_test.py > /tmp/peer/optimizer_test.py
#   /usr/bin/python3 tests/peers/onnxoptimizer_harness.py /tmp/peer/optimizer_test.py \
#       [--graft build/graft] [--ort build/ort-tools] [--out /tmp/peer-out] [-k NAME] [--vendor]
#
# A shim module `onnxoptimizer` replaces the real one: optimize(model, passes) saves the model,
# runs `graft optimize MODEL -o OUT` (all rules; the pass names are ignored) and returns the result
# loaded. helper.make_model's ir_version is capped at what the installed onnx knows (the tests
# ask for 10; onnx 1.12 checks up to 8). A stand-in `pytest` is used when pytest is not installed
# (xfail marks are recorded and shown). Each test is classified:
#   pass          the test's own assertions hold
#   changed       assertions fail, graft changed the graph, outputs agree in ONNX Runtime; listed
#                 with the failing assertion, the expected node count when the assertion states one,
#                 and the op histograms, to be judged "pass in substance" (did the transformation or
#                 more) or not by reading the test
#   no-transform  assertions fail and graft left every model it was given as it was (same ops)
#   graft-error   graft exited non-zero (the model is kept under --out for a bug report)
#   ort-differ    graft's output differs from the original in ONNX Runtime (a bug to report)
#   skip / test-error   the test skipped itself / failed before or without calling optimize
# Every model graft is given and returns is saved under --out/TEST/ (N.in.onnx, N.out.onnx); an
# ort-compare exit other than 0 (3: ONNX Runtime cannot run the original) is printed under the test.
# The judgement of the "changed" ones and the counts are in docs/peers.md.
import argparse
import collections
import contextlib
import importlib.util
import io
import linecache
import os
import re
import subprocess
import sys
import traceback
import types
import unittest

import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


class GraftError(Exception):
    pass


class State:
    """What the shim records for the test running now."""
    graft = os.path.join(ROOT, "build", "graft")
    out = "/tmp/peer-onnxoptimizer"
    vendor = False
    test = None
    calls = []


def op_histogram(graph, hist=None):
    """Op types of a graph and all its subgraphs, counted."""
    hist = collections.Counter() if hist is None else hist
    for node in graph.node:
        hist[(node.domain or "") + ":" + node.op_type if node.domain else node.op_type] += 1
        for attr in node.attribute:
            if attr.HasField("g"):
                op_histogram(attr.g, hist)
            for g in attr.graphs:
                op_histogram(g, hist)
    return hist


def shape_of(model):
    """Structure to decide 'no transform': ops, initializer count, interface names."""
    g = model.graph
    return (sorted(op_histogram(g).items()), len(g.initializer),
            [i.name for i in g.input], [o.name for o in g.output])


def optimize(model, passes=None, fixed_point=False):
    """The shim of onnxoptimizer.optimize: graft optimize on the model."""
    folder = os.path.join(State.out, State.test)
    os.makedirs(folder, exist_ok=True)
    n = len(State.calls)
    src = os.path.join(folder, "%d.in.onnx" % n)
    dst = os.path.join(folder, "%d.out.onnx" % n)
    onnx.save(model, src)
    cmd = [State.graft, "optimize", src, "-o", dst]
    if State.vendor:
        cmd.append("--allow-vendor-ops")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    call = {"passes": list(passes or []), "in": src, "out": dst, "rc": proc.returncode,
            "stderr": proc.stderr.strip()}
    State.calls.append(call)
    if proc.returncode != 0:
        raise GraftError("graft exited %d: %s" % (proc.returncode, proc.stderr.strip()[-300:]))
    result = onnx.load(dst)
    call["changed"] = shape_of(result) != shape_of(model)
    call["before"] = op_histogram(model.graph)
    call["after"] = op_histogram(result.graph)
    return result


PASS_NAMES = ["eliminate_deadend", "eliminate_identity", "eliminate_nop_transpose",
              "fuse_bn_into_conv", "fuse_consecutive_transposes", "fuse_matmul_add_bias_into_gemm"]


def install_pytest_shim():
    """A stand-in `pytest` when it is not installed: marks are recorded on the function
    (peer_mark; parametrize's values in peer_params), pytest.skip raises unittest.SkipTest."""
    try:
        import pytest  # noqa: F401
        return
    except ImportError:
        pass
    fake = types.ModuleType("pytest")

    class Mark:
        def __getattr__(self, name):
            def mark(*args, **kwargs):
                if len(args) == 1 and callable(args[0]) and not kwargs:
                    args[0].peer_mark = name
                    return args[0]

                def decorate(f):
                    f.peer_mark = name
                    if name == "parametrize":
                        f.peer_params = (args[0], list(args[1]))
                    return f
                return decorate
            return mark

    def skip(msg=""):
        raise unittest.SkipTest(msg)
    fake.mark = Mark()
    fake.skip = skip
    fake.fixture = lambda *a, **k: (a[0] if a and callable(a[0]) else (lambda f: f))
    sys.modules["pytest"] = fake


def install_shims():
    shim = types.ModuleType("onnxoptimizer")
    shim.optimize = optimize
    shim.get_available_passes = lambda: list(PASS_NAMES)
    shim.get_fuse_and_elimination_passes = lambda: list(PASS_NAMES)
    sys.modules["onnxoptimizer"] = shim
    # the tests ask for IR version 10; onnx 1.12's checker knows up to 8, which says the same here
    make_model = onnx.helper.make_model

    def make_model_capped(*args, **kwargs):
        if kwargs.get("ir_version", 0) > onnx.IR_VERSION:
            kwargs["ir_version"] = onnx.IR_VERSION
        return make_model(*args, **kwargs)
    onnx.helper.make_model = make_model_capped
    install_pytest_shim()


def ort_compare(ort, a, b):
    """0 agree, 1 differ, 3 ORT cannot run the original, 4 cannot run graft's output."""
    if not ort:
        return None, "no ORT tools"
    proc = subprocess.run(["node", os.path.join(ort, "ort-compare.mjs"), a, b, "--runs", "2"],
                          capture_output=True, text=True, timeout=300)
    return proc.returncode, (proc.stdout + proc.stderr).strip().splitlines()[-1:] or [""]


def failing_line(exc, test_file):
    """The assertion line of the test file that failed, and the node count it expects if stated."""
    tb = exc.__traceback__
    frame_line = None
    while tb:
        if os.path.abspath(tb.tb_frame.f_code.co_filename) == os.path.abspath(test_file):
            frame_line = (tb.tb_frame, tb.tb_lineno)
        tb = tb.tb_next
    if not frame_line:
        return "", None
    frame, lineno = frame_line
    text = linecache.getline(test_file, lineno).strip()
    m = re.search(r"len\((.+\.node)\)\s*==\s*(\d+)", text)
    expected = None
    if m:
        try:
            actual = len(eval(m.group(1), frame.f_globals, frame.f_locals))
            expected = (actual, int(m.group(2)))
        except Exception:
            pass
    return "%d: %s" % (lineno, text), expected


def classify(test, outcome, exc, test_file, ort):
    calls = State.calls
    info = {"test": test, "calls": len(calls), "line": "", "expected": None, "ort": []}
    if outcome == "pass":
        info["class"] = "pass"
    elif outcome == "skip":
        info["class"] = "skip"
    elif any(c["rc"] != 0 for c in calls):
        info["class"] = "graft-error"
        info["line"] = next(c["stderr"] for c in calls if c["rc"] != 0)[-200:]
    elif not calls:
        info["class"] = "test-error"
        info["line"] = "%s: %s" % (type(exc).__name__, str(exc)[:200])
    else:
        info["line"], info["expected"] = failing_line(exc, test_file)
        if not isinstance(exc, AssertionError):
            info["line"] += "  [%s: %s]" % (type(exc).__name__, str(exc)[:150])
        info["class"] = "changed" if any(c["changed"] for c in calls) else "no-transform"
    # every changed output, whatever the outcome, is checked in ONNX Runtime
    for c in calls:
        if c["rc"] == 0 and c.get("changed"):
            rc, last = ort_compare(ort, c["in"], c["out"])
            info["ort"].append(rc)
            if rc not in (0, None):
                info.setdefault("ort_notes", []).append("%s: ort-compare exit %s %s" % (c["out"], rc, last))
            if rc in (1, 4):
                info["class"] = "ort-differ"
                info["line"] = "%s vs %s: %s" % (c["in"], c["out"], last)
    info["hist"] = [(dict(c.get("before", {})), dict(c.get("after", {}))) for c in calls]
    return info


def main():
    ap = argparse.ArgumentParser(description="onnxoptimizer's tests with graft as the optimizer")
    ap.add_argument("test_file")
    ap.add_argument("--graft", default=State.graft)
    ap.add_argument("--ort", default=os.path.join(ROOT, "build", "ort-tools"))
    ap.add_argument("--out", default=State.out)
    ap.add_argument("-k", default="", help="only tests whose name contains this")
    ap.add_argument("--vendor", action="store_true", help="graft optimize --allow-vendor-ops")
    args = ap.parse_args()
    State.graft, State.out, State.vendor = os.path.abspath(args.graft), args.out, args.vendor
    ort = args.ort if os.path.exists(os.path.join(args.ort, "ort-compare.mjs")) else None

    install_shims()
    spec = importlib.util.spec_from_file_location("peer_optimizer_test", args.test_file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    results = []
    for cls_name in dir(module):
        cls = getattr(module, cls_name)
        if not (isinstance(cls, type) and issubclass(cls, unittest.TestCase)):
            continue
        for name in sorted(n for n in dir(cls) if n.startswith("test") and args.k in n):
            State.test, State.calls = name, []
            case = cls(name)
            outcome, exc = "pass", None
            try:
                with contextlib.redirect_stdout(io.StringIO()):  # the tests' own prints
                    case.setUp()
                    getattr(case, name)()
            except unittest.SkipTest:
                outcome = "skip"
            except Exception as e:  # the test's failure, or GraftError
                outcome, exc = "fail", e
            info = classify(name, outcome, exc, args.test_file, ort)
            mark = getattr(getattr(cls, name), "peer_mark", "")
            info["mark"] = mark
            results.append(info)
            print("%-14s %s%s %s" % (info["class"], name, " [%s]" % mark if mark else "",
                                     info["line"]), flush=True)
            for note in info.get("ort_notes", []):
                print("    " + note)
            if info["class"] in ("changed", "no-transform"):
                if info["expected"]:
                    print("    nodes: graft %d, test expects %d" % info["expected"])
                for before, after in info["hist"]:
                    print("    %s -> %s" % (fmt(before), fmt(after)))
    counts = collections.Counter(r["class"] for r in results)
    print("\n%d tests: %s" % (len(results), ", ".join("%s %d" % kv for kv in sorted(counts.items()))))
    ort_runs = collections.Counter(rc for r in results for rc in r["ort"])
    print("ONNX Runtime checks of changed outputs (exit code: count): %s" % dict(ort_runs))


def fmt(hist):
    return " ".join("%s%s" % (op, "x%d" % n if n > 1 else "") for op, n in sorted(hist.items()))


if __name__ == "__main__":
    main()
