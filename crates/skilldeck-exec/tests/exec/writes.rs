//! Fail loudly, writes: every write a script attempts outside its allowed
//! paths is refused (Landlock, or the read-only mount of the skill) AND
//! counted in `Outcome::refusals` with the path it would have reached
//! (symlinks and relative paths resolved), under the native profile.
//! Each test attacks and checks that nothing was written, that the script
//! saw the error the kernel gives (`EACCES`, `EROFS` for the read-only
//! skill) and that the count names the path; writes inside the work dir
//! and an ordinary interpreter start count nothing.

#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use skilldeck_exec::{Outcome, Policy, Profile, probe};
use skilldeck_testkit::Root;

use crate::common::{Fixture, fixture, native, text};

/// Tries the attack named by its first argument; prints `done` or
/// `refused ERRNO-NAME` for each attempt.
const ATTACK: &str = r#"#!/usr/bin/python3
import errno, os, sys
what, outside = sys.argv[1], sys.argv[2]
skill = os.environ["SKILLDECK_SKILL_DIR"]
def attempt(f):
    try:
        f()
        print("done")
    except OSError as e:
        print("refused", errno.errorcode.get(e.errno, e.errno))
if what == "etc":
    attempt(lambda: open("/etc/skilldeck-probe", "w").close())
elif what == "skill":
    attempt(lambda: open(os.path.join(skill, "planted.txt"), "w").close())
elif what == "home":
    attempt(lambda: os.mkdir(outside))
elif what == "rename":
    attempt(lambda: os.rename(os.path.join(skill, "data.txt"), os.path.join(skill, "moved.txt")))
    attempt(lambda: os.rename(os.path.join(outside, "victim.txt"), os.path.join(outside, "renamed.txt")))
elif what == "relative":
    os.chdir(outside)
    attempt(lambda: open("relative.txt", "w").close())
    os.chdir("/etc")
    attempt(lambda: os.mkdir("skilldeck-rel"))
elif what == "symlink":
    os.symlink(os.path.join(outside, "through-link.txt"), "link")
    attempt(lambda: open("link", "w").close())
    os.symlink(os.path.join(outside, "victim.txt"), "link2")
    attempt(lambda: open("link2", "a").close())
elif what == "openat2":
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    # struct open_how { u64 flags, mode, resolve }: O_WRONLY|O_CREAT, 0644.
    how = (ctypes.c_uint64 * 3)(os.O_WRONLY | os.O_CREAT, 0o644, 0)
    def openat2():
        fd = libc.syscall(437, -100, os.path.join(outside, "o2.txt").encode(), ctypes.byref(how), 24)
        if fd < 0:
            raise OSError(ctypes.get_errno(), "openat2")
        os.close(fd)
    attempt(openat2)
elif what == "remove":
    attempt(lambda: os.unlink(os.path.join(outside, "victim.txt")))
    attempt(lambda: os.truncate(os.path.join(outside, "victim.txt"), 0))
"#;

/// Writes only inside the work dir, its temp dir and /dev/null.
const INSIDE: &str = r#"#!/usr/bin/python3
import os, subprocess
os.makedirs("a/b", exist_ok=True)
with open("a/b/f.txt", "w") as f:
    f.write("x")
os.rename("a/b/f.txt", "a/g.txt")
os.symlink("a/g.txt", "ln")
with open("ln", "a") as f:
    f.write("y")
os.link("a/g.txt", "hard")
os.truncate("hard", 1)
os.unlink("ln")
os.unlink("hard")
os.rename("a", "c")
os.remove("c/g.txt")
os.rmdir("c/b")
os.rmdir("c")
with open(os.path.join(os.environ["TMPDIR"], "t"), "w") as f:
    f.write("t")
with open("/dev/null", "w") as f:
    f.write("nothing")
subprocess.run(["bash", "-c", 'echo hi > "$TMPDIR/x" && cat "$TMPDIR/x" > /dev/null'], check=True)
print("ok")
"#;

/// A folder of the host outside everything the run may write, holding
/// `victim.txt`, reachable by the sandbox's user.
fn outside() -> (Root, PathBuf) {
    let root = Root::new();
    let dir = root.path().join("outside");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("victim.txt"), "intact").unwrap();
    // The sandbox may run as another user (root drops): let it reach the
    // folder, so the refusal it meets is the sandbox's, not the mode's.
    open_up(&dir);
    (root, dir)
}

fn open_up(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let mut p = dir.to_path_buf();
    loop {
        if let Ok(meta) = std::fs::metadata(&p) {
            let mode = meta.permissions().mode();
            if mode & 0o005 != 0o005 && p.starts_with(std::env::temp_dir()) {
                let _ = std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode | 0o755));
            }
        }
        if !p.pop() {
            break;
        }
    }
    let _ = std::fs::set_permissions(
        dir.join("victim.txt"),
        std::fs::Permissions::from_mode(0o666),
    );
    let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777));
}

fn attack(f: &Fixture, policy: &Policy, what: &str, outside: &Path) -> Outcome {
    let o = f.run(
        "scripts/attack.py",
        &[what.to_owned(), outside.display().to_string()],
        policy,
    );
    assert_eq!(o.exit_code, Some(0), "{}", text(&o.stderr));
    o
}

