//! Readiness (`/readyz`): whether this replica can serve, as a load
//! balancer asks it. Liveness (`/healthz`) asks nothing of the backends:
//! a replica whose database is down is alive (restarting it would not
//! help) but not ready (it should get no traffic).
//!
//! Each check is bounded by [`READY_CHECK_TIMEOUT`]: a probe that hangs
//! is a failed probe, answered in time.

use std::future::Future;

use crate::error::RegistryError;
use crate::service::config::READY_CHECK_TIMEOUT;
use crate::service::registry::Registry;
use crate::wire::{Readiness, ReadyCheck};

/// `check` within [`READY_CHECK_TIMEOUT`], as a [`ReadyCheck`].
async fn bounded<T>(
    what: &str,
    check: impl Future<Output = Result<T, RegistryError>>,
) -> (ReadyCheck, Option<T>) {
    match tokio::time::timeout(READY_CHECK_TIMEOUT, check).await {
        Ok(Ok(value)) => (
            ReadyCheck {
                ok: true,
                detail: None,
            },
            Some(value),
        ),
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "readiness: the {what} failed");
            (
                ReadyCheck {
                    ok: false,
                    detail: Some(format!("the {what} failed; see the server log")),
                },
                None,
            )
        }
        Err(_) => (
            ReadyCheck {
                ok: false,
                detail: Some(format!(
                    "the {what} did not answer within {} ms",
                    READY_CHECK_TIMEOUT.as_millis()
                )),
            },
            None,
        ),
    }
}

impl Registry {
    /// Whether this replica is ready: the database answers a bounded
    /// query, every migration this build knows is applied, the blob store
    /// answers. Never an error: a failed check is part of the answer.
    pub async fn readiness(&self) -> Readiness {
        let db = &self.inner.db;
        let ((database, missing), (store, _)) = tokio::join!(
            bounded("database", db.missing_migrations()),
            bounded("blob store", self.inner.store.probe()),
        );
        let migrations = match missing {
            None => ReadyCheck {
                ok: false,
                detail: Some("unknown: the database did not answer".to_owned()),
            },
            Some(m) if m.is_empty() => ReadyCheck {
                ok: true,
                detail: None,
            },
            Some(m) => ReadyCheck {
                ok: false,
                detail: Some(format!(
                    "migrations {} of this build are not applied; restart a replica of this version to run them",
                    m.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
                )),
            },
        };
        Readiness {
            ready: database.ok && migrations.ok && store.ok,
            database,
            migrations,
            store,
        }
    }
}

/// A write this process began and then stopped working on, holding the
/// write lock with its transaction idle: what a replica paused mid-write
/// (SIGSTOP, a VM pause, a partition) looks like to the database. For the
/// fault tests; no face calls it.
#[doc(hidden)]
pub struct StalledWrite(crate::storage::db::Write);

impl Registry {
    /// Begins a write and returns it unfinished (see [`StalledWrite`]).
    #[doc(hidden)]
    pub async fn stall_in_write(&self) -> Result<StalledWrite, RegistryError> {
        Ok(StalledWrite(self.begin_write().await?))
    }
}

impl StalledWrite {
    /// Tries to commit the stalled write: an error once the database has
    /// ended its session (the idle-in-transaction timeout).
    #[doc(hidden)]
    pub async fn resume(self) -> Result<(), RegistryError> {
        // It touched nothing a cache holds.
        self.0.commit(&[]).await
    }
}
