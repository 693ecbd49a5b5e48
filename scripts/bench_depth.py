#!/usr/bin/env python3
"""Does flex's forward + backward gap to PyTorch grow with the model's depth? The parts of the
model alone are no slower on flex (transformer-parts-sum.csv), yet the whole model is. Here the
step servers of scripts/bench_transformer_interleaved.py (flex, PyTorch eager with hand-written
attention and with sdpa) hold the benchmark model with 1, 2, 4 and 8 blocks (`--layers`) and
take forward + backward steps in turn, blocks of 3, first step of a block not counted, the
first server rotating. Per depth: flex's step time over each PyTorch variant paired by round
(median, 95% bootstrap interval over rounds, sign test) and each server's median step.

    python3 scripts/bench_depth.py --rounds 20 --out results/bench/avx2/depth.csv
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_transformer_interleaved import (DEFAULT_BIN, SETTLE_S, Server, cpu_name, has_avx512, median_ci,
                                           sign_test, write_csv)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=DEFAULT_BIN, help="the experiments binary")
    ap.add_argument("--layers", default="1,2,4,8")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--out", help="CSV of the paired ratios")
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    rows = []
    for layers in [int(x) for x in a.layers.split(",")]:
        depth = ["--layers", str(layers)]
        torch = [sys.executable, os.path.join(here, "bench_transformer_torch.py"), *depth,
                 "--serve"]
        servers = [
            Server("flex", [a.bin, "--exp", "bench-transformer-steps", "--backend", "flex",
                            *depth], {}, ["forward-backward"]),
            Server("cpu-eager-manual", torch + ["manual"], {}, ["forward-backward"]),
            Server("cpu-eager-sdpa", torch + ["sdpa"], {}, ["forward-backward"]),
        ]
        seconds = {s.backend: [] for s in servers}
        for r in range(a.warmup + a.rounds):
            k = r % len(servers)
            for s in servers[k:] + servers[:k]:
                block = []
                for _ in range(3):
                    block.append(s.step("forward-backward"))
                    time.sleep(SETTLE_S)
                if r >= a.warmup:
                    seconds[s.backend].append(statistics.median(block[1:]))
        for s in servers:
            s.close()
        for ref in ("cpu-eager-manual", "cpu-eager-sdpa"):
            ratios = [x / y for x, y in zip(seconds["flex"], seconds[ref])]
            med, lo, hi = median_ci(ratios)
            below, p = sign_test(ratios)
            flex_ms = 1e3 * statistics.median(seconds["flex"])
            ref_ms = 1e3 * statistics.median(seconds[ref])
            rows.append(dict(layers=layers, reference_backend=ref, rounds=len(ratios),
                             median_time_ratio=med, ci_low=lo, ci_high=hi,
                             rounds_below_1=below, sign_test_p=p, flex_median_ms=flex_ms,
                             reference_median_ms=ref_ms, device=cpu_name(),
                             avx512=str(has_avx512()).lower(), load_1min=os.getloadavg()[0]))
            print(f"{layers} layers: flex / {ref} {med:.3f} (95% CI {lo:.3f}-{hi:.3f}; below 1 "
                  f"in {below} of {len(ratios)}, p {p:.2g}); {flex_ms:.1f} vs {ref_ms:.1f} ms")
    if a.out:
        os.replace(write_csv(a.out, rows, list(rows[0])) + ".tmp", a.out)


if __name__ == "__main__":
    main()
