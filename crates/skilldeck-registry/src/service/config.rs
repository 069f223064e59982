//! [`RegistryConfig`]: where the database and the blobs live, and
//! [`RegistryLimits`]: every cap and TTL, each with a named default.

use std::path::PathBuf;
use std::time::Duration;

use skilldeck_package::PackageLimits;

pub use crate::db_limits::DbLimits;
use crate::error::RegistryError;
use crate::names::Namespace;

/// Most bytes of a publish body (`MAX_PUBLISH_BYTES`).
pub const MAX_PUBLISH_BYTES: usize = 20 * 1024 * 1024;
/// Most bytes of a JSON request body.
pub const MAX_JSON_BODY_BYTES: usize = 64 * 1024;
/// How long a resolved set, catalog or lock is kept in the in-process
/// cache (memory only: a write is seen at once on its replica and within
/// [`CONSISTENCY_BOUND`] on the others, whatever the TTL; a catalog
/// expires with the resolution it was rendered from).
pub const CATALOG_CACHE_TTL: Duration = Duration::from_secs(5);
/// With N replicas on PostgreSQL: a write committed on one replica longer
/// ago than this is reflected in every answer of every other replica
/// (usually within milliseconds, by `NOTIFY`; this bounds the fallback
/// when notifications are late or lost). Each replica checks the database
/// generation every half of it.
pub const CONSISTENCY_BOUND: Duration = Duration::from_millis(500);
/// How long a verified token is remembered (hash → principal).
pub const AUTH_CACHE_TTL: Duration = Duration::from_secs(30);
/// Most times an agent's resolution is computed for one request while
/// writes touching the agent keep landing during the computation (then
/// the last one is served, tagged with the generation it started at).
pub const MAX_COMPUTE_ATTEMPTS: u32 = 3;
/// Blobs younger than this are never collected (an in-flight publish
/// writes its blobs before its transaction).
pub const GC_GRACE: Duration = Duration::from_secs(60 * 60);
/// Items per page when `limit` is not given.
pub const DEFAULT_PAGE_LIMIT: u32 = 50;
/// Most items per page.
pub const MAX_PAGE_LIMIT: u32 = 500;
/// Most database connections per registry process.
pub const MAX_DB_CONNECTIONS: u32 = 16;
/// Most entries of the in-process catalog cache (agents × formats).
pub const MAX_CACHE_ENTRIES: usize = 10_000;
/// Most parsed skills kept in memory for catalogs (versions are
/// immutable, so an entry never goes stale).
pub const MAX_PARSED_SKILLS: usize = 20_000;
/// Most patterns an agent may list (allowed + denied).
pub const MAX_AGENT_PATTERNS: usize = 256;
/// Most capabilities an agent may list.
pub const MAX_AGENT_CAPABILITIES: usize = 256;
/// Most environment variable names one grant may pass through.
pub const MAX_GRANT_ENV: usize = 64;
/// Longest display name, token name, reason or pattern.
pub const MAX_TEXT_LEN: usize = 1024;
/// Most versions a refused assignment's problem lists (newest first).
pub const MAX_LISTED_VERSIONS: usize = 10;
/// Bytes of randomness in a token.
pub const TOKEN_RANDOM_BYTES: usize = 32;

/// How long a client may take to send a request's head (request line and
/// headers) before its connection is closed.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a request body may stall (no bytes) before the request fails.
pub const BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);
/// Most connections served at once by one registry process; past it the
/// listener waits for one to close before accepting another.
pub const MAX_CONNECTIONS: usize = 1024;
/// Longest the registry works on one request before answering 503
/// `registry-request-timeout` with `Retry-After` (reading a publish body
/// counts; streaming a response body does not). A backstop above every
/// database timeout: the request is dropped, its transaction rolled back.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// Failed authentications one client address (or one token prefix) may
/// make in `FAILED_AUTH_WINDOW` before further failures are answered
/// 429 with `Retry-After`.
pub const MAX_FAILED_AUTH: u32 = 20;
/// The window failed authentications are counted in.
pub const FAILED_AUTH_WINDOW: Duration = Duration::from_secs(60);
/// Most clients (addresses and token prefixes) the failed-authentication
/// throttle remembers; past it, when none has expired, every new client
/// shares one bucket (fails closed rather than forgetting an attacker).
pub const MAX_THROTTLE_KEYS: usize = 100_000;
/// Characters of a presented token (after `sdk_`) the throttle keys on.
pub const THROTTLE_TOKEN_PREFIX_CHARS: usize = 8;
/// While a client address (or token prefix) is over `MAX_FAILED_AUTH`,
/// a token this process has not verified recently is looked up in the
/// database at most once per this interval per key; the others are
/// answered 429 without a query (a flood costs no query per request, and
/// a valid token from a throttled address still gets in on a retry).
pub const FAILED_AUTH_PROBE_INTERVAL: Duration = Duration::from_secs(1);

