//! Offline comparison: every call of a corpus re-applied under every strategy, the way the edit
//! tool would (`prepareArguments`, validation, BOM and line endings, the strategy, restored
//! line endings), in parallel with rayon, and classified on four axes:
//!
//! - *parse*: the arguments are valid, or malformed;
//! - *locate*: exact, fuzzy (and the tier), not found, ambiguous (or no file to search);
//! - *apply*: applied, overlap, no change;
//! - *correct*: the result equals the gold, a **false apply** (changed the file, but not to the
//!   gold, or when the right answer was to refuse), a correct refusal, a missed edit (refused
//!   when it should have applied), or no gold.
//!
//! Then per strategy and per perturbation kind the shares of correct answers, false applies
//! and refusals, and for each pair of strategies the calls where exactly one is right, with
//! the exact McNemar p-value. Pure computation: the CLI writes the files.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;

use rayon::prelude::*;
use serde_json::Value;

use super::corpus::{Corpus, EditRecord, Gold};
use super::gold::{GoldAnswer, derive_gold};
use crate::stats::mcnemar_exact;
use crate::tools::edit::{
    EditStrategy, EditTool, PreparedText, prepare_edit_arguments, replacements_of,
};
use crate::tools::validate::validate_arguments;
use crate::tools::{EditFailure, MatchTier, Tool};

/// One call ready to replay: the record, its file content and its gold answer.
#[derive(Debug, Clone)]
pub struct Case {
    /// The record's line in the corpus.
    pub line: usize,
    pub record: EditRecord,
    pub before: Option<Arc<str>>,
    /// The gold answer, with the file text for an apply.
    pub gold: Option<CaseGold>,
}

/// A resolved gold answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CaseGold {
    Apply(Arc<str>),
    Refuse,
}

impl Case {
    /// The perturbation kind, or `recorded` for calls from runs.
    pub fn kind(&self) -> &str {
        self.record.kind.as_deref().unwrap_or("recorded")
    }

    /// A readable id: `task run turn call_id` (or the corpus line).
    pub fn id(&self) -> String {
        let r = &self.record;
        if r.call_id.is_empty() {
            format!("line {}", self.line)
        } else {
            format!("{} {} turn {} {}", r.task, r.run, r.turn, r.call_id)
        }
    }
}

/// The cases of a corpus, with gold answers derived (see [`derive_gold`]).
pub fn cases(corpus: &Corpus) -> Vec<Case> {
    let records: Vec<&EditRecord> = corpus.records.iter().map(|(_, r)| r).collect();
    let gold = derive_gold(&records);
    corpus
        .records
        .iter()
        .zip(gold)
        .map(|((line, record), gold)| Case {
            line: *line,
            record: record.clone(),
            before: record
                .before
                .as_deref()
                .and_then(|id| corpus.blob(id).cloned()),
            gold: gold.and_then(|GoldAnswer { gold, .. }| match gold {
                Gold::Refuse => Some(CaseGold::Refuse),
                Gold::Apply { after } => corpus.blob(&after).cloned().map(CaseGold::Apply),
            }),
        })
        .collect()
}

/// The *parse* axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Parse {
    Ok,
    Malformed,
}

/// The *locate* axis.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LocateAxis {
    /// Every edit located exactly.
    Exact,
    /// Every edit located; at least one by a fuzzy tier (the first such tier's name).
    Fuzzy(String),
    NotFound,
    Ambiguous(usize),
    /// Not searched: malformed arguments, or no file content.
    NotSearched,
}

/// The *apply* axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Apply {
    Applied,
    Overlap,
    NoChange,
    NotAttempted,
}

/// The *correct* axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Correct {
    /// Applied, and the file equals the gold.
    Correct,
    /// Changed the file wrongly: not to the gold, or when it should have refused.
    FalseApply,
    /// Refused, and refusing was right.
    CorrectRefusal,
    /// Refused, but the gold applies.
    Missed,
    NoGold,
}

impl Correct {
    /// Right answers: [`Correct::Correct`] and [`Correct::CorrectRefusal`].
    pub fn is_right(self) -> bool {
        matches!(self, Correct::Correct | Correct::CorrectRefusal)
    }
}

