#!/usr/bin/env python3
"""The timing loop of scripts/bench_transformer.sh: burn's backends and PyTorch timed step by
step in turn, so every comparison is paired within seconds.

Why interleave: the 2-core VMs this project runs on change speed by 1.5x within a minute (the
same flex step read 463, 316 and 189 ms at different hours of one day). Timing flex for a
minute and PyTorch the next minute, as the first version of this benchmark did, measured the
machine as much as the code. Here each backend is a long-lived process that holds its model,
optimiser state and data and runs one step per request
(`experiments --exp bench-transformer-steps` for burn, `bench_transformer_torch.py --serve` for
PyTorch); this driver asks each in turn for a step of the same benchmark, so the steps being
compared ran back to back, and only one process computes at any time (the others wait on
stdin). Round r starts with the (r mod n)-th backend, so none is always first.

Each turn is a block of `--block` consecutive steps (default 3), and only the steps after the
first of a block are summarised and paired: the first step after another process has run
finds the caches, and its own memory, as the other process left them, and training never
runs such a step. The first steps are kept in transformer-rounds.csv (`position` 0), and
transformer-paired.csv says how much slower each backend's first step was (`steps` =
`first/warm`).

Backends: flex as built (vendor/ patches on, the calling thread in rayon's pool), flex-upstream
(the same binary with every patch switched off by its environment variable and rayon's default
pool: burn 0.22.1's behaviour, as a burn program gets it), PyTorch eager with manual
attention and with scaled_dot_product_attention; `--also ndarray,wgpu` adds burn's others,
`--torch-compile` PyTorch with sdpa under torch.compile (`cpu-compiled-sdpa`); `--mask-avx512`
runs every backend on AVX2 code paths on a CPU that has AVX-512 (MASK_AVX512_* below).
Benchmarks: forward, forward-backward and mlm-step everywhere, clm-step and clm-matched-step
on burn; `backward` in transformer-paired.csv is forward-backward's time less forward's, per
round. With `--parts`, instead, forward + backward of each part of the model alone
(embedding, layer-norm, attention, feed-forward; `identity`, the loss and backward pass
alone, is the control) on flex and PyTorch eager, to locate where forward-backward's gap
lies; the same three files are then named transformer-parts*.csv, and
transformer-parts-sum.csv adds the parts up as one forward-backward runs them, less the control.

Writes, under --dest (atomically, only once every round has run):
* transformer.csv: per backend and benchmark, median, min and max tokens/s over the warm
  steps of the timed rounds (the columns of earlier runs; `repeats` counts those steps);
* transformer-rounds.csv: every timed step, with its round, its position in its block and
  the load average;
* transformer-paired.csv: ratios of step times paired by round (each round's value: the
  median of its block's warm steps), the median over rounds with a 95% percentile-bootstrap
  interval (2,000 resamples of rounds) and the min-max: flex against every other backend on
  the same benchmark (`median_time_ratio` < 1: flex is faster), each burn backend's
  causal-LM steps against its own masked-LM step, and each backend's first step of a block
  against its warm ones; with how many rounds had a ratio below 1 and the two-sided exact
  sign test of that count.
"""
import argparse
import csv
import math
import os
import random
import re
import statistics
import subprocess
import sys
import time

# The PyTorch side's model constants, CSV columns and CPU probes, so both halves of the CSV
# describe the same thing (it imports torch, which the driver needs for its version anyway).
from bench_transformer_torch import (COLUMNS, D_FF, D_MODEL, HEADS, LAYERS, VOCAB, cpu_name,
                                     has_avx512)

BENCHMARKS = ["forward", "forward-backward", "mlm-step", "clm-step", "clm-matched-step"]
TORCH_BENCHMARKS = BENCHMARKS[:3]
# `--parts`: forward + backward of one part of the model alone (PARTS in
# experiments/src/exp/bench_transformer.rs), flex against PyTorch eager, to locate a gap.
PARTS = ["identity", "embedding", "layer-norm", "attention", "feed-forward"]
# How many times one forward-backward runs each part (4 blocks, 2 layer norms each).
PART_COUNTS = {"embedding": 1, "layer-norm": 8, "attention": 4, "feed-forward": 4}
# The order of the CSVs' rows.
ORDER = ["flex", "flex-upstream", "ndarray", "wgpu", "cpu-eager-manual", "cpu-eager-sdpa",
         "cpu-compiled-sdpa"]
