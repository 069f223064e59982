//! `verify`: re-hash the installed skills and compare them with the lock.

use std::fs;
use std::path::{Path, PathBuf};

use skilldeck::environment::EnvStore;
use skilldeck::{Code, Digest, ManifestDiff};

use crate::error::Error;
use crate::folder::folder_manifest;
use crate::install::{LEFTOVER_PREFIX, is_fetched, lexical, resolve_source};
use crate::limits::PackageLimits;
use crate::lock::{LockEntry, Lockfile, lock_path};
use crate::signature::{SignaturePolicy, SignerFingerprint, Verified};

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
    /// The files are as locked, but the signature beside the source is by
    /// another key than the lock pinned, or gone while one was pinned.
    #[serde(rename = "signer-changed")]
    SignerChanged,
    /// The files are as locked, but the signature beside the source does
    /// not verify over the locked fingerprint, its key is not allowed, or
    /// a required signature is missing.
    #[serde(rename = "bad-signature")]
    BadSignature,
}

impl Status {
    /// The status as `verify` prints it (`ok`, `signer-changed`...).
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Modified => "modified",
            Status::Missing => "missing",
            Status::Unreadable => "unreadable",
            Status::SignerChanged => "signer-changed",
            Status::BadSignature => "bad-signature",
        }
    }
}

/// What `verify` found about a locked skill's signature (the signature
/// beside its recorded source, checked over the locked fingerprint).
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "kebab-case", tag = "state")]
pub enum SignatureState {
    /// Not signed, and the lock pins no signer.
    Unsigned,
    /// The signature verifies, by the pinned signer (or the lock pins none).
    Verified(Verified),
    /// The source is not a package here (fetched from a registry, or
    /// gone), so its signature could not be checked again.
    Unchecked {
        /// Why.
        reason: String,
    },
    /// Refused: see the skill's status and problem.
    Refused,
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
    /// Why the folder could not be read, or the signature was refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// The signer the lock pins.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signer: Option<SignerFingerprint>,
    /// The signature beside the source.
    pub signature: SignatureState,
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
    /// The locked environments, re-checked ([`verify_environments`]; empty
    /// until it runs).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub environments: Vec<EnvironmentCheck>,
}

