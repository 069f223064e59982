//! What `skilldeck serve` can be told. Every limit is a named constant
//! (the host's in [`skilldeck_host::options`], the transport's here),
//! overridable per server.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use skilldeck::DiscoveryOptions;
use skilldeck_host::HostOptions;

pub use skilldeck_source::{
    DEFAULT_REGISTRY_POLL, MIN_REGISTRY_POLL, RELOAD_DEBOUNCE, RegistryOptions,
};

pub use skilldeck_host::options::{
    DEFAULT_SEARCH_RESULTS, DEFAULT_TOOL_CATALOG_CHARS, DIGEST_CACHE_ENTRIES, MAX_SEARCH_RESULTS,
    MAX_TOOL_NAME_ENUM,
};

/// Largest JSON-RPC message accepted (one stdio line, one HTTP body).
pub const MAX_REQUEST_BYTES: usize = 4 * 1024 * 1024;

/// Entries per page of `skills/list`, `resources/list` (skills per page),
/// `prompts/list` and `resources/directory/read`.
pub const PAGE_SIZE: usize = 100;

/// `ttlMs` on cacheable results: how long a client may treat a listing as
/// current without asking again (it is told sooner by `list_changed`).
pub const LIST_TTL: Duration = Duration::from_secs(60);

/// How the server finds, renders and serves skills: the host's options
/// (reached through `Deref`, so `options.discovery` and
/// `options.max_tool_name_enum` read as before) plus the transport's.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Discovery, catalog, cache and tool limits (see [`HostOptions`]).
    pub host: HostOptions,
    /// Watch the roots and reload on change (`None`: never reload).
    pub reload: Option<Duration>,
    /// See [`PAGE_SIZE`].
    pub page_size: usize,
    /// See [`LIST_TTL`].
    pub list_ttl: Duration,
    /// See [`MAX_REQUEST_BYTES`].
    pub max_request_bytes: usize,
    /// The agent id skill code runs under (`SKILLDECK_AGENT_ID`; the
    /// concurrency cap is also per agent): see [`DEFAULT_EXEC_AGENT_ID`].
    pub exec_agent_id: String,
    /// The user id skill code runs under (`SKILLDECK_USER_ID`; empty: none).
    pub exec_user_id: String,
    /// Serve one agent's skills from a registry instead of the roots
    /// ([`skilldeck_source::RegistrySource`]).
    pub registry: Option<RegistryOptions>,
    /// Other MCP servers whose skills are served too (`--upstream`; see
    /// [`crate::gateway`]).
    pub upstreams: Vec<crate::gateway::UpstreamSpec>,
    /// Where upstream skills' verified files are cached, by fingerprint;
    /// `None`: [`UPSTREAM_CACHE_SUBDIR`] in the user's cache folder.
    pub upstream_cache: Option<std::path::PathBuf>,
}

/// The folder of verified upstream skills in the user's cache folder.
pub const UPSTREAM_CACHE_SUBDIR: &str = "upstream-skills";

/// The agent id of skill code run for MCP clients, unless set.
pub const DEFAULT_EXEC_AGENT_ID: &str = "skilldeck-mcp";

impl std::ops::Deref for ServeOptions {
    type Target = HostOptions;

    fn deref(&self) -> &HostOptions {
        &self.host
    }
}

impl std::ops::DerefMut for ServeOptions {
    fn deref_mut(&mut self) -> &mut HostOptions {
        &mut self.host
    }
}

impl ServeOptions {
    /// These options as a server for remote clients (streamable HTTP)
    /// serves them: answers name no folder of the server (no catalog
    /// locations, no skill directory in activations: `expose_paths` off),
    /// since a remote model cannot read the server's files and should not
    /// learn their layout; and no client's folders (MCP `roots`) decide
    /// what the others see. [`crate::serve_http`] applies it.
    pub fn for_remote_clients(mut self) -> Self {
        self.host.tool_catalog.locations = false;
        self.host.expose_paths = false;
        self.host.client_project_roots = false;
        self
    }

    /// The host's defaults around the given discovery options
    /// ([`HostOptions::new`]), hot reload on.
    pub fn new(discovery: DiscoveryOptions) -> Self {
        ServeOptions::with_host(HostOptions::new(discovery))
    }

    /// `host` with the transport's defaults, hot reload on.
    pub fn with_host(host: HostOptions) -> Self {
        ServeOptions {
            host,
            reload: Some(RELOAD_DEBOUNCE),
            page_size: PAGE_SIZE,
            list_ttl: LIST_TTL,
            max_request_bytes: MAX_REQUEST_BYTES,
            exec_agent_id: DEFAULT_EXEC_AGENT_ID.to_owned(),
            exec_user_id: String::new(),
            registry: None,
            upstreams: Vec::new(),
            upstream_cache: None,
        }
    }

