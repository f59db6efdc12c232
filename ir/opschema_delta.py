# opschema_delta.py - the default-domain op versions of opsets 18..23, as data
# that ir/gen_opschema.py merges over what python3-onnx 1.12 knows (opset 17).
#
# Each entry is one new versioned definition.  Either it is spelled out in full
# (inputs, outputs, attrs, types), or it names a `base` version of the same op
# and lists only what changed: most versions of opsets 21..23 only widen type
# lists (int4/uint4 in 21, bfloat16 in 22, float4e2m1 in 23).
#
# Formal:     ("X", "T")  ("B", "T", "opt")  ("xs", "T", "var"|"varh", min_arity)
#             ("var" is homogeneous, "varh" heterogeneous)
# Attribute:  ("axis", "int", 1)  default;  ("to", "int", REQUIRED);
#             ("axes", "ints", None)  optional without default
# Types:      element names ("float") or full type strings ("seq(tensor(float))").
#
# `src` says where each entry comes from.  Sources:
#   CL   = the signature of the "<Op>-<version>" section of onnx/onnx docs/Changelog.md
#          (also onnx.ai/onnx/operators/onnx__<Op>.html).  Caveat: these sections
#          were written down from the spec as known to the author; the search index
#          did not return their full text, so they were not re-read line by line.
#          That the version exists is checked against OS/R16/R17/R18 below.
#   OS   = onnx/onnx onnx/defs/operator_sets.h (lists the ops of opsets 18, 19, 20)
#   R16  = ONNX 1.16 release notes (opset 21 op list), quoted in the "Integrate with
#          ONNX 1.16.0 release branch" issues (e.g. microsoft/onnxruntime#19783)
#   R17  = ONNX 1.17 release notes (opset 22: "update to support bfloat16"), quoted in
#          onnx/onnx-mlir#3003 and the op list of onnx/onnx-mlir#3058.  (onnx/onnx#6502
#          was read as "GlobalLpPool was not re-versioned"; ORT shows GlobalLpPool-22.)
#   R18  = ONNX 1.18 release notes (opset 23), Homebrew/homebrew-core#223395 and
#          microsoft/onnxruntime#24449
# Where an entry says "types assumed", the version's existence is sourced but its
# exact type lists were derived from the release note's one-line summary.
#
# Verified against ONNX Runtime 1.30 (onnxruntime-node, which embeds ONNX's
# real schemas) by ir/verify_opschema_ort.mjs; rerun it after any edit here:
#   node ir/verify_opschema_ort.mjs        (exit 0 = no mismatch)
# It builds one-node models at each record's opset and reads the errors of
# ORT's node checker.  Verified that way, for every record of opsets 18..23:
#   - versions: every default-domain op at every opset 18..23 resolves to the
#     since_version this table picks (so no version is missing or extra);
#   - input/output arity (min/max) and since_version, from "has input size N
#     not in range [min=a, max=b]" errors;
#   - the attribute names, their types and which are required (every attribute
#     name used anywhere in the table is also tried on every record);
#   - the type lists of every type parameter bound by an input, over all 23
#     tensor element types and their seq()/optional() forms.
# Not verified (ORT's checker does not reveal them): attribute defaults;
# type parameters bound only to outputs (Cast T2, If V, ConstantOfShape T2,
# QuantizeLinear/DequantizeLinear output types, Shape/Size T1, ...); the
# function flag; Constant-19/21/23 (ORT turns Constant nodes into initializers
# before checking them).  Corrections that check made (2026): GlobalLpPool-22
# added; Cast/CastLike-19+ without complex types; GridSample-20 T1 and the
# Optional*-18 types without bfloat16 (onnx's all_tensor_types()); Identity-19+
# sequences/optionals without bfloat16; Loop-19+ (and If, by analogy) take
# seq(tensor(X)) and optional(tensor(X)) of the new float8/int4/float4e2m1
# types; Dropout-22 T/T1 take the float8 types.

