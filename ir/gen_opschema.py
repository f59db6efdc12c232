#!/usr/bin/python3
# gen_opschema.py - writes ir/ops.def and ir/opschema_table.c, the operator
# schema table described by ir/opschema.h.
#
# Sources, merged in this order:
#   1. python3-onnx (Debian's 1.12): every versioned schema of the default
#      domain "" up to opset 17, read with onnx.defs.get_all_schemas_with_history();
#   2. ir/opschema_delta.py: the op versions of opsets 18..23, transcribed
#      from ONNX's docs and release notes (onnx 1.12 does not know them);
#   3. ir/opschema_vendor.py: the com.microsoft contrib ops graft may emit.
# Flags graft's optimizer relies on (commutative, elementwise, random) are
# decided here, in the lists below, not taken from onnx: onnx has no such
# notion, and a wrong flag changes what a rewrite may do.
#
# Both outputs are checked in, so a build needs no Python.  Regenerate with
#   /usr/bin/python3 ir/gen_opschema.py
# `--json FILE` writes every record (after the merge) as JSON to FILE instead
# of the C outputs, for ir/verify_opschema_ort.mjs, which checks the opset
# 18..23 and vendor records against the schemas ONNX Runtime embeds.
# The output is deterministic: the same inputs give byte-identical files.

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # keep ir/ free of __pycache__

import opschema_delta  # noqa: E402
import opschema_vendor  # noqa: E402

INT32_MAX = 2**31 - 1
MAX_OPSET = 23

# TensorProto.DataType numbers: the bit of each element type in a constraint mask.
DTYPES = {
	"float": 1, "uint8": 2, "int8": 3, "uint16": 4, "int16": 5, "int32": 6,
	"int64": 7, "string": 8, "bool": 9, "float16": 10, "double": 11,
	"uint32": 12, "uint64": 13, "complex64": 14, "complex128": 15,
	"bfloat16": 16, "float8e4m3fn": 17, "float8e4m3fnuz": 18,
	"float8e5m2": 19, "float8e5m2fnuz": 20, "uint4": 21, "int4": 22,
	"float4e2m1": 23,
}

# AttributeProto.AttributeType numbers, by onnx's text-syntax name.
ATTR_TYPES = {
	"float": 1, "int": 2, "string": 3, "tensor": 4, "graph": 5,
	"floats": 6, "ints": 7, "strings": 8, "tensors": 9, "graphs": 10,
	"sparse_tensor": 11, "sparse_tensors": 12, "type_proto": 13, "type_protos": 14,
}
ATTR_ENUM = {
	1: "ATTR_FLOAT", 2: "ATTR_INT", 3: "ATTR_STRING", 4: "ATTR_TENSOR",
	5: "ATTR_GRAPH", 6: "ATTR_FLOATS", 7: "ATTR_INTS", 8: "ATTR_STRINGS",
	9: "ATTR_TENSORS", 10: "ATTR_GRAPHS", 11: "ATTR_SPARSE_TENSOR",
	12: "ATTR_SPARSE_TENSORS", 13: "ATTR_TYPE_PROTO", 14: "ATTR_TYPE_PROTOS",
}

# Operands may be swapped without changing the result.  Max/Min are in: ONNX
# propagates NaN from either side, so the order does not matter even then.
# Not in: Sub, Div, Pow, Mod, BitShift, comparisons other than Equal, and
# MatMul/Gemm (commutative only up to transposes, which a rule must say).
COMMUTATIVE = {
	"Add", "Mul", "Max", "Min", "Sum", "Mean", "And", "Or", "Xor", "Equal",
	"BitwiseAnd", "BitwiseOr", "BitwiseXor",
}

