//! [`Db`]: the database (SQLite or PostgreSQL through sqlx `any`) and
//! [`Write`]: one write transaction.

use sqlx::any::{AnyPoolOptions, install_default_drivers};
use sqlx::{Any, AnyConnection, AnyPool, Transaction};

use crate::error::RegistryError;

/// The database: a connection pool. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Db {
    pool: AnyPool,
    /// The PostgreSQL URL (for the notification listener); `None` on
    /// SQLite.
    postgres: Option<std::sync::Arc<str>>,
}

/// One write: a transaction whose first statement bumped the database
/// generation. Dropped without [`commit`](Write::commit), it rolls back.
pub(crate) struct Write {
    tx: Transaction<'static, Any>,
    generation: i64,
    postgres: bool,
}

/// Now, as times are stored ([`time_text`]).
pub(crate) fn now() -> String {
    time_text(chrono::Utc::now())
}

/// How a time is stored: RFC 3339 in UTC with microseconds (they sort as
/// text). The one rule for every stored time.
pub(crate) fn time_text(t: chrono::DateTime<chrono::Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

/// A stored count or size as `i64` (the column type), saturating.
pub(crate) fn to_i64(n: impl TryInto<i64>) -> i64 {
    n.try_into().unwrap_or(i64::MAX)
}

/// A stored count or size back as `u64` (a negative one is 0).
pub(crate) fn to_u64(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

impl Db {
    /// Connects `url` (`sqlite:` or `postgres:`), turns on WAL mode on
    /// SQLite and runs the migrations.
    pub(crate) async fn open(url: &str, max_connections: u32) -> Result<Db, RegistryError> {
        install_default_drivers();
        if !(url.starts_with("sqlite:")
            || url.starts_with("postgres:")
            || url.starts_with("postgresql:"))
        {
            return Err(RegistryError::Config(
                "the database URL must start with sqlite: or postgres:".to_owned(),
            ));
        }
        let pool = AnyPoolOptions::new()
            .max_connections(max_connections)
            .connect(url)
            .await
            .map_err(|e| RegistryError::Config(format!("cannot open the database: {e}")))?;
        if url.starts_with("sqlite:") {
            // Readers never wait for the writer in WAL mode; the setting is
            // kept in the database file. Without it the registry still
            // works (slower under load), so a refusal is only logged.
            if let Err(e) = sqlx::query("PRAGMA journal_mode=WAL")
                .fetch_optional(&pool)
                .await
            {
                tracing::warn!(error = %e, "SQLite refused WAL mode; continuing in its default mode");
            }
        }
        sqlx::migrate!("./migrations").run(&pool).await?;
        let postgres = (!url.starts_with("sqlite:")).then(|| std::sync::Arc::from(url));
        Ok(Db { pool, postgres })
    }

    /// The pool, for the statements of this layer.
    pub(super) fn pool(&self) -> &AnyPool {
        &self.pool
    }

    /// The PostgreSQL URL, for the notification listener (`None` on
    /// SQLite: every write is in this process).
    pub(crate) fn postgres_url(&self) -> Option<&str> {
        self.postgres.as_deref()
    }

    /// A connection of the pool, for a statement shared with [`Write`].
    pub(super) async fn acquire(&self) -> Result<sqlx::pool::PoolConnection<Any>, RegistryError> {
        Ok(self.pool.acquire().await?)
    }

    /// Starts a write: a transaction whose first statement bumps the
    /// database generation (a row lock on PostgreSQL, the write lock on
    /// SQLite), so writes are serialised and each gets a fresh number
    /// (the audit id).
    pub(crate) async fn begin_write(&self) -> Result<Write, RegistryError> {
        let mut tx = self.pool.begin().await?;
        let generation: i64 = sqlx::query_scalar(
            "UPDATE registry_state SET generation = generation + 1 WHERE id = 1 RETURNING generation",
        )
        .fetch_one(&mut *tx)
        .await?;
        Ok(Write {
            tx,
            generation,
            postgres: self.postgres.is_some(),
        })
    }

    /// The database generation: bumped by every write.
    pub(crate) async fn generation(&self) -> Result<i64, RegistryError> {
        Ok(
            sqlx::query_scalar("SELECT generation FROM registry_state WHERE id = 1")
                .fetch_one(&self.pool)
                .await?,
        )
    }
}

impl Write {
    /// The generation this write bumped the database to (its audit id).
    pub(crate) fn generation(&self) -> i64 {
        self.generation
    }

    /// The transaction's connection, for the statements of this layer.
    pub(super) fn conn(&mut self) -> &mut AnyConnection {
        &mut self.tx
    }

    /// Makes the write visible, recording first that it touched the
    /// cache `scopes` (and, on PostgreSQL, notifying every replica at
    /// commit).
    pub(crate) async fn commit(mut self, scopes: &[String]) -> Result<(), RegistryError> {
        crate::storage::generations::record(&mut self.tx, self.postgres, self.generation, scopes)
            .await?;
        Ok(self.tx.commit().await?)
    }

    /// Drops the write (nothing of it stays, the generation included).
    pub(crate) async fn rollback(self) -> Result<(), RegistryError> {
        Ok(self.tx.rollback().await?)
    }
}
