#!/usr/bin/python3
"""make_control.py - writes the control-flow fixtures: small models whose
networks sit inside If/Loop/Scan bodies and read outer-scope values, with
Loop-carried sequences, absent optional inputs, and outputs that are inputs.
Each goes to tests/data/control/NAME/model.onnx with test_data_set_K/
holding input_K.pb and the expected output_K.pb (computed here with numpy),
the layout of ONNX's backend test data, so the same tools read both.

These are the shapes real models take that rewrites can break (an Identity
removed inside a branch leaves the branch returning an outer-scope value,
which ONNX Runtime refuses to load).  tests/check_rewrite.c optimizes them
on graft's evaluator; tests/ort_gate.sh loads the results in ONNX Runtime.
Run with Debian's python3-onnx:  /usr/bin/python3 tests/data/control/make_control.py
The outputs are checked in, so the tests need no Python."""
import os
import shutil
import zlib
import numpy as np
import onnx
from onnx import helper as h, numpy_helper as nh, TensorProto as T

HERE = os.path.dirname(os.path.abspath(__file__))
rng = None


def fixture(fn):
    """Each fixture draws from its own generator, seeded by its name, so
    adding one leaves the others' files unchanged."""
    def run():
        global rng
        rng = np.random.default_rng(zlib.crc32(fn.__name__.encode()))
        fn()
    return run


def vi(name, dtype, shape):
    return h.make_tensor_value_info(name, dtype, shape)


def const(name, value):
    return h.make_node("Constant", [], [name], value=nh.from_array(np.asarray(value), name + "_v"))


