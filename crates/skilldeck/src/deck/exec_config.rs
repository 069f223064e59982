//! `[exec]` in `skilldeck.toml`: whether and how skill scripts run (data
//! only; the execution crate enforces it). Every default is a constant in
//! [`crate::limits`]; a value over its cap, a zero limit, an unknown key or
//! a malformed variable name is a config error naming the file and line.
//!
//! ```toml
//! [exec]
//! enabled = true            # serve: offer skill tools (default false)
//! sandbox = "auto"          # "auto" | "landlock" | "bwrap" | "none"
//! timeout-secs = 30         # at most limits::MAX_EXEC_TIMEOUT_SECS
//! output-cap-bytes = 1048576
//! memory-bytes = 1073741824 # the whole run's memory (cgroup) and RLIMIT_AS
//! max-processes = 64        # the whole run's processes (cgroup) and RLIMIT_NPROC
//! workdir-bytes = 268435456 # the work dir's size (a tmpfs): ENOSPC past it
//! tree-limits = "auto"      # "auto" | "require": per-run cgroup caps
//! concurrency = 3
//! queue = 32
//! env = ["LANG_EXTRA"]      # passed through by name; nothing else is
//! registry-env = ["API_TOKEN"] # serve --registry: the only names a registry grant may pass
//! tools = "on-activate"     # "on-activate" | "always" | "never"
//! dynamic-context = false   # run !`cmd` directives at activation
//! network-allow-ranges = ["10.1.0.0/16"] # addresses the host-list proxy may reach anyway
//! code = false              # offer run_code: the model's own code, sandboxed
//! code-quota-bytes = 67108864 # one conversation's run_code work folder
//! code-idle-secs = 1800     # a work folder unused this long is removed
//! approval = "never"        # "never" | "ask" | "always-deny"
//! python = "/opt/lc/bin/python3" # LangChain tool packages' interpreter (a venv's)
//!
//! [exec.skills.web-fetch]   # grants for one skill, by the operator
//! network = true            # or ["api.github.com", "*.pypi.org"]: through the proxy only
//! read = ["/srv/data"]      # relative paths: against the config's folder
//! env = ["API_TOKEN"]
//! python = "envs/web/bin/python3" # this skill's interpreter (its own venv)
//! ```

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Deserializer};

use super::network_grant::{IpRange, NetworkGrant};

use crate::limits::{
    DEFAULT_EXEC_CODE, DEFAULT_EXEC_CODE_IDLE_SECS, DEFAULT_EXEC_CODE_QUOTA_BYTES,
    DEFAULT_EXEC_CONCURRENCY, DEFAULT_EXEC_CPU_SECS, DEFAULT_EXEC_DYNAMIC_CONTEXT,
    DEFAULT_EXEC_ENABLED, DEFAULT_EXEC_FILE_SIZE_BYTES, DEFAULT_EXEC_MAX_PROCESSES,
    DEFAULT_EXEC_MEMORY_BYTES, DEFAULT_EXEC_OUTPUT_CAP_BYTES, DEFAULT_EXEC_QUEUE,
    DEFAULT_EXEC_TIMEOUT_SECS, DEFAULT_EXEC_WORKDIR_BYTES, MAX_EXEC_CODE_IDLE_SECS,
    MAX_EXEC_CONCURRENCY, MAX_EXEC_OUTPUT_CAP_BYTES, MAX_EXEC_QUEUE, MAX_EXEC_TIMEOUT_SECS,
};

