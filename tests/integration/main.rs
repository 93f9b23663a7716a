//! The integration-test binary: one submodule per area.

mod reports;
mod tasks;
