#!/usr/bin/env python3
"""What the crossed runs say about what sets the tied masked LM's regime (docs/method.md,
"What sets a seed's regime").

A crossed run trains seed I's initial weights on seed D's batches and masks
(`--exp train --config experiments/configs/regime-cross.toml --seed D --init-seed I`); its
curve is committed as `results/round/regime-cross/mlm-seed<D>-init<I>-<hash>.csv`. A plain run
of the same config (`mlm-seed<D>-<hash>.csv`, no `init`) is the control: it should retrace the
round's own curve for seed D, which the crossed runs are compared with.

For every run this prints, on the dev block (the split the round's regimes were read on) and
on the test block (the split the study reports):
- the end loss beside the round's seeds D and I and the round's two groups (split at the widest
  gap between the ten seeds' end dev losses, as scripts/seed_regimes.py splits them);
- two criteria for "low", both set on other runs before these (docs/method.md): the end dev
  loss below 5.2, and the dev fall from step 1584 to 2376 (the round's parting window) of at
  least 0.38, the round's low seeds' smallest; and, since a late parting can miss that window,
  the steepest fall over any 792 steps from step 1584 on (before it every seed falls fast);
- which prediction each criterion meets: "weights" (low exactly when I is a low seed), "batches"
  (low exactly when D is).
A control prints its largest difference from the round's curve over every row.

Were the regime unrelated to both, each run would end low with the round's frequency (2 of 10)
whatever its seeds; the last line gives the chance, under that null, of at least as many runs
meeting the weights' prediction (by the end criterion) as did, and of exactly the outcomes seen.
With five runs that is a description, not a test.

Usage: regime_cross.py [RESULTS_DIR], or --self-test
"""
import csv
import glob
import os
import re
import sys

END_LOW = 5.2  # ending dev loss below this is "low" (method.md, "Seeds 1004 to 1006")
FALL_LOW = 0.38  # dev fall from step 1584 to 2376 at least this is "low" (method.md)
WINDOW = (1584, 2376)


def read_curve(path):
    """{split: {step: loss}} of a curve CSV."""
    out = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            out.setdefault(r["split"], {})[int(r["step"])] = float(r["loss"])
    if "dev" not in out:
        sys.exit(f"{path}: no dev rows (a run without a dev split is not the round's recipe)")
    return out


def end(curve, split):
    steps = curve[split]
    return steps[max(steps)]


def fall(curve, a, b):
    d = curve["dev"]
    if a not in d or b not in d:
        sys.exit(f"no dev loss at step {a} or {b}")
    return d[a] - d[b]


def steepest_fall(curve, span):
    d = curve["dev"]
    return max(d[s] - d[s + span] for s in d if s >= WINDOW[0] and s + span in d)


def round_curves(results):
    """{seed: curve} of the round's tied masked LM, from the runs its measurements list."""
    runs = {}
    for m in glob.glob(os.path.join(results, "round", "*", "measurements.csv")):
        with open(m, newline="") as f:
            for r in csv.reader(f):
                if len(r) >= 3 and r[0] == "transformer-mlm" and r[1].isdigit():
                    runs.setdefault(int(r[1]), set()).add(os.path.dirname(r[2]))
    if not runs:
        sys.exit(f"{results}/round: no transformer-mlm runs listed")
    out = {}
    for seed, dirs in runs.items():
        if len(dirs) != 1:
            sys.exit(f"round: seed {seed} of transformer-mlm is listed in {sorted(dirs)}")
        out[seed] = read_curve(os.path.join(results, dirs.pop(), "curve.csv"))
    return out


def groups(curves):
    """The round's seeds below and above the widest gap between end dev losses."""
    order = sorted(curves, key=lambda s: end(curves[s], "dev"))
    gaps = [end(curves[order[i + 1]], "dev") - end(curves[order[i]], "dev") for i in range(len(order) - 1)]
    cut = max(range(len(gaps)), key=gaps.__getitem__) + 1
    return set(order[:cut]), set(order[cut:])


NAME = re.compile(r"mlm-seed(\d+)(?:-init(\d+))?-[0-9a-f]{12}\.csv$")


