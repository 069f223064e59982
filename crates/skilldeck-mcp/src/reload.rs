//! Hot reload: every root is watched (`notify`, events debounced for
//! [`crate::options::RELOAD_DEBOUNCE`]). A batch of events is sorted into
//! what clients must hear:
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
use std::sync::Arc;
use std::time::Duration;

use notify::event::{EventKind, ModifyKind};
use notify::{RecommendedWatcher, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer};

use crate::engine::{Engine, Snapshot};
use crate::error::Error;

/// Keeps the watch alive; dropping it stops reloading.
pub struct Watcher {
    _debouncer: Debouncer<RecommendedWatcher, RecommendedCache>,
    /// The folders watched.
    pub watched: Vec<PathBuf>,
}

impl std::fmt::Debug for Watcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watcher")
            .field("watched", &self.watched)
            .finish()
    }
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

/// The folders to watch: each root that exists (resolved), and each
/// explicit skill's folder.
pub fn watch_list(engine: &Engine) -> Vec<PathBuf> {
    let discovery = &engine.options().discovery;
    let mut dirs: Vec<PathBuf> = discovery
        .roots
        .iter()
        .map(|r| r.path.clone())
        .chain(discovery.explicit.iter().map(|e| e.path.clone()))
        .filter_map(|p| std::fs::canonicalize(&p).ok())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs.dedup();
    // A folder inside another watched folder is covered by it.
    let all = dirs.clone();
    dirs.retain(|d| !all.iter().any(|o| o != d && d.starts_with(o)));
    dirs
}

/// Starts watching the engine's roots; events are applied on the
/// debouncer's thread.
pub fn watch(engine: Arc<Engine>, debounce: Duration) -> Result<Watcher, Error> {
    let handler_engine = Arc::clone(&engine);
    let mut debouncer = new_debouncer(debounce, None, move |result: DebounceEventResult| {
        match result {
            Ok(events) => {
                let batch = classify(events.iter().map(|e| &e.event));
                if !batch.paths.is_empty() {
                    apply(&handler_engine, &batch);
                }
            }
            Err(errors) => {
                for e in errors {
                    tracing::warn!(error = %e, "file watch error");
                }
                // Events may have been lost: discover again to be safe.
                apply(
                    &handler_engine,
                    &Batch {
                        rediscover: true,
                        files_added_or_removed: true,
                        paths: BTreeSet::new(),
                    },
                );
            }
        }
    })
    .map_err(|e| Error::Watch {
        path: PathBuf::from("."),
        message: e.to_string(),
    })?;
    let mut watched = Vec::new();
    for dir in watch_list(&engine) {
        match debouncer.watch(&dir, RecursiveMode::Recursive) {
            Ok(()) => watched.push(dir),
            Err(e) => tracing::warn!(path = %dir.display(), error = %e, "cannot watch root"),
        }
    }
    tracing::info!(roots = watched.len(), "watching skill roots");
    Ok(Watcher {
        _debouncer: debouncer,
        watched,
    })
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
