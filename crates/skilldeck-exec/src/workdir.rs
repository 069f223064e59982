//! The work root and each run's work directory: where they live, who may
//! own them, the size-capped tmpfs that holds a run's files, and a cleanup
//! that no tree can defeat.
//!
//! - **Work root**: private per user. A root caller uses
//!   `/var/lib/skilldeck-exec` (only root can create there); any other caller
//!   `$XDG_RUNTIME_DIR/skilldeck-exec` when that is set (a per-user folder
//!   nobody else can write), else `<temp dir>/skilldeck-exec-<uid>`. The
//!   folder is created with mode 0700 (0711 for root, whose runs drop to
//!   the sandbox user and must traverse it) and then checked: a folder (not
//!   a symlink), owned by this user, not writable by group or others. A
//!   folder another user created first fails the check and every run is
//!   refused naming the path and what to do, instead of running in a
//!   folder someone else controls.
//! - **Run folder** `<root>/run-<pid>-<n>/`: `data/` (the tmpfs mount point,
//!   holding `work/`, the cwd and `HOME`, and `tmp/`, `TMPDIR`) and
//!   `skill/` (the mount point of the skill folder).
//! - **Quota**: profiles `native` and `bwrap` mount a tmpfs of
//!   `workdir_bytes` (and [`WORKDIR_INODES`] inodes) on `data/` inside the
//!   sandbox's mount namespace, so writing past it fails with `ENOSPC` in
//!   the script and the host's disk never sees the files; the tmpfs goes
//!   with the namespace. Profile `none` has no mount namespace: its work
//!   dir is a host folder (no quota; `RLIMIT_FSIZE` per file only).
//! - **Cleanup**: [`remove_tree`] holds at most two descriptors and short
//!   paths whatever the depth: it empties a folder by moving every
//!   non-empty subfolder up to the run folder's top level, so a tree of any
//!   depth becomes flat and is removed with `unlinkat`.

use std::ffi::{CStr, CString, OsStr};
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, CWD, Dir, FileType, Mode, OFlags, RenameFlags};
use rustix::io::Errno;

use crate::error::ExecError;
use crate::policy::SANDBOX_UID;
use crate::sys;

static RUN_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Where a root caller's work root goes: a system folder only root can
/// write.
const ROOT_STATE_DIR: &str = "/var/lib";

/// The default work root for a caller with effective uid `euid`, given
/// `$XDG_RUNTIME_DIR` and the system temp folder.
pub(crate) fn default_work_root(
    euid: u32,
    xdg_runtime_dir: Option<&OsStr>,
    temp: &Path,
) -> PathBuf {
    if euid == 0 {
        // Only root may create here, and it is disk, not RAM (a profile
        // `none` run writes its files there without a quota).
        let state = Path::new(ROOT_STATE_DIR);
        if state.is_dir() {
            return state.join("skilldeck-exec");
        }
    } else if let Some(xdg) = xdg_runtime_dir.map(Path::new)
        && xdg.is_absolute()
    {
        return xdg.join("skilldeck-exec");
    }
    temp.join(format!("skilldeck-exec-{euid}"))
}

/// The mode of the work root: the sandbox user must traverse it when root
/// drops to it.
fn root_mode(euid: u32) -> u32 {
    if euid == 0 { 0o711 } else { 0o700 }
}

/// Creates `path` (mode 0700, 0711 for root) when missing and checks it is
/// this user's private folder; refuses otherwise.
pub(crate) fn ensure_private_root(path: &Path) -> Result<(), ExecError> {
    let euid = sys::euid();
    let refuse = |problem: String| ExecError::WorkRoot {
        path: path.to_path_buf(),
        problem,
        remedy: format!(
            "it must be a folder owned by uid {euid}, not a symlink, not writable by group or others; remove it if you did not create it, or set XDG_RUNTIME_DIR to a private folder"
        ),
    };
    if let Some(parent) = path.parent()
        && !parent.as_os_str().is_empty()
        && !parent.exists()
    {
        std::fs::create_dir_all(parent)
            .map_err(|e| refuse(format!("cannot create its parent: {e}")))?;
    }
    match std::fs::DirBuilder::new()
        .mode(root_mode(euid))
        .create(path)
    {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(refuse(format!("cannot create it: {e}"))),
    }
    let meta =
        std::fs::symlink_metadata(path).map_err(|e| refuse(format!("cannot inspect it: {e}")))?;
    if meta.file_type().is_symlink() {
        return Err(refuse("it is a symlink".to_owned()));
    }
    if !meta.is_dir() {
        return Err(refuse("it is not a folder".to_owned()));
    }
    if meta.uid() != euid {
        return Err(refuse(format!(
            "it is owned by uid {}, not by this user",
            meta.uid()
        )));
    }
    let mode = meta.mode() & 0o7777;
    if mode & 0o022 != 0 {
        return Err(refuse(format!(
            "its mode {mode:04o} lets group or others write into it"
        )));
    }
    if mode != root_mode(euid) {
        // Ours and not writable by others: bring it to the mode we use.
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(root_mode(euid)))
            .map_err(|e| refuse(format!("cannot set its mode: {e}")))?;
    }
    Ok(())
}

