//! Partitioning a plan into shards (`--partition hash:M/N` or `count:M/N`, as nextest does), so
//! that N machines each run one part of a suite and `harness merge` puts the parts together.
//!
//! Both kinds are deterministic across machines: they depend only on the planned runs' names,
//! never on the order tasks were listed or discovered, the host, or Rust's randomised hasher.
//!
//! * `hash:M/N` puts every run of a task (all its models, epochs and edit strategies) in shard
//!   `fnv1a64(task id) mod N + 1`, with 64-bit FNV-1a over the id's UTF-8 bytes (offset basis
//!   `0xcbf29ce484222325`, prime `0x100000001b3`). A task's shard depends on its id alone, so
//!   adding or removing a task moves no other task's runs.
//! * `count:M/N` sorts the plan (task, provider, model, the default edit strategy first, then
//!   the others by name, epoch: report order) and deals it out round-robin: the i-th run (from
//!   0) goes to shard `i mod N + 1`. The shards' sizes differ by at most one, but adding a task
//!   moves the runs after it.
//!
//! `M` is 1-based (shard 1 of 3 is `1/3`), as in nextest and Kubernetes' completion index + 1.

use std::fmt;
use std::str::FromStr;

use super::plan::PlannedRun;

/// How runs are dealt out to shards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PartitionKind {
    /// By the hash of the task id: a task's runs stay together and stay put.
    Hash,
    /// Round-robin over the sorted plan: even shards.
    Count,
}

/// One shard of a plan: `shard` of `total`, 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Partition {
    pub kind: PartitionKind,
    pub shard: u32,
    pub total: u32,
}

/// Why a `--partition` value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`--partition {value}` is not a partition: {why}")]
pub struct PartitionError {
    pub value: String,
    pub why: String,
}

impl PartitionError {
    /// How to write one.
    pub fn hint(&self) -> &'static str {
        "write `hash:M/N` (every run of a task in one shard) or `count:M/N` (even shards), with \
         1 <= M <= N, for example `--partition hash:1/3`"
    }
}

impl FromStr for Partition {
    type Err = PartitionError;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        let err = |why: &str| PartitionError {
            value: value.to_owned(),
            why: why.to_owned(),
        };
        let (kind, rest) = value
            .split_once(':')
            .ok_or_else(|| err("it has no kind (`hash:` or `count:`)"))?;
        let kind = match kind {
            "hash" => PartitionKind::Hash,
            "count" => PartitionKind::Count,
            _ => return Err(err(&format!("unknown kind `{kind}`"))),
        };
        let (m, n) = rest
            .split_once('/')
            .ok_or_else(|| err("the shard is not written M/N"))?;
        let number = |s: &str, what: &str| {
            s.parse::<u32>()
                .map_err(|_| err(&format!("{what} `{s}` is not a whole number")))
        };
        let (shard, total) = (number(m, "M")?, number(n, "N")?);
        if total == 0 {
            return Err(err("N must be at least 1"));
        }
        if shard == 0 || shard > total {
            return Err(err(&format!("M must be from 1 to {total} (M is 1-based)")));
        }
        Ok(Partition { kind, shard, total })
    }
}

impl fmt::Display for Partition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            PartitionKind::Hash => "hash",
            PartitionKind::Count => "count",
        };
        write!(f, "{kind}:{}/{}", self.shard, self.total)
    }
}

/// 64-bit FNV-1a of `bytes`: the fixed hash of `hash:` partitions (never Rust's randomised one).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// What a partition needs to know of one entry of the plan: its task and where it sorts.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct PlanOrder {
    pub task: String,
    pub provider: String,
    pub model: String,
    /// `false` for the default edit strategy, which sorts first.
    pub other_strategy: bool,
    pub edit_strategy: String,
    pub epoch: u32,
}

impl PlanOrder {
    /// The place of a planned run.
    pub fn of(run: &PlannedRun) -> PlanOrder {
        PlanOrder {
            task: run.task.id.clone(),
            provider: run.model.provider.clone(),
            model: run.model.model.clone(),
            other_strategy: run.edit_strategy != crate::record::DEFAULT_EDIT_STRATEGY,
            edit_strategy: run.edit_strategy.clone(),
            epoch: run.epoch,
        }
    }
}

impl Partition {
    /// The shard a task's runs go to under `hash:` (1-based).
    pub fn hash_shard(task: &str, total: u32) -> u32 {
        (fnv1a64(task.as_bytes()) % u64::from(total.max(1))) as u32 + 1
    }

    /// For each entry of `plan` (in any order), whether it is in this shard.
    pub fn assign(&self, plan: &[PlanOrder]) -> Vec<bool> {
        match self.kind {
            PartitionKind::Hash => plan
                .iter()
                .map(|p| Partition::hash_shard(&p.task, self.total) == self.shard)
                .collect(),
            PartitionKind::Count => {
                let mut order: Vec<usize> = (0..plan.len()).collect();
                order.sort_by(|&a, &b| plan[a].cmp(&plan[b]));
                let mut mine = vec![false; plan.len()];
                for (rank, index) in order.into_iter().enumerate() {
                    mine[index] = (rank as u64 % u64::from(self.total)) as u32 + 1 == self.shard;
                }
                mine
            }
        }
    }

