//! Node.js bindings of skilldeck's host layer: the native half of the npm
//! package `skilldeck` (the JavaScript half, `npm/`, adds the error
//! classes, seed 002's functions and the AI SDK / LangChain.js tools).
//!
//! A thin mapping: every rule is the host's ([`skilldeck_host::Host`]);
//! this crate converts values and runs every call that reads files or runs
//! code on libuv's thread pool (`job::Job`), so it answers a Promise and
//! never blocks the JavaScript thread.

mod deck;
mod errors;
mod handler;
mod job;
mod telemetry;
mod types;

pub use deck::{
    ActivateOptions, CallOptions, CatalogOptions, Deck, DiscoverOptions, RunOptions, SearchOptions,
    TraceOptions, validate,
};
pub use errors::PREFIX as ERROR_PREFIX;
pub use telemetry::{flush_telemetry, shutdown_telemetry, telemetry_enabled};
pub use types::{
    Activation, CacheStats, Diagnostic, HostToolAnswer, Reload, Resource, RunResult, SearchHit,
    Skill, SkillToolInfo, ToolCall, ToolSpec,
};
