//! Comparing arms: the runs of two report folders (or of several arms of one) paired by task and
//! epoch, every flip (a run that passed on one side and not on the other), and per pair of arms
//! the paired statistics: pass-rate difference with a paired bootstrap interval (tasks resampled
//! whole, fixed seed), the exact McNemar p-value on the discordant pairs, and the differences in
//! edit-failure rate, tokens, cost and time.
//!
//! An *arm* is what a run was run with: provider, model and edit strategy. Across two folders,
//! arms are paired on the parts that vary within a side: two folders of one model each pair
//! whatever their models are called; two runs of the shipped suite (four providers each) with
//! different edit strategies pair provider with provider. Within one folder every pair of arms is
//! compared. A pair only counts when both runs count for pass rates (infrastructure errors and
//! skipped runs are left out, as everywhere).
//!
//! This module computes; `markdown`, `csv`, `html` and `terminal` views of a [`Comparison`] are
//! below. Reads run records only; depends on `scoring`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use crate::record::{Outcome, RunFile, RunRecord};
use crate::stats::{
    BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, Interval, PairedCluster, mcnemar_exact, paired_bootstrap,
};

use super::cells::{cell, outcome_label, table};
use super::summary::{UNKNOWN, fmt_cost, fmt_ratio};

/// What a run was run with.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Arm {
    pub provider: String,
    pub model: String,
    /// The edit strategy, when the run recorded it.
    pub strategy: Option<String>,
}

impl Arm {
    /// The arm of a record: its provider, model and edit strategy.
    pub fn of_record(r: &RunRecord) -> Arm {
        Arm {
            provider: r.provider.clone(),
            model: r.model.clone(),
            strategy: Some(r.edit_strategy.clone()),
        }
    }

    /// The arm of a run file: the record's provider, model and edit strategy (the file's, for a
    /// file written before records held it).
    pub fn of(file: &RunFile) -> Arm {
        let mut arm = Arm::of_record(&file.record);
        if let Some(s) = &file.edit_strategy {
            arm.strategy = Some(s.clone());
        }
        arm
    }

    /// `provider/model`, with ` (strategy)` when `with_strategy` and the strategy is known.
    pub fn label(&self, with_strategy: bool) -> String {
        match (&self.strategy, with_strategy) {
            (Some(s), true) => format!("{}/{} ({s})", self.provider, self.model),
            _ => format!("{}/{}", self.provider, self.model),
        }
    }
}

/// Whether arm labels need the strategy: when some two arms differ only by it.
pub fn strategies_differ<'a>(arms: impl IntoIterator<Item = &'a Arm>) -> bool {
    let arms: BTreeSet<&Arm> = arms.into_iter().collect();
    let without: BTreeSet<(&str, &str)> = arms
        .iter()
        .map(|a| (a.provider.as_str(), a.model.as_str()))
        .collect();
    without.len() < arms.len()
}

/// The run of one side of a comparison, with its arm.
pub type ArmRun<'a> = (Arm, &'a RunRecord);

/// The same task and epoch, run on both sides.
#[derive(Debug, Clone, Copy)]
pub struct RunPair<'a> {
    pub base: &'a RunRecord,
    pub new: &'a RunRecord,
}

impl RunPair<'_> {
    /// Whether both runs count in a comparison ([`RunRecord::counts_for_comparison`]).
    pub fn counts(&self) -> bool {
        self.base.counts_for_comparison() && self.new.counts_for_comparison()
    }

    /// The flip of a pair that counts: `Some` when exactly one side passed.
    pub fn flip(&self) -> Option<Flip> {
        if !self.counts() {
            return None;
        }
        match (passed(self.base), passed(self.new)) {
            (true, false) => Some(Flip::Regressed),
            (false, true) => Some(Flip::Fixed),
            _ => None,
        }
    }
}

/// Which way a run flipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flip {
    /// Passed on the base side, not on the new one.
    Regressed,
    /// Not passed on the base side, passed on the new one.
    Fixed,
}

