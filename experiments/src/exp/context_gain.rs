//! The gain at `[MASK]` ([`analysis::context_gain`]) as tidy rows of a model's `training`
//! measurements, for the views and the report.

use analysis::context_gain::{gain_at_mask, SequenceRow, RESAMPLE_SEED};

use crate::output::TidyRow;

/// Tidy rows of one model's split (`template`: its `training` row), for the views:
/// `loss_at_mask` and `context_free_loss_at_mask` (per `[MASK]` target; `n` = their number),
/// `context_gain_at_mask` with `_lo` / `_hi`, and the same two losses at visible targets.
pub fn tidy(rows: &[SequenceRow], template: &TidyRow) -> Vec<TidyRow> {
    let sum = |f: fn(&SequenceRow) -> f64| rows.iter().map(f).sum::<f64>();
    let count = |f: fn(&SequenceRow) -> usize| rows.iter().map(f).sum::<usize>();
    let (m, v) = (count(|r| r.mask_targets), count(|r| r.visible_targets));
    let per = |x: f64, n: usize| x / n.max(1) as f64;
    let g = gain_at_mask(rows, RESAMPLE_SEED);
    let row = |metric: &str, value: f64, n: usize| TidyRow {
        metric: metric.into(),
        value,
        n,
        ..template.clone()
    };
    vec![
        row("loss_at_mask", per(sum(|r| r.mask_loss), m), m),
        row(
            "context_free_loss_at_mask",
            per(sum(|r| r.mask_context_free_loss), m),
            m,
        ),
        row("context_gain_at_mask", g.estimate, m),
        row("context_gain_at_mask_lo", g.lo, m),
        row("context_gain_at_mask_hi", g.hi, m),
        row("loss_at_visible", per(sum(|r| r.visible_loss), v), v),
        row(
            "context_free_loss_at_visible",
            per(sum(|r| r.visible_context_free_loss), v),
            v,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// By hand: a sequence that gained 2 nats on 1 [MASK] target beside one that lost 3 on 3:
    /// the gain is (2 - 3) / 4; the losses per target at [MASK] and at visible targets; the
    /// interval's bounds are the resamples' extremes ({0,0}: 2, {1,1}: -1).
    #[test]
    fn the_rows_give_the_gain_and_the_losses_per_target() {
        let seq = |i: usize, loss: f64, unigram: f64, targets: usize| SequenceRow {
            sequence: i,
            mask_targets: targets,
            mask_loss: loss,
            mask_context_free_loss: unigram,
            visible_targets: 1,
            visible_loss: 0.5,
            visible_context_free_loss: 0.25,
        };
        let rows = vec![seq(0, 1.0, 3.0, 1), seq(1, 4.0, 1.0, 3)];
        let t = tidy(&rows, &TidyRow::template("frozen", "m", "training"));
        let get = |m: &str| t.iter().find(|r| r.metric == m).unwrap();
        assert_eq!(get("context_gain_at_mask").value, -0.25);
        assert_eq!(get("context_gain_at_mask").n, 4);
        assert_eq!(get("loss_at_mask").value, 5.0 / 4.0);
        assert_eq!(get("context_free_loss_at_mask").value, 4.0 / 4.0);
        assert_eq!(get("loss_at_visible").value, 0.5);
        assert_eq!(get("loss_at_visible").n, 2);
        assert_eq!(get("context_free_loss_at_visible").value, 0.25);
        let (lo, hi) = (
            get("context_gain_at_mask_lo"),
            get("context_gain_at_mask_hi"),
        );
        assert_eq!((lo.value, hi.value), (-1.0, 2.0));
    }
}
