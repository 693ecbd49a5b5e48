//! Hyper-parameters. Defaults are word2vec.c's and gensim's, with the learning rate depending on
//! the architecture (0.025 skip-gram, 0.05 CBOW) as in both.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Architecture {
    /// Skip-gram: each context word predicts the centre word.
    Sg,
    /// CBOW: the mean of the context vectors predicts the centre word.
    Cbow,
}

/// How skip-gram's updates are grouped (CBOW has one example per position either way).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Update {
    /// word2vec.c's and gensim's order: each (context, centre) pair draws its own noise words
    /// and is applied before the next pair is computed.
    #[default]
    Pair,
    /// HogBatch (Ji et al. 2016, pWord2Vec): the contexts of one centre word share its noise
    /// words, and the window's updates are computed together from the rows as they were
    /// before it, then added. The same arithmetic per example; far fewer rows touched.
    Window,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Update {
    fn is_pair(&self) -> bool {
        *self == Update::Pair
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Word2VecConfig {
    pub architecture: Architecture,
    pub dim: usize,
    /// Maximum distance between centre and context word; each position draws a reduced window
    /// uniformly in `1..=window`, as word2vec.c does.
    pub window: usize,
    /// Noise words per positive example.
    pub negative: usize,
    /// Subsampling threshold (see `corpus::subsample`); 0 disables.
    pub sample: f64,
    /// Starting learning rate; `None` means 0.025 for skip-gram and 0.05 for CBOW.
    pub alpha: Option<f32>,
    /// The learning rate decays linearly to this over all epochs.
    pub min_alpha: f32,
    pub epochs: usize,
    /// Stop after this many corpus tokens instead of `epochs` full passes (a matched budget: a
    /// fraction of an epoch, or 2.5 epochs), the learning rate decaying to `min_alpha` over the
    /// budget. Whole chunks are trained: the run ends with the chunk that reaches the budget, so
    /// it reads at most one chunk more. At most `epochs` passes. Left out of the config's JSON
    /// when absent, so the run hashes of configs written before it existed do not move.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    /// Skip-gram's update grouping ([`Update`]). Left out of the config's JSON at its default,
    /// so run hashes written before it existed do not move.
    #[serde(skip_serializing_if = "Update::is_pair")]
    pub update: Update,
    /// With several threads, how many of the output matrix's rows (the most frequent words:
    /// ids go by descending count) each thread keeps in a private copy, merged into the shared
    /// matrix after every chunk ([`crate::hogwild::ThreadRows`]). 0, the default, is
    /// word2vec.c's and gensim's hogwild, every row shared; a private copy spares the cores
    /// from passing the rows that every noise draw hits back and forth (docs/performance.md).
    /// Costs two copies of these rows per thread (`2 x threads x rows x stride` floats, the
    /// stride being `dim` padded to whole vector registers; more rows than the vocabulary count
    /// as all of them). One thread shares nothing and ignores
    /// it. Left out of the config's JSON at 0, so run hashes written before it existed do not
    /// move.
    #[serde(skip_serializing_if = "is_zero")]
    pub private_rows: usize,
    /// The same for the input matrix: how many of its most frequent words' rows each thread
    /// keeps private, merged after every chunk. Every context word's input row is written at
    /// each of its positions (CBOW's averaged context, skip-gram's context rows), and the
    /// frequent words' rows are then written by both cores as the noise words' output rows are.
    /// 0, the default, shares them all; one thread ignores it. Left out of the config's JSON at
    /// 0, so run hashes written before it existed do not move.
    #[serde(skip_serializing_if = "is_zero")]
    pub private_input_rows: usize,
    pub threads: usize,
    pub seed: u64,
}

impl Default for Word2VecConfig {
    fn default() -> Self {
        Word2VecConfig {
            architecture: Architecture::Sg,
            dim: 100,
            window: 5,
            negative: 5,
            sample: 1e-3,
            alpha: None,
            min_alpha: 1e-4,
            epochs: 5,
            max_tokens: None,
            update: Update::Pair,
            private_rows: 0,
            private_input_rows: 0,
            threads: 2,
            seed: 1,
        }
    }
}

#[derive(Debug, thiserror::Error, PartialEq)]
#[error("invalid word2vec config: {0}")]
pub struct ConfigError(pub String);

impl Word2VecConfig {
    pub fn start_alpha(&self) -> f32 {
        self.alpha.unwrap_or(match self.architecture {
            Architecture::Sg => 0.025,
            Architecture::Cbow => 0.05,
        })
    }

    /// Checks every field; `n_chunks` is the corpus's chunk count (threads split chunks).
    pub fn validate(&self, n_chunks: usize) -> Result<(), ConfigError> {
        let err = |m: String| Err(ConfigError(m));
        if self.dim == 0 {
            return err("dim must be at least 1".into());
        }
        if self.window == 0 {
            return err("window must be at least 1".into());
        }
        if self.negative == 0 {
            return err(
                "negative must be at least 1 (only negative sampling is implemented)".into(),
            );
        }
        if self.update == Update::Window && self.architecture != Architecture::Sg {
            return err(
                "update = \"window\" is skip-gram's (architecture = \"sg\"); CBOW has one example per position".into(),
            );
        }
        if self.update == Update::Window && 2 * self.window > crate::sgd::MAX_INPUTS {
            return err(format!(
                "update = \"window\" takes a window of at most {}, got {}",
                crate::sgd::MAX_INPUTS / 2,
                self.window
            ));
        }
        if self.update == Update::Window && self.negative + 1 > crate::sgd::MAX_OUTPUTS {
            return err(format!(
                "update = \"window\" takes at most {} noise words (negative), got {}",
                crate::sgd::MAX_OUTPUTS - 1,
                self.negative
            ));
        }
        if self.epochs == 0 {
            return err("epochs must be at least 1".into());
        }
        if self.max_tokens == Some(0) {
            return err("max_tokens must be at least 1 (leave it out for full epochs)".into());
        }
        if self.threads == 0 {
            return err("threads must be at least 1".into());
        }
        if self.threads > n_chunks {
            return err(format!(
                "{} threads but the corpus has only {n_chunks} chunks: threads split the corpus by chunk, use at most {n_chunks}",
                self.threads
            ));
        }
        if !(self.sample >= 0.0 && self.sample.is_finite()) {
            return err(format!("sample must be >= 0, got {}", self.sample));
        }
        let a = self.start_alpha();
        if !(a > 0.0 && a.is_finite()) {
            return err(format!("alpha must be > 0, got {a}"));
        }
        if !(self.min_alpha >= 0.0 && self.min_alpha <= a) {
            return err(format!(
                "min_alpha must be in [0, alpha = {a}], got {}",
                self.min_alpha
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bad_value_is_named() {
        let ok = Word2VecConfig::default();
        assert_eq!(ok.validate(10), Ok(()));
        let cases: Vec<(Word2VecConfig, &str)> = vec![
            (
                Word2VecConfig {
                    dim: 0,
                    ..ok.clone()
                },
                "dim",
            ),
            (
                Word2VecConfig {
                    window: 0,
                    ..ok.clone()
                },
                "window",
            ),
            (
                Word2VecConfig {
                    negative: 0,
                    ..ok.clone()
                },
                "negative",
            ),
            (
                Word2VecConfig {
                    update: Update::Window,
                    negative: 40,
                    ..ok.clone()
                },
                "at most 31 noise words",
            ),
            (
                Word2VecConfig {
                    update: Update::Window,
                    architecture: Architecture::Cbow,
                    ..ok.clone()
                },
                "is skip-gram's",
            ),
            (
                Word2VecConfig {
                    update: Update::Window,
                    window: 17,
                    ..ok.clone()
                },
                "a window of at most 16",
            ),
            (
                Word2VecConfig {
                    epochs: 0,
                    ..ok.clone()
                },
                "epochs",
            ),
            (
                Word2VecConfig {
                    max_tokens: Some(0),
                    ..ok.clone()
                },
                "max_tokens",
            ),
            (
                Word2VecConfig {
                    threads: 0,
                    ..ok.clone()
                },
                "threads",
            ),
            (
                Word2VecConfig {
                    threads: 11,
                    ..ok.clone()
                },
                "only 10 chunks",
            ),
            (
                Word2VecConfig {
                    sample: -1.0,
                    ..ok.clone()
                },
                "sample",
            ),
            (
                Word2VecConfig {
                    alpha: Some(0.0),
                    ..ok.clone()
                },
                "alpha",
            ),
            (
                Word2VecConfig {
                    min_alpha: 1.0,
                    ..ok.clone()
                },
                "min_alpha",
            ),
        ];
        for (cfg, needle) in cases {
            let e = cfg.validate(10).unwrap_err();
            assert!(e.to_string().contains(needle), "{e}");
        }
    }

    /// Run directories are named by a hash of the config's JSON: a field added later is left out
    /// at its default, so the runs trained before it keep their names.
    #[test]
    fn later_fields_at_their_defaults_leave_the_json_as_it_was() {
        let json = |c: &Word2VecConfig| serde_json::to_string(c).unwrap();
        let plain = json(&Word2VecConfig::default());
        for field in ["private_rows", "private_input_rows", "update", "max_tokens"] {
            assert!(!plain.contains(field), "{plain}");
        }
        let private = json(&Word2VecConfig {
            private_rows: 1024,
            ..Default::default()
        });
        assert!(private.contains("\"private_rows\":1024"), "{private}");
        // And a config read back without the field is the default.
        let back: Word2VecConfig = serde_json::from_str(&plain).unwrap();
        assert_eq!(back.private_rows, 0);
        assert_eq!(back.private_input_rows, 0);
        let input = json(&Word2VecConfig {
            private_input_rows: 512,
            ..Default::default()
        });
        assert!(input.contains("\"private_input_rows\":512"), "{input}");
    }

    #[test]
    fn learning_rate_defaults_follow_the_architecture() {
        assert_eq!(Word2VecConfig::default().start_alpha(), 0.025);
        let cbow = Word2VecConfig {
            architecture: Architecture::Cbow,
            ..Default::default()
        };
        assert_eq!(cbow.start_alpha(), 0.05);
    }
}