# output[i] depends only on input[i] (after broadcasting), so layout passes may
# push a Transpose through these ops and memory planning may compute them in
# place.  In: unary math, activations with scalar or broadcast parameters
# (PRelu's slope broadcasts like a binary operand), binary and variadic
# arithmetic, logic and comparisons, Cast/CastLike, Clip, Where.
# Deliberately out: Softmax/LogSoftmax/Hardmax (a whole axis at a time),
# normalizations, Dropout (Identity at inference, but its mask output is not a
# function of its input alone), QuantizeLinear/DequantizeLinear (per-axis and
# blocked scales tie the result to an axis), Identity (a copy, not arithmetic:
# passes that want it handle it by name).
ELEMENTWISE = {
	# unary math
	"Abs", "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Ceil", "Cos",
	"Cosh", "Erf", "Exp", "Floor", "IsInf", "IsNaN", "Log", "Neg", "Not",
	"Reciprocal", "Round", "Sign", "Sin", "Sinh", "Sqrt", "Tan", "BitwiseNot",
	# activations
	"Celu", "Elu", "Gelu", "HardSigmoid", "HardSwish", "LeakyRelu", "Mish",
	"PRelu", "Relu", "Selu", "Shrink", "Sigmoid", "Softplus", "Softsign",
	"Tanh", "ThresholdedRelu", "Clip",
	# binary and variadic arithmetic
	"Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Sum", "Mean",
	"BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor",
	# logic and comparison
	"And", "Or", "Xor", "Equal", "Greater", "GreaterOrEqual", "Less",
	"LessOrEqual", "Where",
	# conversion
	"Cast", "CastLike",
}

# Nondeterministic: never folded, never merged by CSE.  Dropout is not here:
# at inference (no training_mode input or training_mode false) it is Identity.
RANDOM = {
	"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
	"Multinomial", "Bernoulli",
}

OPT_NAMES = {0: "OPT_SINGLE", 1: "OPT_OPTIONAL", 2: "OPT_VARIADIC"}


# --- reading the sources -----------------------------------------------------

def decode_default(attr):
	"""The default of an onnx AttributeProto as a python value, or None."""
	dv = attr.default_value
	t = dv.type
	if t == 0:
		return None
	if t == 1:
		return dv.f
	if t == 2:
		return dv.i
	if t == 3:
		return dv.s.decode("utf-8")
	if t == 6:
		return list(dv.floats)
	if t == 7:
		return list(dv.ints)
	if t == 8:
		return [s.decode("utf-8") for s in dv.strings]
	return None  # tensor/graph defaults have no C representation here


def from_onnx():
	from onnx import defs
	out = []
	for s in defs.get_all_schemas_with_history():
		if s.domain != "":
			continue  # ai.onnx.ml and ai.onnx.preview.training are not graft's
		rec = {
			"domain": "", "name": s.name, "since": s.since_version,
			"deprecated": bool(s.deprecated),
			"function": bool(s.has_function or s.has_context_dependent_function),
			"inputs": [(f.name, f.typeStr, int(f.option), bool(f.isHomogeneous))
				   for f in s.inputs],
			"outputs": [(f.name, f.typeStr, int(f.option), bool(f.isHomogeneous))
				    for f in s.outputs],
			"attrs": [],
			"types": [(c.type_param_str, list(c.allowed_type_strs))
				  for c in s.type_constraints],
			"min_in": s.min_input, "max_in": s.max_input,
			"min_out": s.min_output, "max_out": s.max_output,
			"src": "python3-onnx 1.12",
		}
		for name in sorted(s.attributes):
			a = s.attributes[name]
			rec["attrs"].append((name, int(a.type), bool(a.required), decode_default(a)))
		out.append(rec)
	return out


def arity(formals):
	"""min/max arity of a formal list, computed the way onnx's OpSchema::Finalize does."""
	lo = hi = 0
	for f in formals:
		opt = f[2]
		if opt == 0:
			hi += 1
			lo = hi
		elif opt == 1:
			hi += 1
		else:
			lo = hi + (f[4] if len(f) > 4 else 1)
			hi = INT32_MAX
	return lo, hi


