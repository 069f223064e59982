//! The host's execution service: the `[exec]` config mapped to a policy,
//! skill tool calls (arguments checked before anything runs, each tool its
//! own skill's script), `run_skill_script`'s scope, how failed runs read
//! for the model, tool exposure per conversation, and dynamic context.
//!
//! Runs go through the native sandbox. Where this machine lacks one of
//! its layers, each test asserts the refusal (naming what is missing)
//! instead of the result: never a silent skip.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use serde_json::{Value, json};
use skilldeck::DiscoveryOptions;
use skilldeck::deck::{ExecConfig, SandboxProfile, SkillGrant, ToolExposure};
use skilldeck_exec::{CallContext, Input, Profile, probe};
use skilldeck_host::{
    Execution, Host, HostOptions, RUN_SKILL_SCRIPT, ToolError, ToolErrorKind, ToolRun,
};

const ECHO_TOOL: &str = "tools:\n  - name: lookup\n    description: Look a word up.\n    parameters:\n      word: {type: string, required: true}\n      tags: {type: array, items: {type: string}}\n    run: scripts/lookup.sh\n";

fn config(profile: SandboxProfile) -> ExecConfig {
    ExecConfig {
        enabled: true,
        sandbox: profile,
        ..ExecConfig::default()
    }
}

fn host_with(root: &Path, exec: ExecConfig) -> Host {
    let mut options = HostOptions::new(DiscoveryOptions::with_roots([root.to_path_buf()]));
    options.exec = exec;
    Host::new(options).unwrap()
}

fn ctx() -> CallContext {
    CallContext {
        agent_id: "agent-1".into(),
        user_id: "user-1".into(),
        session_id: "session-1".into(),
        call_id: "call-1".into(),
        tool: String::new(),
    }
}

fn tool_skill(root: &Path, name: &str, script: &str) {
    skilldeck_testkit::skill(root, name)
        .description(format!("Does {name} things. Use when testing."))
        .frontmatter_raw(ECHO_TOOL)
        .file("scripts/lookup.sh", script)
        .write();
}

/// The run's result where the native sandbox works here; else asserts the
/// refusal names what is missing and returns `None`.
fn sandboxed(result: Result<ToolRun, ToolError>) -> Option<Result<ToolRun, ToolError>> {
    let p = probe();
    if p.native_ready {
        return Some(result);
    }
    let err = result.expect_err("a missing sandbox layer must refuse the run");
    assert_eq!(err.kind, ToolErrorKind::Unavailable, "{err}");
    assert!(err.message.contains("nothing ran"), "{err}");
    eprintln!("refusal path tested: missing {}", p.missing().join("; "));
    None
}

fn call(host: &Host, name: &str, args: Value) -> Result<ToolRun, ToolError> {
    let snapshot = host.snapshot();
    host.execution()
        .expect("execution is on")
        .call_tool(&snapshot, name, &args, ctx())
}

#[test]
fn invalid_arguments_never_run_the_script_and_the_error_names_the_field() {
    // No sandbox (the operator's explicit choice) so the script can leave
    // a mark in its own folder: the proof that it ran, or did not.
    let root = skilldeck_testkit::Root::new();
    tool_skill(
        &root,
        "words",
        "touch \"$SKILLDECK_SKILL_DIR/ran.marker\"\necho ran\n",
    );
    let marker = root.path().join("words/ran.marker");
    let host = host_with(&root, config(SandboxProfile::None));

    let err = call(
        &host,
        "words__lookup",
        json!({"word": "x", "tags": ["a", 7]}),
    )
    .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::InvalidArguments);
    assert!(err.message.contains("/tags/1"), "{}", err.message);
    assert!(err.message.contains("nothing was run"), "{}", err.message);
    let err = call(&host, "words__lookup", json!({"tags": []})).unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::InvalidArguments);
    assert!(err.message.contains("word"), "{}", err.message);
    assert!(!marker.exists(), "the script ran on invalid arguments");

    // The same call with valid arguments does run it.
    let run = call(&host, "words__lookup", json!({"word": "x"})).unwrap();
    assert_eq!(run.text.trim(), "ran");
    assert!(marker.exists());
}

