#!/usr/bin/env python3
"""Whether one model's seeds fall into regimes, and what differs between them.

The ten-seed round's tied masked LM ends on the dev block in two groups (seeds 2 and 4 at least
0.33 nats below the other eight; docs/method.md). This reads the round's committed
measurements of one model (the runs `results/round/*/measurements.csv` list), splits its
seeds at the widest gap between their final dev losses (each run's `curve.csv`), and for every
score the runs share (`scores-<hash>.csv`; the gain at [MASK] is not among them: the reports
give it per seed) writes each group's mean, lowest and highest value and whether the groups' ranges are disjoint.

How many disjoint ranges chance gives: were the seeds exchangeable for a score (its values
independent of the split), the k seeds of the smaller group would be the k lowest or the k
highest of n with probability 2 / C(n, k), two distinct orders even when k = n - k: 2/45 for 2
of 10. The split is chosen on the dev loss, so scores that track it separate
by construction, and the scores are not independent of one another (every layer's, every
benchmark's), so the count is a description, not a test.

Usage: seed_regimes.py MODEL OUT_CSV [RESULTS_DIR], or --self-test
"""
import csv
import glob
import math
import os
import statistics
import sys


def final_dev_loss(curve_csv):
    """The last `dev` row's loss of a run's curve."""
    last = None
    with open(curve_csv, newline="") as f:
        for r in csv.DictReader(f):
            if r["split"] == "dev":
                last = float(r["loss"])
    if last is None:
        sys.exit(f"{curve_csv}: no dev rows (a run without a dev split is not the round's)")
    return last


def split_at_widest_gap(losses):
    """The seeds below and above the widest gap between consecutive sorted losses."""
    order = sorted(losses, key=lambda s: losses[s])
    if len(order) < 2:
        sys.exit("fewer than two seeds: nothing to split")
    gaps = [losses[order[i + 1]] - losses[order[i]] for i in range(len(order) - 1)]
    cut = max(range(len(gaps)), key=gaps.__getitem__) + 1
    return order[:cut], order[cut:], gaps[cut - 1]


def pooled_sd(a, b):
    """The two groups' pooled standard deviation (a group of one adds no spread)."""
    ss = sum((x - statistics.fmean(a)) ** 2 for x in a) + sum((x - statistics.fmean(b)) ** 2 for x in b)
    dof = len(a) + len(b) - 2
    return math.sqrt(ss / dof) if dof > 0 else math.nan


def chance_disjoint(n, k):
    """P(the k seeds of one group take the k lowest or k highest values of n), exchangeable."""
    return 2 / math.comb(n, k)


def read_runs(results, model):
    """{seed: (run directory, items file name)} of the model in the round's lists (every
    `results/round/*/measurements.csv`; a seed two lists give different runs is refused)."""
    runs, where = {}, {}
    for listing in sorted(glob.glob(os.path.join(results, "round", "*", "measurements.csv"))):
        with open(listing, newline="") as f:
            for line, r in enumerate(csv.DictReader(f), start=2):
                if r["model"] != model:
                    continue
                seed = int(r["seed"])
                items = os.path.join(results, r["items"])
                run = (os.path.dirname(items), os.path.basename(items))
                if seed in runs and runs[seed] != run:
                    sys.exit(f"{listing}:{line}: {model} seed {seed} is {r['items']}, "
                             f"where {where[seed]} lists another run")
                runs[seed], where[seed] = run, f"{listing}:{line}"
    if not runs:
        sys.exit(f"{results}/round/*/measurements.csv: no runs of {model}")
    return runs


def read_scores(run_dir, items_name):
    """{(representation, layer, benchmark, metric): value} of a run's scores file."""
    h = items_name.removeprefix("items-").removesuffix(".csv.gz")
    path = os.path.join(run_dir, f"scores-{h}.csv")
    out = {}
    with open(path, newline="") as f:
        for line, r in enumerate(csv.DictReader(f), start=2):
            key = (r["representation"], r["layer"], r["benchmark"], r["metric"])
            if key in out:
                sys.exit(f"{path}:{line}: {key} twice")
            out[key] = float(r["value"])
    return out


