//! `install`: skills from packages or folders into a skills root, with an
//! atomic swap and a lockfile.
//!
//! Each skill is unpacked (or copied) into a staging folder inside the
//! root (same file system), validated, then swapped in with one rename
//! (`renameat2(RENAME_EXCHANGE)` on Linux), so the skill's folder is at
//! every moment either the old skill or the new one. A journal written
//! before the swap lets the next install finish an interrupted one:
//!
//! | killed after | the skill folder | the lock | next install |
//! |---|---|---|---|
//! | staging | old | old | removes the staging folder |
//! | journal | old | old | drops the journal |
//! | swap | new | old | records the journal's entry in the lock |
//! | lock | new | new | removes the old copy and the journal |
//!
//! Where the exchange is not available, the old folder is renamed aside
//! first (`.skilldeck-old-NAME`); a restart renames it back when the new
//! one is not in place, else removes it.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use skilldeck::environment::LockedEnvironment;
use skilldeck::{Code, Diagnostic, Digest, Severity, SkillManifest};

use crate::environment::{self, Built, EnvironmentOptions};
use crate::error::Error;
use crate::folder::{folder_files, folder_manifest, read_file};
use crate::lock::{LockEntry, Lockfile, lock_path};
use crate::path::check_entry_path;
use crate::signature::{
    SIGNATURE_SUFFIX, SignatureFile, SignaturePolicy, Verified, read_signature, signature_path,
};
use crate::unpack::{UnpackOptions, Unpacked, finish_staged, unpack};

/// Prefix of every file and folder install keeps in a root (skills never
/// start with `.`, so they never collide).
pub const LEFTOVER_PREFIX: &str = ".skilldeck-";

const STAGE_PREFIX: &str = ".skilldeck-stage-";
const OLD_PREFIX: &str = ".skilldeck-old-";
const PENDING_PREFIX: &str = ".skilldeck-pending-";
const REMOVED_PREFIX: &str = ".skilldeck-removed-";
const INSTALL_LOCK: &str = ".skilldeck-install.lock";

/// How to install.
#[derive(Debug, Clone, Default)]
pub struct InstallOptions {
    /// Replace a skill with local edits (or one not in the lock).
    pub force: bool,
    /// Install exactly what the lock says: every source must match its
    /// entry; with no source, every entry is installed from its `source`.
    /// The lock is not changed.
    pub frozen: bool,
    /// Limits and validation of each skill.
    pub unpack: UnpackOptions,
    /// The lockfile (default: [`lock_path`] of the root).
    pub lockfile: Option<PathBuf>,
    /// Signatures: which keys may sign, whether one is required, whether
    /// a skill's pinned signer may change.
    pub signatures: SignaturePolicy,
    /// Test hook: sleep this long after each step, so a test can kill the
    /// process at any of them. Never set in normal use.
    pub step_pause: Option<Duration>,
    /// Build each skill's environment (its declared dependencies) before
    /// it is swapped in, and record it in the lock. `None`: no environment
    /// is built; a skill's locked record is kept while its requirements
    /// are unchanged (its scripts need the environment built later).
    pub environments: Option<EnvironmentOptions>,
}

/// What happened to one skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// It was not there before.
    Added,
    /// An older copy was replaced.
    Replaced,
    /// The same files were already there.
    Unchanged,
}

/// One installed skill.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Installed {
    /// The skill's name.
    pub name: String,
    /// Its `metadata.version`.
    pub version: Option<String>,
    /// The source as the lock records it.
    pub source: String,
    /// The content fingerprint.
    pub fingerprint: Digest,
    /// For a git source: the commit installed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// What happened.
    pub action: Action,
    /// Where it is now.
    pub path: PathBuf,
    /// The signature that verified (`None`: not signed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signed: Option<Verified>,
    /// Its environments (Python, Node), when it declares dependencies and
    /// they were built.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub environments: Vec<InstalledEnvironment>,
}

