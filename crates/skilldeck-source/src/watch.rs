//! Hot reload: every root is watched (`notify`, events debounced for
//! [`RELOAD_DEBOUNCE`]); what to watch, a root that does
//! not exist yet included, is the host's rule
//! ([`skilldeck_host::watch::plan`]: the folders that can change the deck,
//! one non-recursive watch each, never through a symlink out of a root):
//! this module maps it onto `notify` and re-plans when a folder appears or
//! vanishes (a new folder is watched in turn). When the plan exceeds the
//! watch budget ([`skilldeck_host::HostOptions::watch_budget`]) or the
//! system runs out of watches, it says so once, drops its watches and
//! polls the roots every [`skilldeck_host::HostOptions::watch_poll_period`]
//! instead ([`skilldeck_host::watch::survey`]'s fingerprint), so hot reload
//! keeps working. A batch of events is sorted into what clients must hear:
//!
//! - a `SKILL.md`, or any folder or file appearing, disappearing or moving:
//!   the deck is discovered again; only when the catalog changed is the new
//!   snapshot swapped in and `list_changed` sent for tools, prompts and
//!   resources ([`Target::reload`]);
//! - otherwise, files added or removed inside skills: only
//!   `resources/list_changed`;
//! - any edit inside a skill: its cached activation is dropped and sessions
//!   that had it active get the new instructions next time, without touching
//!   the catalog (clients' prompt caches stay warm): [`Target::skill_files_changed`],
//!   which is the host's rule ([`skilldeck_host::Host::skill_files_changed`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::mpsc::RecvTimeoutError;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant};

use notify::event::{EventKind, ModifyKind};
use notify::{RecommendedWatcher, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer};

use skilldeck_host::{Relevance, Survey, WatchPlan, WatchTarget};

use skilldeck_host::Snapshot;

use crate::error::Error;
use crate::target::Target;

/// Events on the roots are gathered this long before the deck is rebuilt.
pub const RELOAD_DEBOUNCE: Duration = Duration::from_millis(250);

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
    /// Set while the roots are polled instead of watched.
    polling: Option<Polling>,
}

/// Why the roots are polled, and what they looked like last time.
struct Polling {
    /// The system ran out of watches (not only the budget): the roots stay
    /// polled; a tree that shrinks back under the budget is watched again.
    system_limit: bool,
    last: Survey,
    /// The known skill folders' file stamps ([`skilldeck_host::watch::stamp_skills`]),
    /// checked every poll period between full surveys.
    skills: BTreeMap<PathBuf, u64>,
    /// When the next full survey (new or removed skills) is due.
    next_survey: Instant,
}

impl Polling {
    /// Polling from `last` (just taken, in `took`) on.
    fn new(system_limit: bool, last: Survey, took: Duration, period: Duration) -> Polling {
        let skills = skilldeck_host::watch::stamp_skills(last.skills.keys().map(PathBuf::as_path));
        Polling {
            system_limit,
            last,
            skills,
            next_survey: Instant::now() + survey_spacing(took, period),
        }
    }
}

/// How long after a survey that took `took` the next one is due (see
/// [`skilldeck_host::watch::POLL_IDLE_FACTOR`]).
fn survey_spacing(took: Duration, period: Duration) -> Duration {
    period.max(took * skilldeck_host::watch::POLL_IDLE_FACTOR)
}

/// The skill folders whose stamps differ between `old` and `new` (present
/// in only one of them included).
fn changed_skills(old: &BTreeMap<PathBuf, u64>, new: &BTreeMap<PathBuf, u64>) -> BTreeSet<PathBuf> {
    old.keys()
        .chain(new.keys())
        .filter(|dir| old.get(*dir) != new.get(*dir))
        .cloned()
        .collect()
}

/// How the watcher follows the roots now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchMode {
    /// File events (one watch per planned folder).
    Watching,
    /// Polling every [`skilldeck_host::HostOptions::watch_poll_period`]:
    /// the tree exceeds the watch budget, or the system has no watch left.
    Polling,
}

impl Watcher {
    /// The folders watched now (none while polling).
    pub fn watched(&self) -> Vec<WatchTarget> {
        lock(&self.state).watched.clone()
    }

    /// How many folders are watched now (each one system watch).
    pub fn watch_count(&self) -> usize {
        lock(&self.state).watched.len()
    }

    /// Whether the roots are watched or polled.
    pub fn mode(&self) -> WatchMode {
        if lock(&self.state).polling.is_some() {
            WatchMode::Polling
        } else {
            WatchMode::Watching
        }
    }
}

