//! The HTTP session cap: at most `max_sessions` sessions at once, exactly,
//! however many `initialize` requests arrive together.
//!
//! [`SessionSlots`] is the session manager rmcp serves with: it wraps rmcp's
//! [`LocalSessionManager`] and keeps the one count the cap is decided on,
//! under one lock: the sessions open plus the admissions on their way to
//! becoming one.
//!
//! - An `initialize` outside a session first takes a slot
//!   ([`SessionSlots::reserve`], admissions serialised) and runs inside its
//!   [`Admission`].
//! - When rmcp creates the session ([`SessionManager::create_session`], in
//!   the same task), the admission's slot *becomes* the session's in the
//!   same step that records the session: never counted twice, never not at
//!   all. A `create_session` with no admission behind it is refused: a
//!   session cannot be opened around the cap.
//! - When a session ends, however it ends (`DELETE`, eviction, rmcp's
//!   keep-alive expiry, its worker stopping), rmcp closes it through
//!   [`SessionManager::close_session`]: its slot is freed and what it
//!   activated is forgotten.
//!
//! When every slot is taken, the session idle the longest (no request in
//! flight, none for at least [`HttpOptions::session_evict_idle`]) is closed
//! to make room; only when none is that idle is the `initialize` refused
//! (HTTP 503). A session being opened counts as busy until its `initialize`
//! answer is sent, so it is never the one evicted. Sessions idle for
//! `session_idle_timeout` end on their own (rmcp's keep-alive), so a full
//! server never stays full of abandoned sessions.
//!
//! [`HttpOptions::session_evict_idle`]: crate::options::HttpOptions::session_evict_idle

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use futures_core::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::{
    EventStore, ServerSseMessage, SessionId, SessionManager,
};

use crate::engine::Engine;
use crate::error::Error;

/// One open session's activity.
#[derive(Debug, Clone, Copy)]
struct Activity {
    /// When its last request ended (or it was opened).
    last: Instant,
    /// Requests of it still running (an open event stream, and its own
    /// `initialize`, included).
    active: usize,
}

#[derive(Debug, Default)]
struct State {
    /// Admissions that hold a slot and have no session yet.
    pending: usize,
    /// The sessions open, by id.
    sessions: HashMap<String, Activity>,
}

impl State {
    /// The slots taken.
    fn used(&self) -> usize {
        self.sessions.len() + self.pending
    }
}

