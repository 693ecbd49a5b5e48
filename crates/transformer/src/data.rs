//! Training data: fixed-length sequences `[CLS] w_1 … w_{L-2} [SEP]` cut in order from the
//! encoded corpus (words below `min_count` are already `[UNK]`), the last `heldout_fraction` of
//! them held out, and batches that are a pure function of (seed, step): the training order is a
//! seeded permutation per epoch and the masking of a batch is seeded by its step, so a run
//! resumed at step k sees exactly the batches it would have seen.
//!
//! Masked LM (Devlin et al. 2019): 15% of the word positions are chosen; of those 80% become
//! `[MASK]`, 10% a random word, 10% stay; the loss is on the chosen positions only.
//! Causal LM: every position predicts the next token, or, with a target fraction ("matched
//! targets"), a random fraction of positions per training batch: at 0.15 a causal LM makes about
//! as many predictions per step as a masked LM (9.45 against 9.3 per 64-token sequence) at about
//! the same cost, so the direction of context is the only difference between the objectives.
//! Held-out batches always score every position.

use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use serde::{Deserialize, Serialize};

use corpus::{Corpus, SpecialTokens};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Objective {
    /// Masked language modelling.
    Mlm,
    /// Causal (next-token) language modelling.
    Clm,
}

#[derive(Clone)]
pub struct Sequences {
    /// `seq_len` ids per sequence, row-major.
    pub train: Vec<u32>,
    pub heldout: Vec<u32>,
    pub seq_len: usize,
    pub specials: SpecialTokens,
    /// Number of word ids (ids below this are words).
    pub n_words: u32,
}

/// One batch, as flat row-major ids `[batch, seq_len]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Batch {
    pub batch: usize,
    pub seq_len: usize,
    pub inputs: Vec<u32>,
    /// (flat position, target id) of every position the loss is computed on.
    pub targets: Vec<(usize, u32)>,
}

impl Sequences {
    pub fn new(
        corpus: &Corpus,
        seq_len: usize,
        heldout_fraction: f64,
    ) -> Result<Sequences, String> {
        if seq_len < 3 {
            return Err(format!(
                "seq_len must be at least 3 ([CLS], a word, [SEP]), got {seq_len}"
            ));
        }
        if !(0.0..1.0).contains(&heldout_fraction) {
            return Err(format!(
                "heldout_fraction must be in [0, 1), got {heldout_fraction}"
            ));
        }
        let specials = corpus.vocab.specials();
        let words = seq_len - 2;
        let n = corpus.encoded.ids.len() / words;
        let n_heldout = ((n as f64 * heldout_fraction).round() as usize)
            .max(usize::from(heldout_fraction > 0.0));
        if n < n_heldout + 1 {
            return Err(format!("the corpus gives {n} sequences of {seq_len} tokens: too few for a training and a held-out split"));
        }
        let mut all = Vec::with_capacity(n * seq_len);
        for chunk in corpus.encoded.ids.chunks_exact(words) {
            all.push(specials.cls);
            all.extend_from_slice(chunk);
            all.push(specials.sep);
        }
        let heldout = all.split_off((n - n_heldout) * seq_len);
        Ok(Sequences {
            train: all,
            heldout,
            seq_len,
            specials,
            n_words: corpus.vocab.len() as u32,
        })
    }

    /// Log-probability of every token id (`vocab_size` of them) in the training split, with
    /// add-one smoothing so that ids never seen (the special tokens) get a finite value.
    pub fn unigram_log_probs(&self, vocab_size: usize) -> Vec<f32> {
        let mut counts = vec![1.0f64; vocab_size];
        for &id in &self.train {
            counts[id as usize] += 1.0;
        }
        let total: f64 = counts.iter().sum();
        counts.iter().map(|c| (c / total).ln() as f32).collect()
    }

    pub fn n_train(&self) -> usize {
        self.train.len() / self.seq_len
    }
    pub fn n_heldout(&self) -> usize {
        self.heldout.len() / self.seq_len
    }
    pub fn steps_per_epoch(&self, batch: usize) -> usize {
        (self.n_train() / batch).max(1)
    }

    /// The training batch of `step`: epoch `step / steps_per_epoch` visits the sequences in a
    /// permutation seeded by (seed, epoch).
    pub fn train_batch(&self, objective: Objective, batch: usize, step: usize, seed: u64) -> Batch {
        self.train_batch_sampled(objective, batch, step, seed, None)
    }

