//! Statistics over repeated runs: the Wilson score interval of a pass rate and the unbiased pass@k
//! estimator of the Codex paper (Chen et al. 2021, "Evaluating Large Language Models Trained on
//! Code").
//!
//! It also holds the exact McNemar test on paired outcomes (two arms run on the same tasks, or
//! two strategies re-applied to the same edit calls).
//!
//! Plain arithmetic on counts; depends on nothing else in the crate.

/// The normal quantile for a two-sided 95% interval.
pub const Z_95: f64 = 1.959_963_984_540_054;

/// A closed interval of proportions, both ends in `[0, 1]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
}

/// The Wilson score interval for `successes` out of `trials` at normal quantile `z`
/// ([`Z_95`] for 95%); `None` without trials (or with more successes than trials).
///
/// Unlike the normal ("Wald") interval it stays inside `[0, 1]` and is not empty at 0/n or n/n.
pub fn wilson_interval(successes: u64, trials: u64, z: f64) -> Option<Interval> {
    if trials == 0 || successes > trials {
        return None;
    }
    let n = trials as f64;
    let p = successes as f64 / n;
    let z2 = z * z;
    let denominator = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denominator;
    let half = z / denominator * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    Some(Interval {
        low: (centre - half).max(0.0),
        high: (centre + half).min(1.0),
    })
}

/// The unbiased estimate of pass@k from `n` samples of which `c` passed:
/// `1 - C(n-c, k) / C(n, k)`, the chance that at least one of `k` samples drawn without
/// replacement from the `n` passes.
///
/// `None` when it is not defined: `k == 0`, `n < k`, or `c > n`. Computed as the product
/// `1 - Π_{i=n-c+1}^{n} (1 - k/i)`, which never forms the (huge) binomial coefficients.
pub fn pass_at_k(n: u64, c: u64, k: u64) -> Option<f64> {
    if k == 0 || n < k || c > n {
        return None;
    }
    if n - c < k {
        // Every draw of k samples holds a passing one.
        return Some(1.0);
    }
    let fail_all: f64 = (n - c + 1..=n).map(|i| 1.0 - k as f64 / i as f64).product();
    Some(1.0 - fail_all)
}

