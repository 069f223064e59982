//! Test runs: a tool or a script of one stored version, run in this
//! registry host's sandbox under a strict policy
//! ([`TestRunLimits`]: no network, no grants, short timeout, small caps),
//! so a platform team can try a skill before assigning it.
//!
//! The registry decides everything that is a registry rule: who may
//! (admin, or `publish:<namespace>`: [`Principal::require_test_run`]),
//! how often (a token bucket per principal, [`RateLimiter`]), which
//! version (a label resolves; a blocked version never runs), the policy,
//! the audit line. Running is the host layer's: the registry cannot
//! depend on `skilldeck-host` (both are services, and no dependency points
//! sideways), so it asks a [`TestRunner`] that the binary composing the
//! server supplies (`skilldeck registry serve` builds one on the host's
//! `Execution` service, where the argument checks and the mapping from a
//! configuration to a sandbox policy live). A registry started without one
//! refuses test runs with 503 `registry-sandbox-unavailable` (fails
//! closed), as does a runner on a machine without the sandbox.
//!
//! The version's canonical archive is unpacked from the blob store with
//! the package crate's safe unpack into a private folder under this
//! process's staging folder, run as a one-skill deck, and removed (a
//! killed process's leftovers go with the staging sweep at the next
//! start).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::json;

use crate::error::RegistryError;
use crate::names::SkillRef;
use crate::service::config::{MAX_TEST_RUN_ARGS, TestRunLimits};
use crate::service::metrics::{failure_outcome, metrics};
use crate::service::principal::Principal;
use crate::service::registry::Registry;
use crate::service::runner::{TestRunJob, TestRunRefusal, TestRunTarget, TestRunner};
use crate::service::store::archive_key;
use crate::wire::{
    TestRunOutcome, TestRunPolicy, TestRunRequest, TestRunResult, TestRunTargets, TestRunTool,
};

/// The folder of a skill a script test run may start files from (the
/// model's scope: `run_skill_script`'s).
pub const TEST_RUN_SCRIPTS_DIR: &str = "scripts/";

/// The target of a request, checked for shape (exactly one of a tool and
/// a script; the script's path, its argument count and text).
fn target_of(request: TestRunRequest) -> Result<TestRunTarget, RegistryError> {
    let bad = |detail: &str| RegistryError::bad_request("registry-invalid-test-run", detail);
    match (request.tool, request.script) {
        (Some(name), None) => {
            if !request.args.is_empty() {
                return Err(bad(
                    "'args' belongs to a script; a tool takes its 'arguments' object",
                ));
            }
            RegistryError::check_text("tool", &name)?;
            Ok(TestRunTarget::Tool {
                name,
                arguments: request.arguments.unwrap_or_else(|| json!({})),
            })
        }
        (None, Some(path)) => {
            if request.arguments.is_some() {
                return Err(bad(
                    "'arguments' belongs to a tool; a script takes its 'args' list",
                ));
            }
            let path = skilldeck_package::check_entry_path(path.as_bytes()).map_err(|why| {
                RegistryError::bad_request(
                    "registry-invalid-path",
                    format!("script '{path}': {why}"),
                )
            })?;
            if request.args.len() > MAX_TEST_RUN_ARGS {
                return Err(bad(&format!(
                    "{} script arguments; at most {MAX_TEST_RUN_ARGS}",
                    request.args.len()
                )));
            }
            for arg in &request.args {
                RegistryError::check_text("a script argument", arg)?;
            }
            Ok(TestRunTarget::Script {
                path,
                args: request.args,
            })
        }
        (Some(_), Some(_)) => Err(bad("give either 'tool' or 'script', not both")),
        (None, None) => Err(bad(
            "give 'tool' (with 'arguments') or 'script' (with 'args')",
        )),
    }
}

/// `sha256:<hex>` of what was asked to run with (the tool's arguments as
/// JSON, or the script's arguments as a JSON array).
fn arguments_sha256(target: &TestRunTarget) -> String {
    let bytes = match target {
        TestRunTarget::Tool { arguments, .. } => serde_json::to_vec(arguments),
        TestRunTarget::Script { args, .. } => serde_json::to_vec(args),
    }
    .unwrap_or_default();
    skilldeck::digest::sha256_digest(&bytes)
}

/// Unpacks `archive` (already checked against its digest) into a private
/// folder under `within`, runs `target` there and removes the folder.
fn unpack_and_run(
    archive: &[u8],
    within: &Path,
    package: skilldeck_package::PackageLimits,
    runner: &dyn TestRunner,
    target: &TestRunTarget,
    limits: &TestRunLimits,
) -> Result<Result<TestRunOutcome, TestRunRefusal>, RegistryError> {
    let tmp = tempfile::Builder::new()
        .prefix("test-run-")
        .tempdir_in(within)
        .map_err(|e| RegistryError::io(within, e))?;
    let options = skilldeck_package::UnpackOptions {
        limits: package,
        ..Default::default()
    };
    let staging: PathBuf = tmp.path().join("skill");
    let unpacked =
        skilldeck_package::unpack(&write_archive(archive, tmp.path())?, &staging, &options)
            .map_err(|e| RegistryError::Internal(format!("unpacking a stored version: {e}")))?;
    let outcome = runner.run(TestRunJob {
        skill_dir: &unpacked.dir,
        skill: &unpacked.name,
        target,
        limits,
    });
    // `tmp` is removed here, whatever the run left.
    drop(tmp);
    Ok(outcome)
}

