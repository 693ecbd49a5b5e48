#!/usr/bin/env python3
"""PyTorch's counterpart of `cargo run -p experiments --example step_phases`: where one masked-LM
training step's time goes (encoder forward, LM head + loss, backward, AdamW), mean over 10 steps
after 2 warm-up steps. The model of scripts/bench_transformer_torch.py with its fused attention
(`sdpa`), a random [32, 64] batch over the text8 vocabulary, every sixth position a target (as
step_phases: 342 of 2048 here against its 307). Prints the same lines as step_phases.

    python3 scripts/step_phases_torch.py
"""
import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_transformer_torch import Encoder  # noqa: E402

torch.set_num_threads(os.cpu_count())
torch.manual_seed(1)
vocab, d, layers, h, ff = 22_546, 128, 4, 4, 512
batch, seq = 32, 64
steps = int(os.environ.get("STEPS", "10"))
model = Encoder(vocab, d, layers, h, ff, seq, True)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
names = ["encoder forward", "LM head + loss", "backward", "AdamW update"]
total = [0.0] * 4
mask = torch.zeros(batch * seq, dtype=torch.bool)
mask[::6] = True
mask = mask.view(batch, seq)
for s in range(2 + steps):
    ids = torch.randint(0, 22_541, (batch, seq))
    opt.zero_grad(set_to_none=True)
    t0 = time.perf_counter()
    hid = model(ids)
    t1 = time.perf_counter()
    loss = F.cross_entropy(model.logits(hid[mask]), ids[mask])
    t2 = time.perf_counter()
    loss.backward()
    t3 = time.perf_counter()
    opt.step()
    t4 = time.perf_counter()
    if s >= 2:
        for i, (a, b) in enumerate([(t0, t1), (t1, t2), (t2, t3), (t3, t4)]):
            total[i] += b - a
for name, t in zip(names, total):
    print(f"{name:>16}: {t / steps * 1e3:6.1f} ms")
per_step = sum(total) / steps
print(f"{'step':>16}: {per_step * 1e3:6.1f} ms  ({batch * seq / per_step:.0f} tokens/s)")
