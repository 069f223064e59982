//! Freshness of the in-process caches across replicas.
//!
//! Every write bumps the database generation (`registry_state`), records
//! the cache [`Scope`]s it touched in `generations` and, on PostgreSQL,
//! sends them to every replica with `NOTIFY` at commit (in commit order,
//! which is generation order: writes are serialised by the generation row
//! lock). Each replica keeps, per scope, a *floor*: the generation of the
//! newest write it knows touched that scope. A cache entry is tagged with
//! the database generation read before it was computed and is served only
//! while its tag is at least the floor of its scope, so an entry computed
//! before a write is never served after the write is known here, whatever
//! the order of the computation's end and the invalidation (no
//! stale-after-own-write).
//!
//! How soon a replica knows:
//! - its own writes: before the write returns;
//! - another replica's writes: when the notification arrives
//!   (milliseconds); a gap in the generations or a lost listener
//!   connection makes the replica read the scopes changed since the last
//!   generation it applied (`generations`) and drop exactly those;
//! - the fallback when notifications are late or lost without a visible
//!   gap: a background check reads the database generation every half
//!   [`RegistryLimits::consistency_bound`](crate::RegistryLimits), and a
//!   read whose replica has not confirmed its view within the bound
//!   checks it itself before using a cache. A write committed more than
//!   the bound ago is therefore always reflected.
//!
//! On SQLite every write is in this process: floors move at commit and
//! nothing is polled.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use crate::error::RegistryError;
use crate::storage::db::Db;
use crate::storage::generations;

/// What a write touched, for the caches: agents' resolutions, catalogs
/// and locks depend on skills (any skill, through auto-discovery) and on
/// their agent; verified tokens on tokens (and agents, whose deletion
/// revokes their tokens).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Scope {
    /// Everything (a write whose effects are not narrowed down).
    All,
    /// Skills, versions, labels, policies, signers: every agent's
    /// resolution.
    Skills,
    /// Tokens: every verified token.
    Tokens,
    /// One agent: its settings and assignments.
    Agent(String),
}

const AGENT_PREFIX: &str = "agent:";

impl Scope {
    /// The text stored in `generations` and sent in notifications.
    pub fn text(&self) -> String {
        match self {
            Scope::All => "all".to_owned(),
            Scope::Skills => "skills".to_owned(),
            Scope::Tokens => "tokens".to_owned(),
            Scope::Agent(id) => format!("{AGENT_PREFIX}{id}"),
        }
    }

    /// The scope of a stored or received text; an unknown one is
    /// [`Scope::All`] (a newer replica's scope: drop everything rather
    /// than keep something stale).
    pub fn parse(text: &str) -> Scope {
        match text {
            "skills" => Scope::Skills,
            "tokens" => Scope::Tokens,
            _ => match text.strip_prefix(AGENT_PREFIX) {
                Some(id) if !id.is_empty() => Scope::Agent(id.to_owned()),
                _ => Scope::All,
            },
        }
    }
}

/// Most per-agent floors remembered; past it they are folded into the
/// global floor (every cached agent is recomputed once: safe).
const MAX_AGENT_FLOORS: usize = 100_000;

/// How long a check waits for the listener to deliver the notifications
/// of generations it already sees in the database before it reads the
/// changed scopes itself.
const NOTIFY_GRACE: Duration = Duration::from_millis(100);

/// How long the listener waits before reconnecting after a failure.
const LISTEN_RETRY: Duration = Duration::from_millis(200);

#[derive(Debug, Default)]
struct Floors {
    all: i64,
    skills: i64,
    tokens: i64,
    agents: HashMap<String, i64>,
}

/// One replica's view of the generations (see the module text).
#[derive(Debug)]
pub(crate) struct Fresh {
    postgres: bool,
    bound: Duration,
    floors: Mutex<Floors>,
    /// The newest generation known to be committed (its own writes,
    /// notifications, checks): every write up to it is visible to a read
    /// started now.
    known: std::sync::atomic::AtomicI64,
    /// Every write up to this generation has been applied to the floors
    /// (a watch, so a check can wait for the listener).
    applied: tokio::sync::watch::Sender<i64>,
    /// When the view was last confirmed against the database.
    confirmed: Mutex<Option<Instant>>,
    /// One check at a time (others wait for it and reuse its result).
    checking: tokio::sync::Mutex<()>,
    /// Dropped with this value: stops the background tasks.
    _stop: tokio::sync::watch::Sender<()>,
    stop: tokio::sync::watch::Receiver<()>,
}

