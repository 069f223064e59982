//! One execution: check the request, take a slot, prepare the work
//! directory and the sandbox plan, spawn, feed stdin, drain stdout and
//! stderr under their caps, enforce the timeout, report.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, IsTerminal, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde::Serialize;
use sha2::{Digest, Sha256};
use skilldeck::Skill;

use crate::cgroup::{RunCgroup, TreeLimitsKind, TreeLimitsState, TreeUsage, tree_limits_state};
use crate::error::ExecError;
use crate::interpreter::{self, Command};
use crate::limiter::{Caps, Limiter};
use crate::policy::{
    DEFAULT_CONCURRENCY, DEFAULT_QUEUE, DEFAULT_QUEUE_WAIT, Limits, MAX_ARGS_BYTES,
    MAX_STDIN_BYTES, NETWORK_READ_PATHS, Policy, Profile, SANDBOX_LANG, SANDBOX_PATH, SANDBOX_UID,
    SYSTEM_READ_PATHS,
};
use crate::sandbox::{
    self, FsAccess, Plan, RECORD_LEN, Step, TAG_ERROR, TAG_EXIT, TAG_PID, TAG_SIGNAL, UserMaps,
};
use crate::sys::seccomp_supported;
use crate::workdir::{TmpfsMount, WorkDir, default_work_root};

/// What the script reads on stdin.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Input {
    /// Nothing (`/dev/null`).
    #[default]
    Null,
    /// These bytes (at most [`MAX_STDIN_BYTES`]), then end of file.
    Bytes(Vec<u8>),
    /// The caller's own stdin, passed through (a CLI) when it is not a
    /// terminal; a terminal is never handed to a script (it could change
    /// the operator's terminal modes or read what they type): the script
    /// then reads `/dev/null`.
    Inherit,
}

/// Who asks: passed to the script as `SKILLDECK_*` variables and recorded
/// in the trace and the audit line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CallContext {
    /// The agent (concurrency is also capped per agent).
    pub agent_id: String,
    /// The user.
    pub user_id: String,
    /// The session.
    pub session_id: String,
    /// The tool call id (`gen_ai.tool.call.id`).
    pub call_id: String,
    /// The tool name; the script path when empty.
    pub tool: String,
}

/// One execution request.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    /// The skill whose file runs.
    pub skill: &'a Skill,
    /// The file, relative to the skill folder.
    pub path: &'a str,
    /// Arguments after the script path.
    pub args: Vec<String>,
    /// Standard input.
    pub stdin: Input,
    /// Who asks.
    pub context: CallContext,
}

/// The policy as applied, for the result and `skilldeck sandbox`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EffectivePolicy {
    /// `native` or `none`.
    pub profile: Profile,
    /// The layers in force, e.g. `landlock-abi7`, `seccomp`, `pid-namespace`.
    pub layers: Vec<&'static str>,
    /// The uid the script runs as (host view).
    pub uid: u32,
    /// Network granted.
    pub network: bool,
    /// Limits (timeout and output cap already capped).
    pub limits: Limits,
    /// Extra readable paths.
    pub read_paths: Vec<PathBuf>,
    /// Extra writable paths.
    pub write_paths: Vec<PathBuf>,
    /// Parent variables passed through by name.
    pub env: Vec<String>,
    /// The per-run caps on the whole tree (memory, processes): the cgroup
    /// interface in force, or `none` with the reason.
    pub tree_limits: TreeLimitsState,
    /// The work directory's size cap (a tmpfs), or `None` when the work
    /// directory is a host folder (profile `none`, `keep_workdir`).
    pub workdir_quota_bytes: Option<u64>,
}

/// How an execution ended.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    /// The exit code; `None` when killed by a signal.
    pub exit_code: Option<i32>,
    /// The signal that killed the script, if any.
    pub signal: Option<i32>,
    /// Killed because the wall timeout passed.
    pub timed_out: bool,
    /// Standard output (at most the output cap).
    #[serde(serialize_with = "lossy")]
    pub stdout: Vec<u8>,
    /// Standard error (at most the output cap).
    #[serde(serialize_with = "lossy")]
    pub stderr: Vec<u8>,
    /// Stdout went over the cap (the rest was read and dropped).
    pub stdout_truncated: bool,
    /// Stderr went over the cap.
    pub stderr_truncated: bool,
    /// Wall time.
    #[serde(rename = "duration_ms", serialize_with = "millis")]
    pub duration: Duration,
    /// The policy applied.
    pub policy: EffectivePolicy,
    /// The work directory, when kept.
    pub workdir: Option<PathBuf>,
    /// What the run's cgroup saw (all false/`None` without tree limits).
    #[serde(flatten)]
    pub tree: TreeUsage,
}