#[test]
fn each_tool_runs_its_own_skills_script_with_the_arguments_on_stdin() {
    // Two skills declare a tool of the same name: the closure-capture trap.
    let root = skilldeck_testkit::Root::new();
    for name in ["notes-a", "notes-b"] {
        tool_skill(
            &root,
            name,
            &format!(
                "read -r args\nprintf '{{\"skill\":\"%s\",\"from\":\"{name}\",\"args\":%s}}\\n' \"$SKILLDECK_SKILL_NAME\" \"$args\"\n"
            ),
        );
    }
    let host = host_with(&root, config(SandboxProfile::Landlock));
    for (tool, skill) in [
        ("notes_a__lookup", "notes-a"),
        ("notes_b__lookup", "notes-b"),
    ] {
        let Some(result) = sandboxed(call(&host, tool, json!({"word": "kiwi"}))) else {
            return;
        };
        let run = result.unwrap();
        assert_eq!(run.skill, skill);
        assert_eq!(run.tool, tool);
        assert_eq!(run.outcome.policy.profile, Profile::Native);
        let structured = run.structured.expect("JSON stdout is structured");
        assert_eq!(structured["skill"], skill);
        assert_eq!(structured["from"], skill);
        assert_eq!(structured["args"], json!({"word": "kiwi"}));
    }
}

#[test]
fn a_tool_whose_script_was_deleted_after_load_is_a_clear_error() {
    let root = skilldeck_testkit::Root::new();
    tool_skill(&root, "words", "echo ran\n");
    let host = host_with(&root, config(SandboxProfile::Landlock));
    std::fs::remove_file(root.path().join("words/scripts/lookup.sh")).unwrap();
    let err = call(&host, "words__lookup", json!({"word": "x"})).unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Failed);
    assert!(
        err.message.contains("scripts/lookup.sh") && err.message.contains("missing"),
        "{}",
        err.message
    );
}

#[test]
fn arguments_of_ten_megabytes_are_refused_before_anything_runs() {
    let root = skilldeck_testkit::Root::new();
    tool_skill(
        &root,
        "words",
        "touch \"$SKILLDECK_SKILL_DIR/ran.marker\"\n",
    );
    let host = host_with(&root, config(SandboxProfile::None));
    let big = "x".repeat(10 * 1024 * 1024);
    let err = call(&host, "words__lookup", json!({"word": big})).unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::InvalidArguments);
    assert!(err.message.contains("byte limit"), "{}", err.message);
    let text = format!("{{\"word\":\"{}\"}}", "y".repeat(10 * 1024 * 1024));
    let snapshot = host.snapshot();
    let err = host
        .execution()
        .unwrap()
        .call_tool_json(&snapshot, "words__lookup", &text, ctx())
        .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::InvalidArguments);
    assert!(!root.path().join("words/ran.marker").exists());
}

#[test]
fn a_non_zero_exit_is_an_execution_failure_quoting_stderr() {
    let root = skilldeck_testkit::Root::new();
    tool_skill(&root, "words", "echo 'no such word' >&2\nexit 3\n");
    let host = host_with(&root, config(SandboxProfile::Landlock));
    let Some(result) = sandboxed(call(&host, "words__lookup", json!({"word": "x"}))) else {
        return;
    };
    let err = result.unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::ExecutionFailed);
    assert!(err.message.contains("exit code 3"), "{}", err.message);
    assert!(err.message.contains("no such word"), "{}", err.message);
}

