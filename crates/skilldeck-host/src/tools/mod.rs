//! The agent-facing tools as data: each tool's [`ToolSpec`] (name, title,
//! description, JSON input schema) and its handler behind
//! [`Host::call_tool`](crate::Host::call_tool), with typed results ([`ToolOutput`]) and errors
//! ([`ToolError`](crate::ToolError)). A face only maps them to its protocol.
//!
//! - [`activate_skill`]: a skill's instructions; its description carries the
//!   catalog, and `name` is an enum of the model-invocable skills (up to
//!   [`crate::HostOptions::max_tool_name_enum`]);
//! - [`read_skill_resource`]: a file of a skill, under the core's traversal
//!   rules;
//! - [`search_skills`]: BM25 over names and descriptions.
//!
//! The tools skills declare themselves (`tools:`) are in
//! [`crate::skill_tools`]; while execution is on, they and
//! `run_skill_script` are offered and called through
//! [`Host::execution_tool_specs`](crate::Host::execution_tool_specs) and
//! [`Host::call_execution_tool`](crate::Host::call_execution_tool), which
//! run them with [`crate::execution`].
//!
//! Bad input is a [`ToolError`](crate::ToolError) whose message tells the model what to do
//! instead; it never fails the host.

pub mod activate_skill;
mod args;
mod call;
mod output;
pub mod read_skill_resource;
pub mod search_skills;
mod skill_calls;
mod spec;

pub use call::{Called, TOOL_NAMES, specs};
pub use output::{FileContent, FileOutput, SearchHit, ToolOutput};
pub use skill_calls::ExecToolSpec;
pub use spec::ToolSpec;
