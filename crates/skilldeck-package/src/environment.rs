//! Building skill environments (issue 31) outside the sandbox, at install
//! time, with `uv`:
//!
//! 1. resolution: the skill's declared requirements
//!    ([`skilldeck::environment::declared_dependencies`]) go through `uv pip
//!    compile --generate-hashes` for the chosen interpreter, against the
//!    operator's index or wheel folder ([`EnvironmentOptions`]); every
//!    resolved package is recorded with the sha256 of each of its
//!    artifacts ([`LockedEnvironment`]), keyed by content
//!    ([`skilldeck::environment::environment_key`]). A frozen install, or
//!    one whose skill declares the same requirements as the lock recorded,
//!    reuses the locked set and resolves nothing;
//! 2. build: `uv venv --relocatable` then `uv pip sync --require-hashes`
//!    of exactly the locked set into a temporary folder of the store, the
//!    marker written last, then one rename to `STORE/KEY`: an environment
//!    is complete or absent. One with the same key already there is shared
//!    (two skills with the same set and interpreter: one environment);
//! 3. garbage collection ([`gc`]): every install registers its lockfile
//!    with the store; an environment that no registered lock records is
//!    removed.
//!
//! Every build holds the store's lock file (`STORE/.lock`), so a
//! collection never removes what an install is building.

use std::collections::BTreeSet;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use skilldeck::environment::{
    Dependencies, EnvKind, EnvStore, LockedEnvironment, LockedPackage, MARKER_FILE,
    NPM_DEFAULT_REGISTRY, NodeTree, normalise_name,
};
use skilldeck::{Code, Diagnostic, Digest, Severity};

use crate::error::Error;
use crate::lock::Lockfile;

/// The variable naming the `uv` binary (else `uv` on `PATH`).
pub const UV_ENV: &str = "SKILLDECK_UV";

/// The variable naming the `npm` binary (else `npm` on `PATH`).
pub const NPM_ENV: &str = "SKILLDECK_NPM";

/// The Node interpreter Node environments are built for unless the
/// operator names another: the sandbox's `node` (a system folder it always
/// shows).
pub const DEFAULT_NODE: &str = "/usr/bin/node";

/// The interpreter environments are built for unless the operator names
/// another: the sandbox's `python3` (a system folder it always shows).
pub const DEFAULT_PYTHON: &str = "/usr/bin/python3";

/// Characters of `uv`'s error output quoted in a build failure (its end,
/// where the reason is).
pub const MAX_UV_ERROR_CHARS: usize = 2_000;

/// The folder of the store where installs register their lockfiles (the
/// roots of [`gc`]).
pub const LOCKS_DIR: &str = ".locks";

/// Prefix of a build in progress (or one a crash left) in the store.
pub const BUILD_PREFIX: &str = ".build-";

/// The store's lock file.
const STORE_LOCK: &str = ".lock";

/// How environments are built: the tools, where packages come from, where
/// environments go.
#[derive(Debug, Clone)]
pub struct EnvironmentOptions {
    /// The `uv` binary the operator named; `None`: `$SKILLDECK_UV`, else
    /// `uv` on `PATH` ([`find_uv`], looked up only when a skill declares
    /// dependencies, so an install without any needs no uv).
    pub uv: Option<PathBuf>,
    /// The interpreter environments are built for (absolute).
    pub python: PathBuf,
    /// The package index (`uv --index-url`); `None`: uv's default (PyPI).
    pub index_url: Option<String>,
    /// Folders of wheels and sdists (`uv --find-links`).
    pub find_links: Vec<PathBuf>,
    /// No network: Python packages come from `find_links` (and an index on
    /// `file://`) and uv's cache only; Node packages from npm's cache
    /// (`npm --offline`).
    pub offline: bool,
    /// The `npm` binary the operator named; `None`: `$SKILLDECK_NPM`, else
    /// `npm` on `PATH` ([`find_npm`], looked up only when a skill declares
    /// Node dependencies).
    pub npm: Option<PathBuf>,
    /// The Node interpreter Node environments are built for (absolute).
    pub node: PathBuf,
    /// The npm registry (`None`: [`NPM_DEFAULT_REGISTRY`]).
    pub npm_registry: Option<String>,
    /// npm's cache folder (`npm --cache`; `None`: npm's default,
    /// `~/.npm`): with `offline`, the only source of Node packages.
    pub npm_cache: Option<PathBuf>,
    /// Where environments are stored.
    pub store: EnvStore,
}

impl Default for EnvironmentOptions {
    /// uv found when needed, the default interpreter, the process's store,
    /// PyPI, online.
    fn default() -> Self {
        EnvironmentOptions {
            uv: None,
            python: PathBuf::from(DEFAULT_PYTHON),
            index_url: None,
            find_links: Vec::new(),
            offline: false,
            npm: None,
            node: PathBuf::from(DEFAULT_NODE),
            npm_registry: None,
            npm_cache: None,
            store: EnvStore::from_env(euid()),
        }
    }
}

impl EnvironmentOptions {
    /// The options `[environments]` gives (its relative paths already
    /// resolved by the config's layers), over the defaults.
    pub fn from_config(config: &skilldeck::deck::EnvironmentsConfig) -> EnvironmentOptions {
        let defaults = EnvironmentOptions::default();
        EnvironmentOptions {
            uv: config.uv.clone(),
            python: config.python.clone().unwrap_or(defaults.python),
            index_url: config.index_url.clone(),
            find_links: config.find_links.clone(),
            offline: config.offline.unwrap_or(false),
            npm: config.npm.clone(),
            node: config.node.clone().unwrap_or(defaults.node),
            npm_registry: config.npm_registry.clone(),
            npm_cache: config.npm_cache.clone(),
            store: defaults.store,
        }
    }

    /// The npm registry packages come from, without a trailing `/`.
    pub fn registry(&self) -> String {
        self.npm_registry
            .as_deref()
            .unwrap_or(NPM_DEFAULT_REGISTRY)
            .trim_end_matches('/')
            .to_owned()
    }

    fn source_args(&self, cmd: &mut Command) {
        if let Some(url) = &self.index_url {
            cmd.arg("--index-url").arg(url);
        } else if self.offline {
            cmd.arg("--no-index");
        }
        for dir in &self.find_links {
            cmd.arg("--find-links").arg(dir);
        }
        if self.offline {
            cmd.arg("--offline");
        }
    }
}

fn euid() -> u32 {
    #[cfg(target_os = "linux")]
    {
        rustix::process::geteuid().as_raw()
    }
    #[cfg(not(target_os = "linux"))]
    {
        1
    }
}

fn failed(message: String, help: &str) -> Error {
    Error::refused(
        Diagnostic::new(Code::EnvironmentBuildFailed, Severity::Error, message).with_help(help),
    )
}

/// The `uv` binary: `configured`, else `$SKILLDECK_UV`, else `uv` on
/// `PATH`; refused, saying how to get one, when none is executable.
pub fn find_uv(configured: Option<&Path>) -> Result<PathBuf, Error> {
    find_tool(
        &Tool {
            name: "uv",
            env: UV_ENV,
            flag: "--uv",
            not_executable_hint: "`bash scripts/install-uv.sh` installs one from PyPI",
            missing: "uv is needed to build skill environments and was not found",
            install_hint: "install uv (`pip install uv`, or `bash scripts/install-uv.sh`)",
        },
        configured,
    )
}

