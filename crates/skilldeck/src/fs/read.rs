//! Bounded, non-blocking reads of skill files: a FIFO or device named
//! `SKILL.md` is never opened for a blocking read, symlinks to nothing or to
//! themselves are reported, and no more than the cap is ever read.

use std::cell::RefCell;
use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::thread::LocalKey;

use crate::diagnostic::{Code, Diagnostic, Pos, Severity};
use crate::limits::{KEPT_READ_BUFFER_BYTES, MAX_SKILL_MD_BYTES};

/// The file every skill must have.
pub const SKILL_MD: &str = "SKILL.md";
/// Accepted with a warning (the reference validator accepts it too).
pub const SKILL_MD_LOWERCASE: &str = "skill.md";

/// The path of the skill file `file` in `dir`, allocated at its length (a
/// deck holds one per skill).
pub(crate) fn skill_file_path(dir: &Path, file: &str) -> std::path::PathBuf {
    let mut path = std::path::PathBuf::with_capacity(dir.as_os_str().len() + 1 + file.len());
    path.push(dir);
    path.push(file);
    path
}

/// The folder of a skill file: its parent (`.` for a bare file name). A
/// byte slice for the usual `.../SKILL.md` (called on hot paths:
/// `Path::parent` parses components); `Path::parent` otherwise.
pub(crate) fn folder_of(skill_md: &Path) -> &Path {
    use std::os::unix::ffi::OsStrExt;
    let bytes = skill_md.as_os_str().as_bytes();
    for name in [SKILL_MD, SKILL_MD_LOWERCASE] {
        if let Some(dir) = bytes
            .strip_suffix(name.as_bytes())
            .and_then(|d| d.strip_suffix(b"/"))
            .filter(|d| !d.is_empty() && !d.ends_with(b"/"))
        {
            return Path::new(std::ffi::OsStr::from_bytes(dir));
        }
    }
    match skill_md.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
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

/// [`read_skill_md_capped`] for showing the file: bytes that are not UTF-8
/// become U+FFFD (one per invalid sequence, as diagnostics count columns),
/// so a diagnostic about them can quote its line.
pub fn read_skill_md_lossy(file: &Path, cap: u64) -> Result<String, Diagnostic> {
    read_skill_md_with_metadata(file, cap).map(|(text, _)| text)
}

/// Activation's read: [`read_skill_md_capped`], also returning the metadata
/// of the file that was read (taken from the open handle before reading, so
/// a later change to the file always shows in a later `stat`). Bytes that
/// are not UTF-8 become U+FFFD: discovery reads only the frontmatter (which
/// must be UTF-8) and lists the skill, so activation serves what it listed
/// rather than refusing it; `validate` still reports `not-utf8`.
pub(crate) fn read_skill_md_with_metadata(
    file: &Path,
    cap: u64,
) -> Result<(String, Metadata), Diagnostic> {
    let (handle, meta) = open_regular(file, cap).map_err(|d| d.in_file(file))?;
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len().min(cap)).unwrap_or(0));
    handle
        .take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| io_diagnostic(file, &e).in_file(file))?;
    check_size(u64::try_from(bytes.len()).unwrap_or(u64::MAX), cap).map_err(|d| d.in_file(file))?;
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    };
    Ok((text, meta))
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

