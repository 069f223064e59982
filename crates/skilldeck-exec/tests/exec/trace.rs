//! Every execution is a `tracing` span `execute_tool` with the GenAI
//! attributes and an audit event; arguments and output are not logged.
//!
//! The test runs alone in a process of its own: tracing caches per
//! callsite whether anyone listens, which the other tests of this binary,
//! running in parallel without a subscriber, would spoil.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use skilldeck_exec::{CallContext, Executor, Input, Policy, Request};
use skilldeck_testkit::Root;
use skilldeck_testkit::process::in_own_process;
use tracing_subscriber::fmt::format::FmtSpan;

use crate::common::Buffer;

#[test]
fn an_execution_is_a_span_with_an_audit_line_that_holds_no_arguments_or_output() {
    // A scoped subscriber: alone in a process (see the module's doc).
    if !in_own_process(
        "trace::an_execution_is_a_span_with_an_audit_line_that_holds_no_arguments_or_output",
        &[],
    ) {
        return;
    }
    let root = Root::new();
    root.skill("traced")
        .description("Traced. Use in tests.")
        .file("scripts/say.sh", "echo \"output-$1\"\n")
        .write();
    let deck = skilldeck::discover(&skilldeck::DiscoveryOptions::with_roots([
        root.to_path_buf()
    ]));
    let skill = deck.get("traced").unwrap();
    let buffer = Buffer::default();
    let writer = buffer.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_span_events(FmtSpan::CLOSE)
        .with_ansi(false)
        .finish();
    let mut policy = Policy::default();
    if !skilldeck_exec::probe().native_ready {
        policy.profile = skilldeck_exec::Profile::None;
    }
    let result = tracing::subscriber::with_default(subscriber, || {
        Executor::default().run(
            Request {
                skill,
                path: "scripts/say.sh",
                args: vec!["secret-argument".into()],
                stdin: Input::Bytes(b"secret-stdin".to_vec()),
                context: CallContext {
                    agent_id: "agent-7".into(),
                    user_id: "user-7".into(),
                    session_id: "s-7".into(),
                    call_id: "call-42".into(),
                    tool: "say".into(),
                },
            },
            &policy,
        )
    });
    let o = result.unwrap();
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "output-secret-argument\n"
    );
    let log = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
    for needle in [
        "execute_tool",
        "otel.name=execute_tool say",
        "gen_ai.operation.name=\"execute_tool\"",
        "gen_ai.tool.name=say",
        "gen_ai.tool.call.id=call-42",
        "skilldeck.skill.name=traced",
        "skilldeck.exec.exit_code=0",
        "skilldeck.exec.truncated=false",
        "skilldeck.exec.duration_ms=",
        "agent=agent-7",
        "user=user-7",
        "session=s-7",
        "args_sha256=",
        "outcome=exit:0",
    ] {
        assert!(log.contains(needle), "{needle} missing from:\n{log}");
    }
    assert!(!log.contains("secret-argument"), "{log}");
    assert!(!log.contains("secret-stdin"), "{log}");
    assert!(!log.contains("output-"), "{log}");
}