def main(model, out_csv, results="results", quiet=False):
    runs = read_runs(results, model)
    losses, scores = {}, {}
    for seed, (run_dir, items) in runs.items():
        losses[seed] = final_dev_loss(os.path.join(run_dir, "curve.csv"))
        scores[seed] = read_scores(run_dir, items)
    low, high, gap = split_at_widest_gap(losses)
    keys = sorted(set.intersection(*(set(s) for s in scores.values())))
    partial = len(set.union(*(set(s) for s in scores.values()))) - len(keys)
    rows = []
    for key in keys:
        a = [scores[s][key] for s in low]
        b = [scores[s][key] for s in high]
        if any(not math.isfinite(v) for v in a + b):
            continue
        rows.append({
            "representation": key[0], "layer": key[1], "benchmark": key[2], "metric": key[3],
            "low_loss_seeds": " ".join(map(str, sorted(low))),
            "low_mean": statistics.fmean(a), "low_min": min(a), "low_max": max(a),
            "other_mean": statistics.fmean(b), "other_min": min(b), "other_max": max(b),
            "disjoint": max(a) < min(b) or max(b) < min(a),
        })
    if not rows:
        sys.exit(f"{model}: no score every seed has with a finite value")
    tmp = out_csv + ".tmp"
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    os.replace(tmp, out_csv)
    n, k = len(losses), min(len(low), len(high))
    varied = [r for r in rows if r["low_min"] != r["low_max"] or r["other_min"] != r["other_max"]
              or r["low_mean"] != r["other_mean"]]
    disjoint = sum(r["disjoint"] for r in varied)
    if not quiet:
        spread = pooled_sd([losses[s] for s in low], [losses[s] for s in high])
        ratio = f"{gap / spread:.1f} times" if spread > 0 else "with no spread within"
        print(f"{model}: seeds {sorted(low)} end {gap:.3f} nats below the next on the dev block "
              f"({len(low)} and {len(high)} of {n} seeds; {ratio} the groups' "
              f"pooled standard deviation, {spread:.3f})")
        left = len(keys) - len(rows)
        if left or partial:
            print(f"left out: {partial} scores some seeds lack, {left} with a non-finite value")
        print(f"{disjoint} of {len(varied)} scores that vary have disjoint ranges; exchangeable "
              f"seeds would give about {chance_disjoint(n, k) * len(varied):.0f} "
              f"({chance_disjoint(n, k):.3f} each) -> {out_csv}")
    return low, high, rows


def refused(call, text):
    """`call()` stops the script with a message containing `text`."""
    try:
        call()
    except SystemExit as e:
        assert text in str(e), e
    else:
        raise AssertionError(f"not refused (expected {text!r})")


