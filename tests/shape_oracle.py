#!/usr/bin/python3
"""shape_oracle.py - checks graft's shape inference against python3-onnx's.

For each model, `graft shapes MODEL` prints one line per value ("name:
dtype[d0,d1,...]", symbols by name, '?' for an unknown dim, "[*]" for an
unknown rank).  This script runs onnx.shape_inference.infer_shapes on the
same model and compares every value python types (graph inputs,
initializers, value_info and outputs, bodies included):

  mismatch   python and graft disagree: another dtype, another rank, two
             different numbers, or two different symbols;
  missing    python knows a dim (or the rank, or the dtype) that graft leaves
             unknown;
  sharper    graft knows more than python (a number where python has a
             symbol or nothing): fine, counted for information.

python's "unk__N" symbols are names it makes up for dims it does not know;
they count as unknown dims.

With --static, every value graft prints must also have a fully known shape
(the static-shape corpus models); a value that does not is "unshaped".

    python3 tests/shape_oracle.py --graft build/graft MODEL_OR_DIR...
    python3 tests/shape_oracle.py --cmd ./scratch-shapes MODEL...   (runs CMD MODEL)

--strip-outputs first removes the main graph's declared output types (into a
temporary copy), so both sides must infer them: the ONNX node tests declare
every output, which would otherwise hide what inference gets wrong.

--data-prop also runs python's data propagation (Shape->Gather->Reshape
chains), which gives it more shapes to compare.  Exit status 1 if any model
has a mismatch, a missing shape, an unshaped value (--static), or graft
fails on it.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import onnx
import onnx.shape_inference

DTYPE_NAMES = {
    1: 'float', 2: 'uint8', 3: 'int8', 4: 'uint16', 5: 'int16', 6: 'int32', 7: 'int64',
    8: 'string', 9: 'bool', 10: 'float16', 11: 'double', 12: 'uint32', 13: 'uint64',
    14: 'complex64', 15: 'complex128', 16: 'bfloat16',
}


def parse_graft(text):
    """name -> (dtype name, dims list or None for unknown rank)."""
    out = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        name, _, ty = line.rpartition(': ')
        br = ty.index('[')
        dtype, dims = ty[:br], ty[br + 1:-1]
        if dims == '*':
            out[name] = (dtype, None)
        else:
            out[name] = (dtype, [d for d in dims.split(',')] if dims else [])
    return out


def python_types(model, data_prop):
    """name -> (elem_type, dims or None); dims are int, str (symbol) or None."""
    inferred = onnx.shape_inference.infer_shapes(model, data_prop=data_prop)
    types = {}

    def tensor_type(t):
        if not t.HasField('tensor_type'):
            return None
        tt = t.tensor_type
        if not tt.HasField('shape'):
            return (tt.elem_type, None)
        dims = []
        for d in tt.shape.dim:
            if d.HasField('dim_value'):
                dims.append(d.dim_value)
            elif d.HasField('dim_param') and d.dim_param and not d.dim_param.startswith('unk__'):
                dims.append(d.dim_param)
            else:
                dims.append(None)
        return (tt.elem_type, dims)

    def walk(g):
        for init in g.initializer:
            types[init.name] = (init.data_type, list(init.dims))
        for vi in list(g.input) + list(g.value_info) + list(g.output):
            t = tensor_type(vi.type)
            if t is not None:
                types[vi.name] = t
        for n in g.node:
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g)
                elif a.type == onnx.AttributeProto.GRAPHS:
                    for sg in a.graphs:
                        walk(sg)
    walk(inferred.graph)
    return types


def strip_outputs(model):
    for vo in model.graph.output:
        if vo.type.HasField('tensor_type'):
            vo.type.tensor_type.elem_type = 0
            vo.type.tensor_type.ClearField('shape')


def compare(path, argv, data_prop, static, verbose, strip=False):
    model = onnx.load(path)
    tmp = None
    if strip:
        strip_outputs(model)
        fd, tmp = tempfile.mkstemp(suffix='.onnx')
        os.close(fd)
        onnx.save(model, tmp)
    try:
        proc = subprocess.run(argv + [tmp or path], capture_output=True, text=True)
    finally:
        if tmp:
            os.unlink(tmp)
    if proc.returncode != 0 or not proc.stdout:
        print(f'{path}: graft failed ({proc.returncode}): {proc.stderr.strip()[:500]}')
        return False
    ours = parse_graft(proc.stdout)
    theirs = python_types(model, data_prop)
    counts = {'compared': 0, 'mismatch': 0, 'missing': 0, 'sharper': 0, 'unshaped': 0}
    notes = []

    def note(kind, name, msg):
        counts[kind] += 1
        if kind != 'sharper' or verbose:
            notes.append(f'  {kind}: {name}: {msg}')

    for name, (et, dims) in theirs.items():
        if name not in ours:
            if et or dims is not None:
                note('missing', name, 'not printed by graft')
            continue
        counts['compared'] += 1
        odt, odims = ours[name]
        pdt = DTYPE_NAMES.get(et, '?') if et else None
        if pdt and odt != pdt:
            note('mismatch' if odt != '?' else 'missing', name, f'dtype {odt}, python {pdt}')
        if dims is None:
            continue
        if odims is None:
            note('missing', name, f'rank unknown, python {dims}')
            continue
        if len(odims) != len(dims):
            note('mismatch', name, f'rank {len(odims)} {odims}, python {dims}')
            continue
        for i, (o, p) in enumerate(zip(odims, dims)):
            onum = o.isdigit()
            if isinstance(p, int):
                if onum and int(o) != p:
                    note('mismatch', name, f'dim {i}: {o}, python {p} ({odims} vs {dims})')
                elif not onum:
                    note('missing', name, f'dim {i}: {o}, python {p} ({odims} vs {dims})')
            elif isinstance(p, str):
                if onum:
                    note('sharper', name, f'dim {i}: {o}, python {p}')
                elif o == '?':
                    note('missing', name, f'dim {i}: ?, python {p} ({odims} vs {dims})')
                elif o != p:
                    note('mismatch', name, f'dim {i}: symbol {o}, python {p} ({odims} vs {dims})')
            elif o != '?':
                note('sharper', name, f'dim {i}: {o}, python unknown')
    if static:
        for name, (odt, odims) in ours.items():
            if odt == '?' or odims is None or not all(d.isdigit() for d in odims):
                note('unshaped', name, f'{odt}{odims if odims is not None else "[*]"}')
    bad = counts['mismatch'] + counts['missing'] + counts['unshaped']
    print(f'{path}: {len(ours)} values printed, {counts["compared"]} compared, '
          f'{counts["mismatch"]} mismatch, {counts["missing"]} missing, '
          f'{counts["sharper"]} sharper than python' + (f', {counts["unshaped"]} unshaped' if static else ''))
    for line in notes[:20]:
        print(line)
    if len(notes) > 20:
        print(f'  ... {len(notes) - 20} more')
    return bad == 0


def models(args):
    for p in args:
        if os.path.isdir(p):
            for root, _, files in sorted(os.walk(p)):
                for f in sorted(files):
                    if f.endswith('.onnx'):
                        yield os.path.join(root, f)
        else:
            yield p


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--graft', help='graft binary: runs "GRAFT shapes MODEL"')
    ap.add_argument('--cmd', help='a program printing the same format: runs "CMD MODEL"')
    ap.add_argument('--data-prop', action='store_true', help="python's data propagation on")
    ap.add_argument('--static', action='store_true', help='every value must get a fully known shape')
    ap.add_argument('--strip-outputs', action='store_true', help='infer the graph outputs too (see above)')
    ap.add_argument('-v', '--verbose', action='store_true', help='list "sharper" values too')
    ap.add_argument('paths', nargs='+')
    a = ap.parse_args()
    if a.cmd:
        argv = [a.cmd]
    else:
        argv = [a.graft or os.path.join(os.path.dirname(__file__), '..', 'build', 'graft'), 'shapes']
    ok = True
    n = 0
    for path in models(a.paths):
        n += 1
        ok &= compare(path, argv, a.data_prop, a.static, a.verbose, a.strip_outputs)
    print(f'{n} models, {"all agree" if ok else "FAILURES"}')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
