//! The web UI's sessions, in the database so that every replica sees the
//! same ones (no session affinity behind a load balancer): a session made
//! by a sign-in on one replica is used, and ended at sign-out, on any
//! other. The store holds the SHA-256 of the session id (never the cookie
//! value) and the principal the sign-in produced (never a token). The
//! replicas also share the UI's signing keys ([`Registry::ui_shared_key`]).
//!
//! The UI (a face) owns the lifetimes and passes them in
//! ([`UiSessionTimes`]); the service owns the rows.

use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::error::RegistryError;
use crate::service::principal::{Principal, PrincipalKind, Scope, report_caller};
use crate::service::registry::Registry;
use crate::service::tokens::random_bytes;
use crate::storage::db::{now, time_text};
use crate::storage::ui_sessions::{self as stored, NewSession};

/// Bytes of a shared UI key.
pub const UI_KEY_BYTES: usize = 32;

/// `method` of a session signed in with an API token.
const METHOD_TOKEN: &str = "token";
/// `method` of a session signed in with single sign-on.
const METHOD_OIDC: &str = "oidc";

/// How a UI session was signed in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignIn {
    /// With an API token: the session holds the token's principal (never
    /// the token), which stays valid only while the token does.
    Token,
    /// With OpenID Connect single sign-on: the identity provider's
    /// subject and (verified) email.
    Oidc {
        /// The `sub` claim.
        subject: String,
        /// The `email` claim, if any.
        email: Option<String>,
    },
}

/// The lifetimes of the UI's sessions (the UI's limits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UiSessionTimes {
    /// A session unused this long is gone.
    pub idle_timeout: Duration,
    /// A session older than this is gone, however busy.
    pub max_age: Duration,
    /// A use is recorded at most this often (a page view does not write
    /// every time); the idle timeout is exact to within this.
    pub touch_interval: Duration,
    /// Sessions stored at most; past it the least recently used go.
    pub max_sessions: u64,
}

/// A live UI session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UiSession {
    /// Who is signed in.
    pub principal: Principal,
    /// How.
    pub sign_in: SignIn,
    /// The one-shot message left by an earlier request (taken when read
    /// with `take_flash`).
    pub flash: Option<String>,
}

fn before(d: Duration) -> String {
    let now = chrono::Utc::now();
    let then = chrono::Duration::from_std(d)
        .ok()
        .and_then(|d| now.checked_sub_signed(d))
        .unwrap_or(chrono::DateTime::<chrono::Utc>::MIN_UTC);
    time_text(then)
}

fn session_key(id: &str) -> String {
    skilldeck::secret::secret_hash(id)
}

impl Registry {
    /// Stores a new session `id` (the caller's fresh random cookie value)
    /// for `principal`. Expired sessions are swept first; past
    /// `max_sessions` the least recently used go.
    pub async fn ui_session_create(
        &self,
        id: &str,
        principal: &Principal,
        sign_in: &SignIn,
        times: &UiSessionTimes,
    ) -> Result<(), RegistryError> {
        let db = &self.inner.db;
        stored::sweep(db, &before(times.idle_timeout), &before(times.max_age)).await?;
        let held = u64::try_from(stored::count(db).await?).unwrap_or(0);
        if held >= times.max_sessions {
            let excess = held.saturating_sub(times.max_sessions).saturating_add(1);
            stored::evict_oldest(db, i64::try_from(excess).unwrap_or(i64::MAX)).await?;
        }
        let scopes = principal
            .scopes
            .iter()
            .map(Scope::to_string)
            .collect::<Vec<_>>()
            .join(" ");
        let (method, subject, email) = match sign_in {
            SignIn::Token => (METHOD_TOKEN, None, None),
            SignIn::Oidc { subject, email } => {
                (METHOD_OIDC, Some(subject.as_str()), email.as_deref())
            }
        };
        stored::insert(
            db,
            &NewSession {
                id_hash: &session_key(id),
                principal_id: &principal.token_id,
                principal_name: &principal.name,
                scopes: &scopes,
                method,
                subject,
                email,
                now: &now(),
            },
        )
        .await
    }

