//! Git sources as a user runs them: `install git+file://...` at a tag, a
//! branch, a commit and a path inside the repository; `outdated`,
//! `update` and `remove`; a tag moved under the lock; and a repository
//! that attacks (symlinks out of the skill, the user's own git hooks and
//! filters). Every repository is local and bare (no network).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use skilldeck_testkit::git::Repo;

use crate::common::{lock, lock_value, text};

/// Runs skilldeck in `cwd` with a git config of the test's own
/// (`global`), so the user's config never changes what git does.
fn skilldeck_with(cwd: &Path, global: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_skilldeck"))
        .args(args)
        .current_dir(cwd)
        .env("GIT_CONFIG_GLOBAL", global)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap()
}

fn skilldeck(cwd: &Path, args: &[&str]) -> Output {
    skilldeck_with(cwd, Path::new("/dev/null"), args)
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn skill_md(name: &str, body: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: The {name} skill. Use when testing git sources.\n---\n\n{body}\n"
    )
}

/// A repository with skill `pdf` under `skills/pdf` (and a README at the
/// root), committed on `main`.
fn repo_with_pdf(base: &Path, body: &str) -> Repo {
    let repo = Repo::new(base);
    repo.write("README.md", "# skills\n")
        .write("skills/pdf/SKILL.md", &skill_md("pdf", body))
        .write("skills/pdf/references/guide.md", "# guide\n");
    repo.commit("pdf");
    repo
}

fn project(base: &Path) -> PathBuf {
    let p = base.join("project");
    std::fs::create_dir_all(&p).unwrap();
    p
}

#[test]
fn a_tag_and_path_install_records_the_commit_and_the_fingerprint_of_the_same_folder_packed() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = repo_with_pdf(&tmp.path().join("r"), "v1");
    repo.tag("v1.0.0", false);
    let commit = skilldeck_testkit::git::git(&repo.work, &["rev-parse", "HEAD"]);
    let p = project(tmp.path());
    let source = format!("{}#v1.0.0:skills/pdf", repo.url());
    let out = skilldeck(&p, &["install", &source]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(stdout(&out).contains(&commit), "{}", text(&out));
    assert!(p.join(".agents/skills/pdf/references/guide.md").is_file());
    assert_eq!(lock_value(&p, "source"), source);
    assert_eq!(lock_value(&p, "commit"), commit);
    // The same fingerprint as the folder packed (tar.gz) gets.
    let packed = skilldeck(
        tmp.path(),
        &[
            "pack",
            repo.work.join("skills/pdf").to_str().unwrap(),
            "-o",
            "pdf.tar.gz",
        ],
    );
    assert!(packed.status.success(), "{}", text(&packed));
    assert_eq!(lock_value(&p, "fingerprint"), stdout(&packed).trim());
    // And verify (asking the repository about the tag) is clean.
    let v = skilldeck(&p, &["verify"]);
    assert!(v.status.success(), "{}", text(&v));
}

#[test]
fn a_path_missing_from_the_repository_or_holding_several_skills_is_refused_naming_them() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = repo_with_pdf(&tmp.path().join("r"), "v1");
    let p = project(tmp.path());
    let out = skilldeck(
        &p,
        &["install", &format!("{}#main:skills/nope", repo.url())],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("skills/nope"), "{}", text(&out));
    let out = skilldeck(
        &p,
        &["install", &format!("{}#no-such-ref:skills/pdf", repo.url())],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("no tag or branch 'no-such-ref'"),
        "{}",
        text(&out)
    );
    assert!(!p.join(".agents/skills/pdf").exists());
}

