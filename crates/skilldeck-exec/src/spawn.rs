//! Spawning, in one place: whatever backend planned the run, the process
//! is started here (cleared environment, the work directory as cwd,
//! stdio piped), the plan's child program runs between fork and exec,
//! stdin is fed, stdout and stderr are drained under their caps, the
//! status pipe is read until the child's helpers end or the timeout
//! passes (then the tree is killed), and the result is read off the
//! status records.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, IsTerminal, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::process::{Pid, Signal};

use crate::backend::plan::{Backend, PlanInput};
use crate::broker::{Broker, channel};
use crate::cgroup::RunCgroup;
use crate::error::ExecError;
pub(crate) use crate::finished::Finished;
use crate::interpreter::Command;
use crate::policy::{Limits, Policy, SANDBOX_LANG, SANDBOX_PATH};
use crate::proxy::{ProxyRules, Resolver, SANDBOX_PROXY_PORT};
use crate::request::{Input, Request};
use crate::sandbox::{
    RECORD_LEN, Step, TAG_ERROR, TAG_EXIT, TAG_PID, TAG_SIGNAL, TAG_WORKDIR_FULL,
};
use crate::sys::cloexec_pipe;
use crate::workdir::WorkDir;

/// How long output is still read after the script ended past its deadline.
const DRAIN_GRACE: Duration = Duration::from_millis(200);

/// The script's `PATH`: the policy's `bin_dirs`, then [`SANDBOX_PATH`].
fn sandbox_path(bin_dirs: &[std::path::PathBuf]) -> OsString {
    let mut path = OsString::new();
    for dir in bin_dirs {
        path.push(dir.as_os_str());
        path.push(":");
    }
    path.push(SANDBOX_PATH);
    path
}

