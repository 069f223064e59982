//! The failed-authentication throttle: failed authentications counted
//! per client address and per token prefix in fixed windows, across
//! replicas. Once the failures of the current and the previous window
//! together pass [`RegistryLimits::max_failed_auth`], a further failure is
//! answered 429 with `Retry-After` (the end of the current window)
//! instead of 401: a key is refused after `max` failures in at most two
//! windows, and never starts afresh just because a window turned.
//!
//! Two layers:
//!
//! - **the database** (`auth_failures`) holds the count every replica
//!   adds to, so the limit holds across N replicas behind a balancer: a
//!   window is aligned to Unix time (every replica counts into the same
//!   row), and a key is over once the shared count is over the limit
//!   (at most one more failure per other replica in flight can slip in);
//! - **this process** remembers the keys it saw go over, until their
//!   window ends: a flood from a throttled key costs no database query
//!   per request. A token this process has not verified recently is
//!   looked up at most once per [`RegistryLimits::failed_auth_probe_interval`]
//!   per throttled key (the rest are answered 429 at once), so a valid
//!   token from a throttled address (a NAT, a proxy) still gets in on a
//!   retry; a token this process verified recently is accepted from
//!   anywhere, throttled or not. It also keeps a count of its own, the
//!   limit when the database cannot be reached (fails closed to a per
//!   replica bound instead of no bound).
//!
//! The tokens are 256 random bits, so the throttle is not what stops
//! guessing: it bounds the work and the noise of a flood and tells a
//! misconfigured client to stop.
//!
//! [`RegistryLimits::max_failed_auth`]: crate::RegistryLimits::max_failed_auth
//! [`RegistryLimits::failed_auth_probe_interval`]: crate::RegistryLimits::failed_auth_probe_interval

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::service::config::{MAX_THROTTLE_KEYS, THROTTLE_TOKEN_PREFIX_CHARS, TOKEN_PREFIX};

/// What failures are counted by.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum ThrottleKey {
    /// The client's address.
    Addr(IpAddr),
    /// The first characters of the presented token.
    Prefix(String),
    /// Every client once the throttle is full (fails closed).
    Overflow,
}

impl ThrottleKey {
    /// The keys of one attempt: the address (when known) and the token's
    /// prefix (when it has one).
    pub fn of(client: Option<IpAddr>, bearer: &str) -> Vec<ThrottleKey> {
        let mut keys = Vec::with_capacity(2);
        if let Some(addr) = client {
            keys.push(ThrottleKey::Addr(addr));
        }
        if let Some(rest) = bearer.trim().strip_prefix(TOKEN_PREFIX) {
            let prefix: String = rest.chars().take(THROTTLE_TOKEN_PREFIX_CHARS).collect();
            if !prefix.is_empty() {
                keys.push(ThrottleKey::Prefix(prefix));
            }
        }
        keys
    }
}

impl ThrottleKey {
    /// The key as the database stores it: the SHA-256 hex of its text
    /// (never a client's address or a token's characters in clear).
    /// `None` for the overflow key, which is this process's alone.
    pub fn stored(&self) -> Option<String> {
        let text = match self {
            ThrottleKey::Addr(addr) => format!("addr:{addr}"),
            ThrottleKey::Prefix(p) => format!("prefix:{p}"),
            ThrottleKey::Overflow => return None,
        };
        Some(skilldeck::secret::secret_hash(&text))
    }
}

/// A fixed window: its number since the Unix epoch (start = number ×
/// window length), the same on every replica.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Window {
    /// The window's number.
    index: i64,
    /// Its length in seconds (at least 1).
    secs: i64,
    /// Now, in Unix seconds.
    now: i64,
}

