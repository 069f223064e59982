//! Safe unpack: an archive, entry by entry, into a staging folder.
//!
//! Nothing is written outside the staging folder: every path is checked
//! ([`check_entry_path`]) before anything is created, links and special
//! entries are refused (never created), files are created with
//! `create_new` (never through an existing name), and the staging folder
//! holds only folders this code made. Counts, bytes and the compression
//! ratio are checked as the archive streams, so a bomb stops early.

use std::cell::Cell;
use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// The help line of a link inside an archive.
const LINK_IN_ARCHIVE_HELP: &str = "make the package from the skill folder with `skilldeck pack DIR` \
     or `skilldeck publish DIR`: a link to a file inside the skill becomes that file's content, \
     a link leaving the skill is refused";

use skilldeck::{
    Code, Diagnostic, DigestWriter, FileDigest, Frontmatter, SkillManifest, ValidationOptions,
};

use crate::error::Error;
use crate::limits::{PackageLimits, RATIO_FLOOR_BYTES};
use crate::pack::{ArchiveFormat, metadata_version};
use crate::path::{NameSet, check_entry_path, is_safe_skill_dir_name, refusal};

/// Bytes copied at a time.
const CHUNK: usize = 64 * 1024;

/// The folder inside the staging folder entries are written to.
const TREE: &str = ".tree";

/// How to unpack.
#[derive(Debug, Clone)]
pub struct UnpackOptions {
    /// Counts, bytes, ratio.
    pub limits: PackageLimits,
    /// Validation of the unpacked skill (by default lenient without the
    /// advisory lints: what a host can load; an error refuses).
    pub validation: ValidationOptions,
}

impl Default for UnpackOptions {
    fn default() -> Self {
        UnpackOptions {
            limits: PackageLimits::default(),
            validation: ValidationOptions {
                lints: false,
                ..ValidationOptions::lenient()
            },
        }
    }
}

/// A skill unpacked and validated in a staging folder.
#[derive(Debug, Clone)]
pub struct Unpacked {
    /// The skill folder (inside the staging folder, named like the skill).
    pub dir: PathBuf,
    /// The skill's name.
    pub name: String,
    /// Its `metadata.version`, when it has one.
    pub version: Option<String>,
    /// Every file with its digest.
    pub manifest: SkillManifest,
    /// The skill's frontmatter, from the one validation of the folder.
    pub frontmatter: Option<Frontmatter>,
    /// The warnings of that validation (errors refuse), naming files
    /// inside [`dir`](Unpacked::dir).
    pub warnings: Vec<Diagnostic>,
}

/// A package unpacked from memory ([`unpack_bytes`]): the skill as
/// [`unpack`] makes it, with every file's bytes as they streamed past
/// their digest.
#[derive(Debug, Clone)]
pub struct UnpackedBytes {
    /// The skill unpacked, hashed and validated.
    pub unpacked: Unpacked,
    /// The bytes of each file of `unpacked.manifest`, in its order.
    pub contents: Vec<Vec<u8>>,
}

/// Unpacks the archive `package` (tar.gz or zip, told by its first bytes)
/// into `staging`, which must not exist yet (it is created), then checks
/// the layout and validates the skill. On error the staging folder may hold
/// part of the package: the caller removes it.
pub fn unpack(package: &Path, staging: &Path, options: &UnpackOptions) -> Result<Unpacked, Error> {
    let mut head = [0u8; 4];
    let n = fs::File::open(package)
        .and_then(|mut f| read_up_to(&mut f, &mut head))
        .map_err(|e| Error::io(package, e))?;
    let format = sniff(package, &head[..n])?;
    let open = || {
        fs::File::open(package)
            .map(io::BufReader::new)
            .map_err(|e| Error::io(package, e))
    };
    let mut sink = Sink::new(package, staging, options, false)?;
    match format {
        ArchiveFormat::TarGz => unpack_tar_gz(open()?, &mut sink)?,
        ArchiveFormat::Zip => unpack_zip(open()?, &mut sink)?,
    }
    sink.finish(staging, options).map(|(unpacked, _)| unpacked)
}