/// `[exec]`.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct ExecConfig {
    /// Execution in `serve` (skill tools, `run_skill_script`, dynamic
    /// context); the CLI's explicit `run`/`call` need no switch.
    pub enabled: bool,
    /// The isolation profile.
    pub sandbox: SandboxProfile,
    /// Wall-clock limit of one execution, in seconds (1 to
    /// [`MAX_EXEC_TIMEOUT_SECS`]).
    #[serde(deserialize_with = "timeout_secs")]
    pub timeout_secs: u64,
    /// Most bytes kept per output stream (1 to [`MAX_EXEC_OUTPUT_CAP_BYTES`]).
    #[serde(deserialize_with = "output_cap_bytes")]
    pub output_cap_bytes: u64,
    /// Memory of one execution, in bytes: the whole process tree's (a
    /// per-run cgroup, see [`ExecConfig::tree_limits`]) and each process's
    /// address space (`RLIMIT_AS`).
    #[serde(deserialize_with = "positive_u64")]
    pub memory_bytes: u64,
    /// Most processes one execution may hold: the whole tree's (a per-run
    /// cgroup) and `RLIMIT_NPROC`.
    #[serde(deserialize_with = "positive_u64")]
    pub max_processes: u64,
    /// Size of one execution's work directory (cwd, `HOME` and `TMPDIR`
    /// together), in bytes: a size-capped tmpfs; writing past it fails
    /// with `ENOSPC`.
    #[serde(deserialize_with = "positive_u64")]
    pub workdir_bytes: u64,
    /// Whether the per-run memory and process caps (a cgroup per run) are
    /// required or applied where the machine offers them.
    pub tree_limits: TreeLimitsMode,
    /// Largest file one execution may write, in bytes.
    #[serde(deserialize_with = "positive_u64")]
    pub file_size_bytes: u64,
    /// CPU time of one execution, in seconds.
    #[serde(deserialize_with = "positive_u64")]
    pub cpu_secs: u64,
    /// Most executions running at once (1 to [`MAX_EXEC_CONCURRENCY`]).
    #[serde(deserialize_with = "concurrency")]
    pub concurrency: usize,
    /// Most executions waiting for a slot (0 to [`MAX_EXEC_QUEUE`]; 0:
    /// refuse when all slots are busy).
    #[serde(deserialize_with = "queue")]
    pub queue: usize,
    /// Environment variables passed through to every execution, by name.
    #[serde(deserialize_with = "env_names")]
    pub env: Vec<String>,
    /// `serve --registry`: the variables a registry's env grant may pass
    /// through to the skills it serves. A registry grant selects from this
    /// list and nothing else; a name here may not be reserved
    /// ([`is_reserved_env_name`]).
    #[serde(deserialize_with = "registry_env_names")]
    pub registry_env: Vec<String>,
    /// When declared skill tools are offered.
    pub tools: ToolExposure,
    /// Run dynamic-context directives (`` !`cmd` ``) at activation, in the
    /// sandbox; off: they become `[shell execution disabled]`.
    pub dynamic_context: bool,
    /// Address ranges the filtering proxy of a host-list network grant may
    /// connect to although it refuses them by default (loopback, private,
    /// link-local, CGNAT, metadata…): e.g. an internal API at
    /// `10.1.0.0/16`. Names must still match the skill's grant.
    pub network_allow_ranges: Vec<IpRange>,
    /// Offer `run_code` (with execution enabled): the model's own code
    /// (python, bash, node where installed) in the same sandbox and under
    /// the same policy as skill scripts.
    pub code: bool,
    /// Size of one conversation's `run_code` work folder, in bytes.
    #[serde(deserialize_with = "positive_u64")]
    pub code_quota_bytes: u64,
    /// Seconds a conversation's `run_code` work folder is kept after its
    /// last call (1 to [`MAX_EXEC_CODE_IDLE_SECS`]).
    #[serde(deserialize_with = "code_idle_secs")]
    pub code_idle_secs: u64,
    /// Whether the user approves calls that run code (`run_skill_script`,
    /// skill tools, `run_code`) that the active skills' `allowed-tools` do
    /// not pre-approve.
    pub approval: ApprovalMode,
    /// The Python interpreter that runs LangChain tool packages' worker
    /// (`skill_type: langchain_tool`), typically a virtual environment's
    /// `bin/python3` where `langchain-core` is installed (relative paths:
    /// against the config file's folder). `None`: `python3` on the
    /// sandbox's `PATH`. A skill's own `[exec.skills.<name>] python` wins.
    pub python: Option<PathBuf>,
    /// `[exec.skills.<name>]`: grants for one skill.
    pub skills: BTreeMap<String, SkillGrant>,
}

impl Default for ExecConfig {
    fn default() -> Self {
        ExecConfig {
            enabled: DEFAULT_EXEC_ENABLED,
            sandbox: SandboxProfile::default(),
            timeout_secs: DEFAULT_EXEC_TIMEOUT_SECS,
            output_cap_bytes: DEFAULT_EXEC_OUTPUT_CAP_BYTES,
            memory_bytes: DEFAULT_EXEC_MEMORY_BYTES,
            max_processes: DEFAULT_EXEC_MAX_PROCESSES,
            workdir_bytes: DEFAULT_EXEC_WORKDIR_BYTES,
            tree_limits: TreeLimitsMode::default(),
            file_size_bytes: DEFAULT_EXEC_FILE_SIZE_BYTES,
            cpu_secs: DEFAULT_EXEC_CPU_SECS,
            concurrency: DEFAULT_EXEC_CONCURRENCY,
            queue: DEFAULT_EXEC_QUEUE,
            env: Vec::new(),
            registry_env: Vec::new(),
            tools: ToolExposure::default(),
            dynamic_context: DEFAULT_EXEC_DYNAMIC_CONTEXT,
            network_allow_ranges: Vec::new(),
            code: DEFAULT_EXEC_CODE,
            code_quota_bytes: DEFAULT_EXEC_CODE_QUOTA_BYTES,
            code_idle_secs: DEFAULT_EXEC_CODE_IDLE_SECS,
            approval: ApprovalMode::default(),
            python: None,
            skills: BTreeMap::new(),
        }
    }
}