def self_test():
    """A planted round: the split, the disjoint flags and the refusals."""
    import tempfile
    assert split_at_widest_gap({1: 5.3, 2: 4.9, 3: 5.31, 4: 4.95}) == ([2, 4], [1, 3], 5.3 - 4.95)
    assert abs(chance_disjoint(10, 2) - 2 / 45) < 1e-15
    # Of the 6 ways to place 2 seeds among 4 ranks, {1, 2} and {3, 4} are disjoint: 1/3.
    assert chance_disjoint(4, 2) == 1 / 3
    # (1 - 2)^2 + (2 - 2)^2 + (3 - 2)^2 + (10 - 11)^2 + (12 - 11)^2 = 4 over 3 degrees of freedom.
    assert abs(pooled_sd([1, 2, 3], [10, 12]) - math.sqrt(4 / 3)) < 1e-12
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "round", "qkv"))
        listing = ["model,seed,items"]
        for seed, (loss, ws, sep) in {1: (5.3, 0.30, 0.1), 2: (4.9, 0.35, 0.9),
                                       3: (5.31, 0.20, 0.2), 4: (4.95, 0.10, 0.8)}.items():
            run = os.path.join(d, "measurements", f"mlm-seed{seed}-abc")
            os.makedirs(run)
            listing.append(f"transformer-mlm,{seed},measurements/mlm-seed{seed}-abc/items-h.csv.gz")
            with open(os.path.join(run, "curve.csv"), "w") as f:
                f.write("step,split,loss\n1,dev,9.0\n1,train,1.0\n2,dev,%r\n2,heldout,0.5\n" % loss)
            with open(os.path.join(run, "scores-h.csv"), "w") as f:
                f.write("experiment,model,representation,layer,benchmark,metric,value\n")
                f.write(f",m,embedding,,WS,spearman,{ws}\n,m,embedding,,flat,x,1.0\n")
                f.write(f",m,embedding,,sep,x,{sep}\n")
                # A score only seed 1 has is left out.
                if seed == 1:
                    f.write(",m,embedding,,only-one,x,1.0\n")
        with open(os.path.join(d, "round", "qkv", "measurements.csv"), "w") as f:
            f.write("\n".join(listing + ["transformer-clm,1,elsewhere/items-h.csv.gz"]) + "\n")
        # A second list naming the same runs (as the round's experiments' lists do) is read once.
        os.makedirs(os.path.join(d, "round", "similarity"))
        with open(os.path.join(d, "round", "similarity", "measurements.csv"), "w") as f:
            f.write("\n".join(listing[:3]) + "\n")
        out = os.path.join(d, "regimes.csv")
        import contextlib
        import io
        said = io.StringIO()
        with contextlib.redirect_stdout(said):
            low, high, rows = main("transformer-mlm", out, d)
        # Gap 5.3 - 4.95 = 0.35; within-group SD sqrt((0.025^2 * 2 + 0.005^2 * 2) / 2) = 0.0255.
        said = said.getvalue()
        assert "seeds [2, 4] end 0.350 nats below the next" in said, said
        assert "13.7 times the groups' pooled standard deviation, 0.025" in said, said
        assert "left out: 1 scores some seeds lack, 0 with a non-finite value" in said, said
        assert "1 of 2 scores that vary have disjoint ranges" in said and "(0.333 each)" in said, said
        assert (low, high) == ([2, 4], [1, 3]), (low, high)
        by = {(r["benchmark"], r["metric"]): r for r in rows}
        assert set(by) == {("WS", "spearman"), ("flat", "x"), ("sep", "x")}
        ws = by[("WS", "spearman")]
        # Low group 0.35 and 0.10 against 0.30 and 0.20: overlapping.
        assert not ws["disjoint"] and abs(ws["low_mean"] - 0.225) < 1e-12
        # A score every seed shares is not "disjoint": equal ranges touch.
        assert not by[("flat", "x")]["disjoint"] and by[("flat", "x")]["low_mean"] == 1.0
        # Low group 0.9 and 0.8 against 0.1 and 0.2: disjoint.
        assert by[("sep", "x")]["disjoint"] and by[("sep", "x")]["other_max"] == 0.2
        kept = list(csv.DictReader(open(out)))
        assert len(kept) == 3 and {r["disjoint"] for r in kept} == {"True", "False"}
        # A seed a list gives another run is refused, naming the file and line.
        with open(os.path.join(d, "round", "similarity", "measurements.csv"), "a") as f:
            f.write("transformer-mlm,1,measurements/mlm-seed1-old/items-h.csv.gz\n")
        refused(lambda: main("transformer-mlm", out, d, quiet=True),
                "similarity/measurements.csv:4: transformer-mlm seed 1 is measurements/mlm-seed1-old")
        refused(lambda: main("transformer-none", out, d, quiet=True), "no runs of transformer-none")
    print("seed_regimes.py: self-test passed")


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        self_test()
    elif len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    else:
        main(*sys.argv[1:])
