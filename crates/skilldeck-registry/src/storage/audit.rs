//! The audit log: one row per change, written inside the change's
//! [`Write`] (its id is the write's generation).

use sqlx::Row;

use crate::error::RegistryError;
use crate::storage::db::{Db, Write, now};
use crate::wire::AuditEntry;

/// Writes the audit line of the change `w` makes.
pub(crate) async fn insert(
    w: &mut Write,
    actor: &str,
    action: &str,
    target: &str,
    detail: &serde_json::Value,
) -> Result<(), RegistryError> {
    let id = w.generation();
    sqlx::query(
        "INSERT INTO audit (id, at, actor, action, target, detail) VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(id)
    .bind(now())
    .bind(actor.to_owned())
    .bind(action.to_owned())
    .bind(target.to_owned())
    .bind(detail.to_string())
    .execute(w.conn())
    .await?;
    Ok(())
}

/// At most `limit` entries with an id below `before`, newest first.
pub(crate) async fn page(
    db: &Db,
    before: i64,
    limit: i64,
) -> Result<Vec<AuditEntry>, RegistryError> {
    let rows = sqlx::query(
        "SELECT id, at, actor, action, target, detail FROM audit WHERE id < $1 ORDER BY id DESC LIMIT $2",
    )
    .bind(before)
    .bind(limit)
    .fetch_all(db.pool())
    .await?;
    rows.iter()
        .map(|r| {
            let detail: String = r.try_get("detail")?;
            Ok(AuditEntry {
                id: r.try_get("id")?,
                at: r.try_get("at")?,
                actor: r.try_get("actor")?,
                action: r.try_get("action")?,
                target: r.try_get("target")?,
                detail: serde_json::from_str(&detail)?,
            })
        })
        .collect()
}

/// At most `limit` entries with an id below `before`, newest first, of
/// `actor` (the token's name, with or without the `(id)` the log adds)
/// and `action` (each: any when empty).
pub(crate) async fn page_filtered(
    db: &Db,
    before: i64,
    actor: &str,
    action: &str,
    limit: i64,
) -> Result<Vec<AuditEntry>, RegistryError> {
    let rows = sqlx::query(
        "SELECT id, at, actor, action, target, detail FROM audit WHERE id < $1 \
         AND ($2 = '' OR actor = $2 OR substr(actor, 1, length($2) + 2) = $2 || ' (') AND ($3 = '' OR action = $3) ORDER BY id DESC LIMIT $4",
    )
    .bind(before)
    .bind(actor.to_owned())
    .bind(action.to_owned())
    .bind(limit)
    .fetch_all(db.pool())
    .await?;
    rows.iter()
        .map(|r| {
            let detail: String = r.try_get("detail")?;
            Ok(AuditEntry {
                id: r.try_get("id")?,
                at: r.try_get("at")?,
                actor: r.try_get("actor")?,
                action: r.try_get("action")?,
                target: r.try_get("target")?,
                detail: serde_json::from_str(&detail)?,
            })
        })
        .collect()
}

/// The distinct actions in the log (for a filter's choices), at most `limit`.
pub(crate) async fn actions(db: &Db, limit: i64) -> Result<Vec<String>, RegistryError> {
    Ok(
        sqlx::query_scalar("SELECT DISTINCT action FROM audit ORDER BY action LIMIT $1")
            .bind(limit)
            .fetch_all(db.pool())
            .await?,
    )
}
