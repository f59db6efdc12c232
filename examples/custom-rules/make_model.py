#!/usr/bin/python3
"""make_model.py - writes model.onnx, the small model the custom-rules example
optimizes: a chain in which each rule of custom.rules fires once (Neg of Neg,
Relu of Relu, Abs of Neg) and graft's own basic rule set removes an Identity.
Run with Debian's python3-onnx:  /usr/bin/python3 make_model.py
model.onnx is checked in, so building the example needs no Python."""
import os
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto as T

HERE = os.path.dirname(os.path.abspath(__file__))

x = helper.make_tensor_value_info("x", T.FLOAT, ["N", 4])
y = helper.make_tensor_value_info("y", T.FLOAT, ["N", 4])
w = numpy_helper.from_array(np.array([0.5, -1.0, 2.0, -3.0], dtype=np.float32), "w")
nodes = [
    helper.make_node("Mul", ["x", "w"], ["scaled"], name="scale"),
    helper.make_node("Neg", ["scaled"], ["n1"], name="neg_1"),
    helper.make_node("Neg", ["n1"], ["n2"], name="neg_2"),        # neg_neg
    helper.make_node("Relu", ["n2"], ["r1"], name="relu_1"),
    helper.make_node("Relu", ["r1"], ["r2"], name="relu_2"),      # relu_relu
    helper.make_node("Identity", ["r2"], ["i"], name="copy"),     # graft's basic: identity
    helper.make_node("Neg", ["i"], ["n3"], name="neg_3"),
    helper.make_node("Abs", ["n3"], ["y"], name="magnitude"),     # abs_neg
]
g = helper.make_graph(nodes, "custom_rules_demo", [x], [y], [w])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="graft-example")
onnx.checker.check_model(m, full_check=True)
onnx.save(m, os.path.join(HERE, "model.onnx"))
