//! [`ToolError`]: why a tool call failed, typed by [`ToolErrorKind`], with a
//! message the model can act on. A face decides how each kind travels (MCP:
//! `isError: true`, or a protocol error for an unknown tool).

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
    /// Skill code was not run: the call asks for something the policy
    /// forbids (a file outside `scripts/`, a tool not offered yet).
    Denied,
    /// Skill code ran and failed: a non-zero exit, or killed by a signal
    /// (a resource limit, a forbidden system call).
    ExecutionFailed,
    /// Skill code ran past its timeout; its process tree was killed.
    TimedOut,
    /// Skill code was not run: the sandbox is unavailable on this machine
    /// (the message names the missing layer).
    Unavailable,
    /// Skill code was not run: too many executions at once.
    Busy,
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
