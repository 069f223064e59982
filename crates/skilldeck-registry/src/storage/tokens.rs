//! Bearer tokens: the SHA-256 hex of each secret (never the secret), its
//! scopes as text, where it came from and its lifecycle times.

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use crate::error::RegistryError;
use crate::storage::db::{Db, Write};

/// A token as listed (never its hash).
pub(crate) struct TokenRecord {
    /// Its id (`tok_...`).
    pub id: String,
    /// Its name.
    pub name: String,
    /// Its scopes, space-separated.
    pub scopes: String,
    /// Where it came from (`api`, `admin-file`).
    pub source: String,
    /// When it was made.
    pub created_at: String,
    /// When it stops working, if ever.
    pub expires_at: Option<String>,
    /// When it was last used, if ever.
    pub last_used_at: Option<String>,
    /// When it was revoked, if it was.
    pub revoked_at: Option<String>,
}

/// A token found by its hash, for authentication.
pub(crate) struct TokenAuth {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// The stored hash (compared again in constant time by the caller).
    pub hash: String,
    /// Its scopes, space-separated.
    pub scopes: String,
    /// When it stops working, if ever.
    pub expires_at: Option<String>,
    /// When it was revoked, if it was.
    pub revoked_at: Option<String>,
}

/// A token to store.
pub(crate) struct NewToken<'a> {
    /// Its id.
    pub id: &'a str,
    /// Its name.
    pub name: &'a str,
    /// The SHA-256 hex of the secret.
    pub hash: &'a str,
    /// Its scopes, space-separated.
    pub scopes: &'a str,
    /// When it is made.
    pub created_at: &'a str,
    /// Where it came from.
    pub source: &'a str,
    /// When it stops working, if ever.
    pub expires_at: Option<&'a str>,
}

const RECORD_COLUMNS: &str =
    "id, name, scopes, source, created_at, expires_at, last_used_at, revoked_at";

fn record_of(row: &AnyRow) -> Result<TokenRecord, RegistryError> {
    Ok(TokenRecord {
        id: row.try_get("id")?,
        name: row.try_get("name")?,
        scopes: row.try_get("scopes")?,
        source: row.try_get("source")?,
        created_at: row.try_get("created_at")?,
        expires_at: row.try_get("expires_at")?,
        last_used_at: row.try_get("last_used_at")?,
        revoked_at: row.try_get("revoked_at")?,
    })
}

/// The token whose secret hashes to `hash`, or `None`.
pub(crate) async fn by_hash(db: &Db, hash: &str) -> Result<Option<TokenAuth>, RegistryError> {
    let row = sqlx::query(
        "SELECT id, name, hash, scopes, expires_at, revoked_at FROM tokens WHERE hash = $1",
    )
    .bind(hash.to_owned())
    .fetch_optional(db.pool())
    .await?;
    row.map(|r| {
        Ok(TokenAuth {
            id: r.try_get("id")?,
            name: r.try_get("name")?,
            hash: r.try_get("hash")?,
            scopes: r.try_get("scopes")?,
            expires_at: r.try_get("expires_at")?,
            revoked_at: r.try_get("revoked_at")?,
        })
    })
    .transpose()
}

/// Records that token `id` was used at `at`.
pub(crate) async fn set_last_used(db: &Db, id: &str, at: &str) -> Result<(), RegistryError> {
    sqlx::query("UPDATE tokens SET last_used_at = $1 WHERE id = $2")
        .bind(at.to_owned())
        .bind(id.to_owned())
        .execute(db.pool())
        .await?;
    Ok(())
}

/// Token `id`'s expiry and revocation time (`None`: no such token).
pub(crate) async fn lifecycle(
    db: &Db,
    id: &str,
) -> Result<Option<(Option<String>, Option<String>)>, RegistryError> {
    let row = sqlx::query("SELECT expires_at, revoked_at FROM tokens WHERE id = $1")
        .bind(id.to_owned())
        .fetch_optional(db.pool())
        .await?;
    row.map(|r| Ok((r.try_get("expires_at")?, r.try_get("revoked_at")?)))
        .transpose()
}