/// [`unpack`] of a package held in memory (an upload), read once: each
/// entry streams into its file under `staging` and past its digest, and
/// its bytes are kept (a caller that stores them reads nothing again).
/// `shown` names the package in refusals. The limits, refusals and
/// validation are [`unpack`]'s.
pub fn unpack_bytes(
    body: &[u8],
    shown: &Path,
    staging: &Path,
    options: &UnpackOptions,
) -> Result<UnpackedBytes, Error> {
    let format = sniff(shown, &body[..body.len().min(4)])?;
    let mut sink = Sink::new(shown, staging, options, true)?;
    match format {
        ArchiveFormat::TarGz => unpack_tar_gz(body, &mut sink)?,
        ArchiveFormat::Zip => unpack_zip(io::Cursor::new(body), &mut sink)?,
    }
    let (unpacked, mut kept) = sink.finish(staging, options)?;
    let contents = unpacked
        .manifest
        .files()
        .iter()
        .map(|f| kept.remove(&f.path).unwrap_or_default())
        .collect();
    Ok(UnpackedBytes { unpacked, contents })
}

fn sniff(package: &Path, head: &[u8]) -> Result<ArchiveFormat, Error> {
    ArchiveFormat::sniff(head).ok_or_else(|| {
        Error::refused(
            skilldeck::Diagnostic::new(
                Code::PackageFormat,
                skilldeck::Severity::Error,
                "not a package: neither a tar.gz nor a zip",
            )
            .in_file(package),
        )
    })
}

fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// Where entries go, with the running counts.
struct Sink {
    package: PathBuf,
    tree: PathBuf,
    limits: PackageLimits,
    names: NameSet,
    files: Vec<FileDigest>,
    entries: usize,
    total: u64,
    /// Folders this unpack created (or found made) under `tree`: a file's
    /// parent is created once, not asked for again for every file.
    made: std::collections::HashSet<PathBuf>,
    /// The copy buffer, reused across entries.
    buf: Vec<u8>,
    /// Each file's bytes by its path in the archive, when kept.
    kept: Option<std::collections::HashMap<String, Vec<u8>>>,
}

impl Sink {
    /// Creates `staging` and its tree folder.
    fn new(
        package: &Path,
        staging: &Path,
        options: &UnpackOptions,
        keep: bool,
    ) -> Result<Sink, Error> {
        fs::create_dir(staging).map_err(|e| Error::io(staging, e))?;
        let tree = staging.join(TREE);
        fs::create_dir(&tree).map_err(|e| Error::io(&tree, e))?;
        Ok(Sink {
            package: package.to_path_buf(),
            tree: tree.clone(),
            limits: options.limits,
            names: NameSet::default(),
            files: Vec::new(),
            entries: 0,
            total: 0,
            made: std::iter::once(tree).collect(),
            buf: Vec::new(),
            kept: keep.then(std::collections::HashMap::new),
        })
    }

    /// Finds the skill among the files written, validates it (once) and
    /// hands back what was kept, by path inside the skill.
    fn finish(
        mut self,
        staging: &Path,
        options: &UnpackOptions,
    ) -> Result<(Unpacked, std::collections::HashMap<String, Vec<u8>>), Error> {
        let files = std::mem::take(&mut self.files);
        let (unpacked, top) = finish_staged(
            &self.package,
            staging,
            &self.tree,
            files,
            &options.validation,
        )?;
        let kept = self
            .kept
            .take()
            .unwrap_or_default()
            .into_iter()
            .map(|(path, bytes)| {
                let inner = match &top {
                    Some(top) => path
                        .strip_prefix(top.as_str())
                        .and_then(|p| p.strip_prefix('/'))
                        .unwrap_or(&path)
                        .to_owned(),
                    None => path,
                };
                (inner, bytes)
            })
            .collect();
        Ok((unpacked, kept))
    }

    fn refuse(&self, code: Code, entry: &str, why: &str) -> Error {
        Error::refused(refusal(code, &self.package, entry, why))
    }

    /// A link inside an archive: refused (an archive's link is never
    /// followed), saying how to make a package of the folder instead.
    fn refuse_link(&self, entry: &str, why: &str) -> Error {
        Error::refused(
            refusal(Code::PackageLink, &self.package, entry, why).with_help(LINK_IN_ARCHIVE_HELP),
        )
    }

    fn count_entry(&mut self, shown: &str) -> Result<(), Error> {
        self.entries += 1;
        if self.entries > self.limits.max_entries {
            return Err(self.refuse(
                Code::PackageTooManyFiles,
                shown,
                &format!("more than {} entries", self.limits.max_entries),
            ));
        }
        Ok(())
    }

    fn path(&self, raw: &[u8]) -> Result<String, Error> {
        let shown = String::from_utf8_lossy(raw);
        check_entry_path(raw).map_err(|why| self.refuse(Code::PackageUnsafePath, &shown, why))
    }

