//! No isolation (profile `none`, the operator's explicit choice): a
//! cleared environment, rlimits, timeout and output caps only. The child
//! leads its own session, whose process group is killed on timeout; a
//! `setsid` daemon may survive (tree limits, where a cgroup exists, still
//! kill it).

use super::plan::{Backend, PlanInput, SpawnPlan};
use crate::error::ExecError;
use crate::policy::{Policy, Profile};
use crate::sandbox::{self, Plan};

/// No sandbox.
pub(crate) struct Unconfined;

impl Backend for Unconfined {
    fn profile(&self) -> Profile {
        Profile::None
    }

    /// Nothing to enforce for paths (every path the caller can reach is
    /// open anyway).
    /// A host-list network grant is refused: nothing here keeps the
    /// script off the network, so the names could not be enforced.
    fn check(&self, policy: &Policy) -> Result<(), ExecError> {
        super::plan::check_network(policy, false)
    }

    fn isolates(&self) -> bool {
        false
    }

    fn layers(&self, _policy: &Policy, _root: bool) -> Vec<&'static str> {
        Vec::new()
    }

    fn plan(&self, input: &PlanInput<'_>) -> Result<SpawnPlan, ExecError> {
        Ok(SpawnPlan {
            wrapper: None,
            child: Plan {
                native: false,
                drop_root: false,
                user_maps: None,
                new_netns: false,
                bind: None,
                workdir_mount: None,
                landlock: None,
                seccomp: Vec::new(),
                rlimits: sandbox::rlimits(input.limits),
                status_fd: input.status_fd,
                inherit_fds: Vec::new(),
                channel_fd: None,
                proxy_port: None,
                proxy_own_netns: false,
                notify_program: None,
            },
            keep_open: Vec::new(),
            skill_dir: input.skill_real.to_path_buf(),
            write_rules: None,
        })
    }
}
