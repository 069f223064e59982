//! Server-side sessions: a random id in an `HttpOnly`, `SameSite=Strict`
//! cookie; the session itself (the registry `Principal` and how it signed
//! in) is a row of the registry's database, keyed by the sha256 of the id
//! ([`Registry::ui_session_create`]), so every replica behind a load
//! balancer sees it and a sign-out ends it everywhere at once. The API
//! token typed into the sign-in form is used once to authenticate and then
//! dropped: it is never in a cookie, never stored.
//!
//! A session's CSRF token is not stored at all: it is the HMAC of the
//! session id under the key the replicas share ([`crate::keys`]), so any
//! replica computes it and a database reader (who sees only the id's hash)
//! cannot.
//!
//! Only a signed-in user has a session: an anonymous visitor of the
//! sign-in page gets a signed cookie instead ([`crate::signin`]), so no
//! number of anonymous visits can fill this store or evict anyone from it.

use std::sync::Arc;

use skilldeck_registry::{Principal, Registry, SignIn, UiSessionTimes};

use crate::error::UiError;
use crate::keys::{Purpose, UiKey};
use crate::limits::{MAX_SESSIONS, SESSION_IDLE_TIMEOUT, SESSION_MAX_AGE, SESSION_TOUCH_INTERVAL};
use crate::secret::random_secret;

/// The session cookie's name.
pub const COOKIE_NAME: &str = "skilldeck_ui";
/// The path the cookie is sent for.
pub const COOKIE_PATH: &str = "/ui";

/// The sessions' lifetimes, as the registry applies them.
pub const SESSION_TIMES: UiSessionTimes = UiSessionTimes {
    idle_timeout: SESSION_IDLE_TIMEOUT,
    max_age: SESSION_MAX_AGE,
    touch_interval: SESSION_TOUCH_INTERVAL,
    max_sessions: MAX_SESSIONS,
};

/// What a request sees of its session.
#[derive(Debug, Clone)]
pub struct Session {
    /// The cookie value (the session id).
    pub id: String,
    /// This session's CSRF token.
    pub csrf: String,
    /// Who is signed in.
    pub principal: Arc<Principal>,
    /// How they signed in.
    pub sign_in: SignIn,
    /// A one-shot message set by the previous request (taken on read).
    pub flash: Option<String>,
}

/// The sessions: the registry's table, and the shared key their CSRF
/// tokens derive from.
pub struct SessionStore {
    registry: Registry,
    key: Arc<UiKey>,
}

impl SessionStore {
    /// The sessions of `registry`'s database.
    pub fn new(registry: Registry, key: Arc<UiKey>) -> SessionStore {
        SessionStore { registry, key }
    }

    async fn csrf_for(&self, id: &str) -> Result<String, UiError> {
        Ok(self.key.get().await?.mac(Purpose::Csrf, id))
    }

    /// A new session for a signed-in `principal`, with a fresh id (no
    /// session fixation) and its CSRF token.
    pub async fn create(&self, principal: Principal, sign_in: SignIn) -> Result<Session, UiError> {
        let id = random_secret()?;
        let csrf = self.csrf_for(&id).await?;
        self.registry
            .ui_session_create(&id, &principal, &sign_in, &SESSION_TIMES)
            .await?;
        Ok(Session {
            id,
            csrf,
            principal: Arc::new(principal),
            sign_in,
            flash: None,
        })
    }

    /// The live session with this id (its use recorded and its flash
    /// message taken), or `None` when unknown, expired or ended.
    pub async fn get(&self, id: &str) -> Result<Option<Session>, UiError> {
        let Some(s) = self.registry.ui_session(id, &SESSION_TIMES, true).await? else {
            return Ok(None);
        };
        Ok(Some(Session {
            id: id.to_owned(),
            csrf: self.csrf_for(id).await?,
            principal: Arc::new(s.principal),
            sign_in: s.sign_in,
            flash: s.flash,
        }))
    }

    /// The live session's CSRF token, without taking its flash message.
    pub async fn csrf_of(&self, id: &str) -> Result<Option<String>, UiError> {
        match self.registry.ui_session(id, &SESSION_TIMES, false).await? {
            Some(_) => Ok(Some(self.csrf_for(id).await?)),
            None => Ok(None),
        }
    }

    /// Leaves a one-shot message for the next page of this session (best
    /// effort: a database failure loses the message, and is logged).
    pub async fn set_flash(&self, id: &str, message: String) {
        if let Err(e) = self.registry.ui_session_flash(id, &message).await {
            tracing::warn!(error = %e, "could not store a session's flash message");
        }
    }

    /// Ends a session on every replica.
    pub async fn remove(&self, id: &str) -> Result<(), UiError> {
        Ok(self.registry.ui_session_end(id).await?)
    }

    /// Whether the session's principal still holds (a token sign-in's
    /// token not revoked or expired); a session that no longer holds is
    /// ended.
    pub async fn still_valid(&self, session: &Session) -> Result<bool, UiError> {
        let record = skilldeck_registry::UiSession {
            principal: (*session.principal).clone(),
            sign_in: session.sign_in.clone(),
            flash: None,
        };
        match self.registry.ui_session_valid(&record).await {
            Ok(()) => Ok(true),
            Err(skilldeck_registry::RegistryError::Unauthorized(_)) => {
                self.remove(&session.id).await?;
                Ok(false)
            }
            Err(e) => Err(e.into()),
        }
    }
}

/// The session id in a `Cookie` header, if any.
pub fn session_id_from_cookies(header: &str) -> Option<&str> {
    cookie_value(header, COOKIE_NAME)
}

/// The value of cookie `name` in a `Cookie` header, if any (and not empty).
pub fn cookie_value<'a>(header: &'a str, name: &str) -> Option<&'a str> {
    header.split(';').find_map(|pair| {
        let (n, value) = pair.trim().split_once('=')?;
        (n == name && !value.is_empty()).then_some(value)
    })
}

/// The `Set-Cookie` value for a session id: `HttpOnly`, `SameSite=Strict`,
/// `Path=/ui`, and `Secure` when the UI is served over https. No
/// `Max-Age`: the browser forgets it when closed; the server expires it
/// itself.
pub fn session_cookie(id: &str, secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    format!("{COOKIE_NAME}={id}; Path={COOKIE_PATH}; HttpOnly; SameSite=Strict{secure}")
}

/// The `Set-Cookie` value that deletes the session cookie.
pub fn cleared_cookie(secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    format!("{COOKIE_NAME}=; Path={COOKIE_PATH}; Max-Age=0; HttpOnly; SameSite=Strict{secure}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_session_cookie_is_httponly_samesite_strict_and_secure_on_https() {
        let plain = session_cookie("abc", false);
        assert!(plain.contains("HttpOnly") && plain.contains("SameSite=Strict"));
        assert!(!plain.contains("Secure"));
        assert!(session_cookie("abc", true).ends_with("; Secure"));
        assert!(cleared_cookie(false).contains("Max-Age=0"));
    }

    #[test]
    fn the_session_id_is_read_from_the_cookie_header() {
        assert_eq!(
            session_id_from_cookies("a=1; skilldeck_ui=xyz; b=2"),
            Some("xyz")
        );
        assert_eq!(session_id_from_cookies("skilldeck_ui="), None);
        assert_eq!(session_id_from_cookies("other=1"), None);
    }
}
