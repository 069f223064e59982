//! Sandboxed execution of skill files (synchronous).
//!
//! [`Executor::run`] runs one file of a skill as a process under a
//! [`Policy`]: the skill folder read-only, a fresh private work directory
//! (cwd, `HOME`, `TMPDIR`), system directories read-only and nothing else;
//! no network unless the operator grants it; a cleared environment; wall,
//! CPU, memory, process, file-size and output limits; at most N executions
//! at once. The native profile stacks Landlock (ABI 7, fully enforced),
//! seccomp, PID/mount/network namespaces, rlimits and an unprivileged uid,
//! all in process; a missing layer refuses the execution
//! ([`ExecError::Unavailable`]) unless the operator chose
//! [`Profile::None`]. [`probe`] reports what this machine offers.
//!
//! Every execution is a `tracing` span `execute_tool` (OpenTelemetry
//! GenAI attributes) plus an audit event on target `skilldeck::audit`;
//! arguments and output are never logged, only a sha256 of the arguments.

mod cgroup;
mod config;
mod error;
mod interpreter;
mod limiter;
mod policy;
mod probe;
mod run;
mod sandbox;
mod sys;
mod workdir;

pub use cgroup::{TreeLimitsKind, TreeLimitsState, TreeUsage, tree_limits_state};
pub use config::{executor_config, policy_from_config, profile_from_config};
pub use error::{ErrorKind, ExecError};
pub use interpreter::{Command, INTERPRETERS_BY_EXTENSION, on_sandbox_path, resolve};
pub use limiter::{Caps, Limiter, Permit};
pub use policy::*;
pub use probe::{Layer, Probe, best_profile, probe};
pub use run::{CallContext, EffectivePolicy, Executor, ExecutorConfig, Input, Outcome, Request};
pub use sandbox::LANDLOCK_ABI;
