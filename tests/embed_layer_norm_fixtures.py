#!/usr/bin/env python3
# tests/embed_layer_norm_fixtures.py - builds, with python3-onnx, graphs shaped
# like ONNX Runtime's EmbedLayerNormFusion test models
# (onnxruntime/test/testdata/transform/fusion/embed_layer_norm_format*.onnx:
# formats 3, 3_no_cast, 5, 6, 7, 8, 9 and "multiple" as its generator script
# describes them, at opsets 11 and 13; formats 1, 2 and 4 are binary exports
# whose graphs are not published as a script, so format1/2/4 here are graphs
# of the shape ORT's fusion and test assertions describe: constant position
# ids, the ConstantOfShape/NonZero path with and without a Cast).  Weights are
# seeded random data, not ORT's repeated 1..4, so a wrong fusion shows.
#
#   python3 tests/embed_layer_norm_fixtures.py OUTDIR    writes OUTDIR/<name>.onnx
#
# tests/embed_layer_norm_ort.sh optimizes each with graft --allow-vendor-ops
# and compares it with the original in ONNX Runtime.
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

H, HEADS = 4, 2
RNG = np.random.default_rng(27)


def init(name, arr):
	return numpy_helper.from_array(np.asarray(arr), name)


def f32(*shape):
	return RNG.uniform(-1, 1, size=shape).astype(np.float32)


class G:
	"""A graph under construction; opset decides Unsqueeze/ReduceSum's axes form."""

	def __init__(self, opset):
		self.opset, self.nodes, self.inits, self.names = opset, [], {}, {}

	def c(self, name, arr):
		if name not in self.inits:
			self.inits[name] = init(name, arr)
		return name

	def n(self, op, ins, out=None, domain="", **attrs):
		i = self.names.get(op, 0)
		self.names[op] = i + 1
		out = out or "%s_%d" % (op.lower(), i)
		self.nodes.append(helper.make_node(op, ins, [out], "%s_%d" % (op, i), domain=domain or None, **attrs))
		return out

	def unsqueeze0(self, x):
		if self.opset >= 13:
			return self.n("Unsqueeze", [x, self.c("axes_0", np.array([0], np.int64))])
		return self.n("Unsqueeze", [x], axes=[0])

	def reduce_sum1(self, x):
		if self.opset >= 13:
			return self.n("ReduceSum", [x, self.c("axes_1", np.array([1], np.int64))], keepdims=0)
		return self.n("ReduceSum", [x], axes=[1], keepdims=0)

	def scalar(self, name, v):
		return self.c(name, np.array(v, np.int64))

	def shape_dim(self, shape, i):
		return self.n("Gather", [shape, self.scalar("indices_%d" % i, i)])

	def tail(self, emb, mask_index):
		"""LayerNormalization, Attention reading it and the mask index, then a residual block."""
		ln = self.n("LayerNormalization", [emb, self.c("ln_gamma", f32(H)), self.c("ln_beta", f32(H))],
		            axis=-1, epsilon=1e-5)
		att = self.n("Attention", [ln, self.c("qkv_w", f32(H, 3 * H)), self.c("qkv_b", f32(3 * H)), mask_index],
		             domain="com.microsoft", num_heads=HEADS)
		mm = self.n("MatMul", [att, self.c("mm_w", f32(H, H))])
		a = self.n("Add", [mm, self.c("mm_b", f32(H))])
		return self.n("Add", [a, ln])

	def mask_index(self, mask):
		return self.reduce_sum1(self.n("Cast", [mask], to=TensorProto.INT32))

	def model(self, name, inputs, out, out_shape):
		graph = helper.make_graph(self.nodes, name, inputs,
		                          [helper.make_tensor_value_info(out, TensorProto.FLOAT, out_shape)],
		                          list(self.inits.values()))
		m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset),
		                                           helper.make_opsetid("com.microsoft", 1)])
		m.ir_version = 7
		return m


def ids_input(name, shape):
	return helper.make_tensor_value_info(name, TensorProto.INT64, shape)


