//! A skill's bundled files (`references/`, `scripts/`, `assets/`, ...):
//! reading one by relative path, and listing them all.
//!
//! Nothing outside the skill folder is ever returned. A requested path is
//! checked in two stages:
//!
//! 1. **Lexically**, before any file system call: refused when empty, longer
//!    than [`MAX_RESOURCE_PATH_BYTES`](crate::limits::MAX_RESOURCE_PATH_BYTES), holding a NUL byte, absolute, holding a
//!    `\` (Windows separators, UNC `\\server\share`), starting with a drive
//!    (`C:`), holding a percent escape (`%2e`, `%252e`: paths are never
//!    URL-decoded, so an escape is either a client bug or an attack), or
//!    holding a `..` component in any position (even `a/b/../c.md`, which
//!    would stay inside: refusing every `..` is simpler to reason about than
//!    normalising, and no skill needs it). `.` components and repeated `/`
//!    are dropped.
//! 2. **Physically**: the path is resolved (`realpath`) and must lie in the
//!    skill's `real_dir`, so symlinks, chains of symlinks and symlinked
//!    folders on the way may point anywhere *inside* the skill but not out.
//!    The file is then opened (non-blocking; FIFOs, sockets and devices are
//!    refused on `stat` and again on the handle, see
//!    `fs/read.rs`), and containment is checked **again on the open
//!    handle**: the kernel's name for the opened file
//!    (`/proc/self/fd/N`) must lie in the skill folder. Whatever was swapped
//!    in between the check and the `open`, the bytes returned come from the
//!    file the handle names, and that file is inside.
//!
//! Why not an `openat`/`O_NOFOLLOW` walk: the workspace forbids `unsafe`
//! code and `cap-std` is not a dependency, so the walk would need raw
//! `libc::openat` calls. Checking the handle after opening gives the same
//! guarantee for what is read. Where `/proc` is missing, the fallback
//! resolves the path again and requires it to name the same file (device
//! and inode) as the handle; that closes the swap window to the time between
//! two system calls. Hard links are not symlinks: a hard link in the skill
//! folder *is* a file of the skill (making one needs write access to the
//! folder), but its other names may lie anywhere on the same file system
//! (a hard link to `~/.ssh/id_ed25519` placed in a skill), so a regular
//! file with more than one link is refused by [`read_resource`] and left out
//! of [`list_resources`] unless the deck allows them (`[resources]
//! allow-hardlinks = true`, [`crate::Skill::allows_hardlinks`]).

use std::io::{self};
use std::path::Path;

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

use crate::error::Error;
pub use crate::error::ResourceProblem;
pub use crate::fs::contain::normalize_resource_path;
use crate::fs::contain::not_found_or_io;
use crate::fs::contain::{components, is_hardlinked, read_contained, resolve_inside};
use crate::fs::walk::SKIPPED_DIRS;
use crate::limits::{
    MAX_RESOURCE_BYTES, MAX_RESOURCE_LIST_DEPTH, MAX_RESOURCE_LIST_ENTRIES, MAX_RESOURCE_LIST_FILES,
};
use crate::skill::Skill;

/// One file read from a skill folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resource {
    /// The path relative to the skill folder, normalised (`./a//b` → `a/b`).
    pub path: String,
    /// Its size in bytes.
    pub size: u64,
    /// Its content.
    pub content: ResourceContent,
    /// Its MIME type, from the extension (see [`mime_for`]).
    pub mime: &'static str,
}

/// A resource's bytes: text when they are UTF-8 without NUL bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceContent {
    /// Valid UTF-8 with no NUL byte.
    Text(String),
    /// Anything else.
    Binary(Vec<u8>),
}

impl Resource {
    /// The text, for a text resource.
    pub fn text(&self) -> Option<&str> {
        match &self.content {
            ResourceContent::Text(text) => Some(text),
            ResourceContent::Binary(_) => None,
        }
    }

    /// The raw bytes, text or not.
    pub fn bytes(&self) -> &[u8] {
        match &self.content {
            ResourceContent::Text(text) => text.as_bytes(),
            ResourceContent::Binary(bytes) => bytes,
        }
    }

    /// True for a text resource.
    pub fn is_text(&self) -> bool {
        matches!(self.content, ResourceContent::Text(_))
    }

    /// The JSON form: `{"path", "size", "mime", "encoding", "text"}` for
    /// text (`encoding` is `"utf-8"`), `{"path", "size", "mime", "encoding",
    /// "content_base64"}` for binary (`encoding` is `"base64"`, standard
    /// alphabet with padding).
    pub fn to_json(&self) -> serde_json::Value {
        let mut map = serde_json::Map::new();
        map.insert("path".into(), self.path.clone().into());
        map.insert("size".into(), self.size.into());
        map.insert("mime".into(), self.mime.into());
        match &self.content {
            ResourceContent::Text(text) => {
                map.insert("encoding".into(), "utf-8".into());
                map.insert("text".into(), text.clone().into());
            }
            ResourceContent::Binary(bytes) => {
                map.insert("encoding".into(), "base64".into());
                map.insert("content_base64".into(), encode_base64(bytes).into());
            }
        }
        serde_json::Value::Object(map)
    }
}

