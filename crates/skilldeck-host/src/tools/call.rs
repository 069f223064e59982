//! Calling a tool: [`specs`] lists them for a snapshot, [`Host::call_tool`]
//! checks the name and dispatches to the tool's handler.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::output::ToolOutput;
use super::spec::ToolSpec;
use super::{activate_skill, read_skill_resource, search_skills};
use crate::host::Host;
use crate::snapshot::Snapshot;
use crate::tool_error::{ToolError, ToolErrorKind};

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
        let result = match tool {
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
        };
        result.map_err(|mut e| {
            if let Cow::Owned(hidden) = self.hide_paths(&e.message) {
                e.message = hidden;
            }
            e
        })
    }
}
