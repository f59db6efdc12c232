#!/usr/bin/env python3
"""tests/difftest/run.py - graft's random-graph differential test against ONNX
Runtime (make difftest; docs/difftest.md).

For each seed: gen.py draws a valid graph, build/graft optimizes it in each
configuration, ortbatch.mjs (one long-lived node process per worker) runs the
original and the optimized models on the same ordinary and special-value
inputs and compares them.  Failures go to OUT/failures/<config>-<seed>/
(model.onnx, optimized.onnx, inputs, report.json, repro.txt); a summary per
configuration ends the run.  Exit 1 when a failure is not in the known list.
"""
import argparse
import json
import re
import multiprocessing as mp
import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIGS = {
    'default': [],
    'opset23': ['--target-opset', '23'],
    'vendor': ['--allow-vendor-ops'],
    'basic': ['--level', 'basic'],
    'extended': ['--level', 'extended'],
    'layout': ['--level', 'layout'],
    'shuffle': ['--shuffle', '1'],
}
STATUSES = ['agree', 'crash', 'graft-error', 'ort-refused', 'differ-ordinary', 'differ-special']
FAILING = STATUSES[1:]
INPUT_SETS = [('in0', False), ('in1', False), ('sp0', True), ('sp1', True)]


def special_consts(m):
    """Does the model hold a non-finite, huge (> 1e30) or denormal float constant?"""
    ts = list(m.graph.initializer) + [a.t for n in m.graph.node if n.op_type == 'Constant' for a in n.attribute if a.name == 'value']
    for t in ts:
        if t.data_type in (1, 10, 11):
            a = numpy_helper.to_array(t).astype(np.float64).ravel()
            tiny = np.finfo(numpy_helper.to_array(t).dtype).tiny
            if a.size and (not np.isfinite(a).all() or (np.abs(a) > 1e30).any() or ((a != 0) & (np.abs(a) < tiny)).any()):
                return True
    return False


def has_f16(m):
    """Does the model hold a float16 value (an input, initializer or Cast to float16)?"""
    g = m.graph
    return (any(v.type.tensor_type.elem_type == 10 for v in list(g.input) + list(g.output)) or
            any(t.data_type == 10 for t in g.initializer) or
            any(n.op_type == 'Cast' and any(a.name == 'to' and a.i == 10 for a in n.attribute) for n in g.node))


def write_inputs(g, seed, folder):
    for k, (name, special) in enumerate(INPUT_SETS):
        d = os.path.join(folder, name)
        os.makedirs(d, exist_ok=True)
        arrs = gen.make_inputs(g, seed * 4 + k, special)
        for i, (n, a) in enumerate(arrs.items()):
            with open(os.path.join(d, f'input_{i}.pb'), 'wb') as f:
                f.write(numpy_helper.from_array(a, n).SerializeToString())


def run_graft(graft, model, out, report, flags, timeout=120):
    """(status, detail): agree so far / crash / graft-error."""
    cmd = [graft, 'optimize', model, '-o', out, '--report', report] + flags
    try:
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        return 'crash', f'timeout after {timeout} s'
    err = p.stderr.decode(errors='replace')
    if 'AddressSanitizer' in err or 'runtime error:' in err or 'LeakSanitizer' in err:
        line = next((l for l in err.splitlines() if 'Sanitizer' in l or 'runtime error' in l), '')
        return 'crash', f'sanitizer: {line.strip()[:200]}'
    if p.returncode < 0:
        return 'crash', f'signal {-p.returncode} ({signal.Signals(-p.returncode).name})'
    if p.returncode not in (0, 1, 3):
        return 'crash', f'exit {p.returncode}: {err.strip().splitlines()[-1] if err.strip() else ""}'
    if p.returncode == 1:
        # the reason: the first line naming the model (path: node ...: why), else graft's own line
        lines = [l for l in err.splitlines() if 'no memory plan' not in l and l.strip()]
        why = next((l for l in lines if not l.startswith('graft:')), lines[0] if lines else err.strip())
        return 'graft-error', re.sub(r'^\S+\.onnx: ', '', why)[:200]
    if p.returncode == 3:
        return 'graft-error', 'stopped: fuel or a rewrite cycle (exit 3)'
    return None, ''


def rules_fired(report):
    try:
        with open(report) as f:
            return sorted({fi['rule'] for fi in json.load(f).get('firings', [])})
    except Exception:
        return []


