//! The server's state, shared by every session: the current [`Snapshot`]
//! of the deck (swapped whole on reload), the activation cache, the
//! per-session activation tracker and the digest cache. Synchronous: the
//! async handlers call into it (file work on blocking threads).

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::num::NonZeroUsize;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError, RwLock};

use lru::LruCache;
use skilldeck::{
    ActivationFormat, ContentCache, Deck, Diagnostic, SearchIndex, Severity,
    SharedActivationTracker, Skill, SkillMode,
};
use tokio::sync::broadcast;

use crate::error::Error;
use crate::options::{DIGEST_CACHE_ENTRIES, ServeOptions};

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

/// One immutable view of the deck. Requests take the current snapshot once
/// and use it throughout, so a reload never mixes two decks in one answer.
#[derive(Debug)]
pub struct Snapshot {
    /// Counts reloads that changed the catalog (cursors carry it).
    pub generation: u64,
    /// The skills.
    pub deck: Deck,
    /// Hash of what the catalog shows (see [`catalog_fingerprint`]).
    pub fingerprint: u64,
    /// The `activate_skill` description: instructions plus the catalog.
    pub tool_description: String,
    /// Model-invocable skills, in deck order (the `name` enum).
    pub model_names: Vec<String>,
    /// BM25 over names and descriptions, built on the first search (it is
    /// not needed to answer the first request).
    search: OnceLock<SearchIndex>,
}

impl Snapshot {
    fn build(deck: Deck, generation: u64, options: &ServeOptions) -> Result<Snapshot, Error> {
        let served: Vec<&Skill> = deck.skills().iter().filter(|s| is_served(s)).collect();
        let catalog =
            skilldeck::render_catalog(served.iter().copied(), &options.tool_catalog, None)?;
        let model_names: Vec<String> = served
            .iter()
            .filter(|s| s.model_invocable())
            .map(|s| s.name.clone())
            .collect();
        let tool_description = tool_description(&catalog.text, model_names.len());
        Ok(Snapshot {
            generation,
            fingerprint: catalog_fingerprint(&deck),
            deck,
            tool_description,
            model_names,
            search: OnceLock::new(),
        })
    }

    /// The search index (built on first use).
    pub fn search_index(&self) -> &SearchIndex {
        self.search
            .get_or_init(|| SearchIndex::new(self.deck.skills()))
    }

    /// The served skill named `name` (mode `off` skills are not served).
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.deck.get(name).filter(|s| is_served(s))
    }

    /// Every served skill, in deck order.
    pub fn served(&self) -> impl Iterator<Item = &Skill> {
        self.deck.skills().iter().filter(|s| is_served(s))
    }

    /// True when no skill is served (then no skill tools are offered).
    pub fn is_empty(&self) -> bool {
        self.served().next().is_none()
    }

    /// The error that kept a skill folder named `name` out of the deck, if
    /// discovery reported one (so "unknown skill" can say why).
    pub fn problem_for(&self, name: &str) -> Option<&Diagnostic> {
        self.deck.diagnostics().iter().find(|d| {
            d.severity == Severity::Error
                && d.file.as_deref().is_some_and(|f| {
                    let dir = if f.file_name().is_some_and(|n| n == "SKILL.md") {
                        f.parent()
                    } else {
                        Some(f)
                    };
                    dir.and_then(Path::file_name).is_some_and(|n| n == name)
                })
        })
    }

    /// "Unknown skill" with the reason it is missing or a suggestion.
    pub fn unknown_skill_message(&self, name: &str) -> String {
        if let Some(problem) = self.problem_for(name) {
            return format!("skill '{name}' is not available: {problem}");
        }
        let suggestions = skilldeck::suggest(name, self.served().map(|s| s.name.as_str()));
        let mut message = format!("no skill named '{name}'");
        message.push_str(&skilldeck::search::did_you_mean_suffix(&suggestions));
        message
    }
}

fn is_served(skill: &Skill) -> bool {
    skill.mode != SkillMode::Off
}

/// What clients see of the catalog: served skills' names, descriptions,
/// modes, invocation flags, argument hints and files. Bodies are not in it,
/// so an edit to a body keeps the fingerprint (and clients' caches).
pub fn catalog_fingerprint(deck: &Deck) -> u64 {
    let mut h = DefaultHasher::new();
    for s in deck.skills().iter().filter(|s| is_served(s)) {
        s.name.hash(&mut h);
        s.description.hash(&mut h);
        s.mode.hash(&mut h);
        s.model_invocable().hash(&mut h);
        s.user_invocable().hash(&mut h);
        s.argument_hint().hash(&mut h);
        s.skill_md.hash(&mut h);
    }
    h.finish()
}

