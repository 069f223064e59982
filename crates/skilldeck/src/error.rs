//! The library's error type, for API calls that fail as a whole (validation
//! problems are [`crate::Diagnostic`]s, not errors).

use std::path::PathBuf;

use crate::name::NameProblem;

/// Everything that can fail in the core library.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A skill name broke the naming rules.
    #[error("invalid skill name '{name}': {}", problems.iter().map(|p| p.message.as_str()).collect::<Vec<_>>().join("; "))]
    InvalidName {
        /// The name as given.
        name: String,
        /// Every rule it broke.
        problems: Vec<NameProblem>,
    },
    /// A config file is malformed.
    #[error("{}:{line}:{column}: {message}", path.display())]
    Config {
        /// The config file.
        path: PathBuf,
        /// 1-based line.
        line: u32,
        /// 1-based column.
        column: u32,
        /// What is wrong.
        message: String,
    },
    /// A path that must not exist does.
    #[error("{} already exists", .0.display())]
    AlreadyExists(PathBuf),
    /// A skill's `SKILL.md` could not be read or split on activation.
    #[error("cannot activate skill '{name}': {diagnostic}")]
    Activation {
        /// The skill.
        name: String,
        /// What went wrong, located in the file.
        diagnostic: Box<crate::diagnostic::Diagnostic>,
    },
    /// The argument string passed to an activation is over its limit.
    #[error("arguments for skill '{name}' are {len} bytes; the limit is {limit}")]
    ArgumentsTooLong {
        /// The skill.
        name: String,
        /// Bytes given.
        len: usize,
        /// The limit (bytes).
        limit: usize,
    },
    /// Substituting the arguments would make the body larger than its limit.
    #[error("skill '{name}' with these arguments would be over the {limit} byte limit")]
    ActivationTooLarge {
        /// The skill.
        name: String,
        /// The limit (bytes).
        limit: usize,
    },
    /// An I/O operation failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}
