//! [`Host`]: the state every session shares. The current [`Snapshot`] of
//! the deck (swapped whole on reload), the activation cache, the
//! per-session activation tracker and the manifest's digest cache.
//! Synchronous and runtime-free: a server calls it from its handlers (file
//! work on blocking threads), a CLI or a binding calls it directly.
//!
//! The host has no notification channel: [`Host::reload`] says whether the
//! catalog changed, and the face tells its clients.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};

use skilldeck::{ActivationFormat, Deck, Diagnostic, Skill};

use crate::activation_log::{Delivery, DeliveryError};
use crate::cache::{CacheStats, CachedActivation, ContentCache};
use crate::execution::Execution;
use crate::manifest::Manifest;
use crate::options::HostOptions;
use crate::remote::RemoteSkills;
use crate::snapshot::{Snapshot, catalog_fingerprint};
use crate::tool_error::ToolError;
use crate::tool_handler::ToolHandlers;
use crate::tracker::SharedActivationTracker;

/// The agent id dynamic-context runs are made under (the concurrency cap
/// counts them together).
pub const DYNAMIC_CONTEXT_AGENT: &str = "skilldeck-activation";

/// What activating a skill answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Activated {
    /// The instructions, in the client guide's `<skill_content>` envelope.
    Content(Arc<str>),
    /// The session already has them: the short notice.
    AlreadyActive(String),
}

impl Activated {
    /// The text for the model.
    pub fn text(&self) -> &str {
        match self {
            Activated::Content(text) => text,
            Activated::AlreadyActive(notice) => notice,
        }
    }
}

/// What a [`Host::reload`] found.
#[derive(Debug, Clone)]
pub struct Reload {
    /// True when the catalog changed and the new snapshot was swapped in
    /// (tell clients their tool, prompt and resource lists are stale).
    pub catalog_changed: bool,
    /// The generation now current.
    pub generation: u64,
    /// Skills in the deck discovered.
    pub skills: usize,
    /// Errors that kept skill folders out of the deck discovered.
    pub errors: Vec<Diagnostic>,
}

