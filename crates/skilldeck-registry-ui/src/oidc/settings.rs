//! [`OidcSettings`]: `[registry.ui.oidc]` checked at start-up (a bad
//! setting stops the server with a message naming the key, rather than a
//! sign-in page that fails later).

use std::path::{Path, PathBuf};

use openidconnect::{ClientId, ClientSecret, IssuerUrl, RedirectUrl};

use crate::oidc::rules::{Rule, RuleError};

/// The button's text when the config names none.
pub const DEFAULT_DISPLAY_NAME: &str = "Sign in with single sign-on";
/// The claim holding groups when the config names none.
pub const DEFAULT_GROUPS_CLAIM: &str = "groups";
/// Scopes asked for beyond `openid` when the config names none.
pub const DEFAULT_SCOPES: [&str; 2] = ["email", "profile"];
/// The path of the callback (the redirect URL must end with it).
pub const CALLBACK_PATH: &str = "/ui/oidc/callback";
/// Longest client secret file read.
const MAX_SECRET_FILE_BYTES: u64 = 4096;

/// Why `[registry.ui.oidc]` is refused.
#[derive(Debug, thiserror::Error)]
pub enum OidcConfigError {
    /// A key with a bad value.
    #[error("[registry.ui.oidc] {key}: {message}")]
    Key {
        /// The key.
        key: &'static str,
        /// What is wrong and what to do.
        message: String,
    },
    /// A rule that does not parse.
    #[error("[[registry.ui.oidc.rule]] number {index}: {source}")]
    Rule {
        /// 1-based.
        index: usize,
        /// Why.
        source: RuleError,
    },
    /// The client secret file.
    #[error("[registry.ui.oidc] client-secret-file {}: {message}", path.display())]
    Secret {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// Single sign-on, checked.
#[derive(Clone)]
pub struct OidcSettings {
    /// The button's text.
    pub display_name: String,
    /// The issuer.
    pub issuer: IssuerUrl,
    /// The client id.
    pub client_id: ClientId,
    /// The client secret (never printed).
    pub client_secret: ClientSecret,
    /// Where the provider sends the browser back.
    pub redirect_url: RedirectUrl,
    /// Scopes asked for beyond `openid`.
    pub scopes: Vec<String>,
    /// The groups claim.
    pub groups_claim: String,
    /// Email rules need `email_verified: true`.
    pub require_verified_email: bool,
    /// Who gets what.
    pub rules: Vec<Rule>,
}

impl std::fmt::Debug for OidcSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OidcSettings")
            .field("issuer", &self.issuer.as_str())
            .field("client_id", &self.client_id.as_str())
            .field("client_secret", &"<hidden>")
            .field("redirect_url", &self.redirect_url.as_str())
            .field("rules", &self.rules.len())
            .finish_non_exhaustive()
    }
}

/// True for `http://` on a loopback host (tests and local providers);
/// everything else must be `https://`.
pub fn transport_allowed(url: &url::Url) -> bool {
    match url.scheme() {
        "https" => true,
        "http" => match url.host() {
            Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            None => false,
        },
        _ => false,
    }
}

fn key_error(key: &'static str, message: impl Into<String>) -> OidcConfigError {
    OidcConfigError::Key {
        key,
        message: message.into(),
    }
}

fn read_secret(path: &Path) -> Result<ClientSecret, OidcConfigError> {
    let err = |message: String| OidcConfigError::Secret {
        path: path.to_path_buf(),
        message,
    };
    let meta = std::fs::metadata(path).map_err(|e| err(format!("cannot read it: {e}")))?;
    if meta.len() > MAX_SECRET_FILE_BYTES {
        return Err(err(format!(
            "it is larger than {MAX_SECRET_FILE_BYTES} bytes; it must hold only the secret"
        )));
    }
    if let Some(mode) =
        skilldeck::secret::open_to_others(path).map_err(|e| err(format!("cannot read it: {e}")))?
    {
        return Err(err(format!(
            "it is open to other users (mode {mode:o}); run chmod 600 on it"
        )));
    }
    let text = std::fs::read_to_string(path).map_err(|e| err(format!("cannot read it: {e}")))?;
    let secret = text.trim();
    if secret.is_empty() {
        return Err(err("it is empty; put the client secret in it".to_owned()));
    }
    Ok(ClientSecret::new(secret.to_owned()))
}

