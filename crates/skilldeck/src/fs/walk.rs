//! Finding skill folders below a root (discovery and `validate -r`).
//!
//! Folders are read in parallel (one `read_dir` per folder, subfolders fanned
//! out with rayon) and results are merged in sorted order, so the outcome is
//! deterministic. Symlinked folders are followed (skills are often installed
//! by symlink), loops are detected by comparing device and inode with the
//! folders above, `.git` and `node_modules` are skipped, and the walk is
//! bounded in depth and folder count. A FIFO named `SKILL.md` is only listed
//! here, never opened: the reader refuses it later.

use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use rayon::prelude::*;

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

impl WalkOutcome {
    fn append(&mut self, mut other: WalkOutcome) {
        self.skills.append(&mut other.skills);
        self.diagnostics.append(&mut other.diagnostics);
    }

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
        let outcome = walk.visit(root, 0, false, &top);
        (outcome, walk.limit_hit.load(Ordering::Relaxed))
    };
    let (mut outcome, limit_hit) = match walk(true) {
        (_, true) => walk(false),
        done => done,
    };
    if limit_hit {
        outcome.diagnostics.push(
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
    outcome
}

impl Walk<'_> {
    fn visit(
        &self,
        dir: &Path,
        depth: usize,
        via_symlink: bool,
        ancestors: &Ancestors<'_>,
    ) -> WalkOutcome {
        let mut out = WalkOutcome::default();
        if depth >= self.limits.max_depth {
            return out;
        }
        // The root itself is not counted: a root of exactly `max_dirs`
        // skill folders is walked whole.
        if depth > 0 && self.visited.fetch_add(1, Ordering::Relaxed) >= self.limits.max_dirs {
            self.limit_hit.store(true, Ordering::Relaxed);
            return out;
        }
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) => {
                out.diagnostics.push(problem(dir, &e, self.root));
                return out;
            }
        };
        // The skill file's name, if any: SKILL.md wins over skill.md.
        let mut skill_file: Option<&str> = None;
        // Whether the listing typed SKILL.md (or skill.md) as a regular file.
        let mut upper_regular = false;
        let mut lower_regular = false;
        // (name, path, reached through a symlink)
        let mut subdirs: Vec<(OsString, PathBuf, bool)> = Vec::new();
        for entry in entries {
            let Ok(entry) = entry else { continue };
            let name = entry.file_name();
            if name == SKILL_MD {
                // Whatever it is (file, link, FIFO): validation reports it.
                // The type comes with the listing (no system call on Linux).
                skill_file = Some(SKILL_MD);
                upper_regular = entry.file_type().is_ok_and(|t| t.is_file());
                continue;
            }
            if name == SKILL_MD_LOWERCASE {
                skill_file = skill_file.or(Some(SKILL_MD_LOWERCASE));
                lower_regular = entry.file_type().is_ok_and(|t| t.is_file());
                continue;
            }
            let Ok(file_type) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if file_type.is_dir() {
                if !SKIPPED_DIRS.iter().any(|s| name == *s) {
                    subdirs.push((name, path, via_symlink));
                }
            } else if file_type.is_symlink() {
                match std::fs::metadata(&path) {
                    Ok(meta) if meta.is_dir() => {
                        if SKIPPED_DIRS.iter().any(|s| name == *s) {
                            continue;
                        }
                        if let Some(ancestor) = loops_to(&meta, ancestors) {
                            out.diagnostics.push(
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
                            subdirs.push((name, path, true));
                        }
                    }
                    Ok(_) => {}
                    Err(e) => out.diagnostics.push(problem(&path, &e, self.root)),
                }
            }
        }
        if skill_file.is_some() {
            subdirs.retain(|(name, _, _)| !RESOURCE_DIRS.iter().any(|r| name == *r));
        }
        if let Some(file) = skill_file {
            out.skills.push(FoundSkill {
                skill_md: crate::fs::read::skill_file_path(dir, file),
                via_symlink,
                listed_regular: if file == SKILL_MD {
                    upper_regular
                } else {
                    lower_regular
                },
            });
        }
        subdirs.sort_by(|a, b| a.0.cmp(&b.0));
        let visit_child = |(_, path, linked): &(OsString, PathBuf, bool)| {
            let here = Ancestors {
                path,
                parent: Some(ancestors),
            };
            self.visit(path, depth + 1, *linked, &here)
        };
        let children: Vec<WalkOutcome> = if self.parallel {
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
