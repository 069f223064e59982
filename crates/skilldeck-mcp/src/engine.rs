//! The server's state: a [`Host`] (snapshot, caches, session tracker: every
//! rule) plus what only the MCP face needs, the channel that tells
//! sessions their lists changed. Synchronous: the async handlers call into
//! it (file work on blocking threads).

use std::sync::Arc;

use tokio::sync::broadcast;

use skilldeck_host::Host;
pub use skilldeck_host::{Activated, Snapshot};

use crate::error::Error;
use crate::options::ServeOptions;

/// Change notices buffered per session before a slow one is told to
/// refetch everything (`Lagged`).
pub const CHANGE_CHANNEL_CAPACITY: usize = 64;

/// What changed on disk, as clients must hear it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Names, descriptions or modes changed: tools, prompts and resources
    /// lists are all stale.
    Catalog,
    /// Only files inside skills were added or removed: the resource list is
    /// stale; the catalog (and clients' prompt caches) are not.
    Resources,
}

/// The host and the change channel every session shares.
#[derive(Debug)]
pub struct Engine {
    options: ServeOptions,
    host: Host,
    changes: broadcast::Sender<Change>,
}

/// One warning when the `activate_skill` description could not list every
/// skill within its budget: how many are listed and how many are not (the
/// model finds those with `search_skills`).
fn warn_if_unlisted(snapshot: &Snapshot) {
    let c = &snapshot.catalog;
    if c.unlisted > 0 {
        tracing::warn!(
            listed = c.listed(),
            shortened = c.shortened,
            unlisted = c.unlisted,
            size = c.size,
            budget = %c.budget.map_or_else(|| "none".to_owned(), |b| b.to_string()),
            "the tool catalog lists {} of {} skills within its budget; the model finds the \
             others with search_skills (raise [catalog] budget-chars or budget-tokens, or set \
             [catalog.priority] to choose which are listed)",
            c.listed(),
            c.skills
        );
    }
}

impl Engine {
    /// Discovers the deck and builds the first snapshot.
    pub fn new(options: ServeOptions) -> Result<Engine, Error> {
        let deck = skilldeck::discover(&options.discovery);
        Engine::with_deck(options, deck)
    }

    /// An engine over an already discovered deck (reloads use
    /// `options.discovery`).
    pub fn with_deck(options: ServeOptions, deck: skilldeck::Deck) -> Result<Engine, Error> {
        let host = Host::with_deck(options.host.clone(), deck)?;
        warn_if_unlisted(&host.snapshot());
        let (changes, _) = broadcast::channel(CHANGE_CHANNEL_CAPACITY);
        Ok(Engine {
            options,
            host,
            changes,
        })
    }

    /// The options in force.
    pub fn options(&self) -> &ServeOptions {
        &self.options
    }

    /// The host every rule lives in.
    pub fn host(&self) -> &Host {
        &self.host
    }

    /// The current snapshot.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.host.snapshot()
    }

    /// Change notices from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Change> {
        self.changes.subscribe()
    }

    /// How many listeners the change notices have now: one per live
    /// session's notification forwarder (and per open subscription), so it
    /// returns to zero once every session has ended.
    pub fn change_listeners(&self) -> usize {
        self.changes.receiver_count()
    }
}

/// The file watcher and the registry poller drive the engine: the host's
/// rules, plus the notices clients must hear.
impl skilldeck_source::Target for Engine {
    fn host(&self) -> &Host {
        &self.host
    }

    /// Discovers the deck again ([`Host::reload`]); when the catalog
    /// changed, clients are told ([`Change::Catalog`]) and `Ok(true)` is
    /// returned. Skills that could not be loaded are logged.
    fn operation_span(&self, name: &'static str) -> tracing::Span {
        crate::telemetry::operation_span(name)
    }

    fn reload(&self) -> Result<bool, skilldeck::Error> {
        let reload = self.host.reload()?;
        for d in &reload.errors {
            tracing::warn!(diagnostic = %d, "skill not loaded");
        }
        if !reload.catalog_changed {
            return Ok(false);
        }
        tracing::info!(
            generation = reload.generation,
            skills = reload.skills,
            "catalog changed"
        );
        warn_if_unlisted(&self.host.snapshot());
        // No receiver (no session yet) is not an error.
        let _ = self.changes.send(Change::Catalog);
        Ok(true)
    }

    /// Files were added to or removed from skills: only the resource list
    /// changed.
    fn resources_changed(&self) {
        let _ = self.changes.send(Change::Resources);
    }
}
