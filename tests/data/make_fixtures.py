#!/usr/bin/python3
"""make_fixtures.py - writes the small ONNX fixtures the tests use for what
the conformance models lack: functions, sparse initializers, external data,
subgraphs that read outer values, doc strings and metadata.  Also writes the
demo model examples/tiny_cnn.onnx.  Run with Debian's python3-onnx:
    /usr/bin/python3 tests/data/make_fixtures.py
The outputs are checked in, so the tests need no Python."""
import os
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto as T

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
rng = np.random.default_rng(7)


def save(model, name):
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(HERE, name))


def meta():
    """Doc strings everywhere, metadata_props, value_info, a graph doc."""
    x = helper.make_tensor_value_info("x", T.FLOAT, ["N", 4], doc_string="the input")
    y = helper.make_tensor_value_info("y", T.FLOAT, ["N", 4])
    w = numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "w")
    w.doc_string = "a weight"
    n1 = helper.make_node("Mul", ["x", "w"], ["t"], name="mul", doc_string="scale it")
    n2 = helper.make_node("LeakyRelu", ["t"], ["y"], name="act", alpha=0.2)
    n2.attribute[0].doc_string = "slope"
    g = helper.make_graph([n1, n2], "meta_graph", [x], [y], [w], doc_string="a graph",
                          value_info=[helper.make_tensor_value_info("t", T.FLOAT, ["N", 4])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)],
                          producer_name="graft-fixtures", producer_version="1", doc_string="model doc",
                          model_version=3, domain="org.graft.test")
    helper.set_model_props(m, {"author": "graft", "license": "MIT"})
    save(m, "meta.onnx")


def function():
    """A model-local function and a node that calls it."""
    f = helper.make_function(
        "org.graft", "Swish", ["X"], ["Y"],
        [helper.make_node("Sigmoid", ["X"], ["S"]), helper.make_node("Mul", ["X", "S"], ["Y"])],
        opset_imports=[helper.make_opsetid("", 13)], doc_string="x * sigmoid(x)")
    x = helper.make_tensor_value_info("x", T.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", T.FLOAT, [2, 3])
    g = helper.make_graph([helper.make_node("Swish", ["x"], ["y"], domain="org.graft")], "fn", [x], [y])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("org.graft", 1)],
                          functions=[f])
    save(m, "function.onnx")


def sparse():
    """A sparse initializer feeding a node."""
    values = numpy_helper.from_array(np.array([1.5, -2.0, 3.25], dtype=np.float32), "s")
    indices = numpy_helper.from_array(np.array([0, 5, 11], dtype=np.int64), "s_idx")
    sp = helper.make_sparse_tensor(values, indices, [3, 4])
    x = helper.make_tensor_value_info("x", T.FLOAT, [3, 4])
    y = helper.make_tensor_value_info("y", T.FLOAT, [3, 4])
    g = helper.make_graph([helper.make_node("Add", ["x", "s"], ["y"])], "sparse", [x], [y], sparse_initializer=[sp])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), "sparse.onnx")


def subgraph():
    """If and Loop bodies that read values of the enclosing graphs."""
    c = helper.make_tensor_value_info("c", T.BOOL, [])
    x = helper.make_tensor_value_info("x", T.FLOAT, [4])
    y = helper.make_tensor_value_info("y", T.FLOAT, [4])
    k = numpy_helper.from_array(np.array([2.0, 3.0, 4.0, 5.0], dtype=np.float32), "k")
    # then: y = (x * k) + inner loop over x ; else: y = x - k
    body_in = [helper.make_tensor_value_info("i", T.INT64, []),
               helper.make_tensor_value_info("cond", T.BOOL, []),
               helper.make_tensor_value_info("acc", T.FLOAT, [4])]
    body_out = [helper.make_tensor_value_info("cond_out", T.BOOL, []),
                helper.make_tensor_value_info("acc_out", T.FLOAT, [4])]
    loop_body = helper.make_graph(
        [helper.make_node("Identity", ["cond"], ["cond_out"]),
         helper.make_node("Add", ["acc", "xk"], ["acc_out"])],  # xk from the then-branch, x's scope 2 up
        "loop_body", body_in, body_out)
    then_g = helper.make_graph(
        [helper.make_node("Mul", ["x", "k"], ["xk"]),
         helper.make_node("Constant", [], ["trip"], value=numpy_helper.from_array(np.array(3, dtype=np.int64))),
         helper.make_node("Loop", ["trip", "", "x"], ["t_out"], body=loop_body)],
        "then", [], [helper.make_tensor_value_info("t_out", T.FLOAT, [4])])
    else_g = helper.make_graph([helper.make_node("Sub", ["x", "k"], ["e_out"])], "else", [],
                               [helper.make_tensor_value_info("e_out", T.FLOAT, [4])])
    g = helper.make_graph([helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
                          "subgraph", [c, x], [y], [k])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), "subgraph.onnx")


def external():
    """Weights in an external data file beside the model."""
    from onnx.external_data_helper import convert_model_to_external_data
    x = helper.make_tensor_value_info("x", T.FLOAT, [1, 64])
    y = helper.make_tensor_value_info("y", T.FLOAT, [1, 32])
    w = numpy_helper.from_array(rng.standard_normal((64, 32)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(32).astype(np.float32), "b")
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["t"]), helper.make_node("Add", ["t", "b"], ["y"])],
                          "ext", [x], [y], [w, b])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    convert_model_to_external_data(m, all_tensors_to_one_file=True, location="weights.bin", size_threshold=64)
    onnx.save(m, os.path.join(HERE, "ext", "ext.onnx"))


def tiny_cnn():
    """The demo model: a small raw-export-style CNN (Conv+BN+Relu, residual
    Add, global pooling, Flatten, Gemm), like what torch gives before fusion."""
    def t(name, shape, scale=0.2):
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)
    inits = [t("conv1.w", (8, 3, 3, 3)), t("conv1.b", (8,)),
             numpy_helper.from_array(rng.uniform(0.5, 1.5, 8).astype(np.float32), "bn1.scale"), t("bn1.bias", (8,), 0.1),
             t("bn1.mean", (8,), 0.1), numpy_helper.from_array(rng.uniform(0.5, 1.5, 8).astype(np.float32), "bn1.var"),
             t("conv2.w", (8, 8, 3, 3)), t("fc.w", (10, 8)), t("fc.b", (10,))]
    nodes = [
        helper.make_node("Conv", ["input", "conv1.w", "conv1.b"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c1", "bn1.scale", "bn1.bias", "bn1.mean", "bn1.var"], ["b1"],
                         name="bn1", epsilon=1e-5),
        helper.make_node("Relu", ["b1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "conv2.w"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c2", "r1"], ["s"], name="residual"),
        helper.make_node("Relu", ["s"], ["r2"], name="relu2"),
        helper.make_node("Identity", ["r2"], ["r2i"], name="identity"),
        helper.make_node("GlobalAveragePool", ["r2i"], ["p"], name="pool"),
        helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "fc.w", "fc.b"], ["output"], name="fc", transB=1),
    ]
    g = helper.make_graph(nodes, "tiny_cnn", [helper.make_tensor_value_info("input", T.FLOAT, [1, 3, 16, 16])],
                          [helper.make_tensor_value_info("output", T.FLOAT, [1, 10])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="graft-fixtures")
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(ROOT, "examples", "tiny_cnn.onnx"))


if __name__ == "__main__":
    meta(); function(); sparse(); subgraph(); external(); tiny_cnn()
