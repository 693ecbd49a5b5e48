#!/usr/bin/env python3
"""One vendor patch measured alone: the same experiments binary run as two step servers
(`--exp bench-transformer-steps --backend flex`), one with the patch's switch off
(`vendor/README.md` lists them), taking blocks of steps in turn as
scripts/bench_transformer_interleaved.py does (first step of a block not counted, the first
server rotating). Prints and writes, per benchmark, the step-time ratio on/off paired by round:
median, 95% bootstrap interval over rounds, min-max, rounds below 1 and an exact sign test.

    python3 scripts/ab_flex_switch.py --switch FLEX_SEQ_BROADCAST=1 --rounds 20 \\
        --out results/bench/avx2/ab-seq-broadcast.csv
"""
import argparse
import csv
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_transformer_interleaved import (DEFAULT_BIN, SETTLE_S, Server, cpu_name, has_avx512, median_ci,
                                           sign_test)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--switch", required=True, metavar="NAME=VALUE",
                    help="the environment variable that turns the patch off")
    ap.add_argument("--bin", default=DEFAULT_BIN, help="the experiments binary")
    ap.add_argument("--benchmarks", default="forward,forward-backward,mlm-step")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--block", type=int, default=3)
    ap.add_argument("--out", help="CSV of the paired ratios")
    a = ap.parse_args()
    name, eq, value = a.switch.partition("=")
    if not eq or not name:
        sys.exit(f"error: --switch {a.switch!r}: expected NAME=VALUE")
    if a.block < 2:
        sys.exit(f"error: --block {a.block}: a turn needs a warm step after its first (>= 2)")
    benchmarks = a.benchmarks.split(",")
    argv = [a.bin, "--exp", "bench-transformer-steps", "--backend", "flex"]
    servers = {"on": Server("on", argv, {}, benchmarks),
               "off": Server("off", argv, {name: value}, benchmarks)}
    times = {}  # (variant, benchmark) -> [median warm seconds per round]
    for r in range(a.warmup + a.rounds):
        order = ["on", "off"] if r % 2 == 0 else ["off", "on"]
        for bench in benchmarks:
            for v in order:
                block = []
                for _ in range(a.block):
                    block.append(servers[v].step(bench))
                    time.sleep(SETTLE_S)
                if r >= a.warmup:
                    warm = sorted(block[1:])
                    times.setdefault((v, bench), []).append(warm[len(warm) // 2])
    for s in servers.values():
        s.close()
    rows = []
    for bench in benchmarks:
        ratios = [x / y for x, y in zip(times[("on", bench)], times[("off", bench)])]
        med, lo, hi = median_ci(ratios)
        below, p = sign_test(ratios)
        rows.append(dict(switch=a.switch, benchmark=bench, rounds=len(ratios), block=a.block,
                         median_time_ratio_on_over_off=med, ci_low=lo, ci_high=hi,
                         min_time_ratio=min(ratios), max_time_ratio=max(ratios),
                         rounds_below_1=below, sign_test_p=p, device=cpu_name(),
                         avx512=str(has_avx512()).lower(), load_1min=os.getloadavg()[0]))
        print(f"{bench}: on/off {med:.3f} (95% CI {lo:.3f}-{hi:.3f}), {below}/{len(ratios)} "
              f"rounds below 1, sign test p {p:.3g}")
    if a.out:
        with open(a.out + ".tmp", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
        os.replace(a.out + ".tmp", a.out)


if __name__ == "__main__":
    main()