class Ort:
    """The worker's ortbatch.mjs process."""

    def __init__(self, tools):
        self.tools = tools
        self.p = None

    def start(self):
        self.p = subprocess.Popen(['node', os.path.join(HERE, 'ortbatch.mjs'), self.tools], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)

    def ask(self, req):
        if self.p is None or self.p.poll() is not None:
            self.start()
        try:
            self.p.stdin.write(json.dumps(req) + '\n')
            self.p.stdin.flush()
            line = self.p.stdout.readline()
        except BrokenPipeError:
            line = ''
        if not line:  # ORT died (a crash inside onnxruntime): restart, report it
            self.p.wait()
            self.p = None
            return None
        return json.loads(line)

    def close(self):
        if self.p is not None:
            self.p.stdin.close()
            self.p.wait()


def one_seed(seed, args, inst, ort, work, saved):
    rec = {'seed': seed}
    g, rej = gen.generate(seed, inst)
    rec['gen_rejects'] = rej
    if g is None:
        rec['gen'] = 'failed'
        return rec
    rec.update(opset=g.opset, dtype=g.fdt, nodes=len(g.model.graph.node), tags=g.tags, special_consts=special_consts(g.model))
    d = os.path.join(work, str(seed))
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    model = os.path.join(d, 'model.onnx')
    onnx.save(g.model, model)
    write_inputs(g, seed, d)
    res, variants = {}, []
    for cfg in args.configs:
        out, rep = os.path.join(d, f'opt-{cfg}.onnx'), os.path.join(d, f'report-{cfg}.json')
        st, detail = run_graft(args.graft, model, out, rep, CONFIGS[cfg])
        res[cfg] = {'status': st, 'detail': detail}
        if st is None:
            variants.append({'name': cfg, 'path': out})
    req = {'id': seed, 'a': model, 'variants': variants,
           'inputs': [{'dir': os.path.join(d, n), 'special': sp} for n, sp in INPUT_SETS]}
    ans = ort.ask(req)
    if ans is None:  # onnxruntime died: on the original (then it is dropped) or on which variant?
        ans = ort.ask({**req, 'variants': []})
        if ans is None:
            ans = {'a': 'refused: onnxruntime crashed running the original'}
        else:
            ans['variants'] = []
            for v in variants:
                one = ort.ask({**req, 'variants': [v]})
                ans['variants'].append(one['variants'][0] if one else
                                       {'name': v['name'], 'status': 'refused',
                                        'detail': 'onnxruntime crashed on the optimized model'})
    if ans.get('error') or ans['a'] != 'ok':
        rec['ort'] = ans.get('error') or ans['a']   # the original is refused: dropped
        shutil.rmtree(d, ignore_errors=True)
        rec['dropped'] = True
        return rec
    else:
        for v in ans['variants']:
            st = {'agree': 'agree', 'refused': 'ort-refused'}.get(v['status'], v['status'])
            res[v['name']] = {'status': st, 'detail': v['detail']}
    f16 = has_f16(g.model)
    for cfg, r in res.items():
        r['rules'] = rules_fired(os.path.join(d, f'report-{cfg}.json'))
        if r['status'] != 'agree':
            r['f16'] = f16
            r['cause'] = culprit(args, ort, d, cfg, r)
            key = (cfg, r['status'], r['cause'])
            saved[key] = saved.get(key, 0) + 1
            if saved[key] <= args.save_per_cause:
                save_failure(args, seed, cfg, d, r)
                r['saved'] = True
    rec['configs'] = res
    shutil.rmtree(d, ignore_errors=True)
    return rec


def set_of(detail):
    """The input set a differ/refused detail names (in0 when it names none)."""
    if detail.startswith('input set'):
        return detail.split(':')[0].replace('input set ', '')
    if detail.startswith('run ('):  # 'run (special set 2): ...'
        return INPUT_SETS[int(detail.split(':')[0].split()[-1].rstrip(')'))][0]
    return 'in0'


