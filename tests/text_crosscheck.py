#!/usr/bin/python3
"""text_crosscheck.py - checks graft's printed text against ONNX's own parser.

For each model, the text `graft print MODEL` writes is parsed with
onnx.parser.parse_model and compared with the model as onnx.load reads it:
ir_version, opset imports, producer fields, and the main graph recursively
(inputs and outputs with their types, initializers by dtype, dims and bytes,
nodes by op, domain, name, inputs, outputs, and attributes by value; floats
by bits).  value_info is not compared: graft's IR does not model it.

    python3 tests/text_crosscheck.py --graft build/graft DIR_OR_MODEL...
    python3 tests/text_crosscheck.py TEXT MODEL [TEXT MODEL...]

Exit status 1 if any model mismatches, or graft print fails other than by
refusing what the syntax cannot hold ("... cannot be printed": type_proto
and sparse attributes, sparse initializers); each is reported with its path.

The installed python3-onnx 1.12 parser knows less of the syntax than the
printer writes (newer ONNX reads all of it).  Before parsing, this script
lowers the text for it where that is exact: quoted names become plain
identifiers (on both sides of the comparison), "[name]" node names are
dropped (then node names are not compared), non-tensor types (seq, map,
optional) are dropped (then those types are not compared), a trailing ""
in a name list becomes an empty place.  Models that still need what 1.12
cannot read (inf/nan/subnormal floats, escaped quotes in strings, empty
lists, float16/bfloat16/complex tensors, lists of tensors or graphs, a
leading empty input or output) are counted as "unsupported by this onnx.parser", not
as failures; --strict makes them failures.  --no-lower skips the lowering.
"""
import argparse
import math
import os
import re
import struct
import subprocess
import sys

import onnx
import onnx.parser
from onnx import numpy_helper

IDENT = re.compile(r'^[A-Za-z_][A-Za-z0-9_]*$')
OLD_PARSER = tuple(int(x) for x in onnx.__version__.split('.')[:2]) < (1, 13)
# Tensor element types whose literals ONNX 1.12's parser cannot read.
OLD_UNSUPPORTED_DTYPES = {10, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}

# ---- lowering the text for an older parser ----------------------------------

TOKEN = re.compile(r'''
    (?P<ws>\s+|\#[^\n]*)
  | (?P<str>"(?:[^"\\]|\\.)*")
  | (?P<arrow>=>)
  | (?P<num>-?(?:[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?|inf(?:inity)?|nan))
  | (?P<id>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<p>.)''', re.X | re.S)


def tokenize(text):
    return [(m.lastgroup, m.group()) for m in TOKEN.finditer(text)]


def unquote(s):
    return re.sub(r'\\(.)', r'\1', s[1:-1])


def mangle(name):
    return '_q_' + ''.join(c if c.isalnum() else '_%02x' % ord(c) for c in name)


def lower(text, names):
    """Rewrite text for ONNX 1.12's parser (see the module comment).  `names`
    is the set of non-identifier names of the model (values, nodes, graphs,
    dim params); a quoted string is a name unless it sits where values go."""
    toks = [t for t in tokenize(text) if t[0] != 'ws']
    out = []
    stack = []          # open brackets: (char, kind)
    i = 0
    while i < len(toks):
        kind, s = toks[i]
        prev = out[-1][1] if out else ''
        ctx = stack[-1] if stack else ('', '')
        if s in '([{<' and kind == 'p':
            if s == '{':
                k = 'block' if prev in (')', '>') else 'data'
            elif s == '[':
                k = 'nodename' if ctx[1] == 'block' and prev in ('{', ')', '>') else \
                    'dims' if out and out[-1][0] == 'id' else 'list'
            elif s == '(':
                k = 'type' if prev in ('seq', 'map', 'optional', 'sparse_tensor') else 'names'
            else:
                k = 'attrs'
            if k == 'nodename':     # drop "[name]"
                j = i + 1
                while toks[j][1] != ']':
                    j += 1
                i = j + 1
                continue
            if k == 'type' and ctx[1] == 'names':   # drop seq(...) and the like
                out.pop()
                depth, j = 1, i + 1
                while depth:
                    depth += {'(': 1, ')': -1}.get(toks[j][1], 0) if toks[j][0] == 'p' else 0
                    j += 1
                i = j
                continue
            stack.append((s, k))
        elif s in ')]}>' and kind == 'p' and stack:
            stack.pop()
        elif kind == 'str':
            value_place = prev in ('=', ':') or ctx[1] in ('list', 'data')
            if not value_place:
                name = unquote(s)
                if name == '' and ctx[1] in ('names', 'block') and prev == ',' and \
                        i + 1 < len(toks) and toks[i + 1][1] in (')', '='):
                    i += 1            # trailing "": ONNX 1.12 reads "x," as x and an empty place
                    continue
                if name in names:
                    out.append(('id', mangle(name)))
                    i += 1
                    continue
        out.append((kind, s))
        i += 1
    return ' '.join(s for _, s in out)

