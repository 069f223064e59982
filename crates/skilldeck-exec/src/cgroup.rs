//! Per-run caps on the whole process tree: one cgroup per run.
//!
//! rlimits are per process (`RLIMIT_AS`) or per user (`RLIMIT_NPROC`), so
//! six processes of 700 MiB each fit under a "1 GiB" rlimit. A cgroup
//! holds the whole tree: the run's init joins it before it execs anything,
//! every descendant inherits it, and the kernel enforces `memory.max`
//! (swap off) and `pids.max` on the sum.
//!
//! Where a cgroup comes from, in order:
//! - **cgroup v2**, the unified hierarchy, when this process's cgroup has
//!   the `memory` and `pids` controllers and is writable (a delegated
//!   subtree: `systemd-run --user --scope -p Delegate=yes`, a container's
//!   own cgroup, root). A v2 cgroup with processes may not enable
//!   controllers for its children, so this process first moves itself
//!   into a leaf `skilldeck-host` child, then enables `+memory +pids` and
//!   creates one `skilldeck-run-…` child per run.
//! - **cgroup v1**, the `memory` and `pids` hierarchies, when both are
//!   mounted and this process's cgroup in each is writable (root on a
//!   hybrid host).
//! - else **none**: the reason is kept and reported (`skilldeck sandbox`,
//!   each run's policy); [`TreeLimitsMode::Require`] refuses every run.
//!
//! After the run, whatever is left in the cgroup is killed (v2
//! `cgroup.kill`; v1 one `pidfd` per process, checked to still be in the
//! cgroup), the events are read (an OOM kill: "killed: memory cap"; a
//! refused fork: "process cap") and the cgroup is removed.

use std::fs;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;
#[cfg(target_os = "linux")]
use rustix::process::{Pid, PidfdFlags, Signal};
use serde::Serialize;

use crate::error::ExecError;
use crate::policy::{Limits, TreeLimitsMode};

/// How long the cleanup waits for a killed cgroup to empty before it gives
/// up removing it (the kernel reaps killed processes in microseconds; this
/// only bounds a stuck case, which is logged).
const DRAIN_WAIT: Duration = Duration::from_secs(5);

/// Name of the leaf cgroup (v2) this process moves itself into so that its
/// own cgroup may enable controllers for the runs.
const HOST_LEAF: &str = "skilldeck-host";

/// Prefix of a run's cgroup.
const RUN_PREFIX: &str = "skilldeck-run-";

static RUN_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Which cgroup interface enforces the per-run caps on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TreeLimitsKind {
    /// The unified hierarchy (`memory.max`, `memory.swap.max`, `pids.max`).
    CgroupV2,
    /// The v1 `memory` and `pids` hierarchies.
    CgroupV1,
    /// No cgroup can be used: per-process limits (rlimits) only.
    None,
}

impl TreeLimitsKind {
    /// `cgroup-v2`, `cgroup-v1` or `none`.
    pub fn name(self) -> &'static str {
        match self {
            TreeLimitsKind::CgroupV2 => "cgroup-v2",
            TreeLimitsKind::CgroupV1 => "cgroup-v1",
            TreeLimitsKind::None => "none",
        }
    }
}

/// The per-run caps this machine can enforce, with where or why not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TreeLimitsState {
    /// The interface in force.
    pub kind: TreeLimitsKind,
    /// Where the runs' cgroups are created, or why none can be.
    pub detail: String,
}

/// Where the runs' cgroups go.
#[derive(Debug, Clone)]
enum Backend {
    /// Children of this folder (controllers enabled in its
    /// `cgroup.subtree_control`).
    V2 { parent: PathBuf },
    /// Children of these folders in the `memory` and `pids` hierarchies.
    V1 { memory: PathBuf, pids: PathBuf },
}

/// The machine's answer, found once per process.
fn backend() -> &'static Result<Backend, String> {
    static BACKEND: OnceLock<Result<Backend, String>> = OnceLock::new();
    BACKEND.get_or_init(detect)
}

