//! A skill environment's `bin` folder (`Policy::bin_dirs`): first on the
//! script's `PATH` and the first place its interpreter is looked up, in
//! every isolating profile this machine offers; the folder itself is only
//! readable (the run cannot change the environment). A Node environment's
//! `node_modules` (`Policy::node_modules`): what a CommonJS `require` and an
//! ES module `import` of the skill's scripts find, read-only, under the
//! default memory limit.

#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

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

/// A Node environment folder as a build leaves it, by hand: a package
/// `greet` in its `node_modules` (CommonJS, so both `require` and `import`
/// load it); every folder traversable by the sandbox's user.
fn fake_node_environment() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let env = dir.path().join("node env");
    let greet = env.join("node_modules/greet");
    std::fs::create_dir_all(&greet).unwrap();
    std::fs::write(
        greet.join("package.json"),
        "{\"name\":\"greet\",\"version\":\"1.0.0\",\"main\":\"index.js\"}\n",
    )
    .unwrap();
    std::fs::write(
        greet.join("index.js"),
        "module.exports = (who) => `hello ${who} from ${__filename}`;\n",
    )
    .unwrap();
    for d in [dir.path(), &env, &env.join("node_modules"), &greet] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    (dir, env)
}

fn node_policy(profile: Profile, env: &Path) -> Policy {
    let mut policy = Policy {
        profile,
        node_modules: Some(env.join("node_modules")),
        ..Policy::default()
    };
    policy.grants.read_paths.push(env.to_path_buf());
    policy.limits.timeout = Duration::from_secs(30);
    policy
}
#[test]
fn a_commonjs_and_an_es_module_script_import_a_package_of_the_node_environment() {
    if !Path::new("/usr/bin/node").exists() {
        eprintln!("SKIPPED: no /usr/bin/node");
        return;
    }
    let (_keep, env) = fake_node_environment();
    let f = common::fixture(
        "nodeprobe",
        &[
            (
                "scripts/cjs.js",
                "const greet = require('greet');\nconsole.log(greet('cjs'));\n",
            ),
            (
                "scripts/esm.mjs",
                "import greet from 'greet';\nconsole.log(greet('esm'));\n",
            ),
            (
                "scripts/dynamic.js",
                "import('greet').then((m) => console.log(m.default('dynamic')));\n",
            ),
            (
                "scripts/plant.mjs",
                "import { writeFileSync } from 'node:fs';\n\
                 try { writeFileSync(process.argv[2], 'x'); console.log('wrote'); }\n\
                 catch { console.log('read-only'); }\n",
            ),
            (
                "scripts/missing.mjs",
                "try { await import('not-installed'); console.log('found'); }\n\
                 catch (e) { console.log(e.code); }\n",
            ),
        ],
    );
    let greet = env.join("node_modules/greet/index.js");
    for profile in profiles() {
        let policy = node_policy(profile, &env);
        for (script, who) in [
            ("scripts/cjs.js", "cjs"),
            ("scripts/esm.mjs", "esm"),
            ("scripts/dynamic.js", "dynamic"),
        ] {
            let out = f.run(script, &[], &policy);
            assert_eq!(
                String::from_utf8_lossy(&out.stdout),
                format!("hello {who} from {}\n", greet.display()),
                "{} {script}: {}",
                profile.name(),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let planted = env.join("node_modules/greet/planted.js");
        let out = f.run(
            "scripts/plant.mjs",
            &[planted.to_string_lossy().into_owned()],
            &policy,
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout), "read-only\n");
        assert!(!planted.exists());
        let out = f.run("scripts/missing.mjs", &[], &policy);
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "ERR_MODULE_NOT_FOUND\n",
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn without_the_node_environment_a_bare_import_is_not_found() {
    if !Path::new("/usr/bin/node").exists() {
        return;
    }
    let f = common::fixture(
        "nodeplain",
        &[(
            "scripts/esm.mjs",
            "try { await import('greet'); console.log('found'); }\n\
             catch (e) { console.log(e.code); }\n",
        )],
    );
    for profile in profiles() {
        let mut policy = Policy {
            profile,
            ..Policy::default()
        };
        policy.limits.timeout = Duration::from_secs(30);
        let out = f.run("scripts/esm.mjs", &[], &policy);
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "ERR_MODULE_NOT_FOUND\n"
        );
    }
}
