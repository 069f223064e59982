//! [`Deck`]: a [`Host`] over the discovered skills, as Python sees it.
//! Every method takes the current snapshot (swapped whole on reload) and
//! does its work with the GIL released.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyList;

use skilldeck::{BudgetOverride, CatalogFormat, Encoding};
use skilldeck_host::execution::ScriptScope;
use skilldeck_host::{
    Activated, Called, CatalogRequest, Execution, Host, HostOptions, HostSpec, Snapshot, ToolError,
    ToolErrorKind,
};

use skilldeck_source::{RegistryOptions, RegistrySource, Target};

use crate::diagnostic::Diagnostic;
use crate::errors;
use crate::exec::{self, RunResult, SkillToolInfo};
use crate::telemetry::{self, enter, traced};
use crate::types::{Activation, CacheStats, Reload, Resource, SearchHit, Skill, ToolSpec};

/// The deck of skills and the host serving them (the private half of
/// `skilldeck.Deck`).
#[pyclass(frozen, module = "skilldeck._native")]
pub struct Deck {
    host: Arc<Host>,
    /// The execution service for the application's own calls (`run`,
    /// `call_tool`) while `[exec] enabled` is off, under the config's
    /// `[exec]` (grants resolved by `HostOptions::from_config`). With it on
    /// the host's own service runs every call (see [`Deck::execution`]).
    fallback_execution: Execution,
    /// The served skills as Python objects, built once per snapshot (see
    /// [`Deck::skills`]).
    skills_cache: Mutex<Option<SkillsCache>>,
    /// Present for `Deck.from_registry`: the agent's lock, refreshed by
    /// [`Deck::reload`].
    registry: Option<RegistrySource>,
}

/// The host as a source's [`Target`], keeping what its reload found (so a
/// registry refresh reports the same [`Reload`] as a discovery).
struct Recording<'h> {
    host: &'h Host,
    reload: Mutex<Option<skilldeck_host::Reload>>,
}

impl Target for Recording<'_> {
    fn host(&self) -> &Host {
        self.host
    }

    fn reload(&self) -> Result<bool, skilldeck::Error> {
        let reload = self.host.reload()?;
        let changed = reload.catalog_changed;
        *self.reload.lock().unwrap_or_else(PoisonError::into_inner) = Some(reload);
        Ok(changed)
    }
}

/// [`Deck::skills`]' answer for one snapshot: the snapshot it was built
/// from (held, so the comparison is by identity) and the list.
struct SkillsCache {
    snapshot: Arc<Snapshot>,
    list: Py<PyList>,
}

impl Deck {
    /// The deck's one execution service: every run from Python (`run`,
    /// `call_tool`, with or without a timeout, and the model's calls)
    /// goes through it, so its concurrency cap (`[exec] concurrency`,
    /// `queue`) holds across them all. Per-run settings are explicit
    /// [`skilldeck_host::execution::Overrides`], never another service.
    fn execution(&self) -> &Execution {
        self.host.execution().unwrap_or(&self.fallback_execution)
    }

    /// The service `run_code` runs through: the host's when `[exec] code`
    /// is on there, else the deck's own (which always has it: from Python
    /// the application turns `run_code` on by calling it, as
    /// `create_tools(..., code=True)` does).
    fn code_execution(&self) -> &Execution {
        match self.host.execution() {
            Some(execution) if execution.work_folders().is_some() => execution,
            _ => &self.fallback_execution,
        }
    }
}

/// The application's own execution service: the config's `[exec]`, with
/// `run_code` available.
fn fallback_execution(host: &Host) -> Execution {
    let mut config = host.options().exec.clone();
    config.code = true;
    Execution::new(config)
}

/// Asks a Python callable: `approve(request) -> bool`. `True` accepts,
/// `False` declines, `None` is no answer; an exception (or any other
/// value) refuses the call (fail closed) and says why.
struct PyApprover {
    callback: Py<PyAny>,
}

