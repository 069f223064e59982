//! What `skilldeck serve` can be told. Every limit is a named constant here,
//! overridable per server.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use skilldeck::{Budget, CatalogOptions, ContentCacheOptions, DiscoveryOptions};

/// Catalog budget in the `activate_skill` description when the config sets
/// none: about 8,000 tokens at four characters per token, so a large deck
/// never floods every request's tool list.
pub const DEFAULT_TOOL_CATALOG_CHARS: usize = 32_000;

/// The `name` input of `activate_skill` is an `enum` of the model-invocable
/// skills up to this many; beyond it the enum would cost more context than
/// the catalog it repeats, so the schema says "string" and the description
/// says where to look (`search_skills`).
pub const MAX_TOOL_NAME_ENUM: usize = 1_000;

/// Largest JSON-RPC message accepted (one stdio line, one HTTP body).
pub const MAX_REQUEST_BYTES: usize = 4 * 1024 * 1024;

/// Events on the roots are gathered this long before the deck is rebuilt.
pub const RELOAD_DEBOUNCE: Duration = Duration::from_millis(250);

/// Entries per page of `skills/list`, `resources/list` (skills per page),
/// `prompts/list` and `resources/directory/read`.
pub const PAGE_SIZE: usize = 100;

/// `ttlMs` on cacheable results: how long a client may treat a listing as
/// current without asking again (it is told sooner by `list_changed`).
pub const LIST_TTL: Duration = Duration::from_secs(60);

/// Files whose digests are remembered (keyed by path and file stamp), so a
/// second `skills/list` reads nothing that did not change.
pub const DIGEST_CACHE_ENTRIES: usize = 100_000;

/// Results of `search_skills` when the call gives no `limit`, and the most
/// it may ask for.
pub const DEFAULT_SEARCH_RESULTS: usize = 10;
/// See [`DEFAULT_SEARCH_RESULTS`].
pub const MAX_SEARCH_RESULTS: usize = 100;

/// How the server finds, renders and serves skills.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Where the skills are (the same roots and config as every command).
    pub discovery: DiscoveryOptions,
    /// The catalog in the `activate_skill` description (format and budget).
    pub tool_catalog: CatalogOptions,
    /// Activation cache limits.
    pub cache: ContentCacheOptions,
    /// Watch the roots and reload on change (`None`: never reload).
    pub reload: Option<Duration>,
    /// See [`MAX_TOOL_NAME_ENUM`].
    pub max_tool_name_enum: usize,
    /// See [`PAGE_SIZE`].
    pub page_size: usize,
    /// See [`LIST_TTL`].
    pub list_ttl: Duration,
    /// See [`MAX_REQUEST_BYTES`].
    pub max_request_bytes: usize,
}

impl ServeOptions {
    /// Defaults around the given discovery options: an xml catalog of at
    /// most [`DEFAULT_TOOL_CATALOG_CHARS`], hot reload on.
    pub fn new(discovery: DiscoveryOptions) -> Self {
        ServeOptions {
            discovery,
            tool_catalog: CatalogOptions {
                budget: Some(Budget::Chars(DEFAULT_TOOL_CATALOG_CHARS)),
                ..CatalogOptions::default()
            },
            cache: ContentCacheOptions::default(),
            reload: Some(RELOAD_DEBOUNCE),
            max_tool_name_enum: MAX_TOOL_NAME_ENUM,
            page_size: PAGE_SIZE,
            list_ttl: LIST_TTL,
            max_request_bytes: MAX_REQUEST_BYTES,
        }
    }

    /// The options a config file gives, for a process in `cwd`
    /// (`override_roots`: the CLI's `--root`). The config's `[catalog]`
    /// section sets the tool description's catalog; without a budget there,
    /// [`DEFAULT_TOOL_CATALOG_CHARS`] applies.
    pub fn from_config(
        config: &skilldeck::Config,
        discovery: DiscoveryOptions,
    ) -> Result<Self, skilldeck::Error> {
        let mut options = ServeOptions::new(discovery);
        let mut catalog = CatalogOptions::from_config(&config.catalog)?;
        if catalog.budget.is_none() {
            catalog.budget = Some(Budget::Chars(DEFAULT_TOOL_CATALOG_CHARS));
        }
        options.tool_catalog = catalog;
        options.cache = ContentCacheOptions::from_config(config);
        Ok(options)
    }
}

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
}

impl HttpOptions {
    /// Listen on `addr`, no token, loopback hosts only.
    pub fn new(addr: SocketAddr) -> Self {
        HttpOptions {
            addr,
            token_file: None,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
        }
    }
}
