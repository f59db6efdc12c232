"""tests/python/test_graft.py - the Python module (python/graft/) against
libgraft.so, run by `make test` with Debian's /usr/bin/python3 (python3-onnx,
python3-numpy).  Models are built in code with onnx.helper; GRAFT (the graft
binary) is run for the messages the module must repeat word for word.  The
corpus' BERT is tried when the corpus (GRAFT_CORPUS, else ../shared/corpus
beside the checkout, as the Makefile's) exists."""

import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:  # the only reason to skip: make deps installs python3-onnx
    print("tests/python: skipped: %s (Debian's python3-onnx and python3-numpy are needed)" % e)
    sys.exit(0)

import graft

GRAFT = os.environ.get("GRAFT", os.path.join(ROOT, "build", "graft"))
CORPUS = os.environ.get("GRAFT_CORPUS", os.path.normpath(os.path.join(ROOT, "..", "shared", "corpus")))


def model(nodes, inputs, outputs, initializers=(), opset=13):
    """A model of one graph; inputs and outputs as (name, elem type, shape)."""
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(*i) for i in inputs],
                          [helper.make_tensor_value_info(*o) for o in outputs], list(initializers))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(m)
    return m


def squeeze_model():
    """x -> Identity -> Unsqueeze(0) -> Squeeze(0) -> Relu -> y: the library's
    identity and squeeze_unsqueeze leave the Relu alone."""
    axes = helper.make_tensor("axes", TensorProto.INT64, [1], [0])
    return model([helper.make_node("Identity", ["x"], ["i"], name="id"),
                  helper.make_node("Unsqueeze", ["i", "axes"], ["u"], name="unsq"),
                  helper.make_node("Squeeze", ["u", "axes"], ["s"], name="sq"),
                  helper.make_node("Relu", ["s"], ["y"], name="relu")],
                 [("x", TensorProto.FLOAT, [2, 3])], [("y", TensorProto.FLOAT, [2, 3])], [axes])


def unary_model(op):
    return model([helper.make_node(op, ["x"], ["y"], name="n")],
                 [("x", TensorProto.FLOAT, [2, 3])], [("y", TensorProto.FLOAT, [2, 3])])


def nodes(m):
    return [(n.op_type, list(n.input), list(n.output)) for n in m.graph.node]


def cli_stderr(*args):
    """What the graft command prints on stderr."""
    return subprocess.run([GRAFT] + list(args), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True).stderr