/// An environment of an installed skill.
#[derive(Debug, Clone, serde::Serialize)]
pub struct InstalledEnvironment {
    /// Its kind.
    pub kind: skilldeck::environment::EnvKind,
    /// The content key.
    pub key: Digest,
    /// Its folder in the store.
    pub path: PathBuf,
    /// Built now, or shared with another skill (or an earlier install).
    pub built: Built,
    /// Where its packages came from, when worth saying: the set resolved
    /// at publish, or resolved anew because that set is for another
    /// interpreter version ([`environment::Origin::note`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// `name==version` (Python) or `name@version` (Node) of every package.
    pub packages: Vec<String>,
}

/// A source: a package file or a skill folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A tar.gz or zip.
    Package(PathBuf),
    /// A skill folder.
    Folder(PathBuf),
    /// A package fetched from elsewhere (a registry): installed from the
    /// local file `package`, recorded in the lock as `source` (for example
    /// `registry+https://host#ns/name@1.2.0`), and refused unless its
    /// content has exactly the content fingerprint `fingerprint`.
    Fetched {
        /// The downloaded tar.gz or zip.
        package: PathBuf,
        /// What the lock records as the skill's source.
        source: String,
        /// The content fingerprint the package must have (`sha256:...`).
        fingerprint: Digest,
        /// The package's signature as the registry supplied it (the bytes
        /// of a `PACKAGE.sig`), checked like one beside a package file.
        /// A fetched package's temporary file never has a signature looked
        /// up beside it: a shared temporary folder is not a channel to
        /// trust.
        signature: Option<Vec<u8>>,
        /// The resolution of its dependencies the registry stored when the
        /// version was published (empty: none): installed exactly, when
        /// this machine's interpreter is compatible
        /// ([`environment::prepare`]).
        published: Vec<LockedEnvironment>,
    },
    /// A skill folder written out of a fetched repository (a git commit),
    /// or found through another source (a marketplace entry): installed
    /// like a folder (the same rules and fingerprint), recorded in the
    /// lock as `source` with its `commit` when it has one, and refused
    /// unless its fingerprint is `fingerprint` when one is expected (a
    /// frozen install of the lock's entry).
    Checkout {
        /// The skill folder.
        folder: PathBuf,
        /// What the lock records as the skill's source
        /// (`git+https://host/repo#v1.0.0:skills/pdf`,
        /// `marketplace:../mkt#docs:pdf`).
        source: String,
        /// The commit the folder holds (`None`: not from a repository).
        commit: Option<String>,
        /// The content fingerprint it must have, when known.
        fingerprint: Option<Digest>,
    },
}

impl Source {
    /// A folder when `path` is one, else a package file.
    pub fn from_path(path: &Path) -> Source {
        if path.is_dir() {
            Source::Folder(path.to_path_buf())
        } else {
            Source::Package(path.to_path_buf())
        }
    }

    /// The resolution published with a fetched package (empty otherwise).
    pub fn published(&self) -> &[LockedEnvironment] {
        match self {
            Source::Fetched { published, .. } => published,
            _ => &[],
        }
    }

    /// The path.
    pub fn path(&self) -> &Path {
        match self {
            Source::Package(p) | Source::Folder(p) => p,
            Source::Fetched { package, .. } => package,
            Source::Checkout { folder, .. } => folder,
        }
    }

    /// The signature of this source, if it has one: `PACKAGE.sig` beside
    /// a package file, or the bytes a fetched package came with (named
    /// `SOURCE.sig` in errors); `None` for a folder. Returns the name to
    /// report it by with the bytes, and where a signature would be.
    pub fn signature(&self) -> Result<(Option<SignatureFile>, PathBuf), Error> {
        match self {
            Source::Package(p) => Ok((read_signature(p)?, signature_path(p))),
            Source::Folder(_) | Source::Checkout { .. } => Ok((
                None,
                PathBuf::from("(a folder carries no signature: pack and sign it)"),
            )),
            Source::Fetched {
                source, signature, ..
            } => {
                let name = PathBuf::from(format!("{source}{SIGNATURE_SUFFIX}"));
                Ok((signature.clone().map(|b| (name.clone(), b)), name))
            }
        }
    }

