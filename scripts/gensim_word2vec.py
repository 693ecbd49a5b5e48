#!/usr/bin/env python3
"""gensim's side of the word2vec benchmark: the same corpus file and settings as
experiments/configs/word2vec.toml, one model per process, the same CSV columns as
`experiments --exp bench-word2vec`. Speed counts raw corpus words over the training call's CPU
time (user + sys of the whole process, all threads), as ours does."""
import argparse, csv, resource, time, tomllib

from gensim.models import Word2Vec
from gensim.models.word2vec import Text8Corpus, LineSentence

p = argparse.ArgumentParser()
p.add_argument("--config", default="experiments/configs/word2vec.toml")
p.add_argument("--model", choices=["sgns", "cbow"], required=True)
p.add_argument("--threads", type=int, required=True)
p.add_argument("--seed", type=int, help="overrides the config's seed")
p.add_argument("--out", required=True)
p.add_argument("--analogy", default="data/analogy/questions-words.txt.gz")
p.add_argument("--similarity-dir", default="data/similarity")
a = p.parse_args()

cfg = tomllib.load(open(a.config, "rb"))
m = cfg[a.model]
if a.seed is not None:
    m["seed"] = a.seed
corpus_path = cfg["corpus"]["path"]
sentences = Text8Corpus(corpus_path) if cfg["corpus"].get("preset", "text8") == "text8" else LineSentence(corpus_path)
alpha = m.get("alpha", 0.025 if m["architecture"] == "sg" else 0.05)
model = Word2Vec(vector_size=m["dim"], window=m["window"], negative=m["negative"], hs=0, sample=m["sample"],
                 alpha=alpha, min_alpha=m["min_alpha"], min_count=cfg["corpus"]["min_count"],
                 sg=1 if m["architecture"] == "sg" else 0, cbow_mean=1, workers=a.threads, seed=m["seed"])
model.build_vocab(sentences)
cpu0, wall0 = time.process_time(), time.perf_counter()
model.train(sentences, total_examples=model.corpus_count, epochs=m["epochs"])
cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
raw = model.corpus_total_words * m["epochs"]
rv = cfg.get("eval", {}).get("restrict_vocab", 30000)
acc, _ = model.wv.evaluate_word_analogies(a.analogy, restrict_vocab=rv, case_insensitive=True)
def spearman(name):
    return model.wv.evaluate_word_pairs(f"{a.similarity_dir}/{name}", restrict_vocab=rv, case_insensitive=True)[1][0]
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
v, d = len(model.wv), m["dim"]
row = dict(implementation="gensim", model=a.model, seed=m["seed"], threads=a.threads, private_rows=0, private_input_rows=0, epochs=m["epochs"], dim=d, raw_words=raw,
           wall_s=wall, cpu_s=cpu, raw_words_per_cpu_s=raw / cpu, raw_words_per_s=raw / wall, peak_rss_mib=peak,
           rss_budget_mib=2 * (2 * v * d * 4 + model.corpus_total_words * 4) / 2**20, analogy_3cosadd=acc,
           ws353_all_spearman=spearman("EN-WS-353-ALL.txt"), simlex999_spearman=spearman("EN-SIMLEX-999.txt"))
with open(a.out, "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(row))
    w.writeheader()
    w.writerow(row)
print(f"gensim {a.model} t{a.threads}: {row['raw_words_per_cpu_s']:.0f} raw words per CPU-second, analogy {acc:.4f}")