/// The per-run caps available here (found once per process).
pub fn tree_limits_state() -> TreeLimitsState {
    match backend() {
        Ok(Backend::V2 { parent }) => TreeLimitsState {
            kind: TreeLimitsKind::CgroupV2,
            detail: format!(
                "memory.max (swap off) and pids.max per run, in {}",
                parent.display()
            ),
        },
        Ok(Backend::V1 { memory, pids }) => TreeLimitsState {
            kind: TreeLimitsKind::CgroupV1,
            detail: format!(
                "memory.limit_in_bytes (swap included) and pids.max per run, in {} and {}",
                memory.display(),
                pids.display()
            ),
        },
        Err(reason) => TreeLimitsState {
            kind: TreeLimitsKind::None,
            detail: reason.clone(),
        },
    }
}

/// One line of `/proc/self/mountinfo` that matters here.
#[derive(Debug, Clone, PartialEq, Eq)]
struct CgroupMount {
    /// The hierarchy's folder this mount shows (usually `/`).
    root: String,
    /// Where it is mounted.
    mount_point: PathBuf,
    /// `cgroup2`, or `cgroup` with its controllers.
    v2: bool,
    controllers: Vec<String>,
}

/// The cgroup mounts listed in `mountinfo` text.
fn parse_mountinfo(text: &str) -> Vec<CgroupMount> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let left: Vec<&str> = left.split(' ').collect();
        let right: Vec<&str> = right.split(' ').collect();
        let (Some(root), Some(mount_point), Some(fstype)) =
            (left.get(3), left.get(4), right.first())
        else {
            continue;
        };
        let v2 = *fstype == "cgroup2";
        if !v2 && *fstype != "cgroup" {
            continue;
        }
        let controllers = right
            .get(2)
            .map(|o| o.split(',').map(str::to_owned).collect())
            .unwrap_or_default();
        out.push(CgroupMount {
            root: unescape_mount(root),
            mount_point: PathBuf::from(unescape_mount(mount_point)),
            v2,
            controllers,
        });
    }
    out
}

