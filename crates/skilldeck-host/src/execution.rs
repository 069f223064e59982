//! Running skill code for a host: the one place where the operator's
//! `[exec]` configuration ([`ExecConfig`], with its per-skill grants)
//! becomes an execution [`Policy`], and where a call from a model (a skill
//! tool `{skill}__{tool}`, `run_skill_script`, a dynamic-context directive)
//! becomes a sandboxed run of the right file of the right skill.
//!
//! [`Execution`] owns one [`Executor`] (so its concurrency cap holds across
//! every session of a server). Its rules:
//!
//! - the model's calls ([`Execution::call_tool`], [`Execution::run_script`]:
//!   what a skill tool and `run_skill_script` run) are refused before
//!   anything else is checked unless the model may use the skill
//!   ([`rules::model_access`]: not `disable-model-invocation`, not mode
//!   `manual`); the user's side ([`Execution::prepare_tool`],
//!   [`Execution::prepare_script`] then [`Execution::execute`] or
//!   [`Execution::run_prepared`]: `skilldeck run`/`call`, an application's
//!   `Deck.run`/`call_tool`) does not ask it;
//! - a skill tool's arguments are checked against the tool's JSON Schema
//!   before anything runs ([`crate::SkillTools::check_arguments`]): invalid
//!   arguments never start a process, and the error names the failing
//!   field's JSON pointer;
//! - a tool runs its own skill's `run` script, re-checked at call time (a
//!   script deleted after the deck was loaded is a clear error, not a
//!   spawn failure), with the arguments as JSON on stdin; its stdout is the
//!   result, structured when it parses as JSON;
//! - `run_skill_script` runs only files under the skill's `scripts/` folder
//!   (symlinks resolved), [`ScriptScope::Scripts`]; the operator's own CLI
//!   (`skilldeck run`) may run any file of the skill folder,
//!   [`ScriptScope::SkillFolder`], contained as for reading a file (the
//!   executor refuses a path that leaves the folder);
//! - the policy comes from the `[exec]` config alone
//!   ([`skilldeck_exec::policy_from_config`], the one mapping); an operator
//!   at the CLI may override the timeout and the profile for one run
//!   ([`Overrides`]), nothing else;
//! - a run that ends badly (non-zero exit, a signal, the timeout) or is
//!   refused (denied, sandbox unavailable, too busy) is a [`ToolError`]
//!   whose kind says which and whose text tells the model what happened.
//!
//! [`SandboxedDynamicContext`] answers a skill's dynamic-context
//! directives (`` !`cmd` ``) with their output, run in the same sandbox
//! under a shorter timeout and a smaller output cap; a failure becomes a
//! short bracketed note in place of the directive.

use std::fmt::Write as _;
use std::time::Duration;

use serde_json::{Map, Value, json};
use skilldeck::activation::dynamic::{Directive, DynamicContext};
use skilldeck::deck::{Deck, ExecConfig};
use skilldeck::{Skill, ToolCall};
use skilldeck_exec::{
    CallContext, ErrorKind, ExecError, Executor, Input, Outcome, Policy, Profile, Request,
    executor_config, policy_from_config, profile_from_config,
};

use crate::rules::{self, ModelUse};
use crate::skill_tools::SkillTools;
use crate::snapshot::Snapshot;
use crate::tool_error::{ToolError, ToolErrorKind};

pub use crate::tool_names::RUN_SKILL_SCRIPT;

/// The folder of a skill `run_skill_script` may run files from.
pub const SCRIPTS_DIR: &str = "scripts";

/// Longest a dynamic-context directive may run (the `[exec]` timeout
/// applies when it is shorter): activation waits for every directive.
pub const DYNAMIC_TIMEOUT: Duration = Duration::from_secs(10);

/// Bytes of a directive's output kept in the activated body.
pub const DYNAMIC_OUTPUT_CAP: usize = 16 * 1024;

/// Longest note (characters) that replaces a directive that failed.
pub const MAX_DYNAMIC_NOTE_CHARS: usize = 300;

/// Characters of a failed run's stderr and stdout quoted in its error (the
/// end of each, where the reason usually is).
pub const MAX_ERROR_OUTPUT_CHARS: usize = 4_000;