fn skill_fixture() -> Fixture {
    fixture(
        "writes",
        &[
            ("scripts/attack.py", ATTACK),
            ("scripts/inside.py", INSIDE),
            ("data.txt", "the skill's own\n"),
        ],
    )
}

/// The paths counted.
fn counted(o: &Outcome) -> Vec<String> {
    o.refusals.writes.iter().map(|w| w.path.clone()).collect()
}

/// Checks that exactly `paths` were counted (in order) and that the
/// script saw `errnos`.
fn assert_counted(o: &Outcome, errnos: &[&str], paths: &[String]) {
    let out = text(&o.stdout);
    let seen: Vec<&str> = out.lines().collect();
    let want: Vec<String> = errnos.iter().map(|e| format!("refused {e}")).collect();
    assert_eq!(seen, want, "stderr: {}", text(&o.stderr));
    let r = &o.refusals;
    assert!(r.writes_observed, "{r:?}");
    assert_eq!(counted(o), paths, "{r:?}");
    assert_eq!(r.writes_outside, paths.len() as u64, "{r:?}");
    for p in paths {
        assert!(r.summary().contains(p.as_str()), "{}", r.summary());
    }
}

#[test]
fn writing_a_system_file_is_refused_and_counted_with_its_path() {
    let Some(policy) = native() else { return };
    let f = skill_fixture();
    let (_keep, dir) = outside();
    let o = attack(&f, &policy, "etc", &dir);
    assert!(!Path::new("/etc/skilldeck-probe").exists());
    assert_counted(&o, &["EACCES"], &["/etc/skilldeck-probe".to_owned()]);
    assert!(
        o.refusals
            .summary()
            .contains("1 write outside (/etc/skilldeck-probe)"),
        "{}",
        o.refusals.summary()
    );
    assert_eq!(o.refusals.writes[0].call, "openat");
}

#[test]
fn creating_a_file_in_the_read_only_skill_folder_is_refused_and_counted() {
    let Some(policy) = native() else { return };
    let f = skill_fixture();
    let (_keep, dir) = outside();
    let o = attack(&f, &policy, "skill", &dir);
    assert!(!f.skill().dir().join("planted.txt").exists());
    // The skill is a read-only mount: the kernel says EROFS before
    // Landlock is asked; it is still a write outside.
    assert_eq!(o.refusals.writes_outside, 1, "{:?}", o.refusals);
    assert!(
        text(&o.stdout).starts_with("refused EROFS"),
        "{}",
        text(&o.stdout)
    );
    assert!(counted(&o)[0].ends_with("/planted.txt"), "{:?}", o.refusals);
}

#[test]
fn making_a_folder_under_the_users_home_is_refused_and_counted() {
    let Some(policy) = native() else { return };
    let f = skill_fixture();
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_dir())
        .unwrap_or_else(std::env::temp_dir);
    let target = home.join(format!("skilldeck-writes-probe-{}", std::process::id()));
    let o = attack(&f, &policy, "home", &target);
    let created = target.exists();
    if created {
        let _ = std::fs::remove_dir(&target);
    }
    assert!(!created, "the sandbox made {}", target.display());
    assert_counted(&o, &["EACCES"], &[target.display().to_string()]);
    assert_eq!(o.refusals.writes[0].call, "mkdir");
}

#[test]
fn renaming_within_a_read_only_place_is_refused_and_counted() {
    let Some(policy) = native() else { return };
    let f = skill_fixture();
    let (_keep, dir) = outside();
    let o = attack(&f, &policy, "rename", &dir);
    assert!(f.skill().dir().join("data.txt").exists());
    assert!(!f.skill().dir().join("moved.txt").exists());
    assert_eq!(
        std::fs::read_to_string(dir.join("victim.txt")).unwrap(),
        "intact"
    );
    assert!(!dir.join("renamed.txt").exists());
    let paths = counted(&o);
    assert_eq!(paths.len(), 2, "{:?}", o.refusals);
    assert!(paths[0].ends_with("/moved.txt"), "{paths:?}");
    assert_eq!(paths[1], dir.join("renamed.txt").display().to_string());
    assert_counted(&o, &["EROFS", "EACCES"], &paths);
}

#[test]
fn a_relative_path_after_chdir_is_resolved_refused_and_counted() {
    let Some(policy) = native() else { return };
    let f = skill_fixture();
    let (_keep, dir) = outside();
    let o = attack(&f, &policy, "relative", &dir);
    assert!(!dir.join("relative.txt").exists());
    assert!(!Path::new("/etc/skilldeck-rel").exists());
    assert_counted(
        &o,
        &["EACCES", "EACCES"],
        &[
            dir.join("relative.txt").display().to_string(),
            "/etc/skilldeck-rel".to_owned(),
        ],
    );
}