fn guard<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Fresh {
    /// The view of a replica on `db`, starting at `generation` (read at
    /// open, after every migration).
    pub fn new(db: &Db, generation: i64, bound: Duration) -> Fresh {
        let (stop_tx, stop) = tokio::sync::watch::channel(());
        let (applied, _) = tokio::sync::watch::channel(generation);
        Fresh {
            postgres: db.postgres_url().is_some(),
            bound,
            floors: Mutex::new(Floors::default()),
            known: std::sync::atomic::AtomicI64::new(generation),
            applied,
            confirmed: Mutex::new(None),
            checking: tokio::sync::Mutex::new(()),
            _stop: stop_tx,
            stop,
        }
    }

    /// The generation an answer computed or validated now is valid at:
    /// every write up to it that this replica knows of is applied.
    pub fn served(&self) -> i64 {
        if self.postgres {
            *self.applied.borrow()
        } else {
            self.known()
        }
    }

    /// The newest generation known to be committed.
    pub fn known(&self) -> i64 {
        self.known.load(std::sync::atomic::Ordering::Acquire)
    }

    fn raise_known(&self, generation: i64) {
        self.known
            .fetch_max(generation, std::sync::atomic::Ordering::AcqRel);
    }

    /// The floor of an agent's resolution, catalogs and lock.
    pub fn agent_floor(&self, id: &str) -> i64 {
        let f = guard(&self.floors);
        f.all
            .max(f.skills)
            .max(f.agents.get(id).copied().unwrap_or(0))
    }

    /// The floor of what depends on skills only (the well-known index).
    pub fn skills_floor(&self) -> i64 {
        let f = guard(&self.floors);
        f.all.max(f.skills)
    }

    /// The floor of verified tokens.
    pub fn auth_floor(&self) -> i64 {
        let f = guard(&self.floors);
        f.all.max(f.tokens)
    }

    /// Applies a write at `generation` that touched `scopes`.
    pub fn invalidate(&self, generation: i64, scopes: &[Scope]) {
        {
            let mut f = guard(&self.floors);
            for scope in scopes {
                match scope {
                    Scope::All => f.all = f.all.max(generation),
                    Scope::Skills => f.skills = f.skills.max(generation),
                    Scope::Tokens => f.tokens = f.tokens.max(generation),
                    Scope::Agent(id) => {
                        let slot = f.agents.entry(id.clone()).or_insert(0);
                        *slot = (*slot).max(generation);
                    }
                }
            }
            if f.agents.len() > MAX_AGENT_FLOORS {
                let top = f.agents.values().copied().max().unwrap_or(0);
                f.all = f.all.max(top);
                f.agents.clear();
            }
        }
        self.raise_known(generation);
        if !self.postgres {
            self.applied.send_modify(|a| *a = (*a).max(generation));
        }
    }

    /// A notification (or a recovered scope) at `generation`: applied, and
    /// the contiguous watermark moved. A gap (a notification missed)
    /// returns false: the caller recovers from the database.
    fn apply_notified(&self, generation: i64, scopes: &[Scope]) -> bool {
        let applied = *self.applied.borrow();
        if generation <= applied {
            return true;
        }
        self.invalidate(generation, scopes);
        if generation == applied + 1 {
            self.applied.send_modify(|a| *a = (*a).max(generation));
            true
        } else {
            false
        }
    }

    /// Reads the scopes written after the watermark and applies them; the
    /// watermark becomes the newest of them (or `at_least`).
    async fn recover(&self, db: &Db, at_least: i64) -> Result<(), RegistryError> {
        let from = *self.applied.borrow();
        let changed = generations::changed_since(db, from).await?;
        let mut top = at_least;
        for (scope, generation) in &changed {
            self.invalidate(*generation, &[Scope::parse(scope)]);
            top = top.max(*generation);
        }
        if !changed.is_empty() {
            tracing::debug!(
                from,
                to = top,
                scopes = changed.len(),
                "caches caught up from the database (notifications missed or late)"
            );
        }
        self.raise_known(top);
        self.applied.send_modify(|a| *a = (*a).max(top));
        Ok(())
    }

    /// Confirms the view against the database: reads its generation and,
    /// when the listener has not delivered up to it within
    /// [`NOTIFY_GRACE`], catches up from `generations`. One check at a
    /// time; a caller that waited for another's reuses it.
    pub async fn check(&self, db: &Db, min: Option<i64>) -> Result<(), RegistryError> {
        let asked = Instant::now();
        let _one = self.checking.lock().await;
        let satisfied = |s: &Fresh| {
            guard(&s.confirmed).is_some_and(|at| at >= asked)
                && min.is_none_or(|m| *s.applied.borrow() >= m)
        };
        if satisfied(self) {
            return Ok(());
        }
        let started = Instant::now();
        let generation = db.generation().await?;
        self.raise_known(generation);
        let mut applied = self.applied.subscribe();
        let delivered = tokio::time::timeout(NOTIFY_GRACE, applied.wait_for(|a| *a >= generation))
            .await
            .is_ok_and(|r| r.is_ok());
        if !delivered {
            self.recover(db, generation).await?;
        }
        *guard(&self.confirmed) = Some(started);
        Ok(())
    }

    /// Before a read uses a cache: on PostgreSQL, the view must have been
    /// confirmed within the bound (else it is checked now).
    pub async fn ensure(&self, db: &Db) -> Result<(), RegistryError> {
        if !self.postgres {
            return Ok(());
        }
        let fresh = guard(&self.confirmed).is_some_and(|at| at.elapsed() < self.bound);
        if fresh {
            return Ok(());
        }
        self.check(db, None).await
    }

    /// Before answering a client that has seen generation `min` (its
    /// `Skilldeck-Generation` header): every write up to `min` is applied
    /// here first (read-your-writes and monotonic reads across replicas).
    /// A generation the database has not reached (a client of another
    /// database) is not waited for.
    pub async fn at_least(&self, db: &Db, min: i64) -> Result<(), RegistryError> {
        if !self.postgres || *self.applied.borrow() >= min {
            return Ok(());
        }
        let mut applied = self.applied.subscribe();
        if tokio::time::timeout(NOTIFY_GRACE, applied.wait_for(|a| *a >= min))
            .await
            .is_ok_and(|r| r.is_ok())
        {
            return Ok(());
        }
        self.check(db, Some(min)).await
    }

    /// Starts the listener and the periodic check (PostgreSQL only); both
    /// stop when this value is dropped.
    pub fn spawn(self: &Arc<Self>, db: &Db) {
        let Some(url) = db.postgres_url().map(str::to_owned) else {
            return;
        };
        let weak = Arc::downgrade(self);
        tokio::spawn(listen_loop(
            weak.clone(),
            db.clone(),
            url,
            self.stop.clone(),
        ));
        tokio::spawn(check_loop(
            weak,
            db.clone(),
            self.bound / 2,
            self.stop.clone(),
        ));
    }
}

