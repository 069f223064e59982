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

/// A skill's Node package file, whose `dependencies` and
/// `optionalDependencies` are read (dev dependencies are not).
pub const PACKAGE_JSON: &str = "package.json";

/// A skill's npm lockfile (`lockfileVersion` 2 or 3): used when it matches
/// [`PACKAGE_JSON`], else install resolves one.
pub const PACKAGE_LOCK_JSON: &str = "package-lock.json";

/// Largest `package.json` read (bytes).
pub const MAX_PACKAGE_JSON_BYTES: u64 = 64 * 1024;

/// Largest `package-lock.json` read (bytes), the skill's or npm's.
pub const MAX_PACKAGE_LOCK_BYTES: u64 = 8 * 1024 * 1024;

/// Most packages a Node environment may hold (the whole resolved tree).
pub const MAX_NODE_PACKAGES: usize = 2_000;

/// The folder of a Node environment that holds its packages.
pub const NODE_MODULES: &str = "node_modules";

/// The file npm writes inside `node_modules` (its cache of the tree, whose
/// text depends on npm's version): the one file of a Node environment the
/// tree digest leaves out.
pub const NPM_HIDDEN_LOCKFILE: &str = "node_modules/.package-lock.json";

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
    /// A `node_modules` tree (npm packages, installed with `npm ci`).
    Node,
}

impl EnvKind {
    /// The kind's name (`python`, `node`).
    pub fn as_str(self) -> &'static str {
        match self {
            EnvKind::Python => "python",
            EnvKind::Node => "node",
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
    /// An npm `optionalDependencies` entry (its install may fail on this
    /// platform without failing the environment).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub optional: bool,
}

impl Requirement {
    /// The npm version range of a Node requirement (`^3.0.1` of
    /// `is-odd@^3.0.1`); empty for Python.
    pub fn npm_spec(&self) -> &str {
        self.text
            .get(self.name.len() + 1..)
            .filter(|_| self.text.as_bytes().get(self.name.len()) == Some(&b'@'))
            .unwrap_or("")
    }
}

/// Everything a skill declares.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Dependencies {
    /// The kind of environment they need.
    pub kind: EnvKind,
    /// Each requirement, in file order (requirements.txt, then
    /// pyproject.toml; package.json's `dependencies`, then
    /// `optionalDependencies`).
    pub requirements: Vec<Requirement>,
    /// Node: the skill's own `package-lock.json`, when it ships one that
    /// matches `package.json` (its packages are the resolution).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shipped_lock: Option<ShippedLock>,
}

/// A skill's own `package-lock.json`, read and checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ShippedLock {
    /// sha256 of the file (part of the declaration's input digest).
    pub digest: Digest,
    /// Every package it installs (dev-only ones left out), sorted by path.
    pub packages: Vec<LockedPackage>,
    /// Where each package's `resolved` URL points: its path, the registry
    /// URL (`https://registry.npmjs.org`, no trailing slash) and the line.
    pub registries: Vec<(String, String, u32)>,
}

