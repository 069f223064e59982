//! Containment: a path requested inside a skill folder never leads out of
//! it. Checked in two stages (see the [`crate::resources`] docs): lexically,
//! before any file system call ([`normalize_resource_path`]), then
//! physically, on the resolved path and again on the open handle
//! ([`read_contained`]). Every read of a skill's files goes through here;
//! no face checks containment itself.

use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::error::ResourceProblem;
use crate::fs::read::{OpenFailure, open_regular_file};
use crate::limits::MAX_RESOURCE_PATH_BYTES;

/// Checks a requested path lexically (stage 1 in the module docs) and
/// returns its normalised form: `/`-separated components with `.` and
/// empty components dropped. The result is empty for `.` or `./`, which
/// name the skill folder itself.
pub fn normalize_resource_path(path: &str) -> Result<String, ResourceProblem> {
    components(path).map(|parts| parts.join("/"))
}

pub(crate) fn components(path: &str) -> Result<Vec<&str>, ResourceProblem> {
    if path.is_empty() {
        return Err(ResourceProblem::Empty);
    }
    if path.len() > MAX_RESOURCE_PATH_BYTES {
        return Err(ResourceProblem::PathTooLong {
            len: path.len(),
            limit: MAX_RESOURCE_PATH_BYTES,
        });
    }
    let bytes = path.as_bytes();
    if bytes.contains(&0) {
        return Err(ResourceProblem::NulByte);
    }
    if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
        return Err(ResourceProblem::DrivePath);
    }
    if bytes.contains(&b'\\') {
        return Err(ResourceProblem::Backslash);
    }
    if bytes
        .windows(3)
        .any(|w| w[0] == b'%' && w[1].is_ascii_hexdigit() && w[2].is_ascii_hexdigit())
    {
        return Err(ResourceProblem::PercentEncoded);
    }
    if path.starts_with('/') {
        return Err(ResourceProblem::Absolute);
    }
    let mut parts = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err(ResourceProblem::ParentComponent),
            _ => parts.push(part),
        }
    }
    Ok(parts)
}

/// `path` (relative to `root`, already checked lexically) resolved, when it
/// exists and lies inside `root` (a real path): stage 2 without the read.
pub(crate) fn resolve_inside(root: &Path, path: &str) -> Option<PathBuf> {
    let resolved = std::fs::canonicalize(root.join(path)).ok()?;
    resolved.starts_with(root).then_some(resolved)
}

/// Stage 2 (physical): resolve, check, open, check the handle, read.
/// A regular file with more than one hard link is refused unless
/// `allow_hardlinks`: another of its names may lie outside `root`.
pub(crate) fn read_contained(
    root: &Path,
    path: &str,
    cap: u64,
    allow_hardlinks: bool,
) -> Result<(u64, Vec<u8>), ResourceProblem> {
    let full = root.join(path);
    let resolved = std::fs::canonicalize(&full).map_err(|e| missing_or_outside(root, path, e))?;
    if !resolved.starts_with(root) {
        return Err(ResourceProblem::Escapes);
    }
    if std::fs::metadata(&resolved).is_ok_and(|m| m.is_dir()) {
        return Err(ResourceProblem::Folder);
    }
    let (handle, meta) = open_regular_file(&resolved, cap).map_err(|f| match f {
        OpenFailure::Stat(e) => not_found_or_io(e),
        OpenFailure::NotRegular(kind) => ResourceProblem::NotRegular(kind),
        OpenFailure::TooLarge { size, cap } => ResourceProblem::TooLarge { size, limit: cap },
        OpenFailure::Open(e) => ResourceProblem::Io(e),
    })?;
    let opened = opened_path(&handle, &resolved, &meta)?;
    if !opened.starts_with(root) {
        return Err(ResourceProblem::Escapes);
    }
    if !allow_hardlinks && is_hardlinked(&meta) {
        return Err(ResourceProblem::Hardlinked);
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len().min(cap)).unwrap_or(0));
    handle
        .take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(ResourceProblem::Io)?;
    let size = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    if size > cap {
        return Err(ResourceProblem::TooLarge { size, limit: cap });
    }
    Ok((size, bytes))
}

