//! Escape attempts from skill scripts: each must be contained, with the
//! reason visible in the result. Where this machine lacks a layer, every
//! test asserts the refusal (naming what is missing) instead of skipping.
//! The attacks are Linux's (abstract sockets, System V IPC, namespaces);
//! elsewhere every run is refused by the OS's backend (pinned by
//! `every_backend_refuses_a_policy_it_cannot_enforce`).

#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use skilldeck_exec::{
    CallContext, ErrorKind, ExecError, Executor, Input, NetworkGrant, Outcome, Policy, Profile,
    Request, probe,
};
use skilldeck_testkit::Root;
use skilldeck_testkit::process::in_own_process;

use crate::common::text;

struct Fixture {
    root: Root,
    deck: skilldeck::Deck,
}

fn fixture(files: &[(&str, &str)]) -> Fixture {
    let root = Root::new();
    let mut skill = root
        .skill("probe")
        .description("Escape probes. Use in tests.")
        .body("# Probe\n");
    for (path, text) in files {
        skill = skill.file(path, text);
    }
    skill.write();
    let deck = skilldeck::discover(&skilldeck::DiscoveryOptions::with_roots([root
        .path()
        .to_path_buf()]));
    Fixture { root, deck }
}

impl Fixture {
    fn skill(&self) -> &skilldeck::Skill {
        self.deck.get("probe").expect("the probe skill loads")
    }

    fn skill_dir(&self) -> PathBuf {
        self.skill().real_dir().to_path_buf()
    }

    fn run_with(
        &self,
        path: &str,
        args: &[&str],
        stdin: Input,
        policy: &Policy,
    ) -> Result<Outcome, ExecError> {
        Executor::default().run(
            Request {
                skill: self.skill(),
                path,
                args: args.iter().map(|s| (*s).to_owned()).collect(),
                stdin,
                context: CallContext {
                    agent_id: "agent-1".into(),
                    user_id: "user-1".into(),
                    session_id: "session-1".into(),
                    call_id: "call-1".into(),
                    tool: String::new(),
                },
            },
            policy,
        )
    }

    /// Runs `path` sandboxed; where the native profile cannot run here,
    /// asserts the refusal names the missing layer and returns `None`.
    fn sandboxed(&self, path: &str, args: &[&str], policy: &Policy) -> Option<Outcome> {
        let result = self.run_with(path, args, Input::Null, policy);
        let p = probe();
        if !p.native_ready {
            let err = result.expect_err("a missing layer must refuse");
            assert_eq!(err.kind(), ErrorKind::Unavailable, "{err}");
            let missing = p.missing().join("; ");
            eprintln!("refusal path tested: missing {missing}: {err}");
            assert!(err.to_string().contains("sandbox unavailable"), "{err}");
            return None;
        }
        Some(result.unwrap_or_else(|e| panic!("sandboxed run failed: {e}")))
    }
}

/// Profile bwrap can run here. `SKILLDECK_TEST_REQUIRE_BWRAP=1` (set by
/// `.ci/run`, which installs bubblewrap) turns "unusable" into a failure,
/// so CI never passes on the refusal path alone.
fn bwrap_usable() -> bool {
    let layer = &probe().bwrap_layer;
    if std::env::var_os("SKILLDECK_TEST_REQUIRE_BWRAP").is_some_and(|v| v == "1") {
        assert!(
            layer.available,
            "SKILLDECK_TEST_REQUIRE_BWRAP=1 but {}",
            layer.detail
        );
    }
    layer.available
}

fn short_policy() -> Policy {
    let mut p = Policy::default();
    p.limits.timeout = Duration::from_secs(20);
    p
}

#[test]
fn a_root_only_file_stays_closed() {
    let fx = fixture(&[(
        "scripts/shadow.sh",
        "cat /etc/shadow; echo \"cat=$?\"; cat /root/.bashrc >/dev/null; echo \"home=$?\"\n",
    )]);
    let Some(o) = fx.sandboxed("scripts/shadow.sh", &[], &short_policy()) else {
        return;
    };
    let out = text(&o.stdout);
    let err = text(&o.stderr);
    assert!(!out.contains("root:"), "shadow leaked: {out}");
    assert!(
        out.contains("cat=1") && out.contains("home=1"),
        "{out} {err}"
    );
    assert!(err.contains("Permission denied"), "{err}");
    assert!(o.policy.layers.contains(&"landlock-abi7"));
}

#[test]
fn writes_outside_the_work_dir_and_into_the_skill_are_denied() {
    let fx = fixture(&[(
        "scripts/write.sh",
        "try() { if (echo x > \"$2\"); then echo \"$1=written\"; else echo \"$1=denied\"; fi; }\n\
         try skill \"$SKILLDECK_SKILL_DIR/planted.txt\"\n\
         try real \"$1/planted-real.txt\"\n\
         try outside \"$2\"\n\
         try tmp /tmp/skilldeck-escape-$$\n\
         try home \"$HOME/mine.txt\"\n\
         try tmpdir \"$TMPDIR/mine.txt\"\n",
    )]);
    let outside = fx.root.path().join("outside.txt");
    let skill_dir = fx.skill_dir();
    let Some(o) = fx.sandboxed(
        "scripts/write.sh",
        &[skill_dir.to_str().unwrap(), outside.to_str().unwrap()],
        &short_policy(),
    ) else {
        return;
    };
    let out = text(&o.stdout);
    for denied in ["skill", "real", "outside", "tmp"] {
        assert!(out.contains(&format!("{denied}=denied")), "{denied}: {out}");
    }
    assert!(
        out.contains("home=written"),
        "the work dir is writable: {out}"
    );
    assert!(
        out.contains("tmpdir=written"),
        "the private tmp is writable: {out}"
    );
    let err = text(&o.stderr);
    assert!(
        err.contains("Permission denied") || err.contains("Read-only file system"),
        "the reason: {err}"
    );
    assert!(!skill_dir.join("planted.txt").exists());
    assert!(!skill_dir.join("planted-real.txt").exists());
    assert!(!outside.exists());
}

