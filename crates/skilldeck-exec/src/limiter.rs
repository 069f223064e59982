//! The concurrency cap: at most N executions at once overall and per
//! agent; further callers wait in a bounded queue for at most a set time,
//! then are refused with [`ExecError::Busy`].

use std::collections::HashMap;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::error::ExecError;

/// Caps on concurrent executions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    /// Executions at once, overall.
    pub total: usize,
    /// Executions at once, per agent.
    pub per_agent: usize,
    /// Callers that may wait for a slot; more are refused at once.
    pub queue: usize,
    /// How long a caller waits for a slot.
    pub wait: Duration,
}

#[derive(Debug, Default)]
struct State {
    running: usize,
    per_agent: HashMap<String, usize>,
    waiting: usize,
}

/// Hands out execution slots.
#[derive(Debug)]
pub(crate) struct Limiter {
    caps: Caps,
    state: Mutex<State>,
    freed: Condvar,
}

/// A held slot, released when dropped.
#[derive(Debug)]
pub(crate) struct Permit<'a> {
    limiter: &'a Limiter,
    agent: String,
}

impl Limiter {
    /// A limiter with `caps` (zero caps are raised to one).
    pub(crate) fn new(caps: Caps) -> Self {
        Limiter {
            caps: Caps {
                total: caps.total.max(1),
                per_agent: caps.per_agent.max(1),
                ..caps
            },
            state: Mutex::new(State::default()),
            freed: Condvar::new(),
        }
    }

    /// The caps in force.
    pub(crate) fn caps(&self) -> Caps {
        self.caps
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // The state stays consistent even if a holder panicked (plain counters).
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Executions running now.
    pub(crate) fn running(&self) -> usize {
        self.lock().running
    }

    /// A slot for `agent`, waiting in the queue when none is free.
    pub(crate) fn acquire(&self, agent: &str) -> Result<Permit<'_>, ExecError> {
        let mut state = self.lock();
        let free = |s: &State| {
            s.running < self.caps.total
                && s.per_agent.get(agent).copied().unwrap_or(0) < self.caps.per_agent
        };
        if !free(&state) {
            if state.waiting >= self.caps.queue {
                return Err(ExecError::Busy(format!(
                    "{} executions running (cap {} overall, {} per agent) and {} waiting (queue cap {}); try again later",
                    state.running,
                    self.caps.total,
                    self.caps.per_agent,
                    state.waiting,
                    self.caps.queue
                )));
            }
            state.waiting += 1;
            let deadline = Instant::now() + self.caps.wait;
            while !free(&state) {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    state.waiting -= 1;
                    return Err(ExecError::Busy(format!(
                        "no execution slot freed within {} ms (cap {} overall, {} per agent)",
                        self.caps.wait.as_millis(),
                        self.caps.total,
                        self.caps.per_agent
                    )));
                }
                state = self
                    .freed
                    .wait_timeout(state, left)
                    .map(|(g, _)| g)
                    .unwrap_or_else(|e| e.into_inner().0);
            }
            state.waiting -= 1;
        }
        state.running += 1;
        *state.per_agent.entry(agent.to_owned()).or_insert(0) += 1;
        Ok(Permit {
            limiter: self,
            agent: agent.to_owned(),
        })
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        let mut state = self.limiter.lock();
        state.running = state.running.saturating_sub(1);
        if let Some(n) = state.per_agent.get_mut(&self.agent) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                state.per_agent.remove(&self.agent);
            }
        }
        drop(state);
        self.limiter.freed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn caps(total: usize, per_agent: usize, queue: usize, wait_ms: u64) -> Caps {
        Caps {
            total,
            per_agent,
            queue,
            wait: Duration::from_millis(wait_ms),
        }
    }

    #[test]
    fn a_full_queue_is_refused_at_once_with_the_caps_named() {
        let l = Limiter::new(caps(1, 1, 0, 10_000));
        let _held = l.acquire("a").unwrap();
        let err = l.acquire("b").unwrap_err();
        assert!(matches!(err, ExecError::Busy(_)));
        assert!(err.to_string().contains("cap 1 overall"), "{err}");
    }

    #[test]
    fn a_waiter_is_refused_after_the_wait_and_a_freed_slot_is_reused() {
        let l = Limiter::new(caps(1, 1, 4, 20));
        let held = l.acquire("a").unwrap();
        assert!(matches!(l.acquire("b"), Err(ExecError::Busy(_))));
        drop(held);
        let _again = l.acquire("b").unwrap();
        assert_eq!(l.running(), 1);
    }

    #[test]
    fn the_per_agent_cap_holds_while_other_agents_still_run() {
        let l = Limiter::new(caps(3, 1, 0, 10));
        let _a = l.acquire("a").unwrap();
        assert!(matches!(l.acquire("a"), Err(ExecError::Busy(_))));
        let _b = l.acquire("b").unwrap();
        assert_eq!(l.running(), 2);
    }

    #[test]
    fn never_more_than_the_cap_run_at_once() {
        let l = std::sync::Arc::new(Limiter::new(caps(3, 3, 100, 10_000)));
        let peak = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let threads: Vec<_> = (0..20)
            .map(|_| {
                let l = l.clone();
                let peak = peak.clone();
                std::thread::spawn(move || {
                    let _p = l.acquire("agent").unwrap();
                    peak.fetch_max(l.running(), std::sync::atomic::Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(2));
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let peak = peak.load(std::sync::atomic::Ordering::SeqCst);
        assert!((1..=3).contains(&peak), "peak {peak}");
    }
}
