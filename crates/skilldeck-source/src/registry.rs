//! Serving one agent's skills from a registry (`skilldeck serve --registry
//! URL --agent ID`).
//!
//! - **The set** is the agent's lock (`GET /api/v1/agents/{id}/lock`):
//!   exactly its resolved skills, each at one version with its
//!   fingerprint, grants and the agent's execution limits.
//! - **Materialisation**: each version lives once in a content-addressed
//!   cache, `CACHE/registry/blobs/<fingerprint-hex>/<name>/`
//!   ([`skilldeck::fs::dirs::cache_dir`]): downloaded
//!   ([`Client::archive_of`]: sha256 and fingerprint checked), unpacked by
//!   `skilldeck-package` (its hostile-archive refusals) into a staging
//!   folder, its content fingerprint checked again, then renamed into place
//!   (atomic; a concurrent process that won the rename is reused). A folder
//!   already there is re-hashed once per process before it is reused; a
//!   folder that does not verify is replaced.
//! - **The root**: the host discovers a generated root,
//!   `CACHE/registry/agents/<id>/serve-<pid>/`, holding one symlink per
//!   skill into the cache (discovery follows symlinked folders). Each link
//!   is replaced atomically (a new link renamed over the old one).
//! - **Refresh**: the lock is polled every [`RegistryOptions::poll`](crate::options::RegistryOptions::poll) with
//!   `If-None-Match`; a new lock is materialised in full before anything
//!   changes (a failure keeps the last good set and is retried next poll),
//!   then the links are swapped, the host reloaded (clients get
//!   `list_changed` when the catalog changed, `resources/list_changed`
//!   when only contents did) and the grants applied.
//! - **Grants**: the lock's per-skill `network` and `env` and the agent's
//!   timeout and concurrency become the `[exec]` config (network and env
//!   from the registry, read paths only from the local config), which the
//!   host maps to a policy with [`skilldeck_exec::policy_from_config`] (the
//!   one mapping). The concurrency cap applies from the start; a later
//!   change needs a restart (logged).
//! - **Outages**: a registry that cannot be reached (or errs) leaves the
//!   last good set served; one warning per outage, one line when it is
//!   back. At start, a lock saved by an earlier run (`lock.json` beside
//!   the root) is served when the registry is down and its skills are in
//!   the cache.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use skilldeck::Scope;
use skilldeck::deck::{ExecConfig, Root, SkillGrant, is_env_name, is_reserved_env_name};
use skilldeck_package::environment::{self, EnvironmentOptions};
use skilldeck_package::signature::{self, Trust};
use skilldeck_package::{
    AllowedSigners, LockEntry, Lockfile, PackageLimits, UnpackOptions, folder_manifest, unpack,
};
use skilldeck_registry::client::{Client, LockFetch};
use skilldeck_registry::names::{AgentId, SkillRef};
use skilldeck_registry::wire::{AgentLock, LockedSkill};

use skilldeck_host::HostOptions;
use skilldeck_registry::client::Token;

use crate::error::Error;
use crate::fetch::write_package;
use crate::target::Target;

/// How often the lock is polled, unless set.
pub const DEFAULT_REGISTRY_POLL: Duration = Duration::from_secs(10);

/// Shortest poll period accepted.
pub const MIN_REGISTRY_POLL: Duration = Duration::from_millis(100);

/// Which registry, which agent, how often.
#[derive(Debug, Clone)]
pub struct RegistryOptions {
    /// The registry's URL.
    pub url: String,
    /// The agent whose skills are served.
    pub agent: AgentId,
    /// The token (scope `agent:<id>`, or admin).
    pub token: Option<Token>,
    /// See [`DEFAULT_REGISTRY_POLL`].
    pub poll: Duration,
    /// The cache folder (default: `CACHE/registry`).
    pub cache: Option<PathBuf>,
    /// Only versions signed by a key listed here are served (`serve
    /// --allowed-signers`); `None`: any key the lock names whose signature
    /// verifies.
    pub allowed_signers: Option<AllowedSigners>,
    /// Unsigned versions are refused (`serve --require-signature`).
    pub require_signature: bool,
    /// Build the environment of each served skill that declares
    /// dependencies when it is materialised (default: uv's defaults, PyPI,
    /// online; `skilldeck serve` sets `[environments]`'s; `None`: not
    /// built, such skills offer no tools and say `environment-missing`).
    pub environments: Option<EnvironmentOptions>,
}

impl RegistryOptions {
    /// Builds environments with the config's `[environments]` settings
    /// (index, wheel folders, offline, uv, interpreter).
    pub fn environments_from(&mut self, config: &skilldeck::deck::EnvironmentsConfig) {
        self.environments = Some(EnvironmentOptions::from_config(config));
    }

    /// The registry at `url`, for `agent`, polled every
    /// [`DEFAULT_REGISTRY_POLL`].
    pub fn new(url: &str, agent: AgentId, token: Option<Token>) -> RegistryOptions {
        RegistryOptions {
            url: url.to_owned(),
            agent,
            token,
            poll: DEFAULT_REGISTRY_POLL,
            cache: None,
            allowed_signers: None,
            require_signature: false,
            environments: Some(EnvironmentOptions::default()),
        }
    }
}