def write(name, graph, opset, sets):
    """sets: list of (inputs, outputs), each a list of numpy arrays or
    onnx protos (SequenceProto, OptionalProto) in graph order."""
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)], producer_name="graft-fixtures")
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    d = os.path.join(HERE, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    onnx.save(model, os.path.join(d, "model.onnx"))
    for k, (ins, outs) in enumerate(sets):
        sd = os.path.join(d, "test_data_set_%d" % k)
        os.makedirs(sd)
        for prefix, values, infos in (("input", ins, graph.input), ("output", outs, graph.output)):
            for i, (v, info) in enumerate(zip(values, infos)):
                if isinstance(v, np.ndarray):
                    v = nh.from_array(v, info.name)
                else:
                    v.name = info.name
                with open(os.path.join(sd, "%s_%d.pb" % (prefix, i)), "wb") as f:
                    f.write(v.SerializeToString())


@fixture
def if_outer_identity():
    """If branches that end in Identity (and Squeeze/Unsqueeze, Dropout) of
    outer-scope values, a folded constant as a branch output, and an Identity
    of an outer initializer: the voice-activity detectors' shape."""
    w = rng.standard_normal((2, 3)).astype(np.float32)
    then = h.make_graph([
        h.make_node("Identity", ["r"], ["a"]),
        const("ax", np.array([0], np.int64)),
        h.make_node("Unsqueeze", ["x", "ax"], ["u"]),
        h.make_node("Squeeze", ["u", "ax"], ["s"]),
        const("k", np.full((2, 3), 0.5, np.float32)),
        h.make_node("Add", ["k", "k"], ["q"]),
    ], "then", [], [vi("a", T.FLOAT, [2, 3]), vi("s", T.FLOAT, [2, 3]), vi("q", T.FLOAT, [2, 3])])
    other = h.make_graph([
        h.make_node("Neg", ["r"], ["n"]),
        h.make_node("Identity", ["n"], ["b"]),
        h.make_node("Dropout", ["x"], ["d"]),
        h.make_node("Identity", ["w"], ["e"]),
    ], "else", [], [vi("b", T.FLOAT, [2, 3]), vi("d", T.FLOAT, [2, 3]), vi("e", T.FLOAT, [2, 3])])
    g = h.make_graph([
        h.make_node("Relu", ["x"], ["r"]),
        h.make_node("If", ["c"], ["y", "z", "v"], then_branch=then, else_branch=other),
    ], "if_outer_identity", [vi("c", T.BOOL, []), vi("x", T.FLOAT, [2, 3])],
        [vi("y", T.FLOAT, [2, 3]), vi("z", T.FLOAT, [2, 3]), vi("v", T.FLOAT, [2, 3])],
        initializer=[nh.from_array(w, "w")])
    x = rng.standard_normal((2, 3)).astype(np.float32)
    r = np.maximum(x, 0)
    write("if_outer_identity", g, 13, [
        ([np.array(True), x], [r, x, np.full((2, 3), 1.0, np.float32)]),
        ([np.array(False), x], [-r, x, w]),
    ])


@fixture
def loop_nested_if():
    """A Loop whose body holds an If reading values two scopes out (a main
    graph input and initializer), a carried value that is also a scan output,
    and Constant nodes to fold inside the body."""
    w = rng.standard_normal(3).astype(np.float32)
    then = h.make_graph([h.make_node("Add", ["acc_in", "x"], ["t"]), h.make_node("Identity", ["t"], ["t2"])],
                        "then", [], [vi("t2", T.FLOAT, [3])])
    other = h.make_graph([h.make_node("Identity", ["w"], ["o"])], "else", [], [vi("o", T.FLOAT, [3])])
    body = h.make_graph([
        h.make_node("Identity", ["cond_in"], ["cond_out"]),
        const("two", np.array(2, np.int64)),
        const("zero", np.array(0, np.int64)),
        h.make_node("Mod", ["i", "two"], ["m"]),
        h.make_node("Equal", ["m", "zero"], ["even"]),
        h.make_node("If", ["even"], ["r"], then_branch=then, else_branch=other),
        h.make_node("Identity", ["r"], ["acc_out"]),
        h.make_node("Identity", ["r"], ["scan_out"]),
    ], "body", [vi("i", T.INT64, []), vi("cond_in", T.BOOL, []), vi("acc_in", T.FLOAT, [3])],
        [vi("cond_out", T.BOOL, []), vi("acc_out", T.FLOAT, [3]), vi("scan_out", T.FLOAT, [3])])
    g = h.make_graph([h.make_node("Loop", ["n", "", "x"], ["acc", "scans"], body=body)], "loop_nested_if",
                     [vi("n", T.INT64, []), vi("x", T.FLOAT, [3])],
                     [vi("acc", T.FLOAT, [3]), vi("scans", T.FLOAT, ["N", 3])],
                     initializer=[nh.from_array(w, "w")])
    x = rng.standard_normal(3).astype(np.float32)
    acc, scans = x.copy(), []
    for i in range(5):
        acc = acc + x if i % 2 == 0 else w.copy()
        scans.append(acc)
    write("loop_nested_if", g, 13, [([np.array(5, np.int64), x], [acc, np.stack(scans)])])


@fixture
def loop_seq():
    """A sequence carried through a Loop (SequenceEmpty outside, SequenceInsert
    inside, an Identity of the sequence as the body output), concatenated
    after the loop; the body reads an outer input and folds constants.
    Opset 16: Identity takes sequences from opset 14 on."""
    body = h.make_graph([
        h.make_node("Identity", ["c"], ["c_out"]),
        h.make_node("Cast", ["i"], ["f"], to=T.FLOAT),
        const("one", np.ones(2, np.float32)),
        h.make_node("Mul", ["x", "f"], ["xf"]),
        h.make_node("Add", ["xf", "one"], ["v"]),
        const("ax", np.array([0], np.int64)),
        h.make_node("Unsqueeze", ["v", "ax"], ["u"]),
        h.make_node("SequenceInsert", ["seq_in", "u"], ["s1"]),
        h.make_node("Identity", ["s1"], ["seq_out"]),
    ], "body", [vi("i", T.INT64, []), vi("c", T.BOOL, []),
                h.make_tensor_sequence_value_info("seq_in", T.FLOAT, None)],
        [vi("c_out", T.BOOL, []), h.make_tensor_sequence_value_info("seq_out", T.FLOAT, None)])
    g = h.make_graph([
        h.make_node("SequenceEmpty", [], ["seq0"], dtype=T.FLOAT),
        h.make_node("Loop", ["n", "", "seq0"], ["seq"], body=body),
        h.make_node("ConcatFromSequence", ["seq"], ["y"], axis=0),
        h.make_node("SequenceLength", ["seq"], ["len"]),
    ], "loop_seq", [vi("n", T.INT64, []), vi("x", T.FLOAT, [2])],
        [vi("y", T.FLOAT, ["N", 2]), vi("len", T.INT64, [])])
    x = rng.standard_normal(2).astype(np.float32)
    y = np.stack([x * np.float32(i) + np.float32(1) for i in range(4)])
    write("loop_seq", g, 16, [([np.array(4, np.int64), x], [y, np.array(4, np.int64)])])


@fixture
def scan():
    """Scan with a running sum, a state passed straight through (a body
    output that is a body input, through an Identity), a scan output made
    with a folded constant, and an Identity of an outer-scope value."""
    body = h.make_graph([
        h.make_node("Add", ["s_in", "x_i"], ["sum"]),
        h.make_node("Identity", ["sum"], ["s_out"]),
        h.make_node("Identity", ["p_in"], ["p_out"]),
        const("k", np.array(2.0, np.float32)),
        h.make_node("Mul", ["x_i", "k"], ["prod"]),
        h.make_node("Add", ["prod", "bias"], ["y_i"]),
        h.make_node("Identity", ["bias"], ["b_i"]),
    ], "body", [vi("s_in", T.FLOAT, [2]), vi("p_in", T.FLOAT, [2]), vi("x_i", T.FLOAT, [2])],
        [vi("s_out", T.FLOAT, [2]), vi("p_out", T.FLOAT, [2]), vi("y_i", T.FLOAT, [2]), vi("b_i", T.FLOAT, [2])])
    g = h.make_graph([
        h.make_node("Relu", ["b0"], ["bias"]),
        h.make_node("Scan", ["s0", "p0", "xs"], ["s", "p", "ys", "bs"], body=body, num_scan_inputs=1),
    ], "scan", [vi("s0", T.FLOAT, [2]), vi("p0", T.FLOAT, [2]), vi("xs", T.FLOAT, [4, 2]), vi("b0", T.FLOAT, [2])],
        [vi("s", T.FLOAT, [2]), vi("p", T.FLOAT, [2]), vi("ys", T.FLOAT, [4, 2]), vi("bs", T.FLOAT, [4, 2])])
    s0, p0, b0 = (rng.standard_normal(2).astype(np.float32) for _ in range(3))
    xs = rng.standard_normal((4, 2)).astype(np.float32)
    bias = np.maximum(b0, 0)
    s = s0.copy()
    for row in xs:
        s = s + row
    write("scan", g, 16, [([s0, p0, xs, b0], [s, p0, xs * np.float32(2) + bias, np.tile(bias, (4, 1))])])


@fixture
def optional_absent():
    """Absent optional inputs: Clip without min, Dropout without ratio, an
    empty Optional; OptionalHasElement and OptionalGetElement around them."""
    g = h.make_graph([
        h.make_node("Clip", ["x", "", "mx"], ["c"]),
        h.make_node("Dropout", ["c"], ["d"]),
        h.make_node("Optional", [], ["none"], type=h.make_tensor_type_proto(T.FLOAT, [2, 3])),
        h.make_node("OptionalHasElement", ["none"], ["has"]),
        h.make_node("Optional", ["d"], ["some"]),
        h.make_node("OptionalGetElement", ["some"], ["got"]),
        h.make_node("Where", ["has", "x", "got"], ["y"]),
    ], "optional_absent", [vi("x", T.FLOAT, [2, 3])], [vi("y", T.FLOAT, [2, 3]), vi("has", T.BOOL, [])],
        initializer=[nh.from_array(np.array(0.25, np.float32), "mx")])
    x = rng.standard_normal((2, 3)).astype(np.float32)
    write("optional_absent", g, 18, [([x], [np.minimum(x, np.float32(0.25)), np.array(False)])])


@fixture
def optional_input():
    """An optional graph input fed empty and fed a value (graft's evaluator
    checks these; onnxruntime-node cannot feed optionals)."""
    then = h.make_graph([h.make_node("OptionalGetElement", ["o"], ["v"]), h.make_node("Identity", ["v"], ["t"])],
                        "then", [], [vi("t", T.FLOAT, [2])])
    other = h.make_graph([h.make_node("Identity", ["x"], ["e"])], "else", [], [vi("e", T.FLOAT, [2])])
    g = h.make_graph([
        h.make_node("OptionalHasElement", ["o"], ["has"]),
        h.make_node("If", ["has"], ["y"], then_branch=then, else_branch=other),
    ], "optional_input", [h.make_value_info("o", h.make_optional_type_proto(h.make_tensor_type_proto(T.FLOAT, [2]))),
                          vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2])])
    x = rng.standard_normal(2).astype(np.float32)
    v = rng.standard_normal(2).astype(np.float32)
    empty = nh.from_optional(None, name="o", dtype=onnx.OptionalProto.TENSOR)
    write("optional_input", g, 18, [([nh.from_optional(v, name="o"), x], [v]), ([empty, x], [x])])


