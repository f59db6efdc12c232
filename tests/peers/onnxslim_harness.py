# onnxslim_harness.py: runs OnnxSlim's tests that build their models in code, graft as the optimizer.
#
# Not part of `make test`. Measures how many of OnnxSlim's own tests graft satisfies, and checks
# every model graft changed against the original in ONNX Runtime.
#
#   # extract the peer's files to a temp folder (never commit them):
#   M=MIRROR_OF_OnnxSlim; mkdir -p /tmp/peer/slim/gsroot
#   for f in test_fusion_patterns test_elimination_patterns test_pattern_matcher test_coverage \
#            test_dead_node_elimination test_shape_folding test_subexpression_elimination; do
#     git -C $M show HEAD:tests/$f.py > /tmp/peer/slim/$f.py; done
#   git -C $M archive HEAD onnxslim/third_party/onnx_graphsurgeon | tar -x -C /tmp/peer/slim/gsroot
#   cd /tmp/peer/slim; H=/path/to/graft/tests/peers/onnxslim_harness.py
#   /usr/bin/python3 $H test_fusion_patterns.py test_elimination_patterns.py test_pattern_matcher.py
#   /usr/bin/python3 $H test_coverage.py --class TestPytorchModels
#   /usr/bin/python3 $H test_dead_node_elimination.py test_shape_folding.py \
#       test_subexpression_elimination.py --gs gsroot
#   (options: --graft build/graft, --ort build/ort-tools, --out DIR, -k NAME)
#
# Shims replace what the tests import: `onnxslim` (slim(model or path, **options) runs
# `graft optimize`, options ignored; the matcher classes, imported only to check they have
# match/rewrite, are stand-ins; summarize_model counts op types; dead_node_elimination,
# subexpression_elimination and graphsurgeon's Graph.fold_constants export the graph, run graft
# and put the result back in the graph the test holds), `onnxruntime` (InferenceSession runs the
# model with node ORT-TOOLS/ort-run.mjs on the given inputs, so the tests' own output comparisons
# run in ONNX Runtime), the tests' `utils.run_onnx`, and `pytest` (marks, parametrize, `request`).
# With --gs the tests use OnnxSlim's own graphsurgeon (onnx 1.12 gets the few helpers it lacks;
# ml_dtypes, absent, is only needed for bfloat16/float8). Debian's torch.onnx.export has no
# dynamo=: it is dropped. Classes as in onnxoptimizer_harness.py (pass / changed / no-transform /
# graft-error / ort-differ / test-error), plus no-asserts (the test checks nothing); a test whose
# own output comparison (rtol 1e-5, atol 0) fails is ort-differ unless ort-compare's tolerances
# agree (then changed, marked rounding only). A test of an OnnxSlim helper function (no optimize
# call) is a test-error: not runnable with graft.
import argparse
import collections
import contextlib
import importlib.abc
import importlib.machinery
import importlib.util
import inspect
import io
import os
import subprocess
import sys
import tempfile
import types
import unittest

import numpy as np
import onnx
from onnx import numpy_helper

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onnxoptimizer_harness as base  # noqa: E402

ORT = [None]
GS_ROOT = [None]  # folder holding onnxslim/third_party/onnx_graphsurgeon (OnnxSlim's own, --gs)


def graft_in_place(graph, *args, **kwargs):
    """An OnnxSlim pass over a graphsurgeon graph: export, graft optimize, import, and put the
    result's nodes, inputs and outputs into the graph the test holds."""
    gs = sys.modules["onnxslim.third_party.onnx_graphsurgeon"]
    new = gs.import_onnx(base.optimize(gs.export_onnx(graph)))
    graph.nodes, graph.inputs, graph.outputs = new.nodes, new.inputs, new.outputs
    return graph


def slim(model, *args, **kwargs):
    if isinstance(model, str):
        model = onnx.load(model)
    return base.optimize(model)


class Matcher:
    """Stand-in for OnnxSlim's pattern matcher classes."""
    def __init__(self, *args, **kwargs):
        pass

    def match(self, *args, **kwargs):
        return None

    def rewrite(self, *args, **kwargs):
        return None


def summarize_model(model, *args, **kwargs):
    """onnxslim.utils.summarize_model as far as the tests read it: op_type_counts."""
    if isinstance(model, str):
        model = onnx.load(model)
    return types.SimpleNamespace(op_type_counts=collections.Counter(n.op_type for n in model.graph.node))


