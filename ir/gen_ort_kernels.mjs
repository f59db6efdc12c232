#!/usr/bin/env node
// gen_ort_kernels.mjs - writes ir/ort_kernels_table.c, the table of ONNX
// Runtime's CPU kernels read by ir/ort_kernels.c (ir_ort_cpu_has_kernel).
//
//   node ir/gen_ort_kernels.mjs [--json FILE] [--out FILE] [--verbose]
//
// Source: onnxruntime-node 1.30 (CPU), the ONNX Runtime graft's tests use as
// their oracle, probed with one-node models.  ORT's published kernel list
// (docs/OperatorKernels.md of microsoft/onnxruntime) says the same thing for
// its release but could not be brought into this workplace whole; entries
// checked by hand against it are listed in docs/opset-conversion.md.
//
// Method: for every record of graft's schema table (default domain, every
// version in effect at some opset 7..23; com.microsoft ops at version 1), and
// every tensor type its key input allows, a model with one node of that op is
// created at the record's opset (graph optimization disabled).  The key input
// is the first input whose type parameter allows more than one type (else the
// first with a type parameter); the node's other inputs are graph inputs of
// unknown shape, typed like the key where their parameter is the same, else
// float, int64 or the first type allowed.  Session creation
//   - succeeds: ORT has a kernel (K);
//   - fails with "Could not find an implementation for Op(v)": no kernel (N);
//   - fails otherwise (an attribute value or graph ORT's inference rejects):
//     unknown, and the table says "has a kernel" there (never refuse on a guess).
// The schema table is read from `/usr/bin/python3 ir/gen_opschema.py --json`
// (or FILE); onnxruntime-node from $ORT_TOOLS/node_modules (default
// ../shared/tools/ort).  Deterministic: the same ORT gives the same file.

import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const argv = process.argv.slice(2);
let jsonPath = null, outPath = path.join(ROOT, 'ir/ort_kernels_table.c'), verbose = false;
for (let i = 0; i < argv.length; i++) {
	if (argv[i] === '--json' && i + 1 < argv.length) jsonPath = argv[++i];
	else if (argv[i] === '--out' && i + 1 < argv.length) outPath = argv[++i];
	else if (argv[i] === '--verbose') verbose = true;
	else {
		console.error('usage: node ir/gen_ort_kernels.mjs [--json FILE] [--out FILE] [--verbose]');
		process.exit(2);
	}
}

const ortTools = path.resolve(ROOT, process.env.ORT_TOOLS || '../shared/tools/ort');
const req = createRequire(path.join(ortTools, 'package.json'));
const ort = req('onnxruntime-node');
const ortVersion = JSON.parse(fs.readFileSync(req.resolve('onnxruntime-node/package.json'), 'utf8')).version;

let table;
{
	let file = jsonPath, tmp = null;
	if (!file) {
		tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ortk-'));
		file = path.join(tmp, 'schemas.json');
		execFileSync('/usr/bin/python3', [path.join(ROOT, 'ir/gen_opschema.py'), '--json', file],
			{ stdio: ['ignore', 'ignore', 'inherit'] });
	}
	table = JSON.parse(fs.readFileSync(file, 'utf8'));
	if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
}