def culprit(args, ort, d, cfg, r):
    """The first rewrite that breaks it: bisect --max-rewrites N on the failing input set.
    Returns 'RULE' (the Nth firing's rule), '(none)' when it fails with no rewrite at all."""
    st = r['status']
    if st in ('crash', 'graft-error'):
        if st == 'crash':
            return r['detail'].split(':')[0]
        why = r['detail'].split(': ', 1)[-1] if r['detail'].startswith('node ') else r['detail']
        return re.sub(r"'[^']*'", "'_'", why)[:60]
    try:
        total = json.load(open(os.path.join(d, f'report-{cfg}.json')))['rewrites']
    except Exception:
        return '?'
    sname = set_of(r['detail'])
    sp = sname.startswith('sp')
    model = os.path.join(d, 'model.onnx')
    out, rep = os.path.join(d, 'bis.onnx'), os.path.join(d, 'bis.json')

    def fails(n):
        if run_graft(args.graft, model, out, rep, CONFIGS[cfg] + ['--max-rewrites', str(n)])[0] is not None:
            return False
        ans = ort.ask({'id': 0, 'a': model, 'variants': [{'name': cfg, 'path': out}],
                       'inputs': [{'dir': os.path.join(d, sname), 'special': sp}]})
        return bool(ans and ans.get('variants') and ans['variants'][0]['status'] != 'agree')

    # ORT's CPU provider computes float16 ops it has no kernel for in float32 (its
    # InsertedPrecisionFreeCast), and which ones depends on the graph: a weak reference
    tag = ' [f16]' if r.get('f16') else ''
    if fails(0):
        return '(none)' + tag
    lo, hi = 0, total
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fails(mid):
            hi = mid
        else:
            lo = mid
    run_graft(args.graft, model, out, rep, CONFIGS[cfg] + ['--max-rewrites', str(hi)])
    try:
        fir = json.load(open(rep))['firings']
        return (fir[hi - 1]['rule'] if len(fir) >= hi else '?') + tag
    except Exception:
        return '?'


def save_failure(args, seed, cfg, d, r):
    f = os.path.join(args.out, 'failures', f'{cfg}-{seed}')
    shutil.rmtree(f, ignore_errors=True)
    os.makedirs(f)
    shutil.copy(os.path.join(d, 'model.onnx'), f)
    for src, dst in ((f'opt-{cfg}.onnx', 'optimized.onnx'), (f'report-{cfg}.json', 'report.json')):
        if os.path.exists(os.path.join(d, src)):
            shutil.copy(os.path.join(d, src), os.path.join(f, dst))
    for n, _ in INPUT_SETS:
        shutil.copytree(os.path.join(d, n), os.path.join(f, n))
    flags = ' '.join(CONFIGS[cfg])
    opt = f'{args.graft} optimize {f}/model.onnx -o {f}/optimized.onnx {flags}'.rstrip()
    s = 'in0'
    if r['status'] in ('crash', 'graft-error'):
        repro = opt
    else:
        s = set_of(r['detail'])
        repro = f'{opt} && node {args.ort}/ort-compare.mjs {f}/model.onnx {f}/optimized.onnx --inputs {f}/{s}'
    with open(os.path.join(f, 'failure.json'), 'w') as fh:
        json.dump({'config': cfg, 'flags': CONFIGS[cfg], 'seed': seed, 'status': r['status'], 'detail': r['detail'],
                   'set': s, 'cause': r['cause'], 'rules': r['rules']}, fh)
    with open(os.path.join(f, 'repro.txt'), 'w') as fh:
        fh.write(repro + '\n')
        fh.write(f'# {r["status"]}: {r["detail"]}\n# first breaking rewrite: {r["cause"]}\n'
                 f'# rules fired: {" ".join(r["rules"])}\n')


def worker(i, seeds, args, q, deadline):
    inst = gen.load_instances(args.instances) if args.instances else None
    ort = Ort(args.ort)
    work = os.path.join(args.out, 'work', f'w{i}')
    os.makedirs(work, exist_ok=True)
    saved = {}  # (config, status, cause) -> failures seen by this worker
    try:
        for s in seeds:
            if deadline and time.time() > deadline:
                break
            try:
                q.put(one_seed(s, args, inst, ort, work, saved))
            except Exception as e:  # a harness bug: report it, go on
                q.put({'seed': s, 'harness_error': f'{type(e).__name__}: {e}'})
    finally:
        ort.close()
        q.put(None)