/// One call under one strategy.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayOutcome {
    pub parse: Parse,
    pub locate: LocateAxis,
    pub apply: Apply,
    pub correct: Correct,
    /// The tier of every located edit, `+`-joined.
    pub tiers: String,
    /// The lowest similarity score among the located edits, if any had one.
    pub score: Option<f64>,
    /// The failure kind, if the call failed.
    pub failure: Option<&'static str>,
    /// When the call was refused as a near-copy of a block of the file: the file's line the
    /// strategy named as the one that differs (the block's first line when the model's line is
    /// not there at all).
    pub near_copy_line: Option<usize>,
    /// A hash of the text written, if the call applied (to tell two results apart).
    pub written: Option<u64>,
}

/// Replays calls as the edit tool runs them (it holds the tool's parameter schema).
#[derive(Debug, Clone)]
pub struct Replayer {
    schema: Value,
}

impl Default for Replayer {
    fn default() -> Self {
        Replayer {
            schema: EditTool::new().definition().parameters.clone(),
        }
    }
}

impl Replayer {
    /// Replays `case` under `strategy`.
    pub fn replay(&self, case: &Case, strategy: &dyn EditStrategy) -> ReplayOutcome {
        replay(case, strategy, &self.schema)
    }
}

/// The edits of `arguments` as the edit tool reads them (`prepareArguments`, then validation
/// against its schema); `None` if they are malformed.
fn edits_of(arguments: &Value, schema: &Value) -> Option<Vec<crate::tools::edit::Replacement>> {
    let prepared = prepare_edit_arguments(arguments.clone());
    validate_arguments("edit", schema, &prepared)
        .ok()
        .and_then(|args| replacements_of(&args).ok())
}

/// What a call did to a file under a strategy.
#[derive(Debug, Clone, PartialEq)]
pub enum Written {
    /// The file the call leaves (BOM and line endings restored) and how each edit was located.
    Applied {
        text: String,
        located: Vec<crate::tools::LocatedEdit>,
    },
    /// The call failed; the edits located before it failed.
    Refused {
        failure: EditFailure,
        located: Vec<crate::tools::LocatedEdit>,
        /// The block the strategy found `oldText` to nearly copy, if it said so.
        near_copy: Option<crate::tools::edit::NearCopy>,
    },
}

impl Replayer {
    /// Applies `arguments` to `before` under `strategy`, as the edit tool would; `None` if the
    /// arguments are malformed.
    pub fn write(
        &self,
        arguments: &Value,
        before: &str,
        strategy: &dyn EditStrategy,
    ) -> Option<Written> {
        edits_of(arguments, &self.schema).map(|edits| apply_edits(&edits, before, strategy))
    }
}

fn apply_edits(
    edits: &[crate::tools::edit::Replacement],
    before: &str,
    strategy: &dyn EditStrategy,
) -> Written {
    let text = PreparedText::new(before);
    match strategy.apply(&text.content, edits) {
        Ok(applied) => Written::Applied {
            text: text.finish(&applied.new_content),
            located: applied.tiers,
        },
        Err(miss) => Written::Refused {
            failure: miss.failure,
            located: miss.tiers,
            near_copy: miss.near_copy,
        },
    }
}

