//! Validating one skill folder (or a `SKILL.md` path) into a
//! [`SkillReport`]: the file read safely, the rule set applied, the folder
//! name compared.

use std::io::{self};
use std::path::{Path, PathBuf};

use crate::diagnostic::{Code, Diagnostic, Severity};
use crate::fs::read::io_diagnostic;
use crate::fs::read::symlink_diagnostic;
use crate::fs::read::{SKILL_MD, SKILL_MD_LOWERCASE};
use crate::fs::read::{Unreadable, with_skill_md_for_validation};
use crate::fs::walk::{FoundSkill, WalkLimits, WalkOutcome, find_skill_dirs, find_skill_dirs_then};
use crate::spec::fields::Frontmatter;
use crate::spec::lints::SkillFolder;
use crate::spec::options::ValidationOptions;
use crate::spec::validate;
use rustix::fd::BorrowedFd;

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
        return validate_file(&dir, path, options, Vec::new(), false, None);
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
    // The `lstat` that finds the skill file also types it, as a folder
    // listing would: a regular file (not a symlink, FIFO or device) is then
    // opened without a second `stat` (`O_NOFOLLOW`, the handle checked).
    let upper = dir.join(SKILL_MD);
    if let Ok(meta) = std::fs::symlink_metadata(&upper) {
        let regular = meta.file_type().is_file();
        return validate_file(dir, &upper, options, Vec::new(), regular, None);
    }
    let lower = dir.join(SKILL_MD_LOWERCASE);
    if let Ok(meta) = std::fs::symlink_metadata(&lower) {
        let regular = meta.file_type().is_file();
        let warning = vec![lowercase_warning(&lower)];
        return validate_file(dir, &lower, options, warning, regular, None);
    }
    // A folder of skills given where a skill was expected: say so. The walk
    // runs only on this failure path, within the usual bounds.
    let below = find_skill_dirs(dir, WalkLimits::default()).skills.len();
    let help = if below > 0 {
        format!(
            "{below} skill folder{} found below it; to validate them, add -r: `skilldeck validate -r {}`",
            if below == 1 { "" } else { "s" },
            dir.display()
        )
    } else {
        "create SKILL.md with `name` and `description` frontmatter (`skilldeck new NAME`)"
            .to_owned()
    };
    SkillReport::failed(
        dir.to_path_buf(),
        None,
        Diagnostic::new(
            Code::MissingSkillMd,
            Severity::Error,
            "Missing required file: SKILL.md",
        )
        .in_file(dir)
        .with_help(help),
    )
}

/// A skill a walk found ([`find_skill_dirs`]): its folder and skill file are
/// known, so neither is looked up again. The report is the one
/// [`validate_dir`] gives for `found.dir` (the walk applies the same
/// `SKILL.md`-before-`skill.md` rule); a skill file the listing typed as a
/// regular file is opened without a `stat` before (the open handle is
/// checked instead).
pub fn validate_found(found: &FoundSkill, options: &ValidationOptions) -> SkillReport {
    validate_found_in(found, None, options)
}

/// [`validate_found`], with the open descriptor of the skill's folder when
/// the walk still holds it: the skill file and the linked files are then
/// looked up relative to it.
fn validate_found_in(
    found: &FoundSkill,
    folder: Option<BorrowedFd<'_>>,
    options: &ValidationOptions,
) -> SkillReport {
    let lowercase = found
        .skill_md
        .file_name()
        .is_some_and(|n| n == SKILL_MD_LOWERCASE);
    let diagnostics = if lowercase {
        vec![lowercase_warning(&found.skill_md)]
    } else {
        Vec::new()
    };
    validate_file(
        found.dir(),
        &found.skill_md,
        options,
        diagnostics,
        found.listed_regular,
        folder,
    )
}

/// Every skill below `root`, found and validated in one parallel pass: each
/// skill is validated by the walk thread that listed its folder, while the
/// folder is open (its files looked up relative to it; see
/// [`validate_found`] for the reads). Returns what [`find_skill_dirs`]
/// returns for `root` and, in the same order as its skills, the reports
/// [`validate_found`] gives for them.
pub fn validate_tree(
    root: &Path,
    limits: WalkLimits,
    options: &ValidationOptions,
) -> (WalkOutcome, Vec<SkillReport>) {
    // Boxed while the walk merges its folders' results level by level: a
    // report is large (the typed frontmatter), and each merge would move it
    // again; a box moves as one pointer.
    let (walk, reports) = find_skill_dirs_then(root, limits, &|found, folder| {
        Box::new(validate_found_in(found, Some(folder), options))
    });
    (walk, reports.into_iter().map(|report| *report).collect())
}

/// [`validate_found`] for every skill of a walk, in parallel; reports come
/// back in the order of `found`.
pub fn validate_found_many(found: &[FoundSkill], options: &ValidationOptions) -> Vec<SkillReport> {
    use rayon::prelude::*;
    found
        .par_iter()
        .map(|skill| validate_found(skill, options))
        .collect()
}

fn lowercase_warning(file: &Path) -> Diagnostic {
    Diagnostic::new(
        Code::SkillMdLowercase,
        Severity::Warning,
        "skill file is named skill.md; the spec names it SKILL.md",
    )
    .in_file(file)
    .with_help("rename it to SKILL.md")
}

fn validate_file(
    dir: &Path,
    file: &Path,
    options: &ValidationOptions,
    mut diagnostics: Vec<Diagnostic>,
    listed_regular: bool,
    folder: Option<BorrowedFd<'_>>,
) -> SkillReport {
    // Folder-level findings get the same grading as the file's.
    diagnostics.retain_mut(|d| match options.severity(d.code) {
        Some(severity) => {
            d.severity = severity;
            true
        }
        None => false,
    });
    // The skill file's name in the open folder (it is `dir`'s child).
    let at = folder.zip(file.file_name().and_then(|n| n.to_str()));
    with_skill_md_for_validation(
        file,
        options.max_skill_md_bytes,
        listed_regular,
        at,
        |text| {
            let folder = Some(SkillFolder {
                path: dir,
                fd: folder,
            });
            let checked = match text {
                Ok(text) => validate::check_text_in(text, folder, options),
                Err(Unreadable {
                    diagnostic,
                    frontmatter: Some(frontmatter),
                }) => validate::check_not_text(Some(&frontmatter), diagnostic, folder, options),
                Err(Unreadable { diagnostic, .. }) => {
                    let mut r = SkillReport::failed(
                        dir.to_path_buf(),
                        Some(file.to_path_buf()),
                        diagnostic,
                    );
                    diagnostics.append(&mut r.diagnostics);
                    r.diagnostics = diagnostics;
                    return r;
                }
            };
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
        },
    )
}

/// Validates many skill folders in parallel; reports come back in the order
/// of `dirs`.
pub fn validate_many(dirs: &[PathBuf], options: &ValidationOptions) -> Vec<SkillReport> {
    use rayon::prelude::*;
    dirs.par_iter()
        .map(|dir| validate_dir(dir, options))
        .collect()
}
