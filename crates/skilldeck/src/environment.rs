//! Skill environments (issue 31): the third-party packages a skill's
//! scripts import, declared by the skill, resolved and installed outside
//! the sandbox at install time, pinned by hash in the lock, and mounted
//! read-only into the sandbox at run time.
//!
//! This module holds the rules every side shares, without running
//! anything:
//!
//! - what a skill declares ([`declared_dependencies`]): `requirements.txt`
//!   and `pyproject.toml`'s `[project].dependencies` at the skill's top,
//!   each line a plain requirement (`name[extras] specifiers ; marker`).
//!   A skill never chooses where packages come from: an option line
//!   (`--index-url`, `-r`, `-e`, `--hash`), a path or a URL is refused
//!   with [`Code::EnvironmentRequirementInvalid`] naming the file and line;
//!   the operator points at an index or a wheel folder;
//! - what the lock records ([`LockedEnvironment`]): the interpreter, every
//!   resolved package by name, version and sha256, and the content key
//!   ([`environment_key`]) the environment is stored under, so two skills
//!   with the same resolved set and interpreter share one environment;
//! - where environments live ([`EnvStore`]) and whether one is ready
//!   ([`EnvStore::check`], the marker file) or exactly as locked
//!   ([`EnvStore::verify`], every installed file re-hashed against its
//!   package's `RECORD`).
//!
//! Building one (resolution with `uv pip compile --generate-hashes`, then
//! `uv venv` + `uv pip sync --require-hashes`) is the package crate's
//! (`skilldeck_package::environment`); using one is the host's.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::diagnostic::{Code, Diagnostic, Pos, Severity};
use crate::digest::Digest;

/// A skill's pip requirements file, at the top of the skill folder.
pub const REQUIREMENTS_TXT: &str = "requirements.txt";

/// A skill's Python project file, whose `[project].dependencies` are read.
pub const PYPROJECT_TOML: &str = "pyproject.toml";

/// The marker an environment carries once it is complete: the
/// [`LockedEnvironment`] it was built from, as TOML. An environment folder
/// without it is not used.
pub const MARKER_FILE: &str = "skilldeck-env.toml";

/// The variable that names the environment store (else
/// [`default_store_dir`]).
pub const STORE_ENV: &str = "SKILLDECK_ENVS_DIR";

/// The store of a root caller: a system folder the sandbox user can
/// traverse (a root home folder is closed to it).
pub const ROOT_STORE_DIR: &str = "/var/lib/skilldeck/envs";

/// Largest requirements file read (bytes).
pub const MAX_REQUIREMENTS_BYTES: u64 = 64 * 1024;

/// Most requirements a skill may declare.
pub const MAX_REQUIREMENTS: usize = 256;

/// Most files a package's `RECORD` may list for [`EnvStore::verify`].
pub const MAX_RECORD_FILES: usize = 100_000;

/// The lockfile's name (`skilldeck.lock`), next to the skills root.
pub const LOCKFILE_NAME: &str = "skilldeck.lock";

/// The format of [`environment_key`]'s input: a change re-keys every
/// environment.
pub const KEY_FORMAT: &str = "skilldeck-environment 1";

/// The lockfile of the skills root `root`: `skilldeck.lock` in its parent
/// folder (`.agents/skills` → `.agents/skilldeck.lock`).
pub fn lock_path(root: &Path) -> PathBuf {
    match root.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.join(LOCKFILE_NAME),
        _ => PathBuf::from(LOCKFILE_NAME),
    }
}

/// Which kind of environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EnvKind {
    /// A Python virtual environment (PyPI packages, installed with uv).
    Python,
}

impl EnvKind {
    /// The kind's name (`python`).
    pub fn as_str(self) -> &'static str {
        match self {
            EnvKind::Python => "python",
        }
    }
}

/// One declared requirement, as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Requirement {
    /// The requirement (`python-dateutil>=2.8`), trimmed, comment removed.
    pub text: String,
    /// The distribution name, normalised (PEP 503: lowercase, runs of
    /// `-_.` as one `-`).
    pub name: String,
    /// The file it was declared in, relative to the skill folder.
    pub file: String,
    /// Its 1-based line there.
    pub line: u32,
}

/// Everything a skill declares.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Dependencies {
    /// The kind of environment they need.
    pub kind: EnvKind,
    /// Each requirement, in file order (requirements.txt, then
    /// pyproject.toml).
    pub requirements: Vec<Requirement>,
}

impl Dependencies {
    /// The requirements as one requirements file (one per line), the input
    /// of resolution.
    pub fn input_text(&self) -> String {
        let mut out = String::new();
        for r in &self.requirements {
            out.push_str(&r.text);
            out.push('\n');
        }
        out
    }

    /// sha256 of [`Dependencies::input_text`]: the lock keeps it, so an
    /// install of an unchanged skill reuses the locked resolution.
    pub fn input_digest(&self) -> Digest {
        Digest::of(self.input_text().as_bytes())
    }

    /// The files they were declared in.
    pub fn files(&self) -> Vec<&str> {
        let mut files: Vec<&str> = self.requirements.iter().map(|r| r.file.as_str()).collect();
        files.dedup();
        files
    }
}

