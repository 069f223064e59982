//! The lockfile, `skilldeck.lock`: TOML, sorted, one line per file, next to
//! the skills root it describes (in the root's parent folder).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use skilldeck::environment::LockedEnvironment;
use skilldeck::{Digest, FileDigest, SkillManifest};

use crate::error::Error;
use crate::pack::{write_atomic, write_atomic_with};
use crate::signer::SignerFingerprint;

/// The lockfile's name.
pub const LOCKFILE_NAME: &str = skilldeck::environment::LOCKFILE_NAME;

/// The lockfile format this code reads and writes.
pub const LOCK_FORMAT: u32 = 1;

/// The lockfile of the skills root `root`: `skilldeck.lock` in its parent
/// folder (`.agents/skills` → `.agents/skilldeck.lock`).
pub fn lock_path(root: &Path) -> PathBuf {
    skilldeck::environment::lock_path(root)
}

/// One installed skill as the lock records it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockEntry {
    /// The skill's `metadata.version`, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Where it was installed from (a package file or a folder; relative to
    /// the lockfile's folder when inside it).
    pub source: String,
    /// The content fingerprint.
    pub fingerprint: Digest,
    /// For a git source: the commit installed (full id). `update` and
    /// `outdated` compare it with the ref's commit now; a tag whose
    /// commit is not this one is refused (the tag moved).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The key that signed the installed version (`SHA256:...`), pinned on
    /// first use: a later version signed by another key, or not signed, is
    /// refused unless the change is allowed. Absent for unsigned skills
    /// (and in locks written before signatures existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signer: Option<SignerFingerprint>,
    /// Every file, sorted by path.
    pub files: Vec<FileDigest>,
    /// The skill's environment (its declared dependencies, resolved and
    /// pinned by hash), when it declares any and it was built.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<LockedEnvironment>,
}

impl LockEntry {
    /// The entry's files as a manifest.
    pub fn manifest(&self) -> SkillManifest {
        SkillManifest::new(self.files.clone())
    }

    /// True when `manifest` has exactly these files, digests and executable
    /// bits (and so this fingerprint).
    pub fn matches(&self, manifest: &SkillManifest) -> bool {
        manifest.files() == self.manifest().files() && manifest.fingerprint() == self.fingerprint
    }
}

/// The whole lockfile.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lockfile {
    /// The format ([`LOCK_FORMAT`]).
    pub format: u32,
    /// The skills root it describes, relative to the lockfile's folder.
    pub root: String,
    /// Installed skills by name.
    #[serde(default)]
    pub skill: BTreeMap<String, LockEntry>,
}

impl Lockfile {
    /// An empty lock for the root named `root`.
    pub fn new(root: impl Into<String>) -> Lockfile {
        Lockfile {
            format: LOCK_FORMAT,
            root: root.into(),
            skill: BTreeMap::new(),
        }
    }