impl OidcSettings {
    /// Checks `[registry.ui.oidc]` (paths already resolved against the
    /// config file's folder) and reads the client secret file.
    pub fn from_config(
        c: &skilldeck::deck::OidcConfig,
        base_dir: &Path,
    ) -> Result<OidcSettings, OidcConfigError> {
        let issuer_url = url::Url::parse(c.issuer.trim())
            .map_err(|e| key_error("issuer", format!("'{}' is not a URL: {e}", c.issuer)))?;
        if !transport_allowed(&issuer_url) {
            return Err(key_error(
                "issuer",
                format!(
                    "'{}' must be an https:// URL (http:// only on a loopback host)",
                    c.issuer
                ),
            ));
        }
        let issuer = IssuerUrl::new(c.issuer.trim().to_owned())
            .map_err(|e| key_error("issuer", e.to_string()))?;
        let redirect = url::Url::parse(c.redirect_url.trim()).map_err(|e| {
            key_error(
                "redirect-url",
                format!("'{}' is not a URL: {e}", c.redirect_url),
            )
        })?;
        if !transport_allowed(&redirect) {
            return Err(key_error(
                "redirect-url",
                "must be an https:// URL (http:// only on a loopback host)",
            ));
        }
        if redirect.path() != CALLBACK_PATH || redirect.query().is_some() {
            return Err(key_error(
                "redirect-url",
                format!(
                    "must be this registry's {CALLBACK_PATH} as browsers reach it (e.g. https://registry.example.com{CALLBACK_PATH}), not '{}'",
                    c.redirect_url
                ),
            ));
        }
        let redirect_url = RedirectUrl::new(c.redirect_url.trim().to_owned())
            .map_err(|e| key_error("redirect-url", e.to_string()))?;
        let client_id = c.client_id.trim();
        if client_id.is_empty() {
            return Err(key_error("client-id", "is empty"));
        }
        let secret_path = if c.client_secret_file.is_absolute() {
            c.client_secret_file.clone()
        } else {
            base_dir.join(&c.client_secret_file)
        };
        let client_secret = read_secret(&secret_path)?;
        let scopes = match &c.scopes {
            Some(s) => s.clone(),
            None => DEFAULT_SCOPES.iter().map(|s| (*s).to_owned()).collect(),
        };
        if let Some(bad) = scopes
            .iter()
            .find(|s| s.is_empty() || s.bytes().any(|b| b <= b' ' || b == b'"' || b == b'\\'))
        {
            return Err(key_error("scopes", format!("'{bad}' is not a scope name")));
        }
        let groups_claim = c
            .groups_claim
            .clone()
            .unwrap_or_else(|| DEFAULT_GROUPS_CLAIM.to_owned());
        if groups_claim.trim().is_empty() {
            return Err(key_error("groups-claim", "is empty"));
        }
        if c.rules.is_empty() {
            return Err(key_error(
                "rule",
                "no [[registry.ui.oidc.rule]]: nobody could sign in; add at least one rule",
            ));
        }
        let rules = c
            .rules
            .iter()
            .enumerate()
            .map(|(i, r)| {
                Rule::parse(r.group.as_deref(), r.email.as_deref(), &r.grant).map_err(|source| {
                    OidcConfigError::Rule {
                        index: i + 1,
                        source,
                    }
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(OidcSettings {
            display_name: c
                .display_name
                .clone()
                .filter(|s| !s.trim().is_empty())
                .unwrap_or_else(|| DEFAULT_DISPLAY_NAME.to_owned()),
            issuer,
            client_id: ClientId::new(client_id.to_owned()),
            client_secret,
            redirect_url,
            scopes,
            groups_claim,
            require_verified_email: c.require_verified_email.unwrap_or(true),
            rules,
        })
    }
}
