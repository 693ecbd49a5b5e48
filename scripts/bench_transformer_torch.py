#!/usr/bin/env python3
"""The transformer benchmark of `--exp bench-transformer`, in PyTorch eager on CPU.

Same model as crates/transformer/src/model.rs with the default config: token embedding over
22,546 ids + learned positions, 4 pre-LN blocks (d_model 128, 4 heads, d_ff 512, GELU), Q/K/V
without bias, W_O and the feed-forward layers with bias, dropout 0. Same step: forward on a random
[32, 64] batch and backward of mean(h_N^2) (no LM head, no optimiser); then `mlm-step`, the
masked-LM loss over the vocabulary with the tied head, backward and AdamW on 15% of positions.

Two attention implementations: `manual` computes softmax(QK^T/sqrt(d_k))V with the same
operations as the burn model; `sdpa` uses torch's fused scaled_dot_product_attention, which is
what a PyTorch user would write. Rows go to stdout (or --out) in results/bench/transformer.csv's
columns. With `--serve manual|sdpa|compiled-sdpa` it times nothing itself and runs one step per benchmark
name read on stdin, the protocol of `experiments --exp bench-transformer-steps`: that is how
scripts/bench_transformer.sh (scripts/bench_transformer_interleaved.py) takes PyTorch's steps
in turn with burn's.

    pip install torch
    python3 scripts/bench_transformer_torch.py --out /tmp/torch.csv
"""
import argparse
import csv
import math
import os
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

# The model of crates/transformer/src/model.rs with the default config, over text8's vocabulary.
VOCAB, D_MODEL, LAYERS, HEADS, D_FF = 22_546, 128, 4, 4, 512
COLUMNS = ["framework", "backend", "device", "benchmark", "threads", "d_model", "n_layers",
           "n_heads", "d_ff", "vocab", "batch", "seq_len", "repeats", "median_tokens_per_s",
           "min_tokens_per_s", "max_tokens_per_s", "avx512", "load_1min"]


class Attention(nn.Module):
    def __init__(self, d, h, fused):
        super().__init__()
        self.q = nn.Linear(d, d, bias=False)
        self.k = nn.Linear(d, d, bias=False)
        self.v = nn.Linear(d, d, bias=False)
        self.o = nn.Linear(d, d)
        self.h, self.dk, self.fused = h, d // h, fused

    def forward(self, x):
        b, t, d = x.shape
        split = lambda y: y.view(b, t, self.h, self.dk).transpose(1, 2)
        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        if self.fused:
            ctx = F.scaled_dot_product_attention(q, k, v)
        else:
            w = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(self.dk), dim=-1)
            ctx = w @ v
        return self.o(ctx.transpose(1, 2).reshape(b, t, d))


class Block(nn.Module):
    def __init__(self, d, h, ff, fused):
        super().__init__()
        self.attn = Attention(d, h, fused)
        self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.ff_in, self.ff_out = nn.Linear(d, ff), nn.Linear(ff, d)

    def forward(self, x):
        x = x + self.attn(self.n1(x))
        return x + self.ff_out(F.gelu(self.ff_in(self.n2(x))))


class Encoder(nn.Module):
    def __init__(self, vocab, d, layers, h, ff, max_len, fused):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(max_len, d)
        self.blocks = nn.ModuleList(Block(d, h, ff, fused) for _ in range(layers))
        self.final = nn.LayerNorm(d)
        self.bias = nn.Parameter(torch.zeros(vocab))

    def embed(self, ids):
        return self.tok(ids) + self.pos(torch.arange(ids.shape[1]))[None]

    def forward(self, ids):
        x = self.embed(ids)
        for blk in self.blocks:
            x = blk(x)
        return x

    def logits(self, h):
        return self.final(h) @ self.tok.weight.T + self.bias


def timed(step, warmup, repeats, tokens):
    rates = []
    for i in range(warmup + repeats):
        t = time.perf_counter()
        step()
        if i >= warmup:
            rates.append(tokens / (time.perf_counter() - t))
    rates.sort()
    return statistics.median(rates), rates[0], rates[-1]