class TestOptimize(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def test_model_proto_in_and_out(self):
        r = graft.optimize(squeeze_model())
        self.assertIsInstance(r.model, onnx.ModelProto)
        self.assertEqual(nodes(r.model), [("Relu", ["x"], ["y"])])
        self.assertEqual(list(r.model.graph.initializer), [])
        self.assertEqual(r.fired, {"identity": 1, "squeeze_unsqueeze": 1})
        self.assertEqual((r.nodes_before, r.nodes_after, r.stop), (4, 1, "fixpoint"))
        self.assertEqual(r.report["schema"], "graft-audit/1")
        self.assertEqual([f["rule"] for f in r.report["firings"]], ["identity", "squeeze_unsqueeze"])
        self.assertEqual(r.report["firings"][1]["matched"], ["sq", "unsq"])
        self.assertEqual(r.report["op_histogram"]["after"], {"Relu": 1})
        self.assertIn("4 -> 1 nodes; fixpoint", r.log)

    def test_bytes_in_bytes_out(self):
        data = squeeze_model().SerializeToString()
        r = graft.optimize(data)
        self.assertIsInstance(r.model, bytes)
        self.assertEqual(nodes(onnx.load_from_string(r.model)), [("Relu", ["x"], ["y"])])
        self.assertEqual(r.report["input"]["path"], "<memory>")
        self.assertEqual(len(r.report["input"]["sha256"]), 64)

    def test_path_and_output(self):
        path, out = os.path.join(self.dir, "m.onnx"), os.path.join(self.dir, "out.onnx")
        onnx.save(squeeze_model(), path)
        r = graft.optimize(path)
        self.assertIsInstance(r.model, bytes)
        self.assertEqual(nodes(onnx.load_from_string(r.model)), [("Relu", ["x"], ["y"])])
        r = graft.optimize(path, output=out)
        self.assertEqual(r.model, out)
        self.assertEqual(nodes(onnx.load(out)), [("Relu", ["x"], ["y"])])
        self.assertEqual((r.report["input"]["path"], r.report["output"]), (path, out))

    def test_options(self):
        # --disable: the Identity stays; --level basic still has both rules
        r = graft.optimize(squeeze_model(), disable=["identity"])
        self.assertEqual(nodes(r.model), [("Identity", ["x"], ["i"]), ("Relu", ["i"], ["y"])])
        self.assertEqual(r.fired, {"squeeze_unsqueeze": 1})
        r = graft.optimize(squeeze_model(), level="basic")
        self.assertEqual(r.fired, {"identity": 1, "squeeze_unsqueeze": 1})
        # no library, one rule of our own, interpreted
        rules = os.path.join(self.dir, "mine.rules")
        with open(rules, "w") as f:
            f.write("// mine.rules\nlevel basic;\n\nrule my_relu_relu \"Relu is idempotent\":\n"
                    "    Relu(Relu(x)) => Relu(x);\n")
        m = model([helper.make_node("Relu", ["x"], ["a"], name="r1"), helper.make_node("Relu", ["a"], ["y"], name="r2")],
                  [("x", TensorProto.FLOAT, [4])], [("y", TensorProto.FLOAT, [4])])
        r = graft.optimize(m, rules=[rules], no_library=True)
        self.assertEqual(r.fired, {"my_relu_relu": 1})
        self.assertEqual([n.op_type for n in r.model.graph.node], ["Relu"])
        self.assertEqual(r.report["firings"][0]["source"], rules + ":4")
        # --target-opset
        r = graft.optimize(squeeze_model(), target_opset=18)
        self.assertEqual(r.model.opset_import[0].version, 18)

    def test_external_data(self):
        # a MatMul by a 32x32 weight kept in w.data beside the model
        w = numpy_helper.from_array(np.arange(1024, dtype=np.float32).reshape(32, 32) / 1024, "w")
        m = model([helper.make_node("Identity", ["x"], ["i"], name="id"),
                   helper.make_node("MatMul", ["i", "w"], ["y"], name="mm")],
                  [("x", TensorProto.FLOAT, [2, 32])], [("y", TensorProto.FLOAT, [2, 32])], [w])
        path = os.path.join(self.dir, "ext.onnx")
        onnx.save_model(m, path, save_as_external_data=True, location="w.data", size_threshold=1024)
        self.assertEqual(onnx.load(path, load_external_data=False).graph.initializer[0].data_location,
                         TensorProto.EXTERNAL)
        # into memory: the weights inline
        r = graft.optimize(path)
        opt = onnx.load_from_string(r.model)
        self.assertEqual([n.op_type for n in opt.graph.node], ["MatMul"])
        self.assertEqual(opt.graph.initializer[0].data_location, TensorProto.DEFAULT)
        np.testing.assert_array_equal(numpy_helper.to_array(opt.graph.initializer[0]),
                                      np.arange(1024, dtype=np.float32).reshape(32, 32) / 1024)
        # to a file with external data
        out = os.path.join(self.dir, "out.onnx")
        r = graft.optimize(path, output=out, external_data=True)
        self.assertTrue(os.path.exists(out + ".data"))
        self.assertEqual(onnx.load(out, load_external_data=False).graph.initializer[0].data_location,
                         TensorProto.EXTERNAL)
        self.assertTrue(graft.compare(path, out).agree)
        # a ModelProto loaded with its external data is whole in memory
        r = graft.optimize(onnx.load(path))
        self.assertEqual(numpy_helper.to_array(r.model.graph.initializer[0]).shape, (32, 32))
        with self.assertRaises(graft.Error):
            graft.optimize(path, external_data=True)

    def test_garbage_raises_the_cli_message(self):
        path = os.path.join(self.dir, "garbage.onnx")
        with open(path, "wb") as f:
            f.write(b"garbage")
        message = "%s: not an ONNX model: protobuf parse failed (truncated or corrupt file)" % path
        with self.assertRaises(graft.Error) as e:
            graft.optimize(path)
        self.assertEqual(str(e.exception), message)
        self.assertEqual(cli_stderr("optimize", path, "-o", os.path.join(self.dir, "o.onnx")), message + "\n")
        with self.assertRaises(graft.Error) as e:
            graft.optimize(b"garbage")
        self.assertEqual(str(e.exception),
                         "<memory>: not an ONNX model: protobuf parse failed (truncated or corrupt file)")

    def test_option_errors_are_the_cli_messages(self):
        path = os.path.join(self.dir, "m.onnx")
        onnx.save(squeeze_model(), path)
        out = os.path.join(self.dir, "o.onnx")
        for kwargs, args in [({"enable": ["nope"]}, ["--enable", "nope"]),
                             ({"level": "fast"}, ["--level", "fast"])]:
            with self.assertRaises(graft.Error) as e:
                graft.optimize(path, **kwargs)
            self.assertEqual(cli_stderr("optimize", path, "-o", out, *args).splitlines()[0], str(e.exception))
        self.assertEqual(str(e.exception), "graft: --level expects basic, extended, layout or all, got 'fast'")
        bad = os.path.join(self.dir, "bad.rules")
        with open(bad, "w") as f:
            f.write("rule r: Nope(x) => x;\n")
        with self.assertRaises(graft.Error) as e:
            graft.optimize(path, rules=[bad])
        self.assertEqual(cli_stderr("optimize", path, "-o", out, "--rules", bad).splitlines()[0], str(e.exception))
        self.assertTrue(str(e.exception).startswith(bad + ":1:"), str(e.exception))
        # the output may not be the input
        with self.assertRaises(graft.Error) as e:
            graft.optimize(path, output=path)
        self.assertEqual(cli_stderr("optimize", path, "-o", path).splitlines()[0], str(e.exception))


class TestCompareConvertRun(unittest.TestCase):
    def test_compare(self):
        c = graft.compare(squeeze_model(), graft.optimize(squeeze_model()).model)
        self.assertTrue(c.agree)
        self.assertEqual(c.runs, 3)
        self.assertEqual(list(c.outputs), ["y"])
        self.assertTrue(c.outputs["y"].agree)
        self.assertEqual(c.outputs["y"].max_abs, 0)
        self.assertIn("models agree (3 runs, rtol 0.001, atol 0.0001)", c.log)
        c = graft.compare(unary_model("Relu"), unary_model("Sigmoid").SerializeToString(), runs=1, exact=True)
        self.assertFalse(c.agree)
        self.assertFalse(c.outputs["y"].agree)
        self.assertGreater(c.outputs["y"].max_abs, 0.1)
        self.assertEqual(c.outputs["y"].mismatches, 6)
        self.assertIn("models differ (1 run, exact)", c.log)
        # symbolic dims: drawn per run (2 runs by default as graft compare), or pinned
        dyn = model([helper.make_node("Relu", ["x"], ["y"], name="n")],
                    [("x", TensorProto.FLOAT, ["N", 3])], [("y", TensorProto.FLOAT, ["N", 3])])
        c = graft.compare(dyn, dyn, runs=2, dims={"N": 4})
        self.assertTrue(c.agree)
        self.assertIn("run 1: dims N=4\nrun 2: dims N=4\n", c.log)
        with self.assertRaises(graft.Error) as e:
            graft.compare(unary_model("Relu"), squeeze_model().SerializeToString()[:10])
        self.assertTrue(str(e.exception).startswith("B: "), str(e.exception))

    def test_convert(self):
        m = model([helper.make_node("ReduceMean", ["x"], ["y"], name="rm", axes=[1], keepdims=0)],
                  [("x", TensorProto.FLOAT, [2, 3])], [("y", TensorProto.FLOAT, [2])])
        c = graft.convert(m, 18)
        self.assertIsInstance(c, onnx.ModelProto)
        self.assertEqual(c.opset_import[0].version, 18)
        self.assertEqual([(n.op_type, len(n.input)) for n in c.graph.node], [("ReduceMean", 2)])
        self.assertEqual([a.name for a in c.graph.node[0].attribute], ["keepdims"])
        self.assertTrue(graft.compare(m, c).agree)
        self.assertIsInstance(graft.convert(m.SerializeToString(), 18), bytes)
        with self.assertRaises(graft.Error) as e:
            graft.convert(m, 99)
        self.assertEqual(str(e.exception), "graft: --opset: '99' is not a number from 1 to 23")

    def test_run(self):
        m = model([helper.make_node("Add", ["a", "b"], ["s"], name="add"),
                   helper.make_node("Relu", ["s"], ["y"], name="relu"),
                   helper.make_node("Cast", ["s"], ["i"], name="cast", to=TensorProto.INT64)],
                  [("a", TensorProto.FLOAT, [2, 3]), ("b", TensorProto.FLOAT, [3])],
                  [("y", TensorProto.FLOAT, [2, 3]), ("i", TensorProto.INT64, [2, 3])])
        a = np.array([[1, -2, 3], [-4, 5, -6]], dtype=np.float32)
        b = np.array([0.5, 1, 1.5], dtype=np.float32)
        out = graft.run(m, {"a": a, "b": b})
        self.assertEqual(list(out), ["y", "i"])
        np.testing.assert_array_equal(out["y"], np.array([[1.5, 0, 4.5], [0, 6, 0]], dtype=np.float32))
        self.assertEqual(out["y"].dtype, np.float32)
        np.testing.assert_array_equal(out["i"], np.array([[1, -1, 4], [-3, 6, -4]], dtype=np.int64))
        out = graft.run(m.SerializeToString(), [a, b])   # by position
        np.testing.assert_array_equal(out["y"], np.array([[1.5, 0, 4.5], [0, 6, 0]], dtype=np.float32))
        with self.assertRaises(graft.Error) as e:
            graft.run(m, {"a": a.astype(np.float64), "b": b})
        self.assertEqual(str(e.exception), "<memory>: input 'a' is double, the model declares float")
        with self.assertRaises(graft.Error) as e:
            graft.run(m, {"c": a})
        self.assertEqual(str(e.exception), "<memory>: no graph input is named 'c'")
        # an input not given is generated, as graft run does
        self.assertEqual(graft.run(m, {"a": a})["y"].shape, (2, 3))


class TestVerify(unittest.TestCase):
    def test_verify(self):
        with tempfile.TemporaryDirectory() as d:
            rules = os.path.join(d, "small.rules")
            with open(rules, "w") as f:
                f.write("// small.rules\nlevel basic;\n\n"
                        "rule py_neg_neg \"Neg of Neg is the value\":\n    Neg(Neg(x)) => x;\n\n"
                        "rule py_abs_neg_wrong \"wrong on purpose\":\n    Abs(Neg(x)) => Neg(x);\n")
            out = os.path.join(d, "cex")
            v = graft.verify([rules], instances=10, out_dir=out)
            self.assertFalse(v.ok)
            self.assertEqual(sorted(v.rules), ["py_abs_neg_wrong", "py_neg_neg"])
            self.assertEqual(v.rules["py_neg_neg"].verdict, "verified")
            self.assertTrue(v.rules["py_neg_neg"].verified)
            self.assertEqual(v.rules["py_neg_neg"].counterexamples, [])
            wrong = v.rules["py_abs_neg_wrong"]
            self.assertEqual(wrong.verdict, "WRONG")
            self.assertEqual(wrong.counterexamples, [os.path.join(out, "py_abs_neg_wrong.onnx"),
                                                     os.path.join(out, "py_abs_neg_wrong.rewritten.onnx")])
            self.assertFalse(graft.compare(*wrong.counterexamples, exact=True).agree)
            self.assertIn("1 verified, 1 wrong, 0 not exercised (seed 0)", v.log)
            v = graft.verify(rules, instances=10, out_dir=out, seed=1)
            self.assertIn("(seed 1)", v.log)
            with self.assertRaises(graft.Error) as e:
                graft.verify(os.path.join(d, "none.rules"))
            self.assertEqual(str(e.exception), "%s: cannot open: No such file or directory" % os.path.join(d, "none.rules"))


class TestThreads(unittest.TestCase):
    def test_threads(self):
        """ctypes.CDLL releases the GIL; graft calls from several threads
        take turns (a lock) and give what one thread gets."""
        import ctypes
        import threading
        self.assertIs(type(graft._lib), ctypes.CDLL)
        want = nodes(graft.optimize(squeeze_model()).model)
        got = []

        def work():
            for _ in range(20):
                got.append(nodes(graft.optimize(squeeze_model()).model))
                got.append(graft.compare(unary_model("Relu"), unary_model("Relu"), runs=1).agree)
        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual((len(got), got.count(want), got.count(True)), (160, 80, 80))


class TestReadme(unittest.TestCase):
    """Every python block of python/README.md runs as written, from a folder
    that has the checkout's examples/ (what it writes stays there)."""

    def test_readme_blocks(self):
        import contextlib
        import io
        import re
        with open(os.path.join(ROOT, "python", "README.md")) as f:
            blocks = re.findall(r"```python\n(.*?)```", f.read(), re.S)
        self.assertGreaterEqual(len(blocks), 8)
        cwd = os.getcwd()
        with tempfile.TemporaryDirectory() as d:
            os.symlink(os.path.join(ROOT, "examples"), os.path.join(d, "examples"))
            os.chdir(d)
            try:
                for block in blocks:
                    out = io.StringIO()
                    with contextlib.redirect_stdout(out):
                        exec(compile(block, "python/README.md", "exec"), {})
                    # print(...)  # OUTPUT: the output shown is printed
                    for line in block.splitlines():
                        m = re.match(r"print\(.*\)\s+# (.*)$", line.strip())
                        if m:
                            self.assertIn(m.group(1), out.getvalue(), block)
            finally:
                os.chdir(cwd)


def corpus_bert():
    """The corpus' BERT: the first torch export of bert in MANIFEST.tsv, raw if there is one."""
    manifest = os.path.join(CORPUS, "MANIFEST.tsv")
    if not os.path.exists(manifest):
        return None
    with open(manifest) as f:
        paths = [line.split("\t")[0] for line in f if "bert" in line.split("\t")[0]]
    paths.sort(key=lambda p: "/raw/" not in p)
    return os.path.join(CORPUS, paths[0]) if paths else None


@unittest.skipUnless(corpus_bert(), "no corpus (%s)" % CORPUS)
class TestCorpus(unittest.TestCase):
    def test_bert(self):
        m = onnx.load(corpus_bert())
        r = graft.optimize(m)
        self.assertIsInstance(r.model, onnx.ModelProto)
        self.assertEqual(r.nodes_before, len(m.graph.node))
        self.assertLess(r.nodes_after, r.nodes_before)
        self.assertEqual(r.nodes_after, len(r.model.graph.node))
        self.assertGreater(len(r.fired), 1)
        self.assertEqual(sum(r.fired.values()), len(r.report["firings"]))
        c = graft.compare(m, r.model)
        self.assertTrue(c.agree, c.log)


if __name__ == "__main__":
    unittest.main(verbosity=1)
