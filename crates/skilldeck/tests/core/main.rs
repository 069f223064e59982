//! The integration tests of `skilldeck`: one module per area (each was a
//! `tests/*.rs` file of its own).
//!
//! One test binary per crate (issue 30): each `tests/*.rs` file is an
//! executable of its own, which cargo compiles and links against the whole
//! dependency graph (about a hundred of them took minutes of the workspace's
//! test build on two cores); as modules of this binary they build and link
//! once. One module's tests: `cargo test -p skilldeck --test core -- activation::`.
//!
//! The fixture skills stay in `tests/fixtures/`, found from
//! `CARGO_MANIFEST_DIR`.

mod activation;
mod catalog;
mod codes;
mod common;
mod config_reference;
mod discovery;
mod exec_config;
mod hostile;
mod parser_props;
mod reference_suite;
mod resources;
mod search;
mod seed004;
mod tools;