/// A program skilldeck runs to build environments, and what to tell a user
/// who does not have it.
struct Tool {
    /// The file name looked up on `PATH` (`uv`).
    name: &'static str,
    /// The variable naming it ([`UV_ENV`]).
    env: &'static str,
    /// The command-line flag naming it (`--uv`).
    flag: &'static str,
    /// Said after "point FLAG (or ENV) at the NAME binary" when the named file is not executable.
    not_executable_hint: &'static str,
    /// Why it is needed ("uv is needed to ... and was not found").
    missing: &'static str,
    /// How to get it.
    install_hint: &'static str,
}

/// The one lookup rule of [`find_uv`] and [`find_npm`]: the configured path,
/// else the tool's variable, else the first executable file of that name on
/// `PATH`.
fn find_tool(tool: &Tool, configured: Option<&Path>) -> Result<PathBuf, Error> {
    let from_env = std::env::var_os(tool.env)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    if let Some(p) = configured.map(Path::to_path_buf).or(from_env) {
        if is_executable(&p) {
            return Ok(p);
        }
        let mut hint = format!(
            "point {} (or {}) at the {} binary",
            tool.flag, tool.env, tool.name
        );
        if !tool.not_executable_hint.is_empty() {
            hint.push_str("; ");
            hint.push_str(tool.not_executable_hint);
        }
        return Err(failed(
            format!("{} '{}' is not an executable file", tool.name, p.display()),
            &hint,
        ));
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let p = dir.join(tool.name);
            if is_executable(&p) {
                return Ok(p);
            }
        }
    }
    Err(failed(
        format!("{} (not on PATH, no {})", tool.missing, tool.env),
        &format!(
            "{}, pass {} PATH, or install without environments (--no-environments: the \
             skill's scripts then do not run)",
            tool.install_hint, tool.flag
        ),
    ))
}

/// A regular file (symlinks followed) with an `x` bit: the rule of
/// [`crate::folder::is_executable`].
fn is_executable(p: &Path) -> bool {
    fs::metadata(p).is_ok_and(|m| m.is_file() && crate::folder::is_executable(&m))
}

/// The version of the interpreter `python` (`3.11.2`).
pub fn python_version(python: &Path) -> Result<String, Error> {
    let out = Command::new(python)
        .args([
            "-I",
            "-c",
            "import platform; print(platform.python_version())",
        ])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| {
            failed(
                format!("cannot run the interpreter {}: {e}", python.display()),
                "point --python (or [environments] python) at a Python 3 interpreter the \
                 sandbox can read (/usr/bin/python3)",
            )
        })?;
    let version = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if !out.status.success() || version.is_empty() {
        return Err(failed(
            format!("{} did not report its version", python.display()),
            "point --python at a working Python 3 interpreter",
        ));
    }
    Ok(version)
}

/// Resolves `deps` of skill `skill` (declared in `skill_dir`) for the
/// options' interpreter: every package pinned with its hashes.
pub fn resolve(
    skill: &str,
    skill_dir: &Path,
    deps: &Dependencies,
    options: &EnvironmentOptions,
) -> Result<LockedEnvironment, Error> {
    if options.offline && options.find_links.is_empty() && options.index_url.is_none() {
        return Err(failed(
            format!(
                "skill '{skill}': an offline install needs a source of Python packages: \
                 --find-links DIR (a folder of wheels) or --index-url file:///..."
            ),
            "pass --find-links DIR (or [environments] find-links)",
        ));
    }
    let uv = find_uv(options.uv.as_deref())?;
    let python = python_version(&options.python)?;
    let work = tempdir_in_store(options)?;
    let input = work.join("requirements.in");
    fs::write(&input, deps.input_text()).map_err(|e| Error::io(&input, e))?;
    let mut cmd = Command::new(&uv);
    cmd.args([
        "pip",
        "compile",
        "--no-config",
        "--generate-hashes",
        "--no-header",
    ])
    .args([
        "--no-annotate",
        "--quiet",
        "--python-preference",
        "only-system",
    ])
    .arg("--python")
    .arg(&options.python)
    .arg("--output-file")
    .arg(work.join("requirements.txt"))
    .arg(&input);
    options.source_args(&mut cmd);
    let result = run_uv(&mut cmd);
    let compiled = fs::read_to_string(work.join("requirements.txt"));
    let _ = fs::remove_dir_all(&work);
    if let Err(stderr) = result {
        return Err(resolution_failed(skill, skill_dir, deps, &stderr, options));
    }
    let text = compiled.map_err(|e| Error::io(work.join("requirements.txt"), e))?;
    let packages = parse_compiled(&text).map_err(|m| {
        failed(
            format!("skill '{skill}': uv's resolution could not be read: {m}"),
            "report this with the uv version (`uv --version`)",
        )
    })?;
    let interpreter = options.python.to_string_lossy().into_owned();
    Ok(LockedEnvironment::resolved(
        EnvKind::Python,
        &interpreter,
        &python,
        deps.input_digest(),
        packages,
    ))
}

/// The failure of a resolution, naming the declared requirement uv's
/// message is about (the first one it names), with its file and line.
fn resolution_failed(
    skill: &str,
    skill_dir: &Path,
    deps: &Dependencies,
    stderr: &str,
    options: &EnvironmentOptions,
) -> Error {
    let lower = stderr.to_ascii_lowercase();
    let named = deps
        .requirements
        .iter()
        .find(|r| lower.contains(&r.name) || lower.contains(&r.name.replace('-', "_")));
    let tail = tail_chars(stderr.trim(), MAX_UV_ERROR_CHARS);
    let from = match (
        &options.index_url,
        options.find_links.is_empty(),
        options.offline,
    ) {
        (Some(url), _, _) => format!("index {url}"),
        (None, false, true) => "the wheel folder (offline)".to_owned(),
        (None, false, false) => "PyPI and the wheel folder".to_owned(),
        (None, true, true) => "uv's cache (offline)".to_owned(),
        (None, true, false) => "PyPI".to_owned(),
    };
    let mut d = match named {
        Some(r) => Diagnostic::new(
            Code::EnvironmentBuildFailed,
            Severity::Error,
            format!(
                "skill '{skill}': requirement '{}' cannot be installed from {from}:\n{tail}",
                r.text
            ),
        )
        .in_file(skill_dir.join(&r.file))
        .at(skilldeck::Pos {
            line: r.line,
            column: 1,
            len: 0,
        }),
        None => Diagnostic::new(
            Code::EnvironmentBuildFailed,
            Severity::Error,
            format!("skill '{skill}': its requirements cannot be resolved from {from}:\n{tail}"),
        )
        .in_file(skill_dir.join(deps.files()[0])),
    };
    d.help = Some(
        "check the name and version on the index; offline, put its wheel in the --find-links \
         folder; nothing was installed"
            .to_owned(),
    );
    Error::refused(d)
}

fn tail_chars(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_owned();
    }
    let skip = count - max;
    format!("…{}", text.chars().skip(skip).collect::<String>())
}