    /// Reads the lockfile at `path`; `None` when there is none.
    pub fn load(path: &Path) -> Result<Option<Lockfile>, Error> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(path, e)),
        };
        Lockfile::parse(&text, path).map(Some)
    }

    /// Parses lockfile text (`path` names it in errors).
    pub fn parse(text: &str, path: &Path) -> Result<Lockfile, Error> {
        let lock: Lockfile = toml::from_str(text).map_err(|e| Error::Lock {
            path: path.to_path_buf(),
            message: e.to_string().trim_end().to_owned(),
        })?;
        if lock.format != LOCK_FORMAT {
            return Err(Error::Lock {
                path: path.to_path_buf(),
                message: format!(
                    "lockfile format {} is not supported (this skilldeck reads {LOCK_FORMAT})",
                    lock.format
                ),
            });
        }
        Ok(lock)
    }

    /// The TOML text: sorted by skill, then one line per file, so a change
    /// shows as a small diff.
    pub fn to_toml(&self) -> String {
        let mut out = String::from(
            "# skilldeck.lock: written by `skilldeck install`; commit it, do not edit it.\n",
        );
        let _ = writeln!(out, "format = {}", self.format);
        let _ = writeln!(out, "root = {}", quote(&self.root));
        for (name, entry) in &self.skill {
            let _ = writeln!(out, "\n[skill.{}]", key(name));
            if let Some(v) = &entry.version {
                let _ = writeln!(out, "version = {}", quote(v));
            }
            let _ = writeln!(out, "source = {}", quote(&entry.source));
            let _ = writeln!(
                out,
                "fingerprint = {}",
                quote(&entry.fingerprint.to_string())
            );
            if let Some(commit) = &entry.commit {
                let _ = writeln!(out, "commit = {}", quote(commit));
            }
            if let Some(signer) = &entry.signer {
                let _ = writeln!(out, "signer = {}", quote(signer.as_str()));
            }
            out.push_str("files = [\n");
            for f in &entry.files {
                let _ = write!(
                    out,
                    "    {{ path = {}, size = {}, sha256 = {}",
                    quote(&f.path),
                    f.size,
                    quote(&f.sha256.to_string())
                );
                if f.executable {
                    out.push_str(", executable = true");
                }
                out.push_str(" },\n");
            }
            out.push_str("]\n");
            if let Some(env) = &entry.environment {
                write_environment(&mut out, name, env);
            }
        }
        out
    }

    /// Writes the lockfile atomically (a temporary file, synced, renamed).
    pub fn save(&self, path: &Path) -> Result<(), Error> {
        write_atomic(path, self.to_toml().as_bytes())
    }

    /// [`Lockfile::save`] without the sync to disk (install's journals).
    pub fn save_unsynced(&self, path: &Path) -> Result<(), Error> {
        write_atomic_with(path, self.to_toml().as_bytes(), false)
    }
}

/// `[skill.NAME.environment]`: the kind, key and interpreter, then one
/// line per package with its hashes.
fn write_environment(out: &mut String, name: &str, env: &LockedEnvironment) {
    let _ = writeln!(out, "\n[skill.{}.environment]", key(name));
    let _ = writeln!(out, "kind = {}", quote(env.kind.as_str()));
    let _ = writeln!(out, "key = {}", quote(&env.key.to_string()));
    let _ = writeln!(out, "interpreter = {}", quote(&env.interpreter));
    let _ = writeln!(out, "python = {}", quote(&env.python));
    let _ = writeln!(out, "input = {}", quote(&env.input.to_string()));
    out.push_str("packages = [\n");
    for p in &env.packages {
        let hashes: Vec<String> = p.hashes.iter().map(|h| quote(&h.to_string())).collect();
        let _ = writeln!(
            out,
            "    {{ name = {}, version = {}, hashes = [{}] }},",
            quote(&p.name),
            quote(&p.version),
            hashes.join(", ")
        );
    }
    out.push_str("]\n");
}

fn quote(s: &str) -> String {
    toml::Value::String(s.to_owned()).to_string()
}

