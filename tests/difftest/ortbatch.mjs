#!/usr/bin/env node
// tests/difftest/ortbatch.mjs - the long-lived ONNX Runtime runner of make
// difftest (docs/difftest.md).  One process serves many model groups: each
// stdin line is a JSON request
//   {"id": ..., "a": "model.onnx", "variants": [{"name": "default", "path": "opt.onnx"}, ...],
//    "inputs": [{"dir": "in0", "special": false}, {"dir": "sp0", "special": true}, ...]}
// and gets one JSON line back on stdout:
//   {"id": ..., "a": "ok" | "refused: MSG", "variants": [{"name", "status", "detail"}]}
// with status agree | refused | differ-ordinary | differ-special.  Sessions:
// CPU, 1 thread, graph optimization disabled.  Each variant runs on the same
// input sets as the original (input_K.pb files, matched by name) and every
// output is compared with the original's (see compare() for the policy).
// Usage: node ortbatch.mjs ORT_TOOLS_DIR    (the folder of ort-run.mjs, with node_modules)
import path from 'node:path';
import readline from 'node:readline';
import { pathToFileURL } from 'node:url';

const tools = process.argv[2];
if (!tools) {
  process.stderr.write('usage: node ortbatch.mjs ORT_TOOLS_DIR\n');
  process.exit(2);
}
const common = await import(pathToFileURL(path.join(path.resolve(tools), 'lib', 'common.mjs')).href);
const { createSession, runSession, loadTensorDir, compareTensors, initOrt, errMsg } = common;
await initOrt(4);

// The policy: dtype and shape equal; NaN agrees with NaN, an infinity only
// with the same infinity, +0 with -0; finite floats within
// |b-a| <= atol + rtol*|a| (rtol 1e-3, atol 1e-4; float16 1e-2 and 1e-3, its
// epsilon being 1e-3); integers and bools exactly.
const TOL = { float16: { rtol: 1e-2, atol: 1e-3 }, default: { rtol: 1e-3, atol: 1e-4 } };

function compare(ya, yb, namesA, namesB) {
  if (namesA.join('\u0000') !== namesB.join('\u0000')) {
    return `outputs differ: [${namesA.join(', ')}] vs [${namesB.join(', ')}]`;
  }
  for (let i = 0; i < ya.length; i++) {
    const a = ya[i], b = yb[i];
    const c = compareTensors(a, b, TOL[a.type] || TOL.default);
    if (!c.dtypeOk) return `output '${namesA[i]}': dtype ${a.type} vs ${b.type}`;
    if (!c.shapeOk) return `output '${namesA[i]}': shape [${a.dims}] vs [${b.dims}]`;
    if (!c.allclose) {
      const k = firstBad(a, b, TOL[a.type] || TOL.default);
      const at = k >= 0 ? ` (first at element ${k}: ${show(a, k)} vs ${show(b, k)})` : '';
      return `output '${namesA[i]}': ${c.bad} of ${c.count} elements differ${at}`;
    }
  }
  return null;
}

function num(t, k) {
  const v = t.data[k];
  return t.type === 'float16' ? common.halfToFloat(v) : Number(v);
}

// The first element compareTensors counts as bad (same rules).
function firstBad(a, b, { rtol, atol }) {
  for (let k = 0; k < a.data.length; k++) {
    if (a.type === 'int64' || a.type === 'uint64') { if (a.data[k] !== b.data[k]) return k; continue; }
    const x = num(a, k), y = num(b, k);
    if (Number.isNaN(x) || Number.isNaN(y)) { if (!(Number.isNaN(x) && Number.isNaN(y))) return k; continue; }
    if (x === y) continue;
    if (!Number.isFinite(x) || !Number.isFinite(y) || !(Math.abs(x - y) <= atol + rtol * Math.abs(x))) return k;
  }
  return -1;
}

function show(t, k) {
  return t.type === 'float16' ? String(common.halfToFloat(t.data[k])) : String(t.data[k]);
}

async function session(file) {
  return createSession(file, { opt: 'disabled', threads: 1, logLevel: 4 });
}

async function runGroup(req) {
  const out = { id: req.id, a: 'ok', variants: [] };
  const sets = req.inputs.map((s) => ({ ...s, list: loadTensorDir(s.dir, 'input') }));
  let sa;
  const refA = [];
  try {
    sa = await session(req.a);
    for (const s of sets) refA.push(await runSession(sa, s.list));
  } catch (e) {
    out.a = `refused: ${errMsg(e).split('\n')[0]}`;
    return out;
  } finally {
    if (sa) await sa.release();
  }
  for (const v of req.variants) {
    const r = { name: v.name, status: 'agree', detail: '' };
    out.variants.push(r);
    let sb;
    try {
      sb = await session(v.path);
    } catch (e) {
      r.status = 'refused'; r.detail = `load: ${errMsg(e).split('\n')[0]}`;
      continue;
    }
    try {
      for (let k = 0; k < sets.length; k++) {
        const s = sets[k];
        const want = new Set(sb.inputNames);
        const feed = s.list.filter((t) => want.has(t.name));
        const missing = sb.inputNames.filter((n) => !s.list.some((t) => t.name === n));
        if (missing.length) {
          r.status = 'differ-ordinary'; r.detail = `interface: optimized model wants inputs ${missing.join(', ')}`;
          break;
        }
        let yb;
        try {
          yb = await runSession(sb, feed);
        } catch (e) {
          r.status = 'refused'; r.detail = `run (${s.special ? 'special' : 'ordinary'} set ${k}): ${errMsg(e).split('\n')[0]}`;
          break;
        }
        const d = compare(refA[k], yb, refA[k].map((t) => t.name), yb.map((t) => t.name));
        if (d) {
          const st = s.special ? 'differ-special' : 'differ-ordinary';
          if (r.status === 'agree' || (r.status === 'differ-special' && st === 'differ-ordinary')) {
            r.status = st; r.detail = `input set ${path.basename(s.dir)}: ${d}`;
          }
        }
      }
    } finally {
      await sb.release();
    }
  }
  return out;
}

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of rl) {
  if (!line.trim()) continue;
  let res;
  try {
    res = await runGroup(JSON.parse(line));
  } catch (e) {
    res = { id: null, error: errMsg(e) };
    try { res.id = JSON.parse(line).id; } catch { /* keep null */ }
  }
  process.stdout.write(JSON.stringify(res) + '\n');
}