def load_known(path):
    """known.txt lines 'CONFIG SEED [STATUS] CAUSE': SEED a number (that failure) or * (every
    failure of that cause); CONFIG may be * too.  CAUSE is the summary's cause column (ending
    in *: every cause that begins so; starting with *: every cause that ends so).  Without
    STATUS a line covers differences only (differ-ordinary, differ-special): a crash, an
    error or an output ORT refuses is tolerated only by a line that names its status."""
    known = []
    if path and os.path.exists(path):
        for line in open(path):
            line = line.split('#')[0].strip()
            if line:
                cfg, seed, rest = line.split(None, 2)
                first = rest.split(None, 1)
                status = first[0] if first[0] in STATUSES else None
                cause = first[1] if status and len(first) > 1 else rest
                known.append((cfg, seed, status, cause.strip()))
    known += [('*', '*', 'differ-special', r) for r in moderate_data_rules()]
    return known


def moderate_data_rules():
    """The library rules tagged [moderate_data] (docs/rule-language.md): their tag says they
    differ from the written-out form only where data nears overflow or underflow, which is
    what the special-value input sets hold, so their differ-special failures are known."""
    top = os.path.join(HERE, '..', '..', 'rules')
    head = re.compile(r'^\s*rule\s+(\w+)\s*\[([^\]]*)\]')
    names = []
    for dp, _, fs in os.walk(top):
        for f in sorted(fs):
            if f.endswith('.rules'):
                for line in open(os.path.join(dp, f)):
                    m = head.match(line)
                    if m and 'moderate_data' in re.split(r'[\s,]+', m.group(2)):
                        names.append(m.group(1))
    return names


def is_known(known, cfg, seed, status, cause, special=False):
    """Does a line cover this failure?  A CAUSE written 'NAME with-special-constants' covers
    NAME's failures only on graphs holding special constants (special: the graph's)."""
    def covers(st):
        return st == status if st else status in ('differ-ordinary', 'differ-special')
    def named(k):  # a CAUSE ending in * names every cause it begins, one starting with * every one it ends
        if k.endswith('*'):
            return cause.startswith(k[:-1])
        return cause.endswith(k[1:]) if k.startswith('*') else k == cause
    def qualified(k):
        base, _, q = k.partition(' ')
        return (base, special) if q == 'with-special-constants' else (k, True)
    return any(c in (cfg, '*') and covers(st) and qualified(k)[1]
               and (s == '*' and named(qualified(k)[0]) or s == str(seed))
               for c, s, st, k in known)