@fixture
def output_is_input():
    """A model whose output is its input, with Identity and Dropout of that
    input and an Identity of another output as further outputs."""
    g = h.make_graph([
        h.make_node("Identity", ["x"], ["y"]),
        h.make_node("Dropout", ["x"], ["z"]),
        h.make_node("Relu", ["x"], ["r"]),
        h.make_node("Identity", ["r"], ["r2"]),
    ], "output_is_input", [vi("x", T.FLOAT, [2, 3])],
        [vi("x", T.FLOAT, [2, 3]), vi("y", T.FLOAT, [2, 3]), vi("z", T.FLOAT, [2, 3]), vi("r", T.FLOAT, [2, 3]),
         vi("r2", T.FLOAT, [2, 3])])
    x = rng.standard_normal((2, 3)).astype(np.float32)
    r = np.maximum(x, 0)
    write("output_is_input", g, 13, [([x], [x, x, x, r, r])])


@fixture
def if_network():
    """A network in each If branch, as voice-activity detectors have: Conv +
    BatchNormalization + Relu on outer weights (folding builds new weights
    inside the branch from outer constants), a Squeeze/Unsqueeze pair, and
    the recurrent state passed through one branch as an Identity of an outer
    graph input."""
    def t(shape, scale=0.5):
        return (rng.standard_normal(shape) * scale).astype(np.float32)
    w1, w2 = t((4, 2, 3, 3)), t((4, 2, 1, 1))
    gamma, beta, mean = t(4) + 1, t(4), t(4)
    var = (np.abs(t(4)) + 0.5).astype(np.float32)
    inits = [nh.from_array(a, n) for a, n in ((w1, "w1"), (w2, "w2"), (gamma, "gamma"), (beta, "beta"),
                                               (mean, "mean"), (var, "var"))]

    def branch(name, w, pads):
        return h.make_graph([
            h.make_node("Conv", ["x", w], [name + "_c"], pads=pads),
            h.make_node("BatchNormalization", [name + "_c", "gamma", "beta", "mean", "var"], [name + "_bn"]),
            h.make_node("Relu", [name + "_bn"], [name + "_r"]),
            const(name + "_ax", np.array([0], np.int64)),
            h.make_node("Unsqueeze", [name + "_r", name + "_ax"], [name + "_u"]),
            h.make_node("Squeeze", [name + "_u", name + "_ax"], [name + "_s"]),
            h.make_node("Identity", [name + "_s"], [name + "_out"]),
            h.make_node("Tanh", ["state"], [name + "_st"]) if name == "e" else h.make_node("Identity", ["state"],
                                                                                           [name + "_st"]),
        ], name, [], [vi(name + "_out", T.FLOAT, [1, 4, 4, 4]), vi(name + "_st", T.FLOAT, [1, 3])])
    g = h.make_graph([
        h.make_node("If", ["c"], ["y", "state_out"], then_branch=branch("t", "w1", [1, 1, 1, 1]),
                    else_branch=branch("e", "w2", [0, 0, 0, 0])),
    ], "if_network", [vi("c", T.BOOL, []), vi("x", T.FLOAT, [1, 2, 4, 4]), vi("state", T.FLOAT, [1, 3])],
        [vi("y", T.FLOAT, [1, 4, 4, 4]), vi("state_out", T.FLOAT, [1, 3])], initializer=inits)
    x, state = t((1, 2, 4, 4), 1.0), t((1, 3), 1.0)

    def conv(x, w, p):
        xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
        k = w.shape[2]
        out = np.zeros((1, w.shape[0], 4, 4), np.float64)
        for i in range(4):
            for j in range(4):
                out[0, :, i, j] = np.tensordot(w, xp[0, :, i:i + k, j:j + k], axes=([1, 2, 3], [0, 1, 2]))
        return out

    def net(w, p):
        c = conv(x, w, p)
        bn = (c - mean[None, :, None, None]) / np.sqrt(var[None, :, None, None] + 1e-5) * gamma[None, :, None, None] \
            + beta[None, :, None, None]
        return np.maximum(bn, 0).astype(np.float32)
    write("if_network", g, 13, [([np.array(True), x, state], [net(w1, 1), state]),
                                ([np.array(False), x, state], [net(w2, 0), np.tanh(state)])])


