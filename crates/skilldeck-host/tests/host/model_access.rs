//! One rule for "may the model use this skill" (`rules::model_access`),
//! attacked on every model-facing path of the host: a skill with
//! `disable-model-invocation: true` and one set to mode `manual`, each with
//! a script and a declared tool, may not be activated, have its script run
//! (`run_skill_script`), have its tools listed or called (even with
//! `[exec] tools = "always"`), nor be found by `search_skills`; the user's
//! own paths (`prepare_script`/`prepare_tool` + `run_prepared`: the CLI's
//! `run`/`call`, an application's `Deck.run`/`call_tool`) still run it.
//!
//! Runs use no sandbox (the operator's explicit choice) so a run leaves a
//! mark in the skill folder: the proof that code ran, or did not.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use serde_json::{Map, Value, json};
use skilldeck::deck::{ExecConfig, SandboxProfile, ToolExposure};
use skilldeck::{DiscoveryOptions, SkillMode};
use skilldeck_exec::{CallContext, Input};
use skilldeck_host::execution::{Overrides, ScriptScope};
use skilldeck_host::tools::search_skills;
use skilldeck_host::{
    Execution, Host, HostOptions, ModelRefusalReason, RUN_SKILL_SCRIPT, ToolErrorKind, ToolOutput,
    model_access,
};
use skilldeck_testkit::model_access::{
    MANUAL, OPEN, SCRIPT, TOOL, USER_ONLY, ran, tool_full_name, write,
};

fn host(root: &Path) -> Host {
    let mut options = HostOptions::new(DiscoveryOptions::with_roots([root.to_path_buf()]));
    options
        .discovery
        .modes
        .insert(MANUAL.to_owned(), SkillMode::Manual);
    options.exec = ExecConfig {
        enabled: true,
        sandbox: SandboxProfile::None,
        tools: ToolExposure::Always,
        ..ExecConfig::default()
    };
    Host::new(options).unwrap()
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => unreachable!(),
    }
}

fn context() -> CallContext {
    CallContext {
        agent_id: "agent".into(),
        ..CallContext::default()
    }
}

#[test]
fn the_model_cannot_run_the_script_of_a_skill_it_may_not_invoke() {
    let root = skilldeck_testkit::Root::new();
    write(&root);
    let host = host(&root);
    let snapshot = host.snapshot();
    for skill in [USER_ONLY, MANUAL] {
        let err = host
            .call_execution_tool(
                &snapshot,
                "c1",
                RUN_SKILL_SCRIPT,
                &object(json!({"name": skill, "path": SCRIPT})),
                context(),
            )
            .unwrap_err();
        assert_eq!(err.kind, ToolErrorKind::NotModelInvocable, "{err}");
        assert!(err.message.contains("user-invoked only"), "{err}");
        assert!(err.message.contains("nothing was run"), "{err}");
        assert!(
            err.message
                .contains(&format!("`skilldeck run {skill} {SCRIPT}`")),
            "the user is told how to run it: {err}"
        );
        assert!(!ran(&root, skill), "{skill}'s script ran");
    }
    // The execution service's own model entry point holds the same rule.
    let err = host
        .execution()
        .unwrap()
        .run_script(
            &snapshot,
            USER_ONLY,
            SCRIPT,
            Vec::new(),
            Input::Null,
            context(),
        )
        .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::NotModelInvocable, "{err}");
    assert!(!ran(&root, USER_ONLY));
}

#[test]
fn the_model_cannot_call_a_tool_of_a_skill_it_may_not_invoke_even_with_tools_always_offered() {
    let root = skilldeck_testkit::Root::new();
    write(&root);
    let host = host(&root);
    let snapshot = host.snapshot();
    for skill in [USER_ONLY, MANUAL] {
        let full_name = tool_full_name(skill);
        let err = host
            .call_execution_tool(
                &snapshot,
                "c1",
                &full_name,
                &object(json!({"target": "prod"})),
                context(),
            )
            .unwrap_err();
        assert_eq!(err.kind, ToolErrorKind::NotModelInvocable, "{err}");
        assert!(err.message.contains("user-invoked only"), "{err}");
        assert!(
            err.message
                .contains(&format!("`skilldeck call {skill} {TOOL} --args JSON`")),
            "{err}"
        );
        // Refused before the arguments are looked at: nothing about them.
        let err = host
            .execution()
            .unwrap()
            .call_tool(&snapshot, &full_name, &json!({"target": 7}), context())
            .unwrap_err();
        assert_eq!(err.kind, ToolErrorKind::NotModelInvocable, "{err}");
        let err = host
            .execution()
            .unwrap()
            .call_tool_json(&snapshot, &full_name, "{}", context())
            .unwrap_err();
        assert_eq!(err.kind, ToolErrorKind::NotModelInvocable, "{err}");
        assert!(!ran(&root, skill), "{skill}'s tool ran");
    }
}

