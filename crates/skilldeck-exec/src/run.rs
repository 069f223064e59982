//! One execution: check the request, take a slot, create the run's
//! cgroup and work directory, hand the run to the profile's backend and
//! the spawner, and turn what ended into an [`Outcome`]. Nothing here
//! knows which backend runs: the profile is matched once, in
//! `crate::backend::for_profile`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use skilldeck::deck::NetworkGrant;

use crate::backend::{self, plan::Backend};
use crate::cgroup::{RunCgroup, TreeLimitsKind, TreeLimitsState, TreeUsage, tree_limits_state};
use crate::error::ExecError;
use crate::interpreter::{self, Command};
use crate::limiter::{Caps, Limiter};
use crate::policy::{
    DEFAULT_CONCURRENCY, DEFAULT_QUEUE, DEFAULT_QUEUE_WAIT, Limits, Policy, Profile,
};
use crate::proxy::Resolver;
use crate::refusals::Refusals;
use crate::request::{Request, arguments_digest, check_input};
use crate::spawn::{Finished, spawn_and_wait};
use crate::sys::euid;
use crate::workdir::{WorkDir, default_work_root};

/// The policy as applied, for the result and `skilldeck sandbox`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EffectivePolicy {
    /// The profile whose backend applied it (`native`, `bwrap` or `none`).
    pub profile: Profile,
    /// The layers in force, e.g. `landlock-abi7`, `seccomp`, `pid-namespace`.
    pub layers: Vec<&'static str>,
    /// The uid the script runs as (host view).
    pub uid: u32,
    /// Network granted: `false`, `true` or the host patterns reached
    /// through the proxy.
    pub network: NetworkGrant,
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
    /// Every refusal observed inside the run: denied system calls by
    /// class, connections the proxy blocked, writes outside the allowed
    /// paths, caps hit.
    pub refusals: Refusals,
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
    /// Where the proxy of a host-list network grant gets addresses: the
    /// system resolver, or a fixed table (not settable from
    /// `skilldeck.toml`; for embedding programs and the tests).
    pub resolver: Resolver,
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
            resolver: Resolver::System,
        }
    }
}

/// Runs skill files under policies, at most N at once.
#[derive(Debug)]
pub struct Executor {
    limiter: Limiter,
    work_root: PathBuf,
    resolver: Resolver,
}

impl Executor {
    /// An executor with `config`.
    pub fn new(config: ExecutorConfig) -> Self {
        Executor {
            limiter: Limiter::new(config.caps),
            work_root: config.work_root.unwrap_or_else(|| {
                default_work_root(
                    euid(),
                    std::env::var_os("XDG_RUNTIME_DIR").as_deref(),
                    &std::env::temp_dir(),
                )
            }),
            resolver: config.resolver,
        }
    }

    /// The folder holding every run's work directory.
    pub fn work_root(&self) -> &Path {
        &self.work_root
    }

    /// The concurrency caps in force.
    pub fn caps(&self) -> Caps {
        self.limiter.caps()
    }

    /// Executions running now.
    pub fn running(&self) -> usize {
        self.limiter.running()
    }

    /// The policy `policy` would have here (layers, uid), without running.
    pub fn effective(&self, policy: &Policy) -> EffectivePolicy {
        effective(backend::for_profile(policy.profile), policy)
    }