impl skilldeck_host::Approver for PyApprover {
    fn approve(&self, request: &skilldeck_host::ApprovalRequest) -> skilldeck_host::Decision {
        use skilldeck_host::Decision;
        Python::attach(|py| {
            let dict = pyo3::types::PyDict::new(py);
            let filled = (|| -> PyResult<()> {
                dict.set_item("tool", &request.tool)?;
                dict.set_item("skill", &request.skill)?;
                dict.set_item("message", &request.message)?;
                dict.set_item("code", &request.code)?;
                dict.set_item("language", &request.language)?;
                dict.set_item("code_sha256", &request.code_sha256)?;
                Ok(())
            })();
            if let Err(e) = filled {
                return Decision::Unavailable(format!("the request cannot be built: {e}"));
            }
            match self.callback.call1(py, (dict,)) {
                Err(e) => Decision::Unavailable(format!("the approve callback raised {e}")),
                Ok(answer) => {
                    let answer = answer.bind(py);
                    if answer.is_none() {
                        Decision::Cancel
                    } else if let Ok(yes) = answer.extract::<bool>() {
                        if yes {
                            Decision::Accept
                        } else {
                            Decision::Decline
                        }
                    } else {
                        Decision::Unavailable(
                            "the approve callback must return True, False or None".to_owned(),
                        )
                    }
                }
            }
        })
    }
}

/// Who answers approval requests for a call: the application's `approve`
/// callback (asked even under `[exec] approval = "never"`), or nobody (a
/// call that needs approval is refused and says why).
fn approver(approve: Option<Py<PyAny>>) -> Box<dyn skilldeck_host::Approver> {
    match approve {
        Some(callback) => Box::new(skilldeck_host::CallerApprover(PyApprover { callback })),
        None => Box::new(skilldeck_host::approval::NoApprover(
            "no approve callback was given: pass approve= to create_tools (or to the call) \
             to be asked"
                .to_owned(),
        )),
    }
}

#[derive(Debug)]
enum OpenError {
    Core(skilldeck::Error),
    Telemetry(skilldeck_telemetry::Error),
    Host(skilldeck_host::Error),
    Source(skilldeck_source::Error),
}

impl OpenError {
    fn into_py(self, py: Python<'_>) -> PyErr {
        match self {
            OpenError::Core(e) | OpenError::Host(skilldeck_host::Error::Core(e)) => {
                errors::core(py, e)
            }
            OpenError::Host(skilldeck_host::Error::Io { source, .. }) => source.into(),
            OpenError::Host(e) => PyValueError::new_err(e.to_string()),
            OpenError::Source(e) => errors::source(py, e),
            OpenError::Telemetry(e) => telemetry::error(&e),
        }
    }
}

/// The host's options for `spec` (the host's one rule: [`HostSpec`]). A
/// library shares the host's files with its caller, like the CLI and
/// stdio: answers may name the skill folders. Starts span export when the
/// config, the `OTEL_*` variables or `otlp_endpoint` name a collector.
fn options_of(spec: &HostSpec, otlp_endpoint: Option<&str>) -> Result<HostOptions, OpenError> {
    let resolved = spec.load().map_err(OpenError::Host)?;
    telemetry::start(&resolved.config.telemetry, otlp_endpoint).map_err(OpenError::Telemetry)?;
    let mut options = resolved.host_options().map_err(OpenError::Core)?;
    options.expose_paths = true;
    Ok(options)
}

/// Where `Deck.discover` and `Deck.from_registry` send spans, and the
/// caller's trace id of the discovery.
struct Tracing<'a> {
    trace_id: Option<&'a str>,
    otlp_endpoint: Option<&'a str>,
}

fn open(
    roots: Option<Vec<PathBuf>>,
    config: Option<PathBuf>,
    cwd: Option<PathBuf>,
    tracing: &Tracing<'_>,
) -> Result<Host, OpenError> {
    let options = options_of(
        &HostSpec {
            config,
            roots,
            cwd,
            index: false,
        },
        tracing.otlp_endpoint,
    )?;
    traced("deck.discover", tracing.trace_id, || Host::new(options)).map_err(OpenError::Core)
}

/// Why `activate(conversation=...)` failed: the host refused the call, or
/// the content it delivered could not be structured.
enum ActivateError {
    Tool(skilldeck_host::ToolError),
    Core(skilldeck::Error),
}

/// A host over one registry agent's skills ([`RegistrySource::prepare`]:
/// the lock fetched, every skill downloaded, verified against its
/// fingerprint and linked into a generated root).
fn open_registry(
    settings: &RegistryOptions,
    config: Option<PathBuf>,
    tracing: &Tracing<'_>,
) -> Result<(Host, RegistrySource), OpenError> {
    // Only the agent's skills: no default root.
    let spec = HostSpec {
        config,
        roots: Some(Vec::new()),
        cwd: None,
        index: false,
    };
    let mut options = options_of(&spec, tracing.otlp_endpoint)?;
    // Skills with dependencies get their environment as `[environments]`
    // says (the config was read just above: an error would have stopped).
    let mut settings = settings.clone();
    if let Ok(resolved) = spec.load() {
        settings.environments_from(&resolved.config.environments);
    }
    traced("deck.discover", tracing.trace_id, || {
        let source = RegistrySource::prepare(&settings, &mut options).map_err(OpenError::Source)?;
        let host = Host::new(options).map_err(OpenError::Core)?;
        Ok((host, source))
    })
}

