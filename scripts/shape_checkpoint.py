#!/usr/bin/env python3
"""Writes a BERT checkpoint directory of a published model's shape with random weights, for
measuring what reading a checkpoint of that size costs (`--exp pretrained --estimate`: time per
batch, memory) where the real weights cannot be had: a forward pass costs the same whatever
the weights' values. Nothing measured on it is a finding about the model it mimics.

The weights are drawn as BERT initialises them (N(0, 0.02) matrices, zero biases, LayerNorm
(1, 0)), in the BertModel key layout transformers saves (no `bert.` prefix), as f32
safetensors; tokenizer.json is all-MiniLM-L6-v2's (scripts/fetch_pretrained.sh), the same
30,522-piece uncased WordPiece vocabulary as bert-base-uncased.

Needs numpy (the gensim venv of .ci/run has it):
    ~/.cache/embedlab/gensim-venv/bin/python scripts/shape_checkpoint.py OUT_DIR [--like bert-base-uncased]
"""
import argparse
import json
import pathlib
import shutil
import struct

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
TOKENIZER = ROOT / "data/pretrained/all-MiniLM-L6-v2/tokenizer.json"

# Published configurations (the models' config.json on the Hugging Face hub).
SHAPES = {
    "bert-base-uncased": dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                              intermediate_size=3072),
    "bert-large-uncased": dict(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16,
                               intermediate_size=4096),
}


def tensors(c, rng):
    h, i, v, p = c["hidden_size"], c["intermediate_size"], c["vocab_size"], c["max_position_embeddings"]
    normal = lambda *shape: (rng.standard_normal(shape, dtype=np.float32) * 0.02)
    zeros = lambda *shape: np.zeros(shape, np.float32)
    ones = lambda *shape: np.ones(shape, np.float32)
    yield "embeddings.word_embeddings.weight", normal(v, h)
    yield "embeddings.position_embeddings.weight", normal(p, h)
    yield "embeddings.token_type_embeddings.weight", normal(c["type_vocab_size"], h)
    yield "embeddings.LayerNorm.weight", ones(h)
    yield "embeddings.LayerNorm.bias", zeros(h)
    for l in range(c["num_hidden_layers"]):
        at = f"encoder.layer.{l}."
        for m in ["query", "key", "value"]:
            yield at + f"attention.self.{m}.weight", normal(h, h)
            yield at + f"attention.self.{m}.bias", zeros(h)
        yield at + "attention.output.dense.weight", normal(h, h)
        yield at + "attention.output.dense.bias", zeros(h)
        yield at + "attention.output.LayerNorm.weight", ones(h)
        yield at + "attention.output.LayerNorm.bias", zeros(h)
        yield at + "intermediate.dense.weight", normal(i, h)
        yield at + "intermediate.dense.bias", zeros(i)
        yield at + "output.dense.weight", normal(h, i)
        yield at + "output.dense.bias", zeros(h)
        yield at + "output.LayerNorm.weight", ones(h)
        yield at + "output.LayerNorm.bias", zeros(h)
    yield "pooler.dense.weight", normal(h, h)
    yield "pooler.dense.bias", zeros(h)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=pathlib.Path)
    ap.add_argument("--like", choices=sorted(SHAPES), default="bert-base-uncased")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    c = dict(architectures=["BertModel"], model_type="bert", vocab_size=30522,
             max_position_embeddings=512, type_vocab_size=2, hidden_act="gelu",
             layer_norm_eps=1e-12, initializer_range=0.02, pad_token_id=0,
             position_embedding_type="absolute", torch_dtype="float32",
             _name_or_path=f"random weights in the shape of {a.like} (scripts/shape_checkpoint.py)",
             **SHAPES[a.like])
    a.out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(a.seed)
    arrays = list(tensors(c, rng))
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name, x in arrays:
        header[name] = {"dtype": "F32", "shape": list(x.shape), "data_offsets": [offset, offset + x.nbytes]}
        offset += x.nbytes
    head = json.dumps(header, separators=(",", ":")).encode()
    head += b" " * (-len(head) % 8)
    tmp = a.out / "model.safetensors.tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(head)))
        f.write(head)
        for _, x in arrays:
            f.write(np.ascontiguousarray(x).tobytes())
    tmp.replace(a.out / "model.safetensors")
    (a.out / "config.json").write_text(json.dumps(c, indent=2) + "\n")
    shutil.copyfile(TOKENIZER, a.out / "tokenizer.json")
    n = sum(x.size for _, x in arrays)
    print(f"{a.out}: {a.like}'s shape, {n / 1e6:.1f}M parameters, {offset / 2**20:.0f} MiB of f32 weights")


if __name__ == "__main__":
    main()