def positions_range(g, ids, cast, concat_shape):
	"""Shape -> Gather(1) -> [Cast] -> Range(0, S, 1) -> Unsqueeze -> Expand to ids' shape."""
	s = g.shape_dim(g.n("Shape", [ids]), 1)
	if cast:
		s = g.n("Cast", [s], to=TensorProto.INT64)
	r = g.n("Range", [g.scalar("start_0", 0), s, g.scalar("delta_1", 1)])
	return g.n("Expand", [g.unsqueeze0(r), concat_shape])


def concat_shape(g, ids):
	d0 = g.unsqueeze0(g.shape_dim(g.n("Shape", [ids]), 0))
	d1 = g.unsqueeze0(g.shape_dim(g.n("Shape", [ids]), 1))
	return g.n("Concat", [d0, d1], axis=0)


def bert(g, suffix, pos_ids_fn, vocab=5, positions=4, types=2):
	"""word + position + segment Gathers, two Adds, LayerNorm, Attention; returns (inputs, output)."""
	ids, seg, mask = "input_ids" + suffix, "segment_ids" + suffix, "input_mask" + suffix
	pos = g.n("Gather", [g.c("pos_embed", f32(positions, H)), pos_ids_fn(g, ids)])
	word = g.n("Gather", [g.c("word_embed", f32(vocab, H)), ids])
	a = g.n("Add", [word, pos])
	sg = g.n("Gather", [g.c("seg_embed", f32(types, H)), seg])
	return [ids, seg, mask], g.tail(g.n("Add", [a, sg]), g.mask_index(mask))


def format3(opset, cast=True):
	g = G(opset)
	names, out = bert(g, "", lambda g, ids: positions_range(g, ids, cast, concat_shape(g, ids)))
	return g.model("format3", [ids_input(n, ["batch", 3]) for n in names], out, ["batch", 3, H])


def format5(opset):
	"""static shape: the position Gather already folded to a [B, S, H] constant."""
	g = G(opset)
	table = f32(4, H)
	pos = np.stack([table[:3], table[:3]])
	word = g.n("Gather", [g.c("word_embed", f32(5, H)), "input_ids"])
	a = g.n("Add", [word, g.c("pos_gather_out", pos)])
	sg = g.n("Gather", [g.c("seg_embed", f32(2, H)), "segment_ids"])
	out = g.tail(g.n("Add", [a, sg]), g.mask_index("input_mask"))
	return g.model("format5", [ids_input(n, [2, 3]) for n in ("input_ids", "segment_ids", "input_mask")],
	               out, [2, 3, H])


def format6(opset):
	"""the Expand's shape through Reshape(-1), Equal(-1), Where(., 1, .) as torch exports it."""
	def pos_ids(g, ids):
		cs = concat_shape(g, ids)
		rs = g.n("Reshape", [cs, g.c("reshape_init", np.array([-1], np.int64))])
		eq = g.n("Equal", [rs, g.c("equal_init", np.array([-1, -1], np.int64))])
		wh = g.n("Where", [eq, g.c("where_init", np.array([1, 1], np.int64)), rs])
		return positions_range(g, ids, False, wh)
	g = G(opset)
	names, out = bert(g, "", pos_ids)
	return g.model("format6", [ids_input(n, ["batch", 3]) for n in names], out, ["batch", 3, H])


def distilbert(g, ids, shared_shape, mask_index):
	"""word + position Gathers, one Add (no segment), LayerNorm, Attention."""
	if shared_shape:
		shape = g.n("Shape", [ids])
		s = g.n("Gather", [shape, g.scalar("indices_1", 1)])
	else:
		s = g.shape_dim(g.n("Shape", [ids]), 1)
		shape = g.n("Shape", [ids])
	r = g.n("Range", [g.scalar("start", 0), s, g.scalar("delta", 1)])
	e = g.n("Expand", [g.unsqueeze0(r), shape])
	word = g.n("Gather", [g.c("word_embed", f32(5, H)), ids])
	pos = g.n("Gather", [g.c("pos_embed", f32(4, H)), e])
	return g.tail(g.n("Add", [word, pos]), mask_index(g, shape))


