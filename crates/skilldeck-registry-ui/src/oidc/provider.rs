//! [`Sso`]: the OpenID provider as this registry sees it: its discovered
//! metadata and keys (`/.well-known/openid-configuration`, JWKS), fetched
//! when first needed and again after [`METADATA_TTL`]; a failed discovery
//! is remembered for [`RETRY_AFTER_FAILURE`] and shown on the sign-in page
//! (fails closed: no sign-in without a verified provider).
//!
//! Every request to the provider goes through one HTTP client: no
//! redirects followed, a timeout, a size cap, and `https://` only (or
//! `http://` on a loopback host).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use openidconnect::core::{
    CoreAuthDisplay, CoreAuthPrompt, CoreClaimName, CoreClaimType, CoreClientAuthMethod,
    CoreErrorResponseType, CoreGenderClaim, CoreGrantType, CoreJsonWebKey,
    CoreJweContentEncryptionAlgorithm, CoreJweKeyManagementAlgorithm, CoreJwsSigningAlgorithm,
    CoreResponseMode, CoreResponseType, CoreRevocableToken, CoreRevocationErrorResponse,
    CoreSubjectIdentifierType, CoreTokenIntrospectionResponse, CoreTokenType,
};
use openidconnect::{
    AdditionalClaims, AdditionalProviderMetadata, AuthType, EmptyExtraTokenFields,
    EndpointMaybeSet, EndpointNotSet, EndpointSet, HttpRequest, HttpResponse, ProviderMetadata,
    StandardErrorResponse,
};
use serde::{Deserialize, Serialize};

use crate::oidc::settings::{OidcSettings, transport_allowed};

/// How long discovered metadata and keys are used before they are fetched
/// again (a provider's key rotation is picked up within it; an unknown key
/// id fetches them at once).
pub const METADATA_TTL: Duration = Duration::from_secs(10 * 60);
/// How long a failed discovery is shown before it is tried again.
pub const RETRY_AFTER_FAILURE: Duration = Duration::from_secs(15);
/// The timeout of one request to the provider.
pub const PROVIDER_TIMEOUT: Duration = Duration::from_secs(10);
/// Largest response read from the provider.
pub const MAX_PROVIDER_RESPONSE_BYTES: usize = 1024 * 1024;

/// Every claim beyond the standard ones (the groups claim is named in the
/// config).
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct OtherClaims(pub HashMap<String, serde_json::Value>);
impl AdditionalClaims for OtherClaims {}

/// The discovery fields the crate does not model that we check.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct PkceMetadata {
    /// `code_challenge_methods_supported`.
    #[serde(default)]
    pub code_challenge_methods_supported: Option<Vec<String>>,
}
impl AdditionalProviderMetadata for PkceMetadata {}

type Metadata = ProviderMetadata<
    PkceMetadata,
    CoreAuthDisplay,
    CoreClientAuthMethod,
    CoreClaimName,
    CoreClaimType,
    CoreGrantType,
    CoreJweContentEncryptionAlgorithm,
    CoreJweKeyManagementAlgorithm,
    CoreJsonWebKey,
    CoreResponseMode,
    CoreResponseType,
    CoreSubjectIdentifierType,
>;

/// The ID token's fields in the token response.
pub type IdTokenFields = openidconnect::IdTokenFields<
    OtherClaims,
    EmptyExtraTokenFields,
    CoreGenderClaim,
    CoreJweContentEncryptionAlgorithm,
    CoreJwsSigningAlgorithm,
>;
/// The token endpoint's answer.
pub type TokenResponse = openidconnect::StandardTokenResponse<IdTokenFields, CoreTokenType>;
/// Verified claims.
pub type Claims = openidconnect::IdTokenClaims<OtherClaims, CoreGenderClaim>;

/// The client of a discovered provider.
pub type Client = openidconnect::Client<
    OtherClaims,
    CoreAuthDisplay,
    CoreGenderClaim,
    CoreJweContentEncryptionAlgorithm,
    CoreJsonWebKey,
    CoreAuthPrompt,
    StandardErrorResponse<CoreErrorResponseType>,
    TokenResponse,
    CoreTokenIntrospectionResponse,
    CoreRevocableToken,
    CoreRevocationErrorResponse,
    EndpointSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointMaybeSet,
    EndpointMaybeSet,
>;

/// A request to the provider failed.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// A URL that is not https (nor http on loopback).
    #[error("{0}: the provider's URLs must be https:// (http:// only on a loopback host)")]
    Insecure(String),
    /// The request could not be made or answered.
    #[error("{0}")]
    Transport(String),
    /// Too large.
    #[error("the provider's answer is larger than {MAX_PROVIDER_RESPONSE_BYTES} bytes")]
    TooLarge,
}

/// An error with its sources, on one line.
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let more = s.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = s.source();
    }
    text
}

/// The provider's HTTP client as the crate calls it (a named type, not a
/// closure: its future must be `Send` for any lifetime).
pub struct ProviderHttp<'a>(pub &'a Sso);

impl<'c> openidconnect::AsyncHttpClient<'c> for ProviderHttp<'_> {
    type Error = HttpError;
    type Future = std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<HttpResponse, HttpError>> + Send + 'c>,
    >;

    fn call(&'c self, request: HttpRequest) -> Self::Future {
        Box::pin(self.0.send(request))
    }
}

