#!/usr/bin/env python3
"""tests/difftest/gen.py - seeded random VALID ONNX graphs for graft's
differential test against ONNX Runtime (make difftest, docs/difftest.md).

generate(seed, instances) -> Graph: a model of 3-25 nodes drawn from an op
table that knows each op's shape rule and opset forms (opsets 11-21), plus
look-alikes of the library's fusions (swish, GELU, LayerNorm/RMSNorm written
out, Conv+BN, clips, attention, ...) and, now and then, a firing instance of a
library rule (from `graft verify --keep`) spliced into the random context.
The generator tracks every value's concrete dtype and shape; graph inputs may
declare some dims symbolic (dim_param) while the inputs it writes use the
concrete ones.  make_inputs() writes the seeded ordinary and special-value
input sets.  Validity (onnx.checker + strict shape inference) is checked by
the caller (check()).

Run alone: gen.py SEED [OUT.onnx] prints the graph (or saves it).
"""
import os
import sys
import glob
import math

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

F32, F16, F64, I32, I64, BOOL = 'float32', 'float16', 'float64', 'int32', 'int64', 'bool'
FLOATS = (F32, F16, F64)
INTS = (I32, I64)
TP = {F32: TensorProto.FLOAT, F16: TensorProto.FLOAT16, F64: TensorProto.DOUBLE,
      I32: TensorProto.INT32, I64: TensorProto.INT64, BOOL: TensorProto.BOOL}
FROM_TP = {v: k for k, v in TP.items()}
MAX_ELEMS = 2048
ONNX_MAX_OPSET = onnx.defs.onnx_opset_version()  # python3-onnx checks only up to this
# Ops ONNX Runtime's CPU provider has no float64 kernel for (seen as refusals of
# generated originals): float64 graphs leave them out instead of being dropped.
NO_F64 = {'Conv', 'ConvTranspose', 'Elu', 'Erf', 'GlobalAveragePool', 'GlobalMaxPool', 'AveragePool',
          'HardSigmoid', 'InstanceNormalization', 'LeakyRelu', 'Mean', 'PRelu', 'Selu', 'Softplus', 'Softsign',
          'ThresholdedRelu', 'Gemm', 'Clip'}

# Special values written into initializers and special input sets.
def specials(dtype):
    if dtype == F32:
        return [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40, 3.4e38, -3.4e38, 1.2e-38]
    if dtype == F64:
        return [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-310, -1e-310, 1.7e308, -1.7e308, 2.3e-308]
    if dtype == F16:
        return [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 6e-8, -6e-8, 65504.0, -65504.0, 6.2e-5]
    if dtype == I32:
        return [0, 1, -1, 2147483647, -2147483648]
    if dtype == I64:
        return [0, 1, -1, 9223372036854775807, -9223372036854775808]
    return [0, 1]


def numel(shape):
    return int(np.prod(shape)) if len(shape) else 1


def bcast(a, b):
    """numpy broadcast of two shapes, or None."""
    r = []
    for x, y in zip(reversed((1,) * (len(b) - len(a)) + tuple(a)), reversed((1,) * (len(a) - len(b)) + tuple(b))):
        if x == y or y == 1:
            r.append(x)
        elif x == 1:
            r.append(y)
        else:
            return None
    return tuple(reversed(r))