def resolve_delta(base_recs, entries):
	"""Turns the delta/vendor entries into full records; a 'base' entry copies
	an earlier version of the same op and applies its changes."""
	by_key = {(r["domain"], r["name"], r["since"]): r for r in base_recs}
	out = []
	for e in entries:
		if "base" in e:
			key = (e.get("domain", ""), e["name"], e["base"])
			if key not in by_key:
				sys.exit("gen_opschema: %s-%d: no base version %d" % (e["name"], e["since"], e["base"]))
			b = by_key[key]
			rec = dict(b)
			rec["inputs"] = list(b["inputs"])
			rec["outputs"] = list(b["outputs"])
			rec["attrs"] = list(b["attrs"])
			rec["types"] = [(p, list(ts)) for p, ts in b["types"]]
			rec["deprecated"] = False
		else:
			rec = {"domain": e.get("domain", ""), "deprecated": False,
			       "inputs": [], "outputs": [], "attrs": [], "types": []}
		rec["name"] = e["name"]
		rec["since"] = e["since"]
		rec["src"] = e["src"]
		if "function" in e:
			rec["function"] = e["function"]
		rec.setdefault("function", False)
		if "inputs" in e:
			rec["inputs"] = [norm_formal(f) for f in e["inputs"]]
		if "outputs" in e:
			rec["outputs"] = [norm_formal(f) for f in e["outputs"]]
		if "attrs" in e:
			rec["attrs"] = sorted(norm_attr(a) for a in e["attrs"])
		for a in e.get("add_attrs", ()):
			na = norm_attr(a)
			rec["attrs"] = sorted([x for x in rec["attrs"] if x[0] != na[0]] + [na])
		if "types" in e:
			rec["types"] = [(p, expand_types(ts)) for p, ts in e["types"]]
		for p, extra in e.get("add_types", {}).items():
			rec["types"] = [(q, ts + [t for t in expand_types(extra) if t not in ts]) if q == p else (q, ts)
					for q, ts in rec["types"]]
		if e.get("add_bfloat16"):
			# "updated to support bfloat16": every parameter that takes float gets bfloat16
			rec["types"] = [(q, ts + ["tensor(bfloat16)"]
					 if "tensor(float)" in ts and "tensor(bfloat16)" not in ts else ts)
					for q, ts in rec["types"]]
		if "inputs" in e or "base" not in e:
			rec["min_in"], rec["max_in"] = arity(rec["inputs"])
		if "outputs" in e or "base" not in e:
			rec["min_out"], rec["max_out"] = arity(rec["outputs"])
		rec["inputs"] = [f[:4] for f in rec["inputs"]]
		rec["outputs"] = [f[:4] for f in rec["outputs"]]
		by_key[(rec["domain"], rec["name"], rec["since"])] = rec
		out.append(rec)
	return out


def norm_formal(f):
	"""('X', 'T') / ('B', 'T', 'opt') / ('xs', 'T', 'var'|'varh', min_arity)."""
	name, ts = f[0], f[1]
	kind = f[2] if len(f) > 2 else ""
	if kind in ("", "single"):
		return (name, ts, 0, True)
	if kind == "opt":
		return (name, ts, 1, True)
	if kind in ("var", "varh"):
		mn = f[3] if len(f) > 3 else 1
		return (name, ts, 2, kind == "var", mn)
	sys.exit("gen_opschema: bad formal %r" % (f,))


REQUIRED = opschema_delta.REQUIRED


def norm_attr(a):
	"""('axis', 'int', 1) default / REQUIRED / None (optional, no default)."""
	name, tname, dflt = a
	t = ATTR_TYPES[tname]
	if dflt is REQUIRED:
		return (name, t, True, None)
	return (name, t, False, dflt)


def expand_types(ts):
	"""Element names ('float') become 'tensor(float)'; full type strings stay."""
	return [t if "(" in t else "tensor(%s)" % t for t in ts]


# --- checking ----------------------------------------------------------------

def check(recs):
	for r in recs:
		where = "%s:%s-%d" % (r["domain"], r["name"], r["since"])
		params = {p for p, _ in r["types"]}
		for f in r["inputs"] + r["outputs"]:
			if "(" not in f[1] and f[1] not in params:
				sys.exit("gen_opschema: %s: formal %s uses unconstrained type %s" % (where, f[0], f[1]))
		for p, ts in r["types"]:
			for t in ts:
				if t.startswith("tensor(") and t[7:-1] not in DTYPES:
					sys.exit("gen_opschema: %s: unknown element type %s" % (where, t))
		assert r["min_in"] <= r["max_in"] and r["min_out"] <= r["max_out"], where
	seen = set()
	for r in recs:
		k = (r["domain"], r["name"], r["since"])
		if k in seen:
			sys.exit("gen_opschema: duplicate schema %s-%d" % (r["name"], r["since"]))
		seen.add(k)


