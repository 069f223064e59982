//! Fail loudly, the trace: a run's refusals are logged once (one `warn`
//! line on `skilldeck::audit`) and recorded as events on its
//! `execute_tool` span. Each test runs alone in a process of its own (see
//! `refusals.rs`).
//!
//! The attack: three denied system calls (see `refusals.rs`).

#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use skilldeck_testkit::process::in_own_process;

use crate::common::{Buffer, DENIED_CALLS, denied_call_args, fixture, native};

#[test]
fn refusals_are_logged_once_per_run_and_recorded_as_span_events() {
    // A scoped subscriber: alone in a process (see the module's doc).
    if !in_own_process(
        "refusals_trace::refusals_are_logged_once_per_run_and_recorded_as_span_events",
        &[],
    ) {
        return;
    }
    let Some(policy) = native() else { return };
    let f = fixture("loud", &[("scripts/denied.py", DENIED_CALLS)]);
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

#[test]
fn a_write_outside_is_logged_with_its_path_and_recorded_as_a_span_event() {
    // A scoped subscriber: alone in a process (see the module's doc).
    if !in_own_process(
        "refusals_trace::a_write_outside_is_logged_with_its_path_and_recorded_as_a_span_event",
        &[],
    ) {
        return;
    }
    let Some(policy) = native() else { return };
    let f = fixture(
        "loud",
        &[(
            "scripts/etc.py",
            "try:\n    open('/etc/skilldeck-trace', 'w')\nexcept OSError as e:\n    print(e.errno)\n",
        )],
    );
    let buffer = Buffer::default();
    let writer = buffer.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let o = tracing::subscriber::with_default(subscriber, || f.run("scripts/etc.py", &[], &policy));
    assert_eq!(o.refusals.writes_outside, 1, "{:?}", o.refusals);
    let log = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
    let warn: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("execute_tool refused inside the run"))
        .collect();
    assert_eq!(warn.len(), 1, "{log}");
    assert!(
        warn[0].contains("1 write outside (/etc/skilldeck-trace)"),
        "{}",
        warn[0]
    );
    let events: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("refusal") && l.contains("skilldeck.refusal.kind=\"write\""))
        .collect();
    assert_eq!(events.len(), 1, "{log}");
    assert!(
        events[0].contains("execute_tool") && events[0].contains("/etc/skilldeck-trace"),
        "{log}"
    );
}
