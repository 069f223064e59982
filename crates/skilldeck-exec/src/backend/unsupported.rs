//! The backend of an operating system without one: every policy is
//! refused, naming the OS and what the profiles need (security fails
//! closed). Selected by `super::for_profile` where `target_os` is not
//! Linux; compiled everywhere, so its refusal is tested on every machine.

use super::plan::Backend;
#[cfg(target_os = "linux")]
use super::plan::{PlanInput, SpawnPlan};
use crate::error::ExecError;
use crate::policy::{Policy, Profile};

/// Refuses every run: no sandbox backend exists for this OS yet.
pub(crate) struct Unsupported {
    /// The profile the operator asked for.
    pub profile: Profile,
    /// The operating system (`std::env::consts::OS`).
    pub os: &'static str,
}

impl Unsupported {
    fn refusal(&self) -> ExecError {
        ExecError::Unavailable {
            missing: format!(
                "no sandbox backend on this OS: {} (profile {} needs Linux: namespaces, Landlock and seccomp, or bubblewrap; a seatbelt or container backend is not built yet)",
                self.os,
                self.profile.name()
            ),
        }
    }
}

impl Backend for Unsupported {
    fn profile(&self) -> Profile {
        self.profile
    }

    fn check(&self, _policy: &Policy) -> Result<(), ExecError> {
        Err(self.refusal())
    }

    fn isolates(&self) -> bool {
        self.profile != Profile::None
    }

    fn layers(&self, _policy: &Policy, _root: bool) -> Vec<&'static str> {
        Vec::new()
    }

    #[cfg(target_os = "linux")]
    fn plan(&self, _input: &PlanInput<'_>) -> Result<SpawnPlan, ExecError> {
        Err(self.refusal())
    }
}