// ------------------------------------------------- minimal ONNX protobuf writer
const utf8 = new TextEncoder();
function varint(n) {
	n = BigInt.asUintN(64, BigInt(n));
	const o = [];
	do { let b = Number(n & 0x7fn); n >>= 7n; if (n) b |= 0x80; o.push(b); } while (n);
	return o;
}
class W {
	constructor() { this.b = []; }
	tag(f, wt) { this.b.push(...varint((f << 3) | wt)); return this; }
	int(f, v) { this.tag(f, 0); this.b.push(...varint(v)); return this; }
	bytes(f, u8) { this.tag(f, 2); this.b.push(...varint(u8.length)); for (const x of u8) this.b.push(x); return this; }
	str(f, s) { return this.bytes(f, utf8.encode(s)); }
	msg(f, w) { return this.bytes(f, Uint8Array.from(w.b)); }
	f32(f, v) { this.tag(f, 5); this.b.push(...new Uint8Array(new Float32Array([v]).buffer)); return this; }
}
const ATTR_TYPE = { float: 1, int: 2, string: 3, tensor: 4, graph: 5, floats: 6, ints: 7, strings: 8, tensors: 9, graphs: 10 };
const DTYPES = {
	float: 1, uint8: 2, int8: 3, uint16: 4, int16: 5, int32: 6, int64: 7, string: 8, bool: 9,
	float16: 10, double: 11, uint32: 12, uint64: 13, complex64: 14, complex128: 15, bfloat16: 16,
	float8e4m3fn: 17, float8e4m3fnuz: 18, float8e5m2: 19, float8e5m2fnuz: 20, uint4: 21, int4: 22,
	float4e2m1: 23,
};
const floatTensor = () => new W().int(1, 1).int(2, 1).str(8, 'v').bytes(9, new Uint8Array(4));
const emptyGraph = () => new W().str(2, 'body');

function attrProto(name, type, v) {
	const w = new W().str(1, name);
	switch (type) {
	case 'float': w.f32(2, v); break;
	case 'int': w.int(3, v); break;
	case 'string': w.str(4, v); break;
	case 'tensor': w.msg(5, v); break;
	case 'graph': w.msg(6, v); break;
	case 'floats': for (const x of v) w.f32(7, x); break;
	case 'ints': for (const x of v) w.int(8, x); break;
	case 'strings': for (const x of v) w.str(9, x); break;
	case 'tensors': for (const x of v) w.msg(10, x); break;
	case 'graphs': for (const x of v) w.msg(11, x); break;
	default: return null;
	}
	return w.int(20, ATTR_TYPE[type]);
}
function attrValue(a) {
	const d = a.default;
	switch (a.type) {
	case 'float': return d ?? 1.0;
	case 'int': return d ?? 1;
	case 'string': return d ?? 'x';
	case 'floats': return d ?? [1.0];
	case 'ints': return d ?? [1];
	case 'strings': return d ?? ['x'];
	case 'tensor': return floatTensor();
	case 'graph': return emptyGraph();
	case 'tensors': return [floatTensor()];
	case 'graphs': return [emptyGraph()];
	default: return null;
	}
}
// a tensor type of unknown shape
const tensorType = (elem) => new W().msg(1, new W().int(1, elem));

// ORT registers these contrib ops in the ONNX domain at version 1 (see
// ir/opschema_vendor.py); probed there at opset 16, below ONNX's own
// LayerNormalization-17.
const ORT_ONNX_DOMAIN = { LayerNormalization: 16, SimplifiedLayerNormalization: 16 };

// The node's inputs are Casts from one float graph input of unknown shape
// (onnxruntime-node cannot describe bfloat16 or float8 graph inputs); its
// output 0 is returned (cast to float if it is bfloat16, float8, int4 or
// float4, which onnxruntime-node cannot describe).
function model(s, opset, ins, nout, outCast) {
	const domain = s.domain && !(s.name in ORT_ONNX_DOMAIN) ? s.domain : '';
	const g = new W();
	ins.forEach((e, i) => {
		if (e != null)
			g.msg(1, new W().str(1, 'x').str(2, `in${i}`).str(3, `c${i}`).str(4, 'Cast').msg(5, attrProto('to', 'int', e)));
	});
	const n = new W();
	ins.forEach((e, i) => n.str(1, e == null ? '' : `in${i}`));
	for (let i = 0; i < nout; i++) n.str(2, 'y' + i);
	n.str(3, 'n0').str(4, s.name);
	for (const a of s.attrs)
		if (a.required) { const p = attrProto(a.name, a.type, attrValue(a)); if (p) n.msg(5, p); }
	if (domain) n.str(7, domain);
	g.msg(1, n);
	// output 0 must be used, or ORT drops the node before it looks for a
	// kernel; cast to float where onnxruntime-node cannot describe its type
	const cast = outCast;
	if (cast)
		g.msg(1, new W().str(1, 'y0').str(2, 'z').str(3, 'out').str(4, 'Cast').msg(5, attrProto('to', 'int', 1)));
	g.str(2, 'g');
	g.msg(11, new W().str(1, 'x').msg(2, tensorType(1)));
	g.msg(12, new W().str(1, cast ? 'z' : 'y0'));
	const m = new W().int(1, 10).str(2, 'gen_ort_kernels');
	const ops = domain ? [['', table.max_opset], [domain, opset]] : [['', opset]];
	for (const [d, v] of ops) { const o = new W(); if (d) o.str(1, d); m.msg(8, o.int(2, v)); }
	m.msg(7, g);
	return Uint8Array.from(m.b);
}

