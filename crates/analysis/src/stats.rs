//! Correlation coefficients, as scipy's `pearsonr` and `spearmanr` compute them.

/// Pearson's r. NaN when fewer than two points or a constant series.
pub fn pearson(x: &[f64], y: &[f64]) -> f64 {
    assert_eq!(x.len(), y.len());
    let n = x.len();
    if n < 2 {
        return f64::NAN;
    }
    let mx = x.iter().sum::<f64>() / n as f64;
    let my = y.iter().sum::<f64>() / n as f64;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        let (dx, dy) = (a - mx, b - my);
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    let r = sxy / (sxx.sqrt() * syy.sqrt());
    r.clamp(-1.0, 1.0)
}

/// Ranks starting at 1, ties sharing the average of the ranks they span.
pub fn average_ranks(x: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..x.len()).collect();
    order.sort_by(|&a, &b| x[a].total_cmp(&x[b]));
    let mut ranks = vec![0.0; x.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && x[order[j + 1]] == x[order[i]] {
            j += 1;
        }
        let avg = (i + j) as f64 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            ranks[k] = avg;
        }
        i = j + 1;
    }
    ranks
}

/// Spearman's rho: Pearson's r of the average ranks.
pub fn spearman(x: &[f64], y: &[f64]) -> f64 {
    pearson(&average_ranks(x), &average_ranks(y))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_get_average_ranks() {
        assert_eq!(
            average_ranks(&[10.0, 20.0, 10.0, 30.0, 20.0]),
            vec![1.5, 3.5, 1.5, 5.0, 3.5]
        );
    }

    #[test]
    fn hand_computed_correlations() {
        // x = 1..5, y = 2,4,5,4,5: mx = 3, my = 4; sxy = 6, sxx = 10, syy = 6 -> r = 6/sqrt(60)
        let x = [1.0, 2.0, 3.0, 4.0, 5.0];
        let y = [2.0, 4.0, 5.0, 4.0, 5.0];
        assert!((pearson(&x, &y) - 6.0 / 60f64.sqrt()).abs() < 1e-12);
        // ranks of y: 1, 2.5, 4.5, 2.5, 4.5 -> mean 3, sxy = 7, syy = 9, sxx = 10 -> rho = 7 / sqrt(90)
        assert!((spearman(&x, &y) - 7.0 / 90f64.sqrt()).abs() < 1e-12);
        assert!((spearman(&x, &[5.0, 4.0, 3.0, 2.0, 1.0]) + 1.0).abs() < 1e-12);
        assert!(pearson(&[1.0], &[2.0]).is_nan());
        assert!(pearson(&[1.0, 1.0], &[2.0, 3.0]).is_nan());
    }
}
