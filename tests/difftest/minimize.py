#!/usr/bin/env python3
"""tests/difftest/minimize.py - shrink a make difftest failure (docs/difftest.md).

minimize.py FAILDIR... [--graft build/graft] [--ort build/ort-tools]

FAILDIR is one build/difftest/failures/<config>-<seed>/.  Delta debugging
while the failure persists (same status: crash, graft-error, ort-refused,
differ-ordinary or differ-special, on the failing input set): drop graph
outputs, remove nodes (their consumers reconnected to one of the node's inputs
of the same dtype and shape, or the cut value made a graph input), drop what
became dead.  Then bisects graft optimize --max-rewrites N for the first
rewrite that breaks it.  Writes FAILDIR/min.onnx, min-optimized.onnx,
min-inputs/ and min-repro.txt (the repro line, the culprit rewrite and its rule).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen  # noqa: E402
from run import Ort, run_graft  # noqa: E402

NP = {'float': 'float32', 'float16': 'float16', 'double': 'float64', 'int32': 'int32', 'int64': 'int64',
      'bool': 'bool'}


class Case:
    def __init__(self, fdir, args):
        self.fdir, self.args = fdir, args
        self.meta = json.load(open(os.path.join(fdir, 'failure.json')))
        self.tmp = os.path.join(fdir, 'min-work')
        shutil.rmtree(self.tmp, ignore_errors=True)
        os.makedirs(self.tmp)
        self.special = self.meta['set'].startswith('sp')
        # the failing input set, by name, and the symbolic dims' values
        self.tensors = {}
        sdir = os.path.join(fdir, self.meta['set'])
        for f in sorted(os.listdir(sdir)):
            t = onnx.TensorProto()
            t.ParseFromString(open(os.path.join(sdir, f), 'rb').read())
            self.tensors[t.name] = numpy_helper.to_array(t)
        self.bind = {}
        m = onnx.load(os.path.join(fdir, 'model.onnx'))
        for vi in m.graph.input:
            if vi.name in self.tensors:
                for d, n in zip(vi.type.tensor_type.shape.dim, self.tensors[vi.name].shape):
                    if d.dim_param:
                        self.bind[d.dim_param] = n
        self.ort = Ort(args.ort)
        self.calls = 0

    def shapes(self, path):
        """{value: (numpy dtype, dims as strings)} from graft shapes."""
        p = subprocess.run([self.args.graft, 'shapes', path], capture_output=True, text=True)
        out = {}
        for line in p.stdout.splitlines():
            name, _, t = line.rpartition(': ')
            if '[' not in t:
                continue
            dt, dims = t.split('[', 1)
            dims = dims.rstrip(']')
            if dt in NP and '*' not in dims and '?' not in dims:
                out[name] = (NP[dt], tuple(x for x in dims.split(',') if x))
        return out

    def write_inputs(self, m, folder):
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        rng = np.random.default_rng(1)
        for i, vi in enumerate(m.graph.input):
            if vi.name in self.tensors:
                a = self.tensors[vi.name]
            else:
                tt = vi.type.tensor_type
                dt = gen.FROM_TP[tt.elem_type]
                shape = tuple(d.dim_value if d.HasField('dim_value') else self.bind[d.dim_param] for d in tt.shape.dim)
                if dt in gen.FLOATS:
                    a = rng.uniform(-1, 1, size=shape).astype(dt)
                    if self.special and a.size:
                        a = np.where(rng.random(shape) < 0.25, np.array(rng.choice(gen.specials(dt), size=shape)).astype(dt), a).astype(dt)
                elif dt in gen.INTS:
                    a = rng.integers(-4, 5, size=shape).astype(dt)
                else:
                    a = rng.random(shape) < 0.5
                a = np.asarray(a, dtype=dt)
            with open(os.path.join(folder, f'input_{i}.pb'), 'wb') as f:
                f.write(numpy_helper.from_array(a, vi.name).SerializeToString())

    def fails(self, m, extra=(), tag='cand'):
        """Does model m still fail the same way?"""
        self.calls += 1
        path = os.path.join(self.tmp, f'{tag}.onnx')
        opt = os.path.join(self.tmp, f'{tag}.opt.onnx')
        try:
            onnx.save(m, path)
            self.write_inputs(m, os.path.join(self.tmp, f'{tag}-in'))
        except Exception:
            return False
        st, detail = run_graft(self.args.graft, path, opt, os.path.join(self.tmp, f'{tag}.json'),
                               self.meta['flags'] + list(extra))
        want = self.meta['status']
        if want in ('crash', 'graft-error'):
            return st == want and detail.split(':')[0] == self.meta['detail'].split(':')[0]
        if st is not None:
            return False
        req = {'id': 0, 'a': path, 'variants': [{'name': 'b', 'path': opt}],
               'inputs': [{'dir': os.path.join(self.tmp, f'{tag}-in'), 'special': self.special}]}
        ans = self.ort.ask(req)
        if ans is None:  # onnxruntime died: on the optimized model alone is the failure run.py saw
            alone = self.ort.ask({**req, 'variants': []})
            return want == 'ort-refused' and 'crashed' in self.meta['detail'] and \
                alone is not None and alone.get('a') == 'ok'
        if ans.get('error') or ans['a'] != 'ok':
            return False
        got = {'refused': 'ort-refused'}.get(ans['variants'][0]['status'], ans['variants'][0]['status'])
        # a special-set failure may turn into an ordinary-looking one: same set, still a failure
        return got == want or (want == 'differ-special' and got == 'differ-ordinary' and self.special)


def clean(m):
    """Drop nodes nothing reads, then unused initializers and inputs."""
    g = m.graph
    while True:
        used = {i for n in g.node for i in n.input} | {o.name for o in g.output}
        keep = [n for n in g.node if any(o in used for o in n.output if o)]
        if len(keep) == len(g.node):
            break
        del g.node[:]
        g.node.extend(keep)
    used = {i for n in g.node for i in n.input} | {o.name for o in g.output}
    inits = [t for t in g.initializer if t.name in used]
    del g.initializer[:]
    g.initializer.extend(inits)
    ins = [v for v in g.input if v.name in used]
    del g.input[:]
    g.input.extend(ins)
    return m


def tensor_vi(name, t, case):
    dt, dims = t
    return helper.make_tensor_value_info(name, gen.TP[dt], [int(d) if d.lstrip('-').isdigit() else d for d in dims])


def without_node(m, idx, types, mode, case):
    m2 = onnx.ModelProto()
    m2.CopyFrom(m)
    g = m2.graph
    n = g.node[idx]
    outs = [o for o in n.output if o]
    ren = {}
    for o in outs:
        if o not in types:
            return None
        if mode == 'bypass':
            src = next((i for i in n.input if i and types.get(i) == types[o]), None)
            if src is None:
                return None
            ren[o] = src
        else:
            g.input.append(tensor_vi(o, types[o], case))
    del g.node[idx]
    if ren:
        for x in g.node:
            for k, i in enumerate(x.input):
                if i in ren:
                    x.input[k] = ren[i]
        outs_now = [o.name for o in g.output]
        for o in g.output:
            if o.name in ren:
                if ren[o.name] in outs_now:
                    return None
                t = types.get(ren[o.name])
                o.name = ren[o.name]
                if t:
                    o.type.CopyFrom(tensor_vi(o.name, t, case).type)
    return clean(m2)


def minimize(case):
    m = clean(onnx.load(os.path.join(case.fdir, 'model.onnx')))
    if not case.fails(m):
        return None, 'the failure does not reproduce'
    changed = True
    while changed:
        changed = False
        for k in range(len(m.graph.output) - 1, -1, -1):
            if len(m.graph.output) < 2:
                break
            m2 = onnx.ModelProto(); m2.CopyFrom(m)
            del m2.graph.output[k]
            clean(m2)
            if case.fails(m2):
                m, changed = m2, True
        onnx.save(m, os.path.join(case.tmp, 'cur.onnx'))
        types = case.shapes(os.path.join(case.tmp, 'cur.onnx'))
        k = len(m.graph.node) - 1
        while k >= 0:
            if k < len(m.graph.node):
                for mode in ('bypass', 'cut'):
                    m2 = without_node(m, k, types, mode, case)
                    if m2 is not None and case.fails(m2):
                        m, changed = m2, True
                        onnx.save(m, os.path.join(case.tmp, 'cur.onnx'))
                        types = case.shapes(os.path.join(case.tmp, 'cur.onnx'))
                        break
            k -= 1
    return m, None


def bisect(case, m):
    """Smallest --max-rewrites N that still fails, and the Nth firing."""
    if case.meta['status'] == 'graft-error':
        return None
    rep = os.path.join(case.tmp, 'full.json')
    path = os.path.join(case.tmp, 'min.onnx')
    onnx.save(m, path)
    run_graft(case.args.graft, path, os.path.join(case.tmp, 'full.opt.onnx'), rep, case.meta['flags'])
    try:
        total = json.load(open(rep))['rewrites']
    except Exception:
        return None
    lo, hi = 0, total  # fails(hi) holds (it is the full run)
    if case.fails(m, ['--max-rewrites', '0'], tag='bis'):
        return {'n': 0, 'note': 'fails with no rewrite at all (--max-rewrites 0)'}
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if case.fails(m, ['--max-rewrites', str(mid)], tag='bis'):
            hi = mid
        else:
            lo = mid
    rep2 = os.path.join(case.tmp, 'bis.json')
    run_graft(case.args.graft, path, os.path.join(case.tmp, 'bis.opt.onnx'), rep2, case.meta['flags'] + ['--max-rewrites', str(hi)])
    fir = json.load(open(rep2))['firings']
    f = fir[hi - 1] if len(fir) >= hi else None
    return {'n': hi, 'total': total, 'rule': f and f['rule'], 'source': f and f.get('source', f.get('level')),
            'matched': f and f.get('matched')}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('dirs', nargs='+')
    ap.add_argument('--graft', default='build/graft')
    ap.add_argument('--ort', default='build/ort-tools')
    args = ap.parse_args()
    args.graft, args.ort = os.path.abspath(args.graft), os.path.abspath(args.ort)
    for what, path in (('graft', args.graft), ('ONNX Runtime tools (--ort)', os.path.join(args.ort, 'lib', 'common.mjs'))):
        if not os.path.exists(path):
            sys.exit(f'minimize.py: no {what} at {path}')
    rc = 0
    for d in args.dirs:
        d = os.path.abspath(d)
        case = Case(d, args)
        try:
            m, why = minimize(case)
            if m is None:
                print(f'{d}: {why}')
                rc = 1
                continue
            b = bisect(case, m)
            onnx.save(m, os.path.join(d, 'min.onnx'))
            case.write_inputs(m, os.path.join(d, 'min-inputs'))
            flags = ' '.join(case.meta['flags'])
            opt = f'{args.graft} optimize {d}/min.onnx -o {d}/min-optimized.onnx {flags}'.rstrip()
            run_graft(args.graft, os.path.join(d, 'min.onnx'), os.path.join(d, 'min-optimized.onnx'),
                      os.path.join(d, 'min-report.json'), case.meta['flags'])
            repro = opt if case.meta['status'] in ('crash', 'graft-error') else \
                f'{opt} && node {args.ort}/ort-compare.mjs {d}/min.onnx {d}/min-optimized.onnx --inputs {d}/min-inputs'
            culprit = ''
            if b and b.get('rule'):
                culprit = f"first breaking rewrite: #{b['n']} of {b['total']}: {b['rule']} ({b['source']}) at {' '.join(b['matched'] or [])}"
            elif b:
                culprit = b.get('note', '')
            with open(os.path.join(d, 'min-repro.txt'), 'w') as f:
                f.write(repro + '\n')
                f.write(f"# {case.meta['status']}: {case.meta['detail']}\n# {culprit}\n")
            print(f'{d}: {len(m.graph.node)} nodes (from {len(onnx.load(os.path.join(d, "model.onnx")).graph.node)}), '
                  f'{case.calls} tries; {culprit}')
        finally:
            case.ort.close()
            shutil.rmtree(case.tmp, ignore_errors=True)
    return rc


if __name__ == '__main__':
    sys.exit(main())