    fn dir(&mut self, raw: &[u8]) -> Result<(), Error> {
        let path = self.path(raw)?;
        self.count_entry(&path)?;
        self.names
            .add_dir(&path)
            .map_err(|why| self.refuse(Code::PackageDuplicate, &path, why))?;
        let full = self.tree.join(&path);
        fs::create_dir_all(&full).map_err(|e| Error::io(&full, e))?;
        self.made.insert(full);
        Ok(())
    }

    /// Writes one file entry; `consumed` tells how many compressed bytes
    /// were read so far (for the ratio bound).
    fn file(
        &mut self,
        raw: &[u8],
        executable: bool,
        reader: &mut dyn Read,
        consumed: &dyn Fn() -> u64,
    ) -> Result<(), Error> {
        let path = self.path(raw)?;
        self.count_entry(&path)?;
        self.names
            .add_file(&path)
            .map_err(|why| self.refuse(Code::PackageDuplicate, &path, why))?;
        if self.files.len() >= self.limits.max_files {
            return Err(self.refuse(
                Code::PackageTooManyFiles,
                &path,
                &format!("more than {} files", self.limits.max_files),
            ));
        }
        let full = self.tree.join(&path);
        if let Some(parent) = full.parent()
            && !self.made.contains(parent)
        {
            fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
            self.made.insert(parent.to_path_buf());
        }
        let mut out = create_new(&full, executable).map_err(|e| Error::io(&full, e))?;
        let mut digest = DigestWriter::new();
        let mut kept = self.kept.is_some().then(Vec::new);
        let mut buf = std::mem::take(&mut self.buf);
        buf.resize(CHUNK, 0);
        let result = self.copy_entry(
            &path,
            &full,
            reader,
            consumed,
            &mut out,
            &mut digest,
            kept.as_mut(),
            &mut buf,
        );
        self.buf = buf;
        result?;
        let size = digest.len();
        if let (Some(map), Some(bytes)) = (self.kept.as_mut(), kept) {
            map.insert(path.clone(), bytes);
        }
        self.files.push(FileDigest {
            path,
            size,
            sha256: digest.finish(),
            executable,
        });
        Ok(())
    }

    /// Streams one entry's data to `out` and `digest` within the limits.
    #[allow(clippy::too_many_arguments)]
    fn copy_entry(
        &mut self,
        path: &str,
        full: &Path,
        reader: &mut dyn Read,
        consumed: &dyn Fn() -> u64,
        out: &mut fs::File,
        digest: &mut DigestWriter,
        mut kept: Option<&mut Vec<u8>>,
        buf: &mut [u8],
    ) -> Result<(), Error> {
        loop {
            let n = match reader.read(buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(self.refuse(
                        Code::PackageTruncated,
                        path,
                        &format!("the archive is truncated or corrupt ({e})"),
                    ));
                }
            };
            self.total += n as u64;
            if self.total > self.limits.max_bytes {
                return Err(self.refuse(
                    Code::PackageTooLarge,
                    path,
                    &format!("more than {} bytes unpacked", self.limits.max_bytes),
                ));
            }
            let read = consumed().max(1);
            if self.total > RATIO_FLOOR_BYTES && self.total / read > self.limits.max_ratio {
                return Err(self.refuse(
                    Code::PackageRatio,
                    path,
                    &format!(
                        "{} bytes unpacked from {read} compressed: over the {}:1 bound",
                        self.total, self.limits.max_ratio
                    ),
                ));
            }
            out.write_all(&buf[..n]).map_err(|e| Error::io(full, e))?;
            if let Some(kept) = kept.as_mut() {
                kept.extend_from_slice(&buf[..n]);
            }
            digest
                .write_all(&buf[..n])
                .map_err(|e| Error::io(full, e))?;
        }
        Ok(())
    }
}

fn create_new(path: &Path, executable: bool) -> io::Result<fs::File> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(if executable { 0o755 } else { 0o644 });
    }
    #[cfg(not(unix))]
    let _ = executable;
    options.open(path)
}

/// A reader that counts the bytes read through it.
struct Counting<R> {
    inner: R,
    count: Rc<Cell<u64>>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.set(self.count.get() + n as u64);
        Ok(n)
    }
}

fn truncated(sink: &Sink, entry: &str, e: &dyn std::fmt::Display) -> Error {
    sink.refuse(
        Code::PackageTruncated,
        entry,
        &format!("the archive is truncated or corrupt ({e})"),
    )
}