def analyse(results):
    curves = round_curves(results)
    low, high = groups(curves)
    lines = []
    ends = lambda g, split: [end(curves[s], split) for s in sorted(g)]
    for split in ["dev", "test"]:
        lines.append(
            f"round, {split}: low seeds {sorted(low)} end {min(ends(low, split)):.3f} to {max(ends(low, split)):.3f}; "
            f"the other {len(high)} {min(ends(high, split)):.3f} to {max(ends(high, split)):.3f}"
        )
    falls = {s: fall(curves[s], *WINDOW) for s in curves}
    lines.append(
        f"round, dev fall {WINDOW[0]}-{WINDOW[1]}: low seeds {min(falls[s] for s in low):.3f} to "
        f"{max(falls[s] for s in low):.3f}; the others {min(falls[s] for s in high):.3f} to {max(falls[s] for s in high):.3f}"
    )
    span = WINDOW[1] - WINDOW[0]
    steep = {s: steepest_fall(curves[s], span) for s in curves}
    lines.append(
        f"round, steepest dev fall over {span} steps from step {WINDOW[0]}: low seeds {min(steep[s] for s in low):.3f} to "
        f"{max(steep[s] for s in low):.3f}; the others {min(steep[s] for s in high):.3f} to {max(steep[s] for s in high):.3f}"
    )
    met = {"weights": 0, "batches": 0, "weights by fall": 0, "batches by fall": 0}
    runs = []  # (seed I is low, the run is low by the end criterion)
    crossed = 0
    for path in sorted(glob.glob(os.path.join(results, "round", "regime-cross", "*.csv"))):
        m = NAME.search(os.path.basename(path))
        if not m:
            sys.exit(f"{path}: not a run's curve (mlm-seed<D>[-init<I>]-<hash>.csv)")
        d = int(m.group(1))
        i = int(m.group(2)) if m.group(2) else d
        if d not in curves or i not in curves:
            sys.exit(f"{path}: seed {d} or {i} is not a round seed")
        c = read_curve(path)
        name = os.path.basename(path)[:-4]
        if i == d:
            # Every (split, step) row of the round's curve and no other: a control that stopped
            # early, or has rows the round has not, does not retrace it.
            keys = lambda cv: {(sp, st) for sp in cv for st in cv[sp]}
            if keys(c) != keys(curves[d]):
                missing, extra = sorted(keys(curves[d]) - keys(c)), sorted(keys(c) - keys(curves[d]))
                sys.exit(f"{path}: control's rows differ from the round's seed {d} (missing {missing[:3]}, extra {extra[:3]})")
            diff = max(abs(c[sp][st] - curves[d][sp][st]) for sp, st in keys(c))
            lines.append(f"{name} (control, seed {d} plain): largest difference from the round's seed {d}, {len(keys(c))} rows: {diff:.2e}")
            continue
        crossed += 1
        e_dev, e_test = end(c, "dev"), end(c, "test")
        f, st = fall(c, *WINDOW), steepest_fall(c, span)
        by_end, by_fall = e_dev < END_LOW, f >= FALL_LOW
        lines.append(
            f"{name} (seed {i}'s weights on seed {d}'s batches): dev {e_dev:.3f} (seed {i} {end(curves[i], 'dev'):.3f}, "
            f"seed {d} {end(curves[d], 'dev'):.3f}), test {e_test:.3f} (seed {i} {end(curves[i], 'test'):.3f}, "
            f"seed {d} {end(curves[d], 'test'):.3f}); fall {f:.3f}, steepest {st:.3f}; "
            f"low by end: {'yes' if by_end else 'no'}, by fall: {'yes' if by_fall else 'no'}"
        )
        runs.append((i in low, by_end))
        met["weights"] += by_end == (i in low)
        met["batches"] += by_end == (d in low)
        met["weights by fall"] += by_fall == (i in low)
        met["batches by fall"] += by_fall == (d in low)
        lines.append(
            f"  predictions met by the end criterion: weights {'yes' if by_end == (i in low) else 'no'}, "
            f"batches {'yes' if by_end == (d in low) else 'no'}; by the fall: weights "
            f"{'yes' if by_fall == (i in low) else 'no'}, batches {'yes' if by_fall == (d in low) else 'no'}"
        )
    lines.append(
        f"{crossed} crossed runs; the end criterion meets the weights prediction in {met['weights']}, the batches' in {met['batches']}; "
        f"the fall criterion the weights' in {met['weights by fall']}, the batches' in {met['batches by fall']}"
    )
    if runs:
        q = len(low) / len(curves)
        at_least, pattern = null_chances(runs, q)
        lines.append(
            f"were each run low with the round's frequency ({q:g}) whatever its seeds: at least {met['weights']} of {crossed} "
            f"meeting the weights' prediction by the end {at_least:.3f}, the exact pattern seen {pattern:.3f}"
        )
    return lines