    /// The planned runs of this shard, in the order given.
    pub fn select(&self, planned: Vec<PlannedRun>) -> Vec<PlannedRun> {
        let order: Vec<PlanOrder> = planned.iter().map(PlanOrder::of).collect();
        let mine = self.assign(&order);
        planned
            .into_iter()
            .zip(mine)
            .filter_map(|(run, keep)| keep.then_some(run))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use super::*;

    fn entry(task: &str, model: &str, strategy: &str, epoch: u32) -> PlanOrder {
        PlanOrder {
            task: task.into(),
            provider: "p".into(),
            model: model.into(),
            other_strategy: strategy != "pi",
            edit_strategy: strategy.into(),
            epoch,
        }
    }

    /// A plan of `tasks`, 2 models x 2 strategies x 3 epochs each.
    fn plan(tasks: &[String]) -> Vec<PlanOrder> {
        let mut out = Vec::new();
        for t in tasks {
            for m in ["m1", "m2"] {
                for s in ["pi", "exact"] {
                    for e in 1..=3 {
                        out.push(entry(t, m, s, e));
                    }
                }
            }
        }
        out
    }

    fn shards(partition_kind: &str, total: u32, plan: &[PlanOrder]) -> BTreeMap<PlanOrder, u32> {
        let mut out = BTreeMap::new();
        for m in 1..=total {
            let p: Partition = format!("{partition_kind}:{m}/{total}").parse().unwrap();
            for (e, mine) in plan.iter().zip(p.assign(plan)) {
                if mine {
                    assert!(out.insert(e.clone(), m).is_none(), "{e:?} in two shards");
                }
            }
        }
        out
    }

    #[test]
    fn partitions_parse_and_print() {
        let p: Partition = "hash:2/3".parse().unwrap();
        assert_eq!(
            p,
            Partition {
                kind: PartitionKind::Hash,
                shard: 2,
                total: 3
            }
        );
        assert_eq!(p.to_string(), "hash:2/3");
        assert_eq!(
            "count:1/1".parse::<Partition>().unwrap().to_string(),
            "count:1/1"
        );
        for (bad, why) in [
            ("hash", "no kind"),
            ("slice:1/2", "unknown kind `slice`"),
            ("hash:1", "M/N"),
            ("hash:0/3", "1-based"),
            ("hash:4/3", "from 1 to 3"),
            ("count:1/0", "at least 1"),
            ("count:x/2", "`x` is not a whole number"),
            ("count:-1/2", "`-1` is not a whole number"),
        ] {
            let e = bad.parse::<Partition>().unwrap_err();
            assert!(e.to_string().contains(why), "{bad}: {e}");
            assert!(e.to_string().starts_with(&format!("`--partition {bad}`")));
        }
    }

    #[test]
    fn fnv1a_is_the_documented_function() {
        // The published FNV-1a 64 test vectors.
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn every_run_is_in_exactly_one_shard_whatever_the_order() {
        let tasks: Vec<String> = (0..40).map(|i| format!("task-{i}")).collect();
        let forward = plan(&tasks);
        let mut backward = forward.clone();
        backward.reverse();
        for kind in ["hash", "count"] {
            let a = shards(kind, 4, &forward);
            assert_eq!(a.len(), forward.len(), "{kind}: every run has a shard");
            assert_eq!(
                a,
                shards(kind, 4, &backward),
                "{kind}: order does not matter"
            );
        }
        // count: even shards.
        let sizes = shards("count", 7, &forward).values().fold(
            BTreeMap::<u32, usize>::new(),
            |mut m, s| {
                *m.entry(*s).or_default() += 1;
                m
            },
        );
        let (min, max) = (sizes.values().min().unwrap(), sizes.values().max().unwrap());
        assert!(max - min <= 1, "{sizes:?}");
        // hash: a task's runs (every model, strategy and epoch) share one shard.
        let by_task = shards("hash", 4, &forward).into_iter().fold(
            BTreeMap::<String, BTreeSet<u32>>::new(),
            |mut m, (e, s)| {
                m.entry(e.task).or_default().insert(s);
                m
            },
        );
        assert!(by_task.values().all(|s| s.len() == 1), "{by_task:?}");
        let used: BTreeSet<u32> = by_task.values().flatten().copied().collect();
        assert_eq!(used.len(), 4, "40 tasks reach all 4 shards: {by_task:?}");
    }

    #[test]
    fn adding_a_task_moves_only_that_tasks_runs_under_hash() {
        let tasks: Vec<String> = (0..30).map(|i| format!("task-{i}")).collect();
        let before = shards("hash", 3, &plan(&tasks));
        let mut more = tasks.clone();
        more.insert(7, "a-new-task".to_owned());
        let after = shards("hash", 3, &plan(&more));
        for (entry, shard) in &after {
            match before.get(entry) {
                Some(old) => assert_eq!(old, shard, "{entry:?} moved"),
                None => assert_eq!(entry.task, "a-new-task"),
            }
        }
        assert_eq!(after.len(), before.len() + 12);
    }
}
