//! The crate's one error type.

use std::path::PathBuf;

/// Why an audit could not run (a finding is never an error).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file or folder could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The path is not a skill folder (no `SKILL.md`).
    #[error("{}: not a skill folder (no SKILL.md); pass a skill folder, or a tree with -r", path.display())]
    NotASkill {
        /// The path.
        path: PathBuf,
    },
    /// An allow entry names a code the audit does not have.
    #[error("[audit.allow{}] unknown finding code '{code}'; see `skilldeck audit --list-rules`", skill.as_deref().map(|s| format!(".{s}")).unwrap_or_default())]
    UnknownCode {
        /// The skill it was allowed for (`None`: every skill).
        skill: Option<String>,
        /// The code.
        code: String,
    },
    /// An allow entry without a reason.
    #[error("allowing '{code}' needs a reason (why the finding is accepted)")]
    NoReason {
        /// The code.
        code: String,
    },
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}