/// The state every session shares. See the module documentation.
#[derive(Debug)]
pub struct Host {
    options: Arc<HostOptions>,
    current: RwLock<Arc<Snapshot>>,
    cache: Mutex<ContentCache>,
    tracker: SharedActivationTracker,
    manifest: Manifest,
    sessions: AtomicU64,
    /// Activations by skill name since the host started (first per
    /// session): the catalog's recent-use signal at the next rebuild.
    uses: Mutex<HashMap<String, u64>>,
    hidden_folders: Vec<(String, String)>,
    /// Present when `[exec] enabled` (or `serve --exec`): skill code runs.
    execution: Option<Execution>,
    /// The project roots of the folders a client announced
    /// ([`Host::set_client_folders`]).
    client_roots: RwLock<Vec<skilldeck::Root>>,
    /// Bumped whenever [`Host::discovery`] changes (a watcher re-plans).
    discovery_generation: AtomicU64,
    /// Bumped whenever a file inside a skill changes
    /// ([`Host::skill_files_changed`]).
    files_generation: AtomicU64,
    /// The handlers of host-implemented tools ([`crate::tool_handlers`]).
    handlers: ToolHandlers,
    /// Skills upstream MCP servers serve ([`Host::set_remote`]).
    remote: RwLock<Option<Arc<RemoteSkills>>>,
    /// Set by [`Host::set_remote`]: the next reload builds a snapshot even
    /// when names and descriptions are the same (an upstream skill's files
    /// may have changed, and its folder is named by its fingerprint).
    remote_changed: AtomicBool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every critical section leaves its data consistent; a panic elsewhere
    // must not take the host down with it.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// When `options` hide paths: each root's folder (as configured and
/// resolved) with the text it becomes in answers (`""`: paths in it become
/// relative to it), and each explicit skill's folder (it becomes the
/// skill's name), longest first so a folder inside another is replaced
/// whole.
fn hidden_folders(options: &HostOptions) -> Vec<(String, String)> {
    if options.expose_paths {
        return Vec::new();
    }
    let discovery = &options.discovery;
    let folders = discovery
        .roots
        .iter()
        .map(|r| (r.path.clone(), String::new()))
        .chain(
            discovery
                .explicit
                .iter()
                .map(|e| (e.path.clone(), format!("{}/", e.name))),
        );
    let mut hidden = Vec::new();
    for (folder, replacement) in folders {
        let resolved = std::fs::canonicalize(&folder).ok();
        // Only absolute forms: a relative root's name may be any word.
        let forms = std::iter::once(folder).chain(resolved);
        for form in forms.filter(|f| f.is_absolute()) {
            let text = form.to_string_lossy().trim_end_matches('/').to_owned();
            if text.len() > 1 {
                hidden.push((format!("{text}/"), replacement.clone()));
                hidden.push((text, replacement.trim_end_matches('/').to_owned()));
            }
        }
    }
    hidden.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
    hidden.dedup();
    hidden
}

impl Host {
    /// `text` as a client may see it: unchanged when the host exposes paths
    /// ([`HostOptions::expose_paths`]); else every root's folder is cut
    /// from the paths in it (`/srv/skills/pdf/SKILL.md` becomes
    /// `pdf/SKILL.md`) and an explicit skill's folder becomes its name.
    /// Errors that quote a skill's file (a skipped skill's diagnostic) pass
    /// through this before they reach a remote client.
    pub fn hide_paths<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if self.hidden_folders.is_empty()
            || !self
                .hidden_folders
                .iter()
                .any(|(folder, _)| text.contains(folder.as_str()))
        {
            return Cow::Borrowed(text);
        }
        let mut out = text.to_owned();
        for (folder, replacement) in &self.hidden_folders {
            if out.contains(folder.as_str()) {
                out = out.replace(folder.as_str(), replacement);
            }
        }
        Cow::Owned(out)
    }

    /// Discovers the deck and builds the first snapshot.
    pub fn new(options: HostOptions) -> Result<Host, skilldeck::Error> {
        let deck = skilldeck::discover(&options.discovery);
        Host::with_deck(options, deck)
    }

    /// A host over an already discovered deck (reloads use
    /// `options.discovery`).
    pub fn with_deck(options: HostOptions, deck: Deck) -> Result<Host, skilldeck::Error> {
        let options = Arc::new(options);
        let execution = options
            .exec
            .enabled
            .then(|| Execution::new(options.exec.clone()));
        let packages = execution.as_ref().map(Execution::packages);
        let snapshot = Snapshot::build(deck, 0, Arc::clone(&options))?.with_packages(packages);
        Ok(Host {
            cache: Mutex::new(ContentCache::with_options(options.cache_options())),
            manifest: Manifest::new(options.digest_cache_entries),
            current: RwLock::new(Arc::new(snapshot)),
            tracker: SharedActivationTracker::default(),
            sessions: AtomicU64::new(0),
            uses: Mutex::new(HashMap::new()),
            hidden_folders: hidden_folders(&options),
            execution,
            client_roots: RwLock::new(Vec::new()),
            discovery_generation: AtomicU64::new(0),
            files_generation: AtomicU64::new(0),
            handlers: ToolHandlers::default(),
            remote: RwLock::new(None),
            remote_changed: AtomicBool::new(false),
            options,
        })
    }

    /// The options in force.
    pub fn options(&self) -> &HostOptions {
        &self.options
    }

    /// The execution service, when execution is enabled
    /// ([`HostOptions::exec`]).
    pub fn execution(&self) -> Option<&Execution> {
        self.execution.as_ref()
    }

    /// The handlers of host-implemented tools.
    pub(crate) fn handlers(&self) -> &ToolHandlers {
        &self.handlers
    }

    /// The current snapshot.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        Arc::clone(&self.current.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// The digest cache of skill files.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The per-session activation tracker.
    pub fn tracker(&self) -> &SharedActivationTracker {
        &self.tracker
    }