#[test]
fn a_tag_that_moved_is_refused_by_install_and_verify() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = repo_with_pdf(&tmp.path().join("r"), "v1");
    repo.tag("v1.0.0", false);
    let p = project(tmp.path());
    let source = format!("{}#v1.0.0:skills/pdf", repo.url());
    let out = skilldeck(&p, &["install", &source]);
    assert!(out.status.success(), "{}", text(&out));
    let locked = lock(&p);
    // The publisher (or an attacker) rewrites the tag to other content.
    repo.write(
        "skills/pdf/SKILL.md",
        &skill_md("pdf", "changed behind the tag"),
    );
    repo.commit("rewrite");
    repo.tag("v1.0.0", true);
    let out = skilldeck(&p, &["install", &source]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let said = text(&out);
    assert!(
        said.contains("the tag 'v1.0.0' moved") && said.contains("skilldeck remove"),
        "{said}"
    );
    assert_eq!(lock(&p), locked, "the lock is unchanged");
    assert!(
        !std::fs::read_to_string(p.join(".agents/skills/pdf/SKILL.md"))
            .unwrap()
            .contains("changed behind")
    );
    let v = skilldeck(&p, &["verify"]);
    assert_eq!(v.status.code(), Some(1), "{}", text(&v));
    assert!(
        stdout(&v).contains("tag-moved") && stdout(&v).contains("moved"),
        "{}",
        text(&v)
    );
    // Offline, verify checks the files only.
    let v = skilldeck(&p, &["verify", "--offline"]);
    assert!(v.status.success(), "{}", text(&v));
    // A frozen install refuses it too.
    let f = skilldeck(&p, &["install", "--frozen"]);
    assert_eq!(f.status.code(), Some(2), "{}", text(&f));
    assert!(text(&f).contains("moved"), "{}", text(&f));
}