#[test]
fn a_timeout_kills_the_run_and_says_so() {
    let root = skilldeck_testkit::Root::new();
    tool_skill(&root, "words", "echo started\nsleep 30\n");
    let exec = ExecConfig {
        timeout_secs: 1,
        ..config(SandboxProfile::Landlock)
    };
    let host = host_with(&root, exec);
    let Some(result) = sandboxed(call(&host, "words__lookup", json!({"word": "x"}))) else {
        return;
    };
    let err = result.unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::TimedOut);
    assert!(
        err.message.contains("timed out after 1 s"),
        "{}",
        err.message
    );
    assert!(err.message.contains("started"), "{}", err.message);
}

#[test]
fn a_write_into_the_skill_folder_is_refused_and_the_failure_reported() {
    // Landlock denies the write (EACCES): the script reports it and fails.
    let root = skilldeck_testkit::Root::new();
    tool_skill(
        &root,
        "words",
        "echo x > \"$SKILLDECK_SKILL_DIR/scripts/tamper\" || exit 4\n",
    );
    let host = host_with(&root, config(SandboxProfile::Landlock));
    let Some(result) = sandboxed(call(&host, "words__lookup", json!({"word": "x"}))) else {
        return;
    };
    let err = result.unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::ExecutionFailed);
    assert!(err.message.contains("exit code 4"), "{}", err.message);
    assert!(!root.path().join("words/scripts/tamper").exists());
}

fn script_skill(root: &Path) {
    skilldeck_testkit::skill(root, "tools")
        .description("Has scripts. Use when testing.")
        .file("scripts/hello.sh", "echo \"hello $1\"\n")
        .file("scripts/nested/deep.sh", "echo deep\n")
        .file("other/outside.sh", "echo outside\n")
        .write();
    std::os::unix::fs::symlink("../other/outside.sh", root.join("tools/scripts/link.sh")).unwrap();
}

fn run_script(host: &Host, path: &str, args: &[&str]) -> Result<ToolRun, ToolError> {
    let snapshot = host.snapshot();
    host.execution().unwrap().run_script(
        &snapshot,
        "tools",
        path,
        args.iter().map(|s| (*s).to_owned()).collect(),
        Input::Null,
        ctx(),
    )
}

#[test]
fn run_skill_script_runs_files_under_scripts_only() {
    let root = skilldeck_testkit::Root::new();
    script_skill(&root);
    let host = host_with(&root, config(SandboxProfile::Landlock));
    for path in [
        "other/outside.sh",
        "SKILL.md",
        "scripts/../other/outside.sh",
        "scripts/link.sh",
        "/etc/passwd",
        "scripts",
        "./scripts/hello.sh",
    ] {
        let err = run_script(&host, path, &[]).unwrap_err();
        assert_eq!(err.kind, ToolErrorKind::Denied, "{path}: {}", err.message);
        assert!(err.message.contains("scripts/"), "{}", err.message);
        assert!(err.message.contains("nothing was run"), "{}", err.message);
    }
    let err = run_script(&host, "scripts/absent.sh", &[]).unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Failed);
    for (path, args, expected) in [
        ("scripts/hello.sh", vec!["world"], "hello world"),
        ("scripts/nested/deep.sh", vec![], "deep"),
    ] {
        let Some(result) = sandboxed(run_script(&host, path, &args)) else {
            return;
        };
        let run = result.unwrap();
        assert_eq!(run.text.trim(), expected);
        assert_eq!(run.tool, RUN_SKILL_SCRIPT);
        assert!(run.structured.is_none(), "plain text is not structured");
    }
}