impl Window {
    /// The window `now` is in.
    fn at(now: SystemTime, length: Duration) -> Window {
        let secs = i64::try_from(length.as_secs()).unwrap_or(i64::MAX).max(1);
        let now = now
            .duration_since(UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
            .unwrap_or(0);
        Window {
            index: now / secs,
            secs,
            now,
        }
    }

    /// Its start, in Unix seconds (the stored `window_start`).
    pub fn start(&self) -> i64 {
        self.index.saturating_mul(self.secs)
    }

    /// The start of the window before it: failures are counted over both
    /// (a key does not start afresh the moment a window turns).
    pub fn previous_start(&self) -> i64 {
        self.start().saturating_sub(self.secs)
    }

    /// Whole seconds until it ends, at least one (`Retry-After: 0` would
    /// invite an immediate retry).
    pub fn left(&self) -> u64 {
        let end = self.start().saturating_add(self.secs);
        u64::try_from(end.saturating_sub(self.now))
            .unwrap_or(1)
            .max(1)
    }
}

struct Bucket {
    window: i64,
    /// This process's failures in the window.
    failures: u32,
    /// This process's failures in the window before it.
    previous: u32,
    /// Over the limit (here or in the database) for the rest of the
    /// window.
    over: bool,
    /// The last database lookup let through while over.
    probed: Option<Instant>,
}

impl Bucket {
    /// Moves the bucket to window `w`: the count of the window just
    /// before it becomes `previous`, an older one is forgotten, and
    /// whether it is over is decided again at its next failure.
    fn roll(&mut self, w: Window) {
        if self.window == w.index {
            return;
        }
        self.previous = if self.window == w.index.saturating_sub(1) {
            self.failures
        } else {
            0
        };
        self.window = w.index;
        self.failures = 0;
        self.over = false;
        self.probed = None;
    }
}

/// The throttle's process side (one per registry process); the database
/// side is `storage::auth_failures`, combined in `Registry::authenticate`.
pub(crate) struct FailedAuthThrottle {
    max: u32,
    window: Duration,
    probe_interval: Duration,
    buckets: Mutex<HashMap<ThrottleKey, Bucket>>,
    /// The window whose older counts this process last deleted.
    pruned: AtomicI64,
}

impl FailedAuthThrottle {
    /// A throttle allowing `max` failures per key per `window`; a
    /// throttled key gets one database lookup per `probe_interval`.
    pub fn new(max: u32, window: Duration, probe_interval: Duration) -> Self {
        FailedAuthThrottle {
            max,
            window,
            probe_interval,
            buckets: Mutex::new(HashMap::new()),
            pruned: AtomicI64::new(i64::MIN),
        }
    }

    /// The limit.
    pub fn max(&self) -> u32 {
        self.max
    }

    /// The window now.
    pub fn window_now(&self) -> Window {
        Window::at(SystemTime::now(), self.window)
    }

    /// Whether this process should delete the counts of windows before
    /// the current one: true once per window.
    pub fn should_prune(&self, w: Window) -> bool {
        self.pruned.fetch_max(w.index, Ordering::SeqCst) < w.index
    }

    /// Before a database lookup of a token: `Err(seconds)` when one of
    /// `keys` is throttled in window `w` and its lookup was made less than
    /// the probe interval ago (answer 429 without a query); else the
    /// lookup may go ahead (and, for a throttled key, counts as its probe).
    pub fn admit(&self, keys: &[ThrottleKey], w: Window) -> Result<(), u64> {
        self.admit_at(keys, w, Instant::now())
    }

    fn admit_at(&self, keys: &[ThrottleKey], w: Window, now: Instant) -> Result<(), u64> {
        let mut buckets = self.buckets.lock().unwrap_or_else(PoisonError::into_inner);
        let mut throttled = Vec::new();
        for key in keys.iter().chain(std::iter::once(&ThrottleKey::Overflow)) {
            if let Some(b) = buckets.get(key).filter(|b| b.window == w.index && b.over) {
                if b.probed
                    .is_some_and(|at| now.duration_since(at) < self.probe_interval)
                {
                    return Err(w.left());
                }
                throttled.push(key.clone());
            }
        }
        for key in throttled {
            if let Some(b) = buckets.get_mut(&key) {
                b.probed = Some(now);
            }
        }
        Ok(())
    }

    /// Counts one failure of each key in this process (window `w`);
    /// returns the keys to count in the database (those not over here
    /// already, the overflow key never) and whether one is over here.
    pub fn fail_here(&self, keys: &[ThrottleKey], w: Window) -> (Vec<ThrottleKey>, bool) {
        let mut buckets = self.buckets.lock().unwrap_or_else(PoisonError::into_inner);
        let mut shared = Vec::with_capacity(keys.len());
        let mut over = false;
        for key in keys {
            let mut key = key.clone();
            if !buckets.contains_key(&key) && buckets.len() >= MAX_THROTTLE_KEYS {
                buckets.retain(|_, b| b.window == w.index);
                if buckets.len() >= MAX_THROTTLE_KEYS {
                    key = ThrottleKey::Overflow;
                }
            }
            let bucket = buckets.entry(key.clone()).or_insert(Bucket {
                window: w.index,
                failures: 0,
                previous: 0,
                over: false,
                probed: None,
            });
            bucket.roll(w);
            bucket.failures = bucket.failures.saturating_add(1);
            if bucket.failures.saturating_add(bucket.previous) > self.max {
                bucket.over = true;
            }
            if bucket.over {
                over = true;
            } else if key != ThrottleKey::Overflow {
                shared.push(key);
            }
        }
        (shared, over)
    }

