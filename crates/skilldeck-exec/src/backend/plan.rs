//! The seam itself: what a sandbox [`Backend`] is asked (can this machine
//! enforce the policy, which layers does it stack) and what it answers
//! with for one run (a [`SpawnPlan`]), which the one spawner
//! (`crate::spawn`) executes without knowing which backend made it.

#[cfg(target_os = "linux")]
use std::ffi::OsString;
#[cfg(target_os = "linux")]
use std::fs::File;
#[cfg(target_os = "linux")]
use std::os::fd::RawFd;
#[cfg(target_os = "linux")]
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::ExecError;
#[cfg(target_os = "linux")]
use crate::policy::Limits;
use crate::policy::{Policy, Profile, SANDBOX_UID};
#[cfg(target_os = "linux")]
use crate::sandbox;
#[cfg(target_os = "linux")]
use crate::workdir::WorkDir;

/// A way of enforcing a [`Policy`] on one process tree: the native layers
/// (namespaces, Landlock, seccomp, rlimits), bubblewrap, or none. A
/// backend refuses what it cannot enforce; it never runs with less.
pub(crate) trait Backend: Sync {
    /// The profile this backend enforces.
    fn profile(&self) -> Profile;

    /// Refuses, naming what is missing, when this machine cannot enforce
    /// `policy` with this backend ([`ExecError::Unavailable`]), or when
    /// the policy asks for something no sandbox can grant (a granted path
    /// that does not exist: [`ExecError::InvalidInput`]). Called before a
    /// slot is taken and before anything is created.
    fn check(&self, policy: &Policy) -> Result<(), ExecError>;

    /// The script runs in a mount namespace of its own, where the skill
    /// folder is bound read-only at the work directory's `skill` mount
    /// point and the work directory is a size-capped tmpfs; a root caller
    /// drops to [`SANDBOX_UID`].
    fn isolates(&self) -> bool;

    /// The isolation layers this backend stacks for `policy` (`root`: the
    /// caller is root), for [`crate::run::EffectivePolicy`]; the layers
    /// every run shares (cgroup, work-dir tmpfs, rlimits, cleared
    /// environment, timeout) are added by the caller.
    fn layers(&self, policy: &Policy, root: bool) -> Vec<&'static str>;

    /// The plan of one run under `input.policy`: what the spawned child
    /// does before it execs, and the program that wraps the script, if
    /// any.
    #[cfg(target_os = "linux")]
    fn plan(&self, input: &PlanInput<'_>) -> Result<SpawnPlan, ExecError>;

    /// The work directory's size cap under `policy`: a tmpfs in the
    /// sandbox's mount namespace, unless the operator keeps the work
    /// directory for debugging (it is then a host folder).
    fn workdir_quota(&self, policy: &Policy) -> Option<u64> {
        (self.isolates() && !policy.keep_workdir).then_some(policy.limits.workdir_bytes)
    }

    /// The uid the script runs as, in the host's view (`euid`: the
    /// caller's).
    fn script_uid(&self, euid: u32) -> u32 {
        if self.isolates() && euid == 0 {
            SANDBOX_UID
        } else {
            euid
        }
    }
}

/// What a backend needs to plan one run.
#[cfg(target_os = "linux")]
pub(crate) struct PlanInput<'a> {
    /// The policy (its limits as given; see `limits`).
    pub policy: &'a Policy,
    /// The limits in force (already capped).
    pub limits: &'a Limits,
    /// The skill folder on the host (symlinks resolved).
    pub skill_real: &'a Path,
    /// The run's work directory.
    pub workdir: &'a WorkDir,
    /// The write end of the status pipe the child reports on.
    pub status_fd: RawFd,
    /// The child's end of the descriptor channel (see
    /// `sandbox::Plan::channel_fd`).
    pub channel_fd: RawFd,
}

/// One run as a backend planned it; executed by `crate::spawn`.
#[cfg(target_os = "linux")]
pub(crate) struct SpawnPlan {
    /// The program that wraps the script and its arguments up to (not
    /// including) the script's program, e.g. `bwrap` and its mounts;
    /// `None`: the script's program is executed directly.
    pub wrapper: Option<(PathBuf, Vec<OsString>)>,
    /// What the spawned child does between fork and exec.
    pub child: sandbox::Plan,
    /// Descriptors the child inherits (their numbers are in
    /// `child.inherit_fds`), kept open until the spawn returned.
    pub keep_open: Vec<File>,
    /// The skill folder as the script sees it.
    pub skill_dir: PathBuf,
    /// What the run may write, for counting the writes refused outside it
    /// (native profile: its seccomp listener hands them to the parent);
    /// `None`: writes outside are enforced but not counted.
    #[cfg(target_os = "linux")]
    pub write_rules: Option<crate::writes::WriteRules>,
}

#[cfg(target_os = "linux")]
impl SpawnPlan {
    /// On timeout, killing the pid the child reported kills the whole run
    /// (the init of a PID namespace); otherwise its process group is
    /// killed too.
    pub(crate) fn kills_by_namespace(&self) -> bool {
        self.child.native
    }
}

/// Refuses a granted read or write path that does not exist: a sandbox
/// can only open (Landlock) or bind (bwrap) what is there, and a run
/// without the grant would fail later in a way the operator cannot read.
pub(crate) fn check_granted_paths(policy: &Policy) -> Result<(), ExecError> {
    for path in policy
        .grants
        .read_paths
        .iter()
        .chain(policy.grants.write_paths.iter())
    {
        if let Err(e) = std::fs::metadata(path) {
            return Err(ExecError::InvalidInput(format!(
                "granted path {}: {e} (fix or remove it in the skill's [exec.skills.<name>] grant)",
                path.display()
            )));
        }
    }
    Ok(())
}

/// Refuses a host-list network grant this backend cannot enforce, and a
/// range allowance without one (it would mean nothing).
pub(crate) fn check_network(policy: &Policy, enforces_hosts: bool) -> Result<(), ExecError> {
    if let skilldeck::deck::NetworkGrant::Hosts(_) = policy.grants.network
        && !enforces_hosts
    {
        return Err(ExecError::Unavailable {
            missing: format!(
                "a network grant by host name needs a sandbox that keeps the script off the network but for skilldeck's proxy; profile {} cannot (use profile native or bwrap, or grant network = true)",
                policy.profile.name()
            ),
        });
    }
    Ok(())
}

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