/// Where in the cache folder registry content lives.
const CACHE_SUBDIR: &str = "registry";

/// The saved lock (for a start while the registry is down).
const SAVED_LOCK: &str = "lock.json";

fn registry_error(e: impl std::fmt::Display) -> Error {
    Error::Registry(e.to_string())
}

/// The agent's skills, materialised, and what is needed to refresh them.
#[derive(Debug)]
pub struct RegistrySource {
    client: Client,
    agent: AgentId,
    poll: Duration,
    blobs: PathBuf,
    root: PathBuf,
    saved: PathBuf,
    /// The `[exec]` config before the registry's grants and limits.
    base_exec: ExecConfig,
    /// Which signatures are accepted.
    allowed_signers: Option<AllowedSigners>,
    require_signature: bool,
    /// How environments are built (`None`: not built).
    environments: Option<EnvironmentOptions>,
    /// The registry's URL (the served root's lockfile names sources by it).
    url: String,
    state: Mutex<State>,
}

/// What is served now.
#[derive(Debug, Default)]
struct State {
    etag: Option<String>,
    /// The generation of the lock served (see [`newer`]).
    generation: Option<i64>,
    /// Name → fingerprint of the served skills.
    served: BTreeMap<String, String>,
    /// The limits in force at start (concurrency cannot change later).
    concurrency: Option<u32>,
    /// The agent's `run_code` setting at start (the tool's work folders
    /// are set up once: a change applies after a restart).
    run_code: bool,
    /// Folders verified by this process (not hashed again).
    verified: BTreeSet<PathBuf>,
    /// Set during an outage (so it is reported once).
    outage: bool,
}