fn unpack_tar_gz(source: impl Read, sink: &mut Sink) -> Result<(), Error> {
    let count = Rc::new(Cell::new(0u64));
    let gz = flate2::read::GzDecoder::new(Counting {
        inner: source,
        count: Rc::clone(&count),
    });
    let mut archive = tar::Archive::new(gz);
    let consumed = || count.get();
    let mut last = String::from("(start)");
    {
        let entries = archive.entries().map_err(|e| truncated(sink, &last, &e))?;
        for entry in entries {
            let mut entry = entry.map_err(|e| truncated(sink, &last, &e))?;
            let raw = entry.path_bytes().into_owned();
            last = String::from_utf8_lossy(&raw).into_owned();
            let kind = entry.header().entry_type();
            match kind {
                tar::EntryType::Regular | tar::EntryType::Continuous => {
                    let executable = entry
                        .header()
                        .mode()
                        .map(|m| m & 0o111 != 0)
                        .unwrap_or(false);
                    sink.file(&raw, executable, &mut entry, &consumed)?;
                }
                tar::EntryType::Directory => sink.dir(&raw)?,
                // A pax global header (`git archive` writes one with the
                // commit id) describes the archive, not a file.
                tar::EntryType::XGlobalHeader => sink.count_entry(&last)?,
                tar::EntryType::Symlink | tar::EntryType::Link => {
                    let target = entry
                        .link_name_bytes()
                        .map(|t| String::from_utf8_lossy(&t).into_owned())
                        .unwrap_or_default();
                    return Err(sink.refuse_link(
                        &last,
                        &format!(
                            "a {} to \"{}\" (packages hold regular files only)",
                            if kind == tar::EntryType::Symlink {
                                "symlink"
                            } else {
                                "hardlink"
                            },
                            target.escape_debug()
                        ),
                    ));
                }
                _ => {
                    return Err(sink.refuse(
                        Code::PackageSpecialFile,
                        &last,
                        "not a regular file or folder (device, FIFO or another tar entry type)",
                    ));
                }
            }
        }
    }
    // Read the gzip stream to its end, so its length and CRC are checked:
    // an archive cut at an entry boundary is refused too. What follows the
    // tar end marker counts against the byte budget.
    let mut gz = archive.into_inner();
    let mut rest = (&mut gz).take(sink.limits.max_bytes.saturating_add(1));
    let trailing = io::copy(&mut rest, &mut io::sink()).map_err(|e| truncated(sink, &last, &e))?;
    if trailing > sink.limits.max_bytes {
        return Err(sink.refuse(
            Code::PackageTooLarge,
            &last,
            "too many bytes after the end of the archive",
        ));
    }
    Ok(())
}

fn unpack_zip(source: impl Read + io::Seek, sink: &mut Sink) -> Result<(), Error> {
    let mut archive =
        zip::ZipArchive::new(source).map_err(|e| zip_error(sink, "(central directory)", &e))?;
    if archive.len() > sink.limits.max_entries {
        return Err(sink.refuse(
            Code::PackageTooManyFiles,
            "(central directory)",
            &format!(
                "{} entries; the limit is {}",
                archive.len(),
                sink.limits.max_entries
            ),
        ));
    }
    if archive.has_duplicate_names() {
        return Err(sink.refuse(
            Code::PackageDuplicate,
            "(central directory)",
            "two entries with the same name",
        ));
    }
    let mut consumed_before = 0u64;
    for i in 0..archive.len() {
        let mut entry = archive
            .by_index(i)
            .map_err(|e| zip_error(sink, &format!("#{i}"), &e))?;
        let raw = entry.name_raw().to_vec();
        let shown = String::from_utf8_lossy(&raw).into_owned();
        let unix = entry.unix_mode();
        let file_type = unix.map(|m| m & 0o170000);
        if entry.is_symlink() || file_type == Some(0o120000) {
            return Err(sink.refuse_link(&shown, "a symlink (packages hold regular files only)"));
        }
        if entry.is_dir() {
            sink.dir(&raw)?;
            continue;
        }
        if matches!(file_type, Some(t) if t != 0 && t != 0o100000) {
            return Err(sink.refuse(
                Code::PackageSpecialFile,
                &shown,
                "not a regular file or folder (device, FIFO or socket)",
            ));
        }
        if entry.enclosed_name().is_none() {
            return Err(sink.refuse(
                Code::PackageUnsafePath,
                &shown,
                "the path leaves the package",
            ));
        }
        let executable = unix.is_some_and(|m| m & 0o111 != 0);
        // The entry's data is read through its compressed size: the ratio
        // is over what the entries so far declared and were read within.
        let consumed = consumed_before
            .saturating_add(entry.compressed_size())
            .saturating_add(raw.len() as u64 + 30);
        sink.file(&raw, executable, &mut entry, &|| consumed)?;
        consumed_before = consumed;
    }
    Ok(())
}