impl Dependencies {
    /// The requirements as one requirements file (one per line), the input
    /// of resolution. Node: `name@range` lines (`optional ` before an
    /// optional one), then the shipped lock's digest.
    pub fn input_text(&self) -> String {
        let mut out = String::new();
        for r in &self.requirements {
            if r.optional {
                out.push_str("optional ");
            }
            out.push_str(&r.text);
            out.push('\n');
        }
        if let Some(lock) = &self.shipped_lock {
            let _ = writeln!(out, "{PACKAGE_LOCK_JSON} {}", lock.digest);
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

/// The dependencies the skill in `dir` declares, one [`Dependencies`] per
/// kind of environment (Python first, then Node; empty when it declares
/// none); every line that is not a plain requirement is an error diagnostic
/// naming the file and line (all of them, of every kind, not only the
/// first).
pub fn declared_dependencies(dir: &Path) -> Result<Vec<Dependencies>, Vec<Diagnostic>> {
    let mut problems = Vec::new();
    let requirements_txt = read_small(
        &dir.join(REQUIREMENTS_TXT),
        MAX_REQUIREMENTS_BYTES,
        &mut problems,
    );
    let pyproject = read_small(
        &dir.join(PYPROJECT_TOML),
        MAX_REQUIREMENTS_BYTES,
        &mut problems,
    );
    let package_json = read_small(
        &dir.join(PACKAGE_JSON),
        MAX_PACKAGE_JSON_BYTES,
        &mut problems,
    );
    let package_lock = match &package_json {
        Some(_) => read_small(
            &dir.join(PACKAGE_LOCK_JSON),
            MAX_PACKAGE_LOCK_BYTES,
            &mut problems,
        ),
        None => None,
    };
    if !problems.is_empty() {
        return Err(problems);
    }
    let mut out = Vec::new();
    let python = parse_dependencies(dir, requirements_txt.as_deref(), pyproject.as_deref());
    let node = match &package_json {
        Some(text) => parse_node_dependencies(dir, text, package_lock.as_deref()),
        None => Ok(None),
    };
    for result in [python, node] {
        match result {
            Ok(Some(deps)) => out.push(deps),
            Ok(None) => {}
            Err(d) => problems.extend(d),
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(out)
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
        shipped_lock: None,
    }))
}

/// True when the skill in `dir` has a file that may declare dependencies
/// (cheap: three `stat`s; [`declared_dependencies`] reads them).
pub fn may_declare_dependencies(dir: &Path) -> bool {
    dir.join(REQUIREMENTS_TXT).is_file()
        || dir.join(PYPROJECT_TOML).is_file()
        || dir.join(PACKAGE_JSON).is_file()
}

fn read_small(path: &Path, max: u64, problems: &mut Vec<Diagnostic>) -> Option<String> {
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
    if meta.len() > max {
        problems.push(bad(format!(
            "is {} bytes; at most {max} are read",
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
                optional: false,
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
                optional: false,
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

/// npm's default registry. A `resolved` URL there is fetched from the
/// registry the operator configured (npm's `replace-registry-host`), so a
/// skill's lock written against it is accepted whatever that registry is.
pub const NPM_DEFAULT_REGISTRY: &str = "https://registry.npmjs.org";

/// The Node dependencies `package.json` declares (`package_json`: its
/// text), with the skill's `package-lock.json` (`package_lock`) as their
/// resolution when it is of `lockfileVersion` 2 or 3 and matches them.
/// `Ok(None)`: none declared. A skill never chooses its source: a spec that
/// is a git, `github:`, http(s), `file:`, `link:`, `workspace:` or `npm:`
/// (alias) reference, `bundleDependencies`, and in the lock a package not
/// from a registry, without `integrity`, or with an install script, are
/// each an error naming the file and line.
pub fn parse_node_dependencies(
    dir: &Path,
    package_json: &str,
    package_lock: Option<&str>,
) -> Result<Option<Dependencies>, Vec<Diagnostic>> {
    let path = dir.join(PACKAGE_JSON);
    let mut problems = Vec::new();
    let value: serde_json::Value = match serde_json::from_str(package_json) {
        Ok(v) => v,
        Err(e) => {
            return Err(vec![node_problem(
                &path,
                u32::try_from(e.line()).unwrap_or(1).max(1),
                format!("is not valid JSON: {e}"),
            )]);
        }
    };
    let Some(object) = value.as_object() else {
        return Err(vec![node_problem(&path, 1, "is not a JSON object".into())]);
    };
    for key in ["bundleDependencies", "bundledDependencies"] {
        let bundles = match object.get(key) {
            Some(serde_json::Value::Bool(b)) => *b,
            Some(serde_json::Value::Array(a)) => !a.is_empty(),
            Some(serde_json::Value::Null) | None => false,
            Some(_) => true,
        };
        if bundles {
            problems.push(node_problem(
                &path,
                json_key_line(package_json, None, key),
                format!(
                    "'{key}' ships packages inside the skill's own tarball: only packages from \
                     the operator's registry are installed (declare them in dependencies)"
                ),
            ));
        }
    }
    let mut requirements: Vec<Requirement> = Vec::new();
    for (section, optional) in [("dependencies", false), ("optionalDependencies", true)] {
        let Some(deps) = object.get(section) else {
            continue;
        };
        let Some(deps) = deps.as_object() else {
            problems.push(node_problem(
                &path,
                json_key_line(package_json, None, section),
                format!("'{section}' is not an object of package names to version ranges"),
            ));
            continue;
        };
        for (name, spec) in deps {
            let line = json_key_line(package_json, Some(section), name);
            let Some(spec) = spec.as_str() else {
                problems.push(node_problem(
                    &path,
                    line,
                    format!("'{name}' in {section}: its version range is not a string"),
                ));
                continue;
            };
            let text = format!("{name}@{spec}");
            if let Err(why) = check_npm_name(name).and_then(|()| check_npm_spec(spec)) {
                problems.push(node_problem(&path, line, format!("'{text}' {why}")));
                continue;
            }
            // npm: a name in both is optional.
            requirements.retain(|r| r.name != *name);
            requirements.push(Requirement {
                text,
                name: name.clone(),
                file: PACKAGE_JSON.to_owned(),
                line,
                optional,
            });
        }
    }
    if requirements.len() > MAX_REQUIREMENTS {
        problems.push(node_problem(
            &path,
            1,
            format!(
                "declares {} dependencies; at most {MAX_REQUIREMENTS} are read",
                requirements.len()
            ),
        ));
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    if requirements.is_empty() {
        return Ok(None);
    }
    let shipped_lock = match package_lock {
        Some(text) => parse_package_lock(dir, text, &requirements)?,
        None => None,
    };
    Ok(Some(Dependencies {
        kind: EnvKind::Node,
        requirements,
        shipped_lock,
    }))
}

fn node_problem(path: &Path, line: u32, message: String) -> Diagnostic {
    Diagnostic::new(
        Code::EnvironmentRequirementInvalid,
        Severity::Error,
        message,
    )
    .in_file(path)
    .at(Pos {
        line,
        column: 1,
        len: 0,
    })
    .with_help(
        "declare registry packages with version ranges (`\"is-odd\": \"^3.0.1\"`); where packages \
         come from is the operator's choice ([environments] npm-registry, npm-cache)",
    )
}

/// The 1-based line of `"key"` in JSON `text`, after the first line naming
/// `"section"` when given (a heuristic for messages: JSON parsers keep no
/// positions).
pub fn json_key_line(text: &str, section: Option<&str>, key: &str) -> u32 {
    let quoted_key = format!("\"{key}\"");
    let mut in_section = section.is_none();
    let quoted_section = section.map(|s| format!("\"{s}\""));
    for (i, line) in text.lines().enumerate() {
        let mut rest = line;
        if !in_section {
            match quoted_section.as_deref().and_then(|q| line.find(q)) {
                Some(at) => {
                    in_section = true;
                    rest = &line[at + quoted_section.as_deref().map_or(0, str::len)..];
                }
                None => continue,
            }
        }
        if rest.contains(&quoted_key) {
            return u32::try_from(i + 1).unwrap_or(u32::MAX);
        }
    }
    1
}

/// Checks an npm package name (`is-odd`, `@scope/name`).
fn check_npm_name(name: &str) -> Result<(), String> {
    let part_ok = |p: &str| {
        !p.is_empty()
            && !p.starts_with(['.', '_'])
            && p.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
    };
    let ok = name.len() <= 214
        && match name.strip_prefix('@') {
            Some(scoped) => scoped
                .split_once('/')
                .is_some_and(|(scope, pkg)| part_ok(scope) && part_ok(pkg)),
            None => part_ok(name),
        };
    if ok {
        Ok(())
    } else {
        Err("does not start with an npm package name".into())
    }
}

/// What an npm dependency spec names when it names its own source instead
/// of a version range (`a git repository` of `git+https://...`, `a path or a
/// repository shorthand` of `user/repo`); `None` for a range or a tag.
pub fn npm_spec_source(spec: &str) -> Option<&'static str> {
    let lower = spec.trim().to_ascii_lowercase();
    const SOURCES: &[(&str, &str)] = &[
        ("git+", "a git repository"),
        ("git:", "a git repository"),
        ("github:", "a GitHub repository"),
        ("gitlab:", "a GitLab repository"),
        ("bitbucket:", "a Bitbucket repository"),
        ("gist:", "a gist"),
        ("http:", "a URL"),
        ("https:", "a URL"),
        ("file:", "a local path"),
        ("link:", "a local folder (link)"),
        ("portal:", "a local folder (portal)"),
        ("workspace:", "a workspace package"),
        ("npm:", "an alias of another package (npm:)"),
        ("patch:", "a patched package"),
    ];
    if let Some((_, what)) = SOURCES.iter().find(|(p, _)| lower.starts_with(p)) {
        return Some(what);
    }
    lower
        .contains('/')
        .then_some("a path or a repository shorthand (user/repo)")
}

/// Checks an npm version range: a range or a dist-tag, never a source.
fn check_npm_spec(spec: &str) -> Result<(), String> {
    if let Some(what) = npm_spec_source(spec) {
        return Err(format!(
            "is {what}: only packages from the operator's registry are installed"
        ));
    }
    let lower = spec.trim().to_ascii_lowercase();
    let plain = lower.bytes().all(|b| {
        b.is_ascii_alphanumeric()
            || matches!(
                b,
                b' ' | b'.' | b'-' | b'+' | b'^' | b'~' | b'<' | b'>' | b'=' | b'|' | b'*'
            )
    });
    if !plain {
        return Err("is not a version range or a dist-tag".into());
    }
    Ok(())
}

/// The skill's `package-lock.json` as the resolution of `requirements`:
/// `Ok(None)` when it is not of `lockfileVersion` 2 or 3 or its root does
/// not declare exactly `requirements` (install then resolves one).
fn parse_package_lock(
    dir: &Path,
    text: &str,
    requirements: &[Requirement],
) -> Result<Option<ShippedLock>, Vec<Diagnostic>> {
    let path = dir.join(PACKAGE_LOCK_JSON);
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        vec![node_problem(
            &path,
            u32::try_from(e.line()).unwrap_or(1).max(1),
            format!("is not valid JSON: {e}"),
        )]
    })?;
    let version = value
        .get("lockfileVersion")
        .and_then(serde_json::Value::as_u64);
    if !matches!(version, Some(2 | 3)) {
        return Ok(None);
    }
    let Some(packages) = value.get("packages").and_then(serde_json::Value::as_object) else {
        return Ok(None);
    };
    let string_map = |v: Option<&serde_json::Value>| -> BTreeMap<String, String> {
        v.and_then(serde_json::Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_owned())))
                    .collect()
            })
            .unwrap_or_default()
    };
    let root = packages.get("");
    let declared = |optional: bool| -> BTreeMap<String, String> {
        requirements
            .iter()
            .filter(|r| r.optional == optional)
            .map(|r| (r.name.clone(), r.npm_spec().to_owned()))
            .collect()
    };
    if string_map(root.and_then(|r| r.get("dependencies"))) != declared(false)
        || string_map(root.and_then(|r| r.get("optionalDependencies"))) != declared(true)
    {
        return Ok(None);
    }
    let mut problems = Vec::new();
    let mut out = Vec::new();
    let mut registries = Vec::new();
    for (key, entry) in packages {
        if key.is_empty() {
            continue;
        }
        let line = json_key_line(text, Some("packages"), key);
        let flag = |name: &str| entry.get(name).and_then(serde_json::Value::as_bool) == Some(true);
        let Some(name_from_path) = node_modules_name(key) else {
            problems.push(node_problem(
                &path,
                line,
                format!("'{key}' is a local folder or workspace, not a registry package"),
            ));
            continue;
        };
        if flag("dev") {
            continue;
        }
        let name = entry
            .get("name")
            .and_then(serde_json::Value::as_str)
            .unwrap_or(name_from_path);
        let mut why = Vec::new();
        if flag("link") {
            why.push("is a link to a local folder".to_owned());
        }
        if flag("inBundle") {
            why.push("is bundled inside another package (bundleDependencies)".to_owned());
        }
        if name != name_from_path {
            why.push(format!("is an alias of another package ({name})"));
        }
        if flag("hasInstallScript") {
            why.push(
                "has an install script: npm lifecycle scripts would run package code outside the \
                 sandbox, so skilldeck never runs them, and the package would be broken without \
                 it"
                .to_owned(),
            );
        }
        let version = entry.get("version").and_then(serde_json::Value::as_str);
        let integrity = match entry.get("integrity").and_then(serde_json::Value::as_str) {
            Some(i) => Integrity::parse(i).map_err(|e| why.push(e)).ok(),
            None => {
                why.push("has no integrity (no sha512 of its tarball to check)".to_owned());
                None
            }
        };
        let resolved = entry.get("resolved").and_then(serde_json::Value::as_str);
        let registry = match (resolved, version) {
            (Some(url), Some(v)) => match registry_of(url, name, v) {
                Some(base) => Some(base),
                None => {
                    why.push(format!(
                        "is resolved to {url}, which is not a registry tarball of {name}@{v}: only \
                         the operator's registry is a source"
                    ));
                    None
                }
            },
            (None, _) => {
                why.push("has no resolved URL".to_owned());
                None
            }
            (_, None) => {
                why.push("has no version".to_owned());
                None
            }
        };
        if !why.is_empty() {
            for w in why {
                problems.push(node_problem(&path, line, format!("package '{key}' {w}")));
            }
            continue;
        }
        let (Some(version), Some(integrity), Some(registry)) = (version, integrity, registry)
        else {
            continue;
        };
        registries.push((key.clone(), registry, line));
        out.push(LockedPackage {
            name: name.to_owned(),
            version: version.to_owned(),
            path: Some(key.clone()),
            integrity: Some(integrity),
            optional: flag("optional") || flag("devOptional"),
            dependencies: string_map(entry.get("dependencies")),
            optional_dependencies: string_map(entry.get("optionalDependencies")),
            peer_dependencies: string_map(entry.get("peerDependencies")),
            ..LockedPackage::default()
        });
    }
    if out.len() > MAX_NODE_PACKAGES {
        problems.push(node_problem(
            &path,
            1,
            format!(
                "locks {} packages; at most {MAX_NODE_PACKAGES} are installed",
                out.len()
            ),
        ));
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(Some(ShippedLock {
        digest: Digest::of(text.as_bytes()),
        packages: out,
        registries,
    }))
}

/// The package name of a lock path (`node_modules/a/node_modules/@s/b` →
/// `@s/b`); `None` when it is not inside `node_modules`.
pub fn node_modules_name(path: &str) -> Option<&str> {
    let at = path.rfind("node_modules/")?;
    let name = &path[at + "node_modules/".len()..];
    let ok = path.starts_with("node_modules/") && check_npm_name(name).is_ok();
    ok.then_some(name)
}

/// The registry a `resolved` URL points into (`https://r.example/npm` of
/// `https://r.example/npm/@s/b/-/b-1.0.0.tgz`), when it is that registry's
/// tarball of `name@version`.
pub fn registry_of(url: &str, name: &str, version: &str) -> Option<String> {
    if !(url.starts_with("https://") || url.starts_with("http://")) {
        return None;
    }
    let unscoped = name.rsplit('/').next().unwrap_or(name);
    let tail = format!("/{name}/-/{unscoped}-{version}.tgz");
    let base = url.strip_suffix(&tail)?;
    let host_ok = base.split_once("://").is_some_and(|(_, rest)| {
        !rest.is_empty() && !rest.contains(['?', '#', '@']) && !rest.starts_with('/')
    });
    host_ok.then(|| base.to_owned())
}

/// A package's integrity: the sha512 of its tarball as a Subresource
/// Integrity string (`sha512-<base64>`), what npm checks each download
/// against.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Integrity(String);

impl Integrity {
    /// The sha512 entry of an SRI string (`sha512-...`, possibly among
    /// others separated by spaces); refused when it has none or it is not 64
    /// bytes of base64.
    pub fn parse(text: &str) -> Result<Integrity, String> {
        use base64::Engine as _;
        for token in text.split_whitespace() {
            let token = token.split('?').next().unwrap_or(token);
            let Some(b64) = token.strip_prefix("sha512-") else {
                continue;
            };
            return match base64::engine::general_purpose::STANDARD.decode(b64) {
                Ok(bytes) if bytes.len() == 64 => Ok(Integrity(token.to_owned())),
                _ => Err(format!("integrity '{token}' is not a sha512 digest")),
            };
        }
        Err(format!(
            "integrity '{text}' has no sha512 digest (sha1 alone is too weak)"
        ))
    }

    /// The SRI text (`sha512-...`).
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Integrity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for Integrity {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Integrity {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        Integrity::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// One resolved package, as the lock pins it.
///
/// Python: name, version and the sha256 of every artifact. Node: its place
/// in the tree (`path`), name, version, `integrity`, the dependencies its
/// `package.json` declares (what `npm ci` needs to rebuild the tree from the
/// lock alone), and once built the digest of its installed files.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct LockedPackage {
    /// Node: its folder in the environment (`node_modules/a`,
    /// `node_modules/a/node_modules/b`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The distribution name, normalised ([`normalise_name`]) for Python;
    /// the npm name for Node.
    pub name: String,
    /// The exact version.
    pub version: String,
    /// Python: the sha256 of every artifact (wheel or sdist) the index
    /// offered for that version (`sha256:...`); the installer refuses any
    /// other file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hashes: Vec<Digest>,
    /// Node: the sha512 of its tarball; npm refuses any other.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub integrity: Option<Integrity>,
    /// Node: optional (npm skips it where it cannot be installed).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub optional: bool,
    /// Node: its `dependencies` (name to range).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub dependencies: BTreeMap<String, String>,
    /// Node: its `optionalDependencies`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub optional_dependencies: BTreeMap<String, String>,
    /// Node: its `peerDependencies`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub peer_dependencies: BTreeMap<String, String>,
    /// Node, once built: the digest of its installed files
    /// ([`NodeTree`]), so `verify` names the package a change is in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<Digest>,
}

impl LockedPackage {
    /// The line [`environment_key`] hashes for it: what pins it.
    fn key_line(&self, kind: EnvKind) -> String {
        match kind {
            EnvKind::Python => {
                let mut hashes: Vec<String> = self.hashes.iter().map(Digest::hex).collect();
                hashes.sort();
                format!("{}=={} {}", self.name, self.version, hashes.join(" "))
            }
            EnvKind::Node => format!(
                "{} {}@{} {}",
                self.path.as_deref().unwrap_or_default(),
                self.name,
                self.version,
                self.integrity.as_ref().map_or("", Integrity::as_str)
            ),
        }
    }

    /// The package without what a build adds ([`LockedPackage::files`]):
    /// what a resolution pins.
    pub fn pin(&self) -> LockedPackage {
        LockedPackage {
            files: None,
            ..self.clone()
        }
    }
}

/// A skill's environment as the lock records it (`[skill.NAME.environment]`
/// for Python, `[skill.NAME.node-environment]` for Node) and as its marker
/// file repeats it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedEnvironment {
    /// The kind (`python`, `node`).
    pub kind: EnvKind,
    /// The content key the environment is stored under
    /// ([`environment_key`]).
    pub key: Digest,
    /// The interpreter it was built for (absolute path): `python3`, `node`.
    pub interpreter: String,
    /// Python: that interpreter's version (`3.11.2`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub python: String,
    /// Node: that interpreter's version (`20.20.2`); its major version is
    /// part of the key.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub node: String,
    /// sha256 of the declared requirements ([`Dependencies::input_digest`]).
    pub input: Digest,
    /// Node, once built: the digest of the whole installed tree
    /// ([`NodeTree`]), which `verify` recomputes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree: Option<Digest>,
    /// Every resolved package, sorted by name (Python) or path (Node).
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

    /// The `package==version` list (Python), `package@version` (Node), for
    /// messages.
    pub fn package_list(&self) -> String {
        self.package_names().join(", ")
    }

    /// Each package as `name==version` (Python) or `name@version` (Node).
    pub fn package_names(&self) -> Vec<String> {
        let sep = match self.kind {
            EnvKind::Python => "==",
            EnvKind::Node => "@",
        };
        self.packages
            .iter()
            .map(|p| format!("{}{sep}{}", p.name, p.version))
            .collect()
    }

    /// The interpreter's version (`3.11.2`, `20.20.2`).
    pub fn interpreter_version(&self) -> &str {
        match self.kind {
            EnvKind::Python => &self.python,
            EnvKind::Node => &self.node,
        }
    }

    /// The packages without what a build adds: what a resolution pins.
    pub fn pins(&self) -> Vec<LockedPackage> {
        self.packages.iter().map(LockedPackage::pin).collect()
    }

    /// A resolution of the requirements whose digest is `input`, made for
    /// `interpreter` at `version` (Python's or Node's, recorded in the
    /// field of its kind), its key the one its content gives
    /// ([`environment_key`]); no tree digest yet (a Node tree has one once
    /// built).
    pub fn resolved(
        kind: EnvKind,
        interpreter: &str,
        version: &str,
        input: Digest,
        packages: Vec<LockedPackage>,
    ) -> LockedEnvironment {
        let (python, node) = match kind {
            EnvKind::Python => (version.to_owned(), String::new()),
            EnvKind::Node => (String::new(), version.to_owned()),
        };
        LockedEnvironment {
            kind,
            key: environment_key(kind, interpreter, version, &packages),
            interpreter: interpreter.to_owned(),
            python,
            node,
            input,
            tree: None,
            packages,
        }
    }

    /// The same resolved set for another interpreter of a compatible
    /// version ([`compatible_interpreter_version`]): its path and version
    /// recorded, no build-time digests, the key recomputed. A published
    /// resolution is installed this way on a consumer's interpreter.
    pub fn for_interpreter(&self, interpreter: &str, version: &str) -> LockedEnvironment {
        LockedEnvironment::resolved(self.kind, interpreter, version, self.input, self.pins())
    }

    /// Checks that the record is one of its kind: Python packages carry
    /// hashes, Node packages a path and integrity, a Node record its tree;
    /// and that its key is the one its content gives. A lockfile or
    /// marker that fails is not trusted.
    pub fn validate(&self) -> Result<(), String> {
        let fail = |why: String| Err(format!("its {} environment {why}", self.kind.as_str()));
        match self.kind {
            EnvKind::Python => {
                if self.python.is_empty() || !self.node.is_empty() || self.tree.is_some() {
                    return fail("must record `python` (and no `node` or `tree`)".into());
                }
                if let Some(p) = self.packages.iter().find(|p| {
                    p.hashes.is_empty()
                        || p.integrity.is_some()
                        || p.path.is_some()
                        || p.files.is_some()
                }) {
                    return fail(format!(
                        "records package {} without sha256 hashes, or with Node fields",
                        p.name
                    ));
                }
            }
            EnvKind::Node => {
                if self.node.is_empty() || !self.python.is_empty() {
                    return fail("must record `node` (and no `python`)".into());
                }
                if let Some(p) = self
                    .packages
                    .iter()
                    .find(|p| p.integrity.is_none() || p.path.is_none() || !p.hashes.is_empty())
                {
                    return fail(format!(
                        "records package {} without a path and integrity",
                        p.name
                    ));
                }
                if self.packages.len() > MAX_NODE_PACKAGES {
                    return fail(format!("records more than {MAX_NODE_PACKAGES} packages"));
                }
            }
        }
        let key = environment_key(
            self.kind,
            &self.interpreter,
            self.interpreter_version(),
            &self.packages,
        );
        if key != self.key {
            return fail(format!(
                "has key {} but its content gives {key}: the record was edited",
                self.key
            ));
        }
        Ok(())
    }
}

/// Packages one published resolution (one kind) may pin: a registry
/// refuses more ([`check_published`]).
pub const MAX_PUBLISHED_PACKAGES: usize = MAX_NODE_PACKAGES;

/// Characters of a package name, version, interpreter path or dependency
/// range in a published resolution.
pub const MAX_PUBLISHED_FIELD_CHARS: usize = 256;

/// Checks a resolution a publisher sends with a skill version (and a
/// consumer receives from the registry) before anything stores or installs
/// it: at most one record per kind, each a valid record of its kind whose
/// key is the one its content gives ([`LockedEnvironment::validate`]),
/// resolved only (no build-time digests), at most
/// [`MAX_PUBLISHED_PACKAGES`] packages, each name and version well formed
/// (a name or version becomes a line of the requirements file uv installs,
/// or a key of the `package.json` npm reads: nothing in it may be an
/// option, a space or a path), a Node package's path the `node_modules`
/// folder of its own name, and the interpreter an absolute path.
/// `declared`: the skill's declarations; each record must be for one of
/// them (same kind, same [`Dependencies::input_digest`]).
pub fn check_published(
    envs: &[LockedEnvironment],
    declared: &[Dependencies],
) -> Result<(), String> {
    let mut kinds = Vec::new();
    for env in envs {
        let kind = env.kind.as_str();
        if kinds.contains(&env.kind) {
            return Err(format!("two {kind} resolutions: at most one per kind"));
        }
        kinds.push(env.kind);
        env.validate()?;
        let Some(deps) = declared.iter().find(|d| d.kind == env.kind) else {
            return Err(format!(
                "a {kind} resolution, but the skill declares no {kind} dependencies"
            ));
        };
        if deps.input_digest() != env.input {
            return Err(format!(
                "the {kind} resolution is for other requirements ({}) than the skill declares ({})",
                env.input,
                deps.input_digest()
            ));
        }
        if env.tree.is_some() {
            return Err(format!("the {kind} resolution records a built tree"));
        }
        if env.packages.len() > MAX_PUBLISHED_PACKAGES {
            return Err(format!(
                "the {kind} resolution pins {} packages, more than {MAX_PUBLISHED_PACKAGES}",
                env.packages.len()
            ));
        }
        let interpreter_ok = env.interpreter.starts_with('/')
            && env.interpreter.len() <= MAX_PUBLISHED_FIELD_CHARS * 4
            && !env.interpreter.chars().any(char::is_control);
        if !interpreter_ok || !version_ok(env.interpreter_version()) {
            return Err(format!(
                "the {kind} resolution's interpreter '{}' {} is not an absolute path and a version",
                env.interpreter.escape_debug(),
                env.interpreter_version().escape_debug()
            ));
        }
        for p in &env.packages {
            check_published_package(env.kind, p)
                .map_err(|why| format!("the {kind} resolution's package {why}"))?;
        }
    }
    Ok(())
}

/// A version as resolvers write it: ASCII letters, digits and `.+!_-`
/// (PEP 440, semver), bounded.
fn version_ok(v: &str) -> bool {
    !v.is_empty()
        && v.len() <= MAX_PUBLISHED_FIELD_CHARS
        && v.starts_with(|c: char| c.is_ascii_alphanumeric())
        && v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'+' | b'!' | b'_' | b'-'))
}

fn check_published_package(kind: EnvKind, p: &LockedPackage) -> Result<(), String> {
    let shown = format!("'{}' '{}'", p.name.escape_debug(), p.version.escape_debug());
    if p.files.is_some() {
        return Err(format!("{shown} records built files"));
    }
    if !version_ok(&p.version) {
        return Err(format!("{shown} has a malformed version"));
    }
    match kind {
        EnvKind::Python => {
            let ok = !p.name.is_empty()
                && p.name.len() <= MAX_PUBLISHED_FIELD_CHARS
                && normalise_name(&p.name) == p.name
                && p.name.starts_with(|c: char| c.is_ascii_alphanumeric())
                && p.name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-');
            if !ok {
                return Err(format!(
                    "{shown} has a malformed name (PEP 503, normalised)"
                ));
            }
            if p.optional
                || !p.dependencies.is_empty()
                || !p.optional_dependencies.is_empty()
                || !p.peer_dependencies.is_empty()
            {
                return Err(format!("{shown} records Node fields"));
            }
        }
        EnvKind::Node => {
            check_npm_name(&p.name).map_err(|_| format!("{shown} has a malformed npm name"))?;
            let path = p.path.as_deref().unwrap_or_default();
            let path_ok = node_modules_name(path) == Some(p.name.as_str())
                && path.split('/').all(|part| {
                    !part.is_empty() && part != "." && part != ".." && !part.contains('\\')
                })
                && path.len() <= MAX_PUBLISHED_FIELD_CHARS * 4;
            if !path_ok {
                return Err(format!(
                    "{shown} has path '{}', not node_modules/.../{}",
                    path.escape_debug(),
                    p.name
                ));
            }
            for (name, range) in p
                .dependencies
                .iter()
                .chain(&p.optional_dependencies)
                .chain(&p.peer_dependencies)
            {
                let ok = check_npm_name(name).is_ok()
                    && range.len() <= MAX_PUBLISHED_FIELD_CHARS
                    && !range.chars().any(char::is_control);
                if !ok {
                    return Err(format!(
                        "{shown} has a malformed dependency '{}'",
                        name.escape_debug()
                    ));
                }
            }
        }
    }
    Ok(())
}

/// The version an interpreter must have to install a resolution made for
/// `recorded`: Python the same `major.minor` (`3.12` of `3.12.4`; wheels and
/// markers are chosen per minor version), Node the same major.
pub fn compatible_interpreter_version(kind: EnvKind, recorded: &str) -> String {
    match kind {
        EnvKind::Python => recorded.split('.').take(2).collect::<Vec<_>>().join("."),
        EnvKind::Node => node_major(recorded).to_owned(),
    }
}

/// The major version of a Node version (`20` of `20.20.2` or `v20.20.2`).
pub fn node_major(version: &str) -> &str {
    let v = version.trim().trim_start_matches('v');
    v.split('.').next().unwrap_or(v)
}

/// The content key of an environment: sha256 over the key format, the
/// kind, the interpreter and its version (Python: the full version; Node:
/// its major version), and every package with what pins it (Python: its
/// hashes; Node: its path and integrity), sorted. The same resolved set for
/// the same interpreter is the same key, whichever skill asked for it.
pub fn environment_key(
    kind: EnvKind,
    interpreter: &str,
    version: &str,
    packages: &[LockedPackage],
) -> Digest {
    let mut text = match kind {
        EnvKind::Python => format!(
            "{KEY_FORMAT}\nkind={}\ninterpreter={interpreter}\npython={version}\n",
            kind.as_str()
        ),
        EnvKind::Node => format!(
            "{KEY_FORMAT}\nkind={}\ninterpreter={interpreter}\nnode-major={}\n",
            kind.as_str(),
            node_major(version)
        ),
    };
    let mut lines: Vec<(&str, &str, String)> = packages
        .iter()
        .map(|p| {
            (
                p.path.as_deref().unwrap_or(p.name.as_str()),
                p.version.as_str(),
                p.key_line(kind),
            )
        })
        .collect();
    lines.sort();
    for (_, _, line) in lines {
        text.push_str(&line);
        text.push('\n');
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
    /// Folders put first on the script's `PATH` (Python: the environment's
    /// `bin`; Node: the operator's `node`'s folder when it is not a system
    /// one).
    pub bin_dirs: Vec<PathBuf>,
    /// Python: its interpreter (`bin/python3`).
    pub python: Option<PathBuf>,
    /// Folders a run must be able to read: the environment, and its
    /// interpreter's prefix when the sandbox does not already show it
    /// (outside `/usr`, `/bin`, `/lib`).
    pub read_paths: Vec<PathBuf>,
    /// Variables set for the script (Node: `NODE_PATH`, for a `require`
    /// from outside the run folder).
    pub vars: Vec<(String, String)>,
    /// Node: its `node_modules`, which the run sees beside the skill
    /// folder, so Node's own resolution of a bare `require` or `import`
    /// finds it.
    pub node_modules: Option<PathBuf>,
    /// The lock's record.
    pub locked: LockedEnvironment,
}

/// The installed files of a Node environment's `node_modules`: the digest
/// of the whole tree and of each package's own folder (its nested
/// `node_modules` aside). Each file counts as its path (from the
/// environment folder) and sha256, the fingerprint rule of skill folders
/// ([`crate::digest::fingerprint`]); a symlink (`.bin/x`) as the sha256 of
/// `symlink:` and its target. [`NPM_HIDDEN_LOCKFILE`] is left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeTree {
    /// The whole tree.
    pub tree: Digest,
    /// Per package folder (`node_modules/a`), its files.
    pub packages: BTreeMap<String, Digest>,
}

impl NodeTree {
    /// Reads `env`'s `node_modules` (at most [`MAX_RECORD_FILES`] files).
    pub fn of(env: &Path) -> Result<NodeTree, String> {
        let mut files: Vec<(String, Digest)> = Vec::new();
        let mut stack = vec![env.join(NODE_MODULES)];
        while let Some(dir) = stack.pop() {
            let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            for entry in entries {
                let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
                let path = entry.path();
                let rel = path
                    .strip_prefix(env)
                    .map_err(|e| e.to_string())?
                    .to_string_lossy()
                    .replace('\\', "/");
                let meta = std::fs::symlink_metadata(&path)
                    .map_err(|e| format!("{}: {e}", path.display()))?;
                if meta.is_dir() {
                    stack.push(path);
                    continue;
                }
                if rel == NPM_HIDDEN_LOCKFILE {
                    continue;
                }
                let digest = if meta.file_type().is_symlink() {
                    let target = std::fs::read_link(&path)
                        .map_err(|e| format!("{}: {e}", path.display()))?;
                    Digest::of(format!("symlink:{}", target.to_string_lossy()).as_bytes())
                } else {
                    let bytes =
                        std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
                    Digest::of(&bytes)
                };
                files.push((rel, digest));
                if files.len() > MAX_RECORD_FILES {
                    return Err(format!(
                        "{} holds more than {MAX_RECORD_FILES} files",
                        env.join(NODE_MODULES).display()
                    ));
                }
            }
        }
        files.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        let tree = crate::digest::fingerprint(files.iter().map(|(p, d)| (p.as_str(), d)));
        let mut packages: BTreeMap<String, Digest> = BTreeMap::new();
        let mut owned: BTreeMap<String, Vec<(&str, &Digest)>> = BTreeMap::new();
        for (path, digest) in &files {
            if let Some(owner) = package_folder_of(path) {
                owned
                    .entry(owner.to_owned())
                    .or_default()
                    .push((path, digest));
            }
        }
        for (folder, list) in owned {
            packages.insert(folder, crate::digest::fingerprint(list));
        }
        Ok(NodeTree { tree, packages })
    }
}

/// The package folder a file of `node_modules` belongs to
/// (`node_modules/a/node_modules/@s/b/lib/x.js` → `node_modules/a/node_modules/@s/b`).
fn package_folder_of(path: &str) -> Option<&str> {
    let at = path.rfind("node_modules/")?;
    let rest = &path[at + "node_modules/".len()..];
    let mut parts = rest.splitn(3, '/');
    let first = parts.next()?;
    let len = if first.starts_with('@') {
        let second = parts.next()?;
        first.len() + 1 + second.len()
    } else {
        first.len()
    };
    // A file directly in node_modules (`.package-lock.json`) or in `.bin`
    // belongs to no package.
    if first.starts_with('.') || rest.len() == len {
        return None;
    }
    Some(&path[..at + "node_modules/".len() + len])
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
        toml::from_str::<LockedEnvironment>(&text)
            .ok()
            .filter(|m| m.validate().is_ok())
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
        if found.key != locked.key
            || found.pins() != locked.pins()
            || (locked.tree.is_some() && found.tree != locked.tree)
        {
            return Err(modified(format!(
                "its {MARKER_FILE} records {} (key {}), the lock {}",
                found.package_list(),
                found.key,
                locked.package_list()
            )));
        }
        match locked.kind {
            EnvKind::Python => {
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
                let mut read_paths = vec![dir.clone()];
                read_paths.extend(base_prefix);
                Ok(ReadyEnvironment {
                    dir,
                    bin_dirs: vec![bin],
                    python: Some(python),
                    read_paths,
                    vars: Vec::new(),
                    node_modules: None,
                    locked: found_or(locked, found),
                })
            }
            EnvKind::Node => {
                let modules = dir.join(NODE_MODULES);
                if !modules.is_dir() {
                    return Err(modified(format!("{} is missing", modules.display())));
                }
                let mut read_paths = vec![dir.clone()];
                let mut bin_dirs = Vec::new();
                if let Some(node_bin) = Path::new(&locked.interpreter).parent()
                    && !SYSTEM_PREFIXES.iter().any(|s| node_bin.starts_with(s))
                {
                    bin_dirs.push(node_bin.to_path_buf());
                    read_paths.push(node_bin.parent().unwrap_or(node_bin).to_path_buf());
                }
                let vars = vec![(
                    "NODE_PATH".to_owned(),
                    modules.to_string_lossy().into_owned(),
                )];
                Ok(ReadyEnvironment {
                    dir,
                    bin_dirs,
                    python: None,
                    read_paths,
                    vars,
                    node_modules: Some(modules),
                    locked: found_or(locked, found),
                })
            }
        }
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
        if locked.kind == EnvKind::Node {
            verify_node_tree(&ready).map_err(modified)?;
            return Ok(ready);
        }
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

/// The lock's record, with what a build adds (a Node tree and its
/// packages' file digests) taken from the marker when the lock has not got
/// it yet (a resolution about to share an environment another skill built;
/// its own declaration digest is kept).
fn found_or(locked: &LockedEnvironment, found: LockedEnvironment) -> LockedEnvironment {
    if locked.tree.is_none() && found.tree.is_some() {
        LockedEnvironment {
            tree: found.tree,
            packages: found.packages,
            ..locked.clone()
        }
    } else {
        locked.clone()
    }
}

/// Recomputes a Node environment's [`NodeTree`] and compares it with the
/// record (`ready.locked`, the marker's when the lock had no tree yet):
/// names the package whose folder changed, else says a file outside the
/// packages' folders did.
fn verify_node_tree(ready: &ReadyEnvironment) -> Result<(), String> {
    let locked = &ready.locked;
    let Some(want) = locked.tree else {
        return Err(format!("its {MARKER_FILE} records no tree digest"));
    };
    let found = NodeTree::of(&ready.dir)?;
    if found.tree == want {
        return Ok(());
    }
    for p in &locked.packages {
        let path = p.path.as_deref().unwrap_or_default();
        if found.packages.get(path) != p.files.as_ref() {
            return Err(format!(
                "package {}@{} ({path}) has a changed, added or removed file (its files no \
                 longer have the digest recorded at install)",
                p.name, p.version
            ));
        }
    }
    if let Some(extra) = found
        .packages
        .keys()
        .find(|k| !locked.packages.iter().any(|p| p.path.as_deref() == Some(k)))
    {
        return Err(format!("{extra} is installed but not in the lock"));
    }
    Err(format!(
        "a file of {} outside the locked packages' folders (.bin, or a new file) was changed, \
         added or removed",
        ready.dir.join(NODE_MODULES).display()
    ))
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
    #[serde(default, rename = "node-environment")]
    node_environment: Option<LockedEnvironment>,
}

/// The lock's key of a skill's environment of kind `kind`:
/// `[skill.NAME.environment]` (Python, the key lockfiles have always had)
/// and `[skill.NAME.node-environment]`.
pub fn lock_key(kind: EnvKind) -> &'static str {
    match kind {
        EnvKind::Python => "environment",
        EnvKind::Node => "node-environment",
    }
}

/// The environments the lock of skills root `root` records for skill
/// `skill` (Python first; empty: no lock, or none for it); an error names
/// the lockfile, also when a record is not one of its kind
/// ([`LockedEnvironment::validate`]).
pub fn locked_environments(root: &Path, skill: &str) -> Result<Vec<LockedEnvironment>, String> {
    let lockfile = lock_path(root);
    let text = match std::fs::read_to_string(&lockfile) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("{}: {e}", lockfile.display())),
    };
    let mut lock: LockEnvironments =
        toml::from_str(&text).map_err(|e| format!("{}: {}", lockfile.display(), e.message()))?;
    let Some(entry) = lock.skill.remove(skill) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for (kind, env) in [
        (EnvKind::Python, entry.environment),
        (EnvKind::Node, entry.node_environment),
    ] {
        let Some(env) = env else { continue };
        if env.kind != kind {
            return Err(format!(
                "{}: [skill.{skill}.{}] records a {} environment",
                lockfile.display(),
                lock_key(kind),
                env.kind.as_str()
            ));
        }
        env.validate()
            .map_err(|e| format!("{}: skill '{skill}': {e}", lockfile.display()))?;
        out.push(env);
    }
    Ok(out)
}

