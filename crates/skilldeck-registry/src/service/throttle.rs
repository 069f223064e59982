//! The failed-authentication throttle: a small keyed counter of failed
//! authentications per client address and per token prefix, in fixed
//! windows. Past [`RegistryLimits::max_failed_auth`] failures in a window
//! a further failure is answered 429 with `Retry-After` instead of 401.
//!
//! Only failures are counted and only failures are refused: a valid token
//! is always accepted, from any address, however many failures that
//! address made (a NAT or a proxy shares one address; the tokens are 256
//! random bits, so the throttle is not what stops guessing: it bounds the
//! work and the noise of a flood and tells a misconfigured client to stop).
//!
//! [`RegistryLimits::max_failed_auth`]: crate::RegistryLimits::max_failed_auth

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

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

struct Bucket {
    started: Instant,
    failures: u32,
}

/// The throttle (one per registry process).
pub(crate) struct FailedAuthThrottle {
    max: u32,
    window: Duration,
    buckets: Mutex<HashMap<ThrottleKey, Bucket>>,
}

impl FailedAuthThrottle {
    /// A throttle allowing `max` failures per key per `window`.
    pub fn new(max: u32, window: Duration) -> Self {
        FailedAuthThrottle {
            max,
            window,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Counts one failure against every key; returns the seconds to wait
    /// when any of them is now over the limit.
    pub fn fail(&self, keys: &[ThrottleKey]) -> Option<u64> {
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(PoisonError::into_inner);
        let mut wait: Option<Duration> = None;
        for key in keys {
            let mut key = key.clone();
            if !buckets.contains_key(&key) && buckets.len() >= MAX_THROTTLE_KEYS {
                let window = self.window;
                buckets.retain(|_, b| now.duration_since(b.started) < window);
                if buckets.len() >= MAX_THROTTLE_KEYS {
                    key = ThrottleKey::Overflow;
                }
            }
            let bucket = buckets.entry(key).or_insert(Bucket {
                started: now,
                failures: 0,
            });
            if now.duration_since(bucket.started) >= self.window {
                bucket.started = now;
                bucket.failures = 0;
            }
            bucket.failures = bucket.failures.saturating_add(1);
            if bucket.failures > self.max {
                let left = self
                    .window
                    .saturating_sub(now.duration_since(bucket.started));
                wait = Some(wait.map_or(left, |w| w.max(left)));
            }
        }
        // Whole seconds, at least one (`Retry-After: 0` would invite an
        // immediate retry).
        wait.map(|w| {
            w.as_secs()
                .saturating_add(u64::from(w.subsec_nanos() > 0))
                .max(1)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_past_the_limit_get_a_retry_after_within_the_window() {
        let t = FailedAuthThrottle::new(3, Duration::from_secs(60));
        let keys = ThrottleKey::of(Some(IpAddr::from([10, 0, 0, 1])), "sdk_abcdefghijkl");
        assert_eq!(keys.len(), 2);
        for _ in 0..3 {
            assert_eq!(t.fail(&keys), None);
        }
        let wait = t.fail(&keys).unwrap();
        assert!((1..=60).contains(&wait));
        let other = ThrottleKey::of(Some(IpAddr::from([10, 0, 0, 2])), "sdk_zzzzzzzz");
        assert_eq!(t.fail(&other), None, "another client has its own count");
    }

    #[test]
    fn one_token_prefix_tried_from_many_addresses_is_throttled() {
        let t = FailedAuthThrottle::new(2, Duration::from_secs(60));
        let mut last = None;
        for i in 0..3u8 {
            last = t.fail(&ThrottleKey::of(
                Some(IpAddr::from([10, 0, 0, i])),
                "sdk_samePREFIXrest",
            ));
        }
        assert!(last.is_some());
    }
}