#[test]
fn tcp_and_udp_to_a_loopback_listener_are_refused() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    let fx = fixture(&[(
        "scripts/net.py",
        "import socket, sys\n\
         port, uport = int(sys.argv[1]), int(sys.argv[2])\n\
         try:\n    socket.create_connection(('127.0.0.1', port), timeout=3); print('tcp=connected')\n\
         except OSError as e:\n    print('tcp=refused', e)\n\
         try:\n    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b'x', ('127.0.0.1', uport)); print('udp=sent')\n\
         except OSError as e:\n    print('udp=refused', e)\n\
         try:\n    socket.getaddrinfo('example.com', 80); print('dns=resolved')\n\
         except OSError as e:\n    print('dns=refused', e)\n",
    )]);
    let port = listener.local_addr().unwrap().port().to_string();
    let uport = udp.local_addr().unwrap().port().to_string();
    let Some(o) = fx.sandboxed("scripts/net.py", &[&port, &uport], &short_policy()) else {
        return;
    };
    let out = text(&o.stdout);
    assert!(out.contains("tcp=refused"), "{out} {}", text(&o.stderr));
    assert!(out.contains("udp=refused"), "{out}");
    assert!(out.contains("dns=refused"), "{out}");
    assert!(out.contains("Operation not permitted"), "the reason: {out}");
    assert!(listener.accept().is_err(), "nothing connected");
    assert!(udp.recv(&mut [0u8; 8]).is_err(), "nothing arrived");
}

#[test]
fn host_unix_sockets_pathname_and_abstract_are_refused() {
    use std::os::linux::net::SocketAddrExt;
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let path = dir.path().join("host.sock");
    let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o777)).unwrap();
    listener.set_nonblocking(true).unwrap();
    let name = format!("skilldeck-test-{}", std::process::id());
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let abstract_listener = std::os::unix::net::UnixListener::bind_addr(&addr).unwrap();
    abstract_listener.set_nonblocking(true).unwrap();
    let fx = fixture(&[(
        "scripts/unix.py",
        "import socket, sys\n\
         for label, addr in (('path', sys.argv[1]), ('abstract', '\\0' + sys.argv[2])):\n\
         \x20   try:\n\
         \x20       s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.connect(addr); print(label + '=connected')\n\
         \x20   except OSError as e:\n\
         \x20       print(label + '=refused', e)\n",
    )]);
    let Some(o) = fx.sandboxed(
        "scripts/unix.py",
        &[path.to_str().unwrap(), &name],
        &short_policy(),
    ) else {
        return;
    };
    let out = text(&o.stdout);
    assert!(out.contains("path=refused"), "{out} {}", text(&o.stderr));
    assert!(out.contains("abstract=refused"), "{out}");
    assert!(listener.accept().is_err());
    assert!(abstract_listener.accept().is_err());
}

#[test]
fn the_parents_secrets_do_not_reach_the_script_unless_listed() {
    // The secrets are in this process's environment from its start: a
    // process of its own, as changing the environment of the crate's test
    // binary would race every other test's thread that reads it.
    if !in_own_process(
        "escape::the_parents_secrets_do_not_reach_the_script_unless_listed",
        &[
            ("SKILLDECK_TEST_SECRET_TOKEN", "hunter2-secret"),
            ("SKILLDECK_TEST_LISTED", "listed-value"),
        ],
    ) {
        return;
    }
    let fx = fixture(&[("scripts/env.sh", "env\n")]);
    let mut policy = short_policy();
    policy.grants.env = vec!["SKILLDECK_TEST_LISTED".into()];
    let Some(o) = fx.sandboxed("scripts/env.sh", &[], &policy) else {
        return;
    };
    let out = text(&o.stdout);
    assert!(!out.contains("hunter2-secret"), "{out}");
    assert!(out.contains("SKILLDECK_TEST_LISTED=listed-value"), "{out}");
    for var in [
        "PATH=",
        "LANG=",
        "HOME=",
        "SKILLDECK_SKILL_NAME=probe",
        "SKILLDECK_SKILL_DIR=",
        "SKILLDECK_WORKDIR=",
        "SKILLDECK_AGENT_ID=agent-1",
        "SKILLDECK_USER_ID=user-1",
        "SKILLDECK_SESSION_ID=session-1",
    ] {
        assert!(out.contains(var), "{var} missing: {out}");
    }
}

#[test]
fn host_processes_cannot_be_signalled_traced_or_read() {
    let mut sleeper = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .unwrap();
    let target = sleeper.id().to_string();
    let me = std::process::id().to_string();
    let fx = fixture(&[(
        "scripts/poke.py",
        "import ctypes, os, signal, sys\n\
         libc = ctypes.CDLL(None, use_errno=True)\n\
         for pid in map(int, sys.argv[1:]):\n\
         \x20   try:\n\
         \x20       os.kill(pid, signal.SIGTERM); print(pid, 'kill=sent')\n\
         \x20   except OSError as e:\n\
         \x20       print(pid, 'kill=refused', e)\n\
         \x20   r = libc.ptrace(16, pid, None, None)\n\
         \x20   print(pid, 'ptrace=%s' % ('attached' if r == 0 else 'refused errno %d' % ctypes.get_errno()))\n\
         \x20   try:\n\
         \x20       open('/proc/%d/environ' % pid, 'rb').read(); print(pid, 'environ=read')\n\
         \x20   except OSError as e:\n\
         \x20       print(pid, 'environ=refused', e)\n",
    )]);
    let outcome = fx.sandboxed("scripts/poke.py", &[&target, &me], &short_policy());
    let alive = sleeper.try_wait().unwrap().is_none();
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    let Some(o) = outcome else { return };
    let out = text(&o.stdout);
    assert!(alive, "the host process survived");
    for pid in [&target, &me] {
        assert!(
            out.contains(&format!("{pid} kill=refused")),
            "{out} {}",
            text(&o.stderr)
        );
        assert!(out.contains(&format!("{pid} ptrace=refused")), "{out}");
        assert!(out.contains(&format!("{pid} environ=refused")), "{out}");
    }
}

fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let mut cmdline = String::new();
        if let Ok(mut f) = std::fs::File::open(entry.path().join("cmdline"))
            && f.read_to_string(&mut cmdline).is_ok()
            && cmdline.contains(marker)
        {
            found.push(format!(
                "{}: {}",
                entry.path().display(),
                cmdline.replace('\0', " ")
            ));
        }
    }
    found
}

#[test]
fn a_daemon_that_leaves_the_session_dies_with_the_timeout() {
    let marker = format!("{}", 900_000 + std::process::id() % 90_000);
    let fx = fixture(&[(
        "scripts/daemon.sh",
        "( setsid sh -c \"sleep $1 & sleep $1\" & ) \n\
         ( sh -c \"sleep $1 &\" & )\n\
         echo started\nsleep 100\n",
    )]);
    let mut policy = short_policy();
    policy.limits.timeout = Duration::from_secs(2);
    let Some(o) = fx.sandboxed("scripts/daemon.sh", &[&marker], &policy) else {
        return;
    };
    assert!(o.timed_out, "{o:?}");
    assert_eq!(o.exit_code, None);
    assert_eq!(o.signal, Some(9));
    assert!(text(&o.stdout).contains("started"));
    // The namespace is torn down by the kernel as the init dies; allow it
    // a moment to finish reaping.
    let mut left = processes_with(&marker);
    for _ in 0..50 {
        if left.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
        left = processes_with(&marker);
    }
    assert!(left.is_empty(), "daemons survived: {left:?}");
}

#[test]
fn daemons_die_when_the_script_exits_normally_too() {
    let marker = format!("{}", 800_000 + std::process::id() % 90_000);
    let fx = fixture(&[("scripts/leave.sh", "( setsid sleep $1 & ) \necho done\n")]);
    let Some(o) = fx.sandboxed("scripts/leave.sh", &[&marker], &short_policy()) else {
        return;
    };
    assert_eq!(o.exit_code, Some(0), "{}", text(&o.stderr));
    let mut left = processes_with(&marker);
    for _ in 0..50 {
        if left.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
        left = processes_with(&marker);
    }
    assert!(left.is_empty(), "daemons survived: {left:?}");
}

/// The process limit counts every process of the sandbox user on the
/// machine: two storms at once (the test harness runs tests in parallel)
/// would each see the other's processes, and bwrap could not even start
/// its init ("Can't fork for pid 1"). A storm test holds this for its whole
/// run; a run's processes are gone when it returns.
fn one_storm_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static STORM: std::sync::Mutex<()> = std::sync::Mutex::new(());
    STORM
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[test]
fn a_fork_storm_hits_the_process_limit() {
    let _one_storm = one_storm_at_a_time();
    let fx = fixture(&[(
        "scripts/storm.py",
        "import os, time\n\
         n = 0\n\
         try:\n\
         \x20   while n < 5000:\n\
         \x20       if os.fork() == 0:\n\
         \x20           time.sleep(30); os._exit(0)\n\
         \x20       n += 1\n\
         except OSError as e:\n\
         \x20   print('stopped after', n, 'forks:', e)\n",
    )]);
    let mut policy = short_policy();
    policy.limits.max_processes = 16;
    let Some(o) = fx.sandboxed("scripts/storm.py", &[], &policy) else {
        return;
    };
    let out = text(&o.stdout);
    assert!(out.contains("stopped after"), "{out} {}", text(&o.stderr));
    assert!(out.contains("Resource temporarily unavailable"), "{out}");
    let n: u64 = out
        .split_whitespace()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap();
    assert!(n < 16, "{n} forks under a limit of 16");
}

#[test]
fn a_memory_hog_is_stopped_by_the_memory_limit() {
    let fx = fixture(&[(
        "scripts/hog.py",
        "try:\n    b = bytearray(4 * 1024 * 1024 * 1024); print('allocated', len(b))\n\
         except MemoryError:\n    print('MemoryError')\n",
    )]);
    let mut policy = short_policy();
    policy.limits.memory_bytes = 512 * 1024 * 1024;
    let Some(o) = fx.sandboxed("scripts/hog.py", &[], &policy) else {
        return;
    };
    assert!(text(&o.stdout).contains("MemoryError"), "{o:?}");
}

#[test]
fn an_output_flood_is_capped_and_the_script_still_finishes() {
    let fx = fixture(&[(
        "scripts/flood.sh",
        "head -c 20000000 /dev/zero\nhead -c 3000000 /dev/zero >&2\necho finished >&2\n",
    )]);
    let mut policy = short_policy();
    policy.limits.output_cap = 1024 * 1024;
    let Some(o) = fx.sandboxed("scripts/flood.sh", &[], &policy) else {
        return;
    };
    assert_eq!(o.exit_code, Some(0));
    assert!(o.stdout_truncated && o.stderr_truncated);
    assert_eq!(o.stdout.len(), 1024 * 1024);
    assert_eq!(o.stderr.len(), 1024 * 1024);
}

