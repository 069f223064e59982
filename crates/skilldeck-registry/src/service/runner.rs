//! [`TestRunner`]: what runs a registry test run in a sandbox, and what
//! it gets and answers. Defined here, in the registry, and implemented by
//! the binary that composes the server (`skilldeck registry serve`, on
//! the host layer's `Execution` service): the registry cannot depend on
//! `skilldeck-host` (both are services; no dependency points sideways).
//! See [`crate::service::test_run`] for the rules around a run.

use std::fmt;
use std::path::Path;

use serde_json::Value;

use crate::error::RegistryError;
use crate::service::config::TestRunLimits;
use crate::wire::{TestRunOutcome, TestRunPolicy};

/// What a test run runs.
#[derive(Debug, Clone, PartialEq)]
pub enum TestRunTarget {
    /// A tool the skill declares, with its arguments (checked against the
    /// tool's schema by the runner before anything starts).
    Tool {
        /// The name the skill declares, or the full name.
        name: String,
        /// The arguments.
        arguments: Value,
    },
    /// A file under the skill's `scripts/` folder.
    Script {
        /// The path relative to the skill folder.
        path: String,
        /// Its command-line arguments.
        args: Vec<String>,
    },
}

/// One test run, as the runner gets it.
#[derive(Debug, Clone, Copy)]
pub struct TestRunJob<'a> {
    /// The unpacked skill folder (private to this run, removed after it).
    pub skill_dir: &'a Path,
    /// The skill's name.
    pub skill: &'a str,
    /// What to run.
    pub target: &'a TestRunTarget,
    /// The strict policy to run it under.
    pub limits: &'a TestRunLimits,
}

/// Why a runner ran nothing (each becomes a problem with a stable code).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TestRunRefusal {
    /// The skill declares no such tool (the message lists its tools).
    #[error("{0}")]
    UnknownTool(String),
    /// The arguments do not match the tool's schema: the failing field's
    /// JSON pointer and why.
    #[error("{detail}")]
    InvalidArguments {
        /// JSON pointer (`/` for the whole object).
        pointer: String,
        /// What is wrong.
        detail: String,
    },
    /// The run asks for something the policy forbids (a file outside
    /// `scripts/`).
    #[error("{0}")]
    Denied(String),
    /// The request cannot run as given (a missing file, no interpreter).
    #[error("{0}")]
    Invalid(String),
    /// The sandbox is not available on this machine: what is missing.
    #[error("{0}")]
    Unavailable(String),
    /// Every test-run slot is busy.
    #[error("{0}")]
    Busy(String),
    /// Anything else (detail for the log).
    #[error("{0}")]
    Failed(String),
}

impl TestRunRefusal {
    /// The stable code of this refusal (the audit line records it).
    pub fn code(&self) -> &'static str {
        match self {
            TestRunRefusal::UnknownTool(_) => "registry-test-run-unknown-tool",
            TestRunRefusal::InvalidArguments { .. } => "registry-test-run-invalid-arguments",
            TestRunRefusal::Denied(_) => "registry-test-run-denied",
            TestRunRefusal::Invalid(_) => "registry-test-run-refused",
            TestRunRefusal::Unavailable(_) => "registry-sandbox-unavailable",
            TestRunRefusal::Busy(_) => "registry-test-run-busy",
            TestRunRefusal::Failed(_) => "registry-internal",
        }
    }
}

impl From<TestRunRefusal> for RegistryError {
    fn from(r: TestRunRefusal) -> Self {
        let code = r.code();
        match r {
            TestRunRefusal::UnknownTool(d)
            | TestRunRefusal::Denied(d)
            | TestRunRefusal::Invalid(d) => RegistryError::unprocessable(code, d),
            TestRunRefusal::InvalidArguments { pointer, detail } => {
                RegistryError::InvalidArguments { pointer, detail }
            }
            TestRunRefusal::Unavailable(d) => RegistryError::Unavailable {
                code,
                detail: format!(
                    "test runs are unavailable on this registry host: {d}; nothing ran"
                ),
            },
            TestRunRefusal::Busy(d) => RegistryError::Unavailable { code, detail: d },
            TestRunRefusal::Failed(d) => RegistryError::Internal(format!("test run: {d}")),
        }
    }
}

/// Runs a test run in this host's sandbox. Supplied by the binary that
/// composes the server (see the module documentation); called on a
/// blocking thread.
pub trait TestRunner: Send + Sync + fmt::Debug {
    /// The policy a test run gets on this machine under `limits`, or what
    /// is missing (checked before anything is fetched or unpacked).
    fn policy(&self, limits: &TestRunLimits) -> Result<TestRunPolicy, TestRunRefusal>;

    /// Runs `job` and waits for it: the outcome however the process ended
    /// (a non-zero exit and a timeout are outcomes), or why nothing ran.
    fn run(&self, job: TestRunJob<'_>) -> Result<TestRunOutcome, TestRunRefusal>;
}