fn tool_description(catalog: &str, model_skills: usize) -> String {
    let mut text = String::with_capacity(catalog.len() + 600);
    text.push_str(
        "Load a skill: its full instructions, with `arguments` substituted, and the list of \
         its files. Call this when a task matches a skill's description below, before acting; \
         follow the instructions it returns. Read the skill's files with \
         `read_skill_resource` when the instructions point to them. A second call for the \
         same skill in this session returns a short notice: the instructions are already \
         in the conversation.",
    );
    if model_skills == 0 {
        text.push_str("\n\nNo skill is available to the model right now.");
        return text;
    }
    text.push_str("\n\nAvailable skills:\n");
    text.push_str(catalog);
    text
}

/// File identity and version for the digest cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    len: u64,
    mtime: i64,
    mtime_nsec: i64,
    ctime: i64,
    ctime_nsec: i64,
    ino: u64,
    dev: u64,
}

impl Stamp {
    fn of(meta: &std::fs::Metadata) -> Stamp {
        Stamp {
            len: meta.len(),
            mtime: meta.mtime(),
            mtime_nsec: meta.mtime_nsec(),
            ctime: meta.ctime(),
            ctime_nsec: meta.ctime_nsec(),
            ino: meta.ino(),
            dev: meta.dev(),
        }
    }
}

#[derive(Debug, Clone)]
struct DigestEntry {
    stamp: Stamp,
    digest: Arc<str>,
    size: u64,
}

/// What activating a skill answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Activated {
    /// The instructions, in the client guide's `<skill_content>` envelope.
    Content(Arc<str>),
    /// The session already has them: the short notice.
    AlreadyActive(String),
}

/// Why a skill could not be activated (a tool error, not a server error).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ActivateError {
    /// No such skill, with the reason or a suggestion.
    #[error("{0}")]
    Unknown(String),
    /// The skill may only be invoked by the user.
    #[error(
        "skill '{0}' cannot be activated by the model (disable-model-invocation, or mode \
         \"manual\"); the user can invoke it as the prompt /{0}"
    )]
    NotModelInvocable(String),
    /// The skill's files could not be read or its arguments were refused.
    #[error("{0}")]
    Failed(String),
}

/// The state every session shares. See the module documentation.
#[derive(Debug)]
pub struct Engine {
    options: ServeOptions,
    current: RwLock<Arc<Snapshot>>,
    cache: Mutex<ContentCache>,
    tracker: SharedActivationTracker,
    digests: Mutex<LruCache<PathBuf, DigestEntry>>,
    changes: broadcast::Sender<Change>,
    sessions: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every critical section leaves its data consistent; a panic elsewhere
    // must not take the server down with it.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Engine {
    /// Discovers the deck and builds the first snapshot.
    pub fn new(options: ServeOptions) -> Result<Engine, Error> {
        let deck = skilldeck::discover(&options.discovery);
        Engine::with_deck(options, deck)
    }

    /// An engine over an already discovered deck (reloads use
    /// `options.discovery`).
    pub fn with_deck(options: ServeOptions, deck: Deck) -> Result<Engine, Error> {
        let snapshot = Snapshot::build(deck, 0, &options)?;
        let (changes, _) = broadcast::channel(64);
        let digest_capacity = NonZeroUsize::new(DIGEST_CACHE_ENTRIES).unwrap_or(NonZeroUsize::MIN);
        Ok(Engine {
            cache: Mutex::new(ContentCache::with_options(options.cache)),
            options,
            current: RwLock::new(Arc::new(snapshot)),
            tracker: SharedActivationTracker::default(),
            digests: Mutex::new(LruCache::new(digest_capacity)),
            changes,
            sessions: AtomicU64::new(0),
        })
    }

    /// The options in force.
    pub fn options(&self) -> &ServeOptions {
        &self.options
    }

