//! Host-implemented skill tools, the rules: a tool a skill declares without `run`
//! (seed 002's `deep-research` declares `initiate_research` this way) is
//! implemented by the application embedding the host, which registers a
//! handler under the tool's full name ([`Host::register_tool_handler`]).
//!
//! The rules are the skill tools' rules, in the same order, whatever the
//! face:
//!
//! - a host-implemented tool is offered (listed to a model) only while a
//!   handler is registered for it; one without is reported once per
//!   snapshot as [`Code::ToolHandlerMissing`] at the tool's line
//!   ([`Host::missing_handlers`]) and never offered;
//! - it needs no sandbox: it is offered whether `[exec]` is on or not,
//!   under the same exposure (`[exec] tools`: on activation, always,
//!   never) and the same model-access rule as a script tool;
//! - its arguments are checked against its schema before the handler is
//!   called: a handler only ever sees valid arguments;
//! - a handler's error is the tool's error ([`ToolErrorKind::Failed`]),
//!   worded for the model.

use std::sync::Arc;

use serde_json::Value;
use skilldeck::deck::ToolExposure;
use skilldeck::{Code, Diagnostic, Severity};
use skilldeck_exec::CallContext;

use crate::host::Host;
use crate::rules::{self, ModelUse};
use crate::skill_tools::ResolvedTool;
use crate::snapshot::Snapshot;
use crate::tool_error::{ToolError, ToolErrorKind};
use crate::tool_handler::{HandlerCall, ToolHandler};

/// A host-implemented tool's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct HandledCall {
    /// The skill that declares the tool.
    pub skill: String,
    /// The tool's full name.
    pub tool: String,
    /// The result as text for the model: a string result as is, anything
    /// else as JSON.
    pub text: String,
    /// The result as structured content: an object as is, anything else
    /// as `{"result": value}`.
    pub structured: Value,
}

impl HandledCall {
    fn new(skill: &str, tool: &str, result: Value) -> HandledCall {
        let text = match &result {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let structured = match result {
            Value::Object(map) => Value::Object(map),
            other => serde_json::json!({ "result": other }),
        };
        HandledCall {
            skill: skill.to_owned(),
            tool: tool.to_owned(),
            text,
            structured,
        }
    }
}

impl Host {
    /// Registers `handler` for the host-implemented tool `full_name`
    /// (`{skill}__{tool}`, declared without `run`), replacing any earlier
    /// one. Refused for a name no skill declares, or a tool that runs a
    /// script.
    pub fn register_tool_handler(
        &self,
        full_name: &str,
        handler: Arc<dyn ToolHandler>,
    ) -> Result<(), ToolError> {
        let snapshot = self.snapshot();
        let declared = snapshot
            .skill_tools()
            .declared(&snapshot.deck, full_name)
            .ok_or_else(|| {
                ToolError::new(
                    ToolErrorKind::UnknownTool,
                    format!(
                        "no skill declares a tool '{full_name}': a handler is registered under \
                         a tool's full name `{{skill}}__{{tool}}` (see the skill tools list)"
                    ),
                )
            })?;
        if let Some(run) = &declared.tool.run {
            return Err(ToolError::new(
                ToolErrorKind::InvalidArguments,
                format!(
                    "tool '{full_name}' runs the skill's script '{run}'; only a tool declared \
                     without `run` is implemented by the host and takes a handler"
                ),
            ));
        }
        self.handlers().insert(full_name, handler);
        Ok(())
    }

    /// Removes the handler of `full_name`; true when there was one. The tool
    /// is no longer offered.
    pub fn remove_tool_handler(&self, full_name: &str) -> bool {
        self.handlers().remove(full_name)
    }

    /// True when a handler is registered for `full_name`.
    pub fn has_tool_handler(&self, full_name: &str) -> bool {
        self.handlers().contains(full_name)
    }

    /// True when `full_name` is a host-implemented tool of `snapshot` (the
    /// calls a face routes to [`Host::call_handled_tool`]).
    pub fn is_host_implemented_tool(&self, snapshot: &Snapshot, full_name: &str) -> bool {
        snapshot
            .skill_tools()
            .declared(&snapshot.deck, full_name)
            .is_some_and(|t| t.tool.is_host_implemented())
    }

    /// True when this host can answer a call to `tool`: a script tool while
    /// execution is on, a host-implemented tool while it has a handler.
    pub fn can_run_tool(&self, tool: &ResolvedTool<'_>) -> bool {
        if tool.tool.is_host_implemented() {
            self.has_tool_handler(tool.full_name)
        } else {
            self.execution().is_some()
        }
    }