fn replay(case: &Case, strategy: &dyn EditStrategy, schema: &Value) -> ReplayOutcome {
    let refused = |locate: LocateAxis, apply: Apply, failure: Option<&'static str>| {
        let correct = match &case.gold {
            None => Correct::NoGold,
            Some(CaseGold::Refuse) => Correct::CorrectRefusal,
            Some(CaseGold::Apply(_)) => Correct::Missed,
        };
        ReplayOutcome {
            parse: Parse::Ok,
            locate,
            apply,
            correct,
            tiers: String::new(),
            score: None,
            failure,
            near_copy_line: None,
            written: None,
        }
    };
    let Some(edits) = edits_of(&case.record.arguments, schema) else {
        return ReplayOutcome {
            parse: Parse::Malformed,
            ..refused(
                LocateAxis::NotSearched,
                Apply::NotAttempted,
                Some(EditFailure::InvalidArguments.name()),
            )
        };
    };
    let Some(before) = case.before.as_deref() else {
        return refused(
            LocateAxis::NotSearched,
            Apply::NotAttempted,
            Some(EditFailure::File.name()),
        );
    };
    let describe = |located: &[crate::tools::LocatedEdit]| {
        let tiers = located
            .iter()
            .map(|l| l.tier.as_str())
            .collect::<Vec<_>>()
            .join("+");
        let score = located
            .iter()
            .filter_map(|l| l.score)
            .min_by(f64::total_cmp);
        (tiers, score)
    };
    match apply_edits(&edits, before, strategy) {
        Written::Applied {
            text: written,
            located,
        } => {
            let (tiers, score) = describe(&located);
            let locate = match located.iter().find(|l| l.kind == MatchTier::Fuzzy) {
                Some(fuzzy) => LocateAxis::Fuzzy(fuzzy.tier.clone()),
                None => LocateAxis::Exact,
            };
            let correct = match &case.gold {
                None => Correct::NoGold,
                Some(CaseGold::Apply(gold)) if **gold == *written => Correct::Correct,
                Some(_) => Correct::FalseApply,
            };
            ReplayOutcome {
                parse: Parse::Ok,
                locate,
                apply: Apply::Applied,
                correct,
                tiers,
                score,
                failure: None,
                near_copy_line: None,
                written: Some(fnv(&written)),
            }
        }
        Written::Refused {
            failure,
            located,
            near_copy,
        } => {
            let (tiers, score) = describe(&located);
            let (locate, apply) = match failure {
                EditFailure::NotUnique { count, .. } => {
                    (LocateAxis::Ambiguous(count), Apply::NotAttempted)
                }
                EditFailure::Overlap { .. } => (LocateAxis::Exact, Apply::Overlap),
                EditFailure::NoChange => (LocateAxis::Exact, Apply::NoChange),
                _ => (LocateAxis::NotFound, Apply::NotAttempted),
            };
            ReplayOutcome {
                tiers,
                score,
                near_copy_line: near_copy
                    .map(|near| near.file_line.map_or(near.first_line, |(line, _)| line)),
                ..refused(locate, apply, Some(failure.name()))
            }
        }
    }
}

/// Whether `outcome` did what the call's recorded outcome did: both refused, or both wrote the
/// same file. `None` when the record has no outcome (generated calls) or its written file is
/// not in the corpus.
pub fn agrees_with_recorded(case: &Case, corpus: &Corpus, outcome: &ReplayOutcome) -> Option<bool> {
    let recorded = case.record.outcome.as_ref()?;
    if recorded.is_error {
        return Some(outcome.written.is_none());
    }
    let after = corpus.blob(recorded.after.as_deref()?)?;
    Some(outcome.written == Some(fnv(after)))
}

/// Whether `outcome` wrote another file than `exact` did where `exact` applied the call: `None`
/// when `exact` did not apply it. Where `oldText` occurs exactly once, that place is the only
/// right answer, so `Some(true)` is a bug in the strategy.
pub fn differs_from_exact(exact: &ReplayOutcome, outcome: &ReplayOutcome) -> Option<bool> {
    exact.written.map(|w| outcome.written != Some(w))
}

/// FNV-1a of `text`.
fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Every case under every strategy: `result[case][strategy]`, computed on `threads` threads
/// (0: rayon's default).
pub fn compare(
    cases: &[Case],
    strategies: &[Arc<dyn EditStrategy>],
    threads: usize,
) -> Result<Vec<Vec<ReplayOutcome>>, rayon::ThreadPoolBuildError> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()?;
    let replayer = Replayer::default();
    Ok(pool.install(|| {
        cases
            .par_iter()
            .map(|case| {
                strategies
                    .iter()
                    .map(|s| replayer.replay(case, s.as_ref()))
                    .collect()
            })
            .collect()
    }))
}

/// Counts for one strategy over a set of calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StrategyTally {
    pub calls: usize,
    /// Calls with a gold answer.
    pub with_gold: usize,
    pub correct: usize,
    pub correct_refusals: usize,
    pub false_applies: usize,
    pub missed: usize,
    /// Calls that did not apply (every kind of failure), among those with gold.
    pub refusals: usize,
    /// Refusals that named the line of a near-copy (the model can re-read it), among those.
    pub near_copies: usize,
    pub malformed: usize,
}

