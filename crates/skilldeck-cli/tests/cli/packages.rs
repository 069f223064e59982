//! `skilldeck pack`, `install` and `verify` as a user runs them, and an
//! install killed with SIGKILL at random points.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::text;

fn skilldeck(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_skilldeck"))
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}

fn demo(base: &Path, body: &str, extra_files: usize) -> PathBuf {
    let mut b = skilldeck_testkit::skill(base, "demo")
        .description("Demo skill. Use when testing packages.")
        .body(body)
        .file("scripts/run.sh", "#!/bin/sh\necho hi\n");
    for i in 0..extra_files {
        b = b.file(format!("references/r{i}.md"), format!("# {body} {i}\n"));
    }
    b.write()
}

#[test]
fn pack_prints_one_fingerprint_for_tar_gz_and_zip() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = demo(tmp.path(), "v1", 2);
    let a = skilldeck(tmp.path(), &["pack", dir.to_str().unwrap()]);
    assert!(a.status.success(), "{}", text(&a));
    assert!(tmp.path().join("demo.tar.gz").is_file());
    let b = skilldeck(
        tmp.path(),
        &[
            "pack",
            dir.to_str().unwrap(),
            "--format",
            "zip",
            "-o",
            "d.zip",
        ],
    );
    assert!(b.status.success(), "{}", text(&b));
    assert_eq!(a.stdout, b.stdout);
    assert!(String::from_utf8_lossy(&a.stdout).starts_with("sha256:"));
}

#[test]
fn install_then_verify_reports_each_changed_file_and_exits_1() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = demo(tmp.path(), "v1", 2);
    let out = skilldeck(tmp.path(), &["install", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(tmp.path().join(".agents/skilldeck.lock").is_file());
    let ok = skilldeck(tmp.path(), &["verify"]);
    assert_eq!(ok.status.code(), Some(0), "{}", text(&ok));
    let skill = tmp.path().join(".agents/skills/demo");
    std::fs::write(skill.join("references/r0.md"), "edited").unwrap();
    std::fs::write(skill.join("added.md"), "new").unwrap();
    std::fs::remove_file(skill.join("references/r1.md")).unwrap();
    let bad = skilldeck(tmp.path(), &["verify", "--format", "json"]);
    assert_eq!(bad.status.code(), Some(1), "{}", text(&bad));
    let json: serde_json::Value = serde_json::from_slice(&bad.stdout).unwrap();
    let s = &json["skills"][0];
    assert_eq!(s["status"], "modified");
    assert_eq!(s["modified"], serde_json::json!(["references/r0.md"]));
    assert_eq!(s["added"], serde_json::json!(["added.md"]));
    assert_eq!(s["missing"], serde_json::json!(["references/r1.md"]));
    // Local edits are kept without --force.
    let again = skilldeck(tmp.path(), &["install", dir.to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(1), "{}", text(&again));
    assert!(String::from_utf8_lossy(&again.stderr).contains("install-local-edits"));
}

#[test]
fn a_hostile_package_is_refused_with_its_code() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("bad.tar.gz"), b"\x1f\x8b\x08\0\0\0\0\0").unwrap();
    let out = skilldeck(tmp.path(), &["install", "bad.tar.gz", "--dir", "skills"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("package-truncated"),
        "{}",
        text(&out)
    );
}

/// A small deterministic generator (the seed is printed on failure).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let t = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &t);
        } else {
            std::fs::copy(e.path(), t).unwrap();
        }
    }
}

#[test]
fn an_install_killed_at_any_point_leaves_the_old_skill_or_the_new_one() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path();
    let v1 = demo(&base.join("v1"), "v1", 3);
    let v2 = demo(&base.join("v2"), "v2", 40);
    for (dir, pkg) in [(&v1, "v1.tar.gz"), (&v2, "v2.tar.gz")] {
        let out = skilldeck(base, &["pack", dir.to_str().unwrap(), "-o", pkg]);
        assert!(out.status.success(), "{}", text(&out));
    }
    // The two lock states, from an install that was not interrupted.
    let reference = base.join("reference");
    let run = |cwd: &Path, pkg: &str| {
        let out = skilldeck(cwd, &["install", pkg, "--dir", "skills"]);
        assert!(out.status.success(), "{}", text(&out));
    };
    std::fs::create_dir(&reference).unwrap();
    run(&reference, "../v1.tar.gz");
    std::fs::copy(reference.join("skilldeck.lock"), base.join("old.lock")).unwrap();
    let start = Instant::now();
    run(&reference, "../v2.tar.gz");
    let unpaused = start.elapsed();
    std::fs::copy(reference.join("skilldeck.lock"), base.join("new.lock")).unwrap();
    // A fresh root at v1, kept to reset each round.
    let pristine = base.join("pristine");
    std::fs::create_dir(&pristine).unwrap();
    run(&pristine, "../v1.tar.gz");

    let pause_ms = 15u64;
    // Four pauses, plus the run itself, plus a little past the end.
    let window = 4 * pause_ms + unpaused.as_millis() as u64 + 10;
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    let mut rng = Lcg(seed);
    let (mut old, mut new) = (0, 0);
    for round in 0..16 {
        let project = base.join(format!("p{round}"));
        copy_dir(&pristine, &project);
        let delay = rng.below(window);
        let mut child = Command::new(env!("CARGO_BIN_EXE_skilldeck"))
            .args(["install", "../v2.tar.gz", "--dir", "skills"])
            .current_dir(&project)
            .env("SKILLDECK_TEST_INSTALL_PAUSE_MS", pause_ms.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay));
        let _ = child.kill(); // SIGKILL
        child.wait().unwrap();
        let verify = |lock: &str| {
            skilldeck(
                &project,
                &["verify", "--dir", "skills", "--lock", &format!("../{lock}")],
            )
            .status
            .code()
        };
        match (verify("old.lock"), verify("new.lock")) {
            (Some(0), _) => old += 1,
            (_, Some(0)) => new += 1,
            other => panic!(
                "seed {seed} round {round} killed after {delay} ms: neither the old nor the new skill ({other:?})"
            ),
        }
        // The next install finishes or redoes it; nothing is left over.
        run(&project, "../v2.tar.gz");
        let out = skilldeck(&project, &["verify", "--dir", "skills"]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "seed {seed} round {round}: {}",
            text(&out)
        );
        let left: Vec<_> = std::fs::read_dir(project.join("skills"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n != ".skilldeck-install.lock")
            .collect();
        assert_eq!(left, vec!["demo"], "seed {seed} round {round}");
    }
    eprintln!("seed {seed}: {old} rounds left the old skill, {new} the new one");
}
