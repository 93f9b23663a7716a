//! The integration-test binary: one submodule per area.

mod tasks;