/// Parses `uv pip compile --generate-hashes` output: `name==version \`
/// followed by `--hash=sha256:HEX` lines.
pub fn parse_compiled(text: &str) -> Result<Vec<LockedPackage>, String> {
    let mut packages: Vec<LockedPackage> = Vec::new();
    for raw in text.lines() {
        let line = raw.trim().trim_end_matches('\\').trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(hex) = line.strip_prefix("--hash=sha256:") {
            let last = packages
                .last_mut()
                .ok_or_else(|| format!("a hash before any package: {line}"))?;
            let digest = Digest::from_hex(hex).map_err(|e| format!("{line}: {e}"))?;
            last.hashes.push(digest);
            continue;
        }
        if line.starts_with('-') {
            return Err(format!("unexpected option line: {line}"));
        }
        let spec = line.split(';').next().unwrap_or(line).trim();
        let (name, version) = spec
            .split_once("==")
            .ok_or_else(|| format!("not pinned: {line}"))?;
        packages.push(LockedPackage {
            name: normalise_name(name.trim()),
            version: version.trim().to_owned(),
            ..LockedPackage::default()
        });
    }
    if let Some(p) = packages.iter().find(|p| p.hashes.is_empty()) {
        return Err(format!("package {} has no hash", p.name));
    }
    packages.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(packages)
}

fn run_uv(cmd: &mut Command) -> Result<(), String> {
    // uv's own settings files never change what a skill gets.
    cmd.env_remove("UV_INDEX_URL")
        .env_remove("UV_EXTRA_INDEX_URL")
        .env_remove("UV_FIND_LINKS")
        .env_remove("UV_INDEX")
        .env_remove("UV_DEFAULT_INDEX")
        .env("UV_NO_PROGRESS", "1")
        .stdin(Stdio::null());
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {:?}: {e}", cmd.get_program()))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

fn ensure_store(store: &EnvStore) -> Result<(), Error> {
    let dir = store.dir();
    fs::create_dir_all(dir.join(LOCKS_DIR)).map_err(|e| Error::io(dir, e))?;
    // The sandbox user reads environments: the store is traversable.
    set_mode(dir, 0o755);
    Ok(())
}

fn tempdir_in_store(options: &EnvironmentOptions) -> Result<PathBuf, Error> {
    ensure_store(&options.store)?;
    let dir = options.store.dir().join(format!(
        "{BUILD_PREFIX}resolve-{}-{}",
        std::process::id(),
        next_id()
    ));
    fs::create_dir(&dir).map_err(|e| Error::io(&dir, e))?;
    Ok(dir)
}

fn next_id() -> u64 {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// Characters of npm's error output quoted in a build failure (its end).
pub const MAX_NPM_ERROR_CHARS: usize = 2_000;

/// The `npm` binary: `configured`, else `$SKILLDECK_NPM`, else `npm` on
/// `PATH`; refused, saying how to get one, when none is executable.
pub fn find_npm(configured: Option<&Path>) -> Result<PathBuf, Error> {
    find_tool(
        &Tool {
            name: "npm",
            env: NPM_ENV,
            flag: "--npm",
            not_executable_hint: "",
            missing: "npm is needed to build the Node environments of skills that declare \
                      dependencies in package.json, and was not found",
            install_hint: "install Node.js with npm (`apt-get install nodejs npm`)",
        },
        configured,
    )
}

/// The version of the Node interpreter `node` (`20.20.2`).
pub fn node_version(node: &Path) -> Result<String, Error> {
    let out = Command::new(node)
        .arg("--version")
        .env_remove("NODE_OPTIONS")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| {
            failed(
                format!("cannot run the Node interpreter {}: {e}", node.display()),
                "point --node (or [environments] node) at a Node interpreter the sandbox can \
                 read (/usr/bin/node)",
            )
        })?;
    let version = String::from_utf8_lossy(&out.stdout)
        .trim()
        .trim_start_matches('v')
        .to_owned();
    if !out.status.success() || version.is_empty() {
        return Err(failed(
            format!("{} did not report its version", node.display()),
            "point --node at a working Node interpreter",
        ));
    }
    Ok(version)
}

/// An `npm` command in `work` whose packages come only from the options'
/// registry (and cache): npm's user and global config files are replaced
/// by empty ones of `work`, every `npm_config_*` variable is removed, and
/// the registry is given on the command line (npm's highest precedence);
/// lifecycle scripts never run.
fn npm_command(npm: &Path, options: &EnvironmentOptions, work: &Path) -> Result<Command, Error> {
    let user = work.join(".skilldeck-user.npmrc");
    let global = work.join(".skilldeck-global.npmrc");
    for f in [&user, &global] {
        fs::write(f, "").map_err(|e| Error::io(f, e))?;
    }
    let mut cmd = Command::new(npm);
    cmd.current_dir(work).stdin(Stdio::null());
    for (name, _) in std::env::vars_os() {
        if name
            .to_string_lossy()
            .to_ascii_lowercase()
            .starts_with("npm_config_")
        {
            cmd.env_remove(name);
        }
    }
    // npm runs on the operator's node (`#!/usr/bin/env node`).
    if let Some(bin) = options.node.parent() {
        let mut path = std::ffi::OsString::from(bin.as_os_str());
        if let Some(rest) = std::env::var_os("PATH") {
            path.push(":");
            path.push(rest);
        }
        cmd.env("PATH", path);
    }
    cmd.arg(format!("--userconfig={}", user.display()))
        .arg(format!("--globalconfig={}", global.display()))
        .arg(format!("--registry={}/", options.registry()))
        .args([
            "--replace-registry-host=npmjs",
            "--ignore-scripts",
            "--no-audit",
            "--no-fund",
            "--update-notifier=false",
            "--loglevel=error",
        ]);
    if let Some(cache) = &options.npm_cache {
        cmd.arg(format!("--cache={}", cache.display()));
    }
    if options.offline {
        cmd.arg("--offline");
    }
    Ok(cmd)
}

fn run_npm(cmd: &mut Command) -> Result<(), String> {
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {:?}: {e}", cmd.get_program()))?;
    if out.status.success() {
        Ok(())
    } else {
        let mut text = String::from_utf8_lossy(&out.stderr).into_owned();
        if text.trim().is_empty() {
            text = String::from_utf8_lossy(&out.stdout).into_owned();
        }
        Err(text)
    }
}

/// Where Node packages come from, for messages.
fn npm_source(options: &EnvironmentOptions) -> String {
    match (&options.npm_cache, options.offline) {
        (Some(c), true) => format!("npm's cache {} (offline)", c.display()),
        (None, true) => "npm's cache (offline)".to_owned(),
        (_, false) => format!("the npm registry {}", options.registry()),
    }
}

/// Resolves the Node dependencies `deps` of skill `skill` (declared in
/// `skill_dir`): the skill's own `package-lock.json` when it ships one that
/// matches, else `npm install --package-lock-only` in a temporary folder;
/// every package pinned with its integrity and checked to come from the
/// options' registry.
pub fn resolve_node(
    skill: &str,
    skill_dir: &Path,
    deps: &Dependencies,
    options: &EnvironmentOptions,
) -> Result<LockedEnvironment, Error> {
    let node = node_version(&options.node)?;
    let lock = match &deps.shipped_lock {
        Some(lock) => {
            check_registries(
                &skill_dir.join(skilldeck::environment::PACKAGE_LOCK_JSON),
                lock,
                options,
            )?;
            lock.packages.clone()
        }
        None => npm_resolve(skill, skill_dir, deps, options)?,
    };
    let interpreter = options.node.to_string_lossy().into_owned();
    Ok(LockedEnvironment::resolved(
        EnvKind::Node,
        &interpreter,
        &node,
        deps.input_digest(),
        lock,
    ))
}

/// Refuses a lock whose packages are resolved into another registry than
/// the options' (npm's default registry aside: npm fetches its URLs from
/// the configured one).
fn check_registries(
    lockfile: &Path,
    lock: &skilldeck::environment::ShippedLock,
    options: &EnvironmentOptions,
) -> Result<(), Error> {
    let want = options.registry();
    let problems: Vec<Diagnostic> = lock
        .registries
        .iter()
        .filter(|(_, base, _)| *base != want && base != NPM_DEFAULT_REGISTRY)
        .map(|(path, base, line)| {
            Diagnostic::new(
                Code::EnvironmentRequirementInvalid,
                Severity::Error,
                format!(
                    "package '{path}' is resolved to the registry {base}, not the configured \
                     {want}: a skill does not choose where packages come from"
                ),
            )
            .in_file(lockfile)
            .at(skilldeck::Pos {
                line: *line,
                column: 1,
                len: 0,
            })
            .with_help(
                "delete the skill's package-lock.json (install resolves one from the configured \
                 registry), or configure that registry ([environments] npm-registry)",
            )
        })
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Error::Refused(problems))
    }
}

