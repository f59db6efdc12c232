#!/usr/bin/env node
// ort_gate.mjs - the CI gate over what graft writes: every optimized model
// must load in ONNX Runtime wherever its original loads, and agree with the
// original on the test-data inputs wherever ONNX Runtime can be fed them.
//
// One Node process checks the whole list (starting ORT per model would cost
// minutes). Used by tests/ort_gate.sh, which optimizes the models first.
//
// usage: node tests/ort_gate.mjs ORT_TOOLS LIST [--verbose]
//   LIST: one model per line: NAME<TAB>ORIGINAL<TAB>OPTIMIZED[<TAB>SETDIR...]
//         (SETDIRs hold input_K.pb, as in ONNX's test data; without any,
//         two input sets are generated with seeds 0 and 1)
// Prints one FAIL line per problem and, last, one summary line of counts:
//   models, originals ORT loads, outputs that load, models compared (and
//   agree), models not feedable by onnxruntime-node (sequence, optional or
//   map inputs/outputs: tests/ort_gate.sh checks those on graft's evaluator,
//   listed with NOFEED lines), originals ORT refuses (listed with REFUSED
//   lines, checked on graft's evaluator too) or cannot run (crashes on,
//   hangs on, or computes in a shape the model does not declare: CRASH,
//   HANG and ORTWRONG lines).
// --no-kernel-ok (tests/convert_gate.sh): an output ORT refuses only because
// it has no kernel for an op at the version graft converted to ("Could not
// find an implementation for RoiAlign(22)") is counted, not failed: the model
// is valid ONNX, ORT lags the standard.
// --expect-refused (tests/convert_gate.sh): where ORT refuses the original
// for want of a kernel (an opset-1..6 model: ORT has no kernel for Add-6 ...)
// and SETDIRs are given, the output must load and reproduce the sets' output_K.pb instead
// (counted: "checked against the test data"; a TESTDATA line for each that
// agrees).
// --tolerances FILE (tests/verify_ort.sh): lines `RULE<TAB>X`, a rule's declared
// [tolerance X].  A model named RULE.K whose output misses the tolerances
// below still agrees when it is within what the rule claims, judged as graft
// verify judges it (docs/rule-language.md, "Tolerances"): the same non-finite
// class at every element, every finite one within X * max(1, max |original|),
// X scaled by 2^13 for float16 (float32 and float64 as they are).
// Exit 0 when nothing failed, 1 otherwise, 2 on bad arguments.
//
// ONNX Runtime itself crashes on some models (its Einsum over an empty input
// dies of SIGFPE) or never ends (its float16 Conv of 0 channels), which
// would end the gate: the list runs in a worker process that records, before
// each model, its place and counts so far (--worker START FILE).  When a
// worker dies of a signal or stays on one model over --model-seconds, that
// model is judged alone: its original runs in a process of its own, and if
// ORT crashes or hangs on that too the model is counted with the originals
// ORT cannot run (a CRASH or HANG line), else graft's output crashed ORT
// (FAIL).  A new worker goes on after it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';

const [toolsDir, listFile, ...flags] = process.argv.slice(2);
if (!toolsDir || !listFile) {
  process.stderr.write('usage: node tests/ort_gate.mjs ORT_TOOLS LIST [--verbose]\n');
  process.exit(2);
}
const verbose = flags.includes('--verbose');
const noKernelOk = flags.includes('--no-kernel-ok');
const expectRefused = flags.includes('--expect-refused');
// --nonfinite-ok: an output whose finite elements agree, and that differs only
// where one side is inf or NaN, is counted apart (NONFINITE), not failed: a
// fusion computes the same formula in another order, and meets inf/NaN in
// other places (docs/evaluator.md, "Differences make difftest accepts").
const nonFiniteOk = flags.includes('--nonfinite-ok');
// --model-seconds N: the longest ORT may take over one model (both sides,
// every input set) before the gate takes it for hung (default 300).
const modelSeconds = flags.includes('--model-seconds') ? Number(flags[flags.indexOf('--model-seconds') + 1]) : 300;
const tolFile = flags.includes('--tolerances') ? flags[flags.indexOf('--tolerances') + 1] : null;
const ruleTol = new Map((tolFile ? fs.readFileSync(tolFile, 'utf8').split('\n') : [])
  .filter((l) => l.trim()).map((l) => { const [r, x] = l.split('\t'); return [r, Number(x)]; }));
const lib = (f) => import(pathToFileURL(path.resolve(toolsDir, 'lib', f)).href);
const common = await lib('common.mjs');
const { readTensorFile } = await lib('onnx-pb.mjs');