impl Flip {
    /// `passed → failed` (with the new outcome's name), `failed → passed`.
    pub fn arrow(&self, pair: &RunPair<'_>) -> String {
        format!("{} → {}", outcome_label(pair.base), outcome_label(pair.new))
    }
}

/// The statistics of one pair of arms (or of all pairs pooled).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PairStats {
    /// Pairs where both runs count for pass rates.
    pub pairs: u64,
    /// Paired runs left out: an infrastructure error or a skipped run on either side.
    pub excluded: u64,
    pub base_passed: u64,
    pub new_passed: u64,
    /// Discordant pairs where only the base passed (`b` of McNemar's test).
    pub regressions: u64,
    /// Discordant pairs where only the new run passed (`c`).
    pub fixes: u64,
    /// The 95% paired bootstrap interval of `new − base` pass rate (tasks resampled whole).
    pub interval: Option<Interval>,
    /// The exact two-sided McNemar p-value on the discordant pairs.
    pub p_value: f64,
    pub base_edit_calls: u64,
    pub base_edit_failed: u64,
    pub new_edit_calls: u64,
    pub new_edit_failed: u64,
    pub base_tokens: u64,
    pub new_tokens: u64,
    /// Summed over the pairs priced on both sides, and how many those are.
    pub base_cost: f64,
    pub new_cost: f64,
    pub priced_pairs: u64,
    pub base_wall_seconds: f64,
    pub new_wall_seconds: f64,
    /// When a task of the pairs gives several attempts: the same statistics with "passed" read
    /// as "passed at attempt 1" (the fields above are at the last attempt).
    pub first_attempt: Option<Box<PairStats>>,
}

/// Whether a run passed (by its last attempt).
fn passed(r: &RunRecord) -> bool {
    r.outcome == Outcome::Passed
}

