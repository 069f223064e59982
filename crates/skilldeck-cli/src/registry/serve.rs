//! `skilldeck registry serve`: the registry's HTTP API on one address,
//! with one line on stdout when it is ready and a graceful stop on
//! SIGTERM/SIGINT. Logs (one line per request) go to stderr; spans are
//! exported over OTLP as `skilldeck serve` exports them (`[telemetry]`,
//! `OTEL_*`); `/metrics` is served to admin tokens, and without one on
//! `--metrics-listen`.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;

use skilldeck_registry::Registry;

use crate::error::CliError;
use crate::registry::{Backend, registry_error, runtime};

/// The address served by default (loopback only).
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7878";

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    backend: Backend,
    /// The address to listen on (`127.0.0.1:0` picks a free port; the
    /// ready line shows it).
    #[arg(long, value_name = "ADDR", default_value = DEFAULT_LISTEN)]
    listen: SocketAddr,
    /// Also serve `/metrics` on this address without a token (for a
    /// private scrape network: never a public address). The public
    /// listener serves `/metrics` to admin tokens only.
    #[arg(long, value_name = "ADDR")]
    metrics_listen: Option<SocketAddr>,
    /// Config file for the `[telemetry]` section (OTLP export of the
    /// request spans; the `OTEL_*` variables win) and `[registry.ui]`
    /// (single sign-on with OpenID Connect: `[registry.ui.oidc]`; whether
    /// the UI takes API tokens: `token-sign-in`) and `[registry.well-known]`
    /// (the namespaces the anonymous discovery index lists) [default:
    /// ./skilldeck.toml, then $XDG_CONFIG_HOME/skilldeck/config.toml].
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Log line format on stderr: one line per request and the server's
    /// own lines (RUST_LOG filters; default info).
    #[arg(long, default_value = "text", value_parser = ["text", "json"])]
    log_format: String,
    /// The admin token file: read, or created (mode 0600) with a fresh
    /// token [default: DATA/admin-token].
    #[arg(long, value_name = "FILE")]
    admin_token_file: Option<PathBuf>,
    /// Collect unreferenced blobs older than the grace period at start.
    #[arg(long)]
    gc_on_start: bool,
    /// Refuse a publish the risk audit rates at this severity or worse
    /// (low, medium, high, critical).
    #[arg(long, value_name = "SEVERITY", default_value = "critical", value_parser = parse_severity)]
    audit_refuse_at: skilldeck_audit::Severity,
    /// A protected label (repeatable; default: production): it points only
    /// to versions rated below --protected-label-refuse-at, unless an admin
    /// gives an override reason.
    #[arg(long = "protected-label", value_name = "LABEL")]
    protected_labels: Vec<String>,
    /// The rating at which a version may not take a protected label.
    #[arg(long, value_name = "SEVERITY", default_value = "high", value_parser = parse_severity)]
    protected_label_refuse_at: skilldeck_audit::Severity,
    /// Test runs (`POST .../versions/{version}/test-run`) one token may
    /// start per minute (a token bucket; 0 refuses every test run).
    #[arg(long, value_name = "N", default_value_t = skilldeck_registry::TestRunLimits::default().per_minute)]
    test_runs_per_minute: u32,
    /// A test run's wall-clock timeout in seconds (1 to 60; the rest of
    /// the test-run policy is fixed: no network, no grants, small caps).
    #[arg(long, value_name = "SECS", default_value_t = skilldeck_registry::TestRunLimits::default().timeout.as_secs(), value_parser = clap::value_parser!(u64).range(1..=MAX_TEST_RUN_TIMEOUT_SECS))]
    test_run_timeout_secs: u64,
    /// How a version's stored report is made: what `skilldeck validate
    /// --lenient` (hosts' rules) or `--strict` (the specification
    /// exactly) says for the package, advisory lints included. What is
    /// accepted does not change.
    #[arg(long, value_name = "MODE", default_value = "lenient", value_parser = parse_report_mode)]
    report_mode: skilldeck::Mode,
    #[command(flatten)]
    faults: FaultBounds,
}

