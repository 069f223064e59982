//! The CLI's error type: failures that end a command with exit status 2.

/// Everything that stops a command before it can give its verdict.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The core library refused (bad config file, I/O on a path).
    #[error(transparent)]
    Core(#[from] skilldeck::Error),
    /// A file or folder the command needs.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: std::path::PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A skill that cannot be read (its diagnostic, with file and line).
    #[error("{0}")]
    Skill(String),
    /// Writing the output failed (closed pipe, full disk).
    #[error("cannot write output: {0}")]
    Output(#[from] std::io::Error),
}

impl CliError {
    /// A closed pipe (`skilldeck ... | head`) is not worth a message.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, CliError::Output(e) if e.kind() == std::io::ErrorKind::BrokenPipe)
    }
}
