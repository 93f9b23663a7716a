//! What the summaries say of each arm (provider, model and edit strategy): runs by outcome, the
//! pass rate and its interval, pass@k and pass^k, edit outcomes, tokens, cost and time
//! ([`ModelSummary`]), the order reports list runs in ([`sorted`]), and how each figure is
//! written.

use std::collections::BTreeMap;

use crate::record::{Outcome, RunRecord};
use crate::stats::{
    Interval, Z_95, clustered_standard_error, mean_pass_at_k, mean_pass_hat_k, wilson_interval,
};

/// Records in report order: task, provider, model, edit strategy (the default first), epoch.
pub fn sorted(records: &[RunRecord]) -> Vec<&RunRecord> {
    let mut out: Vec<&RunRecord> = records.iter().collect();
    out.sort_by(|a, b| run_order(a).cmp(&run_order(b)));
    out
}

/// The sort key of report order.
pub(crate) fn run_order(r: &RunRecord) -> (&str, &str, &str, bool, &str, u32) {
    (
        &r.task_id,
        &r.provider,
        &r.model,
        r.edit_strategy != crate::record::DEFAULT_EDIT_STRATEGY,
        &r.edit_strategy,
        r.epoch,
    )
}

/// Aggregates of the runs of one arm: provider, model and edit strategy.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelSummary {
    pub provider: String,
    pub model: String,
    /// The edit strategy of the arm.
    pub strategy: String,
    /// Every run, skipped ones and infrastructure errors included.
    pub runs: u32,
    /// Runs per outcome.
    pub outcomes: BTreeMap<Outcome, u32>,
    /// `error` runs that failed for the infrastructure, not the model
    /// ([`RunRecord::is_infrastructure_error`]); also counted in `outcomes[Error]`.
    pub infra_errors: u32,
    /// Runs that count in pass rates ([`RunRecord::counts_for_pass_rate`]).
    pub counted: u32,
    /// Replays that reached a verdict although their conversation drifted from the cassette
    /// ([`RunRecord::is_drifted`]; `--on-divergence continue`), left out of pass rates.
    pub drifted: u32,
    /// Replays whose outcome is not the one their cassette recorded.
    pub outcomes_changed: u32,
    /// Per task: (runs that count, of which passed).
    pub tasks: BTreeMap<String, (u64, u64)>,
    /// Runs that count and passed at their first attempt (all passed runs of tasks of one
    /// attempt).
    pub passed_first_attempt: u64,
    /// The most attempts a task of the arm gives (`attempts:`): the N of "at attempt N".
    pub task_attempts: u32,
    /// The highest epoch seen: the `k` of pass@k.
    pub epochs: u32,
    /// Requests the retry layer sent again, all runs.
    pub retries: u64,
    /// Requests sent, retries included, all runs.
    pub attempts: u64,
    pub turns: u64,
    pub tool_calls: u64,
    pub edit_calls: u64,
    pub edit_calls_exact: u64,
    pub edit_calls_fuzzy: u64,
    pub edit_calls_failed: u64,
    pub edits_exact: u64,
    pub edits_fuzzy: u64,
    pub edit_failures: BTreeMap<String, u64>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    pub total_tokens: u64,
    /// Sum over the runs that have a cost; `None` when none has (unknown price).
    pub cost: Option<f64>,
    pub wall_seconds: f64,
}

impl ModelSummary {
    /// The model, with the edit strategy in brackets when it is not the default
    /// (`claude-sonnet-4-5 [exact]`): the arm as the summaries show it.
    pub fn model_label(&self) -> String {
        if self.strategy.is_empty() || self.strategy == crate::record::DEFAULT_EDIT_STRATEGY {
            self.model.clone()
        } else {
            format!("{} [{}]", self.model, self.strategy)
        }
    }

    pub fn count(&self, outcome: Outcome) -> u32 {
        self.outcomes.get(&outcome).copied().unwrap_or(0)
    }

    /// Passed runs among the runs that count.
    pub fn counted_passed(&self) -> u64 {
        self.tasks.values().map(|(_, passed)| passed).sum()
    }

    /// Passed runs over the runs that count (infrastructure errors, skipped, diverged and
    /// drifted runs left out); `None` when no run counts.
    pub fn pass_rate(&self) -> Option<f64> {
        (self.counted > 0).then(|| self.counted_passed() as f64 / f64::from(self.counted))
    }

    /// The 95% Wilson score interval of [`ModelSummary::pass_rate`].
    pub fn pass_rate_interval(&self) -> Option<Interval> {
        wilson_interval(self.counted_passed(), u64::from(self.counted), Z_95)
    }

