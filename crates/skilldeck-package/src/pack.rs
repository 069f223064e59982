//! `pack`: a skill folder into a deterministic tar.gz or zip.
//!
//! The same files give the same bytes: entries sorted by path, one file
//! entry per file (no folder entries), modes 0644 or 0755 (the executable
//! bit kept), owner and group 0 with no names, every time
//! [`PACKAGE_MTIME`], gzip header without name or time, a fixed
//! compression level, and the skill's name as the single top folder.

use std::io::Write;
use std::path::{Path, PathBuf};

use skilldeck::{Code, Diagnostic, Digest, FileDigest, SkillManifest, ValidationOptions};

use crate::error::Error;
use crate::folder::{folder_files, read_file};
use crate::limits::{PACKAGE_MTIME, PackageLimits};
use crate::path::{is_safe_skill_dir_name, refusal};

/// Deflate level of both formats (zlib's default; fixed so bytes repeat).
pub const COMPRESSION_LEVEL: u32 = 6;

/// An archive format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArchiveFormat {
    /// gzip-compressed tar (`.tar.gz`, `.tgz`).
    TarGz,
    /// zip with deflate.
    Zip,
}

impl ArchiveFormat {
    /// The usual file extension (`tar.gz`, `zip`).
    pub fn extension(self) -> &'static str {
        match self {
            ArchiveFormat::TarGz => "tar.gz",
            ArchiveFormat::Zip => "zip",
        }
    }

    /// The format named `text` (`tar.gz`, `tgz`, `zip`).
    pub fn parse(text: &str) -> Option<ArchiveFormat> {
        match text {
            "tar.gz" | "tgz" => Some(ArchiveFormat::TarGz),
            "zip" => Some(ArchiveFormat::Zip),
            _ => None,
        }
    }

    /// The format of an archive, from its first bytes (gzip `1f 8b`, zip
    /// `PK\x03\x04` or an empty zip's `PK\x05\x06`).
    pub fn sniff(head: &[u8]) -> Option<ArchiveFormat> {
        if head.starts_with(&[0x1f, 0x8b]) {
            Some(ArchiveFormat::TarGz)
        } else if head.starts_with(b"PK\x03\x04") || head.starts_with(b"PK\x05\x06") {
            Some(ArchiveFormat::Zip)
        } else {
            None
        }
    }
}

/// How to pack.
#[derive(Debug, Clone)]
pub struct PackOptions {
    /// The archive format.
    pub format: ArchiveFormat,
    /// Validation before packing (strict by default; an error refuses).
    pub validation: ValidationOptions,
    /// The limits install applies: a package install would refuse is not
    /// written.
    pub limits: PackageLimits,
}

impl Default for PackOptions {
    fn default() -> Self {
        PackOptions {
            format: ArchiveFormat::TarGz,
            validation: ValidationOptions::strict(),
            limits: PackageLimits::default(),
        }
    }
}

/// What `pack` made.
#[derive(Debug, Clone)]
pub struct Packed {
    /// The skill's name (the archive's top folder).
    pub name: String,
    /// The skill's `metadata.version`, when it has one.
    pub version: Option<String>,
    /// Every file with its digest.
    pub manifest: SkillManifest,
    /// The archive's bytes.
    pub bytes: Vec<u8>,
    /// Warnings validation reported (errors refuse).
    pub warnings: Vec<Diagnostic>,
}

impl Packed {
    /// The content fingerprint.
    pub fn fingerprint(&self) -> Digest {
        self.manifest.fingerprint()
    }
}

/// Validates the skill folder `dir` and packs it in memory (a package is at
/// most [`PackageLimits::max_bytes`] unpacked).
pub fn pack(dir: &Path, options: &PackOptions) -> Result<Packed, Error> {
    let (packed, _) = pack_parts(dir, options)?;
    Ok(packed)
}

/// [`pack`], with each file's bytes (in the manifest's order) for a
/// caller that archives them again in another layout
/// ([`archive_at_root`]).
pub(crate) fn pack_parts(
    dir: &Path,
    options: &PackOptions,
) -> Result<(Packed, Vec<Vec<u8>>), Error> {
    let report = skilldeck::validate_dir(dir, &options.validation);
    let (errors, warnings): (Vec<_>, Vec<_>) = report
        .diagnostics
        .into_iter()
        .partition(Diagnostic::is_error);
    if !errors.is_empty() {
        return Err(Error::Refused(errors));
    }
    let fm = report.frontmatter.as_ref();
    let name = fm
        .and_then(|f| f.name.clone())
        .or(report.name)
        .unwrap_or_default();
    if !is_safe_skill_dir_name(&name) {
        return Err(Error::refused(refusal(
            Code::PackageLayout,
            dir,
            &name,
            "the skill's name cannot be a folder name",
        )));
    }
    let version = fm.and_then(metadata_version);
    let files = folder_files(dir, &options.limits)?;
    let mut warnings = warnings;
    warnings.extend(files.iter().filter_map(|f| {
        f.link_to.as_ref().map(|target| {
            Diagnostic::new(
                Code::PackageLink,
                skilldeck::Severity::Warning,
                format!(
                    "entry \"{}\": a symlink to \"{}\" inside the skill, packed as that file's content",
                    f.path.escape_debug(),
                    target.escape_debug()
                ),
            )
            .in_file(dir.join(&f.path))
            .with_help("replace the link with a copy of the file to keep the folder as it is packed")
        })
    }));
    let mut contents = Vec::with_capacity(files.len());
    let mut digests = Vec::with_capacity(files.len());
    for file in &files {
        let bytes = read_file(file, &options.limits)?;
        digests.push(FileDigest::of_bytes(
            file.path.clone(),
            &bytes,
            file.executable,
        ));
        contents.push(bytes);
    }
    let manifest = SkillManifest::new(digests);
    let bytes =
        archive(&name, &manifest, &contents, options.format).map_err(|e| Error::io(dir, e))?;
    Ok((
        Packed {
            name,
            version,
            manifest,
            bytes,
            warnings,
        },
        contents,
    ))
}

