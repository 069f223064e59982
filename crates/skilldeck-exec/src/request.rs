//! What a caller asks for: the [`Request`] (skill, file, arguments,
//! stdin, who asks) and the checks every request passes before anything
//! is created.

use serde::Serialize;
use sha2::{Digest, Sha256};
use skilldeck::Skill;

use crate::error::ExecError;
use crate::policy::{MAX_ARGS_BYTES, MAX_STDIN_BYTES};

/// What the script reads on stdin.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Input {
    /// Nothing (`/dev/null`).
    #[default]
    Null,
    /// These bytes (at most [`MAX_STDIN_BYTES`]), then end of file.
    Bytes(Vec<u8>),
    /// The caller's own stdin, passed through (a CLI) when it is not a
    /// terminal; a terminal is never handed to a script (it could change
    /// the operator's terminal modes or read what they type): the script
    /// then reads `/dev/null`.
    Inherit,
}

/// Who asks: passed to the script as `SKILLDECK_*` variables and recorded
/// in the trace and the audit line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CallContext {
    /// The agent (concurrency is also capped per agent).
    pub agent_id: String,
    /// The user.
    pub user_id: String,
    /// The session.
    pub session_id: String,
    /// The tool call id (`gen_ai.tool.call.id`).
    pub call_id: String,
    /// The tool name; the script path when empty.
    pub tool: String,
}

impl CallContext {
    /// Who calls from this process (the CLI, a Python program): `agent`,
    /// the user from `$USER`, the session `{agent}-{pid}`.
    pub fn local(agent: &str) -> CallContext {
        CallContext {
            agent_id: agent.to_owned(),
            user_id: std::env::var("USER").unwrap_or_default(),
            session_id: format!("{agent}-{}", std::process::id()),
            call_id: String::new(),
            tool: String::new(),
        }
    }
}

/// One execution request.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    /// The skill whose file runs.
    pub skill: &'a Skill,
    /// The file, relative to the skill folder.
    pub path: &'a str,
    /// Arguments after the script path.
    pub args: Vec<String>,
    /// Standard input.
    pub stdin: Input,
    /// Who asks.
    pub context: CallContext,
}

pub(crate) fn check_input(request: &Request<'_>) -> Result<(), ExecError> {
    let args_bytes: usize = request.args.iter().map(|a| a.len() + 1).sum();
    if args_bytes > MAX_ARGS_BYTES {
        return Err(ExecError::InvalidInput(format!(
            "arguments are {args_bytes} bytes; the limit is {MAX_ARGS_BYTES} (pass large input on stdin)"
        )));
    }
    if request.args.iter().any(|a| a.contains('\0')) {
        return Err(ExecError::InvalidInput(
            "an argument contains a NUL byte".to_owned(),
        ));
    }
    if let Input::Bytes(b) = &request.stdin
        && b.len() > MAX_STDIN_BYTES
    {
        return Err(ExecError::InvalidInput(format!(
            "stdin is {} bytes; the limit is {MAX_STDIN_BYTES}",
            b.len()
        )));
    }
    Ok(())
}

/// sha256 of the arguments (NUL-separated) and the stdin bytes, hex.
pub(crate) fn arguments_digest(request: &Request<'_>) -> String {
    let mut h = Sha256::new();
    for a in &request.args {
        h.update(a.as_bytes());
        h.update([0u8]);
    }
    if let Input::Bytes(b) = &request.stdin {
        h.update(b);
    }
    skilldeck::lowercase_hex(&h.finalize())
}
