//! Statistics over repeated runs: the Wilson score interval of a pass rate, its standard error
//! clustered by task, the unbiased pass@k estimator of the Codex paper (Chen et al. 2021,
//! "Evaluating Large Language Models Trained on Code") and pass^k beside it (Yao et al. 2024,
//! "τ-bench"), and for two arms run on the same tasks: the exact McNemar test on the discordant
//! pairs, the standard error of a difference of paired proportions, and a paired (cluster)
//! bootstrap interval with a fixed seed.
//!
//! Every formula is tested against a published worked example where one exists (the tests cite
//! it). Plain arithmetic on counts; depends on nothing else in the crate.

/// The normal quantile for a two-sided 95% interval.
pub const Z_95: f64 = 1.959_963_984_540_054;

/// A closed interval of proportions (both ends in `[0, 1]`) or of differences of proportions
/// (both ends in `[-1, 1]`).
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

/// The unbiased estimate of pass^k from `n` samples of which `c` passed: `C(c, k) / C(n, k)`, the
/// chance that all of `k` samples drawn without replacement from the `n` pass (τ-bench's measure
/// of consistency: pass@k asks for one success in k tries, pass^k for k out of k).
///
/// `None` when it is not defined: `k == 0`, `n < k`, or `c > n`. Computed as the product
/// `Π_{i=0}^{k-1} (c - i) / (n - i)`.
pub fn pass_hat_k(n: u64, c: u64, k: u64) -> Option<f64> {
    if k == 0 || n < k || c > n {
        return None;
    }
    if c < k {
        return Some(0.0);
    }
    Some((0..k).map(|i| (c - i) as f64 / (n - i) as f64).product())
}

/// The mean of pass^k over tasks, each given as `(n, c)`; tasks with fewer than `k` samples are
/// left out. `None` when no task has it defined.
pub fn mean_pass_hat_k(tasks: &[(u64, u64)], k: u64) -> Option<f64> {
    let values: Vec<f64> = tasks
        .iter()
        .filter_map(|&(n, c)| pass_hat_k(n, c, k))
        .collect();
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// The standard error of a pass rate whose runs come in clusters (the epochs of one task), each
/// given as `(runs, passed)`: the cluster-robust ("sandwich") estimate
/// `sqrt(Σ_c (s_c − n_c·p̂)²) / N`, where `p̂` is the overall rate and `N` the number of runs.
///
/// Runs of the same task are not independent (a hard task fails every epoch), so the plain
/// `sqrt(p̂(1−p̂)/N)` understates the uncertainty when epochs repeat tasks; with one run per task
/// the two agree. This is the clustered standard error of Miller 2024 ("Adding Error Bars to
/// Evals", arXiv:2411.00640, section 2.3), without a small-sample correction. `None` without runs.
pub fn clustered_standard_error(clusters: &[(u64, u64)]) -> Option<f64> {
    let runs: u64 = clusters.iter().map(|(n, _)| n).sum();
    if runs == 0 || clusters.iter().any(|(n, s)| s > n) {
        return None;
    }
    let passed: u64 = clusters.iter().map(|(_, s)| s).sum();
    let p = passed as f64 / runs as f64;
    let sum: f64 = clusters
        .iter()
        .map(|&(n, s)| {
            let residual = s as f64 - n as f64 * p;
            residual * residual
        })
        .sum();
    Some(sum.sqrt() / runs as f64)
}

/// The standard error of the difference of two paired proportions (new − base) from `b` pairs
/// where only the base passed, `c` pairs where only the new one did, out of `n` pairs:
/// `sqrt((b + c) − (c − b)² / n) / n` (Agresti, "An Introduction to Categorical Data Analysis",
/// 2nd ed., section 8.1.1). `None` without pairs.
pub fn paired_difference_standard_error(b: u64, c: u64, n: u64) -> Option<f64> {
    if n == 0 || b + c > n {
        return None;
    }
    let (b, c, n) = (b as f64, c as f64, n as f64);
    Some(((b + c) - (c - b) * (c - b) / n).max(0.0).sqrt() / n)
}

/// The outcomes of one cluster of pairs (the epochs of one task, run by both arms).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PairedCluster {
    /// Pairs in the cluster.
    pub pairs: u64,
    /// Pairs whose base run passed.
    pub base_passed: u64,
    /// Pairs whose new run passed.
    pub new_passed: u64,
}