/// `<root>/run-…/{data/{work,tmp},skill}`, and `node_modules` when the run
/// has a Node environment.
#[derive(Debug)]
pub(crate) struct WorkDir {
    /// The run folder.
    pub root: PathBuf,
    /// The tmpfs mount point holding `work` and `tmp`.
    pub data: PathBuf,
    /// cwd and `HOME`.
    pub work: PathBuf,
    /// `TMPDIR`.
    pub tmp: PathBuf,
    /// Mount point of the skill folder.
    pub skill: PathBuf,
    /// `<root>/node_modules`: a symlink to the run's Node environment's
    /// `node_modules`, when it has one (bwrap, which shows its own tree,
    /// makes the same link inside).
    pub node_modules: Option<(PathBuf, PathBuf)>,
}

impl WorkDir {
    /// A fresh run folder under the (checked) work root `base`; `work` and
    /// `tmp` belong to the sandbox user when `chown_to_sandbox`.
    pub(crate) fn create(
        base: &Path,
        chown_to_sandbox: bool,
        node_modules: Option<&Path>,
    ) -> Result<WorkDir, ExecError> {
        let wd = |path: &Path| {
            let path = path.to_path_buf();
            move |source| ExecError::WorkDir { path, source }
        };
        ensure_private_root(base)?;
        let root = loop {
            let n = RUN_COUNTER.fetch_add(1, Ordering::Relaxed);
            let candidate = base.join(format!("run-{}-{n}", std::process::id()));
            match std::fs::create_dir(&candidate) {
                Ok(()) => break candidate,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(wd(&candidate)(e)),
            }
        };
        let data = root.join("data");
        let dir = WorkDir {
            work: data.join("work"),
            tmp: data.join("tmp"),
            skill: root.join("skill"),
            node_modules: node_modules
                .map(|target| (root.join("node_modules"), target.to_path_buf())),
            data,
            root,
        };
        let setup = || -> io::Result<()> {
            std::fs::set_permissions(&dir.root, std::fs::Permissions::from_mode(0o711))?;
            for d in [&dir.data, &dir.work, &dir.tmp] {
                std::fs::create_dir(d)?;
                std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o700))?;
                if chown_to_sandbox {
                    std::os::unix::fs::chown(d, Some(SANDBOX_UID), Some(SANDBOX_UID))?;
                }
            }
            std::fs::create_dir(&dir.skill)?;
            if let Some((link, target)) = &dir.node_modules {
                std::os::unix::fs::symlink(target, link)?;
            }
            Ok(())
        };
        if let Err(e) = setup() {
            dir.remove();
            return Err(wd(&dir.root)(e));
        }
        Ok(dir)
    }

    /// Removes the run folder, whatever the script left in it (see
    /// [`remove_tree`]); a failure is logged and leaves the folder.
    pub(crate) fn remove(&self) {
        if let Err(e) = remove_tree(&self.root) {
            tracing::warn!(
                target: "skilldeck::exec",
                "cannot remove the work directory {}: {e}",
                self.root.display()
            );
        }
    }
}

// ---------------------------------------------------------------------
// Cleanup that survives any tree.
// ---------------------------------------------------------------------

fn c_name(name: &[u8]) -> io::Result<CString> {
    CString::new(name).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in a name"))
}

/// Opens folder `name` under `dir` without following a symlink.
fn open_dir_at(dir: impl AsFd, name: &CStr) -> io::Result<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    Ok(rustix::fs::openat(dir, name, flags, Mode::empty())?)
}

/// The entries of the open folder `dir` (names, and whether each is a
/// folder, not following symlinks).
fn entries(dir: &OwnedFd) -> io::Result<Vec<(CString, bool)>> {
    // A duplicate for the stream, closed with it.
    let mut stream = Dir::new(rustix::io::fcntl_dupfd_cloexec(dir, 0)?)?;
    stream.rewind();
    let mut out = Vec::new();
    for entry in stream {
        let entry = entry?;
        let name = entry.file_name();
        let bytes = name.to_bytes();
        if bytes == b"." || bytes == b".." {
            continue;
        }
        let is_dir = match entry.file_type() {
            FileType::Directory => true,
            FileType::Unknown => rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
                .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Directory),
            _ => false,
        };
        out.push((name.to_owned(), is_dir));
    }
    Ok(out)
}

fn unlink_at(dir: impl AsFd, name: &CStr, flags: AtFlags) -> io::Result<()> {
    Ok(rustix::fs::unlinkat(dir, name, flags)?)
}

/// Makes folder `name` under `dir` readable, writable and searchable by
/// its owner (a script may leave a folder at mode 0). No symlink is
/// followed (the name was listed as a folder and the caller's folders hold
/// no one else's entries); a failure shows in the removal that follows.
fn open_up(dir: impl AsFd, name: &CStr) {
    let _ = rustix::fs::chmodat(dir, name, Mode::from_raw_mode(0o700), AtFlags::empty());
}

