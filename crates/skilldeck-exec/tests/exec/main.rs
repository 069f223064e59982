//! The integration tests of `skilldeck-exec`: one module per area (each was a
//! `tests/*.rs` file of its own).
//!
//! One test binary per crate (issue 30): each `tests/*.rs` file is an
//! executable of its own, which cargo compiles and links against the whole
//! dependency graph (about a hundred of them took minutes of the workspace's
//! test build on two cores); as modules of this binary they build and link
//! once. One module's tests: `cargo test -p skilldeck-exec --test exec -- environment::`.
//!
//! The tests share this process: one that changes what the whole process
//! shares (its environment, its open-file limit, the tracing callsite cache)
//! or looks at all of it (every cgroup of this pid) runs alone in a child
//! process (`skilldeck_testkit::process::in_own_process`); the fixture the
//! modules share is `common`.

mod common;
mod environment;
mod escape;
mod limits;
mod netproxy;
mod refusals;
mod refusals_trace;
mod trace;
mod writes;
