//! The UI's shared state, its configuration, and the extractors that give
//! a handler its session: [`Signed`] (signed in, or a redirect to the
//! sign-in page) and [`MaybeSession`].

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, header};
use skilldeck_registry::{Principal, Registry};

use crate::error::UiError;
use crate::keys::UiKey;
use crate::oidc::Sso;
use crate::session::{Session, SessionStore, session_cookie, session_id_from_cookies};
use crate::views::Chrome;

/// When the session cookie gets the `Secure` attribute.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CookieSecure {
    /// When the request came over https as a reverse proxy says
    /// (`X-Forwarded-Proto: https` or `Forwarded: proto=https`). A forged
    /// header can only make the cookie stricter, never weaker.
    #[default]
    Auto,
    /// Always (the UI is only ever reached over https).
    Always,
}

/// How the UI runs.
#[derive(Debug, Clone)]
pub struct UiConfig {
    /// When the session cookie is `Secure`.
    pub cookie_secure: CookieSecure,
    /// Whether the sign-in page takes an API token (default yes; with
    /// single sign-on configured an operator may turn it off: tokens then
    /// still work for the API, not for the UI).
    pub token_sign_in: bool,
    /// Single sign-on with an OpenID provider, when configured.
    pub oidc: Option<crate::oidc::OidcSettings>,
}

impl Default for UiConfig {
    fn default() -> Self {
        UiConfig {
            cookie_secure: CookieSecure::default(),
            token_sign_in: true,
            oidc: None,
        }
    }
}

/// What every handler shares.
#[derive(Clone)]
pub struct UiState {
    /// The registry service (in-process).
    pub registry: Registry,
    /// The sessions (in the registry's database: every replica's).
    pub sessions: Arc<SessionStore>,
    /// The key the replicas share (sign-in form, SSO state, CSRF).
    pub key: Arc<UiKey>,
    /// The configuration.
    pub config: Arc<UiConfig>,
    /// Single sign-on (its provider's metadata, fetched when needed).
    pub sso: Option<Arc<Sso>>,
}

impl UiState {
    /// True when this request's cookie must be `Secure`.
    pub fn secure(&self, headers: &HeaderMap) -> bool {
        self.config.cookie_secure == CookieSecure::Always || came_over_https(headers)
    }

    /// The `Set-Cookie` header value for a session.
    pub fn cookie_for(&self, headers: &HeaderMap, id: &str) -> Result<HeaderValue, UiError> {
        HeaderValue::from_str(&session_cookie(id, self.secure(headers)))
            .map_err(|_| UiError::BadInput("session id is not header text".to_owned()))
    }
}

/// True when a reverse proxy says the request came over https.
pub fn came_over_https(headers: &HeaderMap) -> bool {
    let forwarded_proto = headers
        .get("x-forwarded-proto")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("https"));
    let forwarded = headers
        .get(header::FORWARDED)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split([';', ','])
                .any(|kv| kv.trim().eq_ignore_ascii_case("proto=https"))
        });
    forwarded_proto || forwarded
}

async fn session_of(parts: &Parts, state: &UiState) -> Result<Option<Session>, UiError> {
    let Some(id) = parts
        .headers
        .get(header::COOKIE)
        .and_then(|v| v.to_str().ok())
        .and_then(session_id_from_cookies)
    else {
        return Ok(None);
    };
    state.sessions.get(id).await
}

/// A signed-in session; extracting it from a request without one answers
/// with a redirect to `/ui/signin`.
pub struct Signed {
    /// The session.
    pub session: Session,
    /// Who is signed in.
    pub principal: Arc<Principal>,
}

impl Signed {
    /// The page chrome for section `nav`.
    pub fn chrome(&self, nav: &'static str) -> Chrome {
        Chrome::new(
            self.session.csrf.clone(),
            Some(self.principal.name.clone()),
            nav,
            self.session.flash.clone(),
        )
        .with_admin(self.principal.is_admin())
    }
}

impl FromRequestParts<UiState> for Signed {
    type Rejection = UiError;

    async fn from_request_parts(parts: &mut Parts, state: &UiState) -> Result<Self, UiError> {
        let session = session_of(parts, state)
            .await?
            .ok_or(UiError::SignInRequired)?;
        // The token behind a token sign-in must still work: a revoked or
        // expired token ends its sessions (on every replica).
        if !state.sessions.still_valid(&session).await? {
            return Err(UiError::SignInRequired);
        }
        let principal = session.principal.clone();
        Ok(Signed { session, principal })
    }
}

/// The request's live (signed-in) session, if any.
pub struct MaybeSession(pub Option<Session>);

impl FromRequestParts<UiState> for MaybeSession {
    type Rejection = UiError;

    async fn from_request_parts(parts: &mut Parts, state: &UiState) -> Result<Self, UiError> {
        Ok(MaybeSession(session_of(parts, state).await?))
    }
}

/// True for a request htmx made (it then gets a fragment, not a page).
pub fn is_htmx(headers: &HeaderMap) -> bool {
    headers
        .get("hx-request")
        .is_some_and(|v| v.as_bytes() == b"true")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn https_is_recognised_from_the_proxy_headers() {
        let mut h = HeaderMap::new();
        assert!(!came_over_https(&h));
        h.insert("x-forwarded-proto", HeaderValue::from_static("https"));
        assert!(came_over_https(&h));
        let mut h = HeaderMap::new();
        h.insert(
            header::FORWARDED,
            HeaderValue::from_static("for=1.2.3.4;proto=https"),
        );
        assert!(came_over_https(&h));
        let mut h = HeaderMap::new();
        h.insert("x-forwarded-proto", HeaderValue::from_static("http"));
        assert!(!came_over_https(&h));
    }
}
