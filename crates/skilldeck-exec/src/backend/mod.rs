//! Sandbox backends behind one seam. A [`plan::Backend`] turns a policy
//! into a [`plan::SpawnPlan`]; `crate::spawn` runs any plan the same way.
//! The profile is matched here and nowhere else: [`for_profile`] picks the
//! backend, everything after asks the backend.
//!
//! - `native`: namespaces, Landlock, seccomp, rlimits, uid drop, in
//!   process ([`native`]);
//! - `bwrap`: bubblewrap plus the same seccomp filter and rlimits
//!   ([`bwrap`]);
//! - `none`: no isolation ([`none`]);
//! - any other OS: [`unsupported`], which refuses every run. A seatbelt
//!   (macOS) or container backend is one more file implementing the trait
//!   and one more arm below.

pub(crate) mod plan;

#[cfg(target_os = "linux")]
mod bwrap;
#[cfg(target_os = "linux")]
mod native;
#[cfg(target_os = "linux")]
mod none;
// Compiled everywhere so its refusal is tested on Linux too; selected
// only where no other backend exists.
#[cfg_attr(target_os = "linux", allow(dead_code))]
mod unsupported;

use std::path::PathBuf;

use crate::policy::Profile;
use plan::{Backend, Layer};

/// What this machine offers each backend.
pub(crate) struct MachineLayers {
    /// Each layer the native backend needs, in order.
    pub native: Vec<Layer>,
    /// `bwrap` on the system PATH.
    pub bwrap: Option<PathBuf>,
    /// The bwrap backend checked for real.
    pub bwrap_layer: Layer,
}

/// What this machine offers each backend, each checked for real by the
/// backend's own file (uncached: `crate::probe::probe` caches).
#[cfg(target_os = "linux")]
pub(crate) fn machine_layers() -> MachineLayers {
    let (bwrap, bwrap_layer) = bwrap::machine_layer().clone();
    MachineLayers {
        native: native::machine_layers(crate::sys::euid()),
        bwrap,
        bwrap_layer,
    }
}

/// Without Linux no layer exists: each is reported missing, naming the
/// OS, so `auto` refuses and `skilldeck sandbox` says why.
#[cfg(not(target_os = "linux"))]
pub(crate) fn machine_layers() -> MachineLayers {
    let os = std::env::consts::OS;
    let missing = |name: &'static str| Layer {
        name,
        available: false,
        detail: format!("no sandbox backend on this OS: {os}"),
    };
    MachineLayers {
        native: vec![
            missing("landlock-abi7"),
            missing("seccomp"),
            missing("namespaces"),
        ],
        bwrap: None,
        bwrap_layer: missing("bwrap"),
    }
}

/// The backend enforcing `profile` on this OS.
#[cfg(target_os = "linux")]
pub(crate) fn for_profile(profile: Profile) -> &'static dyn Backend {
    match profile {
        Profile::Native => &native::Native,
        Profile::Bwrap => &bwrap::Bwrap,
        Profile::None => &none::Unconfined,
    }
}

/// The backend enforcing `profile` on this OS: none exists here, so every
/// run is refused, naming the OS.
#[cfg(not(target_os = "linux"))]
pub(crate) fn for_profile(profile: Profile) -> &'static dyn Backend {
    use unsupported::Unsupported;
    const OS: &str = std::env::consts::OS;
    match profile {
        Profile::Native => &Unsupported {
            profile: Profile::Native,
            os: OS,
        },
        Profile::Bwrap => &Unsupported {
            profile: Profile::Bwrap,
            os: OS,
        },
        Profile::None => &Unsupported {
            profile: Profile::None,
            os: OS,
        },
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::path::PathBuf;

    use super::*;
    use crate::error::ErrorKind;
    use crate::policy::Policy;

    const PROFILES: [Profile; 3] = [Profile::Native, Profile::Bwrap, Profile::None];

    #[test]
    fn each_profile_is_enforced_by_its_own_backend() {
        for profile in PROFILES {
            assert_eq!(for_profile(profile).profile(), profile);
        }
    }

    #[test]
    fn every_backend_refuses_a_policy_it_cannot_enforce() {
        // A grant of a path that is not there: no sandbox can open or bind
        // it. Every isolating backend refuses before anything is created,
        // naming the path (or, on a machine without its layers, naming
        // the missing layer: it refuses either way).
        for profile in PROFILES {
            let backend = for_profile(profile);
            if !backend.isolates() {
                continue;
            }
            for write in [false, true] {
                let mut policy = Policy {
                    profile,
                    ..Policy::default()
                };
                let missing = PathBuf::from("/nonexistent/skilldeck-grant");
                if write {
                    policy.grants.write_paths = vec![missing];
                } else {
                    policy.grants.read_paths = vec![missing];
                }
                let err = backend.check(&policy).expect_err(profile.name());
                match err.kind() {
                    ErrorKind::InvalidInput => assert!(
                        err.to_string().contains("/nonexistent/skilldeck-grant"),
                        "{}: {err}",
                        profile.name()
                    ),
                    ErrorKind::Unavailable => {}
                    other => panic!("{}: {other:?}: {err}", profile.name()),
                }
            }
        }
        // An OS without a backend refuses every policy, naming the OS.
        for profile in PROFILES {
            let backend = unsupported::Unsupported {
                profile,
                os: "plan9",
            };
            let err = backend.check(&Policy::default()).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Unavailable);
            assert!(
                err.to_string()
                    .contains("no sandbox backend on this OS: plan9"),
                "{err}"
            );
        }
    }

    #[test]
    fn only_an_isolating_backend_caps_the_work_directory_and_drops_root() {
        let policy = Policy::default();
        for profile in PROFILES {
            let backend = for_profile(profile);
            let isolates = profile != Profile::None;
            assert_eq!(backend.isolates(), isolates, "{}", profile.name());
            assert_eq!(
                backend.workdir_quota(&policy).is_some(),
                isolates,
                "{}",
                profile.name()
            );
            let kept = Policy {
                keep_workdir: true,
                ..policy.clone()
            };
            assert_eq!(backend.workdir_quota(&kept), None);
            assert_eq!(
                backend.script_uid(0),
                if isolates {
                    crate::policy::SANDBOX_UID
                } else {
                    0
                }
            );
            assert_eq!(backend.script_uid(1000), 1000);
        }
    }
}
