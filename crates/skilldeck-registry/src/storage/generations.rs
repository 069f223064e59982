//! The generation of the last write per cache scope (`generations`), the
//! notification every write sends on PostgreSQL, and the listener that
//! receives them (see `service::fresh`).

use sqlx::AnyConnection;

use crate::error::RegistryError;
use crate::storage::db::Db;

/// The PostgreSQL channel every write notifies on (payload: the write's
/// generation, then its scopes, separated by spaces).
pub(crate) const CHANNEL: &str = "skilldeck_registry";

/// Records, inside a write, that it touched `scopes` at `generation`, and
/// on PostgreSQL queues the notification (sent by PostgreSQL at commit,
/// in commit order, never for a rolled back write).
pub(crate) async fn record(
    conn: &mut AnyConnection,
    postgres: bool,
    generation: i64,
    scopes: &[String],
) -> Result<(), RegistryError> {
    for scope in scopes {
        sqlx::query(
            "INSERT INTO generations (scope, generation) VALUES ($1, $2) \
             ON CONFLICT (scope) DO UPDATE SET generation = excluded.generation",
        )
        .bind(scope)
        .bind(generation)
        .execute(&mut *conn)
        .await?;
    }
    if postgres {
        let payload = std::iter::once(generation.to_string())
            .chain(scopes.iter().cloned())
            .collect::<Vec<_>>()
            .join(" ");
        sqlx::query("SELECT 1 FROM (SELECT pg_notify($1, $2)) AS sent")
            .bind(CHANNEL)
            .bind(payload)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

/// Every scope written after `generation`, with the generation of its
/// last write.
pub(crate) async fn changed_since(
    db: &Db,
    generation: i64,
) -> Result<Vec<(String, i64)>, RegistryError> {
    Ok(
        sqlx::query_as("SELECT scope, generation FROM generations WHERE generation > $1")
            .bind(generation)
            .fetch_all(db.pool())
            .await?,
    )
}

/// A listener on [`CHANNEL`] (PostgreSQL only; its own connection).
pub(crate) async fn listen(url: &str) -> Result<sqlx::postgres::PgListener, RegistryError> {
    let mut listener = sqlx::postgres::PgListener::connect(url).await?;
    listener.listen(CHANNEL).await?;
    Ok(listener)
}

/// A notification's generation and scopes (`None` when it is not one of
/// ours).
pub(crate) fn parse(payload: &str) -> Option<(i64, Vec<String>)> {
    let mut parts = payload.split(' ');
    let generation = parts.next()?.parse().ok()?;
    Some((generation, parts.map(str::to_owned).collect()))
}