/// `npm install --package-lock-only` of the declared dependencies in a
/// temporary folder of the store, its lockfile read and checked like a
/// skill's own (a refused package named at the `package.json` line of the
/// dependency that brings it).
fn npm_resolve(
    skill: &str,
    skill_dir: &Path,
    deps: &Dependencies,
    options: &EnvironmentOptions,
) -> Result<Vec<LockedPackage>, Error> {
    let npm = find_npm(options.npm.as_deref())?;
    let work = tempdir_in_store(options)?;
    let result = (|| {
        let manifest = resolution_manifest(deps);
        let manifest_path = work.join(skilldeck::environment::PACKAGE_JSON);
        fs::write(&manifest_path, &manifest).map_err(|e| Error::io(&manifest_path, e))?;
        let mut cmd = npm_command(&npm, options, &work)?;
        cmd.args(["install", "--package-lock-only", "--omit=dev"]);
        if let Err(stderr) = run_npm(&mut cmd) {
            return Err(npm_resolution_failed(
                skill, skill_dir, deps, &stderr, options,
            ));
        }
        let lock_path = work.join(skilldeck::environment::PACKAGE_LOCK_JSON);
        let size = fs::metadata(&lock_path)
            .map_err(|e| Error::io(&lock_path, e))?
            .len();
        if size > skilldeck::environment::MAX_PACKAGE_LOCK_BYTES {
            return Err(failed(
                format!(
                    "skill '{skill}': npm's resolution is {size} bytes; at most {} are read",
                    skilldeck::environment::MAX_PACKAGE_LOCK_BYTES
                ),
                "declare fewer dependencies",
            ));
        }
        let lock_text = fs::read_to_string(&lock_path).map_err(|e| Error::io(&lock_path, e))?;
        let parsed =
            skilldeck::environment::parse_node_dependencies(&work, &manifest, Some(&lock_text))
                .map_err(|problems| {
                    Error::Refused(
                        problems
                            .into_iter()
                            .map(|d| blame_requirement(d, &lock_text, skill_dir, deps))
                            .collect(),
                    )
                })?;
        let lock = parsed.and_then(|d| d.shipped_lock).ok_or_else(|| {
            failed(
                format!("skill '{skill}': npm's resolution could not be read"),
                "report this with the npm version (`npm --version`)",
            )
        })?;
        check_registries(&lock_path, &lock, options).map_err(|e| match e {
            Error::Refused(problems) => Error::Refused(
                problems
                    .into_iter()
                    .map(|d| blame_requirement(d, &lock_text, skill_dir, deps))
                    .collect(),
            ),
            other => other,
        })?;
        Ok(lock.packages)
    })();
    let _ = fs::remove_dir_all(&work);
    result
}

/// The `package.json` resolution starts from: the declared dependencies
/// only (a skill's other fields, `overrides` or `workspaces`, play no part).
fn resolution_manifest(deps: &Dependencies) -> String {
    let section = |optional: bool| -> serde_json::Map<String, serde_json::Value> {
        deps.requirements
            .iter()
            .filter(|r| r.optional == optional)
            .map(|r| (r.name.clone(), serde_json::Value::from(r.npm_spec())))
            .collect()
    };
    let manifest = serde_json::json!({
        "name": "skilldeck-environment",
        "version": "0.0.0",
        "private": true,
        "dependencies": section(false),
        "optionalDependencies": section(true),
    });
    serde_json::to_string_pretty(&manifest).unwrap_or_default()
}

/// A problem npm's resolved lockfile has (on a line of `lock_text`), told
/// at the skill's `package.json` line of the declared dependency that
/// brings the package in.
fn blame_requirement(
    mut d: Diagnostic,
    lock_text: &str,
    skill_dir: &Path,
    deps: &Dependencies,
) -> Diagnostic {
    let key = d
        .line
        .and_then(|l| lock_text.lines().nth(l.saturating_sub(1) as usize))
        .and_then(|l| l.trim().strip_prefix('"'))
        .and_then(|l| l.split('"').next())
        .unwrap_or_default()
        .to_owned();
    let name = skilldeck::environment::node_modules_name(&key).unwrap_or_default();
    let dependents = dependents_of(lock_text);
    let mut seen = BTreeSet::new();
    let mut queue = vec![name.to_owned()];
    let mut culprit = None;
    while let Some(n) = queue.pop() {
        if let Some(r) = deps.requirements.iter().find(|r| r.name == n) {
            culprit = Some(r);
            break;
        }
        if seen.insert(n.clone()) {
            queue.extend(dependents.get(&n).cloned().unwrap_or_default());
        }
    }
    let r = culprit.unwrap_or(&deps.requirements[0]);
    d.message = format!("'{}' resolves to {}", r.text, d.message);
    d.file = Some(skill_dir.join(&r.file));
    d.line = Some(r.line);
    d
}

/// Package name → the names of the packages that depend on it, in npm's
/// lockfile text.
fn dependents_of(lock_text: &str) -> std::collections::BTreeMap<String, Vec<String>> {
    let mut out: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    let Ok(value) = serde_json::from_str::<serde_json::Value>(lock_text) else {
        return out;
    };
    let Some(packages) = value.get("packages").and_then(serde_json::Value::as_object) else {
        return out;
    };
    for (key, entry) in packages {
        let Some(parent) = skilldeck::environment::node_modules_name(key) else {
            continue;
        };
        for section in ["dependencies", "optionalDependencies", "peerDependencies"] {
            if let Some(map) = entry.get(section).and_then(serde_json::Value::as_object) {
                for dep in map.keys() {
                    out.entry(dep.clone()).or_default().push(parent.to_owned());
                }
            }
        }
    }
    out
}

/// The failure of an npm resolution, naming the declared dependency npm's
/// message is about (the first it names), with its file and line.
fn npm_resolution_failed(
    skill: &str,
    skill_dir: &Path,
    deps: &Dependencies,
    stderr: &str,
    options: &EnvironmentOptions,
) -> Error {
    let named = deps.requirements.iter().find(|r| stderr.contains(&r.name));
    let tail = tail_chars(stderr.trim(), MAX_NPM_ERROR_CHARS);
    let from = npm_source(options);
    let r = named.unwrap_or(&deps.requirements[0]);
    let message = match named {
        Some(r) => format!(
            "skill '{skill}': dependency '{}' cannot be installed from {from}:\n{tail}",
            r.text
        ),
        None => {
            format!("skill '{skill}': its dependencies cannot be resolved from {from}:\n{tail}")
        }
    };
    Error::refused(
        Diagnostic::new(Code::EnvironmentBuildFailed, Severity::Error, message)
            .in_file(skill_dir.join(&r.file))
            .at(skilldeck::Pos {
                line: r.line,
                column: 1,
                len: 0,
            })
            .with_help(
                "check the name and version on the registry; offline, add the package to npm's \
                 cache first (`npm cache add NAME@VERSION --cache DIR`); nothing was installed",
            ),
    )
}

