//! The integration tests of `skilldeck-registry-ui`: one module per area (each was a
//! `tests/*.rs` file of its own).
//!
//! One test binary per crate (issue 30): each `tests/*.rs` file is an
//! executable of its own, which cargo compiles and links against the whole
//! dependency graph (about a hundred of them took minutes of the workspace's
//! test build on two cores); as modules of this binary they build and link
//! once. One module's tests: `cargo test -p skilldeck-registry-ui --test ui -- oidc::`.

// The registry suite's backend set-up (a database and a store per test,
// from the environment), shared rather than copied.
// (`store_dir` is read only there.)
#[path = "../../../skilldeck-registry/tests/registry/common.rs"]
#[allow(dead_code)]
mod backend;
mod common;
mod oidc;
mod replicas;
mod router;
