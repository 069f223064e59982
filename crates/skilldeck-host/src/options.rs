//! [`HostOptions`]: what a host is told, every limit a named constant here
//! (overridable per host).

use skilldeck::deck::ExecConfig;
use skilldeck::{Budget, CatalogOptions, Config, DiscoveryOptions};

use crate::cache::ContentCacheOptions;

/// Catalog budget in the `activate_skill` description when the config sets
/// none: about 8,000 tokens at four characters per token, so a large deck
/// never floods every request's tool list.
pub const DEFAULT_TOOL_CATALOG_CHARS: usize = 32_000;

/// The `name` input of `activate_skill` is an `enum` of the model-invocable
/// skills up to this many; beyond it the enum would cost more context than
/// the catalog it repeats, so the schema says "string" and the description
/// says where to look (`search_skills`).
pub const MAX_TOOL_NAME_ENUM: usize = 1_000;

/// Files whose digests are remembered (keyed by path and file stamp), so a
/// second manifest reads nothing that did not change.
pub const DIGEST_CACHE_ENTRIES: usize = 100_000;

/// Results of `search_skills` when the call gives no `limit`.
pub const DEFAULT_SEARCH_RESULTS: usize = 10;
/// The most results `search_skills` may ask for.
pub const MAX_SEARCH_RESULTS: usize = 100;

/// How a host finds, renders and serves skills.
#[derive(Debug, Clone)]
pub struct HostOptions {
    /// Where the skills are (the same roots and config as every command).
    pub discovery: DiscoveryOptions,
    /// The catalog in the `activate_skill` description (format and budget).
    pub tool_catalog: CatalogOptions,
    /// The configured `[catalog]`, what a [`crate::CatalogRequest`] (a
    /// system prompt's catalog) starts from.
    pub prompt_catalog: CatalogOptions,
    /// Activation cache limits.
    pub cache: ContentCacheOptions,
    /// See [`MAX_TOOL_NAME_ENUM`].
    pub max_tool_name_enum: usize,
    /// See [`DEFAULT_SEARCH_RESULTS`].
    pub default_search_results: usize,
    /// See [`MAX_SEARCH_RESULTS`].
    pub max_search_results: usize,
    /// See [`DIGEST_CACHE_ENTRIES`].
    pub digest_cache_entries: usize,
    /// Answers may name the host's folders (the skill directory in an
    /// activation, `${SKILL_DIR}`). True for a local client sharing the
    /// host's files (stdio, the CLI); false for remote clients (HTTP),
    /// which read files with `read_skill_resource` and must not learn the
    /// host's folder layout.
    pub expose_paths: bool,
    /// See [`crate::watch::WATCH_BUDGET`].
    pub watch_budget: usize,
    /// See [`crate::watch::WATCH_POLL_PERIOD`].
    pub watch_poll_period: std::time::Duration,
    /// `[exec]`: whether skill code runs (skill tools, `run_skill_script`,
    /// dynamic context) and under which policy; off by default. Relative
    /// paths in its grants are resolved against the config file's folder.
    pub exec: ExecConfig,
    /// Folders a client announces (MCP `roots`) are searched for project
    /// roots ([`crate::Host::set_client_folders`]): on for a local client
    /// when the config searches project roots and no `--root` replaced the
    /// defaults (a desktop client starts `serve` from `/`, so the working
    /// folder finds none); off by default.
    pub client_project_roots: bool,
}

impl HostOptions {
    /// The activation cache's options with [`HostOptions::expose_paths`]
    /// applied (a host that hides paths never renders the skill's folder).
    pub fn cache_options(&self) -> ContentCacheOptions {
        let mut cache = self.cache;
        cache.activation.show_skill_dir &= self.expose_paths;
        cache
    }

