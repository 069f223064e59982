//! `skilldeck run` and `skilldeck sandbox`, driven as a user would.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use skilldeck_testkit::Root;

fn skilldeck(args: &[&str], cwd: &Path, stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_skilldeck"))
        .args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .env("XDG_CONFIG_HOME", cwd.join(".no-user-config"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn deck() -> Root {
    let root = Root::new();
    root.skill("demo")
        .description("Demo scripts. Use in tests.")
        .body("# Demo\n")
        .file(
            "scripts/echo.py",
            "import sys\nprint('args', sys.argv[1:]); print('in', sys.stdin.read())\n",
        )
        .file("scripts/code.sh", "echo out; echo err >&2; exit 7\n")
        .file("scripts/slow.sh", "echo started\nsleep 60\n")
        .write();
    root.skill("off-skill")
        .description("Turned off. Use never.")
        .file("scripts/x.sh", "echo x\n")
        .write();
    root.file("skilldeck.toml", "[modes]\noff-skill = \"off\"\n");
    root
}

/// The sandbox is ready here, else every run must be refused with 125.
fn ready(cwd: &Path) -> bool {
    let o = skilldeck(&["sandbox", "--format", "json"], cwd, b"");
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v["ready"].as_bool().unwrap()
}

#[test]
fn run_passes_arguments_and_stdin_and_mirrors_the_exit_status() {
    let root = deck();
    let r = root.to_str().unwrap();
    let o = skilldeck(
        &[
            "run",
            "--root",
            r,
            "demo",
            "scripts/echo.py",
            "--",
            "a",
            "b c",
        ],
        &root,
        b"hello",
    );
    if !ready(&root) {
        assert_eq!(o.status.code(), Some(125), "{}", text(&o.stderr));
        assert!(text(&o.stderr).contains("sandbox unavailable"));
        return;
    }
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "args ['a', 'b c']\nin hello\n");
    let o = skilldeck(&["run", "--root", r, "demo", "scripts/code.sh"], &root, b"");
    assert_eq!(o.status.code(), Some(7));
    assert_eq!(text(&o.stdout), "out\n");
    assert_eq!(text(&o.stderr), "err\n");
}

#[test]
fn run_json_reports_the_outcome_and_the_policy() {
    let root = deck();
    let r = root.to_str().unwrap();
    let o = skilldeck(
        &[
            "run",
            "--root",
            r,
            "--format",
            "json",
            "demo",
            "scripts/code.sh",
        ],
        &root,
        b"",
    );
    if !ready(&root) {
        assert_eq!(o.status.code(), Some(125));
        return;
    }
    assert_eq!(o.status.code(), Some(7));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["exit_code"], 7);
    assert_eq!(v["signal"], serde_json::Value::Null);
    assert_eq!(v["timed_out"], false);
    assert_eq!(v["stdout"], "out\n");
    assert_eq!(v["stderr"], "err\n");
    assert_eq!(v["stdout_truncated"], false);
    assert_eq!(v["stderr_truncated"], false);
    assert!(v["duration_ms"].is_u64());
    assert_eq!(v["policy"]["profile"], "native");
    assert_eq!(v["policy"]["network"], false);
    assert!(
        v["policy"]["layers"]
            .as_array()
            .unwrap()
            .contains(&"landlock-abi7".into())
    );
}

#[test]
fn a_timeout_exits_124_with_a_null_exit_code() {
    let root = deck();
    let r = root.to_str().unwrap();
    let o = skilldeck(
        &[
            "run",
            "--root",
            r,
            "--timeout",
            "0.5",
            "--format",
            "json",
            "demo",
            "scripts/slow.sh",
        ],
        &root,
        b"",
    );
    if !ready(&root) {
        assert_eq!(o.status.code(), Some(125));
        return;
    }
    assert_eq!(o.status.code(), Some(124), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["exit_code"], serde_json::Value::Null);
    assert_eq!(v["timed_out"], true);
    assert_eq!(v["stdout"], "started\n");
    let o = skilldeck(
        &[
            "run",
            "--root",
            r,
            "--timeout",
            "0.5",
            "demo",
            "scripts/slow.sh",
        ],
        &root,
        b"",
    );
    assert_eq!(o.status.code(), Some(124));
    assert!(text(&o.stderr).contains("timed out"), "{}", text(&o.stderr));
}

#[test]
fn run_refuses_paths_outside_the_skill_and_skills_turned_off() {
    let root = deck();
    let r = root.to_str().unwrap();
    let o = skilldeck(
        &["run", "--root", r, "demo", "../off-skill/scripts/x.sh"],
        &root,
        b"",
    );
    assert_eq!(o.status.code(), Some(125), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("'..' is not allowed"),
        "{}",
        text(&o.stderr)
    );
    let o = skilldeck(
        &["run", "--root", r, "off-skill", "scripts/x.sh"],
        &root,
        b"",
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("off-skill"), "{}", text(&o.stderr));
    let o = skilldeck(
        &[
            "run",
            "--root",
            r,
            "--timeout",
            "9999",
            "demo",
            "scripts/code.sh",
        ],
        &root,
        b"",
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("at most 600"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn sandbox_lists_the_layers_and_the_policy() {
    let root = Root::new();
    let o = skilldeck(&["sandbox"], &root, b"");
    assert_eq!(o.status.code(), Some(0));
    let out = text(&o.stdout);
    for needle in [
        "landlock-abi7",
        "seccomp",
        "x32 calls refused",
        "System V IPC calls refused",
        "IPC",
        "namespaces",
        "bwrap",
        "Profile native:",
        "timeout 30 s",
        "network:",
    ] {
        assert!(out.contains(needle), "{needle}: {out}");
    }
    let o = skilldeck(&["sandbox", "--format", "json"], &root, b"");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["probe"]["layers"].as_array().unwrap().len(), 3);
    assert_eq!(v["policy"]["limits"]["timeout_ms"], 30000);
    // The per-run caps are reported as they are: a cgroup interface, or
    // none with the reason, never claimed when absent.
    let tree = &v["probe"]["tree_limits"];
    assert_eq!(tree, &v["policy"]["tree_limits"]);
    let layers = v["policy"]["layers"].to_string();
    assert!(
        out.contains("tree-limits") && out.contains("per run:"),
        "{out}"
    );
    if tree["kind"] == "none" {
        assert!(out.contains("NOT APPLIED"), "{out}");
        assert!(!layers.contains("cgroup-"), "{layers}");
    } else {
        assert!(out.contains("for the whole run"), "{out}");
        assert!(layers.contains(tree["kind"].as_str().unwrap()), "{layers}");
    }
    assert_eq!(v["policy"]["workdir_quota_bytes"], 256 * 1024 * 1024);
    assert!(out.contains("a tmpfs of 268435456 bytes"), "{out}");
    assert!(v["work_root"].is_string());
}

#[test]
fn the_exec_config_sets_the_policy_and_a_skills_grant_passes_its_variables() {
    let root = Root::new();
    root.skill("demo")
        .description("Demo scripts. Use in tests.")
        .file("scripts/env.sh", "echo \"token=${DEMO_TOKEN:-absent}\"\n")
        .write();
    root.skill("other")
        .description("Other scripts. Use in tests.")
        .file("scripts/env.sh", "echo \"token=${DEMO_TOKEN:-absent}\"\n")
        .write();
    root.file(
        "skilldeck.toml",
        "[exec]\ntimeout-secs = 9\n[exec.skills.demo]\nenv = [\"DEMO_TOKEN\"]\n",
    );
    let r = root.to_str().unwrap();
    let run = |skill: &str| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_skilldeck"));
        cmd.args([
            "run",
            "--root",
            r,
            "--format",
            "json",
            skill,
            "scripts/env.sh",
        ])
        .current_dir(&*root)
        .env("XDG_CONFIG_HOME", root.join(".no-user-config"))
        .env("DEMO_TOKEN", "t0ken")
        .stdin(Stdio::null());
        cmd.output().unwrap()
    };
    let o = run("demo");
    if !ready(&root) {
        assert_eq!(o.status.code(), Some(125));
        return;
    }
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["stdout"], "token=t0ken\n");
    assert_eq!(v["policy"]["limits"]["timeout_ms"], 9000);
    assert_eq!(v["policy"]["env"], serde_json::json!(["DEMO_TOKEN"]));
    let v: serde_json::Value = serde_json::from_slice(&run("other").stdout).unwrap();
    assert_eq!(v["stdout"], "token=absent\n", "the grant is per skill");
}

/// Runs `skilldeck ARGS` on a fresh pseudo-terminal that is its
/// controlling terminal (as an operator's shell would), reads everything
/// it writes until it exits, and reports the terminal modes before and
/// after (python3's `pty`/`termios`: the test crate has no unsafe code).
const PTY_HARNESS: &str = r#"
import fcntl, json, os, pty, select, subprocess, sys, termios
master, slave = pty.openpty()
before = termios.tcgetattr(slave)
def own_terminal():
    os.setsid()
    fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
p = subprocess.Popen(sys.argv[1:], stdin=slave, stdout=slave, stderr=slave, preexec_fn=own_terminal)
out = b''
while True:
    ready, _, _ = select.select([master], [], [], 0.1)
    if ready:
        out += os.read(master, 65536)
    elif p.poll() is not None:
        break
after = termios.tcgetattr(slave)
print(json.dumps({'same': before == after, 'before': repr(before), 'after': repr(after),
                  'out': out.decode('latin-1'), 'code': p.returncode}))
"#;

#[test]
fn a_script_never_gets_the_operators_terminal_nor_changes_its_modes() {
    let root = Root::new();
    root.skill("tty")
        .description("Terminal probe. Use in tests.")
        .file(
            "scripts/tty.sh",
            "if test -t 0; then echo stdin=terminal; else echo stdin=not-a-terminal; fi\n\
             stty -echo -icanon raw 2>/dev/null; echo \"stty=$?\"\n\
             (exec 3</dev/tty) 2>/dev/null && echo dev-tty=opened || echo dev-tty=refused\n\
             printf 'esc\\033[?1049h\\033]0;owned\\007end\\n'\n",
        )
        .write();
    let r = root.to_str().unwrap();
    let mut profiles = vec!["none"];
    if ready(&root) {
        profiles.push("native");
    }
    for profile in profiles {
        let o = Command::new("python3")
            .args(["-c", PTY_HARNESS, env!("CARGO_BIN_EXE_skilldeck")])
            .args([
                "run",
                "--root",
                r,
                "--sandbox",
                profile,
                "tty",
                "scripts/tty.sh",
            ])
            .current_dir(&root)
            .env("NO_COLOR", "1")
            .env("XDG_CONFIG_HOME", root.join(".no-user-config"))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let out = v["out"].as_str().unwrap();
        assert_eq!(v["code"], 0, "{profile}: {out}");
        assert_eq!(
            v["same"], true,
            "{profile}: the script changed the operator's terminal: {} -> {}",
            v["before"], v["after"]
        );
        assert!(out.contains("stdin=not-a-terminal"), "{profile}: {out}");
        assert!(out.contains("dev-tty=refused"), "{profile}: {out}");
        assert!(out.contains("end"), "{profile}: {out}");
        assert!(
            !out.contains('\u{1b}'),
            "{profile}: raw escapes reached the terminal: {out:?}"
        );
    }
}