fn lock_state(m: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    // Every critical section leaves the state consistent.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Whether a fetched lock of generation `fetched` may replace the one
/// served, of generation `held`: only a strictly newer one does (a
/// replica behind a load balancer that has not seen the latest writes
/// answers an older lock; applying it would take skills back and forth
/// and send `list_changed` for each swing). A lock without a generation
/// (an older registry) is compared by ETag only, as before.
fn newer(held: Option<i64>, fetched: Option<i64>) -> bool {
    match (held, fetched) {
        (Some(h), Some(f)) => f > h,
        _ => true,
    }
}

/// The hex part of a `sha256:` fingerprint, checked by the core's digest
/// rule ([`skilldeck::Digest`]): it names a folder.
fn fingerprint_hex(fingerprint: &str) -> Result<String, Error> {
    skilldeck::Digest::parse(fingerprint)
        .map(|d| d.hex())
        .map_err(|e| registry_error(format!("the lock names a malformed fingerprint: {e}")))
}

/// A skill's name from a lock, checked (it names a folder and a link).
fn checked_name(skill: &LockedSkill) -> Result<&str, Error> {
    SkillRef::new(skill.namespace.as_str(), &skill.name)
        .map(|_| skill.name.as_str())
        .map_err(registry_error)
}

fn io_error(path: &Path, e: std::io::Error) -> Error {
    registry_error(format!("{}: {e}", path.display()))
}

impl RegistrySource {
    /// Fetches the agent's lock (or, with the registry down, the one saved
    /// by an earlier run), materialises it, and points `options` at it:
    /// discovery reads only the generated root, the file watcher is off
    /// (the poll reloads), and `[exec]` carries the lock's grants and
    /// limits. Returns the source to [`RegistrySource::refresh`] from.
    pub fn prepare(
        registry: &RegistryOptions,
        options: &mut HostOptions,
    ) -> Result<RegistrySource, Error> {
        let client = Client::new(&registry.url, registry.token.clone())?;
        let cache = registry
            .cache
            .clone()
            .unwrap_or_else(|| skilldeck::fs::dirs::cache_dir().join(CACHE_SUBDIR));
        let agent_dir = cache.join("agents").join(registry.agent.as_str());
        let root = agent_dir.join(format!("serve-{}", std::process::id()));
        remove_stale_roots(&agent_dir);
        for dir in [cache.join("blobs"), root.clone()] {
            std::fs::create_dir_all(&dir).map_err(|e| io_error(&dir, e))?;
        }
        let source = RegistrySource {
            client,
            agent: registry.agent.clone(),
            poll: registry.poll.max(MIN_REGISTRY_POLL),
            blobs: cache.join("blobs"),
            root: root.clone(),
            saved: agent_dir.join(SAVED_LOCK),
            base_exec: options.exec.clone(),
            allowed_signers: registry.allowed_signers.clone(),
            require_signature: registry.require_signature,
            environments: registry.environments.clone(),
            url: registry.url.clone(),
            state: Mutex::new(State::default()),
        };
        let (lock, etag, generation) = match source.client.lock(&source.agent, None) {
            Ok(LockFetch::Fresh {
                lock,
                etag,
                generation,
            }) => (lock, Some(etag), generation),
            Ok(LockFetch::NotModified) => {
                return Err(registry_error(
                    "the registry answered 304 to a first request",
                ));
            }
            Err(e) if e.is_unavailable() => {
                let lock = source.load_saved().ok_or_else(|| {
                    registry_error(format!("{e} (and no lock saved by an earlier run)"))
                })?;
                tracing::warn!(error = %e, "the registry is unreachable; serving the lock saved by an earlier run");
                lock_state(&source.state).outage = true;
                (lock, None, None)
            }
            Err(e) => return Err(Error::Client(e)),
        };
        let dirs = source.materialise(&lock)?;
        source.build_environments(&lock, &dirs);
        source.link(&dirs)?;
        if etag.is_some() {
            source.save(&lock);
        }
        {
            let mut state = lock_state(&source.state);
            state.etag = etag;
            state.generation = generation;
            state.served = served_of(&lock);
            state.concurrency = lock.max_concurrent_executions;
            state.run_code = lock.run_code;
        }
        options.discovery.roots = vec![Root {
            path: root,
            scope: Scope::Managed,
            required: true,
        }];
        options.discovery.explicit.clear();
        options.discovery.index = None;
        report_clashes(&source.agent, &lock);
        report_exclusions(&source.agent, &lock);
        report_verdicts(&source.agent, &lock);
        if options.exec.code && !lock.run_code {
            tracing::warn!(
                agent = %source.agent,
                "run_code is off for this agent in the registry (its run_code setting); the \
                 local --code / [exec] code does not apply to a registry agent"
            );
        }
        options.exec = source.exec_config(&lock);
        tracing::info!(
            agent = %source.agent,
            registry = source.client.url(),
            skills = lock.skills.len(),
            "serving the agent's skills from the registry"
        );
        Ok(source)
    }

    /// The generated root the host discovers.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The poll period.
    pub fn poll(&self) -> Duration {
        self.poll
    }

    /// The `[exec]` config of `lock` ([`exec_config_of`] over the local
    /// config).
    pub fn exec_config(&self, lock: &AgentLock) -> ExecConfig {
        exec_config_of(&self.base_exec, lock)
    }

    /// One poll, for a caller that wants to know: `Ok(true)` when a new
    /// lock (ETag changed) was materialised, linked and the target
    /// reloaded; `Ok(false)` when the lock is unchanged; an error keeps the
    /// last good set (nothing served changes).
    pub fn try_refresh(&self, target: &dyn Target) -> Result<bool, Error> {
        let (etag, held) = {
            let state = lock_state(&self.state);
            (state.etag.clone(), state.generation)
        };
        let fetched = self.client.lock(&self.agent, etag.as_deref())?;
        match fetched {
            LockFetch::NotModified => Ok(false),
            LockFetch::Fresh {
                lock,
                etag,
                generation,
            } => {
                if !newer(held, generation) {
                    tracing::debug!(
                        agent = %self.agent,
                        held,
                        fetched = generation,
                        "ignoring a lock older than the one served (a lagging replica)"
                    );
                    return Ok(false);
                }
                self.apply(target, &lock)?;
                let mut state = lock_state(&self.state);
                state.etag = Some(etag);
                state.generation = generation.or(held);
                Ok(true)
            }
        }
    }

    /// One poll of the background poller ([`RegistrySource::try_refresh`]):
    /// an error keeps the last good set and is reported once per outage,
    /// with one line when the registry is back.
    pub fn refresh(&self, target: &dyn Target) {
        let result = self.try_refresh(target);
        let mut state = lock_state(&self.state);
        match result {
            Ok(_) => {
                if state.outage {
                    tracing::info!(
                        registry = self.client.url(),
                        "the registry is reachable again"
                    );
                    state.outage = false;
                }
            }
            Err(e) => {
                if !state.outage {
                    tracing::warn!(
                        registry = self.client.url(),
                        error = %e,
                        "cannot refresh the agent's skills; serving the last good set until the registry answers"
                    );
                    state.outage = true;
                }
            }
        }
    }

    /// The agent whose skills these are.
    pub fn agent(&self) -> &AgentId {
        &self.agent
    }

    /// Polls every [`RegistrySource::poll`] on a thread of its own
    /// ([`RegistrySource::refresh`]) until `target` is dropped or the
    /// returned [`Poller`] is.
    pub fn spawn_poller<T: Target + 'static>(
        self: Arc<Self>,
        target: Weak<T>,
    ) -> Result<Poller, Error> {
        let (stop, stopped) = mpsc::channel::<()>();
        std::thread::Builder::new()
            .name("skilldeck-registry-poll".to_owned())
            .spawn(move || {
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(self.poll) {
                    let Some(target) = target.upgrade() else {
                        return;
                    };
                    let span = target.operation_span("poll");
                    span.in_scope(|| self.refresh(&*target));
                }
            })
            .map_err(|e| registry_error(format!("cannot start the poller: {e}")))?;
        Ok(Poller { _stop: stop })
    }

    fn apply(&self, target: &dyn Target, lock: &AgentLock) -> Result<(), Error> {
        let dirs = self.materialise(lock)?;
        self.build_environments(lock, &dirs);
        self.link(&dirs)?;
        self.save(lock);
        let served = served_of(lock);
        let (changed, concurrency) = {
            let mut state = lock_state(&self.state);
            let changed: Vec<String> = served
                .iter()
                .filter(|(name, fp)| state.served.get(*name).is_some_and(|old| old != *fp))
                .map(|(name, _)| name.clone())
                .collect();
            state.served = served;
            (changed, (state.concurrency, state.run_code))
        };
        let (concurrency, run_code) = concurrency;
        report_clashes(&self.agent, lock);
        report_exclusions(&self.agent, lock);
        report_verdicts(&self.agent, lock);
        if let Some(execution) = target.host().execution() {
            execution.update_policy(self.exec_config(lock));
        }
        if lock.run_code != run_code {
            tracing::warn!(
                agent = %self.agent,
                run_code = lock.run_code,
                "the agent's run_code setting changed; it applies after a restart"
            );
        }
        if lock.max_concurrent_executions != concurrency {
            tracing::warn!(
                agent = %self.agent,
                "the agent's max_concurrent_executions changed; it applies after a restart"
            );
        }
        let catalog_changed = target.reload()?;
        for name in &changed {
            target.skill_files_changed(name);
        }
        if !catalog_changed && !changed.is_empty() {
            target.resources_changed();
        }
        tracing::info!(agent = %self.agent, skills = lock.skills.len(), catalog_changed, "the agent's lock changed");
        Ok(())
    }

    /// Every skill of `lock` in the cache (downloaded when missing or not
    /// verifying): name → its folder. Nothing served changes here.
    fn materialise(&self, lock: &AgentLock) -> Result<BTreeMap<String, PathBuf>, Error> {
        let mut dirs = BTreeMap::new();
        for skill in &lock.skills {
            let name = checked_name(skill)?;
            if dirs.contains_key(name) {
                return Err(registry_error(format!(
                    "the lock names skill '{name}' twice"
                )));
            }
            let dir = self.materialise_one(skill)?;
            dirs.insert(name.to_owned(), dir);
        }
        Ok(dirs)
    }

    /// Builds the environment of every skill of `lock` (materialised in
    /// `dirs`) that declares dependencies, and records them in the served
    /// root's lockfile (`skilldeck.lock` beside it), where the host finds
    /// them at run time. A skill whose locked requirements are unchanged
    /// reuses its resolution; one whose environment cannot be built is
    /// logged with the failing requirement and offers no tools.
    fn build_environments(&self, lock: &AgentLock, dirs: &BTreeMap<String, PathBuf>) {
        let Some(options) = &self.environments else {
            return;
        };
        let lockfile = skilldeck::environment::lock_path(&self.root);
        let previous = Lockfile::load(&lockfile).ok().flatten();
        let root_name = self
            .root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut out = Lockfile::new(root_name);
        let mut registered = false;
        for skill in &lock.skills {
            let Some(dir) = dirs.get(&skill.name) else {
                continue;
            };
            if !skilldeck::environment::may_declare_dependencies(dir) {
                continue;
            }
            if !registered {
                if let Err(e) = environment::register_lock(&options.store, &lockfile) {
                    tracing::warn!(error = %e, "cannot register the served root's lockfile with the environment store; no environment is built");
                    return;
                }
                registered = true;
            }
            let prev: Vec<&skilldeck::environment::LockedEnvironment> = previous
                .as_ref()
                .and_then(|l| l.skill.get(&skill.name))
                .map(LockEntry::environments)
                .unwrap_or_default();
            let (Ok(fingerprint), Ok(manifest)) = (
                skilldeck::Digest::parse(&skill.fingerprint),
                folder_manifest(dir, &PackageLimits::default()),
            ) else {
                continue;
            };
            match environment::prepare(
                &skill.name,
                dir,
                &prev,
                &skill.environments,
                false,
                options,
                &lockfile,
            ) {
                Ok(envs) if !envs.is_empty() => {
                    for p in &envs {
                        let env = &p.locked;
                        if let Some(note) = p.origin.note(env.kind) {
                            tracing::info!(agent = %self.agent, skill = %skill.name, kind = env.kind.as_str(), "{note}");
                        }
                        tracing::info!(agent = %self.agent, skill = %skill.name, kind = env.kind.as_str(), packages = %env.package_list(), built = ?p.built, origin = ?p.origin, "the skill's environment is ready");
                    }
                    let mut entry = LockEntry {
                        version: Some(skill.version.clone()),
                        source: format!(
                            "registry+{}#{}/{}@{}",
                            self.url, skill.namespace, skill.name, skill.version
                        ),
                        fingerprint,
                        commit: None,
                        signer: None,
                        files: manifest.files().to_vec(),
                        environment: None,
                        node_environment: None,
                    };
                    entry.set_environments(envs.into_iter().map(|p| p.locked).collect());
                    out.skill.insert(skill.name.clone(), entry);
                }
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(agent = %self.agent, skill = %skill.name, error = %e, "the skill's environment cannot be built: its tools are not offered");
                }
            }
        }
        if !registered && previous.is_none() {
            // No skill declares dependencies, now or before: no lockfile.
            return;
        }
        if let Err(e) = out.save(&lockfile) {
            tracing::warn!(error = %e, "cannot write the served root's lockfile: skills with dependencies offer no tools");
        }
    }

    fn check_signature(&self, skill: &LockedSkill) -> Result<(), Error> {
        check_signature(skill, self.allowed_signers.as_ref(), self.require_signature)
    }

    fn materialise_one(&self, skill: &LockedSkill) -> Result<PathBuf, Error> {
        self.check_signature(skill)?;
        let hex = fingerprint_hex(&skill.fingerprint)?;
        let parent = self.blobs.join(&hex);
        let dir = parent.join(&skill.name);
        if lock_state(&self.state).verified.contains(&dir) {
            return Ok(dir);
        }
        let limits = PackageLimits::default();
        if dir.is_dir() {
            match folder_manifest(&dir, &limits) {
                Ok(m) if m.fingerprint() == skill.fingerprint => {
                    lock_state(&self.state).verified.insert(dir.clone());
                    return Ok(dir);
                }
                _ => {
                    tracing::warn!(path = %dir.display(), "a cached skill does not verify; downloading it again");
                    let aside = self
                        .blobs
                        .join(format!(".bad-{}-{hex}", std::process::id()));
                    std::fs::rename(&parent, &aside).map_err(|e| io_error(&parent, e))?;
                    let _ = std::fs::remove_dir_all(&aside);
                }
            }
        }
        let skill_ref =
            SkillRef::new(skill.namespace.as_str(), &skill.name).map_err(registry_error)?;
        let archive = self
            .client
            .archive_of(&skill_ref, &skill.version, &skill.fingerprint)
            .map_err(registry_error)?;
        let stage = tempfile::Builder::new()
            .prefix(".stage-")
            .tempdir_in(&self.blobs)
            .map_err(|e| io_error(&self.blobs, e))?;
        let package = write_package(&archive.bytes, stage.path())?;
        let unpacked = unpack(
            &package,
            &stage.path().join("tree"),
            &UnpackOptions::default(),
        )
        .map_err(|e| registry_error(format!("{skill_ref}@{}: {e}", skill.version)))?;
        if unpacked.name != skill.name {
            return Err(registry_error(format!(
                "{skill_ref}@{}: the package holds skill '{}'",
                skill.version, unpacked.name
            )));
        }
        let found = unpacked.manifest.fingerprint();
        if found != skill.fingerprint {
            return Err(registry_error(format!(
                "{skill_ref}@{}: the package's content has fingerprint {found}; the lock says {}",
                skill.version, skill.fingerprint
            )));
        }
        std::fs::create_dir_all(&parent).map_err(|e| io_error(&parent, e))?;
        if let Err(e) = std::fs::rename(&unpacked.dir, &dir) {
            // Another process put the same content there first.
            let ok =
                folder_manifest(&dir, &limits).is_ok_and(|m| m.fingerprint() == skill.fingerprint);
            if !ok {
                return Err(io_error(&dir, e));
            }
        }
        lock_state(&self.state).verified.insert(dir.clone());
        Ok(dir)
    }

    /// Makes the generated root hold exactly one link per skill of `dirs`.
    fn link(&self, dirs: &BTreeMap<String, PathBuf>) -> Result<(), Error> {
        for (name, target) in dirs {
            let link = self.root.join(name);
            if std::fs::read_link(&link).is_ok_and(|t| &t == target) {
                continue;
            }
            let temp = self.root.join(format!(".link-{name}"));
            let _ = std::fs::remove_file(&temp);
            symlink_dir(target, &temp).map_err(|e| io_error(&temp, e))?;
            std::fs::rename(&temp, &link).map_err(|e| io_error(&link, e))?;
        }
        let entries = std::fs::read_dir(&self.root).map_err(|e| io_error(&self.root, e))?;
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !dirs.contains_key(&name) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
        Ok(())
    }

    fn save(&self, lock: &AgentLock) {
        let Ok(bytes) = serde_json::to_vec(lock) else {
            return;
        };
        let temp = self
            .saved
            .with_extension(format!("tmp-{}", std::process::id()));
        if std::fs::write(&temp, bytes)
            .and_then(|()| std::fs::rename(&temp, &self.saved))
            .is_err()
        {
            let _ = std::fs::remove_file(&temp);
            tracing::debug!(path = %self.saved.display(), "cannot save the lock");
        }
    }

    fn load_saved(&self) -> Option<AgentLock> {
        let bytes = std::fs::read(&self.saved).ok()?;
        serde_json::from_slice::<AgentLock>(&bytes)
            .ok()
            .filter(|l| l.agent == self.agent)
    }
}

