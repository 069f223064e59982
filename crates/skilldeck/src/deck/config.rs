//! `skilldeck.toml`: project or user configuration.
//!
//! Looked up as `--config PATH`, else `./skilldeck.toml` over
//! `$XDG_CONFIG_HOME/skilldeck/config.toml` (`~/.config/...` when unset),
//! merged key by key ([`crate::deck::config_layers`]). Unknown keys are
//! errors that name the key's line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::skill::SkillMode;

use crate::catalog::{Budget, CatalogFormat, CatalogOptions, Encoding};
use crate::deck::exec_config::ExecConfig;
use crate::diagnostic::Code;
use crate::error::Error;
use crate::spec::name::NameCharset;
use crate::spec::options::{Mode, ValidationOptions};

/// The project config file name.
pub const CONFIG_FILE: &str = "skilldeck.toml";

/// The operator's skill root when `[discovery] managed` is not set (Unix;
/// elsewhere there is none by default).
pub const MANAGED_ROOT: &str = "/etc/skilldeck/skills";

/// Largest config file read (bytes).
pub const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// The whole config file.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Config {
    /// Extra skill roots (scope `extra`), relative to the config file.
    #[serde(default)]
    pub roots: Vec<PathBuf>,
    /// `[[skill]]`: skills listed by name and path (scope `explicit`).
    #[serde(default, rename = "skill")]
    pub skills: Vec<ExplicitSkillConfig>,
    /// `[modes]`: skill name to mode (`pinned`, `auto`, `name-only`, `manual`, `off`).
    #[serde(default)]
    pub modes: BTreeMap<String, SkillMode>,
    /// `[discovery]`: which default roots to search and the walk limits.
    #[serde(default)]
    pub discovery: DiscoveryConfig,
    /// `[catalog]`: the system-prompt catalog.
    #[serde(default)]
    pub catalog: CatalogConfig,
    /// `[cache]`: the activation content cache.
    #[serde(default)]
    pub cache: CacheConfig,
    /// `[validate]`: validation defaults.
    #[serde(default)]
    pub validate: ValidateConfig,
    /// `[resources]`: what a skill's files may be.
    #[serde(default)]
    pub resources: ResourcesConfig,
    /// `[exec]`: whether and how skill scripts run.
    #[serde(default)]
    pub exec: ExecConfig,
    /// `[serve]`: the MCP server's hot reload.
    #[serde(default)]
    pub serve: ServeConfig,
    /// `[environments]`: how skills' dependencies are resolved and built
    /// at install time (uv, the interpreter, the index or wheel folder).
    #[serde(default)]
    pub environments: EnvironmentsConfig,
    /// `[telemetry]`: OpenTelemetry export (OTLP over HTTP).
    #[serde(default)]
    pub telemetry: TelemetryConfig,
    /// `[audit]`: the risk audit's exceptions (`skilldeck audit`, and the
    /// audit `pack`, `publish` and `install` run).
    #[serde(default)]
    pub audit: AuditConfig,
    /// `[registry]`: the registry server's settings (`skilldeck registry
    /// serve`): its web UI's sign-in.
    #[serde(default)]
    pub registry: RegistryConfig,
    /// The folder relative paths are resolved against (the config file's
    /// folder); not read from the file.
    #[serde(skip)]
    pub base_dir: PathBuf,
}

/// `[registry]`: settings of `skilldeck registry serve`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct RegistryConfig {
    /// `[registry.ui]`: the web UI.
    pub ui: RegistryUiConfig,
    /// `[registry.well-known]`: the anonymous agentskills.io discovery
    /// index.
    pub well_known: RegistryWellKnownConfig,
}

/// `[registry.well-known]`: what `GET /.well-known/agent-skills/index.json`
/// lists without a token.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct RegistryWellKnownConfig {
    /// The namespaces listed, in order (a name an earlier one lists hides
    /// a later one's); `["*"]`: every namespace; empty (the default): no
    /// index, as nothing else is readable without a token.
    pub namespaces: Vec<String>,
}