/// Writes the archive next to where it unpacks (`unpack` reads a file).
fn write_archive(archive: &[u8], dir: &Path) -> Result<PathBuf, RegistryError> {
    let path = dir.join("package.tar.gz");
    std::fs::write(&path, archive).map_err(|e| RegistryError::io(&path, e))?;
    Ok(path)
}

impl Registry {
    /// Supplies the runner of test runs (once; the binary composing the
    /// server does it). Without one, test runs are refused with 503.
    pub fn set_test_runner(&self, runner: Arc<dyn TestRunner>) -> Result<(), RegistryError> {
        self.inner
            .test_runner
            .set(runner)
            .map_err(|_| RegistryError::Config("the test runner is already set".to_owned()))
    }

    /// The runner, or 503 naming what is missing.
    fn test_runner(&self) -> Result<Arc<dyn TestRunner>, RegistryError> {
        self.inner.test_runner.get().cloned().ok_or_else(|| {
            TestRunRefusal::Unavailable(
                "this registry was started without a sandbox runner (`skilldeck registry serve` \
                 supplies one)"
                    .to_owned(),
            )
            .into()
        })
    }

    /// The policy a test run gets here, or 503 naming what is missing.
    async fn test_run_policy(
        &self,
        runner: Arc<dyn TestRunner>,
    ) -> Result<TestRunPolicy, RegistryError> {
        let limits = self.inner.limits.test_run.clone();
        tokio::task::spawn_blocking(move || runner.policy(&limits))
            .await
            .map_err(|e| RegistryError::Internal(format!("test-run task: {e}")))?
            .map_err(RegistryError::from)
    }

    /// What version `v` of `skill` can test-run: its tools (with their
    /// schemas) and its scripts, and the policy a run gets (admin or
    /// `publish:<namespace>`).
    pub async fn test_run_targets(
        &self,
        p: &Principal,
        skill: &SkillRef,
        v: &str,
    ) -> Result<TestRunTargets, RegistryError> {
        p.require_test_run(skill.namespace())?;
        let version = self.version_of(skill, v).await?;
        // Exists (a label may point nowhere once its version is gone).
        self.version_row(skill, &version).await?;
        let parsed = self
            .parsed_skill(skill.namespace(), skill.name(), &version)
            .await?;
        let tools = parsed
            .tools()
            .iter()
            .map(|t| TestRunTool {
                name: t.name.to_string(),
                full_name: t.full_name(&parsed.name),
                description: t.description.clone(),
                input_schema: t.input_schema.clone(),
            })
            .collect();
        let scripts = self
            .files_of(skill, &version)
            .await?
            .into_iter()
            .map(|f| f.path)
            .filter(|path| path.starts_with(TEST_RUN_SCRIPTS_DIR))
            .collect();
        let policy = self.test_run_policy(self.test_runner()?).await?;
        Ok(TestRunTargets {
            version,
            tools,
            scripts,
            policy,
        })
    }

    /// Runs a tool or a script of version `v` of `skill` in this host's
    /// sandbox under the strict test-run policy and returns how it ended.
    /// Admin or `publish:<namespace>`; rate-limited per principal
    /// (429 with `Retry-After`); a blocked version never runs; every run
    /// the runner was asked for is in the audit log (action `test-run`:
    /// the version, the tool or script, the arguments' sha256, the exit
    /// or the refusal).
    ///
    /// Counted in `/metrics` by outcome (completed, refused, failed).
    pub async fn test_run(
        &self,
        p: &Principal,
        skill: &SkillRef,
        v: &str,
        request: TestRunRequest,
    ) -> Result<TestRunResult, RegistryError> {
        let result = self.run_test(p, skill, v, request).await;
        metrics().test_run(match &result {
            Ok(_) => "completed",
            Err(e) => failure_outcome(e),
        });
        result
    }