@fixture
def body_noops():
    """The no-op and simplification rules inside bodies, on outer values: an
    If whose then branch multiplies an outer input by an outer 1, negates
    twice, slices the whole range and pads by zeros, then clips with Min/Max
    (all of which reduce to a Clip of the outer input, or to the input itself
    read through an Identity); and a Loop whose body adds the Neg of an outer
    value (an Add of a Neg is a Sub) to its carried value."""
    inits = [nh.from_array(np.array(1.0, np.float32), "one"), nh.from_array(np.array([0], np.int64), "st"),
             nh.from_array(np.array([99], np.int64), "en"), nh.from_array(np.array([1], np.int64), "ax"),
             nh.from_array(np.zeros(4, np.int64), "pads"), nh.from_array(np.array(-0.5, np.float32), "lo"),
             nh.from_array(np.array(0.5, np.float32), "hi")]
    then = h.make_graph([
        h.make_node("Mul", ["x", "one"], ["t_m"]),
        h.make_node("Neg", ["t_m"], ["t_n1"]),
        h.make_node("Neg", ["t_n1"], ["t_n2"]),
        h.make_node("Slice", ["t_n2", "st", "en", "ax"], ["t_s"]),
        h.make_node("Pad", ["t_s", "pads"], ["t_p"]),
        h.make_node("Max", ["t_p", "lo"], ["t_mx"]),
        h.make_node("Min", ["t_mx", "hi"], ["t_out"]),
    ], "then", [], [vi("t_out", T.FLOAT, [2, 3])])
    other = h.make_graph([h.make_node("Mul", ["x", "one"], ["e_out"])], "else", [], [vi("e_out", T.FLOAT, [2, 3])])
    body = h.make_graph([
        h.make_node("Identity", ["cond_in"], ["cond_out"]),
        h.make_node("Neg", ["x"], ["b_n"]),
        h.make_node("Add", ["acc_in", "b_n"], ["acc_out"]),
    ], "body", [vi("i", T.INT64, []), vi("cond_in", T.BOOL, []), vi("acc_in", T.FLOAT, [2, 3])],
        [vi("cond_out", T.BOOL, []), vi("acc_out", T.FLOAT, [2, 3])])
    g = h.make_graph([
        h.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other),
        h.make_node("Loop", ["n", "", "y"], ["z"], body=body),
    ], "body_noops", [vi("c", T.BOOL, []), vi("n", T.INT64, []), vi("x", T.FLOAT, [2, 3])],
        [vi("y", T.FLOAT, [2, 3]), vi("z", T.FLOAT, [2, 3])], initializer=inits)
    x = (rng.standard_normal((2, 3)) * 2).astype(np.float32)
    sets = []
    for c in (True, False):
        y = np.minimum(np.maximum(x, np.float32(-0.5)), np.float32(0.5)) if c else x.copy()
        z = y.copy()
        for _ in range(3):
            z = z + -x
        sets.append(([np.array(c), np.array(3, np.int64), x], [y, z]))
    write("body_noops", g, 13, sets)


