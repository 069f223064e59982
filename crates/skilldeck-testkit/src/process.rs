//! Child processes driven by tests: their output read line by line from a
//! thread, so a test waits for a line (the event), with a deadline only
//! against a hang; and a test run alone in a child of its test binary
//! ([`in_own_process`]).

use std::io::{BufRead as _, BufReader, Read};
use std::process::Command;
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

/// Far longer than any answer may take: past it, a line or message counts
/// as lost. A guard against a hung test, never a timing assertion.
pub const GIVE_UP: Duration = Duration::from_secs(120);

/// Each line of `r`, sent from a thread until `r` ends or the receiver is
/// dropped.
pub fn lines_of(r: impl Read + Send + 'static) -> Receiver<String> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(r).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Waits for the first line of `lines` that starts with `prefix` and
/// returns the rest of it (lines before it are skipped). Panics, naming
/// `what`, when the output ends or [`GIVE_UP`] passes first.
pub fn wait_for_line(lines: &Receiver<String>, prefix: &str, what: &str) -> String {
    loop {
        let line = lines
            .recv_timeout(GIVE_UP)
            .unwrap_or_else(|e| panic!("{what} never printed a line starting {prefix:?}: {e}"));
        if let Some(rest) = line.strip_prefix(prefix) {
            return rest.to_owned();
        }
    }
}

/// The variable naming the test a child of a test binary runs alone (see
/// [`in_own_process`]).
pub const OWN_PROCESS_VAR: &str = "SKILLDECK_TEST_OWN_PROCESS";

/// Runs the test `test` alone in a process of its own: for a test that
/// changes what the whole process shares (its environment, a resource
/// limit, a global `tracing` subscriber or the callsite cache) or that looks
/// at all of it (every cgroup or process of this pid). Each crate's
/// integration tests are one binary whose tests run in parallel threads of
/// one process; such a test would disturb the others, or be disturbed.
///
/// `test` is the test's path as the harness names it (`limits::a_test`,
/// without the crate), `env` the variables the child starts with (there
/// from its start: no `std::env::set_var` racing other threads).
///
/// In the test binary's process, runs `test` in a child of the same binary
/// (`TEST --exact`, one thread), passes its output on, panics unless that
/// one test ran there and passed, and returns `false`: the caller returns.
/// In that child, returns `true`: the caller goes on with the test's body.
///
/// ```no_run
/// // A #[test] of the module `escape`:
/// fn a_secret_in_the_environment_is_not_passed_on() {
///     if !skilldeck_testkit::process::in_own_process(
///         "escape::a_secret_in_the_environment_is_not_passed_on",
///         &[("SECRET_TOKEN", "hunter2")],
///     ) {
///         return;
///     }
///     assert_eq!(std::env::var("SECRET_TOKEN").unwrap(), "hunter2");
/// }
/// ```
pub fn in_own_process(test: &str, env: &[(&str, &str)]) -> bool {
    if std::env::var_os(OWN_PROCESS_VAR).is_some_and(|v| v == test) {
        return true;
    }
    let exe = std::env::current_exe()
        .unwrap_or_else(|e| panic!("cannot find the test binary to run {test} alone: {e}"));
    let out = Command::new(&exe)
        .args([test, "--exact", "--test-threads=1", "--nocapture"])
        .env(OWN_PROCESS_VAR, test)
        .envs(env.iter().copied())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {} for {test}: {e}", exe.display()));
    // Passed on indented, so that a count of `^test result` lines in the
    // binary's output still sees one per binary.
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{test}, in a process of its own:");
    for line in stdout.lines() {
        println!("    {line}");
    }
    for line in String::from_utf8_lossy(&out.stderr).lines() {
        eprintln!("    {line}");
    }
    assert!(
        out.status.success(),
        "{test}, alone in a process of its own, failed ({}): its output is above",
        out.status
    );
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("test result: ok. 1 passed;")),
        "{test} did not run in its own process: is it the test's path as \
         `cargo test -- --list` prints it? Its output is above"
    );
    false
}

#[cfg(test)]
mod tests {
    use super::in_own_process;

    #[test]
    fn a_test_in_its_own_process_starts_with_the_variables_it_was_given() {
        if !in_own_process(
            "process::tests::a_test_in_its_own_process_starts_with_the_variables_it_was_given",
            &[("SKILLDECK_TESTKIT_PROBE", "given")],
        ) {
            // The parent: the child passed, and the variable is not here.
            assert!(std::env::var_os("SKILLDECK_TESTKIT_PROBE").is_none());
            return;
        }
        assert_eq!(
            std::env::var("SKILLDECK_TESTKIT_PROBE").as_deref(),
            Ok("given")
        );
    }

    #[test]
    #[should_panic(expected = "did not run in its own process")]
    fn a_test_path_that_names_no_test_fails_instead_of_passing_unrun() {
        in_own_process("process::tests::no_such_test", &[]);
    }

    #[test]
    #[should_panic(expected = "alone in a process of its own, failed")]
    fn a_failure_in_the_child_fails_the_test() {
        // In the child this test fails: it returns where a panic is expected.
        in_own_process("process::tests::a_failure_in_the_child_fails_the_test", &[]);
    }
}
