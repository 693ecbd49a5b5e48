//! word2vec's own objective on text it did not train on: the criterion a learning rate is chosen
//! by, as a transformer's is chosen by its held-out loss.
//!
//! The training loss of one example is [`crate::sgd`]'s
//!
//! ```text
//! ℓ(h, t, n_1..n_k) = -log σ(u_t·h) - Σ_i log σ(-u_{n_i}·h)
//! ```
//!
//! (skip-gram: `h = v_c` for one context word `c` of the target `t`; CBOW: `h` the mean of the
//! window's `v_c`). Training draws three things at random: which words subsampling keeps, each
//! position's reduced window `b` (uniform in `1..=window`) and the noise words. Here the
//! subsampling and the noise words are drawn once from a seed ([`Heldout::new`]), so every model
//! is scored on the same examples, and the reduced window is averaged out exactly:
//!
//! ```text
//! skip-gram: loss = Σ_p Σ_{0<|d|≤W} w_|d| ℓ(v_{s[p+d]}, s[p], N_p) / Σ_p Σ_{0<|d|≤W} w_|d|,
//!            w_d = P(b ≥ d) = (W - d + 1) / W
//! CBOW:      loss = Σ_p Σ_{b=1..W} ℓ(mean_{0<|d|≤b} v_{s[p+d]}, s[p], N_p) / (number of terms)
//! ```
//!
//! over the kept sequence `s` (out-of-vocabulary words dropped, as in training), each position's
//! `k` noise words `N_p` drawn once from the unigram^0.75 table (a draw equal to the target is
//! skipped, as word2vec.c does), positions with no context in reach left out. σ is exact here
//! (training's table saturates beyond ±6), in f64.
//!
//! **The chance level** ([`Heldout::context_free_loss`]): the best scorer that ignores the input,
//! one score `s_w` per word. An example's target is `w` with probability `p_w` (the training
//! split's kept share: count plus one × keep probability, normalised; the one so that a word of
//! the vocabulary that the training split never has, which held-out text can, gets a finite
//! score, as the transformers' unigram is smoothed) and each of its `k` draws is `w`
//! with probability `q_w` (the noise table's) unless `w` is the target, so the loss is least at
//! `σ(s_w) = p_w / (p_w + k q_w (1 - p_w))`. That scorer, scored on the same held-out examples,
//! is the level a model below it has learned something from context.

use corpus::subsample;

use crate::config::{Architecture, Word2VecConfig};
use crate::rng::SplitMix64;
use crate::sampling::AliasTable;
use crate::WordVectors;

/// The held-out examples of one text, drawn once: score any number of models on them.
pub struct Heldout {
    architecture: Architecture,
    window: usize,
    /// The kept words, in order.
    kept: Vec<u32>,
    /// Position `p`'s noise words: `noise[noise_at[p]..noise_at[p + 1]]`.
    noise: Vec<u32>,
    noise_at: Vec<usize>,
    /// The context-free scorer's `s_w`, one per vocabulary word.
    context_free: Vec<f64>,
}

/// `log σ(x)`, exact and stable for any finite `x`.
fn log_sigmoid(x: f64) -> f64 {
    -((-x).max(0.0) + (-x.abs()).exp().ln_1p())
}