    async fn run_test(
        &self,
        p: &Principal,
        skill: &SkillRef,
        v: &str,
        request: TestRunRequest,
    ) -> Result<TestRunResult, RegistryError> {
        p.require_test_run(skill.namespace())?;
        let target = target_of(request)?;
        let runner = self.test_runner()?;
        if let Err(retry_after) = self.inner.test_runs.take(&p.token_id) {
            return Err(RegistryError::RateLimited {
                code: "registry-test-run-rate-limited",
                detail: format!(
                    "this token started its {} test runs of the last minute; retry after {retry_after} s",
                    self.inner.test_runs.per_minute()
                ),
                retry_after,
            });
        }
        let version = self.version_of(skill, v).await?;
        let row = self.version_row(skill, &version).await?;
        if let Some(blocked) = &row.blocked {
            return Err(RegistryError::conflict(
                "registry-version-blocked",
                format!(
                    "{skill}@{version} is blocked ({}); a blocked version never runs",
                    blocked.reason
                ),
            ));
        }
        if let TestRunTarget::Script { path, .. } = &target {
            let scripts: Vec<String> = self
                .files_of(skill, &version)
                .await?
                .into_iter()
                .map(|f| f.path)
                .filter(|f| f.starts_with(TEST_RUN_SCRIPTS_DIR))
                .collect();
            if !scripts.contains(path) {
                return Err(RegistryError::unprocessable(
                    "registry-test-run-unknown-script",
                    format!(
                        "{skill}@{version} has no script '{path}'; {}",
                        if scripts.is_empty() {
                            "it has no file under scripts/".to_owned()
                        } else {
                            format!("its scripts: {}", scripts.join(", "))
                        }
                    ),
                ));
            }
        }
        let archive = self
            .inner
            .store
            .get_verified(&archive_key(&row.archive_sha256)?, &row.archive_sha256)
            .await?;
        let within = self.inner.staging.dir().to_path_buf();
        let package = self.inner.limits.package;
        let limits = self.inner.limits.test_run.clone();
        let job_target = target.clone();
        let ran = tokio::task::spawn_blocking(move || {
            unpack_and_run(
                &archive,
                &within,
                package,
                runner.as_ref(),
                &job_target,
                &limits,
            )
        })
        .await
        .map_err(|e| RegistryError::Internal(format!("test-run task: {e}")))??;
        let sha = arguments_sha256(&target);
        let (tool, script) = match &target {
            TestRunTarget::Tool { name, .. } => (Some(name.clone()), None),
            TestRunTarget::Script { path, .. } => (None, Some(path.clone())),
        };
        let mut detail = json!({
            "version": version,
            "fingerprint": row.fingerprint,
            "arguments_sha256": sha,
        });
        if let Some(tool) = &tool {
            detail["tool"] = json!(tool);
        }
        if let Some(script) = &script {
            detail["script"] = json!(script);
        }
        match &ran {
            Ok(outcome) => {
                detail["exit_code"] = json!(outcome.exit_code);
                detail["signal"] = json!(outcome.signal);
                detail["timed_out"] = json!(outcome.timed_out);
                detail["duration_ms"] = json!(outcome.duration_ms);
                detail["refusals"] = json!(outcome.refusals);
            }
            Err(refusal) => {
                detail["refused"] = json!(refusal.code());
            }
        }
        let mut w = self.begin_write().await?;
        Registry::audit_in(&mut w, p, "test-run", &format!("{skill}@{version}"), detail).await?;
        self.commit_scoped(w, &[crate::service::fresh::Scope::Skills])
            .await?;
        let outcome = ran?;
        Ok(TestRunResult {
            namespace: skill.namespace().clone(),
            name: skill.name().to_owned(),
            version,
            fingerprint: row.fingerprint,
            tool,
            script,
            arguments_sha256: sha,
            outcome,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(body: serde_json::Value) -> Result<TestRunTarget, RegistryError> {
        target_of(serde_json::from_value(body).unwrap_or_else(|e| panic!("{e}")))
    }

    #[test]
    fn a_test_run_names_exactly_one_of_a_tool_and_a_script() {
        assert!(request(json!({})).is_err());
        assert!(request(json!({"tool": "t", "script": "scripts/a.sh"})).is_err());
        assert!(request(json!({"tool": "t", "args": ["x"]})).is_err());
        assert!(request(json!({"script": "scripts/a.sh", "arguments": {}})).is_err());
        assert_eq!(
            request(json!({"tool": "t"})).ok(),
            Some(TestRunTarget::Tool {
                name: "t".to_owned(),
                arguments: json!({})
            })
        );
    }

    #[test]
    fn a_script_path_that_leaves_the_skill_is_refused_before_any_lookup() {
        for path in ["../x.sh", "/etc/passwd", "scripts/../../x"] {
            let e = request(json!({"script": path})).unwrap_err();
            assert!(
                matches!(
                    e,
                    RegistryError::BadRequest {
                        code: "registry-invalid-path",
                        ..
                    }
                ),
                "{path}: {e:?}"
            );
        }
    }

    #[test]
    fn the_audit_digest_covers_the_arguments() {
        let a = request(json!({"tool": "t", "arguments": {"x": 1}})).unwrap();
        let b = request(json!({"tool": "t", "arguments": {"x": 2}})).unwrap();
        assert_ne!(arguments_sha256(&a), arguments_sha256(&b));
        assert!(arguments_sha256(&a).starts_with("sha256:"));
    }
}
