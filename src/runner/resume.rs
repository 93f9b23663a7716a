//! The plan of a report folder and how to finish it: every entry of the plan (each planned run,
//! and each selected task that got no run because it has no cassette to replay), which of them
//! this folder holds (its partition), which still have to run when a folder is run again
//! (missing or an infrastructure error, under `--resume` and `--rerun-errors` alike), and the
//! records the folder ends with (the last attempt of each run).
//!
//! Also the checks a continued folder must pass (the same suite, the same shard). Pure
//! bookkeeping over keys, journals, manifests and records; [`super::suite`] does the running
//! and the writing.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::record::{Outcome, RunRecord};
use crate::tasks::Task;

use super::journal::{JournalEntry, folder_key, record_key};
use super::manifest::{Fingerprint, FingerprintChange, Manifest};
use super::partition::{Partition, PlanOrder};
use super::plan::PlannedRun;
use super::problem::Problem;

/// One entry of the plan.
#[derive(Debug, Clone)]
pub struct PlanItem {
    /// The run's key (its folder's name under `runs/`).
    pub key: String,
    pub order: PlanOrder,
    pub task: Arc<Task>,
    /// The run to make; `None` for a task without a cassette to replay, whose record says so.
    pub run: Option<PlannedRun>,
}

/// The whole plan of a suite, in report order.
#[derive(Debug, Clone, Default)]
pub struct SuitePlan {
    pub items: Vec<PlanItem>,
}

impl SuitePlan {
    /// The plan of `planned`, with an entry for every task of `tasks` that has no planned run.
    pub fn new(tasks: &[Arc<Task>], planned: Vec<PlannedRun>) -> SuitePlan {
        let mut items: Vec<PlanItem> = Vec::with_capacity(planned.len());
        for task in tasks {
            if !planned.iter().any(|p| p.task.id == task.id) {
                let order = PlanOrder {
                    task: task.id.clone(),
                    provider: "-".into(),
                    model: "-".into(),
                    other_strategy: false,
                    edit_strategy: crate::record::DEFAULT_EDIT_STRATEGY.into(),
                    epoch: 1,
                };
                items.push(PlanItem {
                    key: folder_key(&crate::record::run_dir_for(
                        &task.id,
                        "-",
                        "-",
                        crate::record::DEFAULT_EDIT_STRATEGY,
                        1,
                    )),
                    order,
                    task: task.clone(),
                    run: None,
                });
            }
        }
        for run in planned {
            items.push(PlanItem {
                key: run.key(),
                order: PlanOrder::of(&run),
                task: run.task.clone(),
                run: Some(run),
            });
        }
        items.sort_by(|a, b| a.order.cmp(&b.order));
        SuitePlan { items }
    }

    /// Every key, in report order.
    pub fn keys(&self) -> Vec<String> {
        self.items.iter().map(|i| i.key.clone()).collect()
    }

    /// The part of the plan `partition` selects (all of it without one).
    pub fn part(&self, partition: Option<&Partition>) -> SuitePlan {
        let Some(partition) = partition else {
            return self.clone();
        };
        let orders: Vec<PlanOrder> = self.items.iter().map(|i| i.order.clone()).collect();
        let mine = partition.assign(&orders);
        SuitePlan {
            items: self
                .items
                .iter()
                .zip(mine)
                .filter(|(_, keep)| *keep)
                .map(|(item, _)| item.clone())
                .collect(),
        }
    }

    /// The planned runs, in report order.
    pub fn runs(&self) -> Vec<PlannedRun> {
        self.items.iter().filter_map(|i| i.run.clone()).collect()
    }

    /// The tasks without a planned run.
    pub fn unplanned(&self) -> Vec<Arc<Task>> {
        self.items
            .iter()
            .filter(|i| i.run.is_none())
            .map(|i| i.task.clone())
            .collect()
    }

    /// The items that still have to run, given the last journal entry of each run: the runs
    /// that never finished and the infrastructure errors; tasks without a run are always in
    /// (their record is cheap and always the same).
    pub fn remaining(&self, latest: &HashMap<&str, &JournalEntry>) -> SuitePlan {
        SuitePlan {
            items: self
                .items
                .iter()
                .filter(|item| {
                    item.run.is_none() || runs_again(latest.get(item.key.as_str()).copied())
                })
                .cloned()
                .collect(),
        }
    }

    /// How many planned runs have no journal entry at all (never finished: not started,
    /// stopped mid-run, or lost to a kill).
    pub fn never_finished(&self, latest: &HashMap<&str, &JournalEntry>) -> usize {
        self.items
            .iter()
            .filter(|i| i.run.is_some() && !latest.contains_key(i.key.as_str()))
            .count()
    }
}

/// How a folder is run again. Both run the same runs (see [`SuitePlan::remaining`]): a user
/// who asks for the errored runs of a killed suite wants its never-finished runs too, and
/// refusing would leave no way to finish a folder whose errored runs' cassettes were fixed
/// (`--resume` refuses a changed cassette). They differ in what may have changed since.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Continuation {
    /// `--resume`: nothing of the suite may have changed.
    Resume,
    /// `--rerun-errors`: the cassettes of the runs being run again may have changed.
    RerunErrors,
}