    /// The `source` string the lock records for it (`lockfile`: where the
    /// lock is): a path relative to the lockfile's folder, or a fetched
    /// package's own source string.
    pub fn lock_text(&self, lockfile: &Path) -> String {
        match self {
            Source::Fetched { source, .. } | Source::Checkout { source, .. } => source.clone(),
            other => lock_source(other.path(), lockfile),
        }
    }

    /// Unpacks or copies the source into `staging` (created) and validates
    /// it.
    pub fn stage(&self, staging: &Path, options: &UnpackOptions) -> Result<Unpacked, Error> {
        match self {
            Source::Package(p) => unpack(p, staging, options),
            Source::Folder(dir) => copy_folder(dir, staging, options),
            Source::Fetched {
                package,
                source,
                fingerprint,
                ..
            } => {
                let unpacked = unpack(package, staging, options)?;
                let found = unpacked.manifest.fingerprint();
                if &found != fingerprint {
                    return Err(Error::refused(
                        Diagnostic::new(
                            Code::LockMismatch,
                            Severity::Error,
                            format!(
                                "the package fetched from {source} has fingerprint {found}; \
                                 expected {fingerprint} (nothing was installed)"
                            ),
                        )
                        .in_file(package),
                    ));
                }
                Ok(unpacked)
            }
            Source::Checkout {
                folder,
                source,
                fingerprint,
                ..
            } => {
                let unpacked = copy_folder(folder, staging, options)?;
                let found = unpacked.manifest.fingerprint();
                if let Some(want) = fingerprint
                    && &found != want
                {
                    return Err(Error::refused(
                        Diagnostic::new(
                            Code::LockMismatch,
                            Severity::Error,
                            format!(
                                "the skill fetched from {source} has fingerprint {found}; \
                                 expected {want} (nothing was installed)"
                            ),
                        )
                        .in_file(folder),
                    ));
                }
                Ok(unpacked)
            }
        }
    }

    /// The commit a checkout holds (`None` for other sources).
    pub fn commit(&self) -> Option<&str> {
        match self {
            Source::Checkout { commit, .. } => commit.as_deref(),
            _ => None,
        }
    }
}

fn copy_folder(dir: &Path, staging: &Path, options: &UnpackOptions) -> Result<Unpacked, Error> {
    let files = folder_files(dir, &options.limits)?;
    fs::create_dir(staging).map_err(|e| Error::io(staging, e))?;
    let tree = staging.join(".tree");
    let mut digests = Vec::with_capacity(files.len());
    // Folders made so far: each file's parent is created once.
    let mut made = std::collections::HashSet::new();
    for file in &files {
        let bytes = read_file(file, &options.limits)?;
        let to = tree.join(&file.path);
        if let Some(parent) = to.parent()
            && !made.contains(parent)
        {
            fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
            made.insert(parent.to_path_buf());
        }
        write_new(&to, &bytes, file.executable).map_err(|e| Error::io(&to, e))?;
        digests.push(skilldeck::FileDigest::of_bytes(
            file.path.clone(),
            &bytes,
            file.executable,
        ));
    }
    if files.is_empty() {
        fs::create_dir(&tree).map_err(|e| Error::io(&tree, e))?;
    }
    finish_staged(dir, staging, &tree, digests, &options.validation).map(|(unpacked, _)| unpacked)
}

fn write_new(path: &Path, bytes: &[u8], executable: bool) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(if executable { 0o755 } else { 0o644 });
    }
    #[cfg(not(unix))]
    let _ = executable;
    options.open(path)?.write_all(bytes)
}

/// The `source` string a lock records: relative to the lockfile's folder
/// (`../dist/x.tar.gz`), computed lexically from absolute paths.
pub fn lock_source(path: &Path, lockfile: &Path) -> String {
    let abs = lexical(path);
    let base = lexical(lockfile.parent().unwrap_or(Path::new(".")));
    let a: Vec<_> = abs.components().collect();
    let b: Vec<_> = base.components().collect();
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    if common == 0 {
        return abs.to_string_lossy().into_owned();
    }
    let mut rel = PathBuf::new();
    for _ in common..b.len() {
        rel.push("..");
    }
    for c in &a[common..] {
        rel.push(c.as_os_str());
    }
    rel.to_string_lossy().into_owned()
}