/// True for a regular file with more than one hard link (a name for it
/// may lie anywhere on the same file system).
pub(crate) fn is_hardlinked(meta: &Metadata) -> bool {
    meta.is_file() && meta.nlink() > 1
}

/// Why `path` (relative to `root`, checked lexically) could not be
/// resolved: [`ResourceProblem::Escapes`] when the deepest part of it that
/// exists leads outside `root` (so a missing file outside and an existing
/// one answer the same), else not found or the I/O error.
fn missing_or_outside(root: &Path, path: &str, e: io::Error) -> ResourceProblem {
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    for len in (1..=parts.len()).rev() {
        let prefix = root.join(parts[..len].join("/"));
        match std::fs::canonicalize(&prefix) {
            Ok(real) if real.starts_with(root) => break,
            Ok(_) => return ResourceProblem::Escapes,
            Err(_) => {
                // A dangling symlink: where it points, lexically.
                if let Ok(target) = std::fs::read_link(&prefix) {
                    let base = prefix.parent().unwrap_or(root);
                    let base = std::fs::canonicalize(base).unwrap_or_else(|_| base.to_path_buf());
                    if !lexically_inside(&base.join(target), root) {
                        return ResourceProblem::Escapes;
                    }
                    break;
                }
            }
        }
    }
    not_found_or_io(e)
}

/// `path` with `.` and `..` applied lexically lies in `root`.
fn lexically_inside(path: &Path, root: &Path) -> bool {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out.starts_with(root)
}

pub(crate) fn not_found_or_io(e: io::Error) -> ResourceProblem {
    if e.kind() == io::ErrorKind::NotFound {
        ResourceProblem::NotFound
    } else {
        ResourceProblem::Io(e)
    }
}

/// Where the file behind `handle` really is: the kernel's own name for the
/// open file descriptor. Without `/proc`, `resolved` is resolved again and
/// must name the same file (device and inode) as the handle.
fn opened_path(
    handle: &File,
    resolved: &Path,
    meta: &Metadata,
) -> Result<PathBuf, ResourceProblem> {
    let fd_link = PathBuf::from(format!("/proc/self/fd/{}", handle.as_raw_fd()));
    if let Ok(path) = std::fs::read_link(&fd_link)
        && path.is_absolute()
    {
        return Ok(path);
    }
    let again = std::fs::canonicalize(resolved).map_err(|_| ResourceProblem::Changed)?;
    let now = std::fs::metadata(&again).map_err(|_| ResourceProblem::Changed)?;
    if (now.dev(), now.ino()) != (meta.dev(), meta.ino()) {
        return Err(ResourceProblem::Changed);
    }
    Ok(again)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn containment_is_checked_on_the_open_handle() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("skill");
        std::fs::create_dir(&root).unwrap();
        std::fs::write(root.join("inside.md"), "in").unwrap();
        std::fs::write(tmp.path().join("outside.md"), "out").unwrap();
        let root = std::fs::canonicalize(&root).unwrap();
        // A handle to an outside file, with a path that claims to be inside
        // (what a swap after the path check would produce).
        let outside = std::fs::canonicalize(tmp.path().join("outside.md")).unwrap();
        let (handle, meta) = open_regular_file(&outside, 1024).unwrap();
        let opened = opened_path(&handle, &root.join("inside.md"), &meta).unwrap();
        assert_eq!(opened, outside);
        assert!(!opened.starts_with(&root));
    }

    #[test]
    fn normalisation_drops_dot_and_empty_components() {
        assert_eq!(
            normalize_resource_path("./scripts//x.py").unwrap(),
            "scripts/x.py"
        );
        assert_eq!(normalize_resource_path("./").unwrap(), "");
    }
}