#[test]
fn a_legitimate_script_writes_its_work_dir_reads_its_references_and_runs_python() {
    let fx = fixture(&[
        ("references/guide.md", "the guide\n"),
        (
            "scripts/legit.py",
            "import json, os, subprocess, sys, tempfile\n\
             guide = open(os.path.join(os.environ['SKILLDECK_SKILL_DIR'], 'references/guide.md')).read()\n\
             open('result.txt', 'w').write('written')\n\
             with tempfile.NamedTemporaryFile(dir=os.environ['TMPDIR']) as t: t.write(b'x')\n\
             child = subprocess.run(['python3', '-c', 'print(6*7)'], capture_output=True, text=True).stdout.strip()\n\
             data = sys.stdin.read()\n\
             print(json.dumps({'guide': guide, 'cwd_is_home': os.getcwd() == os.environ['HOME'],\n\
             \x20   'written': open('result.txt').read(), 'child': child, 'stdin': data, 'args': sys.argv[1:]}))\n",
        ),
    ]);
    let result = fx.run_with(
        "scripts/legit.py",
        &["a b", "c"],
        Input::Bytes(b"{\"x\": 1}".to_vec()),
        &short_policy(),
    );
    if !probe().native_ready {
        assert_eq!(result.unwrap_err().kind(), ErrorKind::Unavailable);
        return;
    }
    let o = result.unwrap();
    assert_eq!(o.exit_code, Some(0), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["guide"], "the guide\n");
    assert_eq!(v["cwd_is_home"], true);
    assert_eq!(v["written"], "written");
    assert_eq!(v["child"], "42");
    assert_eq!(v["stdin"], "{\"x\": 1}");
    assert_eq!(v["args"], serde_json::json!(["a b", "c"]));
    assert!(o.workdir.is_none(), "the work dir is removed");
}

#[test]
fn a_timeout_kills_the_script_and_says_so() {
    let fx = fixture(&[("scripts/slow.sh", "echo before\nsleep 100\n")]);
    let mut policy = short_policy();
    policy.limits.timeout = Duration::from_millis(500);
    let Some(o) = fx.sandboxed("scripts/slow.sh", &[], &policy) else {
        return;
    };
    assert!(o.timed_out);
    assert_eq!((o.exit_code, o.signal), (None, Some(9)));
    assert_eq!(o.label(), "timeout");
    assert_eq!(text(&o.stdout), "before\n");
}

