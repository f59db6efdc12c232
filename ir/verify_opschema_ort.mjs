#!/usr/bin/env node
// verify_opschema_ort.mjs - checks graft's operator schema table (the opset
// 18..23 records of ir/opschema_delta.py and the com.microsoft records of
// ir/opschema_vendor.py) against the schemas ONNX Runtime embeds.
//
//   node ir/verify_opschema_ort.mjs [--json FILE] [--verbose] [--no-types]
//
// The table is read from `/usr/bin/python3 ir/gen_opschema.py --json` (or
// FILE).  onnxruntime-node is loaded from $ORT_TOOLS/node_modules (default
// ../shared/tools/ort relative to the repository root).
//
// Method: ORT builds every model it loads into a Graph and, before anything
// else, runs ONNX's checker over each node against the op schema it resolves
// for the node's (domain, opset).  Its first complaint becomes the session
// creation error.  So for each record this script builds one-node models at
// exactly the record's opset (graph optimization disabled) and reads the error:
//
//   version  a wrong input (or output) count yields "Node(n0) with
//            schema(::Op:S) has input size N not in range [min=a, max=b]":
//            S must be the record's since_version, a/b its arity.  Also a
//            sweep: every default-domain op name at every opset 18..23 must
//            resolve to the since_version the table picks there ("No Op
//            registered" = absent, "deprecated" = removed).
//   attrs    all attributes of the record set (values of the record's types):
//            no "Unrecognized attribute", "Mismatched attribute type" or
//            "Required attribute 'X' is missing"; each required attribute
//            left out alone must give that message; a bogus attribute must be
//            rejected; every attribute name known anywhere in the table that
//            the record lacks must be rejected as unrecognized.
//   types    for each type parameter bound by an input, each of the 23 tensor
//            element types is fed (via a Cast from a float graph input, so ORT
//            reaches its type check even for types it has no kernels for), and
//            seq(tensor(d)), optional(tensor(d)), optional(seq(tensor(d))) as
//            graph inputs: "Type Error: Type '...' of input parameter ... is
//            invalid" must appear exactly for the types the record does not list.
//
// Not checkable this way: attribute defaults, output-only type parameters
// (ORT does not check inferred output types against the constraints),
// and Constant (ORT turns Constant nodes into
// initializers before checking them).  Type parameters bound only to outputs
// are listed as notes.  Exit 0 if all checks pass, 1 on a
// mismatch, 2 on usage or setup errors.

import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const INT32_MAX = 2147483647;

// ------------------------------------------------------------------ arguments
const argv = process.argv.slice(2);
let jsonPath = null, verbose = false, doTypes = true;
for (let i = 0; i < argv.length; i++) {
	if (argv[i] === '--json' && i + 1 < argv.length) jsonPath = argv[++i];
	else if (argv[i] === '--verbose' || argv[i] === '-v') verbose = true;
	else if (argv[i] === '--no-types') doTypes = false;
	else {
		console.error('usage: node ir/verify_opschema_ort.mjs [--json FILE] [--verbose] [--no-types]');
		process.exit(2);
	}
}

const ortTools = path.resolve(ROOT, process.env.ORT_TOOLS || '../shared/tools/ort');
let ort;
try {
	ort = createRequire(path.join(ortTools, 'package.json'))('onnxruntime-node');
} catch (e) {
	console.error(`error: cannot load onnxruntime-node from ${ortTools}/node_modules ` +
		`(run bash ${ortTools}/install.sh, or set ORT_TOOLS): ${e.message}`);
	process.exit(2);
}

let table;
{
	let file = jsonPath;
	let tmp = null;
	if (!file) {
		tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'opschema-'));
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
const ATTR_TYPE = { float: 1, int: 2, string: 3, tensor: 4, graph: 5, floats: 6, ints: 7, strings: 8,
	tensors: 9, graphs: 10, sparse_tensor: 11, sparse_tensors: 12, type_proto: 13, type_protos: 14 };
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
	case 'sparse_tensor': w.msg(22, new W().msg(1, v).msg(2, new W().int(1, 1).int(2, 7).bytes(9, new Uint8Array(8))).int(3, 1)); break;
	default: throw new Error(`attribute type ${type} not supported by this script`);
	}
	return w.int(20, ATTR_TYPE[type]);
}