fn parse<T: std::str::FromStr<Err = skilldeck::Error>>(py: Python<'_>, text: &str) -> PyResult<T> {
    text.parse().map_err(|e| errors::core(py, e))
}

#[pymethods]
impl Deck {
    /// Discovers the skills: `roots` replace the default roots (project,
    /// user, bundled) as `--root` does; `config` is a `skilldeck.toml`
    /// (default: the one the `skilldeck` command finds); `cwd` is where
    /// project roots are looked for (default: the working folder).
    /// `trace_id`: the caller's trace id for the discovery's spans;
    /// `otlp_endpoint`: export spans to this OTLP/HTTP collector (base
    /// URL; else `OTEL_EXPORTER_OTLP_ENDPOINT` or `[telemetry] endpoint`).
    #[staticmethod]
    #[pyo3(signature = (roots = None, config = None, cwd = None, trace_id = None, otlp_endpoint = None))]
    fn discover(
        py: Python<'_>,
        roots: Option<Vec<PathBuf>>,
        config: Option<PathBuf>,
        cwd: Option<PathBuf>,
        trace_id: Option<&str>,
        otlp_endpoint: Option<&str>,
    ) -> PyResult<Deck> {
        let tracing = Tracing {
            trace_id,
            otlp_endpoint,
        };
        match py.detach(|| open(roots, config, cwd, &tracing)) {
            Ok(host) => Ok(Deck {
                fallback_execution: fallback_execution(&host),
                host: Arc::new(host),
                skills_cache: Mutex::new(None),
                registry: None,
            }),
            Err(e) => Err(e.into_py(py)),
        }
    }

    /// Serves one registry agent's skills: its lock (`GET
    /// /api/v1/agents/{agent}/lock`), each skill downloaded into the
    /// content-addressed cache, verified against its fingerprint and
    /// served; `reload` fetches the lock again (`If-None-Match`).
    /// `token` (scope `agent:<id>`, or admin), else `token_file`, else
    /// `SKILLDECK_TOKEN`; `cache` defaults to the user's cache folder.
    #[staticmethod]
    #[pyo3(signature = (url, agent, token = None, token_file = None, config = None, cache = None, trace_id = None, otlp_endpoint = None))]
    #[allow(clippy::too_many_arguments)]
    fn from_registry(
        py: Python<'_>,
        url: String,
        agent: String,
        token: Option<String>,
        token_file: Option<PathBuf>,
        config: Option<PathBuf>,
        cache: Option<PathBuf>,
        trace_id: Option<&str>,
        otlp_endpoint: Option<&str>,
    ) -> PyResult<Deck> {
        let agent = skilldeck_source::AgentId::new(&agent)
            .map_err(|e| PyValueError::new_err(format!("agent '{agent}': {e}")))?;
        let token = match token {
            Some(text) => Some(skilldeck_source::Token::new(&text).ok_or_else(|| {
                PyValueError::new_err("token: empty, or not a valid bearer token")
            })?),
            None => skilldeck_source::Token::resolve(token_file.as_deref())
                .map_err(|e| errors::source(py, e.into()))?,
        };
        let mut settings = RegistryOptions::new(&url, agent, token);
        settings.cache = cache;
        let tracing = Tracing {
            trace_id,
            otlp_endpoint,
        };
        match py.detach(|| open_registry(&settings, config, &tracing)) {
            Ok((host, source)) => Ok(Deck {
                fallback_execution: fallback_execution(&host),
                host: Arc::new(host),
                skills_cache: Mutex::new(None),
                registry: Some(source),
            }),
            Err(e) => Err(e.into_py(py)),
        }
    }

