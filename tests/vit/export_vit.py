#!/usr/bin/env python3
"""export_vit.py - small ViT encoders exported from PyTorch, the fixtures of
the vendor-mode fusion of torch's sequence-first attention (issue 27, item 4).

Written as torchvision's vit_b_16 writes its blocks: pre-LN layers whose
attention is nn.MultiheadAttention(batch_first=True), which works on
[S, B, D] inside (one in-projection split in three, the heads reshaped to
[S, B * heads, head] and transposed, the output transposed back and
reshaped to [S * B, D] for the out-projection).  Small: 32x32 images, 8x8
patches (16 + the class token), hidden 64, 4 heads, 2 layers, MLP 128, 10
classes; random weights (torch.manual_seed(0)), exported "raw"
(do_constant_folding=False) at opset 17.

    python3 tests/vit/export_vit.py OUTDIR

writes OUTDIR/vit_static.onnx (pixel_values [1, 3, 32, 32]) and
OUTDIR/vit_dyn.onnx (pixel_values [batch, 3, 32, 32]).  Needs Debian's
python3-torch (only for regenerating; the tests read the committed .onnx).
"""
import os
import sys

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, hidden, heads, mlp):
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(hidden, eps=1e-6), nn.LayerNorm(hidden, eps=1e-6)
        self.self_attention = nn.MultiheadAttention(hidden, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(hidden, mlp), nn.GELU(), nn.Linear(mlp, hidden))

    def forward(self, x):
        y = self.ln_1(x)
        y, _ = self.self_attention(y, y, y, need_weights=False)
        x = x + y
        return x + self.mlp(self.ln_2(x))


class ViT(nn.Module):
    def __init__(self, image=32, patch=8, hidden=64, heads=4, layers=2, mlp=128, classes=10):
        super().__init__()
        self.conv_proj = nn.Conv2d(3, hidden, patch, patch)
        self.class_token = nn.Parameter(torch.randn(1, 1, hidden) * 0.02)
        self.pos_embedding = nn.Parameter(torch.randn(1, (image // patch) ** 2 + 1, hidden) * 0.02)
        self.layers = nn.Sequential(*(Block(hidden, heads, mlp) for _ in range(layers)))
        self.ln = nn.LayerNorm(hidden, eps=1e-6)
        self.head = nn.Linear(hidden, classes)

    def forward(self, img):
        x = self.conv_proj(img).flatten(2).transpose(1, 2)
        x = torch.cat([self.class_token.expand(x.shape[0], -1, -1), x], 1) + self.pos_embedding
        return self.head(self.ln(self.layers(x))[:, 0])


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    for name, dyn in (("vit_static", None), ("vit_dyn", {"pixel_values": {0: "batch"}})):
        torch.manual_seed(0)
        model = ViT().eval()
        # with gradients on: under no_grad nn.MultiheadAttention takes its
        # fused fast path, which the exporter cannot write
        torch.onnx.export(model, (torch.randn(1, 3, 32, 32),), os.path.join(out, name + ".onnx"),
                          input_names=["pixel_values"], output_names=["logits"], dynamic_axes=dyn,
                          opset_version=17, do_constant_folding=False)


if __name__ == "__main__":
    main()
