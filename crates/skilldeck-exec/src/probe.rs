//! What isolation this machine offers, checked for real (a ruleset is
//! created, a child enters the namespaces), for `skilldeck sandbox` and for
//! tests that must take the refusal path where a layer is missing.

#[cfg(target_os = "linux")]
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::sync::OnceLock;

#[cfg(target_os = "linux")]
use rustix::process::{Gid, Uid};
#[cfg(target_os = "linux")]
use rustix::thread::{UnshareFlags, set_thread_groups, set_thread_res_gid, set_thread_res_uid};
use serde::Serialize;

use crate::cgroup::{TreeLimitsState, tree_limits_state};
#[cfg(target_os = "linux")]
use crate::policy::{SANDBOX_PATH, SANDBOX_UID};
#[cfg(target_os = "linux")]
use crate::sandbox;
use crate::sys::seccomp_supported;

/// One layer's availability.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Layer {
    /// The layer, e.g. `landlock-abi7`.
    pub name: &'static str,
    /// Usable here.
    pub available: bool,
    /// What was found, or why not.
    pub detail: String,
}

/// The layers of this machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Probe {
    /// Each layer the native profile needs, in order.
    pub layers: Vec<Layer>,
    /// The native profile can run here (every layer available).
    pub native_ready: bool,
    /// The caller's effective uid (root drops to the sandbox user).
    pub euid: u32,
    /// `bwrap` on the system PATH (profile `bwrap` needs it).
    pub bwrap: Option<PathBuf>,
    /// Profile `bwrap` checked for real: `bwrap` started as it would be
    /// for a run (as root: after dropping to the sandbox uid) created its
    /// user, PID, mount, IPC and network namespaces and ran a program.
    pub bwrap_layer: Layer,
    /// The per-run caps on the whole process tree (memory, processes):
    /// the cgroup interface that enforces them here, or `none` and why.
    pub tree_limits: TreeLimitsState,
}

impl Probe {
    /// The names and reasons of the missing layers, for a refusal message.
    pub fn missing(&self) -> Vec<String> {
        self.layers
            .iter()
            .filter(|l| !l.available)
            .map(|l| format!("{} ({})", l.name, l.detail))
            .collect()
    }
}

/// Probes once per process and caches the answer.
pub fn probe() -> &'static Probe {
    static PROBE: OnceLock<Probe> = OnceLock::new();
    PROBE.get_or_init(probe_now)
}

#[cfg(target_os = "linux")]
fn probe_now() -> Probe {
    let euid = crate::sys::euid();
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
    let namespaces = namespaces_layer(euid);
    let layers = vec![landlock, seccomp, namespaces];
    let bwrap = crate::interpreter::on_sandbox_path("bwrap");
    let bwrap_layer = bwrap_layer(bwrap.as_deref(), euid);
    Probe {
        native_ready: layers.iter().all(|l| l.available),
        layers,
        euid,
        bwrap,
        bwrap_layer,
        tree_limits: tree_limits_state(),
    }
}

/// Runs `bwrap` as a run would start it (root drops to the sandbox uid
/// first) with `/bin/true` inside.
#[cfg(target_os = "linux")]
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

/// Spawns `/bin/true` in new PID, mount and network namespaces (after a
/// user namespace when not root).
#[cfg(target_os = "linux")]
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

/// Without Linux no layer exists: each is reported missing, naming the
/// OS, so `auto` refuses and `skilldeck sandbox` says why.
#[cfg(not(target_os = "linux"))]
fn probe_now() -> Probe {
    let os = std::env::consts::OS;
    let missing = |name: &'static str| Layer {
        name,
        available: false,
        detail: format!("no sandbox backend on this OS: {os}"),
    };
    Probe {
        layers: vec![
            missing("landlock-abi7"),
            missing("seccomp"),
            missing("namespaces"),
        ],
        native_ready: false,
        euid: crate::sys::euid(),
        bwrap: None,
        bwrap_layer: missing("bwrap"),
        tree_limits: tree_limits_state(),
    }
}

/// The strongest profile this machine offers (`auto` in the config): the
/// native one when every layer is there, else bubblewrap when it runs here
/// (its mount, PID, IPC and network namespaces stand in for Landlock, with
/// the same seccomp filter, rlimits and unprivileged uid); else the
/// refusal naming what is missing for both.
pub fn best_profile() -> Result<crate::policy::Profile, crate::error::ExecError> {
    best_of(probe(), seccomp_supported())
}

fn best_of(p: &Probe, seccomp: bool) -> Result<crate::policy::Profile, crate::error::ExecError> {
    if p.native_ready {
        Ok(crate::policy::Profile::Native)
    } else if p.bwrap_layer.available && seccomp {
        Ok(crate::policy::Profile::Bwrap)
    } else {
        let bwrap = if p.bwrap.is_none() {
            "bwrap not installed".to_owned()
        } else {
            format!("bwrap unusable: {}", p.bwrap_layer.detail)
        };
        Err(crate::error::ExecError::Unavailable {
            missing: format!("{}; {bwrap}", p.missing().join("; ")),
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use crate::policy::Profile;

    fn machine(landlock: bool, bwrap: Option<&str>, bwrap_runs: bool) -> Probe {
        let layer = |name, available| Layer {
            name,
            available,
            detail: format!("{name} detail"),
        };
        Probe {
            layers: vec![
                layer("landlock-abi7", landlock),
                layer("seccomp", true),
                layer("namespaces", true),
            ],
            native_ready: landlock,
            euid: 0,
            bwrap: bwrap.map(PathBuf::from),
            bwrap_layer: Layer {
                name: "bwrap",
                available: bwrap_runs,
                detail: "bwrap: setting up uid map: Permission denied".to_owned(),
            },
            tree_limits: crate::cgroup::TreeLimitsState {
                kind: crate::cgroup::TreeLimitsKind::None,
                detail: "none here".to_owned(),
            },
        }
    }

    #[test]
    fn auto_without_landlock_takes_bwrap_only_when_it_runs_as_the_sandbox_user() {
        assert_eq!(
            best_of(&machine(true, None, false), true).unwrap(),
            Profile::Native
        );
        assert_eq!(
            best_of(&machine(false, Some("/usr/bin/bwrap"), true), true).unwrap(),
            Profile::Bwrap
        );
        // Installed but unable to create its user namespace as the
        // sandbox uid: refused, naming both what native lacks and why.
        let err = best_of(&machine(false, Some("/usr/bin/bwrap"), false), true).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("landlock-abi7"), "{msg}");
        assert!(
            msg.contains("bwrap unusable") && msg.contains("uid map"),
            "{msg}"
        );
        let err = best_of(&machine(false, None, false), true).unwrap_err();
        assert!(err.to_string().contains("bwrap not installed"), "{err}");
        // No seccomp: bwrap would run without the filter; refused.
        assert!(best_of(&machine(false, Some("/usr/bin/bwrap"), true), false).is_err());
    }
}