    /// A fresh session key (for the activation tracker).
    pub fn new_session_key(&self) -> String {
        let n = self.sessions.fetch_add(1, Ordering::Relaxed);
        format!("session-{n}")
    }

    /// Discovers the deck again. When the catalog changed, the new snapshot
    /// replaces the old one and cached activations are dropped; otherwise
    /// the current snapshot stays (so clients' caches stay warm). Skills
    /// that became invalid leave the deck (their error is in
    /// [`Reload::errors`] and given to anyone who asks for them), so a stale
    /// version is never served as if current. A skill withdrawn this way
    /// (no longer served, or now served from another folder) is forgotten
    /// in every session, here, whatever told the caller to reload: the
    /// model was told it is gone, so when it comes back its instructions
    /// are delivered again, not the already-active notice.
    pub fn reload(&self) -> Result<Reload, skilldeck::Error> {
        let mut deck = skilldeck::discover(&self.discovery());
        if let Some(remote) = self.remote() {
            deck = deck.with_extra(remote.skills(), Vec::new());
        }
        let errors: Vec<Diagnostic> = deck
            .diagnostics()
            .iter()
            .filter(|d| d.is_error())
            .cloned()
            .collect();
        let skills = deck.len();
        let fingerprint = catalog_fingerprint(&deck);
        let current = self.snapshot();
        let remote_changed = self.remote_changed.swap(false, Ordering::AcqRel);
        if fingerprint == current.fingerprint && !remote_changed {
            return Ok(Reload {
                catalog_changed: false,
                generation: current.generation,
                skills,
                errors,
            });
        }
        let generation = current.generation + 1;
        let uses = lock(&self.uses).clone();
        let snapshot = Snapshot::build_ranked(deck, generation, Arc::clone(&self.options), &uses)?
            .with_packages(self.execution.as_ref().map(Execution::packages));
        let withdrawn: std::collections::HashSet<&str> = current
            .served()
            .filter(|old| {
                snapshot
                    .get(&old.name)
                    .is_none_or(|new| new.dir() != old.dir())
            })
            .map(|old| old.name.as_str())
            .collect();
        if !withdrawn.is_empty() {
            self.tracker.forget_skills(&withdrawn);
        }
        *self.current.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(snapshot);
        // Activations cached under the old deck may name moved files.
        lock(&self.cache).clear();
        Ok(Reload {
            catalog_changed: true,
            generation,
            skills,
            errors,
        })
    }

    /// Serves the skills of upstream MCP servers too, merged with the
    /// discovered ones from the next [`Host::reload`] on (names namespaced:
    /// [`crate::remote`]).
    pub fn set_remote(&self, remote: RemoteSkills) {
        *self.remote.write().unwrap_or_else(PoisonError::into_inner) = Some(Arc::new(remote));
        self.remote_changed.store(true, Ordering::Release);
    }

    /// The upstream skills served, if any.
    pub fn remote(&self) -> Option<Arc<RemoteSkills>> {
        self.remote
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Before anything reads `skill`'s files: when it is an upstream's and
    /// not yet local, fetches and verifies it
    /// ([`RemoteSkills::materialise`]); a local skill needs nothing.
    pub fn ensure_local(&self, skill: &Skill) -> Result<(), skilldeck::Error> {
        if let Some(remote) = self.remote()
            && let Some(entry) = remote.of(skill)
        {
            remote.materialise(entry)?;
        }
        Ok(())
    }

    /// The discovery options in force: the configured ones, plus the
    /// project roots of the folders a client announced.
    pub fn discovery(&self) -> Cow<'_, skilldeck::DiscoveryOptions> {
        let client = self
            .client_roots
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        if client.is_empty() {
            return Cow::Borrowed(&self.options.discovery);
        }
        let mut discovery = self.options.discovery.clone();
        for root in client.iter() {
            if !discovery.roots.iter().any(|r| r.path == root.path) {
                discovery.roots.push(root.clone());
            }
        }
        Cow::Owned(discovery)
    }