# Every patch of vendor/ off: burn 0.22.1's flex (vendor/README.md lists each switch).
UPSTREAM_ENV = {
    "FLEX_PAR_MIN_ELEMS": "18446744073709551615",
    "FLEX_NO_AVX2": "1",
    "FLEX_NO_AVX512": "1",
    "FLEX_LIBM": "1",
    "BURN_AUTODIFF_DECOMPOSE": "1",
    "FLEX_BYTE_EMPTY": "1",
    "FLEX_SEQ_BROADCAST": "1",
    "FLEX_GEMM_OUT_FILL": "0",
    # Not a patch of burn's: our binary's thread setup (`backend::main_thread_in_pool`), off so
    # that flex-upstream is flex as a burn program gets it by default.
    "EMBEDLAB_RAYON_DEFAULT": "1",
}
# `--mask-avx512`: AVX2 code paths on a CPU that has AVX-512, for when no AVX2-only machine is
# at hand. flex's own loops take their AVX2 build; gemm's AVX-512 kernels are left out of the
# binary at build time (scripts/bench_transformer.sh --mask-avx512 builds it without gemm's
# `x86-v4`). PyTorch: ATen's kernels and torch.compile's generated code at the AVX2 level, MKL's
# and oneDNN's capped at AVX2. Not masked: macerator's kernels in flex (softmax, LayerNorm, some
# element-wise arithmetic) pick AVX-512 at run time with no switch, so flex keeps that much of
# it; and the core is still the AVX-512 machine's (caches, clocks), not an AVX2 machine's.
MASK_AVX512_BURN_ENV = {"FLEX_NO_AVX512": "1"}
MASK_AVX512_TORCH_ENV = {"ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS": "AVX2",
                         "ONEDNN_MAX_CPU_ISA": "AVX2"}
# The experiments binary that `cargo build -p experiments` leaves (scripts/bench_transformer.sh's
# CARGO_TARGET_DIR default), for the scripts that start step servers themselves.
DEFAULT_BIN = os.path.join(
    os.environ.get("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/embedlab/target")),
    "debug", "experiments")
# After each step, before the next request: PyTorch's OpenMP workers and rayon's spin for a
# moment after a parallel region, and must not steal the next process's cores.
SETTLE_S = 0.02


class Server:
    """One backend's step server: a child process speaking the `bench-transformer-steps`
    protocol."""

    def __init__(self, backend, argv, env, benchmarks):
        self.backend, self.benchmarks = backend, list(benchmarks)
        self.failed = {}
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     env={**os.environ, **env}, text=True, bufsize=1)
        self.expect("ready")

    def expect(self, what):
        line = self.proc.stdout.readline()
        while line and not (line.startswith(what) or line.startswith("failed ")):
            line = self.proc.stdout.readline()  # anything else the program prints
        if not line:
            code = self.proc.wait()
            sys.exit(f"error: {self.backend} exited ({code}) before answering `{what}`; "
                     "its stderr is above")
        return line.strip()

    def step(self, benchmark):
        """Seconds of one step, or None when this backend cannot compute it."""
        self.proc.stdin.write(benchmark + "\n")
        self.proc.stdin.flush()
        reply = self.expect(benchmark)
        if reply.startswith("failed "):
            self.failed[benchmark] = reply[len("failed "):]
            self.benchmarks.remove(benchmark)
            return None
        return float(reply.split()[1])

    def close(self):
        self.proc.stdin.close()
        if self.proc.wait() != 0:
            sys.exit(f"error: {self.backend} exited with {self.proc.returncode}")


def burn_version(lock="Cargo.lock"):
    with open(lock) as f:
        m = re.search(r'name = "burn"\nversion = "([^"]+)"', f.read())
    return f"burn {m.group(1)}" if m else "burn"


def median_ci(values, resamples=2000, seed=1):
    """Median, and the 2.5% and 97.5% percentiles of the median over bootstrap resamples."""
    rng = random.Random(seed)
    boot = sorted(statistics.median(rng.choices(values, k=len(values)))
                  for _ in range(resamples))
    return (statistics.median(values), boot[int(0.025 * resamples)],
            boot[int(0.975 * resamples) - 1])