    /// [`Sequences::train_batch`], a causal LM keeping each next-token target with probability
    /// `clm_fraction` (seeded by the step, like the masking; at least one target per batch).
    /// `None`, or a masked LM: every target of the objective.
    pub fn train_batch_sampled(
        &self,
        objective: Objective,
        batch: usize,
        step: usize,
        seed: u64,
        clm_fraction: Option<f64>,
    ) -> Batch {
        let per_epoch = self.steps_per_epoch(batch);
        let (epoch, k) = (step / per_epoch, step % per_epoch);
        let mut order: Vec<usize> = (0..self.n_train()).collect();
        order.shuffle(&mut rand::rngs::StdRng::seed_from_u64(
            seed ^ (epoch as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        ));
        let rows: Vec<usize> = (0..batch)
            .map(|i| order[(k * batch + i) % order.len()])
            .collect();
        let mask_seed = seed.wrapping_add(1).wrapping_mul(step as u64 + 1);
        let mut b = self.make(&self.train, &rows, objective, mask_seed);
        if let (Objective::Clm, Some(p)) = (objective, clm_fraction) {
            // Another stream than the masking's, so MLM and CLM runs of a seed stay independent.
            let mut rng = rand::rngs::StdRng::seed_from_u64(mask_seed ^ 0xC1A5_5EED);
            let first = b.targets[0];
            b.targets.retain(|_| rng.random::<f64>() < p);
            if b.targets.is_empty() {
                b.targets.push(first);
            }
        }
        b
    }

    /// Held-out batch `i` (sequences in order); the masking is fixed by `i` alone, so every
    /// evaluation scores the same positions. Batches `0..n_heldout_batches(batch)` cover every
    /// held-out sequence once (the last may be smaller); past them, rows wrap around.
    pub fn heldout_batch(&self, objective: Objective, batch: usize, i: usize) -> Batch {
        let n = self.n_heldout();
        let rows: Vec<usize> = if i * batch < n {
            (i * batch..((i + 1) * batch).min(n)).collect()
        } else {
            (0..batch).map(|j| (i * batch + j) % n).collect()
        };
        self.make(&self.heldout, &rows, objective, 0xE7A1 + i as u64)
    }

    /// Batches of `batch` sequences that cover the held-out split.
    pub fn n_heldout_batches(&self, batch: usize) -> usize {
        self.n_heldout().div_ceil(batch.max(1))
    }

    fn make(&self, source: &[u32], rows: &[usize], objective: Objective, mask_seed: u64) -> Batch {
        let t = self.seq_len;
        let mut inputs = Vec::with_capacity(rows.len() * t);
        for &r in rows {
            inputs.extend_from_slice(&source[r * t..(r + 1) * t]);
        }
        let targets = match objective {
            Objective::Mlm => self.mask(&mut inputs, mask_seed),
            Objective::Clm => (0..rows.len())
                .flat_map(|b| (0..t - 1).map(move |i| (b * t + i, b * t + i + 1)))
                .map(|(pos, next)| (pos, inputs[next]))
                .collect(),
        };
        Batch {
            batch: rows.len(),
            seq_len: t,
            inputs,
            targets,
        }
    }

    /// BERT's masking, in place; returns the chosen positions with their original ids.
    fn mask(&self, inputs: &mut [u32], seed: u64) -> Vec<(usize, u32)> {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let s = self.specials;
        let mut targets = Vec::new();
        for (pos, id) in inputs.iter_mut().enumerate() {
            if *id == s.cls || *id == s.sep || *id == s.pad || rng.random::<f32>() >= 0.15 {
                continue;
            }
            targets.push((pos, *id));
            let r: f32 = rng.random();
            if r < 0.8 {
                *id = s.mask;
            } else if r < 0.9 {
                *id = rng.random_range(0..self.n_words);
            }
        }
        if targets.is_empty() {
            // Never a batch without a loss: mask the first word position.
            targets.push((1, inputs[1]));
            inputs[1] = s.mask;
        }
        targets
    }
}

/// Entropy (nats) of the corpus's unigram distribution over token ids, out-of-vocabulary words
/// counted as `[UNK]`: the loss of a model that ignores context, the baseline training must beat.
pub fn unigram_entropy(corpus: &Corpus) -> f64 {
    let total = corpus.encoded.n_tokens() as f64;
    let oov = corpus.encoded.n_oov() as f64;
    corpus
        .vocab
        .counts()
        .iter()
        .map(|&c| c as f64)
        .chain(std::iter::once(oov))
        .filter(|&c| c > 0.0)
        .map(|c| {
            let p = c / total;
            -p * p.ln()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use corpus::{CorpusConfig, Preset};
    use std::path::Path;

    fn corpus(text: &str) -> Corpus {
        let cfg = CorpusConfig {
            path: "m".into(),
            preset: Preset::Text8,
            lowercase: false,
            min_count: 1,
            max_size: None,
            chunk_len: 1000,
        };
        Corpus::from_text(text, Path::new("m"), &cfg).unwrap()
    }

    #[test]
    fn matched_targets_keep_a_seeded_fraction_of_causal_positions() {
        let text: String = (0..4000).map(|i| format!("w{} ", i % 50)).collect();
        let c = corpus(&text);
        let s = Sequences::new(&c, 64, 0.1).unwrap();
        let full = s.train_batch(Objective::Clm, 32, 3, 7);
        assert_eq!(full.targets.len(), 32 * 63);
        let part = s.train_batch_sampled(Objective::Clm, 32, 3, 7, Some(0.15));
        // Binomial(2016, 0.15): mean 302.4, sd 16.
        assert!(
            (250..355).contains(&part.targets.len()),
            "{}",
            part.targets.len()
        );
        // The same inputs, a subset of the same targets, and the same draw again.
        assert_eq!(part.inputs, full.inputs);
        assert!(part.targets.iter().all(|t| full.targets.contains(t)));
        assert_eq!(
            part,
            s.train_batch_sampled(Objective::Clm, 32, 3, 7, Some(0.15))
        );
        assert_ne!(
            part,
            s.train_batch_sampled(Objective::Clm, 32, 4, 7, Some(0.15))
        );
        // A masked LM ignores the fraction; a tiny fraction still leaves one target.
        assert_eq!(
            s.train_batch_sampled(Objective::Mlm, 32, 3, 7, Some(0.15)),
            s.train_batch(Objective::Mlm, 32, 3, 7)
        );
        assert_eq!(
            s.train_batch_sampled(Objective::Clm, 1, 0, 7, Some(1e-9))
                .targets
                .len(),
            1
        );
    }

    #[test]
    fn sequences_are_framed_and_split() {
        let c = corpus("a b c d e f g h i j k l");
        let s = Sequences::new(&c, 5, 0.25).unwrap();
        let sp = c.vocab.specials();
        assert_eq!((s.n_train(), s.n_heldout()), (3, 1));
        assert_eq!(&s.train[..5], &[sp.cls, 0, 1, 2, sp.sep]);
        assert_eq!(&s.heldout[..], &[sp.cls, 9, 10, 11, sp.sep]);
        assert!(Sequences::new(&c, 2, 0.1).is_err());
    }

    #[test]
    fn masking_follows_bert_and_is_reproducible() {
        let text: String = (0..20_000).map(|i| format!("w{} ", i % 50)).collect();
        let c = corpus(&text);
        let s = Sequences::new(&c, 66, 0.01).unwrap();
        let a = s.train_batch(Objective::Mlm, 32, 7, 3);
        assert_eq!(
            a,
            s.train_batch(Objective::Mlm, 32, 7, 3),
            "same step, same batch"
        );
        assert_ne!(a, s.train_batch(Objective::Mlm, 32, 8, 3));
        let sp = c.vocab.specials();
        let words = (32 * 64) as f64;
        let chosen = a.targets.len() as f64;
        assert!((chosen / words - 0.15).abs() < 0.03, "{chosen}");
        let masked = a
            .targets
            .iter()
            .filter(|(p, _)| a.inputs[*p] == sp.mask)
            .count() as f64;
        assert!((masked / chosen - 0.8).abs() < 0.06, "{}", masked / chosen);
        for &(p, orig) in &a.targets {
            assert!(orig < sp.pad, "targets are words");
            assert!(p % 66 != 0 && p % 66 != 65, "never [CLS]/[SEP]");
        }
        // Unchosen positions are untouched: every non-target input equals the source sequence.
        let untouched = (0..a.inputs.len())
            .filter(|p| !a.targets.iter().any(|t| t.0 == *p))
            .all(|p| a.inputs[p] != sp.mask);
        assert!(untouched);
    }

    #[test]
    fn causal_targets_are_the_next_token() {
        let c = corpus("a b c d e f g h i j k l");
        let s = Sequences::new(&c, 5, 0.25).unwrap();
        let b = s.heldout_batch(Objective::Clm, 1, 0);
        assert_eq!(
            b.targets,
            vec![(0, 9), (1, 10), (2, 11), (3, c.vocab.specials().sep)]
        );
    }

    #[test]
    fn unigram_log_probs_are_add_one_smoothed_training_counts() {
        let c = corpus("a b a c a b a c");
        let s = Sequences::new(&c, 4, 0.25).unwrap();
        // Training split: [CLS] a b [SEP] [CLS] a c [SEP] [CLS] a b [SEP] (a=0, b=1, c=2).
        let v = c.vocab.len_with_specials();
        let lp = s.unigram_log_probs(v);
        let total = 12.0 + v as f64;
        let expect = |n: f64| ((n + 1.0) / total).ln() as f32;
        assert_eq!(lp.len(), v);
        assert!((lp[0] - expect(3.0)).abs() < 1e-6);
        assert!((lp[1] - expect(2.0)).abs() < 1e-6);
        assert!((lp[2] - expect(1.0)).abs() < 1e-6);
        assert!((lp[c.vocab.specials().cls as usize] - expect(3.0)).abs() < 1e-6);
        assert!((lp[c.vocab.specials().mask as usize] - expect(0.0)).abs() < 1e-6);
    }

    #[test]
    fn unigram_entropy_of_a_uniform_corpus() {
        let c = corpus("a b c d a b c d");
        assert!((unigram_entropy(&c) - 4f64.ln()).abs() < 1e-12);
    }
}