/// Keeps a [`RegistrySource::spawn_poller`] thread polling; dropping it
/// stops the thread (at its next wake-up).
#[derive(Debug)]
pub struct Poller {
    _stop: mpsc::Sender<()>,
}

impl Drop for RegistrySource {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// A signed version is served only when its signature verifies over the
/// lock's fingerprint (the one the content is checked against) and was
/// made by the key the lock names (and, with `allowed`, one of those); an
/// unsigned one only when signatures are not required.
fn check_signature(
    skill: &LockedSkill,
    allowed: Option<&AllowedSigners>,
    require_signature: bool,
) -> Result<(), Error> {
    let shown = format!("{}/{}@{}", skill.namespace, skill.name, skill.version);
    let refuse = |why: String| registry_error(format!("{shown}: {why}; it is not served"));
    let (signature, signer) = match (&skill.signature, &skill.signer) {
        (None, None) if require_signature => {
            return Err(refuse(
                "unsigned, and this host requires signed versions (--require-signature)".to_owned(),
            ));
        }
        (None, None) => return Ok(()),
        (Some(signature), Some(signer)) => (signature, signer),
        _ => {
            return Err(refuse(
                "the lock names a signer without a signature, or a signature without a signer"
                    .to_owned(),
            ));
        }
    };
    let digest = skilldeck::Digest::parse(&skill.fingerprint)
        .map_err(|e| refuse(format!("malformed fingerprint: {e}")))?;
    let trust = Trust {
        allowed,
        identity: None,
        at: std::time::SystemTime::now(),
    };
    let verified = signature::verify(
        &digest,
        signature.as_bytes(),
        Path::new(&format!("{shown}.sig")),
        &trust,
    )
    .map_err(|e| refuse(e.to_string()))?;
    if verified.signer.as_str() != signer {
        return Err(refuse(format!(
            "signed by {}, but the lock says {signer}",
            verified.signer
        )));
    }
    Ok(())
}

/// The `[exec]` config of `lock`: the local config with the lock's
/// limits and its `run_code` setting (`[exec] code`), and per served skill the registry's network grant and the part
/// of its env grant the operator allows (read paths stay the local
/// config's, and so does a skill's `python`). A registry env grant passes a variable only when the local
/// `[exec] registry-env` names it and it is not reserved
/// ([`skilldeck::deck::is_reserved_env_name`]: `PATH`, `LD_*`, ...): the
/// registry picks which skill gets an allowed variable, never which host
/// variables exist for the taking. Each refused name is logged with how
/// to allow it.
pub fn exec_config_of(base: &ExecConfig, lock: &AgentLock) -> ExecConfig {
    let mut exec = base.clone();
    // The registry decides whether this agent's models may run their own
    // code (the agent's run_code setting), as it decides their grants.
    exec.code = lock.run_code;
    if let Some(t) = lock.execution_timeout_secs {
        exec.timeout_secs = u64::from(t).clamp(1, skilldeck::limits::MAX_EXEC_TIMEOUT_SECS);
    }
    if let Some(c) = lock.max_concurrent_executions {
        let c = usize::try_from(c).unwrap_or(usize::MAX);
        exec.concurrency = c.clamp(1, skilldeck::limits::MAX_EXEC_CONCURRENCY);
    }
    let local = std::mem::take(&mut exec.skills);
    for skill in &lock.skills {
        let read = local
            .get(&skill.name)
            .map(|g| g.read.clone())
            .unwrap_or_default();
        let mut env = Vec::new();
        for name in &skill.grants.env {
            match env_refusal(base, name) {
                None => env.push(name.clone()),
                Some(why) => tracing::warn!(
                    skill = %format!("{}/{}", skill.namespace, skill.name),
                    variable = %name.escape_debug(),
                    "a registry env grant was refused: {why}"
                ),
            }
        }
        exec.skills.insert(
            skill.name.clone(),
            SkillGrant {
                network: skill.grants.network.into(),
                read,
                env,
                // The local interpreter (a LangChain package's environment)
                // stays the operator's, as read paths do.
                python: local.get(&skill.name).and_then(|g| g.python.clone()),
            },
        );
    }
    exec
}

/// Why a registry env grant of `name` does not pass (`None`: it does).
fn env_refusal(base: &ExecConfig, name: &str) -> Option<String> {
    if !is_env_name(name) {
        return Some("it is not an environment variable name".to_owned());
    }
    if is_reserved_env_name(name) {
        return Some(format!(
            "{name} is reserved (the sandbox sets it, or it steers a loader or an interpreter); no registry grant can pass it"
        ));
    }
    if !base.registry_env.iter().any(|n| n == name) {
        return Some(format!(
            "{name} is not in this host's allow-list; to allow it, add it to `[exec] registry-env` in skilldeck.toml"
        ));
    }
    None
}

/// Logs each served skill's risk audit verdict (as the registry rated the
/// version at publish): a warning from `high` up, so an operator sees what
/// an agent serves.
fn report_verdicts(agent: &AgentId, lock: &AgentLock) {
    for skill in &lock.skills {
        let verdict = skill.verdict.as_deref().unwrap_or("unaudited");
        let shown = format!("{}/{}@{}", skill.namespace, skill.name, skill.version);
        if matches!(verdict, "high" | "critical") {
            tracing::warn!(agent = %agent, skill = %shown, verdict, "serving a skill the risk audit rated {verdict}");
        } else {
            tracing::info!(agent = %agent, skill = %shown, verdict, "serving");
        }
    }
}

/// Logs each name clash the registry resolved for this agent: which
/// skill serves the name and which was left out (so the operator sees a
/// takeover attempt or a misconfiguration on the host that serves it).
fn report_clashes(agent: &AgentId, lock: &AgentLock) {
    for s in &lock.shadowed {
        tracing::warn!(
            agent = %agent,
            skill = %format!("{}/{}", s.namespace, s.name),
            served = s.shadowed_by.as_deref().unwrap_or("?"),
            reason = %s.reason,
            "name clash: {}/{} is not served because {} serves the name '{}' ({})",
            s.namespace,
            s.name,
            s.shadowed_by.as_deref().unwrap_or("another skill"),
            s.name,
            s.detail
        );
    }
}

/// Logs each skill the registry left out of this agent's set, with the
/// reason (a missing or pending label, a missing, yanked, blocked or
/// unreviewed version, a disabled assignment, a denied pattern): once per
/// lock change, so an operator sees why a skill is not served.
fn report_exclusions(agent: &AgentId, lock: &AgentLock) {
    for e in &lock.excluded {
        tracing::warn!(
            agent = %agent,
            skill = %format!("{}/{}", e.namespace, e.name),
            reason = %e.reason,
            "not serving {}/{}: {} ({})",
            e.namespace,
            e.name,
            e.reason,
            e.detail
        );
    }
}

fn served_of(lock: &AgentLock) -> BTreeMap<String, String> {
    lock.skills
        .iter()
        .map(|s| (s.name.clone(), s.fingerprint.clone()))
        .collect()
}

/// A client error for the log (never the token: the client never puts it
/// in an error).
#[cfg(unix)]
fn symlink_dir(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

#[cfg(not(unix))]
fn symlink_dir(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::windows::fs::symlink_dir(target, link)
}

/// Removes generated roots of processes that are gone (Linux: no
/// `/proc/<pid>`); elsewhere they stay (a few links each).
fn remove_stale_roots(agent_dir: &Path) {
    let Ok(entries) = std::fs::read_dir(agent_dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix("serve-")
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if cfg!(target_os = "linux")
            && pid != std::process::id()
            && !Path::new("/proc").join(pid.to_string()).exists()
        {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_older_than_or_as_old_as_the_served_one_never_replaces_it() {
        assert!(!newer(Some(7), Some(6)));
        assert!(!newer(Some(7), Some(7)));
        assert!(newer(Some(7), Some(8)));
        // Without generations (an older registry, or a lock saved by an
        // earlier run): the ETag decides, as before.
        assert!(newer(None, Some(3)));
        assert!(newer(Some(3), None));
    }

    fn lock_with(grants: skilldeck_registry::wire::Grants) -> AgentLock {
        serde_json::from_value(serde_json::json!({
            "agent": "bot-1",
            "max_concurrent_executions": 2,
            "execution_timeout_secs": 30,
            "skills": [{
                "namespace": "acme", "name": "web", "version": "1.0.0",
                "fingerprint": format!("sha256:{}", "0".repeat(64)),
                "grants": grants, "files": []
            }]
        }))
        .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn the_locks_grants_and_limits_become_the_exec_config_and_read_paths_stay_local() {
        let mut base = ExecConfig {
            sandbox: skilldeck::deck::SandboxProfile::None,
            ..ExecConfig::default()
        };
        base.skills.insert(
            "web".into(),
            SkillGrant {
                network: false.into(),
                read: vec![PathBuf::from("/srv/data")],
                env: vec!["LOCAL_ONLY".into()],
                python: None,
            },
        );
        base.skills.insert(
            "not-served".into(),
            SkillGrant {
                network: true.into(),
                ..SkillGrant::default()
            },
        );
        base.registry_env = vec!["API_TOKEN".into()];
        let lock = lock_with(skilldeck_registry::wire::Grants {
            network: true,
            env: vec!["API_TOKEN".into(), "bad name".into()],
        });
        let exec = exec_config_of(&base, &lock);
        assert_eq!(exec.timeout_secs, 30);
        assert_eq!(exec.concurrency, 2);
        let web = exec.grant("web");
        assert!(web.network.is_all());
        assert_eq!(web.read, [PathBuf::from("/srv/data")]);
        assert_eq!(
            web.env,
            ["API_TOKEN"],
            "malformed names dropped, local env replaced"
        );
        assert!(!exec.skills.contains_key("not-served"));
        // The one mapping turns it into the run's policy.
        let policy =
            skilldeck_exec::policy_from_config(&exec, "web").unwrap_or_else(|e| panic!("{e}"));
        assert!(policy.grants.network.is_all());
        assert_eq!(policy.limits.timeout, Duration::from_secs(30));
    }

    #[test]
    fn the_agents_run_code_setting_decides_whether_run_code_is_offered() {
        let local_on = ExecConfig {
            code: true,
            ..ExecConfig::default()
        };
        let off = lock_with(skilldeck_registry::wire::Grants::default());
        assert!(!off.run_code, "off by default");
        assert!(
            !exec_config_of(&local_on, &off).code,
            "a local --code does not override the registry's setting"
        );
        let mut on = off.clone();
        on.run_code = true;
        assert!(exec_config_of(&ExecConfig::default(), &on).code);
    }

    #[test]
    fn a_registry_env_grant_passes_only_names_the_operator_allows_and_never_reserved_ones() {
        let mut base = ExecConfig {
            sandbox: skilldeck::deck::SandboxProfile::None,
            ..ExecConfig::default()
        };
        base.registry_env = vec!["ALLOWED_TOKEN".into()];
        let lock = lock_with(skilldeck_registry::wire::Grants {
            network: false,
            env: vec![
                "PATH".into(),
                "LD_PRELOAD".into(),
                "AWS_SECRET_ACCESS_KEY".into(),
                "ALLOWED_TOKEN".into(),
            ],
        });
        let exec = exec_config_of(&base, &lock);
        assert_eq!(exec.grant("web").env, ["ALLOWED_TOKEN"]);
        let policy =
            skilldeck_exec::policy_from_config(&exec, "web").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(policy.grants.env, ["ALLOWED_TOKEN"]);
        // A reserved name stays refused even if an allow-list built in code
        // (not parsed from a file) names it.
        base.registry_env.push("PATH".into());
        assert_eq!(
            exec_config_of(&base, &lock).grant("web").env,
            ["ALLOWED_TOKEN"]
        );
        assert!(
            env_refusal(&base, "AWS_SECRET_ACCESS_KEY")
                .is_some_and(|why| why.contains("registry-env"))
        );
    }

    #[test]
    fn a_fingerprint_names_a_folder_only_when_it_is_64_lowercase_hex_digits() {
        let good = format!("sha256:{}", "a1".repeat(32));
        assert_eq!(fingerprint_hex(&good).ok().as_deref(), Some(&good[7..]));
        for bad in [
            "sha256:../../etc",
            "sha256:ABC",
            "",
            &format!("sha256:{}", "g".repeat(64)),
        ] {
            assert!(fingerprint_hex(bad).is_err(), "{bad}");
        }
    }

    /// A locked skill at `fingerprint`, signed by `signature` / `signer`.
    fn locked(
        fingerprint: &str,
        signature: Option<Vec<u8>>,
        signer: Option<String>,
    ) -> LockedSkill {
        serde_json::from_value(serde_json::json!({
            "namespace": "acme", "name": "notes", "version": "1.0.0",
            "fingerprint": fingerprint, "grants": {}, "files": [],
        }))
        .map(|mut s: LockedSkill| {
            s.signature = signature.map(|b| String::from_utf8(b).unwrap_or_default());
            s.signer = signer;
            s
        })
        .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn a_locked_version_whose_signature_no_longer_verifies_is_not_served() {
        let keys = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let (key, public) = skilldeck_testkit::ssh::keypair(keys.path(), "alice", "ed25519", "");
        let (other, _) = skilldeck_testkit::ssh::keypair(keys.path(), "mallory", "ed25519", "");
        let signer = skilldeck_package::SignerFingerprint::of_openssh(&public)
            .unwrap_or_else(|e| panic!("{e}"))
            .to_string();
        let good = format!("sha256:{}", "1".repeat(64));
        let moved = format!("sha256:{}", "2".repeat(64));
        let sig = skilldeck_testkit::ssh::sign(&key, "skilldeck", good.as_bytes());
        // Signed over this fingerprint by the key the lock names: served.
        let ok = locked(&good, Some(sig.clone()), Some(signer.clone()));
        assert!(check_signature(&ok, None, true).is_ok());
        // The same signature on other content (the blob or the lock
        // changed after signing): refused.
        let e = check_signature(
            &locked(&moved, Some(sig.clone()), Some(signer.clone())),
            None,
            false,
        )
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
        assert!(
            e.contains("acme/notes@1.0.0") && e.contains("not served"),
            "{e}"
        );
        // Signed by another key than the lock names: refused.
        let theirs = skilldeck_testkit::ssh::sign(&other, "skilldeck", good.as_bytes());
        assert!(
            check_signature(
                &locked(&good, Some(theirs), Some(signer.clone())),
                None,
                false
            )
            .is_err()
        );
        // A signer without a signature, and unsigned under --require-signature.
        assert!(check_signature(&locked(&good, None, Some(signer.clone())), None, false).is_err());
        assert!(check_signature(&locked(&good, None, None), None, true).is_err());
        assert!(check_signature(&locked(&good, None, None), None, false).is_ok());
        // With allowed signers that do not list the key: refused.
        let allowed = AllowedSigners::parse(
            &format!(
                "someone@example.invalid {}\n",
                std::fs::read_to_string(keys.path().join("mallory.pub"))
                    .unwrap_or_default()
                    .trim()
            ),
            Path::new("allowed"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(check_signature(&ok, Some(&allowed), false).is_err());
    }
}