/// `path` made absolute, with `.` and `..` removed lexically.
pub(crate) fn lexical(path: &Path) -> PathBuf {
    use std::path::Component;
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = PathBuf::new();
    for c in abs.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// True when a lock's `source` is not a path but a fetched package's
/// source (`scheme+URL...`, e.g. `registry+https://host#ns/name@1.0.0`,
/// or an OCI artifact, `oci://host/repo@sha256:...`).
pub fn is_fetched(source: &str) -> bool {
    source.split_once("://").is_some_and(|(scheme, _)| {
        (scheme.contains('+') || scheme == "oci") && !scheme.contains(['/', '\\'])
    })
}

/// The path a lock's `source` names (relative ones against the lockfile's
/// folder).
pub fn resolve_source(source: &str, lockfile: &Path) -> PathBuf {
    let p = Path::new(source);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        lockfile.parent().unwrap_or(Path::new(".")).join(p)
    }
}

/// Holds the root's install lock (an exclusive file lock) while alive.
struct RootLock {
    _file: fs::File,
}

fn lock_root(root: &Path) -> Result<RootLock, Error> {
    Ok(RootLock {
        _file: crate::file_lock::exclusive(&root.join(INSTALL_LOCK))?,
    })
}

/// Installs `sources` into the skills root `root` (created if missing).
/// Every source is staged and checked before any skill is swapped in; a
/// refusal leaves the root as it was.
pub fn install(
    root: &Path,
    sources: &[Source],
    options: &InstallOptions,
) -> Result<Vec<Installed>, Error> {
    fs::create_dir_all(root).map_err(|e| Error::io(root, e))?;
    let lockfile = options.lockfile.clone().unwrap_or_else(|| lock_path(root));
    let _guard = lock_root(root)?;
    recover_locked(root, &lockfile, options)?;
    let root_name = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut lock = Lockfile::load(&lockfile)?.unwrap_or_else(|| Lockfile::new(root_name));
    let sources: Vec<(Source, String)> = if options.frozen && sources.is_empty() {
        if let Some((name, e)) = lock.skill.iter().find(|(_, e)| is_fetched(&e.source)) {
            return Err(mismatch(
                &lockfile,
                &format!(
                    "skill '{name}' was fetched from {}: give every source (the fetched \
                     package included) to a frozen install",
                    e.source
                ),
            ));
        }
        lock.skill
            .values()
            .map(|e| {
                (
                    Source::from_path(&resolve_source(&e.source, &lockfile)),
                    e.source.clone(),
                )
            })
            .collect()
    } else {
        sources
            .iter()
            .map(|s| (s.clone(), s.lock_text(&lockfile)))
            .collect()
    };
    if options.frozen && lock.skill.is_empty() {
        return Err(mismatch(
            &lockfile,
            "--frozen needs a lockfile with entries",
        ));
    }
    let result = stage_and_commit(root, &lockfile, &mut lock, &sources, options);
    // Staging folders that were not swapped in (a refusal) go now.
    remove_stages(root);
    result
}

fn mismatch(lockfile: &Path, message: &str) -> Error {
    Error::refused(Diagnostic::new(Code::LockMismatch, Severity::Error, message).in_file(lockfile))
}

struct Staged {
    unpacked: Unpacked,
    source: String,
    commit: Option<String>,
    existing: Option<SkillManifest>,
    signed: Option<Verified>,
    environments: Vec<LockedEnvironment>,
    built: Vec<InstalledEnvironment>,
}

