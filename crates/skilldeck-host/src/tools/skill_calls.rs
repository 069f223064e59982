//! The tools that run skill code, offered only while execution is on
//! ([`crate::HostOptions::exec`]): each declared skill tool under its full
//! name `{skill}__{tool}`, and `run_skill_script`.
//!
//! Which skill tools a conversation sees is `[exec] tools`: `on-activate`
//! (the default) offers a skill's tools once the skill was activated in
//! that conversation (the activation tracker says so), `always` offers
//! every served skill's tools, `never` none (`run_skill_script` and the
//! CLI remain). A call to a tool not offered to the conversation is
//! refused, as if it were not listed.
//!
//! Neither lists nor runs anything of a skill the model may not use
//! ([`crate::rules::model_access`]): its tools are never listed, and a call
//! to one of them or to `run_skill_script` for it is refused
//! ([`ToolErrorKind::NotModelInvocable`]) with how the user can run it.

use std::borrow::Cow;

use serde_json::{Map, Value};
use skilldeck::deck::ToolExposure;
use skilldeck_exec::CallContext;

use super::call::TOOL_NAMES;
use crate::execution::{RUN_SKILL_SCRIPT, ToolRun, script_arguments, script_input_schema};
use crate::host::Host;
use crate::snapshot::Snapshot;
use crate::tool_error::{ToolError, ToolErrorKind};

/// One tool that runs skill code, as data (its name is not static, unlike
/// [`crate::ToolSpec`]'s).
#[derive(Debug, Clone, PartialEq)]
pub struct ExecToolSpec {
    /// `{skill}__{tool}`, or `run_skill_script`.
    pub name: String,
    /// A human-readable title.
    pub title: String,
    /// What the model reads about the tool.
    pub description: String,
    /// The JSON Schema of its arguments (an object).
    pub input_schema: Value,
    /// The skill that declares it (`None` for `run_skill_script`).
    pub skill: Option<String>,
}

fn run_skill_script_spec() -> ExecToolSpec {
    ExecToolSpec {
        name: RUN_SKILL_SCRIPT.to_owned(),
        title: "Run a skill's script".to_owned(),
        description: "Run a file under a skill's scripts/ folder in a sandbox (no network \
                      unless the operator granted it, a private work folder, time and output \
                      limits) and return its standard output. Use it when an activated \
                      skill's instructions say to run one of its scripts. A non-zero exit, \
                      a timeout or a refusal is an error saying what happened."
            .to_owned(),
        input_schema: script_input_schema(),
        skill: None,
    }
}

impl Host {
    /// True when `skill`'s tools are offered to `conversation` now (see
    /// the module documentation).
    pub fn skill_tools_offered(&self, conversation: &str, skill: &str) -> bool {
        self.execution().is_some() && self.exposure_offers(conversation, skill)
    }

    /// True when activating `skill` may change what `conversation` is
    /// offered: execution is on, tools are offered on activation, and the
    /// skill declares some (a face then tells the client its tool list
    /// changed).
    pub fn activation_offers_tools(&self, snapshot: &Snapshot, skill: &str) -> bool {
        self.tool_exposure() == ToolExposure::OnActivate
            && snapshot.get(skill).is_some_and(|s| {
                s.tools().iter().any(|t| {
                    if t.is_host_implemented() {
                        self.has_tool_handler(&t.full_name(&s.name))
                    } else {
                        self.execution().is_some()
                    }
                })
            })
    }

    /// The skill tools offered to `conversation` now, of the skills the
    /// model may use, as `[exec] tools` offers them: with execution on,
    /// `run_skill_script` and the tools that run scripts; on or off, the
    /// host-implemented tools that have a handler ([`crate::ToolHandler`]).
    /// Nothing while nothing is served.
    pub fn execution_tool_specs(
        &self,
        snapshot: &Snapshot,
        conversation: &str,
    ) -> Vec<ExecToolSpec> {
        if snapshot.is_empty() {
            return Vec::new();
        }
        let execution = self.execution().is_some();
        let mut specs = Vec::new();
        if execution {
            specs.push(run_skill_script_spec());
        }
        for tool in self.offerable_skill_tools(snapshot) {
            if !self.exposure_offers(conversation, &tool.skill.name) {
                continue;
            }
            specs.push(ExecToolSpec {
                name: tool.full_name.to_owned(),
                title: format!("{}: {}", tool.skill.name, tool.tool.name.as_str()),
                description: tool.tool.description.clone(),
                input_schema: tool.tool.input_schema.clone(),
                skill: Some(tool.skill.name.clone()),
            });
        }
        specs
    }

    /// True when a call to `name` goes to [`Host::call_execution_tool`]:
    /// execution is on and `name` is not one of the host's own tools.
    pub fn is_execution_tool(&self, name: &str) -> bool {
        self.execution().is_some() && !TOOL_NAMES.contains(&name)
    }

    /// Calls the tool `name` (a skill tool's full name, or
    /// `run_skill_script`) with `arguments` for `conversation`, under
    /// `context` (its session id defaults to the conversation). An
    /// unknown name is [`ToolErrorKind::UnknownTool`]; a skill tool not
    /// offered to the conversation yet is [`ToolErrorKind::Denied`] and
    /// says to activate its skill first.
    pub fn call_execution_tool(
        &self,
        snapshot: &Snapshot,
        conversation: &str,
        name: &str,
        arguments: &Map<String, Value>,
        mut context: CallContext,
    ) -> Result<ToolRun, ToolError> {
        let Some(execution) = self.execution() else {
            return Err(ToolError::new(
                ToolErrorKind::UnknownTool,
                format!("unknown tool '{name}': running skill code is turned off on this server"),
            ));
        };
        if context.session_id.is_empty() {
            context.session_id = conversation.to_owned();
        }
        let result = if name == RUN_SKILL_SCRIPT {
            script_arguments(arguments).and_then(|(skill, path, args)| {
                execution.run_script(
                    snapshot,
                    &skill,
                    &path,
                    args,
                    skilldeck_exec::Input::Null,
                    context,
                )
            })
        } else {
            self.call_offered_skill_tool(snapshot, conversation, name, arguments, context)
        };
        result.map_err(|mut e| {
            if let Cow::Owned(hidden) = self.hide_paths(&e.message) {
                e.message = hidden;
            }
            e
        })
    }

    fn call_offered_skill_tool(
        &self,
        snapshot: &Snapshot,
        conversation: &str,
        name: &str,
        arguments: &Map<String, Value>,
        context: CallContext,
    ) -> Result<ToolRun, ToolError> {
        let Some(execution) = self.execution() else {
            return Err(ToolError::new(
                ToolErrorKind::UnknownTool,
                format!("unknown tool '{name}'"),
            ));
        };
        let exposure = execution.config().tools;
        let offered = |skill: &skilldeck::Skill| {
            if self.skill_tools_offered(conversation, &skill.name) {
                return Ok(());
            }
            let skill = &skill.name;
            Err(match exposure {
                ToolExposure::Never => ToolError::new(
                    ToolErrorKind::UnknownTool,
                    format!("unknown tool '{name}': skill tools are not offered on this server"),
                ),
                _ => ToolError::new(
                    ToolErrorKind::Denied,
                    format!(
                        "tool '{name}' is offered once skill '{skill}' is active in this \
                         conversation: call activate_skill with name '{skill}' first; nothing \
                         was run"
                    ),
                ),
            })
        };
        execution.call_tool_offered(
            snapshot,
            name,
            &Value::Object(arguments.clone()),
            context,
            offered,
        )
    }
}