// K: a kernel; N: none, or ORT refuses the op at that type some other way
// (its checker rejects the type, its function body does not type-check, ORT
// has no such data type); ?: the probe model itself was at fault.
const NO_KERNEL = [
	/Could not find an implementation for/, /Failed to find kernel for/, /Kernel not found/,
	/MLDataType for: \S+ is not currently registered/, /bound to different types/,
	/Type Error: Type '[^']*' of input parameter \((in\d+|_inlfunc_[^)]*)\)/,
];
async function probe(bytes) {
	try {
		const sess = await ort.InferenceSession.create(bytes, { graphOptimizationLevel: 'disabled', logSeverityLevel: 4 });
		await sess.release?.();
		return ['K', ''];
	} catch (e) {
		const msg = String(e?.message ?? e);
		if (/Exception during initialization/.test(msg)) return ['K', msg]; // the kernel's constructor ran
		return [NO_KERNEL.some((re) => re.test(msg)) ? 'N' : '?', msg];
	}
}

// ------------------------------------------------------------------ the probes
const elemOf = (t) => { const m = /^tensor\((\w+)\)$/.exec(t); return m ? DTYPES[m[1]] : null; };
const allowedOf = (s, p) => ((s.types.find((c) => c.param === p) || { allowed: [] }).allowed)
	.map(elemOf).filter((e) => e != null);

function keyInput(s) {
	let first = -1;
	for (let i = 0; i < s.inputs.length; i++) {
		const al = allowedOf(s, s.inputs[i].type);
		if (!al.length) continue;
		if (first < 0) first = i;
		if (al.length > 1) return i;
	}
	return first;
}

function inputsFor(s, key, dt) {
	const count = Math.max(s.min_in, key + 1);
	const keyParam = key >= 0 ? s.inputs[key].type : null;
	const ins = [];
	for (let i = 0; i < count; i++) {
		const f = s.inputs[Math.min(i, s.inputs.length - 1)];
		if (!f) { ins.push(1); continue; }
		const fixed = elemOf(f.type);
		if (fixed) { ins.push(fixed); continue; }
		if (f.type === keyParam) { ins.push(dt); continue; }
		const al = allowedOf(s, f.type);
		ins.push(al.includes(dt) ? dt : al.includes(1) ? 1 : al.includes(7) ? 7 : al.length ? al[0] : 1);
	}
	return ins;
}

// One op version at one opset: the kernel mask and the probed mask.
async function probeAt(s, opset, unknownAt) {
	const key = keyInput(s);
	let dts = key >= 0 ? allowedOf(s, s.inputs[key].type) : [1];
	// an input that only takes sequences or optionals: not probed (unknown)
	const ins0 = s.inputs.slice(0, Math.max(s.min_in, key + 1));
	if (ins0.some((f) => !elemOf(f.type) && !allowedOf(s, f.type).length))
		dts = [];
	let kmask = 0, pmask = 0, unsure = !dts.length;
	for (const dt of dts) {
		const o0 = s.outputs[0], ins = inputsFor(s, key, dt);
		const bound = ins.findIndex((_, i) => s.inputs[Math.min(i, s.inputs.length - 1)].type === o0?.type);
		const odt = !o0 ? null : elemOf(o0.type) ?? (bound >= 0 ? ins[bound] : null);
		const bytes = model(s, opset, ins, Math.max(1, Math.min(s.min_out, s.max_out)), odt >= 16);
		const [r, msg] = await probe(bytes);
		sessions++;
		if (r === 'K') { kmask |= 1 << dt; pmask |= 1 << dt; }
		else if (r === 'N') pmask |= 1 << dt;
		else {
			unsure = true;
			if (verbose) console.error(`? ${s.name}-${s.since} at ${opset}, type ${dt}: ${msg.slice(0, 200)}`);
		}
	}
	if (key < 0) { kmask = kmask ? 0xffffffff : 0; pmask = pmask ? 0xffffffff : 0; }
	if (unsure) unknownAt.push(opset);
	return { key, kmask: kmask >>> 0, pmask: pmask >>> 0 };
}

