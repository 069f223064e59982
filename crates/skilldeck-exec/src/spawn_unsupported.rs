//! The spawner where no sandbox backend exists (any OS but Linux): every
//! backend there refuses in `check`, before a run reaches this point, so
//! this only repeats that refusal. Nothing is ever spawned.

use crate::backend::plan::Backend;
use crate::cgroup::RunCgroup;
use crate::error::ExecError;
pub(crate) use crate::finished::Finished;
use crate::interpreter::Command;
use crate::policy::{Limits, Policy};
use crate::request::Request;
use crate::workdir::WorkDir;

/// Refuses: the backend's own refusal, naming this OS.
#[allow(clippy::too_many_arguments)]
pub(crate) fn spawn_and_wait(
    backend: &dyn Backend,
    _request: &Request<'_>,
    policy: &Policy,
    _limits: &Limits,
    _command: &Command,
    _workdir: &WorkDir,
    _cgroup: Option<&RunCgroup>,
    _resolver: &crate::proxy::Resolver,
) -> Result<Finished, ExecError> {
    backend.check(policy)?;
    Err(ExecError::Unavailable {
        missing: format!("no sandbox backend on this OS: {}", std::env::consts::OS),
    })
}