/// The dependencies the skill in `dir` declares: `None` when it declares
/// none; every line that is not a plain requirement is an error diagnostic
/// naming the file and line (all of them, not only the first).
pub fn declared_dependencies(dir: &Path) -> Result<Option<Dependencies>, Vec<Diagnostic>> {
    let mut problems = Vec::new();
    let requirements_txt = read_small(&dir.join(REQUIREMENTS_TXT), &mut problems);
    let pyproject = read_small(&dir.join(PYPROJECT_TOML), &mut problems);
    if !problems.is_empty() {
        return Err(problems);
    }
    parse_dependencies(dir, requirements_txt.as_deref(), pyproject.as_deref())
}

/// [`declared_dependencies`] of files already read (an upload, an
/// unpacked package): the text of `requirements.txt` and `pyproject.toml`
/// when the skill has them; `dir` names them in diagnostics.
pub fn parse_dependencies(
    dir: &Path,
    requirements_txt: Option<&str>,
    pyproject: Option<&str>,
) -> Result<Option<Dependencies>, Vec<Diagnostic>> {
    let mut requirements = Vec::new();
    let mut problems = Vec::new();
    if let Some(text) = requirements_txt {
        parse_requirements_txt(dir, text, &mut requirements, &mut problems);
    }
    if let Some(text) = pyproject {
        parse_pyproject(dir, text, &mut requirements, &mut problems);
    }
    if requirements.len() > MAX_REQUIREMENTS {
        problems.push(
            Diagnostic::new(
                Code::EnvironmentRequirementInvalid,
                Severity::Error,
                format!(
                    "the skill declares {} requirements; at most {MAX_REQUIREMENTS} are read",
                    requirements.len()
                ),
            )
            .in_file(dir.join(REQUIREMENTS_TXT)),
        );
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok((!requirements.is_empty()).then_some(Dependencies {
        kind: EnvKind::Python,
        requirements,
    }))
}

/// True when the skill in `dir` has a file that may declare dependencies
/// (cheap: two `stat`s; [`declared_dependencies`] reads them).
pub fn may_declare_dependencies(dir: &Path) -> bool {
    dir.join(REQUIREMENTS_TXT).is_file() || dir.join(PYPROJECT_TOML).is_file()
}

fn read_small(path: &Path, problems: &mut Vec<Diagnostic>) -> Option<String> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    let bad = |message: String| {
        Diagnostic::new(
            Code::EnvironmentRequirementInvalid,
            Severity::Error,
            message,
        )
        .in_file(path)
    };
    if !meta.is_file() {
        problems.push(bad("is not a regular file (a symlink or a folder)".into()));
        return None;
    }
    if meta.len() > MAX_REQUIREMENTS_BYTES {
        problems.push(bad(format!(
            "is {} bytes; at most {MAX_REQUIREMENTS_BYTES} are read",
            meta.len()
        )));
        return None;
    }
    match std::fs::read_to_string(path) {
        Ok(t) => Some(t),
        Err(e) => {
            problems.push(bad(format!("cannot be read as UTF-8 text: {e}")));
            None
        }
    }
}

fn parse_requirements_txt(
    dir: &Path,
    text: &str,
    out: &mut Vec<Requirement>,
    problems: &mut Vec<Diagnostic>,
) {
    let path = dir.join(REQUIREMENTS_TXT);
    for (i, raw) in text.lines().enumerate() {
        let line = u32::try_from(i + 1).unwrap_or(u32::MAX);
        // A comment starts at `#` at the start or after whitespace.
        let without_comment = match raw.find(" #").or_else(|| raw.find("\t#")) {
            Some(at) => &raw[..at],
            None if raw.trim_start().starts_with('#') => "",
            None => raw,
        };
        let req = without_comment.trim();
        if req.is_empty() {
            continue;
        }
        match check_requirement(req) {
            Ok(name) => out.push(Requirement {
                text: req.to_owned(),
                name,
                file: REQUIREMENTS_TXT.to_owned(),
                line,
            }),
            Err(why) => problems.push(requirement_problem(&path, line, req, &why)),
        }
    }
}

fn parse_pyproject(
    dir: &Path,
    text: &str,
    out: &mut Vec<Requirement>,
    problems: &mut Vec<Diagnostic>,
) {
    let path = dir.join(PYPROJECT_TOML);
    let value: toml::Table = match toml::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            problems.push(
                Diagnostic::new(
                    Code::EnvironmentRequirementInvalid,
                    Severity::Error,
                    format!("is not valid TOML: {}", e.message()),
                )
                .in_file(&path),
            );
            return;
        }
    };
    let Some(deps) = value.get("project").and_then(|p| p.get("dependencies")) else {
        return;
    };
    let Some(list) = deps.as_array() else {
        problems.push(
            Diagnostic::new(
                Code::EnvironmentRequirementInvalid,
                Severity::Error,
                "[project].dependencies is not a list of strings",
            )
            .in_file(&path),
        );
        return;
    };
    for item in list {
        let line = line_of(text, item.as_str().unwrap_or_default());
        let Some(req) = item.as_str().map(str::trim) else {
            problems.push(requirement_problem(
                &path,
                line,
                &item.to_string(),
                "is not a string",
            ));
            continue;
        };
        match check_requirement(req) {
            Ok(name) => out.push(Requirement {
                text: req.to_owned(),
                name,
                file: PYPROJECT_TOML.to_owned(),
                line,
            }),
            Err(why) => problems.push(requirement_problem(&path, line, req, &why)),
        }
    }
}

