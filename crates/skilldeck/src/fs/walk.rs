//! Finding skill folders below a root (discovery and `validate -r`).
//!
//! Folders are read in parallel (one `read_dir` per folder, subfolders fanned
//! out with rayon) and results are merged in sorted order, so the outcome is
//! deterministic. Symlinked folders are followed (skills are often installed
//! by symlink), loops are detected by comparing device and inode with the
//! folders above, `.git` and `node_modules` are skipped, and the walk is
//! bounded in depth and folder count. A FIFO named `SKILL.md` is only listed
//! here, never opened: the reader refuses it later.

use std::cell::RefCell;
use std::ffi::{OsStr, OsString};
use std::mem::MaybeUninit;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use rayon::prelude::*;
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{AtFlags, FileType, Mode, OFlags, RawDir};

use crate::diagnostic::{Code, Diagnostic, Severity};
use crate::fs::read::{SKILL_MD, SKILL_MD_LOWERCASE};

/// Folder names never descended into.
pub const SKIPPED_DIRS: [&str; 2] = [".git", "node_modules"];

/// A skill's own resource folders (the spec's `scripts/`, `references/`,
/// `assets/`): they hold the skill's files, not other skills, so they are not
/// searched (a `SKILL.md` template inside `assets/` is not a skill). Other
/// subfolders of a skill are, since skills do nest.
pub const RESOURCE_DIRS: [&str; 3] = ["scripts", "references", "assets"];

/// Bounds of a walk.
#[derive(Debug, Clone, Copy)]
pub struct WalkLimits {
    /// Deepest entry level below the root (a `SKILL.md` at this depth is
    /// still found; folders at this depth are not entered).
    pub max_depth: usize,
    /// Most folders visited below the root (the root is not counted).
    pub max_dirs: usize,
}

impl Default for WalkLimits {
    fn default() -> Self {
        WalkLimits {
            max_depth: crate::limits::MAX_WALK_DEPTH,
            max_dirs: crate::limits::MAX_WALK_DIRS,
        }
    }
}

/// A folder holding a `SKILL.md` (or `skill.md`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundSkill {
    /// Its skill file, under the root as walked (symlinks kept): `SKILL.md`,
    /// or `skill.md` when only that exists. The folder is its parent
    /// ([`FoundSkill::dir`]): one path per skill, not two.
    pub skill_md: PathBuf,
    /// True when the path from the root to it crosses a symlinked folder,
    /// so its real location is not simply the root's plus the relative path.
    pub via_symlink: bool,
    /// True when the folder listing said the skill file is a regular file
    /// (the directory entry's type, not a symlink, FIFO or device): the
    /// reader may then open it without following links and check the open
    /// handle, instead of a `stat` before opening.
    pub listed_regular: bool,
}

impl FoundSkill {
    /// The skill folder: the skill file's parent.
    pub fn dir(&self) -> &Path {
        crate::fs::read::folder_of(&self.skill_md)
    }
}

/// What a walk found: skill folders, in sorted order, and the problems met on
/// the way (warnings: loops, dangling links, unreadable folders, limits).
#[derive(Debug, Clone, Default)]
pub struct WalkOutcome {
    /// Folders holding a `SKILL.md` (or `skill.md`), sorted, deduplicated.
    pub skills: Vec<FoundSkill>,
    /// Problems met on the way.
    pub diagnostics: Vec<Diagnostic>,
}

/// A walk's outcome and, for each skill found (same order), what the
/// walk's caller made of it while its folder was open.
struct Visited<T> {
    walk: WalkOutcome,
    made: Vec<T>,
}

impl<T> Default for Visited<T> {
    fn default() -> Self {
        Visited {
            walk: WalkOutcome::default(),
            made: Vec::new(),
        }
    }
}

impl<T> Visited<T> {
    fn append(&mut self, mut other: Visited<T>) {
        self.walk.skills.append(&mut other.walk.skills);
        self.walk.diagnostics.append(&mut other.walk.diagnostics);
        self.made.append(&mut other.made);
    }
}