/// `[registry.ui]`: how people sign in to the registry's web UI.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct RegistryUiConfig {
    /// Whether the sign-in page takes an API token (default true). Tokens
    /// always work for the API; `false` leaves the UI to single sign-on.
    pub token_sign_in: Option<bool>,
    /// `[registry.ui.oidc]`: single sign-on with an OpenID provider.
    pub oidc: Option<OidcConfig>,
}

/// `[registry.ui.oidc]`: sign-in with OpenID Connect (authorization code
/// flow with PKCE) at any standard issuer, found by discovery.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct OidcConfig {
    /// The issuer URL (`https://`; `http://` only on a loopback host). Its
    /// `/.well-known/openid-configuration` is read.
    pub issuer: String,
    /// The client id registered at the provider.
    pub client_id: String,
    /// A file holding the client secret (relative to the config file;
    /// readable by its owner only).
    pub client_secret_file: PathBuf,
    /// The redirect URL registered at the provider: this registry's
    /// `/ui/oidc/callback` as browsers reach it.
    pub redirect_url: String,
    /// The sign-in button's text (default "Sign in with single sign-on").
    pub display_name: Option<String>,
    /// Scopes asked for beyond `openid` (default `email`, `profile`).
    pub scopes: Option<Vec<String>>,
    /// The claim holding the user's groups (default `groups`).
    pub groups_claim: Option<String>,
    /// Email rules match only an `email_verified: true` email (default
    /// true).
    pub require_verified_email: Option<bool>,
    /// `[[registry.ui.oidc.rule]]`: who gets which scopes; a user no rule
    /// matches is refused.
    #[serde(default, rename = "rule")]
    pub rules: Vec<OidcRuleConfig>,
}

/// `[[registry.ui.oidc.rule]]`: users in `group`, or with `email` (an
/// address, or `*@domain`), get the scopes in `grant` (`admin`,
/// `publish:<ns>`, `review:<ns>`, `read:<ns>`). Every matching rule adds
/// its scopes.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct OidcRuleConfig {
    /// A group name, as in the groups claim.
    pub group: Option<String>,
    /// An email address, or `*@domain` for every address of a domain.
    pub email: Option<String>,
    /// The scopes given.
    pub grant: Vec<String>,
}

/// `[telemetry]`: OpenTelemetry export of the server's spans (OTLP/HTTP,
/// protobuf). Off unless an endpoint is set here or in
/// `OTEL_EXPORTER_OTLP_ENDPOINT`; the `OTEL_*` variables win over this.
/// Its `Debug` hides the header values (they carry credentials).
#[derive(Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct TelemetryConfig {
    /// The collector's base URL (`http://` or `https://`); spans go to
    /// `<endpoint>/v1/traces`. Langfuse: `<host>/api/public/otel`.
    #[serde(deserialize_with = "http_url")]
    pub endpoint: Option<String>,
    /// Headers sent with every export (e.g. `Authorization`); never logged.
    pub headers: BTreeMap<String, String>,
    /// The `service.name` resource attribute (default `skilldeck`).
    pub service_name: Option<String>,
    /// Fraction of traces recorded, 0.0 to 1.0 (default 1.0); a
    /// `traceparent`'s sampled flag wins.
    #[serde(deserialize_with = "fraction")]
    pub sampling: Option<f64>,
    /// Also export tool arguments and results (default off: they may hold
    /// user data).
    pub export_content: bool,
    /// Most finished spans waiting for export; more are dropped (and
    /// counted), never waited for (default 2,048).
    #[serde(deserialize_with = "positive")]
    pub queue_size: Option<usize>,
}

impl std::fmt::Debug for TelemetryConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let headers: Vec<(&str, &str)> = self
            .headers
            .keys()
            .map(|k| (k.as_str(), "<hidden>"))
            .collect();
        f.debug_struct("TelemetryConfig")
            .field("endpoint", &self.endpoint)
            .field("headers", &headers)
            .field("service_name", &self.service_name)
            .field("sampling", &self.sampling)
            .field("export_content", &self.export_content)
            .field("queue_size", &self.queue_size)
            .finish()
    }
}