#[test]
fn a_branch_is_outdated_after_a_new_commit_and_update_shows_the_commit_and_fingerprint_change() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = repo_with_pdf(&tmp.path().join("r"), "v1");
    repo.branch("dev");
    let p = project(tmp.path());
    let source = format!("{}#dev:skills/pdf", repo.url());
    let out = skilldeck(&p, &["install", &source]);
    assert!(out.status.success(), "{}", text(&out));
    let (old_commit, old_fp) = (lock_value(&p, "commit"), lock_value(&p, "fingerprint"));
    let o = skilldeck(&p, &["outdated"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(stdout(&o).contains("up to date"), "{}", text(&o));

    repo.write("skills/pdf/SKILL.md", &skill_md("pdf", "v2"));
    let new_commit = repo.commit("v2");
    let o = skilldeck(&p, &["outdated"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        stdout(&o).contains(&format!("{} → {}", &old_commit[..12], &new_commit[..12])),
        "{}",
        text(&o)
    );
    let dry = skilldeck(&p, &["update", "--dry-run"]);
    assert!(dry.status.success(), "{}", text(&dry));
    assert!(stdout(&dry).contains("would update pdf"), "{}", text(&dry));
    assert_eq!(lock_value(&p, "commit"), old_commit);

    let u = skilldeck(&p, &["update", "pdf"]);
    assert!(u.status.success(), "{}", text(&u));
    let new_fp = lock_value(&p, "fingerprint");
    assert_ne!(new_fp, old_fp);
    assert_eq!(lock_value(&p, "commit"), new_commit);
    let said = stdout(&u);
    assert!(
        said.contains(&format!(
            "commit {} → {}",
            &old_commit[..12],
            &new_commit[..12]
        )) && said.contains(&format!("fingerprint {old_fp} → {new_fp}")),
        "{said}"
    );
    assert!(
        std::fs::read_to_string(p.join(".agents/skills/pdf/SKILL.md"))
            .unwrap()
            .contains("v2")
    );
    let o = skilldeck(&p, &["outdated"]);
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn update_keeps_a_pinned_tag_and_commit_and_outdated_names_newer_tags() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = repo_with_pdf(&tmp.path().join("r"), "v1");
    repo.tag("v1.0.0", false);
    let first = skilldeck_testkit::git::git(&repo.work, &["rev-parse", "HEAD"]);
    let p = project(tmp.path());
    let out = skilldeck(
        &p,
        &["install", &format!("{}#v1.0.0:skills/pdf", repo.url())],
    );
    assert!(out.status.success(), "{}", text(&out));
    let locked = lock(&p);
    repo.write("skills/pdf/SKILL.md", &skill_md("pdf", "v1.1"));
    repo.commit("v1.1");
    repo.tag("v1.1.0", false);
    let u = skilldeck(&p, &["update"]);
    assert!(u.status.success(), "{}", text(&u));
    assert!(
        stdout(&u).contains("pinned pdf") && stdout(&u).contains("v1.1.0"),
        "{}",
        text(&u)
    );
    assert_eq!(lock(&p), locked, "a pinned tag stays");
    let o = skilldeck(&p, &["outdated"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(stdout(&o).contains("newer tags: v1.1.0"), "{}", text(&o));

    // A full commit is a pin too.
    let p2 = tmp.path().join("p2");
    std::fs::create_dir_all(&p2).unwrap();
    let out = skilldeck(
        &p2,
        &["install", &format!("{}#{first}:skills/pdf", repo.url())],
    );
    assert!(out.status.success(), "{}", text(&out));
    let locked = lock(&p2);
    let u = skilldeck(&p2, &["update"]);
    assert!(u.status.success(), "{}", text(&u));
    assert!(stdout(&u).contains("pinned pdf"), "{}", text(&u));
    assert_eq!(lock(&p2), locked);
}

#[test]
fn a_frozen_install_fetches_exactly_the_locked_commit() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = repo_with_pdf(&tmp.path().join("r"), "v1");
    let p = project(tmp.path());
    let out = skilldeck(&p, &["install", &format!("{}:skills/pdf", repo.url())]);
    assert!(out.status.success(), "{}", text(&out));
    let locked = lock(&p);
    repo.write("skills/pdf/SKILL.md", &skill_md("pdf", "v2"));
    repo.commit("v2");
    std::fs::remove_dir_all(p.join(".agents/skills/pdf")).unwrap();
    let f = skilldeck(&p, &["install", "--frozen"]);
    assert!(f.status.success(), "{}", text(&f));
    assert_eq!(lock(&p), locked);
    assert!(
        std::fs::read_to_string(p.join(".agents/skills/pdf/SKILL.md"))
            .unwrap()
            .contains("v1")
    );
}

#[test]
fn remove_takes_the_folder_and_the_lock_entry_together_and_refuses_local_edits() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = repo_with_pdf(&tmp.path().join("r"), "v1");
    let p = project(tmp.path());
    let out = skilldeck(&p, &["install", &format!("{}:skills/pdf", repo.url())]);
    assert!(out.status.success(), "{}", text(&out));
    std::fs::write(p.join(".agents/skills/pdf/notes.md"), "mine\n").unwrap();
    let r = skilldeck(&p, &["remove", "pdf"]);
    assert_eq!(r.status.code(), Some(1), "{}", text(&r));
    assert!(text(&r).contains("local edits"), "{}", text(&r));
    assert!(p.join(".agents/skills/pdf").is_dir() && lock(&p).contains("[skill.pdf]"));
    let r = skilldeck(&p, &["remove", "pdf", "--force"]);
    assert!(r.status.success(), "{}", text(&r));
    assert!(!p.join(".agents/skills/pdf").exists());
    assert!(!lock(&p).contains("[skill.pdf]"), "{}", lock(&p));
    let r = skilldeck(&p, &["remove", "pdf"]);
    assert_eq!(r.status.code(), Some(1), "{}", text(&r));
    assert!(text(&r).contains("not installed"), "{}", text(&r));
}

#[test]
fn a_remove_interrupted_after_its_folder_went_aside_is_finished_by_the_next_command() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = repo_with_pdf(&tmp.path().join("r"), "v1");
    repo.write("skills/other/SKILL.md", &skill_md("other", "x"));
    repo.commit("other");
    let p = project(tmp.path());
    for path in ["skills/pdf", "skills/other"] {
        let out = skilldeck(&p, &["install", &format!("{}:{path}", repo.url())]);
        assert!(out.status.success(), "{}", text(&out));
    }
    // The state a remove killed between its rename and its lock write
    // leaves: the folder set aside, the lock still naming it.
    let skills = p.join(".agents/skills");
    std::fs::rename(skills.join("pdf"), skills.join(".skilldeck-removed-pdf")).unwrap();
    assert!(lock(&p).contains("[skill.pdf]"));
    let r = skilldeck(&p, &["remove", "other"]);
    assert!(r.status.success(), "{}", text(&r));
    assert!(!skills.join(".skilldeck-removed-pdf").exists());
    assert!(!lock(&p).contains("[skill.pdf]"), "{}", lock(&p));
    let v = skilldeck(&p, &["verify"]);
    assert!(v.status.success(), "{}", text(&v));
}

#[test]
fn a_symlink_leaving_the_skill_in_the_repository_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = repo_with_pdf(&tmp.path().join("r"), "v1");
    // To a file of the repository outside the skill, and to the host.
    std::os::unix::fs::symlink("../../README.md", repo.work.join("skills/pdf/readme.md")).unwrap();
    repo.commit("link out of the skill");
    let p = project(tmp.path());
    let out = skilldeck(&p, &["install", &format!("{}:skills/pdf", repo.url())]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("package-link"), "{}", text(&out));
    assert!(!p.join(".agents/skills/pdf").exists());

    let repo2 = repo_with_pdf(&tmp.path().join("r2"), "v1");
    std::os::unix::fs::symlink("/etc/passwd", repo2.work.join("skills/pdf/passwd")).unwrap();
    repo2.commit("link to the host");
    let out = skilldeck(&p, &["install", &format!("{}:skills/pdf", repo2.url())]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("outside the skill"), "{}", text(&out));
}