def has_avx512():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("flags"):
                return "avx512f" in line.split()
    except OSError:
        pass
    return False


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def steps(fused, batch, seq, compiled=False, layers=LAYERS):
    """The model with `fused` attention (sdpa) or not (manual), and its benchmarks (forward,
    forward-backward, mlm-step, then the parts embedding, layer-norm, attention and
    feed-forward, and the control `identity`, which stay eager under `compiled`) as functions of no argument that each run
    one step. `compiled`: the forward passes (and so,
    through AOTAutograd, their backward) go through `torch.compile` (inductor, CPU); the
    optimiser stays eager. The masked positions are gathered by a fixed index rather than a
    boolean mask so the compiled graph has static shapes."""
    ids = torch.randint(0, 22_541, (batch, seq))
    model = Encoder(VOCAB, D_MODEL, layers, HEADS, D_FF, seq, fused)
    mask = torch.rand(batch, seq) < 0.15
    targets = mask.view(-1).nonzero().squeeze(1)

    def hidden_loss():
        return model(ids).pow(2).mean()

    def mlm_loss():
        hid = model(ids).reshape(batch * seq, D_MODEL).index_select(0, targets)
        return F.cross_entropy(model.logits(hid), ids.view(-1).index_select(0, targets))

    if compiled:
        hidden_loss, mlm_loss = torch.compile(hidden_loss), torch.compile(mlm_loss)

    def fwd():
        # The graph is recorded, as for training, then dropped: forward-backward's first half.
        model.zero_grad(set_to_none=True)
        hidden_loss().item()

    def fwd_bwd():
        model.zero_grad(set_to_none=True)
        hidden_loss().backward()

    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def mlm_step():
        opt.zero_grad(set_to_none=True)
        mlm_loss().backward()
        opt.step()

    # The parts of `experiments --exp bench-transformer-steps` (PARTS in bench_transformer.rs):
    # forward + backward of the embeddings, or of the first block's attention layer norm,
    # self-attention or feed-forward layer alone on a fixed input that requires a gradient;
    # `identity`, the control, times the loss and backward pass alone.
    blk = model.blocks[0]
    hidden = (torch.rand(batch, seq, D_MODEL) * 2 - 1) * math.sqrt(3)  # uniform, variance 1
    parts = {"identity": lambda x: x, "embedding": lambda _: model.embed(ids),
             "layer-norm": blk.n1, "attention": blk.attn,
             "feed-forward": lambda x: blk.ff_out(F.gelu(blk.ff_in(x)))}

    def part(layer):
        def run():
            model.zero_grad(set_to_none=True)
            layer(hidden.detach().requires_grad_()).pow(2).mean().backward()
        return run

    return {"forward": fwd, "forward-backward": fwd_bwd, "mlm-step": mlm_step,
            **{name: part(layer) for name, layer in parts.items()}}


def serve(fused, batch, seq, compiled, layers=LAYERS):
    """`--serve`: the protocol of `experiments --exp bench-transformer-steps`, so that
    scripts/bench_transformer.sh can interleave PyTorch's steps with burn's: `ready` once set
    up, then one benchmark name per stdin line, each answered by `<benchmark> <seconds>`."""
    fns = steps(fused, batch, seq, compiled, layers)
    print("ready", flush=True)
    for n, line in enumerate(sys.stdin, 1):
        name = line.strip()
        if not name:
            continue
        if name not in fns:
            sys.exit(f"error: stdin line {n}: unknown benchmark `{name}` "
                     f"(PyTorch has {', '.join(fns)})")
        t = time.perf_counter()
        fns[name]()
        print(f"{name} {time.perf_counter() - t}", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", help="CSV file (default: stdout)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--serve", choices=["manual", "sdpa", "compiled-sdpa"],
                    help="serve steps of this attention on stdin instead of timing them "
                         "(compiled-sdpa: sdpa under torch.compile)")
    ap.add_argument("--layers", type=int, default=LAYERS,
                    help="with --serve: blocks in the model (scripts/bench_depth.py)")
    a = ap.parse_args()
    if a.layers < 1:
        sys.exit(f"error: --layers {a.layers}: the model needs at least 1 block")
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    batch, seq = (4, 16) if a.quick else (32, 64)
    if a.serve:
        serve(a.serve != "manual", batch, seq, a.serve.startswith("compiled"), a.layers)
        return
    warmup, repeats = (1, 2) if a.quick else (3, 10)
    rows = []
    for fused in (False, True):
        name = "sdpa" if fused else "manual"
        for bench, fn in list(steps(fused, batch, seq).items())[:3]:
            med, lo, hi = timed(fn, warmup, repeats, batch * seq)
            print(f"pytorch {name:>6} {bench}: {med:8.0f} tokens/s (min {lo:.0f}, max {hi:.0f})",
                  file=sys.stderr)
            rows.append(dict(framework=framework(), backend=f"cpu-eager-{name}",
                             device=cpu_name(), benchmark=bench, threads=a.threads,
                             d_model=D_MODEL, n_layers=LAYERS, n_heads=HEADS, d_ff=D_FF,
                             vocab=VOCAB, batch=batch,
                             seq_len=seq, repeats=repeats, median_tokens_per_s=med,
                             min_tokens_per_s=lo, max_tokens_per_s=hi,
                             avx512="true" if has_avx512() else "false",
                             load_1min=os.getloadavg()[0]))
    out = open(a.out, "w", newline="") if a.out else sys.stdout
    w = csv.DictWriter(out, fieldnames=COLUMNS)
    w.writeheader()
    w.writerows(rows)


def framework():
    return f"pytorch {torch.__version__}"


if __name__ == "__main__":
    main()
