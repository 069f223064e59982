//! [`Db`]: the database (SQLite or PostgreSQL through sqlx `any`) and
//! [`Write`]: one write transaction.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use sqlx::any::{AnyPoolOptions, install_default_drivers};
use sqlx::migrate::Migrator;
use sqlx::{Any, AnyConnection, AnyPool, Transaction};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::db_limits::DbLimits;
use crate::error::RegistryError;

/// The registry's migrations (run at open; `/readyz` checks they are all
/// applied).
static MIGRATOR: Migrator = sqlx::migrate!("./migrations");

/// The database: a connection pool and the gate writes pass. Cheap to
/// clone.
#[derive(Clone)]
pub(crate) struct Db {
    pool: AnyPool,
    gate: Arc<WriteGate>,
    /// The PostgreSQL URL (for the notification listener); `None` on
    /// SQLite.
    postgres: Option<std::sync::Arc<str>>,
}

/// One write: a transaction whose first statement bumped the database
/// generation. Dropped without [`commit`](Write::commit), it rolls back.
pub(crate) struct Write {
    tx: Transaction<'static, Any>,
    generation: i64,
    /// Its slot of the write gate, given back when the write ends.
    _slot: OwnedSemaphorePermit,
    /// On PostgreSQL (its commit notifies the other replicas).
    postgres: bool,
}

/// The write gate: at most `slots` writes hold a connection at once (the
/// rest of the pool stays free for reads), at most `max_waiting` wait
/// for a slot, each at most `wait`. A write past either bound is answered
/// 503 `registry-busy` at once instead of holding a connection while it
/// waits for a lock another writer (perhaps a paused replica) holds.
struct WriteGate {
    slots: Arc<Semaphore>,
    waiting: AtomicUsize,
    max_waiting: usize,
    wait: std::time::Duration,
}

/// Takes one place in the gate's queue; gives it back when dropped.
struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl WriteGate {
    async fn enter(&self) -> Result<OwnedSemaphorePermit, RegistryError> {
        if let Ok(slot) = self.slots.clone().try_acquire_owned() {
            return Ok(slot);
        }
        let ahead = self.waiting.fetch_add(1, Ordering::SeqCst);
        let _place = Waiting(&self.waiting);
        if ahead >= self.max_waiting {
            return Err(RegistryError::busy(format!(
                "{ahead} writes are already waiting on this server (the limit); nothing was changed, retry later"
            )));
        }
        match tokio::time::timeout(self.wait, self.slots.clone().acquire_owned()).await {
            Ok(Ok(slot)) => Ok(slot),
            // The semaphore is never closed; a timeout is the only way
            // here.
            _ => Err(RegistryError::busy(format!(
                "no write slot of this server was free within {} ms (other writes are stalled); nothing was changed, retry later",
                self.wait.as_millis()
            ))),
        }
    }
}

/// On SQLite, an exclusive lock (`flock`) on `<database file>.migrate-lock`
/// for as long as the returned file is open: sqlx's SQLite migrator takes
/// no lock of its own (on PostgreSQL it takes an advisory lock), so two
/// processes started together on one new database file would both run
/// the first migration and one would fail ("table already exists").
/// `None` for a database that is no file.
async fn sqlite_migration_lock(url: &str) -> Result<Option<std::fs::File>, RegistryError> {
    let rest = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))
        .unwrap_or(url);
    let path = rest.split('?').next().unwrap_or_default();
    if path.is_empty() || path == ":memory:" {
        return Ok(None);
    }
    let lock_path = std::path::PathBuf::from(format!("{path}.migrate-lock"));
    tokio::task::spawn_blocking(move || {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| RegistryError::io(&lock_path, e))?;
        file.lock().map_err(|e| RegistryError::io(&lock_path, e))?;
        Ok(Some(file))
    })
    .await
    .map_err(|e| RegistryError::Internal(format!("migration lock task: {e}")))?
}