/// The 1-based line of the first occurrence of `needle` as a quoted string.
fn line_of(text: &str, needle: &str) -> u32 {
    if needle.is_empty() {
        return 1;
    }
    text.lines()
        .position(|l| l.contains(needle))
        .map_or(1, |i| u32::try_from(i + 1).unwrap_or(u32::MAX))
}

fn requirement_problem(path: &Path, line: u32, req: &str, why: &str) -> Diagnostic {
    Diagnostic::new(
        Code::EnvironmentRequirementInvalid,
        Severity::Error,
        format!("'{req}' {why}"),
    )
    .in_file(path)
    .at(Pos {
        line,
        column: 1,
        len: 0,
    })
    .with_help(
        "declare plain requirements (`name`, `name==1.2`, `name[extra]>=1 ; python_version>'3.8'`); \
         where packages come from is the operator's choice ([environments] index-url, find-links)",
    )
}

/// Checks one requirement; returns its normalised name, or why it is
/// refused.
fn check_requirement(req: &str) -> Result<String, String> {
    if req.starts_with('-') {
        return Err("is an option: a skill does not choose indexes, files or hashes".into());
    }
    if req.ends_with('\\') {
        return Err("continues on the next line: write one requirement per line".into());
    }
    if req.contains("://")
        || req.starts_with('.')
        || req.starts_with('/')
        || req.contains(" @")
        || req.contains("@ ")
    {
        return Err(
            "is a path or a URL (a direct reference): only packages from the operator's index or wheel folder are installed"
                .into(),
        );
    }
    let name_end = req
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
        .unwrap_or(req.len());
    let name = &req[..name_end];
    let valid_name = !name.is_empty()
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric());
    if !valid_name {
        return Err("does not start with a package name".into());
    }
    let rest = req[name_end..].trim_start();
    let ok_rest = rest.is_empty()
        || rest.starts_with(['[', '<', '>', '=', '!', '~', ';', '('])
        || rest.starts_with("==");
    if !ok_rest {
        return Err("is not `name[extras] specifiers ; marker`".into());
    }
    if req.chars().any(|c| c.is_control()) {
        return Err("contains a control character".into());
    }
    Ok(normalise_name(name))
}

/// A distribution name normalised as PEP 503 says: lowercase, each run of
/// `-`, `_` and `.` one `-`.
pub fn normalise_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut sep = false;
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            sep = true;
        } else {
            if sep && !out.is_empty() {
                out.push('-');
            }
            sep = false;
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

/// One resolved package, as the lock pins it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedPackage {
    /// The distribution name, normalised ([`normalise_name`]).
    pub name: String,
    /// The exact version.
    pub version: String,
    /// The sha256 of every artifact (wheel or sdist) the index offered for
    /// that version (`sha256:...`); the installer refuses any other file.
    pub hashes: Vec<Digest>,
}

/// A skill's environment as the lock records it (`[skill.NAME.environment]`)
/// and as its marker file repeats it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedEnvironment {
    /// The kind (`python`).
    pub kind: EnvKind,
    /// The content key the environment is stored under
    /// ([`environment_key`]).
    pub key: Digest,
    /// The interpreter it was built for (absolute path).
    pub interpreter: String,
    /// That interpreter's version (`3.11.2`).
    pub python: String,
    /// sha256 of the declared requirements ([`Dependencies::input_digest`]).
    pub input: Digest,
    /// Every resolved package, sorted by name.
    pub packages: Vec<LockedPackage>,
}

impl LockedEnvironment {
    /// The resolved set as a requirements file with hashes
    /// (`name==version --hash=sha256:...`), what `uv pip sync
    /// --require-hashes` installs.
    pub fn requirements_with_hashes(&self) -> String {
        let mut out = String::new();
        for p in &self.packages {
            let _ = write!(out, "{}=={}", p.name, p.version);
            for h in &p.hashes {
                let _ = write!(out, " --hash=sha256:{}", h.hex());
            }
            out.push('\n');
        }
        out
    }

    /// The marker file's text.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).unwrap_or_default()
    }

    /// The `package==version` list, for messages.
    pub fn package_list(&self) -> String {
        self.packages
            .iter()
            .map(|p| format!("{}=={}", p.name, p.version))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The content key of an environment: sha256 over the key format, the
/// kind, the interpreter and its version, and every package with its
/// hashes, sorted. The same resolved set for the same interpreter is the
/// same key, whichever skill asked for it.
pub fn environment_key(
    kind: EnvKind,
    interpreter: &str,
    python: &str,
    packages: &[LockedPackage],
) -> Digest {
    let mut text = format!(
        "{KEY_FORMAT}\nkind={}\ninterpreter={interpreter}\npython={python}\n",
        kind.as_str()
    );
    let mut sorted: Vec<&LockedPackage> = packages.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name).then(a.version.cmp(&b.version)));
    for p in sorted {
        let mut hashes: Vec<String> = p.hashes.iter().map(Digest::hex).collect();
        hashes.sort();
        let _ = writeln!(text, "{}=={} {}", p.name, p.version, hashes.join(" "));
    }
    Digest::of(text.as_bytes())
}