#[test]
fn the_exit_code_and_a_signal_are_reported() {
    let fx = fixture(&[
        ("scripts/three.sh", "exit 3\n"),
        ("scripts/term.sh", "kill -TERM $$\nsleep 5\n"),
    ]);
    let Some(o) = fx.sandboxed("scripts/three.sh", &[], &short_policy()) else {
        return;
    };
    assert_eq!((o.exit_code, o.signal, o.timed_out), (Some(3), None, false));
    let o = fx
        .sandboxed("scripts/term.sh", &[], &short_policy())
        .unwrap();
    assert_eq!(
        (o.exit_code, o.signal),
        (None, Some(15)),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn profile_none_runs_without_isolation_but_with_a_cleared_environment() {
    let fx = fixture(&[(
        "scripts/none.sh",
        "test -r /etc/passwd && echo read; echo \"HOME=$HOME\"; env | wc -l\n",
    )]);
    let mut policy = short_policy();
    policy.profile = skilldeck_exec::Profile::None;
    let o = fx
        .run_with("scripts/none.sh", &[], Input::Null, &policy)
        .unwrap();
    assert_eq!(o.exit_code, Some(0), "{}", text(&o.stderr));
    assert!(o.policy.layers.iter().all(|l| !l.starts_with("landlock")));
    assert!(text(&o.stdout).contains("read"));
}

// ---------------------------------------------------------------- bad input

#[test]
fn a_path_that_leaves_the_skill_is_denied_before_anything_runs() {
    let fx = fixture(&[("scripts/ok.sh", "echo ok\n")]);
    fx.root.file("outside.sh", "echo escaped\n");
    std::os::unix::fs::symlink(
        fx.root.path().join("outside.sh"),
        fx.skill_dir().join("scripts/link.sh"),
    )
    .unwrap();
    for path in ["../outside.sh", "/etc/passwd", "scripts/link.sh"] {
        let err = fx
            .run_with(path, &[], Input::Null, &short_policy())
            .expect_err(path);
        assert_eq!(err.kind(), ErrorKind::Denied, "{path}: {err}");
        assert!(err.to_string().contains("probe"), "names the skill: {err}");
    }
}

#[test]
fn a_missing_interpreter_is_a_clear_error() {
    let fx = fixture(&[
        (
            "scripts/x.tool",
            "#!/usr/bin/env skilldeck-no-such-interpreter\necho\n",
        ),
        ("scripts/y.tool", "#!/opt/nowhere/bin/interp\necho\n"),
        ("scripts/plain.txt", "no shebang\n"),
    ]);
    let err = fx
        .run_with("scripts/x.tool", &[], Input::Null, &short_policy())
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(
        err.to_string().contains("skilldeck-no-such-interpreter"),
        "{err}"
    );
    let err = fx
        .run_with("scripts/y.tool", &[], Input::Null, &short_policy())
        .unwrap_err();
    assert!(err.to_string().contains("/opt/nowhere/bin/interp"), "{err}");
    let err = fx
        .run_with("scripts/plain.txt", &[], Input::Null, &short_policy())
        .unwrap_err();
    assert!(err.to_string().contains("not executable"), "{err}");
}

#[test]
fn a_fifo_is_refused_without_blocking() {
    let fx = fixture(&[("scripts/ok.sh", "echo ok\n")]);
    let fifo = fx.skill_dir().join("scripts/pipe.sh");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success());
    let err = fx
        .run_with("scripts/pipe.sh", &[], Input::Null, &short_policy())
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
    assert!(err.to_string().contains("not a regular file"), "{err}");
}

#[test]
fn ten_megabytes_of_stdin_or_arguments_are_refused() {
    let fx = fixture(&[("scripts/ok.sh", "echo ok\n")]);
    let big = vec![b'x'; 10 * 1024 * 1024];
    let err = fx
        .run_with(
            "scripts/ok.sh",
            &[],
            Input::Bytes(big.clone()),
            &short_policy(),
        )
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(err.to_string().contains("stdin is 10485760 bytes"), "{err}");
    let arg = String::from_utf8(big).unwrap();
    let err = fx
        .run_with("scripts/ok.sh", &[&arg], Input::Null, &short_policy())
        .unwrap_err();
    assert!(err.to_string().contains("arguments are"), "{err}");
}

#[test]
fn a_granted_path_that_does_not_exist_is_refused() {
    let fx = fixture(&[("scripts/ok.sh", "echo ok\n")]);
    let mut policy = short_policy();
    policy.grants.read_paths = vec![Path::new("/nonexistent/skilldeck-grant").to_path_buf()];
    let err = fx
        .run_with("scripts/ok.sh", &[], Input::Null, &policy)
        .unwrap_err();
    if probe().native_ready {
        assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
        assert!(
            err.to_string().contains("/nonexistent/skilldeck-grant"),
            "{err}"
        );
    } else {
        assert_eq!(err.kind(), ErrorKind::Unavailable, "{err}");
    }
}

#[test]
fn every_backend_refuses_a_granted_path_that_does_not_exist() {
    // Native and bwrap alike refuse before anything runs, naming the path
    // (bwrap used to start and fail inside, an exit code the operator
    // could not read); where a backend is missing here, its refusal names
    // what is missing instead.
    let fx = fixture(&[("scripts/ok.sh", "echo ok\n")]);
    for profile in [Profile::Native, Profile::Bwrap] {
        for write in [false, true] {
            let mut policy = short_policy();
            policy.profile = profile;
            let missing = Path::new("/nonexistent/skilldeck-grant").to_path_buf();
            if write {
                policy.grants.write_paths = vec![missing];
            } else {
                policy.grants.read_paths = vec![missing];
            }
            let err = fx
                .run_with("scripts/ok.sh", &[], Input::Null, &policy)
                .expect_err(profile.name());
            let available = match profile {
                Profile::Native => probe().native_ready,
                _ => probe().bwrap_layer.available,
            };
            if available {
                assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
                assert!(
                    err.to_string().contains("/nonexistent/skilldeck-grant"),
                    "{err}"
                );
            } else {
                assert_eq!(err.kind(), ErrorKind::Unavailable, "{err}");
            }
        }
    }
}

// ---------------------------------------------------------------- bwrap

#[test]
fn the_bwrap_profile_contains_the_same_escapes_or_is_refused_when_missing() {
    // A secret in the environment (see
    // the_parents_secrets_do_not_reach_the_script_unless_listed).
    if !in_own_process(
        "escape::the_bwrap_profile_contains_the_same_escapes_or_is_refused_when_missing",
        &[("SKILLDECK_TEST_BWRAP_SECRET", "bwrap-secret")],
    ) {
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let fx = fixture(&[
        ("references/guide.md", "the guide\n"),
        (
            "scripts/all.py",
            "import os, socket, sys\n\
             def attempt(label, f):\n\
             \x20   try:\n\
             \x20       f(); print(label + '=done')\n\
             \x20   except OSError as e:\n\
             \x20       print(label + '=refused', e)\n\
             attempt('shadow', lambda: open('/etc/shadow').read())\n\
             attempt('skillwrite', lambda: open(os.environ['SKILLDECK_SKILL_DIR'] + '/x', 'w'))\n\
             attempt('outside', lambda: open(sys.argv[2], 'w'))\n\
             attempt('tcp', lambda: socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=3))\n\
             attempt('unix', lambda: socket.socket(socket.AF_UNIX).connect('/run/systemd/private'))\n\
             attempt('work', lambda: open('mine.txt', 'w').write('ok'))\n\
             print('guide=' + open(os.environ['SKILLDECK_SKILL_DIR'] + '/references/guide.md').read().strip())\n\
             print('secret=' + os.environ.get('SKILLDECK_TEST_BWRAP_SECRET', 'absent'))\n",
        ),
    ]);
    let outside = fx.root.path().join("outside-bwrap.txt");
    let mut policy = short_policy();
    policy.profile = skilldeck_exec::Profile::Bwrap;
    let result = fx.run_with(
        "scripts/all.py",
        &[&port, outside.to_str().unwrap()],
        Input::Null,
        &policy,
    );
    if !bwrap_usable() {
        let err = result.expect_err("no bwrap: refused");
        assert_eq!(err.kind(), ErrorKind::Unavailable);
        assert!(err.to_string().contains("bwrap"), "{err}");
        return;
    }
    let o = result.unwrap();
    let out = text(&o.stdout);
    assert_eq!(o.exit_code, Some(0), "{out} {}", text(&o.stderr));
    for refused in ["shadow", "skillwrite", "outside", "tcp", "unix"] {
        assert!(
            out.contains(&format!("{refused}=refused")),
            "{refused}: {out}"
        );
    }
    assert!(out.contains("work=done"), "{out}");
    assert!(out.contains("guide=the guide"), "{out}");
    assert!(out.contains("secret=absent"), "{out}");
    assert!(!outside.exists());
    assert!(listener.accept().is_err());
    assert!(o.policy.layers.contains(&"bwrap"));
}

#[test]
fn a_bwrap_timeout_kills_the_whole_tree() {
    let marker = format!("{}", 700_000 + std::process::id() % 90_000);
    let fx = fixture(&[(
        "scripts/daemon.sh",
        "( setsid sh -c \"sleep $1 & sleep $1\" & )\necho started\nsleep 100\n",
    )]);
    let mut policy = short_policy();
    policy.profile = skilldeck_exec::Profile::Bwrap;
    policy.limits.timeout = Duration::from_secs(2);
    let result = fx.run_with("scripts/daemon.sh", &[&marker], Input::Null, &policy);
    if !bwrap_usable() {
        assert_eq!(result.unwrap_err().kind(), ErrorKind::Unavailable);
        return;
    }
    let o = result.unwrap();
    assert!(o.timed_out, "{o:?}");
    let mut left = processes_with(&marker);
    for _ in 0..50 {
        if left.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
        left = processes_with(&marker);
    }
    assert!(left.is_empty(), "daemons survived: {left:?}");
}

#[test]
fn an_operator_network_grant_opens_tcp_but_not_host_unix_sockets() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let fx = fixture(&[(
        "scripts/granted.py",
        "import socket, sys\n\
         s = socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=5); s.sendall(b'hi'); s.close(); print('tcp=connected')\n\
         try:\n    socket.socket(socket.AF_UNIX).connect('/run/none.sock'); print('unix=connected')\n\
         except OSError as e:\n    print('unix=refused', e)\n",
    )]);
    let mut policy = short_policy();
    policy.grants.network = NetworkGrant::All;
    let accepter = std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        let mut got = Vec::new();
        conn.read_to_end(&mut got).unwrap();
        got
    });
    let Some(o) = fx.sandboxed("scripts/granted.py", &[&port], &policy) else {
        // Unblock the accepting thread.
        let _ = std::net::TcpStream::connect(format!("127.0.0.1:{port}"));
        let _ = accepter.join();
        return;
    };
    let out = text(&o.stdout);
    assert!(out.contains("tcp=connected"), "{out} {}", text(&o.stderr));
    assert!(
        out.contains("unix=refused Operation not permitted")
            || out.contains("unix=refused [Errno 1]"),
        "{out}"
    );
    assert_eq!(accepter.join().unwrap(), b"hi");
    assert!(o.policy.network.is_all());
    assert!(!o.policy.layers.contains(&"network-namespace"));
}