impl StrategyTally {
    fn add(&mut self, outcome: &ReplayOutcome) {
        self.calls += 1;
        if outcome.parse == Parse::Malformed {
            self.malformed += 1;
        }
        if outcome.correct == Correct::NoGold {
            return;
        }
        self.with_gold += 1;
        match outcome.correct {
            Correct::Correct => self.correct += 1,
            Correct::CorrectRefusal => self.correct_refusals += 1,
            Correct::FalseApply => self.false_applies += 1,
            Correct::Missed => self.missed += 1,
            Correct::NoGold => {}
        }
        if outcome.apply != Apply::Applied {
            self.refusals += 1;
            if outcome.near_copy_line.is_some() {
                self.near_copies += 1;
            }
        }
    }

    fn percent(&self, n: usize) -> f64 {
        if self.with_gold == 0 {
            0.0
        } else {
            100.0 * n as f64 / self.with_gold as f64
        }
    }

    /// Right answers (correct applies and correct refusals), in % of calls with gold.
    pub fn correct_pct(&self) -> f64 {
        self.percent(self.correct + self.correct_refusals)
    }

    pub fn false_apply_pct(&self) -> f64 {
        self.percent(self.false_applies)
    }

    pub fn refusal_pct(&self) -> f64 {
        self.percent(self.refusals)
    }
}

/// A pair of strategies compared on the calls with gold.
#[derive(Debug, Clone, PartialEq)]
pub struct Pair {
    pub a: usize,
    pub b: usize,
    /// Cases where `a` is right and `b` is not.
    pub only_a: Vec<usize>,
    /// Cases where `b` is right and `a` is not.
    pub only_b: Vec<usize>,
    /// Exact McNemar p-value of the two counts.
    pub p_value: f64,
    /// Every case (with gold or not) where the two leave different files: one applies and the
    /// other refuses, or both apply with different results.
    pub disagree: Vec<usize>,
}

/// The summary of a comparison.
#[derive(Debug, Clone)]
pub struct Summary {
    pub strategies: Vec<String>,
    /// Per strategy, over every call.
    pub overall: Vec<StrategyTally>,
    /// Per kind, per strategy.
    pub by_kind: BTreeMap<String, Vec<StrategyTally>>,
    pub pairs: Vec<Pair>,
}

/// Tallies the results of [`compare`].
pub fn summarize(cases: &[Case], names: &[String], results: &[Vec<ReplayOutcome>]) -> Summary {
    let n = names.len();
    let mut overall = vec![StrategyTally::default(); n];
    let mut by_kind: BTreeMap<String, Vec<StrategyTally>> = BTreeMap::new();
    for (case, outcomes) in cases.iter().zip(results) {
        let kind = by_kind
            .entry(case.kind().to_owned())
            .or_insert_with(|| vec![StrategyTally::default(); n]);
        for (s, outcome) in outcomes.iter().enumerate() {
            overall[s].add(outcome);
            kind[s].add(outcome);
        }
    }
    let mut pairs = Vec::new();
    for a in 0..n {
        for b in a + 1..n {
            let (mut only_a, mut only_b, mut disagree) = (Vec::new(), Vec::new(), Vec::new());
            for (i, outcomes) in results.iter().enumerate() {
                if outcomes[a].written != outcomes[b].written {
                    disagree.push(i);
                }
                let (x, y) = (outcomes[a].correct, outcomes[b].correct);
                if x == Correct::NoGold || y == Correct::NoGold {
                    continue;
                }
                match (x.is_right(), y.is_right()) {
                    (true, false) => only_a.push(i),
                    (false, true) => only_b.push(i),
                    _ => {}
                }
            }
            let p_value = mcnemar_exact(only_a.len() as u64, only_b.len() as u64);
            pairs.push(Pair {
                a,
                b,
                only_a,
                only_b,
                p_value,
                disagree,
            });
        }
    }
    Summary {
        strategies: names.to_vec(),
        overall,
        by_kind,
        pairs,
    }
}

impl LocateAxis {
    fn label(&self) -> String {
        match self {
            LocateAxis::Exact => "exact".into(),
            LocateAxis::Fuzzy(tier) => format!("fuzzy:{tier}"),
            LocateAxis::NotFound => "not_found".into(),
            LocateAxis::Ambiguous(n) => format!("ambiguous:{n}"),
            LocateAxis::NotSearched => "not_searched".into(),
        }
    }
}