/// Numbers the `run_code` roots of this process: each execution service
/// owns one (and removes it whole when it ends).
static CODE_ROOTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A finished, successful run: what the model gets.
#[derive(Debug, Clone)]
pub struct ToolRun {
    /// The skill whose file ran.
    pub skill: String,
    /// The tool's full name, or `run_skill_script`.
    pub tool: String,
    /// The file that ran, relative to the skill folder.
    pub path: String,
    /// Standard output as text (invalid UTF-8 replaced), with a closing
    /// note when it was cut at the output cap.
    pub text: String,
    /// Standard output parsed as JSON, when it is JSON (a value that is not
    /// an object is wrapped as `{"result": value}`: structured content is
    /// an object).
    pub structured: Option<Value>,
    /// The whole outcome (exit status, stderr, duration, policy).
    pub outcome: Outcome,
    /// Files the run returned (`run_code`'s `outputs/`; none for a
    /// script or a skill tool).
    pub files: Vec<crate::code::OutputFile>,
}

/// Which files of a skill a run may start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScriptScope {
    /// Only files under the skill's `scripts/` folder (symlinks resolved):
    /// what a model may run (`run_skill_script`).
    Scripts,
    /// Any file of the skill folder, contained as for reading a file (no
    /// `..`, no absolute path, no symlink out): what the operator may run
    /// from the CLI (`skilldeck run`).
    SkillFolder,
}

/// What the operator overrides for one run, on top of the `[exec]` policy
/// (the CLI's `--timeout` and `--sandbox`). Nothing else of the policy can
/// be overridden per run; a model's calls use none
/// (`Overrides::default()`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Overrides {
    /// The wall-clock timeout (still capped at
    /// [`skilldeck_exec::MAX_TIMEOUT`]).
    pub timeout: Option<Duration>,
    /// The isolation profile (`none` is the operator's explicit choice).
    pub profile: Option<Profile>,
}

impl Overrides {
    /// `policy` with these overrides applied.
    pub fn apply(&self, mut policy: Policy) -> Policy {
        if let Some(profile) = self.profile {
            policy.profile = profile;
        }
        if let Some(timeout) = self.timeout {
            policy.limits.timeout = timeout;
        }
        policy.limits = policy.limits.capped();
        policy
    }
}

/// A run that passed every check of the call (skill served, tool known,
/// arguments valid, file in scope) and has not started:
/// [`Execution::execute`] starts it.
#[derive(Debug)]
pub struct PreparedRun<'d> {
    /// The skill whose file runs.
    pub skill: &'d Skill,
    /// The tool's full name, or [`RUN_SKILL_SCRIPT`] for a script.
    pub tool: String,
    /// The file, relative to the skill folder.
    pub path: String,
    args: Vec<String>,
    stdin: Input,
    context: CallContext,
    /// A LangChain package's tool: the worker runs, `stdin` holds its
    /// `invoke` request.
    langchain: bool,
}

impl PreparedRun<'_> {
    /// How messages name this run.
    fn what(&self) -> String {
        if self.tool == RUN_SKILL_SCRIPT {
            format!("script '{}' of skill '{}'", self.path, self.skill.name)
        } else {
            format!("skill tool '{}'", self.tool)
        }
    }
}

/// Runs skill code under the operator's `[exec]` configuration. See the
/// module documentation.
#[derive(Debug)]
pub struct Execution {
    config: ExecConfig,
    executor: Executor,
    /// The policy source once [`Execution::update_policy`] was called
    /// (limits and per-skill grants of later runs).
    live: std::sync::RwLock<Option<std::sync::Arc<ExecConfig>>>,
    /// `run_code`'s state, when `[exec] code` is on.
    code: Option<CodeState>,
    /// The decisions users made about calls that needed approval.
    approvals: crate::approval::Approvals,
    /// Describes LangChain tool packages (in the sandbox, cached).
    packages: std::sync::Arc<crate::langchain::PackageTools>,
}

/// `run_code`'s per-conversation work folders and the empty folder that
/// stands in for a skill.
#[derive(Debug)]
struct CodeState {
    folders: crate::code::WorkFolders,
    no_skill: std::sync::OnceLock<Result<Skill, String>>,
}

impl Execution {
    /// An execution service for `config`. Relative paths in its grants
    /// must already be resolved against the config file's folder
    /// ([`crate::HostOptions::from_config`] does it).
    pub fn new(config: ExecConfig) -> Self {
        let executor = Executor::new(executor_config(&config));
        Execution::with_executor(config, executor)
    }

    /// An execution service running through `executor` (its caps and work
    /// root), under `config`'s policy.
    pub fn with_executor(config: ExecConfig, executor: Executor) -> Self {
        Execution::with_clock(
            config,
            executor,
            std::sync::Arc::new(crate::code::SystemClock),
        )
    }