/// The mean of pass@k over tasks, each given as `(n, c)`; tasks where pass@k is not defined
/// (fewer than `k` samples) are left out. `None` when no task has it defined.
pub fn mean_pass_at_k(tasks: &[(u64, u64)], k: u64) -> Option<f64> {
    let values: Vec<f64> = tasks
        .iter()
        .filter_map(|&(n, c)| pass_at_k(n, c, k))
        .collect();
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// The exact (binomial) two-sided McNemar p-value for paired outcomes with `b` pairs where only
/// the first arm succeeded and `c` pairs where only the second did (the discordant pairs; the
/// concordant ones carry no information).
///
/// Under the null hypothesis each discordant pair is a fair coin, so the p-value is
/// `min(1, 2 · P[X ≤ min(b, c)])` for `X ~ Binomial(b + c, 1/2)`. With no discordant pair it is 1.
/// Computed in log space, so it stays exact to double precision for large counts.
pub fn mcnemar_exact(b: u64, c: u64) -> f64 {
    let n = b + c;
    if n == 0 {
        return 1.0;
    }
    let k = b.min(c);
    // ln C(n, i) built incrementally: C(n, i) = C(n, i-1) · (n - i + 1) / i.
    let ln_half_n = n as f64 * std::f64::consts::LN_2;
    let mut ln_choose = 0.0_f64;
    let mut tail = 0.0_f64;
    for i in 0..=k {
        if i > 0 {
            ln_choose += ((n - i + 1) as f64).ln() - (i as f64).ln();
        }
        tail += (ln_choose - ln_half_n).exp();
    }
    (2.0 * tail).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-9, "{a} != {b}");
    }

    #[test]
    fn wilson_of_8_of_10_matches_a_hand_computation() {
        // p = 0.8, z² = 3.841459, z²/n = 0.3841459;
        // centre = (0.8 + 0.19207295) / 1.3841459 = 0.7167409;
        // half = 1.959964 / 1.3841459 · sqrt(0.016 + 0.00960365) = 0.2265760.
        let i = wilson_interval(8, 10, Z_95).unwrap();
        assert!((i.low - 0.490_165).abs() < 1e-5, "{i:?}");
        assert!((i.high - 0.943_317).abs() < 1e-5, "{i:?}");
    }

    #[test]
    fn wilson_at_the_edges() {
        assert_eq!(wilson_interval(0, 0, Z_95), None);
        assert_eq!(wilson_interval(3, 2, Z_95), None);
        // 0/10: low is exactly 0, high = z²/n / (1 + z²/n) = 0.3841459 / 1.3841459.
        let none = wilson_interval(0, 10, Z_95).unwrap();
        close(none.low, 0.0);
        close(none.high, 0.384_145_882_069_412_6 / 1.384_145_882_069_412_6);
        // 10/10 mirrors 0/10.
        let all = wilson_interval(10, 10, Z_95).unwrap();
        close(all.high, 1.0);
        close(all.low, 1.0 / 1.384_145_882_069_412_6);
        // 1/1: centre 0.5 ± 0.5·(z/…): low = 1/(1+z²) = 0.206549.
        let one = wilson_interval(1, 1, Z_95).unwrap();
        assert!((one.low - 0.206_549).abs() < 1e-6, "{one:?}");
    }

    #[test]
    fn wilson_narrows_with_more_trials() {
        let small = wilson_interval(8, 10, Z_95).unwrap();
        let large = wilson_interval(80, 100, Z_95).unwrap();
        assert!(large.high - large.low < small.high - small.low);
        assert!(large.low < 0.8 && 0.8 < large.high);
    }

    #[test]
    fn pass_at_k_for_five_samples_two_passing() {
        // k = 1: 1 - C(3,1)/C(5,1) = 1 - 3/5.
        close(pass_at_k(5, 2, 1).unwrap(), 0.4);
        // k = 2: 1 - C(3,2)/C(5,2) = 1 - 3/10.
        close(pass_at_k(5, 2, 2).unwrap(), 0.7);
        // k = 3: 1 - C(3,3)/C(5,3) = 1 - 1/10.
        close(pass_at_k(5, 2, 3).unwrap(), 0.9);
        // k = 5: n - c = 3 < 5, so every draw holds a pass.
        close(pass_at_k(5, 2, 5).unwrap(), 1.0);
    }

    #[test]
    fn pass_at_k_edge_cases() {
        assert_eq!(pass_at_k(0, 0, 1), None);
        assert_eq!(pass_at_k(2, 1, 3), None, "n < k");
        assert_eq!(pass_at_k(5, 2, 0), None);
        assert_eq!(pass_at_k(2, 3, 1), None, "c > n");
        close(pass_at_k(5, 0, 5).unwrap(), 0.0);
        close(pass_at_k(5, 0, 1).unwrap(), 0.0);
        close(pass_at_k(5, 5, 1).unwrap(), 1.0);
        // 1 - C(9,3)/C(10,3) = 1 - 84/120.
        close(pass_at_k(10, 1, 3).unwrap(), 0.3);
    }

    #[test]
    fn pass_at_1_is_the_plain_pass_rate() {
        for n in 1..8u64 {
            for c in 0..=n {
                close(pass_at_k(n, c, 1).unwrap(), c as f64 / n as f64);
            }
        }
    }

    #[test]
    fn mean_pass_at_k_skips_tasks_with_too_few_samples() {
        // (5, 2) → 0.7 at k = 2; (3, 0) → 0; (1, 1) has n < k and is left out.
        close(mean_pass_at_k(&[(5, 2), (3, 0), (1, 1)], 2).unwrap(), 0.35);
        assert_eq!(mean_pass_at_k(&[(1, 1)], 2), None);
        assert_eq!(mean_pass_at_k(&[], 1), None);
    }

    #[test]
    fn mcnemar_exact_matches_hand_computed_values() {
        // No discordant pairs: no evidence either way.
        close(mcnemar_exact(0, 0), 1.0);
        // One discordant pair: 2 · P[X ≤ 0] with n = 1 is 2 · 1/2 = 1.
        close(mcnemar_exact(1, 0), 1.0);
        // b = 0, c = 5: 2 · (1/2)^5 = 0.0625.
        close(mcnemar_exact(0, 5), 0.0625);
        close(mcnemar_exact(5, 0), 0.0625);
        // b = 1, c = 9: 2 · (C(10,0) + C(10,1)) / 2^10 = 2 · 11 / 1024.
        close(mcnemar_exact(1, 9), 22.0 / 1024.0);
        // b = 3, c = 3: symmetric, capped at 1.
        close(mcnemar_exact(3, 3), 1.0);
        // b = 2, c = 8: 2 · (1 + 10 + 45) / 1024 = 0.109375.
        close(mcnemar_exact(2, 8), 0.109_375);
        // Large counts stay finite: b = 0, c = 2000 underflows to 0, never NaN.
        let p = mcnemar_exact(0, 2000);
        assert!((0.0..1e-300).contains(&p), "{p}");
        // b = 40, c = 60 (R: binom.test(40, 100)$p.value = 0.05688793).
        assert!((mcnemar_exact(40, 60) - 0.056_887_93).abs() < 1e-7);
    }
}
