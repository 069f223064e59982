//! [`Finished`]: how a run's process tree ended, whichever spawner ran it
//! (`spawn.rs` on Linux, `spawn_unsupported.rs` elsewhere).

use std::time::Duration;

/// How the process tree ended; the runner adds the policy, the work
/// directory and the cgroup's report to make the `Outcome`.
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
    /// What the run's proxy and seccomp supervisor refused (the caps are
    /// added by the runner).
    pub refusals: crate::refusals::Refusals,
    /// The work directory's quota was used up when the script ended.
    pub workdir_full: bool,
}
