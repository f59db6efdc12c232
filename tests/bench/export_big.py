#!/usr/bin/env python3
"""export_big.py - the large models of `make bench-big` (issue 29), exported
from PyTorch with random weights (torch.manual_seed(0)), never downloaded.

    python3 tests/bench/export_big.py OUTDIR [NAME ...]

writes OUTDIR/NAME/model.onnx (and model.onnx.data where the model keeps its
weights in external data) for each NAME (default: all), skipping those already
there:

  resnet50        ResNet-50 (bottleneck blocks 3-4-6-3), opset 13, 102 MB
  bert_base       BERT-base encoder (hidden 768, 12 layers, 12 heads, FFN 3072,
                  vocab 30522), opset 13, 438 MB
  bert_base_17    the same at opset 17 (torch writes LayerNormalization)
  bert_base_ext   bert_base with every weight in model.onnx.data
  gpt2_small      GPT-2 small (hidden 768, 12 layers, vocab 50257, the LM head
                  tied to the embedding), opset 13, 499 MB
  vit_b16         ViT-B/16 (224x224, patch 16, hidden 768, 12 layers), opset 13
  llama_ext       a Llama-style decoder (tests/llama/export_llama.py's, hidden
                  2048, 15 layers, 16 over 4 heads, vocab 32000), 0.67 B
                  parameters in external data, 2.7 GB, prefill, opset 17
  transposes_ext  ten 8192x8192 float weights in external data (2.7 GB), each
                  read through a Transpose into a MatMul: the folds make 2.7 GB
                  of new tensors

All are exported "raw" (do_constant_folding=False), as a training script
writes them, so the optimizer has the Transposes of Linear weights, the
BatchNormalizations and the shape arithmetic to fold.  Needs Debian's
python3-torch, python3-onnx and numpy.
"""
import math
import os
import shutil
import sys
import tempfile

import numpy as np
import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))


class Bottleneck(nn.Module):
    def __init__(self, cin, width, stride):
        super().__init__()
        cout = width * 4
        self.body = nn.Sequential(
            nn.Conv2d(cin, width, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU(),
            nn.Conv2d(width, width, 3, stride, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU(),
            nn.Conv2d(width, cout, 1, bias=False), nn.BatchNorm2d(cout))
        self.down = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
                     if stride != 1 or cin != cout else nn.Identity())

    def forward(self, x):
        return torch.relu(self.body(x) + self.down(x))


class ResNet50(nn.Module):
    def __init__(self):
        super().__init__()
        layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(3, 2, 1)]
        cin = 64
        for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
            for b in range(blocks):
                layers.append(Bottleneck(cin, width, stride if b == 0 else 1))
                cin = width * 4
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(2048, 1000)

    def forward(self, x):
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(self.features(x), 1), 1))


class SelfAttention(nn.Module):
    def __init__(self, hidden, heads, causal=False):
        super().__init__()
        self.heads, self.causal = heads, causal
        self.q, self.k, self.v = (nn.Linear(hidden, hidden) for _ in range(3))
        self.o = nn.Linear(hidden, hidden)

    def forward(self, x, mask=None):
        b, s, h = x.shape
        d = h // self.heads
        split = lambda t: t.view(b, s, self.heads, d).transpose(1, 2)
        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        scores = q @ k.transpose(-1, -2) / math.sqrt(d)
        if mask is not None:
            scores = scores + mask
        if self.causal:
            keep = torch.arange(s)[:, None] >= torch.arange(s)[None, :]
            scores = scores.masked_fill(~keep, float("-inf"))
        return self.o((scores.softmax(-1) @ v).transpose(1, 2).reshape(b, s, h))


