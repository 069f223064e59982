//! `TtlCache`: a small in-process map whose entries are tagged with the
//! database generation they were computed from (`service::fresh`) and
//! expire after a named TTL. An entry is served only while its tag is at
//! least the caller's floor (the newest write known to touch it), so a
//! computation that started before a write is never served after it,
//! even when it ends after the write's invalidation. Rebuilds are single
//! flight: concurrent misses of one key wait for one computation. Every
//! lookup is counted as a hit or a miss under the cache's name
//! (`/metrics`).

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::error::RegistryError;
use crate::service::metrics::metrics;

/// A cached value with its tag.
struct Entry<V> {
    /// When its TTL started (for a value derived from another cached
    /// value: when that one was computed, so TTLs never add up).
    at: Instant,
    /// The database generation it was computed from.
    tag: i64,
    value: Arc<V>,
}

/// One computation in flight, shared by every miss of its key that
/// arrives while it runs with a floor it satisfies.
struct Flight<V> {
    floor: i64,
    cell: tokio::sync::OnceCell<(i64, Arc<V>)>,
}

/// What a computation returns: its tag, when its TTL starts, the value.
pub(crate) struct Computed<V> {
    /// The database generation read before it started.
    pub tag: i64,
    /// When its TTL starts.
    pub at: Instant,
    /// The value.
    pub value: Arc<V>,
}

/// A map of `Arc<V>` by text key, each entry valid for `ttl` and while
/// its tag is at least the floor.
pub(crate) struct TtlCache<V> {
    name: &'static str,
    ttl: Duration,
    max: usize,
    map: Mutex<HashMap<String, Entry<V>>>,
    flights: Mutex<HashMap<String, Arc<Flight<V>>>>,
    computations: AtomicU64,
    joined: AtomicU64,
}

