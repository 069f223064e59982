//! `skilldeck serve`: the MCP server (see the `skilldeck-mcp` crate) over
//! stdio, or streamable HTTP with `--http`.

use std::path::PathBuf;

use skilldeck::BudgetOverride;
use skilldeck_mcp::options::{MIN_REGISTRY_POLL, RegistryOptions};
use skilldeck_mcp::{HttpOptions, LogFormat, ServeOptions};

use crate::context::Context;
use crate::error::CliError;
use crate::exit;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Serve streamable HTTP on this address (e.g. localhost:8765 or
    /// 127.0.0.1:8765) at /mcp, instead of stdio.
    #[arg(long, value_name = "ADDR")]
    http: Option<String>,
    /// A file whose first line is the bearer token HTTP clients must send
    /// (`Authorization: Bearer <token>`); required off loopback. With
    /// --registry and without --http: the registry token.
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// Serve one agent's skills from this registry (with --agent) instead
    /// of the skill roots: its resolved set, cached by content, refreshed
    /// by polling, its grants applied to execution.
    #[arg(long, value_name = "URL", requires = "agent")]
    registry: Option<String>,
    /// The registry agent whose skills are served.
    #[arg(long, value_name = "ID", requires = "registry")]
    agent: Option<String>,
    /// The registry token file (scope agent:ID; else --token-file without
    /// --http, else SKILLDECK_TOKEN).
    #[arg(long, value_name = "FILE", requires = "registry")]
    registry_token_file: Option<PathBuf>,
    /// Seconds between polls of the agent's lock (default 10; fractions
    /// allowed).
    #[arg(long, value_name = "SECS", requires = "registry")]
    registry_poll: Option<f64>,
    /// With --registry: serve only versions signed by a key listed in this
    /// file (ssh-keygen's allowed-signers format, namespace "skilldeck").
    #[arg(long, value_name = "FILE", requires = "registry")]
    allowed_signers: Option<std::path::PathBuf>,
    /// With --registry: refuse unsigned versions.
    #[arg(long, requires = "registry")]
    require_signature: bool,
    /// Also serve the skills of another MCP server speaking the Skills
    /// extension (repeatable): `[NAME=]URL` (streamable HTTP) or
    /// `[NAME=]stdio:COMMAND ARGS` (a process on stdio). Its skills are
    /// served as `NAME/skill` (NAME defaults to the URL's host or the
    /// command's name), listed from its skills/list, fetched and verified
    /// (sizes, sha256 digests, fingerprint, frontmatter) when first used.
    #[arg(long = "upstream", value_name = "UPSTREAM")]
    upstreams: Vec<String>,
    /// Where verified upstream skills are cached (default: the user's cache
    /// folder, `skilldeck/upstream-skills`).
    #[arg(long, value_name = "DIR", requires = "upstreams")]
    upstream_cache: Option<PathBuf>,
    /// Accept this `Host` header besides localhost (repeatable; DNS
    /// rebinding protection stays on).
    #[arg(long = "allowed-host", value_name = "HOST", requires = "http")]
    allowed_hosts: Vec<String>,
    /// Accept browser requests from this `Origin` (repeatable, e.g.
    /// `http://localhost:6274`); pages of this very loopback listener
    /// (`http://127.0.0.1:PORT`, `http://localhost:PORT`, `http://[::1]:PORT`)
    /// are always accepted, other origins are refused.
    #[arg(long = "allowed-origin", value_name = "ORIGIN", requires = "http")]
    allowed_origins: Vec<String>,
    /// HTTP: most sessions held at once, exactly (default 1,000); when all
    /// are taken, a session idle for 30 s or more is closed to admit a new
    /// one, else the `initialize` is refused (503).
    #[arg(long, value_name = "N", requires = "http")]
    max_sessions: Option<usize>,
    /// Log line format on stderr (RUST_LOG filters; default info).
    #[arg(long, default_value = "text", value_parser = ["text", "json"])]
    log_format: String,
    /// Do not watch the roots for changes.
    #[arg(long)]
    no_watch: bool,
    /// Most folders hot reload watches (inotify watches; default: the
    /// config's `[serve] watch-budget`, else 8,192); beyond it the roots
    /// are polled (known skills every 2 s, new folders less often).
    #[arg(long, value_name = "N", conflicts_with = "no_watch")]
    watch_budget: Option<usize>,
    /// Budget of the catalog in the activate_skill description, in tokens
    /// (o200k); default: the config's `[catalog]` budget, else 32,000 characters.
    #[arg(long, value_name = "N", conflicts_with = "budget_chars")]
    budget_tokens: Option<usize>,
    /// Same, in characters.
    #[arg(long, value_name = "N")]
    budget_chars: Option<usize>,
    /// Run skill code for clients: declared skill tools (`{skill}__{tool}`)
    /// and `run_skill_script`, in the sandbox under the config's `[exec]`
    /// policy (same as `[exec] enabled = true`; off by default).
    #[arg(long)]
    exec: bool,
    /// Also offer `run_code`: the model's own code (python, bash, node where
    /// installed) in the same sandbox and policy, with a work folder per
    /// session that keeps its files between calls (`[exec] code = true`;
    /// needs execution on: --exec or `[exec] enabled`).
    #[arg(long)]
    code: bool,
    /// Whether the user approves calls that run code which the active
    /// skills' allowed-tools do not pre-approve: never (run them), ask (MCP
    /// elicitation; a client without it is refused), always-deny
    /// (default: the config's `[exec] approval`, else never).
    #[arg(long, value_name = "MODE", value_parser = ["never", "ask", "always-deny"])]
    approval: Option<String>,
}

