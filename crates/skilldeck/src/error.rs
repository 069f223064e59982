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
    /// A value given for an option is not one of the accepted ones.
    #[error("unknown {what} '{value}' (expected {expected})")]
    InvalidValue {
        /// What the value is for (`catalog format`, `encoding`, ...).
        what: &'static str,
        /// The value as given.
        value: String,
        /// The accepted values.
        expected: &'static str,
    },
    /// Options that cannot be used together.
    #[error("{0}")]
    ConflictingOptions(String),
    /// A tokenizer could not be built.
    #[error("cannot build the {encoding} tokenizer: {message}")]
    Tokenizer {
        /// The encoding (`o200k_base`, ...).
        encoding: &'static str,
        /// What went wrong.
        message: String,
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