class StandIns(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Any onnxslim.* module: slim() and matcher stand-ins for every other name."""
    def find_spec(self, name, path, target=None):
        if GS_ROOT[0] and name.startswith("onnxslim.third_party.onnx_graphsurgeon"):
            return None  # the real one, found under the stand-in parents' __path__
        if name == "onnxslim" or name.startswith("onnxslim."):
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        module = types.ModuleType(spec.name)
        real = os.path.join(GS_ROOT[0] or "", *spec.name.split("."))
        module.__path__ = [real] if GS_ROOT[0] and os.path.isdir(real) else []
        module.slim = slim
        module.summarize_model = summarize_model
        module.print_model_info_as_table = lambda *args, **kwargs: None
        module.dead_node_elimination = graft_in_place
        module.subexpression_elimination = graft_in_place
        module.__getattr__ = lambda attr: Matcher
        return module

    def exec_module(self, module):
        pass


class Node:
    def __init__(self, name):
        self.name = name


class InferenceSession:
    """onnxruntime.InferenceSession through node ort-run.mjs."""
    def __init__(self, path, *args, **kwargs):
        self.path = path
        graph = onnx.load(path).graph
        inits = {i.name for i in graph.initializer}
        self.inputs = [Node(i.name) for i in graph.input if i.name not in inits]
        self.outputs = [Node(o.name) for o in graph.output]

    def get_inputs(self):
        return self.inputs

    def get_outputs(self):
        return self.outputs

    def run(self, output_names, feeds, *args):
        with tempfile.TemporaryDirectory() as tmp:
            ind, outd = os.path.join(tmp, "in"), os.path.join(tmp, "out")
            os.makedirs(ind)
            for n, (name, value) in enumerate(feeds.items()):
                tensor = numpy_helper.from_array(np.asarray(value), name)
                with open(os.path.join(ind, "input_%d.pb" % n), "wb") as f:
                    f.write(tensor.SerializeToString())
            proc = subprocess.run(["node", os.path.join(ORT[0], "ort-run.mjs"), self.path,
                                   "--inputs", ind, "--out", outd],
                                  capture_output=True, text=True, timeout=300)
            if proc.returncode != 0:
                raise RuntimeError("ort-run failed: " + (proc.stdout + proc.stderr)[-300:])
            got = {}
            for fn in os.listdir(outd):
                if fn.startswith("output_"):
                    t = onnx.TensorProto()
                    with open(os.path.join(outd, fn), "rb") as f:
                        t.ParseFromString(f.read())
                    got[t.name] = numpy_helper.to_array(t)
            names = output_names or [o.name for o in self.outputs]
            return [got[n] for n in names]


def run_onnx(model_path, inputs):
    sess = InferenceSession(model_path)
    names = [o.name for o in sess.get_outputs()]
    feeds = {i.name: inputs[i.name] for i in sess.get_inputs() if i.name in inputs}
    return dict(zip(names, sess.run(names, feeds)))


def install_shims():
    sys.meta_path.insert(0, StandIns())
    ort = types.ModuleType("onnxruntime")
    ort.InferenceSession = InferenceSession
    sys.modules["onnxruntime"] = ort
    utils = types.ModuleType("utils")
    utils.run_onnx = run_onnx
    sys.modules["utils"] = utils
    try:  # Debian's torch.onnx.export has no dynamo= (its exporter is the TorchScript one)
        import torch.onnx
        export = torch.onnx.export

        def export_no_dynamo(*args, **kwargs):
            kwargs.pop("dynamo", None)
            return export(*args, **kwargs)
        torch.onnx.export = export_no_dynamo
    except ImportError:
        pass


class Request:
    """The pytest `request` fixture as far as the tests use it: request.node.name."""
    def __init__(self, name):
        self.node = types.SimpleNamespace(name=name)


def cases(module, k, only_class=""):
    """(class, test name, call) for unittest classes and pytest-style Test* classes; a pytest
    test takes `request` and the values of its parametrize mark."""
    for cls in [c for c in vars(module).values() if isinstance(c, type)]:
        pytest_style = cls.__name__.startswith("Test") and not issubclass(cls, unittest.TestCase)
        if not (pytest_style or issubclass(cls, unittest.TestCase)) or \
                (only_class and cls.__name__ != only_class):
            continue
        for name in sorted(n for n in dir(cls) if n.startswith("test") and k in n):
            if not pytest_style:
                yield cls, name, getattr(cls(name), name)
                continue
            method = getattr(cls(), name)
            takes_request = "request" in inspect.signature(method).parameters
            params = getattr(getattr(cls, name), "peer_params", None)
            for value in (params[1] if params else [None]):
                label = "%s[%s]" % (name, value) if params else name
                kwargs = {params[0]: value} if params else {}
                if takes_request:
                    kwargs["request"] = Request(label)
                yield cls, label, (lambda m=method, kw=kwargs: m(**kw))


def has_asserts(cls, name):
    """Whether the test's source states an expectation (some tests only print a summary)."""
    src = inspect.getsource(getattr(cls, name.split("[")[0]))
    return "assert" in src


def main():
    ap = argparse.ArgumentParser(description="OnnxSlim's pattern tests with graft as the optimizer")
    ap.add_argument("test_files", nargs="+")
    ap.add_argument("--graft", default=base.State.graft)
    ap.add_argument("--ort", default=os.path.join(base.ROOT, "build", "ort-tools"))
    ap.add_argument("--out", default="/tmp/peer-onnxslim")
    ap.add_argument("-k", default="", help="only tests whose name contains this")
    ap.add_argument("--gs", help="folder holding OnnxSlim's onnxslim/third_party/onnx_graphsurgeon, "
                    "for the tests that build graphsurgeon graphs")
    ap.add_argument("--class", dest="only_class", default="", help="only this test class")
    args = ap.parse_args()
    base.State.graft, base.State.out = os.path.abspath(args.graft), args.out
    ORT[0] = args.ort
    if args.gs:
        GS_ROOT[0] = os.path.abspath(args.gs)
    install_shims()
    base.install_pytest_shim()
    if args.gs:
        try:
            import ml_dtypes  # noqa: F401  (graphsurgeon's exporter imports it for bfloat16/float8)
        except ImportError:
            stub = types.ModuleType("ml_dtypes")

            def unavailable(*a, **k):
                raise NotImplementedError("ml_dtypes is not installed")
            stub.bfloat16 = stub.float8_e4m3fn = unavailable
            sys.modules["ml_dtypes"] = stub
        # onnx 1.12 predates the float8 types graphsurgeon's converter table names
        for n, code in (("FLOAT8E4M3FN", 17), ("FLOAT8E4M3FNUZ", 18), ("FLOAT8E5M2", 19),
                        ("FLOAT8E5M2FNUZ", 20)):
            if not hasattr(onnx.TensorProto, n):
                setattr(onnx.TensorProto, n, code)
        if not hasattr(onnx.helper, "get_all_tensor_dtypes"):
            onnx.helper.get_all_tensor_dtypes = lambda: [
                v for v in onnx.TensorProto.DataType.values() if v != onnx.TensorProto.UNDEFINED]
        if not hasattr(onnx.helper, "tensor_dtype_to_np_dtype"):  # onnx 1.12 has onnx.mapping
            onnx.helper.tensor_dtype_to_np_dtype = lambda t: onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[t]
            onnx.helper.np_dtype_to_tensor_dtype = \
                lambda d: onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(d)]
    if args.gs:  # graphsurgeon's constant folding is OnnxSlim's too: graft instead
        import onnxslim.third_party.onnx_graphsurgeon as gs
        gs.Graph.fold_constants = graft_in_place

    results = []
    for path in args.test_files:
        spec = importlib.util.spec_from_file_location(
            "peer_" + os.path.basename(path)[:-3], path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for cls, name, call in cases(module, args.k, args.only_class):
            base.State.test, base.State.calls = name, []
            outcome, exc = "pass", None
            cwd = os.getcwd()
            try:
                os.makedirs(args.out, exist_ok=True)
                os.chdir(args.out)  # the torch tests export to tmp/NAME/ under the working folder
                with contextlib.redirect_stdout(io.StringIO()):
                    call()
            except unittest.SkipTest:
                outcome = "skip"
            except Exception as e:
                outcome, exc = "fail", e
            finally:
                os.chdir(cwd)
            info = base.classify(name, outcome, exc, path, args.ort)
            if exc is not None and "Not equal to tolerance" in str(exc):
                # the test compares with rtol 1e-5 and atol 0: rounding of folded weights
                # fails it; ONNX Runtime agreement is judged by ort-compare's tolerances
                if info["ort"] and all(rc == 0 for rc in info["ort"]):
                    info["class"] = "changed"
                    info["line"] += "  [rounding only: ort-compare agrees]"
                else:
                    info["class"] = "ort-differ"
            if outcome == "pass" and not has_asserts(cls, name):
                info["class"] = "no-asserts"
            results.append(info)
            print("%-14s %s %s" % (info["class"], name, info["line"]), flush=True)
            for note in info.get("ort_notes", []):
                print("    " + note)
            if info["class"] in ("changed", "no-transform", "no-asserts"):
                for before, after in info["hist"]:
                    print("    %s -> %s" % (base.fmt(before), base.fmt(after)))
    counts = collections.Counter(r["class"] for r in results)
    print("\n%d tests: %s" % (len(results), ", ".join("%s %d" % kv for kv in sorted(counts.items()))))


if __name__ == "__main__":
    main()
