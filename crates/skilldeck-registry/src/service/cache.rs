//! `TtlCache`: a small in-process map whose entries expire after a
//! named TTL, cleared whole on every local write. Every lookup is counted
//! as a hit or a miss under the cache's name (`/metrics`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::service::metrics::metrics;

/// A map of `Arc<V>` by text key, each entry valid for `ttl`.
pub(crate) struct TtlCache<V> {
    name: &'static str,
    ttl: Duration,
    max: usize,
    map: Mutex<HashMap<String, (Instant, Arc<V>)>>,
}

impl<V> TtlCache<V> {
    /// An empty cache, counted as `name` in the metrics.
    pub fn new(name: &'static str, ttl: Duration, max: usize) -> Self {
        TtlCache {
            name,
            ttl,
            max,
            map: Mutex::new(HashMap::new()),
        }
    }

    /// The entry at `key` when it is younger than the TTL.
    pub fn get(&self, key: &str) -> Option<Arc<V>> {
        let found = {
            let map = self.map.lock().unwrap_or_else(PoisonError::into_inner);
            map.get(key)
                .filter(|(at, _)| at.elapsed() < self.ttl)
                .map(|(_, v)| Arc::clone(v))
        };
        metrics().cache_lookup(self.name, found.is_some());
        found
    }

    /// Stores `value` at `key` (a full cache is emptied first: bounded).
    pub fn insert(&self, key: String, value: Arc<V>) {
        if self.ttl.is_zero() {
            return;
        }
        let mut map = self.map.lock().unwrap_or_else(PoisonError::into_inner);
        if map.len() >= self.max {
            let ttl = self.ttl;
            map.retain(|_, (at, _)| at.elapsed() < ttl);
            if map.len() >= self.max {
                map.clear();
            }
        }
        map.insert(key, (Instant::now(), value));
    }

    /// Drops every entry.
    pub fn clear(&self) {
        self.map
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }
}
