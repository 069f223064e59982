//! The registry's test runs, run by the host layer: `registry serve`
//! composes the registry service with this [`TestRunner`] (the registry
//! crate may not depend on `skilldeck-host`: both are services, and no
//! dependency points sideways; the binary sits above both).
//!
//! Every rule of a run is the host's: the tool lookup, the argument check
//! against the tool's schema (nothing runs before it passes), the
//! `scripts/` scope of a script (`run_skill_script`'s), and the mapping
//! from an `[exec]` configuration to a sandbox policy
//! ([`Execution`]). This module only states the strict configuration
//! ([`exec_config`]: the registry's [`TestRunLimits`], no grants, no
//! variables, the strongest sandbox this machine has and never none) and
//! maps the host's answers onto the registry's wire types.

use serde_json::Value;
use skilldeck::deck::{ExecConfig, SandboxProfile};
use skilldeck::{DiscoveryOptions, ExplicitSkill};
use skilldeck_exec::{CallContext, ErrorKind, ExecError, Input, Outcome, Profile};
use skilldeck_host::SkillTools;
use skilldeck_host::execution::{Execution, Overrides, ScriptScope};
use skilldeck_host::{ToolError, ToolErrorKind};
use skilldeck_registry::wire::{TestRunOutcome, TestRunPolicy};
use skilldeck_registry::{TestRunJob, TestRunLimits, TestRunRefusal, TestRunTarget, TestRunner};

/// The agent id test runs carry (the script sees it as
/// `SKILLDECK_AGENT_ID`; the executor's per-agent cap counts by it).
pub const TEST_RUN_AGENT: &str = "registry-test-run";

/// The `[exec]` configuration of a test run: the registry's limits; the
/// strongest isolation this machine offers (`auto`: refused with what is
/// missing when there is none, never unsandboxed); no `[exec] env`, no
/// `[exec.skills]` grant (so no network, no extra path, no variable); no
/// dynamic context.
pub fn exec_config(limits: &TestRunLimits) -> ExecConfig {
    ExecConfig {
        enabled: true,
        sandbox: SandboxProfile::Auto,
        timeout_secs: limits.timeout.as_secs().max(1),
        output_cap_bytes: limits.output_cap_bytes,
        memory_bytes: limits.memory_bytes,
        max_processes: limits.max_processes,
        workdir_bytes: limits.workdir_bytes,
        file_size_bytes: limits.file_size_bytes,
        cpu_secs: limits.cpu_secs,
        concurrency: limits.concurrency.max(1),
        queue: limits.queue,
        env: Vec::new(),
        registry_env: Vec::new(),
        dynamic_context: false,
        skills: Default::default(),
        ..ExecConfig::default()
    }
}

/// Test runs through the host's [`Execution`] service (one executor, so
/// the test-run concurrency cap holds across requests).
#[derive(Debug)]
pub struct HostTestRunner {
    execution: Execution,
    limits: TestRunLimits,
}

impl HostTestRunner {
    /// A runner for the registry's `limits`.
    pub fn new(limits: &TestRunLimits) -> Self {
        HostTestRunner {
            execution: Execution::new(exec_config(limits)),
            limits: limits.clone(),
        }
    }

    /// The sandbox profile, refusing none (a test run is never
    /// unsandboxed, whatever `auto` resolved to).
    fn profile(&self) -> Result<Profile, TestRunRefusal> {
        match self.execution.profile() {
            Ok(Profile::None) => Err(TestRunRefusal::Unavailable(
                "no isolation profile is available (test runs never run unsandboxed)".to_owned(),
            )),
            Ok(profile) => Ok(profile),
            Err(e) => Err(refusal_of_exec(e)),
        }
    }

    fn summary(&self, limits: &TestRunLimits) -> Result<TestRunPolicy, TestRunRefusal> {
        self.profile()?;
        let policy = skilldeck_exec::policy_from_config(&exec_config(limits), TEST_RUN_AGENT)
            .map_err(refusal_of_exec)?;
        let effective = self.execution.executor().effective(&policy);
        Ok(policy_summary(&effective))
    }
}

fn policy_summary(effective: &skilldeck_exec::EffectivePolicy) -> TestRunPolicy {
    TestRunPolicy {
        profile: effective.profile.name().to_owned(),
        network: effective.network.is_granted(),
        timeout_secs: effective.limits.timeout.as_secs(),
        output_cap_bytes: u64::try_from(effective.limits.output_cap).unwrap_or(u64::MAX),
        memory_bytes: effective.limits.memory_bytes,
        max_processes: effective.limits.max_processes,
        workdir_bytes: effective.limits.workdir_bytes,
        layers: effective.layers.iter().map(|l| (*l).to_owned()).collect(),
    }
}

fn refusal_of_exec(e: ExecError) -> TestRunRefusal {
    let text = e.to_string();
    match e.kind() {
        ErrorKind::Denied => TestRunRefusal::Denied(text),
        ErrorKind::Unavailable => TestRunRefusal::Unavailable(text),
        ErrorKind::InvalidInput => TestRunRefusal::Invalid(text),
        ErrorKind::Busy => TestRunRefusal::Busy(text),
        ErrorKind::Io => TestRunRefusal::Failed(text),
    }
}

