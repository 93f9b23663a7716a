//! The integration-test binary: one submodule per area.

mod providers;
mod tasks;
