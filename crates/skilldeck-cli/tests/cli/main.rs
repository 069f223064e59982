//! The integration tests of `skilldeck-cli`: one module per area (each was a
//! `tests/*.rs` file of its own).
//!
//! One test binary per crate (issue 30): each `tests/*.rs` file is an
//! executable of its own, which cargo compiles and links against the whole
//! dependency graph (about a hundred of them took minutes of the workspace's
//! test build on two cores); as modules of this binary they build and link
//! once. One module's tests: `cargo test -p skilldeck-cli --test cli -- audit::`.
//!
//! Most modules drive the binary (`env!("CARGO_BIN_EXE_skilldeck")`) as a
//! user would. `validate` was `tests/cli.rs`: `validate`'s output, modes,
//! config and codes, `new`'s scaffold and `serve`'s refusals.

mod audit;
mod call;
mod cli_reference;
mod common;
mod deck_commands;
mod eligibility_cli;
mod environments;
mod first_hour;
mod gateway;
mod git_sources;
mod model_access;
mod oci;
mod one_fingerprint;
mod packages;
mod plugins;
mod registry_client;
mod registry_replica_start;
mod registry_serve;
// Drives the registry server's test-run API with its server-side types: only
// in a build with the `server` feature (the lean build compiles without it).
#[cfg(feature = "server")]
mod registry_test_run;
mod run;
mod seed004;
mod serve_client_roots;
mod serve_exec;
mod serve_stdio;
mod serve_watch_limit;
mod signing;
mod validate;
mod well_known;
