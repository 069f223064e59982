//! Eligibility: whether this machine can run a skill, from its `requires`
//! blocks (see [`crate::spec::Requirements`]). Decided once per deck load
//! ([`crate::Deck::new`]): an ineligible skill stays in the deck, so errors
//! and `list --all` can say why, but is not served
//! ([`crate::Skill::is_served`]), so it leaves the catalog and the tool lists.
//!
//! The conditions:
//! - `bins`: every name is an executable file in a `PATH` folder;
//! - `anyBins`: at least one is;
//! - `env`: every variable is set and non-empty;
//! - `os`: the host's OS, in Node's `process.platform` names (`linux`,
//!   `darwin`, `win32`, `freebsd`, ...), is one of the list;
//! - `config`: every key is one the operator declared truthy for this
//!   context ([`EligibilityContext::with_config_keys`]). openclaw's keys
//!   name settings of openclaw's own configuration, which skilldeck does not
//!   have: unless declared, a config requirement is unmet (fail closed: a
//!   skill that needs a host setting is not offered where nobody said it
//!   is there).
//!
//! `PATH` is scanned once, lazily (only when a skill names a binary): one
//! directory listing per `PATH` folder, kept as a set of executable names.

use std::collections::{BTreeSet, HashSet};
use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::sync::OnceLock;

use crate::spec::requires::Requirements;

/// What eligibility is decided against: the OS, the executables on `PATH`,
/// the environment and the declared config keys.
#[derive(Debug)]
pub struct EligibilityContext {
    os: String,
    path: Option<OsString>,
    executables: OnceLock<HashSet<OsString>>,
    env: EnvSource,
    config: BTreeSet<String>,
}

#[derive(Debug)]
enum EnvSource {
    /// The process environment.
    Process,
    /// A fixed set of variables that are set and non-empty (tests, hosts
    /// that run skills with a different environment).
    Names(BTreeSet<String>),
}

/// Why a skill is not eligible: one sentence naming the unmet condition and
/// where it was declared.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Ineligible {
    /// The sentence (`needs 'jq' on PATH (requires.bins)`).
    pub reason: String,
}

/// The host OS in Node's `process.platform` names (what openclaw's `os`
/// lists use): `linux`, `darwin`, `win32`, `freebsd`, ...
pub fn host_os() -> &'static str {
    match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "win32",
        other => other,
    }
}

impl EligibilityContext {
    /// This process: its OS, `PATH` and environment; no config keys.
    pub fn from_process() -> Self {
        EligibilityContext {
            os: host_os().to_owned(),
            path: std::env::var_os("PATH"),
            executables: OnceLock::new(),
            env: EnvSource::Process,
            config: BTreeSet::new(),
        }
    }

    /// A fixed context: `os` (Node's names), a `PATH` value, and the names
    /// of the variables that are set.
    pub fn new(
        os: &str,
        path: Option<OsString>,
        env_set: impl IntoIterator<Item = String>,
    ) -> Self {
        EligibilityContext {
            os: os.to_owned(),
            path,
            executables: OnceLock::new(),
            env: EnvSource::Names(env_set.into_iter().collect()),
            config: BTreeSet::new(),
        }
    }

    /// Declares config keys truthy (see the module docs).
    pub fn with_config_keys(mut self, keys: impl IntoIterator<Item = String>) -> Self {
        self.config.extend(keys);
        self
    }

    /// True when `name` is an executable file in a `PATH` folder.
    pub fn has_bin(&self, name: &str) -> bool {
        if name.is_empty() || name.contains('/') {
            return false;
        }
        self.executables
            .get_or_init(|| scan_path(self.path.as_ref()))
            .contains(std::ffi::OsStr::new(name))
    }

    fn env_set(&self, name: &str) -> bool {
        match &self.env {
            EnvSource::Process => std::env::var_os(name).is_some_and(|v| !v.is_empty()),
            EnvSource::Names(names) => names.contains(name),
        }
    }

