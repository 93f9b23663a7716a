//! The integration-test binary: one module per area.

mod cassettes;
mod providers;