    /// The live session `id` (not idle past `idle_timeout`, not older
    /// than `max_age`), or `None`. Its use is recorded (at most every
    /// `touch_interval`); with `take_flash` its one-shot message is taken.
    pub async fn ui_session(
        &self,
        id: &str,
        times: &UiSessionTimes,
        take_flash: bool,
    ) -> Result<Option<UiSession>, RegistryError> {
        let db = &self.inner.db;
        let key = session_key(id);
        let Some(row) = stored::alive(
            db,
            &key,
            &before(times.idle_timeout),
            &before(times.max_age),
        )
        .await?
        else {
            return Ok(None);
        };
        if row.last_seen_at < before(times.touch_interval) {
            stored::touch(db, &key, &now()).await?;
        }
        let flash = if take_flash && row.flash.is_some() {
            stored::set_flash(db, &key, None).await?;
            row.flash
        } else {
            None
        };
        let scopes = row
            .scopes
            .split_whitespace()
            .map(Scope::parse)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| RegistryError::Internal(format!("stored session scopes: {e}")))?;
        let sign_in = match row.method.as_str() {
            METHOD_TOKEN => SignIn::Token,
            METHOD_OIDC => SignIn::Oidc {
                subject: row.subject.unwrap_or_default(),
                email: row.email,
            },
            other => {
                return Err(RegistryError::Internal(format!(
                    "stored session sign-in method {other:?}"
                )));
            }
        };
        let _ = row.created_at;
        Ok(Some(UiSession {
            principal: Principal {
                token_id: row.principal_id,
                name: row.principal_name,
                scopes,
            },
            sign_in,
            flash,
        }))
    }

    /// Leaves a one-shot message for the session's next page.
    pub async fn ui_session_flash(&self, id: &str, text: &str) -> Result<(), RegistryError> {
        stored::set_flash(&self.inner.db, &session_key(id), Some(text)).await
    }

    /// Ends a session, for every replica at once (sign-out).
    pub async fn ui_session_end(&self, id: &str) -> Result<(), RegistryError> {
        stored::delete(&self.inner.db, &session_key(id)).await
    }

    /// Whether a session's principal still holds: a token sign-in's token
    /// must still work ([`Registry::still_valid`]); an SSO session lives
    /// as long as the session itself. Reports the caller's kind for the
    /// request log either way.
    pub async fn ui_session_valid(&self, s: &UiSession) -> Result<(), RegistryError> {
        match s.sign_in {
            SignIn::Token => self.still_valid(&s.principal).await,
            SignIn::Oidc { .. } => {
                report_caller(match s.principal.kind() {
                    PrincipalKind::Invalid => PrincipalKind::Invalid,
                    k => k,
                });
                Ok(())
            }
        }
    }

    /// The UI key `name` every replica shares ([`UI_KEY_BYTES`] random
    /// bytes, made by the first replica that asks). Fails closed: no key
    /// without the database and the OS generator.
    pub async fn ui_shared_key(&self, name: &str) -> Result<Vec<u8>, RegistryError> {
        let candidate = URL_SAFE_NO_PAD.encode(random_bytes(UI_KEY_BYTES)?);
        let stored = stored::key(&self.inner.db, name, &candidate, &now()).await?;
        let key = URL_SAFE_NO_PAD
            .decode(stored.as_bytes())
            .map_err(|e| RegistryError::Internal(format!("stored UI key {name:?}: {e}")))?;
        if key.len() != UI_KEY_BYTES {
            return Err(RegistryError::Internal(format!(
                "stored UI key {name:?} has {} bytes, not {UI_KEY_BYTES}",
                key.len()
            )));
        }
        Ok(key)
    }

    /// Writes the audit line of a single sign-on to the UI: who (the
    /// principal the configured rules gave), the identity provider's
    /// subject and email, and the scopes granted.
    pub async fn record_sso_sign_in(
        &self,
        principal: &Principal,
        issuer: &str,
        subject: &str,
        email: Option<&str>,
    ) -> Result<(), RegistryError> {
        let mut w = self.begin_write().await?;
        let scopes: Vec<String> = principal.scopes.iter().map(Scope::to_string).collect();
        Registry::audit_in(
            &mut w,
            principal,
            "ui.sign-in",
            &format!("user:{}", principal.name),
            serde_json::json!({
                "method": "oidc",
                "issuer": issuer,
                "subject": subject,
                "email": email,
                "scopes": scopes,
            }),
        )
        .await?;
        // An audit line only: no cache holds it.
        self.commit_scoped(w, &[]).await
    }

    /// Ends every UI session of a token (on revocation), for every
    /// replica at once.
    pub(crate) async fn end_ui_sessions_of(&self, token_id: &str) -> Result<(), RegistryError> {
        stored::delete_principal(&self.inner.db, token_id).await
    }
}
