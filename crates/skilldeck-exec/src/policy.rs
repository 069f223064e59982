//! What an execution may do: the [`Policy`] (profile, limits, grants) and
//! every default and cap as a named constant.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;
pub use skilldeck::deck::TreeLimitsMode;
use skilldeck::deck::{IpRange, NetworkGrant};
use skilldeck::limits;

// The limits an operator can set in `[exec]` are defined once, in the
// core's `skilldeck::limits` (the config's defaults and caps); the
// sandbox's defaults below are those values, so a policy built from the
// default config and `Policy::default()` agree (pinned by
// `the_config_default_limits_are_the_sandbox_defaults`).

/// Default wall-clock timeout of one execution (`[exec] timeout-secs`).
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(limits::DEFAULT_EXEC_TIMEOUT_SECS);
/// The largest timeout a policy may ask for; larger values are capped.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(limits::MAX_EXEC_TIMEOUT_SECS);

/// A timeout a caller asks for, in seconds (`skilldeck run --timeout`,
/// Python's `timeout=`): positive, finite and at most [`MAX_TIMEOUT`], else
/// the message saying so. The one rule every face applies.
pub fn timeout_from_secs(secs: f64) -> Result<Duration, String> {
    let max = MAX_TIMEOUT.as_secs_f64();
    if !secs.is_finite() || secs <= 0.0 {
        return Err(format!(
            "timeout: {secs} s is not a positive number of seconds"
        ));
    }
    if secs > max {
        return Err(format!("timeout: {secs} s: a timeout is at most {max} s"));
    }
    Ok(Duration::from_secs_f64(secs))
}
/// Default cap on each of stdout and stderr (bytes kept; the rest is read
/// and dropped, so the child never blocks on a full pipe; `[exec]
/// output-cap-bytes`). The crate targets 64-bit systems only (its seccomp
/// filter knows no 32-bit arch), where the cast is lossless.
pub(crate) const DEFAULT_OUTPUT_CAP: usize = limits::DEFAULT_EXEC_OUTPUT_CAP_BYTES as usize;
/// The largest output cap a policy may ask for.
pub const MAX_OUTPUT_CAP: usize = limits::MAX_EXEC_OUTPUT_CAP_BYTES as usize;
/// Default memory of one run (`[exec] memory-bytes`): the tree's, where a
/// cgroup applies, and each process's address space (`RLIMIT_AS`).
pub(crate) const DEFAULT_MEMORY_BYTES: u64 = limits::DEFAULT_EXEC_MEMORY_BYTES;
/// Default process limit (`[exec] max-processes`; `RLIMIT_NPROC`, counted
/// per sandbox user; a root caller's runs drop to [`SANDBOX_UID`] first,
/// as `RLIMIT_NPROC` never applies to uid 0).
pub(crate) const DEFAULT_MAX_PROCESSES: u64 = limits::DEFAULT_EXEC_MAX_PROCESSES;
/// Default largest file the script may write (`[exec] file-size-bytes`;
/// `RLIMIT_FSIZE`).
pub(crate) const DEFAULT_FILE_SIZE_BYTES: u64 = limits::DEFAULT_EXEC_FILE_SIZE_BYTES;
/// Default size of the work directory (cwd, `HOME` and `TMPDIR` together,
/// a size-capped tmpfs; `[exec] workdir-bytes`).
pub(crate) const DEFAULT_WORKDIR_BYTES: u64 = limits::DEFAULT_EXEC_WORKDIR_BYTES;
/// Most files and folders the work directory's tmpfs holds (`nr_inodes`):
/// each costs kernel memory beyond the byte quota.
pub(crate) const WORKDIR_INODES: u64 = 65_536;
/// Default CPU time limit (`[exec] cpu-secs`; `RLIMIT_CPU`).
pub(crate) const DEFAULT_CPU_SECONDS: u64 = limits::DEFAULT_EXEC_CPU_SECS;
/// Default open-file limit (`RLIMIT_NOFILE`).
pub(crate) const DEFAULT_OPEN_FILES: u64 = 256;
/// Default concurrency: executions at once, overall and per agent
/// (`[exec] concurrency`).
pub(crate) const DEFAULT_CONCURRENCY: usize = limits::DEFAULT_EXEC_CONCURRENCY;
/// Default number of callers that may wait for a free slot (`[exec]
/// queue`).
pub(crate) const DEFAULT_QUEUE: usize = limits::DEFAULT_EXEC_QUEUE;
/// Default time a caller waits for a free slot before it is refused.
pub(crate) const DEFAULT_QUEUE_WAIT: Duration = Duration::from_secs(30);
/// Largest stdin a caller may hand over as bytes.
pub const MAX_STDIN_BYTES: usize = 1024 * 1024;
/// Largest total size of the command-line arguments.
pub const MAX_ARGS_BYTES: usize = 256 * 1024;
/// Largest script file (its first line is read for a shebang).
pub(crate) const MAX_SCRIPT_BYTES: u64 = 16 * 1024 * 1024;
/// The unprivileged user and group id a root caller's scripts run as
/// (native: the worker drops to it; bwrap: the worker drops to it before
/// `bwrap`, which maps it to itself in its user namespace). It is not
/// `nobody` (65534), which host services share: a script must not be able
/// to signal, trace or write the files of other processes of that user.
/// 2,000,000,000 lies outside every range systemd documents (system,
/// regular, dynamic 61184–65519, `nobody`, containers 524288–1879048191,
/// the foreign range from 2147352576) and below 2^31, which tools reading
/// ids as signed 32-bit numbers still handle. It has no passwd entry (as a
/// container's mapped id): `id -un` fails inside, `HOME` is set.
pub const SANDBOX_UID: u32 = 2_000_000_000;
/// The `PATH` inside the sandbox (system directories only).
pub const SANDBOX_PATH: &str = "/usr/local/bin:/usr/bin:/bin";
/// `LANG` inside the sandbox.
pub(crate) const SANDBOX_LANG: &str = "C.UTF-8";