fn stage_and_commit(
    root: &Path,
    lockfile: &Path,
    lock: &mut Lockfile,
    sources: &[(Source, String)],
    options: &InstallOptions,
) -> Result<Vec<Installed>, Error> {
    let mut staged: Vec<Staged> = Vec::new();
    for (i, (source, source_text)) in sources.iter().enumerate() {
        let staging = root.join(format!("{STAGE_PREFIX}{}-{i}", std::process::id()));
        let unpacked = source.stage(&staging, &options.unpack)?;
        pause(options);
        if staged.iter().any(|s| s.unpacked.name == unpacked.name) {
            return Err(Error::refused(
                Diagnostic::new(
                    Code::PackageDuplicate,
                    Severity::Error,
                    format!("skill '{}' is given twice", unpacked.name),
                )
                .in_file(source.path()),
            ));
        }
        let entry = lock.skill.get(&unpacked.name);
        // The signature (a bad one is always refused), then the pin.
        let (found, expected) = source.signature()?;
        let signed = options.signatures.check(
            found.as_ref().map(|(p, b)| (p.as_path(), b.as_slice())),
            source.path(),
            &expected,
            &unpacked.manifest.fingerprint(),
        )?;
        options.signatures.check_pin(
            &unpacked.name,
            source.path(),
            lockfile,
            entry.and_then(|e| e.signer.as_ref()),
            signed.as_ref().map(|v| &v.signer),
        )?;
        if options.frozen {
            match entry {
                Some(e) if e.matches(&unpacked.manifest) => {}
                Some(e) => {
                    return Err(mismatch(
                        lockfile,
                        &format!(
                            "skill '{}' from {} has fingerprint {}; the lock says {}",
                            unpacked.name,
                            source.path().display(),
                            unpacked.manifest.fingerprint(),
                            e.fingerprint
                        ),
                    ));
                }
                None => {
                    return Err(mismatch(
                        lockfile,
                        &format!("skill '{}' is not in the lock", unpacked.name),
                    ));
                }
            }
        }
        let dest = root.join(&unpacked.name);
        let existing = if fs::symlink_metadata(&dest).is_ok() {
            let found = folder_manifest(&dest, &options.unpack.limits).ok();
            let same = found.as_ref() == Some(&unpacked.manifest);
            let clean = match (&found, entry) {
                (Some(m), Some(e)) => e.matches(m),
                _ => false,
            };
            if !same && !clean && !options.force {
                let why = if entry.is_none() {
                    "is not in the lock (not installed by skilldeck)"
                } else {
                    "has local edits (it does not match its lock entry)"
                };
                return Err(Error::refused(
                    Diagnostic::new(
                        Code::InstallLocalEdits,
                        Severity::Error,
                        format!("skill '{}' at {} {why}", unpacked.name, dest.display()),
                    )
                    .in_file(&dest)
                    .with_help(
                        "run `skilldeck verify` to see the changes; pass --force to replace it",
                    ),
                ));
            }
            Some(found.unwrap_or_default())
        } else {
            None
        };
        let previous: Vec<&LockedEnvironment> =
            entry.map(LockEntry::environments).unwrap_or_default();
        let (environments, built) = match &options.environments {
            Some(env_options) => environment::prepare(
                &unpacked.name,
                &unpacked.dir,
                &previous,
                source.published(),
                options.frozen,
                env_options,
                lockfile,
            )?
            .into_iter()
            .map(|prepared| {
                let locked = prepared.locked;
                let info = InstalledEnvironment {
                    kind: locked.kind,
                    key: locked.key,
                    path: env_options.store.path_of(&locked.key),
                    built: prepared.built,
                    note: prepared.origin.note(locked.kind),
                    packages: locked.package_names(),
                };
                (locked, info)
            })
            .unzip(),
            None => (kept_environments(&unpacked.dir, &previous), Vec::new()),
        };
        staged.push(Staged {
            unpacked,
            source: source_text.clone(),
            commit: source.commit().map(str::to_owned),
            existing,
            signed,
            environments,
            built,
        });
    }
    // The lock is known to the store before it records environments, so a
    // collection never removes one of them.
    if let Some(env_options) = &options.environments
        && staged.iter().any(|s| !s.environments.is_empty())
    {
        environment::register_lock(&env_options.store, lockfile)?;
    }
    // Swap every skill in (each behind its journal), then write the lock
    // once, then clean up: a crash anywhere is finished by the journals.
    let mut done = Vec::new();
    let mut cleanup = Vec::new();
    let mut lock_changed = false;
    for s in staged {
        let (installed, entry, leftovers) = commit(root, lock, s, options)?;
        if let Some(entry) = entry {
            lock.skill.insert(installed.name.clone(), entry);
            lock_changed = true;
        }
        cleanup.extend(leftovers);
        done.push(installed);
    }
    if lock_changed && !options.frozen {
        lock.save(lockfile)?;
    }
    pause(options);
    for path in cleanup {
        if path.is_dir() {
            let _ = fs::remove_dir_all(&path);
        } else {
            let _ = fs::remove_file(&path);
        }
    }
    Ok(done)
}

