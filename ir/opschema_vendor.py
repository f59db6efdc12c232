# opschema_vendor.py - the com.microsoft (ONNX Runtime contrib) ops graft's
# optimizer may emit, as data for ir/gen_opschema.py; same entry format as
# ir/opschema_delta.py.  They get OPF_VENDOR and kind OP_UNKNOWN, are in
# op_schema_all() and op_schema_lookup("com.microsoft", name, 1), and are not
# in ops.def: a model that uses them runs only on ONNX Runtime.
#
# Source: microsoft/onnxruntime docs/ContribOperators.md ("com.microsoft.<Op>",
# version 1) and onnxruntime/core/graph/contrib_ops/*.cc; input orders of
# MultiHeadAttention/Attention cross-checked with the DirectML kernels
# (onnxruntime/core/providers/dml/.../DmlOperatorMultiHeadAttention.cpp,
# DmlOperatorAttention.cpp).  Only the inputs/attributes ORT documents at the
# time of writing are listed; ORT adds optional trailing inputs over time.
#
# Checked against ONNX Runtime 1.30 by ir/verify_opschema_ort.mjs (arity,
# attribute names/types/required, input type lists; not defaults or
# output-only types).  That added bfloat16 to Attention and MultiHeadAttention
# T and double to FastGelu and NhwcConv T (2026).
#
# Caveat, kept here so nobody is surprised: ONNX Runtime registers
# LayerNormalization (contrib, versions 1..16) and SimplifiedLayerNormalization
# in the *ONNX* domain "" at version 1, not in com.microsoft
# (onnxruntime/contrib_ops/js/layer_norm.cc: "LayerNormalization used to be a
# contrib op that (incorrectly) used kOnnxDomain").  They are listed under
# com.microsoft as graft's vendor section asks; an emitter targeting ORT must
# write domain "" for these two.

from opschema_delta import REQUIRED

MS = "com.microsoft"
SRC = "onnxruntime docs/ContribOperators.md"

FLOAT3 = ["float16", "float", "double"]
FLOAT_HB = ["float", "float16", "bfloat16"]


def vop(name, inputs, outputs, attrs=(), types=(), function=False, flags=()):
	return {"domain": MS, "name": name, "since": 1, "src": SRC + " com.microsoft." + name,
		"inputs": inputs, "outputs": outputs, "attrs": list(attrs),
		"types": list(types), "function": function, "flags": list(flags)}