/// Longest `/readyz` waits for the database and the store to answer.
pub const READY_CHECK_TIMEOUT: Duration = Duration::from_secs(2);

/// Every token starts with this.
pub const TOKEN_PREFIX: &str = "sdk_";

/// A test run's wall-clock timeout (`POST .../test-run`): far below a
/// served agent's default (a test run is a quick look, not a job).
pub const TEST_RUN_TIMEOUT: Duration = Duration::from_secs(10);
/// Bytes kept per output stream of a test run (the rest is read and
/// dropped; the outcome says it was truncated).
pub const TEST_RUN_OUTPUT_CAP_BYTES: u64 = 64 * 1024;
/// Memory of one test run (the process tree, and each process's address
/// space).
pub const TEST_RUN_MEMORY_BYTES: u64 = 256 * 1024 * 1024;
/// Most processes of one test run.
pub const TEST_RUN_MAX_PROCESSES: u64 = 16;
/// Size of a test run's work folder (a tmpfs).
pub const TEST_RUN_WORKDIR_BYTES: u64 = 16 * 1024 * 1024;
/// Largest file a test run may write.
pub const TEST_RUN_FILE_SIZE_BYTES: u64 = 8 * 1024 * 1024;
/// CPU seconds of one test run.
pub const TEST_RUN_CPU_SECS: u64 = 10;
/// Test runs running at once on one registry process; past it (and the
/// queue) a test run is answered 503 `registry-test-run-busy`.
pub const TEST_RUN_CONCURRENCY: usize = 2;
/// Test runs that may wait for a slot.
pub const TEST_RUN_QUEUE: usize = 4;
/// Test runs one principal (token) may start per minute (a token bucket:
/// this many at once, refilled evenly over the minute); past it: 429
/// `registry-test-run-rate-limited` with `Retry-After`.
pub const TEST_RUNS_PER_MINUTE: u32 = 10;
/// Most arguments of a script test run.
pub const MAX_TEST_RUN_ARGS: usize = 64;
/// Most principals the test-run rate limiter remembers; past it, when no
/// bucket is full again, new principals share one bucket (fails closed).
pub const MAX_TEST_RUN_RATE_KEYS: usize = 10_000;

/// The strict sandbox policy of a registry test run: no network, no
/// grants, no environment passed through, short timeout, small caps. The
/// runner maps it onto the host's `[exec]` configuration (the one mapping
/// from a configuration to a sandbox policy lives in the host layer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestRunLimits {
    /// `TEST_RUN_TIMEOUT`.
    pub timeout: Duration,
    /// `TEST_RUN_OUTPUT_CAP_BYTES`.
    pub output_cap_bytes: u64,
    /// `TEST_RUN_MEMORY_BYTES`.
    pub memory_bytes: u64,
    /// `TEST_RUN_MAX_PROCESSES`.
    pub max_processes: u64,
    /// `TEST_RUN_WORKDIR_BYTES`.
    pub workdir_bytes: u64,
    /// `TEST_RUN_FILE_SIZE_BYTES`.
    pub file_size_bytes: u64,
    /// `TEST_RUN_CPU_SECS`.
    pub cpu_secs: u64,
    /// `TEST_RUN_CONCURRENCY`.
    pub concurrency: usize,
    /// `TEST_RUN_QUEUE`.
    pub queue: usize,
    /// `TEST_RUNS_PER_MINUTE` (0: test runs are refused).
    pub per_minute: u32,
}