impl Heldout {
    /// The held-out text `ids` (one run of word ids; windows do not reach outside it), with the
    /// vocabulary's `counts` (what subsampling and the noise table are built from in training),
    /// `train_counts` (each word's count in the text the model was trained on: the context-free
    /// level's unigram), `config`'s architecture, window, noise-word count and subsampling
    /// threshold, and `seed` for the draws. Refused where fewer than two words are kept (no
    /// example: every loss would be 0/0).
    pub fn new(
        ids: &[u32],
        counts: &[u64],
        train_counts: &[u64],
        config: &Word2VecConfig,
        seed: u64,
    ) -> Result<Heldout, String> {
        assert_eq!(
            counts.len(),
            train_counts.len(),
            "one training count per vocabulary word"
        );
        let v = counts.len() as u32;
        let keep = subsample::keep_probabilities_from_counts(counts, config.sample);
        let table = AliasTable::unigram(counts, 0.75);
        let mut rng = SplitMix64::new(seed);
        let kept: Vec<u32> = ids
            .iter()
            .copied()
            .filter(|&w| w < v && keep[w as usize] >= rng.next_f32())
            .collect();
        if kept.len() < 2 {
            return Err(format!(
                "the held-out text gives no example: {} of its {} words kept (out-of-vocabulary words and subsampling dropped), at least 2 needed",
                kept.len(),
                ids.len()
            ));
        }
        let (mut noise, mut noise_at) = (Vec::new(), vec![0]);
        for &t in &kept {
            for _ in 0..config.negative {
                let n = table.sample(&mut rng);
                if n != t {
                    noise.push(n);
                }
            }
            noise_at.push(noise.len());
        }

        let kept_mass: Vec<f64> = train_counts
            .iter()
            .zip(&keep)
            .map(|(&c, &k)| (c + 1) as f64 * f64::from(k))
            .collect();
        let total_kept: f64 = kept_mass.iter().sum();
        let powered: Vec<f64> = counts.iter().map(|&c| (c as f64).powf(0.75)).collect();
        let total_powered: f64 = powered.iter().sum();
        let k = config.negative as f64;
        let context_free = kept_mass
            .iter()
            .zip(&powered)
            .map(|(&m, &q)| {
                let (p, q) = (m / total_kept, q / total_powered);
                // σ(s) = p / (p + k q (1 - p)), so s = ln(p / (k q (1 - p))).
                (p / (k * q * (1.0 - p))).ln()
            })
            .collect();
        Ok(Heldout {
            architecture: config.architecture,
            window: config.window,
            kept,
            noise,
            noise_at,
            context_free,
        })
    }

    /// The number of held-out words kept (out-of-vocabulary words and subsampling dropped).
    pub fn kept_words(&self) -> usize {
        self.kept.len()
    }

    /// The model's mean held-out loss: `input` holds the `v_c` rows, `output` the `u_w` rows
    /// (word2vec.c's `syn1neg`), both in vocabulary order.
    pub fn loss(&self, input: &WordVectors, output: &WordVectors) -> f64 {
        assert_eq!(
            input.dim(),
            output.dim(),
            "input and output rows of one size"
        );
        let dot = |h: &[f64], w: u32| -> f64 {
            h.iter()
                .zip(output.row(w as usize))
                .map(|(a, &b)| a * f64::from(b))
                .sum()
        };
        let mut h = vec![0f64; input.dim()];
        self.mean(|contexts, target, noise| {
            h.fill(0.0);
            for &c in contexts {
                for (x, &y) in h.iter_mut().zip(input.row(c as usize)) {
                    *x += f64::from(y);
                }
            }
            let n = contexts.len() as f64;
            h.iter_mut().for_each(|x| *x /= n);
            example_loss(dot(&h, target), noise.iter().map(|&w| dot(&h, w)))
        })
    }

    /// The loss of the best scorer that ignores the input (module docs): the chance level.
    pub fn context_free_loss(&self) -> f64 {
        let s = |w: u32| self.context_free[w as usize];
        self.mean(|_, target, noise| example_loss(s(target), noise.iter().map(|&w| s(w))))
    }

    /// The weighted mean of `example(contexts, target, noise words)` over the module docs'
    /// examples: skip-gram's contexts one at a time, CBOW's a whole reduced window.
    fn mean(&self, mut example: impl FnMut(&[u32], u32, &[u32]) -> f64) -> f64 {
        let w = self.window;
        let (mut sum, mut weights) = (0f64, 0f64);
        for (p, &target) in self.kept.iter().enumerate() {
            let noise = &self.noise[self.noise_at[p]..self.noise_at[p + 1]];
            let reach = |b: usize| {
                let (lo, hi) = (p.saturating_sub(b), (p + b + 1).min(self.kept.len()));
                (lo..hi).filter(move |&i| i != p)
            };
            match self.architecture {
                Architecture::Sg => {
                    for i in reach(w) {
                        let weight = (w - i.abs_diff(p) + 1) as f64 / w as f64;
                        sum += weight * example(&self.kept[i..=i], target, noise);
                        weights += weight;
                    }
                }
                Architecture::Cbow => {
                    let mut contexts = Vec::with_capacity(2 * w);
                    for b in 1..=w {
                        contexts.clear();
                        contexts.extend(reach(b).map(|i| self.kept[i]));
                        if !contexts.is_empty() {
                            sum += example(&contexts, target, noise);
                            weights += 1.0;
                        }
                    }
                }
            }
        }
        sum / weights
    }
}

