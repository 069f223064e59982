//! The crate's one error type. Every refusal names what was refused and
//! why; [`ExecError::kind`] gives a stable kind for faces to map.

use std::path::PathBuf;

use serde::Serialize;

/// The kind of an [`ExecError`], stable for faces (exit codes, tool errors).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The request asks for something the policy forbids (a path leaving
    /// the skill).
    Denied,
    /// A required isolation layer is missing on this machine.
    Unavailable,
    /// The request is malformed (bad path, missing interpreter, FIFO, input
    /// too large).
    InvalidInput,
    /// Too many executions at once; the caller may retry later.
    Busy,
    /// The operating system failed (spawn, pipes, the work directory).
    Io,
}

/// Everything that can stop an execution before or while it runs.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// The script path is refused by the core's containment rules.
    #[error("skill '{skill}': cannot run '{path}': {reason}")]
    Denied {
        /// The skill.
        skill: String,
        /// The requested path.
        path: String,
        /// Why.
        reason: String,
    },
    /// A required isolation layer is missing; nothing ran.
    #[error(
        "sandbox unavailable: {missing}; nothing ran (set the sandbox profile to \"none\" to run without isolation)"
    )]
    Unavailable {
        /// What is missing, e.g. "Landlock ABI 7 (kernel reports none)".
        missing: String,
    },
    /// The operator required per-run caps on the whole process tree
    /// (`[exec] tree-limits = "require"`) and this machine offers no cgroup
    /// for them; nothing ran.
    #[error(
        "per-run memory and process caps unavailable: {missing}; nothing ran (or set [exec] tree-limits = \"auto\" to run with per-process limits only)"
    )]
    LimitUnavailable {
        /// What is missing and why.
        missing: String,
    },
    /// The work root (the folder holding every run's work directory) is
    /// not private to this user; nothing ran.
    #[error("work root {}: {problem}; nothing ran ({remedy})", path.display())]
    WorkRoot {
        /// The folder.
        path: PathBuf,
        /// What is wrong with it.
        problem: String,
        /// What to do.
        remedy: String,
    },
    /// The request is malformed.
    #[error("{0}")]
    InvalidInput(String),
    /// No execution slot was free in time.
    #[error("busy: {0}")]
    Busy(String),
    /// A system call or file operation failed.
    #[error("{}: {source}", what)]
    Io {
        /// What was being done.
        what: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The work directory could not be prepared.
    #[error("work directory {}: {source}", path.display())]
    WorkDir {
        /// The folder.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

impl ExecError {
    /// The error's kind.
    pub fn kind(&self) -> ErrorKind {
        match self {
            ExecError::Denied { .. } => ErrorKind::Denied,
            ExecError::Unavailable { .. } | ExecError::LimitUnavailable { .. } => {
                ErrorKind::Unavailable
            }
            ExecError::WorkRoot { .. } => ErrorKind::Denied,
            ExecError::InvalidInput(_) => ErrorKind::InvalidInput,
            ExecError::Busy(_) => ErrorKind::Busy,
            ExecError::Io { .. } | ExecError::WorkDir { .. } => ErrorKind::Io,
        }
    }

    pub(crate) fn io(what: impl Into<String>, source: std::io::Error) -> Self {
        ExecError::Io {
            what: what.into(),
            source,
        }
    }
}
