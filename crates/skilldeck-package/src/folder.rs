//! The files of a skill folder, under the package rules: every regular file
//! below the folder (hidden ones too), no special files, safe and
//! non-colliding names, within the limits. Empty folders carry nothing.
//!
//! Symlinks: a link to a regular file inside the same skill is taken as
//! that file's content (the listing says so in [`FolderFile::link_to`], and
//! packing warns), so a folder, its package and its fingerprint agree with
//! what a host serving the folder reads. A link leaving the skill, a
//! dangling link and a link to a folder are refused with a help line. The
//! rule is here once: `pack`, `publish`, `install` of a folder and `verify`
//! all list files through [`folder_files`].

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use skilldeck::{Code, FileDigest, SkillManifest};

use crate::error::Error;
use crate::limits::{MAX_ENTRY_DEPTH, PackageLimits};
use crate::path::{NameSet, check_entry_path, refusal};

/// One regular file of a skill folder.
#[derive(Debug, Clone)]
pub struct FolderFile {
    /// The path relative to the skill folder (`/`-separated).
    pub path: String,
    /// Where it is.
    pub full: PathBuf,
    /// Size when listed.
    pub size: u64,
    /// Any `x` bit set.
    pub executable: bool,
    /// For a symlink inside the skill: the file it points to (relative to
    /// the skill folder, `/`-separated); its content is this entry's.
    pub link_to: Option<String>,
}

/// Every regular file of the skill folder `dir`, sorted by path, or the
/// first rule broken (a diagnostic naming the file).
pub fn folder_files(dir: &Path, limits: &PackageLimits) -> Result<Vec<FolderFile>, Error> {
    let mut out = Vec::new();
    let mut names = NameSet::default();
    let mut total = 0u64;
    walk(dir, dir, "", 0, limits, &mut names, &mut total, &mut out)?;
    out.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
    Ok(out)
}

#[allow(clippy::too_many_arguments)] // one recursive walk's state
fn walk(
    skill: &Path,
    dir: &Path,
    prefix: &str,
    depth: usize,
    limits: &PackageLimits,
    names: &mut NameSet,
    total: &mut u64,
    out: &mut Vec<FolderFile>,
) -> Result<(), Error> {
    let entries = fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let full = entry.path();
        let raw = os_bytes(&entry.file_name());
        let mut rel_raw = prefix.as_bytes().to_vec();
        rel_raw.extend_from_slice(&raw);
        let shown = String::from_utf8_lossy(&rel_raw).into_owned();
        let rel = check_entry_path(&rel_raw)
            .map_err(|why| Error::refused(refusal(Code::PackageUnsafePath, skill, &shown, why)))?;
        let mut meta = fs::symlink_metadata(&full).map_err(|e| Error::io(&full, e))?;
        let mut full = full;
        let mut link_to = None;
        if meta.file_type().is_symlink() {
            let (target, target_meta, inside) = link_inside(skill, &full, &rel)?;
            full = target;
            meta = target_meta;
            link_to = Some(inside);
        }
        let kind = meta.file_type();
        if kind.is_dir() {
            if depth + 1 >= MAX_ENTRY_DEPTH {
                return Err(Error::refused(refusal(
                    Code::PackageUnsafePath,
                    skill,
                    &rel,
                    "the path is nested too deep",
                )));
            }
            names
                .add_dir(&rel)
                .map_err(|why| Error::refused(refusal(Code::PackageDuplicate, skill, &rel, why)))?;
            walk(
                skill,
                &full,
                &format!("{rel}/"),
                depth + 1,
                limits,
                names,
                total,
                out,
            )?;
            continue;
        }
        if !kind.is_file() {
            return Err(Error::refused(refusal(
                Code::PackageSpecialFile,
                skill,
                &rel,
                "not a regular file (device, FIFO or socket)",
            )));
        }
        names
            .add_file(&rel)
            .map_err(|why| Error::refused(refusal(Code::PackageDuplicate, skill, &rel, why)))?;
        if out.len() >= limits.max_files {
            return Err(Error::refused(refusal(
                Code::PackageTooManyFiles,
                skill,
                &rel,
                &format!("more than {} files", limits.max_files),
            )));
        }
        *total = total.saturating_add(meta.len());
        if *total > limits.max_bytes {
            return Err(Error::refused(refusal(
                Code::PackageTooLarge,
                skill,
                &rel,
                &format!("more than {} bytes in all", limits.max_bytes),
            )));
        }
        out.push(FolderFile {
            path: rel,
            full,
            size: meta.len(),
            executable: is_executable(&meta),
            link_to,
        });
    }
    Ok(())
}