#[test]
fn the_interpreter_comes_from_the_shebang_else_the_extension_else_the_executable_bit() {
    use std::os::unix::fs::PermissionsExt;
    let fx = fixture(&[
        ("scripts/a.js", "console.log('js', typeof require)\n"),
        ("scripts/b.bash", "echo \"bash ${BASH_VERSION%%.*}\"\n"),
        ("scripts/c.sh", "echo sh\n"),
        ("scripts/d.rb", "puts 'rb'\n"),
        ("scripts/e.txt", "#!/bin/sh\necho shebang wins\n"),
        ("scripts/f", "echo executable\n"),
    ]);
    let f = fx.skill_dir().join("scripts/f");
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).unwrap();
    let cases = [
        ("scripts/a.js", "node", "js function"),
        ("scripts/b.bash", "bash", "bash "),
        ("scripts/c.sh", "sh", "sh"),
        ("scripts/d.rb", "ruby", "rb"),
        ("scripts/e.txt", "sh", "shebang wins"),
        ("scripts/f", "sh", "executable"),
    ];
    for (path, interpreter, expected) in cases {
        let installed =
            interpreter == "sh" || skilldeck_exec::on_sandbox_path(interpreter).is_some();
        let result = fx.run_with(path, &[], Input::Null, &short_policy());
        if !installed {
            let err = result.expect_err(path);
            assert_eq!(err.kind(), ErrorKind::InvalidInput, "{path}: {err}");
            assert!(
                err.to_string().contains(&format!("'{interpreter}'")),
                "{err}"
            );
            continue;
        }
        if !probe().native_ready {
            assert_eq!(result.unwrap_err().kind(), ErrorKind::Unavailable);
            continue;
        }
        let o = result.unwrap_or_else(|e| panic!("{path}: {e}"));
        assert_eq!(o.exit_code, Some(0), "{path}: {}", text(&o.stderr));
        assert!(
            text(&o.stdout).starts_with(expected),
            "{path}: {}",
            text(&o.stdout)
        );
    }
}

#[test]
fn auto_picks_native_when_ready_else_bwrap_else_refuses_naming_both() {
    let p = probe();
    match skilldeck_exec::best_profile() {
        Ok(skilldeck_exec::Profile::Native) => assert!(p.native_ready),
        Ok(skilldeck_exec::Profile::Bwrap) => {
            assert!(!p.native_ready && p.bwrap_layer.available)
        }
        Ok(other) => panic!("auto never picks {other:?}"),
        Err(e) => {
            assert!(!p.native_ready && !p.bwrap_layer.available);
            assert!(e.to_string().contains("bwrap"), "{e}");
        }
    }
}

// ------------------------------------------- IPC, ABI, uid, bwrap as root

impl Fixture {
    /// Runs `path` under profile bwrap; where bwrap cannot run here,
    /// asserts the refusal names it and returns `None`.
    fn bwrapped(&self, path: &str, args: &[&str], policy: &Policy) -> Option<Outcome> {
        let mut policy = policy.clone();
        policy.profile = skilldeck_exec::Profile::Bwrap;
        let result = self.run_with(path, args, Input::Null, &policy);
        if !bwrap_usable() {
            let err = result.expect_err("an unusable bwrap must refuse");
            assert_eq!(err.kind(), ErrorKind::Unavailable, "{err}");
            assert!(err.to_string().contains("bwrap"), "{err}");
            eprintln!("bwrap refusal path tested: {err}");
            return None;
        }
        Some(result.unwrap_or_else(|e| panic!("bwrap run failed: {e}")))
    }
}

/// The keys listed in `/proc/sysvipc/{kind}` (first column), as the host
/// sees them.
fn sysv_keys(kind: &str) -> Vec<i64> {
    std::fs::read_to_string(format!("/proc/sysvipc/{kind}"))
        .unwrap()
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next()?.parse().ok())
        .collect()
}