/// The bounds that keep one stalled writer (a paused replica holding the
/// write lock, a partition) from stalling every request: each is
/// answered 503 with `Retry-After` instead of waiting.
#[derive(Debug, clap::Args)]
struct FaultBounds {
    /// Milliseconds a statement waits for a row lock (PostgreSQL
    /// lock_timeout, SQLite busy_timeout) before the request is answered
    /// 503 registry-busy.
    #[arg(long, value_name = "MS", default_value_t = millis(skilldeck_registry::DbLimits::default().lock_timeout), value_parser = clap::value_parser!(u64).range(1..))]
    db_lock_timeout_ms: u64,
    /// Milliseconds one statement may run (PostgreSQL statement_timeout).
    #[arg(long, value_name = "MS", default_value_t = millis(skilldeck_registry::DbLimits::default().statement_timeout), value_parser = clap::value_parser!(u64).range(1..))]
    db_statement_timeout_ms: u64,
    /// Milliseconds a transaction may sit idle before PostgreSQL ends its
    /// session and releases its locks
    /// (idle_in_transaction_session_timeout): what frees the write lock a
    /// paused replica holds.
    #[arg(long, value_name = "MS", default_value_t = millis(skilldeck_registry::DbLimits::default().idle_in_transaction_timeout), value_parser = clap::value_parser!(u64).range(1..))]
    db_idle_in_transaction_timeout_ms: u64,
    /// Milliseconds a request waits for a database connection before it
    /// is answered 503 registry-busy.
    #[arg(long, value_name = "MS", default_value_t = millis(skilldeck_registry::DbLimits::default().acquire_timeout), value_parser = clap::value_parser!(u64).range(1..))]
    db_acquire_timeout_ms: u64,
    /// Database connections of this process.
    #[arg(long, value_name = "N", default_value_t = skilldeck_registry::RegistryLimits::default().max_db_connections, value_parser = clap::value_parser!(u32).range(2..))]
    db_max_connections: u32,
    /// Writes running at once in this process (each holds a connection;
    /// the rest of the pool stays free for reads; at most the pool size
    /// minus one).
    #[arg(long, value_name = "N", default_value_t = skilldeck_registry::DbLimits::default().max_concurrent_writes, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    max_concurrent_writes: usize,
    /// Writes that may wait for a write slot (each at most the lock
    /// timeout); one more is answered 503 registry-busy at once.
    #[arg(long, value_name = "N", default_value_t = skilldeck_registry::DbLimits::default().max_queued_writes)]
    max_queued_writes: usize,
    /// Seconds the registry works on one request (a publish body's upload
    /// included) before answering 503 registry-request-timeout.
    #[arg(long, value_name = "SECS", default_value_t = skilldeck_registry::ServerLimits::default().request_timeout.as_secs(), value_parser = clap::value_parser!(u64).range(1..))]
    request_timeout_secs: u64,
    /// Failed authentications one client address (or token prefix) may
    /// make per window, counted across every replica on this database;
    /// past it: 429 with Retry-After.
    #[arg(long, value_name = "N", default_value_t = skilldeck_registry::RegistryLimits::default().max_failed_auth)]
    max_failed_auth: u32,
    /// The window failed authentications are counted in, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = skilldeck_registry::RegistryLimits::default().failed_auth_window.as_secs(), value_parser = clap::value_parser!(u64).range(1..))]
    failed_auth_window_secs: u64,
}