/// The default environment store: [`ROOT_STORE_DIR`] for root (`euid` 0),
/// else `$XDG_DATA_HOME/skilldeck/envs` (`~/.local/share/skilldeck/envs`).
pub fn default_store_dir(euid: u32) -> PathBuf {
    if euid == 0 {
        return PathBuf::from(ROOT_STORE_DIR);
    }
    crate::fs::dirs::data_dir().join("envs")
}

/// The environment store: one folder per key, `KEYHEX/`, holding a virtual
/// environment and its [`MARKER_FILE`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvStore {
    dir: PathBuf,
}

/// Why a skill's environment cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvProblem {
    /// The skill's dependency files are malformed.
    #[error("{}", render(.0))]
    Invalid(Vec<Diagnostic>),
    /// The skill declares dependencies but the lock records no environment
    /// for it (not installed with skilldeck, or installed without
    /// environments).
    #[error(
        "skill '{skill}' needs {requirement} (its {file}), but {lockfile} records no environment for it"
    )]
    NotLocked {
        /// The skill.
        skill: String,
        /// The first declared requirement.
        requirement: String,
        /// Where it is declared.
        file: String,
        /// The lockfile looked in.
        lockfile: PathBuf,
    },
    /// The lock records an environment but the store does not hold it
    /// (never built here, or garbage-collected).
    #[error(
        "skill '{skill}' needs its environment ({packages}), which is not built: {path} is missing"
    )]
    NotBuilt {
        /// The skill.
        skill: String,
        /// The locked packages.
        packages: String,
        /// Where it should be.
        path: PathBuf,
    },
    /// The stored environment is not the locked one.
    #[error("skill '{skill}': its environment at {path} differs from the lock: {detail}")]
    Modified {
        /// The skill.
        skill: String,
        /// The environment folder.
        path: PathBuf,
        /// What differs (the first difference).
        detail: String,
    },
}

fn render(d: &[Diagnostic]) -> String {
    d.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

impl EnvProblem {
    /// The stable code.
    pub fn code(&self) -> Code {
        match self {
            EnvProblem::Invalid(_) => Code::EnvironmentRequirementInvalid,
            EnvProblem::NotLocked { .. } | EnvProblem::NotBuilt { .. } => Code::EnvironmentMissing,
            EnvProblem::Modified { .. } => Code::EnvironmentModified,
        }
    }

    /// What to do next.
    pub fn help(&self) -> &'static str {
        match self {
            EnvProblem::Invalid(_) => {
                "fix the skill's requirements (plain requirements only), then install it again"
            }
            EnvProblem::NotLocked { .. } => {
                "install the skill with `skilldeck install` (it resolves and builds the \
                 environment and records it in the lock)"
            }
            EnvProblem::NotBuilt { .. } => {
                "run `skilldeck install --frozen` to build the locked environment again \
                 (add --offline --find-links DIR without network)"
            }
            EnvProblem::Modified { .. } => {
                "run `skilldeck install --frozen` (it builds an environment that differs from \
                 the lock again), or install the skill again if its requirements changed"
            }
        }
    }

    /// As a diagnostic (an error in the skill's `SKILL.md`, or the
    /// requirements file's diagnostics).
    pub fn to_diagnostics(&self, skill_md: &Path) -> Vec<Diagnostic> {
        match self {
            EnvProblem::Invalid(d) => d.clone(),
            other => vec![
                Diagnostic::new(other.code(), Severity::Error, other.to_string())
                    .in_file(skill_md)
                    .with_help(other.help()),
            ],
        }
    }
}

/// A built environment that matches its lock: what a run needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReadyEnvironment {
    /// The environment folder.
    pub dir: PathBuf,
    /// Its `bin` folder (first on the script's `PATH`).
    pub bin: PathBuf,
    /// Its interpreter (`bin/python3`).
    pub python: PathBuf,
    /// The base interpreter's folder when the sandbox does not already show
    /// it (outside `/usr`, `/bin`, `/lib`): mounted read-only too.
    pub base_prefix: Option<PathBuf>,
    /// The lock's record.
    pub locked: LockedEnvironment,
}

impl ReadyEnvironment {
    /// The folders a run must be able to read: the environment and its
    /// base interpreter's prefix when needed.
    pub fn read_paths(&self) -> Vec<PathBuf> {
        let mut out = vec![self.dir.clone()];
        out.extend(self.base_prefix.clone());
        out
    }
}

/// Folders the sandbox already shows read-only.
const SYSTEM_PREFIXES: &[&str] = &["/usr", "/bin", "/lib", "/lib64"];