/// Removes whatever a failed attack left under `key` (so a test run
/// against unfixed code does not leave objects on the host).
fn remove_sysv(key: i32) {
    // SAFETY: System V IPC calls with integer arguments and null buffers,
    // on objects this test's own keys name.
    #[allow(unsafe_code)]
    unsafe {
        for k in key..key + 4 {
            let id = libc::shmget(k, 0, 0);
            if id >= 0 {
                libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut());
            }
            let id = libc::msgget(k, 0);
            if id >= 0 {
                libc::msgctl(id, libc::IPC_RMID, std::ptr::null_mut());
            }
            let id = libc::semget(k, 0, 0);
            if id >= 0 {
                libc::semctl(id, 0, libc::IPC_RMID);
            }
        }
    }
}

const SYSV_PROBE: &str = "import ctypes, os, sys\n\
libc = ctypes.CDLL(None, use_errno=True)\n\
libc.shmat.restype = ctypes.c_void_p\n\
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]\n\
hid, key = int(sys.argv[1]), int(sys.argv[2])\n\
def attempt(label, r):\n\
\x20   print('%s=%s' % (label, 'refused errno %d' % ctypes.get_errno() if r == -1 else 'done %d' % r))\n\
r = libc.shmat(hid, None, 0)\n\
print('attach=' + ('refused errno %d' % ctypes.get_errno() if r in (None, 2**64 - 1) else 'done'))\n\
attempt('lookup', libc.shmget(key, 0, 0))\n\
attempt('shm', libc.shmget(0, 1 << 20, 0o1666))\n\
attempt('shmkey', libc.shmget(key + 1, 1 << 20, 0o1666))\n\
attempt('msg', libc.msgget(key + 2, 0o1666))\n\
attempt('sem', libc.semget(key + 3, 1, 0o1666))\n\
try:\n\
\x20   print('ns=' + os.readlink('/proc/self/ns/ipc'))\n\
except OSError as e:\n\
\x20   print('ns=unreadable', e)\n";

/// The attack: a host segment of mode 0666 is attached and read,
/// and segments, queues and semaphores made inside outlive the run.
fn sysv_attack(run: impl Fn(&Fixture, &[&str]) -> Option<Outcome>) {
    let key = 0x5d00_0000 + i32::try_from(std::process::id() % 0x4000).unwrap() * 4;
    remove_sysv(key);
    // SAFETY: shmget with integer arguments.
    #[allow(unsafe_code)]
    let host_id = unsafe { libc::shmget(key, 4096, libc::IPC_CREAT | libc::IPC_EXCL | 0o666) };
    assert!(host_id >= 0, "{}", std::io::Error::last_os_error());
    let fx = fixture(&[("scripts/sysv.py", SYSV_PROBE)]);
    let outcome = run(&fx, &[&host_id.to_string(), &key.to_string()]);
    let after: Vec<(String, Vec<i64>)> = ["shm", "msg", "sem"]
        .iter()
        .map(|k| ((*k).to_owned(), sysv_keys(k)))
        .collect();
    remove_sysv(key);
    let Some(o) = outcome else { return };
    let out = text(&o.stdout);
    for label in ["attach", "lookup", "shm", "shmkey", "msg", "sem"] {
        assert!(
            out.contains(&format!("{label}=refused errno 1\n")),
            "{label} not refused by seccomp (EPERM): {out} {}",
            text(&o.stderr)
        );
    }
    for (kind, keys) in after {
        for k in key + 1..key + 4 {
            assert!(
                !keys.contains(&i64::from(k)),
                "a {kind} object made inside (key {k}) outlived the run"
            );
        }
    }
    let host_ns = std::fs::read_link("/proc/self/ns/ipc").unwrap();
    let inside = out
        .lines()
        .find_map(|l| l.strip_prefix("ns="))
        .expect("the script reports its IPC namespace");
    assert!(inside.starts_with("ipc:["), "{out}");
    assert_ne!(
        Path::new(inside),
        host_ns,
        "the sandbox shares the host's IPC namespace"
    );
    assert!(o.policy.layers.contains(&"ipc-namespace"));
    assert!(o.policy.layers.contains(&"sysv-ipc-refused"));
}

#[test]
fn host_system_v_ipc_is_out_of_reach_and_nothing_made_inside_outlives_the_run() {
    sysv_attack(|fx, args| fx.sandboxed("scripts/sysv.py", args, &short_policy()));
}

#[test]
fn the_bwrap_profile_keeps_system_v_ipc_private_and_refused_too() {
    sysv_attack(|fx, args| fx.bwrapped("scripts/sysv.py", args, &short_policy()));
}

/// `syscall(__X32_SYSCALL_BIT | getpid)`: refused with EPERM by the
/// filter (a kernel without x32 would say ENOSYS; one with x32 would
/// answer, and every exact-number rule would be bypassed).
#[cfg(target_arch = "x86_64")]
const X32_PROBE: &str = "import ctypes\n\
libc = ctypes.CDLL(None, use_errno=True)\n\
r = libc.syscall(0x40000000 | 39)\n\
print('x32-getpid=%s' % ('refused errno %d' % ctypes.get_errno() if r == -1 else 'answered %d' % r))\n\
r = libc.syscall(0x40000000 | 272, 0x10000000)\n\
print('x32-unshare=%s' % ('refused errno %d' % ctypes.get_errno() if r == -1 else 'answered %d' % r))\n";

/// An i386 system call (`int 0x80`, getpid) from a 64-bit process: the
/// arch check kills the process with SIGSYS before the call runs.
#[cfg(target_arch = "x86_64")]
const I386_PROBE: &str = "import ctypes, mmap\n\
buf = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)\n\
buf.write(b'\\xb8\\x14\\x00\\x00\\x00\\xcd\\x80\\xc3')\n\
f = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(buf)))\n\
print('i386-getpid returned', f(), flush=True)\n";

