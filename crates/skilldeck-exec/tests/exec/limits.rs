//! Attacks on the per-run limits: memory and processes summed over the
//! whole tree (a cgroup per run), the work directory's size (a tmpfs), a
//! tree deep enough to defeat a recursive cleanup, and a work root planted
//! by someone else. Where this machine lacks what a defence needs, the test
//! asserts the documented refusal instead.
//!
//! The runs in this module take one lock, so a test that looks for the
//! run's work folder sees only its own. A test that looks at every cgroup
//! of this process, or sets its open-file limit, runs alone in a process
//! of its own (the other modules' tests share this binary's process).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Read;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use skilldeck_exec::{
    CallContext, ErrorKind, ExecError, Executor, ExecutorConfig, Input, Outcome, Policy, Profile,
    Request, TreeLimitsKind, TreeLimitsMode, probe, tree_limits_state,
};
use skilldeck_testkit::process::in_own_process;

use crate::common::{Fixture, fixture, text};

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

impl Fixture {
    fn run_with(
        &self,
        executor: &Executor,
        path: &str,
        args: &[&str],
        policy: &Policy,
    ) -> Result<Outcome, ExecError> {
        executor.run(
            Request {
                skill: self.skill(),
                path,
                args: args.iter().map(|s| (*s).to_owned()).collect(),
                stdin: Input::Null,
                context: CallContext {
                    agent_id: "agent-1".into(),
                    ..CallContext::default()
                },
            },
            policy,
        )
    }
}

fn euid() -> u32 {
    std::fs::metadata("/proc/self").map(|m| m.uid()).unwrap()
}

/// The strongest profile this machine runs: native when ready, else none
/// (the tree limits do not depend on the isolation profile).
fn best_policy() -> Policy {
    let mut p = Policy::default();
    p.limits.timeout = Duration::from_secs(60);
    if !probe().native_ready {
        p.profile = Profile::None;
    }
    p
}

/// Where tree limits cannot be applied here, a run that requires them is
/// refused naming what is missing; returns true when that was asserted.
fn refused_without_tree_limits(result: &Result<Outcome, ExecError>) -> bool {
    let state = tree_limits_state();
    if state.kind != TreeLimitsKind::None {
        return false;
    }
    let err = result
        .as_ref()
        .expect_err("required tree limits must refuse");
    assert_eq!(err.kind(), ErrorKind::Unavailable, "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains("per-run memory and process caps unavailable") && msg.contains(&state.detail),
        "{msg}"
    );
    eprintln!("refusal path tested: {msg}");
    true
}

/// Folders named `skilldeck-run-<this pid>-…` anywhere under /sys/fs/cgroup.
fn run_cgroups() -> Vec<PathBuf> {
    let prefix = format!("skilldeck-run-{}-", std::process::id());
    let mut found = Vec::new();
    let mut stack = vec![(PathBuf::from("/sys/fs/cgroup"), 0)];
    while let Some((dir, depth)) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            if !e.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let p = e.path();
            if e.file_name().to_string_lossy().starts_with(&prefix) {
                found.push(p);
            } else if depth < 8 {
                stack.push((p, depth + 1));
            }
        }
    }
    found
}

fn processes_with(marker: &str) -> Vec<i32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let mut cmdline = String::new();
        if let Ok(mut f) = std::fs::File::open(entry.path().join("cmdline"))
            && f.read_to_string(&mut cmdline).is_ok()
            && cmdline.contains(marker)
        {
            found.push(pid);
        }
    }
    found
}