fn guard<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<V> TtlCache<V> {
    /// An empty cache, counted as `name` in the metrics.
    pub fn new(name: &'static str, ttl: Duration, max: usize) -> Self {
        TtlCache {
            name,
            ttl,
            max,
            map: Mutex::new(HashMap::new()),
            flights: Mutex::new(HashMap::new()),
            computations: AtomicU64::new(0),
            joined: AtomicU64::new(0),
        }
    }

    /// The entry at `key` with its tag, when it is younger than the TTL
    /// and its tag is at least `floor`.
    pub fn get(&self, key: &str, floor: i64) -> Option<(i64, Arc<V>)> {
        let found = {
            let map = guard(&self.map);
            map.get(key)
                .filter(|e| e.tag >= floor && e.at.elapsed() < self.ttl)
                .map(|e| (e.tag, Arc::clone(&e.value)))
        };
        metrics().cache_lookup(self.name, found.is_some());
        found
    }

    /// Stores `value` at `key`, unless its tag is below `floor` or below
    /// the tag of the entry there (a slow old computation never replaces
    /// a newer one). A full cache drops its expired entries, then
    /// everything (bounded).
    pub fn insert(&self, key: String, computed: &Computed<V>, floor: i64) {
        if self.ttl.is_zero() || computed.tag < floor {
            return;
        }
        let mut map = guard(&self.map);
        if map.get(&key).is_some_and(|e| e.tag > computed.tag) {
            return;
        }
        if map.len() >= self.max {
            let ttl = self.ttl;
            map.retain(|_, e| e.at.elapsed() < ttl && e.tag >= floor);
            if map.len() >= self.max {
                map.clear();
            }
        }
        map.insert(
            key,
            Entry {
                at: computed.at,
                tag: computed.tag,
                value: Arc::clone(&computed.value),
            },
        );
    }

    /// The entry at `key` (see [`TtlCache::get`]), or the result of one
    /// computation shared by every caller that misses it meanwhile:
    /// `compute` runs only when no computation with a floor at least
    /// `floor` is in flight (a computation started before a newer write
    /// is not joined). A failed or cancelled computation is retried by
    /// the next waiter.
    pub async fn get_or_compute<F, Fut>(
        &self,
        key: &str,
        floor: i64,
        compute: F,
    ) -> Result<(i64, Arc<V>), RegistryError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Computed<V>, RegistryError>>,
    {
        if let Some(hit) = self.get(key, floor) {
            return Ok(hit);
        }
        let flight = {
            let mut flights = guard(&self.flights);
            match flights.get(key) {
                Some(f) if f.floor >= floor => {
                    self.joined.fetch_add(1, Ordering::Relaxed);
                    metrics().cache_rebuild(self.name, true);
                    Arc::clone(f)
                }
                _ => {
                    let f = Arc::new(Flight {
                        floor,
                        cell: tokio::sync::OnceCell::new(),
                    });
                    flights.insert(key.to_owned(), Arc::clone(&f));
                    f
                }
            }
        };
        let result = flight
            .cell
            .get_or_try_init(|| async {
                self.computations.fetch_add(1, Ordering::Relaxed);
                metrics().cache_rebuild(self.name, false);
                let computed = compute().await?;
                self.insert(key.to_owned(), &computed, floor);
                Ok::<_, RegistryError>((computed.tag, computed.value))
            })
            .await
            .map(|(tag, v)| (*tag, Arc::clone(v)));
        let mut flights = guard(&self.flights);
        if flights.get(key).is_some_and(|f| Arc::ptr_eq(f, &flight)) {
            flights.remove(key);
        }
        result
    }

    /// How many computations [`TtlCache::get_or_compute`] has run.
    #[cfg(test)]
    pub fn computations(&self) -> u64 {
        self.computations.load(Ordering::Relaxed)
    }

    /// How many misses joined a computation already in flight.
    #[cfg(test)]
    pub fn joined(&self) -> u64 {
        self.joined.load(Ordering::Relaxed)
    }

    /// Drops every entry (memory: the floors already keep stale entries
    /// from being served).
    pub fn clear(&self) {
        guard(&self.map).clear();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    use super::{Computed, TtlCache};

    fn computed(tag: i64, value: &str) -> Computed<String> {
        Computed {
            tag,
            at: Instant::now(),
            value: Arc::new(value.to_owned()),
        }
    }

    #[test]
    fn an_entry_computed_before_a_write_is_neither_stored_nor_served_after_it() {
        let cache = TtlCache::new("test", Duration::from_secs(60), 10);
        // Computed at generation 4; the write at 5 is applied (floor 5)
        // before the computation ends: not stored.
        cache.insert("a".to_owned(), &computed(4, "old"), 5);
        assert!(cache.get("a", 5).is_none());
        // Stored at 4 while the floor was 4, then a write at 5: not served.
        cache.insert("a".to_owned(), &computed(4, "old"), 4);
        assert!(cache.get("a", 4).is_some());
        assert!(cache.get("a", 5).is_none());
        // A newer entry is never replaced by an older one.
        cache.insert("a".to_owned(), &computed(6, "new"), 5);
        cache.insert("a".to_owned(), &computed(5, "older"), 5);
        assert_eq!(
            cache.get("a", 5).map(|(t, v)| (t, (*v).clone())),
            Some((6, "new".to_owned()))
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sixty_four_concurrent_misses_of_one_key_run_one_computation() {
        const CALLERS: usize = 64;
        let cache = Arc::new(TtlCache::<String>::new("test", Duration::from_secs(60), 10));
        let started = Arc::new(AtomicUsize::new(0));
        let (release, gate) = tokio::sync::watch::channel(false);
        let mut tasks = Vec::new();
        for _ in 0..CALLERS {
            let cache = Arc::clone(&cache);
            let started = Arc::clone(&started);
            let mut gate = gate.clone();
            tasks.push(tokio::spawn(async move {
                started.fetch_add(1, Ordering::SeqCst);
                cache
                    .get_or_compute("k", 1, || async move {
                        // Holds the flight open until every caller has
                        // arrived (an event, not a duration).
                        let _ = gate.wait_for(|open| *open).await;
                        Ok(computed(1, "v"))
                    })
                    .await
                    .map(|(_, v)| (*v).clone())
            }));
        }
        // Wait (for events) until one caller computes and every other one
        // has joined its flight.
        while started.load(Ordering::SeqCst) < CALLERS
            || cache.computations() + cache.joined() < CALLERS as u64
        {
            tokio::task::yield_now().await;
        }
        let _ = release.send(true);
        for t in tasks {
            assert_eq!(t.await.ok().and_then(Result::ok).as_deref(), Some("v"));
        }
        assert_eq!(cache.computations(), 1);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_flight_started_before_a_newer_write_is_not_joined() {
        let cache = TtlCache::<String>::new("test", Duration::from_secs(60), 10);
        let (release, gate) = tokio::sync::watch::channel(false);
        let mut gate2 = gate.clone();
        let old = cache.get_or_compute("k", 1, || async move {
            let _ = gate2.wait_for(|open| *open).await;
            Ok(computed(1, "old"))
        });
        let new = async {
            // Runs once the old flight is registered (polled first below).
            let r = cache
                .get_or_compute("k", 2, || async { Ok(computed(2, "new")) })
                .await;
            let _ = release.send(true);
            r
        };
        let (old, new) = tokio::join!(old, new);
        assert_eq!(old.ok().map(|(t, _)| t), Some(1));
        assert_eq!(
            new.ok().map(|(t, v)| (t, (*v).clone())),
            Some((2, "new".to_owned()))
        );
        assert_eq!(cache.computations(), 2);
        assert_eq!(cache.get("k", 2).map(|(t, _)| t), Some(2));
    }
}
