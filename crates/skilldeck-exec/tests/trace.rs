//! Every execution is a `tracing` span `execute_tool` with the GenAI
//! attributes and an audit event; arguments and output are not logged.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::sync::{Arc, Mutex};

use skilldeck_exec::{CallContext, Executor, Input, Policy, Request};
use skilldeck_testkit::Root;
use tracing_subscriber::fmt::format::FmtSpan;

#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<Vec<u8>>>);

impl Write for Buffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn an_execution_is_a_span_with_an_audit_line_that_holds_no_arguments_or_output() {
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
