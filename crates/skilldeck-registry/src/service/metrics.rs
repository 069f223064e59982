//! The registry's Prometheus metrics ([`metrics`]): requests and their
//! latencies by method, route and status class, publishes and test runs
//! by outcome, cache lookups of the registry's caches, blob store errors.
//!
//! One set per process, as Prometheus scrapes processes: every
//! [`Registry`](crate::Registry) in it counts into the same families (in
//! production there is one). Labels are bounded: a route is the template
//! (`/api/v1/skills/{namespace}/{name}`), never the path, and a request no
//! route matched is counted under [`UNMATCHED_ROUTE`].

use std::sync::LazyLock;
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry as MetricRegistry;

use crate::error::RegistryError;

/// The prefix of every metric name.
pub const METRIC_PREFIX: &str = "skilldeck_registry";
/// The route label of a request no route matched (a 404 or a probe):
/// one value, so that scanners cannot grow the label set.
pub const UNMATCHED_ROUTE: &str = "unmatched";
/// The smallest latency bucket, in seconds (1 ms).
pub const LATENCY_FIRST_BUCKET_SECS: f64 = 0.001;
/// Latency buckets, each twice the previous one (1 ms .. about 33 s).
pub const LATENCY_BUCKETS: u16 = 16;
/// The `Content-Type` of `/metrics` (the Prometheus text format 0.0.4).
pub const CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

/// The labels of a request.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct RequestLabels {
    method: String,
    route: String,
    status_class: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct CacheLabels {
    cache: &'static str,
    result: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct StoreLabels {
    operation: &'static str,
}

fn latency_histogram() -> Histogram {
    Histogram::new(exponential_buckets(
        LATENCY_FIRST_BUCKET_SECS,
        2.0,
        LATENCY_BUCKETS,
    ))
}

/// The registry's metric families.
pub struct Metrics {
    registry: MetricRegistry,
    requests: Family<RequestLabels, Counter>,
    latency: Family<RequestLabels, Histogram, fn() -> Histogram>,
    publishes: Family<OutcomeLabels, Counter>,
    test_runs: Family<OutcomeLabels, Counter>,
    cache: Family<CacheLabels, Counter>,
    store_errors: Family<StoreLabels, Counter>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

static METRICS: LazyLock<Metrics> = LazyLock::new(Metrics::new);

/// This process's registry metrics.
pub fn metrics() -> &'static Metrics {
    &METRICS
}

/// `2xx`, `4xx`, ... of an HTTP status.
pub fn status_class(status: u16) -> &'static str {
    match status {
        100..=199 => "1xx",
        200..=299 => "2xx",
        300..=399 => "3xx",
        400..=499 => "4xx",
        _ => "5xx",
    }
}

/// The outcome label of a failed operation: `refused` when the caller's
/// request was wrong or not allowed, `failed` when the registry failed
/// (database, store, an internal error).
pub fn failure_outcome(e: &RegistryError) -> &'static str {
    match e {
        RegistryError::Database(_)
        | RegistryError::Migrate(_)
        | RegistryError::Store(_)
        | RegistryError::BlobMissing(_)
        | RegistryError::BlobCorrupt(_)
        | RegistryError::Internal(_)
        | RegistryError::Config(_)
        | RegistryError::Io { .. } => "failed",
        _ => "refused",
    }
}

impl Metrics {
    fn new() -> Metrics {
        let mut registry = MetricRegistry::with_prefix(METRIC_PREFIX);
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "http_requests",
            "HTTP requests served, by method, route template and status class",
            requests.clone(),
        );
        let latency = Family::<RequestLabels, Histogram, fn() -> Histogram>::new_with_constructor(
            latency_histogram,
        );
        registry.register(
            "http_request_duration_seconds",
            "Time from the request head to the response head, by method, route template and status class",
            latency.clone(),
        );
        let publishes = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "publishes",
            "Publishes by outcome: created, unchanged (the same content again), refused (the request), failed (the registry)",
            publishes.clone(),
        );
        let test_runs = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "test_runs",
            "Test runs by outcome: completed (whatever the script's exit), refused, failed",
            test_runs.clone(),
        );
        let cache = Family::<CacheLabels, Counter>::default();
        registry.register(
            "cache_lookups",
            "Lookups in the registry's in-process caches (agents, catalogs, auth), by result: hit or miss; and of the misses, rebuilt (one computation ran) or shared (waited for a computation already in flight)",
            cache.clone(),
        );
        let store_errors = Family::<StoreLabels, Counter>::default();
        registry.register(
            "store_errors",
            "Blob store operations that failed (put, get, list, delete); a missing blob is not counted",
            store_errors.clone(),
        );
        Metrics {
            registry,
            requests,
            latency,
            publishes,
            test_runs,
            cache,
            store_errors,
        }
    }

    /// Counts a request and its latency.
    pub fn request(&self, method: &str, route: &str, status: u16, elapsed: Duration) {
        let labels = RequestLabels {
            method: method.to_owned(),
            route: route.to_owned(),
            status_class: status_class(status),
        };
        self.latency
            .get_or_create(&labels)
            .observe(elapsed.as_secs_f64());
        self.requests.get_or_create(&labels).inc();
    }

    /// Counts a publish by its outcome.
    pub fn publish(&self, outcome: &'static str) {
        self.publishes
            .get_or_create(&OutcomeLabels { outcome })
            .inc();
    }

    /// Counts a test run by its outcome.
    pub fn test_run(&self, outcome: &'static str) {
        self.test_runs
            .get_or_create(&OutcomeLabels { outcome })
            .inc();
    }

    /// Counts a cache lookup.
    pub fn cache_lookup(&self, cache: &'static str, hit: bool) {
        let result = if hit { "hit" } else { "miss" };
        self.cache
            .get_or_create(&CacheLabels { cache, result })
            .inc();
    }

    /// Counts a cache rebuild, or a miss that shared one in flight.
    pub fn cache_rebuild(&self, cache: &'static str, shared: bool) {
        let result = if shared { "shared" } else { "rebuilt" };
        self.cache
            .get_or_create(&CacheLabels { cache, result })
            .inc();
    }

    /// Counts a failed blob store operation.
    pub fn store_error(&self, operation: &'static str) {
        self.store_errors
            .get_or_create(&StoreLabels { operation })
            .inc();
    }

    /// Every family in the Prometheus text format (0.0.4).
    pub fn encode(&self) -> Result<String, RegistryError> {
        let mut text = String::new();
        prometheus_client::encoding::prometheus_text::encode(&mut text, &self.registry)
            .map_err(|e| RegistryError::Internal(format!("encoding the metrics: {e}")))?;
        Ok(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_classes_cover_every_status() {
        assert_eq!(status_class(200), "2xx");
        assert_eq!(status_class(304), "3xx");
        assert_eq!(status_class(404), "4xx");
        assert_eq!(status_class(503), "5xx");
        assert_eq!(status_class(101), "1xx");
    }
}
