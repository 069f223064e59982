//! The integration tests of `skilldeck-registry`: one module per area (each was a
//! `tests/*.rs` file of its own).
//!
//! One test binary per crate (issue 30): each `tests/*.rs` file is an
//! executable of its own, which cargo compiles and links against the whole
//! dependency graph (about a hundred of them took minutes of the workspace's
//! test build on two cores); as modules of this binary they build and link
//! once. One module's tests: `cargo test -p skilldeck-registry --test registry -- api::`.
//!
//! The tests share this process; `telemetry`'s, which install the global
//! `tracing` subscriber, each run alone in a child process
//! (`skilldeck_testkit::process::in_own_process`).

mod api;
mod auth;
mod common;
mod faults;
mod telemetry;
mod ui_sessions;