impl EnvStore {
    /// The store at `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> EnvStore {
        EnvStore { dir: dir.into() }
    }

    /// The store this process uses: `$SKILLDECK_ENVS_DIR` when set, else
    /// [`default_store_dir`].
    pub fn from_env(euid: u32) -> EnvStore {
        match std::env::var_os(STORE_ENV).filter(|v| !v.is_empty()) {
            Some(dir) => EnvStore::new(PathBuf::from(dir)),
            None => EnvStore::new(default_store_dir(euid)),
        }
    }

    /// The store's folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The folder of the environment with key `key`.
    pub fn path_of(&self, key: &Digest) -> PathBuf {
        self.dir.join(key.hex())
    }

    /// The record in the marker of the environment `key` (`None`: not
    /// complete, or the marker is malformed).
    pub fn marker(&self, key: &Digest) -> Option<LockedEnvironment> {
        let text = std::fs::read_to_string(self.path_of(key).join(MARKER_FILE)).ok()?;
        toml::from_str(&text).ok()
    }

    /// Keys of the environments in the store (complete or not).
    pub fn keys(&self) -> Vec<Digest> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut keys: Vec<Digest> = entries
            .flatten()
            .filter_map(|e| Digest::from_hex(&e.file_name().to_string_lossy()).ok())
            .collect();
        keys.sort_by_key(Digest::hex);
        keys
    }

    /// The environment `locked` of skill `skill`, when it is built and its
    /// marker says it was built from exactly this record (cheap: one small
    /// file read; [`EnvStore::verify`] re-hashes the files).
    pub fn check(
        &self,
        skill: &str,
        locked: &LockedEnvironment,
    ) -> Result<ReadyEnvironment, EnvProblem> {
        let dir = self.path_of(&locked.key);
        let marker = dir.join(MARKER_FILE);
        let text = match std::fs::read_to_string(&marker) {
            Ok(t) => t,
            Err(_) => {
                return Err(EnvProblem::NotBuilt {
                    skill: skill.to_owned(),
                    packages: locked.package_list(),
                    path: dir,
                });
            }
        };
        let modified = |detail: String| EnvProblem::Modified {
            skill: skill.to_owned(),
            path: dir.clone(),
            detail,
        };
        let found: LockedEnvironment = toml::from_str(&text)
            .map_err(|e| modified(format!("its {MARKER_FILE} is malformed: {}", e.message())))?;
        if found.key != locked.key || found.packages != locked.packages {
            return Err(modified(format!(
                "its {MARKER_FILE} records {} (key {}), the lock {}",
                found.package_list(),
                found.key,
                locked.package_list()
            )));
        }
        if let Some(found) = interpreter_minor(Path::new(&locked.interpreter))
            && !locked.python.starts_with(&format!("{found}."))
        {
            return Err(modified(format!(
                "it was built for Python {}, and {} is now Python {found}",
                locked.python, locked.interpreter
            )));
        }
        let bin = dir.join("bin");
        let python = bin.join("python3");
        if !python.exists() {
            return Err(modified(format!("{} is missing", python.display())));
        }
        let base_prefix = pyvenv_home(&dir.join("pyvenv.cfg"))
            .and_then(|home| home.parent().map(Path::to_path_buf))
            .filter(|p| !SYSTEM_PREFIXES.iter().any(|s| p.starts_with(s)) && p.is_dir());
        Ok(ReadyEnvironment {
            dir,
            bin,
            python,
            base_prefix,
            locked: locked.clone(),
        })
    }

    /// [`EnvStore::check`], then every locked package is installed at its
    /// version and every file its `RECORD` lists has the recorded sha256
    /// and size (compiled bytecode, which `RECORD` lists without a hash, is
    /// skipped); no other package is installed.
    pub fn verify(
        &self,
        skill: &str,
        locked: &LockedEnvironment,
    ) -> Result<ReadyEnvironment, EnvProblem> {
        let ready = self.check(skill, locked)?;
        let modified = |detail: String| EnvProblem::Modified {
            skill: skill.to_owned(),
            path: ready.dir.clone(),
            detail,
        };
        let site = site_packages(&ready.dir)
            .ok_or_else(|| modified("it has no lib/python*/site-packages folder".into()))?;
        let mut installed: BTreeMap<String, (String, PathBuf)> = BTreeMap::new();
        for entry in std::fs::read_dir(&site)
            .map_err(|e| modified(e.to_string()))?
            .flatten()
        {
            let file = entry.file_name().to_string_lossy().into_owned();
            let Some(stem) = file.strip_suffix(".dist-info") else {
                continue;
            };
            let Some((name, version)) = stem.rsplit_once('-') else {
                continue;
            };
            installed.insert(normalise_name(name), (version.to_owned(), entry.path()));
        }
        for p in &locked.packages {
            match installed.remove(&p.name) {
                None => return Err(modified(format!("package {} is not installed", p.name))),
                Some((v, _)) if v != p.version => {
                    return Err(modified(format!(
                        "package {} is {v}; the lock says {}",
                        p.name, p.version
                    )));
                }
                Some((_, dist_info)) => check_record(&site, &dist_info).map_err(modified)?,
            }
        }
        if let Some((name, (version, _))) = installed.into_iter().next() {
            return Err(modified(format!(
                "package {name} {version} is installed but not in the lock"
            )));
        }
        Ok(ready)
    }
}

/// `X.Y` of an interpreter whose real file is named `pythonX.Y` (symlinks
/// resolved: `/usr/bin/python3` → `python3.11`): a check that costs no
/// process. `None` when the name says nothing.
pub fn interpreter_minor(interpreter: &Path) -> Option<String> {
    let real = std::fs::canonicalize(interpreter).ok()?;
    let name = real.file_name()?.to_str()?;
    let version = name.strip_prefix("python")?;
    let (major, minor) = version.split_once('.')?;
    (!major.is_empty()
        && !minor.is_empty()
        && major.bytes().all(|b| b.is_ascii_digit())
        && minor.bytes().all(|b| b.is_ascii_digit()))
    .then(|| version.to_owned())
}