/// The per-session bounds every pooled connection gets (see
/// [`DbLimits`]): on PostgreSQL `lock_timeout`, `statement_timeout` and
/// `idle_in_transaction_session_timeout`; on SQLite `busy_timeout` (its
/// lock wait).
async fn set_session_limits(
    conn: &mut AnyConnection,
    postgres: bool,
    limits: &DbLimits,
) -> Result<(), sqlx::Error> {
    let ms = |d: std::time::Duration| format!("{}ms", d.as_millis().max(1));
    if postgres {
        sqlx::query(
            "SELECT set_config('lock_timeout', $1, false), \
                    set_config('statement_timeout', $2, false), \
                    set_config('idle_in_transaction_session_timeout', $3, false)",
        )
        .bind(ms(limits.lock_timeout))
        .bind(ms(limits.statement_timeout))
        .bind(ms(limits.idle_in_transaction_timeout))
        .execute(&mut *conn)
        .await?;
    } else {
        let busy = limits.lock_timeout.as_millis().max(1);
        sqlx::query(sqlx::AssertSqlSafe(format!("PRAGMA busy_timeout = {busy}")))
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
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
    /// SQLite and runs the migrations (on a connection of their own,
    /// without the session limits: a long migration, or one waiting for
    /// another replica's migration lock, is not a stalled request).
    pub(crate) async fn open(
        url: &str,
        max_connections: u32,
        limits: &DbLimits,
    ) -> Result<Db, RegistryError> {
        install_default_drivers();
        if !(url.starts_with("sqlite:")
            || url.starts_with("postgres:")
            || url.starts_with("postgresql:"))
        {
            return Err(RegistryError::Config(
                "the database URL must start with sqlite: or postgres:".to_owned(),
            ));
        }
        let postgres = !url.starts_with("sqlite:");
        let cannot_open = |e| RegistryError::Config(format!("cannot open the database: {e}"));
        let migrating = AnyPoolOptions::new()
            .max_connections(1)
            .connect(url)
            .await
            .map_err(cannot_open)?;
        if !postgres {
            // Readers never wait for the writer in WAL mode; the setting is
            // kept in the database file. Without it the registry still
            // works (slower under load), so a refusal is only logged.
            if let Err(e) = sqlx::query("PRAGMA journal_mode=WAL")
                .fetch_optional(&migrating)
                .await
            {
                tracing::warn!(error = %e, "SQLite refused WAL mode; continuing in its default mode");
            }
        }
        let lock = if postgres {
            None
        } else {
            sqlite_migration_lock(url).await?
        };
        MIGRATOR.run(&migrating).await?;
        drop(lock);
        migrating.close().await;
        let session = limits.clone();
        let pool = AnyPoolOptions::new()
            .max_connections(max_connections)
            .acquire_timeout(limits.acquire_timeout)
            .after_connect(move |conn, _| {
                let session = session.clone();
                Box::pin(async move { set_session_limits(conn, postgres, &session).await })
            })
            .connect(url)
            .await
            .map_err(cannot_open)?;
        // Writes leave at least one connection to reads.
        let slots = limits
            .max_concurrent_writes
            .min(
                usize::try_from(max_connections)
                    .unwrap_or(usize::MAX)
                    .saturating_sub(1),
            )
            .max(1);
        Ok(Db {
            pool,
            postgres: postgres.then(|| Arc::from(url)),
            gate: Arc::new(WriteGate {
                slots: Arc::new(Semaphore::new(slots)),
                waiting: AtomicUsize::new(0),
                max_waiting: limits.max_queued_writes,
                wait: limits.lock_timeout,
            }),
        })
    }

    /// Whether the database answers and every migration of this build is
    /// applied: the versions that are not (empty when current).
    pub(crate) async fn missing_migrations(&self) -> Result<Vec<i64>, RegistryError> {
        let applied: Vec<i64> =
            sqlx::query_scalar("SELECT version FROM _sqlx_migrations WHERE success")
                .fetch_all(&self.pool)
                .await?;
        Ok(MIGRATOR
            .iter()
            .filter(|m| m.migration_type.is_up_migration())
            .map(|m| m.version)
            .filter(|v| !applied.contains(v))
            .collect())
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
    ///
    /// It first takes a slot of the write gate ([`DbLimits`]): past the
    /// gate's bounds it is answered 503 `registry-busy` at once.
    pub(crate) async fn begin_write(&self) -> Result<Write, RegistryError> {
        let slot = self.gate.enter().await?;
        let mut tx = self.pool.begin().await?;
        let generation: i64 = sqlx::query_scalar(
            "UPDATE registry_state SET generation = generation + 1 WHERE id = 1 RETURNING generation",
        )
        .fetch_one(&mut *tx)
        .await?;
        Ok(Write {
            tx,
            generation,
            _slot: slot,
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
        record_scopes(&mut self.tx, self.postgres, self.generation, scopes).await?;
        Ok(self.tx.commit().await?)
    }

    /// Drops the write (nothing of it stays, the generation included).
    pub(crate) async fn rollback(self) -> Result<(), RegistryError> {
        Ok(self.tx.rollback().await?)
    }
}

/// The PostgreSQL channel every write notifies on (payload: the write's
/// generation, then its scopes, separated by spaces).
pub(crate) const CHANNEL: &str = "skilldeck_registry";

/// Records, inside a write, that it touched `scopes` at `generation`, and
/// on PostgreSQL queues the notification (sent by PostgreSQL at commit,
/// in commit order, never for a rolled back write).
async fn record_scopes(
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
