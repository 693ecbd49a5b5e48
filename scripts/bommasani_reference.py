#!/usr/bin/env python3
"""Writes data/reference/bommasani2020-aggregated-similarity.csv from a checkout of
github.com/rishibommasani/Contextual2Static (commit 625390a): Bommasani, Davis & Cardie (2020)'s
per-layer Spearman rho with human judgements (RG-65, WS-353, SimLex-999) of bert-base-uncased
("bertsm") and gpt2 ("gpt2sm") vectors pooled over 100,000 Wikipedia sentences, pieces
averaged into a word and contexts averaged ("f = mean; g = mean" in the figure's legend; the
pooling `main.py` and `scorer.py` of that repository compute).

The repository keeps the numbers only as figures (`Figures/{bertsm,gpt2sm}-repr_quality.jpeg`),
the code prints each set's best layer only, and the paper's tables were not reachable, so the values are read
off the figures' pixels: the line's colour (the dark teal of the "f = mean" lines), the
topmost such line at each layer's tick, its height mapped to the panel's gridlines. The g = mean
line is the topmost of its colour at layers 0-11 of these six panels (checked by eye); at layer
12 it is not everywhere, and the exceptions, found by eye, are hard-coded: where a dash leaves
the vertex undrawn (so the topmost line at the tick is another) the line's last drawn pixels
are read (`READ_LEFT`); where lines of its colour cross, the value is left out (`LEFT_OUT`).
Precision: about +-0.01, +-0.02 at layer 12. Needs Pillow and numpy (not the project's: run it
once, by hand).

Rows: model, layer, statistic (`spearman:<set>`, the set named as in data/similarity/), value.

Usage: scripts/bommasani_reference.py CHECKOUT > data/reference/bommasani2020-aggregated-similarity.csv
"""
import csv
import sys
from pathlib import Path

import numpy as np
from PIL import Image

TEAL = np.array([24, 122, 106])
# Per panel: the x of layer 0's tick and of layer 12's, and two gridlines (pixel row, value),
# read from the 2412 x 870 figures (gridlines found as white rows across the panel).
PANELS = {
    ("bert-base-uncased", "bertsm"): {
        "RG-65": (85.5, 545.1, (80, 0.7), (736, 0.1)),
        "WS-353-ALL": (692.5, 1152.1, (84, 0.7), (754, 0.1)),
        "SIMLEX-999": (1298.5, 1758.1, (89, 0.5), (813, 0.0)),
    },
    ("gpt2", "gpt2sm"): {
        "RG-65": (85.5, 545.1, (135, 0.5), (707, 0.0)),
        "WS-353-ALL": (692.5, 1152.1, (125, 0.6), (777, 0.0)),
        "SIMLEX-999": (1298.5, 1758.1, (153, 0.4), (799, -0.1)),
    },
}
# (model, benchmark, layer): how many pixels left of the tick the line's last drawn pixels are.
READ_LEFT = {
    ("bert-base-uncased", "RG-65", 12): 7,
    ("bert-base-uncased", "SIMLEX-999", 12): 8,
}
LEFT_OUT = {("gpt2", "RG-65", 12)}


def top_line(mask, x, half=2):
    """The mean row of the topmost run of line pixels in columns x-half..x+half, or None."""
    rows = np.where(mask[48:815, max(x - half, 0) : x + half + 1].any(axis=1))[0] + 48
    if len(rows) == 0:
        return None
    run = [rows[0]]
    for r in rows[1:]:
        if r - run[-1] > 2:
            break
        run.append(r)
    return float(np.mean(run))


def main():
    root = Path(sys.argv[1])
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["model", "layer", "statistic", "value"])
    for (model, stem), panels in PANELS.items():
        image = Image.open(root / "Figures" / f"{stem}-repr_quality.jpeg").convert("RGB")
        pixels = np.asarray(image).astype(int)
        mask = np.abs(pixels - TEAL).sum(axis=2) < 60
        for benchmark, (x0, x12, (ya, va), (yb, vb)) in panels.items():
            for layer in range(13):
                if (model, benchmark, layer) in LEFT_OUT:
                    continue
                x = round(x0 + (x12 - x0) * layer / 12) - READ_LEFT.get((model, benchmark, layer), 0)
                y = top_line(mask, x)
                if y is None:
                    sys.exit(f"{stem}: no line at layer {layer} of {benchmark}")
                out.writerow([model, layer, f"spearman:{benchmark}", f"{va + (y - ya) * (vb - va) / (yb - ya):.2f}"])


if __name__ == "__main__":
    main()
