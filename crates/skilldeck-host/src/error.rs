//! The host's error type, for calls that fail as a whole. Tool calls fail
//! with a [`crate::ToolError`] instead: a message for the model, never a
//! host failure.

use std::path::PathBuf;

use crate::tool_error::{ToolError, ToolErrorKind};

/// Everything that can fail in the host layer.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The core refused (the catalog could not be rendered, a skill could
    /// not be read or activated).
    #[error(transparent)]
    Core(#[from] skilldeck::Error),
    /// A state file (the conversation store) could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// No skill declares a tool of that full name (`{skill}__{tool}`).
    #[error("no skill tool is named '{name}'{}", did_you_mean(suggestions))]
    UnknownSkillTool {
        /// The name as given.
        name: String,
        /// Served tools with the same skill or tool part.
        suggestions: Vec<String>,
    },
    /// A skill tool's arguments are larger than the cap; nothing ran.
    #[error("the arguments of '{tool}' are over the {limit} byte limit; nothing was run")]
    ToolArgumentsTooLarge {
        /// The tool's full name.
        tool: String,
        /// The cap in bytes.
        limit: usize,
    },
    /// A skill tool's arguments are not JSON; nothing ran.
    #[error("the arguments of '{tool}' are not JSON ({message}); nothing was run")]
    ToolArgumentsNotJson {
        /// The tool's full name.
        tool: String,
        /// The parser's message.
        message: String,
    },
    /// A skill tool's arguments do not match its schema; nothing ran.
    #[error("invalid arguments for '{tool}' at {path}: {reason}{}; nothing was run", more_errors(*more))]
    InvalidToolArguments {
        /// The tool's full name.
        tool: String,
        /// The JSON pointer of the failing value (`/tags/2`; `/` for the whole object).
        path: String,
        /// What is wrong there.
        reason: String,
        /// How many further problems the schema found.
        more: usize,
    },
    /// A skill tool's skill declares dependencies whose environment cannot
    /// be used (not built, removed, changed): nothing runs.
    #[error("skill tool '{tool}' is not offered: {reason}")]
    SkillEnvironment {
        /// The tool's full name.
        tool: String,
        /// Why, with what to do.
        reason: String,
    },
    /// A skill tool's schema does not compile (it did when the skill was
    /// loaded: the file changed since, or a bug).
    #[error("the schema of '{tool}' does not compile: {message}")]
    ToolSchema {
        /// The tool's full name.
        tool: String,
        /// The compiler's message.
        message: String,
    },
}

fn did_you_mean(suggestions: &[String]) -> String {
    if suggestions.is_empty() {
        String::new()
    } else {
        format!("; did you mean {}?", suggestions.join(", "))
    }
}

fn more_errors(more: usize) -> String {
    match more {
        0 => String::new(),
        1 => " (and 1 more problem)".to_owned(),
        n => format!(" (and {n} more problems)"),
    }
}

impl Error {
    /// The error as a tool failure for the model: invalid arguments,
    /// unknown tool, unknown or unavailable skill, or a failure.
    pub fn to_tool_error(&self) -> ToolError {
        use ToolErrorKind as K;
        let kind = match self {
            Error::UnknownSkillTool { .. } => K::UnknownTool,
            Error::ToolArgumentsTooLarge { .. }
            | Error::ToolArgumentsNotJson { .. }
            | Error::InvalidToolArguments { .. } => K::InvalidArguments,
            Error::Core(
                skilldeck::Error::UnknownSkill { .. }
                | skilldeck::Error::SkillOff(_)
                | skilldeck::Error::SkillIneligible { .. },
            ) => K::UnknownSkill,
            _ => K::Failed,
        };
        ToolError::new(kind, self.to_string())
    }
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}