/// One skill's environment, checked against the lock.
#[derive(Debug, Clone, serde::Serialize)]
pub struct EnvironmentCheck {
    /// The skill.
    pub skill: String,
    /// The environment's kind (`None`: the skill's dependency files are
    /// malformed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<skilldeck::environment::EnvKind>,
    /// The locked key (`None`: the skill declares dependencies and the lock
    /// records no environment).
    pub key: Option<Digest>,
    /// The locked packages (`name==version`).
    pub packages: Vec<String>,
    /// `ok`, or the stable code of the problem
    /// (`environment-missing`, `environment-modified`,
    /// `environment-requirement-invalid`).
    pub status: &'static str,
    /// What differs, and what to do.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

impl VerifyReport {
    /// True when every locked skill is exactly as locked and nothing is
    /// untracked.
    pub fn is_clean(&self) -> bool {
        self.untracked.is_empty()
            && self.skills.iter().all(|s| s.status == Status::Ok)
            && self.environments.iter().all(|e| e.status == "ok")
    }
}

/// Re-hashes every skill the lock lists under `root` (read only), and
/// checks the signature beside each one's source with the default
/// [`SignaturePolicy`] (see [`verify_with`]).
pub fn verify(
    root: &Path,
    lockfile: Option<&Path>,
    limits: &PackageLimits,
) -> Result<VerifyReport, Error> {
    verify_with(root, lockfile, limits, &SignaturePolicy::default())
}

/// [`verify`] with a signature policy: the signature beside each locked
/// skill's recorded source (`PACKAGE.sig`) must verify over the locked
/// fingerprint, by the signer the lock pins (unless
/// [`SignaturePolicy::allow_signer_change`]), from an allowed signer when
/// [`SignaturePolicy::allowed_signers`] is set, and must exist when
/// [`SignaturePolicy::require`] is.
pub fn verify_with(
    root: &Path,
    lockfile: Option<&Path>,
    limits: &PackageLimits,
    policy: &SignaturePolicy,
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
            signer: entry.signer.clone(),
            signature: SignatureState::Unsigned,
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
        match check_signature(name, entry, &lockfile, policy) {
            Ok(state) => check.signature = state,
            Err(e) => {
                check.signature = SignatureState::Refused;
                if check.status == Status::Ok {
                    check.status = if matches!(e, Error::SignerChanged { .. }) {
                        Status::SignerChanged
                    } else {
                        Status::BadSignature
                    };
                }
                let problem = e.to_string();
                check.problem = Some(match check.problem.take() {
                    Some(p) => format!("{p}\n{problem}"),
                    None => problem,
                });
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
        environments: Vec::new(),
    })
}

/// Re-checks the environment of every locked skill against the lock, in
/// `store`: its marker, every locked package at its version, every file
/// its `RECORD` lists re-hashed, no other package
/// ([`EnvStore::verify`]); and a skill that declares dependencies without a
/// locked environment. Fills [`VerifyReport::environments`].
pub fn verify_environments(report: &mut VerifyReport, store: &EnvStore) -> Result<(), Error> {
    let Some(lock) = Lockfile::load(&report.lockfile)? else {
        return Ok(());
    };
    for (name, entry) in &lock.skill {
        for env in entry.environments() {
            let result =
                store.verify(name, env).and_then(
                    |ready| match crate::environment::check_interpreter(name, env) {
                        Ok(()) => Ok(ready),
                        Err(e) => Err(skilldeck::environment::EnvProblem::Modified {
                            skill: name.clone(),
                            path: ready.dir.clone(),
                            detail: e
                                .diagnostics()
                                .first()
                                .map_or_else(|| e.to_string(), |d| d.message.clone()),
                        }),
                    },
                );
            report.environments.push(EnvironmentCheck {
                skill: name.clone(),
                kind: Some(env.kind),
                key: Some(env.key),
                packages: env.package_names(),
                status: result.as_ref().map_or_else(|p| p.code().as_str(), |_| "ok"),
                problem: result.err().map(|p| format!("{p}\n  = help: {}", p.help())),
            });
        }
        let dir = report.root.join(name);
        match skilldeck::environment::declared_dependencies(&dir) {
            Ok(declared) => {
                for deps in declared {
                    if entry.environments().iter().any(|e| e.kind == deps.kind) {
                        continue;
                    }
                    report.environments.push(EnvironmentCheck {
                        skill: name.clone(),
                        kind: Some(deps.kind),
                        key: None,
                        packages: Vec::new(),
                        status: Code::EnvironmentMissing.as_str(),
                        problem: Some(format!(
                            "skill '{name}' declares {} but the lock records no {} environment \
                             for it\n  = help: install it again with environments on",
                            deps.files().join(", "),
                            deps.kind.as_str()
                        )),
                    });
                }
            }
            Err(d) => report.environments.push(EnvironmentCheck {
                skill: name.clone(),
                kind: None,
                key: None,
                packages: Vec::new(),
                status: Code::EnvironmentRequirementInvalid.as_str(),
                problem: Some(
                    d.iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join("\n"),
                ),
            }),
        }
    }
    Ok(())
}

/// The signature of one locked skill, beside its recorded source.
fn check_signature(
    name: &str,
    entry: &LockEntry,
    lockfile: &Path,
    policy: &SignaturePolicy,
) -> Result<SignatureState, Error> {
    let unchecked = |reason: String| {
        if policy.require && entry.signer.is_none() {
            Err(Error::Unsigned {
                path: PathBuf::from(&entry.source),
                expected: PathBuf::from(format!("{} (no signer in the lock)", entry.source)),
            })
        } else {
            Ok(SignatureState::Unchecked { reason })
        }
    };
    if is_fetched(&entry.source) {
        return unchecked(format!(
            "fetched from {}: its signature is checked when it is fetched",
            entry.source
        ));
    }
    let source = lexical(&resolve_source(&entry.source, lockfile));
    let package = match fs::metadata(&source) {
        Err(_) => return unchecked(format!("its source {} is not here", source.display())),
        Ok(m) if m.is_dir() => None,
        Ok(_) => Some(source.as_path()),
    };
    let signed = policy.check_package(package, &source, &entry.fingerprint)?;
    policy.check_pin(
        name,
        &source,
        lockfile,
        entry.signer.as_ref(),
        signed.as_ref().map(|v| &v.signer),
    )?;
    Ok(match signed {
        Some(v) => SignatureState::Verified(v),
        None => SignatureState::Unsigned,
    })
}