// A value of the attribute's type: its default when it has one, else something.
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
	case 'sparse_tensor': return floatTensor();
	default: throw new Error(`attribute type ${a.type}`);
	}
}
const attrOf = (a) => attrProto(a.name, a.type, attrValue(a));

function tensorType(elem) { return new W().msg(1, new W().int(1, elem).msg(2, new W().msg(1, new W().int(1, 2)))); }
// TypeProto of "seq(tensor(e))", "optional(tensor(e))", "optional(seq(tensor(e)))"
const seqType = (t) => new W().msg(4, new W().msg(1, t));
const optType = (t) => new W().msg(9, new W().msg(1, t));
const KINDS = {
	'seq(tensor(%))': (e) => seqType(tensorType(e)),
	'optional(tensor(%))': (e) => optType(tensorType(e)),
	'optional(seq(tensor(%)))': (e) => optType(seqType(tensorType(e))),
};

// One node `n0` of (domain, op); its inputs are produced by Cast nodes from a
// float graph input (ins: list of element type numbers, or null for an absent
// optional input), its outputs are graph outputs.
function model({ s, opset, ins, nout, attrs }) {
	const domain = s.ortDomain ?? s.domain;
	const g = new W();
	const inNames = [];
	const graphInputs = [];
	ins.forEach((elem, i) => {
		if (elem == null) { inNames.push(''); return; }
		if (typeof elem === 'object') { // a seq/optional type: a graph input of that type
			const nm = `in${i}_t0`;
			inNames.push(nm);
			graphInputs.push(new W().str(1, nm).msg(2, elem));
			return;
		}
		const nm = `in${i}_t${elem}`;
		inNames.push(nm);
		const c = new W().str(1, 'x').str(2, nm).str(3, `cast${i}`).str(4, 'Cast').msg(5, attrProto('to', 'int', elem));
		g.msg(1, c);
	});
	const n = new W();
	for (const i of inNames) n.str(1, i);
	for (let i = 0; i < nout; i++) n.str(2, 'y' + i);
	n.str(3, 'n0').str(4, s.name);
	for (const a of attrs) n.msg(5, a);
	if (domain) n.str(7, domain);
	g.msg(1, n);
	g.str(2, 'g');
	g.msg(11, new W().str(1, 'x').msg(2, tensorType(1)));
	for (const gi of graphInputs) g.msg(11, gi);
	for (let i = 0; i < nout; i++) g.msg(12, new W().str(1, 'y' + i));
	const m = new W().int(1, 10).str(2, 'verify_opschema_ort');
	const ops = domain ? [['', table.max_opset], [domain, opset]] : [['', opset]];
	for (const [d, v] of ops) { const o = new W(); if (d) o.str(1, d); m.msg(8, o.int(2, v)); }
	m.msg(7, g);
	return Uint8Array.from(m.b);
}

let sessions = 0;
async function errorOf(bytes) {
	sessions++;
	try {
		const sess = await ort.InferenceSession.create(bytes, { graphOptimizationLevel: 'disabled', logSeverityLevel: 4 });
		await sess.release?.();
		return '';
	} catch (e) {
		return String(e?.message ?? e);
	}
}

// ------------------------------------------------------------------- helpers
// ONNX Runtime registers these two "contrib" ops in the ONNX domain at version
// 1 (see ir/opschema_vendor.py), so they are probed there, at an opset where
// ONNX's own LayerNormalization-17 does not shadow the contrib one.
const ORT_ONNX_DOMAIN = { LayerNormalization: 16, SimplifiedLayerNormalization: 16 };
const opsetOf = (s) => s.ortOpset ?? s.since;
const tag = (s) => `${s.domain ? s.domain + '.' : ''}${s.name}-${s.since}`;
const elemOf = (t) => { const m = /^tensor\((\w+)\)$/.exec(t); return m ? DTYPES[m[1]] : null; };
const paramTypes = (s, p) => (s.types.find((c) => c.param === p) || { allowed: [] }).allowed;