/// The `package.json` and `package-lock.json` (v3) `npm ci` installs
/// exactly `locked` from: every package at its path with its integrity,
/// resolved in the options' registry; the root depends on every top-level
/// package at its exact version.
fn ci_files(locked: &LockedEnvironment, registry: &str) -> (String, String) {
    let mut root_deps = serde_json::Map::new();
    let mut root_optional = serde_json::Map::new();
    let mut packages = serde_json::Map::new();
    for p in &locked.packages {
        let path = p.path.as_deref().unwrap_or_default();
        let top = path.matches("node_modules/").count() == 1;
        if top {
            let target = if p.optional {
                &mut root_optional
            } else {
                &mut root_deps
            };
            target.insert(p.name.clone(), serde_json::Value::from(p.version.clone()));
        }
        let unscoped = p.name.rsplit('/').next().unwrap_or(&p.name);
        let mut entry = serde_json::Map::new();
        entry.insert("version".into(), p.version.clone().into());
        entry.insert(
            "resolved".into(),
            format!("{registry}/{}/-/{unscoped}-{}.tgz", p.name, p.version).into(),
        );
        entry.insert(
            "integrity".into(),
            p.integrity
                .as_ref()
                .map(|i| i.as_str().to_owned())
                .unwrap_or_default()
                .into(),
        );
        if p.optional {
            entry.insert("optional".into(), true.into());
        }
        for (field, map) in [
            ("dependencies", &p.dependencies),
            ("optionalDependencies", &p.optional_dependencies),
            ("peerDependencies", &p.peer_dependencies),
        ] {
            if !map.is_empty() {
                entry.insert(
                    field.into(),
                    serde_json::to_value(map).unwrap_or(serde_json::Value::Null),
                );
            }
        }
        packages.insert(path.to_owned(), entry.into());
    }
    let mut root = serde_json::Map::new();
    root.insert("name".into(), "skilldeck-environment".into());
    root.insert("version".into(), "0.0.0".into());
    root.insert("dependencies".into(), root_deps.clone().into());
    if !root_optional.is_empty() {
        root.insert("optionalDependencies".into(), root_optional.clone().into());
    }
    let mut all = serde_json::Map::new();
    all.insert(String::new(), root.into());
    all.extend(packages);
    let manifest = serde_json::json!({
        "name": "skilldeck-environment",
        "version": "0.0.0",
        "private": true,
        "dependencies": root_deps,
        "optionalDependencies": root_optional,
    });
    let lock = serde_json::json!({
        "name": "skilldeck-environment",
        "version": "0.0.0",
        "lockfileVersion": 3,
        "requires": true,
        "packages": all,
    });
    (
        serde_json::to_string_pretty(&manifest).unwrap_or_default(),
        serde_json::to_string_pretty(&lock).unwrap_or_default(),
    )
}

/// `npm ci` of exactly `locked` into `tmp`, the installed tree digested: the record completed with it (a tree that
/// differs from one the lock already records is refused).
fn build_node_into(
    skill: &str,
    locked: &LockedEnvironment,
    options: &EnvironmentOptions,
    tmp: &Path,
) -> Result<LockedEnvironment, Error> {
    let npm = find_npm(options.npm.as_deref())?;
    fs::create_dir_all(tmp).map_err(|e| Error::io(tmp, e))?;
    let (manifest, lock) = ci_files(locked, &options.registry());
    for (name, text) in [
        (skilldeck::environment::PACKAGE_JSON, manifest.as_str()),
        (skilldeck::environment::PACKAGE_LOCK_JSON, lock.as_str()),
    ] {
        let path = tmp.join(name);
        fs::write(&path, text).map_err(|e| Error::io(&path, e))?;
    }
    let mut cmd = npm_command(&npm, options, tmp)?;
    cmd.args(["ci", "--omit=dev"]);
    let result = run_npm(&mut cmd);
    for f in [".skilldeck-user.npmrc", ".skilldeck-global.npmrc"] {
        let _ = fs::remove_file(tmp.join(f));
    }
    result.map_err(|stderr| {
        let named = locked.packages.iter().find(|p| {
            stderr.contains(&format!(
                "{}-{}.tgz",
                p.name.rsplit('/').next().unwrap_or(&p.name),
                p.version
            )) || stderr.contains(&format!("{}@{}", p.name, p.version))
        });
        failed(
            format!(
                "skill '{skill}': {} cannot be installed from {}: {}",
                named.map_or_else(
                    || "its locked packages".to_owned(),
                    |p| format!("locked package {}@{}", p.name, p.version)
                ),
                npm_source(options),
                tail_chars(stderr.trim(), MAX_NPM_ERROR_CHARS)
            ),
            "the package (with the locked integrity) must be on the registry or in npm's cache \
             (`npm cache add NAME@VERSION --cache DIR`); an integrity mismatch means the tarball \
             changed: do not trust it",
        )
    })?;
    let tree = NodeTree::of(tmp).map_err(|m| failed(format!("skill '{skill}': {m}"), "retry"))?;
    let mut done = locked.clone();
    for p in &mut done.packages {
        let path = p.path.as_deref().unwrap_or_default();
        p.files = tree.packages.get(path).copied();
        if p.files.is_none() && !p.optional {
            return Err(failed(
                format!(
                    "skill '{skill}': npm did not install {}@{} at {path}",
                    p.name, p.version
                ),
                "report this with the npm version (`npm --version`)",
            ));
        }
    }
    done.tree = Some(tree.tree);
    if let Some(want) = locked.tree
        && (want != tree.tree || locked.packages != done.packages)
    {
        return Err(failed(
            format!(
                "skill '{skill}': npm installed other files than the lock records (tree {}, the \
                 lock {want})",
                tree.tree
            ),
            "install the skill again without --frozen to record what this npm installs, after \
             checking why it differs",
        ));
    }
    Ok(done)
}

/// Holds the store's lock while alive.
struct StoreLock {
    _file: fs::File,
}

fn lock_store(store: &EnvStore) -> Result<StoreLock, Error> {
    ensure_store(store)?;
    Ok(StoreLock {
        _file: crate::file_lock::exclusive(&store.dir().join(STORE_LOCK))?,
    })
}

/// What [`build`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Built {
    /// The environment was built now.
    Created,
    /// An environment with the same key was already in the store.
    Reused,
}