/// `mountinfo` escapes space, tab, newline and backslash as `\ooo`.
fn unescape_mount(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && let Some(v) = std::str::from_utf8(&b[i + 1..i + 4])
                .ok()
                .and_then(|oct| u8::from_str_radix(oct, 8).ok())
        {
            out.push(v);
            i += 4;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// This process's cgroup paths from `/proc/self/cgroup` text: the v2 path
/// (`0::/…`) and the v1 path of each controller.
fn parse_proc_cgroup(text: &str) -> (Option<String>, Vec<(String, String)>) {
    let mut v2 = None;
    let mut v1 = Vec::new();
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(id), Some(ctrls), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        if id == "0" && ctrls.is_empty() {
            v2 = Some(path.to_owned());
        } else {
            for c in ctrls.split(',') {
                v1.push((c.to_owned(), path.to_owned()));
            }
        }
    }
    (v2, v1)
}

/// The folder of cgroup `path` under `mount` (`None` when the mount does
/// not show it, e.g. a namespaced view of another subtree).
fn folder_of(mount: &CgroupMount, path: &str) -> Option<PathBuf> {
    let rel = if mount.root == "/" {
        path
    } else {
        path.strip_prefix(mount.root.as_str())?
    };
    let rel = rel.trim_start_matches('/');
    // A path leaving the mount (`..`) is not ours to write.
    if rel.split('/').any(|c| c == "..") {
        return None;
    }
    Some(if rel.is_empty() {
        mount.mount_point.clone()
    } else {
        mount.mount_point.join(rel)
    })
}

fn detect() -> Result<Backend, String> {
    let mountinfo = fs::read_to_string("/proc/self/mountinfo")
        .map_err(|e| format!("cannot read /proc/self/mountinfo: {e}"))?;
    let own = fs::read_to_string("/proc/self/cgroup")
        .map_err(|e| format!("cannot read /proc/self/cgroup: {e}"))?;
    let mounts = parse_mountinfo(&mountinfo);
    let (v2_path, v1_paths) = parse_proc_cgroup(&own);
    let v2 = match (mounts.iter().find(|m| m.v2), &v2_path) {
        (Some(m), Some(p)) => match folder_of(m, p) {
            Some(folder) => setup_v2(&folder),
            None => Err(format!(
                "cgroup v2: this process's cgroup {p} is outside the mount at {}",
                m.mount_point.display()
            )),
        },
        (None, _) => Err("cgroup v2: not mounted".to_owned()),
        (Some(_), None) => Err("cgroup v2: /proc/self/cgroup has no 0:: line".to_owned()),
    };
    let v2_reason = match v2 {
        Ok(b) => return Ok(b),
        Err(e) => e,
    };
    let v1_folder = |controller: &str| -> Result<PathBuf, String> {
        let mount = mounts
            .iter()
            .find(|m| !m.v2 && m.controllers.iter().any(|c| c == controller))
            .ok_or_else(|| format!("cgroup v1 {controller}: not mounted"))?;
        let path = v1_paths
            .iter()
            .find(|(c, _)| c == controller)
            .map(|(_, p)| p.as_str())
            .ok_or_else(|| format!("cgroup v1 {controller}: not in /proc/self/cgroup"))?;
        let folder = folder_of(mount, path).ok_or_else(|| {
            format!(
                "cgroup v1 {controller}: this process's cgroup {path} is outside the mount at {}",
                mount.mount_point.display()
            )
        })?;
        check_writable(&folder).map_err(|e| format!("cgroup v1 {controller}: {e}"))?;
        Ok(folder)
    };
    let v1 = v1_folder("memory").and_then(|memory| Ok((memory, v1_folder("pids")?)));
    match v1 {
        Ok((memory, pids)) => Ok(Backend::V1 { memory, pids }),
        Err(v1_reason) => Err(format!(
            "{v2_reason}; {v1_reason} (per-process rlimits only: run under a delegated cgroup v2 subtree, e.g. `systemd-run --user --scope -p Delegate=yes skilldeck …`, or as root with cgroup v1 memory and pids)"
        )),
    }
}

/// Creates and removes a probe child in `folder`: the real test of "may
/// this process create cgroups here".
fn check_writable(folder: &Path) -> Result<(), String> {
    let probe = folder.join(format!("{RUN_PREFIX}probe-{}", std::process::id()));
    fs::create_dir(&probe)
        .map_err(|e| format!("cannot create a cgroup in {}: {e}", folder.display()))?;
    let _ = fs::remove_dir(&probe);
    Ok(())
}

/// Makes `own` (this process's v2 cgroup) a parent for run cgroups: moves
/// this process into a leaf child when it is not already there, enables
/// `memory` and `pids` for the children.
fn setup_v2(own: &Path) -> Result<Backend, String> {
    let ctx = |what: &str, e: io::Error| format!("cgroup v2 {}: {what}: {e}", own.display());
    let controllers = fs::read_to_string(own.join("cgroup.controllers"))
        .map_err(|e| ctx("cgroup.controllers", e))?;
    for needed in ["memory", "pids"] {
        if !controllers.split_whitespace().any(|c| c == needed) {
            return Err(format!(
                "cgroup v2 {}: controller '{needed}' not available (controllers: {}); it is not delegated to this cgroup",
                own.display(),
                controllers.trim()
            ));
        }
    }
    // Already moved by an earlier detection in this process (or a parent
    // that did it for us): the parent of our leaf is the run parent.
    let (parent, moved) = if own.file_name().is_some_and(|n| n == HOST_LEAF) {
        (
            own.parent()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| own.to_path_buf()),
            false,
        )
    } else {
        (own.to_path_buf(), true)
    };
    let subtree = fs::read_to_string(parent.join("cgroup.subtree_control"))
        .map_err(|e| ctx("cgroup.subtree_control", e))?;
    let enabled = |c: &str| subtree.split_whitespace().any(|s| s == c);
    if enabled("memory") && enabled("pids") {
        check_writable(&parent).map_err(|e| format!("cgroup v2: {e}"))?;
        return Ok(Backend::V2 { parent });
    }
    if !moved {
        return Err(format!(
            "cgroup v2 {}: memory and pids are not enabled in cgroup.subtree_control",
            parent.display()
        ));
    }
    // Move every thread group of ours into the leaf, then enable the
    // controllers; on failure, move back.
    let leaf = parent.join(HOST_LEAF);
    match fs::create_dir(&leaf) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(ctx("cannot create the leaf cgroup", e)),
    }
    let pid = std::process::id().to_string();
    fs::write(leaf.join("cgroup.procs"), &pid)
        .map_err(|e| ctx("cannot move this process into its leaf", e))?;
    if let Err(e) = fs::write(parent.join("cgroup.subtree_control"), "+memory +pids") {
        let _ = fs::write(parent.join("cgroup.procs"), &pid);
        let _ = fs::remove_dir(&leaf);
        let why = if e.raw_os_error() == Some(Errno::BUSY.raw_os_error()) {
            "other processes share this cgroup; start skilldeck in its own delegated cgroup"
        } else {
            "the cgroup is not delegated to this user"
        };
        return Err(format!(
            "cgroup v2 {}: cannot enable memory and pids for children ({e}): {why}",
            parent.display()
        ));
    }
    check_writable(&parent).map_err(|e| format!("cgroup v2: {e}"))?;
    Ok(Backend::V2 { parent })
}