fn parse_label(p: Parse) -> &'static str {
    match p {
        Parse::Ok => "ok",
        Parse::Malformed => "malformed",
    }
}

fn apply_label(a: Apply) -> &'static str {
    match a {
        Apply::Applied => "applied",
        Apply::Overlap => "overlap",
        Apply::NoChange => "no_change",
        Apply::NotAttempted => "not_attempted",
    }
}

fn correct_label(c: Correct) -> &'static str {
    match c {
        Correct::Correct => "correct",
        Correct::FalseApply => "false_apply",
        Correct::CorrectRefusal => "correct_refusal",
        Correct::Missed => "missed",
        Correct::NoGold => "no_gold",
    }
}

/// `edits-compare.csv`: one row per call and strategy.
pub fn write_csv(
    out: impl std::io::Write,
    cases: &[Case],
    names: &[String],
    results: &[Vec<ReplayOutcome>],
) -> Result<(), csv::Error> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record([
        "line",
        "task",
        "run",
        "turn",
        "call_id",
        "path",
        "kind",
        "strategy",
        "parse",
        "locate",
        "tiers",
        "score",
        "apply",
        "correct",
        "failure",
        "near_copy_line",
    ])?;
    for (case, outcomes) in cases.iter().zip(results) {
        for (name, o) in names.iter().zip(outcomes) {
            let r = &case.record;
            w.write_record([
                case.line.to_string().as_str(),
                &r.task,
                &r.run,
                &r.turn.to_string(),
                &r.call_id,
                &r.path,
                case.kind(),
                name,
                parse_label(o.parse),
                &o.locate.label(),
                &o.tiers,
                &o.score.map(|s| format!("{s:.4}")).unwrap_or_default(),
                apply_label(o.apply),
                correct_label(o.correct),
                o.failure.unwrap_or(""),
                &o.near_copy_line.map(|l| l.to_string()).unwrap_or_default(),
            ])?;
        }
    }
    w.flush()?;
    Ok(())
}

/// How many disagreeing calls the markdown lists per pair and side.
const LISTED: usize = 20;

