#!/usr/bin/env python3
"""Summary of scripts/word2vec_rate_check.sh: for each word2vec model, benchmark and starting
rate, the mean over seeds and the paired difference from word2vec.c's default (seed s at the
rate minus seed s at the default), with a t interval over the seeds' differences.

The interval carries the seeds' spread only: every rate is scored on the same items (all of
each set, as the study scores word2vec), which are not resampled, so it says whether the rate
moves this model on these items, not how far the difference would carry to other items.

Usage: word2vec_rate_check.py EVAL_CSV SUMMARY_CSV, or --self-test
"""
import csv
import math
import os
import statistics
import sys
from collections import defaultdict

# The default rates (word2vec.c's), the round's.
DEFAULT = {"sgns": 0.025, "cbow": 0.05}
# (benchmark, metric) read, as the README's answers read them.
READ = [
    ("WS-353-ALL", "spearman"),
    ("MEN-TR-3k", "spearman"),
    ("SIMLEX-999", "spearman"),
    ("questions-words:total", "3CosAdd"),
]
# Two-sided 95% quantiles of Student's t, by degrees of freedom.
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
        9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131,
        16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093}


def interval(diffs):
    """Mean and 95% t interval of paired differences; NaN bounds with fewer than 2."""
    m = statistics.fmean(diffs)
    if len(diffs) < 2:
        return m, math.nan, math.nan
    half = T975[len(diffs) - 1] * statistics.stdev(diffs) / math.sqrt(len(diffs))
    return m, m - half, m + half


def main(eval_csv, summary_csv, quiet=False):
    # value[(model, rate, benchmark, metric)][seed]
    value = defaultdict(dict)
    with open(eval_csv, newline="") as f:
        for r in csv.DictReader(f):
            rate = float(r["sgns_alpha"] if r["model"] == "sgns" else r["cbow_alpha"])
            key = (r["model"], rate, r["benchmark"], r["metric"])
            seed = int(r["seed"])
            if seed in value[key] and value[key][seed] != r["value"]:
                sys.exit(f"{eval_csv}: two values for {key} seed {seed}")
            value[key][seed] = r["value"]
    rates = sorted({(k[0], k[1]) for k in value})
    rows = []
    for model, rate in rates:
        for bench, metric in READ:
            at = {s: float(v) for s, v in value.get((model, rate, bench, metric), {}).items()}
            base = {s: float(v) for s, v in
                    value.get((model, DEFAULT[model], bench, metric), {}).items()}
            if not at:
                sys.exit(f"{eval_csv}: no {bench} {metric} rows for {model} at {rate}")
            seeds = sorted(set(at) & set(base))
            diff = [at[s] - base[s] for s in seeds]
            d, lo, hi = interval(diff) if diff else (math.nan,) * 3
            rows.append({
                "model": model, "alpha": rate, "default_alpha": DEFAULT[model],
                "benchmark": bench, "metric": metric, "seeds": len(seeds),
                "mean": statistics.fmean(at.values()),
                "default_mean": statistics.fmean(base.values()) if base else math.nan,
                "difference": d, "difference_lo": lo, "difference_hi": hi,
            })
    tmp = summary_csv + ".tmp"
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    os.replace(tmp, summary_csv)
    for r in [] if quiet else rows:
        if r["alpha"] == r["default_alpha"]:
            continue
        print(f"{r['model']} {r['alpha']:g} - {r['default_alpha']:g}, {r['benchmark']} "
              f"{r['metric']}: {r['mean']:.3f} against {r['default_mean']:.3f}, "
              f"{r['difference']:+.3f} [{r['difference_lo']:+.3f}, {r['difference_hi']:+.3f}]")


def self_test():
    """The interval and the summary against hand-computed values on a planted eval file."""
    import tempfile
    # Differences 1, 2, 3: mean 2, sd 1, half-width t(2) / sqrt(3) = 4.303 / 1.7321 = 2.4843.
    m, lo, hi = interval([1.0, 2.0, 3.0])
    assert m == 2.0 and abs(lo - (2 - 2.48434)) < 1e-4 and abs(hi - (2 + 2.48434)) < 1e-4
    assert math.isnan(interval([5.0])[1])
    header = "sgns_alpha,cbow_alpha,experiment,model,representation,layer,benchmark,metric,value,n,oov,seed,backend"
    lines = [header]
    # sgns: seed s scores 0.4 + 0.01 s at the default, 0.5 + 0.02 s at 0.05 (differences
    # 0.11, 0.12, 0.13: mean 0.12, sd 0.01); cbow at 0.05 only.
    for s in (1, 2, 3):
        for sg, v in ((0.025, 0.4 + 0.01 * s), (0.05, 0.5 + 0.02 * s)):
            for bench, metric in READ:
                lines.append(f"{sg},0.05,word2vec,sgns,static,,{bench},{metric},{v},10,0,{s},")
                # The same CBOW run (rate 0.05) in both: the same value, read once.
                lines.append(f"{sg},0.05,word2vec,cbow,static,,{bench},{metric},{0.4 + 0.01 * s},10,0,{s},")
    with tempfile.TemporaryDirectory() as d:
        ev, out = os.path.join(d, "eval.csv"), os.path.join(d, "summary.csv")
        with open(ev, "w") as f:
            f.write("\n".join(lines) + "\n")
        main(ev, out, quiet=True)
        rows = list(csv.DictReader(open(out)))
    r = next(r for r in rows if r["model"] == "sgns" and float(r["alpha"]) == 0.05)
    assert int(r["seeds"]) == 3
    assert abs(float(r["difference"]) - 0.12) < 1e-12
    assert abs(float(r["difference_hi"]) - (0.12 + 4.303 * 0.01 / math.sqrt(3))) < 1e-9
    # cbow's rows came with two sgns rates but one cbow rate: one rate, no difference.
    assert all(float(r["difference"]) == 0.0 for r in rows if r["model"] == "cbow")
    # Two values for one (model, rate, item, seed) are refused, naming the file.
    second = lines[1].split(",")
    second[8] = "0.99"
    lines.append(",".join(second))
    with tempfile.TemporaryDirectory() as d:
        ev = os.path.join(d, "eval.csv")
        with open(ev, "w") as f:
            f.write("\n".join(lines) + "\n")
        try:
            main(ev, os.path.join(d, "summary.csv"), quiet=True)
        except SystemExit as e:
            assert "two values for ('sgns', 0.025" in str(e) and ev in str(e), e
        else:
            raise AssertionError("a second value was not refused")
    print("word2vec_rate_check.py: self-test passed")


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        self_test()
    elif len(sys.argv) != 3:
        sys.exit(__doc__)
    else:
        main(sys.argv[1], sys.argv[2])
