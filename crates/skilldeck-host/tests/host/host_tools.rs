//! Host-implemented skill tools (declared without `run`): offered only with
//! a handler, the handler sees only valid arguments, the model-access rule
//! and the exposure apply as for script tools, and a tool without a handler
//! is reported at its line. Seed 002's `deep-research` loads as written.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use skilldeck::deck::ToolExposure;
use skilldeck::{Code, DiscoveryOptions};
use skilldeck_exec::CallContext;
use skilldeck_host::{Called, HandlerCall, Host, HostOptions, ToolErrorKind};
use skilldeck_testkit::seeds::SEED_002_DEEP_RESEARCH;

const TOOL: &str = "deep_research__initiate_research";

fn seed_host(root: &Path, exposure: ToolExposure) -> Host {
    skilldeck_testkit::file(root.join("deep-research/SKILL.md"), SEED_002_DEEP_RESEARCH);
    let mut options = HostOptions::new(DiscoveryOptions::with_roots([root.to_path_buf()]));
    options.exec.tools = exposure;
    Host::new(options).unwrap()
}

/// A handler that counts its calls and echoes its arguments.
fn counting(calls: &Arc<AtomicUsize>) -> Arc<dyn skilldeck_host::ToolHandler> {
    let calls = Arc::clone(calls);
    Arc::new(move |call: &HandlerCall<'_>| -> Result<Value, String> {
        calls.fetch_add(1, Ordering::SeqCst);
        Ok(json!({"skill": call.skill, "echo": call.arguments}))
    })
}

/// The model's call of [`TOOL`] in conversation `c1`.
fn call_as_model(host: &Host, arguments: &Value) -> Result<Called, skilldeck_host::ToolError> {
    let snapshot = host.snapshot();
    host.call(
        &snapshot,
        "c1",
        TOOL,
        arguments.as_object().unwrap(),
        CallContext::default(),
    )
}

fn offered(host: &Host, conversation: &str) -> Vec<String> {
    let snapshot = host.snapshot();
    host.execution_tool_specs(&snapshot, conversation)
        .into_iter()
        .map(|s| s.name)
        .collect()
}

#[test]
fn seed_002_deep_research_loads_as_written_with_its_tool_and_schema() {
    let tmp = tempfile::tempdir().unwrap();
    let host = seed_host(tmp.path(), ToolExposure::Always);
    let snapshot = host.snapshot();
    assert!(
        snapshot.deck.diagnostics().is_empty(),
        "{:#?}",
        snapshot.deck.diagnostics()
    );
    let tool = snapshot
        .skill_tools()
        .resolve(&snapshot.deck, TOOL)
        .unwrap();
    assert!(tool.tool.is_host_implemented());
    let schema = &tool.tool.input_schema;
    assert_eq!(
        schema["properties"]["sources"],
        json!({"type": "array", "items": {"type": "string"}, "description": "Sources to search (slack, confluence, web)"})
    );
    assert_eq!(schema["required"], json!(["query"]));
}

#[test]
fn a_host_implemented_tool_is_offered_only_while_a_handler_is_registered() {
    let tmp = tempfile::tempdir().unwrap();
    let host = seed_host(tmp.path(), ToolExposure::Always);
    assert!(host.execution().is_none(), "no sandbox is needed");
    assert!(offered(&host, "c1").is_empty());
    let calls = Arc::new(AtomicUsize::new(0));
    host.register_tool_handler(TOOL, counting(&calls)).unwrap();
    assert_eq!(offered(&host, "c1"), [TOOL]);
    assert!(host.remove_tool_handler(TOOL));
    assert!(offered(&host, "c1").is_empty());
}

#[test]
fn a_tool_without_a_handler_is_reported_at_its_line_and_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let host = seed_host(tmp.path(), ToolExposure::Always);
    let snapshot = host.snapshot();
    let diagnostics = host.missing_handlers(&snapshot);
    assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
    let d = &diagnostics[0];
    assert_eq!(d.code, Code::ToolHandlerMissing);
    assert_eq!(d.line, Some(7), "the `- name: initiate_research` line");
    assert!(d.file.as_ref().unwrap().ends_with("deep-research/SKILL.md"));
    let err = call_as_model(&host, &json!({"query": "q"})).unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::UnknownTool, "{}", err.message);
    assert!(err.message.contains("no handler"), "{}", err.message);

    let calls = Arc::new(AtomicUsize::new(0));
    host.register_tool_handler(TOOL, counting(&calls)).unwrap();
    assert!(host.missing_handlers(&snapshot).is_empty());
}

