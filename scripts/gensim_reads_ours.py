#!/usr/bin/env python3
"""Checks that gensim reads the word vectors we write: loads each file given with
KeyedVectors.load_word2vec_format (binary for .bin, text otherwise) and prints its shape, the
first words and the nearest neighbours of the first word. Exits non-zero if a file does not load.

    cargo run -p experiments -- --exp word2vec --quick --out /tmp/w
    python3 scripts/gensim_reads_ours.py /tmp/w/word2vec/sgns.bin /tmp/w/word2vec/cbow.bin
"""
import sys

from gensim.models import KeyedVectors

for path in sys.argv[1:]:
    kv = KeyedVectors.load_word2vec_format(path, binary=path.endswith(".bin"))
    first = kv.index_to_key[0]
    near = ", ".join(f"{w} {s:.3f}" for w, s in kv.most_similar(first, topn=3))
    print(f"{path}: {len(kv)} x {kv.vector_size}; first words {kv.index_to_key[:5]}; near {first!r}: {near}")