fn http_url<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let url = String::deserialize(d)?;
    if url.starts_with("http://") || url.starts_with("https://") {
        Ok(Some(url))
    } else {
        Err(serde::de::Error::custom(format!(
            "endpoint '{url}' must be an http:// or https:// URL"
        )))
    }
}

fn fraction<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    let value = f64::deserialize(d)?;
    if (0.0..=1.0).contains(&value) {
        Ok(Some(value))
    } else {
        Err(serde::de::Error::custom(format!(
            "sampling {value} must be between 0.0 and 1.0"
        )))
    }
}

fn positive<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
    match usize::deserialize(d)? {
        0 => Err(serde::de::Error::custom("queue-size must be at least 1")),
        n => Ok(Some(n)),
    }
}

/// `[[skill]]`: one explicitly listed skill.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ExplicitSkillConfig {
    /// The name it must have.
    pub name: String,
    /// Its folder (relative to the config file).
    pub path: PathBuf,
    /// Its mode (overrides `[modes]`).
    pub mode: Option<SkillMode>,
}

/// `[discovery]`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct DiscoveryConfig {
    /// Search project roots (`.agents/skills`, ... in the current folder and its ancestors).
    pub project: bool,
    /// Search user roots (`~/.agents/skills`, ...).
    pub user: bool,
    /// The operator's roots (scope `managed`: below user and project
    /// skills, above bundled and extra ones); absent: [`MANAGED_ROOT`]
    /// where the platform has one; `[]`: none.
    pub managed: Option<Vec<PathBuf>>,
    /// When the bundled example skills are served (`"fallback"` by
    /// default: only when no other root has a skill; `true`/`false` mean
    /// `"always"`/`"never"`).
    pub bundled: BundledMode,
    /// Deepest folder level searched below each root.
    pub max_depth: usize,
    /// Most folders visited below each root (the root not counted).
    pub max_dirs: usize,
    /// Keep an on-disk metadata index (a warm start that skips reading
    /// unchanged `SKILL.md` files).
    pub index: bool,
}

impl Default for DiscoveryConfig {
    fn default() -> Self {
        DiscoveryConfig {
            project: true,
            user: true,
            managed: None,
            bundled: BundledMode::Fallback,
            max_depth: crate::limits::MAX_DISCOVERY_DEPTH,
            max_dirs: crate::limits::MAX_WALK_DIRS,
            index: false,
        }
    }
}

/// `[discovery] bundled`: when the example skills compiled into skilldeck
/// are served.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BundledMode {
    /// Always, after every other root (`"always"` or `true`).
    Always,
    /// Only when no other root has a skill folder (the default): a fresh
    /// install has something to show, a real library is not mixed with
    /// examples.
    #[default]
    Fallback,
    /// Never (`"never"` or `false`).
    Never,
}

impl BundledMode {
    /// The config spelling (`always`, `fallback`, `never`).
    pub fn as_str(self) -> &'static str {
        match self {
            BundledMode::Always => "always",
            BundledMode::Fallback => "fallback",
            BundledMode::Never => "never",
        }
    }
}

impl<'de> Deserialize<'de> for BundledMode {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Flag(bool),
            Word(String),
        }
        match Raw::deserialize(deserializer)? {
            Raw::Flag(true) => Ok(BundledMode::Always),
            Raw::Flag(false) => Ok(BundledMode::Never),
            Raw::Word(w) => match w.as_str() {
                "always" => Ok(BundledMode::Always),
                "fallback" => Ok(BundledMode::Fallback),
                "never" => Ok(BundledMode::Never),
                other => Err(serde::de::Error::custom(format!(
                    "unknown bundled mode '{other}' (expected \"always\", \"fallback\", \"never\", true or false)"
                ))),
            },
        }
    }
}

/// `[catalog]`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct CatalogConfig {
    /// `xml` (default), `skills-ref`, `markdown` or `json`.
    pub format: Option<String>,
    /// Budget in characters.
    pub budget_chars: Option<usize>,
    /// Budget in tokens.
    pub budget_tokens: Option<usize>,
    /// Tokenizer for token budgets (`o200k_base` by default, or `cl100k_base`).
    pub encoding: Option<String>,
    /// `[catalog.priority]`: skill name to priority (higher ranks first
    /// when the budget cannot list every skill; default 0).
    #[serde(default)]
    pub priority: BTreeMap<String, i64>,
}

