//! One attempt of a task that allows several (`attempts: N`): whether its checks passed, and
//! where in the conversation it ended. The leaderboard figures (pass rate at attempt 1 and at
//! attempt N) are counted from these.

use serde::{Deserialize, Serialize};

/// How one attempt ended: its checks, after the agent stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttemptOutcome {
    /// 1-based.
    pub attempt: u32,
    /// Every check passed (and there was one).
    pub passed: bool,
    pub checks_passed: u32,
    pub checks_total: u32,
    /// The model replies of the run when the attempt ended.
    pub turns: u32,
}