/// `lib/pythonX.Y/site-packages` of a virtual environment.
pub fn site_packages(env: &Path) -> Option<PathBuf> {
    let lib = env.join("lib");
    std::fs::read_dir(&lib)
        .ok()?
        .flatten()
        .map(|e| e.path().join("site-packages"))
        .find(|p| p.is_dir())
}

/// Re-hashes every file a package's `RECORD` lists.
fn check_record(site: &Path, dist_info: &Path) -> Result<(), String> {
    let record = dist_info.join("RECORD");
    let text =
        std::fs::read_to_string(&record).map_err(|e| format!("{}: {e}", record.display()))?;
    for (i, line) in text.lines().enumerate() {
        if i >= MAX_RECORD_FILES {
            return Err(format!(
                "{}: more than {MAX_RECORD_FILES} files",
                record.display()
            ));
        }
        // `path,sha256=BASE64URL,size`; paths with commas are quoted.
        let Some((path, rest)) = split_record_line(line) else {
            continue;
        };
        let mut fields = rest.splitn(2, ',');
        let hash = fields.next().unwrap_or_default();
        let size = fields.next().unwrap_or_default();
        let Some(b64) = hash.strip_prefix("sha256=") else {
            continue;
        };
        if path.starts_with('/') || path.split('/').any(|c| c == "..") {
            // Entry points live outside site-packages (`../../../bin/x`)
            // and are rewritten at install: not checked.
            continue;
        }
        let file = site.join(&path);
        let bytes = std::fs::read(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        if !size.is_empty() && size.parse::<usize>().ok() != Some(bytes.len()) {
            return Err(format!(
                "{} has another size than its RECORD says",
                file.display()
            ));
        }
        let found = base64url(Digest::of(&bytes).as_bytes());
        if found != b64.trim_end_matches('=') {
            return Err(format!(
                "{} was changed (its sha256 is not the one its RECORD lists)",
                file.display()
            ));
        }
    }
    Ok(())
}

fn split_record_line(line: &str) -> Option<(String, &str)> {
    if let Some(rest) = line.strip_prefix('"') {
        let end = rest.find("\",")?;
        return Some((rest[..end].replace("\"\"", "\""), &rest[end + 2..]));
    }
    let (path, rest) = line.split_once(',')?;
    Some((path.to_owned(), rest))
}

/// URL-safe base64 without padding (the wheel `RECORD` hash form).
fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
        }
    }
    out
}

/// `home = ...` of a `pyvenv.cfg` (the base interpreter's folder).
pub fn pyvenv_home(cfg: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(cfg).ok()?;
    text.lines().find_map(|line| {
        let (key, value) = line.split_once('=')?;
        (key.trim() == "home").then(|| PathBuf::from(value.trim()))
    })
}

/// What the lock of a skills root records about environments, read without
/// the rest of the lock (the host's view; the package crate owns the whole
/// lockfile).
#[derive(Debug, Default, Deserialize)]
struct LockEnvironments {
    #[serde(default)]
    skill: BTreeMap<String, LockSkillEnvironment>,
}

#[derive(Debug, Default, Deserialize)]
struct LockSkillEnvironment {
    #[serde(default)]
    environment: Option<LockedEnvironment>,
}

/// The environment the lock of skills root `root` records for skill
/// `skill` (`Ok(None)`: no lock, or no environment for it); an error
/// names the lockfile.
pub fn locked_environment(root: &Path, skill: &str) -> Result<Option<LockedEnvironment>, String> {
    let lockfile = lock_path(root);
    let text = match std::fs::read_to_string(&lockfile) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: {e}", lockfile.display())),
    };
    let lock: LockEnvironments =
        toml::from_str(&text).map_err(|e| format!("{}: {}", lockfile.display(), e.message()))?;
    Ok(lock.skill.get(skill).and_then(|s| s.environment.clone()))
}

