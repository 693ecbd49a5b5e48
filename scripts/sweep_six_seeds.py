#!/usr/bin/env python3
"""The five-epoch rate check of the tied masked LM at its two leading rates, over every sweep seed
committed (docs/method.md, "Seeds 1004 to 1006, and what the rule says"): each seed's dev loss at
7.5e-4 and 1.5e-3, the seed means (the rule's criterion), the paired difference's mean with a t
interval over seeds, and an exact two-sided sign test. Reads
results/sweep/transformer-5-epochs*/sweep/transformer-mlm-seed*.csv; `--self-test` checks the
statistics on a planted case with hand-computed answers."""
import csv, glob, math, statistics as st, sys

# The rate check's t interval of paired differences, and its table of t quantiles.
from word2vec_rate_check import T975, interval

LOW, HIGH = 0.00075, 0.0015


def paired(low, high):
    """Mean of low - high, its t interval, how many seeds are lower at `low`, the sign test's p."""
    d = [a - b for a, b in zip(low, high)]
    n = len(d)
    if n < 2 or n - 1 not in T975:
        sys.exit(f"need 2 to {max(T975) + 1} paired seeds, got {n}")
    m, lo, hi = interval(d)
    lower = sum(x < 0 for x in d)
    k = min(lower, n - lower)
    p = min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2**n)
    return m, lo, hi, lower, p


def self_test():
    # d = -0.1, -0.3, +0.1: mean -0.1, sd 0.2, half-width 4.303 * 0.2 / sqrt(3) = 0.49688.
    m, lo, hi, lower, p = paired([5.0, 5.0, 5.2], [5.1, 5.3, 5.1])
    assert abs(m + 0.1) < 1e-12 and abs(lo + 0.59688) < 1e-4 and abs(hi - 0.39688) < 1e-4, (m, lo, hi)
    # 2 of 3 lower: p = 2 * (1 + 3) / 8 = 1; 3 of 3: 2 / 8 = 0.25; 6 of 6: 2 / 64.
    assert (lower, p) == (2, 1.0)
    assert paired([1, 1, 1], [2, 2, 2])[4] == 0.25
    assert abs(paired([1] * 6, [2, 2.1, 2.2, 2.3, 2.4, 2.5])[4] - 2 / 64) < 1e-12
    print("sweep_six_seeds self-test: ok")


def main():
    rows = {}
    paths = sorted(glob.glob("results/sweep/transformer-5-epochs*/sweep/transformer-mlm-seed*.csv"))
    if not paths:
        sys.exit("no sweep files under results/sweep/transformer-5-epochs*/sweep/ (run from the repository root)")
    for path in paths:
        with open(path, newline="") as f:
            for line, r in enumerate(csv.DictReader(f), start=2):
                try:
                    key = (int(r["seed"]), float(r["lr"]))
                    loss = float(r["dev_loss"])
                except (KeyError, ValueError) as e:
                    sys.exit(f"{path}:{line}: {e}")
                if not math.isfinite(loss):
                    sys.exit(f"{path}:{line}: dev_loss {loss} is not finite")
                if key in rows:
                    sys.exit(f"{path}:{line}: seed {key[0]} at rate {key[1]} appears twice")
                rows[key] = loss
    seeds = sorted(s for s, lr in rows if lr == LOW and (s, HIGH) in rows)
    low, high = [rows[(s, LOW)] for s in seeds], [rows[(s, HIGH)] for s in seeds]
    for s, a, b in zip(seeds, low, high):
        print(f"seed {s}: {LOW:g} {a:.3f}  {HIGH:g} {b:.3f}  difference {a - b:+.3f}")
    print(f"means over {len(seeds)} seeds: {LOW:g} {st.mean(low):.3f}  {HIGH:g} {st.mean(high):.3f}")
    m, lo, hi, lower, p = paired(low, high)
    print(f"paired difference {m:+.3f} [{lo:+.3f}, {hi:+.3f}] (t, {len(seeds) - 1} df); lower at {LOW:g} at {lower} of {len(seeds)} seeds, sign test p = {p:.3f}")


if __name__ == "__main__":
    self_test() if sys.argv[1:] == ["--self-test"] else main()