fn key(name: &str) -> String {
    if !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        name.to_owned()
    } else {
        quote(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lockfile_round_trips_through_its_toml() {
        let mut lock = Lockfile::new("skills");
        let files = vec![
            FileDigest::of_bytes("SKILL.md", b"x", false),
            FileDigest::of_bytes("scripts/run \"it\".sh", b"y", true),
        ];
        let manifest = SkillManifest::new(files.clone());
        lock.skill.insert(
            "pdf-tools".into(),
            LockEntry {
                version: Some("1.0".into()),
                source: "dist/pdf.tar.gz".into(),
                fingerprint: manifest.fingerprint(),
                commit: Some("27810ee5b9bfd629ed238d55d0aa4e985853a6d0".into()),
                signer: Some(
                    "SHA256:IMYkdnnCh3q3V9DirOYOeuEdMLEbmLymvczyVx5YKBg"
                        .parse()
                        .unwrap(),
                ),
                files,
                environment: None,
            },
        );
        lock.skill.insert(
            "café".into(),
            LockEntry {
                version: None,
                source: "x".into(),
                fingerprint: manifest.fingerprint(),
                commit: None,
                signer: None,
                files: manifest.files().to_vec(),
                environment: None,
            },
        );
        let text = lock.to_toml();
        let back = Lockfile::parse(&text, Path::new("skilldeck.lock")).unwrap();
        assert_eq!(back, lock);
        assert!(back.skill["pdf-tools"].matches(&manifest));
    }

    #[test]
    fn a_lockfile_with_a_malformed_digest_is_refused_naming_the_file() {
        let mut lock = Lockfile::new("skills");
        let manifest = SkillManifest::new(vec![FileDigest::of_bytes("SKILL.md", b"x", false)]);
        lock.skill.insert(
            "pdf".into(),
            LockEntry {
                version: None,
                source: "x".into(),
                fingerprint: manifest.fingerprint(),
                commit: None,
                signer: None,
                files: manifest.files().to_vec(),
                environment: None,
            },
        );
        let text = lock.to_toml();
        let good = manifest.fingerprint().to_string();
        for bad in [
            "sha256:../../etc".to_owned(),
            good.to_uppercase(),
            good.trim_start_matches("sha256:").to_owned(),
        ] {
            let broken = text.replacen(&good, &bad, 1);
            let e = Lockfile::parse(&broken, Path::new("skilldeck.lock"))
                .map(|_| ())
                .unwrap_err()
                .to_string();
            assert!(e.contains("skilldeck.lock") && e.contains("sha256"), "{e}");
        }
    }

    #[test]
    fn a_lock_written_before_signatures_still_loads_with_no_signer() {
        let old = "format = 1\nroot = \"skills\"\n\n[skill.pdf]\nsource = \"x\"\n\
                   fingerprint = \"sha256:0000000000000000000000000000000000000000000000000000000000000000\"\n\
                   files = []\n";
        let lock = Lockfile::parse(old, Path::new("skilldeck.lock")).unwrap();
        assert_eq!(lock.skill["pdf"].signer, None);
        assert!(!lock.to_toml().contains("signer"));
    }

    #[test]
    fn a_lock_with_a_malformed_signer_is_refused_naming_the_file() {
        let text = "format = 1\nroot = \"skills\"\n\n[skill.pdf]\nsource = \"x\"\n\
                    fingerprint = \"sha256:0000000000000000000000000000000000000000000000000000000000000000\"\n\
                    signer = \"MD5:00:11\"\nfiles = []\n";
        let e = Lockfile::parse(text, Path::new("skilldeck.lock"))
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(e.contains("skilldeck.lock") && e.contains("SHA256:"), "{e}");
    }

    #[test]
    fn a_skill_environment_round_trips_with_every_package_hash() {
        use skilldeck::environment::{EnvKind, LockedPackage};
        let mut lock = Lockfile::new("skills");
        let manifest = SkillManifest::new(vec![FileDigest::of_bytes("SKILL.md", b"x", false)]);
        lock.skill.insert(
            "dates".into(),
            LockEntry {
                version: None,
                source: "x".into(),
                fingerprint: manifest.fingerprint(),
                commit: None,
                signer: None,
                files: manifest.files().to_vec(),
                environment: Some(LockedEnvironment {
                    kind: EnvKind::Python,
                    key: Digest::from_bytes([5; 32]),
                    interpreter: "/usr/bin/python3".into(),
                    python: "3.11.2".into(),
                    input: Digest::from_bytes([6; 32]),
                    packages: vec![LockedPackage {
                        name: "six".into(),
                        version: "1.17.0".into(),
                        hashes: vec![Digest::from_bytes([1; 32]), Digest::from_bytes([2; 32])],
                    }],
                }),
            },
        );
        let text = lock.to_toml();
        assert!(text.contains("[skill.dates.environment]"), "{text}");
        let back = Lockfile::parse(&text, Path::new("skilldeck.lock")).unwrap();
        assert_eq!(back, lock);
    }

    #[test]
    fn the_lockfile_sits_next_to_the_root() {
        assert_eq!(
            lock_path(Path::new(".agents/skills")),
            Path::new(".agents/skilldeck.lock")
        );
    }
}