/// How strongly an execution is isolated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// In process: Landlock (ABI 7, fully enforced) + seccomp + PID, mount,
    /// IPC and network namespaces + rlimits + an unprivileged uid. Every layer
    /// is required: a missing one refuses the execution.
    Native,
    /// bubblewrap (`bwrap` on the system PATH): a fresh mount namespace
    /// holding only the system paths, the skill (read-only) and the work
    /// dir; user, PID, IPC, UTS, cgroup and network namespaces; all
    /// capabilities dropped; the same seccomp filter (passed to `bwrap
    /// --add-seccomp-fd`), rlimits and [`SANDBOX_UID`] inside. A root
    /// caller drops to [`SANDBOX_UID`] before starting `bwrap`, so the
    /// script is never host root and `RLIMIT_NPROC` holds. Refused when
    /// `bwrap` is not installed or cannot create its user namespace.
    Bwrap,
    /// No isolation (operator's explicit choice): cleared environment,
    /// rlimits, timeout and output caps only; the tree is killed by process
    /// group, so a `setsid` daemon may survive.
    None,
}

impl Profile {
    /// The profile named `name` (`native`, `bwrap` or `none`).
    pub fn parse(name: &str) -> Option<Profile> {
        match name {
            "native" | "landlock" => Some(Profile::Native),
            "bwrap" | "bubblewrap" => Some(Profile::Bwrap),
            "none" => Some(Profile::None),
            _ => None,
        }
    }

    /// The profile's name.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Native => "native",
            Profile::Bwrap => "bwrap",
            Profile::None => "none",
        }
    }
}

/// Resource limits of one execution.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Limits {
    /// Wall-clock timeout; the whole process tree is killed when it passes.
    #[serde(rename = "timeout_ms", serialize_with = "millis")]
    pub timeout: Duration,
    /// Bytes kept of each of stdout and stderr.
    pub output_cap: usize,
    /// Memory in bytes: the whole run's (a per-run cgroup's `memory.max`,
    /// swap off) where tree limits apply, and each process's address space
    /// (`RLIMIT_AS`).
    pub memory_bytes: u64,
    /// Processes: the whole run's (a per-run cgroup's `pids.max`) where tree
    /// limits apply, and `RLIMIT_NPROC`.
    pub max_processes: u64,
    /// Size of the work directory in bytes (a tmpfs in the sandbox's mount
    /// namespace; profiles `native` and `bwrap`).
    pub workdir_bytes: u64,
    /// Largest file written, in bytes (`RLIMIT_FSIZE`).
    pub file_size_bytes: u64,
    /// CPU seconds (`RLIMIT_CPU`).
    pub cpu_seconds: u64,
    /// Open files (`RLIMIT_NOFILE`).
    pub open_files: u64,
}

