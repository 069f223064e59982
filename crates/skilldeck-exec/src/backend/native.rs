//! The native backend (profile `native`): every layer in this process,
//! no helper program. The spawned child enters a user namespace (when
//! not root), fresh PID, mount, IPC and (unless the network is granted)
//! network namespaces, binds the skill read-only, mounts the work
//! directory's tmpfs, drops root, and applies Landlock ABI 7 and the
//! seccomp filter before it execs (see `crate::sandbox`).

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use std::os::unix::process::CommandExt;

use rustix::thread::UnshareFlags;

use super::plan::{Backend, Layer, PlanInput, SpawnPlan, check_granted_paths, check_network};
use crate::error::ExecError;
use crate::policy::{Policy, Profile, SANDBOX_UID};
use crate::sandbox::{self, FsAccess, Plan, UserMaps};
use crate::sys::{c_path, egid, euid, seccomp_supported};
use crate::tmpfs::TmpfsMount;

/// Landlock, seccomp, namespaces, rlimits and an unprivileged uid, in
/// process.
pub(crate) struct Native;

impl Backend for Native {
    fn profile(&self) -> Profile {
        Profile::Native
    }

    /// Refuses when Landlock ABI 7 or seccomp is missing (namespace
    /// failures surface from the child, naming the step), then a granted
    /// path that does not exist.
    fn check(&self, policy: &Policy) -> Result<(), ExecError> {
        sandbox::landlock_available()?;
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
            "landlock-abi7",
            "seccomp",
            "seccomp-abi-check",
            "sysv-ipc-refused",
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
        layers.push("seccomp-notify");
        layers.push(if root { "uid-drop" } else { "user-namespace" });
        layers
    }

