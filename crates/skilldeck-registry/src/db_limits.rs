//! The database's bounds ([`DbLimits`]): lock, statement and
//! idle-in-transaction timeouts, the wait for a connection, and the write
//! queue. A leaf (the storage layer applies them, the service's config
//! carries them), each with a named default.

use std::time::Duration;

/// How long a statement waits for a row lock (PostgreSQL `lock_timeout`;
/// SQLite's `busy_timeout`) before it fails and the request is answered
/// 503 `registry-busy` with `Retry-After`. Writes are serialised on one
/// row: a healthy write holds it for milliseconds, so a wait this long
/// means the holder is stalled (a paused replica, a partition).
pub const DB_LOCK_TIMEOUT: Duration = Duration::from_secs(5);
/// Longest one statement may run (PostgreSQL `statement_timeout`): far
/// above any query of the registry (they are indexed lookups and page
/// reads), so only a runaway or starved statement is cut.
pub const DB_STATEMENT_TIMEOUT: Duration = Duration::from_secs(30);
/// Longest a transaction may sit idle between its statements (PostgreSQL
/// `idle_in_transaction_session_timeout`): the server ends the session of
/// a replica paused mid-write, which releases the locks it held. The
/// registry never waits on anything else inside a transaction (blobs are
/// stored before it begins).
pub const DB_IDLE_IN_TRANSACTION_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest a request waits for a database connection of the pool before
/// it is answered 503 `registry-busy` with `Retry-After`.
pub const DB_ACQUIRE_TIMEOUT: Duration = Duration::from_secs(5);
/// Writes one registry process runs at once (each holds a connection
/// while it waits for the write lock); the rest of the pool stays free
/// for reads, so writers stuck behind a lock cannot starve them.
pub const MAX_CONCURRENT_WRITES: usize = 4;
/// Writes that may wait for one of the `MAX_CONCURRENT_WRITES` slots
/// (without a connection); one more is answered 503 `registry-busy` at
/// once, and a queued write waits at most `DB_LOCK_TIMEOUT` for its slot.
pub const MAX_QUEUED_WRITES: usize = 64;
/// The database's timeouts and the write queue: what keeps one stalled
/// writer (a paused replica holding the write lock) from stalling every
/// other request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbLimits {
    /// `DB_LOCK_TIMEOUT`.
    pub lock_timeout: Duration,
    /// `DB_STATEMENT_TIMEOUT` (PostgreSQL).
    pub statement_timeout: Duration,
    /// `DB_IDLE_IN_TRANSACTION_TIMEOUT` (PostgreSQL).
    pub idle_in_transaction_timeout: Duration,
    /// `DB_ACQUIRE_TIMEOUT`.
    pub acquire_timeout: Duration,
    /// `MAX_CONCURRENT_WRITES` (at least 1, and below the pool size so
    /// reads keep a connection).
    pub max_concurrent_writes: usize,
    /// `MAX_QUEUED_WRITES`.
    pub max_queued_writes: usize,
}

impl Default for DbLimits {
    fn default() -> Self {
        DbLimits {
            lock_timeout: DB_LOCK_TIMEOUT,
            statement_timeout: DB_STATEMENT_TIMEOUT,
            idle_in_transaction_timeout: DB_IDLE_IN_TRANSACTION_TIMEOUT,
            acquire_timeout: DB_ACQUIRE_TIMEOUT,
            max_concurrent_writes: MAX_CONCURRENT_WRITES,
            max_queued_writes: MAX_QUEUED_WRITES,
        }
    }
}