/// The environments skill `skill_dir` (named `name`, found under `root`)
/// runs with, one per kind it declares dependencies of (`python_given`: the
/// operator gave the skill an interpreter, so its Python declarations are
/// not used): each ready when the lock records it and the store holds it;
/// else why not (the first declared requirement named).
pub fn environment_for(
    store: &EnvStore,
    name: &str,
    skill_dir: &Path,
    root: &Path,
    python_given: bool,
) -> Result<Vec<ReadyEnvironment>, EnvProblem> {
    if !may_declare_dependencies(skill_dir) {
        return Ok(Vec::new());
    }
    let declared: Vec<Dependencies> = declared_dependencies(skill_dir)
        .map_err(EnvProblem::Invalid)?
        .into_iter()
        .filter(|d| !(python_given && d.kind == EnvKind::Python))
        .collect();
    if declared.is_empty() {
        return Ok(Vec::new());
    }
    let lockfile = lock_path(root);
    let locked_all = locked_environments(root, name).map_err(|e| {
        EnvProblem::Invalid(vec![Diagnostic::new(
            Code::EnvironmentMissing,
            Severity::Error,
            e,
        )])
    })?;
    let mut out = Vec::new();
    for deps in declared {
        let first = &deps.requirements[0];
        let locked = locked_all
            .iter()
            .find(|l| l.kind == deps.kind)
            .ok_or_else(|| EnvProblem::NotLocked {
                skill: name.to_owned(),
                requirement: first.text.clone(),
                file: format!("{}:{}", first.file, first.line),
                lockfile: lockfile.clone(),
            })?;
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
        out.push(store.check(name, locked)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A resolution of `six==1.17.0` for Python `version`, as publish makes
    /// it, and the skill's declarations it is for.
    fn published_six(version: &str) -> (LockedEnvironment, Vec<Dependencies>, tempfile::TempDir) {
        let dir = skill_with(&[(REQUIREMENTS_TXT, "six==1.17.0\n")]);
        let declared = declared_dependencies(dir.path()).unwrap();
        let packages = vec![LockedPackage {
            name: "six".into(),
            version: "1.17.0".into(),
            hashes: vec![Digest::from_bytes([3; 32])],
            ..LockedPackage::default()
        }];
        let env = LockedEnvironment {
            kind: EnvKind::Python,
            key: environment_key(EnvKind::Python, "/usr/bin/python3", version, &packages),
            interpreter: "/usr/bin/python3".into(),
            python: version.into(),
            node: String::new(),
            input: declared[0].input_digest(),
            tree: None,
            packages,
        };
        (env, declared, dir)
    }

    #[test]
    fn a_published_resolution_installs_on_the_same_python_minor_or_node_major_only() {
        assert_eq!(
            compatible_interpreter_version(EnvKind::Python, "3.12.4"),
            "3.12"
        );
        assert_eq!(
            compatible_interpreter_version(EnvKind::Python, "3.12.11"),
            "3.12"
        );
        assert_ne!(
            compatible_interpreter_version(EnvKind::Python, "3.13.0"),
            compatible_interpreter_version(EnvKind::Python, "3.12.4")
        );
        assert_eq!(
            compatible_interpreter_version(EnvKind::Node, "v20.20.2"),
            "20"
        );
        assert_eq!(
            compatible_interpreter_version(EnvKind::Node, "22.1.0"),
            "22"
        );
    }

    #[test]
    fn a_published_resolution_moved_to_a_compatible_interpreter_keeps_its_pins_and_a_valid_key() {
        let (env, declared, _dir) = published_six("3.12.4");
        check_published(std::slice::from_ref(&env), &declared).unwrap();
        let here = env.for_interpreter("/opt/python/bin/python3", "3.12.7");
        assert_eq!(here.pins(), env.pins());
        assert_eq!(here.input, env.input);
        assert_ne!(
            here.key, env.key,
            "the key names the interpreter and its version"
        );
        check_published(&[here], &declared).unwrap();
    }

    #[test]
    fn a_tampered_or_smuggling_published_resolution_is_refused() {
        let (env, declared, _dir) = published_six("3.12.4");
        // A package changed under the old key.
        let mut edited = env.clone();
        edited.packages[0].version = "1.99.0".into();
        assert!(check_published(&[edited], &declared).is_err());
        // An option smuggled into a requirements line, re-keyed to match.
        let mut smuggled = env.clone();
        smuggled.packages[0].name = "six\n--index-url https://evil.example".into();
        smuggled.key = environment_key(
            EnvKind::Python,
            &smuggled.interpreter,
            &smuggled.python,
            &smuggled.packages,
        );
        assert!(check_published(&[smuggled], &declared).is_err());
        // Two records of one kind, a built tree, other requirements.
        assert!(check_published(&[env.clone(), env.clone()], &declared).is_err());
        let mut built = env.clone();
        built.tree = Some(Digest::from_bytes([9; 32]));
        assert!(check_published(&[built], &declared).is_err());
        let other = skill_with(&[(REQUIREMENTS_TXT, "six==1.16.0\n")]);
        let other = declared_dependencies(other.path()).unwrap();
        assert!(check_published(std::slice::from_ref(&env), &other).is_err());
        // A relative interpreter path.
        let mut relative = env.clone();
        relative.interpreter = "python3".into();
        relative.key = environment_key(EnvKind::Python, "python3", "3.12.4", &relative.packages);
        assert!(check_published(&[relative], &declared).is_err());
        // And the untouched one passes.
        check_published(&[env], &declared).unwrap();
    }

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
        let deps = declared_dependencies(dir.path()).unwrap().remove(0);
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
        assert!(declared_dependencies(dir.path()).unwrap().is_empty());
        let empty = skill_with(&[(REQUIREMENTS_TXT, "# nothing\n\n")]);
        assert!(declared_dependencies(empty.path()).unwrap().is_empty());
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
            ..LockedPackage::default()
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
            node: String::new(),
            tree: None,
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
            node: String::new(),
            tree: None,
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
            node: String::new(),
            tree: None,
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
            node: String::new(),
            tree: None,
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

    const ODD: &str = "sha512-CQpnWPrDwmP1+SMHXZhtLtJv90yiyVfluGsX5iNCVkrhQtU3TQHsUWPG9wkdk9Lgd5yNpAg9jQEo90CBaXgWMA==";
    const NUMBER: &str = "sha512-Wu1VHeILBK8KAWJUAiSZQX94GmOE45Rg6/538fKwiloUu21KncEkYGPqob2oSZ5mUT73vLGrHQjKw3KMPwfDzg==";

    #[test]
    fn package_json_dependencies_and_optional_ones_are_read_dev_dependencies_are_not() {
        let dir = skill_with(&[(
            PACKAGE_JSON,
            "{\n  \"dependencies\": {\n    \"is-odd\": \"^3.0.1\",\n    \"@scope/pkg\": \"~1.2 || >=2\"\n  },\n  \
             \"optionalDependencies\": {\n    \"fsevents\": \"*\"\n  },\n  \
             \"devDependencies\": {\n    \"x\": \"git+https://e.example/x.git\"\n  }\n}\n",
        )]);
        let deps = declared_dependencies(dir.path()).unwrap().remove(0);
        assert_eq!(deps.kind, EnvKind::Node);
        let got: Vec<(&str, &str, u32, bool)> = deps
            .requirements
            .iter()
            .map(|r| (r.name.as_str(), r.npm_spec(), r.line, r.optional))
            .collect();
        assert_eq!(
            got,
            [
                ("@scope/pkg", "~1.2 || >=2", 4, false),
                ("is-odd", "^3.0.1", 3, false),
                ("fsevents", "*", 7, true)
            ]
        );
        assert_eq!(deps.shipped_lock, None);
        let none = skill_with(&[(PACKAGE_JSON, "{\"name\": \"x\", \"scripts\": {}}")]);
        assert!(declared_dependencies(none.path()).unwrap().is_empty());
    }

    #[test]
    fn a_node_skill_cannot_choose_its_source_every_refused_spec_named_at_its_line() {
        let dir = skill_with(&[(
            PACKAGE_JSON,
            "{\n\"dependencies\": {\n\"a\": \"git+ssh://git@e.example/a.git\",\n\"b\": \"github:u/b\",\n\
             \"c\": \"https://e.example/c.tgz\",\n\"d\": \"file:../d\",\n\"e\": \"link:../e\",\n\
             \"f\": \"workspace:*\",\n\"g\": \"npm:other@1\",\n\"h\": \"user/repo\",\n\"i\": \"1.0.0\",\n\
             \"../j\": \"1\"\n},\n\"bundleDependencies\": true\n}\n",
        )]);
        let problems = declared_dependencies(dir.path()).unwrap_err();
        let mut lines: Vec<u32> = problems.iter().map(|d| d.line.unwrap()).collect();
        lines.sort_unstable();
        assert_eq!(lines, [3, 4, 5, 6, 7, 8, 9, 10, 12, 14], "{problems:#?}");
        assert!(
            problems
                .iter()
                .all(|d| d.code == Code::EnvironmentRequirementInvalid
                    && d.file.as_ref().unwrap().ends_with(PACKAGE_JSON))
        );
    }

    fn lock_text(extra: &str) -> String {
        format!(
            "{{\"lockfileVersion\": 3, \"packages\": {{\n\"\": {{\"dependencies\": {{\"is-odd\": \"^3.0.1\"}}}},\n\
             \"node_modules/is-number\": {{\"version\": \"6.0.0\", \"resolved\": \"https://registry.npmjs.org/is-number/-/is-number-6.0.0.tgz\", \"integrity\": \"{NUMBER}\"}},\n\
             \"node_modules/is-odd\": {{\"version\": \"3.0.1\", \"resolved\": \"https://registry.npmjs.org/is-odd/-/is-odd-3.0.1.tgz\", \"integrity\": \"{ODD}\", \"dependencies\": {{\"is-number\": \"^6.0.0\"}}}}{extra}\n}}}}\n"
        )
    }

    #[test]
    fn a_shipped_lock_that_matches_is_the_resolution_and_one_that_does_not_is_ignored() {
        let manifest = "{\"dependencies\": {\"is-odd\": \"^3.0.1\"}}";
        let dir = skill_with(&[
            (PACKAGE_JSON, manifest),
            (PACKAGE_LOCK_JSON, &lock_text("")),
        ]);
        let deps = declared_dependencies(dir.path()).unwrap().remove(0);
        let lock = deps.shipped_lock.as_ref().unwrap();
        let paths: Vec<&str> = lock
            .packages
            .iter()
            .map(|p| p.path.as_deref().unwrap())
            .collect();
        assert_eq!(paths, ["node_modules/is-number", "node_modules/is-odd"]);
        assert_eq!(lock.packages[1].integrity.as_ref().unwrap().as_str(), ODD);
        assert_eq!(lock.packages[1].dependencies["is-number"], "^6.0.0");
        assert_eq!(lock.registries[0].1, NPM_DEFAULT_REGISTRY);
        assert!(deps.input_text().contains("package-lock.json sha256:"));
        // Another range in package.json: the lock is not its resolution.
        let other = skill_with(&[
            (PACKAGE_JSON, "{\"dependencies\": {\"is-odd\": \"^3.0.0\"}}"),
            (PACKAGE_LOCK_JSON, &lock_text("")),
        ]);
        let deps = declared_dependencies(other.path()).unwrap().remove(0);
        assert_eq!(deps.shipped_lock, None);
        // A dev-only package in the lock plays no part.
        let dev = skill_with(&[
            (PACKAGE_JSON, manifest),
            (
                PACKAGE_LOCK_JSON,
                &lock_text(
                    ",\n\"node_modules/tool\": {\"dev\": true, \"resolved\": \"git+https://e.example/t.git\"}",
                ),
            ),
        ]);
        let deps = declared_dependencies(dev.path()).unwrap().remove(0);
        assert_eq!(deps.shipped_lock.unwrap().packages.len(), 2);
    }

    #[test]
    fn a_shipped_lock_with_an_install_script_a_link_or_no_integrity_is_refused() {
        let manifest = "{\"dependencies\": {\"is-odd\": \"^3.0.1\"}}";
        let bad = lock_text(
            ",\n\"node_modules/native\": {\"version\": \"1.0.0\", \"resolved\": \"https://registry.npmjs.org/native/-/native-1.0.0.tgz\", \"integrity\": \"sha512-AAAA\", \"hasInstallScript\": true},\n\
             \"node_modules/local\": {\"link\": true, \"resolved\": \"../local\"},\n\
             \"packages/ws\": {\"version\": \"1.0.0\"}",
        );
        let dir = skill_with(&[(PACKAGE_JSON, manifest), (PACKAGE_LOCK_JSON, &bad)]);
        let problems = declared_dependencies(dir.path()).unwrap_err();
        let text: Vec<String> = problems.iter().map(ToString::to_string).collect();
        let all = text.join("\n");
        assert!(all.contains("has an install script"), "{all}");
        assert!(all.contains("is not a sha512 digest"), "{all}");
        assert!(all.contains("is a link to a local folder"), "{all}");
        assert!(
            all.contains("'packages/ws' is a local folder or workspace"),
            "{all}"
        );
        assert!(
            problems
                .iter()
                .all(|d| d.file.as_ref().unwrap().ends_with(PACKAGE_LOCK_JSON))
        );
        let lines: Vec<u32> = problems.iter().map(|d| d.line.unwrap()).collect();
        assert!(
            lines.contains(&5) && lines.contains(&6) && lines.contains(&7),
            "{lines:?}"
        );
    }

    #[test]
    fn integrity_is_a_sha512_sri_and_sha1_alone_is_refused() {
        assert_eq!(Integrity::parse(ODD).unwrap().as_str(), ODD);
        let both = format!("sha1-Aa0= {ODD}");
        assert_eq!(Integrity::parse(&both).unwrap().as_str(), ODD);
        assert!(Integrity::parse("sha1-qUqW4OhOwEZs5UkXr1mMKQ/ZzIE=").is_err());
        assert!(Integrity::parse("sha512-AAAA").is_err());
        assert!(toml::from_str::<BTreeMap<String, Integrity>>("i = \"sha256-x\"").is_err());
    }

    #[test]
    fn a_resolved_url_is_a_registry_tarball_of_that_exact_package() {
        assert_eq!(
            registry_of("https://r.example/npm/@s/b/-/b-1.0.0.tgz", "@s/b", "1.0.0").as_deref(),
            Some("https://r.example/npm")
        );
        assert_eq!(registry_of("https://r.example/x.tgz", "x", "1.0.0"), None);
        assert_eq!(
            registry_of("https://r.example/b/-/b-1.0.1.tgz", "b", "1.0.0"),
            None
        );
        assert_eq!(registry_of("file:/b/-/b-1.0.0.tgz", "b", "1.0.0"), None);
        assert_eq!(
            node_modules_name("node_modules/a/node_modules/@s/b"),
            Some("@s/b")
        );
        assert_eq!(node_modules_name("packages/a"), None);
    }

    fn node_env(store: &EnvStore) -> LockedEnvironment {
        let packages = vec![LockedPackage {
            path: Some("node_modules/is-odd".into()),
            name: "is-odd".into(),
            version: "3.0.1".into(),
            integrity: Some(Integrity::parse(ODD).unwrap()),
            ..LockedPackage::default()
        }];
        let key = environment_key(EnvKind::Node, "/usr/bin/node", "20.20.2", &packages);
        let dir = store.path_of(&key);
        std::fs::create_dir_all(dir.join("node_modules/is-odd")).unwrap();
        std::fs::create_dir_all(dir.join("node_modules/.bin")).unwrap();
        std::fs::write(
            dir.join("node_modules/is-odd/index.js"),
            "module.exports = 1;\n",
        )
        .unwrap();
        std::fs::write(dir.join(NPM_HIDDEN_LOCKFILE), "{}").unwrap();
        std::os::unix::fs::symlink("../is-odd/index.js", dir.join("node_modules/.bin/odd"))
            .unwrap();
        let tree = NodeTree::of(&dir).unwrap();
        let mut env = LockedEnvironment {
            kind: EnvKind::Node,
            key,
            interpreter: "/usr/bin/node".into(),
            python: String::new(),
            node: "20.20.2".into(),
            input: Digest::from_bytes([1; 32]),
            tree: Some(tree.tree),
            packages,
        };
        env.packages[0].files = tree.packages.get("node_modules/is-odd").copied();
        std::fs::write(dir.join(MARKER_FILE), env.to_toml()).unwrap();
        env
    }

    #[test]
    fn a_node_environment_runs_with_its_node_modules_and_verify_names_the_changed_package() {
        let store_dir = tempfile::tempdir().unwrap();
        let store = EnvStore::new(store_dir.path());
        let env = node_env(&store);
        env.validate().unwrap();
        let ready = store.verify("s", &env).unwrap();
        assert_eq!(ready.node_modules, Some(ready.dir.join(NODE_MODULES)));
        assert_eq!(ready.python, None);
        assert!(ready.bin_dirs.is_empty(), "/usr/bin is shown anyway");
        // npm's own cache of the tree is not part of it.
        std::fs::write(ready.dir.join(NPM_HIDDEN_LOCKFILE), "{\"other\": 1}").unwrap();
        store.verify("s", &env).unwrap();
        let index = ready.dir.join("node_modules/is-odd/index.js");
        std::fs::write(&index, "module.exports = 2;\n").unwrap();
        let e = store.verify("s", &env).unwrap_err();
        assert_eq!(e.code(), Code::EnvironmentModified);
        assert!(
            e.to_string().contains("is-odd@3.0.1 (node_modules/is-odd)"),
            "{e}"
        );
        std::fs::write(&index, "module.exports = 1;\n").unwrap();
        store.verify("s", &env).unwrap();
        std::fs::remove_file(ready.dir.join("node_modules/.bin/odd")).unwrap();
        std::os::unix::fs::symlink("/bin/sh", ready.dir.join("node_modules/.bin/odd")).unwrap();
        let e = store.verify("s", &env).unwrap_err();
        assert!(e.to_string().contains("outside the locked packages"), "{e}");
        // The cheap check only reads the marker.
        assert!(store.check("s", &env).is_ok());
    }

    #[test]
    fn the_node_key_depends_on_paths_and_integrity_and_the_node_major_only() {
        let store_dir = tempfile::tempdir().unwrap();
        let env = node_env(&EnvStore::new(store_dir.path()));
        let key = |version: &str, packages: &[LockedPackage]| {
            environment_key(EnvKind::Node, "/usr/bin/node", version, packages)
        };
        assert_eq!(key("20.1.0", &env.packages), env.key);
        assert_ne!(key("22.1.0", &env.packages), env.key);
        let mut moved = env.packages.clone();
        moved[0].path = Some("node_modules/x/node_modules/is-odd".into());
        assert_ne!(key("20.20.2", &moved), env.key);
        let mut other = env.packages.clone();
        other[0].integrity = Some(Integrity::parse(NUMBER).unwrap());
        assert_ne!(key("20.20.2", &other), env.key);
        // What a build adds is not part of the key.
        let mut built = env.packages.clone();
        built[0].files = None;
        assert_eq!(key("20.20.2", &built), env.key);
    }

    #[test]
    fn the_store_of_root_is_a_folder_the_sandbox_user_can_traverse() {
        assert_eq!(default_store_dir(0), Path::new(ROOT_STORE_DIR));
    }
}