/// What the run's cgroup saw.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TreeUsage {
    /// The kernel killed a process of the run for going over the memory
    /// cap (an OOM kill inside the run's cgroup).
    pub memory_cap_hit: bool,
    /// A fork or clone was refused at the process cap (`pids.max`).
    pub process_cap_hit: bool,
    /// The most memory the run held at once, in bytes.
    pub memory_peak_bytes: Option<u64>,
}

/// One run's cgroup (one folder per hierarchy), removed on drop.
#[derive(Debug)]
pub(crate) struct RunCgroup {
    kind: TreeLimitsKind,
    /// `(folder, memory hierarchy, pids hierarchy)`: v2 has one folder
    /// for both.
    folders: Vec<PathBuf>,
    /// `cgroup.procs` of each folder, open for writing, close-on-exec.
    procs: Vec<OwnedFd>,
    removed: bool,
}

/// What the spawned child needs to join the run's cgroup (descriptors only;
/// used between fork and exec).
#[derive(Debug, Clone)]
pub(crate) struct Joiner {
    fds: Vec<RawFd>,
}

impl Joiner {
    /// Moves the calling process into the run's cgroup (writes `0` to each
    /// `cgroup.procs`). System calls only, for `pre_exec`.
    pub(crate) fn join(&self) -> io::Result<()> {
        for fd in &self.fds {
            // SAFETY: a descriptor the parent opened and keeps open until
            // the spawn returns.
            #[allow(unsafe_code)]
            let fd = unsafe { BorrowedFd::borrow_raw(*fd) };
            if rustix::io::write(fd, b"0")? != 1 {
                return Err(io::Error::from(Errno::IO));
            }
        }
        Ok(())
    }
}

fn write_value(folder: &Path, file: &str, value: &str) -> io::Result<()> {
    fs::write(folder.join(file), value)
        .map_err(|e| io::Error::new(e.kind(), format!("{file}: {e}")))
}

