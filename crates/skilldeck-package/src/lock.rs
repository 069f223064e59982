//! The lockfile, `skilldeck.lock`: TOML, sorted, one line per file, next to
//! the skills root it describes (in the root's parent folder).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use skilldeck::environment::{EnvKind, LockedEnvironment, lock_key};
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
    /// The skill's Python environment (its declared dependencies, resolved
    /// and pinned by hash), when it declares any and it was built.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<LockedEnvironment>,
    /// The skill's Node environment (`[skill.NAME.node-environment]`).
    #[serde(
        default,
        rename = "node-environment",
        skip_serializing_if = "Option::is_none"
    )]
    pub node_environment: Option<LockedEnvironment>,
}

impl LockEntry {
    /// Its environments, Python first.
    pub fn environments(&self) -> Vec<&LockedEnvironment> {
        self.environment
            .iter()
            .chain(self.node_environment.iter())
            .collect()
    }

    /// Records `envs` (at most one of each kind; none: no environment).
    pub fn set_environments(&mut self, envs: Vec<LockedEnvironment>) {
        self.environment = None;
        self.node_environment = None;
        for env in envs {
            match env.kind {
                EnvKind::Python => self.environment = Some(env),
                EnvKind::Node => self.node_environment = Some(env),
            }
        }
    }

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
        for (name, entry) in &lock.skill {
            for (slot, env) in [
                (EnvKind::Python, &entry.environment),
                (EnvKind::Node, &entry.node_environment),
            ] {
                let Some(env) = env else { continue };
                let problem = if env.kind == slot {
                    env.validate().err()
                } else {
                    Some(format!(
                        "[skill.{name}.{}] records a {} environment",
                        lock_key(slot),
                        env.kind.as_str()
                    ))
                };
                if let Some(message) = problem {
                    return Err(Error::Lock {
                        path: path.to_path_buf(),
                        message: format!("skill '{name}': {message}"),
                    });
                }
            }
        }
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
            for env in entry.environments() {
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

/// `[skill.NAME.environment]` (Python) or `[skill.NAME.node-environment]`:
/// the kind, key and interpreter, then one line per package with what pins
/// it.
fn write_environment(out: &mut String, name: &str, env: &LockedEnvironment) {
    let _ = writeln!(out, "\n[skill.{}.{}]", key(name), lock_key(env.kind));
    let _ = writeln!(out, "kind = {}", quote(env.kind.as_str()));
    let _ = writeln!(out, "key = {}", quote(&env.key.to_string()));
    let _ = writeln!(out, "interpreter = {}", quote(&env.interpreter));
    match env.kind {
        EnvKind::Python => {
            let _ = writeln!(out, "python = {}", quote(&env.python));
        }
        EnvKind::Node => {
            let _ = writeln!(out, "node = {}", quote(&env.node));
        }
    }
    let _ = writeln!(out, "input = {}", quote(&env.input.to_string()));
    if let Some(tree) = &env.tree {
        let _ = writeln!(out, "tree = {}", quote(&tree.to_string()));
    }
    out.push_str("packages = [\n");
    for p in &env.packages {
        match env.kind {
            EnvKind::Python => {
                let hashes: Vec<String> = p.hashes.iter().map(|h| quote(&h.to_string())).collect();
                let _ = writeln!(
                    out,
                    "    {{ name = {}, version = {}, hashes = [{}] }},",
                    quote(&p.name),
                    quote(&p.version),
                    hashes.join(", ")
                );
            }
            EnvKind::Node => {
                // One line per package, as for Python: its pins, then its
                // declared dependencies (inline tables), then its files.
                let mut fields = vec![
                    format!("path = {}", quote(p.path.as_deref().unwrap_or_default())),
                    format!("name = {}", quote(&p.name)),
                    format!("version = {}", quote(&p.version)),
                    format!(
                        "integrity = {}",
                        quote(p.integrity.as_ref().map_or("", |i| i.as_str()))
                    ),
                ];
                if p.optional {
                    fields.push("optional = true".to_owned());
                }
                for (field, map) in [
                    ("dependencies", &p.dependencies),
                    ("optional-dependencies", &p.optional_dependencies),
                    ("peer-dependencies", &p.peer_dependencies),
                ] {
                    if !map.is_empty() {
                        let items: Vec<String> = map
                            .iter()
                            .map(|(k, v)| format!("{} = {}", quote(k), quote(v)))
                            .collect();
                        fields.push(format!("{field} = {{ {} }}", items.join(", ")));
                    }
                }
                if let Some(files) = &p.files {
                    fields.push(format!("files = {}", quote(&files.to_string())));
                }
                let _ = writeln!(out, "    {{ {} }},", fields.join(", "));
            }
        }
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
                node_environment: None,
            },
        );
        lock.skill.insert("café".into(), plain_entry(&manifest));
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
                node_environment: None,
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

    fn python_environment() -> LockedEnvironment {
        use skilldeck::environment::LockedPackage;
        let packages = vec![LockedPackage {
            name: "six".into(),
            version: "1.17.0".into(),
            hashes: vec![Digest::from_bytes([1; 32]), Digest::from_bytes([2; 32])],
            ..LockedPackage::default()
        }];
        LockedEnvironment::resolved(
            EnvKind::Python,
            "/usr/bin/python3",
            "3.11.2",
            Digest::from_bytes([6; 32]),
            packages,
        )
    }

    fn node_environment() -> LockedEnvironment {
        use skilldeck::environment::{Integrity, LockedPackage};
        let integrity = |b: u8| {
            let text = match b {
                1 => {
                    "sha512-Wu1VHeILBK8KAWJUAiSZQX94GmOE45Rg6/538fKwiloUu21KncEkYGPqob2oSZ5mUT73vLGrHQjKw3KMPwfDzg=="
                }
                _ => {
                    "sha512-CQpnWPrDwmP1+SMHXZhtLtJv90yiyVfluGsX5iNCVkrhQtU3TQHsUWPG9wkdk9Lgd5yNpAg9jQEo90CBaXgWMA=="
                }
            };
            Integrity::parse(text).unwrap()
        };
        let packages = vec![
            LockedPackage {
                path: Some("node_modules/is-number".into()),
                name: "is-number".into(),
                version: "6.0.0".into(),
                integrity: Some(integrity(1)),
                files: Some(Digest::from_bytes([3; 32])),
                ..LockedPackage::default()
            },
            LockedPackage {
                path: Some("node_modules/is-odd".into()),
                name: "is-odd".into(),
                version: "3.0.1".into(),
                integrity: Some(integrity(2)),
                dependencies: [("is-number".to_owned(), "^6.0.0".to_owned())].into(),
                files: Some(Digest::from_bytes([4; 32])),
                ..LockedPackage::default()
            },
        ];
        LockedEnvironment {
            tree: Some(Digest::from_bytes([8; 32])),
            ..LockedEnvironment::resolved(
                EnvKind::Node,
                "/usr/bin/node",
                "20.20.2",
                Digest::from_bytes([7; 32]),
                packages,
            )
        }
    }

    fn entry_with(envs: Vec<LockedEnvironment>) -> LockEntry {
        let manifest = SkillManifest::new(vec![FileDigest::of_bytes("SKILL.md", b"x", false)]);
        let mut entry = plain_entry(&manifest);
        entry.set_environments(envs);
        entry
    }

    /// An entry of source `x` with `manifest`'s files and nothing else.
    fn plain_entry(manifest: &SkillManifest) -> LockEntry {
        LockEntry {
            version: None,
            source: "x".into(),
            fingerprint: manifest.fingerprint(),
            commit: None,
            signer: None,
            files: manifest.files().to_vec(),
            environment: None,
            node_environment: None,
        }
    }

    #[test]
    fn a_skill_environment_round_trips_with_every_package_hash() {
        let mut lock = Lockfile::new("skills");
        lock.skill
            .insert("dates".into(), entry_with(vec![python_environment()]));
        let text = lock.to_toml();
        assert!(text.contains("[skill.dates.environment]"), "{text}");
        let back = Lockfile::parse(&text, Path::new("skilldeck.lock")).unwrap();
        assert_eq!(back, lock);
    }

    #[test]
    fn a_python_only_lock_of_the_previous_version_reads_and_writes_back_unchanged() {
        let env = python_environment();
        let z = "0".repeat(64);
        let old = format!(
            "# skilldeck.lock: written by `skilldeck install`; commit it, do not edit it.\n\
             format = 1\nroot = \"skills\"\n\n[skill.dates]\nsource = \"x\"\n\
             fingerprint = \"sha256:{z}\"\nfiles = [\n]\n\n[skill.dates.environment]\n\
             kind = \"python\"\nkey = \"{}\"\ninterpreter = \"/usr/bin/python3\"\n\
             python = \"3.11.2\"\ninput = \"{}\"\npackages = [\n    {{ name = \"six\", \
             version = \"1.17.0\", hashes = [\"sha256:{}\", \"sha256:{}\"] }},\n]\n",
            env.key,
            env.input,
            "01".repeat(32),
            "02".repeat(32)
        );
        let lock = Lockfile::parse(&old, Path::new("skilldeck.lock")).unwrap();
        let entry = &lock.skill["dates"];
        assert_eq!(entry.environment.as_ref(), Some(&env));
        assert_eq!(entry.node_environment, None);
        assert_eq!(lock.to_toml(), old);
    }

    #[test]
    fn a_skill_with_a_python_and_a_node_environment_round_trips_with_every_integrity() {
        let mut lock = Lockfile::new("skills");
        lock.skill.insert(
            "both".into(),
            entry_with(vec![node_environment(), python_environment()]),
        );
        let text = lock.to_toml();
        assert!(text.contains("[skill.both.environment]"), "{text}");
        assert!(text.contains("[skill.both.node-environment]"), "{text}");
        assert!(
            text.contains("dependencies = { \"is-number\" = \"^6.0.0\" }"),
            "{text}"
        );
        let back = Lockfile::parse(&text, Path::new("skilldeck.lock")).unwrap();
        assert_eq!(back, lock);
        assert_eq!(back.skill["both"].environments().len(), 2);
        // An edited pin no longer gives the recorded key: refused.
        let edited = text.replace("version = \"6.0.0\"", "version = \"6.0.1\"");
        let e = Lockfile::parse(&edited, Path::new("skilldeck.lock"))
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(e.contains("the record was edited"), "{e}");
        // A Node record in the Python slot is refused.
        let swapped = text
            .replace("[skill.both.environment]", "[skill.both.x]")
            .replace("[skill.both.node-environment]", "[skill.both.environment]")
            .replace("[skill.both.x]", "[skill.both.node-environment]");
        assert!(Lockfile::parse(&swapped, Path::new("skilldeck.lock")).is_err());
    }

    #[test]
    fn the_lockfile_sits_next_to_the_root() {
        assert_eq!(
            lock_path(Path::new(".agents/skills")),
            Path::new(".agents/skilldeck.lock")
        );
    }
}
