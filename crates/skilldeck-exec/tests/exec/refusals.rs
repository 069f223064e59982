//! Fail loudly: every refusal inside a run is counted in its outcome
//! (`Outcome::refusals`), logged once and recorded as span events. Each
//! test attacks (the script tries the escape or runs into the cap) and
//! checks the count; a harmless run counts nothing. The log line and the
//! span events are pinned in `refusals_trace.rs` (each test alone in a
//! process of its own: tracing caches per callsite whether anyone listens,
//! which tests of one process running in parallel without a subscriber
//! would spoil).

#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use skilldeck_exec::{Policy, Profile, Refusals, probe};

use crate::common::{DENIED_CALLS, denied_call_args, fixture, native, text};

#[test]
fn denied_system_calls_are_counted_by_class_and_still_fail_with_eperm() {
    let Some(policy) = native() else { return };
    let f = fixture("loud", &[("scripts/denied.py", DENIED_CALLS)]);
    let o = f.run("scripts/denied.py", &denied_call_args(), &policy);
    let out = text(&o.stdout);
    // The script sees what it saw before the refusals were counted: -1,
    // EPERM.
    let eperm = libc::EPERM;
    for name in ["ptrace", "unshare", "mount"] {
        assert!(
            out.contains(&format!("{name} -1 {eperm}\n")),
            "{name}: {out}\n{}",
            text(&o.stderr)
        );
    }
    let r = &o.refusals;
    assert!(r.syscalls_observed);
    assert_eq!(r.syscalls.get("ptrace"), Some(&1), "{r:?}");
    assert_eq!(r.syscalls.get("namespace"), Some(&1), "{r:?}");
    assert_eq!(r.syscalls.get("mount"), Some(&1), "{r:?}");
    assert_eq!(r.syscalls_denied(), 3, "{r:?}");
    assert!(
        r.summary()
            .contains("3 system calls (mount 1, namespace 1, ptrace 1)"),
        "{}",
        r.summary()
    );
}

#[test]
fn a_harmless_run_counts_no_refusal() {
    let Some(policy) = native() else { return };
    let f = fixture(
        "loud",
        &[("scripts/ok.sh", "echo fine > out.txt && cat out.txt\n")],
    );
    let o = f.run("scripts/ok.sh", &[], &policy);
    assert_eq!(text(&o.stdout), "fine\n");
    assert!(o.refusals.syscalls_observed);
    assert_eq!(
        o.refusals,
        Refusals {
            syscalls_observed: true,
            writes_observed: true,
            ..Refusals::default()
        }
    );
}

#[test]
fn bwrap_enforces_the_same_refusals_but_says_it_does_not_count_them() {
    let p = probe();
    if !p.bwrap_layer.available {
        eprintln!("SKIPPED: bwrap unavailable: {}", p.bwrap_layer.detail);
        return;
    }
    let f = fixture("loud", &[("scripts/denied.py", DENIED_CALLS)]);
    let policy = Policy {
        profile: Profile::Bwrap,
        ..Policy::default()
    };
    let o = f.run("scripts/denied.py", &denied_call_args(), &policy);
    let out = text(&o.stdout);
    assert!(out.contains(&format!("ptrace -1 {}", libc::EPERM)), "{out}");
    assert!(!o.refusals.syscalls_observed);
    assert_eq!(o.refusals.syscalls_denied(), 0);
}

#[test]
fn the_timeout_the_output_cap_the_file_size_limit_and_the_work_dir_quota_are_counted() {
    let Some(base) = native() else { return };
    let f = fixture(
        "loud",
        &[
            ("scripts/sleep.sh", "echo started\nexec sleep 600\n"),
            ("scripts/flood.sh", "head -c 100000 /dev/zero\n"),
            (
                "scripts/big.sh",
                "exec head -c 3000000 /dev/zero > big.bin\n",
            ),
            (
                "scripts/fill.sh",
                "head -c 16000000 /dev/zero > fill.bin 2>/dev/null; echo \"exit $?\"\n",
            ),
        ],
    );
    let mut timeout = base.clone();
    timeout.limits.timeout = Duration::from_secs(1);
    let o = f.run("scripts/sleep.sh", &[], &timeout);
    assert!(o.timed_out);
    assert_eq!(o.refusals.caps.names(), ["timeout"], "{:?}", o.refusals);

    let mut flood = base.clone();
    flood.limits.output_cap = 1000;
    let o = f.run("scripts/flood.sh", &[], &flood);
    assert!(o.stdout_truncated);
    assert_eq!(o.refusals.caps.names(), ["output"], "{:?}", o.refusals);

    let mut big = base.clone();
    big.limits.file_size_bytes = 1_000_000;
    let o = f.run("scripts/big.sh", &[], &big);
    assert_eq!(o.signal, Some(libc::SIGXFSZ), "{o:?}");
    assert_eq!(o.refusals.caps.names(), ["file-size"], "{:?}", o.refusals);

    let mut fill = base;
    fill.limits.workdir_bytes = 4 * 1024 * 1024;
    fill.limits.file_size_bytes = 64 * 1024 * 1024;
    let o = f.run("scripts/fill.sh", &[], &fill);
    assert!(text(&o.stdout).contains("exit 1"), "{}", text(&o.stdout));
    assert_eq!(
        o.refusals.caps.names(),
        ["workdir-quota"],
        "{:?}",
        o.refusals
    );
}

#[test]
fn glibcs_name_service_lookup_is_reported_apart_and_any_other_unix_socket_counts() {
    let Some(policy) = native() else { return };
    let f = fixture(
        "loud",
        &[
            // bash looks its user up at start: glibc tries nscd's socket.
            ("scripts/user.sh", "bash -c 'echo ~'\n"),
            (
                "scripts/unix.py",
                "import socket\ntry:\n    socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n    print('made')\nexcept OSError:\n    print('refused')\n",
            ),
        ],
    );
    let o = f.run("scripts/user.sh", &[], &policy);
    assert!(o.refusals.syscalls.is_empty(), "{:?}", o.refusals);
    assert!(o.refusals.is_empty(), "{:?}", o.refusals);
    let o = f.run("scripts/unix.py", &[], &policy);
    assert_eq!(text(&o.stdout), "refused\n");
    assert_eq!(
        o.refusals.syscalls.get("socket"),
        Some(&1),
        "{:?}",
        o.refusals
    );
    assert_eq!(o.refusals.name_service_probes, 0);
}