impl std::fmt::Debug for Watcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watcher")
            .field("mode", &self.mode())
            .field("watch_count", &self.watch_count())
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
    /// Events may have been lost (or the roots changed): plan the watches
    /// again and discover again.
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
    /// Events were lost: any skill may have been edited, so every served
    /// skill counts as touched (sessions get its instructions again).
    pub every_skill: bool,
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

/// Applies one batch to `target`.
pub fn apply(target: &dyn Target, batch: &Batch) {
    let before = target.host().snapshot();
    // By name, not by path: a path per skill would cost a search of every
    // skill for each (quadratic at 10,000 skills).
    let touched = if batch.every_skill {
        before.served().map(|s| s.name.clone()).collect()
    } else {
        skills_touched(&before, &batch.paths)
    };
    let catalog_changed = if batch.rediscover {
        match target.reload() {
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
        target.skill_files_changed(name);
    }
    if !catalog_changed && batch.files_added_or_removed {
        target.resources_changed();
    }
    tracing::debug!(
        rediscover = batch.rediscover,
        catalog_changed,
        skills = touched.len(),
        "reload batch"
    );
}

/// Brings the watches in line with the host's [`skilldeck_host::watch::plan`]
/// for the target's roots; true when what is watched changed (a folder
/// appeared or vanished, or the watcher fell back to polling).
fn update_watches(target: &dyn Target, state: &mut WatchState) -> bool {
    if state.polling.is_some() {
        return false;
    }
    let options = target.host().options();
    let discovery = target.host().discovery();
    let plan = skilldeck_host::watch::plan(&discovery, options.watch_budget);
    if !plan.complete {
        let reason = format!(
            "the skill roots hold more than {} folders to watch (the watch budget)",
            options.watch_budget
        );
        start_polling(target, state, &reason, false);
        return true;
    }
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
    for folder in wanted {
        if state.watched.contains(&folder) {
            watched.push(folder);
            continue;
        }
        match state
            .debouncer
            .watch(&folder.path, RecursiveMode::NonRecursive)
        {
            Ok(()) => watched.push(folder),
            Err(e) if out_of_watches(&e) => {
                state.watched = watched;
                let reason = format!("the system's file watch limit is reached ({e})");
                start_polling(target, state, &reason, true);
                return true;
            }
            Err(e) => {
                tracing::warn!(path = %folder.path.display(), error = %e, "cannot watch folder");
            }
        }
    }
    tracing::debug!(watches = watched.len(), "watching");
    state.watched = watched;
    true
}

/// True when `e` says the system (or the user) has no watch left.
fn out_of_watches(e: &notify::Error) -> bool {
    match &e.kind {
        notify::ErrorKind::MaxFilesWatch => true,
        // ENOSPC: what `inotify_add_watch` answers when the user's
        // watches are used up.
        notify::ErrorKind::Io(io) => io.kind() == std::io::ErrorKind::StorageFull,
        _ => false,
    }
}

/// Drops every watch (giving them back to the system) and polls the roots
/// from now on; says so once, with `reason`.
fn start_polling(target: &dyn Target, state: &mut WatchState, reason: &str, system_limit: bool) {
    for old in std::mem::take(&mut state.watched) {
        let _ = state.debouncer.unwatch(&old.path);
    }
    let options = target.host().options();
    let started = Instant::now();
    let discovery = target.host().discovery();
    let last = skilldeck_host::watch::survey(&discovery, discovery.limits.max_dirs);
    let took = started.elapsed();
    state.plan = last.plan.clone();
    state.polling = Some(Polling::new(
        system_limit,
        last,
        took,
        options.watch_poll_period,
    ));
    tracing::warn!(
        period = ?options.watch_poll_period,
        "hot reload: {reason}; polling the roots every {:?} instead of watching them \
         (raise the watch budget, or fs.inotify.max_user_watches, to watch them)",
        options.watch_poll_period
    );
}

/// One poll. Every period the known skill folders are stamped
/// ([`skilldeck_host::watch::stamp_skills`]: an edit to a `SKILL.md` or a
/// skill's file is seen within a period, however large the tree around
/// them); when a full survey is due, the whole tree is surveyed again (new,
/// removed or renamed folders and skills). What changed is applied
/// (discovery again, and the skills whose files changed); a tree back
/// under the budget is watched again. Returns how long to wait before the
/// next poll.
fn poll(target: &dyn Target, state: &Mutex<WatchState>) -> Duration {
    let options = target.host().options();
    let period = options.watch_poll_period;
    let (known, due) = {
        let guard = lock(state);
        let Some(polling) = guard.polling.as_ref() else {
            return period;
        };
        let known: Vec<PathBuf> = polling.last.skills.keys().cloned().collect();
        (known, Instant::now() >= polling.next_survey)
    };
    let survey = due.then(|| {
        let started = Instant::now();
        let discovery = target.host().discovery();
        let survey = skilldeck_host::watch::survey(&discovery, discovery.limits.max_dirs);
        (survey, started.elapsed())
    });
    // The skills to stamp: the known ones, or those the new survey found.
    let dirs: Vec<&Path> = match &survey {
        Some((survey, _)) => survey.skills.keys().map(PathBuf::as_path).collect(),
        None => known.iter().map(PathBuf::as_path).collect(),
    };
    let stamps = skilldeck_host::watch::stamp_skills(dirs);
    let mut guard = lock(state);
    let Some(polling) = guard.polling.as_mut() else {
        return period;
    };
    let paths = changed_skills(&polling.skills, &stamps);
    polling.skills = stamps;
    let mut changed = !paths.is_empty();
    let mut back_to_watching = false;
    if let Some((survey, took)) = survey {
        changed |= survey.folders != polling.last.folders;
        let fits = survey.plan.complete && survey.plan.targets.len() <= options.watch_budget;
        back_to_watching = fits && !polling.system_limit;
        polling.next_survey = Instant::now() + survey_spacing(took, period);
        polling.last = survey;
    }
    if back_to_watching {
        guard.polling = None;
        tracing::info!("hot reload: the roots fit the watch budget again; watching them");
        update_watches(target, &mut guard);
    }
    drop(guard);
    if changed {
        apply(
            target,
            &Batch {
                rediscover: true,
                files_added_or_removed: true,
                paths,
                every_skill: false,
            },
        );
    }
    period
}

/// Handles one debounced batch: events inside roots are sorted by
/// [`classify`]; a structural event, or one on the way to a missing root,
/// re-plans the watches first, and a changed plan discovers again.
fn handle(target: &dyn Target, state: &Mutex<WatchState>, message: Message) {
    let batch = match message {
        Message::Errors => {
            update_watches(target, &mut lock(state));
            Batch {
                rediscover: true,
                files_added_or_removed: true,
                paths: BTreeSet::new(),
                every_skill: true,
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
                batch.rediscover |= update_watches(target, &mut lock(state));
            }
            batch
        }
    };
    if batch.rediscover || !batch.paths.is_empty() {
        apply(target, &batch);
    }
}

/// Starts watching the target's roots (and, for a root that does not exist
/// yet, its nearest existing ancestor); events are applied on a worker
/// thread.
pub fn watch<T: Target + 'static>(target: Arc<T>, debounce: Duration) -> Result<Watcher, Error> {
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
        polling: None,
    }));
    update_watches(&*target, &mut lock(&state));
    let weak: Weak<Mutex<WatchState>> = Arc::downgrade(&state);
    let mut wait = target.host().options().watch_poll_period;
    let mut generation = target.host().discovery_generation();
    std::thread::Builder::new()
        .name("skilldeck-reload".to_owned())
        .spawn(move || {
            loop {
                let message = match receiver.recv_timeout(wait) {
                    Ok(message) => Some(message),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => break,
                };
                let Some(state) = weak.upgrade() else { break };
                // The roots themselves changed (a client announced other
                // folders): plan the watches again, at the latest one
                // period later.
                let now = target.host().discovery_generation();
                let is_work = now != generation || message.is_some();
                // A poll that finds nothing logs nothing: a span per
                // period would only add noise to a trace.
                let span = if is_work {
                    target.operation_span("watch")
                } else {
                    tracing::Span::none()
                };
                let _entered = span.enter();
                if now != generation {
                    generation = now;
                    handle(&*target, &state, Message::Errors);
                }
                match message {
                    Some(message) => handle(&*target, &state, message),
                    None => wait = poll(&*target, &state),
                }
            }
        })
        .map_err(|e| Error::Watch {
            path: PathBuf::from("."),
            message: e.to_string(),
        })?;
    let watcher = Watcher { state };
    let watched = watcher.watched();
    tracing::info!(
        watches = watched.iter().filter(|t| !t.stand_in).count(),
        standing_in = watched.iter().filter(|t| t.stand_in).count(),
        mode = ?watcher.mode(),
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
