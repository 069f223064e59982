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

#![deny(missing_docs)]
// Off Linux the layers are not compiled, so the helpers they share with
// the rest of the crate are unused there.
#![cfg_attr(not(target_os = "linux"), allow(dead_code, unused_imports))]

mod backend;
#[cfg(target_os = "linux")]
mod broker;
mod cgroup;
mod config;
mod error;
mod interpreter;
mod limiter;
mod policy;
mod probe;
mod proxy;
mod refusals;
mod request;
mod run;
#[cfg(target_os = "linux")]
mod sandbox;
// Without a sandbox backend nothing is ever spawned; the runner still
// compiles against a spawner that refuses.
mod finished;
#[cfg_attr(not(target_os = "linux"), path = "spawn_unsupported.rs")]
mod spawn;
mod sys;
#[cfg(target_os = "linux")]
mod tmpfs;
mod workdir;
#[cfg(target_os = "linux")]
mod writes;

pub use backend::plan::Layer;
pub use cgroup::{TreeLimitsKind, TreeLimitsState, TreeUsage, tree_limits_state};
pub use config::{executor_config, policy_from_config, profile_from_config};
pub use error::{ErrorKind, ExecError};
pub use interpreter::on_sandbox_path;
pub use limiter::Caps;
pub use policy::{
    Grants, Limits, MAX_ARGS_BYTES, MAX_OUTPUT_CAP, MAX_STDIN_BYTES, MAX_TIMEOUT, Policy, Profile,
    SANDBOX_PATH, SANDBOX_UID, TreeLimitsMode, timeout_from_secs,
};
pub use probe::{Probe, best_profile, probe};
pub use proxy::{
    MAX_PROXY_BYTES, MAX_PROXY_CONNECTIONS, MAX_REQUEST_HEAD_BYTES, MAX_REQUEST_HEADERS,
    METADATA_ADDRESSES, PROXY_CONNECT_TIMEOUT, PROXY_IDLE_TIMEOUT, REQUEST_HEAD_TIMEOUT, Resolver,
    address_refusal,
};
pub use refusals::{
    BlockedConnection, CapsHit, MAX_RECORDED_CONNECTIONS, MAX_RECORDED_PATH_CHARS,
    MAX_RECORDED_WRITES, Refusals, RefusedWrite,
};
pub use request::{CallContext, Input, Request};
pub use run::{EffectivePolicy, Executor, ExecutorConfig, Outcome};
pub use skilldeck::deck::{HostPattern, IpRange, NetworkGrant};

/// The effective user id of this process: a root caller's scripts run as
/// [`SANDBOX_UID`], so what they read (skill environments) must be in
/// folders that user can traverse.
pub fn effective_uid() -> u32 {
    sys::euid()
}
