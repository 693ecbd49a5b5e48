#!/usr/bin/env python3
"""Writes the reference fixtures of crates/pretrained/tests: tiny random BERT and GPT-2
checkpoints saved by Hugging Face transformers (BertModel, GPT2Model, save_pretrained as
safetensors), and their hidden states on fixed token ids, computed by transformers itself
(output_hidden_states=True). The Rust reader must reproduce them.

Needs torch and transformers (run once by whoever changes the fixtures; tests only read them):
    python3 -m venv /tmp/fx && /tmp/fx/bin/pip install torch==2.5.1 transformers==4.46.3
    /tmp/fx/bin/python scripts/pretrained_fixtures.py
Versions used are written into each expected.json.
"""
import json
import pathlib
import zlib

import torch
import transformers
from transformers import BertConfig, BertModel, GPT2Config, GPT2Model

OUT = pathlib.Path(__file__).resolve().parent.parent / "crates/pretrained/tests/fixtures"

# Two rows, the second right-padded after 5 tokens (pad id 0): the reader must ignore padding.
TOKENS = [[2, 17, 5, 33, 41, 8, 59, 3], [2, 9, 22, 30, 3, 0, 0, 0]]
MASK = [[1] * 8, [1] * 5 + [0] * 3]


def forms(model, layer_weights):
    """Per layer and head, M = W_Q^h (W_K^h)^T from the model's own torch weights (Linear stores
    [out, in]: W^h = weight[h d_k:(h+1) d_k, :].T), and its scores as Saponati et al.'s
    utils/scores.py and the identity cosine define them: the reference for analysis::bilinear."""
    out = []
    for wq, wk, n_heads in layer_weights:
        d_k = wq.shape[1] // n_heads
        layer = []
        for h in range(n_heads):
            q, k = wq[:, h * d_k:(h + 1) * d_k], wk[:, h * d_k:(h + 1) * d_k]
            m = (q @ k.T).double()
            sym = ((0.5 * (m + m.T)) ** 2).sum() / (m ** 2).sum()
            rows, cols = m.norm(dim=1), m.norm(dim=0)
            excess = lambda n: (n[n > n.mean() + 2 * n.std()] - (n.mean() + 2 * n.std())).sum()
            r, c = excess(rows), excess(cols)
            direc = 0.0 if r + c == 0 else ((c - r) / (c + r)).item()
            ident = (torch.trace(m) / (m.norm() * m.shape[0] ** 0.5)).item()
            layer.append({"symmetry": sym.item(), "directionality": direc, "identity_alignment": ident})
        whole = (wq @ wk.T).double()
        layer.append({"all_symmetry": (((0.5 * (whole + whole.T)) ** 2).sum() / (whole ** 2).sum()).item()})
        out.append(layer)
    return out