def sign_test(ratios):
    """Two-sided exact binomial test of "a ratio is as likely below 1 as above" (ties dropped):
    (rounds below 1, p)."""
    below = sum(r < 1 for r in ratios)
    n = below + sum(r > 1 for r in ratios)
    tail = sum(math.comb(n, i) for i in range(min(below, n - below) + 1)) / 2 ** n
    return below, min(1.0, 2 * tail)


def write_csv(path, rows, columns):
    with open(path + ".tmp", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns)
        w.writeheader()
        w.writerows(rows)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", help="the experiments binary")
    ap.add_argument("--from-rounds", metavar="CSV", nargs="+",
                    help="time nothing: summarise a transformer-rounds.csv written earlier; "
                         "several are pooled as one run (their rounds numbered on), and the "
                         "pooled rounds are not written again")
    ap.add_argument("--dest", required=True, help="directory for the three CSVs")
    ap.add_argument("--rounds", type=int, help="timed rounds (default 20; --quick: 2)")
    ap.add_argument("--warmup", type=int, help="untimed rounds first (default 3; --quick: 1)")
    ap.add_argument("--block", type=int, default=3,
                    help="consecutive steps per turn, the first one not summarised (>= 2)")
    ap.add_argument("--quick", action="store_true", help="[4, 16] batches, for a smoke run")
    ap.add_argument("--also", default="", help="more burn backends: ndarray, wgpu")
    ap.add_argument("--parts", action="store_true",
                    help="time the model's parts (embedding, layer-norm, attention, "
                         "feed-forward: forward + backward each) on flex and PyTorch eager "
                         "instead, into transformer-parts*.csv")
    ap.add_argument("--mask-avx512", action="store_true",
                    help="AVX2 code paths on an AVX-512 CPU (--bin built without gemm's x86-v4: "
                         "scripts/bench_transformer.sh --mask-avx512); the CSVs' avx512 column "
                         "says `masked`")
    ap.add_argument("--torch-compile", action="store_true",
                    help="also PyTorch with sdpa under torch.compile (needs a C++ compiler; "
                         "the warm-up rounds absorb the compilation)")
    a = ap.parse_args()
    rounds = a.rounds or (2 if a.quick else 20)
    if a.block < 2:
        sys.exit(f"error: --block {a.block}: a turn needs a warm step after its first (>= 2)")
    warmup = a.warmup if a.warmup is not None else (1 if a.quick else 3)
    quick = ["--quick"] if a.quick else []
    here = os.path.dirname(os.path.abspath(__file__))
    burn = burn_version(os.path.join(here, "..", "Cargo.lock"))
    import torch  # for its version

    framework = lambda backend: (f"pytorch {torch.__version__}"
                                 if backend.startswith("cpu-") else burn)
    if a.parts and (a.torch_compile or a.also):
        sys.exit("error: --parts times flex and PyTorch eager only (no --torch-compile, --also)")
    if a.from_rounds:
        steps = []
        for path in a.from_rounds:
            first_round = 1 + max((x[1] for x in steps), default=-1)
            with open(path) as f:
                steps += [(r["backend"], first_round + int(r["round"]), r["benchmark"],
                           int(r["position"]), float(r["seconds"]), float(r["load_1min"]))
                          for r in csv.DictReader(f)]
        backends = [b for b in ORDER if any(x[0] == b for x in steps)]
        parts = any(x[2] in PARTS for x in steps)
        summarise(steps, backends, framework, a.quick, a.dest, PARTS if parts else BENCHMARKS,
                  a.mask_avx512, write_rounds=len(a.from_rounds) == 1)
        return
    if not a.bin:
        sys.exit("error: --bin (the experiments binary) is needed to time anything")
    step_server = [a.bin, "--exp", "bench-transformer-steps", *quick, "--backend"]
    torch_server = [sys.executable, os.path.join(here, "bench_transformer_torch.py"), *quick,
                    "--serve"]
    benchmarks = PARTS if a.parts else BENCHMARKS
    if a.mask_avx512 and not has_avx512():
        sys.exit("error: --mask-avx512: this CPU has no AVX-512 to mask; run without it")
    burn_env = MASK_AVX512_BURN_ENV if a.mask_avx512 else {}
    torch_env = MASK_AVX512_TORCH_ENV if a.mask_avx512 else {}
    specs = [("flex", step_server + ["flex"], burn_env, benchmarks)]
    if not a.parts:
        specs.append(("flex-upstream", step_server + ["flex"], {**burn_env, **UPSTREAM_ENV},
                      BENCHMARKS))
    for extra in filter(None, a.also.split(",")):
        if extra not in ("ndarray", "wgpu"):
            sys.exit(f"error: --also {extra}: expected ndarray or wgpu")
        specs.append((extra, step_server + [extra], burn_env, BENCHMARKS))
    for attention in ("manual", "sdpa"):
        specs.append((f"cpu-eager-{attention}", torch_server + [attention], torch_env,
                       PARTS if a.parts else TORCH_BENCHMARKS))
    if a.torch_compile:
        specs.append(("cpu-compiled-sdpa", torch_server + ["compiled-sdpa"], torch_env,
                      TORCH_BENCHMARKS))
    specs.sort(key=lambda spec: ORDER.index(spec[0]))
    servers = [Server(*spec) for spec in specs]

    steps = []  # (backend, round, benchmark, position in block, seconds, load)
    for r in range(warmup + rounds):
        load = os.getloadavg()[0]
        for benchmark in benchmarks:
            who = [s for s in servers if benchmark in s.benchmarks]
            k = r % len(who) if who else 0
            for s in who[k:] + who[:k]:
                for position in range(a.block):
                    seconds = s.step(benchmark)
                    if seconds is None:
                        break
                    if r >= warmup:
                        steps.append((s.backend, r - warmup, benchmark, position, seconds, load))
                time.sleep(SETTLE_S)
        print(f"round {r + 1}/{warmup + rounds}{' (warm-up)' if r < warmup else ''}",
              file=sys.stderr)
    for s in servers:
        s.close()
        for benchmark, why in s.failed.items():
            print(f"{s.backend} {benchmark} left out: {why}", file=sys.stderr)

    # A backend that failed a benchmark mid-run has that benchmark left out entirely.
    complete = {(s.backend, b) for s in servers for b in s.benchmarks}
    steps = [x for x in steps if (x[0], x[2]) in complete]
    summarise(steps, [s.backend for s in servers], framework, a.quick, a.dest, benchmarks,
              a.mask_avx512)