/// Receives notifications; on a lost connection or a gap, catches up from
/// the database.
async fn listen_loop(
    fresh: Weak<Fresh>,
    db: Db,
    url: String,
    mut stop: tokio::sync::watch::Receiver<()>,
) {
    loop {
        let listener = tokio::select! {
            l = generations::listen(&url) => l,
            _ = stop.changed() => return,
        };
        let mut listener = match listener {
            Ok(l) => l,
            Err(e) => {
                tracing::warn!(error = %e, "cannot listen for other replicas' writes; checking the database generation instead until it works");
                tokio::select! {
                    _ = tokio::time::sleep(LISTEN_RETRY) => continue,
                    _ = stop.changed() => return,
                }
            }
        };
        // Listening from here: whatever was written before is read from
        // the database once.
        if let Some(f) = fresh.upgrade()
            && let Err(e) = f.recover(&db, 0).await
        {
            tracing::warn!(error = %e, "cannot read the generations after listening");
        }
        loop {
            let next = tokio::select! {
                n = listener.try_recv() => n,
                _ = stop.changed() => return,
            };
            let Some(f) = fresh.upgrade() else { return };
            match next {
                Ok(Some(n)) => {
                    let Some((generation, scopes)) = generations::parse(n.payload()) else {
                        continue;
                    };
                    let scopes: Vec<Scope> = scopes.iter().map(|s| Scope::parse(s)).collect();
                    if !f.apply_notified(generation, &scopes)
                        && let Err(e) = f.recover(&db, generation).await
                    {
                        tracing::warn!(error = %e, "cannot catch up after a missed notification; dropping every cache");
                        f.invalidate(generation, &[Scope::All]);
                    }
                }
                Ok(None) => {
                    // The connection was lost and re-established: what was
                    // sent meanwhile is gone; read it from the database.
                    if let Err(e) = f.recover(&db, 0).await {
                        tracing::warn!(error = %e, "cannot catch up after the listener reconnected");
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "the listener for other replicas' writes failed; reconnecting");
                    break;
                }
            }
        }
    }
}

/// Confirms the view every `period` (half the bound), so reads rarely
/// check themselves.
async fn check_loop(
    fresh: Weak<Fresh>,
    db: Db,
    period: Duration,
    mut stop: tokio::sync::watch::Receiver<()>,
) {
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = stop.changed() => return,
        }
        let Some(f) = fresh.upgrade() else { return };
        if let Err(e) = f.check(&db, None).await {
            tracing::debug!(error = %e, "cannot confirm the generation (reads will check themselves)");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Scope;

    #[test]
    fn a_scope_survives_its_text_and_an_unknown_scope_drops_everything() {
        for s in [
            Scope::All,
            Scope::Skills,
            Scope::Tokens,
            Scope::Agent("a-1".to_owned()),
        ] {
            assert_eq!(Scope::parse(&s.text()), s);
        }
        assert_eq!(Scope::parse("agent:"), Scope::All);
        assert_eq!(Scope::parse("labels-v9"), Scope::All);
    }
}