impl Default for TestRunLimits {
    fn default() -> Self {
        TestRunLimits {
            timeout: TEST_RUN_TIMEOUT,
            output_cap_bytes: TEST_RUN_OUTPUT_CAP_BYTES,
            memory_bytes: TEST_RUN_MEMORY_BYTES,
            max_processes: TEST_RUN_MAX_PROCESSES,
            workdir_bytes: TEST_RUN_WORKDIR_BYTES,
            file_size_bytes: TEST_RUN_FILE_SIZE_BYTES,
            cpu_secs: TEST_RUN_CPU_SECS,
            concurrency: TEST_RUN_CONCURRENCY,
            queue: TEST_RUN_QUEUE,
            per_minute: TEST_RUNS_PER_MINUTE,
        }
    }
}

/// The server loop's limits (see `http::server`).
#[derive(Debug, Clone)]
pub struct ServerLimits {
    /// `HEADER_READ_TIMEOUT`.
    pub header_read_timeout: Duration,
    /// `BODY_READ_TIMEOUT`.
    pub body_read_timeout: Duration,
    /// `MAX_CONNECTIONS`.
    pub max_connections: usize,
    /// `REQUEST_TIMEOUT`.
    pub request_timeout: Duration,
}

impl Default for ServerLimits {
    fn default() -> Self {
        ServerLimits {
            header_read_timeout: HEADER_READ_TIMEOUT,
            body_read_timeout: BODY_READ_TIMEOUT,
            max_connections: MAX_CONNECTIONS,
            request_timeout: REQUEST_TIMEOUT,
        }
    }
}

/// Every cap and TTL of a registry.
#[derive(Debug, Clone)]
pub struct RegistryLimits {
    /// Most bytes of a publish body.
    pub max_publish_bytes: usize,
    /// Most bytes of a JSON body.
    pub max_json_body_bytes: usize,
    /// The catalog/lock cache TTL.
    pub catalog_cache_ttl: Duration,
    /// The token cache TTL.
    pub auth_cache_ttl: Duration,
    /// `CONSISTENCY_BOUND`.
    pub consistency_bound: Duration,
    /// Blobs younger than this are never collected.
    pub gc_grace: Duration,
    /// Default page size.
    pub default_page_limit: u32,
    /// Largest page size.
    pub max_page_limit: u32,
    /// Database connections.
    pub max_db_connections: u32,
    /// The package limits unpack applies (files, bytes, ratio).
    pub package: PackageLimits,
    /// `MAX_FAILED_AUTH`.
    pub max_failed_auth: u32,
    /// `FAILED_AUTH_WINDOW`.
    pub failed_auth_window: Duration,
    /// `FAILED_AUTH_PROBE_INTERVAL`.
    pub failed_auth_probe_interval: Duration,
    /// The database's timeouts and the write queue.
    pub db: DbLimits,
    /// The strict policy and the rate of test runs.
    pub test_run: TestRunLimits,
}

impl Default for RegistryLimits {
    fn default() -> Self {
        RegistryLimits {
            max_publish_bytes: MAX_PUBLISH_BYTES,
            max_json_body_bytes: MAX_JSON_BODY_BYTES,
            catalog_cache_ttl: CATALOG_CACHE_TTL,
            auth_cache_ttl: AUTH_CACHE_TTL,
            consistency_bound: CONSISTENCY_BOUND,
            gc_grace: GC_GRACE,
            default_page_limit: DEFAULT_PAGE_LIMIT,
            max_page_limit: MAX_PAGE_LIMIT,
            max_db_connections: MAX_DB_CONNECTIONS,
            package: PackageLimits::default(),
            max_failed_auth: MAX_FAILED_AUTH,
            failed_auth_window: FAILED_AUTH_WINDOW,
            failed_auth_probe_interval: FAILED_AUTH_PROBE_INTERVAL,
            db: DbLimits::default(),
            test_run: TestRunLimits::default(),
        }
    }
}