/// Waits (polling /proc) until a process with `marker` on its command line
/// exists and returns its pid, or returns `None` as soon as `done` says
/// the run ended without it.
fn wait_for_process(marker: &str, done: impl Fn() -> bool) -> Option<i32> {
    loop {
        if let Some(pid) = processes_with(marker).first() {
            return Some(*pid);
        }
        if done() {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Bytes of disk the files under `dir` occupy (allocated blocks).
fn disk_usage(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            if let Ok(m) = e.path().symlink_metadata() {
                total += m.blocks() * 512;
                if m.is_dir() {
                    stack.push(e.path());
                }
            }
        }
    }
    total
}

const MIB: u64 = 1024 * 1024;

const MEMORY_HOGS: &str = "\
import os
N, SIZE = 6, 300 * 1024 * 1024
ready_r, ready_w = os.pipe()
go_r, go_w = os.pipe()
for _ in range(N):
    if os.fork() == 0:
        os.close(ready_r); os.close(go_w)
        held = b'\\x01' * SIZE
        os.write(ready_w, b'+'); os.close(ready_w)
        os.read(go_r, 1)
        os._exit(0)
os.close(ready_w); os.close(go_r)
ready = 0
while True:
    b = os.read(ready_r, 64)
    if not b:
        break
    ready += len(b)
os.close(go_w)
survived = killed = 0
for _ in range(N):
    _, status = os.wait()
    if os.WIFSIGNALED(status):
        killed += 1
    else:
        survived += 1
print('ready', ready, 'survived', survived, 'killed', killed, flush=True)
";

#[test]
fn six_processes_of_300_mib_under_a_512_mib_run_cap_are_killed_and_reported() {
    let _serial = serial();
    // It looks for this pid's run cgroups: alone in a process.
    if !in_own_process(
        "limits::six_processes_of_300_mib_under_a_512_mib_run_cap_are_killed_and_reported",
        &[],
    ) {
        return;
    }
    let fx = fixture("limits", &[("scripts/hogs.py", MEMORY_HOGS)]);
    let mut policy = best_policy();
    policy.limits.memory_bytes = 512 * MIB;
    policy.tree_limits = TreeLimitsMode::Require;
    let result = fx.run_with(&Executor::default(), "scripts/hogs.py", &[], &policy);
    if refused_without_tree_limits(&result) {
        return;
    }
    let o = result.unwrap();
    let out = text(&o.stdout);
    assert!(
        o.tree.memory_cap_hit,
        "the run's memory cap must be hit: {out} {}",
        text(&o.stderr)
    );
    // Counted among the run's refusals too.
    assert!(o.refusals.caps.memory, "{:?}", o.refusals);
    assert!(o.refusals.summary().contains("memory"), "{:?}", o.refusals);
    assert_eq!(o.label(), "memory-cap");
    let peak = o.tree.memory_peak_bytes.expect("the peak is reported");
    assert!(peak <= 512 * MIB, "the run held {peak} bytes at once");
    // Six holders never coexisted: at most one 300 MiB block fits.
    if o.exit_code == Some(0) {
        let survived: u64 = out
            .split_whitespace()
            .skip_while(|w| *w != "survived")
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap();
        assert!(survived <= 1, "{out}");
    }
    assert!(
        o.policy.layers.iter().any(|l| l.starts_with("cgroup-v")),
        "{:?}",
        o.policy.layers
    );
    assert!(run_cgroups().is_empty(), "{:?}", run_cgroups());
}

#[test]
fn a_fork_storm_stops_at_the_run_process_cap_even_where_rlimits_do_not_bind() {
    let _serial = serial();
    // It looks for this pid's run cgroups: alone in a process.
    if !in_own_process(
        "limits::a_fork_storm_stops_at_the_run_process_cap_even_where_rlimits_do_not_bind",
        &[],
    ) {
        return;
    }
    let fx = fixture(
        "limits",
        &[(
            "scripts/storm.py",
            "import os, time\n\
         n = 0\n\
         try:\n\
         \x20   while n < 3000:\n\
         \x20       if os.fork() == 0:\n\
         \x20           time.sleep(600); os._exit(0)\n\
         \x20       n += 1\n\
         except OSError as e:\n\
         \x20   print('stopped after', n, 'forks:', e, flush=True)\n",
        )],
    );
    // Profile none: as root, RLIMIT_NPROC does not bind at all, so only
    // the run's cgroup can stop the storm.
    let mut policy = best_policy();
    policy.profile = Profile::None;
    policy.limits.max_processes = 16;
    policy.tree_limits = TreeLimitsMode::Require;
    let result = fx.run_with(&Executor::default(), "scripts/storm.py", &[], &policy);
    if refused_without_tree_limits(&result) {
        return;
    }
    let o = result.unwrap();
    let out = text(&o.stdout);
    assert!(out.contains("stopped after"), "{out} {}", text(&o.stderr));
    let n: u64 = out
        .split_whitespace()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap();
    assert!(n < 16, "{n} forks under a cap of 16");
    if euid() == 0 {
        assert!(o.tree.process_cap_hit, "the cgroup stopped it: {o:?}");
        assert!(o.refusals.caps.processes, "{:?}", o.refusals);
    }
    // The sleeping children (left by a profile without a PID namespace)
    // went with the run's cgroup.
    assert!(run_cgroups().is_empty(), "{:?}", run_cgroups());
}

#[test]
fn the_run_cgroup_is_gone_after_a_timeout_and_takes_a_setsid_daemon_with_it() {
    let _serial = serial();
    // It looks for this pid's run cgroups: alone in a process.
    if !in_own_process(
        "limits::the_run_cgroup_is_gone_after_a_timeout_and_takes_a_setsid_daemon_with_it",
        &[],
    ) {
        return;
    }
    let marker = format!("{}", 500_000 + std::process::id() % 90_000);
    let fx = fixture(
        "limits",
        &[(
            "scripts/daemon.sh",
            "( setsid sleep $1 & ) \necho started\nsleep $1\n",
        )],
    );
    let mut policy = best_policy();
    policy.profile = Profile::None;
    policy.limits.timeout = Duration::from_secs(2);
    policy.tree_limits = TreeLimitsMode::Require;
    let result = fx.run_with(
        &Executor::default(),
        "scripts/daemon.sh",
        &[&marker],
        &policy,
    );
    if refused_without_tree_limits(&result) {
        return;
    }
    let o = result.unwrap();
    assert!(o.timed_out, "{o:?}");
    assert!(run_cgroups().is_empty(), "{:?}", run_cgroups());
    assert!(
        processes_with(&marker).is_empty(),
        "a setsid daemon outlived its run: {:?}",
        processes_with(&marker)
    );
}

#[test]
fn auto_tree_limits_never_claim_a_cap_that_is_not_applied() {
    let _serial = serial();
    let fx = fixture("limits", &[("scripts/ok.sh", "echo ok\n")]);
    let mut policy = best_policy();
    policy.tree_limits = TreeLimitsMode::Auto;
    let o = fx
        .run_with(&Executor::default(), "scripts/ok.sh", &[], &policy)
        .unwrap();
    assert_eq!(o.exit_code, Some(0), "{}", text(&o.stderr));
    let state = tree_limits_state();
    assert_eq!(o.policy.tree_limits, state);
    assert_eq!(probe().tree_limits, state);
    let claims = o.policy.layers.iter().any(|l| l.starts_with("cgroup-"));
    assert_eq!(
        claims,
        state.kind != TreeLimitsKind::None,
        "{:?}",
        o.policy.layers
    );
}

#[test]
fn writing_twice_the_work_dir_quota_gets_enospc_and_the_host_disk_stays_flat() {
    let _serial = serial();
    let marker = format!("{}", 600_000 + std::process::id() % 90_000);
    let fx = fixture(
        "limits",
        &[(
            "scripts/fill.sh",
            "head -c 67108864 /dev/zero > big; echo \"rc=$?\"\n\
         echo \"size=$(wc -c < big)\"\n\
         head -c 4096 /dev/zero > \"$TMPDIR/more\"; echo \"tmp_rc=$?\"\n\
         sleep $1\n",
        )],
    );
    let base = tempfile::tempdir().unwrap();
    let work_root = base.path().join("runs");
    let executor = Executor::new(ExecutorConfig {
        work_root: Some(work_root.clone()),
        ..ExecutorConfig::default()
    });
    let mut policy = best_policy();
    policy.profile = Profile::Native;
    policy.limits.workdir_bytes = 32 * MIB;
    policy.limits.file_size_bytes = 1024 * MIB;
    std::thread::scope(|s| {
        let run = s.spawn(|| fx.run_with(&executor, "scripts/fill.sh", &[&marker], &policy));
        if !probe().native_ready {
            let err = run.join().unwrap().expect_err("native must refuse here");
            assert_eq!(err.kind(), ErrorKind::Unavailable, "{err}");
            return;
        }
        // The script wrote twice its quota and now sleeps: measure the
        // host's disk under the work root while the run is alive.
        let sleeper = wait_for_process(&format!("sleep\0{marker}"), || run.is_finished());
        let Some(sleeper) = sleeper else {
            panic!("the run ended early: {:?}", run.join());
        };
        let used = disk_usage(&work_root);
        assert!(
            used < 32 * MIB,
            "the work root holds {used} bytes on the host disk"
        );
        // SAFETY: kill with integer arguments: the script's own `sleep`.
        #[allow(unsafe_code)]
        unsafe {
            libc::kill(sleeper, libc::SIGKILL);
        }
        let o = run.join().unwrap().unwrap();
        let out = text(&o.stdout);
        let err = text(&o.stderr);
        assert!(out.contains("rc=1"), "{out} {err}");
        assert!(err.contains("No space left on device"), "{err}");
        let size: u64 = out
            .lines()
            .find_map(|l| l.strip_prefix("size="))
            .and_then(|s| s.trim().parse().ok())
            .unwrap();
        assert!(
            size <= 32 * MIB,
            "{size} bytes written under a 32 MiB quota"
        );
        assert!(out.contains("tmp_rc=1"), "TMPDIR shares the quota: {out}");
        assert_eq!(o.policy.workdir_quota_bytes, Some(32 * MIB));
        assert!(o.policy.layers.contains(&"workdir-tmpfs"));
    });
    assert_eq!(
        std::fs::read_dir(&work_root).unwrap().count(),
        0,
        "the run folder is gone"
    );
}

/// Sets this process's soft open-file limit to `n`, returning the old one.
fn set_nofile(n: u64) -> u64 {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit on a struct we own.
    #[allow(unsafe_code)]
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim), 0);
        let old = lim.rlim_cur;
        lim.rlim_cur = n.min(lim.rlim_max);
        assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &lim), 0);
        old
    }
}