# ---- comparing ---------------------------------------------------------------


def graphs_of(g):
    yield g
    for n in g.node:
        for a in n.attribute:
            if a.type == a.GRAPH:
                yield from graphs_of(a.g)
            for sg in a.graphs:
                yield from graphs_of(sg)


def odd_names(model):
    """Non-identifier names of the model (as the printer quotes them)."""
    names = set()
    for g in graphs_of(model.graph):
        names.add(g.name)
        for v in list(g.input) + list(g.output) + list(g.value_info):
            names.add(v.name)
            t = v.type
            while t.HasField('sequence_type') or t.HasField('optional_type'):
                t = t.sequence_type.elem_type if t.HasField('sequence_type') else t.optional_type.elem_type
            if t.HasField('tensor_type'):
                names.update(d.dim_param for d in t.tensor_type.shape.dim)
        names.update(t.name for t in g.initializer)
        for n in g.node:
            names.add(n.name)
            names.update(n.input)
            names.update(n.output)
    return {n for n in names if n and not IDENT.match(n)}


def rename(model, names):
    """The model with every name in `names` mangled, as lower() does in the text."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    fix = lambda s: mangle(s) if s in names else s
    for g in graphs_of(m.graph):
        g.name = fix(g.name)
        for v in list(g.input) + list(g.output):
            v.name = fix(v.name)
            t = v.type
            if t.HasField('tensor_type'):
                for d in t.tensor_type.shape.dim:
                    if d.HasField('dim_param'):
                        d.dim_param = fix(d.dim_param)
        for t in g.initializer:
            t.name = fix(t.name)
        for n in g.node:
            n.name = fix(n.name)
            n.input[:] = [fix(x) for x in n.input]
            n.output[:] = [fix(x) for x in n.output]
    return m


def old_parser_limits(model):
    """What in the model ONNX 1.12's parser cannot read (empty if nothing)."""
    why = set()

    def bad_float(f):
        return math.isinf(f) or math.isnan(f) or (f != 0 and abs(f) < 1.1754943508222875e-38)

    def tensor(t):
        if t.data_type in OLD_UNSUPPORTED_DTYPES:
            why.add('tensor of type %d' % t.data_type)
        elif t.data_type in (1, 11):
            a = numpy_helper.to_array(t).ravel()
            if any(bad_float(float(x)) for x in a):
                why.add('inf/nan/subnormal in a tensor')
        elif t.data_type == 8:
            if any(b'"' in s or b'\\' in s for s in t.string_data):
                why.add('escape in a string')
    for g in graphs_of(model.graph):
        for t in g.initializer:
            tensor(t)
        for n in g.node:
            if n.input and n.input[0] == '':
                why.add('leading empty input')
            if len(n.output) > 1 and n.output[0] == '':
                why.add('leading empty output')
            for a in n.attribute:
                if a.type == a.FLOAT and bad_float(a.f):
                    why.add('inf/nan/subnormal attribute')
                if a.type == a.FLOATS and any(bad_float(f) for f in a.floats):
                    why.add('inf/nan/subnormal attribute')
                if a.type in (a.STRING,) and (b'"' in a.s or b'\\' in a.s):
                    why.add('escape in a string')
                if a.type == a.STRINGS and any(b'"' in s or b'\\' in s for s in a.strings):
                    why.add('escape in a string')
                if a.type in (a.INTS, a.FLOATS, a.STRINGS) and not (a.ints or a.floats or a.strings):
                    why.add('empty list attribute')
                if a.type in (a.TENSORS, a.GRAPHS):
                    why.add('list of tensors or graphs (onnx.parser drops them)')
                if a.type == a.TENSOR:
                    tensor(a.t)
    return why