// Optimizations may reassociate float arithmetic (folding runs on graft's
// kernels, not ORT's): the tolerances of ort-compare.mjs, looser for fp16.
const TOL = { rtol: 1e-3, atol: 1e-4 };
const TOL16 = { rtol: 1e-2, atol: 1e-3 };

const msg = (e) => common.errMsg(e).split('\n')[0];
const counts = { tolerance: 0, expected: 0, expectedAgree: 0, nonFinite: 0, models: 0, origLoads: 0, optLoads: 0, compared: 0, agree: 0, nofeed: 0, origRefused: 0, origRunFails: 0, noKernel: 0 };
let failed = 0;
const fail = (name, what) => { failed++; console.log(`FAIL ${name}: ${what}`); };

// Inputs of one test-data set as ORT tensors, or null when any of them is not
// a tensor onnxruntime-node can take (SequenceProto, OptionalProto, ...).
function readSet(dir, session) {
  const files = common.listTensorFiles(dir, 'input');
  const tensors = [];
  for (const f of files) {
    try { tensors.push({ ...readTensorFile(fs.readFileSync(f)) }); } catch { return null; }
  }
  try { return common.matchInputs(session.inputNames, tensors, dir); } catch { return null; }
}

// Inputs generated from the model's input metadata, or null when ORT's tools
// cannot make them.
function generated(session, modelPath, seed) {
  const opts = { seed, intRange: [0, 100], dims: {}, shapes: {}, modelPath };
  try { return common.prepareInputs(session, opts).list; } catch { return null; }
}

// An output of the original whose shape is not the one the model declares
// (every dim a number): ORT computed the original wrongly, and nothing can
// be compared with it (its ReduceSum over an empty input keeps the reduced
// axis where keepdims is 0).  A description, or null.
function misshapen(session, outs) {
  for (const [i, m] of session.outputMetadata.entries()) {
    const want = m.shape, got = outs[i] && outs[i].dims;
    if (!m.isTensor || !Array.isArray(want) || !got || !want.every((d) => typeof d === 'number')) continue;
    if (want.join(',') !== got.join(',')) return `output '${m.name}' of the original is [${got}], the model declares [${want}]`;
  }
  return null;
}

const allTensors = (s) => s.inputMetadata.every((m) => m.isTensor) && s.outputMetadata.every((m) => m.isTensor);

// Same dtype and size, float32/float64, every element where both sides are
// finite within TOL, and some element where one side is not.
function onlyNonFinite(ta, tb) {
  if (ta.type !== tb.type || !['float32', 'float64'].includes(ta.type) || ta.data.length !== tb.data.length) return false;
  if (ta.dims.join(',') !== tb.dims.join(',')) return false;
  let nonFinite = false;
  for (let i = 0; i < ta.data.length; i++) {
    const x = ta.data[i], y = tb.data[i];
    if (!Number.isFinite(x) || !Number.isFinite(y)) { nonFinite = true; continue; }
    if (Math.abs(x - y) > TOL.atol + TOL.rtol * Math.abs(x)) return false;
  }
  return nonFinite;
}

// Within the rule's declared tolerance (--tolerances), as graft verify
// judges it: the model's name is RULE.K.
function withinRuleTolerance(name, ta, tb) {
  const x = ruleTol.get(name.replace(/\.[0-9]+$/, ''));
  const scale = { float32: 1, float64: 1, float16: 8192 }[ta.type];
  const num = (v) => (ta.type === 'float16' ? common.halfToFloat(v) : Number(v));
  if (x === undefined || !scale || ta.type !== tb.type || ta.data.length !== tb.data.length) return false;
  if (ta.dims.join(',') !== tb.dims.join(',')) return false;
  let big = 1;
  for (const v of ta.data) if (Number.isFinite(num(v))) big = Math.max(big, Math.abs(num(v)));
  for (let i = 0; i < ta.data.length; i++) {
    const a = num(ta.data[i]), b = num(tb.data[i]);
    if (Number.isFinite(a) !== Number.isFinite(b)) return false;
    if (!Number.isFinite(a)) { if (Number.isNaN(a) !== Number.isNaN(b) || (!Number.isNaN(a) && a !== b)) return false; continue; }
    if (Math.abs(a - b) > x * scale * big) return false;
  }
  return true;
}