#[test]
fn the_exec_config_and_the_skills_grant_make_the_policy() {
    let exec = ExecConfig {
        timeout_secs: 7,
        output_cap_bytes: 4096,
        env: vec!["LANG_EXTRA".into()],
        skills: [(
            "fetcher".to_owned(),
            SkillGrant {
                network: true.into(),
                read: vec!["/srv/data".into()],
                env: vec!["API_TOKEN".into(), "LANG_EXTRA".into()],
                python: None,
            },
        )]
        .into(),
        ..config(SandboxProfile::None)
    };
    let execution = Execution::new(exec);
    let granted = execution.policy("fetcher").unwrap();
    assert_eq!(granted.profile, Profile::None);
    assert_eq!(granted.limits.timeout.as_secs(), 7);
    assert_eq!(granted.limits.output_cap, 4096);
    assert!(granted.grants.network.is_all());
    assert_eq!(granted.grants.read_paths, [Path::new("/srv/data")]);
    assert_eq!(granted.grants.env, ["LANG_EXTRA", "API_TOKEN"]);
    let other = execution.policy("other").unwrap();
    assert!(
        !other.grants.network.is_granted(),
        "a skill without a grant has no network"
    );
    assert!(other.grants.read_paths.is_empty());
    assert_eq!(other.grants.env, ["LANG_EXTRA"]);
}

#[test]
fn relative_read_grants_are_resolved_against_the_config_folder() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("skilldeck.toml");
    std::fs::write(
        &path,
        "[exec]\nenabled = true\n\n[exec.skills.fetcher]\nread = [\"data\"]\n",
    )
    .unwrap();
    let config = skilldeck::Config::load(&path).unwrap();
    let options = HostOptions::from_config(&config, DiscoveryOptions::default()).unwrap();
    assert!(options.exec.enabled);
    assert_eq!(
        options.exec.skills["fetcher"].read,
        [dir.path().join("data")]
    );
}

#[test]
fn skill_tools_are_offered_to_a_conversation_once_its_skill_is_active() {
    let root = skilldeck_testkit::Root::new();
    tool_skill(&root, "words", "echo ran\n");
    skilldeck_testkit::skill(&root, "plain")
        .description("No tools. Use when testing.")
        .write();
    let host = host_with(&root, config(SandboxProfile::None));
    let snap = host.snapshot();
    let names = |conversation: &str| -> Vec<String> {
        host.execution_tool_specs(&snap, conversation)
            .into_iter()
            .map(|s| s.name)
            .collect()
    };
    assert_eq!(names("c1"), [RUN_SKILL_SCRIPT]);
    assert!(host.activation_offers_tools(&snap, "words"));
    assert!(!host.activation_offers_tools(&snap, "plain"));
    let args = json!({"word": "x"});
    let args = args.as_object().unwrap();
    let err = host
        .call_execution_tool(&snap, "c1", "words__lookup", args, ctx())
        .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Denied);
    assert!(err.message.contains("activate_skill"), "{}", err.message);

    host.activate(&snap, "c1", "words", "", false).unwrap();
    assert_eq!(names("c1"), [RUN_SKILL_SCRIPT, "words__lookup"]);
    assert_eq!(names("c2"), [RUN_SKILL_SCRIPT], "another conversation");
    let spec = host
        .execution_tool_specs(&snap, "c1")
        .into_iter()
        .find(|s| s.name == "words__lookup")
        .unwrap();
    assert_eq!(spec.input_schema["required"], json!(["word"]));
    let run = host
        .call_execution_tool(&snap, "c1", "words__lookup", args, ctx())
        .unwrap();
    assert_eq!(run.text.trim(), "ran");
}

#[test]
fn tool_exposure_always_and_never() {
    let root = skilldeck_testkit::Root::new();
    tool_skill(&root, "words", "echo ran\n");
    let always = host_with(
        &root,
        ExecConfig {
            tools: ToolExposure::Always,
            ..config(SandboxProfile::None)
        },
    );
    let snap = always.snapshot();
    let names: Vec<String> = always
        .execution_tool_specs(&snap, "c")
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, [RUN_SKILL_SCRIPT, "words__lookup"]);
    assert!(!always.activation_offers_tools(&snap, "words"));

    let never = host_with(
        &root,
        ExecConfig {
            tools: ToolExposure::Never,
            ..config(SandboxProfile::None)
        },
    );
    let snap = never.snapshot();
    never.activate(&snap, "c", "words", "", false).unwrap();
    let names: Vec<String> = never
        .execution_tool_specs(&snap, "c")
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, [RUN_SKILL_SCRIPT]);
    let args = json!({"word": "x"});
    let err = never
        .call_execution_tool(
            &snap,
            "c",
            "words__lookup",
            args.as_object().unwrap(),
            ctx(),
        )
        .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::UnknownTool);
}

