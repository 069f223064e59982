//! Failed authentications per throttle key and window, shared by every
//! replica (`auth_failures`). Each statement is its own short transaction
//! on the pool: a count is no registry write (no generation bump, no
//! write slot), and it touches only its own row.

use crate::error::RegistryError;
use crate::storage::db::Db;

/// Counts one failure of `key` in the window starting at `window_start`;
/// returns the failures of `key` since `since` (the previous window's
/// start), every replica's included.
pub(crate) async fn count(
    db: &Db,
    key: &str,
    window_start: i64,
    since: i64,
) -> Result<i64, RegistryError> {
    sqlx::query(
        "INSERT INTO auth_failures (key, window_start, failures) VALUES ($1, $2, 1) \
         ON CONFLICT (key, window_start) DO UPDATE SET failures = auth_failures.failures + 1",
    )
    .bind(key.to_owned())
    .bind(window_start)
    .execute(db.pool())
    .await?;
    let total: Option<i64> = sqlx::query_scalar(
        "SELECT CAST(SUM(failures) AS BIGINT) FROM auth_failures WHERE key = $1 AND window_start >= $2",
    )
    .bind(key.to_owned())
    .bind(since)
    .fetch_one(db.pool())
    .await?;
    Ok(total.unwrap_or(0))
}

/// Deletes the counts of windows that started before `before`.
pub(crate) async fn prune(db: &Db, before: i64) -> Result<u64, RegistryError> {
    Ok(
        sqlx::query("DELETE FROM auth_failures WHERE window_start < $1")
            .bind(before)
            .execute(db.pool())
            .await?
            .rows_affected(),
    )
}
