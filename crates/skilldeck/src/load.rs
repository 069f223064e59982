//! Reading one skill from disk, safely, into a [`SkillReport`].
//!
//! Hostile folders are expected: a FIFO or device named `SKILL.md` is never
//! opened for a blocking read, symlinks to nothing or to themselves are
//! reported, and no more than [`MAX_SKILL_MD_BYTES`] is ever read.

use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::diagnostic::{Code, Diagnostic, Pos, Severity};
use crate::limits::MAX_SKILL_MD_BYTES;
use crate::validate::{self, Frontmatter, ValidationOptions};

/// The file every skill must have.
pub const SKILL_MD: &str = "SKILL.md";
/// Accepted with a warning (the reference validator accepts it too).
pub const SKILL_MD_LOWERCASE: &str = "skill.md";

/// Everything known about one skill after validation.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SkillReport {
    /// The skill folder.
    pub path: PathBuf,
    /// Its `SKILL.md`, when there is one.
    #[serde(skip)]
    pub skill_md: Option<PathBuf>,
    /// The skill's name (from the frontmatter, else the folder).
    pub name: Option<String>,
    /// True when there is no error.
    pub valid: bool,
    /// The typed frontmatter, when the YAML could be read.
    #[serde(skip)]
    pub frontmatter: Option<Frontmatter>,
    /// File line where the body starts.
    #[serde(skip)]
    pub body_line: u32,
    /// Every problem found, in file order.
    pub diagnostics: Vec<Diagnostic>,
}

impl SkillReport {
    fn failed(path: PathBuf, skill_md: Option<PathBuf>, d: Diagnostic) -> Self {
        let name = folder_name(&path);
        let mut r = SkillReport {
            path,
            skill_md,
            name,
            valid: false,
            frontmatter: None,
            body_line: 0,
            diagnostics: vec![d],
        };
        r.valid = !r.has_errors();
        r
    }

    /// True when any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// Number of warnings.
    pub fn warning_count(&self) -> usize {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Warning)
            .count()
    }
}

fn folder_name(path: &Path) -> Option<String> {
    path.file_name().map(|n| n.to_string_lossy().into_owned())
}

/// Validates the skill at `path`: a skill folder or its `SKILL.md`.
pub fn validate_path(path: &Path, options: &ValidationOptions) -> SkillReport {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) => {
            let d = if e.kind() == io::ErrorKind::NotFound {
                Diagnostic::new(
                    Code::PathNotFound,
                    Severity::Error,
                    format!("Path does not exist: {}", path.display()),
                )
            } else {
                io_diagnostic(path, &e)
            };
            return SkillReport::failed(path.to_path_buf(), None, d.in_file(path));
        }
    };
    let meta = if meta.file_type().is_symlink() {
        match std::fs::metadata(path) {
            Ok(m) => m,
            Err(e) => {
                let d = symlink_diagnostic(path, &e).in_file(path);
                return SkillReport::failed(path.to_path_buf(), None, d);
            }
        }
    } else {
        meta
    };
    if meta.is_dir() {
        return validate_dir(path, options);
    }
    let is_skill_md = path
        .file_name()
        .is_some_and(|n| n.to_string_lossy().eq_ignore_ascii_case(SKILL_MD));
    if is_skill_md {
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        return validate_file(&dir, path, options, Vec::new());
    }
    SkillReport::failed(
        path.to_path_buf(),
        None,
        Diagnostic::new(
            Code::NotADirectory,
            Severity::Error,
            format!("Not a directory: {}", path.display()),
        )
        .in_file(path)
        .with_help("pass a skill folder or its SKILL.md"),
    )
}

/// Validates a skill folder.
pub fn validate_dir(dir: &Path, options: &ValidationOptions) -> SkillReport {
    let upper = dir.join(SKILL_MD);
    if std::fs::symlink_metadata(&upper).is_ok() {
        return validate_file(dir, &upper, options, Vec::new());
    }
    let lower = dir.join(SKILL_MD_LOWERCASE);
    if std::fs::symlink_metadata(&lower).is_ok() {
        let warn = Diagnostic::new(
            Code::SkillMdLowercase,
            Severity::Warning,
            "skill file is named skill.md; the spec names it SKILL.md",
        )
        .in_file(&lower)
        .with_help("rename it to SKILL.md");
        return validate_file(dir, &lower, options, vec![warn]);
    }
    SkillReport::failed(
        dir.to_path_buf(),
        None,
        Diagnostic::new(
            Code::MissingSkillMd,
            Severity::Error,
            "Missing required file: SKILL.md",
        )
        .in_file(dir)
        .with_help(
            "create SKILL.md with `name` and `description` frontmatter (`skilldeck new NAME`)",
        ),
    )
}