impl PairStats {
    fn of(pairs: &[RunPair<'_>]) -> PairStats {
        let mut stats = PairStats::of_with(pairs, passed);
        let attempts = pairs
            .iter()
            .any(|p| p.base.task_attempts > 1 || p.new.task_attempts > 1);
        if attempts {
            stats.first_attempt = Some(Box::new(PairStats::of_with(
                pairs,
                RunRecord::passed_first_attempt,
            )));
        }
        stats
    }

    /// The statistics of `pairs` with `passed` telling which runs passed.
    fn of_with(pairs: &[RunPair<'_>], passed: fn(&RunRecord) -> bool) -> PairStats {
        let mut s = PairStats::default();
        let mut clusters: BTreeMap<&str, PairedCluster> = BTreeMap::new();
        for pair in pairs {
            if !pair.counts() {
                s.excluded += 1;
                continue;
            }
            let (base, new) = (pair.base, pair.new);
            let base_ok = passed(base);
            let new_ok = passed(new);
            s.pairs += 1;
            s.base_passed += u64::from(base_ok);
            s.new_passed += u64::from(new_ok);
            match (base_ok, new_ok) {
                (true, false) => s.regressions += 1,
                (false, true) => s.fixes += 1,
                _ => {}
            }
            let cluster = clusters.entry(base.task_id.as_str()).or_default();
            cluster.pairs += 1;
            cluster.base_passed += u64::from(base_ok);
            cluster.new_passed += u64::from(new_ok);
            s.base_edit_calls += u64::from(base.edits.calls);
            s.base_edit_failed += u64::from(base.edits.calls_failed);
            s.new_edit_calls += u64::from(new.edits.calls);
            s.new_edit_failed += u64::from(new.edits.calls_failed);
            s.base_tokens += base.tokens.total;
            s.new_tokens += new.tokens.total;
            if let (Some(b), Some(n)) = (base.cost, new.cost) {
                s.base_cost += b;
                s.new_cost += n;
                s.priced_pairs += 1;
            }
            s.base_wall_seconds += base.wall_time.as_secs_f64();
            s.new_wall_seconds += new.wall_time.as_secs_f64();
        }
        let clusters: Vec<PairedCluster> = clusters.into_values().collect();
        s.interval = paired_bootstrap(&clusters, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, 0.95);
        s.p_value = mcnemar_exact(s.regressions, s.fixes);
        s
    }

    fn rate(part: u64, whole: u64) -> Option<f64> {
        (whole > 0).then(|| part as f64 / whole as f64)
    }

    pub fn base_rate(&self) -> Option<f64> {
        Self::rate(self.base_passed, self.pairs)
    }

    pub fn new_rate(&self) -> Option<f64> {
        Self::rate(self.new_passed, self.pairs)
    }

    /// `new − base` pass rate over the pairs.
    pub fn difference(&self) -> Option<f64> {
        Some(self.new_rate()? - self.base_rate()?)
    }

    pub fn base_edit_failure_rate(&self) -> Option<f64> {
        Self::rate(self.base_edit_failed, self.base_edit_calls)
    }

    pub fn new_edit_failure_rate(&self) -> Option<f64> {
        Self::rate(self.new_edit_failed, self.new_edit_calls)
    }

    /// `new − base` edit-failure rate; `None` unless both sides made edit calls.
    pub fn edit_failure_difference(&self) -> Option<f64> {
        Some(self.new_edit_failure_rate()? - self.base_edit_failure_rate()?)
    }

    /// Mean total tokens per run, (base, new).
    pub fn mean_tokens(&self) -> Option<(f64, f64)> {
        (self.pairs > 0).then(|| {
            let n = self.pairs as f64;
            (self.base_tokens as f64 / n, self.new_tokens as f64 / n)
        })
    }

    /// Mean cost per run over the pairs priced on both sides, (base, new).
    pub fn mean_cost(&self) -> Option<(f64, f64)> {
        (self.priced_pairs > 0).then(|| {
            let n = self.priced_pairs as f64;
            (self.base_cost / n, self.new_cost / n)
        })
    }

    /// Mean wall seconds per run, (base, new).
    pub fn mean_wall_seconds(&self) -> Option<(f64, f64)> {
        (self.pairs > 0).then(|| {
            let n = self.pairs as f64;
            (self.base_wall_seconds / n, self.new_wall_seconds / n)
        })
    }

    /// More runs passed → failed than failed → passed, with McNemar's p below `alpha`.
    pub fn significant_regression(&self, alpha: f64) -> bool {
        self.regressions > self.fixes && self.p_value < alpha
    }
}

/// One pair of arms compared (or, with `pooled`, every pair of arms at once).
#[derive(Debug, Clone)]
pub struct ArmComparison<'a> {
    pub base: Arm,
    pub new: Arm,
    /// The row that pools every pair of arms of a two-folder comparison.
    pub pooled: bool,
    /// Every paired run, by task and epoch.
    pub pairs: Vec<RunPair<'a>>,
    /// Runs of this pair of arms with no partner on the other side.
    pub unpaired_base: usize,
    pub unpaired_new: usize,
    pub stats: PairStats,
}

impl ArmComparison<'_> {
    /// `base → new`, or `all arms` for the pooled row.
    pub fn label(&self, with_strategy: bool) -> (String, String) {
        if self.pooled {
            ("all arms".to_owned(), "all arms".to_owned())
        } else {
            (
                self.base.label(with_strategy),
                self.new.label(with_strategy),
            )
        }
    }

    /// The pairs that flipped, in task and epoch order.
    pub fn flips(&self) -> impl Iterator<Item = (Flip, &RunPair<'_>)> {
        self.pairs.iter().filter_map(|p| p.flip().map(|f| (f, p)))
    }
}

/// What `harness compare` found.
#[derive(Debug, Clone)]
pub struct Comparison<'a> {
    /// One entry per pair of arms.
    pub arms: Vec<ArmComparison<'a>>,
    /// Every pair of arms pooled, when a two-folder comparison pairs more than one.
    pub pooled: Option<ArmComparison<'a>>,
    /// Whether labels show the edit strategy (some arms differ only by it).
    pub with_strategy: bool,
}