// The output alone on the test data: each set's output_K.pb, by position.
async function againstTestData(name, opt, sets) {
  let b;
  try { b = await common.createSession(opt, { logLevel: 4 }); } catch (e) {
    if (noKernelOk && /Could not find an implementation for /.test(msg(e))) {
      counts.noKernel++;
      console.log(`NOKERNEL ${name}: ${msg(e)}`);
    } else {
      fail(name, `ONNX Runtime refuses graft's output: ${msg(e)}`);
    }
    return;
  }
  counts.expected++;
  let ok = true;
  for (const dir of sets) {
    const feeds = readSet(dir, b);
    if (!feeds || !allTensors(b)) { ok = false; fail(name, `ORT cannot be fed ${path.basename(dir)}`); break; }
    let rb;
    try { rb = await common.runSession(b, feeds); } catch (e) {
      fail(name, `ONNX Runtime cannot run graft's output on ${path.basename(dir)}: ${msg(e)}`);
      ok = false; break;
    }
    const want = common.listTensorFiles(dir, 'output').map((f) => readTensorFile(fs.readFileSync(f)));
    if (want.length !== rb.length) { fail(name, `${rb.length} outputs, the test data has ${want.length}`); ok = false; break; }
    want.forEach((ta, i) => {
      const r = common.compareTensors(ta, rb[i], ta.type === 'float16' ? TOL16 : TOL);
      if (!r.allclose) {
        ok = false;
        fail(name, `output ${i} differs from ${path.basename(dir)}/output_${i}.pb: ` +
          (!r.dtypeOk ? `dtype ${r.dtypeRef} -> ${r.dtypeGot}` : !r.shapeOk ?
            `shape ${common.fmtShape(r.shapeRef)} -> ${common.fmtShape(r.shapeGot)}` :
            `${r.bad} of ${r.count} elements, max abs ${common.fmtNum(r.maxAbs)}`));
      }
    });
    if (!ok) break;
  }
  if (ok) { counts.expectedAgree++; console.log(`TESTDATA ${name}`); }
  await b.release();
}

const lines = fs.readFileSync(listFile, 'utf8').split('\n').filter((l) => l.trim());
const workerAt = flags.indexOf('--worker');
if (workerAt < 0) await supervise();
else await work(Number(flags[workerAt + 1]), flags[workerAt + 2]);

// The list in workers, a new one after each that ORT crashed or hung on
// (see the top).
async function supervise() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ort-gate-'));
  const progress = path.join(dir, 'progress.json');
  for (let start = 0; start < lines.length;) {
    fs.rmSync(progress, { force: true });
    const w = await runWorker(start, progress);
    let p = null;
    try { p = JSON.parse(fs.readFileSync(progress, 'utf8')); } catch { /* the worker did not start */ }
    if (!p || (!w.signal && w.status !== 0 && w.status !== 1)) {
      console.log(`FAIL gate: the worker ended with ${w.signal || `status ${w.status}`} before model ${start + 1}`);
      failed++;
      break;
    }
    for (const k of Object.keys(counts)) counts[k] += p.counts[k];
    failed += p.failed;
    start = p.index;
    if (!w.signal) break;
    const [name, orig, , ...sets] = lines[start].split('\t');
    const what = w.hung ? `runs over ${modelSeconds} s` : `dies of ${w.signal}`;
    counts.models++;
    const run = spawnSync(process.execPath, [path.join(toolsDir, 'ort-run.mjs'), orig,
      ...(sets.length ? ['--inputs', sets[0]] : ['--seed', '0', '--int-range', '0:100'])],
    { stdio: 'ignore', timeout: modelSeconds * 1000, killSignal: 'SIGKILL' });
    if (run.signal) {
      counts.origRunFails++;
      console.log(`${w.hung ? 'HANG' : 'CRASH'} ${name}: ONNX Runtime ${what} on the original too`);
    } else {
      fail(name, `ONNX Runtime ${what} on graft's output`);
    }
    start++;
  }
  fs.rmSync(dir, { recursive: true, force: true });
  summary();
}

// One worker from model `start` on; killed when it stays on one model over
// --model-seconds.  Resolves to its exit status or signal, and whether it hung.
function runWorker(start, progress) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), toolsDir, listFile, ...flags,
      '--worker', String(start), progress], { stdio: ['ignore', 'inherit', 'inherit'] });
    let last = null, since = Date.now(), hung = false;
    const timer = setInterval(() => {
      let at = null;
      try { at = fs.readFileSync(progress, 'utf8'); } catch { /* not written yet */ }
      if (at !== last) { last = at; since = Date.now(); } else if (Date.now() - since > modelSeconds * 1000) {
        hung = true;
        child.kill('SIGKILL');
      }
    }, 1000);
    child.on('exit', (status, signal) => { clearInterval(timer); resolve({ status, signal, hung }); });
  });
}

async function work(start, progress) {
  const save = (index) => fs.writeFileSync(progress, JSON.stringify({ index, counts, failed }));
  await common.initOrt(4);
  for (let index = start; index < lines.length; index++) {
    save(index);
    await one(lines[index]);
  }
  save(lines.length);
  process.exit(failed ? 1 : 0);
}