    /// pass@1 averaged over tasks (each task weighs the same, whatever its run count).
    pub fn pass_at_1(&self) -> Option<f64> {
        self.pass_at(1)
    }

    /// The `k` of [`ModelSummary::pass_at_k`]: the number of epochs, when more than one.
    pub fn k(&self) -> Option<u32> {
        (self.epochs > 1).then_some(self.epochs)
    }

    /// pass@k for k = the number of epochs, averaged over the tasks with at least k runs that
    /// count; `None` with a single epoch or when no task has k such runs.
    pub fn pass_at_k(&self) -> Option<f64> {
        self.k().and_then(|k| self.pass_at(k))
    }

    /// With more than one epoch: (tasks pass@k is averaged over, tasks with a run that counts).
    /// The first is smaller when infrastructure errors or skipped runs leave a task with fewer
    /// than k runs that count.
    pub fn pass_at_k_tasks(&self) -> Option<(usize, usize)> {
        let k = u64::from(self.k()?);
        let covered = self.tasks.values().filter(|(n, _)| *n >= k).count();
        Some((covered, self.tasks.len()))
    }

    /// pass@`k` by the unbiased estimator, averaged over the tasks with at least `k` runs that
    /// count.
    pub fn pass_at(&self, k: u32) -> Option<f64> {
        let tasks: Vec<(u64, u64)> = self.tasks.values().copied().collect();
        mean_pass_at_k(&tasks, u64::from(k))
    }

    /// pass^k for k = the number of epochs (every one of k runs of a task passes), averaged over
    /// the tasks with at least k runs that count; `None` with a single epoch.
    pub fn pass_hat_k(&self) -> Option<f64> {
        let k = self.k()?;
        let tasks: Vec<(u64, u64)> = self.tasks.values().copied().collect();
        mean_pass_hat_k(&tasks, u64::from(k))
    }

    /// The standard error of [`ModelSummary::pass_rate`], clustered by task (the epochs of a
    /// task are not independent); with one run per task it is the plain one.
    pub fn pass_rate_se(&self) -> Option<f64> {
        let tasks: Vec<(u64, u64)> = self.tasks.values().copied().collect();
        clustered_standard_error(&tasks)
    }

    /// Whether a task of the arm gives more than one attempt: then the pass rate at attempt 1
    /// is shown beside the pass rate, which is the rate at the last attempt.
    pub fn has_attempts(&self) -> bool {
        self.task_attempts > 1
    }

    /// Runs passed at their first attempt over the runs that count; `None` when none counts.
    pub fn first_attempt_pass_rate(&self) -> Option<f64> {
        (self.counted > 0).then(|| self.passed_first_attempt as f64 / f64::from(self.counted))
    }

    /// The 95% Wilson score interval of [`ModelSummary::first_attempt_pass_rate`].
    pub fn first_attempt_interval(&self) -> Option<Interval> {
        wilson_interval(self.passed_first_attempt, u64::from(self.counted), Z_95)
    }

    /// Runs that were started: every run but the skipped ones.
    pub fn started(&self) -> u32 {
        self.runs - self.count(Outcome::Skipped)
    }

    /// Mean model replies per started run.
    pub fn mean_turns(&self) -> Option<f64> {
        (self.started() > 0).then(|| self.turns as f64 / f64::from(self.started()))
    }

    /// Failed edit calls over edit calls; `None` without edit calls.
    pub fn edit_failure_rate(&self) -> Option<f64> {
        (self.edit_calls > 0).then(|| self.edit_calls_failed as f64 / self.edit_calls as f64)
    }

    /// Mean wall time per started run.
    pub fn mean_wall_seconds(&self) -> Option<f64> {
        (self.started() > 0).then(|| self.wall_seconds / f64::from(self.started()))
    }

