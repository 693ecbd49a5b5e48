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
//!
//! Chance level: the 10% of chosen positions left as they are show a masked LM its own target,
//! so a model that ignores context still beats the unigram by copying it (the study's
//! REPORT.md gives both levels on text8); [`Sequences::context_free_heldout_loss`] is
//! the level a held-out loss is read against, [`context_free_loss`] its closed form.

use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use serde::{Deserialize, Serialize};

use corpus::{Corpus, SpecialTokens};

/// BERT's masking recipe: the share of word positions chosen as targets, and of those the
/// shares turned into `[MASK]` and into a uniformly random word (the rest stay as they are).
pub const MASK_CHOSEN: f32 = 0.15;
pub const MASK_AS_MASK: f32 = 0.8;
pub const MASK_AS_RANDOM: f32 = 0.1;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Objective {
    /// Masked language modelling.
    Mlm,
    /// Causal (next-token) language modelling.
    Clm,
}

/// Of `n` held-out batches, the first `n / 2` are the dev block and the rest the test block
/// (contiguous text: the held-out sequences are in corpus order). Fewer than 2 batches cannot
/// be split: `dev_split` is then refused when the run starts.
pub fn dev_batches(n: usize) -> usize {
    n / 2
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

/// The best model that ignores context, from the training split's word counts (add-one over
/// the words and `[UNK]`, so a word seen only in the held-out split keeps a finite loss).
pub struct ContextFree {
    /// Word ids, then `[UNK]` at index `n_words`.
    counts: Vec<f64>,
    total: f64,
    specials: SpecialTokens,
}

impl ContextFree {
    /// Its probability of `target` at flat position `pos` of `batch`.
    ///
    /// Masked LM: the unigram at `[MASK]`, and elsewhere the posterior of the target given the
    /// visible token, P(T = w | x) ∝ k·p(x)·[w = x] + r·p(w)/V ([`context_free_loss`] has the
    /// derivation and its closed form over the corpus; a visible `[UNK]` was kept, so it is
    /// certain). Causal LM: the unigram, except that the last target of a sequence is always
    /// `[SEP]`, which a model that knows its position predicts with certainty.
    pub fn prob(&self, objective: Objective, batch: &Batch, pos: usize, target: u32) -> f64 {
        let s = self.specials;
        match objective {
            Objective::Clm if target == s.sep => 1.0,
            Objective::Clm => self.unigram(target),
            Objective::Mlm => {
                let x = batch.inputs[pos];
                if x == s.mask {
                    self.unigram(target)
                } else if x == s.unk {
                    1.0
                } else {
                    let a = f64::from(MASK_AS_MASK);
                    let r = f64::from(MASK_AS_RANDOM);
                    let k = 1.0 - a - r;
                    let uniform = 1.0 / (self.counts.len() - 1) as f64;
                    let p = |id| self.unigram(id);
                    let copy = if x == target { k * p(x) } else { 0.0 };
                    (copy + r * p(target) * uniform) / (k * p(x) + r * uniform)
                }
            }
        }
    }

    /// The unigram probability of a word or `[UNK]`.
    pub fn unigram(&self, id: u32) -> f64 {
        let v = self.counts.len() - 1;
        let i = if id == self.specials.unk {
            v
        } else {
            id as usize
        };
        self.counts[i] / self.total
    }
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

    /// The training split's words as corpus positions: sequence `i` holds the corpus ids
    /// `i * (seq_len - 2)..(i + 1) * (seq_len - 2)` between its `[CLS]` and `[SEP]`, the training
    /// split's sequences first (a tail shorter than one sequence is in neither split). What a
    /// model trained outside these sequences (word2vec) reads to see the same training text.
    pub fn train_tokens(&self) -> std::ops::Range<usize> {
        0..self.n_train() * (self.seq_len - 2)
    }

    /// Held-out sequences `rows` (in held-out order, as [`Sequences::heldout_batch`] numbers
    /// them) as corpus positions ([`Sequences::train_tokens`]).
    pub fn heldout_tokens(&self, rows: std::ops::Range<usize>) -> std::ops::Range<usize> {
        assert!(
            rows.end <= self.n_heldout(),
            "held-out rows {rows:?} of {}",
            self.n_heldout()
        );
        let (words, first) = (self.seq_len - 2, self.n_train());
        (first + rows.start) * words..(first + rows.end) * words
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

    /// The held-out loss of the best model that ignores context, on exactly the targets
    /// [`crate::training::heldout_loss`] scores (the same `n_batches` held-out batches of
    /// `batch` sequences, the same masking, the mean over targets): the chance level of that
    /// measure. That model, and what it predicts where, is [`ContextFree`].
    pub fn context_free_heldout_loss(
        &self,
        objective: Objective,
        batch: usize,
        n_batches: Option<usize>,
    ) -> f64 {
        let model = self.context_free();
        let n = n_batches.unwrap_or_else(|| self.n_heldout_batches(batch));
        let (mut loss, mut targets) = (0.0f64, 0usize);
        for i in 0..n {
            let b = self.heldout_batch(objective, batch, i);
            for &(pos, target) in &b.targets {
                loss -= model.prob(objective, &b, pos, target).ln();
                targets += 1;
            }
        }
        loss / targets.max(1) as f64
    }

    /// [`Sequences::context_free_heldout_loss`] on the whole block and, split as a run with
    /// `dev_split` splits it ([`dev_batches`]), on its dev and test halves:
    /// `[whole, dev, test]`, the chance levels of a curve's `heldout`, `dev` and `test` rows.
    pub fn context_free_heldout_losses(
        &self,
        objective: Objective,
        batch: usize,
        n_batches: Option<usize>,
    ) -> [f64; 3] {
        let model = self.context_free();
        let n = n_batches.unwrap_or_else(|| self.n_heldout_batches(batch));
        let n_dev = dev_batches(n);
        let mut sums = [(0.0f64, 0usize); 3];
        for i in 0..n {
            let b = self.heldout_batch(objective, batch, i);
            for &(pos, target) in &b.targets {
                let l = -model.prob(objective, &b, pos, target).ln();
                for k in [0, if i < n_dev { 1 } else { 2 }] {
                    sums[k].0 += l;
                    sums[k].1 += 1;
                }
            }
        }
        sums.map(|(l, t)| l / t.max(1) as f64)
    }

    /// The best model that ignores context ([`Sequences::context_free_heldout_loss`]), to score
    /// targets one by one.
    pub fn context_free(&self) -> ContextFree {
        let v = self.n_words as usize;
        // Word ids, then [UNK] at index v.
        let mut counts = vec![1.0f64; v + 1];
        for &id in &self.train {
            if (id as usize) < v {
                counts[id as usize] += 1.0;
            } else if id == self.specials.unk {
                counts[v] += 1.0;
            }
        }
        let total = counts.iter().sum();
        ContextFree {
            counts,
            total,
            specials: self.specials,
        }
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
            if *id == s.cls || *id == s.sep || *id == s.pad || rng.random::<f32>() >= MASK_CHOSEN {
                continue;
            }
            targets.push((pos, *id));
            let r: f32 = rng.random();
            if r < MASK_AS_MASK {
                *id = s.mask;
            } else if r < MASK_AS_MASK + MASK_AS_RANDOM {
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
/// counted as `[UNK]`: the loss of a model that sees neither the context nor its own input
/// token. For a causal LM, whose input at a position *is* context, that is the context-free
/// loss over word targets; a masked LM can do better without context ([`context_free_loss`]).
pub fn unigram_entropy(corpus: &Corpus) -> f64 {
    let (probs, _) = unigram(corpus);
    probs
        .iter()
        .filter(|&&p| p > 0.0)
        .map(|&p| -p * p.ln())
        .sum()
}

/// Unigram probabilities of the words (ids `0..vocab.len()`) followed by `[UNK]`'s, and the
/// number of words.
fn unigram(corpus: &Corpus) -> (Vec<f64>, usize) {
    let total = corpus.encoded.n_tokens() as f64;
    let words = corpus.vocab.counts();
    let probs = words
        .iter()
        .map(|&c| c as f64)
        .chain(std::iter::once(corpus.encoded.n_oov() as f64))
        .map(|c| c / total)
        .collect();
    (probs, words.len())
}

/// The lowest held-out loss (nats) a model of `objective` can reach without using context:
/// the chance level a trained model's loss must be read against.
///
/// Causal LM: the unigram entropy H (over word targets: the held-out loss also scores each
/// sequence's last target, always `[SEP]`, which [`Sequences::context_free_heldout_loss`]
/// counts). Masked LM: lower, because a chosen position that was
/// *not* replaced by `[MASK]` shows its own token, the original one with probability
/// keep / (keep + random). The best context-free masked LM predicts the unigram at `[MASK]`
/// and the posterior of the target given the visible token elsewhere:
///
///   L = a·H + (1 − a)·H(T | X),  H(T | X) = Σ_x m(x) H(T | X = x)
///
/// with a the `[MASK]` share, k and r the keep and random shares (k + r = 1 − a), p the target
/// unigram over the V words and `[UNK]`, and the random word uniform over the V words. For a
/// word x, P(X = x, T = w) ∝ k·p(x)·[w = x] + r·p(w)/V, so with D = k·p(x) + r/V:
/// m(x) = D/(k + r), P(T = x | x) = p(x)(k + r/V)/D and P(T = w | x) = (r/V)/D · p(w) for
/// w ≠ x, whose entropy sum has the closed form used below (O(V), not O(V²)). A visible
/// `[UNK]` is never a random replacement, so it is certain (entropy 0). On text8 with
/// min_count 5 this is 6.308 nats against H = 6.935: a masked LM that only learns to copy its
/// visible input sits 0.63 nats below the unigram entropy without using any context.
pub fn context_free_loss(corpus: &Corpus, objective: Objective) -> f64 {
    let (probs, n_words) = unigram(corpus);
    let h = unigram_entropy(corpus);
    match objective {
        Objective::Clm => h,
        Objective::Mlm => masked_context_free_loss(&probs[..n_words], h),
    }
}

/// [`context_free_loss`] of a masked LM from the word probabilities and H (which counts `[UNK]`).
fn masked_context_free_loss(words: &[f64], h: f64) -> f64 {
    let a = f64::from(MASK_AS_MASK);
    let r = f64::from(MASK_AS_RANDOM);
    let k = 1.0 - a - r;
    let v = words.len() as f64;
    let plogp = |p: f64| if p > 0.0 { p * p.ln() } else { 0.0 };
    let conditional: f64 = words
        .iter()
        .map(|&px| {
            let d = k * px + r / v;
            let own = px * (k + r / v) / d;
            // P(T = w | x) = rest·p(w) for w ≠ x, so Σ_{w≠x} −rest·p·ln(rest·p) is
            // rest·(Σ_{w≠x} −p·ln p − (1 − p(x))·ln rest) = rest·(H + p(x)·ln p(x) − (1 − p(x))·ln rest).
            let rest = (r / v) / d;
            let others = if rest > 0.0 {
                rest * (h + plogp(px) - (1.0 - px) * rest.ln())
            } else {
                0.0
            };
            d / (k + r) * (others - plogp(own))
        })
        .sum();
    a * h + (1.0 - a) * conditional
}

#[cfg(test)]
mod tests {
    use super::*;
    use corpus::{CorpusConfig, Preset};
    use std::path::Path;

    fn corpus(text: &str) -> Corpus {
        corpus_with_min_count(text, 1)
    }

    fn corpus_with_min_count(text: &str, min_count: u64) -> Corpus {
        let cfg = CorpusConfig {
            path: "m".into(),
            preset: Preset::Text8,
            lowercase: false,
            drop_punctuation: false,
            min_count,
            max_size: None,
            chunk_len: 1000,
            fraction: None,
        };
        Corpus::from_text(text, Path::new("m"), &cfg).unwrap()
    }

    #[test]
    fn token_ranges_are_the_words_between_each_sequences_markers() {
        // 1,003 words in sequences of 10 words: 100 sequences (3 words left over), 10 held out.
        let text: String = (0..1003).map(|i| format!("w{} ", i % 97)).collect();
        let c = corpus(&text);
        let s = Sequences::new(&c, 12, 0.1).unwrap();
        assert_eq!((s.n_train(), s.n_heldout()), (90, 10));
        assert_eq!(s.train_tokens(), 0..900);
        assert_eq!(s.heldout_tokens(0..5), 900..950);
        assert_eq!(s.heldout_tokens(5..10), 950..1000);
        let inner = |split: &[u32], i: usize| split[i * 12 + 1..(i + 1) * 12 - 1].to_vec();
        for i in [0, 45, 89] {
            assert_eq!(inner(&s.train, i), c.encoded.ids[i * 10..(i + 1) * 10]);
        }
        let held = s.heldout_tokens(3..4);
        assert_eq!(inner(&s.heldout, 3), c.encoded.ids[held]);
    }

    #[test]
    #[should_panic(expected = "held-out rows 9..11 of 10")]
    fn heldout_tokens_refuse_rows_past_the_split() {
        let text: String = (0..1003).map(|i| format!("w{} ", i % 97)).collect();
        let s = Sequences::new(&corpus(&text), 12, 0.1).unwrap();
        let _ = s.heldout_tokens(9..11);
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
    fn context_free_loss_of_a_uniform_corpus_by_hand() {
        // V = 4 words, p = 1/4, keep = random = 0.1. A visible x is the target with probability
        // 0.25·0.125/0.05 = 0.625, each other word with 0.125, so H(T | X) =
        // −0.625 ln 0.625 − 3·0.125 ln 0.125 = 1.073543 and L = 0.8 ln 4 + 0.2·1.073543.
        let c = corpus("a b c d a b c d");
        assert!((context_free_loss(&c, Objective::Clm) - 4f64.ln()).abs() < 1e-12);
        let want = 0.8 * 4f64.ln() + 0.2 * (-0.625 * 0.625f64.ln() - 0.375 * 0.125f64.ln());
        assert!((want - 1.323744).abs() < 1e-6);
        // The shares are f32 constants: 0.8f32 is 0.800000012.
        assert!((context_free_loss(&c, Objective::Mlm) - want).abs() < 1e-6);
    }

    /// `blocks` periods of 16 tokens: a×8, b×4, c×2, d, and a word seen once (`[UNK]` at
    /// min_count 2): a skewed unigram with out-of-vocabulary words.
    fn skewed_corpus(blocks: usize) -> Corpus {
        let text: String = (0..blocks)
            .map(|i| format!("a a a a a a a a b b b b c c d u{i} "))
            .collect();
        corpus_with_min_count(&text, 2)
    }

    /// The empirical conditional entropy of the target given the visible input over many real
    /// masked batches, on a skewed corpus with `[UNK]`s, agrees with the closed form: the
    /// formula describes the masking the batches actually do.
    #[test]
    fn context_free_loss_agrees_with_the_masking_of_real_batches() {
        let c = skewed_corpus(3000);
        assert_eq!(c.vocab.len(), 4);
        let s = Sequences::new(&c, 66, 0.01).unwrap();
        let mut joint = std::collections::HashMap::<(u32, u32), f64>::new();
        let mut n = 0.0;
        for step in 0..300 {
            let b = s.train_batch(Objective::Mlm, 32, step, 11);
            for &(pos, target) in &b.targets {
                *joint.entry((b.inputs[pos], target)).or_default() += 1.0;
                n += 1.0;
            }
        }
        let mut input = std::collections::HashMap::<u32, f64>::new();
        for (&(x, _), &k) in &joint {
            *input.entry(x).or_default() += k;
        }
        let empirical: f64 = joint
            .iter()
            .map(|(&(x, _), &k)| -k / n * (k / input[&x]).ln())
            .sum();
        let h = unigram_entropy(&c);
        let floor = context_free_loss(&c, Objective::Mlm);
        // About 92k targets: the plug-in estimate's standard error is near 0.003 nats.
        assert!(n > 80_000.0, "{n}");
        assert!((empirical - floor).abs() < 0.015, "{empirical} vs {floor}");
        // Copying the visible token is worth 0.067 nats here, over four times the tolerance.
        assert!(h - floor > 0.06, "{h} vs {floor}");
    }

    /// On the held-out split of a periodic corpus, whose counts are the corpus's, the level
    /// measured on the real held-out batches agrees with the closed form; a causal LM's level
    /// is the unigram's less what the always-[SEP] last target gives away.
    #[test]
    fn context_free_heldout_loss_agrees_with_the_closed_form() {
        let c = skewed_corpus(6000);
        let s = Sequences::new(&c, 66, 0.5).unwrap();
        let mlm = s.context_free_heldout_loss(Objective::Mlm, 32, None);
        let closed = context_free_loss(&c, Objective::Mlm);
        // About 750 held-out sequences, 7k masked targets: standard error near 0.01.
        assert!((mlm - closed).abs() < 0.04, "{mlm} vs {closed}");
        // Causal LM: 63 targets a sequence, the last one [SEP] at no cost. The words' unigram
        // here is exact (every sequence holds four whole periods), up to the add-one counts.
        let clm = s.context_free_heldout_loss(Objective::Clm, 32, None);
        let h = unigram_entropy(&c);
        assert!(
            (clm - h * 62.0 / 63.0).abs() < 1e-3,
            "{clm} vs {}",
            h * 62.0 / 63.0
        );
        // A handful of batches is a different measure, and the function follows it.
        let [whole, dev, test] = s.context_free_heldout_losses(Objective::Mlm, 32, None);
        assert!((whole - mlm).abs() < 1e-12, "{whole} vs {mlm}");
        assert!(dev.is_finite() && test.is_finite() && dev != test);
        let few = s.context_free_heldout_loss(Objective::Mlm, 32, Some(2));
        assert!(few.is_finite() && few != mlm);
    }

    #[test]
    fn unigram_entropy_of_a_uniform_corpus() {
        let c = corpus("a b c d a b c d");
        assert!((unigram_entropy(&c) - 4f64.ln()).abs() < 1e-12);
    }
}