/// `ℓ = -log σ(f_t) - Σ log σ(-f_n)` for the target's score and the noise words'.
fn example_loss(target: f64, noise: impl Iterator<Item = f64>) -> f64 {
    -log_sigmoid(target) - noise.map(|f| log_sigmoid(-f)).sum::<f64>()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(architecture: Architecture, window: usize, negative: usize) -> Word2VecConfig {
        Word2VecConfig {
            architecture,
            dim: 1,
            window,
            negative,
            sample: 0.0,
            ..Word2VecConfig::default()
        }
    }

    fn table(rows: &[f32]) -> WordVectors {
        WordVectors::new(
            (0..rows.len()).map(|i| format!("w{i}")).collect(),
            1,
            rows.to_vec(),
        )
    }

    #[test]
    fn log_sigmoid_is_exact_and_stable() {
        assert!((log_sigmoid(0.0) - (0.5f64).ln()).abs() < 1e-15);
        assert!((log_sigmoid(2.0) - (1.0 / (1.0 + (-2f64).exp())).ln()).abs() < 1e-15);
        assert!((log_sigmoid(-800.0) + 800.0).abs() < 1e-9);
        assert_eq!(log_sigmoid(800.0), 0.0);
    }

    /// No noise words (k = 0): each example is its positive term alone, so the weights of the
    /// distances decide the mean. Window 3, where P(b >= d) is 1, 2/3, 1/3 (1/d would be 1, 1/2,
    /// 1/3: another answer).
    #[test]
    fn skip_gram_weights_each_distance_by_the_chance_the_reduced_window_reaches_it() {
        let (counts, ids) = (vec![5u64, 5], vec![0u32, 1, 0, 1]);
        let h = Heldout::new(&ids, &counts, &counts, &config(Architecture::Sg, 3, 0), 7).unwrap();
        assert!(h.noise.is_empty());
        let (v, u) = ([1.0f64, -2.0], [0.5f64, 0.25]);
        let ls = |x: f64| (1.0 + (-x).exp()).ln();
        let mean = |weight: [f64; 3]| {
            let (mut sum, mut total) = (0.0, 0.0);
            for p in 0..4usize {
                for i in 0..4usize {
                    let d = p.abs_diff(i);
                    if d == 0 {
                        continue;
                    }
                    let w = weight[d - 1];
                    sum += w * ls(v[ids[i] as usize] * u[ids[p] as usize]);
                    total += w;
                }
            }
            sum / total
        };
        let loss = h.loss(&table(&[1.0, -2.0]), &table(&[0.5, 0.25]));
        assert!(
            (loss - mean([1.0, 2.0 / 3.0, 1.0 / 3.0])).abs() < 1e-12,
            "{loss}"
        );
        assert!(
            (loss - mean([1.0, 0.5, 1.0 / 3.0])).abs() > 1e-3,
            "the test tells 1/d apart"
        );
    }

    /// The noise words: unigram^0.75 over the vocabulary's counts, a draw equal to its target
    /// skipped. Counts 16, 1, 16 give q = 8/17, 1/17, 8/17; every target is word 2, so the kept
    /// draws are words 0 and 1 in the ratio 8 : 1 (power 1 would give 16 : 1, uniform 1 : 1).
    #[test]
    fn noise_words_follow_the_three_quarter_power_and_skip_their_target() {
        let counts = vec![16u64, 1, 16];
        let ids = vec![2u32; 3000];
        let h = Heldout::new(&ids, &counts, &counts, &config(Architecture::Sg, 1, 5), 3).unwrap();
        for p in 0..h.kept_words() {
            let t = h.kept[p];
            assert!(h.noise[h.noise_at[p]..h.noise_at[p + 1]]
                .iter()
                .all(|&n| n != t));
        }
        let ones = h.noise.iter().filter(|&&n| n == 1).count() as f64;
        let share = ones / h.noise.len() as f64;
        // 15,000 draws, about 7,900 kept: the share's standard error is about 0.0035.
        assert!((share - 1.0 / 9.0).abs() < 0.015, "{share}");
        // About 9/17 of the draws kept.
        let kept = h.noise.len() as f64 / 15_000.0;
        assert!((kept - 9.0 / 17.0).abs() < 0.02, "{kept}");
    }

    #[test]
    fn text_that_keeps_fewer_than_two_words_is_refused() {
        let cfg = config(Architecture::Cbow, 2, 1);
        let e = Heldout::new(&[0, 7, 9], &[3, 1], &[3, 1], &cfg, 1)
            .err()
            .expect("ids 7 and 9 are out of vocabulary");
        assert!(e.contains("1 of its 3 words kept"), "{e}");
        assert!(Heldout::new(&[], &[3, 1], &[3, 1], &cfg, 1).is_err());
    }

    #[test]
    fn skip_gram_and_cbow_match_hand_computed_losses() {
        // Two words, ids 0 1 0 1, two noise draws per position: a draw equal to the target is
        // skipped, so each position keeps none, one or both (the sums below read which).
        let counts = vec![5u64, 5];
        let ids = vec![0u32, 1, 0, 1];
        let input = table(&[1.0, -2.0]);
        let output = table(&[0.5, 0.25]);
        let ls = |x: f64| -log_sigmoid(x);
        let score = |c: f64, t: u32| c * [0.5, 0.25][t as usize];

        // Skip-gram, window 2: weights 1 at distance 1, 1/2 at distance 2.
        let sg = Heldout::new(&ids, &counts, &counts, &config(Architecture::Sg, 2, 2), 5).unwrap();
        assert!(!sg.noise.is_empty() && sg.noise.len() < 8, "{:?}", sg.noise);
        let v = [1.0, -2.0];
        let noise_term = |p: usize, c: f64| -> f64 {
            sg.noise[sg.noise_at[p]..sg.noise_at[p + 1]]
                .iter()
                .map(|&n| ls(-score(c, n)))
                .sum()
        };
        let (mut sum, mut weight) = (0.0, 0.0);
        for p in 0..4usize {
            for i in 0..4usize {
                let d = p.abs_diff(i);
                if d == 0 || d > 2 {
                    continue;
                }
                let w = if d == 1 { 1.0 } else { 0.5 };
                let c = v[ids[i] as usize];
                sum += w * (ls(score(c, ids[p])) + noise_term(p, c));
                weight += w;
            }
        }
        // Positions 0 and 3 have two contexts (weights 1 + 1/2), 1 and 2 three (1 + 1 + 1/2).
        assert_eq!(weight, 1.5 + 2.5 + 2.5 + 1.5);
        assert!((sg.loss(&input, &output) - sum / weight).abs() < 1e-12);

        // CBOW, window 2: position 0 averages {1} at b = 1 and {1, 0} at b = 2, and so on.
        let cbow =
            Heldout::new(&ids, &counts, &counts, &config(Architecture::Cbow, 2, 2), 5).unwrap();
        let windows: [[&[usize]; 2]; 4] = [
            [&[1], &[1, 2]],
            [&[0, 2], &[0, 2, 3]],
            [&[1, 3], &[0, 1, 3]],
            [&[2], &[1, 2]],
        ];
        let mut sum = 0.0;
        for (p, by_b) in windows.iter().enumerate() {
            for ctx in by_b {
                let h = ctx.iter().map(|&i| v[ids[i] as usize]).sum::<f64>() / ctx.len() as f64;
                let noise: f64 = cbow.noise[cbow.noise_at[p]..cbow.noise_at[p + 1]]
                    .iter()
                    .map(|&n| ls(-score(h, n)))
                    .sum();
                sum += ls(score(h, ids[p])) + noise;
            }
        }
        assert!((cbow.loss(&input, &output) - sum / 8.0).abs() < 1e-12);
        assert!(
            !cbow.noise.is_empty() && cbow.noise.len() < 8,
            "some draws kept, those equal to the target skipped: {:?}",
            cbow.noise
        );
    }

    #[test]
    fn a_zero_output_matrix_scores_log_2_per_term() {
        // Every score 0: each term is ln 2, so the mean is ln 2 times (1 + the mean number of
        // noise words kept per example).
        let counts: Vec<u64> = (1..=50).map(|c| c * 3).collect();
        let ids: Vec<u32> = (0..400).map(|i| (i * 7 % 50) as u32).collect();
        let cfg = config(Architecture::Cbow, 3, 5);
        let h = Heldout::new(&ids, &counts, &counts, &cfg, 11).unwrap();
        let zeros = table(&[0.0; 50]);
        let kept_noise = h.noise.len() as f64 / h.kept_words() as f64;
        // CBOW: every position has a context at every b here, so each position weighs the same.
        let want = 2f64.ln() * (1.0 + kept_noise);
        assert!((h.loss(&zeros, &zeros) - want).abs() < 1e-12);
        assert!(kept_noise > 4.5 && kept_noise <= 5.0, "{kept_noise}");
    }

    #[test]
    fn subsampling_and_noise_are_drawn_from_the_seed_alone() {
        let counts: Vec<u64> = (0..30).map(|i| 1000 / (i + 1)).collect();
        let ids: Vec<u32> = (0..500).map(|i| (i * i % 30) as u32).collect();
        let mut cfg = config(Architecture::Sg, 4, 5);
        cfg.sample = 1e-2;
        let a = Heldout::new(&ids, &counts, &counts, &cfg, 5).unwrap();
        let b = Heldout::new(&ids, &counts, &counts, &cfg, 5).unwrap();
        let c = Heldout::new(&ids, &counts, &counts, &cfg, 6).unwrap();
        assert_eq!((&a.kept, &a.noise), (&b.kept, &b.noise));
        assert_ne!((&a.kept, &a.noise), (&c.kept, &c.noise));
        assert!(a.kept_words() < ids.len(), "frequent words are subsampled");
        // Out-of-vocabulary ids (30 and above) are dropped.
        let with_oov: Vec<u32> = ids.iter().map(|&w| if w == 0 { 99 } else { w }).collect();
        let d = Heldout::new(&with_oov, &counts, &counts, &cfg, 5).unwrap();
        assert!(d.kept.iter().all(|&w| w < 30));
    }

    /// The context-free scorer against the loss it minimises: for a unigram text, moving any
    /// word's score away from `s_w` raises the expected loss, and its value by hand for one word.
    #[test]
    fn the_context_free_level_is_the_best_constant_scorer() {
        // Two words counted 7 and 1 in training, smoothed to 8 and 2: kept shares p = (4/5, 1/5)
        // (no subsampling); noise shares q ∝ (3^0.75, 1) from the vocabulary's counts 3 and 1,
        // which are not in the training counts' proportion (the two must not be mixed up).
        // With k = 1, σ(s_0) = p_0 / (p_0 + q_0 (1 - p_0)).
        let counts = vec![3u64, 1];
        let cfg = config(Architecture::Sg, 1, 1);
        let h = Heldout::new(&[0, 1], &counts, &[7, 1], &cfg, 1).unwrap();
        let q0 = 3f64.powf(0.75) / (3f64.powf(0.75) + 1.0);
        let sig = |x: f64| 1.0 / (1.0 + (-x).exp());
        assert!((sig(h.context_free[0]) - 0.8 / (0.8 + q0 * 0.2)).abs() < 1e-12);
        let q1 = 1.0 - q0;
        assert!((sig(h.context_free[1]) - 0.2 / (0.2 + q1 * 0.8)).abs() < 1e-12);
        // k = 5 and subsampling: counts 300 and 100 at sample 1e-3 (t = 0.4) keep
        // (sqrt(750) + 1) 0.4 / 300 = 0.037848 and (sqrt(250) + 1) 0.4 / 100 = 0.067246 of each;
        // training counts 199 and 149, smoothed to 200 and 150, give kept masses 7.570 and
        // 10.087 (not the vocabulary's proportion).
        let counts = vec![300u64, 100];
        let mut cfg5 = config(Architecture::Sg, 2, 5);
        cfg5.sample = 1e-3;
        let ids: Vec<u32> = (0..400).map(|i| (i % 4 == 0) as u32).collect();
        let h5 = Heldout::new(&ids, &counts, &[199, 149], &cfg5, 2).unwrap();
        let (m0, m1) = (200.0 * 0.037_848_4, 150.0 * 0.067_245_6);
        let p5 = m0 / (m0 + m1);
        let q5 = 300f64.powf(0.75) / (300f64.powf(0.75) + 100f64.powf(0.75));
        let s = [
            (p5 / (5.0 * q5 * (1.0 - p5))).ln(),
            ((1.0 - p5) / (5.0 * (1.0 - q5) * p5)).ln(),
        ];
        assert!(
            (h5.context_free[0] - s[0]).abs() < 1e-5 && (h5.context_free[1] - s[1]).abs() < 1e-5
        );
        // The level itself, from the kept words and draws: each example's -log σ(s_t) and
        // -log σ(-s_n), weighted by distance (1 and 1/2 at window 2).
        let ls = |x: f64| (1.0 + (-x).exp()).ln();
        let (mut sum, mut total) = (0.0, 0.0);
        for p in 0..h5.kept_words() {
            let noise: f64 = h5.noise[h5.noise_at[p]..h5.noise_at[p + 1]]
                .iter()
                .map(|&n| ls(-s[n as usize]))
                .sum();
            for i in p.saturating_sub(2)..(p + 3).min(h5.kept_words()) {
                if i != p {
                    let w = if p.abs_diff(i) == 1 { 1.0 } else { 0.5 };
                    sum += w * (ls(s[h5.kept[p] as usize]) + noise);
                    total += w;
                }
            }
        }
        assert!(h5.kept_words() < 100, "subsampled: {}", h5.kept_words());
        assert!((h5.context_free_loss() - sum / total).abs() < 1e-4);
        // A word the training split never has gets a finite score all the same.
        let unseen = Heldout::new(&[0, 1], &counts, &[4, 0], &cfg, 1).unwrap();
        assert!(unseen.context_free.iter().all(|s| s.is_finite()));
        assert!(unseen.context_free_loss().is_finite());
        // The expected loss per example, E = Σ_t p_t [-log σ(s_t) - k Σ_{n≠t} q_n log σ(-s_n)],
        // is least at these scores.
        let p = [0.8, 0.2];
        let q = [q0, q1];
        let expected = |s: [f64; 2]| -> f64 {
            (0..2)
                .map(|t| {
                    p[t] * (-log_sigmoid(s[t])
                        - (0..2)
                            .filter(|&n| n != t)
                            .map(|n| q[n] * log_sigmoid(-s[n]))
                            .sum::<f64>())
                })
                .sum()
        };
        let best = [h.context_free[0], h.context_free[1]];
        for (i, d) in [(0, 0.1), (0, -0.1), (1, 0.1), (1, -0.1)] {
            let mut s = best;
            s[i] += d;
            assert!(expected(s) > expected(best));
        }
    }

    /// A model trained on planted text predicts its held-out half better than chance, and
    /// better than the zero-output start.
    #[test]
    fn a_trained_model_beats_the_chance_level_on_held_out_text() {
        use corpus::{Corpus, CorpusConfig, Preset};
        // Words come in fixed pairs ("a0 b0", "a1 b1", ...), the pairs in random order.
        let mut rng = SplitMix64::new(9);
        let text: Vec<String> = (0..20_000)
            .map(|_| {
                let i = rng.below(40);
                format!("a{i} b{i}")
            })
            .collect();
        let corpus = Corpus::from_text(
            &text.join(" "),
            std::path::Path::new("planted"),
            &CorpusConfig {
                preset: Preset::Text8,
                min_count: 1,
                ..CorpusConfig::default()
            },
        )
        .unwrap();
        let n = corpus.encoded.ids.len();
        let (train_ids, heldout_ids) = corpus.encoded.ids.split_at(n * 9 / 10);
        let mut train = corpus.clone();
        train.encoded.ids = train_ids.to_vec();
        train.encoded.bounds = vec![0, train_ids.len()];
        let mut train_counts = vec![0u64; corpus.vocab.len()];
        for &w in train_ids {
            train_counts[w as usize] += 1;
        }
        for architecture in [Architecture::Sg, Architecture::Cbow] {
            let cfg = Word2VecConfig {
                architecture,
                dim: 20,
                window: 1,
                negative: 5,
                sample: 0.0,
                epochs: 3,
                threads: 1,
                ..Word2VecConfig::default()
            };
            let trained = crate::train(&train, &cfg, false).unwrap();
            let h =
                Heldout::new(heldout_ids, corpus.vocab.counts(), &train_counts, &cfg, 4).unwrap();
            let zeros = WordVectors::new(
                corpus.vocab.words().to_vec(),
                20,
                vec![0.0; 20 * corpus.vocab.len()],
            );
            let (model, free) = (
                h.loss(&trained.vectors, &trained.output),
                h.context_free_loss(),
            );
            let start = h.loss(&trained.vectors, &zeros);
            // At the start every term is ln 2 (6 terms a little fewer: draws of the target).
            assert!(
                start > 5.5 * 2f64.ln() && start <= 6.0 * 2f64.ln(),
                "{start}"
            );
            assert!(
                free < start,
                "{architecture:?}: context-free {free} against start {start}"
            );
            assert!(
                model < free - 0.5,
                "{architecture:?}: model {model} against context-free {free}"
            );
        }
    }
}
