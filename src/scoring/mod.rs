//! Scoring: run a task's checks after the agent stops and build the per-run record.