fn validate_file(
    dir: &Path,
    file: &Path,
    options: &ValidationOptions,
    mut diagnostics: Vec<Diagnostic>,
) -> SkillReport {
    let text = match read_skill_md_capped(file, options.max_skill_md_bytes) {
        Ok(text) => text,
        Err(d) => {
            let mut r = SkillReport::failed(dir.to_path_buf(), Some(file.to_path_buf()), d);
            diagnostics.append(&mut r.diagnostics);
            r.diagnostics = diagnostics;
            return r;
        }
    };
    let checked = validate::check_text(&text, Some(dir), options);
    diagnostics.extend(checked.diagnostics.into_iter().map(|d| d.in_file(file)));
    let name = checked
        .frontmatter
        .as_ref()
        .and_then(|f| f.name.clone())
        .or_else(|| folder_name(dir));
    let valid = !diagnostics.iter().any(Diagnostic::is_error);
    SkillReport {
        path: dir.to_path_buf(),
        skill_md: Some(file.to_path_buf()),
        name,
        valid,
        frontmatter: checked.frontmatter,
        body_line: checked.body_line,
        diagnostics,
    }
}

/// Reads a `SKILL.md` with every safety check: regular file only (checked on
/// the open handle, so a swap after the first check is caught), at most
/// [`MAX_SKILL_MD_BYTES`], valid UTF-8. Errors carry the file.
pub fn read_skill_md(file: &Path) -> Result<String, Diagnostic> {
    read_skill_md_capped(file, MAX_SKILL_MD_BYTES)
}

/// [`read_skill_md`] with a custom size cap (bytes).
pub fn read_skill_md_capped(file: &Path, cap: u64) -> Result<String, Diagnostic> {
    read_text_capped(file, cap)
        .map(|(text, _)| text)
        .map_err(|d| d.in_file(file))
}

/// [`read_skill_md_capped`], also returning the metadata of the file that was
/// read (taken from the open handle before reading, so a later change to the
/// file always shows in a later `stat`).
pub(crate) fn read_skill_md_with_metadata(
    file: &Path,
    cap: u64,
) -> Result<(String, Metadata), Diagnostic> {
    read_text_capped(file, cap).map_err(|d| d.in_file(file))
}

/// Why [`open_regular_file`] refused or failed to open a file.
#[derive(Debug)]
pub(crate) enum OpenFailure {
    /// `stat` (following symlinks) failed: missing, dangling link, loop, ...
    Stat(io::Error),
    /// Not a regular file: what it is instead (`a FIFO`, `a folder`, ...).
    NotRegular(&'static str),
    /// Larger than the cap.
    TooLarge {
        /// Its size in bytes.
        size: u64,
        /// The cap in bytes.
        cap: u64,
    },
    /// `open` or `fstat` on the handle failed.
    Open(io::Error),
}

/// Opens `file` for reading only if it is a regular file no larger than
/// `cap`, checked before opening and again on the open handle. Never blocks:
/// a FIFO is refused by the first `stat`, and if one is swapped in before the
/// `open`, `O_NONBLOCK` keeps the open from waiting for a writer and the
/// `fstat` refuses it.
pub(crate) fn open_regular_file(file: &Path, cap: u64) -> Result<(File, Metadata), OpenFailure> {
    let meta = std::fs::metadata(file).map_err(OpenFailure::Stat)?;
    regular_within(&meta, cap)?;
    let handle: File = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(file)
        .map_err(OpenFailure::Open)?;
    let meta = handle.metadata().map_err(OpenFailure::Open)?;
    if let Some(kind) = non_regular_kind(&meta) {
        return Err(OpenFailure::NotRegular(kind));
    }
    Ok((handle, meta))
}

/// [`open_regular_file`] for a file its folder listing typed as a regular
/// file (`d_type`): that listing stands in for the `stat` before opening.
/// The open does not follow symlinks and does not block, and the handle is
/// checked as before, so a FIFO or device swapped in after the listing is
/// refused on the handle, and a symlink swapped in fails the open. Any
/// failure to open falls back to [`open_regular_file`], which reports it.
pub(crate) fn open_listed_regular_file(
    file: &Path,
    cap: u64,
) -> Result<(File, Metadata), OpenFailure> {
    let Ok(handle) = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_NOFOLLOW)
        .open(file)
    else {
        return open_regular_file(file, cap);
    };
    let meta = handle.metadata().map_err(OpenFailure::Open)?;
    regular_within(&meta, cap)?;
    Ok((handle, meta))
}

