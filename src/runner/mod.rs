//! The runner: loads tasks, schedules runs in parallel, and fans events out to the reporters.