impl ExecConfig {
    /// The grant of skill `name` (none: the empty grant: no network, no
    /// extra reads, no extra variables).
    pub fn grant(&self, name: &str) -> SkillGrant {
        self.skills.get(name).cloned().unwrap_or_default()
    }

    /// The Python interpreter for skill `name`'s LangChain worker: its
    /// grant's `python`, else `[exec] python`; `None`: `python3` on the
    /// sandbox's `PATH`.
    pub fn python_for(&self, name: &str) -> Option<&std::path::Path> {
        self.skills
            .get(name)
            .and_then(|g| g.python.as_deref())
            .or(self.python.as_deref())
    }
}

/// `[exec] sandbox`: which isolation applies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxProfile {
    /// The strongest profile this machine offers (bubblewrap when
    /// installed, else Landlock + seccomp); refused when none is available.
    #[default]
    Auto,
    /// In-process Landlock + seccomp + rlimits; refused where unavailable.
    Landlock,
    /// bubblewrap (`bwrap`) around the in-process layers; refused when not installed.
    Bwrap,
    /// No isolation (limits and the cleared environment still apply): only
    /// when the operator says so.
    None,
}

impl SandboxProfile {
    /// The config spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxProfile::Auto => "auto",
            SandboxProfile::Landlock => "landlock",
            SandboxProfile::Bwrap => "bwrap",
            SandboxProfile::None => "none",
        }
    }
}

/// `[exec] tree-limits`: the per-run caps on the whole process tree
/// (memory and processes, a cgroup per run: v2 where a delegated subtree is
/// writable, else v1 `memory` + `pids` where writable).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TreeLimitsMode {
    /// Applied where the machine offers a writable cgroup; elsewhere runs
    /// keep only the per-process limits (rlimits), and `skilldeck sandbox`
    /// and each run's policy say so (`tree_limits: none (reason)`).
    #[default]
    Auto,
    /// Required: where no cgroup can be used, every execution is refused
    /// naming what is missing.
    Require,
}

impl TreeLimitsMode {
    /// The config spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            TreeLimitsMode::Auto => "auto",
            TreeLimitsMode::Require => "require",
        }
    }
}

/// `[exec] tools`: when a skill's declared tools are offered (with
/// execution enabled).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ToolExposure {
    /// Once the skill is activated in the session (then `tools/list_changed`).
    #[default]
    OnActivate,
    /// From the start, for every served skill.
    Always,
    /// Never (only `run_skill_script` and the CLI).
    Never,
}

impl ToolExposure {
    /// The config spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolExposure::OnActivate => "on-activate",
            ToolExposure::Always => "always",
            ToolExposure::Never => "never",
        }
    }
}

/// `[exec] approval`: what happens to a call that runs code (a skill
/// script, a skill tool, `run_code`) which the active skills'
/// `allowed-tools` do not pre-approve. The rule is the host's
/// (`skilldeck_host::approval`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalMode {
    /// Run it without asking (the default: execution is already the
    /// operator's explicit choice).
    #[default]
    Never,
    /// Ask the user (MCP elicitation, a Python callback) and run it only
    /// when they accept; a face that cannot ask refuses.
    Ask,
    /// Refuse it; only what `allowed-tools` pre-approves runs.
    AlwaysDeny,
}

impl ApprovalMode {
    /// The config spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalMode::Never => "never",
            ApprovalMode::Ask => "ask",
            ApprovalMode::AlwaysDeny => "always-deny",
        }
    }

    /// The mode spelled `name` (`never`, `ask`, `always-deny`).
    pub fn parse(name: &str) -> Option<ApprovalMode> {
        match name {
            "never" => Some(ApprovalMode::Never),
            "ask" => Some(ApprovalMode::Ask),
            "always-deny" => Some(ApprovalMode::AlwaysDeny),
            _ => None,
        }
    }
}

/// `[exec.skills.<name>]`: what the operator grants one skill beyond the
/// default policy. A skill never grants itself anything.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct SkillGrant {
    /// Network access: `false` (none), `true` (the host's network:
    /// TCP/UDP, DNS) or a list of host-name patterns reached only through
    /// skilldeck's filtering proxy.
    pub network: NetworkGrant,
    /// Extra read-only paths (relative ones against the config file's
    /// folder: use [`crate::Config::resolve`]).
    pub read: Vec<PathBuf>,
    /// Extra environment variables passed through, by name.
    #[serde(deserialize_with = "env_names")]
    pub env: Vec<String>,
    /// This skill's Python interpreter for its LangChain worker (its own
    /// environment), instead of `[exec] python`.
    pub python: Option<PathBuf>,
}

