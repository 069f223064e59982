//! What isolation this machine offers, checked for real (a ruleset is
//! created, a child enters the namespaces), for `skilldeck sandbox` and for
//! tests that must take the refusal path where a layer is missing.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::sync::OnceLock;

use serde::Serialize;

use crate::cgroup::{TreeLimitsState, tree_limits_state};
use crate::run::seccomp_supported;
use crate::sandbox;

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

fn probe_now() -> Probe {
    let euid = sandbox::euid();
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
            Ok(_) if seccomp_supported() => {
                "filter compiled; kernel reports Seccomp support".to_owned()
            }
            Ok(_) => "kernel does not report Seccomp in /proc/self/status".to_owned(),
            Err(e) => e.to_string(),
        },
    };
    let namespaces = namespaces_layer(euid);
    let layers = vec![landlock, seccomp, namespaces];
    Probe {
        native_ready: layers.iter().all(|l| l.available),
        layers,
        euid,
        bwrap: crate::interpreter::on_sandbox_path("bwrap"),
        tree_limits: tree_limits_state(),
    }
}

/// Spawns `/bin/true` in new PID, mount and network namespaces (after a
/// user namespace when not root).
fn namespaces_layer(euid: u32) -> Layer {
    let root = euid == 0;
    let mut cmd = std::process::Command::new("/bin/true");
    cmd.env_clear();
    // SAFETY: the closure runs between fork and exec and only calls
    // `unshare` with flags.
    #[allow(unsafe_code)]
    unsafe {
        cmd.pre_exec(move || {
            let mut flags = libc::CLONE_NEWPID | libc::CLONE_NEWNS | libc::CLONE_NEWNET;
            if !root {
                flags |= libc::CLONE_NEWUSER;
            }
            if libc::unshare(flags) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let how = if root {
        "as root, dropping to uid 65534"
    } else {
        "through a user namespace"
    };
    match cmd.status() {
        Ok(s) if s.success() => Layer {
            name: "namespaces",
            available: true,
            detail: format!("PID, mount and network namespaces ({how})"),
        },
        Ok(s) => Layer {
            name: "namespaces",
            available: false,
            detail: format!("test child ended with {s}"),
        },
        Err(e) => Layer {
            name: "namespaces",
            available: false,
            detail: format!("unshare(PID|mount|network) {how}: {e}"),
        },
    }
}

/// The strongest profile this machine offers (`auto` in the config): the
/// native one when every layer is there, else bubblewrap when installed;
/// else the refusal naming what is missing.
pub fn best_profile() -> Result<crate::policy::Profile, crate::error::ExecError> {
    let p = probe();
    if p.native_ready {
        Ok(crate::policy::Profile::Native)
    } else if p.bwrap.is_some() {
        Ok(crate::policy::Profile::Bwrap)
    } else {
        Err(crate::error::ExecError::Unavailable {
            missing: format!("{}; bwrap not installed", p.missing().join("; ")),
        })
    }
}