REQUIRED = object()

FLOAT3 = ["float16", "float", "double"]
FLOAT4 = ["bfloat16", "float16", "float", "double"]
UINTS = ["uint8", "uint16", "uint32", "uint64"]
SINTS = ["int8", "int16", "int32", "int64"]
NUMERIC = UINTS + SINTS + FLOAT3
ALL_IR4 = NUMERIC + ["bfloat16", "string", "bool", "complex64", "complex128"]
# onnx's all_tensor_types(): ALL_IR4 without bfloat16.  Sequences and optionals
# are built from this list (no seq/optional of bfloat16), and it is what
# GridSample-20 and the Optional* ops take (checked against ONNX Runtime).
ALL_TENSOR = NUMERIC + ["string", "bool", "complex64", "complex128"]
FLOAT8 = ["float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz"]
INT4 = ["uint4", "int4"]
FLOAT4E2M1 = ["float4e2m1"]
ALL_IR9 = ALL_IR4 + FLOAT8
ALL_IR10 = ALL_IR9 + INT4
ALL_IR11 = ALL_IR10 + FLOAT4E2M1
BITWISE = UINTS + SINTS
# Cast/CastLike: every type but complex (onnx never had complex casts)
CAST_IR9 = NUMERIC + ["bfloat16", "string", "bool"] + FLOAT8
# ReduceX-13 numeric list (kept by the -18 versions)
REDUCE = ["uint32", "uint64", "int32", "int64", "float16", "float", "double", "bfloat16"]


def seqs(elems):
	return ["seq(tensor(%s))" % e for e in elems]


def optionals(elems):
	return ["optional(seq(tensor(%s)))" % e for e in elems] + ["optional(tensor(%s))" % e for e in elems]


# Identity value types: tensors, sequences and optionals (of all_tensor_types).
def any_value(tensor_elems):
	return tensor_elems + seqs(ALL_TENSOR) + optionals(ALL_TENSOR)


# What If/Loop-19+ add to their V per new element type: the tensor, a
# sequence of it and an optional tensor of it (ORT accepts seq(tensor(X)) and
# optional(tensor(X)) but not optional(seq(tensor(X))) for the float8/int4/
# float4e2m1 types X).
def control_flow(elems):
	return elems + seqs(elems) + ["optional(tensor(%s))" % e for e in elems]


def op(name, since, src, inputs, outputs, attrs=(), types=(), function=False):
	return {"name": name, "since": since, "src": src, "inputs": inputs,
		"outputs": outputs, "attrs": list(attrs), "types": list(types),
		"function": function}


def rev(name, since, base, src, **changes):
	d = {"name": name, "since": since, "base": base, "src": src}
	d.update(changes)
	return d


def reduce18(name, types=REDUCE):
	return op(name, 18, "CL %s-18; OS" % name,
		  [("data", "T"), ("axes", "tensor(int64)", "opt")], [("reduced", "T")],
		  [("keepdims", "int", 1), ("noop_with_empty_axes", "int", 0)],
		  [("T", types)])


