//! `verify`: re-hash the installed skills and compare them with the lock.

use std::fs;
use std::path::{Path, PathBuf};

use skilldeck::{Digest, ManifestDiff};

use crate::error::Error;
use crate::folder::folder_manifest;
use crate::install::LEFTOVER_PREFIX;
use crate::limits::PackageLimits;
use crate::lock::{Lockfile, lock_path};

/// How one locked skill compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Exactly the locked files.
    Ok,
    /// Files changed, were added or are missing.
    Modified,
    /// The skill's folder is not there.
    Missing,
    /// The folder breaks the package rules (a symlink, too many files...).
    Unreadable,
}

/// One locked skill, checked.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SkillCheck {
    /// The skill's name.
    pub name: String,
    /// The verdict.
    pub status: Status,
    /// The fingerprint the lock records.
    pub expected: Digest,
    /// The fingerprint found (when the folder could be read).
    pub found: Option<Digest>,
    /// The files that differ.
    #[serde(flatten)]
    pub diff: ManifestDiff,
    /// Why the folder could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// Everything `verify` found.
#[derive(Debug, Clone, serde::Serialize)]
pub struct VerifyReport {
    /// The skills root.
    pub root: PathBuf,
    /// The lockfile.
    pub lockfile: PathBuf,
    /// Each locked skill, by name.
    pub skills: Vec<SkillCheck>,
    /// Skill folders in the root that the lock does not list.
    pub untracked: Vec<String>,
    /// Skills whose install was interrupted (the next install finishes it).
    pub interrupted: Vec<String>,
}

impl VerifyReport {
    /// True when every locked skill is exactly as locked and nothing is
    /// untracked.
    pub fn is_clean(&self) -> bool {
        self.untracked.is_empty() && self.skills.iter().all(|s| s.status == Status::Ok)
    }
}

/// Re-hashes every skill the lock lists under `root` (read only).
pub fn verify(
    root: &Path,
    lockfile: Option<&Path>,
    limits: &PackageLimits,
) -> Result<VerifyReport, Error> {
    let lockfile = lockfile.map_or_else(|| lock_path(root), Path::to_path_buf);
    let lock = Lockfile::load(&lockfile)?.ok_or_else(|| Error::Lock {
        path: lockfile.clone(),
        message: "no lockfile (run `skilldeck install` first)".into(),
    })?;
    let mut skills = Vec::new();
    for (name, entry) in &lock.skill {
        let dir = root.join(name);
        let mut check = SkillCheck {
            name: name.clone(),
            status: Status::Ok,
            expected: entry.fingerprint,
            found: None,
            diff: ManifestDiff::default(),
            problem: None,
        };
        if fs::symlink_metadata(&dir).is_err() {
            check.status = Status::Missing;
            check.diff.missing = entry.files.iter().map(|f| f.path.clone()).collect();
        } else {
            match folder_manifest(&dir, limits) {
                Ok(found) => {
                    check.diff = found.diff(&entry.manifest());
                    check.found = Some(found.fingerprint());
                    if !check.diff.is_empty() || check.found != Some(entry.fingerprint) {
                        check.status = Status::Modified;
                    }
                }
                Err(e) => {
                    check.status = Status::Unreadable;
                    check.problem = Some(e.to_string());
                }
            }
        }
        skills.push(check);
    }
    let mut untracked = Vec::new();
    let mut interrupted = Vec::new();
    if let Ok(entries) = fs::read_dir(root) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(rest) = name.strip_prefix(LEFTOVER_PREFIX) {
                if let Some(skill) = rest
                    .strip_prefix("pending-")
                    .and_then(|r| r.strip_suffix(".toml"))
                {
                    interrupted.push(skill.to_owned());
                }
                continue;
            }
            if !name.starts_with('.')
                && entry.path().join("SKILL.md").exists()
                && !lock.skill.contains_key(&name)
            {
                untracked.push(name);
            }
        }
    }
    untracked.sort();
    interrupted.sort();
    Ok(VerifyReport {
        root: root.to_path_buf(),
        lockfile,
        skills,
        untracked,
        interrupted,
    })
}