/// A regular file of at most `cap` bytes, or why not.
fn regular_within(meta: &Metadata, cap: u64) -> Result<(), OpenFailure> {
    if let Some(kind) = non_regular_kind(meta) {
        return Err(OpenFailure::NotRegular(kind));
    }
    if meta.len() > cap {
        return Err(OpenFailure::TooLarge {
            size: meta.len(),
            cap,
        });
    }
    Ok(())
}

/// [`open_regular_file`] with its failures as `SKILL.md` diagnostics.
pub(crate) fn open_regular(file: &Path, cap: u64) -> Result<(File, Metadata), Diagnostic> {
    open_regular_file(file, cap).map_err(|failure| open_diagnostic(file, failure))
}

fn open_diagnostic(file: &Path, failure: OpenFailure) -> Diagnostic {
    match failure {
        OpenFailure::Stat(e) => symlink_diagnostic(file, &e),
        OpenFailure::NotRegular(kind) => not_a_file(kind),
        OpenFailure::TooLarge { cap, .. } => too_large(cap),
        OpenFailure::Open(e) => io_diagnostic(file, &e),
    }
}

/// Reads the start of a `SKILL.md` up to the end of its closing `---` line
/// (or the whole file if it has none), in chunks, never more than the
/// frontmatter limit plus one chunk: discovery's read, which never loads
/// the body.
pub fn read_frontmatter_prefix(file: &Path, cap: u64) -> Result<String, Diagnostic> {
    let (handle, _) = open_regular(file, cap).map_err(|d| d.in_file(file))?;
    read_prefix_from(file, handle)
}

/// [`read_frontmatter_prefix`] for a file the folder listing typed as a
/// regular file: no `stat` before the open (see [`open_listed_regular_file`]).
pub fn read_listed_frontmatter_prefix(file: &Path, cap: u64) -> Result<String, Diagnostic> {
    let (handle, _) = open_listed_regular_file(file, cap)
        .map_err(|failure| open_diagnostic(file, failure).in_file(file))?;
    read_prefix_from(file, handle)
}

thread_local! {
    /// Each thread's read buffer for [`read_prefix_from`]: zeroed once, not
    /// once per file (a 4 KiB `memset` and `malloc` per skill otherwise).
    static READ_CHUNK: std::cell::RefCell<Box<[u8]>> = std::cell::RefCell::new(
        vec![0; crate::limits::FRONTMATTER_READ_CHUNK].into_boxed_slice(),
    );
}

fn read_prefix_from(file: &Path, handle: File) -> Result<String, Diagnostic> {
    READ_CHUNK.with(|cell| match cell.try_borrow_mut() {
        Ok(mut chunk) => read_prefix_into(file, handle, &mut chunk),
        Err(_) => read_prefix_into(
            file,
            handle,
            &mut vec![0; crate::limits::FRONTMATTER_READ_CHUNK],
        ),
    })
}

/// Reads chunks into `chunk` and keeps only what is needed: up to the end of
/// the closing delimiter line.
fn read_prefix_into(file: &Path, handle: File, chunk: &mut [u8]) -> Result<String, Diagnostic> {
    use crate::limits::{FRONTMATTER_READ_CHUNK, MAX_FRONTMATTER_BYTES};
    let limit = MAX_FRONTMATTER_BYTES + 2 * FRONTMATTER_READ_CHUNK;
    let mut bytes = Vec::new();
    let mut reader = handle.take(u64::try_from(limit).unwrap_or(u64::MAX));
    let mut scanned = 0;
    loop {
        let n = reader
            .read(chunk)
            .map_err(|e| io_diagnostic(file, &e).in_file(file))?;
        bytes.extend_from_slice(&chunk[..n]);
        if let Some(end) = closing_delimiter_end(&bytes, &mut scanned) {
            bytes.truncate(end);
            break;
        }
        if n == 0 {
            break;
        }
    }
    decode_utf8(bytes).map_err(|d| d.in_file(file))
}