#[test]
fn without_execution_no_tool_runs_skill_code() {
    let root = skilldeck_testkit::Root::new();
    tool_skill(&root, "words", "echo ran\n");
    let host = host_with(&root, ExecConfig::default());
    let snap = host.snapshot();
    assert!(host.execution().is_none());
    host.activate(&snap, "c", "words", "", false).unwrap();
    assert!(host.execution_tool_specs(&snap, "c").is_empty());
    assert!(!host.is_execution_tool("words__lookup"));
    let args = json!({"word": "x"});
    let err = host
        .call_execution_tool(
            &snap,
            "c",
            "words__lookup",
            args.as_object().unwrap(),
            ctx(),
        )
        .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::UnknownTool);
}

const DYNAMIC_BODY: &str = "Branch: !`echo dyn-$((40+2))`\n\nFail: !`echo oops >&2; exit 5`\n";

fn dynamic_host(root: &Path, exec: ExecConfig) -> Host {
    skilldeck_testkit::skill(root, "ctx")
        .description("Dynamic context. Use when testing.")
        .body(DYNAMIC_BODY)
        .write();
    host_with(root, exec)
}

#[test]
fn dynamic_context_runs_in_the_sandbox_when_enabled() {
    let root = skilldeck_testkit::Root::new();
    let host = dynamic_host(
        &root,
        ExecConfig {
            dynamic_context: true,
            ..config(SandboxProfile::Landlock)
        },
    );
    let snap = host.snapshot();
    let text = host
        .activate(&snap, "c", "ctx", "", false)
        .unwrap()
        .text()
        .to_owned();
    assert!(!text.contains("!`"), "a directive was left: {text}");
    if probe().native_ready {
        assert!(text.contains("Branch: dyn-42"), "{text}");
        assert!(
            text.contains("[dynamic context `echo oops >&2; exit 5` failed: exit code 5: oops]"),
            "{text}"
        );
    } else {
        // The refusal, as a note in place of each directive.
        assert!(text.contains("not run: sandbox unavailable"), "{text}");
    }
}

#[test]
fn dynamic_context_is_the_disabled_text_unless_both_switches_are_on() {
    for exec in [
        // Execution on, dynamic context off.
        config(SandboxProfile::None),
        // Dynamic context on, execution off.
        ExecConfig {
            enabled: false,
            dynamic_context: true,
            ..config(SandboxProfile::None)
        },
    ] {
        let root = skilldeck_testkit::Root::new();
        let host = dynamic_host(&root, exec);
        let snap = host.snapshot();
        let text = host
            .activate(&snap, "c", "ctx", "", false)
            .unwrap()
            .text()
            .to_owned();
        assert!(
            text.contains("Branch: [shell execution disabled]"),
            "{text}"
        );
        assert!(!text.contains("dyn-42"), "{text}");
    }
}

#[test]
fn the_config_default_limits_are_the_sandbox_defaults() {
    // What every face applies (an `[exec]` section left at its defaults,
    // through the host) is what the sandbox crate calls its defaults: one
    // table, in `skilldeck::limits`.
    let execution = Execution::new(ExecConfig {
        sandbox: SandboxProfile::None,
        ..ExecConfig::default()
    });
    let policy = execution.policy("any").unwrap();
    assert_eq!(policy.limits, skilldeck_exec::Limits::default());
    assert_eq!(
        policy.limits.memory_bytes,
        skilldeck::limits::DEFAULT_EXEC_MEMORY_BYTES
    );
    let defaults = skilldeck_exec::ExecutorConfig::default();
    assert_eq!(execution.executor().caps(), defaults.caps);
}