fn lossy<S: serde::Serializer>(b: &[u8], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&String::from_utf8_lossy(b))
}

fn millis<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl Outcome {
    /// True when the script exited with code 0.
    pub fn success(&self) -> bool {
        self.exit_code == Some(0)
    }

    /// A short label for logs: `exit:N`, `signal:N`, `timeout`, and
    /// `memory-cap` when the kernel killed a process of the run for going
    /// over the run's memory cap.
    pub fn label(&self) -> String {
        match (self.timed_out, self.exit_code, self.signal) {
            (true, _, _) => "timeout".to_owned(),
            _ if self.tree.memory_cap_hit => "memory-cap".to_owned(),
            (_, Some(code), _) => format!("exit:{code}"),
            (_, None, Some(sig)) => format!("signal:{sig}"),
            _ => "unknown".to_owned(),
        }
    }
}

/// Settings of an [`Executor`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecutorConfig {
    /// Concurrency caps.
    pub caps: Caps,
    /// Where work directories are created (default: private per user:
    /// `/var/lib/skilldeck-exec` for root, `$XDG_RUNTIME_DIR/skilldeck-exec`
    /// when set, else the temp folder's `skilldeck-exec-<uid>`). It must be
    /// a folder owned by the caller, not a symlink, not writable by group
    /// or others; otherwise every run is refused.
    pub work_root: Option<PathBuf>,
}

impl Default for ExecutorConfig {
    fn default() -> Self {
        ExecutorConfig {
            caps: Caps {
                total: DEFAULT_CONCURRENCY,
                per_agent: DEFAULT_CONCURRENCY,
                queue: DEFAULT_QUEUE,
                wait: DEFAULT_QUEUE_WAIT,
            },
            work_root: None,
        }
    }
}

/// Runs skill files under policies, at most N at once.
#[derive(Debug)]
pub struct Executor {
    limiter: Limiter,
    work_root: PathBuf,
}

/// How long output is still read after the script ended past its deadline.
const DRAIN_GRACE: Duration = Duration::from_millis(200);

impl Executor {
    /// An executor with `config`.
    pub fn new(config: ExecutorConfig) -> Self {
        Executor {
            limiter: Limiter::new(config.caps),
            work_root: config.work_root.unwrap_or_else(|| {
                default_work_root(
                    sandbox::euid(),
                    std::env::var_os("XDG_RUNTIME_DIR").as_deref(),
                    &std::env::temp_dir(),
                )
            }),
        }
    }

    /// The folder holding every run's work directory.
    pub fn work_root(&self) -> &Path {
        &self.work_root
    }

    /// The concurrency limiter.
    pub fn limiter(&self) -> &Limiter {
        &self.limiter
    }

    /// The policy `policy` would have here (layers, uid), without running.
    pub fn effective(&self, policy: &Policy) -> EffectivePolicy {
        effective(policy)
    }

    /// Runs `request` under `policy`. Errors mean nothing ran (or the
    /// sandbox could not be set up); a script that fails, times out or is
    /// killed is an [`Outcome`].
    pub fn run(&self, request: Request<'_>, policy: &Policy) -> Result<Outcome, ExecError> {
        self.run_traced(request, policy, |r| interpreter::resolve(r.skill, r.path))
    }

    /// Runs the shell command `command` (`sh -c COMMAND`, `$0` the skill
    /// folder) for `request.skill` under `policy`, as a skill file would
    /// run: the same sandbox, limits, span and audit line. For a skill's
    /// dynamic context (`` !`cmd` ``), which is a command, not a file;
    /// `request.path` only names it in the trace when `context.tool` is
    /// empty.
    pub fn run_shell(
        &self,
        request: Request<'_>,
        command: &str,
        policy: &Policy,
    ) -> Result<Outcome, ExecError> {
        self.run_traced(request, policy, |r| {
            let sh = interpreter::on_sandbox_path("sh").ok_or_else(|| {
                ExecError::InvalidInput(format!(
                    "skill '{}': cannot run a shell command: 'sh' is not installed (looked in {})",
                    r.skill.name,
                    crate::policy::SANDBOX_PATH
                ))
            })?;
            Ok(Command {
                relative: String::new(),
                program: sh,
                pre_args: vec!["-c".to_owned(), command.to_owned()],
                runs_file_itself: false,
                chosen_by: "shell",
            })
        })
    }