impl Serialize for Resource {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(5))?;
        map.serialize_entry("path", &self.path)?;
        map.serialize_entry("size", &self.size)?;
        map.serialize_entry("mime", self.mime)?;
        match &self.content {
            ResourceContent::Text(text) => {
                map.serialize_entry("encoding", "utf-8")?;
                map.serialize_entry("text", text)?;
            }
            ResourceContent::Binary(bytes) => {
                map.serialize_entry("encoding", "base64")?;
                map.serialize_entry("content_base64", &encode_base64(bytes))?;
            }
        }
        map.end()
    }
}

fn encode_base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// One file in a skill folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResourceEntry {
    /// The path relative to the skill folder, `/`-separated; always a path
    /// [`read_resource`] accepts.
    pub path: String,
    /// Its size in bytes.
    pub size: u64,
}

/// Every file of a skill, as far as the listing limits allow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResourceList {
    /// The skill's name.
    pub skill: String,
    /// Regular files, sorted by path.
    pub files: Vec<ResourceEntry>,
    /// True when a limit stopped the listing (too many files or entries, or
    /// folders deeper than [`MAX_RESOURCE_LIST_DEPTH`]).
    pub truncated: bool,
    /// Files seen but not listed: over [`MAX_RESOURCE_LIST_FILES`], below
    /// the depth limit, or with a name [`read_resource`] would refuse (not
    /// UTF-8, a `\`, a `%XX`, ...). A lower bound when the entry limit hit.
    pub omitted: usize,
}

/// The MIME type for `path` by its extension (case-insensitive). Unknown
/// extensions get `text/plain` for text and `application/octet-stream`
/// for binary content.
pub fn mime_for(path: &str, is_text: bool) -> &'static str {
    let file = path.rsplit('/').next().unwrap_or(path);
    let ext = match file.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => ext.to_ascii_lowercase(),
        _ => String::new(),
    };
    match ext.as_str() {
        "md" | "markdown" => "text/markdown",
        "txt" => "text/plain",
        "py" => "text/x-python",
        "sh" => "application/x-sh",
        "js" | "mjs" => "text/javascript",
        "ts" => "application/typescript",
        "json" => "application/json",
        "yaml" | "yml" => "application/yaml",
        "toml" => "application/toml",
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "csv" => "text/csv",
        "xml" => "application/xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "svg" => "image/svg+xml",
        "pdf" => "application/pdf",
        "zip" => "application/zip",
        _ if is_text => "text/plain",
        _ => "application/octet-stream",
    }
}

/// Reads the file at `relative_path` in `skill`'s folder, refusing anything
/// that leaves the folder (see the module docs), anything but a regular
/// file, and files over [`MAX_RESOURCE_BYTES`]. `SKILL.md` itself may be
/// read.
pub fn read_resource(skill: &Skill, relative_path: &str) -> Result<Resource, Error> {
    read_resource_capped(skill, relative_path, MAX_RESOURCE_BYTES)
}

/// [`read_resource`] with a custom size cap (bytes).
pub fn read_resource_capped(
    skill: &Skill,
    relative_path: &str,
    cap: u64,
) -> Result<Resource, Error> {
    let fail = |problem| Error::Resource {
        skill: skill.name.clone(),
        path: relative_path.to_owned(),
        problem,
    };
    let parts = components(relative_path).map_err(fail)?;
    if parts.is_empty() {
        return Err(fail(ResourceProblem::Folder));
    }
    let path = parts.join("/");
    let (size, bytes) =
        read_contained(skill.real_dir(), &path, cap, skill.allows_hardlinks()).map_err(fail)?;
    let content = match String::from_utf8(bytes) {
        Ok(text) if memchr::memchr(0, text.as_bytes()).is_none() => ResourceContent::Text(text),
        Ok(text) => ResourceContent::Binary(text.into_bytes()),
        Err(e) => ResourceContent::Binary(e.into_bytes()),
    };
    let mime = mime_for(&path, matches!(content, ResourceContent::Text(_)));
    Ok(Resource {
        path,
        size,
        content,
        mime,
    })
}

