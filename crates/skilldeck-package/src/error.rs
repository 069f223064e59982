//! The package crate's error type.

use std::path::PathBuf;

use skilldeck::Diagnostic;

/// Everything that can fail while packing, unpacking, installing or
/// verifying.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The package or skill was refused: each diagnostic has a stable code
    /// and names the entry (file) it is about.
    #[error("{}", render(.0))]
    Refused(Vec<Diagnostic>),
    /// A file system operation failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The lockfile is malformed.
    #[error("{}: {message}", path.display())]
    Lock {
        /// The lockfile.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

fn render(diagnostics: &[Diagnostic]) -> String {
    diagnostics
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

impl Error {
    /// A refusal of one diagnostic.
    pub fn refused(diagnostic: Diagnostic) -> Error {
        Error::Refused(vec![diagnostic])
    }

    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// The diagnostics of a refusal (empty for other errors).
    pub fn diagnostics(&self) -> &[Diagnostic] {
        match self {
            Error::Refused(d) => d,
            _ => &[],
        }
    }
}