    fn run_traced(
        &self,
        request: Request<'_>,
        policy: &Policy,
        resolve: impl FnOnce(&Request<'_>) -> Result<Command, ExecError>,
    ) -> Result<Outcome, ExecError> {
        let tool = if request.context.tool.is_empty() {
            request.path.to_owned()
        } else {
            request.context.tool.clone()
        };
        let span = tracing::info_span!(
            "execute_tool",
            "otel.name" = %format!("execute_tool {tool}"),
            "gen_ai.operation.name" = "execute_tool",
            "gen_ai.tool.name" = %tool,
            "gen_ai.tool.call.id" = %request.context.call_id,
            "skilldeck.skill.name" = %request.skill.name,
            "skilldeck.exec.profile" = policy.profile.name(),
            "skilldeck.exec.exit_code" = tracing::field::Empty,
            "skilldeck.exec.signal" = tracing::field::Empty,
            "skilldeck.exec.timed_out" = tracing::field::Empty,
            "skilldeck.exec.duration_ms" = tracing::field::Empty,
            "skilldeck.exec.truncated" = tracing::field::Empty,
            "error.type" = tracing::field::Empty,
        );
        let _entered = span.enter();
        let digest = arguments_digest(&request);
        let result = self.run_inner(&request, policy, resolve);
        let outcome_label = match &result {
            Ok(o) => {
                span.record("skilldeck.exec.exit_code", o.exit_code.unwrap_or(-1));
                if let Some(sig) = o.signal {
                    span.record("skilldeck.exec.signal", sig);
                }
                span.record("skilldeck.exec.timed_out", o.timed_out);
                span.record(
                    "skilldeck.exec.duration_ms",
                    u64::try_from(o.duration.as_millis()).unwrap_or(u64::MAX),
                );
                span.record(
                    "skilldeck.exec.truncated",
                    o.stdout_truncated || o.stderr_truncated,
                );
                o.label()
            }
            Err(e) => {
                let kind = format!("{:?}", e.kind()).to_lowercase();
                span.record("error.type", kind.as_str());
                format!("refused:{kind}")
            }
        };
        tracing::info!(
            target: "skilldeck::audit",
            agent = %request.context.agent_id,
            user = %request.context.user_id,
            session = %request.context.session_id,
            skill = %request.skill.name,
            tool = %tool,
            args_sha256 = %digest,
            outcome = %outcome_label,
            "execute_tool"
        );
        result
    }

    fn run_inner(
        &self,
        request: &Request<'_>,
        policy: &Policy,
        resolve: impl FnOnce(&Request<'_>) -> Result<Command, ExecError>,
    ) -> Result<Outcome, ExecError> {
        check_input(request)?;
        let command = resolve(request)?;
        let limits = policy.limits.clone().capped();
        match policy.profile {
            Profile::Native => require_native_layers()?,
            Profile::Bwrap => {
                bwrap_path()?;
                let bwrap = &crate::probe::probe().bwrap_layer;
                if !bwrap.available {
                    return Err(ExecError::Unavailable {
                        missing: bwrap.detail.clone(),
                    });
                }
                if !seccomp_supported() {
                    return Err(ExecError::Unavailable {
                        missing: "seccomp (kernel without CONFIG_SECCOMP_FILTER)".to_owned(),
                    });
                }
            }
            Profile::None => {}
        }
        let _permit = self.limiter.acquire(&request.context.agent_id)?;
        let cgroup = RunCgroup::create(&limits, policy.tree_limits)?;
        // The sandbox uid owns the work dir wherever root drops to it
        // (native, and bwrap started by root).
        let chown = policy.profile != Profile::None && sandbox::euid() == 0;
        let workdir = WorkDir::create(&self.work_root, chown)?;
        let result = spawn_and_wait(
            request,
            policy,
            &limits,
            &command,
            &workdir,
            cgroup.as_ref(),
        );
        // The cgroup first: nothing of the run is left to write into the
        // work directory while it is removed.
        let tree = cgroup.map(RunCgroup::finish).unwrap_or_default();
        let kept = if policy.keep_workdir {
            Some(workdir.root.clone())
        } else {
            workdir.remove();
            None
        };
        let mut outcome = result?;
        outcome.workdir = kept;
        outcome.tree = tree;
        Ok(outcome)
    }
}

impl Default for Executor {
    fn default() -> Self {
        Executor::new(ExecutorConfig::default())
    }
}

fn check_input(request: &Request<'_>) -> Result<(), ExecError> {
    let args_bytes: usize = request.args.iter().map(|a| a.len() + 1).sum();
    if args_bytes > MAX_ARGS_BYTES {
        return Err(ExecError::InvalidInput(format!(
            "arguments are {args_bytes} bytes; the limit is {MAX_ARGS_BYTES} (pass large input on stdin)"
        )));
    }
    if request.args.iter().any(|a| a.contains('\0')) {
        return Err(ExecError::InvalidInput(
            "an argument contains a NUL byte".to_owned(),
        ));
    }
    if let Input::Bytes(b) = &request.stdin
        && b.len() > MAX_STDIN_BYTES
    {
        return Err(ExecError::InvalidInput(format!(
            "stdin is {} bytes; the limit is {MAX_STDIN_BYTES}",
            b.len()
        )));
    }
    Ok(())
}

/// sha256 of the arguments (NUL-separated) and the stdin bytes, hex.
fn arguments_digest(request: &Request<'_>) -> String {
    let mut h = Sha256::new();
    for a in &request.args {
        h.update(a.as_bytes());
        h.update([0u8]);
    }
    if let Input::Bytes(b) = &request.stdin {
        h.update(b);
    }
    skilldeck::lowercase_hex(&h.finalize())
}

/// Refuses when Landlock ABI 7 or seccomp is missing (namespace failures
/// surface from the child, naming the step).
fn require_native_layers() -> Result<(), ExecError> {
    sandbox::landlock_available()?;
    if !seccomp_supported() {
        return Err(ExecError::Unavailable {
            missing: "seccomp (kernel without CONFIG_SECCOMP_FILTER)".to_owned(),
        });
    }
    Ok(())
}

/// `bwrap` on the system PATH, or the refusal naming it.
fn bwrap_path() -> Result<PathBuf, ExecError> {
    interpreter::on_sandbox_path("bwrap").ok_or_else(|| ExecError::Unavailable {
        missing: format!("bwrap (bubblewrap) not found in {SANDBOX_PATH}; install it (apt install bubblewrap) or use profile native"),
    })
}

/// bubblewrap's arguments up to (not including) the program: only the
/// system paths, the skill (read-only) and the work dir exist inside.
fn bwrap_args(
    policy: &Policy,
    skill_real: &Path,
    workdir: &WorkDir,
    seccomp_fds: &[i32],
) -> Vec<OsString> {
    let mut a: Vec<OsString> = Vec::new();
    let mut push = |items: &[&std::ffi::OsStr]| a.extend(items.iter().map(|s| s.to_os_string()));
    // `--unshare-user` explicitly: the worker has dropped root (when it
    // was root), so bwrap runs unprivileged and must map the sandbox uid to
    // that unprivileged one; no user namespace means no run.
    push(&[
        "--unshare-all".as_ref(),
        "--unshare-user".as_ref(),
        "--die-with-parent".as_ref(),
        "--new-session".as_ref(),
        "--cap-drop".as_ref(),
        "ALL".as_ref(),
    ]);
    if policy.grants.network {
        push(&["--share-net".as_ref()]);
    }
    let id = SANDBOX_UID.to_string();
    push(&["--uid".as_ref(), id.as_ref(), "--gid".as_ref(), id.as_ref()]);
    let mut system: Vec<&str> = SYSTEM_READ_PATHS.to_vec();
    if policy.grants.network {
        system.extend(NETWORK_READ_PATHS);
    }
    for p in system {
        push(&["--ro-bind-try".as_ref(), p.as_ref(), p.as_ref()]);
    }
    push(&[
        "--dev".as_ref(),
        "/dev".as_ref(),
        "--proc".as_ref(),
        "/proc".as_ref(),
        "--tmpfs".as_ref(),
        "/tmp".as_ref(),
    ]);
    // As root, the worker bound the skill onto its mount point before
    // dropping root (the unprivileged bwrap may not reach the real folder).
    let skill_source = if sandbox::euid() == 0 {
        workdir.skill.as_os_str()
    } else {
        skill_real.as_os_str()
    };
    push(&[
        "--ro-bind".as_ref(),
        skill_source,
        workdir.skill.as_os_str(),
    ]);
    match workdir_quota(policy) {
        Some(bytes) => {
            // The work directory's size-capped tmpfs (see `workdir`).
            let size = bytes.to_string();
            push(&[
                "--perms".as_ref(),
                "0700".as_ref(),
                "--size".as_ref(),
                size.as_ref(),
                "--tmpfs".as_ref(),
                workdir.data.as_os_str(),
            ]);
            for d in [&workdir.work, &workdir.tmp] {
                push(&[
                    "--perms".as_ref(),
                    "0700".as_ref(),
                    "--dir".as_ref(),
                    d.as_os_str(),
                ]);
            }
        }
        None => {
            for d in [&workdir.work, &workdir.tmp] {
                push(&["--bind".as_ref(), d.as_os_str(), d.as_os_str()]);
            }
        }
    }
    for p in &policy.grants.read_paths {
        push(&["--ro-bind".as_ref(), p.as_os_str(), p.as_os_str()]);
    }
    for p in &policy.grants.write_paths {
        push(&["--bind".as_ref(), p.as_os_str(), p.as_os_str()]);
    }
    push(&["--chdir".as_ref(), workdir.work.as_os_str()]);
    for fd in seccomp_fds {
        let fd = fd.to_string();
        push(&["--add-seccomp-fd".as_ref(), fd.as_ref()]);
    }
    push(&["--".as_ref()]);
    a
}

/// A close-on-exec pipe already holding `bytes` (under the pipe buffer
/// size), its write end closed: the read end for `--add-seccomp-fd`.
fn pipe_with(bytes: &[u8]) -> Result<File, ExecError> {
    let (read, write) = status_pipe()?;
    let mut write = File::from(write);
    write
        .write_all(bytes)
        .map_err(|e| ExecError::io("seccomp program pipe", e))?;
    Ok(read)
}

pub(crate) fn effective(policy: &Policy) -> EffectivePolicy {
    let root = sandbox::euid() == 0;
    let mut layers = Vec::new();
    match policy.profile {
        Profile::Native => {
            layers.extend([
                "landlock-abi7",
                "seccomp",
                "seccomp-abi-check",
                "sysv-ipc-refused",
                "pid-namespace",
                "mount-namespace",
                "ipc-namespace",
            ]);
            if !policy.grants.network {
                layers.push("network-namespace");
            }
            layers.push(if root { "uid-drop" } else { "user-namespace" });
        }
        Profile::Bwrap => {
            layers.extend([
                "bwrap",
                "seccomp",
                "seccomp-abi-check",
                "sysv-ipc-refused",
                "user-namespace",
                "pid-namespace",
                "mount-namespace",
                "ipc-namespace",
            ]);
            if !policy.grants.network {
                layers.push("network-namespace");
            }
            layers.push("cap-drop");
            if root {
                layers.push("uid-drop");
            }
        }
        Profile::None => {}
    }
    let tree_limits = tree_limits_state();
    match tree_limits.kind {
        TreeLimitsKind::CgroupV2 => layers.push("cgroup-v2"),
        TreeLimitsKind::CgroupV1 => layers.push("cgroup-v1"),
        TreeLimitsKind::None => {}
    }
    let workdir_quota_bytes = workdir_quota(policy);
    if workdir_quota_bytes.is_some() {
        layers.push("workdir-tmpfs");
    }
    layers.extend(["rlimits", "cleared-env", "timeout"]);
    EffectivePolicy {
        profile: policy.profile,
        layers,
        uid: if root && policy.profile != Profile::None {
            SANDBOX_UID
        } else {
            sandbox::euid()
        },
        network: policy.grants.network,
        limits: policy.limits.clone().capped(),
        read_paths: policy.grants.read_paths.clone(),
        write_paths: policy.grants.write_paths.clone(),
        env: policy.grants.env.clone(),
        tree_limits,
        workdir_quota_bytes,
    }
}

/// The work directory's size cap under `policy`: a tmpfs in the sandbox's
/// mount namespace (profiles `native` and `bwrap`), unless the operator
/// keeps the work directory for debugging.
fn workdir_quota(policy: &Policy) -> Option<u64> {
    (policy.profile != Profile::None && !policy.keep_workdir).then_some(policy.limits.workdir_bytes)
}

/// A pipe whose both ends are close-on-exec.
fn status_pipe() -> Result<(File, OwnedFd), ExecError> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2 writes two descriptors into the array we own.
    #[allow(unsafe_code)]
    let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    if rc != 0 {
        return Err(ExecError::io("status pipe", io::Error::last_os_error()));
    }
    // SAFETY: both descriptors were just created and are owned by nobody else.
    #[allow(unsafe_code)]
    let (r, w) = unsafe { (File::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    Ok((r, w))
}

fn build_plan(
    request: &Request<'_>,
    policy: &Policy,
    limits: &Limits,
    workdir: &WorkDir,
    status_fd: i32,
) -> Result<Plan, ExecError> {
    let native = policy.profile == Profile::Native;
    let rlimits = sandbox::rlimits(limits);
    if !native {
        // bwrap as root: bind the skill and drop root in the worker, so
        // bwrap (and the script) never run as host root.
        let bwrap_root = policy.profile == Profile::Bwrap && sandbox::euid() == 0;
        let real = request.skill.real_dir();
        let bind = if bwrap_root {
            Some((
                sandbox::c_path(real)?,
                sandbox::c_path(&workdir.skill)?,
                sandbox::locked_mount_flags(real)?,
            ))
        } else {
            None
        };
        return Ok(Plan {
            native,
            drop_root: bwrap_root,
            user_maps: None,
            new_netns: false,
            bind,
            workdir_mount: None,
            landlock: None,
            seccomp: Vec::new(),
            rlimits,
            status_fd,
            inherit_fds: Vec::new(),
        });
    }
    let root = sandbox::euid() == 0;
    let real = request.skill.real_dir();
    let mut read: Vec<&Path> = vec![real];
    read.extend(policy.grants.read_paths.iter().map(PathBuf::as_path));
    // Without a tmpfs, the host folder holding work/ and tmp/. With one,
    // nothing of the host: the init adds the tmpfs itself to the ruleset
    // (see `TmpfsMount`), so the hidden host folder stays closed.
    let quota = workdir_quota(policy);
    let mut write: Vec<&Path> = Vec::new();
    if quota.is_none() {
        write.push(&workdir.data);
    }
    write.extend(policy.grants.write_paths.iter().map(PathBuf::as_path));
    let landlock = sandbox::landlock_ruleset(&FsAccess {
        read,
        write,
        network: policy.grants.network,
    })?;
    let workdir_mount = match quota {
        Some(bytes) => {
            let ruleset: Option<OwnedFd> = landlock
                .try_clone()
                .map_err(|e| ExecError::io("cloning the Landlock ruleset", e))?
                .into();
            let (uid, gid) = if root {
                (SANDBOX_UID, SANDBOX_UID)
            } else {
                (sandbox::euid(), sandbox::egid())
            };
            Some(TmpfsMount::new(
                workdir,
                bytes,
                uid,
                gid,
                ruleset,
                sandbox::landlock_write_access(),
            )?)
        }
        None => None,
    };
    let user_maps = if root {
        None
    } else {
        let (u, g) = (sandbox::euid(), sandbox::egid());
        Some(UserMaps {
            uid_map: sandbox::c_path(Path::new(&format!("{u} {u} 1\n")))?,
            gid_map: sandbox::c_path(Path::new(&format!("{g} {g} 1\n")))?,
        })
    };
    Ok(Plan {
        native,
        drop_root: root,
        user_maps,
        new_netns: !policy.grants.network,
        bind: Some((
            sandbox::c_path(real)?,
            sandbox::c_path(&workdir.skill)?,
            sandbox::locked_mount_flags(real)?,
        )),
        workdir_mount,
        landlock: Some(landlock),
        seccomp: sandbox::seccomp_programs(policy.grants.network)?,
        rlimits,
        status_fd,
        inherit_fds: Vec::new(),
    })
}

fn environment(
    request: &Request<'_>,
    policy: &Policy,
    workdir: &WorkDir,
    skill_dir: &Path,
) -> Vec<(OsString, OsString)> {
    let ctx = &request.context;
    let mut env: Vec<(OsString, OsString)> = vec![
        ("PATH".into(), SANDBOX_PATH.into()),
        ("LANG".into(), SANDBOX_LANG.into()),
        ("HOME".into(), workdir.work.clone().into()),
        ("TMPDIR".into(), workdir.tmp.clone().into()),
        (
            "SKILLDECK_SKILL_NAME".into(),
            request.skill.name.clone().into(),
        ),
        ("SKILLDECK_SKILL_DIR".into(), skill_dir.into()),
        ("SKILLDECK_WORKDIR".into(), workdir.work.clone().into()),
        ("SKILLDECK_AGENT_ID".into(), ctx.agent_id.clone().into()),
        ("SKILLDECK_USER_ID".into(), ctx.user_id.clone().into()),
        ("SKILLDECK_SESSION_ID".into(), ctx.session_id.clone().into()),
    ];
    for name in &policy.grants.env {
        if let Some(value) = std::env::var_os(name) {
            env.push((name.into(), value));
        }
    }
    env
}

/// Output kept from one stream.
#[derive(Debug, Default)]
struct Captured {
    kept: Vec<u8>,
    truncated: bool,
}

type Shared = std::sync::Arc<std::sync::Mutex<Captured>>;

/// Reads `from` to the end into `into`, keeping at most `cap` bytes and
/// dropping the rest (the writer never blocks on a full pipe).
fn drain(mut from: impl Read, cap: usize, into: Shared) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                let mut c = into.lock().unwrap_or_else(|e| e.into_inner());
                let room = cap.saturating_sub(c.kept.len());
                if n > room {
                    c.truncated = true;
                }
                c.kept.extend_from_slice(&buf[..n.min(room)]);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
}

/// The output of `shared`, once its reader signalled the end on `done` or
/// `until` passed (a process that escaped the kill, possible only with
/// profile `none`, may hold the pipe open; its reader is then left behind).
fn collect(
    done: Option<std::sync::mpsc::Receiver<()>>,
    shared: &Shared,
    until: Instant,
) -> (Vec<u8>, bool) {
    if let Some(done) = done {
        let _ = done.recv_timeout(until.saturating_duration_since(Instant::now()));
    }
    let mut c = shared.lock().unwrap_or_else(|e| e.into_inner());
    (std::mem::take(&mut c.kept), c.truncated)
}

/// Starts a reader thread draining `from` into a new buffer; the receiver
/// gets a message when the stream ended.
fn spawn_drain(
    from: Option<impl Read + Send + 'static>,
    cap: usize,
) -> (Option<std::sync::mpsc::Receiver<()>>, Shared) {
    let shared = Shared::default();
    let done = from.map(|from| {
        let (tx, rx) = std::sync::mpsc::channel();
        let buf = shared.clone();
        std::thread::spawn(move || {
            drain(from, cap, buf);
            let _ = tx.send(());
        });
        rx
    });
    (done, shared)
}

/// Parsed status-pipe records.
#[derive(Debug, Default)]
struct Status {
    kill_pid: Option<i32>,
    exit: Option<i32>,
    signal: Option<i32>,
    error: Option<(Option<Step>, i32)>,
}

fn parse_records(bytes: &[u8]) -> Status {
    let mut st = Status::default();
    for rec in bytes.chunks_exact(RECORD_LEN) {
        let value = i32::from_le_bytes([rec[2], rec[3], rec[4], rec[5]]);
        match rec[0] {
            TAG_PID => st.kill_pid = Some(value),
            TAG_EXIT => st.exit = Some(value),
            TAG_SIGNAL => st.signal = Some(value),
            TAG_ERROR if st.error.is_none() => {
                st.error = Some((Step::from_byte(rec[1]), value));
            }
            _ => {}
        }
    }
    st
}

fn setup_error(step: Option<Step>, errno: i32) -> ExecError {
    let what = step.map_or("sandbox setup", Step::describe);
    ExecError::Unavailable {
        missing: format!("{what}: {}", io::Error::from_raw_os_error(errno)),
    }
}

fn kill(pid: i32, native: bool) {
    // SAFETY: kill with integer arguments. `pid` is the init of the
    // sandbox's PID namespace (killing it kills the namespace) or, for
    // profile `none`, the worker whose process group is killed too.
    #[allow(unsafe_code)]
    unsafe {
        libc::kill(pid, libc::SIGKILL);
        if !native {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
}

/// Waits until `fd` is readable or `timeout` passes (`None`: forever).
fn readable(fd: &File, timeout: Option<Duration>) -> bool {
    let ms = timeout.map_or(-1, |t| {
        libc::c_int::try_from(t.as_millis().max(1)).unwrap_or(libc::c_int::MAX)
    });
    let mut pfd = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: poll on one pollfd we own.
    #[allow(unsafe_code)]
    let n = unsafe { libc::poll(&mut pfd, 1, ms) };
    n > 0
}

fn spawn_and_wait(
    request: &Request<'_>,
    policy: &Policy,
    limits: &Limits,
    command: &Command,
    workdir: &WorkDir,
    cgroup: Option<&RunCgroup>,
) -> Result<Outcome, ExecError> {
    let native = policy.profile == Profile::Native;
    let skill_dir: PathBuf = if policy.profile != Profile::None {
        workdir.skill.clone()
    } else {
        request.skill.real_dir().to_path_buf()
    };
    let script = skill_dir.join(&command.relative);
    let (mut status_read, status_write) = status_pipe()?;
    let mut plan = build_plan(request, policy, limits, workdir, status_write.as_raw_fd())?;
    let program = if command.runs_file_itself {
        script.clone()
    } else {
        command.program.clone()
    };
    // Profile bwrap: the seccomp programs travel on pipes the worker
    // hands to bwrap; they must stay open until the spawn returns.
    let mut seccomp_pipes = Vec::new();
    let mut cmd = if policy.profile == Profile::Bwrap {
        for program in sandbox::seccomp_programs(policy.grants.network)? {
            seccomp_pipes.push(pipe_with(&sandbox::program_bytes(&program))?);
        }
        let fds: Vec<i32> = seccomp_pipes.iter().map(AsRawFd::as_raw_fd).collect();
        plan.inherit_fds.clone_from(&fds);
        let mut c = std::process::Command::new(bwrap_path()?);
        c.args(bwrap_args(policy, request.skill.real_dir(), workdir, &fds));
        c.arg(&program);
        c
    } else {
        std::process::Command::new(&program)
    };
    if !command.runs_file_itself {
        cmd.args(&command.pre_args).arg(&script);
    }
    cmd.args(&request.args)
        .env_clear()
        .envs(environment(request, policy, workdir, &skill_dir))
        .current_dir(&workdir.work)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(match request.stdin {
            Input::Null => Stdio::null(),
            Input::Bytes(_) => Stdio::piped(),
            Input::Inherit if io::stdin().is_terminal() => Stdio::null(),
            Input::Inherit => Stdio::inherit(),
        });
    // SAFETY: the closure runs between fork and exec in the child. It
    // only makes system calls on data prepared before the fork (see
    // `sandbox::Plan::enter`), as a child of a multi-threaded process must.
    // The spawned child joins the run's cgroup first: everything it
    // forks (init, worker, the script's tree) is held by the caps.
    let join = cgroup.map(RunCgroup::joiner);
    #[allow(unsafe_code)]
    unsafe {
        cmd.pre_exec(move || {
            if let Some(join) = &join {
                join.join()?;
            }
            plan.enter()
        });
    }
    let started = Instant::now();
    let spawned = cmd.spawn();
    drop(status_write);
    drop(seccomp_pipes);
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => {
            let mut bytes = Vec::new();
            let _ = status_read.read_to_end(&mut bytes);
            return Err(match parse_records(&bytes).error {
                Some((step, errno)) => setup_error(step, errno),
                None => ExecError::io(format!("cannot start {}", program.display()), e),
            });
        }
    };
    let cap = limits.output_cap;
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let (out_done, out_buf) = spawn_drain(stdout, cap);
    let (err_done, err_buf) = spawn_drain(stderr, cap);
    let in_thread = match (&request.stdin, child.stdin.take()) {
        (Input::Bytes(bytes), Some(mut pipe)) => {
            let bytes = bytes.clone();
            // A script that does not read its stdin ends the write with EPIPE.
            Some(std::thread::spawn(move || {
                let _ = pipe.write_all(&bytes);
            }))
        }
        _ => None,
    };

    let deadline = started + limits.timeout;
    let mut records = Vec::new();
    let mut timed_out = false;
    let mut buf = [0u8; 256];
    loop {
        let left = if timed_out {
            None
        } else {
            Some(deadline.saturating_duration_since(Instant::now()))
        };
        if left.is_some_and(|l| l.is_zero()) || (left.is_some() && !readable(&status_read, left)) {
            if !timed_out && Instant::now() >= deadline {
                timed_out = true;
                let st = parse_records(&records);
                if let Some(pid) = st.kill_pid {
                    kill(pid, native);
                }
                let _ = child.kill();
            }
            continue;
        }
        match status_read.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => records.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    let _ = child.wait();
    if let Some(cgroup) = cgroup {
        // Whatever escaped the namespace or process group goes now, so it
        // cannot hold the output pipes open.
        cgroup.kill_all();
    }
    let st = parse_records(&records);
    if !native && let Some(pid) = st.kill_pid {
        // What the script left in its process group goes with it.
        kill(pid, native);
    }
    let duration = started.elapsed();
    let until = deadline.max(Instant::now() + DRAIN_GRACE);
    let (stdout, stdout_truncated) = collect(out_done, &out_buf, until);
    let (stderr, stderr_truncated) = collect(err_done, &err_buf, until);
    if let Some(t) = in_thread {
        let _ = t.join();
    }
    if let Some((step, errno)) = st.error {
        return Err(setup_error(step, errno));
    }
    let (exit_code, signal) = if timed_out {
        (None, Some(libc::SIGKILL))
    } else if let Some(code) = st.exit {
        (Some(code), None)
    } else if let Some(sig) = st.signal {
        (None, Some(sig))
    } else {
        (None, Some(libc::SIGKILL))
    };
    Ok(Outcome {
        exit_code,
        signal,
        timed_out,
        stdout,
        stderr,
        stdout_truncated,
        stderr_truncated,
        duration,
        policy: {
            let mut p = effective(policy);
            if cgroup.is_none() && p.tree_limits.kind != TreeLimitsKind::None {
                // Auto mode and this run's cgroup could not be made.
                p.tree_limits = TreeLimitsState {
                    kind: TreeLimitsKind::None,
                    detail: "the run's cgroup could not be created (see the log)".to_owned(),
                };
                p.layers.retain(|l| !l.starts_with("cgroup-"));
            }
            p
        },
        workdir: None,
        tree: TreeUsage::default(),
    })
}