#[cfg(target_arch = "x86_64")]
fn abi_attack(run: impl Fn(&Fixture, &str) -> Option<Outcome>) {
    let fx = fixture(&[
        ("scripts/x32.py", X32_PROBE),
        ("scripts/i386.py", I386_PROBE),
    ]);
    let Some(o) = run(&fx, "scripts/x32.py") else {
        return;
    };
    let out = text(&o.stdout);
    assert!(
        out.contains("x32-getpid=refused errno 1\n"),
        "an x32 call must be refused by the filter: {out} {}",
        text(&o.stderr)
    );
    assert!(out.contains("x32-unshare=refused errno 1\n"), "{out}");
    assert!(o.policy.layers.contains(&"seccomp-abi-check"));
    let o = run(&fx, "scripts/i386.py").unwrap();
    assert!(!text(&o.stdout).contains("returned"), "{o:?}");
    // bwrap's own init reports a child killed by a signal as 128 + signal.
    assert!(
        o.signal == Some(libc::SIGSYS) || o.exit_code == Some(128 + libc::SIGSYS),
        "{o:?}"
    );
}

#[cfg(target_arch = "x86_64")]
#[test]
fn x32_system_calls_are_refused_and_a_foreign_abi_is_killed() {
    abi_attack(|fx, path| fx.sandboxed(path, &[], &short_policy()));
}

#[cfg(target_arch = "x86_64")]
#[test]
fn the_bwrap_profile_refuses_x32_and_kills_a_foreign_abi_too() {
    abi_attack(|fx, path| fx.bwrapped(path, &[], &short_policy()));
}

/// A root-owned file (0644) and a file of the host's `nobody` (0644) in a
/// folder the operator granted for writing: the script may create its own
/// files there, but not write either of these.
struct Owned {
    dir: tempfile::TempDir,
}

impl Owned {
    fn new() -> Owned {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        for (name, owner) in [("root-owned.txt", 0), ("nobody-owned.txt", 65534)] {
            let p = dir.path().join(name);
            std::fs::write(&p, "original\n").unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
            std::os::unix::fs::chown(&p, Some(owner), Some(owner)).unwrap();
        }
        Owned { dir }
    }

    fn unchanged(&self) -> bool {
        ["root-owned.txt", "nobody-owned.txt"]
            .iter()
            .all(|n| std::fs::read_to_string(self.dir.path().join(n)).unwrap() == "original\n")
    }
}

const OWNER_PROBE: &str = "import os, sys\n\
print('uid=%d gid=%d' % (os.getuid(), os.getgid()))\n\
for name in ('root-owned.txt', 'nobody-owned.txt'):\n\
\x20   try:\n\
\x20       open(os.path.join(sys.argv[1], name), 'a').write('tampered\\n'); print(name + '=written')\n\
\x20   except OSError as e:\n\
\x20       print(name + '=refused', e)\n\
open(os.path.join(sys.argv[1], 'mine.txt'), 'w').write('ok')\n\
print('own=written')\n";

fn owner_attack(run: impl Fn(&Fixture, &[&str], &Policy) -> Option<Outcome>) {
    if sandbox_root_only() {
        return;
    }
    let owned = Owned::new();
    let fx = fixture(&[("scripts/owner.py", OWNER_PROBE)]);
    let mut policy = short_policy();
    policy.grants.write_paths = vec![owned.dir.path().to_path_buf()];
    let dir = owned.dir.path().to_str().unwrap().to_owned();
    let Some(o) = run(&fx, &[&dir], &policy) else {
        return;
    };
    let out = text(&o.stdout);
    let sandbox = skilldeck_exec::SANDBOX_UID;
    assert!(
        out.contains(&format!("uid={sandbox} gid={sandbox}\n")),
        "{out} {}",
        text(&o.stderr)
    );
    assert!(out.contains("root-owned.txt=refused"), "{out}");
    assert!(out.contains("nobody-owned.txt=refused"), "{out}");
    assert!(out.contains("own=written"), "{out}");
    assert!(owned.unchanged());
    use std::os::unix::fs::MetadataExt;
    let mine = std::fs::metadata(owned.dir.path().join("mine.txt")).unwrap();
    assert_eq!(
        (mine.uid(), mine.gid()),
        (sandbox, sandbox),
        "host view of the script's uid"
    );
    assert_eq!(o.policy.uid, sandbox);
}

/// These attacks need a root caller (the one that drops to the sandbox
/// uid); as another user the script runs as that user by design.
fn sandbox_root_only() -> bool {
    if probe().euid != 0 {
        eprintln!("not root: the script runs as the caller; nothing to drop");
        return true;
    }
    false
}

#[test]
fn the_sandbox_user_is_neither_root_nor_the_hosts_shared_nobody() {
    assert_ne!(skilldeck_exec::SANDBOX_UID, 65534);
    assert_ne!(skilldeck_exec::SANDBOX_UID, 0);
    owner_attack(|fx, args, policy| fx.sandboxed("scripts/owner.py", args, policy));
}

#[test]
fn bwrap_as_root_runs_the_script_as_the_unprivileged_sandbox_user() {
    owner_attack(|fx, args, policy| fx.bwrapped("scripts/owner.py", args, policy));
}

#[test]
fn a_fork_storm_under_bwrap_as_root_hits_the_process_limit() {
    let _one_storm = one_storm_at_a_time();
    let fx = fixture(&[(
        "scripts/storm.py",
        "import os, time\n\
         n = 0\n\
         try:\n\
         \x20   while n < 200:\n\
         \x20       if os.fork() == 0:\n\
         \x20           time.sleep(30); os._exit(0)\n\
         \x20       n += 1\n\
         except OSError as e:\n\
         \x20   print('stopped after', n, 'forks:', e)\n\
         print('forked', n)\n",
    )]);
    let mut policy = short_policy();
    policy.limits.max_processes = 16;
    let Some(o) = fx.bwrapped("scripts/storm.py", &[], &policy) else {
        return;
    };
    let out = text(&o.stdout);
    assert!(out.contains("stopped after"), "{out} {}", text(&o.stderr));
    let n: u64 = out
        .split_whitespace()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap();
    assert!(n < 16, "{n} forks under a limit of 16");
}