/// [`open_listed_regular_file`] relative to the folder's open descriptor
/// (`dir`, where the listing found the file; `name` is the file's name in
/// it and `file` its whole path, for the fallback and its report): one
/// path component to look up instead of the whole path. The same flags and
/// the same check of the handle; any failure to open falls back to
/// [`open_regular_file`] on the whole path, which reports it.
pub(crate) fn open_listed_regular_file_at(
    dir: rustix::fd::BorrowedFd<'_>,
    name: &str,
    file: &Path,
    cap: u64,
) -> Result<(File, Metadata), OpenFailure> {
    use rustix::fs::{Mode, OFlags};
    let flags =
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let Ok(fd) = rustix::fs::openat(dir, name, flags, Mode::empty()) else {
        return open_regular_file(file, cap);
    };
    let handle = File::from(fd);
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
/// regular file: no `stat` before the open (see `open_listed_regular_file`).
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

/// How much of a `SKILL.md` discovery reads at most: the frontmatter limit
/// plus two chunks, so a frontmatter just over the limit is seen to be.
const FRONTMATTER_READ_LIMIT: usize =
    crate::limits::MAX_FRONTMATTER_BYTES + 2 * crate::limits::FRONTMATTER_READ_CHUNK;

/// Reads chunks into `chunk` and keeps only what is needed: up to the end of
/// the closing delimiter line.
fn read_prefix_into(file: &Path, handle: File, chunk: &mut [u8]) -> Result<String, Diagnostic> {
    let mut bytes = Vec::new();
    let mut reader = handle.take(u64::try_from(FRONTMATTER_READ_LIMIT).unwrap_or(u64::MAX));
    let mut scanned = 0;
    let closing = loop {
        let n = reader
            .read(chunk)
            .map_err(|e| io_diagnostic(file, &e).in_file(file))?;
        bytes.extend_from_slice(&chunk[..n]);
        if n == 0 {
            break None;
        }
        if let Some(end) = closing_delimiter_end(&bytes, &mut scanned) {
            break Some(end);
        }
    };
    frontmatter_text(bytes, closing, reader.limit() == 0).map_err(|d| d.in_file(file))
}

/// Discovery's text of a `SKILL.md`: `bytes` are the file's first bytes
/// (at most [`FRONTMATTER_READ_LIMIT`]; `limited`: the read stopped there,
/// the file may go on), `closing` the end of the closing `---` line in them
/// ([`closing_delimiter_end`]). Up to that end when there is one, else all
/// of them, as UTF-8 ([`decode_utf8`]: the first bad byte is the error).
fn frontmatter_text(
    mut bytes: Vec<u8>,
    closing: Option<usize>,
    limited: bool,
) -> Result<String, Diagnostic> {
    if let Some(end) = closing {
        bytes.truncate(end);
    } else if limited && let Ok(whole) = utf8_cut(&bytes, true) {
        // No closing line within the limit and the file goes on: the last
        // character may be cut in two. That is the frontmatter being too
        // long (the parser says so), not the file being other than UTF-8.
        let keep = whole.len();
        bytes.truncate(keep);
    }
    decode_utf8(bytes)
}

/// The frontmatter discovery reads from a `SKILL.md` whose bytes are
/// `bytes` (the whole file), as discovery reads it: validation of a file
/// that is not text checks it, so that `validate` names every error `list`
/// does. An error when discovery would stop at a bad byte too.
pub(crate) fn frontmatter_as_discovery_reads(bytes: &[u8]) -> Result<String, Diagnostic> {
    let read = &bytes[..bytes.len().min(FRONTMATTER_READ_LIMIT)];
    let closing = closing_delimiter_end(read, &mut 0);
    frontmatter_text(read.to_vec(), closing, read.len() == FRONTMATTER_READ_LIMIT)
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

/// Validation's read of a `SKILL.md`: what [`read_skill_md_capped`] gives,
/// passed to `f` as text borrowed from this thread's reusable buffer. A file
/// its folder listing typed as a regular file (`listed_regular`) is opened
/// without the `stat` before (see `open_listed_regular_file`). The file is
/// read as long as the open handle's `fstat` says, in one `read` (see
/// [`with_sized_read`]). With `at` (the open descriptor of the folder the
/// listing found it in, and its name there) a listed regular file is opened
/// relative to that folder. Errors carry the file.
pub(crate) fn with_skill_md_for_validation<T>(
    file: &Path,
    cap: u64,
    listed_regular: bool,
    at: Option<(rustix::fd::BorrowedFd<'_>, &str)>,
    f: impl FnOnce(Result<&str, Unreadable>) -> T,
) -> T {
    thread_local! {
        static BUFFER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    }
    let unreadable = |diagnostic: Diagnostic| Unreadable {
        diagnostic: diagnostic.in_file(file),
        frontmatter: None,
    };
    let opened = match (listed_regular, at) {
        (true, Some((dir, name))) => open_listed_regular_file_at(dir, name, file, cap)
            .map_err(|failure| open_diagnostic(file, failure)),
        (true, None) => {
            open_listed_regular_file(file, cap).map_err(|failure| open_diagnostic(file, failure))
        }
        (false, _) => open_regular(file, cap),
    };
    let (handle, meta) = match opened {
        Ok(opened) => opened,
        Err(d) => return f(Err(unreadable(d))),
    };
    with_sized_read(&BUFFER, handle, meta.len(), cap.saturating_add(1), |read| {
        let bytes = match read {
            Ok(bytes) => bytes,
            Err(e) => return f(Err(unreadable(io_diagnostic(file, &e)))),
        };
        if let Err(d) = check_size(u64::try_from(bytes.len()).unwrap_or(u64::MAX), cap) {
            return f(Err(unreadable(d)));
        }
        match check_utf8(bytes) {
            Ok(text) => f(Ok(text)),
            Err(d) => f(Err(Unreadable {
                frontmatter: frontmatter_as_discovery_reads(bytes).ok(),
                ..unreadable(d)
            })),
        }
    })
}

/// Why validation could not read a `SKILL.md` as text (the diagnostic
/// carries the file), and its frontmatter as discovery reads it, when that
/// is text: the first bad byte comes after it.
pub(crate) struct Unreadable {
    /// Why, in the file.
    pub(crate) diagnostic: Diagnostic,
    /// The frontmatter, for a file that is not text past it.
    pub(crate) frontmatter: Option<String>,
}

/// Calls `f` with the bytes of `handle`, at most `limit`, read into
/// `buffer`, this thread's reusable buffer (no allocation or zeroing per
/// file). `len` is the size the file's `stat` gave: the first `read` asks for
/// one byte more, and when it answers exactly `len` bytes the file is whole,
/// without a second `read` to see the end. A file that gives more than it
/// said (one growing meanwhile, or a `/proc` file, which says 0) is read on
/// up to `limit`, as `read_to_end` would. A file over
/// [`KEPT_READ_BUFFER_BYTES`], or a buffer already in use, gets a buffer of
/// its own.
pub(crate) fn with_sized_read<T>(
    buffer: &'static LocalKey<RefCell<Vec<u8>>>,
    handle: File,
    len: u64,
    limit: u64,
    f: impl FnOnce(io::Result<&[u8]>) -> T,
) -> T {
    let len = usize::try_from(len).unwrap_or(usize::MAX);
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    buffer.with(|cell| match cell.try_borrow_mut() {
        Ok(mut kept) if len < KEPT_READ_BUFFER_BYTES => {
            let read = read_into(&mut kept, handle, len, limit);
            let out = f(read.map(|n| &kept[..n]));
            if kept.len() > KEPT_READ_BUFFER_BYTES {
                kept.truncate(KEPT_READ_BUFFER_BYTES);
                kept.shrink_to_fit();
            }
            out
        }
        _ => {
            let mut own = Vec::new();
            let read = read_into(&mut own, handle, len, limit);
            f(read.map(|n| &own[..n]))
        }
    })
}

/// Reads at most `limit` bytes into the start of `buffer` (grown, zeroed,
/// only when too short) and returns how many: one `read` for a regular
/// file whose size is `len` (see [`with_sized_read`]).
fn read_into(
    buffer: &mut Vec<u8>,
    mut handle: File,
    len: usize,
    limit: usize,
) -> io::Result<usize> {
    let mut want = len.saturating_add(1).min(limit);
    let mut filled = 0;
    loop {
        if filled == want {
            if want >= limit {
                break;
            }
            // More than the `stat` said: read on, up to the limit.
            want = want.saturating_mul(2).min(limit);
        }
        if buffer.len() < want {
            buffer.resize(want, 0);
        }
        match handle.read(&mut buffer[filled..want]) {
            Ok(0) => break,
            Ok(n) => {
                filled += n;
                if filled == len && filled < want {
                    // Exactly the size the `stat` gave, and a short answer:
                    // the end.
                    break;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
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
    String::from_utf8(bytes).map_err(|e| not_utf8(e.as_bytes(), e.utf8_error()))
}

/// [`decode_utf8`] for borrowed bytes.
fn check_utf8(bytes: &[u8]) -> Result<&str, Diagnostic> {
    utf8(bytes).map_err(|e| not_utf8(bytes, e))
}

/// [`utf8`] for the start of a file that a read limit may have cut (`cut`:
/// the read stopped at its limit, not at the end of the file). A last
/// character the limit split in two is left out, since the rest of it was
/// never read; any other invalid byte is an error, as in [`utf8`].
pub(crate) fn utf8_cut(bytes: &[u8], cut: bool) -> Result<&str, std::str::Utf8Error> {
    match utf8(bytes) {
        // `error_len` is `None` only for a sequence the input's end cuts.
        Err(e) if cut && e.error_len().is_none() => utf8(&bytes[..e.valid_up_to()]),
        other => other,
    }
}

/// `std::str::from_utf8`, with the check of valid text done by SIMD
/// (`simdutf8`, several times fewer instructions per byte); std's check runs
/// only on invalid text, for the error's offset.
pub(crate) fn utf8(bytes: &[u8]) -> Result<&str, std::str::Utf8Error> {
    simdutf8::basic::from_utf8(bytes).or_else(|_| std::str::from_utf8(bytes))
}

/// The error for a NUL byte at `offset` of `text` (a `SKILL.md`'s bytes,
/// after a byte order mark), at its line and character column. A text
/// file has none.
pub(crate) fn nul_byte(text: &[u8], offset: usize) -> Diagnostic {
    Diagnostic::new(
        Code::NulByte,
        Severity::Error,
        "SKILL.md contains a NUL byte; it is not a text file",
    )
    .at(Pos {
        len: 1,
        ..Pos::of_offset(text, offset)
    })
}

/// The error for bytes that are not UTF-8 where `e` says. The first bad
/// byte is the one reported: a NUL before the invalid byte is reported
/// instead, as a read of the frontmatter alone (discovery's) sees it, so
/// `list` and `validate` name the same problem.
fn not_utf8(bytes: &[u8], e: std::str::Utf8Error) -> Diagnostic {
    let valid = e.valid_up_to();
    let text = bytes[..valid]
        .strip_prefix("\u{FEFF}".as_bytes())
        .unwrap_or(&bytes[..valid]);
    if let Some(nul) = memchr::memchr(0, text) {
        return nul_byte(text, nul);
    }
    Diagnostic::new(
        Code::NotUtf8,
        Severity::Error,
        format!("SKILL.md is not valid UTF-8 (invalid byte at offset {valid})"),
    )
    .at(Pos {
        len: 1,
        ..Pos::of_offset(bytes, valid)
    })
    .with_help("save the file as UTF-8")
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
pub(crate) fn symlink_diagnostic(path: &Path, e: &io::Error) -> Diagnostic {
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

pub(crate) fn io_diagnostic(path: &Path, e: &io::Error) -> Diagnostic {
    if e.raw_os_error() == Some(libc::ELOOP) {
        return symlink_diagnostic(path, e);
    }
    Diagnostic::new(
        Code::ReadError,
        Severity::Error,
        format!("cannot read {}: {e}", path.display()),
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    thread_local! {
        static TEST_BUFFER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    }

    #[test]
    fn only_a_character_the_read_limit_cut_is_left_out() {
        let text = "ab€".as_bytes();
        // The limit cut the euro sign after one or two of its three bytes.
        for cut_at in [3, 4] {
            assert_eq!(utf8_cut(&text[..cut_at], true).unwrap(), "ab");
            // Not cut by a limit: the file ends there, and that is an error.
            assert!(utf8_cut(&text[..cut_at], false).is_err());
        }
        assert_eq!(utf8_cut(text, true).unwrap(), "ab€");
        // An invalid byte before the end is an error, cut or not.
        assert!(utf8_cut(b"a\xffb", true).is_err());
        assert!(utf8_cut(b"a\xff\xe2\x82", true).is_err());
    }

    fn sized_read(file: &Path, len: u64, limit: u64) -> Vec<u8> {
        let handle = File::open(file).unwrap();
        with_sized_read(&TEST_BUFFER, handle, len, limit, |read| {
            read.unwrap().to_vec()
        })
    }

    #[test]
    fn a_file_that_says_it_is_empty_is_read_to_its_end() {
        // `/proc` files report size 0 and hold text.
        let whole = std::fs::read("/proc/self/status").unwrap();
        assert!(!whole.is_empty());
        let read = sized_read(Path::new("/proc/self/status"), 0, 1 << 20);
        assert!(read.starts_with(b"Name:"), "{read:?}");
    }

    #[test]
    fn a_file_longer_than_its_stat_said_is_read_on_to_the_limit() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("f");
        std::fs::write(&file, vec![b'x'; 10_000]).unwrap();
        assert_eq!(sized_read(&file, 10_000, 20_000).len(), 10_000);
        // The size given is too small (the file grew after its `stat`).
        assert_eq!(sized_read(&file, 100, 20_000).len(), 10_000);
        // Never past the limit.
        assert_eq!(sized_read(&file, 100, 5_000).len(), 5_000);
        // A file that shrank is read to its end.
        assert_eq!(sized_read(&file, 15_000, 20_000).len(), 10_000);
    }

    /// The fast path is an optimisation only: every skill file's folder is
    /// what `Path::parent` says, compared as paths.
    #[test]
    fn the_folder_of_a_skill_file_is_its_parent() {
        for (file, folder) in [
            ("/r/s/SKILL.md", "/r/s"),
            ("/r/s/skill.md", "/r/s"),
            ("r/SKILL.md", "r"),
            ("SKILL.md", "."),
            ("/SKILL.md", "/"),
            ("/r//SKILL.md", "/r"),
            ("/r/s/NOTSKILL.md", "/r/s"),
            ("/r/s/other.md", "/r/s"),
            ("./SKILL.md", "."),
        ] {
            let found = folder_of(Path::new(file));
            assert_eq!(found, Path::new(folder), "{file}");
        }
        let made = skill_file_path(Path::new("/r/s"), SKILL_MD);
        assert_eq!(made, Path::new("/r/s/SKILL.md"));
        assert_eq!(made.capacity(), made.as_os_str().len());
    }
}
