//! The integration tests of `skilldeck-audit`: one module per area (each was a
//! `tests/*.rs` file of its own; one test binary per crate, issue 30).
//! One module's tests: `cargo test -p skilldeck-audit --test audit -- labelled::`.

#[path = "../common/mod.rs"]
mod common;
mod labelled;
mod not_on_index;