    /// The folders a client announced (MCP `roots`, as local paths): their
    /// project roots (`.agents/skills`, `.claude/skills`, `.skills` in each
    /// and up to its repository root) are searched from the next
    /// [`Host::reload`] on, as project skills. Ignored (false) unless
    /// [`HostOptions::client_project_roots`]; true when the roots changed.
    pub fn set_client_folders(&self, folders: &[std::path::PathBuf]) -> bool {
        if !self.options.client_project_roots {
            return false;
        }
        let mut roots: Vec<skilldeck::Root> = Vec::new();
        for folder in folders.iter().filter(|f| f.is_absolute()) {
            for path in skilldeck::deck::project_roots(folder) {
                if !roots.iter().any(|r| r.path == path) {
                    roots.push(skilldeck::Root {
                        path,
                        scope: skilldeck::Scope::Project,
                        required: false,
                    });
                }
            }
        }
        let mut current = self
            .client_roots
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        if *current == roots {
            return false;
        }
        *current = roots;
        self.discovery_generation.fetch_add(1, Ordering::Release);
        true
    }

    /// What the skills' files are at: `(snapshot generation, files
    /// generation)` changes whenever the catalog is rebuilt or a file
    /// inside a skill changes (as the watcher reports them), so anything
    /// built from the served skills' files (the well-known index's
    /// archives) can be kept until it does.
    pub fn content_generation(&self) -> (u64, u64) {
        (
            self.snapshot().generation,
            self.files_generation.load(Ordering::Acquire),
        )
    }

    /// Changes each time [`Host::discovery`] does (a file watcher compares
    /// it to know when to plan its watches again).
    pub fn discovery_generation(&self) -> u64 {
        self.discovery_generation.load(Ordering::Acquire)
    }

    /// A file inside the skill `name` changed without changing the catalog:
    /// its cached activation is dropped and it is forgotten in every
    /// session, so sessions that had it get the new instructions on their
    /// next activation. Returns in how many sessions it was active.
    pub fn skill_files_changed(&self, name: &str) -> usize {
        self.files_generation.fetch_add(1, Ordering::Release);
        lock(&self.cache).invalidate(name);
        self.tracker.forget_skill(name)
    }

    /// Activates `name` for the session `session` as the model asks
    /// (`activate_skill`): refused unless [`crate::rules::model_access`]
    /// allows it. Deduplication is of identical content: the instructions
    /// the first time, again whenever the arguments differ from the ones
    /// last delivered, the short notice for the same arguments; `reload`
    /// delivers them again whatever was sent (the client compacted them
    /// away).
    pub fn activate(
        &self,
        snapshot: &Snapshot,
        session: &str,
        name: &str,
        arguments: &str,
        reload: bool,
    ) -> Result<Activated, ToolError> {
        let span = tracing::info_span!(
            "activate",
            skilldeck.skill.name = name,
            skilldeck.activation.already_active = tracing::field::Empty,
            skilldeck.activation.cached = tracing::field::Empty,
        );
        let _entered = span.enter();
        let skill = snapshot.require(name).map_err(ToolError::lookup)?;
        crate::rules::model_access(skill)
            .map_err(|refusal| refusal.to_tool_error(crate::rules::ModelUse::Activate))?;
        // Recorded before rendering, in one step with the check, so two
        // concurrent calls in one session cannot both send the body; a
        // failed activation is forgotten again.
        let delivered = crate::activation_log::deliver(
            &mut &self.tracker,
            session,
            &skill.name,
            arguments,
            reload,
            || self.render_for(skill, arguments, session),
        );
        match delivered {
            Ok(Delivery::AlreadyActive(notice)) => {
                span.record("skilldeck.activation.already_active", true);
                Ok(Activated::AlreadyActive(notice))
            }
            Ok(Delivery::Content(text)) => {
                span.record("skilldeck.activation.already_active", false);
                *lock(&self.uses).entry(skill.name.clone()).or_insert(0) += 1;
                Ok(Activated::Content(text))
            }
            Err(DeliveryError::Render(e)) => Err(ToolError::failed(e)),
            // The in-memory tracker does not fail.
            Err(DeliveryError::Log(e)) => Err(ToolError::new(
                crate::tool_error::ToolErrorKind::Failed,
                e.to_string(),
            )),
        }
    }