def format7(opset):
	g = G(opset)
	out = distilbert(g, "input_ids", False, lambda g, shape: g.mask_index("input_mask"))
	return g.model("format7", [ids_input(n, [2, 3]) for n in ("input_ids", "input_mask")], out, [2, 3, H])


def format8(opset):
	g = G(opset)
	out = distilbert(g, "input_ids", True, lambda g, shape: g.mask_index("input_mask"))
	return g.model("format8", [ids_input(n, [None, None]) for n in ("input_ids", "input_mask")],
	               out, [None, None, H])


def format9(opset):
	"""the mask made in the graph: ConstantOfShape(ids' shape) of ones."""
	def mask_index(g, shape):
		d0 = g.unsqueeze0(g.n("Gather", [shape, g.scalar("indices_0", 0)]))
		d1 = g.unsqueeze0(g.n("Gather", [shape, g.scalar("indices_1", 1)]))
		ones = g.n("ConstantOfShape", [g.n("Concat", [d0, d1], axis=0)],
		           value=helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0]))
		return g.reduce_sum1(g.n("Cast", [ones], to=TensorProto.INT32))
	g = G(opset)
	out = distilbert(g, "input_ids", True, mask_index)
	return g.model("format9", [ids_input("input_ids", [None, None])], out, [None, None, H])


def multiple(opset):
	g = G(opset)
	pos_fn = lambda g, ids: positions_range(g, ids, False, concat_shape(g, ids))
	n1, o1 = bert(g, "_1", pos_fn)
	n2, o2 = bert(g, "_2", pos_fn)
	out = g.n("Add", [o1, o2])
	return g.model("multiple", [ids_input(n, ["batch", 3]) for n in n1 + n2], out, ["batch", 3, H])


def format1(opset):
	"""position ids a constant [[0, 1, 2], [0, 1, 2]] (static shape)."""
	g = G(opset)
	names, out = bert(g, "", lambda g, ids: g.c("pos_ids", np.array([[0, 1, 2]] * 2, np.int64)))
	return g.model("format1", [ids_input(n, [2, 3]) for n in names], out, [2, 3, H])


def nonzero_positions(g, ids, cast):
	"""Shape -> Gather(1) -> Unsqueeze -> ConstantOfShape -> NonZero -> Transpose -> Squeeze -> [Cast] -> Unsqueeze -> Expand."""
	s = g.unsqueeze0(g.shape_dim(g.n("Shape", [ids]), 1))
	ones = g.n("ConstantOfShape", [s], value=helper.make_tensor("one", TensorProto.INT64, [1], [1]))
	nz = g.n("Transpose", [g.n("NonZero", [ones])], perm=[1, 0])
	if g.opset >= 13:
		sq = g.n("Squeeze", [nz, g.c("axes_1", np.array([1], np.int64))])
	else:
		sq = g.n("Squeeze", [nz], axes=[1])
	if cast:
		sq = g.n("Cast", [sq], to=TensorProto.INT64)
	return g.n("Expand", [g.unsqueeze0(sq), g.n("Shape", [ids])])


def format2(opset):
	g = G(opset)
	names, out = bert(g, "", lambda g, ids: nonzero_positions(g, ids, True))
	return g.model("format2", [ids_input(n, ["batch", 3]) for n in names], out, ["batch", 3, H])


def format4(opset):
	g = G(opset)
	names, out = bert(g, "", lambda g, ids: nonzero_positions(g, ids, False))
	return g.model("format4", [ids_input(n, ["batch", 3]) for n in names], out, ["batch", 3, H])


FORMATS = {
	"format1": format1, "format2": format2, "format3": format3,
	"format3_no_cast": lambda o: format3(o, False), "format4": format4, "format5": format5,
	"format6": format6, "format7": format7, "format8": format8, "format9": format9,
	"multiple": multiple,
}

if __name__ == "__main__":
	out = sys.argv[1]
	for name, fn in FORMATS.items():
		for opset in (11, 13):
			m = fn(opset)
			path = "%s/embed_layer_norm_%s%s.onnx" % (out, name, "_opset13" if opset == 13 else "")
			onnx.save(m, path)
			print(path)
