//! [`Staging`]: where a publish unpacks and re-packs its body, a folder
//! the registry owns (`RegistryConfig::staging_dir`), never the system's
//! temporary folder.
//!
//! Each registry process works in its own subfolder, `<root>/p<pid>-<random>/`,
//! and holds an exclusive lock (`flock`) on the `.owner` file inside it for
//! as long as it lives. The kernel drops that lock when the process dies,
//! however it dies, so at start-up a registry removes every subfolder whose
//! lock it can take (its owner is gone: a killed publish left it) and every
//! subfolder without an `.owner` file (its owner died while creating it),
//! and leaves alone the subfolders of live replicas that share the folder.
//! The sweep and the creation of a subfolder both hold `<root>/.sweep.lock`,
//! so a sweep never sees a subfolder half made. A process that stops
//! normally removes its own subfolder.
//!
//! *Rejected:* sweeping entries older than a grace period (a killed
//! publish's hundreds of MiB stay for that long, and a long publish on a
//! live replica could be swept); one folder per process id (ids are reused,
//! and a pid says nothing on another host sharing a network folder).

use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::error::RegistryError;

/// The file every process subfolder holds, locked by its owner.
pub const OWNER_FILE: &str = ".owner";
/// The lock held while sweeping or creating a subfolder.
pub const SWEEP_LOCK: &str = ".sweep.lock";

/// This process's staging subfolder (removed when dropped).
#[derive(Debug)]
pub struct Staging {
    dir: PathBuf,
    /// Locked for this process's lifetime; closed (unlocking it) after the
    /// folder is removed.
    _owner: File,
}

/// What a start-up sweep removed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SweepReport {
    /// Subfolders left by processes that are gone.
    pub removed: usize,
    /// Subfolders that could not be removed (logged).
    pub failed: usize,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> RegistryError + '_ {
    move |e| RegistryError::io(path, e)
}

fn private_dir(path: &Path) -> Result<(), RegistryError> {
    std::fs::create_dir_all(path).map_err(io(path))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700)).map_err(io(path))?;
    }
    Ok(())
}

/// True when nobody holds `dir`'s owner lock (or it has none): its owner
/// is gone. On `Ok(true)` the returned file (if any) holds the lock.
fn abandoned(dir: &Path) -> (bool, Option<File>) {
    let owner = dir.join(OWNER_FILE);
    match File::open(&owner) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (true, None),
        Err(_) => (false, None),
        Ok(f) => match f.try_lock() {
            Ok(()) => (true, Some(f)),
            Err(_) => (false, None),
        },
    }
}

impl Staging {
    /// Sweeps `root` of what dead processes left, then makes this
    /// process's subfolder and locks it. Blocking (file locks): call it
    /// from a blocking thread.
    pub fn open(root: &Path) -> Result<(Staging, SweepReport), RegistryError> {
        private_dir(root)?;
        let lock_path = root.join(SWEEP_LOCK);
        let sweep_lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(io(&lock_path))?;
        sweep_lock.lock().map_err(io(&lock_path))?;
        let report = sweep(root)?;
        let dir = tempfile::Builder::new()
            .prefix(&format!("p{}-", std::process::id()))
            .rand_bytes(8)
            .tempdir_in(root)
            .map_err(io(root))?
            .keep();
        let owner_path = dir.join(OWNER_FILE);
        let mut owner = OpenOptions::new()
            .create_new(true)
            .write(true)
            .open(&owner_path)
            .map_err(io(&owner_path))?;
        owner
            .try_lock()
            .map_err(|e| RegistryError::io(&owner_path, std::io::Error::other(e.to_string())))?;
        writeln!(owner, "{}", std::process::id()).map_err(io(&owner_path))?;
        drop(sweep_lock);
        Ok((Staging { dir, _owner: owner }, report))
    }

    /// This process's subfolder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir_all(&self.dir) {
            tracing::warn!(path = %self.dir.display(), error = %e, "cannot remove the publish staging folder; the next start removes it");
        }
    }
}

/// Removes every subfolder of `root` whose owner is gone (the caller holds
/// the sweep lock).
fn sweep(root: &Path) -> Result<SweepReport, RegistryError> {
    let mut report = SweepReport::default();
    for entry in std::fs::read_dir(root).map_err(io(root))? {
        let entry = entry.map_err(io(root))?;
        let path = entry.path();
        if entry.file_name() == SWEEP_LOCK {
            continue;
        }
        let is_dir = entry.file_type().map(|t| t.is_dir()).unwrap_or(false);
        let removed = if is_dir {
            let (gone, _held) = abandoned(&path);
            if !gone {
                continue;
            }
            std::fs::remove_dir_all(&path)
        } else {
            std::fs::remove_file(&path)
        };
        match removed {
            Ok(()) => report.removed += 1,
            Err(e) => {
                report.failed += 1;
                tracing::warn!(path = %path.display(), error = %e, "cannot remove a staging folder a stopped registry left");
            }
        }
    }
    Ok(report)
}