    /// [`Execution::with_executor`] with `clock` timing `run_code`'s work
    /// folders (idle expiry).
    pub fn with_clock(
        config: ExecConfig,
        executor: Executor,
        clock: std::sync::Arc<dyn crate::code::Clock>,
    ) -> Self {
        let code = config.code.then(|| {
            // A root caller's runs drop to the sandbox user, which must
            // write its work folder.
            let owner = profile_from_config(config.sandbox)
                .ok()
                .map(|profile| {
                    executor
                        .effective(&Policy {
                            profile,
                            ..Policy::default()
                        })
                        .uid
                })
                .filter(|uid| *uid == skilldeck_exec::SANDBOX_UID);
            CodeState {
                folders: crate::code::WorkFolders::new(
                    executor.work_root().join(format!(
                        "code-{}-{}",
                        std::process::id(),
                        CODE_ROOTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                    )),
                    config.code_quota_bytes,
                    Duration::from_secs(config.code_idle_secs),
                    owner,
                    clock,
                ),
                no_skill: std::sync::OnceLock::new(),
            }
        });
        Execution {
            approvals: crate::approval::Approvals::new(config.approval),
            packages: std::sync::Arc::new(crate::langchain::PackageTools::new(config.clone())),
            config,
            executor,
            live: std::sync::RwLock::new(None),
            code,
        }
    }

    /// The describer of LangChain tool packages under this service's
    /// config (a host's snapshots share it, so its cache outlives reloads).
    pub fn packages(&self) -> std::sync::Arc<crate::langchain::PackageTools> {
        std::sync::Arc::clone(&self.packages)
    }

    /// `run_code`'s work folders, when `[exec] code` is on.
    pub fn work_folders(&self) -> Option<&crate::code::WorkFolders> {
        self.code.as_ref().map(|c| &c.folders)
    }

    /// The approval decisions of every conversation ([`crate::approval`]).
    pub fn approvals(&self) -> &crate::approval::Approvals {
        &self.approvals
    }

    /// The stand-in skill of a `run_code` call without `skill`: an empty
    /// folder beside the work folders.
    pub(crate) fn no_skill(&self) -> Result<Skill, String> {
        let Some(code) = &self.code else {
            return Err("run_code is off".to_owned());
        };
        code.no_skill
            .get_or_init(|| {
                let folder = code.folders.root().join("no-skill");
                code.folders
                    .ensure_root()
                    .and_then(|()| std::fs::create_dir_all(&folder))
                    .map_err(|e| format!("{}: {e}", folder.display()))?;
                Ok(crate::code::empty_skill(&folder))
            })
            .clone()
    }

    /// Replaces the configuration later runs take their policy from (the
    /// limits and the `[exec.skills]` grants; a run already started keeps
    /// its own). The executor's concurrency caps, the sandbox profile, the
    /// tool exposure and dynamic context stay as the service started: those
    /// are [`Execution::config`]'s. A registry-served agent calls this
    /// when its lock changes the grants.
    pub fn update_policy(&self, config: ExecConfig) {
        let mut live = self
            .live
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *live = Some(std::sync::Arc::new(config));
    }

    /// The configuration in force.
    pub fn config(&self) -> &ExecConfig {
        &self.config
    }

    /// The executor ([`Executor::running`] shows what runs now).
    pub fn executor(&self) -> &Executor {
        &self.executor
    }

    /// The isolation profile `[exec] sandbox` names: `auto` is the strongest
    /// this machine offers, else the refusal naming what is missing.
    pub fn profile(&self) -> Result<Profile, ExecError> {
        profile_from_config(self.config.sandbox)
    }

    /// The policy of one run of skill `skill`: the `[exec]` limits, the
    /// `[exec] env` names plus the skill's grant (`[exec.skills.<name>]`:
    /// network, extra read paths, extra variables). A skill never grants
    /// itself anything. The mapping is [`policy_from_config`].
    pub fn policy(&self, skill: &str) -> Result<Policy, ExecError> {
        let live = self
            .live
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        match live {
            Some(config) => policy_from_config(&config, skill),
            None => policy_from_config(&self.config, skill),
        }
    }

    /// [`Execution::policy`] with the operator's `overrides` applied.
    pub fn policy_with(&self, skill: &str, overrides: &Overrides) -> Result<Policy, ExecError> {
        Ok(overrides.apply(self.policy(skill)?))
    }