pub fn run(args: &Args, ctx: &Context) -> Result<u8, CliError> {
    let format: LogFormat = args.log_format.parse().map_err(CliError::Usage)?;
    // Telemetry: OTLP span export when configured; flushed when `_telemetry` drops.
    let telemetry = skilldeck_telemetry::Settings::resolve(&ctx.config.telemetry, |name| {
        std::env::var(name).ok()
    })
    .map_err(skilldeck_mcp::Error::from)?;
    let _telemetry = skilldeck_mcp::logging::init_with_telemetry(format, telemetry.as_ref())?;
    let mut options = ServeOptions::from_config(&ctx.config, ctx.discovery_options())?;
    options.tool_catalog.override_budget(BudgetOverride {
        chars: args.budget_chars,
        tokens: args.budget_tokens,
        encoding: None,
    })?;
    // A desktop client starts `serve` from `/`: the folders it announces
    // (MCP `roots`) are searched for project skills, unless project roots
    // are off or `--root` replaced the defaults (stdio only: `serve_http`
    // turns it off).
    options.client_project_roots = ctx.config.discovery.project && ctx.roots.is_none();
    if args.no_watch {
        options.reload = None;
    }
    if args.exec {
        options.exec.enabled = true;
    }
    if args.code {
        if !options.exec.enabled {
            return Err(CliError::Usage(
                "--code needs execution on: add --exec (or set [exec] enabled = true)".into(),
            ));
        }
        options.exec.code = true;
    }
    if let Some(mode) = &args.approval {
        options.exec.approval = skilldeck::deck::ApprovalMode::parse(mode)
            .ok_or_else(|| CliError::Usage(format!("--approval: unknown mode '{mode}'")))?;
    }
    for upstream in &args.upstreams {
        options.upstreams.push(
            skilldeck_mcp::gateway::UpstreamSpec::parse(upstream)
                .map_err(|e| CliError::Usage(format!("--upstream {e}")))?,
        );
    }
    options.upstream_cache = args.upstream_cache.clone();
    if let Some(budget) = args.watch_budget {
        options.watch_budget = budget;
    }
    if args.token_file.is_some() && args.http.is_none() && args.registry.is_none() {
        return Err(CliError::Usage(
            "--token-file needs --http (the clients' token) or --registry (the registry's)".into(),
        ));
    }
    if let (Some(url), Some(agent)) = (&args.registry, &args.agent) {
        let agent = skilldeck_registry::names::AgentId::new(agent)
            .map_err(|e| CliError::Usage(e.to_string()))?;
        // Over HTTP, --token-file is the clients' token: never sent to the
        // registry.
        let token_file = args
            .registry_token_file
            .as_deref()
            .or(args.token_file.as_deref().filter(|_| args.http.is_none()));
        let token = skilldeck_registry::client::Token::resolve(token_file)?;
        let mut registry = RegistryOptions::new(url, agent, token);
        registry.allowed_signers = match args
            .allowed_signers
            .as_deref()
            .map(skilldeck_package::AllowedSigners::load)
            .transpose()
        {
            Ok(allowed) => allowed,
            Err(e) => return crate::pack::refused(e),
        };
        registry.require_signature = args.require_signature;
        // Skills with dependencies get their environment when they are
        // materialised, as `[environments]` says where packages come from.
        registry.environments_from(&ctx.config.environments);
        if let Some(secs) = args.registry_poll {
            registry.poll = std::time::Duration::try_from_secs_f64(secs)
                .ok()
                .filter(|d| *d >= MIN_REGISTRY_POLL)
                .ok_or_else(|| {
                    CliError::Usage(format!(
                        "--registry-poll {secs}: expected seconds, at least {:?}",
                        MIN_REGISTRY_POLL
                    ))
                })?;
        }
        options.registry = Some(registry);
    }
    let result = match args.http.as_deref() {
        None => skilldeck_mcp::serve_stdio(options),
        Some(text) => {
            let addr = skilldeck_mcp::options::resolve_listen_address(text)?;
            let mut http = HttpOptions::new(addr);
            http.token_file = args.token_file.clone();
            http.allowed_hosts = args.allowed_hosts.clone();
            http.allowed_origins = args.allowed_origins.clone();
            http.well_known = ctx.config.serve.well_known.unwrap_or(false);
            if let Some(n) = args.max_sessions {
                http.max_sessions = n;
            }
            skilldeck_mcp::serve_http(options, http)
        }
    };
    result?;
    Ok(exit::OK)
}