/// Where a registry keeps its state.
#[derive(Debug, Clone)]
pub struct RegistryConfig {
    /// `sqlite://PATH?mode=rwc` or `postgres://...`.
    pub database_url: String,
    /// `file:///abs/dir` or `s3://bucket[/prefix]` (S3 settings from the
    /// standard `AWS_*` environment).
    pub store_url: String,
    /// A local folder the registry owns for publishes in flight (each
    /// process works in its own locked subfolder; what a killed process
    /// left is removed at the next start).
    pub staging_dir: PathBuf,
    /// Caps and TTLs.
    pub limits: RegistryLimits,
    /// What the risk audit refuses.
    pub trust: TrustPolicy,
    /// How a version's stored report is made.
    pub report: ReportPolicy,
}

/// How the registry makes a version's stored report: exactly what
/// `skilldeck validate` says for the package in `mode` (`--lenient`, the
/// default: the rules hosts load by; or `--strict`), advisory lints
/// included. What it accepts does not change: a package a host cannot
/// load is refused either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReportPolicy {
    /// Default: [`skilldeck::Mode::Lenient`].
    pub mode: skilldeck::Mode,
}

impl Default for ReportPolicy {
    fn default() -> Self {
        ReportPolicy {
            mode: skilldeck::Mode::Lenient,
        }
    }
}

/// The label protected by default: the one production agents follow.
pub const DEFAULT_PROTECTED_LABEL: &str = "production";

/// What the registry refuses on the risk audit's verdict (`skilldeck
/// audit`, run on every publish): a publish rated at or above
/// `refuse_publish_at`; moving a protected label to a version rated at or
/// above `protected_label_refuse_at`, unless an admin gives a reason
/// (recorded in the audit log).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustPolicy {
    /// Default: `critical`.
    pub refuse_publish_at: skilldeck_audit::Severity,
    /// Default: [`DEFAULT_PROTECTED_LABEL`].
    pub protected_labels: Vec<String>,
    /// Default: `high`.
    pub protected_label_refuse_at: skilldeck_audit::Severity,
}

impl Default for TrustPolicy {
    fn default() -> Self {
        TrustPolicy {
            refuse_publish_at: skilldeck_audit::Severity::Critical,
            protected_labels: vec![DEFAULT_PROTECTED_LABEL.to_owned()],
            protected_label_refuse_at: skilldeck_audit::Severity::High,
        }
    }
}

// The text rule beside its limit (the error enum sits below the service
// and knows no limit).
impl RegistryError {
    /// 400 `registry-invalid-text` unless `value` is at most
    /// `MAX_TEXT_LEN` bytes without
    /// control characters (PostgreSQL refuses NUL in text; logs and
    /// terminals should never see the others).
    pub fn check_text(field: &str, value: &str) -> Result<(), RegistryError> {
        if value.len() > MAX_TEXT_LEN {
            return Err(RegistryError::bad_request(
                "registry-invalid-text",
                format!("{field} is longer than {} bytes", MAX_TEXT_LEN),
            ));
        }
        if skilldeck::spec::has_control(value, true) {
            return Err(RegistryError::bad_request(
                "registry-invalid-text",
                format!("{field} holds a control character"),
            ));
        }
        Ok(())
    }
}

/// Which namespaces the anonymous index lists.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum WellKnownPolicy {
    /// None: `/.well-known/agent-skills/index.json` answers 404 (the
    /// default: without a token, nothing is shown).
    #[default]
    Off,
    /// These namespaces, in this order (a name listed by an earlier one
    /// hides a later one's).
    Namespaces(Vec<Namespace>),
    /// Every namespace, by name.
    All,
}

impl WellKnownPolicy {
    /// The policy of a `namespaces = [...]` setting: empty is off, `*`
    /// alone is every namespace; anything else must be namespaces.
    pub fn parse(names: &[String]) -> Result<WellKnownPolicy, RegistryError> {
        match names {
            [] => Ok(WellKnownPolicy::Off),
            [one] if one == "*" => Ok(WellKnownPolicy::All),
            _ => names
                .iter()
                .map(|n| Namespace::new(n).map_err(RegistryError::from))
                .collect::<Result<Vec<_>, _>>()
                .map(WellKnownPolicy::Namespaces),
        }
    }

    /// True when `ns` is listed.
    pub fn lists(&self, ns: &Namespace) -> bool {
        match self {
            WellKnownPolicy::Off => false,
            WellKnownPolicy::All => true,
            WellKnownPolicy::Namespaces(list) => list.contains(ns),
        }
    }
}