    /// Defaults around the given discovery options: an xml catalog of at
    /// most [`DEFAULT_TOOL_CATALOG_CHARS`], every limit at its constant.
    pub fn new(discovery: DiscoveryOptions) -> Self {
        HostOptions {
            discovery,
            tool_catalog: tool_catalog(CatalogOptions {
                budget: Some(Budget::Chars(DEFAULT_TOOL_CATALOG_CHARS)),
                ..CatalogOptions::default()
            }),
            prompt_catalog: CatalogOptions::default(),
            cache: ContentCacheOptions::default(),
            max_tool_name_enum: MAX_TOOL_NAME_ENUM,
            default_search_results: DEFAULT_SEARCH_RESULTS,
            max_search_results: MAX_SEARCH_RESULTS,
            digest_cache_entries: DIGEST_CACHE_ENTRIES,
            expose_paths: true,
            watch_budget: crate::watch::WATCH_BUDGET,
            watch_poll_period: crate::watch::WATCH_POLL_PERIOD,
            exec: ExecConfig::default(),
            client_project_roots: false,
        }
    }

    /// The options a config file gives. Its `[catalog]` section sets the
    /// tool description's catalog (without a budget there,
    /// [`DEFAULT_TOOL_CATALOG_CHARS`] applies); `[cache]` the activation
    /// cache.
    pub fn from_config(
        config: &Config,
        discovery: DiscoveryOptions,
    ) -> Result<Self, skilldeck::Error> {
        let mut options = HostOptions::new(discovery);
        let mut catalog = CatalogOptions::from_config(&config.catalog)?;
        options.prompt_catalog = catalog.clone();
        if catalog.budget.is_none() {
            catalog.budget = Some(Budget::Chars(DEFAULT_TOOL_CATALOG_CHARS));
        }
        options.tool_catalog = tool_catalog(catalog);
        options.cache = ContentCacheOptions::from_config(config);
        options.exec = config.exec.clone();
        for grant in options.exec.skills.values_mut() {
            for path in &mut grant.read {
                *path = config.resolve(path);
            }
            if let Some(python) = &mut grant.python {
                *python = config.resolve(python);
            }
        }
        if let Some(python) = &mut options.exec.python {
            *python = config.resolve(python);
        }
        if let Some(budget) = config.serve.watch_budget {
            options.watch_budget = budget;
        }
        Ok(options)
    }
}

/// What the `activate_skill` description's catalog always is, whatever the
/// config says: no locations (the model loads skills by name, and a remote
/// model could not read the paths anyway), and a closing line that points
/// to `search_skills` when the budget leaves skills out.
fn tool_catalog(mut catalog: CatalogOptions) -> CatalogOptions {
    catalog.locations = false;
    catalog.unlisted_hint = Some(UNLISTED_HINT.to_owned());
    catalog
}

/// The closing line's hint in the tool description.
pub const UNLISTED_HINT: &str = "find them with the `search_skills` tool";

impl HostOptions {
    /// The catalog a host built with these options puts in the
    /// `activate_skill` description: the served skills of `deck` under
    /// [`HostOptions::tool_catalog`] (its explanation is what `skilldeck
    /// doctor` reports).
    pub fn render_tool_catalog<'d>(
        &self,
        deck: &'d skilldeck::Deck,
    ) -> Result<skilldeck::Catalog<'d>, skilldeck::Error> {
        self.render_tool_catalog_ranked(deck, &std::collections::HashMap::new())
    }

    /// [`HostOptions::render_tool_catalog`], ranking by recent use too
    /// (`uses`: activations by skill name), so when the budget cannot list
    /// every skill the ones in use keep their place.
    pub fn render_tool_catalog_ranked<'d>(
        &self,
        deck: &'d skilldeck::Deck,
        uses: &std::collections::HashMap<String, u64>,
    ) -> Result<skilldeck::Catalog<'d>, skilldeck::Error> {
        if uses.is_empty() {
            return skilldeck::render_catalog(crate::rules::served(deck), &self.tool_catalog, None);
        }
        let ranked = CatalogOptions {
            uses: uses.clone(),
            ..self.tool_catalog.clone()
        };
        skilldeck::render_catalog(crate::rules::served(deck), &ranked, None)
    }
}