def summarise(steps, backends, framework, quick, dest, benchmarks, mask_avx512=False,
              write_rounds=True):
    """The three CSVs from the timed steps (backend, round, benchmark, position in block,
    seconds, load): transformer*.csv for BENCHMARKS, transformer-parts*.csv for PARTS."""
    warm, first = {}, {}  # (backend, benchmark) -> round -> seconds
    for backend, r, benchmark, position, sec, _ in steps:
        to = warm if position else first
        to.setdefault((backend, benchmark), {}).setdefault(r, []).append(sec)
    warm_steps = {key: [x for xs in by_round.values() for x in xs] for key, by_round in warm.items()}
    for by_round in (*warm.values(), *first.values()):
        for r, xs in by_round.items():
            by_round[r] = statistics.median(xs)
    # The backward pass, per round: forward-backward's time less forward's.
    for backend in backends:
        fwd, both = warm.get((backend, "forward")), warm.get((backend, "forward-backward"))
        if fwd and both:
            warm[(backend, "backward")] = {r: both[r] - fwd[r] for r in both if r in fwd}
    batch, seq = (4, 16) if quick else (32, 64)
    tokens = batch * seq
    device = cpu_name()
    avx512 = "masked" if mask_avx512 else "true" if has_avx512() else "false"
    summary, paired = [], []
    for backend in backends:
        for benchmark in benchmarks:
            if (backend, benchmark) not in warm:
                continue
            rates = sorted(tokens / x for x in warm_steps[(backend, benchmark)])
            loads = [x[5] for x in steps if x[0] == backend and x[2] == benchmark]
            summary.append(dict(
                framework=framework(backend), backend=backend, device=device, benchmark=benchmark,
                threads=os.cpu_count(), d_model=D_MODEL, n_layers=LAYERS, n_heads=HEADS,
                d_ff=D_FF, vocab=VOCAB, batch=batch, seq_len=seq, repeats=len(rates),
                median_tokens_per_s=statistics.median(rates), min_tokens_per_s=rates[0],
                max_tokens_per_s=rates[-1], avx512=avx512,
                load_1min=statistics.median(loads)))

    def pair(backend, benchmark, ref_backend, ref_benchmark, mine_from=warm, kind="warm"):
        mine = mine_from.get((backend, benchmark))
        ref = warm.get((ref_backend, ref_benchmark))
        if not mine or not ref:
            return
        ratios = [mine[r] / ref[r] for r in sorted(mine) if r in ref]
        med, lo, hi = median_ci(ratios)
        below, p = sign_test(ratios)
        paired.append(dict(backend=backend, benchmark=benchmark, reference_backend=ref_backend,
                           reference_benchmark=ref_benchmark, steps=kind, rounds=len(ratios),
                           median_time_ratio=med, ci_low=lo, ci_high=hi,
                           min_time_ratio=min(ratios), max_time_ratio=max(ratios),
                           rounds_below_1=below, sign_test_p=p, device=device, avx512=avx512))
        what = (f"{backend} {benchmark}: first step of a block / warm" if kind != "warm"
                else f"{backend} {benchmark} / {ref_backend}" if benchmark == ref_benchmark
                else f"{backend} {benchmark} / {ref_benchmark}")
        print(f"{what}: time ratio {med:.3f} (95% CI {lo:.3f}-{hi:.3f}; "
              f"min {min(ratios):.3f}, max {max(ratios):.3f}; below 1 in {below} of "
              f"{len(ratios)} rounds, sign test p {p:.2g})"
              + (f"; flex at {1 / med:.2f}x its tokens/s"
                 if kind == "warm" and backend != ref_backend else ""))

    for benchmark in (benchmarks if benchmarks is PARTS
                      else BENCHMARKS[:2] + ["backward"] + BENCHMARKS[2:]):
        for backend in backends:
            if backend != "flex":
                pair("flex", benchmark, backend, benchmark)
    for backend in backends:
        for benchmark in ("clm-step", "clm-matched-step"):
            pair(backend, benchmark, backend, "mlm-step")
    for backend in backends:
        for benchmark in benchmarks:
            pair(backend, benchmark, backend, benchmark, first, "first/warm")

    os.makedirs(dest, exist_ok=True)
    name = "transformer-parts" if benchmarks is PARTS else "transformer"
    written = [write_csv(os.path.join(dest, f"{name}.csv"), summary, COLUMNS)]
    if write_rounds:
        written.append(write_csv(
            os.path.join(dest, f"{name}-rounds.csv"),
            [dict(backend=b, round=r, benchmark=m, position=p, seconds=x, load_1min=l)
             for b, r, m, p, x, l in steps],
            ["backend", "round", "benchmark", "position", "seconds", "load_1min"]))
    written += [
        write_csv(os.path.join(dest, f"{name}-paired.csv"), paired,
                  ["backend", "benchmark", "reference_backend", "reference_benchmark", "steps",
                   "rounds",
                   "median_time_ratio", "ci_low", "ci_high", "min_time_ratio",
                   "max_time_ratio", "rounds_below_1", "sign_test_p", "device", "avx512"]),
    ]
    if benchmarks is PARTS:
        written.append(write_csv(os.path.join(dest, "transformer-parts-sum.csv"),
                                 parts_sum(warm_steps, backends, device, avx512),
                                 ["backend", "parts_ms", "control_ms", "net_ms", "device",
                                  "avx512"]))
    for path in written:
        os.replace(path + ".tmp", path)
        print(f"wrote {path}")


def parts_sum(warm_steps, backends, device, avx512):
    """Per backend, the parts' median warm step times summed as often as one forward-backward
    runs each (PART_COUNTS), and the same less as many `identity` controls (the loss, the
    backward pass's fixed cost): what the parts alone would cost a whole forward-backward."""
    rows = []
    for backend in backends:
        ms = {b: 1e3 * statistics.median(warm_steps[(backend, b)])
              for b in PARTS if (backend, b) in warm_steps}
        if len(ms) < len(PARTS):
            continue
        total = sum(n * ms[b] for b, n in PART_COUNTS.items())
        control = sum(PART_COUNTS.values()) * ms["identity"]
        rows.append(dict(backend=backend, parts_ms=total, control_ms=control,
                         net_ms=total - control, device=device, avx512=avx512))
        print(f"{backend}: parts {total:.1f} ms, less {sum(PART_COUNTS.values())} controls "
              f"{total - control:.1f} ms")
    return rows


if __name__ == "__main__":
    main()
