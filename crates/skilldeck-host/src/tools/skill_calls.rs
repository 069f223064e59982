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
use crate::approval::{AllowedTool, ApprovalMode, ApprovalSubject, Approver, NoApprover};
use crate::code::{Language, RUN_CODE, code_arguments, code_description, code_input_schema};
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

fn run_code_spec(languages: &[Language]) -> ExecToolSpec {
    ExecToolSpec {
        name: RUN_CODE.to_owned(),
        title: "Run code".to_owned(),
        description: code_description(languages),
        input_schema: code_input_schema(languages),
        skill: None,
    }
}

/// Why a face that was given no [`Approver`] cannot ask.
const NO_APPROVER: &str = "this caller offers no way to ask the user";

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
        // The snapshot's index: declared tools and a LangChain package's.
        self.tool_exposure() == ToolExposure::OnActivate
            && snapshot
                .skill_tools()
                .of_skill(&snapshot.deck, skill)
                .is_ok_and(|tools| tools.iter().any(|t| self.can_run_tool(t)))
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
        let mut specs = Vec::new();
        if let Some(execution) = self.execution()
            && execution.work_folders().is_some()
        {
            let languages = Language::available();
            if !languages.is_empty() {
                specs.push(run_code_spec(&languages));
            }
        }
        if snapshot.is_empty() {
            return specs;
        }
        if self.execution().is_some() {
            specs.insert(0, run_skill_script_spec());
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

    /// [`Host::call_execution_tool_with`] by a caller that cannot ask the
    /// user: under `[exec] approval = "ask"` a call that needs approval is
    /// refused.
    pub fn call_execution_tool(
        &self,
        snapshot: &Snapshot,
        conversation: &str,
        name: &str,
        arguments: &Map<String, Value>,
        context: CallContext,
    ) -> Result<ToolRun, ToolError> {
        self.call_execution_tool_with(
            snapshot,
            conversation,
            name,
            arguments,
            context,
            &NoApprover(NO_APPROVER.to_owned()),
        )
    }

    /// Calls the tool `name` (a skill tool's full name, `run_skill_script`
    /// or `run_code`) with `arguments` for `conversation`, under `context`
    /// (its session id defaults to the conversation), once the approval
    /// rule ([`crate::approval`]) lets it run, asking `approver` when it
    /// must. An unknown name is [`ToolErrorKind::UnknownTool`]; a skill
    /// tool not offered to the conversation yet is
    /// [`ToolErrorKind::Denied`] and says to activate its skill first.
    pub fn call_execution_tool_with(
        &self,
        snapshot: &Snapshot,
        conversation: &str,
        name: &str,
        arguments: &Map<String, Value>,
        mut context: CallContext,
        approver: &dyn Approver,
    ) -> Result<ToolRun, ToolError> {
        if self.execution().is_none() {
            return Err(ToolError::new(
                ToolErrorKind::UnknownTool,
                format!("unknown tool '{name}': running skill code is turned off on this server"),
            ));
        }
        if context.session_id.is_empty() {
            context.session_id = conversation.to_owned();
        }
        let result = self
            .execution()
            .map_or(Ok(()), |execution| {
                let mode = approver.mode(execution.approvals().mode());
                self.check_approval(
                    execution,
                    mode,
                    snapshot,
                    conversation,
                    name,
                    arguments,
                    approver,
                )
            })
            .and_then(|()| {
                self.run_execution_tool(snapshot, conversation, name, arguments, context)
            });
        result.map_err(|mut e| {
            if let Cow::Owned(hidden) = self.hide_paths(&e.message) {
                e.message = hidden;
            }
            e
        })
    }

    fn run_execution_tool(
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
        if name == RUN_CODE {
            return code_arguments(arguments)
                .and_then(|args| execution.run_code(snapshot, conversation, &args, context));
        }
        if name == RUN_SKILL_SCRIPT {
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
        }
    }

    /// The approval rule ([`crate::approval`]) for a call of `name` with
    /// `arguments` in `conversation`: `Ok` to run. A call that will be
    /// refused anyway (bad arguments, an unknown or unserved skill, a skill
    /// the model may not use, a tool not offered) is not asked about: the
    /// run's own checks refuse it.
    #[allow(clippy::too_many_arguments)]
    fn check_approval(
        &self,
        execution: &crate::execution::Execution,
        mode: ApprovalMode,
        snapshot: &Snapshot,
        conversation: &str,
        name: &str,
        arguments: &Map<String, Value>,
        approver: &dyn Approver,
    ) -> Result<(), ToolError> {
        let approvals = execution.approvals();
        if mode == ApprovalMode::Never {
            return Ok(());
        }
        let usable = |skill: &str| {
            crate::rules::require_served(&snapshot.deck, skill)
                .ok()
                .filter(|s| crate::rules::model_access(s).is_ok())
        };
        let script_args;
        let code_args;
        let (subject, fingerprint) = if name == RUN_SKILL_SCRIPT {
            let Ok(parsed) = script_arguments(arguments) else {
                return Ok(());
            };
            script_args = parsed;
            let Some(skill) = usable(&script_args.0) else {
                return Ok(());
            };
            (
                ApprovalSubject::Script {
                    skill: &skill.name,
                    path: &script_args.1,
                    args: &script_args.2,
                },
                self.skill_fingerprint(skill, Some(&script_args.1)),
            )
        } else if name == RUN_CODE {
            let Ok(parsed) = code_arguments(arguments) else {
                return Ok(());
            };
            code_args = parsed;
            let skill = match &code_args.skill {
                Some(name) => match usable(name) {
                    Some(skill) => Some(skill),
                    None => return Ok(()),
                },
                None => None,
            };
            (
                ApprovalSubject::Code {
                    language: code_args.language,
                    code: &code_args.code,
                    skill: skill.map(|s| s.name.as_str()),
                },
                skill
                    .map(|s| self.skill_fingerprint(s, None))
                    .unwrap_or_default(),
            )
        } else {
            let Ok(resolved) = snapshot.skill_tools().resolve(&snapshot.deck, name) else {
                return Ok(());
            };
            if crate::rules::model_access(resolved.skill).is_err()
                || !self.skill_tools_offered(conversation, &resolved.skill.name)
            {
                return Ok(());
            }
            (
                ApprovalSubject::Tool {
                    skill: &resolved.skill.name,
                    full_name: name,
                },
                self.skill_fingerprint(resolved.skill, resolved.tool.run.as_deref()),
            )
        };
        let allowed = self.active_allowed_tools(snapshot, conversation);
        approvals.check_in(
            mode,
            conversation,
            &subject,
            &allowed,
            &fingerprint,
            approver,
        )
    }

    /// `run_code` as the model calls it, through `execution` (the host's,
    /// or an application's own service with `[exec] code` on: Python's
    /// `Deck.run_code`), after the approval rule (asking `approver`, under
    /// the mode it runs with: [`Approver::mode`]): the one path every face
    /// takes.
    pub fn run_code_with(
        &self,
        execution: &crate::execution::Execution,
        snapshot: &Snapshot,
        conversation: &str,
        arguments: &Map<String, Value>,
        mut context: CallContext,
        approver: &dyn Approver,
    ) -> Result<ToolRun, ToolError> {
        if context.session_id.is_empty() {
            context.session_id = conversation.to_owned();
        }
        let mode = approver.mode(execution.approvals().mode());
        let result = self
            .check_approval(
                execution,
                mode,
                snapshot,
                conversation,
                RUN_CODE,
                arguments,
                approver,
            )
            .and_then(|()| code_arguments(arguments))
            .and_then(|args| execution.run_code(snapshot, conversation, &args, context));
        result.map_err(|mut e| {
            if let Cow::Owned(hidden) = self.hide_paths(&e.message) {
                e.message = hidden;
            }
            e
        })
    }

    /// What an approval of a call to `skill` is bound to: the sha256 of its
    /// `SKILL.md` and of the file that runs (`file`), or a marker when one
    /// cannot be read (a decision then never carries over to a readable
    /// one).
    fn skill_fingerprint(&self, skill: &skilldeck::Skill, file: Option<&str>) -> String {
        let digest = |path: &str| {
            self.manifest()
                .file(skill, path)
                .map(|f| f.digest.to_string())
                .unwrap_or_else(|_| format!("unreadable:{path}"))
        };
        let mut fingerprint = digest("SKILL.md");
        if let Some(file) = file {
            fingerprint.push(' ');
            fingerprint.push_str(&digest(file));
        }
        fingerprint
    }

    /// The `allowed-tools` entries of the skills active in `conversation`
    /// (a `SKILL.md` that cannot be read contributes none).
    fn active_allowed_tools(&self, snapshot: &Snapshot, conversation: &str) -> Vec<AllowedTool> {
        let active = self
            .tracker()
            .lock()
            .active_at(conversation, std::time::Instant::now());
        let mut allowed = Vec::new();
        for name in active {
            let Some(skill) = snapshot.get(&name) else {
                continue;
            };
            if let Ok(frontmatter) = skill.frontmatter() {
                allowed.extend(AllowedTool::parse_all(&frontmatter.allowed_tools));
            }
        }
        allowed
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
