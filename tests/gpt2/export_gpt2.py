#!/usr/bin/env python3
"""export_gpt2.py - small GPT-2 style decoders exported from PyTorch, the
fixtures of the vendor-mode GPT-2 attention fusion (issue 27, item 4).

The model is tests/bench/export_big.py's GPT2 (pre-LN layers, its
SelfAttention with causal=True: the causal mask computed in the graph from
two aranges, masked_fill with -inf, the heads merged by Transpose + Reshape),
made small: hidden 64, 2 layers, 4 heads, vocab 64, 16 positions, random
weights (torch.manual_seed(0)), exported "raw" (do_constant_folding=False)
at opset 17.

    python3 tests/gpt2/export_gpt2.py OUTDIR

writes OUTDIR/gpt2_static.onnx (input_ids [1, 8]) and OUTDIR/gpt2_dyn.onnx
(input_ids [batch, seq]).  Needs Debian's python3-torch (only for
regenerating; the tests read the committed .onnx).
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
import export_big  # noqa: E402


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    for name, dyn in (("gpt2_static", None), ("gpt2_dyn", {"input_ids": {0: "batch", 1: "seq"}})):
        torch.manual_seed(0)
        model = export_big.GPT2(vocab=64, hidden=64, layers=2, heads=4, positions=16)
        ids = torch.randint(0, 64, (1, 8))
        export_big.export(model, (ids,), os.path.join(out, name + ".onnx"), ["input_ids"], ["logits"], dyn, 17)


if __name__ == "__main__":
    main()