fn millis(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

impl FaultBounds {
    /// Applies the bounds to the registry's limits and the server's.
    fn apply(
        &self,
        limits: &mut skilldeck_registry::RegistryLimits,
        server: &mut skilldeck_registry::ServerLimits,
    ) {
        use std::time::Duration;
        limits.db.lock_timeout = Duration::from_millis(self.db_lock_timeout_ms);
        limits.db.statement_timeout = Duration::from_millis(self.db_statement_timeout_ms);
        limits.db.idle_in_transaction_timeout =
            Duration::from_millis(self.db_idle_in_transaction_timeout_ms);
        limits.db.acquire_timeout = Duration::from_millis(self.db_acquire_timeout_ms);
        limits.db.max_concurrent_writes = self.max_concurrent_writes;
        limits.db.max_queued_writes = self.max_queued_writes;
        limits.max_db_connections = self.db_max_connections;
        limits.max_failed_auth = self.max_failed_auth;
        limits.failed_auth_window = Duration::from_secs(self.failed_auth_window_secs);
        server.request_timeout = Duration::from_secs(self.request_timeout_secs);
    }
}

/// The web UI's configuration from `[registry.ui]`: single sign-on is
/// checked now (a bad setting or an unreadable client secret stops the
/// server with a message naming the key), the provider is contacted when
/// the sign-in page is first shown.
fn ui_config(config: &skilldeck::Config) -> Result<skilldeck_registry_ui::UiConfig, CliError> {
    let section = &config.registry.ui;
    let oidc = section
        .oidc
        .as_ref()
        .map(|c| skilldeck_registry_ui::OidcSettings::from_config(c, &config.base_dir))
        .transpose()
        .map_err(|e| CliError::Usage(e.to_string()))?;
    let token_sign_in = section.token_sign_in.unwrap_or(true);
    if !token_sign_in && oidc.is_none() {
        return Err(CliError::Usage(
            "[registry.ui] token-sign-in = false needs [registry.ui.oidc]: otherwise nobody could sign in to the UI".to_owned(),
        ));
    }
    Ok(skilldeck_registry_ui::UiConfig {
        token_sign_in,
        oidc,
        ..skilldeck_registry_ui::UiConfig::default()
    })
}

fn parse_report_mode(text: &str) -> Result<skilldeck::Mode, String> {
    match text {
        "lenient" => Ok(skilldeck::Mode::Lenient),
        "strict" => Ok(skilldeck::Mode::Strict),
        _ => Err(format!("'{text}': expected lenient or strict")),
    }
}

/// Longest test-run timeout `--test-run-timeout-secs` accepts.
pub const MAX_TEST_RUN_TIMEOUT_SECS: u64 = 60;

fn parse_severity(text: &str) -> Result<skilldeck_audit::Severity, String> {
    skilldeck_audit::Severity::parse(text)
        .ok_or_else(|| format!("'{text}': expected low, medium, high or critical"))
}

pub fn run(args: &Args) -> Result<u8, CliError> {
    let format: skilldeck_mcp::logging::LogFormat =
        args.log_format.parse().map_err(CliError::Usage)?;
    let ctx = crate::context::Context::new(&crate::context::DeckArgs {
        config: args.config.clone(),
        ..crate::context::DeckArgs::default()
    })?;
    // Logging and OTLP export as `skilldeck serve` installs them, before
    // the runtime starts (the exporter's HTTP client owns one); the last
    // spans are flushed when `_telemetry` drops, after the server stopped.
    let telemetry = skilldeck_telemetry::Settings::resolve(&ctx.config.telemetry, |name| {
        std::env::var(name).ok()
    })
    .map_err(skilldeck_mcp::Error::from)?;
    let _telemetry = skilldeck_mcp::logging::init_with_telemetry(format, telemetry.as_ref())?;
    let ui = ui_config(&ctx.config)?;
    let well_known =
        skilldeck_registry::WellKnownPolicy::parse(&ctx.config.registry.well_known.namespaces)
            .map_err(|e| CliError::Usage(format!("[registry.well-known] namespaces: {e}")))?;
    let data = args.backend.data_dir()?;
    std::fs::create_dir_all(&data).map_err(|e| CliError::Io {
        path: data.clone(),
        source: e,
    })?;
    let mut config = args.backend.config(&data);
    config.trust.refuse_publish_at = args.audit_refuse_at;
    config.trust.protected_label_refuse_at = args.protected_label_refuse_at;
    if !args.protected_labels.is_empty() {
        config.trust.protected_labels = args.protected_labels.clone();
    }
    config.report.mode = args.report_mode;
    config.limits.test_run.per_minute = args.test_runs_per_minute;
    config.limits.test_run.timeout = std::time::Duration::from_secs(args.test_run_timeout_secs);
    let mut server_limits = skilldeck_registry::ServerLimits::default();
    args.faults.apply(&mut config.limits, &mut server_limits);
    let runner = std::sync::Arc::new(crate::registry::test_runner::HostTestRunner::new(
        &config.limits.test_run,
    ));
    let token_file = args
        .admin_token_file
        .clone()
        .unwrap_or_else(|| data.join("admin-token"));
    runtime()?.block_on(async move {
        let registry = Registry::open(config).await.map_err(registry_error)?;
        registry.set_test_runner(runner).map_err(registry_error)?;
        registry
            .set_well_known(well_known)
            .map_err(registry_error)?;
        let path = registry
            .ensure_admin_token(&token_file)
            .await
            .map_err(registry_error)?;
        eprintln!("skilldeck registry: admin token in {}", path.display());
        if args.gc_on_start {
            let grace = registry.limits().gc_grace;
            let report = registry.gc(grace).await.map_err(registry_error)?;
            eprintln!(
                "skilldeck registry: gc deleted {} blobs ({} bytes)",
                report.deleted, report.deleted_bytes
            );
        }
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .map_err(|e| CliError::Usage(format!("cannot listen on {}: {e}", args.listen)))?;
        let addr = listener.local_addr().map_err(CliError::Output)?;
        let metrics = match args.metrics_listen {
            Some(at) => {
                let l = tokio::net::TcpListener::bind(at)
                    .await
                    .map_err(|e| CliError::Usage(format!("cannot listen on {at}: {e}")))?;
                let shown = l.local_addr().map_err(CliError::Output)?;
                Some((l, shown))
            }
            None => None,
        };
        let app = skilldeck_registry::http::api_router(registry.clone());
        if let Some(oidc) = &ui.oidc {
            eprintln!(
                "skilldeck registry: single sign-on with {} (callback {})",
                oidc.issuer.as_str(),
                oidc.redirect_url.as_str()
            );
        }
        let app = app.merge(skilldeck_registry_ui::ui_router_with(registry, ui));
        // Handlers in place before the address is announced.
        let stop = skilldeck_mcp::shutdown::on_signal();
        let (stopped, _) = tokio::sync::watch::channel(());
        let metrics_task = metrics.map(|(l, shown)| {
            let mut stopped = stopped.subscribe();
            let task = tokio::spawn(skilldeck_registry::http::serve(
                l,
                skilldeck_registry::http::metrics_router(),
                skilldeck_registry::ServerLimits::default(),
                async move {
                    let _ = stopped.changed().await;
                },
            ));
            (task, shown)
        });
        {
            let mut out = std::io::stdout().lock();
            writeln!(out, "skilldeck registry listening on http://{addr}")?;
            if let Some((_, shown)) = &metrics_task {
                writeln!(
                    out,
                    "skilldeck registry metrics (no token) on http://{shown}/metrics"
                )?;
            }
            out.flush()?;
        }
        skilldeck_registry::http::serve(listener, app, server_limits, stop)
            .await
            .map_err(CliError::Output)?;
        // The metrics listener stops with the public one.
        drop(stopped);
        if let Some((task, _)) = metrics_task {
            let _ = task.await;
        }
        eprintln!("skilldeck registry: stopped");
        Ok(crate::exit::OK)
    })
}