impl WalkOutcome {
    /// The skill folders found, in order.
    pub fn skill_dirs(&self) -> Vec<PathBuf> {
        self.skills.iter().map(|f| f.dir().to_path_buf()).collect()
    }
}

struct Walk<'a> {
    root: &'a Path,
    limits: WalkLimits,
    visited: AtomicUsize,
    limit_hit: AtomicBool,
    /// Subfolders fanned out with rayon; false: one at a time, in sorted
    /// order (the walk that decides what a folder limit keeps).
    parallel: bool,
}

/// The chain of folders above the current one, for loop detection.
struct Ancestors<'a> {
    path: &'a Path,
    parent: Option<&'a Ancestors<'a>>,
}

/// Finds every skill folder below `root` (the root included).
///
/// When the folder limit stops the walk, what is kept does not depend on
/// thread timing: the walk is done again one folder at a time, depth first
/// in sorted name order, so the folders visited are the first
/// `max_dirs` of that order (a tree that large pays for a second, bounded
/// walk; every other tree walks once, in parallel).
pub fn find_skill_dirs(root: &Path, limits: WalkLimits) -> WalkOutcome {
    find_skill_dirs_then(root, limits, &|_, _| ()).0
}

/// [`find_skill_dirs`], calling `then` on each skill found while its
/// folder is still open from the listing: `then` gets the skill and that
/// folder's descriptor, so it can open the skill's files relative to it
/// (a one-component lookup instead of the whole path, and the work starts
/// while the rest of the tree is still being listed, on the same threads).
/// What `then` makes comes back in the order of the skills found. When the
/// folder limit stops the walk, the walk is done again one folder at a
/// time (see [`find_skill_dirs`]), calling `then` again for what it keeps.
pub(crate) fn find_skill_dirs_then<T, F>(
    root: &Path,
    limits: WalkLimits,
    then: &F,
) -> (WalkOutcome, Vec<T>)
where
    T: Send,
    F: Fn(&FoundSkill, BorrowedFd<'_>) -> T + Sync,
{
    let walk = |parallel: bool| {
        let walk = Walk {
            root,
            limits,
            visited: AtomicUsize::new(0),
            limit_hit: AtomicBool::new(false),
            parallel,
        };
        let top = Ancestors {
            path: root,
            parent: None,
        };
        let outcome = walk.visit(root, 0, false, &top, then);
        (outcome, walk.limit_hit.load(Ordering::Relaxed))
    };
    let (visited, limit_hit) = match walk(true) {
        (_, true) => walk(false),
        done => done,
    };
    let Visited { mut walk, made } = visited;
    if limit_hit {
        walk.diagnostics.push(
            Diagnostic::new(
                Code::WalkLimit,
                Severity::Warning,
                format!(
                    "stopped after {} folders under {}; skills further on (in sorted order) were not searched",
                    limits.max_dirs,
                    root.display()
                ),
            )
            .in_file(root),
        );
    }
    (walk, made)
}

impl Walk<'_> {
    fn visit<T, F>(
        &self,
        dir: &Path,
        depth: usize,
        via_symlink: bool,
        ancestors: &Ancestors<'_>,
        then: &F,
    ) -> Visited<T>
    where
        T: Send,
        F: Fn(&FoundSkill, BorrowedFd<'_>) -> T + Sync,
    {
        let mut out = Visited::default();
        if depth >= self.limits.max_depth {
            return out;
        }
        // The root itself is not counted: a root of exactly `max_dirs`
        // skill folders is walked whole.
        if depth > 0 && self.visited.fetch_add(1, Ordering::Relaxed) >= self.limits.max_dirs {
            self.limit_hit.store(true, Ordering::Relaxed);
            return out;
        }
        // Whether the listing typed SKILL.md (or skill.md) as a regular file.
        let mut upper_regular = false;
        let mut lower_regular = false;
        // The skill file's name, if any: SKILL.md wins over skill.md.
        let mut skill_file: Option<&str> = None;
        // (name, path, reached through a symlink)
        let mut subdirs: Vec<(OsString, PathBuf, bool)> = Vec::new();
        let listed = list_dir(dir, |name, kind| {
            if name == SKILL_MD.as_bytes() {
                // Whatever it is (file, link, FIFO): validation reports it.
                // The type comes with the listing (no system call on Linux).
                skill_file = Some(SKILL_MD);
                upper_regular = kind == Some(FileType::RegularFile);
                return;
            }
            if name == SKILL_MD_LOWERCASE.as_bytes() {
                skill_file = skill_file.or(Some(SKILL_MD_LOWERCASE));
                lower_regular = kind == Some(FileType::RegularFile);
                return;
            }
            let Some(kind) = kind else { return };
            let skipped = || SKIPPED_DIRS.iter().any(|s| name == s.as_bytes());
            if kind == FileType::Directory {
                if !skipped() {
                    let name = OsStr::from_bytes(name);
                    subdirs.push((name.to_owned(), dir.join(name), via_symlink));
                }
            } else if kind == FileType::Symlink {
                let name = OsStr::from_bytes(name);
                let path = dir.join(name);
                match std::fs::metadata(&path) {
                    Ok(meta) if meta.is_dir() => {
                        if skipped() {
                            return;
                        }
                        if let Some(ancestor) = loops_to(&meta, ancestors) {
                            out.walk.diagnostics.push(
                                Diagnostic::new(
                                    Code::SymlinkLoop,
                                    Severity::Warning,
                                    format!(
                                        "{} links back to {}; not followed",
                                        path.display(),
                                        ancestor.display()
                                    ),
                                )
                                .in_file(&path),
                            );
                        } else {
                            subdirs.push((name.to_owned(), path, true));
                        }
                    }
                    Ok(_) => {}
                    Err(e) => out.walk.diagnostics.push(problem(&path, &e, self.root)),
                }
            }
        });
        let folder = match listed {
            Ok(folder) => folder,
            Err(e) => {
                out.walk.diagnostics.push(problem(dir, &e, self.root));
                return out;
            }
        };
        if skill_file.is_some() {
            subdirs.retain(|(name, _, _)| !RESOURCE_DIRS.iter().any(|r| name == *r));
        }
        if let Some(file) = skill_file {
            let found = FoundSkill {
                skill_md: crate::fs::read::skill_file_path(dir, file),
                via_symlink,
                listed_regular: if file == SKILL_MD {
                    upper_regular
                } else {
                    lower_regular
                },
            };
            out.made.push(then(&found, folder.as_fd()));
            out.walk.skills.push(found);
        }
        // One descriptor per walk thread at a time: closed before the
        // subfolders are visited.
        drop(folder);
        subdirs.sort_by(|a, b| a.0.cmp(&b.0));
        let visit_child = |(_, path, linked): &(OsString, PathBuf, bool)| {
            let here = Ancestors {
                path,
                parent: Some(ancestors),
            };
            self.visit(path, depth + 1, *linked, &here, then)
        };
        let children: Vec<Visited<T>> = if self.parallel {
            subdirs.par_iter().map(visit_child).collect()
        } else {
            subdirs.iter().map(visit_child).collect()
        };
        for child in children {
            out.append(child);
        }
        out
    }
}

thread_local! {
    /// Each walk thread's `getdents64` buffer, allocated once.
    static LISTING: RefCell<Vec<MaybeUninit<u8>>> = const { RefCell::new(Vec::new()) };
}

/// Lists `dir`, calling `entry` with each name (`.` and `..` left out) and
/// its type: the directory entry's own type, or, where the file system
/// leaves it unknown, the `lstat` of the entry (`None` when that fails, as
/// the entry is gone). One `open` and `getdents64` calls into a large
/// reused buffer (about two for a folder of a few hundred entries), where
/// `read_dir` adds an `fstat` per folder and a path and an allocation per
/// entry. Returns the folder's descriptor (the caller closes it).
fn list_dir(
    dir: &Path,
    mut entry: impl FnMut(&[u8], Option<FileType>),
) -> std::io::Result<OwnedFd> {
    let fd = rustix::fs::open(
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::empty(),
    )?;
    let mut list = |buffer: &mut [MaybeUninit<u8>]| {
        let mut entries = RawDir::new(&fd, buffer);
        // An error partway (the folder removed meanwhile) ends the listing
        // with what it gave, as `read_dir` would.
        while let Some(Ok(next)) = entries.next() {
            let name = next.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            let kind = match next.file_type() {
                FileType::Unknown => {
                    rustix::fs::statat(&fd, next.file_name(), AtFlags::SYMLINK_NOFOLLOW)
                        .ok()
                        .map(|stat| FileType::from_raw_mode(stat.st_mode))
                }
                kind => Some(kind),
            };
            entry(name, kind);
        }
    };
    LISTING.with(|cell| match cell.try_borrow_mut() {
        Ok(mut buffer) => {
            if buffer.is_empty() {
                buffer.resize(
                    crate::limits::WALK_LISTING_BUFFER_BYTES,
                    MaybeUninit::uninit(),
                );
            }
            list(&mut buffer);
        }
        Err(_) => list(&mut vec![
            MaybeUninit::uninit();
            crate::limits::WALK_LISTING_BUFFER_BYTES
        ]),
    });
    Ok(fd)
}

/// The ancestor that a symlinked folder (`meta`, followed) is, if any.
fn loops_to<'a>(meta: &std::fs::Metadata, ancestors: &'a Ancestors<'a>) -> Option<&'a Path> {
    let mut node = Some(ancestors);
    while let Some(a) = node {
        if let Ok(m) = std::fs::metadata(a.path)
            && m.dev() == meta.dev()
            && m.ino() == meta.ino()
        {
            return Some(a.path);
        }
        node = a.parent;
    }
    None
}

fn problem(path: &Path, e: &std::io::Error, root: &Path) -> Diagnostic {
    let (code, message) = if e.kind() == std::io::ErrorKind::NotFound {
        (
            Code::BrokenSymlink,
            format!("{} is a symlink to nothing; skipped", path.display()),
        )
    } else if e.raw_os_error() == Some(libc::ELOOP) {
        (
            Code::SymlinkLoop,
            format!("{} is a symlink loop; skipped", path.display()),
        )
    } else {
        (
            Code::ReadError,
            format!(
                "cannot read {} (under {}): {e}",
                path.display(),
                root.display()
            ),
        )
    };
    Diagnostic::new(code, Severity::Warning, message).in_file(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A folder whose entries take several `getdents64` calls (more bytes of
    /// entries than one listing buffer holds) is listed whole, on the thread
    /// that owns a listing buffer and on one that has none yet.
    #[test]
    fn a_folder_larger_than_one_listing_buffer_is_listed_whole() {
        let tmp = tempfile::tempdir().unwrap();
        // Each entry is about 24 bytes of header plus its name.
        let name_len = 200;
        let count = 3 * crate::limits::WALK_LISTING_BUFFER_BYTES / (name_len + 24);
        let mut expected = Vec::new();
        for i in 0..count {
            let name = format!("{i:0>name_len$}");
            if i % 7 == 0 {
                let dir = tmp.path().join(&name);
                std::fs::create_dir(&dir).unwrap();
                std::fs::write(dir.join(SKILL_MD), "---\nname: x\n---\n").unwrap();
                expected.push(dir);
            } else {
                std::fs::write(tmp.path().join(&name), "").unwrap();
            }
        }
        let found = find_skill_dirs(tmp.path(), WalkLimits::default());
        assert!(found.diagnostics.is_empty(), "{:?}", found.diagnostics);
        assert_eq!(found.skill_dirs(), expected);
        assert!(found.skills.iter().all(|s| s.listed_regular));
        // The same from a fresh thread (its buffer made on first use).
        let root = tmp.path().to_path_buf();
        let again = std::thread::spawn(move || find_skill_dirs(&root, WalkLimits::default()))
            .join()
            .unwrap();
        assert_eq!(again.skill_dirs(), expected);
    }
}