/// `[resources]`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ResourcesConfig {
    /// `allow-hardlinks = true`: serve files with more than one hard link.
    /// Off by default (a hard link's other name may lie outside the skill);
    /// for trees whose tools make hard links: pnpm's content store, `cp -al`
    /// and rsnapshot-style backups, `git clone` of a local repository
    /// (objects; `core.hardlinks`), nix and guix store optimisation.
    #[serde(default)]
    pub allow_hardlinks: bool,
}

/// `[audit]`: findings of the risk audit allowed per skill, each with the
/// reason it was reviewed and accepted:
///
/// ```toml
/// [audit.allow.rust-setup]
/// "exec.pipe-to-shell" = "rustup's official installer, reviewed 2026-11"
/// ```
///
/// The lists live with the user or project that trusts the skill, never in
/// the skill itself (a skill could otherwise clear its own findings). The
/// codes are checked by the audit (`skilldeck-audit`), which knows them;
/// tables merge across config files key by key like every other table.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct AuditConfig {
    /// Skill name to (finding code to the reason it is allowed).
    #[serde(default, deserialize_with = "reasons")]
    pub allow: BTreeMap<String, BTreeMap<String, String>>,
}

/// Every allowed finding needs a reason that says why (not empty).
fn reasons<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<BTreeMap<String, BTreeMap<String, String>>, D::Error> {
    let allow = BTreeMap::<String, BTreeMap<String, String>>::deserialize(d)?;
    for (skill, codes) in &allow {
        if let Some((code, _)) = codes.iter().find(|(_, reason)| reason.trim().is_empty()) {
            return Err(serde::de::Error::custom(format!(
                "[audit.allow.{skill}] \"{code}\" needs a reason (why the finding is accepted)"
            )));
        }
    }
    Ok(allow)
}

/// `[serve]`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ServeConfig {
    /// `watch-budget = N`: most folders hot reload watches (one inotify
    /// watch each, a per-user system resource); beyond it the roots are
    /// polled. Default: `skilldeck_host::watch::WATCH_BUDGET` (8,192).
    pub watch_budget: Option<usize>,
    /// `well-known = true`: `serve --http` also serves the agentskills.io
    /// discovery index of its skills at
    /// `/.well-known/agent-skills/index.json` and each skill's archive,
    /// without a token (default false).
    pub well_known: Option<bool>,
}

/// `[environments]`: how `install` builds skill environments (issue 31).
/// The command line's `--uv`, `--python`, `--index-url`, `--find-links`
/// and `--offline` win over these.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct EnvironmentsConfig {
    /// `uv = "/opt/uv/bin/uv"`: the uv binary (default: `$SKILLDECK_UV`,
    /// else `uv` on `PATH`).
    pub uv: Option<PathBuf>,
    /// `python = "/usr/bin/python3"`: the interpreter environments are
    /// built for; it must be readable in the sandbox (default
    /// `/usr/bin/python3`).
    pub python: Option<PathBuf>,
    /// `index-url = "https://pypi.internal/simple"`: a private index
    /// instead of PyPI.
    pub index_url: Option<String>,
    /// `find-links = ["wheels"]`: folders of wheels (relative to the
    /// config file).
    #[serde(default)]
    pub find_links: Vec<PathBuf>,
    /// `offline = true`: never use the network (Python packages from
    /// `find-links` and uv's cache only, Node packages from npm's cache).
    pub offline: Option<bool>,
    /// `npm = "/opt/node/bin/npm"`: the npm binary (default:
    /// `$SKILLDECK_NPM`, else `npm` on `PATH`).
    pub npm: Option<PathBuf>,
    /// `node = "/usr/bin/node"`: the Node interpreter Node environments are
    /// built for; it must be readable in the sandbox (default
    /// `/usr/bin/node`).
    pub node: Option<PathBuf>,
    /// `npm-registry = "https://npm.internal/"`: a private npm registry
    /// instead of the npm registry.
    pub npm_registry: Option<String>,
    /// `npm-cache = "npm-cache"`: npm's cache folder (relative to the
    /// config file); with `offline`, the only source of Node packages.
    pub npm_cache: Option<PathBuf>,
}