    pub(crate) fn add(&mut self, r: &RunRecord) {
        self.runs += 1;
        *self.outcomes.entry(r.outcome).or_default() += 1;
        if r.is_infrastructure_error() {
            self.infra_errors += 1;
        }
        if r.is_drifted() {
            self.drifted += 1;
        }
        if r.outcome_change == Some(crate::record::OutcomeChange::Changed) {
            self.outcomes_changed += 1;
        }
        if r.counts_for_pass_rate() {
            self.counted += 1;
            let task = self.tasks.entry(r.task_id.clone()).or_default();
            task.0 += 1;
            task.1 += u64::from(r.outcome == Outcome::Passed);
            self.passed_first_attempt += u64::from(r.passed_first_attempt());
        }
        self.task_attempts = self.task_attempts.max(r.task_attempts);
        self.epochs = self.epochs.max(r.epoch);
        self.retries += u64::from(r.retries);
        self.attempts += u64::from(r.attempts);
        self.turns += u64::from(r.turns);
        self.tool_calls += u64::from(r.tool_call_count());
        self.edit_calls += u64::from(r.edits.calls);
        self.edit_calls_exact += u64::from(r.edits.calls_exact);
        self.edit_calls_fuzzy += u64::from(r.edits.calls_fuzzy);
        self.edit_calls_failed += u64::from(r.edits.calls_failed);
        self.edits_exact += u64::from(r.edits.edits_exact);
        self.edits_fuzzy += u64::from(r.edits.edits_fuzzy);
        for (kind, n) in &r.edits.failures {
            *self.edit_failures.entry(kind.clone()).or_default() += u64::from(*n);
        }
        self.input_tokens += r.tokens.input;
        self.output_tokens += r.tokens.output;
        self.cache_read_tokens += r.tokens.cache_read;
        self.cache_write_tokens += r.tokens.cache_write;
        self.total_tokens += r.tokens.total;
        if let Some(cost) = r.cost {
            self.cost = Some(self.cost.unwrap_or(0.0) + cost);
        }
        self.wall_seconds += r.wall_time.as_secs_f64();
    }
}

/// One summary per provider and model, sorted by provider then model.
pub fn summarise(records: &[&RunRecord]) -> Vec<ModelSummary> {
    let mut by: BTreeMap<(String, String, bool, String), ModelSummary> = BTreeMap::new();
    for r in records {
        // The default strategy's arm first, then the others by name.
        by.entry((
            r.provider.clone(),
            r.model.clone(),
            r.edit_strategy != crate::record::DEFAULT_EDIT_STRATEGY,
            r.edit_strategy.clone(),
        ))
        .or_insert_with(|| ModelSummary {
            provider: r.provider.clone(),
            model: r.model.clone(),
            strategy: r.edit_strategy.clone(),
            ..ModelSummary::default()
        })
        .add(r);
    }
    by.into_values().collect()
}

/// Per tag, in tag order, the summary of each arm over the runs of tasks with that tag: the
/// leaderboard's per-language view of an imported suite (`[python, exercism]`). A run counts
/// under each of its tags.
pub fn summarise_by_tag<'a>(records: &[&'a RunRecord]) -> Vec<(String, Vec<ModelSummary>)> {
    let mut by: BTreeMap<&str, Vec<&'a RunRecord>> = BTreeMap::new();
    for r in records {
        for tag in &r.tags {
            by.entry(tag.as_str()).or_default().push(r);
        }
    }
    by.into_iter()
        .map(|(tag, runs)| (tag.to_owned(), summarise(&runs)))
        .collect()
}

/// Whether any arm has a task of more than one attempt.
pub(crate) fn any_attempts(summaries: &[ModelSummary]) -> bool {
    summaries.iter().any(ModelSummary::has_attempts)
}

/// The cost over every provider and model.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CostTotal {
    /// Summed over the pairs whose cost is known; `None` when none is.
    pub known: Option<f64>,
    /// Provider/model pairs without a price (their cost is not in `known`).
    pub unpriced: usize,
}

impl CostTotal {
    /// Totals the costs of `summaries`.
    pub fn of(summaries: &[ModelSummary]) -> CostTotal {
        let mut total = CostTotal::default();
        for s in summaries {
            match s.cost {
                Some(c) => total.known = Some(total.known.unwrap_or(0.0) + c),
                None => total.unpriced += 1,
            }
        }
        total
    }

    /// `$0.123456`, `$0.123456 (+ 1 pair without a price)`, or `-` when no cost is known;
    /// `decimals` digits after the point.
    pub fn display(&self, decimals: usize) -> String {
        let Some(known) = self.known else {
            return UNKNOWN.to_owned();
        };
        let mut out = format!("${known:.decimals$}");
        if self.unpriced > 0 {
            out.push_str(&format!(
                " (+ {} pair{} without a price)",
                self.unpriced,
                if self.unpriced == 1 { "" } else { "s" }
            ));
        }
        out
    }
}

/// What the summaries show for a value that is not known or not defined (a cost without a
/// price, a rate without runs).
pub const UNKNOWN: &str = "-";

/// The first cells of a model's row in `summary.csv` and `summary.md`: provider, model, runs,
/// then the passed, failed, diverged, error and limit-reached counts (every outcome, drifted
/// replays included under their verdict).
pub(crate) fn summary_counts(s: &ModelSummary) -> Vec<String> {
    vec![
        s.provider.clone(),
        s.model_label(),
        s.runs.to_string(),
        s.count(Outcome::Passed).to_string(),
        s.count(Outcome::Failed).to_string(),
        s.count(Outcome::Diverged).to_string(),
        s.count(Outcome::Error).to_string(),
        s.count(Outcome::LimitReached).to_string(),
    ]
}