    /// The served skills, in deck order (metadata only): a new list each
    /// call, of `Skill` objects built once per snapshot (a reload that
    /// swaps the snapshot builds them again).
    fn skills<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let snapshot = self.host.snapshot();
        // The lock is never held while Python code may run (allocating the
        // objects can run a finalizer that asks for `skills` again).
        let cached = self
            .skills_cache
            .lock()
            // The cache is a plain slot: a panic elsewhere leaves it usable.
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .filter(|c| Arc::ptr_eq(&c.snapshot, &snapshot))
            .map(|c| c.list.clone_ref(py));
        let list = match cached {
            Some(list) => list.into_bound(py),
            None => {
                let all = snapshot.deck.skills();
                let skills = all
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| skilldeck_host::is_served(s))
                    .map(|(i, _)| Skill::new(Arc::clone(&snapshot), i));
                let list = PyList::new(py, skills)?;
                let fresh = SkillsCache {
                    snapshot,
                    list: list.clone().unbind(),
                };
                let old = self
                    .skills_cache
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .replace(fresh);
                drop(old);
                list
            }
        };
        // A copy: the caller may change its list, not the cache.
        Ok(list.get_slice(0, list.len()))
    }

    /// How many skills are served.
    fn __len__(&self) -> usize {
        self.host.snapshot().served().count()
    }

    fn __contains__(&self, name: &str) -> bool {
        self.host.snapshot().get(name).is_some()
    }

    /// The served skill `name` (exact, else the one name equal ignoring
    /// case): else `SkillNotFoundError` with close names.
    fn get(&self, py: Python<'_>, name: &str) -> PyResult<Skill> {
        let snapshot = self.host.snapshot();
        let found = snapshot.require(name).map(|s| s.name.clone());
        match found {
            Ok(found) => {
                let index = snapshot
                    .deck
                    .skills()
                    .iter()
                    .position(|s| s.name == found && skilldeck_host::is_served(s))
                    .ok_or_else(|| errors::core(py, skilldeck::Error::SkillOff(found)))?;
                Ok(Skill::new(snapshot, index))
            }
            Err(e) => Err(errors::core(py, e)),
        }
    }

    /// The names of the skills the model may activate.
    fn model_invocable(&self) -> Vec<String> {
        self.host.snapshot().model_names.clone()
    }

    /// Problems discovery found (skipped skill folders, warnings).
    fn diagnostics(&self) -> Vec<Diagnostic> {
        let snapshot = self.host.snapshot();
        snapshot
            .deck
            .diagnostics()
            .iter()
            .chain(self.host.missing_handlers(&snapshot).iter())
            .map(Diagnostic::from)
            .collect()
    }

    /// Registers `handler` (a callable taking the arguments dict) for the
    /// host-implemented tool `full_name` (declared without `run`): from now
    /// on it is offered to models and answered by `handler`, called only
    /// with arguments that match the tool's schema.
    fn register_tool_handler(
        &self,
        py: Python<'_>,
        full_name: &str,
        handler: Bound<'_, PyAny>,
    ) -> PyResult<()> {
        if !handler.is_callable() {
            return Err(pyo3::exceptions::PyTypeError::new_err(
                "register_tool_handler: the handler must be callable (it takes the arguments dict)",
            ));
        }
        let handler = std::sync::Arc::new(exec::PyToolHandler(handler.unbind()));
        self.host
            .register_tool_handler(full_name, handler)
            .map_err(|e| errors::tool(py, e))
    }

    /// Removes the handler of `full_name`; True when there was one.
    fn remove_tool_handler(&self, full_name: &str) -> bool {
        self.host.remove_tool_handler(full_name)
    }

    /// The declared tools this deck offers models: of the skills the model
    /// may use, the script tools while `[exec] enabled` and the
    /// host-implemented tools that have a handler.
    fn offerable_skill_tools(&self) -> Vec<SkillToolInfo> {
        let snapshot = self.host.snapshot();
        self.host
            .offerable_skill_tools(&snapshot)
            .into_iter()
            .map(SkillToolInfo::from)
            .collect()
    }

    /// The catalog for a system prompt.
    #[pyo3(signature = (format = None, budget_tokens = None, budget_chars = None, query = None, encoding = None, locations = true, trace_id = None))]
    #[allow(clippy::too_many_arguments)]
    fn catalog(
        &self,
        py: Python<'_>,
        format: Option<&str>,
        budget_tokens: Option<usize>,
        budget_chars: Option<usize>,
        query: Option<&str>,
        encoding: Option<&str>,
        locations: bool,
        trace_id: Option<&str>,
    ) -> PyResult<String> {
        let format = format.map(|f| parse::<CatalogFormat>(py, f)).transpose()?;
        let encoding = encoding.map(|e| parse::<Encoding>(py, e)).transpose()?;
        let request = CatalogRequest {
            format,
            budget: BudgetOverride {
                chars: budget_chars,
                tokens: budget_tokens,
                encoding,
            },
            query: query.map(str::to_owned),
            locations: Some(locations),
            ..CatalogRequest::default()
        };
        let host = &self.host;
        py.detach(|| {
            traced("deck.catalog", trace_id, || {
                host.catalog(&request).map(|c| c.text)
            })
        })
        .map_err(|e| errors::core(py, e))
    }

    /// Activates `name` with `arguments`. Without `conversation`: the
    /// application asks (the instructions every time, from the cache while
    /// `SKILL.md` is unchanged). With it: the model asks in that
    /// conversation (the host's model rules apply; the same arguments again
    /// answer the short "already active" notice, other arguments the
    /// instructions; `reload=True` sends them again after compaction).
    #[pyo3(signature = (name, arguments = "", conversation = None, reload = false, trace_id = None))]
    fn activate(
        &self,
        py: Python<'_>,
        name: &str,
        arguments: &str,
        conversation: Option<&str>,
        reload: bool,
        trace_id: Option<&str>,
    ) -> PyResult<Activation> {
        let host = &self.host;
        match conversation {
            None => {
                let result = py.detach(|| {
                    traced("deck.activate", trace_id, || {
                        let snapshot = host.snapshot();
                        let skill = snapshot.require(name)?;
                        Ok::<_, skilldeck::Error>((
                            skill.name.clone(),
                            host.activation(skill, arguments)?,
                        ))
                    })
                });
                match result {
                    Ok((name, cached)) => Ok(Activation::content(name, cached)),
                    Err(e) => Err(errors::core(py, e)),
                }
            }
            Some(conversation) => {
                let result = py.detach(|| {
                    let _call = enter("deck.activate", trace_id);
                    let snapshot = host.snapshot();
                    match host.activate(&snapshot, conversation, name, arguments, reload) {
                        Ok(Activated::AlreadyActive(notice)) => {
                            let found = snapshot
                                .require(name)
                                .map_or_else(|_| name.to_owned(), |s| s.name.clone());
                            Ok(Activation::notice(found, notice))
                        }
                        Ok(Activated::Content(text)) => {
                            // The text is the host's (dynamic-context output
                            // included); the structure comes from the cache
                            // (just filled: a hit).
                            let skill = snapshot.require(name).map_err(ActivateError::Core)?;
                            host.activation(skill, arguments)
                                .map(|c| Activation::delivered(skill.name.clone(), c, text))
                                .map_err(ActivateError::Core)
                        }
                        // The host's error carries the core's (suggestions,
                        // diagnostics): nothing is asked again.
                        Err(tool) => Err(ActivateError::Tool(tool)),
                    }
                });
                match result {
                    Ok(a) => Ok(a),
                    Err(ActivateError::Tool(tool)) => Err(errors::tool(py, tool)),
                    Err(ActivateError::Core(core)) => Err(errors::core(py, core)),
                }
            }
        }
    }

    /// The file `path` (relative to the skill folder) of the skill `name`;
    /// paths that leave the skill folder are refused (`ResourceError`).
    #[pyo3(signature = (name, path, trace_id = None))]
    fn read(
        &self,
        py: Python<'_>,
        name: &str,
        path: &str,
        trace_id: Option<&str>,
    ) -> PyResult<Resource> {
        let host = &self.host;
        py.detach(|| {
            let _call = enter("deck.read", trace_id);
            let snapshot = host.snapshot();
            let skill = snapshot.require(name)?;
            let resource = skilldeck::read_resource(skill, path)?;
            Ok(Resource::new(skill.name.clone(), resource))
        })
        .map_err(|e| errors::core(py, e))
    }

    /// Served skills matching `query` (BM25 over names and descriptions),
    /// best first: at most `limit`, from the scopes in `source`, whose
    /// names match the regular expression `pattern`, holding every word of
    /// `keywords`.
    #[pyo3(signature = (query, limit = 10, source = None, pattern = None, keywords = None, trace_id = None))]
    #[allow(clippy::too_many_arguments)]
    fn search(
        &self,
        py: Python<'_>,
        query: &str,
        limit: usize,
        source: Option<Vec<String>>,
        pattern: Option<&str>,
        keywords: Option<Vec<String>>,
        trace_id: Option<&str>,
    ) -> PyResult<Vec<SearchHit>> {
        let mut q = skilldeck::SearchQuery::new(query).limit(limit);
        if let Some(scopes) = source {
            let scopes = scopes
                .iter()
                .map(|s| s.parse::<skilldeck::Scope>())
                .collect::<Result<Vec<_>, String>>()
                .map_err(PyValueError::new_err)?;
            q = q.scopes(scopes);
        }
        if let Some(p) = pattern {
            let re =
                regex::Regex::new(p).map_err(|e| PyValueError::new_err(format!("pattern: {e}")))?;
            q = q.name_pattern(re);
        }
        for k in keywords.unwrap_or_default() {
            q = q.require(k);
        }
        let snapshot = self.host.snapshot();
        Ok(py.detach(|| {
            let _call = enter("deck.search", trace_id);
            snapshot
                .search_index()
                .search(&q)
                .into_iter()
                // Skills turned off are indexed but not served.
                .filter_map(|hit| {
                    let skill = snapshot.get(&hit.name)?;
                    Some(SearchHit {
                        name: skill.name.clone(),
                        description: skill.description.clone(),
                        score: hit.score,
                        scope: skill.scope.as_str(),
                        model_invocable: skilldeck_host::is_model_invocable(skill),
                    })
                })
                .collect()
        }))
    }

    /// Discovers the skills again; when the catalog changed the new deck
    /// replaces the old one (and cached activations are dropped).
    #[pyo3(signature = (trace_id = None))]
    fn reload(&self, py: Python<'_>, trace_id: Option<&str>) -> PyResult<Reload> {
        let host = &self.host;
        let registry = self.registry.as_ref();
        let reload = py
            .detach(|| -> Result<skilldeck_host::Reload, OpenError> {
                let _call = enter("deck.reload", trace_id);
                if let Some(source) = registry {
                    // A new lock is materialised and the host reloaded;
                    // an unchanged one leaves discovery to run below.
                    let target = Recording {
                        host,
                        reload: Mutex::new(None),
                    };
                    source.try_refresh(&target).map_err(OpenError::Source)?;
                    let done = target
                        .reload
                        .into_inner()
                        .unwrap_or_else(PoisonError::into_inner);
                    if let Some(reload) = done {
                        return Ok(reload);
                    }
                }
                host.reload().map_err(OpenError::Core)
            })
            .map_err(|e| e.into_py(py))?;
        if reload.catalog_changed {
            // Not kept until the next `skills`: the cache holds the old
            // snapshot (the whole previous deck) alive.
            let old = self
                .skills_cache
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            drop(old);
        }
        Ok(Reload {
            catalog_changed: reload.catalog_changed,
            generation: reload.generation,
            skills: reload.skills,
            errors: reload.errors.iter().map(Diagnostic::from).collect(),
        })
    }

    /// The activation cache's counters and sizes.
    fn cache_stats(&self) -> CacheStats {
        self.host.cache_stats().into()
    }

    /// Empties the activation cache.
    fn clear_cache(&self) {
        self.host.clear_cache();
    }

    /// The skill `name` changed in a way discovery cannot see: its cached
    /// activation is dropped and every conversation is told it anew.
    /// Returns in how many conversations it was active.
    fn invalidate(&self, py: Python<'_>, name: &str) -> usize {
        py.detach(|| self.host.skill_files_changed(name))
    }

    /// Forgets what `conversation` received (one skill, or all): the next
    /// activation delivers the instructions again.
    #[pyo3(signature = (conversation, skill = None))]
    fn forget(&self, conversation: &str, skill: Option<&str>) -> bool {
        self.host.forget_activations(conversation, skill)
    }

    /// The host's agent tools as data (`activate_skill` with the catalog
    /// in its description, `read_skill_resource`, `search_skills`); none
    /// when no skill is served.
    fn tool_specs(&self) -> Vec<ToolSpec> {
        let snapshot = self.host.snapshot();
        self.host
            .tool_specs(&snapshot)
            .into_iter()
            .map(|t| ToolSpec {
                name: t.name,
                title: t.title,
                description: t.description,
                input_schema_json: t.input_schema.to_string(),
                read_only: t.read_only,
            })
            .collect()
    }

    /// Calls one of the host's agent tools ([`Deck::tool_specs`]) with its
    /// JSON arguments for `conversation`: the text for the model. The
    /// host checks the arguments and words every answer and error.
    #[pyo3(signature = (tool, arguments_json, conversation, approve = None, trace_id = None))]
    fn call_host_tool(
        &self,
        py: Python<'_>,
        tool: &str,
        arguments_json: &str,
        conversation: &str,
        approve: Option<Py<PyAny>>,
        trace_id: Option<&str>,
    ) -> PyResult<String> {
        let host = &self.host;
        py.detach(|| {
            let _call = enter("deck.call_host_tool", trace_id);
            let arguments = json_object(arguments_json)?;
            let snapshot = host.snapshot();
            let mut context = exec::context(trace_id);
            context.session_id = String::new();
            context.tool = tool.to_owned();
            host.call_with(
                &snapshot,
                conversation,
                tool,
                &arguments,
                context,
                approver(approve).as_ref(),
            )
            .map(|called| called.text())
        })
        .map_err(|e| errors::tool(py, e))
    }

    /// True when `[exec] enabled` offers skill code to models (the
    /// LangChain skill tools follow it, as the MCP server does).
    #[getter]
    fn execution_enabled(&self) -> bool {
        self.host.execution().is_some()
    }

    /// The tools the served skills declare (`tools:`), in deck order: the
    /// application's view (it may call every one with `call_tool`).
    fn skill_tools(&self) -> Vec<SkillToolInfo> {
        let snapshot = self.host.snapshot();
        snapshot
            .skill_tools()
            .served(&snapshot.deck)
            .map(SkillToolInfo::from)
            .collect()
    }

    /// The declared tools a model may be given: those of the skills the
    /// host's model-access rule allows (never a tool of a skill with
    /// `disable-model-invocation: true` or mode `manual`), in deck order.
    fn model_skill_tools(&self) -> Vec<SkillToolInfo> {
        let snapshot = self.host.snapshot();
        snapshot
            .skill_tools()
            .model_usable(&snapshot.deck)
            .map(SkillToolInfo::from)
            .collect()
    }

    /// Runs the file `path` (under the skill's `scripts/` folder) of skill
    /// `name` with `args` and `stdin`, in the sandbox, under `[exec]`
    /// (`timeout` in seconds replaces `[exec] timeout-secs`). A non-zero
    /// exit, a signal, the timeout or a refusal raises
    /// `SkillInvocationError` with the host's message.
    #[pyo3(signature = (name, path, args = None, stdin = None, timeout = None, trace_id = None))]
    #[allow(clippy::too_many_arguments)]
    fn run(
        &self,
        py: Python<'_>,
        name: &str,
        path: &str,
        args: Option<Vec<String>>,
        stdin: Option<Bound<'_, PyAny>>,
        timeout: Option<f64>,
        trace_id: Option<&str>,
    ) -> PyResult<RunResult> {
        let input = exec::stdin(stdin.as_ref())?;
        let (host, execution) = (&self.host, self.execution());
        py.detach(|| {
            let _call = enter("deck.run", trace_id);
            let snapshot = host.snapshot();
            let overrides = exec::overrides(timeout)?;
            Execution::prepare_script(
                &snapshot.deck,
                name,
                path,
                ScriptScope::Scripts,
                args.unwrap_or_default(),
                input,
                exec::context(trace_id),
            )
            .and_then(|run| execution.run_prepared(run, &overrides))
        })
        .map(RunResult::from)
        .map_err(|e| errors::tool(py, e))
    }

    /// Calls the skill tool `full_name` (`{skill}__{tool}`) with the JSON
    /// object `arguments_json`: the host checks the arguments against the
    /// tool's schema before anything runs, then runs its skill's `run`
    /// script with them on stdin.
    #[pyo3(signature = (full_name, arguments_json, timeout = None, trace_id = None))]
    fn call_tool(
        &self,
        py: Python<'_>,
        full_name: &str,
        arguments_json: &str,
        timeout: Option<f64>,
        trace_id: Option<&str>,
    ) -> PyResult<RunResult> {
        let (host, execution) = (&self.host, self.execution());
        py.detach(|| {
            let _call = enter("deck.call_tool", trace_id);
            let snapshot = host.snapshot();
            let overrides = exec::overrides(timeout)?;
            let mut context = exec::context(trace_id);
            context.tool = full_name.to_owned();
            let run = Execution::prepare_tool_json(
                &snapshot.deck,
                snapshot.skill_tools(),
                full_name,
                arguments_json,
                context,
            )?;
            execution.run_prepared(run, &overrides)
        })
        .map(RunResult::from)
        .map_err(|e| errors::tool(py, e))
    }

    /// Runs `code` (`language`: python, bash, node where installed) as a
    /// model's `run_code` call in `conversation`: the sandbox and `[exec]`
    /// policy of skill scripts, the conversation's work folder (its files
    /// kept between calls), `skill`'s folder mounted read-only when named.
    /// Approval: the config's `[exec] approval`; with `approve` (a callable
    /// `request -> bool`), `never` becomes `ask` (the host's
    /// `CallerApprover`). Files written under
    /// `outputs/` come back in the result's `outputs`.
    #[pyo3(signature = (arguments_json, conversation, approve = None, trace_id = None))]
    fn run_code(
        &self,
        py: Python<'_>,
        arguments_json: &str,
        conversation: &str,
        approve: Option<Py<PyAny>>,
        trace_id: Option<&str>,
    ) -> PyResult<RunResult> {
        let (host, execution) = (&self.host, self.code_execution());
        py.detach(|| {
            let _call = enter("deck.run_code", trace_id);
            let arguments = json_object(arguments_json)?;
            let snapshot = host.snapshot();
            let mut context = exec::context(trace_id);
            context.session_id = String::new();
            context.tool = skilldeck_host::RUN_CODE.to_owned();
            host.run_code_with(
                execution,
                &snapshot,
                conversation,
                &arguments,
                context,
                approver(approve).as_ref(),
            )
        })
        .map(RunResult::from)
        .map_err(|e| errors::tool(py, e))
    }

    /// The languages `run_code` offers here (their interpreter is on the
    /// sandbox PATH).
    fn code_languages(&self) -> Vec<&'static str> {
        skilldeck_host::Language::available()
            .into_iter()
            .map(|l| l.name())
            .collect()
    }

    /// `run_code`'s tool spec (description and JSON Schema) for a model.
    fn code_tool_spec(&self) -> ToolSpec {
        let languages = skilldeck_host::Language::available();
        ToolSpec {
            name: skilldeck_host::RUN_CODE,
            title: "Run code",
            description: skilldeck_host::code::code_description(&languages),
            input_schema_json: skilldeck_host::code::code_input_schema(&languages).to_string(),
            read_only: false,
        }
    }

    /// Calls the skill tool `full_name` for `conversation` as a model
    /// would (the MCP server's path): only while `[exec] enabled`, only
    /// for a skill the model may use (the host's model-access rule), and
    /// only when `[exec] tools` offers the skill's tools to that
    /// conversation (`on-activate`: once the skill was activated in it).
    #[pyo3(signature = (full_name, arguments_json, conversation, trace_id = None))]
    fn call_execution_tool(
        &self,
        py: Python<'_>,
        full_name: &str,
        arguments_json: &str,
        conversation: &str,
        trace_id: Option<&str>,
    ) -> PyResult<RunResult> {
        let host = &self.host;
        py.detach(|| {
            let _call = enter("deck.call_execution_tool", trace_id);
            let arguments = json_object(arguments_json)?;
            let snapshot = host.snapshot();
            let mut context = exec::context(trace_id);
            context.session_id = String::new();
            context.tool = full_name.to_owned();
            if host.is_host_implemented_tool(&snapshot, full_name) {
                return Err(handled_elsewhere(full_name));
            }
            match host.call(&snapshot, conversation, full_name, &arguments, context)? {
                Called::Run(run) => Ok(*run),
                Called::Tool(_) => Err(ToolError::new(
                    ToolErrorKind::UnknownTool,
                    format!("'{full_name}' is one of the host's tools, not a skill tool"),
                )),
                Called::Handled(_) => Err(handled_elsewhere(full_name)),
            }
        })
        .map(RunResult::from)
        .map_err(|e| errors::tool(py, e))
    }

    fn __repr__(&self) -> String {
        let snapshot = self.host.snapshot();
        format!(
            "<Deck {} skills, generation {}>",
            snapshot.served().count(),
            snapshot.generation
        )
    }
}

/// A host-implemented tool asked of the script path: nothing runs.
fn handled_elsewhere(full_name: &str) -> ToolError {
    ToolError::new(
        ToolErrorKind::UnknownTool,
        format!(
            "'{full_name}' is implemented by a handler, not a script: call it with \
             call_host_tool (nothing was run)"
        ),
    )
}

/// Tool arguments from Python as JSON text: they must be one JSON object.
fn json_object(
    arguments_json: &str,
) -> Result<serde_json::Map<String, serde_json::Value>, skilldeck_host::ToolError> {
    match serde_json::from_str::<serde_json::Value>(arguments_json) {
        Ok(serde_json::Value::Object(map)) => Ok(map),
        _ => Err(skilldeck_host::ToolError::new(
            ToolErrorKind::InvalidArguments,
            "the arguments must be a JSON object",
        )),
    }
}