/// `[cache]`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct CacheConfig {
    /// Most activations kept (default [`crate::limits::CONTENT_CACHE_CAPACITY`]).
    pub capacity: Option<usize>,
}

/// `[validate]`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ValidateConfig {
    /// `mode = "strict" | "lenient"`.
    pub mode: Option<Mode>,
    /// `ascii-names = true` restricts names to `a-z0-9-`.
    pub ascii_names: Option<bool>,
    /// `allow-fields = ["argument-hint", ...]`: extra fields admitted in strict mode.
    #[serde(default)]
    pub allow_fields: Vec<String>,
    /// `max-skill-md-bytes = 1048576`: largest SKILL.md read.
    pub max_skill_md_bytes: Option<u64>,
    /// `allow = ["description-no-trigger"]`: codes not reported by `validate`.
    #[serde(default, deserialize_with = "allowable_codes")]
    pub allow: Vec<Code>,
    /// `deny = ["broken-link"]`: codes `validate` reports as errors.
    #[serde(default)]
    pub deny: Vec<Code>,
}

/// A list of codes that may be allowed: a code that makes a skill unusable
/// is refused with the config's line, not silently ignored.
fn allowable_codes<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Code>, D::Error> {
    let codes = Vec::<Code>::deserialize(d)?;
    if let Some(code) = codes.iter().find(|c| !ValidationOptions::can_allow(**c)) {
        return Err(serde::de::Error::custom(format!(
            "'{code}' makes a skill unusable; it cannot be allowed"
        )));
    }
    Ok(codes)
}

impl Config {
    /// Parses config text; errors name `path` and the line of the problem.
    /// Relative paths in it are resolved against `path`'s folder.
    pub fn parse(text: &str, path: &Path) -> Result<Config, Error> {
        let mut config: Config = toml::from_str(text).map_err(|e| {
            let (line, column) = e
                .span()
                .map(|span| {
                    let pos = crate::diagnostic::Pos::of_offset(text.as_bytes(), span.start);
                    (pos.line, pos.column)
                })
                .unwrap_or((1, 1));
            Error::Config {
                path: path.to_path_buf(),
                line,
                column,
                message: e.message().trim().to_owned(),
            }
        })?;
        config.base_dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        Ok(config)
    }

    /// A path from the config, resolved against the config file's folder.
    pub fn resolve(&self, path: &Path) -> PathBuf {
        if path.is_absolute() || self.base_dir.as_os_str().is_empty() {
            path.to_path_buf()
        } else {
            self.base_dir.join(path)
        }
    }

    /// Reads and parses `path`.
    pub fn load(path: &Path) -> Result<Config, Error> {
        use std::io::Read;
        let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        let mut text = String::new();
        file.take(MAX_CONFIG_BYTES)
            .read_to_string(&mut text)
            .map_err(|e| Error::io(path, e))?;
        Config::parse(&text, path)
    }

    /// The files [`Config::discover`] looks at, highest precedence first:
    /// `explicit` alone if given, else `./skilldeck.toml` and the user
    /// config (`$XDG_CONFIG_HOME/skilldeck/config.toml`). Those that exist
    /// are merged, the project's keys winning.
    pub fn candidates(explicit: Option<&Path>) -> Vec<PathBuf> {
        if let Some(path) = explicit {
            return vec![path.to_path_buf()];
        }
        let mut candidates = vec![PathBuf::from(CONFIG_FILE)];
        if let Some(dir) = crate::fs::dirs::config_home() {
            candidates.push(dir.join("skilldeck").join("config.toml"));
        }
        candidates
    }

