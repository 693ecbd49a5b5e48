#!/usr/bin/env python3
"""gensim reads what `--exp export` writes: for each triple given (the same table exported as
word2vec binary and as text, and the WS-353 Spearman the study reports for that table), both
files load with KeyedVectors.load_word2vec_format, hold the same words in the same order and the
same vectors (to the text format's printed precision), and

- the table is the one the study scored: the study's own arithmetic on the file
  (`analysis::similarity::cosine`: each row unit-normalised in float32, then a sequential
  float32 sum; a zero row scores 0; Spearman with average ranks) gives back the study's
  Spearman to 1e-9;
- gensim agrees with the study: gensim's own WS-353 Spearman (`evaluate_word_pairs`,
  case-insensitive) equals the study's to 1e-6, or, where it does not, gensim's cosine of every
  pair is the study's to 1e-6 and the two differ only in how a near-tie ranks (gensim's BLAS dot
  adds in another order than the study's sequential sum; one swapped pair moves Spearman by
  up to about 6|rank gap| / n^3).

Exits non-zero when a file does not load or any of these fail, saying which.

    python3 scripts/gensim_roundtrip.py table.bin table.txt 0.3227 [other.bin other.txt rho ...]
"""
import sys

import numpy as np
from gensim.models import KeyedVectors
from gensim.test.utils import datapath
from scipy.stats import spearmanr


def study_cosine(x, y):
    f = np.float32
    nx = np.sqrt(sum((f(v) * f(v) for v in x), f(0)), dtype=f)
    ny = np.sqrt(sum((f(v) * f(v) for v in y), f(0)), dtype=f)
    if nx == 0 or ny == 0:
        return 0.0
    return float(sum(((f(u) / nx) * (f(v) / ny) for u, v in zip(x, y)), f(0)))


def ws353_pairs(kv):
    """WS-353's pairs both of whose words have a row (lower-cased, as the study reads them)."""
    for line in open(datapath("wordsim353.tsv")):
        if line.startswith("#"):
            continue
        a, c, score = line.rstrip("\n").split("\t")
        a, c = a.lower(), c.lower()
        if a in kv.key_to_index and c in kv.key_to_index:
            yield a, c, float(score)


args = sys.argv[1:]
if not args or len(args) % 3:
    sys.exit("usage: gensim_roundtrip.py BIN TXT WS353_SPEARMAN [BIN TXT WS353_SPEARMAN ...]")
for binary, text, expected in zip(args[0::3], args[1::3], args[2::3]):
    expected = float(expected)
    b = KeyedVectors.load_word2vec_format(binary, binary=True)
    t = KeyedVectors.load_word2vec_format(text, binary=False)
    if b.index_to_key != t.index_to_key:
        sys.exit(f"{binary} and {text}: different words or order")
    if not np.allclose(b.vectors, t.vectors, rtol=1e-5, atol=1e-6):
        worst = np.abs(b.vectors - t.vectors).max()
        sys.exit(f"{binary} and {text}: vectors differ (largest difference {worst})")
    pairs = list(ws353_pairs(b))
    human = [s for _, _, s in pairs]
    ours = [study_cosine(b[a], b[c]) for a, c, _ in pairs]
    theirs = [float(b.similarity(a, c)) for a, c, _ in pairs]
    here = spearmanr(human, ours)[0]
    if abs(here - expected) > 1e-9:
        sys.exit(
            f"{binary}: the study's arithmetic on this file gives WS-353 Spearman {here} over "
            f"{len(pairs)} pairs, not the study's {expected}: the exported table is not the one "
            "the study scored"
        )
    pearson, spearman, oov = b.evaluate_word_pairs(datapath("wordsim353.tsv"), case_insensitive=True)
    note = "= the study's"
    if abs(spearman[0] - expected) > 1e-6:
        worst = max(abs(o - g) for o, g in zip(ours, theirs))
        if worst > 1e-6:
            sys.exit(
                f"{binary}: gensim's WS-353 Spearman {spearman[0]} against the study's {expected}, "
                f"and their cosines of one pair differ by {worst}"
            )
        note = (
            f"against the study's {expected:.6f}: every pair's cosine the same to {worst:.1e}, "
            "a near-tie ranked otherwise"
        )
    print(
        f"{binary}, {text}: {len(b)} x {b.vector_size}, identical; gensim's WS-353 Spearman "
        f"{spearman[0]:.6f} {note} ({oov:.1f}% OOV)"
    )