/// The seed the reports use, so the same runs always give the same interval.
pub const BOOTSTRAP_SEED: u64 = 0x5EED_2024_0B0E_7A11;

/// How many resamples the reports draw.
pub const BOOTSTRAP_RESAMPLES: u32 = 10_000;

/// A percentile bootstrap interval, at `level` (0.95 for 95%), of the difference of pass rates
/// (new − base) over paired runs, resampling whole clusters (tasks) with replacement so that the
/// epochs of a task stay together (with one epoch this is the ordinary paired bootstrap).
/// Deterministic for a given `seed`. `None` without pairs or resamples.
pub fn paired_bootstrap(
    clusters: &[PairedCluster],
    resamples: u32,
    seed: u64,
    level: f64,
) -> Option<Interval> {
    let clusters: Vec<PairedCluster> = clusters.iter().copied().filter(|c| c.pairs > 0).collect();
    if clusters.is_empty() || resamples == 0 {
        return None;
    }
    let mut rng = SplitMix64(seed);
    let g = clusters.len() as u64;
    let mut diffs: Vec<f64> = (0..resamples)
        .map(|_| {
            let (mut pairs, mut delta) = (0u64, 0i64);
            for _ in 0..g {
                let c = clusters[rng.below(g) as usize];
                pairs += c.pairs;
                delta += c.new_passed as i64 - c.base_passed as i64;
            }
            delta as f64 / pairs as f64
        })
        .collect();
    diffs.sort_by(f64::total_cmp);
    let tail = (1.0 - level) / 2.0;
    Some(Interval {
        low: quantile(&diffs, tail),
        high: quantile(&diffs, 1.0 - tail),
    })
}

/// The `q`-quantile of sorted `values`, interpolating linearly between order statistics (R's
/// default, type 7).
fn quantile(values: &[f64], q: f64) -> f64 {
    let position = q.clamp(0.0, 1.0) * (values.len() - 1) as f64;
    let below = position.floor() as usize;
    let above = position.ceil() as usize;
    let weight = position - below as f64;
    values[below] * (1.0 - weight) + values[above] * weight
}