impl<'a> Comparison<'a> {
    /// The rows of the statistics tables: every pair of arms, then the pooled one.
    pub fn rows(&self) -> impl Iterator<Item = &ArmComparison<'a>> {
        self.arms.iter().chain(self.pooled.iter())
    }

    /// Every flip of every pair of arms (not repeated by the pooled row).
    pub fn flips(&self) -> impl Iterator<Item = (&ArmComparison<'a>, Flip, &RunPair<'a>)> {
        self.arms.iter().flat_map(|a| {
            a.pairs
                .iter()
                .filter_map(move |p| p.flip().map(|f| (a, f, p)))
        })
    }

    /// Whether a run that passed on the base side did not on the new one.
    pub fn any_regression_flip(&self) -> bool {
        self.flips().any(|(_, f, _)| f == Flip::Regressed)
    }

    /// Whether the pass rate dropped significantly in some pair of arms or all of them pooled.
    pub fn significant_regression(&self, alpha: f64) -> bool {
        self.rows().any(|a| a.stats.significant_regression(alpha))
    }
}

/// Pairs the runs of two sides by task and epoch, per pair of arms (see the module doc for how
/// arms pair across sides).
pub fn compare_sides<'a>(base: &[ArmRun<'a>], new: &[ArmRun<'a>]) -> Comparison<'a> {
    let base_arms: BTreeSet<&Arm> = base.iter().map(|(a, _)| a).collect();
    let new_arms: BTreeSet<&Arm> = new.iter().map(|(a, _)| a).collect();
    let by_provider = varies(&base_arms, &new_arms, |a| a.provider.clone());
    let by_model = varies(&base_arms, &new_arms, |a| a.model.clone());
    let by_strategy = varies(&base_arms, &new_arms, |a| a.strategy.clone());
    let key = |arm: &Arm| {
        (
            by_provider.then(|| arm.provider.clone()),
            by_model.then(|| arm.model.clone()),
            by_strategy.then(|| arm.strategy.clone()),
        )
    };
    let mut arms = Vec::new();
    for b in &base_arms {
        for n in new_arms.iter().filter(|n| key(n) == key(b)) {
            arms.push(compare_arms(b, n, base, new));
        }
    }
    let pooled = (arms.len() > 1).then(|| {
        let pairs: Vec<RunPair<'a>> = arms.iter().flat_map(|a| a.pairs.iter().copied()).collect();
        ArmComparison {
            base: arms[0].base.clone(),
            new: arms[0].new.clone(),
            pooled: true,
            stats: PairStats::of(&pairs),
            unpaired_base: arms.iter().map(|a| a.unpaired_base).sum(),
            unpaired_new: arms.iter().map(|a| a.unpaired_new).sum(),
            pairs,
        }
    });
    let with_strategy = strategies_differ(base_arms.iter().chain(&new_arms).copied());
    Comparison {
        arms,
        pooled,
        with_strategy,
    }
}

/// Whether some side has more than one value of `part` among its arms: the parts of an arm that
/// pair arms across sides.
fn varies<T: Ord>(base: &BTreeSet<&Arm>, new: &BTreeSet<&Arm>, part: impl Fn(&Arm) -> T) -> bool {
    let count = |arms: &BTreeSet<&Arm>| arms.iter().map(|a| part(a)).collect::<BTreeSet<T>>().len();
    count(base) > 1 || count(new) > 1
}

/// Every pair of arms of one side, each arm against every later one (arms in order).
pub fn compare_within<'a>(runs: &[ArmRun<'a>]) -> Comparison<'a> {
    let arms: Vec<&Arm> = runs
        .iter()
        .map(|(a, _)| a)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut out = Vec::new();
    for (i, base) in arms.iter().enumerate() {
        for new in &arms[i + 1..] {
            out.push(compare_arms(base, new, runs, runs));
        }
    }
    Comparison {
        arms: out,
        pooled: None,
        with_strategy: strategies_differ(arms.iter().copied()),
    }
}