async function one(line) {
  const [name, orig, opt, ...sets] = line.split('\t');
  counts.models++;
  let a, b;
  try { a = await common.createSession(orig, { logLevel: 4 }); } catch (e) {
    counts.origRefused++;
    console.log(`REFUSED ${name}`);
    if (verbose) console.log(`  ORT: ${msg(e)}`);
    if (expectRefused && sets.length && /Could not find an implementation for /.test(msg(e))) await againstTestData(name, opt, sets);
    return;
  }
  counts.origLoads++;
  try { b = await common.createSession(opt, { logLevel: 4 }); } catch (e) {
    if (noKernelOk && /Could not find an implementation for /.test(msg(e))) {
      counts.noKernel++;
      console.log(`NOKERNEL ${name}: ${msg(e)}`);
    } else {
      fail(name, `ONNX Runtime refuses graft's output: ${msg(e)}`);
    }
    await a.release();
    return;
  }
  counts.optLoads++;
  let fed = 0, ok = true, runFail = false, nf = false, tol = false;
  if (allTensors(a) && allTensors(b)) {
    // the test data's inputs, or (a model that ships none) two generated
    // sets, as ort-compare.mjs makes them
    const inputSets = sets.length ? sets.map((dir) => [dir, readSet(dir, a)]) :
      [0, 1].map((seed) => [`seed ${seed}`, generated(a, orig, seed)]);
    for (const [dir, feeds] of inputSets) {
      if (!feeds) { fed = 0; break; }
      let ra, rb;
      try { ra = await common.runSession(a, feeds); } catch (e) {
        runFail = true;
        if (verbose) console.log(`skip ${name}: ORT cannot run the original: ${msg(e)}`);
        break;
      }
      const wrong = misshapen(a, ra);
      if (wrong) {
        runFail = true;
        console.log(`ORTWRONG ${name}: ONNX Runtime's ${wrong}`);
        break;
      }
      try { rb = await common.runSession(b, feeds); } catch (e) {
        fail(name, `ONNX Runtime cannot run graft's output on ${path.basename(dir)}: ${msg(e)}`);
        ok = false; break;
      }
      fed++;
      if (ra.length !== rb.length) { fail(name, `${ra.length} outputs became ${rb.length}`); ok = false; break; }
      ra.forEach((ta, i) => {
        const tb = rb[i];
        const r = common.compareTensors(ta, tb, ta.type === 'float16' ? TOL16 : TOL);
        if (!r.allclose && ta.name === tb.name && withinRuleTolerance(name, ta, tb)) {
          tol = true;
          console.log(`TOLERANCE ${name}: output '${ta.name}' within the rule's declared tolerance, not the gate's`);
          return;
        }
        if (!r.allclose && ta.name === tb.name && nonFiniteOk && onlyNonFinite(ta, tb)) {
          nf = true;
          console.log(`NONFINITE ${name}: output '${ta.name}' differs only where one side is inf or NaN`);
          return;
        }
        if (!r.allclose || ta.name !== tb.name) {
          ok = false;
          fail(name, `output '${ta.name}' differs on ${path.basename(dir)}: ` +
            (ta.name !== tb.name ? `renamed '${tb.name}'` :
              !r.dtypeOk ? `dtype ${r.dtypeRef} -> ${r.dtypeGot}` :
                !r.shapeOk ? `shape ${common.fmtShape(r.shapeRef)} -> ${common.fmtShape(r.shapeGot)}` :
                  `${r.bad} of ${r.count} elements, max abs ${common.fmtNum(r.maxAbs)}`));
        }
      });
      if (!ok) break;
    }
  }
  if (runFail) counts.origRunFails++;
  else if (fed > 0) { counts.compared++; if (ok && nf) counts.nonFinite++; else if (ok) counts.agree++; if (ok && tol) counts.tolerance++; }
  else if (ok) { counts.nofeed++; console.log(`NOFEED ${name}`); }
  await a.release();
  await b.release();
}
function summary() {
  const c = counts;
  console.log(`gate: ${c.models} models; ORT loads ${c.origLoads} originals and ${c.optLoads} outputs; ` +
    `${c.compared} compared, ${c.agree} agree; ${c.nofeed} not feedable by onnxruntime-node; ` +
    `${c.origRefused} originals refused, ${c.origRunFails} originals ORT cannot run` +
    (expectRefused ? `; ${c.expected} outputs of refused originals checked against the test data, ${c.expectedAgree} agree` : '') +
    (noKernelOk ? `; ${c.noKernel} outputs use an op version ORT has no kernel for` : '') +
    (nonFiniteOk ? `; ${c.nonFinite} models differ only where one side is inf or NaN` : '') +
    (tolFile ? `; ${c.tolerance} agree only within their rule's declared tolerance` : ''));
  process.exit(failed ? 1 : 0);
}