/// Removes `path` and everything in it with at most two descriptors open
/// and no path longer than `path` plus two names, whatever the depth: a
/// subfolder that is not empty is moved up to the top level of `path`
/// under a fresh name and emptied there later. Symlinks are removed, never
/// followed. A missing `path` is success.
pub(crate) fn remove_tree(path: &Path) -> io::Result<()> {
    let top_name = match path.file_name() {
        Some(n) => c_name(n.as_bytes())?,
        None => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "no folder name",
            ));
        }
    };
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let parent_fd = open_dir_at(CWD, &c_name(parent.as_os_str().as_bytes())?)?;
    let top = match open_dir_at(&parent_fd, &top_name) {
        Ok(fd) => fd,
        Err(e) if e.raw_os_error() == Some(Errno::NOENT.raw_os_error()) => return Ok(()),
        Err(e)
            if e.raw_os_error() == Some(Errno::NOTDIR.raw_os_error())
                || e.raw_os_error() == Some(Errno::LOOP.raw_os_error()) =>
        {
            return unlink_at(&parent_fd, &top_name, AtFlags::empty());
        }
        Err(e) => return Err(e),
    };
    let mut fresh: u64 = 0;
    loop {
        let listed = entries(&top)?;
        if listed.is_empty() {
            break;
        }
        for (name, is_dir) in listed {
            if !is_dir {
                unlink_at(&top, &name, AtFlags::empty())?;
                continue;
            }
            if unlink_at(&top, &name, AtFlags::REMOVEDIR).is_ok() {
                continue;
            }
            // A folder with contents: empty it one level, moving its own
            // non-empty subfolders up to the top.
            open_up(&top, &name);
            let sub = open_dir_at(&top, &name)?;
            for (child, child_is_dir) in entries(&sub)? {
                if !child_is_dir {
                    unlink_at(&sub, &child, AtFlags::empty())?;
                    continue;
                }
                if unlink_at(&sub, &child, AtFlags::REMOVEDIR).is_ok() {
                    continue;
                }
                // Moving a folder to another parent rewrites its `..`,
                // which needs write access to it.
                open_up(&sub, &child);
                loop {
                    fresh += 1;
                    let candidate = c_name(format!(".rm-{fresh}").as_bytes())?;
                    // NOREPLACE keeps an existing entry: try the next name.
                    match rustix::fs::renameat_with(
                        &sub,
                        child.as_c_str(),
                        &top,
                        candidate.as_c_str(),
                        RenameFlags::NOREPLACE,
                    ) {
                        Ok(()) => break,
                        Err(Errno::EXIST) => {}
                        Err(e) => return Err(e.into()),
                    }
                }
            }
            drop(sub);
            unlink_at(&top, &name, AtFlags::REMOVEDIR)?;
        }
    }
    drop(top);
    unlink_at(&parent_fd, &top_name, AtFlags::REMOVEDIR)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn the_work_root_is_per_user_and_under_the_runtime_dir_when_set() {
        let tmp = Path::new("/tmp");
        assert_eq!(
            default_work_root(1000, Some(OsStr::new("/run/user/1000")), tmp),
            PathBuf::from("/run/user/1000/skilldeck-exec")
        );
        assert_eq!(
            default_work_root(1000, None, tmp),
            PathBuf::from("/tmp/skilldeck-exec-1000")
        );
        assert_eq!(
            default_work_root(1000, Some(OsStr::new("relative")), tmp),
            PathBuf::from("/tmp/skilldeck-exec-1000"),
            "a relative XDG_RUNTIME_DIR is ignored"
        );
        if Path::new(ROOT_STATE_DIR).is_dir() {
            assert_eq!(
                default_work_root(0, Some(OsStr::new("/run/user/0")), tmp),
                PathBuf::from("/var/lib/skilldeck-exec"),
                "root: a folder only root can create, not the shared temp dir"
            );
        }
    }

    #[test]
    fn a_tree_far_deeper_than_the_open_file_limit_is_removed_with_two_descriptors() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("run");
        std::fs::create_dir(&root).unwrap();
        // 3,000 levels: built by descending (paths grow past PATH_MAX).
        let top = open_dir_at(CWD, &c_name(root.as_os_str().as_bytes()).unwrap()).unwrap();
        let mut cur = top;
        for i in 0..3000 {
            let name = c_name(b"d").unwrap();
            rustix::fs::mkdirat(&cur, name.as_c_str(), Mode::from_raw_mode(0o700)).unwrap();
            rustix::fs::openat(
                &cur,
                c"f",
                OFlags::CREATE | OFlags::WRONLY | OFlags::CLOEXEC,
                Mode::from_raw_mode(0o600),
            )
            .unwrap();
            if i == 1500 {
                rustix::fs::symlinkat(c"/etc", &cur, c"link").unwrap();
            }
            cur = open_dir_at(&cur, &name).unwrap();
        }
        drop(cur);
        remove_tree(&root).unwrap();
        assert!(!root.exists());
        assert!(
            Path::new("/etc/passwd").exists(),
            "symlinks are removed, not followed"
        );
        remove_tree(&root).unwrap();
    }
}