    /// Finds the config: `explicit` if given (it must exist), else the user
    /// file under `./skilldeck.toml`, merged key by key, the project
    /// winning ([`Config::discover_layers`]). Returns the file of highest
    /// precedence read with the configuration in force; `Ok(None)` when
    /// there is none.
    pub fn discover(explicit: Option<&Path>) -> Result<Option<(PathBuf, Config)>, Error> {
        Ok(Config::discover_layers(explicit)?.and_then(|layers| {
            let top = layers.top()?.to_path_buf();
            Some((top, layers.config))
        }))
    }

    /// The managed roots in force: `[discovery] managed` (resolved against
    /// the config file's folder), else [`MANAGED_ROOT`] on Unix.
    pub fn managed_roots(&self) -> Vec<PathBuf> {
        match &self.discovery.managed {
            Some(roots) => roots.iter().map(|p| self.resolve(p)).collect(),
            None if cfg!(unix) => vec![PathBuf::from(MANAGED_ROOT)],
            None => Vec::new(),
        }
    }

    /// Validation options from this config (command-line flags are applied
    /// on top by the caller).
    pub fn validation_options(&self) -> ValidationOptions {
        ValidationOptions {
            mode: self.validate.mode.unwrap_or_default(),
            charset: if self.validate.ascii_names == Some(true) {
                NameCharset::Ascii
            } else {
                NameCharset::Unicode
            },
            allowed_fields: self.validate.allow_fields.clone(),
            max_skill_md_bytes: self
                .validate
                .max_skill_md_bytes
                .unwrap_or(crate::limits::MAX_SKILL_MD_BYTES),
            allow: self.validate.allow.clone(),
            deny: self.validate.deny.clone(),
            ..ValidationOptions::default()
        }
    }
}