    /// Marks `key` over the limit for the rest of window `w` (the shared
    /// count said so).
    pub fn mark_over(&self, key: &ThrottleKey, w: Window) {
        let mut buckets = self.buckets.lock().unwrap_or_else(PoisonError::into_inner);
        let bucket = buckets.entry(key.clone()).or_insert(Bucket {
            window: w.index,
            failures: 0,
            previous: 0,
            over: false,
            probed: None,
        });
        bucket.roll(w);
        bucket.over = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window() -> Window {
        Window::at(SystemTime::now(), Duration::from_secs(60))
    }

    #[test]
    fn failures_past_the_limit_are_over_in_this_process_and_no_longer_shared() {
        let t = FailedAuthThrottle::new(3, Duration::from_secs(60), Duration::from_secs(1));
        let w = window();
        let keys = ThrottleKey::of(Some(IpAddr::from([10, 0, 0, 1])), "sdk_abcdefghijkl");
        assert_eq!(keys.len(), 2);
        for _ in 0..3 {
            let (shared, over) = t.fail_here(&keys, w);
            assert!(!over);
            assert_eq!(shared.len(), 2, "counted in the database too");
        }
        let (shared, over) = t.fail_here(&keys, w);
        assert!(over);
        assert!(
            shared.is_empty(),
            "an over key costs no more database counts"
        );
        let other = ThrottleKey::of(Some(IpAddr::from([10, 0, 0, 2])), "sdk_zzzzzzzz");
        assert!(
            !t.fail_here(&other, w).1,
            "another client has its own count"
        );
    }

    #[test]
    fn a_throttled_key_gets_one_lookup_per_probe_interval() {
        let t = FailedAuthThrottle::new(1, Duration::from_secs(60), Duration::from_secs(1));
        let w = window();
        let keys = ThrottleKey::of(Some(IpAddr::from([10, 0, 0, 1])), "");
        assert_eq!(t.admit(&keys, w), Ok(()), "not throttled: looked up");
        t.mark_over(&keys[0], w);
        let t0 = Instant::now();
        assert_eq!(t.admit_at(&keys, w, t0), Ok(()), "the first probe");
        let wait = t.admit_at(&keys, w, t0).unwrap_err();
        assert!((1..=60).contains(&wait));
        assert_eq!(
            t.admit_at(&keys, w, t0 + Duration::from_secs(1)),
            Ok(()),
            "the next probe after the interval"
        );
    }

    #[test]
    fn failures_of_the_previous_window_still_count() {
        let t = FailedAuthThrottle::new(3, Duration::from_secs(60), Duration::from_secs(1));
        let at = UNIX_EPOCH + Duration::from_secs(1_000_030);
        let keys = ThrottleKey::of(Some(IpAddr::from([10, 0, 0, 1])), "");
        let w = Window::at(at, Duration::from_secs(60));
        for _ in 0..2 {
            assert!(!t.fail_here(&keys, w).1);
        }
        let next = Window::at(at + Duration::from_secs(60), Duration::from_secs(60));
        assert!(!t.fail_here(&keys, next).1, "2 + 1 is the limit");
        assert!(t.fail_here(&keys, next).1, "2 + 2 is over it");
    }

    #[test]
    fn a_window_is_the_same_on_every_replica_and_says_how_long_is_left() {
        let at = UNIX_EPOCH + Duration::from_secs(1_000_030);
        let w = Window::at(at, Duration::from_secs(60));
        assert_eq!(w.start(), 1_000_020);
        assert_eq!(w.left(), 50);
        assert_eq!(
            Window::at(at, Duration::from_secs(60)),
            w,
            "aligned to Unix time"
        );
    }
}
