#!/usr/bin/env python3
"""Writes the reference fixtures of crates/pretrained/tests/tokenizers.rs: what Hugging Face
`tokenizers` itself makes of hard cases, for the WordPiece tokenizer of all-MiniLM-L6-v2
(BERT's uncased normaliser; data/pretrained, scripts/fetch_pretrained.sh) and for a small
byte-level BPE tokenizer with GPT-2's pre-tokenizer, trained here on a slice of WikiText-2
(committed as tests/fixtures/tiny-bpe/tokenizer.json, since no GPT-2 tokenizer ships in a
package this machine can fetch).

    /tmp/fx/bin/pip install tokenizers==0.20.3 && /tmp/fx/bin/python scripts/tokenizer_fixtures.py
"""
import gzip
import json
import pathlib

import tokenizers
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "crates/pretrained/tests/fixtures"

HARD = [
    "The Café in Zürich serves crème brûlée",
    "ÅNGSTRÖM naïve façade Œuvre",
    "我爱北京天安门 and 東京",
    "it's I'll we've don't they'RE",
    "3.14159 1,000,000 2026 ½ ²",
    "a" * 150,
    "x" * 100 + " " + "y" * 101,
    "  leading spaces",
    "trailing spaces   ",
    "line one\n\nline two\ttab",
    "hello!!! (world) -- yes? «quoted» “curly”",
    "emoji 🙂 ok",
    "control\u0000chars\u200bzero\ufffdwidth",
    "HeLLo WORLD",
    "multiple     inner   spaces",
    "unaffable unbelievably antidisestablishmentarianism",
    "a \n b",
    "a\n\nb",
    "x\u00a0y a \u3000b",
    "trailing newline\n ",
    "IT'S 'S 's",
    "year 2026, not 2025",
    "",
]


def cases(tok):
    out = []
    for text in HARD:
        enc = tok.encode(text, add_special_tokens=False)
        out.append({"text": text, "ids": enc.ids, "tokens": enc.tokens})
    return out


def pieces_per_word(tok, words):
    """The text's ids, and how many of them each space-separated word got (from offsets)."""
    text = " ".join(words)
    enc = tok.encode(text, add_special_tokens=False)
    starts, at = [], 0
    for w in words:
        starts.append(at)
        at += len(w) + 1
    counts = [0] * len(words)
    # A piece belongs to the word its first character is in; a piece that is only the space
    # between two words (GPT-2's lone "Ġ") to the word after it, as GPT-2 reads " word".
    for lo, hi in enc.offsets:
        counts[max(i for i, s in enumerate(starts) if s <= lo + 1)] += 1
    return enc.ids, counts


def main():
    wp = Tokenizer.from_file(str(ROOT / "data/pretrained/all-MiniLM-L6-v2/tokenizer.json"))
    # The package's tokenizer.json pads and truncates to 128; the reader does neither.
    wp.no_padding()
    wp.no_truncation()
    words = ["the", "unaffable", "zürich", "a" * 150, "embeddings", "word2vec", "don't"]
    ids, counts = pieces_per_word(wp, words)
    (OUT / "wordpiece-expected.json").write_text(
        json.dumps(
            {
                "cases": cases(wp),
                "words": words,
                "pieces_per_word": counts,
                "words_encoded": ids,
                "tokenizers": tokenizers.__version__,
            },
            ensure_ascii=False,
            indent=0,
        )
    )

    text = gzip.open(ROOT / "data/corpora/wikitext-2-valid.txt.gz", "rt").read()[:200_000]
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=600,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=["<|endoftext|>"],
    )
    bpe.train_from_iterator([text], trainer)
    d = OUT / "tiny-bpe"
    d.mkdir(parents=True, exist_ok=True)
    bpe.save(str(d / "tokenizer.json"))
    words = ["the", "unaffable", "zürich", "don't", "2026", "embeddings"]
    ids, counts = pieces_per_word(bpe, words)
    (OUT / "bpe-expected.json").write_text(
        json.dumps(
            {
                "cases": cases(bpe),
                "words": words,
                "pieces_per_word": counts,
                "words_encoded": ids,
                "tokenizers": tokenizers.__version__,
            },
            ensure_ascii=False,
            indent=0,
        )
    )


if __name__ == "__main__":
    main()