class EncoderLayer(nn.Module):
    """post-LN (BERT) or pre-LN (ViT, GPT-2) transformer layer"""

    def __init__(self, hidden, heads, ffn, pre_ln, causal=False, gelu="none"):
        super().__init__()
        self.attn = SelfAttention(hidden, heads, causal)
        self.ln1, self.ln2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
        self.ffn = nn.Sequential(nn.Linear(hidden, ffn), nn.GELU(approximate=gelu), nn.Linear(ffn, hidden))
        self.pre_ln = pre_ln

    def forward(self, x, mask=None):
        if self.pre_ln:
            x = x + self.attn(self.ln1(x), mask)
            return x + self.ffn(self.ln2(x))
        x = self.ln1(x + self.attn(x, mask))
        return self.ln2(x + self.ffn(x))


class Bert(nn.Module):
    def __init__(self, vocab=30522, hidden=768, layers=12, heads=12, ffn=3072):
        super().__init__()
        self.word, self.pos, self.segment = nn.Embedding(vocab, hidden), nn.Embedding(512, hidden), nn.Embedding(2, hidden)
        self.ln = nn.LayerNorm(hidden)
        self.layers = nn.ModuleList(EncoderLayer(hidden, heads, ffn, False) for _ in range(layers))
        self.pool = nn.Linear(hidden, hidden)

    def forward(self, input_ids, attention_mask):
        s = input_ids.shape[1]
        x = self.ln(self.word(input_ids) + self.pos(torch.arange(s)[None, :]) + self.segment(torch.zeros_like(input_ids)))
        mask = (1.0 - attention_mask[:, None, None, :].float()) * -10000.0
        for layer in self.layers:
            x = layer(x, mask)
        return x, torch.tanh(self.pool(x[:, 0]))


class GPT2(nn.Module):
    def __init__(self, vocab=50257, hidden=768, layers=12, heads=12, positions=1024):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, hidden), nn.Embedding(positions, hidden)
        self.layers = nn.ModuleList(EncoderLayer(hidden, heads, 4 * hidden, True, True, "tanh") for _ in range(layers))
        self.ln_f = nn.LayerNorm(hidden)

    def forward(self, input_ids):
        s = input_ids.shape[1]
        x = self.wte(input_ids) + self.wpe(torch.arange(s)[None, :])
        for layer in self.layers:
            x = layer(x)
        return self.ln_f(x) @ self.wte.weight.t()   # the LM head tied to the embedding


class ViT(nn.Module):
    def __init__(self, hidden=768, layers=12, heads=12, classes=1000):
        super().__init__()
        self.patch = nn.Conv2d(3, hidden, 16, 16)
        self.cls = nn.Parameter(torch.randn(1, 1, hidden) * 0.02)
        self.pos = nn.Parameter(torch.randn(1, 197, hidden) * 0.02)
        self.layers = nn.ModuleList(EncoderLayer(hidden, heads, 4 * hidden, True) for _ in range(layers))
        self.ln, self.head = nn.LayerNorm(hidden), nn.Linear(hidden, classes)

    def forward(self, img):
        x = self.patch(img).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], 1) + self.pos
        for layer in self.layers:
            x = layer(x)
        return self.head(self.ln(x)[:, 0])


def export(model, args, path, names_in, names_out, dyn, opset, external=False):
    torch.manual_seed(0)
    with torch.no_grad():
        if not external:
            torch.onnx.export(model.eval(), args, path, input_names=names_in, output_names=names_out,
                              dynamic_axes=dyn, opset_version=opset, do_constant_folding=False)
            return
        import onnx
        with tempfile.TemporaryDirectory(dir=os.path.dirname(path)) as tmp:
            torch.onnx.export(model.eval(), args, os.path.join(tmp, "m.onnx"), input_names=names_in,
                              output_names=names_out, dynamic_axes=dyn, opset_version=opset,
                              do_constant_folding=False)
            m = onnx.load(os.path.join(tmp, "m.onnx"))
            onnx.save(m, path, save_as_external_data=True, all_tensors_to_one_file=True,
                      location=os.path.basename(path) + ".data", size_threshold=1024)