#[test]
fn operator_overrides_change_only_timeout_and_profile_and_stay_capped() {
    let execution = Execution::new(config(SandboxProfile::None));
    let base = execution.policy("any").unwrap();
    let overrides = skilldeck_host::execution::Overrides {
        timeout: Some(std::time::Duration::from_secs(3)),
        profile: Some(Profile::Bwrap),
    };
    let changed = execution.policy_with("any", &overrides).unwrap();
    assert_eq!(changed.profile, Profile::Bwrap);
    assert_eq!(changed.limits.timeout.as_secs(), 3);
    assert_eq!(changed.grants, base.grants);
    assert_eq!(changed.limits.output_cap, base.limits.output_cap);
    let too_long = skilldeck_host::execution::Overrides {
        timeout: Some(skilldeck_exec::MAX_TIMEOUT * 2),
        profile: None,
    };
    let capped = execution.policy_with("any", &too_long).unwrap();
    assert_eq!(capped.limits.timeout, skilldeck_exec::MAX_TIMEOUT);
    assert_eq!(capped.profile, base.profile);
    assert_eq!(
        execution
            .policy_with("any", &skilldeck_host::execution::Overrides::default())
            .unwrap(),
        base
    );
}

#[test]
fn the_scripts_scope_refuses_files_outside_scripts_and_the_skill_folder_scope_allows_them() {
    use skilldeck_host::execution::ScriptScope;
    let root = skilldeck_testkit::Root::new();
    skilldeck_testkit::skill(&root, "tool-a")
        .description("Has a tool. Use when testing.")
        .file("tool.sh", "echo hi\n")
        .file("scripts/ok.sh", "echo ok\n")
        .write();
    let deck = skilldeck::discover(&DiscoveryOptions::with_roots([root.path().to_path_buf()]));
    let scripts = Execution::prepare_script(
        &deck,
        "tool-a",
        "tool.sh",
        ScriptScope::Scripts,
        Vec::new(),
        Input::Null,
        ctx(),
    )
    .unwrap_err();
    assert_eq!(scripts.kind, ToolErrorKind::Denied, "{scripts}");
    let folder = Execution::prepare_script(
        &deck,
        "tool-a",
        "tool.sh",
        ScriptScope::SkillFolder,
        Vec::new(),
        Input::Null,
        ctx(),
    )
    .unwrap();
    assert_eq!(
        (folder.path.as_str(), folder.tool.as_str()),
        ("tool.sh", RUN_SKILL_SCRIPT)
    );
    let unknown = Execution::prepare_script(
        &deck,
        "nope",
        "tool.sh",
        ScriptScope::SkillFolder,
        Vec::new(),
        Input::Null,
        ctx(),
    )
    .unwrap_err();
    assert_eq!(unknown.kind, ToolErrorKind::UnknownSkill);
}

#[test]
fn an_updated_policy_applies_to_later_runs_and_can_revoke_a_grant() {
    let mut exec = config(SandboxProfile::None);
    exec.skills.insert(
        "web".into(),
        SkillGrant {
            network: true.into(),
            env: vec!["API_TOKEN".into()],
            ..SkillGrant::default()
        },
    );
    let execution = Execution::new(exec.clone());
    assert!(execution.policy("web").unwrap().grants.network.is_all());
    let mut revoked = exec.clone();
    revoked.skills.clear();
    revoked.timeout_secs = 7;
    execution.update_policy(revoked);
    let policy = execution.policy("web").unwrap();
    assert!(!policy.grants.network.is_granted());
    assert!(!policy.grants.env.contains(&"API_TOKEN".to_owned()));
    assert_eq!(policy.limits.timeout, std::time::Duration::from_secs(7));
    // What the service started with stays its config.
    assert_eq!(execution.config(), &exec);
}