#[test]
fn no_hook_or_filter_runs_while_a_repository_is_fetched() {
    let tmp = tempfile::tempdir().unwrap();
    let marker = tmp.path().join("ran");
    // The user's own config has hooks and a smudge filter (as git-lfs
    // installs one); the repository asks for that filter on every file.
    let hooks = tmp.path().join("hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    let script = format!("#!/bin/sh\necho \"$0\" >> {}\n", marker.display());
    for hook in [
        "post-checkout",
        "reference-transaction",
        "post-merge",
        "pre-auto-gc",
    ] {
        let h = hooks.join(hook);
        std::fs::write(&h, &script).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&h, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let global = tmp.path().join("gitconfig");
    std::fs::write(
        &global,
        format!(
            "[core]\n\thooksPath = {}\n[filter \"evil\"]\n\tsmudge = sh -c 'echo smudge >> {}; cat'\n\trequired = true\n",
            hooks.display(),
            marker.display()
        ),
    )
    .unwrap();
    let repo = repo_with_pdf(&tmp.path().join("r"), "v1");
    repo.write(".gitattributes", "* filter=evil\n");
    repo.commit("attributes");
    let p = project(tmp.path());
    let out = skilldeck_with(
        &p,
        &global,
        &["install", &format!("{}:skills/pdf", repo.url())],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        !marker.exists(),
        "a hook or filter ran: {}",
        std::fs::read_to_string(&marker).unwrap_or_default()
    );
}

#[test]
fn a_submodule_inside_the_skill_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = repo_with_pdf(&tmp.path().join("r"), "v1");
    let head = skilldeck_testkit::git::git(&repo.work, &["rev-parse", "HEAD"]);
    // A gitlink: the content would be another repository's.
    skilldeck_testkit::git::git(
        &repo.work,
        &[
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("160000,{head},skills/pdf/vendor"),
        ],
    );
    skilldeck_testkit::git::git(&repo.work, &["commit", "-q", "-m", "submodule"]);
    skilldeck_testkit::git::git(&repo.work, &["push", "-q", "origin", "HEAD"]);
    let p = project(tmp.path());
    let out = skilldeck(&p, &["install", &format!("{}:skills/pdf", repo.url())]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("submodule"), "{}", text(&out));
    assert!(!p.join(".agents/skills/pdf").exists());
}
