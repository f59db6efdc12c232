#!/usr/bin/env python3
"""export_llama.py - a small Llama-style decoder exported from PyTorch, the
fixture issue 27's LLM-decoder fusions are measured on.

Written the way Hugging Face's modeling_llama writes it (RMSNorm with a
float32 Cast and rsqrt, rotary embeddings with rotate_half, grouped-query
attention with repeat_kv, SwiGLU, a causal mask, a KV cache), with small
random weights (fixed seed), so the models are small enough to keep in the
repository and the benchmark (tests/llama/bench.sh) can regenerate larger
ones with --hidden/--layers.

    python3 tests/llama/export_llama.py OUTDIR [--hidden 64] [--layers 2]
        [--dtype float32|float16]

writes OUTDIR/llama_prefill.onnx (input_ids, position_ids [batch, seq];
logits and the present keys/values out) and OUTDIR/llama_decode.onnx (the
same plus past_key_N/past_value_N [batch, kv_heads, past, head_dim]), both
with dynamic batch/sequence/past dims, opset 17.  Needs Debian's
python3-torch (only for regenerating; the tests read the committed .onnx).

--dtype float16 writes the float16 model Hugging Face exports from a half
model (torch 1.13 cannot run half Linear layers on CPU, so the model is
traced in float32 and then typed): weights, activations and the KV cache in
float16, the RMSNorm statistics, the rotary angles and the softmax in float32
between explicit Casts, as modeling_llama computes them.  The model's own
`.to(dtype)` casts are traced through ToModelDtype, a marker finish_model()
turns into the Cast to the model's type; it then gives every float constant
the type of the values it meets.
"""
import argparse
import math
import os

import torch
from torch import nn


class ToModelDtype(torch.autograd.Function):
    """x.to(model dtype): the identity while tracing in float32, exported as
    a marker op graft_export::ToModel that finish_model() turns into the Cast
    to the model's type (a Cast typed half in the trace would make the
    exporter cast it back to the traced float32 wherever it meets a float)."""

    @staticmethod
    def forward(ctx, x, float32=False):
        return x.clone()

    @staticmethod
    def symbolic(g, x, float32=False):
        y = g.op("graft_export::ToModel", x, float32_i=int(float32))
        y.setType(x.type())
        return y


def to_float32(x):
    """x.to(torch.float32) as modeling_llama writes it (a marker too: traced
    in float32, a plain .float() would vanish and its users read x)."""
    return ToModelDtype.apply(x, True)


def to_model(x):
    return ToModelDtype.apply(x)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim) + 0.1 * torch.randn(dim))
        self.eps = eps

    def forward(self, x):
        x = to_float32(x)
        variance = x.pow(2).mean(-1, keepdim=True)
        x = x * torch.rsqrt(variance + self.eps)
        return self.weight * to_model(x)


def rotate_half(x):
    half = x.shape[-1] // 2
    x1 = x[..., :half]
    x2 = x[..., half:]
    return torch.cat((-x2, x1), dim=-1)


def repeat_kv(x, n_rep):
    b, kvh, s, d = x.shape
    if n_rep == 1:
        return x
    x = x[:, :, None, :, :].expand(b, kvh, n_rep, s, d)
    return x.reshape(b, kvh * n_rep, s, d)