// A type every input of formal f can take: the formal's fixed type, or the
// first tensor type its constraint allows (float preferred).
function someElem(s, f) {
	const fixed = elemOf(f.type);
	if (fixed) return fixed;
	const al = paramTypes(s, f.type);
	if (al.includes('tensor(float)')) return 1;
	for (const t of al) { const e = elemOf(t); if (e) return e; }
	return 1;
}
// Input list of `count` inputs: formals in order, the last variadic repeated.
function inputsFor(s, count, pick = (f) => someElem(s, f)) {
	const out = [];
	for (let i = 0; i < count; i++) {
		const f = s.inputs[Math.min(i, s.inputs.length - 1)];
		out.push(f ? pick(f, i) : 1);
	}
	return out;
}
const okOut = (s) => Math.max(s.min_out, Math.min(1, s.max_out));
const okIn = (s) => s.min_in;

function parseArity(msg) {
	const m = /schema\(([^:]*)::([A-Za-z0-9_]+):(\d+)\) has (input|output) size (\d+) not in range \[min=(\d+), max=(\d+)\]/.exec(msg);
	return m && { since: +m[3], which: m[4], min: +m[6], max: +m[7] };
}
const short = (msg) => { const i = msg.indexOf(', Error '); return (i >= 0 ? msg.slice(i + 8) : msg).slice(0, 300); };

const mismatches = [];
const notes = [];
let checks = 0;
function expect(s, what, ok, detail) {
	checks++;
	if (!ok) mismatches.push(`${tag(s)}: ${what}: ${detail}`);
	else if (verbose) console.log(`ok   ${tag(s)}: ${what}`);
}

// Departures the table makes on purpose, each with its reason (ir/opschema_vendor.py):
// ORT's schema lets EmbedLayerNormalization's mask_index be absent, but its type
// inference writes output 1 and refuses a node without it.
const MIN_OUTPUTS_RAISED = { 'com.microsoft.EmbedLayerNormalization': 1 };

// ----------------------------------------------------------------- the checks
async function checkArity(s) {
	let probed = 0;
	for (const which of ['input', 'output']) {
		const min = which === 'input' ? s.min_in : s.min_out;
		const max = which === 'input' ? s.max_in : s.max_out;
		const n = max < INT32_MAX ? max + 1 : (min > 0 ? min - 1 : null);
		if (n == null) continue;
		const msg = await errorOf(model({ s, opset: opsetOf(s),
			ins: inputsFor(s, which === 'input' ? n : okIn(s)),
			nout: which === 'output' ? n : okOut(s), attrs: [] }));
		const a = parseArity(msg);
		const raised = which === 'output' && MIN_OUTPUTS_RAISED[`${s.domain}.${s.name}`];
		if (a && raised && a.min === raised) a.min = min;  /* the departure above */
		const since = s.domain ? 1 : s.since;
		expect(s, `${which} arity`, a && a.which === which && a.since === since && a.min === min && a.max === max,
			a ? `ORT schema ${s.name}-${a.since} has ${a.which}s [${a.min}, ${a.max}], table says ${s.name}-${since} [${min}, ${max}]`
				: `no arity error for ${n} ${which}s: ${short(msg)}`);
		probed++;
	}
	if (!probed) notes.push(`${tag(s)}: variadic inputs and outputs with min 0: arity/version not probed`);
}

