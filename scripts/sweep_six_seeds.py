#!/usr/bin/env python3
"""The five-epoch rate check at the two leading rates, over every sweep seed committed
(docs/method.md, "Seeds 1004 to 1006, and what the rule says", and "The five-epoch check of
every variant"): each seed's dev loss at 7.5e-4 and 1.5e-3, the seed means (the rule's
criterion), the paired difference's mean with a t interval over seeds, and an exact two-sided
sign test. With no argument, the tied masked LM
(results/sweep/transformer-5-epochs*/sweep/transformer-mlm-seed*.csv); `--model M`, another
variant, from results/sweep/every-variant-5-epochs/sweep/M-seed*.csv; `--all`, every variant
there, each with the seeds it has so far. `--self-test` checks the statistics on a planted case
with hand-computed answers, and the reading of files on planted ones."""
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
    # Files: two seeds in two files read as one table; a row given twice, and a bad value, are
    # refused by file and line.
    import os, tempfile
    head = "model,seed,lr,dev_loss\n"
    with tempfile.TemporaryDirectory() as d:
        a, b = os.path.join(d, "m-seed1.csv"), os.path.join(d, "m-seed2.csv")
        open(a, "w").write(head + "m,1,0.00075,5.0\nm,1,0.0015,5.1\n")
        open(b, "w").write(head + "m,2,0.00075,5.3\nm,2,0.0015,5.1\n")
        assert read([a, b]) == {(1, LOW): 5.0, (1, HIGH): 5.1, (2, LOW): 5.3, (2, HIGH): 5.1}
        # A seed with one rate so far is left out of the pairs; one pair gives no interval.
        import contextlib, io
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert report("m", {(1, LOW): 5.0, (1, HIGH): 5.1, (2, LOW): 5.3}) == 1
        assert "seed 2: only 0.00075 so far (5.300), left out" in out.getvalue(), out.getvalue()
        assert "no interval yet" in out.getvalue()
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert report("m", read([a, b])) == 2
        # d = -0.1, +0.2: mean +0.05, sd 0.21213, half-width 12.706 * 0.21213 / sqrt(2) = 1.906.
        assert "paired difference +0.050 [-1.856, +1.956] (t, 1 df)" in out.getvalue(), out.getvalue()
        assert model_of("x/transformer-mlm-no-attention-untied-head-seed1002.csv") == "transformer-mlm-no-attention-untied-head"
        for bad, needle in [(head + "m,1,0.00075,5.0\n", "m-seed2.csv:2: seed 1 at rate 0.00075 appears twice"),
                            (head + "m,2,0.00075,nan\n", "m-seed2.csv:2: dev_loss nan is not finite"),
                            (head + "m,2,0.00075,x\n", "m-seed2.csv:2: ValueError")]:
            open(b, "w").write(bad)
            try:
                read([a, b])
                raise AssertionError(f"accepted: {needle}")
            except SystemExit as e:
                assert needle in str(e.code), (needle, e.code)
    print("sweep_six_seeds self-test: ok")


REFERENCE = "results/sweep/transformer-5-epochs*/sweep/transformer-mlm-seed*.csv"
EVERY = "results/sweep/every-variant-5-epochs/sweep"


def read(paths):
    """{(seed, rate): dev loss} from sweep files; a row given twice, or a bad value, is an error
    naming its file and line."""
    rows = {}
    for path in paths:
        with open(path, newline="") as f:
            for line, r in enumerate(csv.DictReader(f), start=2):
                try:
                    key = (int(r["seed"]), float(r["lr"]))
                    loss = float(r["dev_loss"])
                except (KeyError, ValueError, TypeError) as e:
                    sys.exit(f"{path}:{line}: {e!r}")
                if not math.isfinite(loss):
                    sys.exit(f"{path}:{line}: dev_loss {loss} is not finite")
                if key in rows:
                    sys.exit(f"{path}:{line}: seed {key[0]} at rate {key[1]} appears twice")
                rows[key] = loss
    return rows


def report(name, rows):
    """Prints the rule's numbers for one variant; returns the paired seeds' count."""
    seeds = sorted(s for s, lr in rows if lr == LOW and (s, HIGH) in rows)
    low, high = [rows[(s, LOW)] for s in seeds], [rows[(s, HIGH)] for s in seeds]
    print(name)
    for s, a, b in zip(seeds, low, high):
        print(f"seed {s}: {LOW:g} {a:.3f}  {HIGH:g} {b:.3f}  difference {a - b:+.3f}")
    for (s, lr), loss in sorted(rows.items()):
        if s not in seeds:
            print(f"seed {s}: only {lr:g} so far ({loss:.3f}), left out")
    if len(seeds) < 2:
        print(f"{len(seeds)} seed(s) at both rates so far: no interval yet")
        return len(seeds)
    print(f"means over {len(seeds)} seeds: {LOW:g} {st.mean(low):.3f}  {HIGH:g} {st.mean(high):.3f}")
    m, lo, hi, lower, p = paired(low, high)
    print(f"paired difference {m:+.3f} [{lo:+.3f}, {hi:+.3f}] (t, {len(seeds) - 1} df); lower at {LOW:g} at {lower} of {len(seeds)} seeds, sign test p = {p:.3f}")
    return len(seeds)


def model_of(path):
    """The variant a sweep file is of: `.../transformer-mlm-untied-head-seed1001.csv` ->
    `transformer-mlm-untied-head`."""
    return path.split("/")[-1].rsplit("-seed", 1)[0]


def main(argv):
    if not argv:
        paths = sorted(glob.glob(REFERENCE))
        if not paths:
            sys.exit(f"no sweep files match {REFERENCE} (run from the repository root)")
        report("transformer-mlm", read(paths))
        return
    if argv == ["--all"]:
        models = sorted({model_of(p) for p in glob.glob(f"{EVERY}/*-seed*.csv")})
        if not models:
            sys.exit(f"no sweep files under {EVERY}/ (run from the repository root)")
    elif len(argv) == 2 and argv[0] == "--model":
        models = [argv[1]]
    else:
        sys.exit("usage: sweep_six_seeds.py [--model MODEL | --all | --self-test]")
    for i, model in enumerate(models):
        paths = sorted(glob.glob(f"{EVERY}/{model}-seed*.csv"))
        if not paths:
            sys.exit(f"no sweep files {EVERY}/{model}-seed*.csv")
        if i:
            print()
        report(model, read(paths))


if __name__ == "__main__":
    self_test() if sys.argv[1:] == ["--self-test"] else main(sys.argv[1:])