/// Builds the environment `locked` (exactly its packages, each checked
/// against its hashes or integrity) into the store, unless one with its key
/// is there, complete and unchanged. Returns the record as built (a Node
/// one with its tree digest), its folder, and whether it was built now.
pub fn build(
    skill: &str,
    locked: &LockedEnvironment,
    options: &EnvironmentOptions,
) -> Result<(LockedEnvironment, PathBuf, Built), Error> {
    check_interpreter(skill, locked)?;
    let _guard = lock_store(&options.store)?;
    let dest = options.store.path_of(&locked.key);
    // Re-hashed, not only its marker read: an environment changed since
    // it was built is built again, never reused.
    match options.store.verify(skill, locked) {
        Ok(ready) => return Ok((ready.locked, ready.dir, Built::Reused)),
        Err(_) if dest.exists() => {
            // Not complete, not this record, or changed: built again from
            // the lock.
            fs::remove_dir_all(&dest).map_err(|e| Error::io(&dest, e))?;
        }
        Err(_) => {}
    }
    let tmp = options.store.dir().join(format!(
        "{BUILD_PREFIX}{}-{}-{}",
        locked.key.hex(),
        std::process::id(),
        next_id()
    ));
    let result = match locked.kind {
        EnvKind::Python => build_into(skill, locked, options, &tmp).map(|()| locked.clone()),
        EnvKind::Node => build_node_into(skill, locked, options, &tmp),
    }
    .and_then(|done| {
        // The marker last: an environment without it is not used.
        let marker = tmp.join(MARKER_FILE);
        let mut f = fs::File::create(&marker).map_err(|e| Error::io(&marker, e))?;
        f.write_all(done.to_toml().as_bytes())
            .and_then(|()| f.sync_all())
            .map_err(|e| Error::io(&marker, e))?;
        readable_by_all(&tmp);
        Ok(done)
    });
    let done = match result {
        Ok(done) => done,
        Err(e) => {
            let _ = fs::remove_dir_all(&tmp);
            return Err(e);
        }
    };
    fs::rename(&tmp, &dest).map_err(|e| Error::io(&dest, e))?;
    Ok((done, dest, Built::Created))
}

/// Refuses `locked` when its interpreter is not the version it was
/// resolved for any more (a system upgrade): its packages were chosen for
/// that version, and the environment's `lib/pythonX.Y` would not be found.
pub fn check_interpreter(skill: &str, locked: &LockedEnvironment) -> Result<(), Error> {
    if locked.kind == EnvKind::Node {
        let found = node_version(Path::new(&locked.interpreter))?;
        let want = skilldeck::environment::node_major(&locked.node);
        if skilldeck::environment::node_major(&found) != want {
            return Err(Error::refused(
                Diagnostic::new(
                    Code::EnvironmentModified,
                    Severity::Error,
                    format!(
                        "skill '{skill}': its environment was built for Node {want} ({}), which is \
                         now Node {found}",
                        locked.interpreter
                    ),
                )
                .with_help(
                    "install the skill again without --frozen to build its environment for this \
                     Node",
                ),
            ));
        }
        return Ok(());
    }
    let found = python_version(Path::new(&locked.interpreter))?;
    if found != locked.python {
        return Err(Error::refused(
            Diagnostic::new(
                Code::EnvironmentModified,
                Severity::Error,
                format!(
                    "skill '{skill}': its environment was resolved for Python {} ({}), which is \
                     now Python {found}",
                    locked.python, locked.interpreter
                ),
            )
            .with_help(
                "install the skill again without --frozen to resolve its dependencies for this \
                 interpreter",
            ),
        ));
    }
    Ok(())
}

/// The requirements file with hashes a build installs, inside the
/// environment (kept: it says what was installed).
pub const BUILD_REQUIREMENTS: &str = "skilldeck-requirements.txt";

fn build_into(
    skill: &str,
    locked: &LockedEnvironment,
    options: &EnvironmentOptions,
    tmp: &Path,
) -> Result<(), Error> {
    let uv = find_uv(options.uv.as_deref())?;
    let mut venv = Command::new(&uv);
    venv.args(["venv", "--no-config", "--relocatable", "--quiet"])
        .args([
            "--python-preference",
            "only-system",
            "--no-python-downloads",
        ])
        .arg("--python")
        .arg(&locked.interpreter)
        .arg(tmp);
    run_uv(&mut venv).map_err(|stderr| {
        failed(
            format!(
                "skill '{skill}': cannot create a virtual environment for {}: {}",
                locked.interpreter,
                tail_chars(stderr.trim(), MAX_UV_ERROR_CHARS)
            ),
            "the interpreter the lock records must exist here (the same path); install it or \
             install the skill again to resolve for this machine's interpreter",
        )
    })?;
    let reqs = tmp.join(BUILD_REQUIREMENTS);
    fs::write(&reqs, locked.requirements_with_hashes()).map_err(|e| Error::io(&reqs, e))?;
    let mut sync = Command::new(&uv);
    sync.args(["pip", "sync", "--no-config", "--require-hashes", "--quiet"])
        .args(["--link-mode", "copy", "--compile-bytecode"])
        .arg("--python")
        .arg(tmp.join("bin/python3"))
        .arg(&reqs);
    options.source_args(&mut sync);
    let synced = run_uv(&mut sync);
    synced.map_err(|stderr| {
        let lower = stderr.to_ascii_lowercase();
        let named = locked
            .packages
            .iter()
            .find(|p| lower.contains(&p.name) || lower.contains(&p.name.replace('-', "_")));
        failed(
            format!(
                "skill '{skill}': {} cannot be installed: {}",
                named.map_or_else(
                    || "its locked packages".to_owned(),
                    |p| format!("locked package {}=={}", p.name, p.version)
                ),
                tail_chars(stderr.trim(), MAX_UV_ERROR_CHARS)
            ),
            "the package (with one of the locked hashes) must be on the index or in the \
             --find-links folder; a hash mismatch means the artifact changed: do not trust it",
        )
    })
}

/// Makes a built tree readable (and folders traversable) by every user:
/// the sandbox's user runs it.
fn readable_by_all(dir: &Path) {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        set_mode(&d, 0o755);
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(meta) = fs::symlink_metadata(e.path()) else {
                continue;
            };
            if meta.is_dir() {
                stack.push(e.path());
            } else if meta.is_file() {
                #[cfg(unix)]
                {
                    use std::os::unix::fs::PermissionsExt;
                    let mode = meta.permissions().mode();
                    set_mode(&e.path(), if mode & 0o100 != 0 { 0o755 } else { 0o644 });
                }
            }
        }
    }
}

fn set_mode(path: &Path, mode: u32) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = fs::set_permissions(path, fs::Permissions::from_mode(mode));
    }
    #[cfg(not(unix))]
    let _ = (path, mode);
}

/// Where the package set of an environment [`prepare`] made came from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case", tag = "from")]
pub enum Origin {
    /// The lock's record (unchanged requirements, or `--frozen`).
    Locked,
    /// The resolution the registry stored when the version was published:
    /// exactly those pins, no new resolution.
    Published,
    /// Resolved now (no lock record or published resolution applied).
    Resolved,
    /// Resolved now because the published resolution was made for another
    /// interpreter version than this machine's.
    ResolvedAgain {
        /// The interpreter version the published set was resolved for.
        published: String,
        /// This machine's.
        here: String,
    },
}

impl Origin {
    /// A sentence for a log line or the install report, when there is
    /// something to say (`None`: a plain resolution or the lock's set).
    pub fn note(&self, kind: EnvKind) -> Option<String> {
        let name = match kind {
            EnvKind::Python => "Python",
            EnvKind::Node => "Node",
        };
        match self {
            Origin::Published => Some(format!(
                "installed the {} packages resolved at publish (no new resolution)",
                kind.as_str()
            )),
            Origin::ResolvedAgain { published, here } => Some(format!(
                "resolved anew: the published resolution is for {name} {published}, this \
                 machine has {name} {here}"
            )),
            Origin::Locked | Origin::Resolved => None,
        }
    }
}

