//! What comparing a replayed request costs: normalising with the built-in rules for volatile
//! tool output (`cassettes::noise`), and classifying the differences in conversation terms
//! (`cassettes::divergence`).
//!
//! Over every request of every shipped cassette (all four wire formats), in the process:
//! - normalise: each request's strings through the workspace-free rule pass a replay does on
//!   both sides, once with no rule and once with the built-in rules;
//! - classify, equal: `DivergenceTracker::compare` on a request against itself (the common case:
//!   the fast path of an unchanged request);
//! - classify, changed: against a copy where every edit result says "Replaced" instead of
//!   "Successfully replaced" (every request after the first edit differs; the worst case of
//!   `--on-divergence continue` after a tool change).
//!
//! Run with `cargo bench --bench replay_compare` (`-- --rounds N`, default 5).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use harness::cassettes::Cassette;
use harness::cassettes::divergence::DivergenceTracker;
use harness::cassettes::noise;
use harness::cassettes::normalize::{NormalizeRule, apply_rules, map_strings};
use harness::providers::ApiKind;
use serde_json::{Value, json};

fn cassettes(root: &Path) -> Vec<(ApiKind, Vec<Value>)> {
    let mut out = Vec::new();
    let mut paths = Vec::new();
    for task in std::fs::read_dir(root.join("cassettes")).unwrap() {
        for file in std::fs::read_dir(task.unwrap().path()).unwrap() {
            paths.push(file.unwrap().path());
        }
    }
    paths.sort();
    for path in paths {
        let text = std::fs::read_to_string(&path).unwrap();
        let c = Cassette::from_yaml(&text, &path).unwrap();
        let requests = c
            .interactions
            .iter()
            .map(|it| {
                let r = &it.request;
                json!({"method": r.method, "path": r.path, "headers": r.headers, "body": r.body})
            })
            .collect();
        out.push((c.header.api, requests));
    }
    out
}

fn normalise_all(all: &[(ApiKind, Vec<Value>)], rules: &[NormalizeRule]) -> Duration {
    let started = Instant::now();
    for (_, requests) in all {
        for r in requests {
            // Both sides of the comparison.
            for _ in 0..2 {
                let mut v = r.clone();
                map_strings(&mut v, &|s| apply_rules(s, rules));
                std::hint::black_box(&v);
            }
        }
    }
    started.elapsed()
}

fn classify_all(all: &[(ApiKind, Vec<Value>)], now: &[(ApiKind, Vec<Value>)]) -> (Duration, usize) {
    let started = Instant::now();
    let mut found = 0;
    for ((api, recorded), (_, current)) in all.iter().zip(now) {
        let mut t = DivergenceTracker::new(*api);
        for (i, (a, b)) in recorded.iter().zip(current).enumerate() {
            found += t.compare(i, a, b).len();
        }
    }
    (started.elapsed(), found)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let rounds: usize = std::env::args()
        .skip_while(|a| a != "--rounds")
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(5);
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let all = cassettes(&root);
    let requests: usize = all.iter().map(|(_, r)| r.len()).sum();
    let bytes: usize = all
        .iter()
        .flat_map(|(_, r)| r.iter())
        .map(|r| serde_json::to_vec(r).unwrap().len())
        .sum();
    let changed: Vec<(ApiKind, Vec<Value>)> = all
        .iter()
        .map(|(api, rs)| {
            let rs = rs
                .iter()
                .map(|r| {
                    let mut r = r.clone();
                    map_strings(&mut r, &|s| s.replace("Successfully replaced", "Replaced"));
                    r
                })
                .collect();
            (*api, rs)
        })
        .collect();
    let rules = noise::default_rules();
    println!(
        "{} cassettes, {requests} requests, {:.1} MB of request JSON; {} built-in rules",
        all.len(),
        bytes as f64 / 1e6,
        rules.len()
    );
    let mut best = [f64::MAX; 4];
    let mut diffs = 0;
    for round in 0..rounds {
        let none = ms(normalise_all(&all, &[]));
        let with = ms(normalise_all(&all, &rules));
        let (equal, _) = classify_all(&all, &all);
        let (differ, n) = classify_all(&all, &changed);
        diffs = n;
        println!(
            "round {}: normalise both sides {none:.1} ms without rules, {with:.1} ms with; classify {:.1} ms equal, {:.1} ms changed",
            round + 1,
            ms(equal),
            ms(differ)
        );
        for (b, v) in best.iter_mut().zip([none, with, ms(equal), ms(differ)]) {
            *b = b.min(v);
        }
    }
    if std::env::args().any(|a| a == "--per-rule") {
        let none = ms(normalise_all(&all, &[]));
        for (doc, rule) in noise::RULES.iter().zip(rules.iter()) {
            let t = ms(normalise_all(&all, std::slice::from_ref(rule))) - none;
            println!("  {:<20} {t:>7.1} ms", doc.name);
        }
    }
    let per = |v: f64| v * 1000.0 / requests as f64;
    println!(
        "best: normalise {:.1} ms -> {:.1} ms with the rules (+{:.1} us per request); classify {:.1} ms equal ({:.1} us per request), {:.1} ms changed ({:.1} us per request, {diffs} differences)",
        best[0],
        best[1],
        per(best[1] - best[0]),
        best[2],
        per(best[2]),
        best[3],
        per(best[3])
    );
}