/// The session manager with the session cap (see the module
/// documentation).
#[derive(Debug)]
pub struct SessionSlots {
    cap: usize,
    evict_idle: Duration,
    manager: LocalSessionManager,
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

/// A slot taken for a session not opened yet; freed when dropped unless a
/// session took it over.
#[derive(Debug)]
struct Reservation {
    /// `None` once a session holds the slot.
    slots: Option<Arc<SessionSlots>>,
}

impl Reservation {
    /// The slot becomes session `id`'s, which is busy (being opened) until
    /// the returned guard is dropped: one step under the state lock.
    fn into_session(mut self, id: &str) -> Option<Busy> {
        let slots = self.slots.take()?;
        {
            let mut state = slots.state();
            state.pending = state.pending.saturating_sub(1);
            state.sessions.insert(
                id.to_owned(),
                Activity {
                    last: Instant::now(),
                    active: 1,
                },
            );
        }
        Some(Busy {
            slots,
            id: id.to_owned(),
        })
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if let Some(slots) = self.slots.take() {
            let mut state = slots.state();
            state.pending = state.pending.saturating_sub(1);
        }
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

/// Where an admission stands.
#[derive(Debug)]
enum Stage {
    /// A slot is held; no session yet.
    Reserved(Reservation),
    /// The session was created and holds the slot; it is busy (held for
    /// its drop) until this is dropped.
    Opened { _busy: Busy },
    /// Only while the stage changes, or after a refused second
    /// `create_session` in the same request.
    Spent,
}

/// An `initialize` admitted under the cap: hold it until the answer is
/// sent, and run the request inside it ([`Admission::run`]) so the session
/// rmcp creates takes its slot.
#[derive(Debug)]
pub struct Admission {
    stage: Arc<Mutex<Stage>>,
}

tokio::task_local! {
    /// The admission of the request this task is serving, if it is an
    /// admitted `initialize`.
    static ADMISSION: Arc<Mutex<Stage>>;
}

impl Admission {
    /// Runs `request` (rmcp's handling of the `initialize`) inside this
    /// admission.
    pub async fn run<F: Future>(&self, request: F) -> F::Output {
        ADMISSION.scope(Arc::clone(&self.stage), request).await
    }
}

fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl SessionSlots {
    /// `cap` sessions over `manager`; a session idle for `evict_idle` may be
    /// closed to admit a new one.
    pub fn new(
        cap: usize,
        evict_idle: Duration,
        manager: LocalSessionManager,
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
        locked(&self.state)
    }

    /// The cap.
    pub fn cap(&self) -> usize {
        self.cap
    }

    /// Takes a slot for a new session, closing the longest-idle session
    /// when all are taken; [`Full`] when none can be freed.
    pub async fn reserve(self: &Arc<Self>) -> Result<Admission, Full> {
        let _admitting = self.admit.lock().await;
        loop {
            let victim = {
                let mut state = self.state();
                let used = state.used();
                if used < self.cap {
                    state.pending += 1;
                    return Ok(Admission {
                        stage: Arc::new(Mutex::new(Stage::Reserved(Reservation {
                            slots: Some(Arc::clone(self)),
                        }))),
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
                    Some(id) => id,
                    None => return Err(Full { open: used }),
                }
            };
            tracing::info!(session = %victim, "session cap reached: closing the longest-idle session");
            if let Err(e) = self.close_session(&SessionId::from(victim.as_str())).await {
                tracing::warn!(session = %victim, error = %e, "cannot close an idle session");
                return Err(Full {
                    open: self.state().used(),
                });
            }
        }
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

    /// Frees session `id`'s slot and forgets what it activated.
    fn forget(&self, id: &str) {
        self.state().sessions.remove(id);
        self.engine
            .host()
            .end_conversation(&crate::server::http_conversation(id));
    }
}

/// The slot of the admission this task serves becomes session `id`'s;
/// `false` when there is none (rmcp was asked for a session no admission
/// reserved).
fn take_admission(id: &str) -> bool {
    ADMISSION
        .try_with(|stage| {
            let mut stage = locked(stage);
            match std::mem::replace(&mut *stage, Stage::Spent) {
                Stage::Reserved(reservation) => match reservation.into_session(id) {
                    Some(busy) => {
                        *stage = Stage::Opened { _busy: busy };
                        true
                    }
                    None => false,
                },
                other => {
                    *stage = other;
                    false
                }
            }
        })
        .unwrap_or(false)
}

impl SessionManager for SessionSlots {
    type Error = Error;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let refused = ADMISSION
            .try_with(|stage| !matches!(*locked(stage), Stage::Reserved(_)))
            .unwrap_or(true);
        if refused {
            return Err(Error::NoSessionSlot);
        }
        let (id, transport) = self.manager.create_session().await?;
        if !take_admission(&id) {
            // Unreachable while this task holds its admission; close rather
            // than serve a session outside the cap.
            let _ = self.manager.close_session(&id).await;
            return Err(Error::NoSessionSlot);
        }
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        Ok(self.manager.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.manager.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        let closed = self.manager.close_session(id).await;
        // Freed only once out of rmcp's map: the count never goes under the
        // sessions really open.
        self.forget(id);
        Ok(closed?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.manager.create_stream(id, message).await?)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        Ok(self.manager.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.manager.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.manager.resume(id, last_event_id).await?)
    }

    // `restore_session` stays rmcp's default (not supported): this server
    // configures no session store, and a restored session would be opened
    // around the cap.

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.manager.event_store()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::ServeOptions;

    fn slots(cap: usize, evict_idle: Duration) -> (tempfile::TempDir, Arc<SessionSlots>) {
        let tmp = tempfile::tempdir().unwrap();
        let options = ServeOptions::new(skilldeck::DiscoveryOptions::with_roots([tmp
            .path()
            .to_path_buf()]));
        let engine = Arc::new(Engine::new(options).unwrap());
        let slots = SessionSlots::new(cap, evict_idle, LocalSessionManager::default(), engine);
        (tmp, Arc::new(slots))
    }

    async fn in_map(slots: &SessionSlots) -> usize {
        slots.manager.sessions.read().await.len()
    }

    #[tokio::test]
    async fn an_admission_and_the_session_it_opens_take_one_slot_together() {
        // The flake this pins: the session entered rmcp's map while its
        // admission still held a slot, so a concurrent `initialize` saw
        // one session counted twice and was refused below the cap.
        let (_tmp, slots) = slots(2, Duration::ZERO);
        let admission = slots.reserve().await.unwrap();
        assert_eq!(slots.state().used(), 1);
        let (id, _transport) = admission.run(slots.create_session()).await.unwrap();
        assert_eq!(in_map(&slots).await, 1);
        assert_eq!(slots.state().used(), 1, "one admission, one slot");
        assert_eq!(slots.state().pending, 0);
        // The second slot is still free.
        let second = slots.reserve().await.unwrap();
        assert_eq!(slots.state().used(), 2);
        // Full now; the session being opened is busy, so never evicted,
        // even with `evict_idle` zero.
        assert!(slots.reserve().await.is_err());
        assert!(slots.manager.has_session(&id).await.unwrap());
        // Answered (the admission dropped): idle, so evicted for the next.
        drop(admission);
        let third = slots.reserve().await.unwrap();
        assert!(!slots.manager.has_session(&id).await.unwrap());
        assert_eq!(slots.state().used(), 2);
        drop((second, third));
        assert_eq!(
            slots.state().used(),
            0,
            "unused admissions free their slots"
        );
    }

    #[tokio::test]
    async fn a_session_cannot_be_opened_around_the_cap() {
        let (_tmp, slots) = slots(4, Duration::ZERO);
        // Outside an admission.
        let outside = slots.create_session().await;
        assert!(matches!(outside, Err(Error::NoSessionSlot)));
        assert_eq!(in_map(&slots).await, 0);
        // Twice with one admission.
        let admission = slots.reserve().await.unwrap();
        let twice = admission
            .run(async {
                let first = slots.create_session().await;
                let second = slots.create_session().await;
                (first.is_ok(), second)
            })
            .await;
        assert!(twice.0);
        assert!(matches!(twice.1, Err(Error::NoSessionSlot)));
        assert_eq!(in_map(&slots).await, 1);
        assert_eq!(slots.state().used(), 1);
    }

    #[tokio::test]
    async fn closing_a_session_frees_its_slot_and_its_activations() {
        let (_tmp, slots) = slots(1, Duration::from_secs(3600));
        let admission = slots.reserve().await.unwrap();
        let (id, _transport) = admission.run(slots.create_session()).await.unwrap();
        drop(admission);
        assert!(
            slots.reserve().await.is_err(),
            "full, and nothing is idle enough"
        );
        let conversation = crate::server::http_conversation(&id);
        let host = slots.engine.host();
        host.tracker().lock().record(&conversation, "pdf", 0);
        assert!(host.tracker().lock().is_active(&conversation, "pdf"));
        // DELETE, eviction and expiry all end here.
        slots.close_session(&id).await.unwrap();
        assert_eq!(in_map(&slots).await, 0);
        assert!(!host.tracker().lock().is_active(&conversation, "pdf"));
        assert!(slots.reserve().await.is_ok());
    }
}