#[test]
fn a_symlink_in_the_work_dir_pointing_outside_is_followed_refused_and_counted() {
    let Some(policy) = native() else { return };
    let f = skill_fixture();
    let (_keep, dir) = outside();
    let o = attack(&f, &policy, "symlink", &dir);
    assert!(!dir.join("through-link.txt").exists());
    assert_eq!(
        std::fs::read_to_string(dir.join("victim.txt")).unwrap(),
        "intact"
    );
    assert_counted(
        &o,
        &["EACCES", "EACCES"],
        &[
            dir.join("through-link.txt").display().to_string(),
            dir.join("victim.txt").display().to_string(),
        ],
    );
}

#[test]
fn removing_or_truncating_a_file_outside_is_refused_and_counted() {
    let Some(policy) = native() else { return };
    let f = skill_fixture();
    let (_keep, dir) = outside();
    let o = attack(&f, &policy, "remove", &dir);
    assert_eq!(
        std::fs::read_to_string(dir.join("victim.txt")).unwrap(),
        "intact"
    );
    let victim = dir.join("victim.txt").display().to_string();
    assert_counted(&o, &["EACCES", "EACCES"], &[victim.clone(), victim]);
    let calls: Vec<&str> = o.refusals.writes.iter().map(|w| w.call).collect();
    // `unlink` or `unlinkat`, as the architecture's libc calls it.
    assert!(calls[0].starts_with("unlink"), "{calls:?}");
    assert_eq!(calls[1], "truncate");
}

#[test]
fn openat2_whose_flags_are_in_memory_is_refused_and_counted() {
    let Some(policy) = native() else { return };
    let f = skill_fixture();
    let (_keep, dir) = outside();
    let o = attack(&f, &policy, "openat2", &dir);
    assert!(!dir.join("o2.txt").exists());
    assert_counted(&o, &["EACCES"], &[dir.join("o2.txt").display().to_string()]);
    assert_eq!(o.refusals.writes[0].call, "openat2");
}

#[test]
fn writes_inside_the_work_dir_count_nothing_with_or_without_its_tmpfs() {
    let Some(policy) = native() else { return };
    let f = skill_fixture();
    let mut kept = policy.clone();
    // No tmpfs: the work dir is a host folder, granted by the ruleset
    // itself rather than added inside the sandbox.
    kept.keep_workdir = true;
    for p in [&policy, &kept] {
        let o = f.run("scripts/inside.py", &[], p);
        assert_eq!(text(&o.stdout), "ok\n", "{}", text(&o.stderr));
        assert!(o.refusals.writes_observed);
        assert_eq!(o.refusals.writes_outside, 0, "{:?}", o.refusals);
        assert!(o.refusals.writes.is_empty(), "{:?}", o.refusals);
        if let Some(dir) = &o.workdir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

#[test]
fn interpreters_starting_up_count_no_write() {
    let Some(policy) = native() else { return };
    let mut files = vec![
        ("scripts/one.py", "print(1)\n"),
        (
            "scripts/hi.sh",
            "echo hi > \"$TMPDIR/x\" && echo hi > out.txt && cat out.txt\n",
        ),
        (
            "scripts/hi.bash",
            "bash -c 'echo hi > \"$TMPDIR/x\"' && cat \"$TMPDIR/x\"\n",
        ),
    ];
    let node = Path::new("/usr/bin/node").exists() || Path::new("/usr/local/bin/node").exists();
    if node {
        files.push((
            "scripts/hi.js",
            "require('fs').writeFileSync('out.txt', 'n'); console.log('node')\n",
        ));
    } else {
        eprintln!("SKIPPED (node part): node is not installed");
    }
    let f = fixture("writes", &files);
    let mut runs = vec![
        ("scripts/one.py", "1\n"),
        ("scripts/hi.sh", "hi\n"),
        ("scripts/hi.bash", "hi\n"),
    ];
    if node {
        runs.push(("scripts/hi.js", "node\n"));
    }
    for (script, want) in runs {
        let o = f.run(script, &[], &policy);
        assert_eq!(text(&o.stdout), want, "{script}: {}", text(&o.stderr));
        assert!(o.refusals.writes_observed, "{script}");
        assert_eq!(o.refusals.writes_outside, 0, "{script}: {:?}", o.refusals);
        assert!(o.refusals.writes.is_empty(), "{script}: {:?}", o.refusals);
        // bash looks its user up, and glibc first asks nscd over a Unix
        // socket: refused, reported as a name-service probe, not as an
        // attempted escape.
        assert!(o.refusals.is_empty(), "{script}: {:?}", o.refusals);
    }
}

#[test]
fn bwrap_refuses_writes_outside_but_says_it_does_not_count_them() {
    let p = probe();
    if !p.bwrap_layer.available {
        eprintln!("SKIPPED: bwrap unavailable: {}", p.bwrap_layer.detail);
        return;
    }
    let f = skill_fixture();
    let (_keep, dir) = outside();
    let policy = Policy {
        profile: Profile::Bwrap,
        ..Policy::default()
    };
    let o = f.run(
        "scripts/attack.py",
        &["relative".to_owned(), dir.display().to_string()],
        &policy,
    );
    assert!(!dir.join("relative.txt").exists());
    assert!(!o.refusals.writes_observed);
    assert_eq!(o.refusals.writes_outside, 0);
}