#[test]
fn a_2000_level_tree_is_cleaned_up_under_an_open_file_limit_of_1024() {
    let _serial = serial();
    // It sets the open-file limit of the whole process: alone in a process.
    if !in_own_process(
        "limits::a_2000_level_tree_is_cleaned_up_under_an_open_file_limit_of_1024",
        &[],
    ) {
        return;
    }
    let fx = fixture(
        "limits",
        &[(
            "scripts/deep.py",
            "import os\n\
         for _ in range(2000):\n\
         \x20   os.mkdir('d'); os.chdir('d')\n\
         open('leaf', 'w').write('x')\n\
         os.chmod('.', 0)\n\
         print('depth 2000', flush=True)\n",
        )],
    );
    let base = tempfile::tempdir().unwrap();
    let work_root = base.path().join("runs");
    let executor = Executor::new(ExecutorConfig {
        work_root: Some(work_root.clone()),
        ..ExecutorConfig::default()
    });
    let old = set_nofile(1024);
    // Profile none: the tree is on the host's disk (no tmpfs), the case a
    // recursive cleanup holding one descriptor per level cannot remove.
    let mut none = best_policy();
    none.profile = Profile::None;
    let result = fx.run_with(&executor, "scripts/deep.py", &[], &none);
    let left = std::fs::read_dir(&work_root)
        .map(|d| d.count())
        .unwrap_or(0);
    let native = probe()
        .native_ready
        .then(|| fx.run_with(&executor, "scripts/deep.py", &[], &best_policy()));
    set_nofile(old);
    let o = result.unwrap();
    assert!(
        text(&o.stdout).contains("depth 2000"),
        "{}",
        text(&o.stderr)
    );
    assert_eq!(left, 0, "the run folder stayed on disk");
    if let Some(native) = native {
        let o = native.unwrap();
        assert!(
            text(&o.stdout).contains("depth 2000"),
            "{}",
            text(&o.stderr)
        );
        assert_eq!(std::fs::read_dir(&work_root).unwrap().count(), 0);
    }
}

