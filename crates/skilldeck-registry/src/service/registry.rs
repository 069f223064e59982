//! [`Registry`]: the service every face calls. Cheap to clone (one `Arc`).
//! Opening it connects the database, runs the migrations and opens the
//! blob store.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use sqlx::any::{AnyPoolOptions, install_default_drivers};
use sqlx::{Any, AnyPool, Transaction};

use crate::service::cache::TtlCache;
use crate::service::config::{MAX_CACHE_ENTRIES, RegistryConfig, RegistryLimits};
use crate::service::error::RegistryError;
use crate::service::principal::Principal;
use crate::service::staging::Staging;
use crate::service::state::{AuthEntry, CachedAgent, Rendered, SearchState};
use crate::service::store::BlobStore;
use crate::service::throttle::FailedAuthThrottle;

/// The registry service. See the [module documentation](crate::service).
#[derive(Clone)]
pub struct Registry {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("store", &self.inner.store)
            .finish_non_exhaustive()
    }
}

/// The shared state behind a [`Registry`].
pub(crate) struct Inner {
    /// The database (SQLite or PostgreSQL through sqlx `any`).
    pub db: AnyPool,
    /// The blob store.
    pub store: BlobStore,
    /// Caps and TTLs.
    pub limits: RegistryLimits,
    /// Resolved sets and locks per agent.
    pub agents: TtlCache<CachedAgent>,
    /// Rendered catalogs per agent, format and budget.
    pub catalogs: TtlCache<Rendered>,
    /// Verified tokens: sha256 hex (or `id:<token id>`) → principal and
    /// expiry.
    pub auth: TtlCache<AuthEntry>,
    /// Failed authentications per client address and token prefix.
    pub throttle: FailedAuthThrottle,
    /// The search index over the latest versions, with the database
    /// generation it was built at.
    pub search: Mutex<Option<Arc<SearchState>>>,
    /// Parsed skills for catalogs, by `namespace/name@version` (immutable).
    pub parsed: Mutex<HashMap<String, Arc<skilldeck::Skill>>>,
    /// This process's publish staging folder (removed when dropped).
    pub staging: Staging,
}

impl Registry {
    /// Connects the database, runs the migrations, opens the store.
    pub async fn open(config: RegistryConfig) -> Result<Registry, RegistryError> {
        install_default_drivers();
        let url = config.database_url.as_str();
        if !(url.starts_with("sqlite:")
            || url.starts_with("postgres:")
            || url.starts_with("postgresql:"))
        {
            return Err(RegistryError::Config(
                "the database URL must start with sqlite: or postgres:".to_owned(),
            ));
        }
        let db = AnyPoolOptions::new()
            .max_connections(config.limits.max_db_connections)
            .connect(url)
            .await
            .map_err(|e| RegistryError::Config(format!("cannot open the database: {e}")))?;
        if url.starts_with("sqlite:") {
            // Readers never wait for the writer in WAL mode; the setting is
            // kept in the database file. Without it the registry still
            // works (slower under load), so a refusal is only logged.
            if let Err(e) = sqlx::query("PRAGMA journal_mode=WAL")
                .fetch_optional(&db)
                .await
            {
                tracing::warn!(error = %e, "SQLite refused WAL mode; continuing in its default mode");
            }
        }
        sqlx::migrate!("./migrations").run(&db).await?;
        let store = BlobStore::open(&config.store_url)?;
        let root = config.staging_dir.clone();
        let (staging, swept) = tokio::task::spawn_blocking(move || Staging::open(&root))
            .await
            .map_err(|e| RegistryError::Internal(format!("staging task: {e}")))??;
        if swept.removed > 0 {
            tracing::info!(
                path = %config.staging_dir.display(),
                removed = swept.removed,
                "removed publish staging folders that stopped registry processes left"
            );
        }
        let ttl = config.limits.catalog_cache_ttl;
        let auth_ttl = config.limits.auth_cache_ttl;
        Ok(Registry {
            inner: Arc::new(Inner {
                db,
                store,
                agents: TtlCache::new(ttl, MAX_CACHE_ENTRIES),
                catalogs: TtlCache::new(ttl, MAX_CACHE_ENTRIES),
                auth: TtlCache::new(auth_ttl, MAX_CACHE_ENTRIES),
                throttle: FailedAuthThrottle::new(
                    config.limits.max_failed_auth,
                    config.limits.failed_auth_window,
                ),
                limits: config.limits,
                search: Mutex::new(None),
                parsed: Mutex::new(HashMap::new()),
                staging,
            }),
        })
    }

    /// This process's publish staging subfolder.
    pub fn staging_dir(&self) -> &std::path::Path {
        self.inner.staging.dir()
    }

    /// The caps and TTLs in force.
    pub fn limits(&self) -> &RegistryLimits {
        &self.inner.limits
    }

    /// Starts a write: a transaction whose first statement bumps the
    /// database generation (a row lock on PostgreSQL, the write lock on
    /// SQLite), so writes are serialised and each gets a fresh number
    /// (the audit id). Returns the transaction and that number.
    pub(crate) async fn begin_write(
        &self,
    ) -> Result<(Transaction<'static, Any>, i64), RegistryError> {
        let mut tx = self.inner.db.begin().await?;
        let generation: i64 = sqlx::query_scalar(
            "UPDATE registry_state SET generation = generation + 1 WHERE id = 1 RETURNING generation",
        )
        .fetch_one(&mut *tx)
        .await?;
        Ok((tx, generation))
    }

    /// Writes the audit line of a change, inside its transaction.
    pub(crate) async fn audit_in(
        tx: &mut Transaction<'static, Any>,
        id: i64,
        actor: &Principal,
        action: &str,
        target: &str,
        detail: serde_json::Value,
    ) -> Result<(), RegistryError> {
        sqlx::query(
            "INSERT INTO audit (id, at, actor, action, target, detail) VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(id)
        .bind(now())
        .bind(actor.actor())
        .bind(action.to_owned())
        .bind(target.to_owned())
        .bind(detail.to_string())
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    /// Commits a write and drops what this process cached (other replicas
    /// see it within [`RegistryLimits::catalog_cache_ttl`]).
    pub(crate) async fn commit(&self, tx: Transaction<'static, Any>) -> Result<(), RegistryError> {
        tx.commit().await?;
        self.inner.agents.clear();
        self.inner.catalogs.clear();
        Ok(())
    }

    /// The database generation: bumped by every write.
    pub(crate) async fn generation(&self) -> Result<i64, RegistryError> {
        Ok(
            sqlx::query_scalar("SELECT generation FROM registry_state WHERE id = 1")
                .fetch_one(&self.inner.db)
                .await?,
        )
    }
}

/// Now, RFC 3339 in UTC with microseconds (sorts as text).
pub(crate) fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}