def type_repr(tp, compare_other=True):
    w = tp.WhichOneof('value')
    if w is None:
        return None
    if w == 'tensor_type':
        tt = tp.tensor_type
        if not tt.elem_type:
            return None
        if not tt.HasField('shape'):
            return (tt.elem_type, None)
        return (tt.elem_type, tuple(d.dim_value if d.HasField('dim_value') else
                                    d.dim_param if d.HasField('dim_param') else '?'
                                    for d in tt.shape.dim))
    return str(tp) if compare_other else None


def float_bits(f):
    return struct.pack('<f', f)


def tensor_key(t):
    a = numpy_helper.to_array(t)
    body = [bytes(s) for s in a.ravel()] if t.data_type == 8 else a.tobytes()
    return (t.data_type, tuple(t.dims), body)


class Mismatch(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Mismatch(what)


def compare_attr(a, b, where, opts):
    check(a.name == b.name, '%s: attribute %s vs %s' % (where, a.name, b.name))
    where = '%s: attribute %s' % (where, a.name)
    check(a.type == b.type, '%s: type %d vs %d' % (where, a.type, b.type))
    if a.type == a.FLOAT:
        check(float_bits(a.f) == float_bits(b.f), '%s: %r vs %r' % (where, a.f, b.f))
    elif a.type == a.INT:
        check(a.i == b.i, '%s: %d vs %d' % (where, a.i, b.i))
    elif a.type == a.STRING:
        check(a.s == b.s, '%s: %r vs %r' % (where, a.s, b.s))
    elif a.type == a.FLOATS:
        check([float_bits(f) for f in a.floats] == [float_bits(f) for f in b.floats], '%s differs' % where)
    elif a.type == a.INTS:
        check(list(a.ints) == list(b.ints), '%s differs' % where)
    elif a.type == a.STRINGS:
        check(list(a.strings) == list(b.strings), '%s differs' % where)
    elif a.type == a.TENSOR:
        check(tensor_key(a.t) == tensor_key(b.t), '%s: tensor differs' % where)
    elif a.type == a.TENSORS:
        check([tensor_key(t) for t in a.tensors] == [tensor_key(t) for t in b.tensors], '%s differs' % where)
    elif a.type == a.GRAPH:
        compare_graph(a.g, b.g, opts)
    elif a.type == a.GRAPHS:
        check(len(a.graphs) == len(b.graphs), '%s: graph count' % where)
        for x, y in zip(a.graphs, b.graphs):
            compare_graph(x, y, opts)


def compare_values(xs, ys, what, opts):
    check([v.name for v in xs] == [v.name for v in ys],
          '%s: %s vs %s' % (what, [v.name for v in xs], [v.name for v in ys]))
    for x, y in zip(xs, ys):
        tx = type_repr(x.type, opts['other_types'])
        if not opts['other_types'] and x.type.WhichOneof('value') not in (None, 'tensor_type'):
            continue
        check(tx == type_repr(y.type), '%s %s: type %s vs %s' % (what, x.name, tx, type_repr(y.type)))


def compare_graph(a, b, opts):
    g = 'graph %s' % a.name
    check(a.name == b.name, 'graph name %r vs %r' % (a.name, b.name))
    compare_values(a.input, b.input, g + ': inputs', opts)
    compare_values(a.output, b.output, g + ': outputs', opts)
    check([t.name for t in a.initializer] == [t.name for t in b.initializer], g + ': initializer names')
    for x, y in zip(a.initializer, b.initializer):
        check(tensor_key(x) == tensor_key(y), '%s: initializer %s differs' % (g, x.name))
    check(len(a.node) == len(b.node), '%s: %d vs %d nodes' % (g, len(a.node), len(b.node)))
    for i, (x, y) in enumerate(zip(a.node, b.node)):
        where = '%s: node %d (%s)' % (g, i, x.op_type)
        check((x.op_type, x.domain) == (y.op_type, y.domain),
              '%s: is %s.%s' % (where, y.domain, y.op_type))
        if opts['node_names']:
            check(x.name == y.name, '%s: name %r vs %r' % (where, x.name, y.name))
        check(list(x.input) == list(y.input), '%s: inputs %s vs %s' % (where, list(x.input), list(y.input)))
        check(list(x.output) == list(y.output), '%s: outputs %s vs %s' % (where, list(x.output), list(y.output)))
        check([t.name for t in x.attribute] == [t.name for t in y.attribute], where + ': attribute names')
        for p, q in zip(x.attribute, y.attribute):
            compare_attr(p, q, where, opts)


def compare_model(orig, parsed, opts):
    check(orig.ir_version == parsed.ir_version, 'ir_version %d vs %d' % (orig.ir_version, parsed.ir_version))
    ops = lambda m: [(o.domain, o.version) for o in m.opset_import]
    check(ops(orig) == ops(parsed), 'opset_import %s vs %s' % (ops(orig), ops(parsed)))
    for f in ('producer_name', 'producer_version', 'domain', 'model_version', 'doc_string'):
        check(getattr(orig, f) == getattr(parsed, f), '%s %r vs %r' % (f, getattr(orig, f), getattr(parsed, f)))
    compare_graph(orig.graph, parsed.graph, opts)

# ---- driver ------------------------------------------------------------------


def crosscheck(text, model_path, args):
    """Returns (status, message): status is 'ok', 'unsupported' or 'FAIL'."""
    orig = onnx.load(model_path, load_external_data=False)
    opts = {'node_names': True, 'other_types': True}
    limits = old_parser_limits(orig) if OLD_PARSER else set()
    if OLD_PARSER and not args.no_lower:
        names = odd_names(orig)
        lowered = lower(text, names)
        if lowered != ' '.join(s for k, s in tokenize(text) if k != 'ws'):
            orig = rename(orig, names)
            opts = {'node_names': not any(n.name for g in graphs_of(orig.graph) for n in g.node),
                    'other_types': False}
        text = lowered
    try:
        parsed = onnx.parser.parse_model(text)
    except Exception as e:  # onnx.parser raises its own ParseError
        msg = str(e).replace('\n', ' | ')[:300]
        if limits:
            return 'unsupported', 'needs %s (%s)' % (', '.join(sorted(limits)), msg)
        return 'FAIL', 'onnx.parser: ' + msg
    try:
        compare_model(orig, parsed, opts)
    except Mismatch as e:
        if limits:
            return 'unsupported', 'needs %s (%s)' % (', '.join(sorted(limits)), e)
        return 'FAIL', str(e)
    return 'ok', ''


def models_under(paths):
    for p in paths:
        if os.path.isdir(p):
            for root, _, files in os.walk(p, followlinks=True):
                for f in sorted(files):
                    if f.endswith('.onnx'):
                        yield os.path.join(root, f)
        else:
            yield p


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--graft', help='run GRAFT print on each model (arguments: models or folders)')
    ap.add_argument('--strict', action='store_true', help='count unsupported models as failures')
    ap.add_argument('--no-lower', action='store_true', help='give the text to onnx.parser unchanged')
    ap.add_argument('-v', '--verbose', action='store_true', help='report unsupported models too')
    ap.add_argument('paths', nargs='+')
    args = ap.parse_args()

    jobs = []   # (text or None, model path, error)
    if args.graft:
        for model in sorted(set(models_under(args.paths))):
            r = subprocess.run([args.graft, 'print', model], capture_output=True, text=True)
            if r.returncode != 0:
                jobs.append((None, model, 'graft print failed: ' + r.stderr.strip().replace('\n', ' | ')))
            else:
                jobs.append((r.stdout, model, None))
    else:
        if len(args.paths) % 2:
            ap.error('without --graft, give TEXT MODEL pairs')
        for t, m in zip(args.paths[::2], args.paths[1::2]):
            with open(t, encoding='utf-8', errors='surrogateescape') as f:
                jobs.append((f.read(), m, None))

    counts = {'ok': 0, 'unsupported': 0, 'FAIL': 0, 'not printable': 0}
    for text, model, err in jobs:
        if err:
            # what the syntax (or graft's IR) cannot hold is refused by name;
            # any other failure of graft print is a failure
            known = 'cannot be printed' in err
            counts['not printable' if known else 'FAIL'] += 1
            if not known or args.verbose:
                print('%s: %s' % (model, err))
            continue
        status, msg = crosscheck(text, model, args)
        counts[status] += 1
        if status == 'FAIL' or (status == 'unsupported' and (args.verbose or args.strict)):
            print('%s: %s: %s' % (model, status, msg))
    print('text_crosscheck: %d models: %d match, %d unsupported by onnx.parser %s, %d mismatch, '
          '%d not printable' % (len(jobs), counts['ok'], counts['unsupported'], onnx.__version__,
                                counts['FAIL'], counts['not printable']))
    bad = counts['FAIL'] + (counts['unsupported'] if args.strict else 0)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