    /// The verdict for a skill with `requires` blocks: `Ok` when every
    /// condition of every block holds, else the first unmet one.
    pub fn check(&self, requires: &[Requirements]) -> Result<(), Ineligible> {
        for r in requires {
            let src = &r.source;
            let fail = |reason: String| Err(Ineligible { reason });
            if !r.os.is_empty() && !r.os.iter().any(|os| os == &self.os) {
                return fail(format!(
                    "runs only on {} and this host is {} ({src}.os)",
                    r.os.join(", "),
                    self.os
                ));
            }
            if let Some(bin) = r.bins.iter().find(|b| !self.has_bin(b)) {
                return fail(format!("needs '{bin}' on PATH ({src}.bins)"));
            }
            if !r.any_bins.is_empty() && !r.any_bins.iter().any(|b| self.has_bin(b)) {
                return fail(format!(
                    "needs one of {} on PATH ({src}.anyBins)",
                    r.any_bins.join(", ")
                ));
            }
            if let Some(var) = r.env.iter().find(|v| !self.env_set(v)) {
                return fail(format!(
                    "needs the environment variable {var} to be set ({src}.env)"
                ));
            }
            if let Some(key) = r.config.iter().find(|k| !self.config.contains(*k)) {
                return fail(format!(
                    "needs the host setting '{key}', which is not declared ({src}.config)"
                ));
            }
        }
        Ok(())
    }
}

/// The names of the executable files in the `PATH` folders.
fn scan_path(path: Option<&OsString>) -> HashSet<OsString> {
    let mut out = HashSet::new();
    let Some(path) = path else {
        return out;
    };
    for dir in std::env::split_paths(path) {
        let dir: PathBuf = dir;
        if dir.as_os_str().is_empty() {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            if out.contains(&name) {
                continue;
            }
            // Follows symlinks (`/usr/bin/python3 -> python3.12`).
            if std::fs::metadata(entry.path())
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            {
                out.insert(name);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(f: impl FnOnce(&mut Requirements)) -> Vec<Requirements> {
        let mut r = Requirements {
            source: "requires".to_owned(),
            ..Requirements::default()
        };
        f(&mut r);
        vec![r]
    }

    fn bin_dir() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let tool = dir.path().join("mytool");
        std::fs::write(&tool, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        // Present but not executable: not a binary.
        std::fs::write(dir.path().join("notexec"), "x").unwrap();
        dir
    }

    fn ctx(dir: &tempfile::TempDir) -> EligibilityContext {
        EligibilityContext::new(
            "linux",
            Some(dir.path().as_os_str().to_owned()),
            ["SET_VAR".to_owned()],
        )
    }

    #[test]
    fn bins_must_all_be_executables_on_path() {
        let dir = bin_dir();
        let c = ctx(&dir);
        assert!(c.check(&req(|r| r.bins = vec!["mytool".into()])).is_ok());
        let err = c
            .check(&req(|r| r.bins = vec!["mytool".into(), "notexec".into()]))
            .unwrap_err();
        assert_eq!(err.reason, "needs 'notexec' on PATH (requires.bins)");
        assert!(
            c.check(&req(|r| r.bins = vec!["../mytool".into()]))
                .is_err()
        );
    }

    #[test]
    fn any_bins_needs_one_of_them() {
        let dir = bin_dir();
        let c = ctx(&dir);
        assert!(
            c.check(&req(|r| r.any_bins = vec!["nope".into(), "mytool".into()]))
                .is_ok()
        );
        let err = c
            .check(&req(|r| r.any_bins = vec!["nope".into(), "notexec".into()]))
            .unwrap_err();
        assert!(
            err.reason.contains("needs one of nope, notexec"),
            "{}",
            err.reason
        );
    }

    #[test]
    fn env_names_must_be_set() {
        let dir = bin_dir();
        let c = ctx(&dir);
        assert!(c.check(&req(|r| r.env = vec!["SET_VAR".into()])).is_ok());
        let err = c
            .check(&req(|r| r.env = vec!["UNSET_VAR".into()]))
            .unwrap_err();
        assert!(err.reason.contains("UNSET_VAR"), "{}", err.reason);
    }

    #[test]
    fn os_must_be_listed() {
        let dir = bin_dir();
        let c = ctx(&dir);
        assert!(
            c.check(&req(|r| r.os = vec!["darwin".into(), "linux".into()]))
                .is_ok()
        );
        let err = c.check(&req(|r| r.os = vec!["win32".into()])).unwrap_err();
        assert_eq!(
            err.reason,
            "runs only on win32 and this host is linux (requires.os)"
        );
    }

    #[test]
    fn config_keys_are_unmet_unless_declared() {
        let dir = bin_dir();
        let need = req(|r| r.config = vec!["browser.enabled".into()]);
        assert!(ctx(&dir).check(&need).is_err());
        let declared = ctx(&dir).with_config_keys(["browser.enabled".to_owned()]);
        assert!(declared.check(&need).is_ok());
    }

    #[test]
    fn the_host_os_uses_node_platform_names() {
        #[cfg(target_os = "linux")]
        assert_eq!(host_os(), "linux");
        #[cfg(target_os = "macos")]
        assert_eq!(host_os(), "darwin");
    }
}
