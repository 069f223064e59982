//! Hot reload: every root is watched (`notify`, events debounced for
//! [`crate::options::RELOAD_DEBOUNCE`]); what to watch, a root that does
//! not exist yet included, is the host's rule
//! ([`skilldeck_host::watch::plan`]): this module maps it onto `notify`
//! and re-plans when a folder on the way to a missing root appears, or a
//! root vanishes. A batch of events is sorted into what clients must hear:
//!
//! - a `SKILL.md`, or any folder or file appearing, disappearing or moving:
//!   the deck is discovered again; only when the catalog changed is the new
//!   snapshot swapped in and `list_changed` sent for tools, prompts and
//!   resources ([`Engine::reload`]);
//! - otherwise, files added or removed inside skills: only
//!   `resources/list_changed`;
//! - any edit inside a skill: its cached activation is dropped and sessions
//!   that had it active get the new instructions next time, without touching
//!   the catalog (clients' prompt caches stay warm): [`Engine::skill_files_changed`],
//!   which is the host's rule ([`skilldeck_host::Host::skill_files_changed`]).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use notify::event::{EventKind, ModifyKind};
use notify::{RecommendedWatcher, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer};

use skilldeck_host::{Relevance, WatchPlan, WatchTarget};

use crate::engine::{Engine, Snapshot};
use crate::error::Error;

/// Keeps the watch alive; dropping it stops reloading (the worker thread
/// ends when the debouncer, and with it the event channel, is dropped).
pub struct Watcher {
    state: Arc<Mutex<WatchState>>,
}

/// The debouncer and what it watches now.
struct WatchState {
    debouncer: Debouncer<RecommendedWatcher, RecommendedCache>,
    plan: WatchPlan,
    watched: Vec<WatchTarget>,
}

impl Watcher {
    /// The folders watched now (recursively or not).
    pub fn watched(&self) -> Vec<WatchTarget> {
        lock(&self.state).watched.clone()
    }
}

impl std::fmt::Debug for Watcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watcher")
            .field("watched", &self.watched())
            .finish()
    }
}

fn lock(m: &Mutex<WatchState>) -> MutexGuard<'_, WatchState> {
    // Every critical section leaves the state consistent.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What the debouncer hands the worker.
enum Message {
    Events(Vec<notify::Event>),
    /// Events may have been lost.
    Errors,
}

/// What a batch of file events means.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Batch {
    /// Something may have added, removed or renamed a skill, or changed a
    /// `SKILL.md`: discover again.
    pub rediscover: bool,
    /// Files appeared or disappeared: the resource list changed.
    pub files_added_or_removed: bool,
    /// Paths that changed (to find the skills they belong to).
    pub paths: BTreeSet<PathBuf>,
}

/// Sorts `events` (see the module documentation).
pub fn classify<'a>(events: impl IntoIterator<Item = &'a notify::Event>) -> Batch {
    let mut batch = Batch::default();
    for event in events {
        let structural = matches!(
            event.kind,
            EventKind::Create(_) | EventKind::Remove(_) | EventKind::Modify(ModifyKind::Name(_))
        );
        if matches!(event.kind, EventKind::Access(_)) {
            continue;
        }
        for path in &event.paths {
            let is_skill_md = path.file_name().is_some_and(|n| n == "SKILL.md");
            if is_skill_md || structural {
                batch.rediscover = true;
            }
            if structural {
                batch.files_added_or_removed = true;
            }
            batch.paths.insert(path.clone());
        }
    }
    batch
}

/// The skills (by name) whose folders hold any of `paths`.
fn skills_touched(snapshot: &Snapshot, paths: &BTreeSet<PathBuf>) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for path in paths {
        if let Some(skill) = snapshot.owner_of(path) {
            names.insert(skill.name.clone());
        }
    }
    names
}

/// Applies one batch to `engine`.
pub fn apply(engine: &Engine, batch: &Batch) {
    let before = engine.snapshot();
    let touched = skills_touched(&before, &batch.paths);
    let catalog_changed = if batch.rediscover {
        match engine.reload() {
            Ok(changed) => changed,
            Err(e) => {
                tracing::error!(error = %e, "reload failed; the previous catalog stays");
                false
            }
        }
    } else {
        false
    };
    for name in &touched {
        engine.skill_files_changed(name);
    }
    if !catalog_changed && batch.files_added_or_removed {
        engine.resources_changed();
    }
    tracing::debug!(
        rediscover = batch.rediscover,
        catalog_changed,
        skills = touched.len(),
        "reload batch"
    );
}

/// Brings the watches in line with the host's [`skilldeck_host::watch::plan`]
/// for the engine's roots; true when what is watched changed (a root
/// appeared or vanished).
fn update_watches(engine: &Engine, state: &mut WatchState) -> bool {
    let plan = skilldeck_host::watch::plan(&engine.options().discovery);
    let wanted = plan.targets.clone();
    state.plan = plan;
    if wanted == state.watched {
        return false;
    }
    for old in &state.watched {
        if !wanted.contains(old) {
            // The kernel may have dropped it already (the folder is gone).
            let _ = state.debouncer.unwatch(&old.path);
        }
    }
    let mut watched = Vec::with_capacity(wanted.len());
    for target in wanted {
        if state.watched.contains(&target) {
            watched.push(target);
            continue;
        }
        let mode = if target.recursive {
            RecursiveMode::Recursive
        } else {
            RecursiveMode::NonRecursive
        };
        match state.debouncer.watch(&target.path, mode) {
            Ok(()) => watched.push(target),
            Err(e) => {
                tracing::warn!(path = %target.path.display(), error = %e, "cannot watch folder");
            }
        }
    }
    tracing::debug!(watched = ?watched, "watching");
    state.watched = watched;
    true
}

