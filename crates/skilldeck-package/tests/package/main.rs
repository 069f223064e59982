//! The integration tests of `skilldeck-package`: one module per area (each was a
//! `tests/*.rs` file of its own).
//!
//! One test binary per crate (issue 30): each `tests/*.rs` file is an
//! executable of its own, which cargo compiles and links against the whole
//! dependency graph (about a hundred of them took minutes of the workspace's
//! test build on two cores); as modules of this binary they build and link
//! once. One module's tests: `cargo test -p skilldeck-package --test package -- hostile::`.

mod hostile;
mod packages;
mod signing;