    /// The full name (`{skill}__{tool}`) of the tool `tool` of the served
    /// skill `skill`; `tool` is the name the skill declares or the full
    /// name. Unknown: the error lists the skill's tools.
    pub fn tool_full_name(
        deck: &Deck,
        tools: &SkillTools,
        skill: &str,
        tool: &str,
    ) -> Result<String, ToolError> {
        let declared = tools.of_skill(deck, skill).map_err(|e| e.to_tool_error())?;
        if let Some(found) = declared
            .iter()
            .find(|t| t.tool.name.to_string() == tool || t.full_name == tool)
        {
            return Ok(found.full_name.to_owned());
        }
        let names: Vec<String> = declared.iter().map(|t| t.tool.name.to_string()).collect();
        let skill_md = deck.get(skill).map(|s| s.skill_md.clone());
        let package_problems: Vec<&str> = tools
            .problems()
            .iter()
            .filter(|d| d.file.is_some() && d.file == skill_md)
            .map(|d| d.message.as_str())
            .collect();
        let mut message = format!(
            "skill '{skill}' declares no tool '{tool}'; {}",
            if names.is_empty() {
                "it declares none".to_owned()
            } else {
                format!("its tools: {}", names.join(", "))
            }
        );
        for problem in package_problems {
            message.push('\n');
            message.push_str(problem);
        }
        Err(ToolError::new(ToolErrorKind::UnknownTool, message))
    }