    /// The options a config file gives ([`HostOptions::from_config`]).
    pub fn from_config(
        config: &skilldeck::Config,
        discovery: DiscoveryOptions,
    ) -> Result<Self, skilldeck::Error> {
        Ok(ServeOptions::with_host(HostOptions::from_config(
            config, discovery,
        )?))
    }
}

/// The address `text` (`127.0.0.1:8765`, `[::1]:8765`, `localhost:8765`,
/// `host.example:8765`) names, to listen on. A host name is resolved; of
/// the addresses it resolves to, the first loopback one is taken (IPv4
/// before IPv6, so `localhost` means `127.0.0.1` wherever it resolves to
/// both), else the first (which [`crate::serve_http`] refuses without a
/// token unless it is loopback).
pub fn resolve_listen_address(text: &str) -> Result<SocketAddr, crate::error::Error> {
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Ok(addr);
    }
    let fail = |message: String| crate::error::Error::Address {
        text: text.to_owned(),
        message,
    };
    if !text.contains(':') {
        return Err(fail(
            "expected HOST:PORT (e.g. localhost:8765 or 127.0.0.1:8765)".to_owned(),
        ));
    }
    let addrs: Vec<SocketAddr> = std::net::ToSocketAddrs::to_socket_addrs(text)
        .map_err(|e| fail(e.to_string()))?
        .collect();
    let loopback = |v4: bool| {
        addrs
            .iter()
            .find(|a| a.ip().is_loopback() && a.is_ipv4() == v4)
            .copied()
    };
    loopback(true)
        .or_else(|| loopback(false))
        .or_else(|| addrs.first().copied())
        .ok_or_else(|| fail("the name resolves to no address".to_owned()))
}

/// Longest wait for a connection's request headers to arrive in full (a
/// client that never finishes them is dropped: slowloris).
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Longest an HTTP request may take, its body read and its answer started
/// (a body sent slower than this, or a handler stuck, gets `408`).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// Most MCP sessions an HTTP server holds at once, exactly (see
/// the sessions module); an `initialize` beyond it closes the longest-idle
/// session ([`SESSION_EVICT_IDLE`]) or, when none is idle, is refused with a
/// JSON-RPC error (HTTP 503).
pub const MAX_SESSIONS: usize = 1_000;

/// How long an HTTP session may go without a request before it ends on its
/// own (rmcp's keep-alive).
pub const SESSION_IDLE_TIMEOUT: Duration = Duration::from_secs(300);

/// When every session slot is taken, a session idle (no request running)
/// for at least this long is closed to admit a new one; younger ones are
/// not, and the `initialize` is refused.
pub const SESSION_EVICT_IDLE: Duration = Duration::from_secs(30);

/// The streamable HTTP transport's settings.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Where to listen.
    pub addr: SocketAddr,
    /// A file holding the bearer token every request must carry.
    pub token_file: Option<PathBuf>,
    /// `Host` header values accepted besides the loopback names (DNS
    /// rebinding protection stays on).
    pub allowed_hosts: Vec<String>,
    /// Browser `Origin`s accepted (any other `Origin` is refused).
    pub allowed_origins: Vec<String>,
    /// See [`HEADER_READ_TIMEOUT`].
    pub header_read_timeout: Duration,
    /// See [`REQUEST_TIMEOUT`].
    pub request_timeout: Duration,
    /// See [`MAX_SESSIONS`].
    pub max_sessions: usize,
    /// See [`SESSION_IDLE_TIMEOUT`].
    pub session_idle_timeout: Duration,
    /// See [`SESSION_EVICT_IDLE`].
    pub session_evict_idle: Duration,
    /// Serve the agentskills.io well-known index of the served skills and
    /// their archives, without a token (`[serve] well-known`;
    /// [`crate::well_known`]).
    pub well_known: bool,
}

impl HttpOptions {
    /// Listen on `addr`, no token, loopback hosts only.
    pub fn new(addr: SocketAddr) -> Self {
        HttpOptions {
            addr,
            token_file: None,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            header_read_timeout: HEADER_READ_TIMEOUT,
            request_timeout: REQUEST_TIMEOUT,
            max_sessions: MAX_SESSIONS,
            session_idle_timeout: SESSION_IDLE_TIMEOUT,
            session_evict_idle: SESSION_EVICT_IDLE,
            well_known: false,
        }
    }
}