    fn plan(&self, input: &PlanInput<'_>) -> Result<SpawnPlan, ExecError> {
        let policy = input.policy;
        let workdir = input.workdir;
        let root = euid() == 0;
        let real = input.skill_real;
        let mut read: Vec<&Path> = vec![real];
        read.extend(policy.grants.read_paths.iter().map(PathBuf::as_path));
        // Without a tmpfs, the host folder holding work/ and tmp/. With one,
        // nothing of the host: the init adds the tmpfs itself to the ruleset
        // (see `TmpfsMount`), so the hidden host folder stays closed.
        let quota = self.workdir_quota(policy);
        let mut write: Vec<&Path> = Vec::new();
        if quota.is_none() {
            write.push(&workdir.data);
        }
        write.extend(policy.grants.write_paths.iter().map(PathBuf::as_path));
        let access = FsAccess {
            read,
            write,
            network: policy.grants.network.is_all(),
            proxy_port: proxy_port(policy),
        };
        let landlock = sandbox::landlock_ruleset(&access)?;
        // What Landlock lets the run write, from the same rules: the
        // parent counts the writes refused outside it.
        let mut write_rules = sandbox::write_rules(&access)?;
        let workdir_mount = match quota {
            Some(bytes) => {
                let ruleset: Option<OwnedFd> = landlock
                    .try_clone()
                    .map_err(|e| ExecError::io("cloning the Landlock ruleset", e))?
                    .into();
                let (uid, gid) = if root {
                    (SANDBOX_UID, SANDBOX_UID)
                } else {
                    (euid(), egid())
                };
                // The tmpfs's rule (every right beneath it) exists only in
                // the sandbox: the counting resolves it there.
                write_rules.defer(&workdir.data, sandbox::landlock_write_access());
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
            let (u, g) = (euid(), egid());
            Some(UserMaps {
                uid_map: c_path(Path::new(&format!("{u} {u} 1\n")))?,
                gid_map: c_path(Path::new(&format!("{g} {g} 1\n")))?,
            })
        };
        Ok(SpawnPlan {
            wrapper: None,
            child: Plan {
                native: true,
                drop_root: root,
                user_maps,
                new_netns: !policy.grants.network.is_all(),
                bind: Some((
                    c_path(real)?,
                    c_path(&workdir.skill)?,
                    sandbox::locked_mount_flags(real)?,
                )),
                workdir_mount,
                landlock: Some(landlock),
                seccomp: native_programs(policy)?,
                rlimits: sandbox::rlimits(input.limits),
                status_fd: input.status_fd,
                inherit_fds: Vec::new(),
                channel_fd: Some(input.channel_fd),
                proxy_port: proxy_port(policy),
                proxy_own_netns: false,
                notify_program: Some(sandbox::MAIN_PROGRAM),
            },
            keep_open: Vec::new(),
            skill_dir: workdir.skill.clone(),
            write_rules: Some(write_rules),
        })
    }
}

/// The proxy's port inside the sandbox, with a host-list grant.
fn proxy_port(policy: &Policy) -> Option<u16> {
    (!policy.grants.network.hosts().is_empty()).then_some(crate::proxy::SANDBOX_PROXY_PORT)
}

/// The seccomp programs, the main one answering its refusals and the
/// calls that may write through the parent (which counts them).
fn native_programs(policy: &Policy) -> Result<Vec<seccompiler::BpfProgram>, ExecError> {
    sandbox::notifying_programs(policy.grants.network.is_granted())
}

/// The layers this backend needs, each checked for real here: a ruleset
/// with every ABI-7 right is created, the seccomp filter compiled, a child
/// enters the namespaces (`euid`: the caller's).
pub(crate) fn machine_layers(euid: u32) -> Vec<Layer> {
    let landlock = match sandbox::landlock_available() {
        Ok(()) => Layer {
            name: "landlock-abi7",
            available: true,
            detail: "ruleset with every ABI 7 right (filesystem, TCP, signal and abstract-socket scopes) created".to_owned(),
        },
        Err(e) => Layer {
            name: "landlock-abi7",
            available: false,
            detail: e.to_string(),
        },
    };
    let seccomp = sandbox::seccomp_programs(false);
    let seccomp = Layer {
        name: "seccomp",
        available: seccomp_supported() && seccomp.is_ok(),
        detail: match seccomp {
            Ok(_) if seccomp_supported() => format!(
                "filter compiled; kernel reports Seccomp support; every call checked for the \
                 {} ABI (another arch kills the process){}; System V IPC calls refused",
                std::env::consts::ARCH,
                if cfg!(target_arch = "x86_64") {
                    ", x32 calls refused"
                } else {
                    ""
                }
            ),
            Ok(_) => "kernel does not report Seccomp in /proc/self/status".to_owned(),
            Err(e) => e.to_string(),
        },
    };
    vec![landlock, seccomp, namespaces_layer(euid)]
}

/// Spawns `/bin/true` in new PID, mount and network namespaces (after a
/// user namespace when not root).
fn namespaces_layer(euid: u32) -> Layer {
    let root = euid == 0;
    let mut cmd = std::process::Command::new("/bin/true");
    cmd.env_clear();
    // SAFETY: the closure runs between fork and exec and only calls
    // `unshare` with namespace flags (never `FILES`, so no other thread
    // can observe another descriptor table).
    #[allow(unsafe_code)]
    unsafe {
        cmd.pre_exec(move || {
            let mut flags = UnshareFlags::NEWPID
                | UnshareFlags::NEWNS
                | UnshareFlags::NEWIPC
                | UnshareFlags::NEWNET;
            if !root {
                flags |= UnshareFlags::NEWUSER;
            }
            rustix::thread::unshare_unsafe(flags).map_err(std::io::Error::from)
        });
    }
    let how = if root {
        format!("as root, dropping to uid {SANDBOX_UID}")
    } else {
        "through a user namespace".to_owned()
    };
    match cmd.status() {
        Ok(s) if s.success() => Layer {
            name: "namespaces",
            available: true,
            detail: format!("PID, mount, IPC and network namespaces ({how})"),
        },
        Ok(s) => Layer {
            name: "namespaces",
            available: false,
            detail: format!("test child ended with {s}"),
        },
        Err(e) => Layer {
            name: "namespaces",
            available: false,
            detail: format!("unshare(PID|mount|IPC|network) {how}: {e}"),
        },
    }
}