    /// The skill's instructions with `arguments`, from the cache when its
    /// `SKILL.md` is unchanged (no session tracking: prompts use this).
    pub fn render(&self, skill: &Skill, arguments: &str) -> Result<Arc<str>, skilldeck::Error> {
        self.render_for(skill, arguments, "")
    }

    /// [`Host::render`] for the session `session`. With execution and
    /// `[exec] dynamic-context` on, the body's dynamic-context directives
    /// run in the sandbox (under the session's id) and their output
    /// replaces them; the cache is bypassed, since their output is live.
    /// Otherwise each directive is `[shell execution disabled]`.
    fn render_for(
        &self,
        skill: &Skill,
        arguments: &str,
        session: &str,
    ) -> Result<Arc<str>, skilldeck::Error> {
        self.ensure_local(skill)?;
        if let Some(execution) = self
            .execution
            .as_ref()
            .filter(|e| e.config().dynamic_context)
        {
            let context = skilldeck_exec::CallContext {
                agent_id: DYNAMIC_CONTEXT_AGENT.to_owned(),
                session_id: session.to_owned(),
                ..skilldeck_exec::CallContext::default()
            };
            let activation = skilldeck::activate_with_dynamic(
                skill,
                arguments,
                &self.options.cache_options().activation,
                &execution.dynamic_context(context),
            )?;
            return Ok(Arc::from(activation.render(ActivationFormat::Xml)));
        }
        let cached = self.activation(skill, arguments)?;
        Ok(Arc::from(cached.rendered(ActivationFormat::Xml)))
    }

    /// The skill's activation with `arguments` (body, folder, files), from
    /// the cache when its `SKILL.md` is unchanged, with its renderings
    /// built once; no session tracking. [`Host::render`] is its `xml`
    /// rendering; a binding that returns the parts uses this.
    pub fn activation(
        &self,
        skill: &Skill,
        arguments: &str,
    ) -> Result<Arc<CachedActivation>, skilldeck::Error> {
        self.ensure_local(skill)?;
        let mut cache = lock(&self.cache);
        let hits = cache.stats().hits;
        let cached = cache.activate(skill, arguments)?;
        tracing::Span::current().record("skilldeck.activation.cached", cache.stats().hits > hits);
        Ok(cached)
    }

    /// The activation cache's counters and sizes.
    pub fn cache_stats(&self) -> CacheStats {
        lock(&self.cache).stats()
    }

    /// Empties the activation cache (the next activations read and render
    /// again; sessions keep what they received).
    pub fn clear_cache(&self) {
        lock(&self.cache).clear();
    }

    /// Forgets everything of `conversation` (its session ended): its
    /// activations, its `run_code` work folder (removed, unless a call is
    /// using it) and its approval decisions.
    pub fn end_conversation(&self, conversation: &str) {
        self.tracker.forget_conversation(conversation);
        if let Some(execution) = &self.execution {
            if let Some(folders) = execution.work_folders() {
                folders.forget(conversation);
            }
            execution.approvals().forget(conversation);
        }
    }

    /// Forgets what `conversation` received: one skill, or everything
    /// when `skill` is `None` (its context was cleared or compacted, so
    /// the next activation delivers the instructions). True when something
    /// was remembered.
    pub fn forget_activations(&self, conversation: &str, skill: Option<&str>) -> bool {
        match skill {
            Some(skill) => self.tracker.forget(conversation, skill),
            None => self.tracker.forget_conversation(conversation),
        }
    }
}