# --- emitting C --------------------------------------------------------------

def c_str(s):
	out = ['"']
	for ch in s:
		if ch in '"\\':
			out.append("\\" + ch)
		elif ch == "\n":
			out.append("\\n")
		elif ord(ch) < 32 or ord(ch) > 126:
			out.extend("\\%03o" % b for b in ch.encode("utf-8"))
		else:
			out.append(ch)
	out.append('"')
	return "".join(out)


def c_float(x):
	"""A float attribute value as the shortest C float literal that holds the
	same float32 (attributes are float32 in ONNX): 1e-05f, not 9.99999974e-06."""
	import numpy
	v = numpy.float32(x)
	if numpy.isnan(v):
		return "NAN"
	if numpy.isinf(v):
		return "INFINITY" if v > 0 else "-INFINITY"
	r = str(v)
	if "e" not in r and "." not in r:
		r += ".0"
	return r + "f"


def c_int64(v):
	if v == -2**63:
		return "INT64_MIN"
	return "INT64_C(%d)" % v


def type_mask(ts):
	mask = []
	non_tensor = False
	for t in ts:
		if t.startswith("tensor("):
			mask.append(t[7:-1])
		else:
			non_tensor = True
	mask = sorted(set(mask), key=lambda n: DTYPES[n])
	expr = " | ".join("TY(%s)" % n.upper() for n in mask) if mask else "0"
	return expr, non_tensor


def ident(r):
	base = r["name"] + "_" + str(r["since"])
	if r["domain"]:
		base = r["domain"].replace(".", "_") + "_" + base
	return base


class Emitter:
	"""Emits each distinct array once per op, named after the first version
	that uses it: Conv-22 reads Conv_11_inputs, so a reader sees at once which
	parts of a signature a new version kept.  Arrays are not shared across ops,
	where a name like Abs_1_types on Conv would only confuse."""

	def __init__(self):
		self.lines = []
		self.pool = {}
		self.op = None

	def array(self, name, ctype, body):
		if not body:
			return "NULL"
		key = (self.op, ctype, body)
		if key in self.pool:
			return self.pool[key]
		self.pool[key] = name
		self.lines.append("static const %s %s[] = {\n%s};\n" % (ctype, name, body))
		return name


def emit_formals(em, name, formals):
	body = "".join("\t{ %s, %s, %s, %s },\n" % (c_str(f[0]), c_str(f[1]), OPT_NAMES[f[2]],
						     "true" if f[3] else "false")
		       for f in formals)
	return em.array(name, "OpFormal", body)


def emit_attrs(em, rid, attrs):
	"""Designated initializers naming only what is set, so a row reads
	{ .name = "group", .type = ATTR_INT, .has_default = true, .i = INT64_C(1) }."""
	rows = []
	for (aname, t, req, dflt) in attrs:
		fields = [".name = %s" % c_str(aname), ".type = %s" % ATTR_ENUM[t]]
		if req:
			fields.append(".required = true")
		val = None
		if dflt is not None:
			if t == 1:
				val = [".f = %s" % c_float(dflt)]
			elif t == 2:
				val = [".i = %s" % c_int64(dflt)]
			elif t == 3:
				val = [".s = %s" % c_str(dflt)]
			elif t == 6:
				arr = em.array("%s_%s_default" % (rid, aname), "float",
					       "".join("\t%s,\n" % c_float(x) for x in dflt))
				val = [".floats = %s" % arr, ".n = %d" % len(dflt)]
			elif t == 7:
				arr = em.array("%s_%s_default" % (rid, aname), "int64_t",
					       "".join("\t%s,\n" % c_int64(x) for x in dflt))
				val = [".ints = %s" % arr, ".n = %d" % len(dflt)]
			elif t == 8:
				arr = em.array("%s_%s_default" % (rid, aname), "char *const",
					       "".join("\t%s,\n" % c_str(x) for x in dflt))
				val = [".strings = %s" % arr, ".n = %d" % len(dflt)]
		if val:
			fields.append(".has_default = true")
			fields.extend(val)
		rows.append("\t{ %s },\n" % ", ".join(fields))
	return em.array("%s_attrs" % rid, "OpAttrDef", "".join(rows))