#[test]
fn an_unknown_tool_error_never_suggests_a_tool_of_a_skill_the_model_may_not_invoke() {
    let root = skilldeck_testkit::Root::new();
    write(&root);
    let host = host(&root);
    let snapshot = host.snapshot();
    // The tool part matches every skill's tool; the skill part is a
    // user-only skill's name: the only suggestion is the usable tool.
    for misspelled in [format!("nosuch__{TOOL}"), format!("{USER_ONLY}__nosuch")] {
        let err = host
            .call_execution_tool(
                &snapshot,
                "c1",
                &misspelled,
                &object(json!({"target": "prod"})),
                context(),
            )
            .unwrap_err();
        assert_eq!(err.kind, ToolErrorKind::UnknownTool, "{err}");
        for hidden in [USER_ONLY, MANUAL] {
            assert!(
                !err.message.contains(&tool_full_name(hidden)),
                "{misspelled}: {err}"
            );
        }
    }
    let err = host
        .call_execution_tool(
            &snapshot,
            "c1",
            &format!("nosuch__{TOOL}"),
            &object(json!({})),
            context(),
        )
        .unwrap_err();
    assert!(err.message.contains(&tool_full_name(OPEN)), "{err}");
}

#[test]
fn the_tools_of_a_skill_the_model_may_not_invoke_are_never_listed() {
    let root = skilldeck_testkit::Root::new();
    write(&root);
    let host = host(&root);
    let snapshot = host.snapshot();
    let names: Vec<String> = host
        .execution_tool_specs(&snapshot, "c1")
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, [RUN_SKILL_SCRIPT.to_owned(), tool_full_name(OPEN)]);
    let usable: Vec<&str> = snapshot
        .skill_tools()
        .model_usable(&snapshot.deck)
        .map(|t| t.full_name)
        .collect();
    assert_eq!(usable, [tool_full_name(OPEN)]);
}

#[test]
fn the_model_cannot_activate_a_skill_it_may_not_invoke_and_is_told_how_the_user_can() {
    let root = skilldeck_testkit::Root::new();
    write(&root);
    let host = host(&root);
    let snapshot = host.snapshot();
    for skill in [USER_ONLY, MANUAL] {
        let err = host
            .activate(&snapshot, "c1", skill, "", false)
            .unwrap_err();
        assert_eq!(err.kind, ToolErrorKind::NotModelInvocable, "{err}");
        assert!(err.message.contains(&format!("prompt /{skill}")), "{err}");
    }
    assert_eq!(snapshot.model_names, [OPEN]);
    assert!(!snapshot.tool_description.contains(USER_ONLY));
    assert!(!snapshot.tool_description.contains(MANUAL));
}

#[test]
fn search_skills_offers_the_model_only_skills_it_may_use() {
    let root = skilldeck_testkit::Root::new();
    write(&root);
    let host = host(&root);
    let snapshot = host.snapshot();
    let found = host
        .call_tool(
            &snapshot,
            "c1",
            search_skills::NAME,
            &object(json!({"query": "ships shipping things", "limit": 1})),
        )
        .unwrap();
    let ToolOutput::Search(hits) = &found else {
        panic!("{found:?}")
    };
    let names: Vec<&str> = hits.iter().map(|h| h.name.as_str()).collect();
    // The one result allowed is the usable skill, whatever the others score.
    assert_eq!(names, [OPEN]);
}

#[test]
fn the_refusal_names_its_reason_with_a_stable_code() {
    let root = skilldeck_testkit::Root::new();
    write(&root);
    let host = host(&root);
    let snapshot = host.snapshot();
    let refusal = |name: &str| model_access(snapshot.deck.get(name).unwrap()).unwrap_err();
    let user_only = refusal(USER_ONLY);
    assert_eq!(user_only.reason, ModelRefusalReason::DisableModelInvocation);
    assert_eq!(user_only.code(), "model-invocation-disabled");
    assert!(user_only.user_invocable);
    assert!(
        user_only
            .to_string()
            .contains("disable-model-invocation: true"),
        "{user_only}"
    );
    let manual = refusal(MANUAL);
    assert_eq!(manual.reason, ModelRefusalReason::ModeManual);
    assert_eq!(manual.code(), "skill-mode-manual");
    assert!(model_access(snapshot.deck.get(OPEN).unwrap()).is_ok());
}

#[test]
fn the_users_own_paths_still_run_a_skill_the_model_may_not_invoke() {
    let root = skilldeck_testkit::Root::new();
    write(&root);
    let host = host(&root);
    let snapshot = host.snapshot();
    let execution = host.execution().unwrap();
    let run = Execution::prepare_script(
        &snapshot.deck,
        USER_ONLY,
        SCRIPT,
        ScriptScope::SkillFolder,
        Vec::new(),
        Input::Null,
        context(),
    )
    .unwrap();
    let outcome = execution.execute(run, &Overrides::default()).unwrap();
    assert!(outcome.success(), "{outcome:?}");
    assert!(ran(&root, USER_ONLY));
    let run = Execution::prepare_tool(
        &snapshot.deck,
        snapshot.skill_tools(),
        &tool_full_name(MANUAL),
        &json!({"target": "prod"}),
        context(),
    )
    .unwrap();
    let done = execution.run_prepared(run, &Overrides::default()).unwrap();
    assert_eq!(done.structured, Some(json!({"ran": true})));
    assert!(ran(&root, MANUAL));
}