fn refusal_of_tool(e: ToolError) -> TestRunRefusal {
    match e.kind {
        ToolErrorKind::UnknownTool => TestRunRefusal::UnknownTool(e.message),
        ToolErrorKind::InvalidArguments => TestRunRefusal::InvalidArguments {
            pointer: "/".to_owned(),
            detail: e.message,
        },
        ToolErrorKind::Denied => TestRunRefusal::Denied(e.message),
        ToolErrorKind::Unavailable => TestRunRefusal::Unavailable(e.message),
        ToolErrorKind::Busy => TestRunRefusal::Busy(e.message),
        ToolErrorKind::UnknownSkill
        | ToolErrorKind::NotModelInvocable
        | ToolErrorKind::Failed
        | ToolErrorKind::ExecutionFailed
        | ToolErrorKind::TimedOut => TestRunRefusal::Invalid(e.message),
    }
}

fn outcome_of(outcome: &Outcome) -> TestRunOutcome {
    TestRunOutcome {
        exit_code: outcome.exit_code,
        signal: outcome.signal,
        timed_out: outcome.timed_out,
        success: outcome.success(),
        stdout: String::from_utf8_lossy(&outcome.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&outcome.stderr).into_owned(),
        stdout_truncated: outcome.stdout_truncated,
        stderr_truncated: outcome.stderr_truncated,
        structured: serde_json::from_slice::<Value>(&outcome.stdout).ok(),
        duration_ms: u64::try_from(outcome.duration.as_millis()).unwrap_or(u64::MAX),
        refusals: outcome.refusals.total(),
        refusals_summary: if outcome.refusals.is_empty() {
            None
        } else {
            Some(outcome.refusals.summary())
        },
        policy: policy_summary(&outcome.policy),
    }
}

impl TestRunner for HostTestRunner {
    fn policy(&self, limits: &TestRunLimits) -> Result<TestRunPolicy, TestRunRefusal> {
        self.summary(limits)
    }

    fn run(&self, job: TestRunJob<'_>) -> Result<TestRunOutcome, TestRunRefusal> {
        if *job.limits != self.limits {
            return Err(TestRunRefusal::Failed(
                "the test runner was built for other limits than the registry's".to_owned(),
            ));
        }
        // Checked before anything is loaded; the executor checks the
        // profile again for the run itself.
        self.profile()?;
        let deck = skilldeck::discover(&DiscoveryOptions {
            explicit: vec![ExplicitSkill {
                name: job.skill.to_owned(),
                path: job.skill_dir.to_path_buf(),
                mode: None,
            }],
            ..DiscoveryOptions::default()
        });
        let context = CallContext::local(TEST_RUN_AGENT);
        let prepared = match job.target {
            TestRunTarget::Tool { name, arguments } => {
                let tools = SkillTools::build(&deck);
                let full_name = Execution::tool_full_name(&deck, &tools, job.skill, name)
                    .map_err(refusal_of_tool)?;
                // The host's check, for the failing field's pointer (the
                // same check `prepare_tool` makes; nothing runs before it).
                if let Err(e) = tools.check_arguments(&deck, &full_name, arguments) {
                    let detail = e.to_string();
                    return Err(match e {
                        skilldeck_host::Error::InvalidToolArguments { path, .. } => {
                            TestRunRefusal::InvalidArguments {
                                pointer: path,
                                detail,
                            }
                        }
                        other => refusal_of_tool(other.to_tool_error()),
                    });
                }
                let prepared =
                    Execution::prepare_tool(&deck, &tools, &full_name, arguments, context)
                        .map_err(refusal_of_tool)?;
                return self.finish(prepared);
            }
            TestRunTarget::Script { path, args } => Execution::prepare_script(
                &deck,
                job.skill,
                path,
                ScriptScope::Scripts,
                args.clone(),
                Input::Null,
                CallContext {
                    tool: path.clone(),
                    ..context
                },
            )
            .map_err(refusal_of_tool)?,
        };
        self.finish(prepared)
    }
}

impl HostTestRunner {
    fn finish(
        &self,
        prepared: skilldeck_host::execution::PreparedRun<'_>,
    ) -> Result<TestRunOutcome, TestRunRefusal> {
        let outcome = self
            .execution
            .execute(prepared, &Overrides::default())
            .map_err(refusal_of_exec)?;
        Ok(outcome_of(&outcome))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_run_config_grants_nothing_and_never_runs_unsandboxed() {
        let config = exec_config(&TestRunLimits::default());
        assert_eq!(config.sandbox, SandboxProfile::Auto);
        assert!(config.skills.is_empty(), "no per-skill grant");
        assert!(config.env.is_empty() && config.registry_env.is_empty());
        let policy = skilldeck_exec::policy_from_config(&config, "any-skill");
        if let Ok(policy) = policy {
            assert!(!policy.grants.network.is_granted());
            assert!(policy.grants.read_paths.is_empty());
            assert!(policy.grants.env.is_empty());
            assert_eq!(
                policy.limits.timeout,
                skilldeck_registry::TestRunLimits::default().timeout
            );
        }
    }
}