fn compare_arms<'a>(
    base_arm: &Arm,
    new_arm: &Arm,
    base: &[ArmRun<'a>],
    new: &[ArmRun<'a>],
) -> ArmComparison<'a> {
    let side = |runs: &[ArmRun<'a>], arm: &Arm| -> BTreeMap<(String, u32), &'a RunRecord> {
        runs.iter()
            .filter(|(a, _)| a == arm)
            .map(|(_, r)| ((r.task_id.clone(), r.epoch), *r))
            .collect()
    };
    let b = side(base, base_arm);
    let n = side(new, new_arm);
    let pairs: Vec<RunPair<'a>> = b
        .iter()
        .filter_map(|(key, base)| n.get(key).map(|new| RunPair { base, new }))
        .collect();
    ArmComparison {
        base: base_arm.clone(),
        new: new_arm.clone(),
        pooled: false,
        stats: PairStats::of(&pairs),
        unpaired_base: b.len() - pairs.len(),
        unpaired_new: n.len() - pairs.len(),
        pairs,
    }
}

/// `+5.0 pp`, `-11.1 pp`; [`UNKNOWN`] for `None`.
pub fn points(x: Option<f64>) -> String {
    x.map(|x| format!("{:+.1} pp", x * 100.0))
        .unwrap_or_else(|| UNKNOWN.to_owned())
}

/// `[-33.3, +0.0] pp`; [`UNKNOWN`] for `None`.
pub fn points_interval(i: Option<Interval>) -> String {
    i.map(|i| format!("[{:+.1}, {:+.1}] pp", i.low * 100.0, i.high * 100.0))
        .unwrap_or_else(|| UNKNOWN.to_owned())
}

/// `0.125`, `1.000`, `3.1e-5` (three significant places below 0.001).
pub fn p_value(p: f64) -> String {
    if p >= 0.001 {
        format!("{p:.3}")
    } else {
        format!("{p:.1e}")
    }
}

/// `75.0% (6/8)`; [`UNKNOWN`] without a whole.
pub fn rate_with_n(part: u64, whole: u64) -> String {
    if whole == 0 {
        UNKNOWN.to_owned()
    } else {
        format!(
            "{:.1}% ({part}/{whole})",
            part as f64 / whole as f64 * 100.0
        )
    }
}

/// `new − base` of a (base, new) pair, signed, with `prefix` before and `suffix` after the number:
/// `+$0.001200`, `-1.25s`; [`UNKNOWN`] for `None`.
fn signed(x: Option<(f64, f64)>, decimals: usize, prefix: &str, suffix: &str) -> String {
    x.map(|(b, n)| {
        let d = n - b;
        let sign = if d < 0.0
            && format!("{:.decimals$}", d.abs())
                .bytes()
                .any(|c| c.is_ascii_digit() && c != b'0')
        {
            "-"
        } else {
            "+"
        };
        format!("{sign}{prefix}{:.decimals$}{suffix}", d.abs())
    })
    .unwrap_or_else(|| UNKNOWN.to_owned())
}

/// The cells of one statistics row, in [`STATS_HEADER`] order; with `timings`, the time column
/// too.
pub fn stats_cells(a: &ArmComparison<'_>, with_strategy: bool, timings: bool) -> Vec<String> {
    let s = &a.stats;
    let (base, new) = a.label(with_strategy);
    let mut row = vec![
        base,
        new,
        s.pairs.to_string(),
        rate_with_n(s.base_passed, s.pairs),
        rate_with_n(s.new_passed, s.pairs),
        points(s.difference()),
        points_interval(s.interval),
        s.regressions.to_string(),
        s.fixes.to_string(),
        p_value(s.p_value),
        points(s.edit_failure_difference()),
        signed(s.mean_tokens(), 0, "", ""),
        signed(s.mean_cost(), 6, "$", ""),
    ];
    if timings {
        row.push(signed(s.mean_wall_seconds(), 2, "", "s"));
    }
    row
}

/// The header of the statistics tables (without the time column).
pub const STATS_HEADER: [&str; 13] = [
    "base",
    "new",
    "pairs",
    "base pass rate",
    "new pass rate",
    "difference",
    "95% CI (paired bootstrap)",
    "passed → not",
    "not → passed",
    "McNemar p",
    "edit failure rate Δ",
    "tokens per run Δ",
    "cost per run Δ",
];

/// The cells of an arm pair's row at attempt 1, in [`FIRST_ATTEMPT_HEADER`] order; `None` when
/// no task of the pair gives more than one attempt.
pub fn first_attempt_cells(a: &ArmComparison<'_>, with_strategy: bool) -> Option<Vec<String>> {
    let s = a.stats.first_attempt.as_deref()?;
    let (base, new) = a.label(with_strategy);
    Some(vec![
        base,
        new,
        s.pairs.to_string(),
        rate_with_n(s.base_passed, s.pairs),
        rate_with_n(s.new_passed, s.pairs),
        points(s.difference()),
        points_interval(s.interval),
        s.regressions.to_string(),
        s.fixes.to_string(),
        p_value(s.p_value),
    ])
}

/// The header of the table at attempt 1.
pub const FIRST_ATTEMPT_HEADER: [&str; 10] = [
    "base",
    "new",
    "pairs",
    "base pass rate (attempt 1)",
    "new pass rate (attempt 1)",
    "difference",
    "95% CI (paired bootstrap)",
    "passed → not",
    "not → passed",
    "McNemar p",
];

/// The note under the table at attempt 1.
pub const FIRST_ATTEMPT_NOTE: &str = "The same pairs (task and epoch), each run read at its first attempt: passed means every check passed before the failing checks' output was sent back. The table above reads each run at its last attempt.";

/// The header of the time column.
pub const TIME_HEADER: &str = "time per run Δ";

/// The note under a statistics table.
pub const STATS_NOTE: &str = "Pairs: the same task and epoch run by both arms, both counting for pass rates (infrastructure errors and skipped runs are left out). Difference: new − base pass rate in percentage points, with a 95% paired bootstrap interval (10,000 resamples of whole tasks, fixed seed). McNemar p: exact two-sided test on the discordant pairs (passed → not, not → passed). Δ columns: new − base, per paired run.";

/// The statistics table and flip list as markdown, with a heading of `level` (`##`); links to
/// the runs come from `link(record, side)` (`None`: no link).
pub fn comparison_md(
    cmp: &Comparison<'_>,
    level: &str,
    timings: bool,
    link: &dyn Fn(&RunRecord, Side) -> Option<String>,
) -> String {
    let mut out = String::new();
    let mut header: Vec<&str> = STATS_HEADER.to_vec();
    if timings {
        header.push(TIME_HEADER);
    }
    let rows: Vec<Vec<String>> = cmp
        .rows()
        .map(|a| stats_cells(a, cmp.with_strategy, timings))
        .collect();
    table(&mut out, &header, &rows);
    let _ = writeln!(out, "\n{STATS_NOTE}");
    let first: Vec<Vec<String>> = cmp
        .rows()
        .filter_map(|a| first_attempt_cells(a, cmp.with_strategy))
        .collect();
    if !first.is_empty() {
        let _ = writeln!(out, "\n{level} At attempt 1\n");
        table(&mut out, &FIRST_ATTEMPT_HEADER, &first);
        let _ = writeln!(out, "\n{FIRST_ATTEMPT_NOTE}");
    }
    let excluded: u64 = cmp.arms.iter().map(|a| a.stats.excluded).sum();
    let unpaired: usize = cmp
        .arms
        .iter()
        .map(|a| a.unpaired_base + a.unpaired_new)
        .sum();
    if excluded > 0 || unpaired > 0 {
        let _ = writeln!(
            out,
            "\n{excluded} paired run(s) left out (an infrastructure error or a skipped run on a side); {unpaired} run(s) without a partner on the other side."
        );
    }
    let flips: Vec<_> = cmp.flips().collect();
    let _ = writeln!(out, "\n{level} Flips\n");
    if flips.is_empty() {
        let _ = writeln!(out, "No run flipped.");
        return out;
    }
    let regressed = flips
        .iter()
        .filter(|(_, f, _)| *f == Flip::Regressed)
        .count();
    let _ = writeln!(
        out,
        "{} run(s) flipped: {regressed} passed → not passed, {} not passed → passed.\n",
        flips.len(),
        flips.len() - regressed
    );
    let linked = |record: &RunRecord, side: Side, text: &str| match link(record, side) {
        Some(url) => format!("[{}]({url})", cell(text)),
        None => cell(text),
    };
    let mut rows = Vec::new();
    for (arm, flip, pair) in &flips {
        let (base, new) = arm.label(cmp.with_strategy);
        rows.push(vec![
            pair.base.task_id.clone(),
            pair.base.epoch.to_string(),
            base,
            new,
            flip.arrow(pair),
            linked(pair.base, Side::Base, "base"),
            linked(pair.new, Side::New, "new"),
            pair.new.reason.clone(),
        ]);
    }
    // The link cells are markdown already: escape the rest only.
    let _ = writeln!(
        out,
        "| task | epoch | base | new | outcome | base run | new run | new reason |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|---|");
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(i, c)| if i == 5 || i == 6 { c.clone() } else { cell(c) })
            .collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    out
}