/// Whether a run whose last journal entry is `entry` runs again: it never finished, or it
/// ended in an infrastructure error.
pub fn runs_again(entry: Option<&JournalEntry>) -> bool {
    entry.is_none_or(|e| e.record.is_infrastructure_error())
}

/// The records a folder ends with: for each key of `part`, the last of `previous` (the journal
/// before this invocation) and `new` (this invocation's records, in any order); a run skipped
/// now (the budget) keeps an earlier real attempt. Sorted in report order.
pub fn final_records(
    part: &SuitePlan,
    previous: &HashMap<&str, &JournalEntry>,
    new: Vec<RunRecord>,
) -> Vec<RunRecord> {
    let mut by_key: HashMap<String, RunRecord> = HashMap::new();
    for item in &part.items {
        if let Some(e) = previous.get(item.key.as_str()) {
            by_key.insert(item.key.clone(), e.record.clone());
        }
    }
    for record in new {
        let key = record_key(&record);
        if record.outcome == Outcome::Skipped && by_key.contains_key(&key) {
            continue;
        }
        by_key.insert(key, record);
    }
    let mut out: Vec<RunRecord> = part
        .items
        .iter()
        .filter_map(|i| by_key.remove(&i.key))
        .collect();
    // Anything not in the plan (it should not happen) is kept rather than lost.
    out.extend(by_key.into_values());
    out
}

/// A report folder run again.
#[derive(Debug)]
pub struct Continuing {
    pub dir: PathBuf,
    pub manifest: Manifest,
    pub how: Continuation,
}

impl Continuing {
    /// The report folder `dir` to be completed `how`: its manifest, read; a folder that is no
    /// report (no `report.json`, or one that does not parse) is refused.
    pub fn open(dir: &Path, how: Continuation) -> Result<Continuing, Problem> {
        let flag = match how {
            Continuation::Resume => "--resume",
            Continuation::RerunErrors => "--rerun-errors",
        };
        let manifest = Manifest::read(dir).map_err(|e| {
            let text = e.to_string();
            let (message, hint) = text.split_once("\nhint: ").unwrap_or((&text, ""));
            Problem::new(
                format!("{flag}: {message}"),
                if hint.is_empty() {
                    "pass a report folder written by `harness run`"
                } else {
                    hint
                },
            )
        })?;
        Ok(Continuing {
            dir: dir.to_path_buf(),
            manifest,
            how,
        })
    }
}

