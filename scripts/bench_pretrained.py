#!/usr/bin/env python3
"""Forward-pass throughput of a pretrained checkpoint (issue 40): embedlab's reader on flex
against Hugging Face transformers' eager PyTorch forward of the same model, the same [32, 128]
batch of piece ids, in one run on one machine. Each side is a long-lived process answering one
forward pass per request; the two take turns within every round (which goes first alternates),
so drift in the machine's speed falls on both. Warm-up rounds are dropped.

Writes results/bench/<isa>/pretrained-forward-rounds.csv (every timed pass) and
pretrained-forward.csv (per backend: median, min, max seconds and tokens/s; the flex/PyTorch
ratio paired by round: median, min, max), each row with the CPU, its ISA and the threads.

    cargo build -p experiments
    /path/to/python-with-torch scripts/bench_pretrained.py --model data/pretrained/all-MiniLM-L6-v2
Needs torch and transformers in that Python (the versions go into the CSV). Run it on a quiet
machine: nothing else training.
"""
import argparse
import csv
import os
import pathlib
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent


def torch_server(model_dir, batch, seq, seed):
    import torch
    from transformers import AutoConfig, AutoModel, BertModel

    torch.set_num_threads(os.cpu_count())
    cfg = AutoConfig.from_pretrained(model_dir)
    if cfg.model_type == "bert":
        # No pooler: embedlab's reader has none (it reads hidden states).
        model = BertModel.from_pretrained(model_dir, add_pooling_layer=False)
    else:
        model = AutoModel.from_pretrained(model_dir)
    model.eval()
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, cfg.vocab_size, (batch, seq), generator=g)
    print("ready", flush=True)
    for line in sys.stdin:
        if line.strip() != "forward":
            continue
        start = time.perf_counter()
        with torch.no_grad():
            model(input_ids=ids, output_hidden_states=True)
        print(f"forward {time.perf_counter() - start}", flush=True)


def ask(proc):
    proc.stdin.write("forward\n")
    proc.stdin.flush()
    reply = proc.stdout.readline().split()
    if len(reply) != 2 or reply[0] != "forward":
        raise SystemExit(f"unexpected reply {reply!r}")
    return float(reply[1])


def cpu():
    info = pathlib.Path("/proc/cpuinfo").read_text()
    name = next((l.split(":", 1)[1].strip() for l in info.splitlines() if l.startswith("model name")), "unknown")
    isa = "avx512" if " avx512f" in info else "avx2"
    return name, isa


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--bin", default=None, help="the experiments binary (default: cargo's target dir)")
    ap.add_argument("--serve-torch", nargs=3, metavar=("BATCH", "SEQ", "SEED"))
    a = ap.parse_args()
    if a.serve_torch:
        b, s, seed = map(int, a.serve_torch)
        return torch_server(a.model, b, s, seed)
    import torch
    import transformers

    target = os.environ.get("CARGO_TARGET_DIR", ROOT / "target")
    binary = a.bin or str(pathlib.Path(target) / "debug" / "experiments")
    flex = subprocess.Popen(
        [binary, "--exp", "bench-pretrained-steps", "--model", a.model, "--seed", "1"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT,
    )
    ready = flex.stdout.readline().split()
    if not ready or ready[0] != "ready":
        raise SystemExit(f"{binary}: did not start: {ready!r}")
    batch, seq = int(ready[1]), int(ready[2])
    pt = subprocess.Popen(
        [sys.executable, __file__, "--model", a.model, "--serve-torch", str(batch), str(seq), "1"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT,
    )
    if pt.stdout.readline().strip() != "ready":
        raise SystemExit("the PyTorch server did not start")
    name, isa = cpu()
    threads = os.cpu_count()
    rows = []
    for r in range(a.warmup + a.rounds):
        order = [("flex", flex), ("torch-eager", pt)]
        if r % 2:
            order.reverse()
        for backend, proc in order:
            seconds = ask(proc)
            if r >= a.warmup:
                rows.append({"round": r - a.warmup, "backend": backend, "seconds": seconds,
                             "tokens_per_second": batch * seq / seconds})
    for p in (flex, pt):
        p.stdin.close()
        p.wait()
    common = {"model": pathlib.Path(a.model).name, "batch": batch, "seq_len": seq,
              "threads": threads, "cpu": name, "isa": isa, "torch": torch.__version__,
              "transformers": transformers.__version__}
    dest = ROOT / "results" / "bench" / isa
    dest.mkdir(parents=True, exist_ok=True)
    with open(dest / "pretrained-forward-rounds.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]) + list(common))
        w.writeheader()
        for row in rows:
            w.writerow({**row, **common})
    summary = []
    by = {b: [x["seconds"] for x in rows if x["backend"] == b] for b in ("flex", "torch-eager")}
    for b, xs in by.items():
        summary.append({"measure": f"{b} seconds per forward", "median": statistics.median(xs),
                        "min": min(xs), "max": max(xs), "n": len(xs)})
        tps = [batch * seq / x for x in xs]
        summary.append({"measure": f"{b} tokens per second", "median": statistics.median(tps),
                        "min": min(tps), "max": max(tps), "n": len(tps)})
    ratio = [f / t for f, t in zip(by["flex"], by["torch-eager"])]
    summary.append({"measure": "flex / torch-eager time, paired by round", "median": statistics.median(ratio),
                    "min": min(ratio), "max": max(ratio), "n": len(ratio)})
    with open(dest / "pretrained-forward.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(summary[0]) + list(common))
        w.writeheader()
        for row in summary:
            w.writerow({**row, **common})
    for row in summary:
        print(f"{row['measure']}: {row['median']:.4g} ({row['min']:.4g}-{row['max']:.4g})")


if __name__ == "__main__":
    main()
