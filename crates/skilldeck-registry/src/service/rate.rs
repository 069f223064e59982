//! [`RateLimiter`]: a token bucket per principal, for test runs. Each
//! principal (token id) holds up to `per_minute` tokens, refilled evenly
//! over a minute; a test run takes one, and with none left it is refused
//! with the seconds until the next token (`Retry-After`).
//!
//! The tree has no token-bucket crate (`governor` would be one more
//! dependency for one counter); this is the small keyed bucket the
//! failed-authentication throttle ([`crate::service::throttle`]) is
//! beside, bounded by [`MAX_TEST_RUN_RATE_KEYS`].

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::service::config::MAX_TEST_RUN_RATE_KEYS;

/// The window the rate is stated over.
const RATE_WINDOW: Duration = Duration::from_secs(60);

/// The key every principal shares once the limiter is full of active
/// buckets (fails closed rather than forgetting a caller).
const OVERFLOW_KEY: &str = "";

struct Bucket {
    tokens: f64,
    at: Instant,
}

/// Token buckets by principal.
pub(crate) struct RateLimiter {
    per_minute: u32,
    buckets: Mutex<HashMap<String, Bucket>>,
}

impl RateLimiter {
    /// `per_minute` takes per key per minute, all of them at once at
    /// most (0: every take is refused).
    pub fn new(per_minute: u32) -> Self {
        RateLimiter {
            per_minute,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// The rate in force.
    pub fn per_minute(&self) -> u32 {
        self.per_minute
    }

    /// Takes one token of `key`'s bucket, or says how many whole seconds
    /// (at least 1) until one is there.
    pub fn take(&self, key: &str) -> Result<(), u64> {
        self.take_at(key, Instant::now())
    }

    fn take_at(&self, key: &str, now: Instant) -> Result<(), u64> {
        if self.per_minute == 0 {
            return Err(RATE_WINDOW.as_secs());
        }
        let capacity = f64::from(self.per_minute);
        let per_sec = capacity / RATE_WINDOW.as_secs_f64();
        let refill = |b: &Bucket| {
            (b.tokens + now.saturating_duration_since(b.at).as_secs_f64() * per_sec).min(capacity)
        };
        let mut buckets = self.buckets.lock().unwrap_or_else(PoisonError::into_inner);
        let mut key = key.to_owned();
        if !buckets.contains_key(&key) && buckets.len() >= MAX_TEST_RUN_RATE_KEYS {
            // A full bucket says nothing a fresh one would not.
            buckets.retain(|_, b| refill(b) < capacity);
            if buckets.len() >= MAX_TEST_RUN_RATE_KEYS {
                key = OVERFLOW_KEY.to_owned();
            }
        }
        let bucket = buckets.entry(key).or_insert(Bucket {
            tokens: capacity,
            at: now,
        });
        bucket.tokens = refill(bucket);
        bucket.at = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            let wait = (1.0 - bucket.tokens) / per_sec;
            // Whole seconds, rounded up, at least one.
            Err((wait.ceil() as u64).max(1))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_principal_gets_its_burst_then_waits_for_the_next_token() {
        let limiter = RateLimiter::new(3);
        let t0 = Instant::now();
        for _ in 0..3 {
            assert_eq!(limiter.take_at("tok-a", t0), Ok(()));
        }
        let wait = limiter.take_at("tok-a", t0).unwrap_err();
        assert_eq!(wait, 20, "one token every 20 s at 3 per minute");
        assert_eq!(
            limiter.take_at("tok-b", t0),
            Ok(()),
            "another principal has its own bucket"
        );
        assert_eq!(
            limiter.take_at("tok-a", t0 + Duration::from_secs(20)),
            Ok(()),
            "refilled after the wait it was told"
        );
    }

    #[test]
    fn a_rate_of_zero_refuses_every_test_run() {
        assert!(RateLimiter::new(0).take("tok").is_err());
    }
}
