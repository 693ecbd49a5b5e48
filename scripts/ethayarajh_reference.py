#!/usr/bin/env python3
"""Writes data/reference/ethayarajh2019-embedding-space-stats.csv from a checkout of
github.com/kawine/contextual (commit 84d2f97 or later; the statistics files are unchanged since):
per model (bert-base-cased, gpt2) and layer (0 = input embeddings),

* intra_sentence_similarity and anisotropy: `embedding_space_stats.json`'s "mean cosine
  similarity between sentence and words" and "mean cosine similarity across words";
* self_similarity: the mean over the words listed in `self_similarity.csv` (words with 5+
  occurrences in the STS sentences; BERT's are WordPiece pieces) of each word's value, rounded
  to 3 decimals. (`variance_explained.csv` is left out: it has no layer 0 and its values, mostly
  below 0.1, do not match the FAQ's description of them as high.)

None is adjusted for anisotropy (the repository's FAQ), and the FAQ says the files are close to
the paper's charts, not an exact match. Usage: scripts/ethayarajh_reference.py CHECKOUT > CSV
"""
import csv
import json
import sys
from pathlib import Path

root = Path(sys.argv[1])
out = csv.writer(sys.stdout, lineterminator="\n")
out.writerow(["model", "layer", "statistic", "value"])
for model, folder in [("bert-base-cased", "bert"), ("gpt2", "gpt2")]:
    stats = json.loads((root / folder / "embedding_space_stats.json").read_text())
    for statistic, key in [
        ("intra_sentence_similarity", "mean cosine similarity between sentence and words"),
        ("anisotropy", "mean cosine similarity across words"),
    ]:
        for layer in range(13):
            out.writerow([model, layer, statistic, stats[key][f"layer_{layer}"]])
    for statistic, name in [("self_similarity", "self_similarity.csv")]:
        with open(root / folder / name, newline="") as f:
            rows = list(csv.DictReader(f))
        for layer in range(13):
            values = [float(r[f"layer_{layer}"]) for r in rows]
            out.writerow([model, layer, statistic, round(sum(values) / len(values), 3)])