fn open_procs(folder: &Path) -> io::Result<OwnedFd> {
    Ok(rustix::fs::open(
        folder.join("cgroup.procs"),
        OFlags::WRONLY | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

impl RunCgroup {
    /// A cgroup for one run under `limits` (memory and processes for the
    /// whole tree), or `Ok(None)` when the machine has none and `mode` is
    /// [`TreeLimitsMode::Auto`] (the reason is in
    /// [`tree_limits_state`]). [`TreeLimitsMode::Require`] refuses instead.
    pub(crate) fn create(
        limits: &Limits,
        mode: TreeLimitsMode,
    ) -> Result<Option<RunCgroup>, ExecError> {
        let refuse = |missing: String| ExecError::LimitUnavailable { missing };
        let backend = match backend() {
            Ok(b) => b,
            Err(reason) => {
                return match mode {
                    TreeLimitsMode::Require => Err(refuse(reason.clone())),
                    TreeLimitsMode::Auto => Ok(None),
                };
            }
        };
        let name = format!(
            "{RUN_PREFIX}{}-{}",
            std::process::id(),
            RUN_COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let mut cg = RunCgroup {
            kind: TreeLimitsKind::None,
            folders: Vec::new(),
            procs: Vec::new(),
            removed: false,
        };
        let memory = limits.memory_bytes.to_string();
        let pids = limits.max_processes.to_string();
        let made = (|| -> io::Result<()> {
            match backend {
                Backend::V2 { parent } => {
                    cg.kind = TreeLimitsKind::CgroupV2;
                    let f = parent.join(&name);
                    fs::create_dir(&f)?;
                    cg.folders.push(f.clone());
                    write_value(&f, "memory.max", &memory)?;
                    if f.join("memory.swap.max").exists() {
                        write_value(&f, "memory.swap.max", "0")?;
                    }
                    // An OOM kill takes the whole run, not one process.
                    if f.join("memory.oom.group").exists() {
                        write_value(&f, "memory.oom.group", "1")?;
                    }
                    write_value(&f, "pids.max", &pids)?;
                    cg.procs.push(open_procs(&f)?);
                }
                Backend::V1 { memory: m, pids: p } => {
                    cg.kind = TreeLimitsKind::CgroupV1;
                    let fm = m.join(&name);
                    fs::create_dir(&fm)?;
                    cg.folders.push(fm.clone());
                    write_value(&fm, "memory.limit_in_bytes", &memory)?;
                    // Swap included (where swap is accounted): memsw = mem.
                    if fm.join("memory.memsw.limit_in_bytes").exists() {
                        write_value(&fm, "memory.memsw.limit_in_bytes", &memory)?;
                    }
                    cg.procs.push(open_procs(&fm)?);
                    let fp = p.join(&name);
                    fs::create_dir(&fp)?;
                    cg.folders.push(fp.clone());
                    write_value(&fp, "pids.max", &pids)?;
                    cg.procs.push(open_procs(&fp)?);
                }
            }
            Ok(())
        })();
        match made {
            Ok(()) => Ok(Some(cg)),
            Err(e) => {
                let missing = format!("the run's cgroup ({}): {e}", cg.kind.name());
                drop(cg);
                match mode {
                    TreeLimitsMode::Require => Err(refuse(missing)),
                    TreeLimitsMode::Auto => {
                        tracing::warn!(target: "skilldeck::exec", "{missing}; this run has per-process limits only");
                        Ok(None)
                    }
                }
            }
        }
    }

    /// What the child writes to join (valid while `self` lives).
    pub(crate) fn joiner(&self) -> Joiner {
        Joiner {
            fds: self.procs.iter().map(AsRawFd::as_raw_fd).collect(),
        }
    }

    /// Kills every process left in the run's cgroup (daemons that escaped
    /// a process group, profile `none`'s `setsid` children).
    pub(crate) fn kill_all(&self) {
        for folder in &self.folders {
            if self.kind == TreeLimitsKind::CgroupV2 && folder.join("cgroup.kill").exists() {
                let _ = fs::write(folder.join("cgroup.kill"), "1");
            } else {
                kill_listed(folder);
            }
        }
    }

    /// Kills what is left, reads what the cgroup saw, removes it.
    pub(crate) fn finish(mut self) -> TreeUsage {
        self.kill_all();
        self.wait_empty();
        let usage = self.usage();
        self.remove();
        usage
    }

    fn usage(&self) -> TreeUsage {
        let read =
            |folder: &Path, file: &str| fs::read_to_string(folder.join(file)).unwrap_or_default();
        let mut u = TreeUsage::default();
        match self.kind {
            TreeLimitsKind::CgroupV2 => {
                if let Some(f) = self.folders.first() {
                    u.memory_cap_hit = counter(&read(f, "memory.events"), "oom_kill") > 0
                        || counter(&read(f, "memory.events"), "oom_group_kill") > 0;
                    u.process_cap_hit = counter(&read(f, "pids.events"), "max") > 0;
                    u.memory_peak_bytes = read(f, "memory.peak").trim().parse().ok();
                }
            }
            TreeLimitsKind::CgroupV1 => {
                if let (Some(m), Some(p)) = (self.folders.first(), self.folders.get(1)) {
                    u.memory_cap_hit = counter(&read(m, "memory.oom_control"), "oom_kill") > 0;
                    u.memory_peak_bytes = read(m, "memory.max_usage_in_bytes").trim().parse().ok();
                    u.process_cap_hit = counter(&read(p, "pids.events"), "max") > 0;
                }
            }
            TreeLimitsKind::None => {}
        }
        u
    }

    fn wait_empty(&self) {
        let started = Instant::now();
        let mut pause = Duration::from_millis(1);
        loop {
            let busy = self.folders.iter().any(|f| {
                fs::read_to_string(f.join("cgroup.procs")).is_ok_and(|s| !s.trim().is_empty())
            });
            if !busy || started.elapsed() >= DRAIN_WAIT {
                return;
            }
            // Processes killed a moment ago are still being reaped.
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(50));
            self.kill_all();
        }
    }

    fn remove(&mut self) {
        if self.removed {
            return;
        }
        self.removed = true;
        self.procs.clear();
        for folder in &self.folders {
            if let Err(e) = fs::remove_dir(folder)
                && e.kind() != io::ErrorKind::NotFound
            {
                tracing::warn!(
                    target: "skilldeck::exec",
                    "cannot remove the run's cgroup {}: {e}",
                    folder.display()
                );
            }
        }
    }
}

impl Drop for RunCgroup {
    fn drop(&mut self) {
        if !self.removed {
            self.kill_all();
            self.wait_empty();
            self.remove();
        }
    }
}

/// The value of `key` in a flat-keyed cgroup file (`key value` lines).
fn counter(text: &str, key: &str) -> u64 {
    text.lines()
        .filter_map(|l| l.split_once(' '))
        .find(|(k, _)| *k == key)
        .and_then(|(_, v)| v.trim().parse().ok())
        .unwrap_or(0)
}

/// SIGKILL to every process listed in `folder/cgroup.procs`, each through a
/// pidfd checked to still be in this cgroup (a pid reused between the read
/// and the kill is not touched).
#[cfg(target_os = "linux")]
fn kill_listed(folder: &Path) {
    let Ok(list) = fs::read_to_string(folder.join("cgroup.procs")) else {
        return;
    };
    let Some(name) = folder.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return;
    };
    for pid in list
        .lines()
        .filter_map(|l| l.trim().parse::<i32>().ok())
        .filter_map(Pid::from_raw)
    {
        let Ok(fd) = rustix::process::pidfd_open(pid, PidfdFlags::empty()) else {
            continue;
        };
        let ours = fs::read_to_string(format!("/proc/{}/cgroup", pid.as_raw_nonzero()))
            .is_ok_and(|s| s.lines().any(|l| l.ends_with(&format!("/{name}"))));
        if ours {
            // Gone already (ESRCH) is as good as killed.
            let _ = rustix::process::pidfd_send_signal(&fd, Signal::KILL);
        }
    }
}

/// Without Linux there is no cgroup (the probe finds none), so nothing is
/// ever listed.
#[cfg(not(target_os = "linux"))]
fn kill_listed(_folder: &Path) {}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn mountinfo_gives_cgroup_mounts_with_their_controllers() {
        let text = "\
35 24 0:30 / /sys/fs/cgroup/unified rw,nosuid - cgroup2 cgroup2 rw,nsdelegate
36 24 0:31 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory
37 24 0:32 /sub /sys/fs/cgroup/pids\\040x rw - cgroup cgroup rw,pids
22 1 8:1 / / rw - ext4 /dev/vda rw
";
        let m = parse_mountinfo(text);
        assert_eq!(m.len(), 3);
        assert!(m[0].v2);
        assert_eq!(m[1].controllers, vec!["rw".to_owned(), "memory".to_owned()]);
        assert_eq!(m[2].mount_point, PathBuf::from("/sys/fs/cgroup/pids x"));
        assert_eq!(
            folder_of(&m[2], "/sub/a"),
            Some(PathBuf::from("/sys/fs/cgroup/pids x/a"))
        );
        assert_eq!(folder_of(&m[2], "/other"), None);
        assert_eq!(
            folder_of(&m[1], "/"),
            Some(PathBuf::from("/sys/fs/cgroup/memory"))
        );
        assert_eq!(folder_of(&m[1], "/a/../../etc"), None);
    }

    #[test]
    fn proc_cgroup_gives_the_v2_path_and_each_v1_controllers_path() {
        let (v2, v1) = parse_proc_cgroup(
            "8:pids:/\n4:memory:/process_api/x\n1:name=systemd:/\n0::/user.slice/a.scope\n",
        );
        assert_eq!(v2.as_deref(), Some("/user.slice/a.scope"));
        assert!(v1.contains(&("memory".to_owned(), "/process_api/x".to_owned())));
        assert!(v1.contains(&("pids".to_owned(), "/".to_owned())));
    }

    #[test]
    fn flat_keyed_counters_are_read_by_key() {
        let events = "low 0\nhigh 0\nmax 12\noom 1\noom_kill 2\noom_group_kill 0\n";
        assert_eq!(counter(events, "oom_kill"), 2);
        assert_eq!(counter(events, "max"), 12);
        assert_eq!(counter(events, "absent"), 0);
    }
}
