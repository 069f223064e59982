//! Finding skill folders below a path (`validate -r`).
//!
//! Symlinked folders are followed (skills are often installed by symlink),
//! loops are detected, `.git` and `node_modules` are skipped, and the walk is
//! bounded in depth and folder count. A FIFO named `SKILL.md` is only listed
//! here, never opened: the reader refuses it later.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::diagnostic::{Code, Diagnostic, Severity};
use crate::load::{SKILL_MD, SKILL_MD_LOWERCASE};

/// Folder names never descended into.
pub const SKIPPED_DIRS: [&str; 2] = [".git", "node_modules"];

/// Bounds of a walk.
#[derive(Debug, Clone, Copy)]
pub struct WalkLimits {
    /// Deepest folder level below the root.
    pub max_depth: usize,
    /// Most folders visited.
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

/// What a walk found: skill folders, in sorted order, and the problems met on
/// the way (warnings: loops, dangling links, unreadable folders, limits).
#[derive(Debug, Clone, Default)]
pub struct WalkOutcome {
    /// Folders holding a `SKILL.md` (or `skill.md`), sorted, deduplicated.
    pub skill_dirs: Vec<PathBuf>,
    /// Problems met on the way.
    pub diagnostics: Vec<Diagnostic>,
}

/// Finds every skill folder below `root` (the root included).
pub fn find_skill_dirs(root: &Path, limits: WalkLimits) -> WalkOutcome {
    let mut dirs = BTreeSet::new();
    let mut diagnostics = Vec::new();
    let mut visited = 0usize;
    let walker = walkdir::WalkDir::new(root)
        .follow_links(true)
        .max_depth(limits.max_depth)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            !(e.file_type().is_dir()
                && e.depth() > 0
                && SKIPPED_DIRS.iter().any(|s| e.file_name() == *s))
        });
    for entry in walker {
        match entry {
            Ok(entry) => {
                if entry.file_type().is_dir() {
                    visited += 1;
                    if visited > limits.max_dirs {
                        diagnostics.push(
                            Diagnostic::new(
                                Code::WalkLimit,
                                Severity::Warning,
                                format!(
                                    "stopped after {} folders under {}; skills further on were not searched",
                                    limits.max_dirs,
                                    root.display()
                                ),
                            )
                            .in_file(root),
                        );
                        break;
                    }
                } else if is_skill_file(entry.file_name())
                    && let Some(parent) = entry.path().parent()
                {
                    dirs.insert(parent.to_path_buf());
                }
            }
            Err(err) => {
                let path = err
                    .path()
                    .map(Path::to_path_buf)
                    .unwrap_or_else(|| root.to_path_buf());
                // A SKILL.md that cannot be followed is the skill's problem:
                // validating the folder reports it properly.
                if path.file_name().is_some_and(is_skill_file)
                    && let Some(parent) = path.parent()
                {
                    dirs.insert(parent.to_path_buf());
                    continue;
                }
                diagnostics.push(walk_diagnostic(&err, &path));
            }
        }
    }
    WalkOutcome {
        skill_dirs: dirs.into_iter().collect(),
        diagnostics,
    }
}

fn is_skill_file(name: &std::ffi::OsStr) -> bool {
    name == SKILL_MD || name == SKILL_MD_LOWERCASE
}

fn walk_diagnostic(err: &walkdir::Error, path: &Path) -> Diagnostic {
    let (code, message) = if let Some(ancestor) = err.loop_ancestor() {
        (
            Code::SymlinkLoop,
            format!(
                "{} links back to {}; not followed",
                path.display(),
                ancestor.display()
            ),
        )
    } else if err
        .io_error()
        .is_some_and(|e| e.kind() == std::io::ErrorKind::NotFound)
    {
        (
            Code::BrokenSymlink,
            format!("{} is a symlink to nothing; skipped", path.display()),
        )
    } else {
        (
            Code::ReadError,
            format!("cannot read {}: {err}", path.display()),
        )
    };
    Diagnostic::new(code, Severity::Warning, message).in_file(path)
}