DELTA = [
	# ---------------------------------------------------------------- opset 18
	op("BitwiseAnd", 18, "CL BitwiseAnd-18; OS", [("A", "T"), ("B", "T")], [("C", "T")],
	   types=[("T", BITWISE)]),
	op("BitwiseNot", 18, "CL BitwiseNot-18; OS", [("X", "T")], [("Y", "T")],
	   types=[("T", BITWISE)]),
	op("BitwiseOr", 18, "CL BitwiseOr-18; OS", [("A", "T"), ("B", "T")], [("C", "T")],
	   types=[("T", BITWISE)]),
	op("BitwiseXor", 18, "CL BitwiseXor-18; OS", [("A", "T"), ("B", "T")], [("C", "T")],
	   types=[("T", BITWISE)]),
	op("CenterCropPad", 18, "CL CenterCropPad-18; OS",
	   [("input_data", "T"), ("shape", "Tind")], [("output_data", "T")],
	   [("axes", "ints", None)],
	   [("T", ALL_IR4), ("Tind", ["int32", "int64"])], function=True),
	op("Col2Im", 18, "CL Col2Im-18; OS",
	   [("input", "T"), ("image_shape", "tensor(int64)"), ("block_shape", "tensor(int64)")],
	   [("output", "T")],
	   [("dilations", "ints", None), ("pads", "ints", None), ("strides", "ints", None)],
	   [("T", ALL_IR4)]),
	op("GroupNormalization", 18, "CL GroupNormalization-18; OS",
	   [("X", "T"), ("scale", "T"), ("bias", "T")], [("Y", "T")],
	   [("epsilon", "float", 1e-05), ("num_groups", "int", REQUIRED)],
	   [("T", FLOAT4)], function=True),
	op("LpPool", 18, "CL LpPool-18 (adds ceil_mode, dilations); OS",
	   [("X", "T")], [("Y", "T")],
	   [("auto_pad", "string", "NOTSET"), ("ceil_mode", "int", 0), ("dilations", "ints", None),
	    ("kernel_shape", "ints", REQUIRED), ("p", "int", 2), ("pads", "ints", None),
	    ("strides", "ints", None)],
	   [("T", FLOAT3)]),
	op("Mish", 18, "CL Mish-18; OS", [("X", "T")], [("Y", "T")],
	   types=[("T", FLOAT3)], function=True),
	op("OptionalGetElement", 18, "CL OptionalGetElement-18 (also accepts a plain tensor/seq); OS",
	   [("input", "O")], [("output", "V")],
	   types=[("O", optionals(ALL_TENSOR) + ALL_TENSOR + seqs(ALL_TENSOR)),
		  ("V", ALL_TENSOR + seqs(ALL_TENSOR))]),
	op("OptionalHasElement", 18, "CL OptionalHasElement-18 (input optional, may be a tensor/seq); OS",
	   [("input", "O", "opt")], [("output", "B")],
	   types=[("O", optionals(ALL_TENSOR) + ALL_TENSOR + seqs(ALL_TENSOR)), ("B", ["bool"])]),
	op("Pad", 18, "CL Pad-18 (adds axes input); OS",
	   [("data", "T"), ("pads", "tensor(int64)"), ("constant_value", "T", "opt"),
	    ("axes", "Tind", "opt")],
	   [("output", "T")],
	   [("mode", "string", "constant")],
	   [("T", ALL_IR4), ("Tind", ["int32", "int64"])]),
	reduce18("ReduceL1"),
	reduce18("ReduceL2"),
	reduce18("ReduceLogSum"),
	reduce18("ReduceLogSumExp"),
	reduce18("ReduceMax", REDUCE + ["uint8", "int8"]),
	reduce18("ReduceMean"),
	reduce18("ReduceMin", REDUCE + ["uint8", "int8"]),
	reduce18("ReduceProd"),
	reduce18("ReduceSumSquare"),
	op("Resize", 18, "CL Resize-18 (antialias, axes, keep_aspect_ratio_policy); OS",
	   [("X", "T1"), ("roi", "T2", "opt"), ("scales", "tensor(float)", "opt"),
	    ("sizes", "tensor(int64)", "opt")],
	   [("Y", "T1")],
	   [("antialias", "int", 0), ("axes", "ints", None),
	    ("coordinate_transformation_mode", "string", "half_pixel"),
	    ("cubic_coeff_a", "float", -0.75), ("exclude_outside", "int", 0),
	    ("extrapolation_value", "float", 0.0), ("keep_aspect_ratio_policy", "string", "stretch"),
	    ("mode", "string", "nearest"), ("nearest_mode", "string", "round_prefer_floor")],
	   [("T1", ALL_IR4), ("T2", FLOAT3)]),
	op("ScatterElements", 18, "CL ScatterElements-18 (reduction max/min); OS",
	   [("data", "T"), ("indices", "Tind"), ("updates", "T")], [("output", "T")],
	   [("axis", "int", 0), ("reduction", "string", "none")],
	   [("T", ALL_IR4), ("Tind", ["int32", "int64"])]),
	op("ScatterND", 18, "CL ScatterND-18 (reduction max/min); OS",
	   [("data", "T"), ("indices", "tensor(int64)"), ("updates", "T")], [("output", "T")],
	   [("reduction", "string", "none")],
	   [("T", ALL_IR4)]),
	op("Split", 18, "CL Split-18 (num_outputs); OS",
	   [("input", "T"), ("split", "tensor(int64)", "opt")], [("outputs", "T", "var", 1)],
	   [("axis", "int", 0), ("num_outputs", "int", None)],
	   [("T", ALL_IR4)]),

	# ---------------------------------------------------------------- opset 19
	rev("AveragePool", 19, 11, "CL AveragePool-19 (adds dilations); OS",
	    attrs=[("auto_pad", "string", "NOTSET"), ("ceil_mode", "int", 0),
		   ("count_include_pad", "int", 0), ("dilations", "ints", None),
		   ("kernel_shape", "ints", REQUIRED), ("pads", "ints", None),
		   ("strides", "ints", None)]),
	op("Cast", 19, "CL Cast-19 (saturate, float8 types); OS",
	   [("input", "T1")], [("output", "T2")],
	   [("saturate", "int", 1), ("to", "int", REQUIRED)],
	   [("T1", CAST_IR9), ("T2", CAST_IR9)]),
	op("CastLike", 19, "CL CastLike-19 (saturate, float8 types); OS",
	   [("input", "T1"), ("target_type", "T2")], [("output", "T2")],
	   [("saturate", "int", 1)],
	   [("T1", CAST_IR9), ("T2", CAST_IR9)], function=True),
	op("Constant", 19, "CL Constant-19 (float8 types); OS",
	   [], [("output", "T")],
	   [("sparse_value", "sparse_tensor", None), ("value", "tensor", None),
	    ("value_float", "float", None), ("value_floats", "floats", None),
	    ("value_int", "int", None), ("value_ints", "ints", None),
	    ("value_string", "string", None), ("value_strings", "strings", None)],
	   [("T", ALL_IR9)]),
	op("DeformConv", 19, "CL DeformConv-19; OS",
	   [("X", "T"), ("W", "T"), ("offset", "T"), ("B", "T", "opt"), ("mask", "T", "opt")],
	   [("Y", "T")],
	   [("dilations", "ints", None), ("group", "int", 1), ("kernel_shape", "ints", None),
	    ("offset_group", "int", 1), ("pads", "ints", None), ("strides", "ints", None)],
	   [("T", FLOAT3)]),
	op("DequantizeLinear", 19, "CL DequantizeLinear-19 (float8, scale T2); OS",
	   [("x", "T1"), ("x_scale", "T2"), ("x_zero_point", "T1", "opt")], [("y", "T2")],
	   [("axis", "int", 1)],
	   [("T1", ["int8", "uint8", "int32"] + FLOAT8), ("T2", ["float", "float16", "bfloat16"])]),
	rev("Equal", 19, 13, "CL Equal-19 (adds string); OS", add_types={"T": ["string"]}),
	op("Identity", 19, "CL Identity-19 (float8 types); OS",
	   [("input", "V")], [("output", "V")],
	   types=[("V", any_value(ALL_IR9))]),
	rev("If", 19, 16, "CL If-19 (float8 types); OS; V as Loop-19 (not probed: output only)",
	    add_types={"V": control_flow(FLOAT8)}),
	rev("Loop", 19, 16, "CL Loop-19 (float8 types); OS", add_types={"V": control_flow(FLOAT8)}),
	rev("Pad", 19, 18, "CL Pad-19 (mode 'wrap'); OS"),
	op("QuantizeLinear", 19, "CL QuantizeLinear-19 (saturate, float8); OS",
	   [("x", "T1"), ("y_scale", "T1"), ("y_zero_point", "T2", "opt")], [("y", "T2")],
	   [("axis", "int", 1), ("saturate", "int", 1)],
	   [("T1", ["float", "float16", "bfloat16", "int32"]), ("T2", ["int8", "uint8"] + FLOAT8)]),
	rev("Reshape", 19, 14, "CL Reshape-19 (float8 types); OS", types=[("T", ALL_IR9)]),
	rev("Resize", 19, 18, "CL Resize-19 (coordinate_transformation_mode half_pixel_symmetric); OS"),
	rev("Scan", 19, 16, "CL Scan-19 (float8 types); OS", types=[("V", ALL_IR9)]),
	rev("Shape", 19, 15, "CL Shape-19 (float8 types); OS", types=[("T", ALL_IR9), ("T1", ["int64"])]),
	rev("Size", 19, 13, "CL Size-19 (float8 types); OS", types=[("T", ALL_IR9), ("T1", ["int64"])]),

	# ---------------------------------------------------------------- opset 20
	op("AffineGrid", 20, "CL AffineGrid-20; OS",
	   [("theta", "T1"), ("size", "T2")], [("grid", "T1")],
	   [("align_corners", "int", 0)],
	   [("T1", FLOAT4), ("T2", ["int64"])], function=True),
	op("ConstantOfShape", 20, "CL ConstantOfShape-20 (bfloat16, float8); OS",
	   [("input", "T1")], [("output", "T2")],
	   [("value", "tensor", None)],
	   [("T1", ["int64"]),
	    ("T2", FLOAT3 + SINTS + UINTS + ["bool", "bfloat16"] + FLOAT8)]),
	op("DFT", 20, "CL DFT-20 (axis becomes an input); OS",
	   [("input", "T1"), ("dft_length", "T2", "opt"), ("axis", "tensor(int64)", "opt")],
	   [("output", "T1")],
	   [("inverse", "int", 0), ("onesided", "int", 0)],
	   [("T1", FLOAT4), ("T2", ["int32", "int64"])]),
	op("Gelu", 20, "CL Gelu-20; OS", [("X", "T")], [("Y", "T")],
	   [("approximate", "string", "none")],
	   [("T", FLOAT4)], function=True),
	op("GridSample", 20, "CL GridSample-20 (N-d, mode linear/nearest/cubic); OS",
	   [("X", "T1"), ("grid", "T2")], [("Y", "T1")],
	   [("align_corners", "int", 0), ("mode", "string", "linear"),
	    ("padding_mode", "string", "zeros")],
	   [("T1", ALL_TENSOR), ("T2", FLOAT3)]),
	op("ImageDecoder", 20, "CL ImageDecoder-20; OS",
	   [("encoded_stream", "T1")], [("image", "T2")],
	   [("pixel_format", "string", "RGB")],
	   [("T1", ["uint8"]), ("T2", ["uint8"])]),
	op("IsInf", 20, "CL IsInf-20 (bfloat16, float8); OS",
	   [("X", "T1")], [("Y", "T2")],
	   [("detect_negative", "int", 1), ("detect_positive", "int", 1)],
	   [("T1", FLOAT4 + FLOAT8), ("T2", ["bool"])]),
	op("IsNaN", 20, "CL IsNaN-20 (bfloat16, float8); OS",
	   [("X", "T1")], [("Y", "T2")],
	   types=[("T1", FLOAT4 + FLOAT8), ("T2", ["bool"])]),
	rev("ReduceMax", 20, 18, "CL ReduceMax-20 (adds bool); OS", add_types={"T": ["bool"]}),
	rev("ReduceMin", 20, 18, "CL ReduceMin-20 (adds bool); OS", add_types={"T": ["bool"]}),
	op("RegexFullMatch", 20, "CL RegexFullMatch-20; OS",
	   [("X", "T1")], [("Y", "T2")],
	   [("pattern", "string", None)],
	   [("T1", ["string"]), ("T2", ["bool"])]),
	op("StringConcat", 20, "CL StringConcat-20; OS",
	   [("X", "T"), ("Y", "T")], [("Z", "T")],
	   types=[("T", ["string"])]),
	op("StringSplit", 20, "CL StringSplit-20; OS",
	   [("X", "T1")], [("Y", "T2"), ("Z", "T3")],
	   [("delimiter", "string", None), ("maxsplit", "int", None)],
	   [("T1", ["string"]), ("T2", ["string"]), ("T3", ["int64"])]),

	# ---------------------------------------------------------------- opset 21
	rev("Cast", 21, 19, "R16 (int4/uint4)", add_types={"T1": INT4, "T2": INT4}),
	rev("CastLike", 21, 19, "R16 (int4/uint4)", add_types={"T1": INT4, "T2": INT4}),
	rev("Constant", 21, 19, "R16 (int4/uint4)", add_types={"T": INT4}),
	rev("ConstantOfShape", 21, 20, "R16 (int4/uint4)", add_types={"T2": INT4}),
	op("DequantizeLinear", 21, "CL DequantizeLinear-21 (block_size, int16/uint16/int4/uint4); R16",
	   [("x", "T1"), ("x_scale", "T2"), ("x_zero_point", "T1", "opt")], [("y", "T2")],
	   [("axis", "int", 1), ("block_size", "int", 0)],
	   [("T1", ["int8", "uint8", "int16", "uint16", "int32"] + FLOAT8 + INT4),
	    ("T2", ["float", "float16", "bfloat16"])]),
	rev("Flatten", 21, 13, "R16 (float8, int4/uint4)", add_types={"T": FLOAT8 + INT4}),
	rev("GroupNormalization", 21, 18, "CL GroupNormalization-21 (stash_type; scale/bias per channel); R16",
	    add_attrs=[("stash_type", "int", 1)]),
	rev("Identity", 21, 19, "R16 (int4/uint4)", add_types={"V": INT4}),
	rev("If", 21, 19, "R16 (int4/uint4)", add_types={"V": control_flow(INT4)}),
	rev("Loop", 21, 19, "R16 (int4/uint4)", add_types={"V": control_flow(INT4)}),
	rev("Pad", 21, 19, "R16 (float8, int4/uint4)", add_types={"T": FLOAT8 + INT4}),
	op("QLinearMatMul", 21, "CL QLinearMatMul-21 (float8, scale types); R16",
	   [("a", "T1"), ("a_scale", "TS"), ("a_zero_point", "T1"),
	    ("b", "T2"), ("b_scale", "TS"), ("b_zero_point", "T2"),
	    ("y_scale", "TS"), ("y_zero_point", "T3")],
	   [("y", "T3")],
	   types=[("TS", ["float", "float16", "bfloat16"]),
		  ("T1", ["int8", "uint8"] + FLOAT8), ("T2", ["int8", "uint8"] + FLOAT8),
		  ("T3", ["int8", "uint8"] + FLOAT8)]),
	op("QuantizeLinear", 21, "CL QuantizeLinear-21 (block_size, output_dtype, int16/uint16/int4/uint4); R16",
	   [("x", "T1"), ("y_scale", "T1"), ("y_zero_point", "T2", "opt")], [("y", "T2")],
	   [("axis", "int", 1), ("block_size", "int", 0), ("output_dtype", "int", 0),
	    ("saturate", "int", 1)],
	   [("T1", ["float", "float16", "bfloat16", "int32"]),
	    ("T2", ["int8", "uint8", "int16", "uint16"] + FLOAT8 + INT4)]),
	rev("Reshape", 21, 19, "R16 (int4/uint4)", add_types={"T": INT4}),
	rev("Scan", 21, 19, "R16 (int4/uint4)", add_types={"V": INT4}),
	rev("Shape", 21, 19, "R16 (int4/uint4)", add_types={"T": INT4}),
	rev("Size", 21, 19, "R16 (int4/uint4)", add_types={"T": INT4}),
	rev("Squeeze", 21, 13, "R16 (float8, int4/uint4)", add_types={"T": FLOAT8 + INT4}),
	rev("Transpose", 21, 13, "R16 (float8, int4/uint4)", add_types={"T": FLOAT8 + INT4}),
	rev("Unsqueeze", 21, 13, "R16 (float8, int4/uint4)", add_types={"T": FLOAT8 + INT4}),
] + [
	# ---------------------------------------------------------------- opset 22
	# "Update to support bfloat16" (R17): same signatures as the previous
	# version, bfloat16 added to every type parameter that takes float.
	rev(name, 22, base, "R17 (bfloat16; types assumed)", add_bfloat16=True)
	for name, base in [
		("Acos", 7), ("Acosh", 9), ("Asin", 7), ("Asinh", 9), ("Atan", 7), ("Atanh", 9),
		("AveragePool", 19), ("Bernoulli", 15), ("Conv", 11), ("ConvTranspose", 11),
		("Cos", 7), ("Cosh", 9), ("DeformConv", 19), ("Det", 11),
		("Elu", 6), ("EyeLike", 9), ("GRU", 14), ("GlobalAveragePool", 1),
		("GlobalLpPool", 2), ("GlobalMaxPool", 1), ("GridSample", 20), ("HardSigmoid", 6), ("HardSwish", 14),
		("InstanceNormalization", 6), ("LSTM", 14), ("LpNormalization", 1), ("LpPool", 18),
		("MaxPool", 12), ("MaxRoiPool", 1), ("MaxUnpool", 11), ("Mish", 18),
		("Multinomial", 7), ("NegativeLogLikelihoodLoss", 13), ("RNN", 14),
		("RandomNormal", 1), ("RandomNormalLike", 1), ("RandomUniform", 1),
		("RandomUniformLike", 1), ("RoiAlign", 16), ("Round", 11), ("Selu", 6),
		("Sin", 7), ("Sinh", 9), ("Softplus", 1), ("Softsign", 1), ("Tan", 7),
		("ThresholdedRelu", 10),
	]
] + [
	# Dropout-22 also takes the float8 types for data and ratio (ORT 1.30).
	rev("Dropout", 22, 13, "R17 (bfloat16, float8); types checked with ORT",
	    add_types={"T": FLOAT8, "T1": ["bfloat16"] + FLOAT8}),
] + [
	# ---------------------------------------------------------------- opset 23
	op("Attention", 23, "CL Attention-23; R18",
	   [("Q", "T1"), ("K", "T1"), ("V", "T2"), ("attn_mask", "U", "opt"),
	    ("past_key", "T1", "opt"), ("past_value", "T2", "opt")],
	   [("Y", "T1"), ("present_key", "T1", "opt"), ("present_value", "T2", "opt"),
	    ("qk_matmul_output", "T1", "opt")],
	   [("is_causal", "int", 0), ("kv_num_heads", "int", None), ("q_num_heads", "int", None),
	    ("qk_matmul_output_mode", "int", 0), ("scale", "float", None),
	    ("softcap", "float", 0.0), ("softmax_precision", "int", None)],
	   [("T1", FLOAT4), ("T2", FLOAT4),
	    ("U", UINTS + SINTS + ["bool"] + FLOAT4)], function=True),
	op("RMSNormalization", 23, "CL RMSNormalization-23; R18",
	   [("X", "T"), ("scale", "V")], [("Y", "V")],
	   [("axis", "int", -1), ("epsilon", "float", 1e-05), ("stash_type", "int", 1)],
	   [("T", FLOAT4), ("V", FLOAT4)], function=True),
	op("RotaryEmbedding", 23, "CL RotaryEmbedding-23; R18 (onnx/onnx#6461)",
	   [("X", "T"), ("cos_cache", "T"), ("sin_cache", "T"), ("position_ids", "M", "opt")],
	   [("Y", "T")],
	   [("interleaved", "int", 0), ("num_heads", "int", None),
	    ("rotary_embedding_dim", "int", 0)],
	   [("T", ["float", "float16", "bfloat16"]), ("M", ["int64"])], function=True),
	rev("Cast", 23, 21, "R18 (float4e2m1)", add_types={"T1": FLOAT4E2M1, "T2": FLOAT4E2M1}),
	rev("CastLike", 23, 21, "R18 (float4e2m1)", add_types={"T1": FLOAT4E2M1, "T2": FLOAT4E2M1}),
	rev("Constant", 23, 21, "R18 (float4e2m1)", add_types={"T": FLOAT4E2M1}),
	rev("ConstantOfShape", 23, 21, "R18 (float4e2m1)", add_types={"T2": FLOAT4E2M1}),
	op("DequantizeLinear", 23, "CL DequantizeLinear-23 (output_dtype, float4e2m1); R18",
	   [("x", "T1"), ("x_scale", "T2"), ("x_zero_point", "T1", "opt")], [("y", "T3")],
	   [("axis", "int", 1), ("block_size", "int", 0), ("output_dtype", "int", 0)],
	   [("T1", ["int8", "uint8", "int16", "uint16", "int32"] + FLOAT8 + INT4 + FLOAT4E2M1),
	    ("T2", ["float", "float16", "bfloat16"]),
	    ("T3", ["float", "float16", "bfloat16"])]),
	rev("Flatten", 23, 21, "R18 (float4e2m1)", add_types={"T": FLOAT4E2M1}),
	rev("Identity", 23, 21, "R18 (float4e2m1)", add_types={"V": FLOAT4E2M1}),
	rev("If", 23, 21, "R18 (float4e2m1)", add_types={"V": control_flow(FLOAT4E2M1)}),
	rev("Loop", 23, 21, "R18 (float4e2m1)", add_types={"V": control_flow(FLOAT4E2M1)}),
	rev("Pad", 23, 21, "R18 (float4e2m1)", add_types={"T": FLOAT4E2M1}),
	op("QuantizeLinear", 23, "CL QuantizeLinear-23 (precision, scale T2, float4e2m1); R18",
	   [("x", "T1"), ("y_scale", "T2"), ("y_zero_point", "T3", "opt")], [("y", "T3")],
	   [("axis", "int", 1), ("block_size", "int", 0), ("output_dtype", "int", 0),
	    ("precision", "int", 0), ("saturate", "int", 1)],
	   [("T1", ["float", "float16", "bfloat16", "int32"]),
	    ("T2", ["float", "float16", "bfloat16", "int32"]),
	    ("T3", ["int8", "uint8", "int16", "uint16"] + FLOAT8 + INT4 + FLOAT4E2M1)]),
	rev("Reshape", 23, 21, "R18 (float4e2m1)", add_types={"T": FLOAT4E2M1}),
	rev("Scan", 23, 21, "R18 (float4e2m1)", add_types={"V": FLOAT4E2M1}),
	rev("Shape", 23, 21, "R18 (float4e2m1)", add_types={"T": FLOAT4E2M1}),
	rev("Size", 23, 21, "R18 (float4e2m1)", add_types={"T": FLOAT4E2M1}),
	rev("Squeeze", 23, 21, "R18 (float4e2m1)", add_types={"T": FLOAT4E2M1}),
	rev("Transpose", 23, 21, "R18 (float4e2m1)", add_types={"T": FLOAT4E2M1}),
	rev("Unsqueeze", 23, 21, "R18 (float4e2m1)", add_types={"T": FLOAT4E2M1}),
]