def emit_types(em, rid, types):
	rows = []
	for p, ts in types:
		expr, nt = type_mask(ts)
		rows.append("\t{ %s, %s, %s },\n" % (c_str(p), expr, "true" if nt else "false"))
	return em.array("%s_types" % rid, "OpTypeConstraint", "".join(rows))


def flags_of(r):
	fl = []
	if r["domain"] == "":
		if r["name"] in COMMUTATIVE:
			fl.append("OPF_COMMUTATIVE")
		if r["name"] in ELEMENTWISE:
			fl.append("OPF_ELEMENTWISE")
		if r["name"] in RANDOM:
			fl.append("OPF_RANDOM")
	else:
		fl.append("OPF_VENDOR")
		fl.extend(r.get("vendor_flags", ()))
	if r["deprecated"]:
		fl.append("OPF_DEPRECATED")
	if r["function"]:
		fl.append("OPF_FUNCTION")
	return " | ".join(fl) if fl else "0"


def c_arity(v):
	return "INT32_MAX" if v == INT32_MAX else str(v)


HEADER_NOTE = ("Code generated by ir/gen_opschema.py from python3-onnx 1.12 (opsets <= 17),\n"
	       " * ir/opschema_delta.py (opsets 18..23) and ir/opschema_vendor.py; DO NOT EDIT.\n"
	       " * Regenerate with: /usr/bin/python3 ir/gen_opschema.py")


def write_ops_def(path, names):
	with open(path, "w") as fp:
		fp.write("/* ops.def - one OP(name) per op name of the default ONNX domain (opsets 1..%d),\n"
			 " * sorted by name; the X-macro behind OpKind in opschema.h.\n * %s */\n"
			 % (MAX_OPSET, HEADER_NOTE))
		for n in names:
			fp.write("OP(%s)\n" % n)