// Rows: (domain, op, first opset, last opset) with the same answer.  ORT's
// answer depends on the model's opset, not only on the op's version: where
// it has no kernel it inlines the op's function body, whose ops resolve at
// the model's opset (PRelu-16 on double loads at opset 16, not at 22).
const rows = [];
const unknown = [];
let sessions = 0;
const names = [...new Set(table.schemas.map((s) => `${s.domain}\t${s.name}`))];
for (const dn of names) {
	const [domain, name] = dn.split('\t');
	const vers = table.schemas.filter((s) => s.domain === domain && s.name === name).sort((a, b) => a.since - b.since);
	const opsets = domain ? [ORT_ONNX_DOMAIN[name] ?? 1] : Array.from({ length: table.max_opset - 6 }, (_, i) => i + 7);
	const unknownAt = [];
	let cur = null;
	for (const opset of opsets) {
		const s = domain ? vers[0] : vers.filter((v) => v.since <= opset).pop();
		if (!s || s.deprecated) { cur = null; continue; }
		const r = await probeAt(s, opset, unknownAt);
		const row = { domain, name, since: s.since, first: domain ? 1 : opset, last: domain ? 1 : opset, ...r };
		if (cur && cur.since === row.since && cur.key === row.key && cur.kmask === row.kmask && cur.pmask === row.pmask &&
		    cur.last === opset - 1)
			cur.last = opset;
		else
			rows.push(cur = row);
	}
	if (unknownAt.length)
		unknown.push(`${domain ? domain + '.' : ''}${name}` + (domain ? '' : ` (${unknownAt[0]}..${unknownAt[unknownAt.length - 1]})`));
}

// ------------------------------------------------------------------- the file
const hex = (x) => '0x' + (x >>> 0).toString(16).padStart(8, '0');
let out = `/* ort_kernels_table.c - GENERATED by ir/gen_ort_kernels.mjs; do not edit.
 *
 * Which CPU kernels ONNX Runtime ${ortVersion} (onnxruntime-node, the oracle of
 * graft's tests) has, by op, domain, schema version and the element type of
 * the op's key input, found by creating one-node models in it (the method is
 * in the generator's opening comment).  Read by ir/ort_kernels.c.
 *
 * Columns: domain, op, the model opsets (of that domain) the row covers, the
 * op's since_version there, its key input (-1: none; the masks then cover
 * every type), the types with a kernel and the types probed with a definite
 * answer (bit d = ONNX data type d).  A type not probed counts as having a
 * kernel; so does an op or opset the table lacks.
 * ${sessions} sessions.  ${unknown.length} ops had probes ORT rejected for another reason
 * (control flow and Constant with dummy attributes, sequence inputs): those
 * types count as "has a kernel":
`;
for (let i = 0; i < unknown.length; i += 6)
	out += ` *   ${unknown.slice(i, i + 6).join(', ')}\n`;
out += ` */
#include "ort_kernels.h"

const OrtKernelRow ort_kernel_rows[] = {
`;
for (const r of rows)
	out += `\t{"${r.domain}", "${r.name}", ${r.first}, ${r.last}, ${r.since}, ${r.key}, ${hex(r.kmask)}, ${hex(r.pmask)}},\n`;
out += `};

const size_t ort_kernel_nrows = sizeof ort_kernel_rows / sizeof *ort_kernel_rows;
`;
fs.writeFileSync(outPath, out);
console.error(`gen_ort_kernels: ${rows.length} op versions, ${sessions} sessions, ${unknown.length} ops with unknowns; wrote ${outPath}`);