#[test]
fn a_handler_only_ever_sees_arguments_that_match_the_schema() {
    let tmp = tempfile::tempdir().unwrap();
    let host = seed_host(tmp.path(), ToolExposure::Always);
    let calls = Arc::new(AtomicUsize::new(0));
    host.register_tool_handler(TOOL, counting(&calls)).unwrap();
    for bad in [
        json!({}),
        json!({"query": 3}),
        json!({"query": "q", "sources": "web"}),
        json!({"query": "q", "sources": [1]}),
        json!({"query": "q", "extra": true}),
    ] {
        let err = call_as_model(&host, &bad).unwrap_err();
        assert_eq!(
            err.kind,
            ToolErrorKind::InvalidArguments,
            "{bad}: {}",
            err.message
        );
    }
    assert_eq!(
        calls.load(Ordering::SeqCst),
        0,
        "never called with bad arguments"
    );
    let args = json!({"query": "rust sandboxes", "sources": ["web", "slack"]});
    let called = call_as_model(&host, &args).unwrap();
    let Called::Handled(handled) = called else {
        panic!("expected the handler's answer");
    };
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(handled.structured["echo"], args);
    assert_eq!(handled.structured["skill"], "deep-research");
}

#[test]
fn a_handlers_error_is_the_tools_error() {
    let tmp = tempfile::tempdir().unwrap();
    let host = seed_host(tmp.path(), ToolExposure::Always);
    let failing = |_: &HandlerCall<'_>| -> Result<Value, String> { Err("quota spent".to_owned()) };
    host.register_tool_handler(TOOL, Arc::new(failing)).unwrap();
    let err = call_as_model(&host, &json!({"query": "q"})).unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Failed);
    assert!(err.message.contains("quota spent"), "{}", err.message);
}

#[test]
fn a_host_implemented_tool_follows_the_exposure_on_activation() {
    let tmp = tempfile::tempdir().unwrap();
    let host = seed_host(tmp.path(), ToolExposure::OnActivate);
    let calls = Arc::new(AtomicUsize::new(0));
    host.register_tool_handler(TOOL, counting(&calls)).unwrap();
    let snapshot = host.snapshot();
    assert!(offered(&host, "c1").is_empty());
    let err = call_as_model(&host, &json!({"query": "q"})).unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Denied, "{}", err.message);
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    host.activate(&snapshot, "c1", "deep-research", "", false)
        .unwrap();
    assert_eq!(offered(&host, "c1"), [TOOL]);
    assert!(offered(&host, "c2").is_empty(), "another conversation");
}

#[test]
fn the_model_access_rule_applies_to_host_implemented_tools() {
    let tmp = tempfile::tempdir().unwrap();
    let text = SEED_002_DEEP_RESEARCH.replacen(
        "version: 1.0.0\n",
        "version: 1.0.0\ndisable-model-invocation: true\n",
        1,
    );
    skilldeck_testkit::file(tmp.path().join("deep-research/SKILL.md"), text);
    let mut options = HostOptions::new(DiscoveryOptions::with_roots([tmp.path().to_path_buf()]));
    options.exec.tools = ToolExposure::Always;
    let host = Host::new(options).unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    host.register_tool_handler(TOOL, counting(&calls)).unwrap();
    let snapshot = host.snapshot();
    assert!(offered(&host, "c1").is_empty(), "never listed to a model");
    let err = call_as_model(&host, &json!({"query": "q"})).unwrap_err();
    assert_eq!(
        err.kind,
        ToolErrorKind::NotModelInvocable,
        "{}",
        err.message
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    // The application itself may still call its own handler's tool.
    let handled = host
        .call_handler(
            &snapshot,
            TOOL,
            &json!({"query": "q"}),
            &CallContext::default(),
        )
        .unwrap();
    assert_eq!(handled.skill, "deep-research");
}

#[test]
fn a_handler_is_refused_for_a_script_tool_or_an_unknown_name() {
    let tmp = tempfile::tempdir().unwrap();
    let host = seed_host(tmp.path(), ToolExposure::Always);
    skilldeck_testkit::skill(tmp.path(), "notes")
        .description("Notes. Use when testing.")
        .frontmatter_raw(
            "tools:\n  - name: search\n    description: Search.\n    run: scripts/s.py\n",
        )
        .file("scripts/s.py", "print(1)\n")
        .write();
    host.reload().unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let err = host
        .register_tool_handler("notes__search", counting(&calls))
        .unwrap_err();
    assert!(err.message.contains("scripts/s.py"), "{}", err.message);
    let err = host
        .register_tool_handler("nobody__nothing", counting(&calls))
        .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::UnknownTool);
}