def summary(recs, configs, known, brief_to=None):
    """Print the counts per config and the failures by cause (to the file brief_to instead of
    stdout when given: CI's log keeps the counts and what is unknown); return the unknown ones."""
    out = open(brief_to, 'w') if brief_to else sys.stdout
    done = [r for r in recs if 'configs' in r]
    dropped = [r for r in recs if r.get('dropped')]
    genfail = [r for r in recs if r.get('gen') == 'failed']
    herr = [r for r in recs if r.get('harness_error')]
    print(f'\ndifftest: {len(recs)} seeds, {len(done)} graphs compared, {len(dropped)} dropped (ONNX Runtime refused the '
          f'original), {len(genfail)} seeds without a valid graph, {len(herr)} harness errors')
    for r in herr[:5]:
        print(f'  harness error, seed {r["seed"]}: {r["harness_error"]}')
    print(f'\n{"config":10} {"graphs":>7} ' + ' '.join(f'{s:>15}' for s in STATUSES))
    unknown = []
    for cfg in configs:
        c = {s: 0 for s in STATUSES}
        for r in done:
            c[r['configs'][cfg]['status']] += 1
        print(f'{cfg:10} {len(done):7} ' + ' '.join(f'{c[s]:15}' for s in STATUSES))
    print('\nfailures by cause (config, status, first breaking rewrite (bisected --max-rewrites), count, an example):',
          file=out)
    groups = {}
    for r in done:
        for cfg in configs:
            x = r['configs'][cfg]
            if x['status'] == 'agree':
                continue
            key = (cfg, x['status'], x.get('cause', '?'))
            groups.setdefault(key, []).append(r)
            if not is_known(known, cfg, r['seed'], x['status'], x.get('cause', '?'), bool(r.get('special_consts'))):
                unknown.append((cfg, r['seed'], x['status'], x.get('cause', '?'), x['detail']))
    for (cfg, st, why), rs in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1], -len(kv[1]))):
        ex = rs[0]['configs'][cfg]['detail']
        seeds = [x['seed'] for x in rs]
        nsp = sum(1 for x in rs if x.get('special_consts'))
        print(f'  {cfg:8} {st:16} {why:24} {len(rs):5}x ({nsp} with special constants)  seeds {" ".join(map(str, seeds[:4]))}{" ..." if len(rs) > 4 else ""}'
              f'\n{"":28}e.g. {ex[:140]}', file=out)
    if brief_to:
        out.close()
        print(f'\n{len(groups)} (config, status, cause) classes of failures: listed in {brief_to}')
    return unknown


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--seeds', default='0-99', help='A-B (inclusive)')
    ap.add_argument('--seconds', type=float, default=0, help='stop starting seeds after this long (0: no limit)')
    ap.add_argument('--jobs', type=int, default=2)
    ap.add_argument('--configs', default='default,opset23,vendor')
    ap.add_argument('--graft', default='build/graft')
    ap.add_argument('--ort', default='build/ort-tools')
    ap.add_argument('--out', default='build/difftest')
    ap.add_argument('--instances', default=None, help='folder of graft verify --keep instances (default: OUT/instances, remade when graft is newer)')
    ap.add_argument('--known', default=os.path.join(HERE, 'known.txt'))
    ap.add_argument('--keep-old', action='store_true', help='keep OUT/failures from earlier runs')
    ap.add_argument('--save-per-cause', type=int, default=5,
                    help='failures saved per (config, status, cause) and worker (default 5)')
    ap.add_argument('--brief', action='store_true',
                    help='the failures by cause go to OUT/causes.txt, not stdout (CI)')
    ap.add_argument('--progress', type=int, default=1000, help='a progress line every N seeds')
    args = ap.parse_args()
    args.configs = args.configs.split(',')
    for c in args.configs:
        if c not in CONFIGS:
            sys.exit(f'run.py: unknown config {c} (known: {", ".join(CONFIGS)})')
    a, _, b = args.seeds.partition('-')
    seeds = list(range(int(a), int(b or a) + 1))
    args.graft = os.path.abspath(args.graft)
    args.out = os.path.abspath(args.out)
    args.ort = os.path.abspath(args.ort)
    if not args.keep_old:
        shutil.rmtree(os.path.join(args.out, 'failures'), ignore_errors=True)
    os.makedirs(args.out, exist_ok=True)
    if args.instances is None:  # the rule library's firing instances, remade when graft is newer
        args.instances = os.path.join(args.out, 'instances')
        stamp = os.path.join(args.instances, '.made')
        if not os.path.exists(stamp) or os.path.getmtime(stamp) < os.path.getmtime(args.graft):
            shutil.rmtree(args.instances, ignore_errors=True)
            top = os.path.join(HERE, '..', '..', 'rules')
            rules = sorted(os.path.join(dp, f) for dp, _, fs in os.walk(top) for f in fs if f.endswith('.rules'))
            subprocess.run([args.graft, 'verify', *rules, '--keep', '3', '--instances', '10', '-o', args.instances],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            open(stamp, 'w').close()
    t0 = time.time()
    deadline = t0 + args.seconds if args.seconds else 0
    q = mp.Queue()
    procs = [mp.Process(target=worker, args=(i, seeds[i::args.jobs], args, q, deadline)) for i in range(args.jobs)]
    for p in procs:
        p.start()
    recs, live = [], len(procs)
    log = open(os.path.join(args.out, 'results.jsonl'), 'w')
    while live:
        r = q.get()
        if r is None:
            live -= 1
            continue
        recs.append(r)
        log.write(json.dumps(r) + '\n')
        log.flush()
        if len(recs) % args.progress == 0:
            bad = sum(1 for x in recs for c in x.get('configs', {}).values() if c['status'] != 'agree')
            print(f'  {len(recs)} seeds, {time.time() - t0:.0f} s, {bad} failures', flush=True)
    for p in procs:
        p.join()
    el = time.time() - t0
    print(f'{len(recs)} seeds in {el:.0f} s ({len(recs) / el:.1f} graphs/s, {args.jobs} workers)')
    recs.sort(key=lambda r: r['seed'])
    unknown = summary(recs, args.configs, load_known(args.known),
                      os.path.join(args.out, 'causes.txt') if args.brief else None)
    print(f'\nfailures saved under {args.out}/failures/<config>-<seed>/ (repro.txt in each)')
    if unknown:
        print(f'\n{len(unknown)} failure(s) not in {args.known}:')
        for cfg, s, st, cause, det in unknown[:30]:
            print(f'  {cfg} {s} {st} {cause}: {det[:150]}')
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