/// The environment skill `skill_dir` (named `name`, found under `root`)
/// runs with: `Ok(None)` when it declares no dependencies; the ready
/// environment when the lock records one and the store holds it; else why
/// not (the first declared requirement named).
pub fn environment_for(
    store: &EnvStore,
    name: &str,
    skill_dir: &Path,
    root: &Path,
) -> Result<Option<ReadyEnvironment>, EnvProblem> {
    if !may_declare_dependencies(skill_dir) {
        return Ok(None);
    }
    let Some(deps) = declared_dependencies(skill_dir).map_err(EnvProblem::Invalid)? else {
        return Ok(None);
    };
    let lockfile = lock_path(root);
    let first = &deps.requirements[0];
    let not_locked = || EnvProblem::NotLocked {
        skill: name.to_owned(),
        requirement: first.text.clone(),
        file: format!("{}:{}", first.file, first.line),
        lockfile: lockfile.clone(),
    };
    let locked = locked_environment(root, name)
        .map_err(|e| {
            EnvProblem::Invalid(vec![Diagnostic::new(
                Code::EnvironmentMissing,
                Severity::Error,
                e,
            )])
        })?
        .ok_or_else(not_locked)?;
    if locked.input != deps.input_digest() {
        return Err(EnvProblem::Modified {
            skill: name.to_owned(),
            path: store.path_of(&locked.key),
            detail: format!(
                "the skill's requirements changed since it was installed ({} now declares {})",
                first.file,
                deps.requirements
                    .iter()
                    .map(|r| r.text.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        });
    }
    store.check(name, &locked).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill_with(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        dir
    }

    #[test]
    fn plain_requirements_are_read_with_their_lines_and_normalised_names() {
        let dir = skill_with(&[
            (
                REQUIREMENTS_TXT,
                "# tools\nPython_Dateutil>=2.8  # dates\n\nsix==1.17.0 ; python_version >= '3'\n",
            ),
            (
                PYPROJECT_TOML,
                "[project]\nname = \"x\"\ndependencies = [\n  \"attrs[tests]~=23.1\",\n]\n",
            ),
        ]);
        let deps = declared_dependencies(dir.path()).unwrap().unwrap();
        let got: Vec<(&str, &str, u32)> = deps
            .requirements
            .iter()
            .map(|r| (r.name.as_str(), r.file.as_str(), r.line))
            .collect();
        assert_eq!(
            got,
            [
                ("python-dateutil", REQUIREMENTS_TXT, 2),
                ("six", REQUIREMENTS_TXT, 4),
                ("attrs", PYPROJECT_TOML, 4)
            ]
        );
        assert_eq!(
            deps.input_text(),
            "Python_Dateutil>=2.8\nsix==1.17.0 ; python_version >= '3'\nattrs[tests]~=23.1\n"
        );
    }

    #[test]
    fn a_skill_cannot_choose_its_index_or_install_from_a_path_or_url() {
        let dir = skill_with(&[(
            REQUIREMENTS_TXT,
            "--index-url https://evil.example/simple\n-e .\n-r other.txt\n\
             pkg @ https://evil.example/pkg.whl\n./local.whl\nhttps://x/y.whl\nok==1\n\
             six==1 \\\n",
        )]);
        let problems = declared_dependencies(dir.path()).unwrap_err();
        let lines: Vec<u32> = problems.iter().map(|d| d.line.unwrap()).collect();
        assert_eq!(lines, [1, 2, 3, 4, 5, 6, 8]);
        for d in &problems {
            assert_eq!(d.code, Code::EnvironmentRequirementInvalid);
            assert!(d.file.as_ref().unwrap().ends_with(REQUIREMENTS_TXT));
        }
    }

    #[test]
    fn a_skill_without_dependency_files_declares_none() {
        let dir = skill_with(&[(PYPROJECT_TOML, "[project]\nname = \"x\"\n")]);
        assert_eq!(declared_dependencies(dir.path()).unwrap(), None);
        let empty = skill_with(&[(REQUIREMENTS_TXT, "# nothing\n\n")]);
        assert_eq!(declared_dependencies(empty.path()).unwrap(), None);
    }

    #[test]
    fn malformed_pyproject_dependencies_are_refused_naming_the_file() {
        let dir = skill_with(&[(PYPROJECT_TOML, "[project]\ndependencies = \"six\"\n")]);
        let problems = declared_dependencies(dir.path()).unwrap_err();
        assert!(problems[0].file.as_ref().unwrap().ends_with(PYPROJECT_TOML));
        let bad = skill_with(&[(PYPROJECT_TOML, "[project\n")]);
        assert!(declared_dependencies(bad.path()).is_err());
    }

    fn pkg(name: &str, version: &str, byte: u8) -> LockedPackage {
        LockedPackage {
            name: name.into(),
            version: version.into(),
            hashes: vec![Digest::from_bytes([byte; 32])],
        }
    }

    #[test]
    fn the_key_depends_on_the_resolved_set_and_interpreter_not_their_order() {
        let a = [pkg("six", "1.17.0", 1), pkg("python-dateutil", "2.9.0", 2)];
        let b = [pkg("python-dateutil", "2.9.0", 2), pkg("six", "1.17.0", 1)];
        let k = environment_key(EnvKind::Python, "/usr/bin/python3", "3.11.2", &a);
        assert_eq!(
            k,
            environment_key(EnvKind::Python, "/usr/bin/python3", "3.11.2", &b)
        );
        assert_ne!(
            k,
            environment_key(EnvKind::Python, "/usr/bin/python3", "3.12.0", &a)
        );
        assert_ne!(
            k,
            environment_key(EnvKind::Python, "/opt/py/bin/python3", "3.11.2", &a)
        );
        let other_hash = [pkg("six", "1.17.0", 9), pkg("python-dateutil", "2.9.0", 2)];
        assert_ne!(
            k,
            environment_key(EnvKind::Python, "/usr/bin/python3", "3.11.2", &other_hash)
        );
    }

    #[test]
    fn the_locked_set_is_written_as_hash_pinned_requirements() {
        let env = LockedEnvironment {
            kind: EnvKind::Python,
            key: Digest::from_bytes([0; 32]),
            interpreter: "/nonexistent/bin/python3".into(),
            python: "3.11.2".into(),
            input: Digest::from_bytes([1; 32]),
            packages: vec![pkg("six", "1.17.0", 0xab)],
        };
        assert_eq!(
            env.requirements_with_hashes(),
            format!("six==1.17.0 --hash=sha256:{}\n", "ab".repeat(32))
        );
        let back: LockedEnvironment = toml::from_str(&env.to_toml()).unwrap();
        assert_eq!(back, env);
    }

    #[test]
    fn an_environment_without_its_marker_or_with_another_marker_is_not_used() {
        let store_dir = tempfile::tempdir().unwrap();
        let store = EnvStore::new(store_dir.path());
        let mut env = LockedEnvironment {
            kind: EnvKind::Python,
            key: Digest::from_bytes([7; 32]),
            interpreter: "/nonexistent/bin/python3".into(),
            python: "3.11.2".into(),
            input: Digest::from_bytes([1; 32]),
            packages: vec![pkg("six", "1.17.0", 3)],
        };
        let e = store.check("s", &env).unwrap_err();
        assert_eq!(e.code(), Code::EnvironmentMissing);
        assert!(e.to_string().contains("six==1.17.0"), "{e}");
        let dir = store.path_of(&env.key);
        std::fs::create_dir_all(dir.join("bin")).unwrap();
        std::fs::write(dir.join("bin/python3"), "").unwrap();
        std::fs::write(dir.join(MARKER_FILE), env.to_toml()).unwrap();
        assert!(store.check("s", &env).is_ok());
        env.packages[0].version = "1.16.0".into();
        let e = store.check("s", &env).unwrap_err();
        assert_eq!(e.code(), Code::EnvironmentModified);
    }

    #[test]
    fn an_interpreter_now_of_another_minor_version_makes_the_environment_unusable() {
        let store_dir = tempfile::tempdir().unwrap();
        let store = EnvStore::new(store_dir.path());
        let bin = store_dir.path().join("py");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(bin.join("python3.12"), "").unwrap();
        std::os::unix::fs::symlink("python3.12", bin.join("python3")).unwrap();
        assert_eq!(
            interpreter_minor(&bin.join("python3")).as_deref(),
            Some("3.12")
        );
        let env = LockedEnvironment {
            kind: EnvKind::Python,
            key: Digest::from_bytes([7; 32]),
            interpreter: bin.join("python3").to_string_lossy().into_owned(),
            python: "3.11.2".into(),
            input: Digest::from_bytes([1; 32]),
            packages: vec![pkg("six", "1.17.0", 3)],
        };
        let dir = store.path_of(&env.key);
        std::fs::create_dir_all(dir.join("bin")).unwrap();
        std::fs::write(dir.join("bin/python3"), "").unwrap();
        std::fs::write(dir.join(MARKER_FILE), env.to_toml()).unwrap();
        let e = store.check("s", &env).unwrap_err();
        assert_eq!(e.code(), Code::EnvironmentModified);
        assert!(e.to_string().contains("is now Python 3.12"), "{e}");
        let same = LockedEnvironment {
            python: "3.12.1".into(),
            ..env.clone()
        };
        std::fs::write(dir.join(MARKER_FILE), same.to_toml()).unwrap();
        assert!(store.check("s", &same).is_ok());
    }

    #[test]
    fn verify_finds_a_changed_file_of_an_installed_package() {
        let store_dir = tempfile::tempdir().unwrap();
        let store = EnvStore::new(store_dir.path());
        let env = LockedEnvironment {
            kind: EnvKind::Python,
            key: Digest::from_bytes([7; 32]),
            interpreter: "/nonexistent/bin/python3".into(),
            python: "3.11.2".into(),
            input: Digest::from_bytes([1; 32]),
            packages: vec![pkg("six", "1.17.0", 3)],
        };
        let dir = store.path_of(&env.key);
        let site = dir.join("lib/python3.11/site-packages");
        let info = site.join("six-1.17.0.dist-info");
        std::fs::create_dir_all(&info).unwrap();
        std::fs::create_dir_all(dir.join("bin")).unwrap();
        std::fs::write(dir.join("bin/python3"), "").unwrap();
        std::fs::write(dir.join(MARKER_FILE), env.to_toml()).unwrap();
        let body = b"print('six')\n";
        std::fs::write(site.join("six.py"), body).unwrap();
        let hash = base64url(Digest::of(body).as_bytes());
        std::fs::write(
            info.join("RECORD"),
            format!(
                "six.py,sha256={hash},{}\nsix-1.17.0.dist-info/RECORD,,\n__pycache__/six.cpython-311.pyc,,\n",
                body.len()
            ),
        )
        .unwrap();
        store.verify("s", &env).unwrap();
        std::fs::write(site.join("six.py"), b"print('evil')\n").unwrap();
        let e = store.verify("s", &env).unwrap_err();
        assert_eq!(e.code(), Code::EnvironmentModified);
        assert!(e.to_string().contains("six.py"), "{e}");
        std::fs::write(site.join("six.py"), body).unwrap();
        std::fs::create_dir_all(site.join("extra-1.0.dist-info")).unwrap();
        let e = store.verify("s", &env).unwrap_err();
        assert!(e.to_string().contains("extra"), "{e}");
    }

    #[test]
    fn base64url_matches_the_wheel_record_form() {
        // sha256("") in the RECORD form.
        assert_eq!(
            base64url(Digest::of(b"").as_bytes()),
            "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU"
        );
    }

    #[test]
    fn the_store_of_root_is_a_folder_the_sandbox_user_can_traverse() {
        assert_eq!(default_store_dir(0), Path::new(ROOT_STORE_DIR));
    }
}