/// Without building: the locked environments whose kind the skill still
/// declares exactly the requirements of that it was resolved from.
fn kept_environments(dir: &Path, previous: &[&LockedEnvironment]) -> Vec<LockedEnvironment> {
    if previous.is_empty() {
        return Vec::new();
    }
    let Ok(declared) = skilldeck::environment::declared_dependencies(dir) else {
        return Vec::new();
    };
    previous
        .iter()
        .filter(|p| {
            declared
                .iter()
                .any(|d| d.kind == p.kind && d.input_digest() == p.input)
        })
        .map(|p| (*p).clone())
        .collect()
}

fn pause(options: &InstallOptions) {
    if let Some(d) = options.step_pause {
        std::thread::sleep(d);
    }
}

/// Swaps one staged skill in. Returns what happened, the lock entry to
/// record (when it changes) and what to remove once the lock is written.
fn commit(
    root: &Path,
    lock: &Lockfile,
    staged: Staged,
    options: &InstallOptions,
) -> Result<(Installed, Option<LockEntry>, Vec<PathBuf>), Error> {
    let Staged {
        unpacked,
        source,
        commit,
        existing,
        signed,
        environments,
        built,
    } = staged;
    let name = unpacked.name.clone();
    let dest = root.join(&name);
    let mut entry = LockEntry {
        version: unpacked.version.clone(),
        source: source.clone(),
        fingerprint: unpacked.manifest.fingerprint(),
        commit,
        signer: signed.as_ref().map(|v| v.signer.clone()),
        files: unpacked.manifest.files().to_vec(),
        environment: None,
        node_environment: None,
    };
    entry.set_environments(environments);
    let installed = |action| Installed {
        name: name.clone(),
        version: entry.version.clone(),
        source: source.clone(),
        fingerprint: entry.fingerprint,
        commit: entry.commit.clone(),
        action,
        path: dest.clone(),
        signed: signed.clone(),
        environments: built.clone(),
    };
    let changed = (lock.skill.get(&name) != Some(&entry)).then(|| entry.clone());
    let staging: Vec<PathBuf> = unpacked
        .dir
        .parent()
        .map(Path::to_path_buf)
        .into_iter()
        .collect();
    if existing.as_ref() == Some(&unpacked.manifest) {
        return Ok((installed(Action::Unchanged), changed, staging));
    }
    // 1. The journal: what the lock will say once the swap is done.
    let journal = root.join(format!("{PENDING_PREFIX}{name}.toml"));
    let mut pending = Lockfile::new(lock.root.clone());
    pending.skill.insert(name.clone(), entry.clone());
    pending.save_unsynced(&journal)?;
    pause(options);
    // 2. The swap.
    let action = if existing.is_some() {
        swap(&unpacked.dir, &dest, root, &name)?;
        Action::Replaced
    } else {
        fs::rename(&unpacked.dir, &dest).map_err(|e| Error::io(&dest, e))?;
        Action::Added
    };
    pause(options);
    // 3. After the lock is written: the old copy (now in the staging
    // folder, or set aside) and the journal.
    let mut leftovers = staging;
    leftovers.push(root.join(format!("{OLD_PREFIX}{name}")));
    leftovers.push(journal);
    Ok((installed(action), changed, leftovers))
}

