//! [`Registry`]: the service every face calls. Cheap to clone (one `Arc`).
//! Opening it connects the database, runs the migrations and opens the
//! blob store.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::error::RegistryError;
use crate::service::cache::TtlCache;
use crate::service::config::{MAX_CACHE_ENTRIES, RegistryConfig, RegistryLimits};
use crate::service::fresh::Scope;
use crate::service::principal::Principal;
use crate::service::staging::Staging;
use crate::service::state::{AuthEntry, CachedAgent, Rendered, SearchState};
use crate::service::store::BlobStore;
use crate::service::throttle::FailedAuthThrottle;
use crate::storage::audit;
use crate::storage::db::{Db, Write};

/// The registry service: one value every face calls (cheap to clone).
/// It decides authorization from the caller's [`Principal`] and writes
/// the audit line of every change; the storage layer below it runs the
/// SQL.
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
    /// The database (SQLite or PostgreSQL), through the storage layer.
    pub db: Db,
    /// The blob store.
    pub store: BlobStore,
    /// Caps and TTLs.
    pub limits: RegistryLimits,
    /// This replica's view of the generations: what each cache scope's
    /// newest write is, and when it was last confirmed.
    pub fresh: Arc<crate::service::fresh::Fresh>,
    /// Resolved sets and locks per agent.
    pub agents: TtlCache<CachedAgent>,
    /// Rendered catalogs per agent, format and budget.
    pub catalogs: TtlCache<Rendered>,
    /// Verified tokens: sha256 hex (or `id:<token id>`) → principal and
    /// expiry.
    pub auth: TtlCache<AuthEntry>,
    /// Failed authentications per client address and token prefix (this
    /// process's side; the shared count is in the database).
    pub throttle: FailedAuthThrottle,
    /// The search index over the latest versions, with the database
    /// generation it was built at.
    pub search: Mutex<Option<Arc<SearchState>>>,
    /// Parsed skills for catalogs, by `namespace/name@version` (immutable).
    pub parsed: Mutex<HashMap<String, Arc<skilldeck::Skill>>>,
    /// This process's publish staging folder (removed when dropped).
    pub staging: Staging,
    /// What the risk audit refuses.
    pub trust: crate::service::config::TrustPolicy,
    /// How a version's stored report is made.
    pub report: crate::service::config::ReportPolicy,
    /// The runner of test runs, once the binary supplied one.
    pub test_runner: std::sync::OnceLock<Arc<dyn crate::service::runner::TestRunner>>,
    /// Test runs per principal.
    pub test_runs: crate::service::rate::RateLimiter,
    /// What the anonymous well-known index lists, once the binary set it
    /// (else nothing).
    pub well_known: std::sync::OnceLock<crate::service::config::WellKnownPolicy>,
    /// The rendered well-known index.
    pub well_known_index: TtlCache<Rendered>,
}

impl Registry {
    /// Connects the database, runs the migrations, opens the store.
    pub async fn open(config: RegistryConfig) -> Result<Registry, RegistryError> {
        let db = Db::open(
            &config.database_url,
            config.limits.max_db_connections,
            &config.limits.db,
        )
        .await?;
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
        let generation = db.generation().await?;
        let fresh = Arc::new(crate::service::fresh::Fresh::new(
            &db,
            generation,
            config.limits.consistency_bound,
        ));
        fresh.spawn(&db);
        let ttl = config.limits.catalog_cache_ttl;
        let auth_ttl = config.limits.auth_cache_ttl;
        Ok(Registry {
            inner: Arc::new(Inner {
                db,
                fresh,
                store,
                agents: TtlCache::new("agents", ttl, MAX_CACHE_ENTRIES),
                catalogs: TtlCache::new("catalogs", ttl, MAX_CACHE_ENTRIES),
                auth: TtlCache::new("auth", auth_ttl, MAX_CACHE_ENTRIES),
                throttle: FailedAuthThrottle::new(
                    config.limits.max_failed_auth,
                    config.limits.failed_auth_window,
                    config.limits.failed_auth_probe_interval,
                ),
                test_runner: std::sync::OnceLock::new(),
                well_known: std::sync::OnceLock::new(),
                well_known_index: TtlCache::new("well-known", ttl, 4),
                test_runs: crate::service::rate::RateLimiter::new(
                    config.limits.test_run.per_minute,
                ),
                limits: config.limits,
                search: Mutex::new(None),
                parsed: Mutex::new(HashMap::new()),
                staging,
                trust: config.trust,
                report: config.report,
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

    /// Starts a write (see [`Db::begin_write`]): writes are serialised
    /// and each gets a fresh number, its audit id.
    pub(crate) async fn begin_write(&self) -> Result<Write, RegistryError> {
        self.inner.db.begin_write().await
    }

    /// Writes the audit line of a change, inside its write.
    pub(crate) async fn audit_in(
        w: &mut Write,
        actor: &Principal,
        action: &str,
        target: &str,
        detail: serde_json::Value,
    ) -> Result<(), RegistryError> {
        audit::insert(w, &actor.actor(), action, target, &detail).await
    }

    /// Commits a write that touched `scopes`: recorded (and notified to
    /// the other replicas) in its transaction, applied to this replica's
    /// caches before it returns (read-your-writes here; the other
    /// replicas within [`RegistryLimits::consistency_bound`]).
    pub(crate) async fn commit_scoped(
        &self,
        w: Write,
        scopes: &[Scope],
    ) -> Result<(), RegistryError> {
        let generation = w.generation();
        let texts: Vec<String> = scopes.iter().map(Scope::text).collect();
        w.commit(&texts).await?;
        self.inner.fresh.invalidate(generation, scopes);
        if scopes.contains(&Scope::All) {
            // Memory only: the floors already keep these from being served.
            self.inner.agents.clear();
            self.inner.catalogs.clear();
            self.inner.auth.clear();
        }
        Ok(())
    }

    /// Before a read uses a cache: this replica's view of the other
    /// replicas' writes is at most [`RegistryLimits::consistency_bound`]
    /// old (checked now when it is not).
    pub(crate) async fn ensure_fresh(&self) -> Result<(), RegistryError> {
        self.inner.fresh.ensure(&self.inner.db).await
    }

    /// Every write up to `generation` (a client's `Skilldeck-Generation`)
    /// is applied here before the request is answered.
    pub async fn at_least(&self, generation: i64) -> Result<(), RegistryError> {
        self.inner.fresh.at_least(&self.inner.db, generation).await
    }

    /// The generation this replica's answers are valid at now (the
    /// `Skilldeck-Generation` of answers without one of their own).
    pub fn served_generation(&self) -> i64 {
        self.inner.fresh.served().max(self.inner.fresh.known())
    }

    /// The database generation: bumped by every write.
    pub(crate) async fn generation(&self) -> Result<i64, RegistryError> {
        self.inner.db.generation().await
    }
}
