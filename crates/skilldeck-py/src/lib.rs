//! # skilldeck-py
//!
//! The native half of the `skilldeck` Python package: the private module
//! `skilldeck._native`, binding skilldeck's host layer
//! ([`skilldeck_host::Host`]: snapshots, the activation cache, the
//! per-conversation "already active" notice, the agent tools as data) and
//! the core's validator. The Python half (`python/skilldeck/`) adds the
//! public `Deck`, the async twins and the LangChain tools.
//!
//! The binding holds no rule: which skills are served, names, messages and
//! suggestions come from the host and the core; this crate only converts
//! values and maps errors to exceptions (one place: `src/errors.rs`). Every call
//! that touches the disk or the deck runs with the GIL released
//! (`Python::detach`), so Python threads (and the async twins, which run
//! calls in a thread pool) proceed meanwhile.

#![deny(missing_docs)]

mod deck;
mod diagnostic;
mod errors;
mod exec;
mod telemetry;
mod types;
mod validate;

use pyo3::prelude::*;

/// True when `text` is a rendered activation or an "already active"
/// notice (the host's rule): a message to keep out of context compaction.
#[pyfunction]
fn is_skill_content(text: &str) -> bool {
    skilldeck_host::is_skill_content(text)
}

/// The native module `skilldeck._native` (private: import `skilldeck`).
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<deck::Deck>()?;
    m.add_class::<types::Skill>()?;
    m.add_class::<diagnostic::Diagnostic>()?;
    m.add_class::<types::Activation>()?;
    m.add_class::<types::Resource>()?;
    m.add_class::<types::SearchHit>()?;
    m.add_class::<types::CacheStats>()?;
    m.add_class::<types::Reload>()?;
    m.add_class::<types::ToolSpec>()?;
    m.add_class::<exec::RunResult>()?;
    m.add_class::<exec::OutputFile>()?;
    m.add_class::<exec::SkillToolInfo>()?;
    m.add_function(wrap_pyfunction!(validate::validate, m)?)?;
    m.add_function(wrap_pyfunction!(is_skill_content, m)?)?;
    m.add_function(wrap_pyfunction!(telemetry::flush_telemetry, m)?)?;
    m.add_function(wrap_pyfunction!(telemetry::shutdown_telemetry, m)?)?;
    m.add_function(wrap_pyfunction!(telemetry::telemetry_enabled, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
