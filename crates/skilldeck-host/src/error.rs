//! The host's error type, for calls that fail as a whole. Tool calls fail
//! with a [`crate::ToolError`] instead: a message for the model, never a
//! host failure.

use std::path::PathBuf;

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
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}
