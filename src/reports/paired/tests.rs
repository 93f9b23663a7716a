//! Tests of comparisons: how arms pair across folders, flips, the paired statistics against
//! hand-computed values, and the markdown and CSV views.

use super::*;
use crate::record::RunFile;
use crate::reports::fixtures::{Scenario, rec};

/// A run of `task` by `provider` with `strategy`, passing or failing.
fn run(task: &str, provider: &str, strategy: &str, epoch: u32, passed: bool) -> RunFile {
    let outcome = if passed {
        Outcome::Passed
    } else {
        Outcome::Diverged
    };
    let mut file = RunFile::record_only(rec(task, provider, "m", epoch, outcome));
    file.edit_strategy = Some(strategy.to_owned());
    file
}

fn arm_runs(files: &[RunFile]) -> Vec<ArmRun<'_>> {
    files.iter().map(|f| (Arm::of(f), &f.record)).collect()
}

/// The shipped suite's shape: four providers, nine tasks; under `exact` one task's fuzzy edit
/// fails on every provider.
fn suite(strategy: &str, broken: Option<&str>) -> Vec<RunFile> {
    let mut out = Vec::new();
    for provider in ["anthropic", "google", "openai", "openai-responses"] {
        for task in 1..=9 {
            let task = format!("task-{task}");
            let passed = broken != Some(task.as_str());
            out.push(run(&task, provider, strategy, 1, passed));
        }
    }
    out
}

#[test]
fn two_folders_pair_provider_with_provider_across_strategies() {
    let base = suite("pi", None);
    let new = suite("exact", Some("task-5"));
    let cmp = compare_sides(&arm_runs(&base), &arm_runs(&new));
    assert_eq!(cmp.arms.len(), 4, "provider pairs with provider");
    assert!(
        cmp.with_strategy,
        "arms differ only by strategy: labels show it"
    );
    for a in &cmp.arms {
        assert_eq!(a.base.provider, a.new.provider);
        assert_eq!(a.base.strategy.as_deref(), Some("pi"));
        assert_eq!(a.new.strategy.as_deref(), Some("exact"));
        assert_eq!(
            (a.stats.pairs, a.stats.regressions, a.stats.fixes),
            (9, 1, 0)
        );
        // One discordant pair: 2 · P[X ≤ 0], X ~ Bin(1, 1/2) = 1.
        assert_eq!(a.stats.p_value, 1.0);
        let flips: Vec<_> = a.flips().collect();
        assert_eq!(flips.len(), 1);
        assert_eq!(flips[0].0, Flip::Regressed);
        assert_eq!(flips[0].1.base.task_id, "task-5");
    }
    let pooled = cmp.pooled.as_ref().expect("four pairs of arms are pooled");
    // b = 4, c = 0: p = 2 · (1/2)^4 = 0.125, by hand.
    assert_eq!((pooled.stats.pairs, pooled.stats.regressions), (36, 4));
    assert!((pooled.stats.p_value - 0.125).abs() < 1e-12);
    assert!((pooled.stats.difference().unwrap() + 4.0 / 36.0).abs() < 1e-12);
    let i = pooled.stats.interval.unwrap();
    assert!(i.low < -4.0 / 36.0 && i.high <= 0.0, "{i:?}");
    assert!(cmp.any_regression_flip());
    assert!(
        !cmp.significant_regression(0.05),
        "p = 0.125 is not below 0.05"
    );
    assert!(cmp.significant_regression(0.2));
    assert_eq!(cmp.flips().count(), 4, "the pooled row repeats no flip");
}

#[test]
fn single_arm_folders_pair_whatever_their_models_are_called() {
    let base = vec![
        run("a", "p1", "pi", 1, true),
        run("b", "p1", "pi", 1, false),
    ];
    let new = vec![
        run("a", "p2", "pi", 1, false),
        run("b", "p2", "pi", 1, true),
    ];
    let cmp = compare_sides(&arm_runs(&base), &arm_runs(&new));
    assert_eq!(cmp.arms.len(), 1);
    assert!(cmp.pooled.is_none());
    let s = &cmp.arms[0].stats;
    assert_eq!((s.regressions, s.fixes), (1, 1));
    assert_eq!(s.difference(), Some(0.0));
    assert!(!cmp.with_strategy);
}

#[test]
fn mcnemar_on_the_discordant_pairs_by_hand() {
    // 1 run passed → failed, 7 failed → passed, 12 unchanged: p = 2·(1 + 8)/2^8 = 18/256.
    let mut base = Vec::new();
    let mut new = Vec::new();
    for i in 0..20 {
        let task = format!("t{i:02}");
        let (b, n) = match i {
            0 => (true, false),
            1..=7 => (false, true),
            8..=13 => (true, true),
            _ => (false, false),
        };
        base.push(run(&task, "p", "pi", 1, b));
        new.push(run(&task, "p", "pi", 1, n));
    }
    let cmp = compare_sides(&arm_runs(&base), &arm_runs(&new));
    let s = &cmp.arms[0].stats;
    assert_eq!((s.pairs, s.regressions, s.fixes), (20, 1, 7));
    assert!((s.p_value - 18.0 / 256.0).abs() < 1e-12);
    assert!(
        !s.significant_regression(0.05),
        "more fixes than regressions"
    );
    assert_eq!(rate_with_n(s.base_passed, s.pairs), "35.0% (7/20)");
    assert_eq!(rate_with_n(s.new_passed, s.pairs), "65.0% (13/20)");
    assert_eq!(points(s.difference()), "+30.0 pp");
}