/// Whether this invocation may complete `c`'s folder: the same plan and the same suite. Under
/// `--rerun-errors` a changed cassette is allowed when the runs being rerun are the ones that
/// use it (fixing what made them fail is the point).
pub fn check_same_suite(
    c: &Continuing,
    fingerprint: &Fingerprint,
    plan: &SuitePlan,
    rerun: &[PlannedRun],
    cassettes_dir: &Path,
) -> Result<(), Problem> {
    let rerun_cassettes: BTreeSet<String> = rerun
        .iter()
        .map(|r| {
            r.cassette
                .strip_prefix(cassettes_dir)
                .unwrap_or(&r.cassette)
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    let differences: Vec<FingerprintChange> = c
        .manifest
        .fingerprint
        .differences(fingerprint)
        .into_iter()
        .filter(|d| match (c.how, d.cassette()) {
            (Continuation::RerunErrors, Some(path)) => !rerun_cassettes.contains(path),
            _ => true,
        })
        .collect();
    let mut what: Vec<String> = differences.iter().map(ToString::to_string).collect();
    let keys = plan.keys();
    if keys != c.manifest.plan {
        let new = keys.iter().filter(|k| !c.manifest.plan.contains(k)).count();
        let gone = c.manifest.plan.iter().filter(|k| !keys.contains(k)).count();
        what.push(format!(
            "the plan differs ({new} run(s) not in the report's, {gone} of its runs not planned now)"
        ));
    }
    if what.is_empty() {
        return Ok(());
    }
    Err(Problem {
        message: format!(
            "{} was run with another suite: {}",
            c.dir.display(),
            what.join("; ")
        ),
        hint: match c.how {
            Continuation::Resume => "a report is completed only with the suite it was run with: \
                 undo the changes, or start a new report without `--resume` (to rerun the \
                 errored runs with fixed cassettes, use `--rerun-errors`)"
                .to_owned(),
            Continuation::RerunErrors => "only the cassettes of the errored runs may change: undo \
                 the other changes, or start a new report"
                .to_owned(),
        },
    })
}

/// The partition of this invocation: the flag's, else (continuing) the report's; a flag that is
/// not the report's is a problem.
pub fn partition(
    flag: Option<&str>,
    continuing: Option<&Continuing>,
) -> Result<Option<Partition>, Problem> {
    let then = continuing.and_then(|c| c.manifest.partition.clone());
    let chosen = match (flag, &then) {
        (Some(f), Some(t)) if f != t => {
            return Err(Problem {
                message: format!(
                    "`--partition {f}` is not the report's partition (`--partition {t}`)"
                ),
                hint: "leave `--partition` out to resume the report's own shard".to_owned(),
            });
        }
        (Some(f), None) if continuing.is_some() => {
            return Err(Problem {
                message: format!("`--partition {f}`: the report is not a shard"),
                hint: "leave `--partition` out to complete the whole report".to_owned(),
            });
        }
        (Some(f), _) => Some(f.to_owned()),
        (None, t) => t.clone(),
    };
    chosen
        .map(|p| {
            p.parse()
                .map_err(|e: super::partition::PartitionError| Problem {
                    hint: e.hint().to_owned(),
                    message: e.to_string(),
                })
        })
        .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::catalog::ModelSelector;

    fn task(id: &str) -> Arc<Task> {
        Arc::new(Task::bare(id, id))
    }

    fn run(task: &Arc<Task>, epoch: u32) -> PlannedRun {
        PlannedRun {
            task: task.clone(),
            model: ModelSelector {
                provider: "p".into(),
                model: "m".into(),
            },
            epoch,
            edit_strategy: "pi".into(),
            cassette: "c.yaml".into(),
        }
    }

    fn entry(key_task: &str, epoch: u32, outcome: Outcome, kind: Option<&str>) -> JournalEntry {
        let mut r = crate::record::RunRecord::skipped(key_task, "p", "m", epoch, "");
        r.outcome = outcome;
        r.error_kind = kind.map(crate::record::ErrorKind::from_name);
        JournalEntry::now(r)
    }

    #[test]
    fn the_plan_sorts_and_names_tasks_without_runs() {
        let (a, b, c) = (task("a"), task("b"), task("c"));
        let plan = SuitePlan::new(
            &[c.clone(), a.clone(), b.clone()],
            vec![run(&c, 2), run(&a, 1), run(&c, 1)],
        );
        assert_eq!(
            plan.keys(),
            ["a--p--m--e1", "b--------e1", "c--p--m--e1", "c--p--m--e2"]
        );
        assert_eq!(plan.unplanned()[0].id, "b");
        assert_eq!(plan.runs().len(), 3);
        let part = plan.part(Some(&"count:2/2".parse().unwrap()));
        assert_eq!(part.keys(), ["b--------e1", "c--p--m--e2"]);
    }

    #[test]
    fn a_folder_run_again_runs_the_missing_and_the_infrastructure_errors() {
        let (a, b) = (task("a"), task("b"));
        let plan = SuitePlan::new(
            &[a.clone(), b.clone()],
            vec![run(&a, 1), run(&a, 2), run(&a, 3), run(&b, 1)],
        );
        let journal = [
            entry("a", 1, Outcome::Passed, None),
            entry("a", 2, Outcome::Error, Some("rate_limited")),
            entry("a", 3, Outcome::Error, Some("model_error")),
        ];
        let latest: HashMap<&str, &JournalEntry> =
            journal.iter().map(|e| (e.run.as_str(), e)).collect();
        assert_eq!(
            plan.remaining(&latest).keys(),
            ["a--p--m--e2", "b--p--m--e1"],
            "a model error is a verdict; a rate limit and a missing run are not"
        );
        assert_eq!(plan.never_finished(&latest), 1);
        // The last attempt wins; a run skipped now keeps its earlier attempt.
        let mut retried = crate::record::RunRecord::skipped("a", "p", "m", 2, "");
        retried.outcome = Outcome::Passed;
        let skipped = crate::record::RunRecord::skipped("b", "p", "m", 1, "budget");
        let mut skipped_again = crate::record::RunRecord::skipped("a", "p", "m", 3, "budget");
        skipped_again.outcome = Outcome::Skipped;
        let done = final_records(&plan, &latest, vec![retried, skipped, skipped_again]);
        let got: Vec<(String, Outcome)> = done.iter().map(|r| (record_key(r), r.outcome)).collect();
        assert_eq!(
            got,
            [
                ("a--p--m--e1".to_owned(), Outcome::Passed),
                ("a--p--m--e2".to_owned(), Outcome::Passed),
                ("a--p--m--e3".to_owned(), Outcome::Error),
                ("b--p--m--e1".to_owned(), Outcome::Skipped),
            ]
        );
    }

    #[test]
    fn the_partition_is_the_reports_unless_given_otherwise() {
        assert_eq!(partition(None, None).unwrap(), None);
        assert_eq!(
            partition(Some("hash:2/3"), None)
                .unwrap()
                .unwrap()
                .to_string(),
            "hash:2/3"
        );
        let err = partition(Some("hash:4/3"), None).unwrap_err();
        assert!(err.message.contains("from 1 to 3"), "{err:?}");
        assert!(err.hint.contains("hash:M/N"), "{err:?}");
    }
}