fn environment(
    request: &Request<'_>,
    policy: &Policy,
    workdir: &WorkDir,
    skill_dir: &Path,
) -> Vec<(OsString, OsString)> {
    let ctx = &request.context;
    let mut env: Vec<(OsString, OsString)> = vec![
        ("PATH".into(), sandbox_path(&policy.bin_dirs)),
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
    for (name, value) in &policy.vars {
        env.retain(|(k, _)| k != name.as_str());
        env.push((name.into(), value.into()));
    }
    if !policy.grants.network.hosts().is_empty() {
        // Last, so a variable passed through by name cannot point the
        // script's clients elsewhere (there is nowhere else to go anyway).
        let proxy = format!("http://127.0.0.1:{SANDBOX_PROXY_PORT}");
        for name in [
            "HTTP_PROXY",
            "HTTPS_PROXY",
            "ALL_PROXY",
            "http_proxy",
            "https_proxy",
            "all_proxy",
        ] {
            env.retain(|(k, _)| k != name);
            env.push((name.into(), proxy.clone().into()));
        }
        for name in ["NO_PROXY", "no_proxy"] {
            env.retain(|(k, _)| k != name);
            env.push((name.into(), "".into()));
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
    workdir_full: bool,
}

fn parse_records(bytes: &[u8]) -> Status {
    let mut st = Status::default();
    for rec in bytes.chunks_exact(RECORD_LEN) {
        let value = i32::from_le_bytes([rec[2], rec[3], rec[4], rec[5]]);
        match rec[0] {
            TAG_PID => st.kill_pid = Some(value),
            TAG_EXIT => st.exit = Some(value),
            TAG_SIGNAL => st.signal = Some(value),
            TAG_WORKDIR_FULL => st.workdir_full = true,
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

/// Kills `pid` and, unless it is the init of the run's PID namespace
/// (whose end kills the namespace), its process group.
fn kill(pid: i32, by_namespace: bool) {
    // A pid the child reported is positive; anything else is no process.
    let Some(pid) = Pid::from_raw(pid) else {
        return;
    };
    // ESRCH (already gone) is the expected answer after a normal end.
    let _ = rustix::process::kill_process(pid, Signal::KILL);
    if !by_namespace {
        let _ = rustix::process::kill_process_group(pid, Signal::KILL);
    }
}

/// Waits until `fd` is readable or `timeout` passes (`None`: forever).
fn readable(fd: &File, timeout: Option<Duration>) -> bool {
    // At least a millisecond, so a deadline a few nanoseconds away waits.
    let timeout = timeout.map(|t| {
        Timespec::try_from(t.max(Duration::from_millis(1))).unwrap_or(Timespec {
            tv_sec: i64::MAX,
            tv_nsec: 0,
        })
    });
    let mut fds = [PollFd::new(fd, PollFlags::IN)];
    matches!(rustix::event::poll(&mut fds, timeout.as_ref()), Ok(n) if n > 0)
}
/// Plans the run with `backend`, spawns it, waits for it under
/// `limits.timeout` and collects its output. Errors mean the sandbox
/// could not be set up (nothing of the script ran).
// One call per run from `run.rs`; each argument is a separate part of the
// run (a struct would only rename them).
#[allow(clippy::too_many_arguments)]
pub(crate) fn spawn_and_wait(
    backend: &dyn Backend,
    request: &Request<'_>,
    policy: &Policy,
    limits: &Limits,
    command: &Command,
    workdir: &WorkDir,
    cgroup: Option<&RunCgroup>,
    resolver: &Resolver,
) -> Result<Finished, ExecError> {
    let (status_read, status_write) = cloexec_pipe()?;
    let mut status_read = File::from(status_read);
    let (channel_parent, channel_child) =
        channel().map_err(|e| ExecError::io("the sandbox's descriptor channel", e))?;
    let plan = backend.plan(&PlanInput {
        policy,
        limits,
        skill_real: request.skill.real_dir(),
        workdir,
        status_fd: status_write.as_raw_fd(),
        channel_fd: channel_child.as_raw_fd(),
    })?;
    let rules = (!policy.grants.network.hosts().is_empty()).then(|| ProxyRules {
        grant: policy.grants.network.clone(),
        allow_ranges: policy.grants.allow_ranges.clone(),
        resolver: resolver.clone(),
    });
    let broker = Broker::start(channel_parent, rules, plan.write_rules.clone())
        .map_err(|e| ExecError::io("the sandbox's descriptor broker", e))?;
    let by_namespace = plan.kills_by_namespace();
    let script = plan.skill_dir.join(&command.relative);
    let program = if command.runs_file_itself {
        script.clone()
    } else {
        command.program.clone()
    };
    let mut cmd = match &plan.wrapper {
        Some((wrapper, args)) => {
            let mut c = std::process::Command::new(wrapper);
            c.args(args).arg(&program);
            c
        }
        None => std::process::Command::new(&program),
    };
    if !command.runs_file_itself {
        cmd.args(&command.pre_args).arg(&script);
    }
    cmd.args(&request.args)
        .env_clear()
        .envs(environment(request, policy, workdir, &plan.skill_dir))
        .current_dir(&workdir.work)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(match request.stdin {
            Input::Null => Stdio::null(),
            Input::Bytes(_) => Stdio::piped(),
            Input::Inherit if io::stdin().is_terminal() => Stdio::null(),
            Input::Inherit => Stdio::inherit(),
        });
    let keep_open = plan.keep_open;
    let mut child_plan = plan.child;
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
            child_plan.enter()
        });
    }
    let started = Instant::now();
    let spawned = cmd.spawn();
    drop(status_write);
    drop(channel_child);
    drop(keep_open);
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
                    kill(pid, by_namespace);
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
    if !by_namespace && let Some(pid) = st.kill_pid {
        // What the script left in its process group goes with it.
        kill(pid, by_namespace);
    }
    let duration = started.elapsed();
    let until = deadline.max(Instant::now() + DRAIN_GRACE);
    let (stdout, stdout_truncated) = collect(out_done, &out_buf, until);
    let (stderr, stderr_truncated) = collect(err_done, &err_buf, until);
    if let Some(t) = in_thread {
        let _ = t.join();
    }
    let refusals = broker.finish();
    if let Some((step, errno)) = st.error {
        return Err(setup_error(step, errno));
    }
    let sigkill = Signal::KILL.as_raw();
    let (exit_code, signal) = if timed_out {
        (None, Some(sigkill))
    } else if let Some(code) = st.exit {
        (Some(code), None)
    } else if let Some(sig) = st.signal {
        (None, Some(sig))
    } else {
        (None, Some(sigkill))
    };
    Ok(Finished {
        exit_code,
        signal,
        timed_out,
        stdout,
        stderr,
        stdout_truncated,
        stderr_truncated,
        duration,
        refusals,
        workdir_full: st.workdir_full,
    })
}