/// One environment [`prepare`] made ready.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The record, as built.
    pub locked: LockedEnvironment,
    /// Built now or shared.
    pub built: Built,
    /// Where its packages came from.
    pub origin: Origin,
}

/// The environments of one skill being installed, one per kind it declares
/// dependencies of: resolved (or a pinned set reused) and built.
/// `previous`: the lock's records for the skill; `frozen`: use them and
/// resolve nothing. `published`: the resolution the registry stored with
/// the version (checked with [`skilldeck::environment::check_published`];
/// a malformed one refuses the skill): installed exactly, hash-checked,
/// when this machine's interpreter has the version it was resolved for
/// (Python `major.minor`, Node major); else resolved anew, and the
/// [`Origin`] says so. Empty: the skill declares no dependencies.
pub fn prepare(
    skill: &str,
    skill_dir: &Path,
    previous: &[&LockedEnvironment],
    published: &[LockedEnvironment],
    frozen: bool,
    options: &EnvironmentOptions,
    lockfile: &Path,
) -> Result<Vec<Prepared>, Error> {
    let declared =
        skilldeck::environment::declared_dependencies(skill_dir).map_err(Error::Refused)?;
    if !published.is_empty() {
        skilldeck::environment::check_published(published, &declared).map_err(|why| {
            Error::refused(
                Diagnostic::new(
                    Code::EnvironmentBuildFailed,
                    Severity::Error,
                    format!(
                        "skill '{skill}': the registry's published resolution is refused: {why}"
                    ),
                )
                .with_help(
                    "the registry served a resolution that does not belong to this skill version; \
                     report it to the registry's operator",
                ),
            )
        })?;
    }
    let mut out = Vec::new();
    for deps in declared {
        let previous = previous.iter().copied().find(|p| p.kind == deps.kind);
        let published = published.iter().find(|p| p.kind == deps.kind);
        let (locked, origin) = match previous {
            Some(p) if frozen => {
                if p.input != deps.input_digest() {
                    return Err(Error::refused(
                        Diagnostic::new(
                            Code::LockMismatch,
                            Severity::Error,
                            format!(
                                "skill '{skill}' declares other {} requirements than {} recorded",
                                deps.kind.as_str(),
                                lockfile.display()
                            ),
                        )
                        .in_file(lockfile),
                    ));
                }
                (p.clone(), Origin::Locked)
            }
            None if frozen => {
                return Err(Error::refused(
                    Diagnostic::new(
                        Code::LockMismatch,
                        Severity::Error,
                        format!(
                            "skill '{skill}' declares dependencies ({}), but {} records no \
                             {} environment for it",
                            deps.files().join(", "),
                            lockfile.display(),
                            deps.kind.as_str()
                        ),
                    )
                    .in_file(lockfile)
                    .with_help("install it without --frozen once to resolve and record them"),
                ));
            }
            _ => match published
                .map(|p| for_this_machine(p, options))
                .transpose()?
            {
                Some(Ok(pinned)) => (pinned, Origin::Published),
                mismatch => match previous {
                    Some(p)
                        if p.input == deps.input_digest()
                            && same_interpreter(p, options)
                            && mismatch.is_none() =>
                    {
                        (p.clone(), Origin::Locked)
                    }
                    _ => {
                        let resolved = match deps.kind {
                            EnvKind::Python => resolve(skill, skill_dir, &deps, options)?,
                            EnvKind::Node => resolve_node(skill, skill_dir, &deps, options)?,
                        };
                        let origin = match mismatch {
                            Some(Err((published, here))) => {
                                Origin::ResolvedAgain { published, here }
                            }
                            _ => Origin::Resolved,
                        };
                        (resolved, origin)
                    }
                },
            },
        };
        let (done, _, built) = build(skill, &locked, options)?;
        out.push(Prepared {
            locked: done,
            built,
            origin,
        });
    }
    Ok(out)
}

/// A published resolution for this machine's interpreter: `Ok` the same
/// pins recorded for it when its version is compatible
/// ([`skilldeck::environment::compatible_interpreter_version`]), `Err` the
/// published and the local version when it is not.
fn for_this_machine(
    published: &LockedEnvironment,
    options: &EnvironmentOptions,
) -> Result<Result<LockedEnvironment, (String, String)>, Error> {
    use skilldeck::environment::compatible_interpreter_version as compatible;
    let (interpreter, here) = match published.kind {
        EnvKind::Python => (&options.python, python_version(&options.python)?),
        EnvKind::Node => (&options.node, node_version(&options.node)?),
    };
    let recorded = published.interpreter_version();
    if compatible(published.kind, recorded) != compatible(published.kind, &here) {
        return Ok(Err((recorded.to_owned(), here)));
    }
    Ok(Ok(
        published.for_interpreter(&interpreter.to_string_lossy(), &here)
    ))
}

/// Resolves what the skill in `skill_dir` declares, one record per kind,
/// building nothing: what `publish` sends with the version, so every
/// consumer installs this set. A requirement that does not resolve refuses
/// (naming the skill, the file and the requirement) and says to fix it or
/// publish with `--no-environments`. Empty: the skill declares nothing.
pub fn resolve_for_publish(
    skill: &str,
    skill_dir: &Path,
    options: &EnvironmentOptions,
) -> Result<Vec<LockedEnvironment>, Error> {
    let help = |e: Error| match e {
        Error::Refused(ds) => Error::Refused(
            ds.into_iter()
                .map(|mut d| {
                    let before = d.help.take();
                    d.help = Some(format!(
                        "{}fix the requirement, or publish with --no-environments (every \
                         consumer then resolves it when it installs the skill)",
                        before.map(|h| format!("{h}; ")).unwrap_or_default()
                    ));
                    d
                })
                .collect(),
        ),
        other => other,
    };
    let declared = skilldeck::environment::declared_dependencies(skill_dir)
        .map_err(|ds| help(Error::Refused(ds)))?;
    let mut out = Vec::new();
    for deps in declared {
        let resolved = match deps.kind {
            EnvKind::Python => resolve(skill, skill_dir, &deps, options),
            EnvKind::Node => resolve_node(skill, skill_dir, &deps, options),
        }
        .map_err(help)?;
        out.push(resolved);
    }
    Ok(out)
}

/// True when `p` was resolved for the interpreter the options name, at its
/// version (Python) or major version (Node): its resolution is reused.
fn same_interpreter(p: &LockedEnvironment, options: &EnvironmentOptions) -> bool {
    match p.kind {
        EnvKind::Python => {
            p.interpreter == options.python.to_string_lossy()
                && python_version(&options.python).is_ok_and(|v| v == p.python)
        }
        EnvKind::Node => {
            p.interpreter == options.node.to_string_lossy()
                && node_version(&options.node).is_ok_and(|v| {
                    skilldeck::environment::node_major(&v)
                        == skilldeck::environment::node_major(&p.node)
                })
        }
    }
}

/// Registers `lockfile` with the store: [`gc`] keeps what it records.
pub fn register_lock(store: &EnvStore, lockfile: &Path) -> Result<(), Error> {
    ensure_store(store)?;
    let abs = std::path::absolute(lockfile).map_err(|e| Error::io(lockfile, e))?;
    let text = abs.to_string_lossy().into_owned();
    let name = Digest::of(text.as_bytes()).hex();
    let path = store.dir().join(LOCKS_DIR).join(name);
    if fs::read_to_string(&path).is_ok_and(|t| t == text) {
        return Ok(());
    }
    crate::pack::write_atomic(&path, text.as_bytes())
}

