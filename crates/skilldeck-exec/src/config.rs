//! The operator's `[exec]` section of `skilldeck.toml` (the core's
//! [`ExecConfig`], data only) turned into a [`Policy`] for one skill and the
//! [`ExecutorConfig`] of a host. This is the one mapping from config to
//! policy: the host's `Execution` calls it (every face goes through the
//! host), nothing else builds a policy from config.

use skilldeck::deck::{ExecConfig, SandboxProfile};

use crate::error::ExecError;
use crate::limiter::Caps;
use crate::policy::{DEFAULT_OPEN_FILES, DEFAULT_QUEUE_WAIT, Grants, Limits, Policy, Profile};
use crate::probe::best_profile;
use crate::run::ExecutorConfig;

/// The profile the config names; `auto` is the strongest this machine
/// offers ([`best_profile`]), or the refusal naming what is missing.
pub fn profile_from_config(profile: SandboxProfile) -> Result<Profile, ExecError> {
    match profile {
        SandboxProfile::Auto => best_profile(),
        SandboxProfile::Landlock => Ok(Profile::Native),
        SandboxProfile::Bwrap => Ok(Profile::Bwrap),
        SandboxProfile::None => Ok(Profile::None),
    }
}

/// The policy for skill `skill` under `exec`: the `[exec]` limits (capped),
/// the `[exec] env` names plus the skill's grant (`[exec.skills.<skill>]`:
/// network, extra read paths, extra variables; each variable once, in
/// that order). A skill never grants itself anything.
///
/// Relative read paths in the grants must already be resolved against the
/// config file's folder (`skilldeck_host::HostOptions::from_config` does
/// it); they are used as given.
pub fn policy_from_config(exec: &ExecConfig, skill: &str) -> Result<Policy, ExecError> {
    let grant = exec.grant(skill);
    let mut env: Vec<String> = Vec::with_capacity(exec.env.len() + grant.env.len());
    for name in exec.env.iter().chain(grant.env.iter()) {
        if !env.contains(name) {
            env.push(name.clone());
        }
    }
    Ok(Policy {
        profile: profile_from_config(exec.sandbox)?,
        limits: Limits {
            timeout: std::time::Duration::from_secs(exec.timeout_secs),
            output_cap: usize::try_from(exec.output_cap_bytes).unwrap_or(usize::MAX),
            memory_bytes: exec.memory_bytes,
            max_processes: exec.max_processes,
            workdir_bytes: exec.workdir_bytes,
            file_size_bytes: exec.file_size_bytes,
            cpu_seconds: exec.cpu_secs,
            open_files: DEFAULT_OPEN_FILES,
        }
        .capped(),
        grants: Grants {
            network: grant.network,
            allow_ranges: exec.network_allow_ranges.clone(),
            read_paths: grant.read,
            write_paths: Vec::new(),
            env,
        },
        tree_limits: exec.tree_limits,
        keep_workdir: false,
        bin_dirs: Vec::new(),
        vars: Vec::new(),
        node_modules: None,
    })
}

/// The executor settings under `exec`: `concurrency` overall and per
/// agent, `queue` waiting callers.
pub fn executor_config(exec: &ExecConfig) -> ExecutorConfig {
    ExecutorConfig {
        caps: Caps {
            total: exec.concurrency,
            per_agent: exec.concurrency,
            queue: exec.queue,
            wait: DEFAULT_QUEUE_WAIT,
        },
        work_root: None,
        resolver: crate::proxy::Resolver::System,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn the_exec_section_and_the_skills_grant_make_the_policy() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("skilldeck.toml");
        std::fs::write(
            &path,
            "[exec]\nsandbox = \"none\"\ntimeout-secs = 7\noutput-cap-bytes = 1000\n\
             memory-bytes = 100000000\nmax-processes = 9\nconcurrency = 2\nqueue = 5\n\
             env = [\"A_VAR\"]\n[exec.skills.web]\nnetwork = true\nread = [\"data\"]\nenv = [\"TOKEN\"]\n",
        )
        .unwrap();
        let config = skilldeck::Config::load(&path).unwrap();
        let mut exec = config.exec.clone();
        for grant in exec.skills.values_mut() {
            for p in &mut grant.read {
                *p = config.resolve(p);
            }
        }
        let web = policy_from_config(&exec, "web").unwrap();
        assert_eq!(web.profile, Profile::None);
        assert_eq!(web.limits.timeout, std::time::Duration::from_secs(7));
        assert_eq!(web.limits.output_cap, 1000);
        assert_eq!(web.limits.memory_bytes, 100_000_000);
        assert_eq!(web.limits.max_processes, 9);
        assert!(web.grants.network.is_all());
        assert_eq!(web.grants.read_paths, vec![dir.path().join("data")]);
        assert_eq!(web.grants.env, vec!["A_VAR".to_owned(), "TOKEN".to_owned()]);
        let other = policy_from_config(&exec, "other").unwrap();
        assert!(!other.grants.network.is_granted() && other.grants.read_paths.is_empty());
        assert_eq!(other.grants.env, vec!["A_VAR".to_owned()]);
        let caps = executor_config(&exec).caps;
        assert_eq!((caps.total, caps.per_agent, caps.queue), (2, 2, 5));
    }

    #[test]
    fn the_config_default_limits_are_the_sandbox_defaults() {
        // One table: the `[exec]` defaults of an empty config are the
        // limits and caps a default policy and executor apply.
        let exec = ExecConfig {
            sandbox: SandboxProfile::None,
            ..ExecConfig::default()
        };
        let from_config = policy_from_config(&exec, "any").unwrap();
        assert_eq!(from_config.limits, Limits::default());
        assert_eq!(Limits::default().capped(), Limits::default());
        assert_eq!(executor_config(&exec), ExecutorConfig::default());
        assert_eq!(
            crate::policy::MAX_TIMEOUT.as_secs(),
            skilldeck::limits::MAX_EXEC_TIMEOUT_SECS
        );
        assert_eq!(
            crate::policy::MAX_OUTPUT_CAP as u64,
            skilldeck::limits::MAX_EXEC_OUTPUT_CAP_BYTES
        );
    }

    #[test]
    fn landlock_and_bwrap_name_their_profiles_and_auto_asks_the_machine() {
        assert_eq!(
            profile_from_config(SandboxProfile::Landlock).unwrap(),
            Profile::Native
        );
        assert_eq!(
            profile_from_config(SandboxProfile::Bwrap).unwrap(),
            Profile::Bwrap
        );
        assert_eq!(
            profile_from_config(SandboxProfile::Auto).ok(),
            best_profile().ok()
        );
    }
}