/// The canonical archive of skill `name` whose files are `manifest`
/// with the bytes `contents` (in the manifest's order), already read and
/// hashed: what [`pack`] writes, without validating or hashing again
/// (a publish packs what [`unpack_bytes`](crate::unpack_bytes) read).
pub fn archive(
    name: &str,
    manifest: &SkillManifest,
    contents: &[Vec<u8>],
    format: ArchiveFormat,
) -> std::io::Result<Vec<u8>> {
    let prefix = format!("{name}/");
    match format {
        ArchiveFormat::TarGz => tar_gz(&prefix, manifest, contents),
        ArchiveFormat::Zip => zip(&prefix, manifest, contents),
    }
}

/// The archive of a skill whose files are `manifest` with the bytes
/// `contents`, its files at the archive's root (`SKILL.md`, `scripts/...`)
/// rather than in a folder named after the skill: the layout the
/// agentskills.io well-known discovery index requires of an `archive`
/// artifact. As deterministic as [`archive`] (same entries, order,
/// modes and times); unpacked, it has the same fingerprint.
pub fn archive_at_root(
    manifest: &SkillManifest,
    contents: &[Vec<u8>],
    format: ArchiveFormat,
) -> std::io::Result<Vec<u8>> {
    match format {
        ArchiveFormat::TarGz => tar_gz("", manifest, contents),
        ArchiveFormat::Zip => zip("", manifest, contents),
    }
}

/// Packs `dir` and writes the archive to `output` atomically (a temporary
/// file next to it, then a rename).
pub fn pack_to_file(dir: &Path, output: &Path, options: &PackOptions) -> Result<Packed, Error> {
    let packed = pack(dir, options)?;
    write_atomic(output, &packed.bytes)?;
    Ok(packed)
}

/// The `metadata.version` of a frontmatter.
pub fn metadata_version(fm: &skilldeck::Frontmatter) -> Option<String> {
    fm.metadata
        .iter()
        .find(|(k, _)| k == "version")
        .map(|(_, v)| v.clone())
}

/// Writes `bytes` to `path` through a temporary file in the same folder,
/// synced, then renamed over it: a reader sees the old file or the new one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    write_atomic_with(path, bytes, true)
}

/// [`write_atomic`], synced to disk only when `sync` (a rename is atomic
/// against a killed process either way; the sync is for power loss).
pub fn write_atomic_with(path: &Path, bytes: &[u8], sync: bool) -> Result<(), Error> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{file_name}.tmp-{}", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        if sync {
            f.sync_all()?;
        }
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::io(path, e));
    }
    Ok(())
}

fn mode(executable: bool) -> u32 {
    if executable { 0o755 } else { 0o644 }
}

fn tar_gz(
    prefix: &str,
    manifest: &SkillManifest,
    contents: &[Vec<u8>],
) -> std::io::Result<Vec<u8>> {
    let gz = flate2::GzBuilder::new()
        .mtime(0)
        .operating_system(255)
        .write(Vec::new(), flate2::Compression::new(COMPRESSION_LEVEL));
    let mut builder = tar::Builder::new(gz);
    builder.mode(tar::HeaderMode::Deterministic);
    for (file, bytes) in manifest.files().iter().zip(contents) {
        let mut header = tar::Header::new_ustar();
        header.set_entry_type(tar::EntryType::Regular);
        header.set_size(bytes.len() as u64);
        header.set_mode(mode(file.executable));
        header.set_uid(0);
        header.set_gid(0);
        header.set_mtime(PACKAGE_MTIME);
        builder.append_data(
            &mut header,
            format!("{prefix}{}", file.path),
            bytes.as_slice(),
        )?;
    }
    builder.into_inner()?.finish()
}

fn zip(prefix: &str, manifest: &SkillManifest, contents: &[Vec<u8>]) -> std::io::Result<Vec<u8>> {
    use zip::write::SimpleFileOptions;
    let to_io = |e: zip::result::ZipError| std::io::Error::other(e.to_string());
    let time = zip::DateTime::from_date_and_time(2000, 1, 1, 0, 0, 0)
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (file, bytes) in manifest.files().iter().zip(contents) {
        let options = SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .compression_level(Some(i64::from(COMPRESSION_LEVEL)))
            .last_modified_time(time)
            .unix_permissions(mode(file.executable))
            .large_file(false);
        writer
            .start_file(format!("{prefix}{}", file.path), options)
            .map_err(to_io)?;
        writer.write_all(bytes)?;
    }
    Ok(writer.finish().map_err(to_io)?.into_inner())
}