async function checkAttrs(s, allNames) {
	const base = { s, opset: opsetOf(s), ins: inputsFor(s, okIn(s)), nout: okOut(s) };
	// all attributes set: peel off whatever ORT objects to, one at a time
	let attrs = [...s.attrs];
	for (let guard = 0; guard <= s.attrs.length; guard++) {
		const msg = await errorOf(model({ ...base, attrs: attrs.map(attrOf) }));
		let m;
		if ((m = /Unrecognized attribute: (\S+) for operator/.exec(msg))) {
			expect(s, `attribute ${m[1]}`, false, 'ORT does not know this attribute');
			attrs = attrs.filter((a) => a.name !== m[1]);
		} else if ((m = /Mismatched attribute type in '[^:]*: ([^']+)'. Expected: '(\w+)'/.exec(msg))) {
			expect(s, `attribute ${m[1]}`, false, `ORT expects type ${m[2].toLowerCase()}`);
			attrs = attrs.filter((a) => a.name !== m[1]);
		} else if ((m = /Required attribute '([^']+)' is missing/.exec(msg))) {
			const ours = s.attrs.find((a) => a.name === m[1]);
			expect(s, `attribute ${m[1]}`, false, ours ? 'ORT requires it, table has it optional' : 'ORT requires it, table lacks it');
			break;
		} else {
			expect(s, 'all attributes accepted', true, '');
			break;
		}
	}
	const valid = s.attrs.filter((a) => attrs.includes(a));
	const required = valid.filter((a) => a.required);
	// each required attribute is required
	for (const a of required) {
		const msg = await errorOf(model({ ...base, attrs: valid.filter((b) => b !== a).map(attrOf) }));
		expect(s, `${a.name} required`, msg.includes(`Required attribute '${a.name}' is missing`),
			`left out, ORT says: ${short(msg) || 'OK'}`);
	}
	// only the required ones: nothing else is required
	{
		const msg = await errorOf(model({ ...base, attrs: required.map(attrOf) }));
		const m = /Required attribute '([^']+)' is missing/.exec(msg);
		expect(s, 'no other required attributes', !m, m ? `ORT requires '${m[1]}', table has it optional` : '');
	}
	// names ORT should not know: a bogus one and every other name in the table
	const own = new Set(s.attrs.map((a) => a.name));
	{
		const msg = await errorOf(model({ ...base, attrs: [...required.map(attrOf), attrProto('graft_bogus_attribute', 'int', 1)] }));
		if (!msg.includes('Unrecognized attribute: graft_bogus_attribute for operator')) {
			// ORT's contrib LayerNormalization/SimplifiedLayerNormalization
			// (ONNX domain, version 1) let any attribute through
			notes.push(`${tag(s)}: ORT accepts unknown attributes here: attribute names not probed`);
			return;
		}
		checks++;
	}
	for (const name of allNames) {
		if (own.has(name)) continue;
		const msg = await errorOf(model({ ...base, attrs: [...required.map(attrOf), attrProto(name, 'int', 1)] }));
		if (msg.includes(`Unrecognized attribute: ${name} for operator`)) {
			checks++;
			continue;
		}
		const m = /Mismatched attribute type in '[^:]*: [^']+'. Expected: '(\w+)'/.exec(msg);
		expect(s, `attribute ${name}`, false,
			`ORT knows it (${m ? 'type ' + m[1].toLowerCase() : 'accepts an int'}), table lacks it`);
	}
}

async function checkTypes(s) {
	const params = [...new Set(s.inputs.map((f) => f.type).filter((t) => !elemOf(t) && !/\(/.test(t)))];
	for (const p of params) {
		const last = s.inputs.map((f) => f.type).lastIndexOf(p);
		const n = Math.max(okIn(s), last + 1);
		const allowed = new Set(paramTypes(s, p));
		const attrs = s.attrs.filter((a) => a.required).map(attrOf);
		const wrong = [], extra = [], unclear = [];
		// every tensor element type, fed through a Cast; then the same element
		// types wrapped as seq/optional graph inputs
		const probes = Object.entries(DTYPES).map(([dn, d]) => [`tensor(${dn})`, d]);
		for (const [pat, mk] of Object.entries(KINDS))
			for (const [dn, d] of Object.entries(DTYPES)) probes.push([pat.replace('%', dn), mk(d)]);
		for (const [tname, feed] of probes) {
			const ins = inputsFor(s, n, (f) => (f.type === p ? feed : someElem(s, f)));
			const msg = await errorOf(model({ s, opset: opsetOf(s), ins, nout: okOut(s), attrs }));
			const m = /Type Error: Type '([^']+)' of input parameter \(in(\d+)_t\d+\) of operator \([^)]*\) in node \(n0\)/.exec(msg);
			// (errors in other nodes, e.g. in an inlined function body, come after n0 passed)
			const bound = /bound to different types .* in node \(n0\)/.test(msg);
			let rejected;
			if (m && s.inputs[Math.min(+m[2], s.inputs.length - 1)].type === p) rejected = true;
			else if (m || bound) { unclear.push(`${tname} (${short(msg).slice(0, 120)})`); continue; }
			else rejected = false;
			checks++;
			if (rejected && allowed.has(tname)) extra.push(tname);
			if (!rejected && !allowed.has(tname)) wrong.push(tname);
		}
		if (extra.length) mismatches.push(`${tag(s)}: type ${p}: table allows, ORT rejects: ${extra.join(' ')}`);
		if (wrong.length) mismatches.push(`${tag(s)}: type ${p}: ORT accepts, table lacks: ${wrong.join(' ')}`);
		if (unclear.length) notes.push(`${tag(s)}: type ${p}: inconclusive for ${unclear.join('; ')}`);
		if (verbose && !extra.length && !wrong.length) console.log(`ok   ${tag(s)}: type ${p}`);
	}
	const outOnly = s.types.map((c) => c.param).filter((p) => !params.includes(p));
	if (outOnly.length) notes.push(`${tag(s)}: output-only type parameter(s) ${outOnly.join(', ')} not probed`);
}

