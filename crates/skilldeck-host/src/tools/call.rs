//! Calling a tool: [`specs`] lists them for a snapshot; [`Host::call`] is
//! the one entry for every tool a model calls (the host's own, and, with
//! execution on, the skill-defined ones and `run_skill_script`), returning
//! a [`Called`]; [`Host::call_tool`] checks a host tool's name and
//! dispatches to its handler.

use std::borrow::Cow;

use serde_json::{Map, Value};

use skilldeck_exec::CallContext;

use super::output::ToolOutput;
use super::spec::ToolSpec;
use super::{activate_skill, read_skill_resource, search_skills};
use crate::execution::ToolRun;
use crate::host::Host;
use crate::host_tools::HandledCall;
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

/// What a tool call answered ([`Host::call`]).
#[derive(Debug)]
pub enum Called {
    /// One of the host's tools (`activate_skill`, `read_skill_resource`,
    /// `search_skills`): its output.
    Tool(ToolOutput),
    /// Skill code ran (a skill tool, `run_skill_script`): the run.
    Run(Box<ToolRun>),
    /// A host-implemented tool's handler answered.
    Handled(HandledCall),
}

impl Called {
    /// True when skill code ran.
    pub fn ran_code(&self) -> bool {
        matches!(self, Called::Run(_))
    }

    /// The text for the model.
    pub fn text(&self) -> String {
        match self {
            Called::Tool(out) => out.text(),
            Called::Run(run) => run.text.clone(),
            Called::Handled(handled) => handled.text.clone(),
        }
    }
}

impl Host {
    /// The one entry for every tool a model calls, in `conversation`:
    /// the host's tools ([`Host::call_tool`]), and, with execution on, the
    /// tools that run skill code ([`Host::call_execution_tool`], under
    /// `context`). A face needs no rule to tell them apart; it may ask
    /// [`Host::is_execution_tool`] only to decide where to run the call
    /// (skill code blocks).
    pub fn call(
        &self,
        snapshot: &Snapshot,
        conversation: &str,
        name: &str,
        arguments: &Map<String, Value>,
        context: CallContext,
    ) -> Result<Called, ToolError> {
        self.call_with(
            snapshot,
            conversation,
            name,
            arguments,
            context,
            &crate::approval::NoApprover("this caller offers no way to ask the user".to_owned()),
        )
    }

    /// [`Host::call`] asking `approver` when a call that runs code needs
    /// the user's approval ([`crate::approval`]).
    pub fn call_with(
        &self,
        snapshot: &Snapshot,
        conversation: &str,
        name: &str,
        arguments: &Map<String, Value>,
        context: CallContext,
        approver: &dyn crate::approval::Approver,
    ) -> Result<Called, ToolError> {
        if self.is_host_implemented_tool(snapshot, name) {
            self.call_handled_tool(
                snapshot,
                conversation,
                name,
                &Value::Object(arguments.clone()),
                context,
            )
            .map(Called::Handled)
        } else if self.is_execution_tool(name) {
            self.call_execution_tool_with(
                snapshot,
                conversation,
                name,
                arguments,
                context,
                approver,
            )
            .map(|run| Called::Run(Box::new(run)))
        } else {
            self.call_tool(snapshot, conversation, name, arguments)
                .map(Called::Tool)
        }
    }

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
            read_skill_resource::NAME => read_skill_resource::call(self, snapshot, arguments),
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