class Rotary(nn.Module):
    def __init__(self, head_dim, base=10000.0):
        super().__init__()
        inv = 1.0 / (base ** (torch.arange(0, head_dim, 2).float() / head_dim))
        self.register_buffer("inv_freq", inv, persistent=False)

    def forward(self, x, position_ids):
        # [batch, seq, head_dim / 2] frequencies, duplicated to head_dim
        freqs = position_ids[:, :, None].float() * self.inv_freq[None, None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        return to_model(emb.cos()), to_model(emb.sin())


class Attention(nn.Module):
    def __init__(self, hidden, heads, kv_heads):
        super().__init__()
        self.heads, self.kv_heads = heads, kv_heads
        self.head_dim = hidden // heads
        self.q_proj = nn.Linear(hidden, heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(heads * self.head_dim, hidden, bias=False)

    def forward(self, x, cos, sin, mask, past):
        b, s, _ = x.shape
        q = self.q_proj(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        if past is not None:
            k = torch.cat((past[0], k), dim=2)
            v = torch.cat((past[1], v), dim=2)
        present = (k, v)
        n_rep = self.heads // self.kv_heads
        k, v = repeat_kv(k, n_rep), repeat_kv(v, n_rep)
        scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.head_dim)
        scores = scores + mask
        probs = to_model(torch.softmax(to_float32(scores), dim=-1))
        out = torch.matmul(probs, v).transpose(1, 2).reshape(b, s, -1)
        return self.o_proj(out), present


class MLP(nn.Module):
    def __init__(self, hidden, inter):
        super().__init__()
        self.gate_proj = nn.Linear(hidden, inter, bias=False)
        self.up_proj = nn.Linear(hidden, inter, bias=False)
        self.down_proj = nn.Linear(inter, hidden, bias=False)

    def forward(self, x):
        return self.down_proj(nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))


class Layer(nn.Module):
    def __init__(self, hidden, heads, kv_heads, inter):
        super().__init__()
        self.input_layernorm = RMSNorm(hidden)
        self.self_attn = Attention(hidden, heads, kv_heads)
        self.post_attention_layernorm = RMSNorm(hidden)
        self.mlp = MLP(hidden, inter)

    def forward(self, x, cos, sin, mask, past):
        h, present = self.self_attn(self.input_layernorm(x), cos, sin, mask, past)
        x = x + h
        return x + self.mlp(self.post_attention_layernorm(x)), present


class Decoder(nn.Module):
    def __init__(self, vocab, hidden, heads, kv_heads, inter, layers):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, hidden)
        self.rotary = Rotary(hidden // heads)
        self.layers = nn.ModuleList(Layer(hidden, heads, kv_heads, inter) for _ in range(layers))
        self.norm = RMSNorm(hidden)
        self.lm_head = nn.Linear(hidden, vocab, bias=False)

    def forward(self, input_ids, position_ids, *past_flat):
        x = self.embed_tokens(input_ids)
        cos, sin = self.rotary(x, position_ids)
        s = input_ids.shape[1]
        p = past_flat[0].shape[2] if past_flat else 0
        # causal mask over [seq, past + seq]: query i sees keys j <= p + i
        qi = torch.arange(s)[:, None] + p
        kj = torch.arange(p + s)[None, :]
        mask = torch.where(kj > qi, torch.tensor(torch.finfo(x.dtype).min, dtype=x.dtype),
                           torch.tensor(0.0, dtype=x.dtype))[None, None, :, :]
        presents = []
        for i, layer in enumerate(self.layers):
            past = (past_flat[2 * i], past_flat[2 * i + 1]) if past_flat else None
            x, present = layer(x, cos, sin, mask, past)
            presents.extend(present)
        return (self.lm_head(self.norm(x)), *presents)


def finish_model(path, half, out=None):
    """The markers become Casts to the model's type; with half, the float32
    trace is typed as the float16 model: graph inputs/outputs and float
    initializers and constants in float16, except where a constant meets a
    float32 value (the statistics between the model's Casts).  With out
    (float32 only), the model goes to out with every weight in one external
    data file, out + ".data" (torch writes a model over 2 GB as a file per
    tensor beside path)."""
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper, TensorProto as T

    m = onnx.load(path)
    g = m.graph
    for n in g.node:
        if n.domain == "graft_export":
            f32 = any(a.name == "float32" and a.i for a in n.attribute)
            n.op_type, n.domain = "Cast", ""
            del n.attribute[:]
            n.attribute.append(helper.make_attribute("to", T.FLOAT16 if half and not f32 else T.FLOAT))
    keep = [o for o in m.opset_import if o.domain != "graft_export"]
    del m.opset_import[:]
    m.opset_import.extend(keep)
    if out:
        onnx.save(m, out, save_as_external_data=True, all_tensors_to_one_file=True,
                  location=os.path.basename(out) + ".data", size_threshold=1024)
        onnx.checker.check_model(out)
        return
    if not half:
        onnx.checker.check_model(m)
        onnx.save(m, path)
        return
    F16, F32 = T.FLOAT16, T.FLOAT
    for vi in list(g.input) + list(g.output):
        if vi.type.tensor_type.elem_type == F32:
            vi.type.tensor_type.elem_type = F16
    del g.value_info[:]  # the trace's float32 types of intermediates
    inits = {t.name: t for t in g.initializer}
    consts = {n.output[0]: n for n in g.node if n.op_type == "Constant"}
    dtype = {vi.name: vi.type.tensor_type.elem_type for vi in g.input}
    same_as_input = {"Gather", "Reshape", "Transpose", "Unsqueeze", "Squeeze", "Slice", "Concat", "Split",
                     "Expand", "Neg", "Sqrt", "Cos", "Sin", "Softmax", "Sigmoid", "Identity", "ReduceMean",
                     "MatMul", "Add", "Mul", "Div", "Sub", "Pow", "Where", "Range"}
    typed = {}

    def const_type(name):
        if name in inits:
            return inits[name].data_type
        if name in consts:
            return consts[name].attribute[0].t.data_type
        return None

    def retype(name, to):
        """The constant `name` as type `to` (a copy named for it if needed)."""
        t = inits[name] if name in inits else consts[name].attribute[0].t
        if t.data_type == to or t.data_type not in (F16, F32):
            return name
        key = (name, to)
        if key not in typed:
            arr = numpy_helper.to_array(t).astype(np.float32)
            if to == F16:
                arr = np.clip(arr, -65504.0, 65504.0).astype(np.float16)
            new = numpy_helper.from_array(arr, name + ("_f16" if to == F16 else "_f32"))
            g.initializer.append(new)
            inits[new.name] = new
            typed[key] = new.name
        return typed[key]

    for n in g.node:
        if n.op_type == "Constant":
            continue
        ins = list(n.input)
        live = [dtype.get(i) for i in ins if i and const_type(i) is None]
        floats = [d for d in live if d in (F16, F32)]
        want = floats[0] if floats else F16
        first = 1 if n.op_type == "Where" else 0
        for k, i in enumerate(ins):
            if i and const_type(i) in (F16, F32) and not (n.op_type == "Range"):
                if n.op_type in ("Reshape", "Expand", "Slice", "Unsqueeze", "Squeeze", "Split") and k > 0:
                    continue
                n.input[k] = retype(i, want)
        if n.op_type == "Cast":
            out = next(a.i for a in n.attribute if a.name == "to")
        elif n.op_type in ("Shape", "Size"):
            out = T.INT64
        elif n.op_type in ("Equal", "Greater", "Less", "Not", "And", "Or"):
            out = T.BOOL
        elif n.op_type == "ConstantOfShape":
            out = next((a.t.data_type for a in n.attribute if a.name == "value"), F32)
        elif n.op_type in same_as_input:
            src = n.input[first]
            out = dtype.get(src, const_type(src))
        else:
            out = None
        for o in n.output:
            if out is not None:
                dtype[o] = out
    used = {i for n in g.node for i in n.input}
    keep = [t for t in g.initializer if t.name in used]  # the float32 originals of retyped weights go
    del g.initializer[:]
    g.initializer.extend(keep)
    onnx.checker.check_model(m)
    onnx.save(m, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--kv-heads", type=int, default=2)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--vocab", type=int, default=128)
    ap.add_argument("--dtype", choices=("float32", "float16"), default="float32")
    ap.add_argument("--opset", type=int, default=17)
    ap.add_argument("--static", action="store_true", help="no dynamic dims (batch 1, seq 5, past 5)")
    a = ap.parse_args()
    torch.manual_seed(0)
    model = Decoder(a.vocab, a.hidden, a.heads, a.kv_heads, a.hidden * 2, a.layers).eval()
    os.makedirs(a.outdir, exist_ok=True)
    suffix = ("" if a.dtype == "float32" else "_fp16") + ("_static" if a.static else "")
    hd = a.hidden // a.heads
    ids = torch.randint(0, a.vocab, (1, 5))
    pos = torch.arange(5)[None, :]
    names_io = ["input_ids", "position_ids"]
    dyn = {"input_ids": {0: "batch", 1: "seq"}, "position_ids": {0: "batch", 1: "seq"},
           "logits": {0: "batch", 1: "seq"}}
    present_names = []
    for i in range(a.layers):
        for kv in ("key", "value"):
            present_names.append(f"present_{kv}_{i}")
            dyn[f"present_{kv}_{i}"] = {0: "batch", 2: "total"}
    with torch.no_grad():
        torch.onnx.export(model, (ids, pos), os.path.join(a.outdir, f"llama_prefill{suffix}.onnx"),
                          input_names=names_io, output_names=["logits"] + present_names,
                          dynamic_axes=None if a.static else dyn, opset_version=a.opset,
                          custom_opsets={"graft_export": 1})
        dtype = torch.float32  # traced in float32 (finish_model types the float16 model)
        past = []
        past_names = []
        for i in range(a.layers):
            for kv in ("key", "value"):
                past.append(torch.randn(1, a.kv_heads, 5, hd, dtype=dtype))
                past_names.append(f"past_{kv}_{i}")
                dyn[f"past_{kv}_{i}"] = {0: "batch", 2: "past"}
        ids1 = torch.randint(0, a.vocab, (1, 1))
        pos1 = torch.tensor([[5]])
        torch.onnx.export(model, (ids1, pos1, *past), os.path.join(a.outdir, f"llama_decode{suffix}.onnx"),
                          input_names=names_io + past_names, output_names=["logits"] + present_names,
                          dynamic_axes=None if a.static else dyn, opset_version=a.opset,
                          custom_opsets={"graft_export": 1})
    for kind in ("prefill", "decode"):
        finish_model(os.path.join(a.outdir, f"llama_{kind}{suffix}.onnx"), a.dtype == "float16")


if __name__ == "__main__":
    main()