fn millis<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            timeout: DEFAULT_TIMEOUT,
            output_cap: DEFAULT_OUTPUT_CAP,
            memory_bytes: DEFAULT_MEMORY_BYTES,
            max_processes: DEFAULT_MAX_PROCESSES,
            workdir_bytes: DEFAULT_WORKDIR_BYTES,
            file_size_bytes: DEFAULT_FILE_SIZE_BYTES,
            cpu_seconds: DEFAULT_CPU_SECONDS,
            open_files: DEFAULT_OPEN_FILES,
        }
    }
}

impl Limits {
    /// These limits with the timeout and output cap brought under their
    /// caps ([`MAX_TIMEOUT`], [`MAX_OUTPUT_CAP`]).
    pub fn capped(mut self) -> Self {
        self.timeout = self.timeout.min(MAX_TIMEOUT);
        self.output_cap = self.output_cap.min(MAX_OUTPUT_CAP);
        self
    }
}

/// What the operator grants one skill beyond the default policy. A skill
/// never grants itself anything.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Grants {
    /// Network: none, the host's whole network (TCP/UDP/DNS), or only the
    /// listed host names through skilldeck's filtering proxy (the sandbox
    /// keeps an empty network namespace whose one reachable port is the
    /// proxy's). Host Unix sockets stay closed in every case.
    pub network: NetworkGrant,
    /// Address ranges the proxy may reach although it refuses them by
    /// default (the operator's `[exec] network-allow-ranges`); only with a
    /// host-list grant.
    pub allow_ranges: Vec<IpRange>,
    /// Extra paths readable (and executable) inside the sandbox.
    pub read_paths: Vec<PathBuf>,
    /// Extra paths writable inside the sandbox.
    pub write_paths: Vec<PathBuf>,
    /// Names of parent environment variables passed through.
    pub env: Vec<String>,
}

/// The complete policy of an execution.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Policy {
    /// The isolation profile.
    pub profile: Profile,
    /// Resource limits.
    pub limits: Limits,
    /// Operator grants for this skill.
    pub grants: Grants,
    /// Per-run caps on the whole tree (cgroup): required, or applied where
    /// the machine offers them.
    pub tree_limits: TreeLimitsMode,
    /// Keep the work directory after the run (for debugging). The work
    /// directory is then a plain folder on the host's disk, without the
    /// tmpfs quota, so that its files outlive the sandbox.
    pub keep_workdir: bool,
    /// Folders put before [`SANDBOX_PATH`] on the script's `PATH`, and
    /// searched first for its interpreter (`.py` files, `#!/usr/bin/env
    /// python3`): a skill environment's `bin`. Each must also be readable
    /// (under a path of `grants.read_paths`); the host sets both.
    pub bin_dirs: Vec<PathBuf>,
    /// Variables set for the script after the ones passed through (so a
    /// pass-through cannot replace them): a Node skill environment's
    /// `NODE_PATH` and `NODE_OPTIONS`. The host sets them with the
    /// environment's `grants.read_paths`.
    pub vars: Vec<(String, String)>,
    /// A Node skill environment's `node_modules`, which the run sees as
    /// the run folder's `node_modules` (beside the skill folder's mount
    /// point, above the work directory): Node's own resolution of a bare
    /// `require` or `import` from the skill's scripts (CommonJS and ES
    /// modules alike) and from the work directory walks up to it. It must
    /// also be readable (under a path of `grants.read_paths`); the host
    /// sets both.
    pub node_modules: Option<PathBuf>,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            profile: Profile::Native,
            limits: Limits::default(),
            grants: Grants::default(),
            tree_limits: TreeLimitsMode::default(),
            keep_workdir: false,
            bin_dirs: Vec::new(),
            vars: Vec::new(),
            node_modules: None,
        }
    }
}

/// The system paths readable and executable inside the sandbox (missing
/// ones are skipped). `/etc` is opened file by file, so root-only files
/// there (`/etc/shadow`) stay closed even to a root caller.
pub(crate) const SYSTEM_READ_PATHS: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/alternatives",
    "/etc/ssl/certs",
    "/etc/ssl/openssl.cnf",
    "/etc/ca-certificates",
    "/etc/mime.types",
    "/etc/os-release",
    "/usr/share/zoneinfo",
];

/// Device files readable and writable inside the sandbox.
pub(crate) const SYSTEM_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

/// Network-related `/etc` files added when the network is granted.
pub(crate) const NETWORK_READ_PATHS: &[&str] = &[
    "/etc/resolv.conf",
    "/etc/hosts",
    "/etc/host.conf",
    "/etc/services",
    "/etc/protocols",
    "/etc/gai.conf",
];