impl CatalogOptions {
    /// The options a config file's `[catalog]` section asks for.
    pub fn from_config(config: &CatalogConfig) -> Result<Self, Error> {
        let format = match &config.format {
            Some(f) => f.parse()?,
            None => CatalogFormat::default(),
        };
        let encoding = match &config.encoding {
            Some(e) => e.parse()?,
            None => Encoding::default(),
        };
        let budget = match (config.budget_chars, config.budget_tokens) {
            (Some(_), Some(_)) => {
                return Err(Error::ConflictingOptions(
                    "[catalog]: set budget-chars or budget-tokens, not both".to_owned(),
                ));
            }
            (Some(n), None) => Some(Budget::Chars(n)),
            (None, Some(limit)) => Some(Budget::Tokens { limit, encoding }),
            (None, None) => None,
        };
        Ok(CatalogOptions {
            format,
            budget,
            encoding,
            priorities: config.priority.clone(),
            ..CatalogOptions::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn audit_findings_are_allowed_per_skill_and_only_with_a_reason() {
        let c = Config::parse(
            "[audit.allow.rust-setup]\n\"exec.pipe-to-shell\" = \"rustup, reviewed\"\n",
            Path::new("skilldeck.toml"),
        )
        .unwrap();
        assert_eq!(
            c.audit.allow["rust-setup"]["exec.pipe-to-shell"],
            "rustup, reviewed"
        );
        let err = Config::parse(
            "[audit.allow.x]\n\"exec.pipe-to-shell\" = \" \"\n",
            Path::new("skilldeck.toml"),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("needs a reason"), "{err}");
    }

    #[test]
    fn validate_allow_and_deny_lists_take_codes() {
        let c = Config::parse(
            "[validate]\nallow = [\"description-no-trigger\"]\ndeny = [\"broken-link\"]\n",
            Path::new("skilldeck.toml"),
        )
        .unwrap();
        let o = c.validation_options();
        assert_eq!(o.allow, [Code::DescriptionNoTrigger]);
        assert_eq!(o.deny, [Code::BrokenLink]);
        for bad in ["allow = [\"nope\"]", "allow = [\"no-frontmatter\"]"] {
            let err = Config::parse(&format!("[validate]\n{bad}\n"), Path::new("s.toml"))
                .unwrap_err()
                .to_string();
            assert!(err.starts_with("s.toml:2:"), "{err}");
        }
    }

    #[test]
    fn telemetry_section_parses_every_key() {
        let c = Config::parse(
            "[telemetry]\nendpoint = \"https://cloud.langfuse.com/api/public/otel\"\n\
             service-name = \"agent\"\nsampling = 0.25\nexport-content = true\n\
             queue-size = 64\n[telemetry.headers]\nAuthorization = \"Basic c2VjcmV0\"\n",
            Path::new("s.toml"),
        )
        .unwrap();
        let t = &c.telemetry;
        assert_eq!(
            t.endpoint.as_deref(),
            Some("https://cloud.langfuse.com/api/public/otel")
        );
        assert_eq!(t.service_name.as_deref(), Some("agent"));
        assert_eq!(t.sampling, Some(0.25));
        assert!(t.export_content);
        assert_eq!(t.queue_size, Some(64));
        assert_eq!(t.headers["Authorization"], "Basic c2VjcmV0");
    }

    #[test]
    fn telemetry_is_off_and_content_private_by_default() {
        let c = Config::parse("", Path::new("s.toml")).unwrap();
        assert_eq!(c.telemetry.endpoint, None);
        assert!(!c.telemetry.export_content);
    }

    #[test]
    fn telemetry_debug_hides_header_values() {
        let c = Config::parse(
            "[telemetry.headers]\nAuthorization = \"Basic c2VjcmV0\"\n",
            Path::new("s.toml"),
        )
        .unwrap();
        let debug = format!("{c:?}");
        assert!(debug.contains("Authorization"), "{debug}");
        assert!(!debug.contains("c2VjcmV0"), "{debug}");
    }

    #[test]
    fn registry_ui_oidc_section_parses_and_unknown_keys_name_their_line() {
        let c = Config::parse(
            "[registry.ui]\ntoken-sign-in = false\n[registry.ui.oidc]\n\
             issuer = \"https://idp.example\"\nclient-id = \"c\"\n\
             client-secret-file = \"secret\"\n\
             redirect-url = \"https://r.example/ui/oidc/callback\"\n\
             [[registry.ui.oidc.rule]]\ngroup = \"admins\"\ngrant = [\"admin\"]\n",
            Path::new("conf/s.toml"),
        )
        .unwrap();
        assert_eq!(c.registry.ui.token_sign_in, Some(false));
        let oidc = c.registry.ui.oidc.unwrap();
        assert_eq!(oidc.issuer, "https://idp.example");
        assert_eq!(oidc.rules.len(), 1);
        assert_eq!(oidc.rules[0].group.as_deref(), Some("admins"));
        let err = Config::parse(
            "[registry.ui.oidc]\nissuer = \"https://i\"\nclient-idd = \"c\"\n",
            Path::new("s.toml"),
        )
        .unwrap_err();
        match err {
            Error::Config { line, message, .. } => {
                assert_eq!(line, 3, "{message}");
                assert!(message.contains("client-idd"), "{message}");
            }
            other => panic!("{other}"),
        }
    }

    #[test]
    fn telemetry_bad_values_are_errors_with_their_line() {
        for (bad, what) in [
            ("endpoint = \"localhost:4318\"", "http"),
            ("sampling = 1.5", "between"),
            ("queue-size = 0", "at least 1"),
            ("exporter = \"grpc\"", "exporter"),
        ] {
            let err =
                Config::parse(&format!("[telemetry]\n{bad}\n"), Path::new("s.toml")).unwrap_err();
            match err {
                Error::Config { line, message, .. } => {
                    assert_eq!(line, 2, "{bad}: {message}");
                    assert!(message.contains(what), "{bad}: {message}");
                }
                other => panic!("{other}"),
            }
        }
    }

    #[test]
    fn unknown_config_key_is_an_error_with_its_line() {
        let err = Config::parse(
            "[validate]\nmode = \"lenient\"\nallow-feilds = []\n",
            Path::new("s.toml"),
        )
        .unwrap_err();
        match err {
            Error::Config { line, message, .. } => {
                assert_eq!(line, 3);
                assert!(message.contains("allow-feilds"), "{message}");
            }
            other => panic!("{other}"),
        }
    }

    #[test]
    fn full_config_parses_and_resolves_paths_against_its_folder() {
        let c = Config::parse(
            r#"
roots = ["more-skills"]

[[skill]]
name = "deploy"
path = "../ops/deploy"
mode = "pinned"

[modes]
legacy = "off"
helper = "name-only"

[discovery]
user = false
max-depth = 3

[catalog]
format = "markdown"
budget-tokens = 2000

[cache]
capacity = 64
"#,
            Path::new("/etc/proj/skilldeck.toml"),
        )
        .unwrap();
        assert_eq!(
            c.resolve(&c.roots[0]),
            PathBuf::from("/etc/proj/more-skills")
        );
        assert_eq!(c.skills[0].mode, Some(SkillMode::Pinned));
        assert_eq!(c.modes["helper"], SkillMode::NameOnly);
        assert!(!c.discovery.user && c.discovery.project);
        assert_eq!(c.discovery.bundled, BundledMode::Fallback);
        assert_eq!(c.discovery.max_depth, 3);
        assert_eq!(c.catalog.budget_tokens, Some(2000));
        assert_eq!(c.cache.capacity, Some(64));
    }

    #[test]
    fn unknown_mode_is_an_error_with_its_line() {
        let err = Config::parse(
            "[modes]
x = \"pinned\"
y = \"sometimes\"
",
            Path::new("s.toml"),
        )
        .unwrap_err();
        match err {
            Error::Config { line, .. } => assert_eq!(line, 3),
            other => panic!("{other}"),
        }
    }

    #[test]
    fn the_sample_config_in_examples_parses_with_every_section() {
        let text = include_str!("../../../../examples/skilldeck.toml");
        let c = Config::parse(text, Path::new("/p/skilldeck.toml")).unwrap();
        assert_eq!(c.roots, vec![PathBuf::from("vendor/skills")]);
        assert_eq!(c.skills.len(), 1);
        assert_eq!(c.modes.len(), 2);
        assert_eq!(c.discovery.bundled, BundledMode::Fallback);
        assert_eq!(c.catalog.budget_tokens, Some(8000));
        assert!(CatalogOptions::from_config(&c.catalog).is_ok());
        assert_eq!(c.cache.capacity, Some(256));
        assert_eq!(c.validate.mode, Some(Mode::Strict));
        assert_eq!(c.serve.watch_budget, Some(8192));
    }

    #[test]
    fn serve_section_sets_the_watch_budget_and_refuses_unknown_keys() {
        let c = Config::parse("[serve]\nwatch-budget = 64\n", Path::new("s.toml")).unwrap();
        assert_eq!(c.serve.watch_budget, Some(64));
        assert!(Config::parse("[serve]\nwatch-budgt = 64\n", Path::new("s.toml")).is_err());
    }

    #[test]
    fn bundled_accepts_the_three_modes_and_the_old_booleans() {
        for (text, mode) in [
            ("\"always\"", BundledMode::Always),
            ("\"fallback\"", BundledMode::Fallback),
            ("\"never\"", BundledMode::Never),
            ("true", BundledMode::Always),
            ("false", BundledMode::Never),
        ] {
            let c = Config::parse(
                &format!("[discovery]\nbundled = {text}\n"),
                Path::new("s.toml"),
            )
            .unwrap();
            assert_eq!(c.discovery.bundled, mode, "{text}");
        }
        let err = Config::parse(
            "[discovery]\nbundled = \"sometimes\"\n",
            Path::new("s.toml"),
        )
        .unwrap_err();
        assert!(err.to_string().contains("sometimes"), "{err}");
    }

    #[test]
    fn validate_section_sets_options() {
        let c = Config::parse(
            "[validate]\nmode = \"lenient\"\nascii-names = true\nallow-fields = [\"argument-hint\"]\n",
            Path::new("s.toml"),
        )
        .unwrap();
        let o = c.validation_options();
        assert_eq!(o.mode, Mode::Lenient);
        assert_eq!(o.charset, NameCharset::Ascii);
        assert_eq!(o.allowed_fields, vec!["argument-hint".to_owned()]);
    }
}