/// The byte just past the closing `---` line, if `bytes` holds one. The
/// first line must be the opening delimiter; `scanned` remembers progress.
fn closing_delimiter_end(bytes: &[u8], scanned: &mut usize) -> Option<usize> {
    let first_end = memchr::memchr(b'\n', bytes)? + 1;
    let mut line_start = (*scanned).max(first_end);
    while let Some(i) = memchr::memchr(b'\n', &bytes[line_start..]) {
        let line = &bytes[line_start..line_start + i];
        let trimmed = line
            .iter()
            .rposition(|b| !matches!(b, b' ' | b'\t' | b'\r'))
            .map_or(&line[..0], |p| &line[..=p]);
        if trimmed == b"---" {
            return Some(line_start + i + 1);
        }
        line_start += i + 1;
    }
    *scanned = line_start;
    None
}

fn read_text_capped(file: &Path, cap: u64) -> Result<(String, Metadata), Diagnostic> {
    let (handle, meta) = open_regular(file, cap)?;
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len().min(cap)).unwrap_or(0));
    handle
        .take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| io_diagnostic(file, &e))?;
    check_size(u64::try_from(bytes.len()).unwrap_or(u64::MAX), cap)?;
    decode_utf8(bytes).map(|text| (text, meta))
}

fn decode_utf8(bytes: Vec<u8>) -> Result<String, Diagnostic> {
    String::from_utf8(bytes).map_err(|e| {
        let valid = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        let before = String::from_utf8_lossy(&bytes[..valid]);
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        Diagnostic::new(
            Code::NotUtf8,
            Severity::Error,
            format!("SKILL.md is not valid UTF-8 (invalid byte at offset {valid})"),
        )
        .at(Pos::new(
            u32::try_from(line).unwrap_or(u32::MAX),
            u32::try_from(column).unwrap_or(u32::MAX),
            1,
        ))
        .with_help("save the file as UTF-8")
    })
}

/// What a non-regular file is (`None` for a regular file).
pub(crate) fn non_regular_kind(meta: &Metadata) -> Option<&'static str> {
    if meta.is_file() {
        return None;
    }
    use std::os::unix::fs::FileTypeExt;
    let ft = meta.file_type();
    Some(if ft.is_dir() {
        "a folder"
    } else if ft.is_fifo() {
        "a FIFO"
    } else if ft.is_socket() {
        "a socket"
    } else if ft.is_block_device() || ft.is_char_device() {
        "a device"
    } else {
        "not a regular file"
    })
}

fn not_a_file(kind: &str) -> Diagnostic {
    Diagnostic::new(
        Code::NotAFile,
        Severity::Error,
        format!("SKILL.md is {kind}, not a regular file"),
    )
}

fn check_size(len: u64, cap: u64) -> Result<(), Diagnostic> {
    if len > cap {
        return Err(too_large(cap));
    }
    Ok(())
}

fn too_large(cap: u64) -> Diagnostic {
    Diagnostic::new(
        Code::FileTooLarge,
        Severity::Error,
        format!("SKILL.md is larger than the {cap} byte limit"),
    )
    .with_help("move long material into references/ files")
}

/// The error of following a symlink (or of `stat` in general).
fn symlink_diagnostic(path: &Path, e: &io::Error) -> Diagnostic {
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if is_link && e.kind() == io::ErrorKind::NotFound {
        let target = std::fs::read_link(path)
            .map(|t| t.display().to_string())
            .unwrap_or_default();
        return Diagnostic::new(
            Code::BrokenSymlink,
            Severity::Error,
            format!(
                "{} is a symlink to '{target}', which does not exist",
                path.display()
            ),
        );
    }
    if e.raw_os_error() == Some(libc::ELOOP) {
        return Diagnostic::new(
            Code::SymlinkLoop,
            Severity::Error,
            format!("{} is a symlink loop", path.display()),
        );
    }
    io_diagnostic(path, e)
}

fn io_diagnostic(path: &Path, e: &io::Error) -> Diagnostic {
    if e.raw_os_error() == Some(libc::ELOOP) {
        return symlink_diagnostic(path, e);
    }
    Diagnostic::new(
        Code::ReadError,
        Severity::Error,
        format!("cannot read {}: {e}", path.display()),
    )
}
