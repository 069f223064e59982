//! [`RegistryError`]: everything the service can answer instead of a
//! result, from the storage layer or the service. The HTTP API maps each
//! variant to a status and a stable code (`http::problem`), the web UI to
//! its own pages.

use std::path::PathBuf;

use skilldeck::Diagnostic;

use crate::names::NameError;

/// The `Retry-After` (seconds) of a 503 `registry-busy` or
/// `registry-request-timeout`.
pub const BUSY_RETRY_AFTER_SECS: u64 = 2;

/// Everything that can go wrong in the registry.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// No token, or a token the registry does not know.
    #[error("authentication required: {0}")]
    Unauthorized(&'static str),
    /// Too many failed authentications from this client (or with this
    /// token prefix): wait `retry_after` seconds.
    #[error("too many failed authentications; retry after {retry_after} s")]
    TooManyAttempts {
        /// Seconds to wait (the `Retry-After` header).
        retry_after: u64,
    },
    /// A rate limit of this principal was hit (test runs): wait
    /// `retry_after` seconds; `code` is stable.
    #[error("{detail}")]
    RateLimited {
        /// Stable kebab-case code.
        code: &'static str,
        /// What was limited, at which rate.
        detail: String,
        /// Seconds to wait (the `Retry-After` header).
        retry_after: u64,
    },
    /// A request's arguments were refused by their schema before anything
    /// ran: the failing field's JSON pointer and why.
    #[error("{detail}")]
    InvalidArguments {
        /// The JSON pointer of the failing field (`/` for the whole value).
        pointer: String,
        /// What is wrong, naming the field.
        detail: String,
    },
    /// A protection this request needs is not available on this server
    /// (the sandbox of test runs): nothing ran; `detail` says what is
    /// missing; `code` is stable.
    #[error("{detail}")]
    Unavailable {
        /// Stable kebab-case code.
        code: &'static str,
        /// What is missing and what to do.
        detail: String,
    },
    /// The registry could not serve the request in its bounds: a row lock,
    /// a database connection, a write slot or the request's own time ran
    /// out (another writer, perhaps a stalled replica, holds what it
    /// needs). Nothing of an unfinished write was kept; retry after
    /// `retry_after` seconds. `code` is stable (`registry-busy`,
    /// `registry-request-timeout`).
    #[error("{detail}")]
    Busy {
        /// Stable kebab-case code.
        code: &'static str,
        /// What ran out, and its bound.
        detail: String,
        /// Seconds to wait (the `Retry-After` header).
        retry_after: u64,
    },
    /// The token is valid but its scopes do not allow this.
    #[error("forbidden: {0}")]
    Forbidden(String),
    /// Nothing at this name.
    #[error("{0} not found")]
    NotFound(String),
    /// The path exists but not with this HTTP method.
    #[error("this method is not allowed on this path")]
    MethodNotAllowed,
    /// The request is malformed; `code` is stable.
    #[error("{detail}")]
    BadRequest {
        /// Stable kebab-case code.
        code: &'static str,
        /// What is wrong.
        detail: String,
    },
    /// The request conflicts with what is stored; `code` is stable.
    #[error("{detail}")]
    Conflict {
        /// Stable kebab-case code.
        code: &'static str,
        /// What conflicts.
        detail: String,
    },
    /// The content is well-formed but refused by a rule (a signature that
    /// does not verify, a signer not registered, a risk audit over the
    /// threshold); `code` is stable.
    #[error("{detail}")]
    Unprocessable {
        /// Stable kebab-case code.
        code: &'static str,
        /// What was refused and what to do next.
        detail: String,
    },
    /// The risk audit rated the package at or above the registry's
    /// threshold: the findings that count, each naming its file and line.
    #[error("the risk audit refused the package ({verdict}, refused at {threshold} or worse): {}", .findings.iter().map(|f| format!("{}:{}: {} {}", f.file, f.line.unwrap_or(0), f.severity, f.code)).collect::<Vec<_>>().join("; "))]
    RiskRefused {
        /// The verdict.
        verdict: String,
        /// The threshold in force.
        threshold: String,
        /// The findings at or above the threshold.
        findings: Vec<crate::wire::WireFinding>,
    },
    /// The package was refused: each diagnostic names its file.
    #[error("the package was refused: {}", .0.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("; "))]
    Refused(Vec<Diagnostic>),
    /// A body over its cap.
    #[error("the request body is over the limit of {limit} bytes")]
    TooLarge {
        /// The cap, in bytes.
        limit: usize,
    },
    /// A version's blob is not in the store (never served as empty).
    #[error("blob {0} is missing from the store")]
    BlobMissing(String),
    /// A blob's bytes do not match its content address.
    #[error("blob {0} does not match its digest")]
    BlobCorrupt(String),
    /// The database failed (a lock or pool timeout is
    /// [`Busy`](RegistryError::Busy) instead).
    #[error("database: {0}")]
    Database(sqlx::Error),
    /// Migrations failed.
    #[error("database migration: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// The blob store failed.
    #[error("blob store: {0}")]
    Store(#[from] object_store::Error),
    /// A local file operation failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The configuration is unusable (a bad URL, a missing setting).
    #[error("configuration: {0}")]
    Config(String),
    /// Stored data could not be read back (a broken invariant).
    #[error("internal: {0}")]
    Internal(String),
}

impl RegistryError {
    /// A 400 with a stable code.
    pub fn bad_request(code: &'static str, detail: impl Into<String>) -> RegistryError {
        RegistryError::BadRequest {
            code,
            detail: detail.into(),
        }
    }

    /// A 409 with a stable code.
    pub fn conflict(code: &'static str, detail: impl Into<String>) -> RegistryError {
        RegistryError::Conflict {
            code,
            detail: detail.into(),
        }
    }

    /// A 422 with a stable code.
    pub fn unprocessable(code: &'static str, detail: impl Into<String>) -> RegistryError {
        RegistryError::Unprocessable {
            code,
            detail: detail.into(),
        }
    }

    /// A 503 `registry-busy` with the registry's `Retry-After`.
    pub fn busy(detail: impl Into<String>) -> RegistryError {
        RegistryError::Busy {
            code: "registry-busy",
            detail: detail.into(),
            retry_after: BUSY_RETRY_AFTER_SECS,
        }
    }

    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> RegistryError {
        RegistryError::Io {
            path: path.into(),
            source,
        }
    }
}

/// PostgreSQL's `lock_not_available` (a `lock_timeout` ran out, or a
/// `NOWAIT` lock was taken).
const PG_LOCK_NOT_AVAILABLE: &str = "55P03";
/// PostgreSQL's `query_canceled` (a `statement_timeout` ran out).
const PG_QUERY_CANCELED: &str = "57014";
/// PostgreSQL's `idle_in_transaction_session_timeout`: the server ended a
/// session idle in its transaction.
const PG_IDLE_IN_TRANSACTION_TIMEOUT: &str = "25P03";
/// SQLite's primary result codes `SQLITE_BUSY` and `SQLITE_LOCKED` (the
/// low byte of an extended code).
const SQLITE_BUSY: i64 = 5;
const SQLITE_LOCKED: i64 = 6;

/// Whether a database error is a timeout of the registry's own bounds.
fn timed_out(e: &sqlx::Error) -> Option<&'static str> {
    match e {
        sqlx::Error::PoolTimedOut => Some("no database connection was free in time"),
        sqlx::Error::Database(db) => {
            let code = db.code()?;
            match code.as_ref() {
                PG_LOCK_NOT_AVAILABLE => Some("a database lock was not granted in time"),
                PG_QUERY_CANCELED => Some("a database statement ran out of time"),
                PG_IDLE_IN_TRANSACTION_TIMEOUT => {
                    Some("the database ended a transaction that sat idle too long")
                }
                other => match other.parse::<i64>() {
                    Ok(c) if (c & 0xff) == SQLITE_BUSY || (c & 0xff) == SQLITE_LOCKED => {
                        Some("the database was locked by another writer past the lock timeout")
                    }
                    _ => None,
                },
            }
        }
        _ => None,
    }
}

impl From<sqlx::Error> for RegistryError {
    fn from(e: sqlx::Error) -> Self {
        match timed_out(&e) {
            Some(what) => {
                tracing::warn!(error = %e, "registry: database busy");
                RegistryError::busy(format!(
                    "{what} (another write holds it, or the database is overloaded); nothing was changed, retry later"
                ))
            }
            None => RegistryError::Database(e),
        }
    }
}

impl From<NameError> for RegistryError {
    fn from(e: NameError) -> Self {
        RegistryError::bad_request("registry-invalid-name", e.to_string())
    }
}

impl From<serde_json::Error> for RegistryError {
    fn from(e: serde_json::Error) -> Self {
        RegistryError::Internal(format!("stored JSON: {e}"))
    }
}
