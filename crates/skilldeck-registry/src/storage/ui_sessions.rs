//! The web UI's sessions and shared keys (`ui_sessions`, `ui_keys`):
//! rows every replica reads, so no session affinity is needed. A session
//! row is keyed by the SHA-256 hex of its id; times are stored text
//! ([`crate::storage::db::time_text`]), so "alive" is a text comparison.
//! None of these statements is a [`Write`](crate::storage::db::Write): a
//! page view must not bump the database generation (it would drop every
//! replica's catalog caches).

use sqlx::Row;

use crate::error::RegistryError;
use crate::storage::db::Db;

/// A session row as read.
pub(crate) struct SessionRow {
    /// The principal's id (a token id, or `oidc:<subject>`).
    pub principal_id: String,
    /// The principal's name.
    pub principal_name: String,
    /// Its scopes, space-separated.
    pub scopes: String,
    /// `token` or `oidc`.
    pub method: String,
    /// An SSO sign-in's subject.
    pub subject: Option<String>,
    /// An SSO sign-in's email.
    pub email: Option<String>,
    /// When it was made.
    pub created_at: String,
    /// When it was last used (as recorded: at most every touch interval).
    pub last_seen_at: String,
    /// The one-shot message, if one is waiting.
    pub flash: Option<String>,
}

/// A session to store.
pub(crate) struct NewSession<'a> {
    /// SHA-256 hex of the session id.
    pub id_hash: &'a str,
    /// The principal's id.
    pub principal_id: &'a str,
    /// The principal's name.
    pub principal_name: &'a str,
    /// Its scopes, space-separated.
    pub scopes: &'a str,
    /// `token` or `oidc`.
    pub method: &'a str,
    /// An SSO sign-in's subject.
    pub subject: Option<&'a str>,
    /// An SSO sign-in's email.
    pub email: Option<&'a str>,
    /// Now.
    pub now: &'a str,
}

/// Removes the sessions last used before `idle_before` or made before
/// `made_before` (expired everywhere); returns how many.
pub(crate) async fn sweep(
    db: &Db,
    idle_before: &str,
    made_before: &str,
) -> Result<u64, RegistryError> {
    Ok(
        sqlx::query("DELETE FROM ui_sessions WHERE last_seen_at < $1 OR created_at < $2")
            .bind(idle_before.to_owned())
            .bind(made_before.to_owned())
            .execute(db.pool())
            .await?
            .rows_affected(),
    )
}

/// How many sessions are stored.
pub(crate) async fn count(db: &Db) -> Result<i64, RegistryError> {
    Ok(sqlx::query_scalar("SELECT COUNT(*) FROM ui_sessions")
        .fetch_one(db.pool())
        .await?)
}

/// Removes the least recently used `n` sessions.
pub(crate) async fn evict_oldest(db: &Db, n: i64) -> Result<(), RegistryError> {
    sqlx::query(
        "DELETE FROM ui_sessions WHERE id_hash IN \
         (SELECT id_hash FROM ui_sessions ORDER BY last_seen_at ASC LIMIT $1)",
    )
    .bind(n)
    .execute(db.pool())
    .await?;
    Ok(())
}

/// Stores a new session.
pub(crate) async fn insert(db: &Db, s: &NewSession<'_>) -> Result<(), RegistryError> {
    sqlx::query(
        "INSERT INTO ui_sessions (id_hash, principal_id, principal_name, scopes, method, subject, email, created_at, last_seen_at, flash) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, NULL)",
    )
    .bind(s.id_hash.to_owned())
    .bind(s.principal_id.to_owned())
    .bind(s.principal_name.to_owned())
    .bind(s.scopes.to_owned())
    .bind(s.method.to_owned())
    .bind(s.subject.map(str::to_owned))
    .bind(s.email.map(str::to_owned))
    .bind(s.now.to_owned())
    .execute(db.pool())
    .await?;
    Ok(())
}

/// The session with this id hash if it is alive: last used at or after
/// `idle_before` and made at or after `made_before`.
pub(crate) async fn alive(
    db: &Db,
    id_hash: &str,
    idle_before: &str,
    made_before: &str,
) -> Result<Option<SessionRow>, RegistryError> {
    let row = sqlx::query(
        "SELECT principal_id, principal_name, scopes, method, subject, email, created_at, last_seen_at, flash \
         FROM ui_sessions WHERE id_hash = $1 AND last_seen_at >= $2 AND created_at >= $3",
    )
    .bind(id_hash.to_owned())
    .bind(idle_before.to_owned())
    .bind(made_before.to_owned())
    .fetch_optional(db.pool())
    .await?;
    row.map(|r| {
        Ok(SessionRow {
            principal_id: r.try_get("principal_id")?,
            principal_name: r.try_get("principal_name")?,
            scopes: r.try_get("scopes")?,
            method: r.try_get("method")?,
            subject: r.try_get("subject")?,
            email: r.try_get("email")?,
            created_at: r.try_get("created_at")?,
            last_seen_at: r.try_get("last_seen_at")?,
            flash: r.try_get("flash")?,
        })
    })
    .transpose()
}

/// Records a use of the session (its idle timer restarts).
pub(crate) async fn touch(db: &Db, id_hash: &str, now: &str) -> Result<(), RegistryError> {
    sqlx::query("UPDATE ui_sessions SET last_seen_at = $2 WHERE id_hash = $1")
        .bind(id_hash.to_owned())
        .bind(now.to_owned())
        .execute(db.pool())
        .await?;
    Ok(())
}

/// Sets (or clears, with `None`) the session's one-shot message.
pub(crate) async fn set_flash(
    db: &Db,
    id_hash: &str,
    flash: Option<&str>,
) -> Result<(), RegistryError> {
    sqlx::query("UPDATE ui_sessions SET flash = $2 WHERE id_hash = $1")
        .bind(id_hash.to_owned())
        .bind(flash.map(str::to_owned))
        .execute(db.pool())
        .await?;
    Ok(())
}

/// Removes a session (sign-out: gone for every replica at once).
pub(crate) async fn delete(db: &Db, id_hash: &str) -> Result<(), RegistryError> {
    sqlx::query("DELETE FROM ui_sessions WHERE id_hash = $1")
        .bind(id_hash.to_owned())
        .execute(db.pool())
        .await?;
    Ok(())
}

/// Removes every session of a principal (its token was revoked).
pub(crate) async fn delete_principal(db: &Db, principal_id: &str) -> Result<(), RegistryError> {
    sqlx::query("DELETE FROM ui_sessions WHERE principal_id = $1")
        .bind(principal_id.to_owned())
        .execute(db.pool())
        .await?;
    Ok(())
}

/// The shared key `name`: `candidate` is stored when there is none yet
/// (the first replica to ask wins a race; every replica then reads the
/// winner's).
pub(crate) async fn key(
    db: &Db,
    name: &str,
    candidate: &str,
    now: &str,
) -> Result<String, RegistryError> {
    sqlx::query(
        "INSERT INTO ui_keys (name, secret, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING",
    )
    .bind(name.to_owned())
    .bind(candidate.to_owned())
    .bind(now.to_owned())
    .execute(db.pool())
    .await?;
    Ok(
        sqlx::query_scalar("SELECT secret FROM ui_keys WHERE name = $1")
            .bind(name.to_owned())
            .fetch_one(db.pool())
            .await?,
    )
}
