//! A skill environment's `bin` folder (`Policy::bin_dirs`): first on the
//! script's `PATH` and the first place its interpreter is looked up, in
//! every isolating profile this machine offers; the folder itself is only
//! readable (the run cannot change the environment).

#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use skilldeck_exec::{Policy, Profile, SANDBOX_PATH, probe};

/// An environment folder the sandbox user can traverse, whose
/// `bin/python3` says it ran.
fn fake_environment() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let env = dir.path().join("env");
    let bin = env.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for d in [&env, &bin] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let python = bin.join("python3");
    std::fs::write(&python, "#!/bin/sh\necho \"env-python $1\"\n").unwrap();
    std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).unwrap();
    (dir, env)
}

fn profiles() -> Vec<Profile> {
    let p = probe();
    let mut out = Vec::new();
    if p.native_ready {
        out.push(Profile::Native);
    }
    if p.bwrap_layer.available {
        out.push(Profile::Bwrap);
    } else if std::env::var_os("SKILLDECK_TEST_REQUIRE_BWRAP").is_some_and(|v| v == "1") {
        panic!(
            "SKILLDECK_TEST_REQUIRE_BWRAP=1 but {}",
            p.bwrap_layer.detail
        );
    }
    if out.is_empty() {
        eprintln!(
            "SKIPPED: no isolating profile here: {}",
            p.missing().join("; ")
        );
    }
    out
}

fn policy(profile: Profile, env: &Path) -> Policy {
    let mut policy = Policy {
        profile,
        bin_dirs: vec![env.join("bin")],
        ..Policy::default()
    };
    policy.grants.read_paths.push(env.to_path_buf());
    policy.limits.timeout = Duration::from_secs(30);
    policy
}

#[test]
fn a_python_file_runs_with_the_environments_interpreter_and_path() {
    let (_keep, env) = fake_environment();
    let f = common::fixture(
        "envprobe",
        &[
            ("scripts/hello.py", "print('system python')\n"),
            (
                "scripts/env.py",
                "#!/usr/bin/env python3\nprint('system python')\n",
            ),
            (
                "scripts/path.sh",
                "#!/bin/sh\necho \"$PATH\"\ntouch \"$1/bin/planted\" 2>/dev/null && echo wrote || echo read-only\n",
            ),
        ],
    );
    for profile in profiles() {
        let policy = policy(profile, &env);
        let out = f.run("scripts/hello.py", &[], &policy);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.starts_with("env-python "),
            "{}: {stdout}",
            profile.name()
        );
        let out = f.run("scripts/env.py", &[], &policy);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.starts_with("env-python "),
            "{}: {stdout}",
            profile.name()
        );
        let out = f.run(
            "scripts/path.sh",
            &[env.to_string_lossy().into_owned()],
            &policy,
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        let want = format!("{}:{SANDBOX_PATH}\nread-only\n", env.join("bin").display());
        assert_eq!(stdout, want, "{}", profile.name());
        assert!(!env.join("bin/planted").exists());
    }
}

#[test]
fn without_an_environment_a_python_file_runs_with_the_sandboxs_python() {
    let f = common::fixture(
        "plainprobe",
        &[("scripts/hello.py", "print('system python')\n")],
    );
    for profile in profiles() {
        let mut policy = Policy {
            profile,
            ..Policy::default()
        };
        policy.limits.timeout = Duration::from_secs(30);
        let out = f.run("scripts/hello.py", &[], &policy);
        assert_eq!(String::from_utf8_lossy(&out.stdout), "system python\n");
    }
}