def make(name, path):
    bert_dyn = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}}
    ids = torch.randint(0, 30522, (1, 128))
    if name == "resnet50":
        torch.manual_seed(0)
        export(ResNet50(), (torch.randn(1, 3, 224, 224),), path, ["input"], ["logits"], {"input": {0: "batch"}}, 13)
    elif name in ("bert_base", "bert_base_17", "bert_base_ext"):
        torch.manual_seed(0)
        export(Bert(), (ids, torch.ones_like(ids)), path, ["input_ids", "attention_mask"], ["hidden", "pooled"],
               bert_dyn, 17 if name == "bert_base_17" else 13, external=name == "bert_base_ext")
    elif name == "gpt2_small":
        torch.manual_seed(0)
        export(GPT2(), (torch.randint(0, 50257, (1, 64)),), path, ["input_ids"], ["logits"],
               {"input_ids": {0: "batch", 1: "seq"}}, 13)
    elif name == "vit_b16":
        torch.manual_seed(0)
        export(ViT(), (torch.randn(1, 3, 224, 224),), path, ["pixel_values"], ["logits"],
               {"pixel_values": {0: "batch"}}, 13)
    elif name == "llama_ext":
        sys.path.insert(0, os.path.join(HERE, "..", "llama"))
        import export_llama as el
        torch.manual_seed(0)
        model = el.Decoder(32000, 2048, 16, 4, 4096, 15).eval()
        with tempfile.TemporaryDirectory(dir=os.path.dirname(path)) as tmp, torch.no_grad():
            torch.onnx.export(model, (torch.randint(0, 32000, (1, 16)), torch.arange(16)[None, :]),
                              os.path.join(tmp, "m.onnx"), input_names=["input_ids", "position_ids"],
                              output_names=["logits"] + [f"present_{kv}_{i}" for i in range(15) for kv in ("key", "value")],
                              dynamic_axes={"input_ids": {0: "batch", 1: "seq"}, "position_ids": {0: "batch", 1: "seq"}},
                              opset_version=17, custom_opsets={"graft_export": 1})
            el.finish_model(os.path.join(tmp, "m.onnx"), False, out=path)
    elif name == "transposes_ext":
        import onnx
        from onnx import helper, numpy_helper, TensorProto
        n, k = 8192, 10
        rng = np.random.default_rng(29)
        inits, nodes, x = [], [], "x"
        for i in range(k):
            inits.append(numpy_helper.from_array(
                rng.standard_normal((n, n), dtype=np.float32) / np.float32(math.sqrt(n)), f"w{i}"))
            nodes += [helper.make_node("Transpose", [f"w{i}"], [f"wT{i}"], perm=[1, 0]),
                      helper.make_node("MatMul", [x, f"wT{i}"], [f"h{i}"]),
                      helper.make_node("Tanh", [f"h{i}"], [f"r{i}"])]
            x = f"r{i}"
        g = helper.make_graph(nodes, "transposes", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, n])],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, [2, n])], inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 8
        onnx.save(m, path, save_as_external_data=True, all_tensors_to_one_file=True,
                  location=os.path.basename(path) + ".data", size_threshold=1024)
    else:
        sys.exit(f"export_big.py: no model named {name}")


ALL = ["resnet50", "bert_base", "bert_base_17", "bert_base_ext", "gpt2_small", "vit_b16", "llama_ext",
       "transposes_ext"]

if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    for name in sys.argv[2:] or ALL:
        d = os.path.join(out, name)
        path = os.path.join(d, "model.onnx")
        if os.path.exists(path):
            continue
        os.makedirs(d, exist_ok=True)
        print(f"export_big.py: {name}", file=sys.stderr, flush=True)
        make(name, path + ".part")
        if os.path.exists(path + ".part.data"):
            # the data file is named in the model: keep the name, rename the model last
            import onnx
            m = onnx.load(path + ".part", load_external_data=False)
            for t in m.graph.initializer:
                for e in t.external_data:
                    if e.key == "location":
                        e.value = "model.onnx.data"
            os.rename(path + ".part.data", path + ".data")
            onnx.save(m, path + ".part")
        os.rename(path + ".part", path)
