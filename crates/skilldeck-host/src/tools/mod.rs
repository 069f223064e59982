//! The agent-facing tools as data: each tool's [`ToolSpec`] (name, title,
//! description, JSON input schema) and its handler behind
//! [`Host::call_tool`], with typed results ([`ToolOutput`]) and errors
//! ([`ToolError`]). A face only maps them to its protocol.
//!
//! - [`activate_skill`]: a skill's instructions; its description carries the
//!   catalog, and `name` is an enum of the model-invocable skills (up to
//!   [`crate::HostOptions::max_tool_name_enum`]);
//! - [`read_skill_resource`]: a file of a skill, under the core's traversal
//!   rules;
//! - [`search_skills`]: BM25 over names and descriptions.
//!
//! Bad input is a [`ToolError`] whose message tells the model what to do
//! instead; it never fails the host.

pub mod activate_skill;
mod args;
pub mod read_skill_resource;
pub mod search_skills;

use serde_json::{Map, Value};

use crate::host::{Activated, Host};
use crate::snapshot::Snapshot;

pub use read_skill_resource::{FileContent, FileOutput};
pub use search_skills::SearchHit;

/// One tool as data: what a face lists.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// The tool's name (`activate_skill`, ...).
    pub name: &'static str,
    /// A human-readable title.
    pub title: &'static str,
    /// What the model reads about the tool.
    pub description: String,
    /// The JSON Schema of its arguments (an object).
    pub input_schema: Value,
    /// True when calling it changes nothing (every skill tool is).
    pub read_only: bool,
}

/// What a tool call answered.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutput {
    /// `activate_skill`: the instructions, or the already-active notice.
    Activation(Activated),
    /// `read_skill_resource`: a file of a skill.
    File(FileOutput),
    /// `search_skills`: the served skills that matched, best first.
    Search(Vec<SearchHit>),
}

impl ToolOutput {
    /// The text for the model.
    pub fn text(&self) -> String {
        match self {
            ToolOutput::Activation(activated) => activated.text().to_owned(),
            ToolOutput::File(file) => file.text(),
            ToolOutput::Search(hits) => search_skills::text(hits),
        }
    }
}

/// The kind of a [`ToolError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ToolErrorKind {
    /// An argument is missing, of the wrong type or out of range.
    InvalidArguments,
    /// No served skill has that name (turned off, skipped by discovery, or
    /// unknown: the message says which).
    UnknownSkill,
    /// The skill may only be invoked by the user.
    NotModelInvocable,
    /// The skill's files could not be read, or its arguments were refused.
    Failed,
    /// No tool has that name (or no tool is offered: nothing is served).
    UnknownTool,
}

/// Why a tool call failed: a message the model can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ToolError {
    /// What kind of failure.
    pub kind: ToolErrorKind,
    /// The message for the model.
    pub message: String,
}

impl ToolError {
    /// An error of `kind` saying `message`.
    pub fn new(kind: ToolErrorKind, message: impl Into<String>) -> Self {
        ToolError {
            kind,
            message: message.into(),
        }
    }

    /// A failed skill lookup: [`ToolErrorKind::UnknownSkill`] with the
    /// core's message.
    pub fn lookup(error: skilldeck::Error) -> Self {
        ToolError::new(ToolErrorKind::UnknownSkill, error.to_string())
    }

    /// A core failure while serving the call: [`ToolErrorKind::Failed`].
    pub fn failed(error: skilldeck::Error) -> Self {
        ToolError::new(ToolErrorKind::Failed, error.to_string())
    }
}

/// The names of every tool, in listing order.
pub const TOOL_NAMES: [&str; 3] = [
    activate_skill::NAME,
    read_skill_resource::NAME,
    search_skills::NAME,
];

/// The tools for `snapshot`: none when no skill is served.
pub fn specs(snapshot: &Snapshot) -> Vec<ToolSpec> {
    if snapshot.is_empty() {
        return Vec::new();
    }
    vec![
        activate_skill::spec(snapshot),
        read_skill_resource::spec(snapshot),
        search_skills::spec(snapshot),
    ]
}

impl Host {
    /// The tools for `snapshot` ([`specs`]).
    pub fn tool_specs(&self, snapshot: &Snapshot) -> Vec<ToolSpec> {
        specs(snapshot)
    }

    /// Calls the tool `tool` with `arguments` for the session `session`.
    pub fn call_tool(
        &self,
        snapshot: &Snapshot,
        session: &str,
        tool: &str,
        arguments: &Map<String, Value>,
    ) -> Result<ToolOutput, ToolError> {
        if snapshot.is_empty() {
            return Err(ToolError::new(
                ToolErrorKind::UnknownTool,
                format!("unknown tool '{tool}': no skill is loaded, so no skill tools are offered"),
            ));
        }
        match tool {
            activate_skill::NAME => activate_skill::call(self, snapshot, session, arguments),
            read_skill_resource::NAME => read_skill_resource::call(snapshot, arguments),
            search_skills::NAME => search_skills::call(snapshot, arguments),
            other => Err(ToolError::new(
                ToolErrorKind::UnknownTool,
                format!(
                    "unknown tool '{other}'; the tools are {}, {} and {}",
                    activate_skill::NAME,
                    read_skill_resource::NAME,
                    search_skills::NAME
                ),
            )),
        }
    }
}