#[test]
fn pairs_with_an_infrastructure_error_or_a_skip_are_left_out() {
    let base = vec![
        run("a", "p", "pi", 1, true),
        run("b", "p", "pi", 1, true),
        run("c", "p", "pi", 1, true),
        run("d", "p", "pi", 2, true),
    ];
    let mut new = vec![
        run("a", "p", "pi", 1, false),
        run("b", "p", "pi", 1, false),
        run("c", "p", "pi", 1, true),
        run("e", "p", "pi", 1, true),
    ];
    new[0].record = Scenario::new("a", "p", "m", 1, Outcome::Error)
        .rate_limited()
        .record();
    new[1].record = Scenario::new("b", "p", "m", 1, Outcome::Skipped).record();
    let cmp = compare_sides(&arm_runs(&base), &arm_runs(&new));
    let a = &cmp.arms[0];
    assert_eq!((a.stats.pairs, a.stats.excluded), (1, 2));
    assert_eq!((a.unpaired_base, a.unpaired_new), (1, 1));
    assert_eq!(a.flips().count(), 0, "an infrastructure error is no flip");
    // A model error counts against the model: it flips.
    let mut new2 = new.clone();
    new2[0].record = rec("a", "p", "m", 1, Outcome::Error);
    let cmp = compare_sides(&arm_runs(&base), &arm_runs(&new2));
    assert_eq!(cmp.arms[0].flips().count(), 1);
}

#[test]
fn one_folder_compares_every_pair_of_its_arms() {
    let mut files = Vec::new();
    for provider in ["a", "b", "c"] {
        files.push(run("t", provider, "pi", 1, provider != "c"));
    }
    let cmp = compare_within(&arm_runs(&files));
    let pairs: Vec<(String, String)> = cmp
        .arms
        .iter()
        .map(|a| (a.base.provider.clone(), a.new.provider.clone()))
        .collect();
    assert_eq!(
        pairs,
        [
            ("a".into(), "b".into()),
            ("a".into(), "c".into()),
            ("b".into(), "c".into())
        ]
    );
    assert!(cmp.pooled.is_none());
    assert_eq!(cmp.flips().count(), 2);
}

#[test]
fn epochs_pair_by_task_and_epoch() {
    let base = vec![run("a", "p", "pi", 1, true), run("a", "p", "pi", 2, true)];
    let new = vec![run("a", "p", "pi", 2, false), run("a", "p", "pi", 1, true)];
    let cmp = compare_sides(&arm_runs(&base), &arm_runs(&new));
    let flips: Vec<u32> = cmp.flips().map(|(_, _, p)| p.new.epoch).collect();
    assert_eq!(flips, [2]);
}

#[test]
fn markdown_and_csv_views() {
    let base = suite("pi", None);
    let new = suite("exact", Some("task-5"));
    let cmp = compare_sides(&arm_runs(&base), &arm_runs(&new));
    let md = comparison_md(&cmp, "##", true, &|r, side| {
        Some(format!(
            "{}/{}",
            if side == Side::Base {
                "../base"
            } else {
                "../new"
            },
            r.transcript_path
        ))
    });
    assert!(
        md.contains(
            "| anthropic/m (pi) | anthropic/m (exact) | 9 | 100.0% (9/9) | 88.9% (8/9) | -11.1 pp |"
        ),
        "{md}"
    );
    assert!(md.contains("| all arms | all arms | 36 |"), "{md}");
    assert!(
        md.contains("4 run(s) flipped: 4 passed → not passed, 0 not passed → passed."),
        "{md}"
    );
    assert!(
        md.contains("[base](../base/runs/task-5--google--m--e1/transcript.md)"),
        "{md}"
    );
    assert!(md.contains("passed → diverged"), "{md}");
    let csv = comparison_csv(&cmp).unwrap();
    let mut reader = ::csv::Reader::from_reader(csv.as_bytes());
    let header = reader.headers().unwrap().clone();
    assert_eq!(header.len(), CSV_COLUMNS.len() + 1);
    let rows: Vec<::csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 5);
    let get = |row: &::csv::StringRecord, name: &str| {
        row[header.iter().position(|h| h == name).unwrap()].to_owned()
    };
    assert_eq!(get(&rows[0], "base_strategy"), "pi");
    assert_eq!(get(&rows[0], "flips"), "task-5#1");
    assert_eq!(get(&rows[4], "pooled"), "true");
    assert_eq!(get(&rows[4], "mcnemar_p"), "0.125000");
    assert_eq!(get(&rows[4], "passed_to_not"), "4");
}
