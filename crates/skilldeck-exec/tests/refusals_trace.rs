//! Fail loudly, the trace: a run's refusals are logged once (one `warn`
//! line on `skilldeck::audit`) and recorded as events on its
//! `execute_tool` span. One test in its own binary (see `refusals.rs`).
//!
//! The attack: three denied system calls (see `refusals.rs`).

#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use skilldeck_exec::{CallContext, Executor, Input, Outcome, Policy, Request, probe};
use skilldeck_testkit::Root;

struct Fixture {
    _root: Root,
    deck: skilldeck::Deck,
}

fn fixture(files: &[(&str, &str)]) -> Fixture {
    let root = Root::new();
    let mut skill = root
        .skill("loud")
        .description("Refusal probes. Use in tests.")
        .body("# Loud\n");
    for (path, text) in files {
        skill = skill.file(path, text);
    }
    skill.write();
    let deck = skilldeck::discover(&skilldeck::DiscoveryOptions::with_roots([root
        .path()
        .to_path_buf()]));
    Fixture { _root: root, deck }
}

impl Fixture {
    fn run(&self, path: &str, args: &[String], policy: &Policy) -> Outcome {
        Executor::default()
            .run(
                Request {
                    skill: self.deck.get("loud").unwrap(),
                    path,
                    args: args.to_vec(),
                    stdin: Input::Null,
                    context: CallContext::local("refusals-test"),
                },
                policy,
            )
            .unwrap_or_else(|e| panic!("{}: {e}", policy.profile.name()))
    }
}

/// The native profile, or `None` (saying why) where this machine lacks it.
fn native() -> Option<Policy> {
    let p = probe();
    if !p.native_ready {
        eprintln!(
            "SKIPPED: native profile unavailable: {}",
            p.missing().join("; ")
        );
        return None;
    }
    let mut policy = Policy::default();
    policy.limits.timeout = Duration::from_secs(30);
    Some(policy)
}

/// Calls three denied system calls by number (given as arguments, so the
/// script is the same on every architecture) and prints each errno.
const DENIED_CALLS: &str = r#"#!/usr/bin/python3
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
ptrace, unshare, mount = (int(a) for a in sys.argv[1:4])
def call(name, nr, *args):
    ctypes.set_errno(0)
    r = libc.syscall(nr, *args)
    print(name, r, ctypes.get_errno())
call('ptrace', ptrace, 16, 1, 0, 0)
call('unshare', unshare, 0x40000000)
call('mount', mount, b'none', b'/tmp', b'tmpfs', 0, 0)
"#;

fn denied_call_args() -> Vec<String> {
    [libc::SYS_ptrace, libc::SYS_unshare, libc::SYS_mount]
        .iter()
        .map(ToString::to_string)
        .collect()
}

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
fn refusals_are_logged_once_per_run_and_recorded_as_span_events() {
    let Some(policy) = native() else { return };
    let f = fixture(&[("scripts/denied.py", DENIED_CALLS)]);
    let buffer = Buffer::default();
    let writer = buffer.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let o = tracing::subscriber::with_default(subscriber, || {
        f.run("scripts/denied.py", &denied_call_args(), &policy)
    });
    assert_eq!(o.refusals.syscalls_denied(), 3);
    let log = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
    let warn: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("execute_tool refused inside the run"))
        .collect();
    assert_eq!(warn.len(), 1, "{log}");
    assert!(
        warn[0].contains("WARN") && warn[0].contains("skilldeck::audit"),
        "{}",
        warn[0]
    );
    assert!(warn[0].contains("refusals=3"), "{}", warn[0]);
    // One event per class, inside the execute_tool span.
    let events: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("refusal") && l.contains("skilldeck.refusal.kind=\"syscall\""))
        .collect();
    assert_eq!(events.len(), 3, "{log}");
    assert!(events.iter().all(|l| l.contains("execute_tool")), "{log}");
    for class in ["ptrace", "namespace", "mount"] {
        assert!(
            events
                .iter()
                .any(|l| l.contains(&format!("skilldeck.refusal.class=\"{class}\""))),
            "{class}: {log}"
        );
    }
}