/// The folders directly in `dir` (a path relative to `skill`'s folder,
/// `""` for the folder itself), by name, sorted; `None` when `dir` is
/// refused by the lexical check, does not exist, is not a folder, or
/// resolves outside the skill. Only folders that themselves resolve inside
/// the skill and whose names the lexical check accepts are listed; `.git`
/// and `node_modules` are skipped, as in [`list_resources`]. Empty folders
/// are listed too (a directory view needs them; the file listing cannot
/// show them).
pub fn list_folders(skill: &Skill, dir: &str) -> Option<Vec<String>> {
    let root = skill.real_dir();
    let dir = if dir.is_empty() {
        String::new()
    } else {
        components(dir).ok()?.join("/")
    };
    let real = resolve_inside(root, &dir)?;
    if !real.is_dir() {
        return None;
    }
    let mut names = Vec::new();
    for entry in std::fs::read_dir(&real).ok()?.flatten() {
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        if SKIPPED_DIRS.contains(&name.as_str()) {
            continue;
        }
        let plain = components(&name).is_ok_and(|parts| parts == [name.as_str()]);
        let child = if dir.is_empty() {
            name.clone()
        } else {
            format!("{dir}/{name}")
        };
        if plain && resolve_inside(root, &child).is_some_and(|p| p.is_dir()) {
            names.push(name);
        }
    }
    names.sort();
    Some(names)
}

/// Lists every regular file in `skill`'s folder: relative `/` paths, sorted,
/// with sizes. `.git` and `node_modules` are skipped; symlinks are followed
/// only when they resolve inside the skill folder (loops are skipped);
/// bounded by [`MAX_RESOURCE_LIST_FILES`], [`MAX_RESOURCE_LIST_DEPTH`] and
/// [`MAX_RESOURCE_LIST_ENTRIES`]. When the file limit is reached, the files
/// kept are the first in walk order (folder by folder, names sorted).
pub fn list_resources(skill: &Skill) -> Result<ResourceList, Error> {
    let root = skill.real_dir();
    let fail = |problem| Error::Resource {
        skill: skill.name.clone(),
        path: ".".to_owned(),
        problem,
    };
    let meta = std::fs::metadata(root).map_err(|e| fail(not_found_or_io(e)))?;
    if !meta.is_dir() {
        return Err(fail(ResourceProblem::Io(
            io::ErrorKind::NotADirectory.into(),
        )));
    }
    let walker = walkdir::WalkDir::new(root)
        .follow_links(true)
        // Depth of a file = its folder's level + 1; one level more is walked
        // so what lies beyond the limit is seen (and counted), not listed.
        .max_depth(MAX_RESOURCE_LIST_DEPTH + 2)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| keep_entry(e, root));
    let mut files = Vec::new();
    let mut truncated = false;
    let mut omitted = 0usize;
    for (visited, entry) in walker.enumerate() {
        if visited >= MAX_RESOURCE_LIST_ENTRIES {
            truncated = true;
            break;
        }
        // Loops, dangling links and unreadable folders are skipped: they
        // hold nothing read_resource could return.
        let Ok(entry) = entry else { continue };
        let is_file = entry.file_type().is_file();
        if entry.depth() > MAX_RESOURCE_LIST_DEPTH + 1 {
            truncated = true;
            omitted += usize::from(is_file);
            continue;
        }
        if !is_file {
            continue;
        }
        let Some(path) = listed_path(entry.path(), root) else {
            omitted += 1;
            continue;
        };
        if files.len() >= MAX_RESOURCE_LIST_FILES {
            truncated = true;
            omitted += 1;
            continue;
        }
        let Ok(meta) = entry.metadata() else {
            continue;
        };
        // What read_resource would refuse is not listed.
        if !skill.allows_hardlinks() && is_hardlinked(&meta) {
            omitted += 1;
            continue;
        }
        files.push(ResourceEntry {
            path,
            size: meta.len(),
        });
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(ResourceList {
        skill: skill.name.clone(),
        files,
        truncated,
        omitted,
    })
}

/// Walk filter: skip `.git` and `node_modules`, and symlinks that resolve
/// outside the skill folder (or nowhere).
fn keep_entry(entry: &walkdir::DirEntry, root: &Path) -> bool {
    if entry.depth() == 0 {
        return true;
    }
    if entry.file_type().is_dir() && SKIPPED_DIRS.iter().any(|s| entry.file_name() == *s) {
        return false;
    }
    if entry.path_is_symlink() {
        return std::fs::canonicalize(entry.path()).is_ok_and(|real| real.starts_with(root));
    }
    true
}

/// The relative `/` path of a listed file, if `read_resource` accepts it.
fn listed_path(path: &Path, root: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let parts: Option<Vec<&str>> = rel.iter().map(|c| c.to_str()).collect();
    let joined = parts?.join("/");
    match components(&joined) {
        Ok(parts) if parts.join("/") == joined => Some(joined),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn mime_types_follow_the_extension() {
        assert_eq!(mime_for("references/a.md", true), "text/markdown");
        assert_eq!(mime_for("scripts/x.PY", true), "text/x-python");
        assert_eq!(mime_for("assets/logo.png", false), "image/png");
        assert_eq!(mime_for("assets/photo.JPEG", false), "image/jpeg");
        assert_eq!(mime_for("LICENSE", true), "text/plain");
        assert_eq!(mime_for("blob", false), "application/octet-stream");
        assert_eq!(mime_for(".bashrc", true), "text/plain");
    }
}
