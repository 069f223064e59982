//! The generation of the last write per cache scope (`generations`, written
//! by each write's commit in `db`), and the listener that receives the
//! notification every write sends on PostgreSQL (see `service::fresh`).

use crate::error::RegistryError;
use crate::storage::db::{CHANNEL, Db};

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