def onnx_slice_len(d, s, e, k):
    """How many elements Slice takes along an axis of size d, clamped as the
    ONNX spec says (a backward start below 0 is clamped to 0, not Python's -1)."""
    s = s + d if s < 0 else s
    e = e + d if e < 0 else e
    if k > 0:
        s, e = min(max(s, 0), d), min(max(e, 0), d)
        return max(0, -(-(e - s) // k))
    if d == 0:
        return 0
    s, e = min(max(s, 0), d - 1), min(max(e, -1), d - 1)
    return max(0, -(-(s - e) // -k))


def pool_out(d, k, s, dil, pb, pe, ceil_mode):
    """A pooling window count along one axis with explicit pads, as ONNX
    Runtime computes it: with ceil_mode a last window that would start in
    the end padding is dropped."""
    span = d + pb + pe - dil * (k - 1) - 1
    if span < 0:
        return 0
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= d + pb:
        out -= 1
    return out


class Val:
    __slots__ = ('name', 'dtype', 'shape')

    def __init__(self, name, dtype, shape):
        self.name, self.dtype, self.shape = name, dtype, tuple(int(d) for d in shape)

    @property
    def rank(self):
        return len(self.shape)


class Graph:
    """One generated model: the ModelProto plus the concrete input shapes."""

    def __init__(self, seed, instances=None):
        self.seed = seed
        r = self.rng = np.random.default_rng(seed)
        self.opset = int(r.integers(11, 22))
        self.fdt = str(r.choice([F32] * 15 + [F16] * 3 + [F64] * 2))
        self.special = r.random() < 0.3      # special constants in initializers
        self.symbolic = r.random() < 0.4     # dim_param dims in graph inputs
        self.nodes, self.inits, self.inputs = [], [], []
        self.input_shapes = {}               # name -> (dtype, concrete shape)
        self.pool = []                       # values random ops may consume
        self.n = 0
        self.tags = []                       # motifs and spliced rules, for the log
        self.ms = False                      # com.microsoft nodes present
        self.instances = instances or {}

    # --- naming and emitting -------------------------------------------------
    def name(self, p='v'):
        self.n += 1
        return f'{p}{self.n}'

    def emit(self, op, ins, outs, domain='', pool=True, **attrs):
        """outs: list of (dtype, shape); returns the new Vals."""
        first = ins[0] if ins and isinstance(ins[0], Val) else None
        if first is not None and first.dtype == F64 and op in NO_F64:
            raise Reject(f'no float64 {op} in ORT')
        vals = [Val(self.name(), d, s) for d, s in outs]
        for v in vals:
            if numel(v.shape) > MAX_ELEMS * 4:
                raise Reject('too big')
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(helper.make_node(op, [i if isinstance(i, str) else i.name for i in ins],
                                           [v.name for v in vals], name=f'n{len(self.nodes)}', domain=domain, **attrs))
        if domain == 'com.microsoft':
            self.ms = True
        if pool:
            self.pool.extend(vals)
        return vals

    def emit1(self, op, ins, dtype, shape, **kw):
        return self.emit(op, ins, [(dtype, shape)], **kw)[0]

    def const(self, arr, dtype=None, name=None):
        arr = np.asarray(arr, dtype=dtype or None)
        v = Val(name or self.name('c'), str(arr.dtype), arr.shape)
        if self.rng.random() < 0.12:
            self.nodes.append(helper.make_node('Constant', [], [v.name], name=f'n{len(self.nodes)}',
                                               value=numpy_helper.from_array(arr, v.name)))
        else:
            self.inits.append(numpy_helper.from_array(arr, v.name))
        return v

    def i64(self, vals):
        return self.const(np.array(vals, dtype=np.int64))

    def rand_data(self, shape, dtype, lo=-2.0, hi=2.0, positive=False):
        r = self.rng
        if dtype in FLOATS:
            a = r.uniform(0.1 if positive else lo, hi, size=shape)
            if self.special and r.random() < 0.5 and a.size:
                sp = [s for s in specials(dtype) if not positive or (s > 0 or np.isnan(s))]
                mask = r.random(a.shape) < 0.3
                a = np.where(mask, r.choice(sp, size=a.shape), a)
            return np.asarray(a, dtype=dtype)
        if dtype in INTS:
            return np.asarray(r.integers(1 if positive else -4, 5, size=shape), dtype=dtype)
        return np.asarray(r.random(shape) < 0.5)

    def cval(self, shape, dtype, **kw):
        return self.const(self.rand_data(shape, dtype, **kw))

    def scalar_const(self, dtype, value, rank0=True):
        return self.const(np.array(value if rank0 else [value], dtype=dtype))

    # --- picking values --------------------------------------------------------
    def rand_shape(self, rank, maxel=256):
        r = self.rng
        while True:
            s = tuple(int(r.choice([1, 2, 2, 3, 3, 4, 4, 5, 6, 8])) for _ in range(rank))
            if numel(s) <= maxel:
                return s

    def new_input(self, dtype, shape):
        v = Val(self.name('in'), dtype, shape)
        dims = []
        for i, d in enumerate(shape):
            if self.symbolic and self.rng.random() < 0.4:
                dims.append(f'{"NSBL"[i % 4]}{d}')  # same name, same size: consistent
            else:
                dims.append(d)
        self.inputs.append(helper.make_tensor_value_info(v.name, TP[dtype], dims))
        self.input_shapes[v.name] = (dtype, shape)
        self.pool.append(v)
        return v

    def pick(self, pred):
        c = [v for v in self.pool if pred(v)]
        if not c:
            return None
        w = np.arange(1, len(c) + 1, dtype=float) ** 1.5
        return c[int(self.rng.choice(len(c), p=w / w.sum()))]

    def fval(self, min_rank=0, max_rank=4, dtype=None, fresh=0.15, pred=None):
        """A float value of the graph's float dtype with min_rank <= rank <= max_rank."""
        dtype = dtype or self.fdt
        ok = lambda v: v.dtype == dtype and min_rank <= v.rank <= max_rank and (pred is None or pred(v))
        v = None if self.rng.random() < fresh else self.pick(ok)
        if v is None:
            rank = int(self.rng.integers(min_rank, max_rank + 1))
            for _ in range(20):
                s = self.rand_shape(rank)
                if pred is None or pred(Val('t', dtype, s)):
                    return self.new_input(dtype, s)
            raise Reject('no value')
        return v

    def partner(self, x, dtype=None):
        """A value (pool or constant) broadcastable with x."""
        r = self.rng
        dtype = dtype or x.dtype
        if r.random() < 0.4:
            v = self.pick(lambda v: v.dtype == dtype and v is not x and bcast(v.shape, x.shape) is not None
                          and numel(bcast(v.shape, x.shape)) <= MAX_ELEMS)
            if v is not None:
                return v
        if r.random() < 0.15:
            return x
        k = int(r.integers(0, x.rank + 1))
        shape = [d if r.random() < 0.7 else 1 for d in x.shape[x.rank - k:]]
        if r.random() < 0.1:
            shape = [1] + shape
        if r.random() < 0.3:
            return self.new_input(dtype, tuple(shape))
        return self.cval(tuple(shape), dtype)

    def axis(self, rank, neg=True):
        a = int(self.rng.integers(0, rank))
        return a - rank if neg and self.rng.random() < 0.3 else a

    def axes_arg(self, op, axes, since):
        """Axes as an attribute before opset `since`, as an input from it on."""
        if self.opset >= since:
            return ([self.i64(axes)] if axes is not None else []), {}
        return [], ({'axes': axes} if axes is not None else {})

    # --- elementwise -------------------------------------------------------------
    UNARY = [('Relu', 1), ('Sigmoid', 1), ('Tanh', 1), ('Abs', 1), ('Neg', 1), ('Exp', 1), ('Log', 1),
             ('Sqrt', 1), ('Reciprocal', 1), ('Floor', 1), ('Ceil', 1), ('Round', 11), ('Erf', 1),
             ('Sin', 1), ('Cos', 1), ('Softplus', 1), ('Softsign', 1), ('Elu', 1), ('Selu', 1),
             ('HardSigmoid', 1), ('HardSwish', 14), ('LeakyRelu', 1), ('Sign', 9), ('Identity', 1),
             ('Gelu', 20), ('Mish', 18), ('Celu', 12), ('ThresholdedRelu', 10)]

    def op_unary(self):
        r = self.rng
        if r.random() < 0.12:
            x = self.pick(lambda v: v.dtype in INTS)
            if x is not None:
                op = str(r.choice(['Abs', 'Neg', 'Identity', 'Sign']))
                return self.emit1(op, [x], x.dtype, x.shape)
        ops = [o for o, s in self.UNARY if self.opset >= s]
        op = str(r.choice(ops))
        x = self.fval()
        attrs = {}
        if op in ('Elu', 'Celu', 'LeakyRelu', 'ThresholdedRelu') and r.random() < 0.5:
            attrs['alpha'] = float(r.choice([0.01, 0.1, 0.2, 1.0, 2.0]))
        if op == 'HardSigmoid' and r.random() < 0.6:
            attrs['alpha'], attrs['beta'] = float(r.choice([0.2, 1 / 6])), 0.5
        if op == 'Gelu' and r.random() < 0.5:
            attrs['approximate'] = 'tanh'
        if op == 'Celu' and x.dtype != F32:
            op = 'Elu'
        return self.emit1(op, [x], x.dtype, x.shape, **attrs)

    def op_binary(self):
        r = self.rng
        if r.random() < 0.12:
            x = self.pick(lambda v: v.dtype in INTS)
            if x is not None:
                op = str(r.choice(['Add', 'Sub', 'Mul', 'Max', 'Min']))
                y = self.partner(x)
                return self.emit1(op, [x, y], x.dtype, bcast(x.shape, y.shape))
        op = str(r.choice(['Add', 'Add', 'Sub', 'Mul', 'Mul', 'Div', 'Pow', 'Max', 'Min', 'Sum', 'Mean']))
        x = self.fval()
        if op == 'Pow' and r.random() < 0.6:
            y = self.const(np.array(r.choice([2.0, 0.5, 3.0, 1.0, -1.0, 0.0]), dtype=x.dtype).reshape(
                (1,) * int(r.integers(0, 2))))
        else:
            y = self.partner(x)
        ins = [x, y] if r.random() < 0.7 else [y, x]
        if op in ('Max', 'Min', 'Sum', 'Mean') and r.random() < 0.3:
            z = self.partner(x)
            if bcast(bcast(x.shape, y.shape), z.shape) is not None:
                ins.append(z)
            elif r.random() < 0.5:
                ins = [x]
        shape = ()
        for v in ins:
            shape = bcast(shape, v.shape)
        return self.emit1(op, ins, x.dtype, shape)

    def op_compare(self):
        r = self.rng
        x = self.fval() if r.random() < 0.8 else (self.pick(lambda v: v.dtype in INTS) or self.fval())
        y = self.partner(x)
        ops = ['Equal', 'Less', 'Greater'] + (['LessOrEqual', 'GreaterOrEqual'] if self.opset >= 12 else [])
        c = self.emit1(str(r.choice(ops)), [x, y], BOOL, bcast(x.shape, y.shape))
        if r.random() < 0.3:
            c2 = self.pick(lambda v: v.dtype == BOOL and v is not c and bcast(v.shape, c.shape) is not None)
            if c2 is not None:
                c = self.emit1(str(r.choice(['And', 'Or', 'Xor'])), [c, c2], BOOL, bcast(c.shape, c2.shape))
            else:
                c = self.emit1('Not', [c], BOOL, c.shape)
        if r.random() < 0.7:
            return self.op_where(c)
        return c

    def op_where(self, c=None):
        r = self.rng
        if c is None:
            c = self.pick(lambda v: v.dtype == BOOL) or self.const(self.rng.random(self.rand_shape(int(r.integers(0, 3)))) < 0.5)
        x = self.fval(pred=lambda v: bcast(v.shape, c.shape) is not None)
        y = self.partner(x)
        shape = bcast(bcast(c.shape, x.shape), y.shape)
        if shape is None:
            raise Reject('where')
        return self.emit1('Where', [c, x, y], x.dtype, shape)

    def op_isnan(self):
        x = self.fval()
        b = self.emit1(str(self.rng.choice(['IsNaN', 'IsInf'])), [x], BOOL, x.shape)
        return self.op_where(b)

    # --- reductions ------------------------------------------------------------
    def op_reduce(self):
        r = self.rng
        op = str(r.choice(['ReduceSum', 'ReduceMean', 'ReduceMax', 'ReduceMin', 'ReduceProd', 'ReduceL1',
                           'ReduceL2', 'ReduceSumSquare', 'ReduceLogSumExp', 'ReduceLogSum', 'ArgMax', 'ArgMin']))
        x = self.fval(min_rank=1)
        if op in ('ArgMax', 'ArgMin'):
            a = self.axis(x.rank)
            kd = int(r.integers(0, 2))
            attrs = {'axis': a, 'keepdims': kd}
            if self.opset >= 12 and r.random() < 0.3:
                attrs['select_last_index'] = 1
            a %= x.rank
            shape = tuple(1 if i == a else d for i, d in enumerate(x.shape) if kd or i != a)
            return self.emit1(op, [x], I64, shape, **attrs)
        kd = int(r.random() < 0.6)
        if r.random() < 0.15:
            axes = None
            red = set(range(x.rank))
        else:
            k = int(r.integers(1, x.rank + 1))
            red = set(int(a) for a in r.choice(x.rank, size=k, replace=False))
            axes = sorted(a - x.rank if r.random() < 0.3 else a for a in red)
        ins, attrs = self.axes_arg(op, axes, 13 if op == 'ReduceSum' else 18)
        shape = tuple(1 if i in red else d for i, d in enumerate(x.shape) if kd or i not in red)
        attrs['keepdims'] = kd
        return self.emit1(op, [x] + ins, x.dtype, shape, **attrs)

    # --- movement ------------------------------------------------------------------
    def op_transpose(self, x=None, perm=None):
        x = x or (self.fval(min_rank=2) if self.rng.random() < 0.85 else self.pool_any(min_rank=2))
        if perm is None:
            perm = [int(p) for p in self.rng.permutation(x.rank)]
        if self.rng.random() < 0.1 and perm == list(reversed(range(x.rank))):
            return self.emit1('Transpose', [x], x.dtype, tuple(x.shape[p] for p in perm))
        return self.emit1('Transpose', [x], x.dtype, tuple(x.shape[p] for p in perm), perm=perm)

    def pool_any(self, min_rank=0):
        v = self.pick(lambda v: v.rank >= min_rank)
        return v or self.fval(min_rank=min_rank)

    def op_reshape(self, x=None):
        r = self.rng
        x = x or (self.fval(min_rank=1) if r.random() < 0.85 else self.pool_any(1))
        n = numel(x.shape)
        dims = []
        rest = n
        for _ in range(int(r.integers(0, 4))):
            divs = [d for d in range(1, rest + 1) if rest % d == 0 and d <= 8]
            d = int(r.choice(divs))
            dims.append(d)
            rest //= d
        dims.append(rest)
        r.shuffle(dims)
        spec = list(dims)
        if r.random() < 0.4:
            spec[int(r.integers(0, len(spec)))] = -1
        for i in range(min(len(spec), x.rank)):
            if spec[i] == x.shape[i] and r.random() < 0.3 and -1 not in spec[:i]:
                spec[i] = 0
        if spec.count(-1) > 1:
            raise Reject('reshape')
        return self.emit1('Reshape', [x, self.i64(spec)], x.dtype, tuple(dims))

    def op_flatten(self):
        x = self.pool_any(1)
        a = int(self.rng.integers(0, x.rank + 1))
        return self.emit1('Flatten', [x], x.dtype, (numel(x.shape[:a]), numel(x.shape[a:])), axis=a)

    def op_squeeze(self):
        r = self.rng
        x = self.pick(lambda v: 1 in v.shape)
        if x is None or r.random() < 0.5:
            x = self.pool_any()
            axes = sorted(set(int(a) for a in r.integers(0, x.rank + 1, size=int(r.integers(1, 3)))))
            rank = x.rank + len(axes)
            axes = sorted(set(a if a < rank else rank - 1 for a in axes))
            rank = x.rank + len(axes)
            shape, it = [], iter(x.shape)
            for i in range(rank):
                shape.append(1 if i in axes else next(it))
            ax = [a - rank if r.random() < 0.3 else a for a in axes]
            ins, attrs = self.axes_arg('Unsqueeze', ax, 13)
            return self.emit1('Unsqueeze', [x] + ins, x.dtype, tuple(shape), **attrs)
        ones = [i for i, d in enumerate(x.shape) if d == 1]
        if r.random() < 0.2:
            axes, sq = None, set(ones)
        else:
            sq = set(int(a) for a in r.choice(ones, size=int(r.integers(1, len(ones) + 1)), replace=False))
            axes = sorted(a - x.rank if r.random() < 0.3 else a for a in sq)
        ins, attrs = self.axes_arg('Squeeze', axes, 13)
        return self.emit1('Squeeze', [x] + ins, x.dtype, tuple(d for i, d in enumerate(x.shape) if i not in sq), **attrs)

    def op_slice(self, x=None):
        r = self.rng
        x = x or (self.fval(min_rank=1) if r.random() < 0.85 else self.pool_any(1))
        k = int(r.integers(1, x.rank + 1))
        axes = [int(a) for a in r.choice(x.rank, size=k, replace=False)]
        starts, ends, steps, shape = [], [], [], list(x.shape)
        for a in axes:
            d = x.shape[a]
            step = int(r.choice([1, 1, 1, 2, -1, -2]))
            s = int(r.integers(-d, d + 1))
            e = int(r.integers(-d - 1, d + 2))
            if r.random() < 0.15:
                e = 2**63 - 1 if step > 0 else -2**63
            if r.random() < 0.1:   # starts beyond either end: clamped by the spec's rule, not Python's
                s = int(r.choice([-d - 3, d + 3, -2**63, 2**63 - 1]))
            starts.append(s); ends.append(e); steps.append(step)
            shape[a] = onnx_slice_len(d, s, e, step)
        if 0 in shape and r.random() < 0.8:
            raise Reject('empty slice')
        ins = [x, self.i64(starts), self.i64(ends)]
        if r.random() < 0.8 or any(s != 1 for s in steps) or axes != list(range(k)):
            ins.append(self.i64([a - x.rank if r.random() < 0.3 else a for a in axes]))
            if r.random() < 0.8 or any(s != 1 for s in steps):
                ins.append(self.i64(steps))
        return self.emit1('Slice', ins, x.dtype, tuple(shape))

    def op_concat(self):
        r = self.rng
        x = self.pool_any(1)
        a = int(r.integers(0, x.rank))
        ins = [x]
        for _ in range(int(r.integers(1, 3))):
            y = self.pick(lambda v: v.dtype == x.dtype and v.rank == x.rank and
                          all(d == e for i, (d, e) in enumerate(zip(v.shape, x.shape)) if i != a))
            if y is None or r.random() < 0.3:
                s = list(x.shape); s[a] = int(r.integers(1, 4))
                y = self.cval(tuple(s), x.dtype) if x.dtype != BOOL else self.const(r.random(s) < 0.5)
            ins.append(y)
        shape = list(x.shape); shape[a] = sum(v.shape[a] for v in ins)
        return self.emit1('Concat', ins, x.dtype, tuple(shape), axis=a - x.rank if r.random() < 0.3 else a)

    def op_split(self):
        r = self.rng
        x = self.fval(min_rank=1, pred=lambda v: max(v.shape) >= 2)
        cands = [i for i, d in enumerate(x.shape) if d >= 2]
        if not cands:
            raise Reject('split')
        a = int(r.choice(cands))
        d = x.shape[a]
        n = int(r.integers(2, min(d, 4) + 1))
        equal = d % n == 0 and r.random() < 0.5
        if equal:
            sizes = [d // n] * n
        else:
            cuts = sorted(int(c) for c in r.choice(range(1, d), size=n - 1, replace=False))
            sizes = [b - a_ for a_, b in zip([0] + cuts, cuts + [d])]
        ins, attrs = [x], {'axis': a}
        if self.opset >= 18:
            if equal and r.random() < 0.5:
                attrs['num_outputs'] = n
            else:
                ins.append(self.i64(sizes))
        elif not equal or r.random() < 0.5:
            if self.opset >= 13:
                ins.append(self.i64(sizes))
            else:
                attrs['split'] = sizes
        outs = [(x.dtype, tuple(s if i == a else e for i, e in enumerate(x.shape))) for s in sizes]
        return self.emit('Split', ins, outs, **attrs)[0]

    def op_gather(self):
        r = self.rng
        x = self.pool_any(1)
        a = int(r.integers(0, x.rank))
        d = x.shape[a]
        ishape = self.rand_shape(int(r.choice([0, 1, 1, 2])), maxel=8)
        idx = self.const(r.integers(-d, d, size=ishape).astype(np.int64))
        shape = x.shape[:a] + tuple(ishape) + x.shape[a + 1:]
        return self.emit1('Gather', [x, idx], x.dtype, shape, axis=a - x.rank if r.random() < 0.2 else a)

    def op_expand(self):
        r = self.rng
        x = self.pool_any()
        target = [d if d != 1 or r.random() < 0.5 else int(r.integers(2, 4)) for d in x.shape]
        target = [1] * int(r.integers(0, 2)) + target
        if r.random() < 0.2 and target:
            target[int(r.integers(0, len(target)))] = 1 if x.rank else 1
        shape = bcast(x.shape, target)
        if shape is None:
            raise Reject('expand')
        return self.emit1('Expand', [x, self.i64(target)], x.dtype, shape)

    def op_tile(self):
        x = self.pool_any(1)
        rep = [int(self.rng.choice([1, 1, 2, 3])) for _ in x.shape]
        return self.emit1('Tile', [x, self.i64(rep)], x.dtype, tuple(d * k for d, k in zip(x.shape, rep)))

    def op_cast(self, x=None, to=None):
        r = self.rng
        x = x or (self.fval() if r.random() < 0.7 else self.pool_any())
        to = to or str(r.choice([F32, F32, F16, F64, I32, I64, BOOL]))
        return self.emit1('Cast', [x], to, x.shape, to=TP[to])

    def op_shape_chain(self):
        """Shape -> Gather -> Concat -> Reshape: flatten the trailing dims."""
        r = self.rng
        x = self.pool_any(2)
        k = int(r.integers(1, x.rank))
        s = self.emit1('Shape', [x], I64, (x.rank,))
        if self.opset >= 15 and r.random() < 0.4:
            g = self.emit1('Shape', [x], I64, (k,), start=0, end=k)
        elif r.random() < 0.5:
            g = self.emit1('Gather', [s, self.i64(list(range(k)))], I64, (k,), axis=0)
        else:
            g = self.emit1('Slice', [s, self.i64([0]), self.i64([k])], I64, (k,))
        c = self.emit1('Concat', [g, self.i64([-1])], I64, (k + 1,), axis=0)
        return self.emit1('Reshape', [x, c], x.dtype, x.shape[:k] + (numel(x.shape[k:]),))

    def op_constant_of_shape(self):
        x = self.fval()
        s = self.emit1('Shape', [x], I64, (x.rank,))
        val = numpy_helper.from_array(np.array([self.rng.choice([0.0, 1.0, 2.5, -0.0])], dtype=x.dtype))
        c = self.emit1('ConstantOfShape', [s], x.dtype, x.shape, value=val)
        return self.emit1(str(self.rng.choice(['Add', 'Mul', 'Sub'])), [x, c], x.dtype, x.shape)

    def op_pad(self, x=None):
        r = self.rng
        x = x or self.fval(min_rank=1)
        mode = str(r.choice(['constant', 'constant', 'edge', 'reflect']))
        pads = [0] * (2 * x.rank)
        for i, d in enumerate(x.shape):
            if r.random() < 0.6:
                lim = d - 1 if mode == 'reflect' else 2
                pads[i] = int(r.integers(0, lim + 1)) if lim >= 0 else 0
                pads[i + x.rank] = int(r.integers(0, lim + 1)) if lim >= 0 else 0
        if mode == 'edge' and 0 in x.shape:
            mode = 'constant'
        ins = [x, self.i64(pads)]
        if mode == 'constant' and r.random() < 0.5:
            ins.append(self.const(np.array(r.choice([0.0, 1.0, -1.5]), dtype=x.dtype)))
        shape = tuple(d + pads[i] + pads[i + x.rank] for i, d in enumerate(x.shape))
        return self.emit1('Pad', ins, x.dtype, shape, mode=mode)

    def op_clip(self):
        r = self.rng
        x = self.fval()
        lo = self.const(np.array(r.choice([-1.0, 0.0, -0.5, -np.inf]), dtype=x.dtype)) if r.random() < 0.8 else None
        hi = self.const(np.array(r.choice([1.0, 6.0, 0.5, np.inf]), dtype=x.dtype)) if r.random() < 0.8 else None
        ins = [x, lo.name if lo else '', hi.name if hi else '']
        while ins[-1] == '':
            ins.pop()
        return self.emit1('Clip', ins, x.dtype, x.shape)

    def op_cumsum(self):
        if self.fdt == F16:
            raise Reject('CumSum has no float16')
        x = self.fval(min_rank=1)
        a = self.axis(x.rank)
        return self.emit1('CumSum', [x, self.const(np.array(a, dtype=np.int64))], x.dtype, x.shape,
                          exclusive=int(self.rng.random() < 0.3), reverse=int(self.rng.random() < 0.3))

    def op_topk(self):
        x = self.fval(min_rank=1)
        a = self.axis(x.rank)
        k = int(self.rng.integers(1, x.shape[a] + 1))
        shape = list(x.shape); shape[a] = k
        return self.emit('TopK', [x, self.i64([k])], [(x.dtype, tuple(shape)), (I64, tuple(shape))], axis=a,
                         largest=int(self.rng.random() < 0.7))[0]

    def op_dropout(self):
        x = self.fval()
        if self.opset >= 12:
            ins = [x] + ([self.const(np.array(0.3, dtype=x.dtype))] if self.rng.random() < 0.4 else [])
            return self.emit1('Dropout', ins, x.dtype, x.shape)
        return self.emit1('Dropout', [x], x.dtype, x.shape, ratio=0.3)

    # --- nn ops --------------------------------------------------------------------
    def nchw(self, min_hw=1):
        return self.fval(min_rank=4, max_rank=4, pred=lambda v: v.shape[2] >= min_hw and v.shape[3] >= min_hw)

    def op_conv(self, x=None, pads_ok=True):
        r = self.rng
        x = x or (self.fval(min_rank=3, max_rank=3) if r.random() < 0.2 else self.nchw())
        sp = x.shape[2:]
        c = x.shape[1]
        group = int(r.choice([g for g in (1, 1, 1, c, 2) if c % g == 0]))
        m = group * int(r.integers(1, 4))
        ks = [int(r.integers(1, min(3, d) + 1)) for d in sp]
        strides = [int(r.choice([1, 1, 2])) for _ in sp]
        dil = [1 if r.random() < 0.85 or k == 1 else 2 for k in ks]
        pads = [int(r.integers(0, 2)) if pads_ok else 0 for _ in range(2 * len(sp))]
        out = []
        for i, d in enumerate(sp):
            o = (d + pads[i] + pads[i + len(sp)] - dil[i] * (ks[i] - 1) - 1) // strides[i] + 1
            if o < 1:
                raise Reject('conv')
            out.append(o)
        w = self.cval((m, c // group) + tuple(ks), x.dtype)
        ins = [x, w] + ([self.cval((m,), x.dtype)] if r.random() < 0.6 else [])
        attrs = {'group': group if group != 1 or r.random() < 0.3 else None,
                 'strides': strides if strides != [1] * len(sp) or r.random() < 0.5 else None,
                 'dilations': dil if dil != [1] * len(sp) or r.random() < 0.3 else None,
                 'pads': pads if any(pads) or r.random() < 0.5 else None,
                 'kernel_shape': ks if r.random() < 0.7 else None}
        return self.emit1('Conv', ins, x.dtype, (x.shape[0], m) + tuple(out), **attrs)

    def op_conv_transpose(self):
        r = self.rng
        x = self.nchw()
        c = x.shape[1]
        group = 1 if r.random() < 0.8 or c % 2 else 2
        m = group * int(r.integers(1, 3))
        ks = [int(r.integers(1, 4)) for _ in range(2)]
        st = [int(r.choice([1, 2])) for _ in range(2)]
        pads = [int(r.integers(0, 2)) for _ in range(4)]
        op_ = [int(r.integers(0, s)) for s in st]
        out = [st[i] * (x.shape[2 + i] - 1) + op_[i] + ks[i] - pads[i] - pads[i + 2] for i in range(2)]
        if min(out) < 1:
            raise Reject('convT')
        w = self.cval((c, m // group) + tuple(ks), x.dtype)
        ins = [x, w] + ([self.cval((m,), x.dtype)] if r.random() < 0.5 else [])
        return self.emit1('ConvTranspose', ins, x.dtype, (x.shape[0], m) + tuple(out), group=group,
                          strides=st, pads=pads, output_padding=op_ if any(op_) else None, kernel_shape=ks)

    def op_bn(self, x=None):
        x = x or self.fval(min_rank=2, max_rank=4)
        c = x.shape[1]
        ins = [x, self.cval((c,), x.dtype), self.cval((c,), x.dtype), self.cval((c,), x.dtype),
               self.cval((c,), x.dtype, positive=True)]
        return self.emit1('BatchNormalization', ins, x.dtype, x.shape,
                          epsilon=float(self.rng.choice([1e-5, 1e-3, 0.0])) if self.rng.random() < 0.5 else None)

    def op_instnorm(self):
        x = self.fval(min_rank=3, max_rank=4)
        c = x.shape[1]
        return self.emit1('InstanceNormalization', [x, self.cval((c,), x.dtype), self.cval((c,), x.dtype)],
                          x.dtype, x.shape)

    def op_pool(self):
        r = self.rng
        op = str(r.choice(['MaxPool', 'AveragePool', 'GlobalAveragePool', 'GlobalMaxPool']))
        x = self.nchw()
        if op.startswith('Global'):
            return self.emit1(op, [x], x.dtype, x.shape[:2] + (1, 1))
        ks = [int(r.integers(1, min(3, d) + 1)) for d in x.shape[2:]]
        st = [int(r.choice([1, 2, 3])) for _ in ks]
        # dilations: MaxPool from opset 10, AveragePool from 19
        dil = [1 if r.random() < 0.8 or (op == 'AveragePool' and self.opset < 19) else 2 for _ in ks]
        pads = [int(r.integers(0, k)) for k in ks] + [int(r.integers(0, k)) for k in ks]
        ceil_mode = int(r.random() < 0.3)
        out = [pool_out(x.shape[2 + i], ks[i], st[i], dil[i], pads[i], pads[i + 2], ceil_mode) for i in range(2)]
        if min(out) < 1:
            raise Reject('pool')
        attrs = {'kernel_shape': ks, 'strides': st, 'pads': pads if any(pads) else None,
                 'dilations': dil if dil != [1, 1] else None, 'ceil_mode': ceil_mode or None}
        if r.random() < 0.2 and not any(pads) and dil == [1, 1] and all(
                (-(-x.shape[2 + i] // st[i]) - 1) * st[i] + ks[i] >= x.shape[2 + i] for i in range(2)):
            # (ORT refuses SAME padding that would be negative)
            # SAME padding: out = ceil(d / s) whatever the kernel (ceil_mode does not change it)
            attrs['auto_pad'] = str(r.choice(['SAME_UPPER', 'SAME_LOWER']))
            out = [-(-x.shape[2 + i] // st[i]) for i in range(2)]
        if op == 'AveragePool' and any(pads) and r.random() < 0.5:
            attrs['count_include_pad'] = 1
        return self.emit1(op, [x], x.dtype, x.shape[:2] + tuple(out), **attrs)

    def op_matmul(self, x=None):
        r = self.rng
        x = x or self.fval(min_rank=2, max_rank=4)
        k = x.shape[-1]
        if k == 0:
            # ONNX Runtime's broadcast MatMul over an empty contraction left its output
            # uninitialized (seed 4943 before this check: 4.94e-324 for an empty sum)
            raise Reject('empty contraction')
        n = int(r.choice([1, 2, 3, 4, 8]))
        y = self.pick(lambda v: v.dtype == x.dtype and v.rank >= 2 and v.shape[-2] == k
                      and bcast(v.shape[:-2], x.shape[:-2]) is not None) if r.random() < 0.3 else None
        if y is None:
            y = self.cval((k, n), x.dtype) if r.random() < 0.8 else self.new_input(x.dtype, (k, n))
        shape = bcast(x.shape[:-2], y.shape[:-2]) + (x.shape[-2], y.shape[-1])
        return self.emit1('MatMul', [x, y], x.dtype, shape)

    def op_gemm(self):
        r = self.rng
        a = self.fval(min_rank=2, max_rank=2)
        ta, tb = int(r.random() < 0.3), int(r.random() < 0.4)
        m, k = (a.shape[1], a.shape[0]) if ta else a.shape
        if k == 0:
            raise Reject('empty contraction')   # as in op_matmul
        n = int(r.choice([1, 2, 3, 4, 8]))
        b = self.cval((n, k) if tb else (k, n), a.dtype)
        ins = [a, b]
        if r.random() < 0.7:
            ins.append(self.cval([(n,), (1, n), (m, 1), (m, n), ()][int(r.integers(0, 5))], a.dtype))
        attrs = {'transA': ta or None, 'transB': tb or None}
        if r.random() < 0.3:
            attrs['alpha'] = float(r.choice([0.5, 2.0, 1.0]))
        if r.random() < 0.3:
            attrs['beta'] = float(r.choice([0.5, 2.0, 0.0]))
        return self.emit1('Gemm', ins, a.dtype, (m, n), **attrs)

    def op_softmax(self, x=None, op=None):
        x = x or self.fval(min_rank=1)
        op = op or str(self.rng.choice(['Softmax', 'LogSoftmax']))
        a = self.axis(x.rank) if self.rng.random() < 0.7 else None
        return self.emit1(op, [x], x.dtype, x.shape, axis=a)

    def op_layernorm(self):
        if self.opset < 17:
            return self.op_softmax()
        x = self.fval(min_rank=1)
        a = -int(self.rng.integers(1, x.rank + 1))
        ns = x.shape[a:]
        ins = [x, self.cval(ns, x.dtype)] + ([self.cval(ns, x.dtype)] if self.rng.random() < 0.7 else [])
        return self.emit1('LayerNormalization', ins, x.dtype, x.shape, axis=a if a != -1 or self.rng.random() < 0.3 else None,
                          epsilon=1e-5 if self.rng.random() < 0.3 else None)

    def op_prelu(self):
        x = self.fval(min_rank=1)
        r = self.rng
        if x.rank >= 3 and r.random() < 0.5:
            s = (x.shape[1],) + (1,) * (x.rank - 2)
        else:
            s = x.shape[-int(r.integers(0, x.rank + 1)):] if r.random() < 0.6 else (1,)
        return self.emit1('PRelu', [x, self.cval(s, x.dtype)], x.dtype, x.shape)

    def op_depth_to_space(self):
        x = self.nchw()
        b = 2
        if x.shape[1] % (b * b):
            raise Reject('d2s')
        n, c, h, w = x.shape
        return self.emit1('DepthToSpace', [x], x.dtype, (n, c // 4, h * 2, w * 2), blocksize=2,
                          mode=str(self.rng.choice(['DCR', 'CRD'])))

    # --- look-alikes of the library's fusions ---------------------------------------
    def c(self, x, v):
        return self.const(np.array(v, dtype=x.dtype))

    def bin(self, op, a, b):
        if self.rng.random() < 0.5 and op in ('Add', 'Mul'):
            a, b = b, a
        return self.emit1(op, [a, b], a.dtype if isinstance(a, Val) else b.dtype, bcast(a.shape, b.shape))

    def m_swish(self):
        x = self.fval()
        s = self.emit1('Sigmoid', [x], x.dtype, x.shape)
        if self.rng.random() < 0.3:
            s = self.emit1('Sigmoid', [self.bin('Mul', x, self.c(x, 1.702))], x.dtype, x.shape)
        return self.bin('Mul', x, s)

    def m_hardswish(self):
        x = self.fval()
        if self.rng.random() < 0.5:
            return self.bin('Mul', x, self.emit1('HardSigmoid', [x], x.dtype, x.shape, alpha=1 / 6, beta=0.5))
        t = self.emit1('Clip', [self.bin('Add', x, self.c(x, 3.0)), self.c(x, 0.0), self.c(x, 6.0)], x.dtype, x.shape)
        return self.emit1('Div', [self.bin('Mul', x, t), self.c(x, 6.0)], x.dtype, x.shape)

    def m_gelu_erf(self):
        x = self.fval()
        r = self.rng
        t = (self.emit1('Div', [x, self.c(x, 1.4142135381698608)], x.dtype, x.shape) if r.random() < 0.5
             else self.bin('Mul', x, self.c(x, 0.7071067811865476)))
        e = self.emit1('Erf', [t], x.dtype, x.shape)
        e = self.bin('Add', e, self.c(x, 1.0))
        if r.random() < 0.5:
            return self.bin('Mul', self.bin('Mul', x, e), self.c(x, 0.5))
        return self.bin('Mul', self.bin('Mul', x, self.c(x, 0.5)), e)

    def m_gelu_tanh(self):
        x = self.fval()
        cube = (self.emit1('Pow', [x, self.c(x, 3.0)], x.dtype, x.shape) if self.rng.random() < 0.5
                else self.bin('Mul', self.bin('Mul', x, x), x))
        t = self.bin('Add', x, self.bin('Mul', cube, self.c(x, 0.044715)))
        t = self.emit1('Tanh', [self.bin('Mul', t, self.c(x, 0.7978845608028654))], x.dtype, x.shape)
        return self.bin('Mul', self.bin('Mul', x, self.c(x, 0.5)), self.bin('Add', t, self.c(x, 1.0)))

    def reduce_mean(self, x, axes, kd=1):
        ins, attrs = self.axes_arg('ReduceMean', axes, 18)
        red = set(a % x.rank for a in axes)
        shape = tuple(1 if i in red else d for i, d in enumerate(x.shape) if kd or i not in red)
        return self.emit1('ReduceMean', [x] + ins, x.dtype, shape, keepdims=kd, **attrs)

    def m_layernorm(self):
        x = self.fval(min_rank=1)
        r = self.rng
        axes = [-1] if r.random() < 0.8 or x.rank < 2 else [-2, -1]
        mean = self.reduce_mean(x, axes)
        d = self.emit1('Sub', [x, mean], x.dtype, x.shape)
        sq = self.emit1('Pow', [d, self.c(x, 2.0)], x.dtype, x.shape) if r.random() < 0.6 else self.emit1('Mul', [d, d], x.dtype, x.shape)
        var = self.reduce_mean(sq, axes)
        s = self.emit1('Sqrt', [self.bin('Add', var, self.c(x, float(r.choice([1e-5, 1e-6, 1e-12]))))], x.dtype, var.shape)
        n = self.emit1('Div', [d, s], x.dtype, x.shape)
        ns = x.shape[-len(axes):]
        if r.random() < 0.8:
            n = self.bin('Mul', n, self.cval(ns, x.dtype))
        if r.random() < 0.7:
            n = self.bin('Add', n, self.cval(ns, x.dtype))
        return n

    def m_rmsnorm(self):
        x = self.fval(min_rank=1)
        r = self.rng
        sq = self.emit1('Pow', [x, self.c(x, 2.0)], x.dtype, x.shape) if r.random() < 0.6 else self.emit1('Mul', [x, x], x.dtype, x.shape)
        ms = self.reduce_mean(sq, [-1])
        s = self.emit1('Sqrt', [self.bin('Add', ms, self.c(x, 1e-6))], x.dtype, ms.shape)
        if r.random() < 0.5:
            n = self.bin('Mul', x, self.emit1('Reciprocal', [s], x.dtype, s.shape))
        else:
            n = self.emit1('Div', [x, s], x.dtype, x.shape)
        return self.bin('Mul', n, self.cval(x.shape[-1:], x.dtype))

    def m_conv_affine(self):
        y = self.op_conv()
        r = self.rng
        k = r.random()
        c = y.shape[1]
        cs = (c,) + (1,) * (y.rank - 2)
        if k < 0.4:
            return self.op_bn(y)
        if k < 0.7:
            return self.bin('Add', y, self.cval(cs if r.random() < 0.7 else (1,) + cs, y.dtype))
        return self.bin('Mul', y, self.cval(cs if r.random() < 0.7 else (), y.dtype))

    def m_pad_conv(self):
        x = self.nchw()
        p = self.op_pad(x)
        if p.rank != 4 or min(p.shape[2:]) < 1:
            raise Reject('pad conv')
        return self.op_conv(p)

    def m_transpose_sandwich(self):
        x = self.fval(min_rank=2)
        perm = [int(p) for p in self.rng.permutation(x.rank)]
        t = self.op_transpose(x, perm)
        r = self.rng
        k = r.random()
        if k < 0.4:
            op = str(r.choice(['Relu', 'Sigmoid', 'Neg', 'Abs', 'Tanh', 'Exp']))
            u = self.emit1(op, [t], t.dtype, t.shape)
        elif k < 0.8:
            y = self.cval(tuple(d if r.random() < 0.5 else 1 for d in t.shape[-int(r.integers(0, t.rank + 1)):]) if t.rank else (), t.dtype)
            u = self.bin(str(r.choice(['Add', 'Mul', 'Sub', 'Div'])), t, y)
        else:
            u = self.emit1('Cast', [t], F32 if t.dtype != F32 else F64, t.shape, to=TP[F32 if t.dtype != F32 else F64])
        inv = [perm.index(i) for i in range(len(perm))] if r.random() < 0.8 else [int(p) for p in r.permutation(len(perm))]
        return self.op_transpose(u, inv)

    def m_slice_reshape_cast(self):
        x = self.fval(min_rank=1)
        s = self.op_slice(x)
        if numel(s.shape) == 0:
            raise Reject('empty')
        y = self.op_reshape(s)
        to = str(self.rng.choice([F64, F16, F32, I32]))
        c = self.op_cast(y, to)
        if self.rng.random() < 0.7:
            c = self.op_cast(c, x.dtype)
        return c

    def m_clip_minmax(self):
        x = self.fval()
        r = self.rng
        lo, hi = sorted(r.choice([-1.0, 0.0, 0.5, 1.0, 6.0, -np.inf, np.inf], size=2, replace=False))
        if r.random() < 0.2:
            lo, hi = hi, lo
        if r.random() < 0.05:
            hi = np.nan
        lo_c = self.c(x, lo) if r.random() < 0.8 else self.cval((x.shape[-1],) if x.rank else (), x.dtype)
        hi_c = self.c(x, hi)
        if r.random() < 0.5:
            return self.bin('Max', self.bin('Min', x, hi_c), lo_c)
        return self.bin('Min', self.bin('Max', x, lo_c), hi_c)

    def m_prelu_written(self):
        x = self.fval()
        r = self.rng
        slope = self.cval((x.shape[-1],) if x.rank and r.random() < 0.5 else (), x.dtype)
        k = r.random()
        if k < 0.35:
            neg = self.emit1('Neg', [self.emit1('Relu', [self.emit1('Neg', [x], x.dtype, x.shape)], x.dtype, x.shape)], x.dtype, x.shape)
            return self.bin('Add', self.emit1('Relu', [x], x.dtype, x.shape), self.bin('Mul', slope, neg))
        if k < 0.7:
            cond = self.emit1('Less', [x, self.c(x, 0.0)], BOOL, x.shape)
            return self.emit1('Where', [cond, self.bin('Mul', x, slope), x], x.dtype, bcast(x.shape, slope.shape))
        mn = self.bin('Min', x, self.c(x, 0.0))
        return self.bin('Add', self.bin('Max', x, self.c(x, 0.0)), self.bin('Mul', mn, slope))

    def m_logsoftmax_written(self):
        x = self.fval(min_rank=1)
        r = self.rng
        k = r.random()
        if k < 0.3:
            return self.emit1('Log', [self.op_softmax(x, 'Softmax')], x.dtype, x.shape)
        ins, attrs = self.axes_arg('ReduceSum', [-1], 13)
        rs = x.shape[:-1] + (1,)
        if k < 0.6:
            e = self.emit1('Exp', [x], x.dtype, x.shape)
            s = self.emit1('ReduceSum', [e] + ins, x.dtype, rs, keepdims=1, **attrs)
            return self.emit1('Sub', [x, self.emit1('Log', [s], x.dtype, rs)], x.dtype, x.shape)
        ins2, attrs2 = self.axes_arg('ReduceMax', [-1], 18)
        m = self.emit1('ReduceMax', [x] + ins2, x.dtype, rs, keepdims=1, **attrs2)
        d = self.emit1('Sub', [x, m], x.dtype, x.shape)
        e = self.emit1('Exp', [d], x.dtype, x.shape)
        ins, attrs = self.axes_arg('ReduceSum', [-1], 13)
        s = self.emit1('ReduceSum', [e] + ins, x.dtype, rs, keepdims=1, **attrs)
        if r.random() < 0.5:
            return self.emit1('Div', [e, s], x.dtype, x.shape)   # softmax written out
        return self.emit1('Sub', [d, self.emit1('Log', [s], x.dtype, rs)], x.dtype, x.shape)

    def m_attention(self):
        r = self.rng
        x = self.fval(min_rank=3, max_rank=3, pred=lambda v: v.shape[-1] <= 8)
        b, s, e = x.shape
        d = int(r.choice([2, 4]))
        q = self.op_matmul_w(x, d)
        k = self.op_matmul_w(x, d)
        v = self.op_matmul_w(x, d)
        kt = self.emit1('Transpose', [k], x.dtype, (b, d, s), perm=[0, 2, 1])
        sc = self.emit1('MatMul', [q, kt], x.dtype, (b, s, s))
        if r.random() < 0.5:
            sc = self.emit1('Div', [sc, self.c(x, math.sqrt(d))], x.dtype, sc.shape)
        else:
            sc = self.bin('Mul', sc, self.c(x, 1 / math.sqrt(d)))
        if r.random() < 0.4:
            sc = self.bin('Add', sc, self.cval((s, s) if r.random() < 0.5 else (1, 1, s), x.dtype))
        p = self.emit1('Softmax', [sc], x.dtype, sc.shape, axis=-1 if self.opset >= 13 or r.random() < 0.5 else 2)
        return self.emit1('MatMul', [p, v], x.dtype, (b, s, d))

    def op_matmul_w(self, x, n):
        return self.emit1('MatMul', [x, self.cval((x.shape[-1], n), x.dtype)], x.dtype, x.shape[:-1] + (n,))

    def m_identities(self):
        """Ops that are identities on finite data only (or not at all): x*1, x+0, x+-0, x*0, x-x, ..."""
        x = self.fval()
        r = self.rng
        k = int(r.integers(0, 16))
        if k == 0:
            return self.bin('Mul', x, self.c(x, 1.0))
        if k == 1:
            return self.bin('Add', x, self.c(x, float(r.choice([0.0, -0.0]))))
        if k == 2:
            return self.bin('Mul', x, self.c(x, 0.0))
        if k == 3:
            return self.emit1('Sub', [x, x], x.dtype, x.shape)
        if k == 4:
            return self.emit1('Div', [x, self.c(x, 1.0)], x.dtype, x.shape)
        if k == 5:
            return self.emit1('Neg', [self.emit1('Neg', [x], x.dtype, x.shape)], x.dtype, x.shape)
        if k == 6:
            return self.emit1('Sqrt', [self.emit1('Mul', [x, x], x.dtype, x.shape)], x.dtype, x.shape)
        if k == 7:
            return self.emit1('Log', [self.emit1('Exp', [x], x.dtype, x.shape)], x.dtype, x.shape)
        if k == 8:
            return self.emit1('Reciprocal', [self.emit1('Reciprocal', [x], x.dtype, x.shape)], x.dtype, x.shape)
        if k == 9:
            return self.emit1('Pow', [x, self.c(x, float(r.choice([1.0, 2.0, 0.5, 0.0])))], x.dtype, x.shape)
        if k == 10:
            return self.emit1('Sub', [x, self.c(x, float(r.choice([0.0, -0.0])))], x.dtype, x.shape)
        if k == 11:
            return self.emit1('Max', [x, x], x.dtype, x.shape)
        if k == 12:
            y = self.partner(x)
            return self.emit1('Sub', [x, self.emit1('Neg', [y], x.dtype, y.shape)], x.dtype, bcast(x.shape, y.shape))
        if k == 13:
            y = self.partner(x)
            return self.emit1('Mul', [x, self.emit1('Reciprocal', [y], x.dtype, y.shape)], x.dtype, bcast(x.shape, y.shape))
        if k == 14:
            c = self.op_cast(x, F64 if x.dtype != F64 else F32)
            return self.op_cast(c, x.dtype)
        return self.emit1('Relu', [self.emit1('Relu', [x], x.dtype, x.shape)], x.dtype, x.shape)

    def m_reshape_chain(self):
        x = self.fval(min_rank=1)
        k = self.rng.random()
        if k < 0.4:
            return self.op_reshape(self.op_reshape(x))
        if k < 0.7:
            return self.op_transpose(self.op_transpose(x))
        u = self.emit1('Unsqueeze', [x] + self.axes_arg('Unsqueeze', [0], 13)[0], x.dtype, (1,) + x.shape,
                       **self.axes_arg('Unsqueeze', [0], 13)[1])
        return self.emit1('Squeeze', [u] + self.axes_arg('Squeeze', [0], 13)[0], x.dtype, x.shape,
                          **self.axes_arg('Squeeze', [0], 13)[1])

    # --- rule instances spliced into the context ---------------------------------------
    def splice(self):
        cands = self.instances.get(self.opset)
        if not cands:
            raise Reject('no instance')
        rule, path = cands[int(self.rng.integers(0, len(cands)))]
        m = onnx.load(path)
        g = m.graph
        pre = self.name('r') + '_'
        ren = {'': ''}
        init_names = {t.name for t in g.initializer}
        for t in g.initializer:
            t2 = onnx.TensorProto(); t2.CopyFrom(t); t2.name = pre + t.name
            self.inits.append(t2); ren[t.name] = t2.name
        for vi in g.input:
            if vi.name in init_names:
                continue
            tt = vi.type.tensor_type
            if tt.elem_type not in FROM_TP or not tt.HasField('shape'):
                raise Reject('instance input')
            dt = FROM_TP[tt.elem_type]
            shape = tuple(d.dim_value for d in tt.shape.dim)
            v = self.pick(lambda v: v.dtype == dt and v.shape == shape) if self.rng.random() < 0.8 else None
            if v is None and dt != BOOL and self.rng.random() < 0.5:
                src = self.pick(lambda v: v.dtype == dt and numel(v.shape) == numel(shape) and v.rank > 0)
                if src is not None and len(shape):
                    v = self.emit1('Reshape', [src, self.i64(list(shape))], dt, shape)
            if v is None:
                v = self.new_input(dt, shape)
            ren[vi.name] = v.name
        for n in g.node:
            for o in n.output:
                ren[o] = pre + o if o else ''
        for n in g.node:
            if n.domain not in ('', 'ai.onnx'):
                self.ms = True
            n2 = onnx.NodeProto(); n2.CopyFrom(n)
            del n2.input[:]; n2.input.extend(ren.get(i, i) for i in n.input)
            del n2.output[:]; n2.output.extend(ren[o] for o in n.output)
            n2.name = f'n{len(self.nodes)}'
            self.nodes.append(n2)
        # the instance's values join the pool (intermediates too, so they get other consumers)
        try:
            inf = onnx.shape_inference.infer_shapes(m)
            vis = list(inf.graph.value_info) + list(g.output)
        except Exception:
            vis = list(g.output)
        for vi in vis:
            tt = vi.type.tensor_type
            if tt.elem_type in FROM_TP and tt.HasField('shape') and all(d.HasField('dim_value') for d in tt.shape.dim) \
                    and vi.name in ren:
                v = Val(ren[vi.name], FROM_TP[tt.elem_type], tuple(d.dim_value for d in tt.shape.dim))
                if numel(v.shape) <= MAX_ELEMS:
                    self.pool.append(v)
        self.tags.append('rule:' + rule)
        return None

    # --- the whole graph -------------------------------------------------------------
    OPS = [('op_unary', 10), ('op_binary', 12), ('op_compare', 3), ('op_isnan', 1), ('op_reduce', 5),
           ('op_transpose', 4), ('op_reshape', 4), ('op_flatten', 1), ('op_squeeze', 3), ('op_slice', 4),
           ('op_concat', 3), ('op_split', 2), ('op_gather', 2), ('op_expand', 2), ('op_tile', 1), ('op_cast', 3),
           ('op_shape_chain', 2), ('op_constant_of_shape', 1), ('op_pad', 2), ('op_clip', 2), ('op_cumsum', 1),
           ('op_topk', 1), ('op_dropout', 1), ('op_conv', 4), ('op_conv_transpose', 1), ('op_bn', 2),
           ('op_instnorm', 1), ('op_pool', 2), ('op_matmul', 4), ('op_gemm', 2), ('op_softmax', 2),
           ('op_layernorm', 2), ('op_prelu', 2), ('op_depth_to_space', 1), ('op_where', 1),
           ('m_swish', 2), ('m_hardswish', 1), ('m_gelu_erf', 2), ('m_gelu_tanh', 2), ('m_layernorm', 2),
           ('m_rmsnorm', 2), ('m_conv_affine', 3), ('m_pad_conv', 1), ('m_transpose_sandwich', 3),
           ('m_slice_reshape_cast', 2), ('m_clip_minmax', 2), ('m_prelu_written', 2), ('m_logsoftmax_written', 2),
           ('m_attention', 2), ('m_identities', 4), ('m_reshape_chain', 2)]

    def build(self):
        r = self.rng
        target = int(r.integers(3, 26))
        ops, w = zip(*self.OPS)
        w = np.array(w, dtype=float); w /= w.sum()
        n_splice = int(r.choice([0, 0, 1, 1, 2])) if self.instances.get(self.opset) else 0
        splice_at = set(int(i) for i in r.integers(0, max(target, 1), size=n_splice))
        tries = 0
        while len(self.nodes) < target and tries < 200:
            tries += 1
            state = (len(self.nodes), len(self.inits), len(self.inputs), len(self.pool), self.n, dict(self.input_shapes), self.ms)
            which = 'splice' if len(self.nodes) in splice_at and tries < 50 else str(r.choice(ops, p=w))
            try:
                getattr(self, which)()
                if which == 'splice':
                    splice_at.discard(state[0])
                elif which.startswith('m_'):
                    self.tags.append(which[2:])
            except Reject:
                if which == 'splice':
                    splice_at.discard(state[0])
                nn, ni, nin, npool, n, shapes, ms = state
                del self.nodes[nn:]; del self.inits[ni:]; del self.inputs[nin:]; del self.pool[npool:]
                self.n, self.input_shapes, self.ms = n, shapes, ms
        return self.finish()

    def finish(self):
        r = self.rng
        consumed = {i for n in self.nodes for i in n.input}
        inputs = set(self.input_shapes)
        produced = [o for n in self.nodes for o in n.output if o]
        vals = {v.name: v for v in self.pool}
        leaves = [o for o in produced if o not in consumed and o in vals]
        outs = leaves if len(leaves) <= 6 else [leaves[i] for i in sorted(r.choice(len(leaves), 6, replace=False))]
        for o in produced:
            if o not in outs and o in vals and r.random() < 0.15:
                outs.append(o)
        if not outs:
            raise Reject('no outputs')
        r.shuffle(outs)
        outputs = [helper.make_tensor_value_info(o, TP[vals[o].dtype] if o in vals else 0, None) for o in outs]
        imports = [helper.make_opsetid('', self.opset)]
        if self.ms:
            imports.append(helper.make_opsetid('com.microsoft', 1))
        # only the inputs some node reads (spliced instances may have been cut)
        used_inputs = [vi for vi in self.inputs if vi.name in consumed]
        for name in list(self.input_shapes):
            if name not in consumed:
                del self.input_shapes[name]
        g = helper.make_graph(self.nodes, f'difftest_{self.seed}', used_inputs, outputs, self.inits)
        m = helper.make_model(g, opset_imports=imports, producer_name='graft-difftest')
        m.ir_version = {11: 6, 12: 7, 13: 7, 14: 7, 15: 8, 16: 8, 17: 8, 18: 8, 19: 9, 20: 9, 21: 10}[self.opset]
        self.model = m
        self.vals = vals
        return m


class Reject(Exception):
    pass


def fix_outputs(m, vals):
    """Give every graph output its type: strict shape inference's where onnx knows the opset,
    else the generator's own dtype and shape.  Raises on inference errors, and on a
    ConvTranspose over zero input channels: ONNX Runtime leaves its output buffer unwritten
    there, so its results change from run to run (docs/evaluator.md; seeds 319309, 421220)."""
    for n in m.graph.node:
        x = vals.get(n.input[0]) if n.op_type == 'ConvTranspose' and n.input else None
        if x is not None and x.ndim >= 2 and x.shape[1] == 0:
            raise Reject('ConvTranspose over zero input channels')
    if max(o.version for o in m.opset_import if o.domain in ('', 'ai.onnx')) <= ONNX_MAX_OPSET and \
            not any(o.domain == 'com.microsoft' for o in m.opset_import):
        inf = onnx.shape_inference.infer_shapes(m, check_type=True, strict_mode=True)
        known = {vi.name: vi for vi in list(inf.graph.value_info) + list(inf.graph.output)}
        for vi in known.values():   # the generator's shapes must agree with onnx's
            v = vals.get(vi.name)
            tt = vi.type.tensor_type
            if v is not None and tt.HasField('shape') and all(d.HasField('dim_value') for d in tt.shape.dim):
                got = tuple(d.dim_value for d in tt.shape.dim)
                if got != v.shape or FROM_TP.get(tt.elem_type) != v.dtype:
                    raise Reject(f'generator shape rule: {vi.name} onnx {got} {tt.elem_type} vs {v.shape} {v.dtype}')
        for o in m.graph.output:
            t = known[o.name].type if o.name in known else None
            if t is not None and t.tensor_type.elem_type and t.tensor_type.HasField('shape'):
                o.type.CopyFrom(t)
            elif o.name in vals:
                o.type.CopyFrom(helper.make_tensor_type_proto(TP[vals[o.name].dtype], vals[o.name].shape))
        onnx.checker.check_model(m, full_check=True)
    else:
        for o in m.graph.output:
            v = vals.get(o.name)
            if v is not None:
                o.type.CopyFrom(helper.make_tensor_type_proto(TP[v.dtype], v.shape))
        # no schema for these opsets in this python3-onnx: ORT's load is the check
    for o in m.graph.output:
        if not o.type.tensor_type.elem_type:
            raise Reject('untyped output')


def load_instances(folder):
    """{opset: [(rule, path)]} of graft verify --keep's left sides (RULE.K.onnx)."""
    out = {}
    for p in sorted(glob.glob(os.path.join(folder, '*.onnx'))):
        if p.endswith('.rewritten.onnx'):
            continue
        rule = os.path.basename(p).rsplit('.', 2)[0]
        try:
            m = onnx.load(p)
        except Exception:
            continue
        ops = [o.version for o in m.opset_import if o.domain in ('', 'ai.onnx')]
        if ops and 11 <= ops[0] <= 21 and m.graph.ByteSize() < 20000:
            out.setdefault(ops[0], []).append((rule, p))
    return out


def generate(seed, instances=None, tries=20):
    """A valid graph for seed (re-drawn from derived seeds while invalid).
    Returns (Graph, rejects)."""
    rejects = 0
    for k in range(tries):
        g = Graph(seed * 1000 + k, instances)
        try:
            m = g.build()
            fix_outputs(m, g.vals)
            g.seed = seed
            return g, rejects
        except (Reject, onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as e:
            g.reject = str(e)
            rejects += 1
        except Exception as e:  # onnx C++ errors surface as RuntimeError etc.
            g.reject = str(e)
            rejects += 1
    return None, rejects


def make_inputs(g, seed, special):
    """{name: ndarray}: floats uniform in [-1,1) (x3 now and then), ints in [-4,5), bools;
    special sets replace ~25% of the elements with -0, +-inf, NaN, denormals, extremes, 0, 1."""
    rng = np.random.default_rng([seed, 7919 if special else 17])
    scale = float(rng.choice([1.0, 1.0, 3.0]))
    out = {}
    for name, (dt, shape) in g.input_shapes.items():
        if dt in FLOATS:
            a = (rng.uniform(-1, 1, size=shape) * scale).astype(dt)
        elif dt in INTS:
            a = rng.integers(-4, 5, size=shape).astype(dt)
        else:
            a = rng.random(shape) < 0.5
        if special and dt != BOOL and a.size:
            mask = rng.random(a.shape) < 0.25
            a = np.where(mask, np.array(rng.choice(specials(dt), size=a.shape)).astype(dt), a).astype(dt)
        out[name] = np.asarray(a, dtype=dt)
    return out


if __name__ == '__main__':
    seed = int(sys.argv[1])
    inst = load_instances(os.environ['DIFFTEST_INSTANCES']) if os.environ.get('DIFFTEST_INSTANCES') else None
    g, rej = generate(seed, inst)
    if g is None:
        sys.exit(f'seed {seed}: no valid graph ({rej} rejected)')
    if len(sys.argv) > 2:
        onnx.save(g.model, sys.argv[2])
    else:
        print(helper.printable_graph(g.model.graph))
    print(f'opset {g.opset} dtype {g.fdt} nodes {len(g.model.graph.node)} rejects {rej} tags {g.tags}', file=sys.stderr)