/// Handles one debounced batch: events inside roots are sorted by
/// [`classify`]; a structural event, or one on the way to a missing root,
/// re-plans the watches first, and a changed plan discovers again.
fn handle(engine: &Engine, state: &Mutex<WatchState>, message: Message) {
    let batch = match message {
        Message::Errors => {
            update_watches(engine, &mut lock(state));
            Batch {
                rediscover: true,
                files_added_or_removed: true,
                paths: BTreeSet::new(),
            }
        }
        Message::Events(events) => {
            let plan = lock(state).plan.clone();
            let mut replan = false;
            let relevant: Vec<&notify::Event> = events
                .iter()
                .filter(|e| !matches!(e.kind, EventKind::Access(_)))
                .filter(|e| {
                    let mut deck = false;
                    for path in &e.paths {
                        match plan.relevance(path) {
                            Relevance::Deck => deck = true,
                            Relevance::Replan => replan = true,
                            Relevance::Unrelated => {}
                        }
                    }
                    deck
                })
                .collect();
            let mut batch = classify(relevant);
            if replan || batch.files_added_or_removed {
                batch.rediscover |= update_watches(engine, &mut lock(state));
            }
            batch
        }
    };
    if batch.rediscover || !batch.paths.is_empty() {
        apply(engine, &batch);
    }
}

/// Starts watching the engine's roots (and, for a root that does not exist
/// yet, its nearest existing ancestor); events are applied on a worker
/// thread.
pub fn watch(engine: Arc<Engine>, debounce: Duration) -> Result<Watcher, Error> {
    let (sender, receiver) = std::sync::mpsc::channel::<Message>();
    let debouncer = new_debouncer(debounce, None, move |result: DebounceEventResult| {
        let message = match result {
            Ok(events) => Message::Events(events.into_iter().map(|e| e.event).collect()),
            Err(errors) => {
                for e in errors {
                    tracing::warn!(error = %e, "file watch error");
                }
                Message::Errors
            }
        };
        // The worker is gone only when the watcher is being dropped.
        let _ = sender.send(message);
    })
    .map_err(|e| Error::Watch {
        path: PathBuf::from("."),
        message: e.to_string(),
    })?;
    let state = Arc::new(Mutex::new(WatchState {
        debouncer,
        plan: WatchPlan::default(),
        watched: Vec::new(),
    }));
    update_watches(&engine, &mut lock(&state));
    let weak: Weak<Mutex<WatchState>> = Arc::downgrade(&state);
    std::thread::Builder::new()
        .name("skilldeck-reload".to_owned())
        .spawn(move || {
            while let Ok(message) = receiver.recv() {
                let Some(state) = weak.upgrade() else { break };
                handle(&engine, &state, message);
            }
        })
        .map_err(|e| Error::Watch {
            path: PathBuf::from("."),
            message: e.to_string(),
        })?;
    let watcher = Watcher { state };
    let watched = watcher.watched();
    tracing::info!(
        roots = watched.iter().filter(|t| t.recursive).count(),
        standing_in = watched.iter().filter(|t| !t.recursive).count(),
        "watching skill roots"
    );
    Ok(watcher)
}

#[cfg(test)]
mod tests {
    use super::*;
    use notify::event::{CreateKind, DataChange, EventKind, ModifyKind};

    fn event(kind: EventKind, path: &str) -> notify::Event {
        notify::Event::new(kind).add_path(PathBuf::from(path))
    }

    #[test]
    fn a_body_edit_does_not_rediscover_but_a_skill_md_edit_does() {
        let body = event(
            EventKind::Modify(ModifyKind::Data(DataChange::Content)),
            "/r/pdf/references/a.md",
        );
        let batch = classify([&body]);
        assert!(!batch.rediscover);
        assert!(!batch.files_added_or_removed);
        let skill_md = event(
            EventKind::Modify(ModifyKind::Data(DataChange::Content)),
            "/r/pdf/SKILL.md",
        );
        assert!(classify([&skill_md]).rediscover);
    }

    #[test]
    fn a_new_file_changes_the_resource_list() {
        let new = event(
            EventKind::Create(CreateKind::File),
            "/r/pdf/references/b.md",
        );
        let batch = classify([&new]);
        assert!(batch.rediscover);
        assert!(batch.files_added_or_removed);
    }

    #[test]
    fn reads_are_ignored() {
        let read = event(
            EventKind::Access(notify::event::AccessKind::Any),
            "/r/pdf/SKILL.md",
        );
        assert_eq!(classify([&read]), Batch::default());
    }
}