/// The summary as markdown: the overall table, the table per kind, and the pairs.
pub fn render_markdown(summary: &Summary, cases: &[Case]) -> String {
    let mut out = String::new();
    let names = &summary.strategies;
    let _ = writeln!(out, "# Edit strategies compared\n");
    let calls = cases.len();
    let with_gold = summary.overall.first().map_or(0, |t| t.with_gold);
    let _ = writeln!(out, "{calls} calls, {with_gold} with a gold answer.\n");
    let _ = writeln!(
        out,
        "| strategy | correct % | false-apply % | refusal % | correct | false applies | correct refusals | missed | malformed | near-copies named |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (name, t) in names.iter().zip(&summary.overall) {
        let _ = writeln!(
            out,
            "| {name} | {:.1} | {:.1} | {:.1} | {} | {} | {} | {} | {} | {} |",
            t.correct_pct(),
            t.false_apply_pct(),
            t.refusal_pct(),
            t.correct,
            t.false_applies,
            t.correct_refusals,
            t.missed,
            t.malformed,
            t.near_copies
        );
    }
    let _ = writeln!(
        out,
        "\n## By kind (correct % / false-apply % / refusal %)\n"
    );
    let _ = write!(out, "| kind | calls |");
    for name in names {
        let _ = write!(out, " {name} |");
    }
    let _ = writeln!(out);
    let _ = write!(out, "|---|---:|");
    for _ in names {
        let _ = write!(out, "---|");
    }
    let _ = writeln!(out);
    for (kind, tallies) in &summary.by_kind {
        let _ = write!(
            out,
            "| {kind} | {} |",
            tallies.first().map_or(0, |t| t.calls)
        );
        for t in tallies {
            let _ = write!(
                out,
                " {:.0} / {:.0} / {:.0} |",
                t.correct_pct(),
                t.false_apply_pct(),
                t.refusal_pct()
            );
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(out, "\n## Pairs (calls where exactly one is right)\n");
    let _ = writeln!(
        out,
        "| A | B | only A right | only B right | McNemar exact p | different results |"
    );
    let _ = writeln!(out, "|---|---|---:|---:|---:|---:|");
    for p in &summary.pairs {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            names[p.a],
            names[p.b],
            p.only_a.len(),
            p.only_b.len(),
            crate::reports::paired::p_value(p.p_value),
            p.disagree.len()
        );
    }
    for p in &summary.pairs {
        if p.disagree.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n### {} vs {}\n", names[p.a], names[p.b]);
        let without_gold: Vec<usize> = p
            .disagree
            .iter()
            .copied()
            .filter(|i| cases[*i].gold.is_none())
            .collect();
        let only_a = format!("Only {} right", names[p.a]);
        let only_b = format!("Only {} right", names[p.b]);
        let groups = [
            (only_a.as_str(), &p.only_a),
            (only_b.as_str(), &p.only_b),
            ("Different results, no gold", &without_gold),
        ];
        for (title, list) in groups {
            if list.is_empty() {
                continue;
            }
            let _ = writeln!(out, "{title} ({}):\n", list.len());
            for &i in list.iter().take(LISTED) {
                let case = &cases[i];
                let _ = writeln!(
                    out,
                    "- line {}: {} [{}] `{}`",
                    case.line,
                    case.id(),
                    case.kind(),
                    case.record.path
                );
            }
            if list.len() > LISTED {
                let _ = writeln!(
                    out,
                    "- ... and {} more (see edits-compare.csv)",
                    list.len() - LISTED
                );
            }
            let _ = writeln!(out);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::edit::parse_strategy;
    use serde_json::json;

    fn case(before: Option<&str>, args: Value, gold: Option<CaseGold>, kind: &str) -> Case {
        Case {
            line: 1,
            record: EditRecord {
                task: "t".into(),
                run: "r".into(),
                turn: 1,
                call_id: "c".into(),
                path: "f.txt".into(),
                before: None,
                arguments: args,
                outcome: None,
                kind: Some(kind.into()),
                gold: None,
            },
            before: before.map(Arc::from),
            gold,
        }
    }

    fn edit(old: &str, new: &str) -> Value {
        json!({"path": "f.txt", "edits": [{"oldText": old, "newText": new}]})
    }

    fn apply(text: &str) -> Option<CaseGold> {
        Some(CaseGold::Apply(Arc::from(text)))
    }

    fn run(case: &Case, spec: &str) -> ReplayOutcome {
        Replayer::default().replay(case, parse_strategy(spec).unwrap().as_ref())
    }

    #[test]
    fn a_refusal_as_a_near_copy_names_the_files_line_in_the_csv_and_the_summary() {
        // The model quotes a block whose last line has another number: `safe` and `anchors`
        // refuse it and name the file's line 4; `exact` refuses without naming anything.
        let file = "a = 1\ndef f():\n    x = 2\n    return x\nb = 3\n";
        let c = case(
            Some(file),
            edit(
                "def f():\n    x = 2\n    return y\n",
                "def f():\n    return 2\n",
            ),
            Some(CaseGold::Refuse),
            "near-copy",
        );
        let names: Vec<String> = ["exact", "anchors", "safe"].map(String::from).to_vec();
        let outcomes: Vec<ReplayOutcome> = names.iter().map(|n| run(&c, n)).collect();
        let lines: Vec<Option<usize>> = outcomes.iter().map(|o| o.near_copy_line).collect();
        assert_eq!(lines, [None, Some(4), Some(4)]);
        assert!(
            outcomes
                .iter()
                .all(|o| o.correct == Correct::CorrectRefusal)
        );

        let mut csv = Vec::new();
        let cases = [c];
        let results = [outcomes];
        write_csv(&mut csv, &cases, &names, &results).unwrap();
        let csv = String::from_utf8(csv).unwrap();
        let column: Vec<&str> = csv.lines().map(|l| l.rsplit(',').next().unwrap()).collect();
        assert_eq!(column, ["near_copy_line", "", "4", "4"], "{csv}");
        let summary = summarize(&cases, &names, &results);
        let named: Vec<usize> = summary.overall.iter().map(|t| t.near_copies).collect();
        assert_eq!(named, [0, 1, 1]);
        assert!(
            render_markdown(&summary, &cases)
                .contains("| anchors | 100.0 | 0.0 | 100.0 | 0 | 0 | 1 | 0 | 0 | 1 |"),
            "{}",
            render_markdown(&summary, &cases)
        );
    }

    #[test]
    fn the_four_axes() {
        // Trailing spaces elsewhere in the file: pi writes them away (a false apply), pi-local
        // does not.
        let c = case(
            Some("keep  \nx = 1  \n"),
            edit("x = 1\n", "x = 2\n"),
            apply("keep  \nx = 2\n"),
            "k",
        );
        let pi = run(&c, "pi");
        assert_eq!(
            (pi.parse, pi.locate.clone(), pi.apply, pi.correct),
            (
                Parse::Ok,
                LocateAxis::Fuzzy("fuzzy".into()),
                Apply::Applied,
                Correct::FalseApply
            )
        );
        let local = run(&c, "pi-local");
        assert_eq!(
            (local.locate.clone(), local.correct, local.tiers.as_str()),
            (
                LocateAxis::Fuzzy("pi-local".into()),
                Correct::Correct,
                "pi-local"
            )
        );
        let exact = run(&c, "exact");
        assert_eq!(
            (
                exact.locate.clone(),
                exact.apply,
                exact.correct,
                exact.failure
            ),
            (
                LocateAxis::NotFound,
                Apply::NotAttempted,
                Correct::Missed,
                Some("not_found")
            )
        );

        let refuse = case(
            Some("a\na\n"),
            edit("a\n", "b\n"),
            Some(CaseGold::Refuse),
            "k",
        );
        assert_eq!(run(&refuse, "exact").locate, LocateAxis::Ambiguous(2));
        assert_eq!(run(&refuse, "exact").correct, Correct::CorrectRefusal);
        let decoy = case(
            Some("f {\n  x\n}\n"),
            edit("f {\n  y\n}\n", "g\n"),
            Some(CaseGold::Refuse),
            "k",
        );
        assert_eq!(run(&decoy, "cline").correct, Correct::FalseApply);

        let malformed = case(
            Some("a\n"),
            json!({"path": "f.txt", "edits": [{"oldText": 1}]}),
            None,
            "k",
        );
        let out = run(&malformed, "exact");
        assert_eq!(
            (out.parse, out.locate.clone(), out.correct),
            (Parse::Malformed, LocateAxis::NotSearched, Correct::NoGold)
        );
        let unread = case(None, edit("a", "b"), apply("b"), "k");
        assert_eq!(
            (run(&unread, "exact").locate, run(&unread, "exact").failure),
            (LocateAxis::NotSearched, Some("file_error"))
        );
        let same = case(Some("a\n"), edit("a", "a"), None, "k");
        assert_eq!(run(&same, "exact").apply, Apply::NoChange);
        // Legacy arguments go through Pi's prepareArguments.
        let legacy = case(
            Some("a\n"),
            json!({"path": "f.txt", "oldText": "a", "newText": "b"}),
            apply("b\n"),
            "k",
        );
        assert_eq!(run(&legacy, "exact").correct, Correct::Correct);
    }

    #[test]
    fn the_bom_and_crlf_are_restored_before_comparing_with_gold() {
        let c = case(
            Some("\u{FEFF}  a\r\n  b\r\n"),
            edit("a\nb\n", "a\nc\n"),
            apply("\u{FEFF}  a\r\n  c\r\n"),
            "crlf",
        );
        assert_eq!(run(&c, "indent").correct, Correct::Correct);
        assert_eq!(run(&c, "trimmed-lines").correct, Correct::FalseApply);
    }

    #[test]
    fn recorded_outcomes_and_exact_are_compared_with_what_a_strategy_writes() {
        use super::super::corpus::{RecordedEditOutcome, blob_id};
        let recorded = |is_error: bool, after: Option<&str>| {
            let mut c = case(
                Some("  x = 1\n"),
                edit("x = 1", "x = 2"),
                apply("  x = 2\n"),
                "recorded",
            );
            c.record.outcome = Some(RecordedEditOutcome {
                strategy: "pi".into(),
                is_error,
                message: String::new(),
                report: None,
                after: after.map(blob_id),
            });
            c
        };
        let corpus = Corpus {
            records: Vec::new(),
            blobs: [("  x = 2\n", "  x = 2\n"), ("x = 2\n", "x = 2\n")]
                .into_iter()
                .map(|(id, text)| (blob_id(id), Arc::from(text)))
                .collect(),
            problems: Vec::new(),
        };
        let applied = recorded(false, Some("  x = 2\n"));
        let (exact, trimmed) = (run(&applied, "exact"), run(&applied, "trimmed-lines"));
        assert_eq!(agrees_with_recorded(&applied, &corpus, &exact), Some(true));
        assert_eq!(differs_from_exact(&exact, &trimmed), Some(false));
        // Recorded as written otherwise, or refused.
        let other = recorded(false, Some("x = 2\n"));
        assert_eq!(agrees_with_recorded(&other, &corpus, &exact), Some(false));
        let refused = recorded(true, None);
        assert_eq!(agrees_with_recorded(&refused, &corpus, &exact), Some(false));
        let missing = case(Some("a\n"), edit("b", "c"), None, "recorded");
        let missed = run(&missing, "exact");
        assert_eq!(agrees_with_recorded(&missing, &corpus, &missed), None);
        assert_eq!(differs_from_exact(&missed, &exact), None);
        assert_eq!(differs_from_exact(&exact, &missed), Some(true));
        let mut unrecorded = recorded(true, None);
        unrecorded.record.outcome = None;
        assert_eq!(agrees_with_recorded(&unrecorded, &corpus, &missed), None);
        assert_eq!(agrees_with_recorded(&refused, &corpus, &missed), Some(true));
    }

    #[test]
    fn summaries_count_per_kind_and_pair_with_mcnemar() {
        let cases = vec![
            case(Some("x  \n"), edit("x\n", "y\n"), apply("y\n"), "trailing"),
            case(Some("x  \n"), edit("x\n", "z\n"), apply("z\n"), "trailing"),
            case(Some("a\n"), edit("a", "b"), apply("b\n"), "exact"),
            case(
                Some("a\na\n"),
                edit("a", "b"),
                Some(CaseGold::Refuse),
                "not-unique",
            ),
            case(Some("q  \n"), edit("q\n", "r\n"), None, "recorded"),
        ];
        let strategies = vec![
            parse_strategy("exact").unwrap(),
            parse_strategy("pi").unwrap(),
        ];
        let names = vec!["exact".to_owned(), "pi".to_owned()];
        let results = compare(&cases, &strategies, 2).unwrap();
        let summary = summarize(&cases, &names, &results);
        let exact = summary.overall[0];
        assert_eq!(
            (
                exact.calls,
                exact.with_gold,
                exact.correct,
                exact.correct_refusals,
                exact.missed,
                exact.refusals
            ),
            (5, 4, 1, 1, 2, 3)
        );
        assert_eq!(exact.correct_pct(), 50.0);
        assert_eq!(summary.overall[1].correct_pct(), 100.0);
        assert_eq!(summary.by_kind["trailing"][0].correct, 0);
        assert_eq!(summary.by_kind["trailing"][1].correct, 2);
        let pair = &summary.pairs[0];
        assert_eq!(
            (pair.only_a.clone(), pair.only_b.clone()),
            (vec![], vec![0, 1])
        );
        assert!((pair.p_value - 0.5).abs() < 1e-12, "{}", pair.p_value);
        // The call without gold still shows where the two differ.
        assert_eq!(pair.disagree, vec![0, 1, 4]);
        let md = render_markdown(&summary, &cases);
        assert!(md.contains("| exact | pi | 0 | 2 | 0.500 | 3 |"), "{md}");
        assert!(md.contains("Different results, no gold (1)"), "{md}");
        let mut csv = Vec::new();
        write_csv(&mut csv, &cases, &names, &results).unwrap();
        let csv = String::from_utf8(csv).unwrap();
        assert_eq!(csv.lines().count(), 1 + 5 * 2);
        assert!(
            csv.lines()
                .nth(2)
                .unwrap()
                .ends_with(",pi,ok,fuzzy:fuzzy,fuzzy,,applied,correct,,"),
            "{csv}"
        );
    }
}