    /// Checks a call of the skill tool `full_name` with `arguments` (JSON
    /// text, refused past [`crate::MAX_TOOL_ARGUMENT_BYTES`] before it is
    /// parsed, then checked against the tool's schema; the error names the
    /// failing field) and prepares its skill's `run` script with the
    /// arguments as JSON on stdin. Nothing runs.
    pub fn prepare_tool_json<'d>(
        deck: &'d Deck,
        tools: &'d SkillTools,
        full_name: &str,
        arguments: &str,
        context: CallContext,
    ) -> Result<PreparedRun<'d>, ToolError> {
        let value = tools
            .parse_arguments(deck, full_name, arguments)
            .map_err(|e| e.to_tool_error())?;
        Execution::prepare_tool(deck, tools, full_name, &value, context)
    }

    /// [`Execution::prepare_tool_json`] with the arguments as a JSON value.
    pub fn prepare_tool<'d>(
        deck: &'d Deck,
        tools: &'d SkillTools,
        full_name: &str,
        arguments: &Value,
        context: CallContext,
    ) -> Result<PreparedRun<'d>, ToolError> {
        let resolved = tools
            .resolve(deck, full_name)
            .map_err(|e| e.to_tool_error())?;
        let Some(run) = resolved.tool.run.clone() else {
            return Err(ToolError::new(
                ToolErrorKind::UnknownTool,
                format!(
                    "skill tool '{full_name}' has no script: the host implements it (a handler                      registered with the host answers it), so there is nothing to run here"
                ),
            ));
        };
        tools
            .check_arguments(deck, full_name, arguments)
            .map_err(|e| e.to_tool_error())?;
        if resolved.script_path().is_err() {
            return Err(ToolError::new(
                ToolErrorKind::Failed,
                format!(
                    "skill tool '{full_name}' cannot run: its script '{}' is missing from skill \
                     '{}' (removed or moved since the skill was loaded); nothing was run",
                    run, resolved.skill.name
                ),
            ));
        }
        let context = CallContext {
            tool: full_name.to_owned(),
            ..context
        };
        let (args, stdin, langchain) = match &resolved.tool.call {
            // Checked against the schema: serialising a JSON value cannot fail.
            ToolCall::Json => (
                Vec::new(),
                Input::Bytes(serde_json::to_vec(arguments).unwrap_or_default()),
                false,
            ),
            ToolCall::EntryPoint => {
                let (args, stdin) = entry_point_input(arguments);
                (args, stdin, false)
            }
            ToolCall::LangChain { name } => (
                Vec::new(),
                Input::Bytes(crate::langchain::invoke_request(&run, name, arguments)),
                true,
            ),
        };
        Ok(PreparedRun {
            skill: resolved.skill,
            tool: full_name.to_owned(),
            path: run,
            args,
            stdin,
            context,
            langchain,
        })
    }

    /// Checks a run of the file `path` of the served skill `skill` within
    /// `scope` and prepares it with `args` and `stdin`. Nothing runs.
    pub fn prepare_script<'d>(
        deck: &'d Deck,
        skill: &str,
        path: &str,
        scope: ScriptScope,
        args: Vec<String>,
        stdin: Input,
        context: CallContext,
    ) -> Result<PreparedRun<'d>, ToolError> {
        let skill = rules::require_served(deck, skill).map_err(ToolError::lookup)?;
        if scope == ScriptScope::Scripts {
            check_under_scripts(skill, path)?;
        }
        let context = CallContext {
            tool: if context.tool.is_empty() {
                RUN_SKILL_SCRIPT.to_owned()
            } else {
                context.tool
            },
            ..context
        };
        Ok(PreparedRun {
            skill,
            tool: RUN_SKILL_SCRIPT.to_owned(),
            path: path.to_owned(),
            args,
            stdin,
            context,
            langchain: false,
        })
    }

    /// Starts `run` under the skill's policy with `overrides` and waits for
    /// it: the outcome however the process ended (exit code, signal,
    /// timeout), or the executor's refusal (nothing ran).
    pub fn execute(
        &self,
        run: PreparedRun<'_>,
        overrides: &Overrides,
    ) -> Result<Outcome, ExecError> {
        let mut policy = self.policy_with(&run.skill.name, overrides)?;
        if !run.langchain {
            // A LangChain worker's interpreter carries the environment.
            policy = crate::environment::policy_for(&self.config, run.skill, policy)
                .map_err(|p| ExecError::InvalidInput(crate::environment::describe(&p)))?;
        }
        let request = Request {
            skill: run.skill,
            path: &run.path,
            args: run.args,
            stdin: run.stdin,
            context: run.context,
        };
        if run.langchain {
            return crate::langchain::run_invoke(&self.executor, &self.config, request, policy);
        }
        self.executor.run(request, &policy)
    }

    /// Calls the skill tool `full_name` (`{skill}__{tool}`) with
    /// `arguments` as the model asks: refused unless the model may use its
    /// skill ([`rules::model_access`]); then checked against its schema
    /// (nothing runs when they do not match; the error names the failing
    /// field), then its skill's `run` script runs with the arguments as
    /// JSON on stdin.
    pub fn call_tool(
        &self,
        snapshot: &Snapshot,
        full_name: &str,
        arguments: &Value,
        context: CallContext,
    ) -> Result<ToolRun, ToolError> {
        self.call_tool_offered(snapshot, full_name, arguments, context, |_| Ok(()))
    }

    /// [`Execution::call_tool`], with `offered` asked after the model-access
    /// rule and before the arguments are checked: the host's tool exposure
    /// (`[exec] tools`) for the conversation. A refusal of the rule comes
    /// first, so a user-invoked-only skill's tool is never answered with
    /// "activate it first".
    pub fn call_tool_offered(
        &self,
        snapshot: &Snapshot,
        full_name: &str,
        arguments: &Value,
        context: CallContext,
        offered: impl FnOnce(&Skill) -> Result<(), ToolError>,
    ) -> Result<ToolRun, ToolError> {
        let skill = model_tool(snapshot, full_name)?;
        offered(skill)?;
        let run = Execution::prepare_tool(
            &snapshot.deck,
            snapshot.skill_tools(),
            full_name,
            arguments,
            context,
        )?;
        self.finish_run(run)
    }

    /// [`Execution::call_tool`] with the arguments as JSON text (refused
    /// past [`crate::MAX_TOOL_ARGUMENT_BYTES`] before it is parsed).
    pub fn call_tool_json(
        &self,
        snapshot: &Snapshot,
        full_name: &str,
        arguments: &str,
        context: CallContext,
    ) -> Result<ToolRun, ToolError> {
        model_tool(snapshot, full_name)?;
        let run = Execution::prepare_tool_json(
            &snapshot.deck,
            snapshot.skill_tools(),
            full_name,
            arguments,
            context,
        )?;
        self.finish_run(run)
    }

    /// Runs the file `path` of skill `skill` with `args` as the model asks
    /// (`run_skill_script`): refused unless the model may use the skill
    /// ([`rules::model_access`]); only files under the skill's `scripts/`
    /// folder (symlinks resolved).
    pub fn run_script(
        &self,
        snapshot: &Snapshot,
        skill: &str,
        path: &str,
        args: Vec<String>,
        stdin: Input,
        context: CallContext,
    ) -> Result<ToolRun, ToolError> {
        let found = rules::require_served(&snapshot.deck, skill).map_err(ToolError::lookup)?;
        rules::model_access(found)
            .map_err(|refusal| refusal.to_tool_error(ModelUse::Script { path }))?;
        let run = Execution::prepare_script(
            &snapshot.deck,
            &found.name,
            path,
            ScriptScope::Scripts,
            args,
            stdin,
            context,
        )?;
        self.finish_run(run)
    }

    /// A dynamic-context runner for activations made under `context`.
    pub fn dynamic_context(&self, context: CallContext) -> SandboxedDynamicContext<'_> {
        SandboxedDynamicContext {
            execution: self,
            context,
        }
    }

    /// Runs `run` under the `[exec]` policy (no overrides) and tells the
    /// model how it ended.
    fn finish_run(&self, run: PreparedRun<'_>) -> Result<ToolRun, ToolError> {
        self.run_prepared(run, &Overrides::default())
    }

    /// Runs `run` under the skill's policy with `overrides`, through this
    /// service's executor (so its concurrency cap holds), and words how it
    /// ended as for a model: a [`ToolRun`] on exit code 0, else a
    /// [`ToolError`] saying why (refusal, non-zero exit, signal, timeout).
    pub fn run_prepared(
        &self,
        run: PreparedRun<'_>,
        overrides: &Overrides,
    ) -> Result<ToolRun, ToolError> {
        let what = run.what();
        let (skill, tool, path) = (run.skill, run.tool.clone(), run.path.clone());
        let outcome = self
            .execute(run, overrides)
            .map_err(|e| exec_error(&what, &e))?;
        finish(&what, &skill.name, &tool, &path, outcome)
    }
}