    /// The declared tools a model may be given by this host, in deck order:
    /// those of the skills the model may use ([`rules::model_access`]) that
    /// this host can run ([`Host::can_run_tool`]), before any
    /// conversation's exposure (`[exec] tools`, applied when listing to a
    /// conversation and again at call time).
    pub fn offerable_skill_tools<'s>(&self, snapshot: &'s Snapshot) -> Vec<ResolvedTool<'s>> {
        snapshot
            .skill_tools()
            .model_usable(&snapshot.deck)
            .filter(|t| self.can_run_tool(t))
            .collect()
    }

    /// The exposure of skill tools (`[exec] tools`), from the execution
    /// service's current config when execution is on.
    pub(crate) fn tool_exposure(&self) -> ToolExposure {
        self.execution()
            .map_or(self.options().exec.tools, |e| e.config().tools)
    }

    /// True when the exposure offers `skill`'s tools to `conversation` now.
    pub(crate) fn exposure_offers(&self, conversation: &str, skill: &str) -> bool {
        match self.tool_exposure() {
            ToolExposure::Always => true,
            ToolExposure::Never => false,
            ToolExposure::OnActivate => self.tracker().lock().is_active(conversation, skill),
        }
    }

    /// Every declared tool this host does not offer, and why, each at its
    /// file and line: the tools left out at load (a problem in their entry:
    /// the deck's `tool-*` warnings) and the host-implemented tools without
    /// a handler ([`Host::missing_handlers`]), and the LangChain packages
    /// (or tools of them) the sandboxed worker could not describe. What
    /// `doctor` and the server's start-up log report.
    pub fn unoffered_tools(&self, snapshot: &Snapshot) -> Vec<Diagnostic> {
        snapshot
            .deck
            .diagnostics()
            .iter()
            .filter(|d| d.code.is_tool_problem() && !d.is_error())
            .cloned()
            .chain(self.missing_handlers(snapshot))
            .chain(snapshot.skill_tools().problems().iter().cloned())
            .collect()
    }

    /// Each served host-implemented tool without a handler, as a warning at
    /// its line in its skill's `SKILL.md` ([`Code::ToolHandlerMissing`]).
    pub fn missing_handlers(&self, snapshot: &Snapshot) -> Vec<Diagnostic> {
        snapshot
            .skill_tools()
            .served(&snapshot.deck)
            .filter(|t| t.tool.is_host_implemented() && !self.has_tool_handler(t.full_name))
            .map(|t| {
                let mut d = Diagnostic::new(
                    Code::ToolHandlerMissing,
                    Severity::Warning,
                    format!(
                        "tool '{}' of skill '{}' has no `run` script and no handler is \
                         registered for it here, so it is not offered",
                        t.full_name, t.skill.name
                    ),
                )
                .in_file(&t.skill.skill_md)
                .with_help(
                    "register a handler for it (Python `deck.register_tool_handler`, Node \
                     `deck.registerToolHandler`), or give it `run: scripts/...`",
                );
                if t.tool.line > 0 {
                    d.line = Some(t.tool.line);
                }
                d
            })
            .collect()
    }

    /// Calls the host-implemented tool `full_name` as the model asks, in
    /// `conversation`: the model-access rule, then the exposure, then the
    /// handler's presence, then the arguments against the schema; only
    /// then the handler.
    pub fn call_handled_tool(
        &self,
        snapshot: &Snapshot,
        conversation: &str,
        full_name: &str,
        arguments: &Value,
        context: CallContext,
    ) -> Result<HandledCall, ToolError> {
        let resolved = snapshot
            .skill_tools()
            .resolve(&snapshot.deck, full_name)
            .map_err(|e| e.to_tool_error())?;
        let tool = resolved.tool.name.to_string();
        rules::model_access(resolved.skill).map_err(|refusal| {
            refusal.to_tool_error(ModelUse::Tool {
                tool: &tool,
                full_name,
            })
        })?;
        let skill = resolved.skill.name.as_str();
        if !self.exposure_offers(conversation, skill) {
            return Err(match self.tool_exposure() {
                ToolExposure::Never => ToolError::new(
                    ToolErrorKind::UnknownTool,
                    format!("unknown tool '{full_name}': skill tools are not offered here"),
                ),
                _ => ToolError::new(
                    ToolErrorKind::Denied,
                    format!(
                        "tool '{full_name}' is offered once skill '{skill}' is active in this \
                         conversation: call activate_skill with name '{skill}' first; nothing \
                         was run"
                    ),
                ),
            });
        }
        self.call_handler(snapshot, full_name, arguments, &context)
    }

    /// Calls the host-implemented tool `full_name` as the application asks
    /// (no model-access rule, no exposure): its arguments are still
    /// checked against the schema before the handler runs.
    pub fn call_handler(
        &self,
        snapshot: &Snapshot,
        full_name: &str,
        arguments: &Value,
        context: &CallContext,
    ) -> Result<HandledCall, ToolError> {
        let tools = snapshot.skill_tools();
        let resolved = tools
            .resolve(&snapshot.deck, full_name)
            .map_err(|e| e.to_tool_error())?;
        let handler = self.handlers().get(full_name).ok_or_else(|| {
            ToolError::new(
                ToolErrorKind::UnknownTool,
                format!(
                    "tool '{full_name}' is implemented by the host, and no handler is registered \
                     for it here; nothing was run"
                ),
            )
        })?;
        tools
            .check_arguments(&snapshot.deck, full_name, arguments)
            .map_err(|e| e.to_tool_error())?;
        let call = HandlerCall {
            skill: &resolved.skill.name,
            full_name,
            arguments,
            context,
        };
        let result = handler.call(&call).map_err(|message| {
            ToolError::new(
                ToolErrorKind::Failed,
                format!("tool '{full_name}' failed: {message}"),
            )
        })?;
        Ok(HandledCall::new(&resolved.skill.name, full_name, result))
    }
}