struct Cached {
    at: Instant,
    result: Result<Arc<Client>, String>,
}

/// The configured provider, discovered when needed.
pub struct Sso {
    /// The settings.
    pub settings: OidcSettings,
    /// The client, or why it could not be made (then every request fails
    /// with that reason, and the sign-in page shows it).
    http: Result<reqwest::Client, String>,
    cache: tokio::sync::Mutex<Option<Cached>>,
}

impl std::fmt::Debug for Sso {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sso")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl Sso {
    /// The provider of `settings` (nothing fetched yet).
    pub fn new(settings: OidcSettings) -> Sso {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(PROVIDER_TIMEOUT)
            .build()
            .map_err(|e| format!("cannot make the HTTP client for single sign-on: {e}"));
        Sso {
            settings,
            http,
            cache: tokio::sync::Mutex::new(None),
        }
    }

    /// One request to the provider.
    pub async fn send(&self, request: HttpRequest) -> Result<HttpResponse, HttpError> {
        let url = url::Url::parse(&request.uri().to_string())
            .map_err(|e| HttpError::Transport(format!("{}: {e}", request.uri())))?;
        if !transport_allowed(&url) {
            return Err(HttpError::Insecure(url.to_string()));
        }
        let request = reqwest::Request::try_from(request)
            .map_err(|e| HttpError::Transport(format!("{url}: {}", chain(&e))))?;
        let http = self
            .http
            .as_ref()
            .map_err(|e| HttpError::Transport(e.clone()))?;
        let mut response = http
            .execute(request)
            .await
            .map_err(|e| HttpError::Transport(format!("{url}: {}", chain(&e))))?;
        let mut builder = axum::http::Response::builder().status(response.status());
        for (name, value) in response.headers() {
            builder = builder.header(name, value);
        }
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| HttpError::Transport(format!("{url}: {}", chain(&e))))?
        {
            if body.len() + chunk.len() > MAX_PROVIDER_RESPONSE_BYTES {
                return Err(HttpError::TooLarge);
            }
            body.extend_from_slice(&chunk);
        }
        builder
            .body(body)
            .map_err(|e| HttpError::Transport(e.to_string()))
    }

    /// The discovered client (cached; see [`METADATA_TTL`]), or why
    /// single sign-on is unavailable.
    pub async fn client(&self) -> Result<Arc<Client>, String> {
        let mut cache = self.cache.lock().await;
        if let Some(c) = cache.as_ref() {
            let ttl = if c.result.is_ok() {
                METADATA_TTL
            } else {
                RETRY_AFTER_FAILURE
            };
            if c.at.elapsed() < ttl {
                return c.result.clone();
            }
        }
        let result = self.discover().await;
        if let Err(why) = &result {
            tracing::warn!(issuer = %self.settings.issuer.as_str(), error = %why, "single sign-on is unavailable");
        }
        *cache = Some(Cached {
            at: Instant::now(),
            result: result.clone(),
        });
        result
    }

    /// Fetches the metadata and keys again (an ID token named a key the
    /// cached set does not hold).
    pub async fn refresh(&self) -> Result<Arc<Client>, String> {
        *self.cache.lock().await = None;
        self.client().await
    }

    async fn discover(&self) -> Result<Arc<Client>, String> {
        let s = &self.settings;
        let http = ProviderHttp(self);
        let metadata = Metadata::discover_async(s.issuer.clone(), &http)
            .await
            .map_err(|e| {
                format!(
                    "discovery at {}/.well-known/openid-configuration failed: {}",
                    s.issuer.as_str().trim_end_matches('/'),
                    chain(&e)
                )
            })?;
        if metadata.jwks().keys().is_empty() {
            return Err(format!(
                "the provider's key set ({}) holds no keys: ID tokens cannot be verified",
                metadata.jwks_uri().as_str()
            ));
        }
        let Some(token_url) = metadata.token_endpoint() else {
            return Err("the provider's discovery names no token endpoint".to_owned());
        };
        let token = url::Url::parse(token_url.as_str()).map_err(|e| e.to_string())?;
        if !transport_allowed(&token) {
            return Err(format!(
                "the token endpoint {token} is not https:// (http:// only on a loopback host)"
            ));
        }
        if let Some(methods) = &metadata
            .additional_metadata()
            .code_challenge_methods_supported
            && !methods.iter().any(|m| m == "S256")
        {
            return Err(
                "the provider does not support PKCE with S256 (code_challenge_methods_supported)"
                    .to_owned(),
            );
        }
        let auth_type = match metadata.token_endpoint_auth_methods_supported() {
            None => AuthType::BasicAuth,
            Some(m) if m.contains(&CoreClientAuthMethod::ClientSecretBasic) => AuthType::BasicAuth,
            Some(m) if m.contains(&CoreClientAuthMethod::ClientSecretPost) => AuthType::RequestBody,
            Some(_) => {
                return Err(
                    "the provider's token endpoint takes neither client_secret_basic nor client_secret_post"
                        .to_owned(),
                );
            }
        };
        let client = Client::from_provider_metadata(
            metadata,
            s.client_id.clone(),
            Some(s.client_secret.clone()),
        )
        .set_redirect_uri(s.redirect_url.clone())
        .set_auth_type(auth_type);
        Ok(Arc::new(client))
    }
}