/// Stores a new token.
pub(crate) async fn insert(w: &mut Write, t: &NewToken<'_>) -> Result<(), RegistryError> {
    sqlx::query(
        "INSERT INTO tokens (id, name, hash, scopes, created_at, source, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(t.id.to_owned())
    .bind(t.name.to_owned())
    .bind(t.hash.to_owned())
    .bind(t.scopes.to_owned())
    .bind(t.created_at.to_owned())
    .bind(t.source.to_owned())
    .bind(t.expires_at.map(str::to_owned))
    .execute(w.conn())
    .await?;
    Ok(())
}

/// Inserts `t` unless a token with its hash is stored already (replicas
/// registering one admin token file at once): whether it was inserted.
pub(crate) async fn insert_unless_known(
    w: &mut Write,
    t: &NewToken<'_>,
) -> Result<bool, RegistryError> {
    let done = sqlx::query(
        "INSERT INTO tokens (id, name, hash, scopes, created_at, source, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7) \
         ON CONFLICT (hash) DO NOTHING",
    )
    .bind(t.id.to_owned())
    .bind(t.name.to_owned())
    .bind(t.hash.to_owned())
    .bind(t.scopes.to_owned())
    .bind(t.created_at.to_owned())
    .bind(t.source.to_owned())
    .bind(t.expires_at.map(str::to_owned))
    .execute(w.conn())
    .await?;
    Ok(done.rows_affected() == 1)
}

/// The id of the token with this hash and when it was revoked, inside
/// the write `w`.
pub(crate) async fn id_by_hash_in(
    w: &mut Write,
    hash: &str,
) -> Result<Option<(String, Option<String>)>, RegistryError> {
    let row = sqlx::query("SELECT id, revoked_at FROM tokens WHERE hash = $1")
        .bind(hash.to_owned())
        .fetch_optional(w.conn())
        .await?;
    row.map(|r| Ok((r.try_get("id")?, r.try_get("revoked_at")?)))
        .transpose()
}

/// Revokes at `at` every live token from `source` but `keep`; returns
/// how many.
pub(crate) async fn revoke_source_except(
    w: &mut Write,
    source: &str,
    keep: &str,
    at: &str,
) -> Result<u64, RegistryError> {
    Ok(sqlx::query(
        "UPDATE tokens SET revoked_at = $1 WHERE source = $2 AND id <> $3 AND revoked_at IS NULL",
    )
    .bind(at.to_owned())
    .bind(source.to_owned())
    .bind(keep.to_owned())
    .execute(w.conn())
    .await?
    .rows_affected())
}

/// At most `limit` tokens with an id after `after`, by id.
pub(crate) async fn page(
    db: &Db,
    after: &str,
    limit: i64,
) -> Result<Vec<TokenRecord>, RegistryError> {
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {RECORD_COLUMNS} FROM tokens WHERE id > $1 ORDER BY id LIMIT $2"
    )))
    .bind(after.to_owned())
    .bind(limit)
    .fetch_all(db.pool())
    .await?
    .iter()
    .map(record_of)
    .collect()
}

/// Token `id` when its id is after `after` (a page of one token).
pub(crate) async fn one_after(
    db: &Db,
    id: &str,
    after: &str,
) -> Result<Vec<TokenRecord>, RegistryError> {
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {RECORD_COLUMNS} FROM tokens WHERE id = $1 AND id > $2"
    )))
    .bind(id.to_owned())
    .bind(after.to_owned())
    .fetch_all(db.pool())
    .await?
    .iter()
    .map(record_of)
    .collect()
}

async fn get_on(conn: &mut AnyConnection, id: &str) -> Result<Option<TokenRecord>, RegistryError> {
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {RECORD_COLUMNS} FROM tokens WHERE id = $1"
    )))
    .bind(id.to_owned())
    .fetch_optional(conn)
    .await?
    .as_ref()
    .map(record_of)
    .transpose()
}

/// Token `id`, inside a write (read after its revocation).
pub(crate) async fn get_in(w: &mut Write, id: &str) -> Result<Option<TokenRecord>, RegistryError> {
    get_on(w.conn(), id).await
}

/// Revokes token `id` at `at` unless it is revoked already; false when
/// nothing changed.
pub(crate) async fn revoke_live(w: &mut Write, id: &str, at: &str) -> Result<bool, RegistryError> {
    let changed =
        sqlx::query("UPDATE tokens SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL")
            .bind(at.to_owned())
            .bind(id.to_owned())
            .execute(w.conn())
            .await?
            .rows_affected();
    Ok(changed > 0)
}

/// Every live token's id and scopes, inside a write.
pub(crate) async fn live_scopes_in(w: &mut Write) -> Result<Vec<(String, String)>, RegistryError> {
    let rows = sqlx::query("SELECT id, scopes FROM tokens WHERE revoked_at IS NULL")
        .fetch_all(w.conn())
        .await?;
    rows.iter()
        .map(|r| Ok((r.try_get("id")?, r.try_get("scopes")?)))
        .collect()
}