fn bounded_u64<'de, D: Deserializer<'de>>(d: D, what: &str, max: u64) -> Result<u64, D::Error> {
    let v = u64::deserialize(d)?;
    if v == 0 || v > max {
        return Err(serde::de::Error::custom(format!(
            "{what} must be between 1 and {max}, found {v}"
        )));
    }
    Ok(v)
}

fn timeout_secs<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    bounded_u64(d, "timeout-secs", MAX_EXEC_TIMEOUT_SECS)
}

fn output_cap_bytes<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    bounded_u64(d, "output-cap-bytes", MAX_EXEC_OUTPUT_CAP_BYTES)
}

fn positive_u64<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    bounded_u64(d, "the limit", u64::MAX)
}

fn code_idle_secs<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    bounded_u64(d, "code-idle-secs", MAX_EXEC_CODE_IDLE_SECS)
}

fn concurrency<'de, D: Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    let max = u64::try_from(MAX_EXEC_CONCURRENCY).unwrap_or(u64::MAX);
    let v = bounded_u64(d, "concurrency", max)?;
    usize::try_from(v).map_err(serde::de::Error::custom)
}

fn queue<'de, D: Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    let v = usize::deserialize(d)?;
    if v > MAX_EXEC_QUEUE {
        return Err(serde::de::Error::custom(format!(
            "queue must be at most {MAX_EXEC_QUEUE}, found {v}"
        )));
    }
    Ok(v)
}

/// True for a portable environment variable name: `[A-Za-z_][A-Za-z0-9_]*`.
pub fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Variables a registry grant never passes through, whatever the operator
/// allows: the ones the sandbox sets itself and the ones that steer a
/// loader, a shell or an interpreter (what runs, and what it loads).
pub const RESERVED_ENV_NAMES: &[&str] = &[
    "PATH",
    "HOME",
    "TMPDIR",
    "LANG",
    "SHELL",
    "ENV",
    "BASH_ENV",
    "CDPATH",
    "IFS",
    "PS4",
    "PROMPT_COMMAND",
    "SHELLOPTS",
    "BASHOPTS",
    "GLOBIGNORE",
    "NODE_OPTIONS",
    "NODE_PATH",
    "PERL5LIB",
    "PERL5OPT",
    "PERLLIB",
    "RUBYLIB",
    "RUBYOPT",
    "GEM_HOME",
    "GEM_PATH",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "CLASSPATH",
    "GCONV_PATH",
    "HOSTALIASES",
    "LOCALDOMAIN",
    "RES_OPTIONS",
    "MALLOC_CHECK_",
    "GIT_EXEC_PATH",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
];

/// Prefixes of reserved variables (see [`RESERVED_ENV_NAMES`]): the
/// dynamic loaders' (`LD_*`, `DYLD_*`), glibc's tunables, Python's,
/// skilldeck's own (`SKILLDECK_*`, set by the sandbox) and the locale
/// (`LC_*`).
pub const RESERVED_ENV_PREFIXES: &[&str] = &[
    "LD_",
    "DYLD_",
    "GLIBC_",
    "PYTHON",
    "SKILLDECK_",
    "LC_",
    "GIT_CONFIG_",
];

/// True when `name` is never passed through from a registry grant
/// ([`RESERVED_ENV_NAMES`], [`RESERVED_ENV_PREFIXES`]), compared without
/// regard to letter case (Windows' variables are case-insensitive, and a
/// lowercase `path` is a mistake worth refusing too).
pub fn is_reserved_env_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    RESERVED_ENV_NAMES.contains(&upper.as_str())
        || RESERVED_ENV_PREFIXES.iter().any(|p| upper.starts_with(p))
}

fn registry_env_names<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    let names = env_names(d)?;
    if let Some(bad) = names.iter().find(|n| is_reserved_env_name(n)) {
        return Err(serde::de::Error::custom(format!(
            "'{bad}' is reserved (the sandbox sets it, or it steers a loader or an interpreter): a registry grant can never pass it; remove it from registry-env"
        )));
    }
    Ok(names)
}

fn env_names<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    let names = Vec::<String>::deserialize(d)?;
    if let Some(bad) = names.iter().find(|n| !is_env_name(n)) {
        return Err(serde::de::Error::custom(format!(
            "'{}' is not an environment variable name (letters, digits and '_', not starting with a digit)",
            bad.escape_debug()
        )));
    }
    Ok(names)
}
