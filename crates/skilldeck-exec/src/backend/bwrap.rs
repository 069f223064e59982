//! The bubblewrap backend (profile `bwrap`): `bwrap` from the system PATH
//! builds a fresh mount namespace holding only the system paths, the
//! skill (read-only) and the work directory, in user, PID, IPC, UTS,
//! cgroup and network namespaces with every capability dropped; the same
//! seccomp filter as the native backend reaches it on pipes
//! (`--add-seccomp-fd`), and the spawned child sets the rlimits (and, as
//! root, binds the skill and drops to the sandbox uid) before it execs
//! `bwrap`, so neither `bwrap` nor the script ever runs as host root.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use std::os::unix::process::CommandExt;
use std::sync::OnceLock;

use rustix::process::{Gid, Uid};
use rustix::thread::{set_thread_groups, set_thread_res_gid, set_thread_res_uid};

use super::plan::{Backend, Layer, PlanInput, SpawnPlan, check_granted_paths, check_network};
use crate::error::ExecError;
use crate::policy::{
    NETWORK_READ_PATHS, Policy, Profile, SANDBOX_PATH, SANDBOX_UID, SYSTEM_READ_PATHS,
};
use crate::sandbox::{self, Plan};
use crate::sys::{c_path, cloexec_pipe, euid, seccomp_supported};
use crate::workdir::WorkDir;

/// bubblewrap on the system PATH, with the native seccomp filter.
pub(crate) struct Bwrap;

impl Backend for Bwrap {
    fn profile(&self) -> Profile {
        Profile::Bwrap
    }

    /// Refuses when `bwrap` is not installed, cannot create its
    /// namespaces here (checked for real by the probe) or the kernel has
    /// no seccomp; then a granted path that does not exist (`bwrap` could
    /// not bind it).
    fn check(&self, policy: &Policy) -> Result<(), ExecError> {
        bwrap_path()?;
        let (_, layer) = machine_layer();
        if !layer.available {
            return Err(ExecError::Unavailable {
                missing: layer.detail.clone(),
            });
        }
        if !seccomp_supported() {
            return Err(ExecError::Unavailable {
                missing: "seccomp (kernel without CONFIG_SECCOMP_FILTER)".to_owned(),
            });
        }
        check_network(policy, true)?;
        check_granted_paths(policy)
    }

    fn isolates(&self) -> bool {
        true
    }

    fn layers(&self, policy: &Policy, root: bool) -> Vec<&'static str> {
        let mut layers = vec![
            "bwrap",
            "seccomp",
            "seccomp-abi-check",
            "sysv-ipc-refused",
            "user-namespace",
            "pid-namespace",
            "mount-namespace",
            "ipc-namespace",
        ];
        if !policy.grants.network.is_all() {
            layers.push("network-namespace");
        }
        if !policy.grants.network.hosts().is_empty() {
            layers.push("network-proxy");
        }
        layers.push("cap-drop");
        if root {
            layers.push("uid-drop");
        }
        layers
    }

    fn plan(&self, input: &PlanInput<'_>) -> Result<SpawnPlan, ExecError> {
        let policy = input.policy;
        let workdir = input.workdir;
        let real = input.skill_real;
        // As root: bind the skill and drop root in the child, so bwrap
        // (and the script) never run as host root.
        let root = euid() == 0;
        let bind = if root {
            Some((
                c_path(real)?,
                c_path(&workdir.skill)?,
                sandbox::locked_mount_flags(real)?,
            ))
        } else {
            None
        };
        // The seccomp programs travel on pipes the child hands to bwrap;
        // they stay open until the spawn returned.
        let mut keep_open = Vec::new();
        for program in sandbox::seccomp_programs(policy.grants.network.is_granted())? {
            keep_open.push(pipe_with(&sandbox::program_bytes(&program))?);
        }
        let fds: Vec<i32> = keep_open.iter().map(AsRawFd::as_raw_fd).collect();
        let args = bwrap_args(
            policy,
            self.workdir_quota(policy),
            real,
            workdir,
            root,
            &fds,
        );
        let hosts = !policy.grants.network.hosts().is_empty();
        // Not root with a host list: the worker makes the network namespace
        // inside a user namespace of the caller's own ids.
        let user_maps = if hosts && !root {
            let (u, g) = (euid(), crate::sys::egid());
            Some(sandbox::UserMaps {
                uid_map: c_path(Path::new(&format!("{u} {u} 1\n")))?,
                gid_map: c_path(Path::new(&format!("{g} {g} 1\n")))?,
            })
        } else {
            None
        };
        Ok(SpawnPlan {
            wrapper: Some((bwrap_path()?, args)),
            child: Plan {
                native: false,
                drop_root: root,
                user_maps,
                new_netns: false,
                bind,
                workdir_mount: None,
                landlock: None,
                seccomp: Vec::new(),
                rlimits: sandbox::rlimits(input.limits),
                status_fd: input.status_fd,
                inherit_fds: fds,
                channel_fd: Some(input.channel_fd),
                proxy_port: hosts.then_some(crate::proxy::SANDBOX_PROXY_PORT),
                proxy_own_netns: hosts,
                notify_program: None,
            },
            keep_open,
            skill_dir: workdir.skill.clone(),
            write_rules: None,
        })
    }
}