def write_table(path, recs, names, nvendor):
	em = Emitter()
	rows = []
	for r in recs:
		rid = ident(r)
		em.op = (r["domain"], r["name"])
		ins = emit_formals(em, rid + "_inputs", r["inputs"])
		outs = emit_formals(em, rid + "_outputs", r["outputs"])
		attrs = emit_attrs(em, rid, r["attrs"])
		types = emit_types(em, rid, r["types"])
		rows.append((r, ins, outs, attrs, types))

	def until(i):
		r = recs[i]
		if i + 1 < len(recs) and recs[i + 1]["domain"] == r["domain"] and recs[i + 1]["name"] == r["name"]:
			return str(recs[i + 1]["since"] - 1)
		return "INT32_MAX"

	o = []
	o.append("/* opschema_table.c - the ONNX operator schema table (see opschema.h): every\n"
		 " * versioned definition of every default-domain op, then the com.microsoft ops\n"
		 " * graft may emit, with the lookups over them.\n * %s */\n" % HEADER_NOTE)
	o.append("#include <math.h>\n#include <stdint.h>\n#include <string.h>\n\n#include \"opschema.h\"\n\n")
	o.append("_Static_assert(OP_COUNT == %d, \"ops.def and opschema_table.c disagree: regenerate both\");\n\n"
		 % (len(names) + 1))
	o.append("/* One bit per TensorProto.DataType number. */\n")
	o.append("#define TY(t) (UINT32_C(1) << TY_##t)\n")
	o.append("enum {\n")
	for n, v in sorted(DTYPES.items(), key=lambda kv: kv[1]):
		o.append("\tTY_%s = %d,\n" % (n.upper(), v))
	o.append("};\n\n")
	o.append("/* Formals, attributes and type constraints of each op; a list that a later\n"
		 " * version keeps unchanged is emitted once, named after the first version. */\n")
	o.extend(x + "\n" for x in em.lines)

	o.append("/* Sorted by (domain, name, since_version) with strcmp order, which the\n"
		 " * binary searches below rely on.  until_version is one less than the next\n"
		 " * definition's since_version.  A record with OPF_DEPRECATED marks where the\n"
		 " * op left the standard: lookups at or after it find nothing. */\n")
	o.append("static const OpSchema schemas[] = {\n")
	cur = None
	for i, (r, ins, outs, attrs, types) in enumerate(rows):
		if r["domain"] != cur:
			cur = r["domain"]
			if cur:
				o.append("\n\t/* ---- vendor ops: %s (not ONNX; other runtimes reject them) ---- */\n" % cur)
		o.append("\t{ /* %s-%d: %s */\n" % (r["name"], r["since"], r["src"]))
		kind = "OP_%s" % r["name"] if r["domain"] == "" else "OP_UNKNOWN"
		o.append("\t\t%s, %s, %s, %d, %s,\n" % (c_str(r["domain"]), c_str(r["name"]), kind, r["since"], until(i)))
		o.append("\t\t%s,\n" % flags_of(r))
		o.append("\t\t%s, %d, %s, %s,\n" % (ins, len(r["inputs"]), c_arity(r["min_in"]), c_arity(r["max_in"])))
		o.append("\t\t%s, %d, %s, %s,\n" % (outs, len(r["outputs"]), c_arity(r["min_out"]), c_arity(r["max_out"])))
		o.append("\t\t%s, %d,\n" % (attrs, len(r["attrs"])))
		o.append("\t\t%s, %d,\n\t},\n" % (types, len(r["types"])))
	o.append("};\n\n")
	o.append("#define NSCHEMAS (sizeof schemas / sizeof schemas[0])\n")
	o.append("_Static_assert(sizeof schemas / sizeof schemas[0] == %d, \"schema count\");\n\n" % len(recs))

	# First schema index of each default-domain kind: lookups by kind need no search.
	first = {}
	for i, r in enumerate(recs):
		if r["domain"] == "" and r["name"] not in first:
			first[r["name"]] = i
	o.append("/* kind_first[k]..kind_first[k+1]-1: the versions of default-domain op k. */\n")
	o.append("static const uint16_t kind_first[OP_COUNT + 1] = {\n\t0, /* OP_UNKNOWN */\n")
	for n in names:
		o.append("\t%d, /* %s */\n" % (first[n], n))
	o.append("\t%d, /* end of the default domain */\n};\n\n" % (len(recs) - nvendor))
	o.append("static const char *const kind_names[OP_COUNT] = {\n\t\"?\",\n")
	for n in names:
		o.append("\t%s,\n" % c_str(n))
	o.append("};\n\n")
	o.append(LOOKUPS)
	with open(path, "w") as fp:
		fp.write("".join(o))


