//! The `run_code` call itself, over the execution service: the arguments
//! checked, the work folder leased, the run, the quota checked again and
//! the outputs collected. The rules are stated in [`crate::code`].

use std::fmt::Write as _;

use skilldeck::Skill;
use skilldeck_exec::{CallContext, Input, Request};

use crate::code::{
    CodeArgs, LAUNCH, Language, MAX_CODE_BYTES, OutputFile, RUN_CODE, collect_outputs, names, scan,
};
use crate::execution::{Execution, Overrides, ToolRun};
use crate::rules::{self, ModelUse};
use crate::snapshot::Snapshot;
use crate::tool_error::{ToolError, ToolErrorKind};

impl Execution {
    /// Runs `args` for the model in `conversation` (see the module
    /// documentation): refused unless `run_code` is on; with a skill,
    /// refused unless the model may use it ([`rules::model_access`]).
    pub fn run_code(
        &self,
        snapshot: &Snapshot,
        conversation: &str,
        args: &CodeArgs,
        context: CallContext,
    ) -> Result<ToolRun, ToolError> {
        let Some(folders) = self.work_folders() else {
            return Err(ToolError::new(
                ToolErrorKind::UnknownTool,
                format!("unknown tool '{RUN_CODE}': running code is turned off on this server"),
            ));
        };
        let language = args.language;
        let Some(interpreter) = language.interpreter() else {
            return Err(ToolError::new(
                ToolErrorKind::InvalidArguments,
                format!(
                    "`language` '{}' is not installed in the sandbox ({} is not on {}); use \
                     one of: {}",
                    language.name(),
                    language.program(),
                    skilldeck_exec::SANDBOX_PATH,
                    names(&Language::available())
                ),
            ));
        };
        if args.code.len() > MAX_CODE_BYTES {
            return Err(ToolError::new(
                ToolErrorKind::InvalidArguments,
                format!(
                    "`code` is {} bytes; the limit is {MAX_CODE_BYTES}: write the program to a \
                     file in the work folder in parts, then run it",
                    args.code.len()
                ),
            ));
        }
        if args.code.contains('\0') {
            return Err(ToolError::new(
                ToolErrorKind::InvalidArguments,
                "`code` contains a NUL character".to_owned(),
            ));
        }
        let code_sha256 = args.code_sha256();
        let skill: Skill = match &args.skill {
            Some(name) => {
                let found =
                    rules::require_served(&snapshot.deck, name).map_err(ToolError::lookup)?;
                rules::model_access(found)
                    .map_err(|refusal| refusal.to_tool_error(ModelUse::Code))?;
                found.clone()
            }
            None => self.no_skill().map_err(|e| {
                ToolError::new(
                    ToolErrorKind::Failed,
                    format!("{RUN_CODE} was not run: its empty skill folder cannot be made: {e}"),
                )
            })?,
        };
        let mut policy = self.policy(&skill.name).map_err(|e| exec_refusal(&e))?;
        // The model's code in a skill's context imports what the skill's
        // scripts import: its environment, when it declares one.
        policy = crate::environment::policy_for(self.config(), &skill, policy).map_err(|p| {
            ToolError::new(
                ToolErrorKind::Failed,
                format!(
                    "{RUN_CODE} was not run: {}",
                    crate::environment::describe(&p)
                ),
            )
        })?;
        if let Some(timeout) = args.timeout {
            policy = Overrides {
                timeout: Some(timeout.min(policy.limits.timeout)),
                profile: None,
            }
            .apply(policy);
        }
        let span = tracing::info_span!(
            "run_code",
            "skilldeck.code.language" = language.name(),
            "skilldeck.code.sha256" = %code_sha256,
            "skilldeck.skill.name" = %skill.name,
        );
        let _entered = span.enter();
        let lease = folders.acquire(conversation)?;
        let result = lease.with(|folder| {
            let before = scan(folder).map_err(|e| {
                ToolError::new(
                    ToolErrorKind::Failed,
                    format!("{RUN_CODE} was not run: the work folder cannot be read: {e}"),
                )
            })?;
            if before.over(folders.quota_bytes()) {
                return Err(ToolError::new(
                    ToolErrorKind::Denied,
                    format!(
                        "{RUN_CODE} was not run: the work folder is over its quota ({} bytes; \
                         the quota is {}); delete files first",
                        before.bytes,
                        folders.quota_bytes()
                    ),
                ));
            }
            policy.grants.write_paths.push(folder.to_path_buf());
            let request = Request {
                skill: &skill,
                path: "SKILL.md",
                args: vec![
                    folder.display().to_string(),
                    interpreter.display().to_string(),
                    language.flag().to_owned(),
                    args.code.clone(),
                ],
                stdin: Input::Null,
                context: CallContext {
                    tool: RUN_CODE.to_owned(),
                    ..context.clone()
                },
            };
            let outcome = self.executor().run_shell(request, LAUNCH, &policy);
            let after = folders.enforce(folder, &before);
            let what = format!("{RUN_CODE} ({})", language.name());
            let outcome = outcome.map_err(|e| exec_refusal(&e))?;
            let after = after?;
            let (files, omitted) = collect_outputs(folder, &before, &after);
            let mut run = crate::execution::finish_code(&what, &skill.name, outcome)?;
            if !files.is_empty() || !omitted.is_empty() {
                let _ = write!(run.text, "{}", outputs_note(&files, &omitted));
            }
            run.files = files;
            Ok(run)
        });
        folders.touch(conversation);
        tracing::info!(
            target: "skilldeck::audit",
            agent = %context.agent_id,
            user = %context.user_id,
            session = %context.session_id,
            skill = %skill.name,
            tool = RUN_CODE,
            language = language.name(),
            code_sha256 = %code_sha256,
            outcome = match &result {
                Ok(_) => "ok",
                Err(e) if e.kind == ToolErrorKind::ExecutionFailed => "failed",
                Err(e) if e.kind == ToolErrorKind::TimedOut => "timeout",
                Err(_) => "refused",
            },
            "run_code"
        );
        result
    }
}

/// The closing lines of a result listing the `outputs/` files returned and
/// left out.
fn outputs_note(files: &[OutputFile], omitted: &[String]) -> String {
    let mut note = String::new();
    if !files.is_empty() {
        let list: Vec<String> = files
            .iter()
            .map(|f| format!("{} ({}, {} bytes)", f.name, f.mime_type, f.data.len()))
            .collect();
        let _ = write!(note, "\n[outputs returned: {}]", list.join(", "));
    }
    if !omitted.is_empty() {
        let _ = write!(note, "\n[outputs not returned: {}]", omitted.join("; "));
    }
    note
}

fn exec_refusal(e: &skilldeck_exec::ExecError) -> ToolError {
    crate::execution::exec_error(RUN_CODE, e)
}