/// `100.0% (k=2)`, `100.0% (k=2, 1/2 tasks)` when some task has fewer than k runs that count,
/// [`UNKNOWN`] with a single epoch.
pub(crate) fn pass_at_k_label(s: &ModelSummary) -> String {
    k_label(s, s.pass_at_k())
}

/// The same as [`pass_at_k_label`] for pass^k.
pub(crate) fn pass_hat_k_label(s: &ModelSummary) -> String {
    k_label(s, s.pass_hat_k())
}

/// `66.7% (2/3)`: the pass rate with its n: the passed runs among the runs that count, over
/// the runs that count (a drifted replay that passed is in neither); [`UNKNOWN`] without one.
pub(crate) fn pass_rate_label(s: &ModelSummary) -> String {
    match s.pass_rate() {
        Some(_) => format!(
            "{} ({}/{})",
            percent(s.pass_rate()),
            s.counted_passed(),
            s.counted
        ),
        None => UNKNOWN.to_owned(),
    }
}

/// `50.0% (2/4)`: the pass rate at attempt 1 with its n, as [`pass_rate_label`].
pub(crate) fn first_attempt_label(s: &ModelSummary) -> String {
    match s.first_attempt_pass_rate() {
        Some(rate) => format!(
            "{} ({}/{})",
            percent(Some(rate)),
            s.passed_first_attempt,
            s.counted
        ),
        None => UNKNOWN.to_owned(),
    }
}

/// `attempt 2`: the header of the pass rate of arms whose tasks give several attempts.
pub(crate) fn last_attempt_header(summaries: &[ModelSummary]) -> String {
    let n = summaries.iter().map(|s| s.task_attempts).max().unwrap_or(1);
    format!("pass rate (attempt {n})")
}

/// `33.3% (4/12)`: the edit-failure rate with its n (edit calls); [`UNKNOWN`] without calls.
pub(crate) fn edit_failure_label(s: &ModelSummary) -> String {
    match s.edit_failure_rate() {
        Some(_) => format!(
            "{} ({}/{})",
            percent(s.edit_failure_rate()),
            s.edit_calls_failed,
            s.edit_calls
        ),
        None => UNKNOWN.to_owned(),
    }
}

/// Whether any summary has more than one epoch (then the tables show the clustered SE).
pub(crate) fn any_epochs(summaries: &[ModelSummary]) -> bool {
    summaries.iter().any(|s| s.k().is_some())
}

fn k_label(s: &ModelSummary, value: Option<f64>) -> String {
    let (Some(k), Some((covered, tasks))) = (s.k(), s.pass_at_k_tasks()) else {
        return UNKNOWN.to_owned();
    };
    let value = percent(value);
    if covered < tasks {
        format!("{value} (k={k}, {covered}/{tasks} tasks)")
    } else {
        format!("{value} (k={k})")
    }
}

/// `66.7%`; [`UNKNOWN`] for `None`.
pub(crate) fn percent(x: Option<f64>) -> String {
    x.map(|x| format!("{:.1}%", x * 100.0))
        .unwrap_or_else(|| UNKNOWN.to_owned())
}

/// `[20.8%, 93.9%]`; [`UNKNOWN`] for `None`.
pub(crate) fn percent_interval(i: Option<Interval>) -> String {
    i.map(|i| format!("[{:.1}%, {:.1}%]", i.low * 100.0, i.high * 100.0))
        .unwrap_or_else(|| UNKNOWN.to_owned())
}

/// `$0.195300`; [`UNKNOWN`] for `None` (never `$0` for an unknown price).
pub(crate) fn dollars(x: Option<f64>, decimals: usize) -> String {
    x.map(|x| format!("${x:.decimals$}"))
        .unwrap_or_else(|| UNKNOWN.to_owned())
}

/// A rate or ratio with 4 decimals; empty for `None`.
pub(crate) fn fmt_ratio(x: Option<f64>) -> String {
    x.map(|x| format!("{x:.4}")).unwrap_or_default()
}

/// Dollars with 6 decimals; empty for `None`.
pub(crate) fn fmt_cost(x: Option<f64>) -> String {
    x.map(|x| format!("{x:.6}")).unwrap_or_default()
}

/// Seconds with 3 decimals.
pub(crate) fn fmt_secs(secs: f64) -> String {
    format!("{secs:.3}")
}
