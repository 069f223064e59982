//! The HTTP session cap: at most `max_sessions` sessions at once, exactly,
//! however many `initialize` requests arrive together.
//!
//! An `initialize` outside a session first takes a slot
//! ([`SessionSlots::reserve`]): admissions are serialised, and a slot counts
//! the open sessions (rmcp's session map) plus the admissions still on their
//! way to becoming one. rmcp puts the new session in its map before it
//! answers, so when the answer returns the reservation is released and the
//! session itself holds the slot: the count never goes over the cap.
//!
//! When every slot is taken, the session idle the longest (no request in
//! flight, none for at least [`HttpOptions::session_evict_idle`]) is closed
//! to make room; only when none is that idle is the `initialize` refused
//! (HTTP 503). Sessions idle for `session_idle_timeout` end on their own
//! (rmcp's keep-alive), so a full server never stays full of abandoned
//! sessions.
//!
//! [`HttpOptions::session_evict_idle`]: crate::options::HttpOptions::session_evict_idle

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use rmcp::transport::streamable_http_server::session::SessionManager as _;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

use crate::engine::Engine;

/// One open session's activity.
#[derive(Debug, Clone, Copy)]
struct Activity {
    /// When its last request ended (or it was opened).
    last: Instant,
    /// Requests of it still running (an open event stream included).
    active: usize,
}

#[derive(Debug, Default)]
struct State {
    /// Admissions between their reservation and their answer.
    pending: usize,
    /// The sessions this server opened, by id.
    sessions: HashMap<String, Activity>,
}

/// The slots of the session cap (see the module documentation).
#[derive(Debug)]
pub struct SessionSlots {
    cap: usize,
    evict_idle: Duration,
    manager: Arc<LocalSessionManager>,
    /// Whose per-session state (activations) a closed session clears.
    engine: Arc<Engine>,
    state: Mutex<State>,
    /// Serialises admissions (count, evict, reserve).
    admit: tokio::sync::Mutex<()>,
}

/// Why an `initialize` was refused: every slot is taken by a session that
/// is busy or was used recently.
#[derive(Debug, Clone, Copy)]
pub struct Full {
    /// Sessions open (and admissions under way).
    pub open: usize,
}

/// A slot taken for a session being opened; released when dropped (by then
/// the session, if one was opened, is in rmcp's map and counted there).
#[derive(Debug)]
pub struct Reservation {
    slots: Arc<SessionSlots>,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        let mut state = self.slots.state();
        state.pending = state.pending.saturating_sub(1);
    }
}

/// Marks a request of a session as running until dropped.
#[derive(Debug)]
pub struct Busy {
    slots: Arc<SessionSlots>,
    id: String,
}

impl Drop for Busy {
    fn drop(&mut self) {
        let mut state = self.slots.state();
        if let Some(a) = state.sessions.get_mut(&self.id) {
            a.active = a.active.saturating_sub(1);
            a.last = Instant::now();
        }
    }
}

impl SessionSlots {
    /// `cap` sessions over `manager`; a session idle for `evict_idle` may be
    /// closed to admit a new one.
    pub fn new(
        cap: usize,
        evict_idle: Duration,
        manager: Arc<LocalSessionManager>,
        engine: Arc<Engine>,
    ) -> Self {
        SessionSlots {
            cap,
            evict_idle,
            manager,
            engine,
            state: Mutex::default(),
            admit: tokio::sync::Mutex::new(()),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The cap.
    pub fn cap(&self) -> usize {
        self.cap
    }

    /// Takes a slot for a new session, closing the longest-idle session
    /// when all are taken; [`Full`] when none can be freed.
    pub async fn reserve(self: &Arc<Self>) -> Result<Reservation, Full> {
        let _admitting = self.admit.lock().await;
        loop {
            let open: HashSet<String> = self
                .manager
                .sessions
                .read()
                .await
                .keys()
                .map(ToString::to_string)
                .collect();
            let victim = {
                let mut state = self.state();
                // Sessions that ended on their own (expiry, worker exit)
                // are no longer tracked.
                state.sessions.retain(|id, _| open.contains(id));
                let used = open.len() + state.pending;
                if used < self.cap {
                    state.pending += 1;
                    return Ok(Reservation {
                        slots: Arc::clone(self),
                    });
                }
                let now = Instant::now();
                let victim = state
                    .sessions
                    .iter()
                    .filter(|(_, a)| a.active == 0 && now.duration_since(a.last) >= self.evict_idle)
                    .min_by_key(|(_, a)| a.last)
                    .map(|(id, _)| id.clone());
                match victim {
                    Some(id) => {
                        state.sessions.remove(&id);
                        id
                    }
                    None => return Err(Full { open: used }),
                }
            };
            tracing::info!(session = %victim, "session cap reached: closing the longest-idle session");
            self.forget(&victim);
            if let Err(e) = self.manager.close_session(&victim.clone().into()).await {
                tracing::warn!(session = %victim, error = %e, "cannot close an idle session");
                return Err(Full {
                    open: open.len() + self.state().pending,
                });
            }
        }
    }

    /// Notes a session just opened (its id from the `initialize` answer).
    pub fn opened(&self, id: &str) {
        self.state().sessions.insert(
            id.to_owned(),
            Activity {
                last: Instant::now(),
                active: 0,
            },
        );
    }

    /// Notes a request of session `id` starting; `None` for a session this
    /// server does not know (rmcp answers those `404`).
    pub fn busy(self: &Arc<Self>, id: &str) -> Option<Busy> {
        let mut state = self.state();
        let activity = state.sessions.get_mut(id)?;
        activity.active += 1;
        Some(Busy {
            slots: Arc::clone(self),
            id: id.to_owned(),
        })
    }

    /// Forgets session `id` (it was deleted) and what it activated.
    pub fn closed(&self, id: &str) {
        self.state().sessions.remove(id);
        self.forget(id);
    }

    fn forget(&self, id: &str) {
        self.engine
            .host()
            .end_conversation(&crate::server::http_conversation(id));
    }
}