def null_chances(runs, q):
    """Under the null that each run ends low with probability `q`, independently and whatever
    its seeds: the chance that at least as many runs meet the weights' prediction as did, and
    the chance of exactly the outcomes seen. `runs`: (seed I is low, the run ended low)."""
    # The distribution of the number of runs meeting the prediction, one run at a time.
    dist = [1.0]
    for i_low, _ in runs:
        meet = q if i_low else 1 - q
        dist = [(dist[k] if k < len(dist) else 0) * (1 - meet) + (dist[k - 1] * meet if k > 0 else 0) for k in range(len(dist) + 1)]
    seen = sum(i_low == is_low for i_low, is_low in runs)
    pattern = 1.0
    for _, is_low in runs:
        pattern *= q if is_low else 1 - q
    return sum(dist[seen:]), pattern


def self_test():
    import tempfile

    def curve(path, dev, test, drop=()):
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["step", "split", "loss", "perplexity", "lr", "tokens_per_second"])
            for step in dev:
                if ("dev", step) not in drop:
                    w.writerow([step, "dev", dev[step], 0, 0, 0])
                if ("test", step) not in drop:
                    w.writerow([step, "test", test[step], 0, 0, 0])

    steps = range(264, 5281, 264)

    # Every seed falls fast to step 1584, by `drop` over the window, then evenly to `end_loss`.
    def shape(drop, end_loss, start=6.7, at_1584=5.9):
        def at(t):
            if t <= 1584:
                return start - (start - at_1584) * t / 1584
            if t <= 2376:
                return at_1584 - drop * (t - 1584) / 792
            return at_1584 - drop - (at_1584 - drop - end_loss) * (t - 2376) / (5280 - 2376)
        return {t: at(t) for t in steps}

    def late(end_loss):
        # The window's fall is the upper group's (0.20); the steep fall (0.33) comes after it.
        d = shape(0.20, 5.30)
        for t in steps:
            if 2376 < t <= 3168:
                d[t] = 5.70 - 0.33 * (t - 2376) / 792
            elif t > 3168:
                d[t] = 5.37 - (5.37 - end_loss) * (t - 3168) / (5280 - 3168)
        return d

    # Two runs on a low seed's weights, both low: 0.2 * 0.2 either way; one high run on a high
    # seed's weights as well: at least 3 of 3 is 0.2 * 0.2 * 0.8.
    for got, want in [
        (null_chances([(True, True), (True, True)], 0.2), (0.04, 0.04)),
        (null_chances([(True, True), (True, True), (False, False)], 0.2), (0.032, 0.032)),
        (null_chances([(True, False), (False, True)], 0.2), (1.0, 0.16)),
    ]:
        assert all(abs(g - w) < 1e-12 for g, w in zip(got, want)), (got, want)
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "round", "analogy"))
        os.makedirs(os.path.join(root, "round", "regime-cross"))
        rows = []
        for s in range(1, 11):
            low = s in (2, 4)
            run = f"measurements/mlm-seed{s}-{s:012x}"
            os.makedirs(os.path.join(root, run))
            dev = shape(0.40 if low else 0.20, 4.95 if low else 5.30 + s / 1000)
            # Test is not an offset of dev: its window falls more, and seed 7 ends lowest on it,
            # so that grouping the round by test loss puts seed 7 among the low seeds.
            test = shape(0.45 if low else 0.25, 4.90 if low else (4.80 if s == 7 else 5.26 + s / 1000), 6.8, 5.95)
            curve(os.path.join(root, run, "curve.csv"), dev, test)
            rows.append(["transformer-mlm", str(s), f"{run}/items-x.csv.gz"])
        with open(os.path.join(root, "round", "analogy", "measurements.csv"), "w", newline="") as f:
            csv.writer(f).writerows([["model", "seed", "file"]] + rows)
        cross = os.path.join(root, "round", "regime-cross")
        # Seed 2's weights on seed 1's batches, parting late: low by the end, not by the fall.
        curve(os.path.join(cross, "mlm-seed1-init2-aaaaaaaaaaaa.csv"), late(5.15), shape(0.3, 5.11, 6.8, 5.95))
        # Seed 1's weights on seed 2's batches: high by both.
        curve(os.path.join(cross, "mlm-seed2-init1-bbbbbbbbbbbb.csv"), shape(0.20, 5.34), shape(0.26, 5.29, 6.8, 5.95))
        # Seed 4's weights on seed 3's batches: a window fall between 0.30 and 0.38, high by both.
        curve(os.path.join(cross, "mlm-seed3-init4-dddddddddddd.csv"), shape(0.34, 5.31), shape(0.37, 5.27, 6.8, 5.95))
        # The control retraces seed 2 but for 1e-6 at one early test row.
        c2 = (shape(0.40, 4.95), shape(0.45, 4.90, 6.8, 5.95))
        c2[1][528] += 1e-6
        control = os.path.join(cross, "mlm-seed2-cccccccccccc.csv")
        curve(control, *c2)
        out = analyse(root)
        text = "\n".join(out)
        expect = [
            "round, dev: low seeds [2, 4] end 4.950 to 4.950; the other 8 5.301 to 5.310",
            "round, test: low seeds [2, 4] end 4.900 to 4.900; the other 8 4.800 to 5.270",
            "round, dev fall 1584-2376: low seeds 0.400 to 0.400; the others 0.200 to 0.200",
            "round, steepest dev fall over 792 steps from step 1584: low seeds 0.400 to 0.400; the others 0.200 to 0.200",
            "(seed 2's weights on seed 1's batches): dev 5.150 (seed 2 4.950, seed 1 5.301), test 5.110 (seed 2 4.900, seed 1 5.261); "
            "fall 0.200, steepest 0.330; low by end: yes, by fall: no",
            "(seed 1's weights on seed 2's batches): dev 5.340 (seed 1 5.301, seed 2 4.950), test 5.290 (seed 1 5.261, seed 2 4.900); "
            "fall 0.200, steepest 0.200; low by end: no, by fall: no",
            "(seed 4's weights on seed 3's batches): dev 5.310 (seed 4 4.950, seed 3 5.303), test 5.270 (seed 4 4.900, seed 3 5.263); "
            "fall 0.340, steepest 0.340; low by end: no, by fall: no",
            "largest difference from the round's seed 2, 40 rows: 1.00e-06",
            "3 crossed runs; the end criterion meets the weights prediction in 2, the batches' in 1; "
            "the fall criterion the weights' in 1, the batches' in 2",
            # Runs with I low: 2 (each meets w.p. 0.2), with I high: 1 (0.8); 2 met.
            # P(>= 2) = 1 - 0.8*0.8*0.2 - (2*0.2*0.8*0.2 + 0.8*0.8*0.8) = 0.296; low, high, high: 0.2*0.8*0.8.
            "were each run low with the round's frequency (0.2) whatever its seeds: at least 2 of 3 "
            "meeting the weights' prediction by the end 0.296, the exact pattern seen 0.128",
        ]
        for e in expect:
            assert e in text, f"missing: {e}\n{text}"
        # The late-parting run meets the weights prediction by its end, the batches' by its fall.
        i = out.index(next(l for l in out if "seed 2's weights on seed 1's" in l))
        assert out[i + 1].endswith("weights yes, batches no; by the fall: weights no, batches yes"), out[i + 1]
        # A control missing a row of the round's curve is refused, not compared on what it has.
        curve(control, *c2, drop={("test", 5280)})
        try:
            analyse(root)
        except SystemExit as e:
            assert "control's rows differ from the round's seed 2" in str(e) and "('test', 5280)" in str(e), e
        else:
            raise AssertionError("a control missing a row was compared")
    print("regime_cross.py: self-test passed")


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        self_test()
    else:
        for line in analyse(sys.argv[1] if len(sys.argv) > 1 else "results"):
            print(line)