// Which since_version ORT resolves for op `name` at `opset` (default domain).
async function resolvedSince(name, opset) {
	const s = { domain: '', name, inputs: [], types: [] };
	for (const [nin, nout] of [[200, 1], [1, 200], [0, 1], [1, 0]]) {
		const msg = await errorOf(model({ s, opset, ins: Array(nin).fill(1), nout, attrs: [] }));
		const a = parseArity(msg);
		if (a) return a.since;
		if (/No Op registered for/.test(msg)) return 'absent';
		if (/is deprecated in domain_version/.test(msg)) return 'deprecated';
	}
	return 'unknown';
}

async function sweepVersions() {
	const names = [...new Set(table.schemas.filter((s) => !s.domain).map((s) => s.name))].sort();
	for (const name of names) {
		if (name === 'Constant') continue; // folded to an initializer before the checker sees it
		const vers = table.schemas.filter((s) => !s.domain && s.name === name);
		for (let v = 18; v <= table.max_opset; v++) {
			const got = await resolvedSince(name, v);
			const rec = vers.filter((s) => s.since <= v).pop();
			const want = !rec ? 'absent' : rec.deprecated ? 'deprecated' : rec.since;
			checks++;
			if (got !== want)
				mismatches.push(`${name} at opset ${v}: ORT resolves ${got === 'absent' || got === 'deprecated' ? got : name + '-' + got}, ` +
					`table ${want === 'absent' || want === 'deprecated' ? want : name + '-' + want}`);
		}
	}
}

// ------------------------------------------------------------------------ main
const scope = table.schemas.filter((s) => (s.domain === '' && s.since >= 18) || s.domain === 'com.microsoft');
for (const s of scope)
	if (s.domain === 'com.microsoft' && ORT_ONNX_DOMAIN[s.name]) {
		s.ortDomain = '';
		s.ortOpset = ORT_ONNX_DOMAIN[s.name];
	}
const allNames = [...new Set(table.schemas.flatMap((s) => s.attrs.map((a) => a.name)))].sort();
await sweepVersions();
for (const s of scope) {
	if (s.name === 'Constant' && !s.domain) {
		notes.push(`${tag(s)}: not checkable (ORT folds Constant nodes into initializers before checking them)`);
		continue;
	}
	await checkArity(s);
	await checkAttrs(s, allNames);
	if (doTypes) await checkTypes(s);
}
if (verbose || mismatches.length) for (const n of notes) console.log('note ' + n);
for (const m of mismatches) console.log('MISMATCH ' + m);
console.log(`verify_opschema_ort: checked ${scope.length} schemas (${checks} checks, ${sessions} ORT sessions, ` +
	`onnxruntime-node ${ort.env?.versions?.common ?? '?'}), mismatches ${mismatches.length}` +
	(notes.length ? `, ${notes.length} notes (--verbose lists them)` : ''));
process.exit(mismatches.length ? 1 : 0);