/// Where the symlink `full` (entry `rel` of the skill folder `skill`)
/// leads, when that is a regular file inside the skill: its real path,
/// metadata and path relative to the skill. Otherwise the refusal, with
/// what to do.
fn link_inside(
    skill: &Path,
    full: &Path,
    rel: &str,
) -> Result<(PathBuf, fs::Metadata, String), Error> {
    let refuse = |why: &str, help: &str| {
        Error::refused(refusal(Code::PackageLink, skill, rel, why).with_help(help.to_owned()))
    };
    let shown = fs::read_link(full)
        .map(|t| t.display().to_string())
        .unwrap_or_default();
    let root = fs::canonicalize(skill).map_err(|e| Error::io(skill, e))?;
    let Ok(target) = fs::canonicalize(full) else {
        return Err(refuse(
            &format!(
                "a symlink to \"{}\", which does not exist",
                shown.escape_debug()
            ),
            "remove the link, or put the file it should point to inside the skill",
        ));
    };
    let Ok(inside) = target.strip_prefix(&root) else {
        return Err(refuse(
            &format!(
                "a symlink to \"{}\", outside the skill (packages hold the skill's own files)",
                shown.escape_debug()
            ),
            &format!(
                "copy the file into the skill in place of the link (cp --remove-destination \"$(readlink -f {rel})\" {rel}), or remove it"
            ),
        ));
    };
    let meta = fs::metadata(&target).map_err(|e| Error::io(&target, e))?;
    if !meta.is_file() {
        return Err(refuse(
            &format!(
                "a symlink to \"{}\", which is not a regular file",
                shown.escape_debug()
            ),
            "links inside a skill may point to files only: replace the link with a copy of what it points to",
        ));
    }
    let inside = inside
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/");
    Ok((target, meta, inside))
}

#[cfg(unix)]
fn os_bytes(name: &std::ffi::OsStr) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    name.as_bytes().to_vec()
}

#[cfg(not(unix))]
fn os_bytes(name: &std::ffi::OsStr) -> Vec<u8> {
    // Not UTF-8 on Windows: the lossy form holds U+FFFD, which is refused
    // as an unsafe path only if it is a control character (it is not), so
    // refuse such names explicitly by keeping an invalid byte.
    match name.to_str() {
        Some(s) => s.as_bytes().to_vec(),
        None => vec![0xff],
    }
}

/// True when any `x` bit is set (always false off Unix).
pub fn is_executable(meta: &fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        false
    }
}

/// The bytes of a listed file, read once (so the digest covers exactly what
/// is packed or copied); refused when it grew past the byte budget.
pub fn read_file(file: &FolderFile, limits: &PackageLimits) -> Result<Vec<u8>, Error> {
    let handle = fs::File::open(&file.full).map_err(|e| Error::io(&file.full, e))?;
    let mut bytes = Vec::with_capacity(usize::try_from(file.size).unwrap_or(0));
    handle
        .take(limits.max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(&file.full, e))?;
    if bytes.len() as u64 > limits.max_bytes {
        return Err(Error::refused(refusal(
            Code::PackageTooLarge,
            &file.full,
            &file.path,
            &format!("more than {} bytes", limits.max_bytes),
        )));
    }
    Ok(bytes)
}

/// The manifest of the skill folder `dir` under the package rules.
pub fn folder_manifest(dir: &Path, limits: &PackageLimits) -> Result<SkillManifest, Error> {
    let files = folder_files(dir, limits)?;
    let mut digests = Vec::with_capacity(files.len());
    for file in &files {
        let bytes = read_file(file, limits)?;
        digests.push(FileDigest::of_bytes(
            file.path.clone(),
            &bytes,
            file.executable,
        ));
    }
    Ok(SkillManifest::new(digests))
}