/// Which side of a comparison a run is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Base,
    New,
}

/// The columns of `compare.csv`, in order.
pub const CSV_COLUMNS: [&str; 27] = [
    "base_provider",
    "base_model",
    "base_strategy",
    "new_provider",
    "new_model",
    "new_strategy",
    "pooled",
    "pairs",
    "excluded",
    "base_passed",
    "new_passed",
    "base_pass_rate",
    "new_pass_rate",
    "difference",
    "difference_low",
    "difference_high",
    "passed_to_not",
    "not_to_passed",
    "mcnemar_p",
    "base_edit_failure_rate",
    "new_edit_failure_rate",
    "base_mean_tokens",
    "new_mean_tokens",
    "base_mean_cost_usd",
    "new_mean_cost_usd",
    "base_mean_wall_seconds",
    "new_mean_wall_seconds",
];

/// `compare.csv`: one row per pair of arms (and the pooled row), then a `flips` column of
/// `task#epoch` keys.
pub fn comparison_csv(cmp: &Comparison<'_>) -> Result<String, ::csv::Error> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    let mut header = CSV_COLUMNS.to_vec();
    header.push("flips");
    w.write_record(&header)?;
    for a in cmp.rows() {
        let s = &a.stats;
        let arm = |arm: &Arm| {
            if a.pooled {
                [String::new(), String::new(), String::new()]
            } else {
                [
                    arm.provider.clone(),
                    arm.model.clone(),
                    arm.strategy.clone().unwrap_or_default(),
                ]
            }
        };
        let mut row: Vec<String> = Vec::new();
        row.extend(arm(&a.base));
        row.extend(arm(&a.new));
        let f1 = |x: Option<f64>, d: usize| x.map(|x| format!("{x:.d$}")).unwrap_or_default();
        row.extend([
            a.pooled.to_string(),
            s.pairs.to_string(),
            s.excluded.to_string(),
            s.base_passed.to_string(),
            s.new_passed.to_string(),
            fmt_ratio(s.base_rate()),
            fmt_ratio(s.new_rate()),
            fmt_ratio(s.difference()),
            fmt_ratio(s.interval.map(|i| i.low)),
            fmt_ratio(s.interval.map(|i| i.high)),
            s.regressions.to_string(),
            s.fixes.to_string(),
            format!("{:.6}", s.p_value),
            fmt_ratio(s.base_edit_failure_rate()),
            fmt_ratio(s.new_edit_failure_rate()),
            f1(s.mean_tokens().map(|t| t.0), 1),
            f1(s.mean_tokens().map(|t| t.1), 1),
            fmt_cost(s.mean_cost().map(|c| c.0)),
            fmt_cost(s.mean_cost().map(|c| c.1)),
            f1(s.mean_wall_seconds().map(|t| t.0), 3),
            f1(s.mean_wall_seconds().map(|t| t.1), 3),
        ]);
        let flips: Vec<String> = a
            .flips()
            .map(|(_, p)| format!("{}#{}", p.base.task_id, p.base.epoch))
            .collect();
        row.push(flips.join(";"));
        w.write_record(&row)?;
    }
    super::csv::finish(w)
}

#[cfg(test)]
mod tests;
