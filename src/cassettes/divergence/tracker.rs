//! The tracker: request after request, every difference reported once, at the request where it
//! first appears (every request repeats the whole history, so a change made in request 3
//! reappears in requests 4, 5 and on). Also the two differences of the request count: a request
//! the cassette does not have, recorded requests never made.
//!
//! Depends on [`super::types`] and `super::classify` only.

use std::collections::HashSet;

use serde_json::Value;

use super::classify::classify;
use super::types::{Change, Difference, DivergenceKind, turn_of_request};
use crate::providers::ApiKind;

/// Compares request after request and reports each difference once, at the request where it
/// first appears.
#[derive(Debug, Clone)]
pub struct DivergenceTracker {
    api: ApiKind,
    seen: HashSet<u64>,
    all: Vec<Difference>,
}

impl DivergenceTracker {
    /// A tracker for one replayed run in wire format `api`.
    pub fn new(api: ApiKind) -> Self {
        DivergenceTracker {
            api,
            seen: HashSet::new(),
            all: Vec::new(),
        }
    }

    /// Compares request `index`, recorded and built now (both `{"method", "path", "headers",
    /// "body"}`, normalised); returns only the differences not reported for an earlier request
    /// (and keeps them for [`DivergenceTracker::all`]).
    pub fn compare(&mut self, index: usize, recorded: &Value, now: &Value) -> Vec<Difference> {
        let found = classify(self.api, index, recorded, now);
        let mut new = Vec::new();
        for (key, diff) in found {
            if self.seen.insert(key) {
                new.push(diff);
            }
        }
        self.all.extend(new.iter().cloned());
        new
    }

    /// The run sent request `index` (0-based) and the cassette has only `recorded` requests.
    pub fn extra_request(&mut self, index: usize, recorded: usize) -> Difference {
        let diff = Difference {
            kind: DivergenceKind::ExtraRequest,
            change: Change::Added,
            request: index,
            turn: turn_of_request(index),
            subject: format!("extra request {}", index + 1),
            location: format!("request {} (the cassette has {recorded})", index + 1),
            detail: Some(format!("the cassette has {recorded}")),
            recorded: None,
            now: None,
            diff: String::new(),
        };
        self.all.push(diff.clone());
        diff
    }

    /// The run ended after `served` requests of the cassette's `total`: a difference when some
    /// were never asked for, else `None`.
    pub fn missing_requests(&mut self, served: usize, total: usize) -> Option<Difference> {
        if served >= total {
            return None;
        }
        let unused = total - served;
        let range = if unused == 1 {
            format!("request {total}")
        } else {
            format!("requests {}-{total}", served + 1)
        };
        let diff = Difference {
            kind: DivergenceKind::MissingRequests,
            change: Change::Removed,
            request: served,
            turn: turn_of_request(served),
            subject: format!("{range} never made"),
            location: format!("{range}: the run ended after {served} of {total} recorded requests"),
            detail: Some(format!("the run ended after {served} of {total}")),
            recorded: None,
            now: None,
            diff: String::new(),
        };
        self.all.push(diff.clone());
        Some(diff)
    }

    /// Every difference reported so far, in the order found.
    pub fn all(&self) -> &[Difference] {
        &self.all
    }

    /// The differences, owned.
    pub fn into_all(self) -> Vec<Difference> {
        self.all
    }
}

/// Every difference between request `index` recorded and built now, without the tracker's
/// memory of earlier requests (a history change shows in every request that repeats it).
pub fn differences(api: ApiKind, index: usize, recorded: &Value, now: &Value) -> Vec<Difference> {
    classify(api, index, recorded, now)
        .into_iter()
        .map(|(_, d)| d)
        .collect()
}
