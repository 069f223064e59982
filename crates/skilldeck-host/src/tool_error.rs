//! [`ToolError`]: why a tool call failed, typed by [`ToolErrorKind`], with a
//! message the model can act on. A face decides how each kind travels (MCP:
//! `isError: true`, or a protocol error for an unknown tool).

use std::sync::Arc;

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

impl ToolErrorKind {
    /// The kind's stable snake_case name (`"timed_out"`): the `kind` a
    /// language binding's exception carries.
    pub fn name(self) -> &'static str {
        match self {
            ToolErrorKind::InvalidArguments => "invalid_arguments",
            ToolErrorKind::UnknownSkill => "unknown_skill",
            ToolErrorKind::NotModelInvocable => "not_model_invocable",
            ToolErrorKind::Failed => "failed",
            ToolErrorKind::UnknownTool => "unknown_tool",
            ToolErrorKind::Denied => "denied",
            ToolErrorKind::ExecutionFailed => "execution_failed",
            ToolErrorKind::TimedOut => "timed_out",
            ToolErrorKind::Unavailable => "unavailable",
            ToolErrorKind::Busy => "busy",
        }
    }

    /// The exception class a language binding raises for this kind (the
    /// same hierarchy in Python and Node): `SkillNotFoundError`,
    /// `InvalidArgumentsError` or `SkillInvocationError`.
    pub fn binding_class(self) -> &'static str {
        match self {
            ToolErrorKind::UnknownSkill => "SkillNotFoundError",
            ToolErrorKind::InvalidArguments | ToolErrorKind::UnknownTool => "InvalidArgumentsError",
            ToolErrorKind::NotModelInvocable
            | ToolErrorKind::Failed
            | ToolErrorKind::Denied
            | ToolErrorKind::ExecutionFailed
            | ToolErrorKind::TimedOut
            | ToolErrorKind::Unavailable
            | ToolErrorKind::Busy => "SkillInvocationError",
        }
    }
}

/// Why a tool call failed: a message the model can act on, and, when the
/// failure is the core's (an unknown skill, a file refused, a `SKILL.md`
/// that does not parse), the core's error itself, so a face can keep its
/// structure (suggestions, diagnostics) without asking again.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct ToolError {
    /// What kind of failure.
    pub kind: ToolErrorKind,
    /// The message for the model.
    pub message: String,
    /// The core's error behind it, if any ([`ToolError::core`]).
    core: Option<Arc<skilldeck::Error>>,
}

/// Equal when the kind and the message are (the core error is how the
/// message came about, not part of what the model sees).
impl PartialEq for ToolError {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind && self.message == other.message
    }
}

impl Eq for ToolError {}

impl ToolError {
    /// An error of `kind` saying `message`.
    pub fn new(kind: ToolErrorKind, message: impl Into<String>) -> Self {
        ToolError {
            kind,
            message: message.into(),
            core: None,
        }
    }

    /// An error of `kind` caused by the core's `error` (its message, and
    /// the error kept for [`ToolError::core`]).
    pub fn from_core(kind: ToolErrorKind, error: skilldeck::Error) -> Self {
        ToolError {
            kind,
            message: error.to_string(),
            core: Some(Arc::new(error)),
        }
    }

    /// A failed skill lookup: [`ToolErrorKind::UnknownSkill`] with the
    /// core's message.
    pub fn lookup(error: skilldeck::Error) -> Self {
        ToolError::from_core(ToolErrorKind::UnknownSkill, error)
    }

    /// A core failure while serving the call: [`ToolErrorKind::Failed`].
    pub fn failed(error: skilldeck::Error) -> Self {
        ToolError::from_core(ToolErrorKind::Failed, error)
    }

    /// The core's error behind this one, when the core failed (an unknown
    /// skill with its suggestions, a `SKILL.md` with its diagnostics).
    pub fn core(&self) -> Option<&skilldeck::Error> {
        self.core.as_deref()
    }
}
