//! Local git repositories for tests of git sources: a work tree to commit
//! in and a bare repository served as `git+file://`. Nothing leaves the
//! machine.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A work tree (`work`) pushing to a bare repository (`bare`).
#[derive(Debug)]
pub struct Repo {
    /// The work tree files are written and committed in.
    pub work: PathBuf,
    /// The bare repository installs fetch from.
    pub bare: PathBuf,
}

/// Runs git in `dir` with a fixed identity and no user or system config;
/// panics with git's output when it fails (a broken fixture).
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=Test", "-c", "user.email=test@example.com"])
        .args([
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
        ])
        .args([
            "-c",
            "tag.gpgsign=false",
            "-c",
            "protocol.file.allow=always",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap_or_else(|e| panic!("cannot run git: {e}"));
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

impl Repo {
    /// A new repository under `base` (`base/work`, `base/repo.git`), with
    /// no commit yet; its default branch is `main`.
    pub fn new(base: &Path) -> Repo {
        let work = base.join("work");
        let bare = base.join("repo.git");
        std::fs::create_dir_all(&work).unwrap_or_else(|e| panic!("{e}"));
        git(base, &["init", "-q", "--bare", "repo.git"]);
        git(&work, &["init", "-q"]);
        git(&work, &["remote", "add", "origin", &bare.to_string_lossy()]);
        Repo { work, bare }
    }

    /// The `git+file://` URL of the bare repository.
    pub fn url(&self) -> String {
        format!("git+file://{}", self.bare.display())
    }

    /// Writes `rel` in the work tree (parents created).
    pub fn write(&self, rel: &str, content: &str) -> &Repo {
        let path = self.work.join(rel);
        if let Some(p) = path.parent() {
            std::fs::create_dir_all(p).unwrap_or_else(|e| panic!("{e}"));
        }
        std::fs::write(&path, content).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        self
    }

    /// Commits everything and pushes the current branch; returns the
    /// commit id.
    pub fn commit(&self, message: &str) -> String {
        git(&self.work, &["add", "-A"]);
        git(&self.work, &["commit", "-q", "-m", message]);
        git(&self.work, &["push", "-q", "origin", "HEAD"]);
        git(&self.work, &["rev-parse", "HEAD"])
    }

    /// Tags the current commit as `tag` and pushes it (`force`: moves an
    /// existing tag, rewriting it on the remote).
    pub fn tag(&self, tag: &str, force: bool) {
        if force {
            git(&self.work, &["tag", "-f", "-a", tag, "-m", tag]);
            git(
                &self.work,
                &["push", "-q", "-f", "origin", &format!("refs/tags/{tag}")],
            );
        } else {
            git(&self.work, &["tag", "-a", tag, "-m", tag]);
            git(
                &self.work,
                &["push", "-q", "origin", &format!("refs/tags/{tag}")],
            );
        }
    }

    /// Creates branch `branch` at the current commit, checks it out and
    /// pushes it.
    pub fn branch(&self, branch: &str) {
        git(&self.work, &["checkout", "-q", "-b", branch]);
        git(&self.work, &["push", "-q", "origin", branch]);
    }

    /// Checks out an existing branch.
    pub fn checkout(&self, branch: &str) {
        git(&self.work, &["checkout", "-q", branch]);
    }
}