/// `bwrap` on the system PATH, or the refusal naming it.
fn bwrap_path() -> Result<PathBuf, ExecError> {
    crate::interpreter::on_sandbox_path("bwrap").ok_or_else(|| ExecError::Unavailable {
        missing: format!(
            "bwrap (bubblewrap) not found in {SANDBOX_PATH}; install it (apt install bubblewrap) or use profile native"
        ),
    })
}

/// bubblewrap's arguments up to (not including) the program: only the
/// system paths, the skill (read-only) and the work dir exist inside.
fn bwrap_args(
    policy: &Policy,
    quota: Option<u64>,
    skill_real: &Path,
    workdir: &WorkDir,
    root: bool,
    seccomp_fds: &[i32],
) -> Vec<OsString> {
    let mut a: Vec<OsString> = Vec::new();
    let mut push = |items: &[&OsStr]| a.extend(items.iter().map(|s| s.to_os_string()));
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
    // The whole network: the host's namespace. A host list: the one the
    // worker made (loopback and the proxy's port only).
    if policy.grants.network.is_granted() {
        push(&["--share-net".as_ref()]);
    }
    let id = SANDBOX_UID.to_string();
    push(&["--uid".as_ref(), id.as_ref(), "--gid".as_ref(), id.as_ref()]);
    let mut system: Vec<&str> = SYSTEM_READ_PATHS.to_vec();
    if policy.grants.network.is_all() {
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
    let skill_source = if root {
        workdir.skill.as_os_str()
    } else {
        skill_real.as_os_str()
    };
    push(&[
        "--ro-bind".as_ref(),
        skill_source,
        workdir.skill.as_os_str(),
    ]);
    if let Some((link, target)) = &workdir.node_modules {
        push(&["--symlink".as_ref(), target.as_os_str(), link.as_os_str()]);
    }
    match quota {
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
    let (read, write) = cloexec_pipe()?;
    let mut write = File::from(write);
    write
        .write_all(bytes)
        .map_err(|e| ExecError::io("seccomp program pipe", e))?;
    Ok(File::from(read))
}

/// `bwrap` on the system PATH and whether it runs here as a run would
/// start it; checked once per process.
pub(crate) fn machine_layer() -> &'static (Option<PathBuf>, Layer) {
    static LAYER: OnceLock<(Option<PathBuf>, Layer)> = OnceLock::new();
    LAYER.get_or_init(|| {
        let path = crate::interpreter::on_sandbox_path("bwrap");
        let layer = bwrap_layer(path.as_deref(), euid());
        (path, layer)
    })
}

/// Runs `bwrap` as a run would start it (root drops to the sandbox uid
/// first) with `/bin/true` inside.
fn bwrap_layer(bwrap: Option<&std::path::Path>, euid: u32) -> Layer {
    let name = "bwrap";
    let Some(bwrap) = bwrap else {
        return Layer {
            name,
            available: false,
            detail: format!("bwrap (bubblewrap) not found in {SANDBOX_PATH}"),
        };
    };
    let root = euid == 0;
    let id = SANDBOX_UID.to_string();
    let mut cmd = std::process::Command::new(bwrap);
    cmd.env_clear()
        .args(["--unshare-all", "--unshare-user", "--die-with-parent"])
        .args(["--cap-drop", "ALL", "--uid", &id, "--gid", &id])
        .args(["--ro-bind", "/", "/", "--", "/bin/true"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    if root {
        // SAFETY: the closure runs between fork and exec and only makes
        // id-changing system calls with integer arguments; the forked
        // child has one thread, so the per-thread calls change the
        // process's ids.
        #[allow(unsafe_code)]
        unsafe {
            cmd.pre_exec(|| {
                let gid = Gid::from_raw(SANDBOX_UID);
                let uid = Uid::from_raw(SANDBOX_UID);
                set_thread_groups(&[])
                    .and_then(|()| set_thread_res_gid(gid, gid, gid))
                    .and_then(|()| set_thread_res_uid(uid, uid, uid))
                    .map_err(std::io::Error::from)
            });
        }
    }
    let how = if root {
        format!("root drops to uid {SANDBOX_UID} before bwrap")
    } else {
        format!("uid {SANDBOX_UID} inside, mapped to the caller's")
    };
    match cmd.output() {
        Ok(o) if o.status.success() => Layer {
            name,
            available: true,
            detail: format!(
                "{}: user, PID, mount, IPC and network namespaces created ({how})",
                bwrap.display()
            ),
        },
        Ok(o) => Layer {
            name,
            available: false,
            detail: format!(
                "{} cannot create its namespaces ({how}): {}",
                bwrap.display(),
                String::from_utf8_lossy(&o.stderr).trim()
            ),
        },
        Err(e) => Layer {
            name,
            available: false,
            detail: format!("{} cannot start ({how}): {e}", bwrap.display()),
        },
    }
}
