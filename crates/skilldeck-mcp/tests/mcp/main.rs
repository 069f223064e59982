//! The integration tests of `skilldeck-mcp`: one module per area (each was a
//! `tests/*.rs` file of its own).
//!
//! One test binary per crate (issue 30): each `tests/*.rs` file is an
//! executable of its own, which cargo compiles and links against the whole
//! dependency graph (about a hundred of them took minutes of the workspace's
//! test build on two cores); as modules of this binary they build and link
//! once. One module's tests: `cargo test -p skilldeck-mcp --test mcp -- catalog_at_scale::`.

mod catalog_at_scale;
mod exec;
mod http;
mod rules;