/// What [`gc`] found and removed.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct GcReport {
    /// The lockfiles read (their environments kept).
    pub locks: Vec<PathBuf>,
    /// Registered lockfiles that are gone (unregistered now).
    pub forgotten: Vec<PathBuf>,
    /// Environments kept.
    pub kept: Vec<Digest>,
    /// Environments removed (or that would be, with `dry_run`).
    pub removed: Vec<Digest>,
    /// Unfinished builds removed.
    pub leftovers: usize,
}

/// Removes every environment of `store` that no registered lockfile
/// records, and builds a crash left (nothing with `dry_run`). A lockfile
/// that cannot be read keeps everything (fail closed: nothing is removed,
/// the error names it).
pub fn gc(store: &EnvStore, dry_run: bool) -> Result<GcReport, Error> {
    let mut report = GcReport::default();
    if !store.dir().is_dir() {
        return Ok(report);
    }
    let _guard = lock_store(store)?;
    let mut referenced: BTreeSet<Digest> = BTreeSet::new();
    let locks_dir = store.dir().join(LOCKS_DIR);
    let mut registrations: Vec<PathBuf> = fs::read_dir(&locks_dir)
        .map_err(|e| Error::io(&locks_dir, e))?
        .flatten()
        .map(|e| e.path())
        .collect();
    registrations.sort();
    for reg in registrations {
        let Ok(text) = fs::read_to_string(&reg) else {
            continue;
        };
        let lockfile = PathBuf::from(text.trim());
        match Lockfile::load(&lockfile)? {
            Some(lock) => {
                referenced.extend(
                    lock.skill
                        .values()
                        .flat_map(|e| e.environments().into_iter().map(|env| env.key)),
                );
                report.locks.push(lockfile);
            }
            None => {
                if !dry_run {
                    let _ = fs::remove_file(&reg);
                }
                report.forgotten.push(lockfile);
            }
        }
    }
    for key in store.keys() {
        if referenced.contains(&key) {
            report.kept.push(key);
        } else {
            if !dry_run {
                let path = store.path_of(&key);
                fs::remove_dir_all(&path).map_err(|e| Error::io(&path, e))?;
            }
            report.removed.push(key);
        }
    }
    if let Ok(entries) = fs::read_dir(store.dir()) {
        for e in entries.flatten() {
            if e.file_name().to_string_lossy().starts_with(BUILD_PREFIX) {
                report.leftovers += 1;
                if !dry_run {
                    let _ = fs::remove_dir_all(e.path());
                }
            }
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use skilldeck::environment::environment_key;

    #[test]
    fn uv_compile_output_is_read_with_every_hash_and_sorted() {
        let text = "six==1.17.0 \\\n    --hash=sha256:4721f391ed90541fddacab5acf947aa0d3dc7d27b2e1e8eda2be8970586c3274\n\
                    Python_Dateutil==2.9.0.post0 \\\n    --hash=sha256:a8b2bc7bffae282281c8140a97d3aa9c14da0b136dfe83f850eea9a5f7470427 \\\n    --hash=sha256:37dd54208da7e1cd875388217d5e00ebd4179249f90fb72437e91a35459a0ad3\n";
        let p = parse_compiled(text).unwrap();
        assert_eq!(p[0].name, "python-dateutil");
        assert_eq!(p[0].version, "2.9.0.post0");
        assert_eq!(p[0].hashes.len(), 2);
        assert_eq!(p[1].name, "six");
    }

    #[test]
    fn uv_output_without_hashes_or_pins_is_refused() {
        assert!(parse_compiled("six==1.17.0\n").is_err());
        assert!(parse_compiled("six>=1\n    --hash=sha256:00\n").is_err());
        assert!(parse_compiled("--index-url https://x\n").is_err());
    }

    #[test]
    fn a_missing_uv_is_refused_saying_how_to_get_one() {
        let e = find_uv(Some(Path::new("/nonexistent/uv"))).unwrap_err();
        let d = &e.diagnostics()[0];
        assert_eq!(d.code, Code::EnvironmentBuildFailed);
        assert!(d.message.contains("/nonexistent/uv"), "{d}");
        assert!(
            d.help
                .as_deref()
                .unwrap_or_default()
                .contains("install-uv.sh"),
            "{d:?}"
        );
    }

    #[test]
    fn gc_removes_what_no_registered_lock_records_and_keeps_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let store = EnvStore::new(dir.path().join("envs"));
        ensure_store(&store).unwrap();
        let kept = environment_key(EnvKind::Python, "/usr/bin/python3", "3.11.2", &[]);
        let kept_node = environment_key(EnvKind::Node, "/usr/bin/node", "20.20.2", &[]);
        let dropped = Digest::from_bytes([2; 32]);
        for k in [kept, kept_node, dropped] {
            fs::create_dir_all(store.path_of(&k)).unwrap();
        }
        fs::create_dir_all(store.dir().join(format!("{BUILD_PREFIX}x"))).unwrap();
        let lockfile = dir.path().join("skilldeck.lock");
        let text = format!(
            "format = 1\nroot = \"skills\"\n\n[skill.a]\nsource = \"x\"\n\
             fingerprint = \"sha256:{z}\"\nfiles = []\n\n[skill.a.environment]\nkind = \"python\"\n\
             key = \"{kept}\"\ninterpreter = \"/usr/bin/python3\"\npython = \"3.11.2\"\n\
             input = \"sha256:{z}\"\npackages = []\n\n[skill.a.node-environment]\nkind = \"node\"\n\
             key = \"{kept_node}\"\ninterpreter = \"/usr/bin/node\"\nnode = \"20.20.2\"\n\
             input = \"sha256:{z}\"\npackages = []\n",
            z = "0".repeat(64)
        );
        fs::write(&lockfile, text).unwrap();
        register_lock(&store, &lockfile).unwrap();
        let gone = dir.path().join("gone/skilldeck.lock");
        register_lock(&store, &gone).unwrap();
        let dry = gc(&store, true).unwrap();
        assert_eq!(dry.removed, [dropped]);
        assert!(store.path_of(&dropped).exists());
        let report = gc(&store, false).unwrap();
        let mut want = vec![kept, kept_node];
        want.sort_by_key(Digest::hex);
        assert_eq!(report.kept, want);
        assert_eq!(report.removed, [dropped]);
        assert_eq!(report.forgotten, [gone]);
        assert_eq!(report.leftovers, 1);
        assert!(store.path_of(&kept).exists());
        assert!(!store.path_of(&dropped).exists());
    }

    #[test]
    fn gc_with_an_unreadable_lock_removes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let store = EnvStore::new(dir.path().join("envs"));
        ensure_store(&store).unwrap();
        let k = Digest::from_bytes([3; 32]);
        fs::create_dir_all(store.path_of(&k)).unwrap();
        let lockfile = dir.path().join("skilldeck.lock");
        fs::write(&lockfile, "format = 1\nroot = [\n").unwrap();
        register_lock(&store, &lockfile).unwrap();
        let e = gc(&store, false).unwrap_err();
        assert!(e.to_string().contains("skilldeck.lock"), "{e}");
        assert!(store.path_of(&k).exists());
    }
}
