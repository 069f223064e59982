//! Server-side sessions: a random id in an `HttpOnly`, `SameSite=Strict`
//! cookie; the session itself (its CSRF token and the registry
//! `Principal`) stays in this process's memory, keyed by the sha256 of the
//! id. The API token typed into the sign-in form is used once to
//! authenticate and then dropped: it is never in a cookie, never stored.
//!
//! Only a signed-in user has a session: an anonymous visitor of the
//! sign-in page gets a signed cookie instead ([`crate::signin`]), so no
//! number of anonymous visits can fill this store or evict anyone from it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use crate::error::UiError;
use crate::limits::{MAX_SESSIONS, SESSION_IDLE_TIMEOUT, SESSION_MAX_AGE};
use crate::secret::{random_secret, secret_key};

/// The session cookie's name.
pub const COOKIE_NAME: &str = "skilldeck_ui";
/// The path the cookie is sent for.
pub const COOKIE_PATH: &str = "/ui";

struct Entry<P> {
    csrf: String,
    principal: Arc<P>,
    flash: Option<String>,
    created: Instant,
    last_seen: Instant,
}

/// What a request sees of its session.
#[derive(Debug)]
pub struct Session<P> {
    /// The cookie value (the session id).
    pub id: String,
    /// This session's CSRF token.
    pub csrf: String,
    /// Who is signed in.
    pub principal: Arc<P>,
    /// A one-shot message set by the previous request (taken on read).
    pub flash: Option<String>,
}

impl<P> Clone for Session<P> {
    fn clone(&self) -> Self {
        Session {
            id: self.id.clone(),
            csrf: self.csrf.clone(),
            principal: self.principal.clone(),
            flash: self.flash.clone(),
        }
    }
}

/// The in-memory session store (one per process: several registry
/// replicas behind a load balancer need session affinity for the UI).
pub struct SessionStore<P> {
    entries: Mutex<HashMap<String, Entry<P>>>,
}

impl<P> Default for SessionStore<P> {
    fn default() -> Self {
        SessionStore {
            entries: Mutex::new(HashMap::new()),
        }
    }
}

impl<P> SessionStore<P> {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Entry<P>>> {
        // A panic while holding the lock cannot leave an entry half
        // written (every update is a single insert or field store).
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A new session for a signed-in `principal`, with a fresh id and
    /// CSRF token.
    pub fn create(&self, principal: Arc<P>) -> Result<Session<P>, UiError> {
        let id = random_secret()?;
        let csrf = random_secret()?;
        let now = Instant::now();
        let mut entries = self.lock();
        if entries.len() >= MAX_SESSIONS {
            entries.retain(|_, e| alive(e, now));
        }
        if entries.len() >= MAX_SESSIONS {
            // Drop the least recently used one.
            let victim = entries
                .iter()
                .min_by_key(|(_, e)| e.last_seen)
                .map(|(k, _)| k.clone());
            if let Some(victim) = victim {
                entries.remove(&victim);
            }
        }
        entries.insert(
            secret_key(&id),
            Entry {
                csrf: csrf.clone(),
                principal: principal.clone(),
                flash: None,
                created: now,
                last_seen: now,
            },
        );
        Ok(Session {
            id,
            csrf,
            principal,
            flash: None,
        })
    }

    /// The live session with this id (its idle timer restarted and its
    /// flash message taken), or `None` when unknown or expired.
    pub fn get(&self, id: &str) -> Option<Session<P>> {
        let key = secret_key(id);
        let now = Instant::now();
        let mut entries = self.lock();
        let entry = entries.get_mut(&key)?;
        if !alive(entry, now) {
            entries.remove(&key);
            return None;
        }
        entry.last_seen = now;
        Some(Session {
            id: id.to_owned(),
            csrf: entry.csrf.clone(),
            principal: entry.principal.clone(),
            flash: entry.flash.take(),
        })
    }

    /// The session's CSRF token without touching anything else.
    pub fn csrf_of(&self, id: &str) -> Option<String> {
        let key = secret_key(id);
        let now = Instant::now();
        let entries = self.lock();
        let entry = entries.get(&key)?;
        alive(entry, now).then(|| entry.csrf.clone())
    }

    /// Leaves a one-shot message for the next page of this session.
    pub fn set_flash(&self, id: &str, message: String) {
        if let Some(entry) = self.lock().get_mut(&secret_key(id)) {
            entry.flash = Some(message);
        }
    }

    /// Ends a session.
    pub fn remove(&self, id: &str) {
        self.lock().remove(&secret_key(id));
    }

    /// How many sessions are held (for the tests).
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// True when no session is held (for the tests).
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn alive<P>(entry: &Entry<P>, now: Instant) -> bool {
    now.duration_since(entry.last_seen) < SESSION_IDLE_TIMEOUT
        && now.duration_since(entry.created) < SESSION_MAX_AGE
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
    fn a_session_is_found_by_its_id_and_keyed_by_its_hash() {
        let store: SessionStore<String> = SessionStore::default();
        let s = store.create(Arc::new("admin".into())).unwrap();
        let got = store.get(&s.id).unwrap();
        assert_eq!(got.csrf, s.csrf);
        assert_eq!(got.principal.as_str(), "admin");
        assert!(
            !store.lock().contains_key(&s.id),
            "the raw id must not be a key"
        );
        assert!(store.get("not-a-session").is_none());
    }

    #[test]
    fn sessions_have_distinct_ids_and_csrf_tokens() {
        let store: SessionStore<String> = SessionStore::default();
        let a = store.create(Arc::new("u".into())).unwrap();
        let b = store.create(Arc::new("u".into())).unwrap();
        assert_ne!(a.id, b.id);
        assert_ne!(a.csrf, b.csrf);
        assert_ne!(a.id, a.csrf);
    }

    #[test]
    fn a_removed_session_is_gone() {
        let store: SessionStore<String> = SessionStore::default();
        let s = store.create(Arc::new("u".into())).unwrap();
        store.remove(&s.id);
        assert!(store.get(&s.id).is_none());
        assert!(store.is_empty());
    }

    #[test]
    fn an_idle_session_expires() {
        let store: SessionStore<String> = SessionStore::default();
        let s = store.create(Arc::new("u".into())).unwrap();
        if let Some(e) = store.lock().get_mut(&secret_key(&s.id)) {
            e.last_seen = Instant::now()
                .checked_sub(SESSION_IDLE_TIMEOUT)
                .unwrap_or(e.last_seen);
        }
        assert!(store.get(&s.id).is_none());
    }

    #[test]
    fn a_flash_message_is_shown_once() {
        let store: SessionStore<String> = SessionStore::default();
        let s = store.create(Arc::new("u".into())).unwrap();
        store.set_flash(&s.id, "Saved".into());
        assert_eq!(store.get(&s.id).unwrap().flash.as_deref(), Some("Saved"));
        assert_eq!(store.get(&s.id).unwrap().flash, None);
    }

    #[test]
    fn the_store_never_holds_more_than_its_cap() {
        let store: SessionStore<String> = SessionStore::default();
        let first = store.create(Arc::new("a".into())).unwrap();
        for _ in 0..MAX_SESSIONS + 5 {
            store.create(Arc::new("b".into())).unwrap();
        }
        assert_eq!(store.len(), MAX_SESSIONS);
        assert!(
            store.get(&first.id).is_none(),
            "the least recently used session goes first"
        );
    }

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
