//! Whether a masked LM predicts from context, measured where nothing else can help: the
//! held-out targets replaced by `[MASK]`.
//!
//! The held-out loss as a whole is read against the context-free level (the best loss of a
//! model that ignores context; REPORT.md gives it for the study's corpus), but that level assumes a perfect copier
//! of the visible input at the 20% of targets not replaced by `[MASK]`. A model that uses
//! context at `[MASK]` but copies badly can end above the level, and one that copies well can
//! end just below it with little context. At a `[MASK]` target the best context-free prediction
//! is the unigram, so
//!
//!   gain = (1/M) Σ_{[MASK] targets} (−log p_unigram(y) − (−log p_model(y)))
//!
//! (nats per target) is above 0 only if the model uses context. Its 95% interval resamples
//! held-out sequences (a ratio of sums: the gain over the resampled sequences' `[MASK]`
//! targets), so each seed gets its own answer. The per-sequence sums come from
//! [`transformer::training::heldout_loss_by_input`] (the same batches, masking and targets as
//! the held-out loss) and are kept per model (`heldout-by-input.csv.gz`).

use crate::inference::{paired_bootstrap, Interval};
use serde::{Deserialize, Serialize};
use transformer::training::InputSplit;

/// Resamples of held-out sequences behind a gain's interval, and their seed (every report of
/// one model's gain draws the same resamples).
const RESAMPLES: usize = 2000;
pub const RESAMPLE_SEED: u64 = 0x6A1E;

/// One held-out sequence's masked-LM targets, by what the model saw there (a flat CSV row).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SequenceRow {
    /// Index of the held-out sequence.
    pub sequence: usize,
    /// Targets replaced by `[MASK]`, the model's summed loss on them (nats) and the unigram's.
    pub mask_targets: usize,
    pub mask_loss: f64,
    pub mask_context_free_loss: f64,
    /// Targets that kept their word or got a random one, and the best copier's loss there.
    pub visible_targets: usize,
    pub visible_loss: f64,
    pub visible_context_free_loss: f64,
}

/// [`SequenceRow`]s of [`transformer::training::heldout_loss_by_input`]'s output.
pub fn rows(split: &[InputSplit]) -> Vec<SequenceRow> {
    split
        .iter()
        .enumerate()
        .map(|(sequence, s)| SequenceRow {
            sequence,
            mask_targets: s.masked.targets,
            mask_loss: s.masked.loss,
            mask_context_free_loss: s.masked.context_free_loss,
            visible_targets: s.visible.targets,
            visible_loss: s.visible.loss,
            visible_context_free_loss: s.visible.context_free_loss,
        })
        .collect()
}

/// The gain at `[MASK]` (the unigram's loss minus the model's, nats per target) over the
/// sequences listed (with repeats).
#[allow(clippy::ptr_arg)] // the per-seed data type of `paired_bootstrap`
fn gain(rows: &Vec<SequenceRow>, items: &[usize]) -> f64 {
    let (mut gain, mut targets) = (0.0, 0usize);
    for &i in items {
        let r = &rows[i];
        gain += r.mask_context_free_loss - r.mask_loss;
        targets += r.mask_targets;
    }
    gain / targets.max(1) as f64
}

/// The gain at `[MASK]` with its 95% interval over held-out sequences (seeded: reproducible).
pub fn gain_at_mask(rows: &[SequenceRow], seed: u64) -> Interval {
    let data = vec![rows.to_vec()];
    paired_bootstrap(&data, None, rows.len(), gain, RESAMPLES, 0.95, seed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seq(i: usize, targets: usize, loss: f64, unigram: f64) -> SequenceRow {
        SequenceRow {
            sequence: i,
            mask_targets: targets,
            mask_loss: loss,
            mask_context_free_loss: unigram,
            visible_targets: 1,
            visible_loss: 0.5,
            visible_context_free_loss: 0.25,
        }
    }

    /// By hand: two sequences, 3 + 1 [MASK] targets, unigram 9 + 3 nats, model 6 + 2: the gain
    /// is (3 + 1) / 4 = 1 nat per target. Then a case where the ratio of sums and the mean of
    /// per-sequence gains differ.
    #[test]
    fn the_gain_is_a_ratio_of_sums_over_mask_targets() {
        let rows = vec![seq(0, 3, 6.0, 9.0), seq(1, 1, 2.0, 3.0)];
        assert_eq!(gain(&rows, &[0, 1]), 1.0);
        // Sequence 0 twice: (3 + 3) / 6.
        assert_eq!(gain(&rows, &[0, 0]), 1.0);
        // A sequence that gained 2 nats on 1 target beside one that lost 1 on 3: (2 - 3) / 4,
        // where the mean of the per-sequence gains would be (2 - 1) / 2.
        let rows = vec![seq(0, 1, 1.0, 3.0), seq(1, 3, 4.0, 1.0)];
        assert_eq!(gain(&rows, &[0, 1]), -0.25);
        // Two sequences: every resample is {0,0}, {0,1} or {1,1}, a gain of 2, -0.25 or
        // (-3 - 3) / 6 = -1, the extremes a quarter of the time each.
        let g = gain_at_mask(&rows, RESAMPLE_SEED);
        assert_eq!((g.estimate, g.lo, g.hi), (-0.25, -1.0, 2.0));
    }

    /// Many sequences with the same gain give a tight interval at it; noisy ones a wider
    /// interval that still holds the estimate.
    #[test]
    fn the_interval_resamples_sequences() {
        let same: Vec<SequenceRow> = (0..200).map(|i| seq(i, 2, 4.0, 5.0)).collect();
        let g = gain_at_mask(&same, 1);
        assert_eq!((g.estimate, g.lo, g.hi), (0.5, 0.5, 0.5));
        let noisy: Vec<SequenceRow> = (0..200)
            .map(|i| seq(i, 2, 4.0, if i % 2 == 0 { 4.0 } else { 6.0 }))
            .collect();
        let g = gain_at_mask(&noisy, 1);
        assert_eq!(g.estimate, 0.5);
        // Per-sequence gains 0 or 1 nat per target, half each: the mean's standard error is
        // 0.5 / sqrt(200) = 0.035, so the 95% interval is about 0.5 +- 0.07.
        assert!(g.lo > 0.40 && g.lo < 0.46, "{g:?}");
        assert!(g.hi > 0.54 && g.hi < 0.60, "{g:?}");
    }
}