fn refused_root(root: &Path, problem: &str) {
    let fx = fixture("limits", &[("scripts/ok.sh", "echo ok\n")]);
    let executor = Executor::new(ExecutorConfig {
        work_root: Some(root.to_path_buf()),
        ..ExecutorConfig::default()
    });
    let mut policy = best_policy();
    policy.profile = Profile::None;
    let err = fx
        .run_with(&executor, "scripts/ok.sh", &[], &policy)
        .expect_err("a work root that is not private must refuse");
    let msg = err.to_string();
    assert!(msg.contains(&root.display().to_string()), "{msg}");
    assert!(msg.contains(problem), "{msg}");
    assert!(msg.contains("remove it if you did not create it"), "{msg}");
    assert!(msg.contains("nothing ran"), "{msg}");
}

#[test]
fn a_work_root_planted_by_someone_else_is_refused_naming_it_and_what_to_do() {
    let _serial = serial();
    let base = tempfile::tempdir().unwrap();
    // A symlink to a folder (ours, even): it could be re-pointed.
    let real = base.path().join("real");
    std::fs::create_dir(&real).unwrap();
    let link = base.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    refused_root(&link, "symlink");
    // A folder anyone may write into.
    let open = base.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    refused_root(&open, "lets group or others write");
    // A folder owned by another user: one we chown as root, else a system
    // folder owned by root.
    if euid() == 0 {
        let theirs = base.path().join("theirs");
        std::fs::create_dir(&theirs).unwrap();
        std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
        refused_root(&theirs, "owned by uid 65534");
    } else {
        refused_root(Path::new("/usr"), "owned by uid 0");
    }
    // The normal case: created private, and runs work.
    let fx = fixture("limits", &[("scripts/ok.sh", "echo ok\n")]);
    let fresh = base.path().join("fresh");
    let executor = Executor::new(ExecutorConfig {
        work_root: Some(fresh.clone()),
        ..ExecutorConfig::default()
    });
    let o = fx
        .run_with(&executor, "scripts/ok.sh", &[], &best_policy())
        .unwrap();
    assert_eq!(text(&o.stdout), "ok\n", "{}", text(&o.stderr));
    let meta = std::fs::symlink_metadata(&fresh).unwrap();
    assert_eq!(meta.uid(), euid());
    assert_eq!(meta.mode() & 0o022, 0, "{:o}", meta.mode());
}