def perturb(model, seed):
    """transformers' init zeroes every bias and sets every LayerNorm to (1, 0): a reader that
    mixed up or dropped them would still match. Draw them instead."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("bias"):
                p.copy_(torch.randn(p.shape, generator=g) * 0.5)
            elif "LayerNorm.weight" in name or (".ln_" in name or name.startswith("ln_")) and name.endswith("weight"):
                p.copy_(1.0 + torch.randn(p.shape, generator=g) * 0.3)
    return model


def write(name, model, dtype=None):
    d = OUT / name
    d.mkdir(parents=True, exist_ok=True)
    model.eval()
    # A seed per fixture (zlib's CRC of its name), so no two fixtures draw the same values.
    perturb(model, zlib.crc32(name.encode()))
    saved = model if dtype is None else model.to(dtype)
    saved.save_pretrained(d, safe_serialization=True)
    # The reference runs in f32 on the weights as stored (rounded to f16/bf16 when they are).
    ref = saved.float()
    with torch.no_grad():
        out = ref(
            input_ids=torch.tensor(TOKENS),
            attention_mask=torch.tensor(MASK),
            output_hidden_states=True,
        )
    hidden = [h.tolist() for h in out.hidden_states]
    if isinstance(ref, BertModel):
        weights = [
            (l.attention.self.query.weight.T, l.attention.self.key.weight.T, ref.config.num_attention_heads)
            for l in ref.encoder.layer
        ]
    else:
        n = ref.config.n_embd
        weights = [
            (b.attn.c_attn.weight[:, :n], b.attn.c_attn.weight[:, n:2 * n], ref.config.n_head)
            for b in ref.h
        ]
    (d / "expected.json").write_text(
        json.dumps(
            {
                "tokens": TOKENS,
                "mask": MASK,
                "hidden_states": hidden,
                "forms": forms(ref, [(q.detach(), k.detach(), h) for q, k, h in weights]),
                "torch": torch.__version__,
                "transformers": transformers.__version__,
            }
        )
    )
    print(d, [tuple(h.shape) for h in out.hidden_states])


# A real checkpoint: all-MiniLM-L6-v2 (scripts/fetch_pretrained.sh). Its hidden states on two
# sentences tokenized by its own tokenizer: every position's first 8 coordinates and its L2 norm
# at every layer in minilm-expected.json, and every coordinate of every layer in
# minilm-hidden.f32 (little-endian float32, [layer, row, position, coordinate], the shape in the
# JSON's "hidden_shape"). `python3 scripts/pretrained_fixtures.py minilm` writes these two alone.
MINILM = OUT.parent.parent.parent.parent / "data/pretrained/all-MiniLM-L6-v2"
SENTENCES = [
    "The Café in Zürich serves crème brûlée; it's 150 francs!",
    "word2vec learns from which words occur near each other.",
]


def minilm():
    from transformers import BertTokenizerFast

    tok = BertTokenizerFast(tokenizer_file=str(MINILM / "tokenizer.json"))
    enc = tok(SENTENCES, padding=True, return_tensors="pt")
    model = BertModel.from_pretrained(MINILM, add_pooling_layer=False).eval()
    with torch.no_grad():
        out = model(
            input_ids=enc["input_ids"],
            attention_mask=enc["attention_mask"],
            output_hidden_states=True,
        )
    hidden = torch.stack(out.hidden_states).to(torch.float32).contiguous()
    (OUT / "minilm-hidden.f32").write_bytes(hidden.numpy().astype("<f4").tobytes())
    (OUT / "minilm-expected.json").write_text(
        json.dumps(
            {
                "sentences": SENTENCES,
                "tokens": enc["input_ids"].tolist(),
                "mask": enc["attention_mask"].tolist(),
                "first8": [h[:, :, :8].tolist() for h in out.hidden_states],
                "norm": [h.norm(dim=-1).tolist() for h in out.hidden_states],
                "hidden_shape": list(hidden.shape),
                "torch": torch.__version__,
                "transformers": transformers.__version__,
            }
        )
    )
    print("minilm", enc["input_ids"].shape)


def tiny_wordpiece(d):
    """A WordPiece tokenizer.json for the tiny BERT's 60 ids: BERT's specials, the letters, the
    letters as continuations, and three words; BERT's normaliser and pre-tokenizer."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    letters = [chr(c) for c in range(ord("a"), ord("z") + 1)]
    pieces = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + letters + ["##" + l for l in letters]
    pieces += ["the", "cat", "dog"]
    assert len(pieces) == 60
    tok = Tokenizer(models.WordPiece({p: i for i, p in enumerate(pieces)}, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.save(str(d / "tokenizer.json"))


def main():
    # A large initializer_range so attention is far from uniform and every weight matters.
    torch.manual_seed(0)
    bert = BertConfig(
        vocab_size=60,
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=16,
        initializer_range=0.5,
    )
    m = BertModel(bert, add_pooling_layer=True)
    write("tiny-bert", m)
    tiny_wordpiece(OUT / "tiny-bert")
    torch.manual_seed(1)
    write("tiny-bert-f16", BertModel(bert), torch.float16)
    torch.manual_seed(2)
    gpt = GPT2Config(
        vocab_size=60,
        n_embd=16,
        n_layer=2,
        n_head=2,
        n_positions=16,
        initializer_range=0.5,
    )
    write("tiny-gpt2", GPT2Model(gpt))
    torch.manual_seed(3)
    write("tiny-gpt2-bf16", GPT2Model(gpt), torch.bfloat16)
    minilm()


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["minilm"]:
        minilm()
    else:
        main()