/// SplitMix64 (Steele, Lea and Flood 2014): a small, fast generator whose output depends on
/// nothing but the seed, so bootstrap intervals stay the same across dependency upgrades.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (Lemire's multiply-shift; the bias is below 2^-32 for our `n`).
    fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }
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

    #[test]
    fn wilson_matches_newcombe_1998() {
        // Newcombe, "Two-sided confidence intervals for the single proportion: comparison of
        // seven methods", Statistics in Medicine 17 (1998), Table II, method 3 (score interval
        // without continuity correction): 81/263, 15/148, 0/20 and 1/29.
        for (s, n, low, high) in [
            (81, 263, 0.2553, 0.3662),
            (15, 148, 0.0624, 0.1605),
            (0, 20, 0.0, 0.1611),
            (1, 29, 0.0061, 0.1718),
        ] {
            let i = wilson_interval(s, n, Z_95).unwrap();
            assert!((i.low - low).abs() < 5e-5, "{s}/{n}: {i:?}");
            assert!((i.high - high).abs() < 5e-5, "{s}/{n}: {i:?}");
        }
    }

    /// `C(n, k)` exactly, for the small cases the estimators are checked against.
    fn choose(n: u64, k: u64) -> u128 {
        if k > n {
            return 0;
        }
        (0..k).fold(1u128, |acc, i| acc * u128::from(n - i) / u128::from(i + 1))
    }

    #[test]
    fn pass_at_k_and_pass_hat_k_match_their_definitions_exactly() {
        // Chen et al. 2021, equation (1): pass@k = E[1 − C(n−c, k) / C(n, k)]; Yao et al. 2024
        // (τ-bench), section 5: pass^k = E[C(c, k) / C(n, k)]. Neither paper gives worked
        // numbers, so every case up to n = 12 is checked against the exact binomial ratios.
        for n in 1..=12u64 {
            for c in 0..=n {
                for k in 1..=n {
                    let total = choose(n, k) as f64;
                    let at = 1.0 - choose(n - c, k) as f64 / total;
                    let hat = choose(c, k) as f64 / total;
                    close(pass_at_k(n, c, k).unwrap(), at);
                    close(pass_hat_k(n, c, k).unwrap(), hat);
                }
            }
        }
    }

    #[test]
    fn pass_hat_k_by_hand_and_at_the_edges() {
        // n = 5, c = 3: k = 1 is the pass rate; k = 2: C(3,2)/C(5,2) = 3/10; k = 4: C(3,4) = 0.
        close(pass_hat_k(5, 3, 1).unwrap(), 0.6);
        close(pass_hat_k(5, 3, 2).unwrap(), 0.3);
        close(pass_hat_k(5, 3, 4).unwrap(), 0.0);
        close(pass_hat_k(5, 5, 5).unwrap(), 1.0);
        assert_eq!(pass_hat_k(2, 1, 3), None, "n < k");
        assert_eq!(pass_hat_k(5, 2, 0), None);
        assert_eq!(pass_hat_k(2, 3, 1), None, "c > n");
        // pass^k never exceeds pass@k, and they meet at k = 1.
        assert!(pass_hat_k(5, 3, 2).unwrap() <= pass_at_k(5, 3, 2).unwrap());
        // (5, 3) → 0.3 and (4, 4) → 1 at k = 2; (1, 1) has too few samples.
        close(mean_pass_hat_k(&[(5, 3), (4, 4), (1, 1)], 2).unwrap(), 0.65);
        assert_eq!(mean_pass_hat_k(&[(1, 1)], 2), None);
    }

    #[test]
    fn clustered_standard_error_by_hand() {
        // One run per task: the plain standard error sqrt(p(1−p)/N), here p = 3/5.
        let singles = [(1, 1), (1, 1), (1, 1), (1, 0), (1, 0)];
        close(
            clustered_standard_error(&singles).unwrap(),
            (0.6f64 * 0.4 / 5.0).sqrt(),
        );
        // Two tasks of three epochs, one always passing, one never: p = 1/2 and every run of a
        // task agrees, so the clusters count as two observations, not six:
        // residuals 3 − 1.5 and 0 − 1.5, sqrt(2 · 2.25) / 6 = 0.353553.
        let agreeing = [(3, 3), (3, 0)];
        close(
            clustered_standard_error(&agreeing).unwrap(),
            4.5f64.sqrt() / 6.0,
        );
        // ... which is the standard error of the two task means (1 and 0) with G in the
        // denominator, sqrt(Σ (y − ȳ)²) / G, and more than the naive sqrt(p(1−p)/6) = 0.204124.
        close(4.5f64.sqrt() / 6.0, (0.25f64 + 0.25).sqrt() / 2.0);
        assert!(clustered_standard_error(&agreeing).unwrap() > (0.25f64 / 6.0).sqrt());
        // Epochs that disagree within every task carry the most information: residuals 0.
        close(clustered_standard_error(&[(2, 1), (2, 1)]).unwrap(), 0.0);
        assert_eq!(clustered_standard_error(&[]), None);
        assert_eq!(clustered_standard_error(&[(1, 2)]), None);
    }

    #[test]
    fn mcnemar_exact_matches_fagerland_2013() {
        // Fagerland, Lydersen and Laake, "The McNemar test for binary matched-pairs data: mid-p
        // and asymptotic are better than exact conditional", BMC Medical Research Methodology 13
        // (2013) 91: airway hyper-responsiveness before and after stem cell transplantation,
        // 21 pairs of which 1 and 7 discordant; the exact conditional p-value is 0.070
        // (2 · (C(8,0) + C(8,1)) / 2^8 = 18/256).
        close(mcnemar_exact(1, 7), 18.0 / 256.0);
        assert!((mcnemar_exact(1, 7) - 0.070).abs() < 5e-4);
    }

    /// Agresti, "An Introduction to Categorical Data Analysis", 2nd ed. (2007), Table 8.1:
    /// approval of the Prime Minister's performance in two surveys of the same 1600 people:
    /// 794 approve both times, 150 approve then disapprove, 86 disapprove then approve, 570
    /// disapprove both times. Section 8.1.1: 0.59 and 0.55 approve, the difference 0.04 has
    /// standard error 0.0095 and the 95% interval (0.02, 0.06).
    fn prime_minister() -> (u64, u64, u64) {
        // As "base" the first survey, as "new" the second: b = 150, c = 86.
        (150, 86, 1600)
    }

    #[test]
    fn paired_difference_standard_error_matches_agresti() {
        let (b, c, n) = prime_minister();
        let se = paired_difference_standard_error(b, c, n).unwrap();
        assert!((se - 0.0095).abs() < 5e-5, "{se}");
        assert_eq!(paired_difference_standard_error(0, 0, 0), None);
        close(paired_difference_standard_error(0, 0, 10).unwrap(), 0.0);
    }

    #[test]
    fn paired_bootstrap_reproduces_agresti_and_is_deterministic() {
        let (b, c, n) = prime_minister();
        // Each person is a cluster of one pair.
        let mut clusters = Vec::new();
        clusters.extend((0..794).map(|_| PairedCluster {
            pairs: 1,
            base_passed: 1,
            new_passed: 1,
        }));
        clusters.extend((0..b).map(|_| PairedCluster {
            pairs: 1,
            base_passed: 1,
            new_passed: 0,
        }));
        clusters.extend((0..c).map(|_| PairedCluster {
            pairs: 1,
            base_passed: 0,
            new_passed: 1,
        }));
        clusters.extend((0..570).map(|_| PairedCluster {
            pairs: 1,
            base_passed: 0,
            new_passed: 0,
        }));
        assert_eq!(clusters.len() as u64, n);
        let i = paired_bootstrap(&clusters, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, 0.95).unwrap();
        // new − base = −0.04; Agresti's Wald interval is −0.04 ± 1.96 · 0.0095 = (−0.0586,
        // −0.0214). The bootstrap agrees to within its Monte Carlo error.
        assert!((i.low + 0.0586).abs() < 0.002, "{i:?}");
        assert!((i.high + 0.0214).abs() < 0.002, "{i:?}");
        assert_eq!(
            paired_bootstrap(&clusters, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, 0.95),
            Some(i),
            "the same seed gives the same interval"
        );
        assert_ne!(
            paired_bootstrap(&clusters, 2_000, 7, 0.95),
            Some(i),
            "another seed draws other resamples"
        );
    }

    #[test]
    fn paired_bootstrap_keeps_clusters_together_and_handles_the_edges() {
        assert_eq!(paired_bootstrap(&[], 100, 1, 0.95), None);
        let same = [PairedCluster {
            pairs: 3,
            base_passed: 2,
            new_passed: 2,
        }; 4];
        let i = paired_bootstrap(&same, 500, 1, 0.95).unwrap();
        assert_eq!((i.low, i.high), (0.0, 0.0), "no discordant pair, no spread");
        // One task flipped in all three epochs, five unchanged: the observed difference −3/18
        // lies inside the interval, which stays within [−1, 0] (a resample of six tasks holds
        // the flipped one between zero and six times).
        let mut clusters = vec![PairedCluster {
            pairs: 3,
            base_passed: 3,
            new_passed: 0,
        }];
        clusters.extend(
            [PairedCluster {
                pairs: 3,
                base_passed: 1,
                new_passed: 1,
            }; 5],
        );
        // 2001 resamples put both 2.5% and 97.5% exactly on an order statistic.
        let i = paired_bootstrap(&clusters, 2_001, BOOTSTRAP_SEED, 0.95).unwrap();
        assert!(i.low < -3.0 / 18.0 && -3.0 / 18.0 <= i.high, "{i:?}");
        assert!(i.low >= -1.0 && i.high <= 0.0, "{i:?}");
        // Every resampled difference is a whole number of flipped tasks (3/18 each): the epochs
        // of a task were drawn together, never one by one (which would give steps of 1/18).
        let step = 3.0 / 18.0;
        for end in [i.low, i.high] {
            assert!(((end / step) - (end / step).round()).abs() < 1e-9, "{i:?}");
        }
    }

    #[test]
    fn quantiles_interpolate_between_order_statistics() {
        let v = [1.0, 2.0, 3.0, 4.0];
        close(quantile(&v, 0.0), 1.0);
        close(quantile(&v, 1.0), 4.0);
        close(quantile(&v, 0.5), 2.5);
        close(quantile(&[7.0], 0.3), 7.0);
    }
}