    /// Runs `request` under `policy`. Errors mean nothing ran (or the
    /// sandbox could not be set up); a script that fails, times out or is
    /// killed is an [`Outcome`].
    pub fn run(&self, request: Request<'_>, policy: &Policy) -> Result<Outcome, ExecError> {
        self.run_traced(request, policy, |r| {
            interpreter::resolve(r.skill, r.path, &policy.bin_dirs)
        })
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

    /// Runs `program` with `pre_args` (then `$0`-style the skill folder,
    /// then `request.args`) for `request.skill` under `policy`, as a skill
    /// file would run: the same sandbox, limits, span and audit line. For a
    /// program skilldeck ships rather than a file of the skill (the
    /// LangChain worker: `python3 -I -c WORKER`); `program` must be an
    /// absolute path the sandbox can read (a system folder, or a folder in
    /// the policy's read paths).
    pub fn run_program(
        &self,
        request: Request<'_>,
        program: &Path,
        pre_args: Vec<String>,
        policy: &Policy,
    ) -> Result<Outcome, ExecError> {
        self.run_traced(request, policy, |r| {
            if !program.is_absolute() {
                return Err(ExecError::InvalidInput(format!(
                    "skill '{}': the program '{}' is not an absolute path",
                    r.skill.name,
                    program.display()
                )));
            }
            Ok(Command {
                relative: String::new(),
                program: program.to_path_buf(),
                pre_args,
                runs_file_itself: false,
                chosen_by: "program",
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
            "skilldeck.exec.refusals" = tracing::field::Empty,
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
                span.record("skilldeck.exec.refusals", o.refusals.total());
                record_refusals(&request, &tool, &o.refusals);
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
        let backend = backend::for_profile(policy.profile);
        backend.check(policy)?;
        let _permit = self.limiter.acquire(&request.context.agent_id)?;
        let cgroup = RunCgroup::create(&limits, policy.tree_limits)?;
        // The sandbox uid owns the work dir wherever root drops to it.
        let chown = backend.script_uid(euid()) != euid();
        let workdir = WorkDir::create(&self.work_root, chown, policy.node_modules.as_deref())?;
        let result = spawn_and_wait(
            backend,
            request,
            policy,
            &limits,
            &command,
            &workdir,
            cgroup.as_ref(),
            &self.resolver,
        );
        // The cgroup first: nothing of the run is left to write into the
        // work directory while it is removed.
        let cgroup_made = cgroup.is_some();
        let tree = cgroup.map(RunCgroup::finish).unwrap_or_default();
        let kept = if policy.keep_workdir {
            Some(workdir.root.clone())
        } else {
            workdir.remove();
            None
        };
        let finished = result?;
        Ok(self.outcome(backend, policy, finished, cgroup_made, kept, tree))
    }
}

impl Executor {
    /// The outcome of a run that ended as `finished`.
    fn outcome(
        &self,
        backend: &dyn Backend,
        policy: &Policy,
        finished: Finished,
        cgroup_made: bool,
        workdir: Option<PathBuf>,
        tree: TreeUsage,
    ) -> Outcome {
        let mut p = effective(backend, policy);
        if !cgroup_made && p.tree_limits.kind != TreeLimitsKind::None {
            // Auto mode and this run's cgroup could not be made.
            p.tree_limits = TreeLimitsState {
                kind: TreeLimitsKind::None,
                detail: "the run's cgroup could not be created (see the log)".to_owned(),
            };
            p.layers.retain(|l| !l.starts_with("cgroup-"));
        }
        let mut refusals = finished.refusals;
        refusals.caps = crate::refusals::CapsHit {
            timeout: finished.timed_out,
            output_truncated: finished.stdout_truncated || finished.stderr_truncated,
            memory: tree.memory_cap_hit,
            processes: tree.process_cap_hit,
            file_size: finished.signal == Some(libc::SIGXFSZ),
            workdir_quota: finished.workdir_full,
        };
        Outcome {
            refusals,
            exit_code: finished.exit_code,
            signal: finished.signal,
            timed_out: finished.timed_out,
            stdout: finished.stdout,
            stderr: finished.stderr,
            stdout_truncated: finished.stdout_truncated,
            stderr_truncated: finished.stderr_truncated,
            duration: finished.duration,
            policy: p,
            workdir,
            tree,
        }
    }
}

/// Records `refusals` of one run: one event per kind on the current
/// (`execute_tool`) span, and one `warn` line on `skilldeck::audit` for
/// the run (nothing when nothing was refused).
fn record_refusals(request: &Request<'_>, tool: &str, refusals: &Refusals) {
    if refusals.is_empty() {
        return;
    }
    for (class, count) in &refusals.syscalls {
        tracing::info!(
            skilldeck.refusal.kind = "syscall",
            skilldeck.refusal.class = *class,
            skilldeck.refusal.count = *count,
            "refusal"
        );
    }
    for c in &refusals.connections {
        tracing::info!(
            skilldeck.refusal.kind = "connection",
            server.address = %c.host,
            server.port = c.port,
            skilldeck.refusal.reason = c.reason,
            "refusal"
        );
    }
    for w in &refusals.writes {
        tracing::info!(
            skilldeck.refusal.kind = "write",
            skilldeck.refusal.class = w.call,
            file.path = %w.path,
            "refusal"
        );
    }
    if refusals.writes_outside > u64::try_from(refusals.writes.len()).unwrap_or(u64::MAX) {
        tracing::info!(
            skilldeck.refusal.kind = "write",
            skilldeck.refusal.count = refusals.writes_outside,
            "refusal"
        );
    }
    for cap in refusals.caps.names() {
        tracing::info!(
            skilldeck.refusal.kind = "cap",
            skilldeck.refusal.class = cap,
            "refusal"
        );
    }
    tracing::warn!(
        target: "skilldeck::audit",
        agent = %request.context.agent_id,
        user = %request.context.user_id,
        session = %request.context.session_id,
        skill = %request.skill.name,
        tool = %tool,
        refusals = refusals.total(),
        summary = %refusals.summary(),
        "execute_tool refused inside the run"
    );
}

/// The policy `policy` has under `backend` here: its layers, the uid the
/// script runs as, the limits in force.
fn effective(backend: &dyn Backend, policy: &Policy) -> EffectivePolicy {
    let euid = euid();
    let mut layers = backend.layers(policy, euid == 0);
    let tree_limits = tree_limits_state();
    match tree_limits.kind {
        TreeLimitsKind::CgroupV2 => layers.push("cgroup-v2"),
        TreeLimitsKind::CgroupV1 => layers.push("cgroup-v1"),
        TreeLimitsKind::None => {}
    }
    let workdir_quota_bytes = backend.workdir_quota(policy);
    if workdir_quota_bytes.is_some() {
        layers.push("workdir-tmpfs");
    }
    layers.extend(["rlimits", "cleared-env", "timeout"]);
    EffectivePolicy {
        profile: backend.profile(),
        layers,
        uid: backend.script_uid(euid),
        network: policy.grants.network.clone(),
        limits: policy.limits.clone().capped(),
        read_paths: policy.grants.read_paths.clone(),
        write_paths: policy.grants.write_paths.clone(),
        env: policy.grants.env.clone(),
        tree_limits,
        workdir_quota_bytes,
    }
}

impl Default for Executor {
    fn default() -> Self {
        Executor::new(ExecutorConfig::default())
    }
}