fn zip_error(sink: &Sink, entry: &str, e: &zip::result::ZipError) -> Error {
    use zip::result::ZipError;
    match e {
        ZipError::UnsupportedArchive(what) => sink.refuse(
            Code::PackageFormat,
            entry,
            &format!("unsupported zip feature: {what}"),
        ),
        _ => truncated(sink, entry, e),
    }
}

/// Finds the one skill among the files written under `tree` (listed in
/// `files`), puts it at `staging/<name>` and validates it. Also returns
/// the top folder the skill was in inside the archive, if any.
pub(crate) fn finish_staged(
    package: &Path,
    staging: &Path,
    tree: &Path,
    files: Vec<FileDigest>,
    validation: &ValidationOptions,
) -> Result<(Unpacked, Option<String>), Error> {
    let layout = |why: &str| {
        Error::refused(
            skilldeck::Diagnostic::new(
                Code::PackageLayout,
                skilldeck::Severity::Error,
                format!("not exactly one skill: {why}"),
            )
            .in_file(package),
        )
    };
    let (skill_dir, top, files) = if files.iter().any(|f| f.path == "SKILL.md") {
        (tree.to_path_buf(), None, files)
    } else {
        let mut tops: Vec<&str> = files
            .iter()
            .map(|f| f.path.split('/').next().unwrap_or_default())
            .collect();
        tops.dedup();
        tops.sort_unstable();
        tops.dedup();
        let [top] = tops.as_slice() else {
            return Err(layout(if tops.is_empty() {
                "the package holds no file"
            } else {
                "no SKILL.md at the root, and more than one top folder"
            }));
        };
        let top = (*top).to_owned();
        let prefix = format!("{top}/");
        if !files.iter().any(|f| f.path == format!("{top}/SKILL.md")) {
            return Err(layout(&format!("no SKILL.md at the root or in \"{top}/\"")));
        }
        let files = files
            .into_iter()
            .map(|mut f| {
                f.path = f.path.strip_prefix(&prefix).unwrap_or(&f.path).to_owned();
                f
            })
            .collect();
        (tree.join(&top), Some(top), files)
    };
    let manifest = SkillManifest::new(files);
    // The skill's name, from its frontmatter (read once here; the full
    // validation runs on the folder once it has that name).
    let text = skilldeck::fs::read_skill_md(&skill_dir.join("SKILL.md"))
        .map_err(|d| Error::Refused(vec![d]))?;
    let quick = ValidationOptions {
        lints: false,
        ..ValidationOptions::lenient()
    };
    let checked = skilldeck::check_text(&text, None, &quick);
    let fm = checked.frontmatter.as_ref();
    let name = fm.and_then(|f| f.name.clone()).unwrap_or_default();
    if !is_safe_skill_dir_name(&name) {
        let mut errors: Vec<_> = checked
            .diagnostics
            .into_iter()
            .filter(|d| d.is_error())
            .map(|d| d.in_file(skill_dir.join("SKILL.md")))
            .collect();
        if errors.is_empty() {
            return Err(layout(&format!(
                "the skill's name \"{}\" cannot be a folder name",
                name.escape_debug()
            )));
        }
        errors.truncate(8);
        return Err(Error::Refused(errors));
    }
    if let Some(top) = &top
        && *top != name
    {
        return Err(layout(&format!(
            "the top folder \"{}\" is not the skill's name \"{name}\"",
            top.escape_debug()
        )));
    }
    let version = fm.and_then(metadata_version);
    let dir = staging.join(&name);
    fs::rename(&skill_dir, &dir).map_err(|e| Error::io(&dir, e))?;
    let report = skilldeck::validate_dir(&dir, validation);
    let (errors, warnings): (Vec<_>, Vec<_>) = report
        .diagnostics
        .into_iter()
        .partition(Diagnostic::is_error);
    if !errors.is_empty() {
        return Err(Error::Refused(errors));
    }
    Ok((
        Unpacked {
            dir,
            name,
            version,
            manifest,
            frontmatter: report.frontmatter,
            warnings,
        },
        top,
    ))
}
