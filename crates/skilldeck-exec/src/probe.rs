//! What isolation this machine offers, checked for real by each backend (a
//! ruleset is created, a child enters the namespaces, `bwrap` runs), for
//! `skilldeck sandbox`, for `auto`, and for tests that must take the
//! refusal path where a layer is missing.

use std::path::PathBuf;
use std::sync::OnceLock;

use serde::Serialize;

use crate::backend::{self, plan::Layer};
use crate::cgroup::{TreeLimitsState, tree_limits_state};
use crate::sys::seccomp_supported;

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

/// Asks each backend what this machine offers it (each checks its layers
/// for real, in its own file).
fn probe_now() -> Probe {
    let machine = backend::machine_layers();
    Probe {
        native_ready: machine.native.iter().all(|l| l.available),
        layers: machine.native,
        euid: crate::sys::euid(),
        bwrap: machine.bwrap,
        bwrap_layer: machine.bwrap_layer,
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