@fixture
def if_constant():
    """Ifs with constant conditions (A13), as paddle2onnx and scripted exports
    leave them: a main-graph If on a Constant node whose taken branch holds its
    own initializer, an If nested in it on an outer initializer, and a branch
    output that is a main-graph input; and a Loop whose body has an If on an
    outer constant, feeding a carried value."""
    w = rng.standard_normal((2, 3)).astype(np.float32)
    inner_then = h.make_graph([h.make_node("Neg", ["x"], ["it"])], "inner_then", [], [vi("it", T.FLOAT, [2, 3])])
    inner_else = h.make_graph([h.make_node("Mul", ["x", "w"], ["m"]), h.make_node("Add", ["m", "k"], ["ie"])],
                              "inner_else", [], [vi("ie", T.FLOAT, [2, 3])],
                              initializer=[nh.from_array(np.full((2, 3), 0.25, np.float32), "k")])
    then = h.make_graph([
        h.make_node("If", ["f"], ["t1"], then_branch=inner_then, else_branch=inner_else),
        h.make_node("Relu", ["t1"], ["t2"]),
        h.make_node("Identity", ["x"], ["t3"]),
    ], "then", [], [vi("t2", T.FLOAT, [2, 3]), vi("t3", T.FLOAT, [2, 3])])
    other = h.make_graph([h.make_node("Neg", ["x"], ["e1"]), h.make_node("Abs", ["x"], ["e2"])], "else", [],
                         [vi("e1", T.FLOAT, [2, 3]), vi("e2", T.FLOAT, [2, 3])])
    lthen = h.make_graph([h.make_node("Add", ["acc_in", "w"], ["lt"])], "lthen", [], [vi("lt", T.FLOAT, [2, 3])])
    lelse = h.make_graph([h.make_node("Sub", ["acc_in", "w"], ["le"])], "lelse", [], [vi("le", T.FLOAT, [2, 3])])
    body = h.make_graph([
        h.make_node("Identity", ["cond_in"], ["cond_out"]),
        h.make_node("If", ["f"], ["acc_out"], then_branch=lthen, else_branch=lelse),
    ], "body", [vi("i", T.INT64, []), vi("cond_in", T.BOOL, []), vi("acc_in", T.FLOAT, [2, 3])],
        [vi("cond_out", T.BOOL, []), vi("acc_out", T.FLOAT, [2, 3])])
    g = h.make_graph([
        const("c", np.array(True)),
        h.make_node("If", ["c"], ["y", "z"], then_branch=then, else_branch=other),
        h.make_node("Loop", ["n", "", "y"], ["acc"], body=body),
    ], "if_constant", [vi("n", T.INT64, []), vi("x", T.FLOAT, [2, 3])],
        [vi("y", T.FLOAT, [2, 3]), vi("z", T.FLOAT, [2, 3]), vi("acc", T.FLOAT, [2, 3])],
        initializer=[nh.from_array(w, "w"), nh.from_array(np.array(False), "f")])
    x = rng.standard_normal((2, 3)).astype(np.float32)
    y = np.maximum(x * w + np.float32(0.25), 0)
    acc = y.copy()
    for _ in range(3):
        acc = acc - w
    write("if_constant", g, 13, [([np.array(3, np.int64), x], [y, x, acc])])


if __name__ == "__main__":
    if_outer_identity()
    if_network()
    loop_nested_if()
    loop_seq()
    scan()
    optional_absent()
    optional_input()
    output_is_input()
    body_noops()
    if_constant()