/// An entry point's arguments (checked against
/// [`skilldeck::spec::entry_point_schema`]): `args` on the command line,
/// `input` as JSON on stdin (nothing when absent).
fn entry_point_input(arguments: &Value) -> (Vec<String>, Input) {
    let args = arguments
        .get("args")
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let stdin = match arguments.get("input") {
        Some(input) => Input::Bytes(serde_json::to_vec(input).unwrap_or_default()),
        None => Input::Null,
    };
    (args, stdin)
}

/// Refuses `path` unless it names a file under the skill's `scripts/`
/// folder, lexically (no `..`, no absolute path) and with symlinks
/// resolved.
fn check_under_scripts(skill: &Skill, path: &str) -> Result<(), ToolError> {
    let denied = |why: &str| {
        ToolError::new(
            ToolErrorKind::Denied,
            format!(
                "{RUN_SKILL_SCRIPT} runs files under the '{SCRIPTS_DIR}/' folder of a skill only; \
                 '{path}' of skill '{}' {why}; nothing was run",
                skill.name
            ),
        )
    };
    let parts: Vec<&str> = path.split('/').collect();
    if path.contains('\\') || path.contains('\0') {
        return Err(denied("is not a plain relative path"));
    }
    if parts.len() < 2 || parts[0] != SCRIPTS_DIR {
        return Err(denied("is not under it"));
    }
    if parts[1..]
        .iter()
        .any(|p| p.is_empty() || *p == "." || *p == "..")
    {
        return Err(denied("is not a plain relative path"));
    }
    let root = skill.real_dir().join(SCRIPTS_DIR);
    let (Ok(root), Ok(real)) = (
        std::fs::canonicalize(&root),
        std::fs::canonicalize(skill.real_dir().join(path)),
    ) else {
        return Err(ToolError::new(
            ToolErrorKind::Failed,
            format!(
                "skill '{}' has no file '{path}'; nothing was run",
                skill.name
            ),
        ));
    };
    if !real.starts_with(&root) || real == root {
        return Err(denied("leads out of it (a symbolic link)"));
    }
    Ok(())
}

/// A refusal before or while setting up a run, for the model.
pub(crate) fn exec_error(what: &str, e: &ExecError) -> ToolError {
    let kind = match e.kind() {
        ErrorKind::Denied => ToolErrorKind::Denied,
        ErrorKind::Unavailable => ToolErrorKind::Unavailable,
        ErrorKind::Busy => ToolErrorKind::Busy,
        ErrorKind::InvalidInput | ErrorKind::Io => ToolErrorKind::Failed,
    };
    let advice = match e.kind() {
        ErrorKind::Busy => " Try again in a moment.",
        ErrorKind::Unavailable => " The operator must fix the sandbox; retrying will not help.",
        _ => "",
    };
    ToolError::new(kind, format!("{what} was not run: {e}.{advice}"))
}

/// The end of `bytes` as text, at most [`MAX_ERROR_OUTPUT_CHARS`].
fn tail(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim_end();
    let count = text.chars().count();
    if count <= MAX_ERROR_OUTPUT_CHARS {
        return text.to_owned();
    }
    let skip = count - MAX_ERROR_OUTPUT_CHARS;
    let rest: String = text.chars().skip(skip).collect();
    format!("[... {skip} characters before]\n{rest}")
}

/// What a signal usually means in the sandbox.
fn signal_reason(signal: i32) -> &'static str {
    match signal {
        libc_signals::SIGSYS => "SIGSYS: a system call the sandbox forbids",
        libc_signals::SIGXCPU => "SIGXCPU: the CPU time limit",
        libc_signals::SIGXFSZ => "SIGXFSZ: the file size limit",
        libc_signals::SIGKILL => "SIGKILL: killed, often the memory or process limit",
        libc_signals::SIGSEGV => "SIGSEGV: a crash, or the memory limit",
        libc_signals::SIGABRT => "SIGABRT: the program aborted, often out of memory",
        _ => "a signal",
    }
}