LOOKUPS = r'''const char *op_kind_name(OpKind k)
{
	if ((unsigned)k >= OP_COUNT)
		return "?";
	return kind_names[k];
}

OpKind op_kind_lookup(const char *name)
{
	/* kind_names[1..] is sorted; OP_UNKNOWN sits in front of it. */
	size_t lo = 1, hi = OP_COUNT;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(kind_names[mid], name);
		if (c == 0)
			return (OpKind)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return OP_UNKNOWN;
}

const char *attr_type_name(AttrType t)
{
	static const char *const names[] = {
		"undefined", "float", "int", "string", "tensor", "graph",
		"floats", "ints", "strings", "tensors", "graphs",
		"sparse_tensor", "sparse_tensors", "type_proto", "type_protos",
	};
	if ((unsigned)t >= sizeof names / sizeof names[0])
		return "?";
	return names[t];
}

/* The definition in effect at `version` among schemas[lo..hi) (all versions of
 * one op, ascending), or NULL if the op is not yet there or was removed. */
static const OpSchema *pick_version(size_t lo, size_t hi, int version)
{
	const OpSchema *best = NULL;
	for (size_t i = lo; i < hi && schemas[i].since_version <= version; i++)
		best = &schemas[i];
	if (best && (best->flags & OPF_DEPRECATED))
		return NULL;
	return best;
}

static int cmp_key(const OpSchema *s, const char *domain, const char *name)
{
	int c = strcmp(s->domain, domain);
	return c ? c : strcmp(s->name, name);
}

const OpSchema *op_schema_lookup(const char *domain, const char *name, int version)
{
	if (!name)
		return NULL;
	/* "ai.onnx" is the default domain under its long name. */
	if (!domain || strcmp(domain, "ai.onnx") == 0)
		domain = "";
	if (domain[0] == '\0') {
		OpKind k = op_kind_lookup(name);
		if (k == OP_UNKNOWN)
			return NULL;
		return pick_version(kind_first[k], kind_first[k + 1], version);
	}
	/* Other domains: binary search for the first version of (domain, name). */
	size_t lo = kind_first[OP_COUNT], hi = NSCHEMAS;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cmp_key(&schemas[mid], domain, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t end = lo;
	while (end < NSCHEMAS && cmp_key(&schemas[end], domain, name) == 0)
		end++;
	return pick_version(lo, end, version);
}

const OpSchema *op_schema_all(size_t *count)
{
	if (count)
		*count = NSCHEMAS;
	return schemas;
}

const OpAttrDef *op_schema_attr(const OpSchema *s, const char *name)
{
	if (!s || !name)
		return NULL;
	for (int i = 0; i < s->nattrs; i++)
		if (strcmp(s->attrs[i].name, name) == 0)
			return &s->attrs[i];
	return NULL;
}
'''


def write_json(path, recs):
	import json
	attr_names = {v: k for k, v in ATTR_TYPES.items()}
	out = []
	for r in recs:
		out.append({
			"domain": r["domain"], "name": r["name"], "since": r["since"], "src": r["src"],
			"deprecated": r["deprecated"], "function": r["function"],
			"inputs": [{"name": f[0], "type": f[1], "option": ["single", "optional", "variadic"][f[2]],
				    "homogeneous": f[3]} for f in r["inputs"]],
			"outputs": [{"name": f[0], "type": f[1], "option": ["single", "optional", "variadic"][f[2]],
				     "homogeneous": f[3]} for f in r["outputs"]],
			"min_in": r["min_in"], "max_in": r["max_in"], "min_out": r["min_out"], "max_out": r["max_out"],
			"attrs": [{"name": a[0], "type": attr_names[a[1]], "required": a[2], "default": a[3]}
				  for a in r["attrs"]],
			"types": [{"param": p, "allowed": ts} for p, ts in r["types"]],
		})
	with open(path, "w") as fp:
		json.dump({"max_opset": MAX_OPSET, "schemas": out}, fp, indent=1, sort_keys=True)
		fp.write("\n")


def main():
	json_path = None
	args = sys.argv[1:]
	if args[:1] == ["--json"] and len(args) == 2:
		json_path = args[1]
	elif args:
		sys.exit("usage: gen_opschema.py [--json FILE]")
	base = from_onnx()
	delta = resolve_delta(base, opschema_delta.DELTA)
	std = base + delta
	vendor = resolve_delta(std, opschema_vendor.VENDOR)
	for r, e in zip(vendor, opschema_vendor.VENDOR):
		r["vendor_flags"] = e.get("flags", ())
	recs = std + vendor
	check(recs)
	for r in recs:
		assert r["since"] <= MAX_OPSET or r["domain"], r["name"]
	recs.sort(key=lambda r: (r["domain"], r["name"], r["since"]))
	names = sorted({r["name"] for r in recs if r["domain"] == ""})
	if json_path:
		write_json(json_path, recs)
		print("gen_opschema: wrote %d schemas to %s" % (len(recs), json_path))
		return
	write_ops_def(os.path.join(HERE, "ops.def"), names)
	write_table(os.path.join(HERE, "opschema_table.c"), recs, names, len(vendor))
	print("gen_opschema: %d ops, %d schemas (%d from onnx 1.12, %d from the delta), %d vendor ops"
	      % (len(names), len(recs), len(base), len(delta), len(vendor)))


if __name__ == "__main__":
	main()