    /// The current snapshot.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        Arc::clone(&self.current.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// Change notices from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Change> {
        self.changes.subscribe()
    }

    /// A fresh session key (for the activation tracker).
    pub fn new_session_key(&self) -> String {
        let n = self.sessions.fetch_add(1, Ordering::Relaxed);
        format!("session-{n}")
    }

    /// Discovers the deck again. When the catalog changed, the new snapshot
    /// replaces the old one, clients are told ([`Change::Catalog`]), and
    /// `Ok(true)` is returned; otherwise the current snapshot stays (so
    /// clients' caches stay warm) and `Ok(false)` is returned. Skills that
    /// became invalid leave the deck (their error is logged and given to
    /// anyone who asks for them), so a stale version is never served as if
    /// current.
    pub fn reload(&self) -> Result<bool, Error> {
        let deck = skilldeck::discover(&self.options.discovery);
        for d in deck.diagnostics() {
            if d.severity == Severity::Error {
                tracing::warn!(diagnostic = %d, "skill not loaded");
            }
        }
        let fingerprint = catalog_fingerprint(&deck);
        let current = self.snapshot();
        if fingerprint == current.fingerprint {
            return Ok(false);
        }
        let snapshot = Snapshot::build(deck, current.generation + 1, &self.options)?;
        tracing::info!(
            generation = snapshot.generation,
            skills = snapshot.deck.len(),
            "catalog changed"
        );
        *self.current.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(snapshot);
        // Activations cached under the old deck may name moved files.
        lock(&self.cache).clear();
        // No receiver (no session yet) is not an error.
        let _ = self.changes.send(Change::Catalog);
        Ok(true)
    }

    /// A file inside a skill changed without changing the catalog: its
    /// cached activation is dropped and sessions that had it active will get
    /// the new instructions on their next activation.
    pub fn skill_files_changed(&self, name: &str) {
        lock(&self.cache).invalidate(name);
        let forgotten = self.tracker.forget_skill(name);
        tracing::debug!(skill = name, sessions = forgotten, "skill content changed");
    }

    /// Files were added to or removed from skills: only the resource list
    /// changed.
    pub fn resources_changed(&self) {
        let _ = self.changes.send(Change::Resources);
    }

    /// Activates `name` for the session `session`: the instructions the
    /// first time, the short notice after.
    pub fn activate(
        &self,
        snapshot: &Snapshot,
        session: &str,
        name: &str,
        arguments: &str,
    ) -> Result<Activated, ActivateError> {
        let skill = snapshot
            .get(name)
            .ok_or_else(|| ActivateError::Unknown(snapshot.unknown_skill_message(name)))?;
        if !skill.model_invocable() {
            return Err(ActivateError::NotModelInvocable(skill.name.clone()));
        }
        // Recorded before rendering, in one step with the check, so two
        // concurrent calls in one session cannot both send the body; a
        // failed activation is forgotten again.
        if self.tracker.record(session, &skill.name) == skilldeck::Seen::Again {
            return Ok(Activated::AlreadyActive(skilldeck::already_active_notice(
                &skill.name,
            )));
        }
        match self.render(skill, arguments) {
            Ok(text) => Ok(Activated::Content(text)),
            Err(e) => {
                self.tracker.forget(session, &skill.name);
                Err(e)
            }
        }
    }

    /// The skill's instructions with `arguments`, from the cache when its
    /// `SKILL.md` is unchanged (no session tracking: prompts use this).
    pub fn render(&self, skill: &Skill, arguments: &str) -> Result<Arc<str>, ActivateError> {
        let cached = lock(&self.cache)
            .activate(skill, arguments)
            .map_err(|e| ActivateError::Failed(e.to_string()))?;
        Ok(Arc::from(cached.rendered(ActivationFormat::Xml)))
    }

    /// The `sha256:` digest and size of the skill file at `path` (relative,
    /// already listed), from the cache when the file's stamp is unchanged.
    /// The bytes are read through the core's safe read, so the digest covers
    /// exactly what `resources/read` returns.
    pub fn digest(&self, skill: &Skill, path: &str) -> Result<(Arc<str>, u64), skilldeck::Error> {
        let full = skill.real_dir().join(path);
        let stamp = std::fs::metadata(&full).ok().map(|m| Stamp::of(&m));
        if let Some(stamp) = stamp
            && let Some(entry) = lock(&self.digests).get(&full)
            && entry.stamp == stamp
        {
            return Ok((Arc::clone(&entry.digest), entry.size));
        }
        let resource = skilldeck::read_resource(skill, path)?;
        let bytes = resource.bytes();
        let digest: Arc<str> = Arc::from(rmcp::model::sha256_digest(bytes));
        let size = bytes.len() as u64;
        if let Some(stamp) = stamp {
            lock(&self.digests).put(
                full,
                DigestEntry {
                    stamp,
                    digest: Arc::clone(&digest),
                    size,
                },
            );
        }
        Ok((digest, size))
    }
}