/// Linux signal numbers used in messages (no libc dependency for six
/// constants).
mod libc_signals {
    pub const SIGABRT: i32 = 6;
    pub const SIGKILL: i32 = 9;
    pub const SIGSEGV: i32 = 11;
    pub const SIGXCPU: i32 = 24;
    pub const SIGXFSZ: i32 = 25;
    pub const SIGSYS: i32 = 31;
}

fn with_output(mut message: String, outcome: &Outcome) -> String {
    let cap = outcome.policy.limits.output_cap;
    for (name, bytes, truncated) in [
        ("stderr", &outcome.stderr, outcome.stderr_truncated),
        ("stdout", &outcome.stdout, outcome.stdout_truncated),
    ] {
        if bytes.is_empty() {
            continue;
        }
        let _ = write!(message, "\n{name}:\n{}", tail(bytes));
        if truncated {
            let _ = write!(message, "\n[{name} was cut at {cap} bytes]");
        }
    }
    let _ = write!(message, "{}", refusal_note(outcome));
    message
}

/// `\n[sandbox refused: …]` when the sandbox refused a system call, a
/// connection or a write outside the allowed paths during the run (the
/// caps are worded by the caller), else nothing.
fn refusal_note(outcome: &Outcome) -> String {
    let r = &outcome.refusals;
    if r.attempts_refused() == 0 {
        return String::new();
    }
    format!("\n[sandbox {}]", r.summary())
}

/// The skill of the tool `full_name` when the model may use it
/// ([`rules::model_access`]), else the refusal saying how the user can call
/// the tool instead; an unknown or unserved tool is the resolver's error.
fn model_tool<'d>(snapshot: &'d Snapshot, full_name: &str) -> Result<&'d Skill, ToolError> {
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
    Ok(resolved.skill)
}

/// A finished run as the model sees it: success, or a [`ToolError`] saying
/// how it ended.
fn finish(
    what: &str,
    skill: &str,
    tool: &str,
    path: &str,
    outcome: Outcome,
) -> Result<ToolRun, ToolError> {
    if outcome.timed_out {
        let secs = outcome.policy.limits.timeout.as_secs_f64();
        let message = format!(
            "{what} timed out after {secs} s and was stopped (its whole process tree was \
             killed); it may need less work per call, or the operator a longer [exec] \
             timeout-secs."
        );
        return Err(ToolError::new(
            ToolErrorKind::TimedOut,
            with_output(message, &outcome),
        ));
    }
    match (outcome.exit_code, outcome.signal) {
        (Some(0), _) => {}
        (Some(code), _) => {
            let message = format!("{what} failed: exit code {code}.");
            return Err(ToolError::new(
                ToolErrorKind::ExecutionFailed,
                with_output(message, &outcome),
            ));
        }
        (None, signal) => {
            let message = match signal {
                Some(sig) => format!(
                    "{what} was killed by signal {sig} ({}).",
                    signal_reason(sig)
                ),
                None => format!("{what} ended without an exit status."),
            };
            return Err(ToolError::new(
                ToolErrorKind::ExecutionFailed,
                with_output(message, &outcome),
            ));
        }
    }
    let stdout = String::from_utf8_lossy(&outcome.stdout).into_owned();
    let structured = if outcome.stdout_truncated {
        None
    } else {
        structured(&stdout)
    };
    let mut text = stdout;
    if outcome.stdout_truncated {
        let _ = write!(
            text,
            "\n[output cut at {} bytes]",
            outcome.policy.limits.output_cap
        );
    }
    text.push_str(&refusal_note(&outcome));
    Ok(ToolRun {
        skill: skill.to_owned(),
        tool: tool.to_owned(),
        path: path.to_owned(),
        text,
        structured,
        outcome,
        files: Vec::new(),
    })
}

/// A finished `run_code` run as the model sees it (as for a script: see
/// [`finish`]).
pub(crate) fn finish_code(what: &str, skill: &str, outcome: Outcome) -> Result<ToolRun, ToolError> {
    finish(what, skill, crate::code::RUN_CODE, "", outcome)
}

/// `stdout` as structured content: its JSON value (an object as is,
/// anything else as `{"result": value}`), or `None` when it is not JSON.
fn structured(stdout: &str) -> Option<Value> {
    let trimmed = stdout.trim();
    if trimmed.is_empty() {
        return None;
    }
    match serde_json::from_str::<Value>(trimmed).ok()? {
        Value::Object(map) => Some(Value::Object(map)),
        other => Some(json!({ "result": other })),
    }
}