/// Puts `new` at `dest`, where a folder is: one atomic exchange where the
/// system has it (the old folder ends at `new`), else aside-then-in.
fn swap(new: &Path, dest: &Path, root: &Path, name: &str) -> Result<(), Error> {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{CWD, RenameFlags, renameat_with};
        match renameat_with(CWD, new, CWD, dest, RenameFlags::EXCHANGE) {
            Ok(()) => return Ok(()),
            Err(e) if e == rustix::io::Errno::INVAL || e == rustix::io::Errno::NOSYS => {}
            Err(e) => return Err(Error::io(dest, e.into())),
        }
    }
    let aside = root.join(format!("{OLD_PREFIX}{name}"));
    fs::rename(dest, &aside).map_err(|e| Error::io(dest, e))?;
    fs::rename(new, dest).map_err(|e| Error::io(dest, e))?;
    Ok(())
}

fn remove_stages(root: &Path) {
    let Ok(entries) = fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with(STAGE_PREFIX) {
            let _ = fs::remove_dir_all(entry.path());
        } else if name
            .strip_prefix('.')
            .is_some_and(|n| n.starts_with(PENDING_PREFIX) && n.contains(".tmp-"))
        {
            // A journal killed before its rename (`write_atomic`'s
            // temporary file): the swap had not started.
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Finishes or rolls back installs a crash interrupted in `root`: an old
/// folder set aside is put back (or removed when the new one is in place),
/// a journal whose skill is in place is recorded in the lock, staging
/// folders are removed. Returns the skills whose lock entry was completed.
pub fn recover(root: &Path, options: &InstallOptions) -> Result<Vec<String>, Error> {
    if !root.is_dir() {
        return Ok(Vec::new());
    }
    let lockfile = options.lockfile.clone().unwrap_or_else(|| lock_path(root));
    let _guard = lock_root(root)?;
    recover_locked(root, &lockfile, options)
}

fn recover_locked(
    root: &Path,
    lockfile: &Path,
    options: &InstallOptions,
) -> Result<Vec<String>, Error> {
    let mut names: Vec<(String, PathBuf)> = fs::read_dir(root)
        .map_err(|e| Error::io(root, e))?
        .flatten()
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .filter(|(n, _)| n.starts_with(LEFTOVER_PREFIX))
        .collect();
    names.sort();
    let mut completed = Vec::new();
    for (file, path) in &names {
        if let Some(name) = file.strip_prefix(OLD_PREFIX) {
            let dest = root.join(name);
            if fs::symlink_metadata(&dest).is_ok() {
                let _ = fs::remove_dir_all(path);
            } else {
                fs::rename(path, &dest).map_err(|e| Error::io(&dest, e))?;
            }
        }
    }
    for (file, path) in &names {
        // A removal interrupted after its folder was set aside: finish it
        // (the lock entry goes, then the folder).
        if let Some(name) = file.strip_prefix(REMOVED_PREFIX) {
            if fs::symlink_metadata(root.join(name)).is_err() && !options.frozen {
                let mut lock = Lockfile::load(lockfile)?;
                if let Some(lock) = lock.as_mut()
                    && lock.skill.remove(name).is_some()
                {
                    lock.save(lockfile)?;
                    completed.push(name.to_owned());
                }
            }
            remove_path(path);
        }
    }
    for (file, path) in &names {
        let Some(name) = file
            .strip_prefix(PENDING_PREFIX)
            .and_then(|n| n.strip_suffix(".toml"))
        else {
            continue;
        };
        if let Ok(pending) = Lockfile::parse(&fs::read_to_string(path).unwrap_or_default(), path)
            && let Some(entry) = pending.skill.get(name)
            && let Ok(found) = folder_manifest(&root.join(name), &options.unpack.limits)
            && entry.matches(&found)
            && !options.frozen
        {
            let root_name = pending.root.clone();
            let mut lock = Lockfile::load(lockfile)?.unwrap_or_else(|| Lockfile::new(root_name));
            if lock.skill.get(name) != Some(entry) {
                lock.skill.insert(name.to_owned(), entry.clone());
                lock.save(lockfile)?;
                completed.push(name.to_owned());
            }
        }
        let _ = fs::remove_file(path);
    }
    remove_stages(root);
    Ok(completed)
}

fn remove_path(path: &Path) {
    if fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
        let _ = fs::remove_dir_all(path);
    } else {
        let _ = fs::remove_file(path);
    }
}

/// A skill removed by [`remove`].
#[derive(Debug, Clone, serde::Serialize)]
pub struct Removed {
    /// The skill's name.
    pub name: String,
    /// Where its folder was (`None`: there was none, only a lock entry).
    pub path: Option<PathBuf>,
    /// Its lock entry, now gone (`None`: it was not in the lock).
    pub entry: Option<LockEntry>,
}

/// Removes skill `name` from `root` and from the lock together: the
/// folder is first renamed aside (one rename: the skill is gone for every
/// reader at once), then the lock is written without it, then the folder
/// is deleted. A crash between the steps is finished by the next install,
/// remove or recover (the set-aside folder is the journal), so the root
/// and the lock never disagree for long and nothing is half-removed. A
/// folder with local edits, or one not installed by skilldeck, is refused
/// unless `options.force`.
pub fn remove(root: &Path, name: &str, options: &InstallOptions) -> Result<Removed, Error> {
    let lockfile = options.lockfile.clone().unwrap_or_else(|| lock_path(root));
    let refuse = |message: String, help: &str| {
        Error::refused(
            Diagnostic::new(Code::InstallLocalEdits, Severity::Error, message)
                .in_file(root.join(name))
                .with_help(help.to_owned()),
        )
    };
    if name.is_empty()
        || name.starts_with('.')
        || check_entry_path(name.as_bytes()).is_err()
        || name.contains('/')
    {
        return Err(refuse(
            format!("'{name}' is not a skill name"),
            "give the skill's name as `skilldeck list` or the lock shows it",
        ));
    }
    if !root.is_dir() {
        return Err(refuse(
            format!(
                "skill '{name}' is not installed: {} does not exist",
                root.display()
            ),
            "pass the skills root with --dir",
        ));
    }
    let _guard = lock_root(root)?;
    recover_locked(root, &lockfile, options)?;
    let mut lock = Lockfile::load(&lockfile)?;
    let entry = lock.as_ref().and_then(|l| l.skill.get(name)).cloned();
    let dest = root.join(name);
    let present = fs::symlink_metadata(&dest).is_ok();
    if !present && entry.is_none() {
        return Err(refuse(
            format!(
                "skill '{name}' is not installed in {} and not in the lock",
                root.display()
            ),
            "`skilldeck list` shows the installed skills",
        ));
    }
    if present && !options.force {
        let found = folder_manifest(&dest, &options.unpack.limits).ok();
        match (&entry, &found) {
            (Some(e), Some(m)) if e.matches(m) => {}
            (Some(_), _) => {
                return Err(refuse(
                    format!(
                        "skill '{name}' at {} has local edits (it does not match its lock entry)",
                        dest.display()
                    ),
                    "run `skilldeck verify` to see the changes; pass --force to remove it anyway",
                ));
            }
            (None, _) => {
                return Err(refuse(
                    format!(
                        "skill '{name}' at {} is not in the lock (not installed by skilldeck)",
                        dest.display()
                    ),
                    "pass --force to remove it anyway",
                ));
            }
        }
    }
    let aside = root.join(format!("{REMOVED_PREFIX}{name}"));
    if present {
        fs::rename(&dest, &aside).map_err(|e| Error::io(&dest, e))?;
        pause(options);
    }
    if let Some(lock) = lock.as_mut()
        && lock.skill.remove(name).is_some()
    {
        lock.save(&lockfile)?;
    }
    pause(options);
    if present {
        remove_path(&aside);
    }
    Ok(Removed {
        name: name.to_owned(),
        path: present.then_some(dest),
        entry,
    })
}
