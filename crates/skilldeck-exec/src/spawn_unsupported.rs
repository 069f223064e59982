//! The spawner where no sandbox backend exists (any OS but Linux): every
//! backend there refuses in `check`, before a run reaches this point, so
//! this only repeats that refusal. Nothing is ever spawned.

use std::time::Duration;

use crate::backend::plan::Backend;
use crate::cgroup::RunCgroup;
use crate::error::ExecError;
use crate::interpreter::Command;
use crate::policy::{Limits, Policy};
use crate::request::Request;
use crate::workdir::WorkDir;

/// How the process tree ended (never, here).
#[derive(Debug)]
pub(crate) struct Finished {
    /// The exit code; `None` when killed by a signal.
    pub exit_code: Option<i32>,
    /// The signal that killed the script, if any.
    pub signal: Option<i32>,
    /// Killed because the wall timeout passed.
    pub timed_out: bool,
    /// Standard output (at most the output cap).
    pub stdout: Vec<u8>,
    /// Standard error (at most the output cap).
    pub stderr: Vec<u8>,
    /// Stdout went over the cap.
    pub stdout_truncated: bool,
    /// Stderr went over the cap.
    pub stderr_truncated: bool,
    /// Wall time.
    pub duration: Duration,
}

/// Refuses: the backend's own refusal, naming this OS.
pub(crate) fn spawn_and_wait(
    backend: &dyn Backend,
    _request: &Request<'_>,
    policy: &Policy,
    _limits: &Limits,
    _command: &Command,
    _workdir: &WorkDir,
    _cgroup: Option<&RunCgroup>,
) -> Result<Finished, ExecError> {
    backend.check(policy)?;
    Err(ExecError::Unavailable {
        missing: format!("no sandbox backend on this OS: {}", std::env::consts::OS),
    })
}