/// The arguments of `run_skill_script`: `name`, `path`, optional `args`
/// (an array of strings).
pub fn script_arguments(
    arguments: &Map<String, Value>,
) -> Result<(String, String, Vec<String>), ToolError> {
    let invalid = |m: String| ToolError::new(ToolErrorKind::InvalidArguments, m);
    if let Some(unknown) = arguments
        .keys()
        .find(|k| !["name", "path", "args"].contains(&k.as_str()))
    {
        return Err(invalid(format!(
            "unknown argument `{unknown}`; the accepted arguments are `name`, `path`, `args`"
        )));
    }
    let string = |key: &str| match arguments.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        None | Some(Value::Null) => Err(invalid(format!("`{key}` is required"))),
        Some(_) => Err(invalid(format!("`{key}` must be a string"))),
    };
    let name = string("name")?;
    let path = string("path")?;
    let args = match arguments.get("args") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| match v {
                Value::String(s) => Ok(s.clone()),
                _ => Err(invalid(format!("`args/{i}` must be a string"))),
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(invalid("`args` must be an array of strings".to_owned())),
    };
    Ok((name, path, args))
}

/// The JSON Schema of `run_skill_script`'s arguments.
pub fn script_input_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "The skill whose script runs."},
            "path": {
                "type": "string",
                "description": "The file to run, relative to the skill folder, under scripts/ \
                                (e.g. scripts/extract.py)."
            },
            "args": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Command-line arguments for the script."
            }
        },
        "required": ["name", "path"],
        "additionalProperties": false
    })
}

/// Runs dynamic-context directives in the sandbox: the command's output
/// (at most [`DYNAMIC_OUTPUT_CAP`] bytes, within [`DYNAMIC_TIMEOUT`])
/// replaces the directive; a failure becomes a short bracketed note.
#[derive(Debug)]
pub struct SandboxedDynamicContext<'a> {
    execution: &'a Execution,
    context: CallContext,
}

/// At most `max` characters of `text`, with `…` when cut.
fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

impl SandboxedDynamicContext<'_> {
    fn note(&self, directive: &Directive, what: &str) -> String {
        let command = shorten(directive.command.lines().next().unwrap_or(""), 60);
        let note = format!("[dynamic context `{command}` {what}]");
        shorten(&note.replace('\n', " "), MAX_DYNAMIC_NOTE_CHARS)
    }
}

impl DynamicContext for SandboxedDynamicContext<'_> {
    fn expand(&self, skill: &Skill, directive: &Directive) -> String {
        let mut policy = match self.execution.policy(&skill.name) {
            Ok(p) => p,
            Err(e) => return self.note(directive, &format!("not run: {e}")),
        };
        policy.limits.timeout = policy.limits.timeout.min(DYNAMIC_TIMEOUT);
        policy.limits.output_cap = policy.limits.output_cap.min(DYNAMIC_OUTPUT_CAP);
        // A directive runs with the skill's environment, as its scripts do.
        let policy = match crate::environment::policy_for(&self.execution.config, skill, policy) {
            Ok(p) => p,
            Err(e) => {
                return self.note(
                    directive,
                    &format!("not run: {}", crate::environment::describe(&e)),
                );
            }
        };
        let request = Request {
            skill,
            path: "SKILL.md",
            args: Vec::new(),
            stdin: Input::Null,
            context: CallContext {
                tool: format!("dynamic-context:{}", directive.line),
                ..self.context.clone()
            },
        };
        let outcome = match self
            .execution
            .executor
            .run_shell(request, &directive.command, &policy)
        {
            Ok(o) => o,
            Err(e) => return self.note(directive, &format!("not run: {e}")),
        };
        if outcome.timed_out {
            return self.note(
                directive,
                &format!(
                    "timed out after {} s",
                    outcome.policy.limits.timeout.as_secs_f64()
                ),
            );
        }
        if !outcome.success() {
            let status = match (outcome.exit_code, outcome.signal) {
                (Some(code), _) => format!("exit code {code}"),
                (None, Some(sig)) => format!("signal {sig} ({})", signal_reason(sig)),
                (None, None) => "no exit status".to_owned(),
            };
            let stderr = String::from_utf8_lossy(&outcome.stderr);
            let first = stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            let what = if first.is_empty() {
                format!("failed: {status}")
            } else {
                format!("failed: {status}: {}", first.trim())
            };
            return self.note(directive, &what);
        }
        let mut text = String::from_utf8_lossy(&outcome.stdout)
            .trim_end()
            .to_owned();
        if outcome.stdout_truncated {
            let _ = write!(
                text,
                " [output cut at {} bytes]",
                outcome.policy.limits.output_cap
            );
        }
        text
    }
}