VENDOR = [
	vop("Attention",
	    [("input", "T"), ("weights", "T"), ("bias", "T", "opt"), ("mask_index", "M", "opt"),
	     ("past", "T", "opt"), ("attention_bias", "T", "opt"),
	     ("past_sequence_length", "M", "opt")],
	    [("output", "T"), ("present", "T", "opt")],
	    [("do_rotary", "int", 0), ("mask_filter_value", "float", None),
	     ("num_heads", "int", REQUIRED), ("past_present_share_buffer", "int", 0),
	     ("qkv_hidden_sizes", "ints", None), ("rotary_embedding_dim", "int", 0),
	     ("scale", "float", None), ("unidirectional", "int", 0)],
	    [("T", ["float", "float16", "bfloat16"]), ("M", ["int32"])]),
	vop("BiasAdd",
	    [("X", "T"), ("bias", "T"), ("skip", "T")], [("Y", "T")],
	    types=[("T", ["float16", "float"])]),
	vop("BiasGelu",
	    [("A", "T"), ("B", "T")], [("C", "T")],
	    types=[("T", FLOAT3 + ["bfloat16"])]),
	vop("DynamicQuantizeMatMul",
	    [("A", "T1"), ("B", "T2"), ("b_scale", "T1"), ("b_zero_point", "T2", "opt"),
	     ("bias", "T1", "opt")],
	    [("Y", "T1")],
	    types=[("T1", ["float"]), ("T2", ["int8", "uint8"])]),
	vop("EmbedLayerNormalization",
	    [("input_ids", "T1"), ("segment_ids", "T1", "opt"), ("word_embedding", "T"),
	     ("position_embedding", "T"), ("segment_embedding", "T", "opt"), ("gamma", "T"),
	     ("beta", "T"), ("mask", "T1", "opt"), ("position_ids", "T1", "opt")],
	    # mask_index is optional in ORT's schema, but its type inference writes
	    # it ("output index 1 is out of range" on a node without it): required
	    # here, so the nodes graft builds have it (runtime/engine/rewrite.c)
	    [("output", "T"), ("mask_index", "T1"), ("embedding_sum", "T", "opt")],
	    [("epsilon", "float", 1e-12), ("mask_index_type", "int", None)],
	    [("T1", ["int32"]), ("T", ["float", "float16"])]),
	vop("FastGelu",
	    [("X", "T"), ("bias", "T", "opt")], [("Y", "T")],
	    types=[("T", FLOAT_HB + ["double"])], function=True),
	vop("FusedConv",
	    [("X", "T"), ("W", "T"), ("B", "T", "opt"), ("Z", "T", "opt")], [("Y", "T")],
	    [("activation", "string", None), ("activation_params", "floats", None),
	     ("auto_pad", "string", "NOTSET"), ("dilations", "ints", None), ("group", "int", 1),
	     ("kernel_shape", "ints", None), ("pads", "ints", None), ("strides", "ints", None)],
	    [("T", FLOAT3)]),
	vop("FusedGemm",
	    [("A", "T"), ("B", "T"), ("C", "T", "opt")], [("Y", "T")],
	    [("activation", "string", None), ("activation_alpha", "float", None),
	     ("activation_beta", "float", None), ("activation_gamma", "float", None),
	     ("alpha", "float", 1.0), ("beta", "float", 1.0),
	     ("transA", "int", 0), ("transB", "int", 0)],
	    [("T", FLOAT3 + ["uint32", "uint64", "int32", "int64"])]),
	vop("FusedMatMul",
	    [("A", "T"), ("B", "T")], [("Y", "T")],
	    [("alpha", "float", 1.0), ("transA", "int", 0), ("transB", "int", 0),
	     ("transBatchA", "int", 0), ("transBatchB", "int", 0)],
	    [("T", FLOAT3 + ["bfloat16"])]),
	vop("Gelu",
	    [("X", "T")], [("Y", "T")],
	    types=[("T", FLOAT3 + ["bfloat16"])], function=True, flags=["OPF_ELEMENTWISE"]),
	vop("LayerNormalization",
	    [("X", "T"), ("Scale", "V"), ("B", "V", "opt")],
	    [("Y", "V"), ("Mean", "U", "opt"), ("InvStdDev", "U", "opt")],
	    [("axis", "int", -1), ("epsilon", "float", 1e-05), ("stash_type", "int", 1)],
	    [("T", FLOAT3 + ["bfloat16"]), ("U", ["float", "bfloat16"]),
	     ("V", FLOAT3 + ["bfloat16"])]),
	vop("MultiHeadAttention",
	    [("query", "T"), ("key", "T", "opt"), ("value", "T", "opt"), ("bias", "T", "opt"),
	     ("key_padding_mask", "M", "opt"), ("attention_bias", "T", "opt"),
	     ("past_key", "T", "opt"), ("past_value", "T", "opt"),
	     ("past_sequence_length", "M", "opt"), ("cache_indirection", "M", "opt")],
	    [("output", "T"), ("present_key", "T", "opt"), ("present_value", "T", "opt"),
	     ("qk", "QK", "opt")],
	    [("mask_filter_value", "float", None), ("num_heads", "int", REQUIRED),
	     ("scale", "float", None), ("unidirectional", "int", 0)],
	    [("T", ["float", "float16", "bfloat16"]), ("M", ["int32"]), ("QK", ["float", "float16"])]),
	vop("MatMulIntegerToFloat",
	    [("A", "T1"), ("B", "T2"), ("a_scale", "T3"), ("b_scale", "T3"),
	     ("a_zero_point", "T1", "opt"), ("b_zero_point", "T2", "opt"), ("bias", "T3", "opt")],
	    [("Y", "T3")],
	    types=[("T1", ["int8", "uint8"]), ("T2", ["int8", "uint8"]), ("T3", ["float", "float16"])]),
	vop("NhwcConv",
	    [("X", "T"), ("W", "T"), ("B", "T", "opt")], [("Y", "T")],
	    [("auto_pad", "string", "NOTSET"), ("dilations", "ints", None), ("group", "int", 1),
	     ("kernel_shape", "ints", None), ("pads", "ints", None), ("strides", "ints", None)],
	    [("T", ["float16", "float", "double"])]),
	vop("QuickGelu",
	    [("X", "T")], [("Y", "T")],
	    [("alpha", "float", 1.702)],
	    [("T", FLOAT3 + ["bfloat16"])], flags=["OPF_ELEMENTWISE"]),
	vop("RotaryEmbedding",
	    [("input", "T"), ("position_ids", "M"), ("cos_cache", "T"), ("sin_cache", "T")],
	    [("output", "T")],
	    [("interleaved", "int", 0), ("is_packed_batching", "int", 0), ("num_heads", "int", 0),
	     ("rotary_embedding_dim", "int", 0), ("scale", "float", 1.0)],
	    [("T", FLOAT_HB), ("M", ["int64"])]),
	vop("SimplifiedLayerNormalization",
	    [("X", "T"), ("scale", "V")], [("Y", "V"), ("inv_std_var", "U", "opt")],
	    [("axis", "int", -1), ("epsilon", "float", 1e-05), ("stash_type", "int", 1)],
	    [("T", FLOAT3 + ["bfloat16"]), ("U", ["float", "double"]),
	     ("V", FLOAT3 + ["bfloat16"])]),
	vop("SkipLayerNormalization",
	    [("input", "T"), ("skip", "T"), ("gamma", "T"), ("beta", "T", "opt"),
	     ("bias", "T", "opt")],
	    [("output", "T"), ("mean", "U", "opt"), ("inv_std_var", "U", "opt"),
	     ("input_skip_bias_sum", "T", "opt")],
	    [("epsilon", "float", None)],
	    [("T", FLOAT_HB), ("U", ["float"])]),
	vop("SkipSimplifiedLayerNormalization",
	    [("input", "T"), ("skip", "T"), ("gamma", "T"), ("bias", "T", "opt")],
	    [("output", "T"), ("mean", "U", "opt"), ("inv_std_var", "U", "opt"),
	     ("input_skip_bias_sum", "T", "opt")],
	    [("epsilon", "float", None)],
	    [("T", FLOAT_HB), ("U", ["float"])]),
	vop("TransposeMatMul",
	    [("A", "T"), ("B", "T")], [("Y", "T")],
	    [("alpha", "float", 1.0), ("transA", "int", 0), ("transB", "int", 0)],
	    [("T", FLOAT3 + ["bfloat16"])]),
]
