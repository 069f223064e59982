//! [`Deck`]: a [`Host`] over the discovered skills, as JavaScript sees it.
//! Every method takes the host's current snapshot (swapped whole on
//! reload); the slow ones run as [`crate::job::Job`]s and answer Promises.

use std::path::PathBuf;
use std::sync::Arc;

use napi::bindgen_prelude::{AsyncTask, Buffer, Either, Function, Promise};
use napi_derive::napi;
use serde_json::{Map, Value};

use skilldeck::{ActivationFormat, BudgetOverride, CatalogFormat, Encoding};
use skilldeck_exec::{CallContext, Input};
use skilldeck_host::execution::{Overrides, ScriptScope};
use skilldeck_host::{
    Activated, Called, CatalogRequest, Execution, Host, HostOptions, HostSpec, ToolError,
    ToolErrorKind,
};

use crate::errors;
use crate::handler::JsToolHandler;
use crate::job::{Job, spawn};
use crate::telemetry::{self, enter};
use crate::types::{
    Activation, CacheStats, Diagnostic, HostToolAnswer, Reload, Resource, RunResult, SearchHit,
    Skill, SkillToolInfo, ToolSpec,
};

/// The host and the execution service of the application's own calls.
struct Inner {
    host: Host,
    /// The execution service for `run` / `callTool` while `[exec] enabled`
    /// is off, under the config's `[exec]` (as in the Python binding); with
    /// it on, the host's own service runs every call.
    fallback_execution: Execution,
}

impl Inner {
    fn execution(&self) -> &Execution {
        self.host.execution().unwrap_or(&self.fallback_execution)
    }
}

/// Where the skills come from (`Deck.discover`).
#[napi(object)]
#[derive(Debug, Clone, Default)]
pub struct DiscoverOptions {
    /// Skill roots replacing the default ones (project, user, bundled), as
    /// `--root` does.
    pub roots: Option<Vec<String>>,
    /// A `skilldeck.toml` (default: the one the `skilldeck` command finds).
    pub config: Option<String>,
    /// Where project roots are looked for (default: the working folder).
    pub cwd: Option<String>,
    /// The caller's trace id: the discovery's spans are exported in that
    /// trace (a W3C trace id of 32 hex digits, or a UUID, is used as the
    /// trace id; a `traceparent` is the parent; another id is recorded as
    /// `skilldeck.caller.trace_id` in a new trace). Every call takes one.
    pub trace_id: Option<String>,
    /// Export spans to this OTLP/HTTP collector (a base URL; `/v1/traces`
    /// is appended), else `OTEL_EXPORTER_OTLP_ENDPOINT` or the config's
    /// `[telemetry] endpoint`; without any, nothing is exported. The first
    /// settings win for the process.
    pub otlp_endpoint: Option<String>,
}

/// The catalog's options (`deck.catalog`).
#[napi(object)]
#[derive(Debug, Clone, Default)]
pub struct CatalogOptions {
    /// `xml`, `markdown` or `json` (the core's formats).
    pub format: Option<String>,
    /// Token budget.
    pub budget_tokens: Option<u32>,
    /// Character budget.
    pub budget_chars: Option<u32>,
    /// Only the skills matching this query.
    pub query: Option<String>,
    /// The token encoding for `budgetTokens`.
    pub encoding: Option<String>,
    /// Whether entries name the skill folders (default true).
    pub locations: Option<bool>,
    /// The caller's trace id (see [`DiscoverOptions::trace_id`]).
    pub trace_id: Option<String>,
}

/// `deck.activate`'s options.
#[napi(object)]
#[derive(Debug, Clone, Default)]
pub struct ActivateOptions {
    /// The text substituted for `$ARGUMENTS` (default empty).
    pub arguments: Option<String>,
    /// The conversation asking (the model's path: the host's model rules
    /// apply, and the same arguments again answer the "already active"
    /// notice). Without it, the application asks.
    pub conversation: Option<String>,
    /// With `conversation`: send the instructions again (after compaction).
    pub reload: Option<bool>,
    /// Without `conversation`: the rendering of `text`, `xml` (default),
    /// `text` or `json`.
    pub format: Option<String>,
    /// The caller's trace id (see [`DiscoverOptions::trace_id`]).
    pub trace_id: Option<String>,
}

/// `deck.search`'s options.
#[napi(object)]
#[derive(Debug, Clone, Default)]
pub struct SearchOptions {
    /// At most this many hits (default 10).
    pub limit: Option<u32>,
    /// Only skills from these scopes.
    pub source: Option<Vec<String>>,
    /// Only skills whose names match this regular expression.
    pub pattern: Option<String>,
    /// Only skills holding every one of these words.
    pub keywords: Option<Vec<String>>,
    /// The caller's trace id (see [`DiscoverOptions::trace_id`]).
    pub trace_id: Option<String>,
}

/// Options of `deck.read` and `deck.reload`.
#[napi(object)]
#[derive(Debug, Clone, Default)]
pub struct TraceOptions {
    /// The caller's trace id (see [`DiscoverOptions::trace_id`]).
    pub trace_id: Option<String>,
}

/// `deck.run`'s options.
#[napi(object)]
#[derive(Default)]
pub struct RunOptions {
    /// The script's arguments.
    pub args: Option<Vec<String>>,
    /// Its standard input.
    pub stdin: Option<Either<String, Buffer>>,
    /// Seconds, replacing `[exec] timeout-secs`.
    pub timeout: Option<f64>,
    /// The caller's trace id: recorded as the call id of the run, and the
    /// trace of its spans (see [`DiscoverOptions::trace_id`]).
    pub trace_id: Option<String>,
}

/// Options of the tool calls (`callTool`, `callHostTool`,
/// `callExecutionTool`).
#[napi(object)]
#[derive(Debug, Clone, Default)]
pub struct CallOptions {
    /// Seconds, replacing `[exec] timeout-secs` (`callTool`).
    pub timeout: Option<f64>,
    /// The caller's trace id: recorded as the call id (the audit line, the
    /// `SKILLDECK_CALL_ID` of a script, `call.traceId` of a handler), and
    /// the trace of the call's spans (see [`DiscoverOptions::trace_id`]).
    pub trace_id: Option<String>,
}

/// Who asks, as scripts see it and the audit records it: the Node process,
/// with the caller's trace id as the call id.
fn context(trace_id: Option<&str>) -> CallContext {
    let mut context = CallContext::local("node");
    if let Some(id) = trace_id {
        id.clone_into(&mut context.call_id);
    }
    context
}

/// A timeout in seconds as the host's run overrides.
fn overrides(timeout: Option<f64>) -> Result<Overrides, ToolError> {
    let Some(secs) = timeout else {
        return Ok(Overrides::default());
    };
    let timeout = skilldeck_exec::timeout_from_secs(secs)
        .map_err(|message| ToolError::new(ToolErrorKind::InvalidArguments, message))?;
    Ok(Overrides {
        timeout: Some(timeout),
        profile: None,
    })
}

fn parse<T: std::str::FromStr<Err = skilldeck::Error>>(text: &str) -> napi::Result<T> {
    text.parse().map_err(|e| errors::core(&e))
}

/// The host's options for `spec` (the host's one rule: [`HostSpec`]). A
/// library shares the host's files with its caller: answers may name the
/// skill folders. Starts span export when the config, the `OTEL_*`
/// variables or `otlp_endpoint` name a collector.
fn options_of(spec: &HostSpec, otlp_endpoint: Option<&str>) -> napi::Result<HostOptions> {
    let resolved = spec.load().map_err(|e| errors::host(&e))?;
    telemetry::start(&resolved.config.telemetry, otlp_endpoint)?;
    let mut options = resolved.host_options().map_err(|e| errors::core(&e))?;
    options.expose_paths = true;
    Ok(options)
}

/// Tool arguments from JavaScript: they must be one object.
fn object(arguments: Value) -> Result<Map<String, Value>, ToolError> {
    match arguments {
        Value::Object(map) => Ok(map),
        _ => Err(ToolError::new(
            ToolErrorKind::InvalidArguments,
            "the arguments must be an object",
        )),
    }
}

/// The served skills, in deck order.
#[napi]
pub struct Deck {
    inner: Arc<Inner>,
}

#[napi]
impl Deck {
    /// Discovers the skills (on the thread pool): `roots` replace the
    /// default roots, `config` is a `skilldeck.toml`, `cwd` is where project
    /// roots are looked for.
    #[napi(ts_return_type = "Promise<Deck>")]
    pub fn discover(options: Option<DiscoverOptions>) -> AsyncTask<Job<Deck>> {
        let options = options.unwrap_or_default();
        spawn(move || {
            let host_options = options_of(
                &HostSpec {
                    config: options.config.map(PathBuf::from),
                    roots: options
                        .roots
                        .map(|r| r.into_iter().map(PathBuf::from).collect()),
                    cwd: options.cwd.map(PathBuf::from),
                    index: false,
                },
                options.otlp_endpoint.as_deref(),
            )?;
            let _call = enter("deck.discover", options.trace_id.as_deref());
            let host = Host::new(host_options).map_err(|e| errors::core(&e))?;
            Ok(Deck {
                inner: Arc::new(Inner {
                    fallback_execution: Execution::new(host.options().exec.clone()),
                    host,
                }),
            })
        })
    }

    /// The served skills, in deck order (metadata only).
    #[napi]
    pub fn skills(&self) -> Vec<Skill> {
        let snapshot = self.inner.host.snapshot();
        snapshot.served().map(Skill::from).collect()
    }

    /// How many skills are served.
    #[napi(getter)]
    pub fn size(&self) -> u32 {
        u32::try_from(self.inner.host.snapshot().served().count()).unwrap_or(u32::MAX)
    }

    /// The generation of the current deck (one more after each reload that
    /// changed the catalog).
    #[napi(getter)]
    pub fn generation(&self) -> f64 {
        crate::types::number(self.inner.host.snapshot().generation)
    }

    /// True when a skill of that name is served (exact, or the one equal
    /// ignoring case).
    #[napi]
    pub fn has(&self, name: String) -> bool {
        self.inner.host.snapshot().get(&name).is_some()
    }

    /// The served skill `name` (exact, else the one equal ignoring case):
    /// else `SkillNotFoundError` with close names.
    #[napi]
    pub fn get(&self, name: String) -> napi::Result<Skill> {
        let snapshot = self.inner.host.snapshot();
        snapshot
            .require(&name)
            .map(Skill::from)
            .map_err(|e| errors::core(&e))
    }

    /// The names of the skills the model may activate.
    #[napi]
    pub fn model_invocable(&self) -> Vec<String> {
        self.inner.host.snapshot().model_names.clone()
    }

    /// Problems discovery found (skipped skill folders, dropped tools,
    /// warnings) and the declared tools that have neither a script nor a
    /// handler.
    #[napi]
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        let host = &self.inner.host;
        let snapshot = host.snapshot();
        snapshot
            .deck
            .diagnostics()
            .iter()
            .chain(host.missing_handlers(&snapshot).iter())
            .map(Diagnostic::from)
            .collect()
    }

    /// Registers `handler` for the host-implemented tool `fullName`
    /// (declared without `run`): from now on it is offered to models and
    /// answered by `handler`, called only with arguments that match the
    /// tool's schema. Its value (JSON-serialisable; a string is the text as
    /// is) is the result; a throw or a rejection is the tool's error.
    #[napi(
        ts_args_type = "fullName: string, handler: (args: any, call: ToolCall) => unknown",
        ts_return_type = "void"
    )]
    pub fn register_tool_handler(
        &self,
        full_name: String,
        handler: Function<'_, String, Promise<String>>,
    ) -> napi::Result<()> {
        let tsfn = handler
            .build_threadsafe_function::<String>()
            .callee_handled::<false>()
            .weak::<true>()
            .build()?;
        self.inner
            .host
            .register_tool_handler(&full_name, Arc::new(JsToolHandler(tsfn)))
            .map_err(|e| errors::tool(&e))
    }

    /// Removes the handler of `fullName`; true when there was one.
    #[napi]
    pub fn remove_tool_handler(&self, full_name: String) -> bool {
        self.inner.host.remove_tool_handler(&full_name)
    }

    /// True when `fullName` has a handler.
    #[napi]
    pub fn has_tool_handler(&self, full_name: String) -> bool {
        self.inner.host.has_tool_handler(&full_name)
    }

    /// The declared tools this deck offers models: of the skills the model
    /// may use, the script tools while `[exec] enabled` and the
    /// host-implemented tools that have a handler.
    #[napi]
    pub fn offerable_skill_tools(&self) -> Vec<SkillToolInfo> {
        let host = &self.inner.host;
        let snapshot = host.snapshot();
        host.offerable_skill_tools(&snapshot)
            .into_iter()
            .map(SkillToolInfo::from)
            .collect()
    }

    /// The tools the served skills declare, in deck order (the
    /// application's view: it may call every one).
    #[napi]
    pub fn skill_tools(&self) -> Vec<SkillToolInfo> {
        let snapshot = self.inner.host.snapshot();
        snapshot
            .skill_tools()
            .served(&snapshot.deck)
            .map(SkillToolInfo::from)
            .collect()
    }

    /// The declared tools a model may be given (the host's model-access
    /// rule), in deck order.
    #[napi]
    pub fn model_skill_tools(&self) -> Vec<SkillToolInfo> {
        let snapshot = self.inner.host.snapshot();
        snapshot
            .skill_tools()
            .model_usable(&snapshot.deck)
            .map(SkillToolInfo::from)
            .collect()
    }

    /// True when `[exec] enabled` offers skill code to models.
    #[napi(getter)]
    pub fn execution_enabled(&self) -> bool {
        self.inner.host.execution().is_some()
    }

    /// The catalog for a system prompt.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn catalog(&self, options: Option<CatalogOptions>) -> napi::Result<AsyncTask<Job<String>>> {
        let o = options.unwrap_or_default();
        let request = CatalogRequest {
            format: o
                .format
                .as_deref()
                .map(parse::<CatalogFormat>)
                .transpose()?,
            budget: BudgetOverride {
                chars: o.budget_chars.map(|n| n as usize),
                tokens: o.budget_tokens.map(|n| n as usize),
                encoding: o.encoding.as_deref().map(parse::<Encoding>).transpose()?,
            },
            query: o.query,
            locations: Some(o.locations.unwrap_or(true)),
            ..CatalogRequest::default()
        };
        let inner = Arc::clone(&self.inner);
        let trace_id = o.trace_id;
        Ok(spawn(move || {
            let _call = enter("deck.catalog", trace_id.as_deref());
            inner
                .host
                .catalog(&request)
                .map(|c| c.text)
                .map_err(|e| errors::core(&e))
        }))
    }

    /// Activates `name`. Without `conversation`: the application asks (the
    /// instructions every time, from the cache while `SKILL.md` is
    /// unchanged). With it: the model asks in that conversation (the host's
    /// model rules; the same arguments again answer the "already active"
    /// notice).
    #[napi(ts_return_type = "Promise<Activation>")]
    pub fn activate(
        &self,
        name: String,
        options: Option<ActivateOptions>,
    ) -> napi::Result<AsyncTask<Job<Activation>>> {
        let o = options.unwrap_or_default();
        let format = match o.format.as_deref() {
            None | Some("xml") => ActivationFormat::Xml,
            Some("text") => ActivationFormat::Text,
            Some("json") => ActivationFormat::Json,
            Some(other) => {
                return Err(errors::core(&skilldeck::Error::InvalidValue {
                    what: "activation format",
                    value: other.to_owned(),
                    expected: "xml, text or json",
                }));
            }
        };
        let inner = Arc::clone(&self.inner);
        Ok(spawn(move || {
            let _call = enter("deck.activate", o.trace_id.as_deref());
            let host = &inner.host;
            let arguments = o.arguments.unwrap_or_default();
            let snapshot = host.snapshot();
            match o.conversation {
                None => {
                    let skill = snapshot.require(&name).map_err(|e| errors::core(&e))?;
                    let cached = host
                        .activation(skill, &arguments)
                        .map_err(|e| errors::core(&e))?;
                    let text = cached.rendered(format).to_owned();
                    Ok(Activation::content(
                        skill.name.clone(),
                        cached.activation(),
                        text,
                    ))
                }
                Some(conversation) => {
                    let reload = o.reload.unwrap_or(false);
                    match host.activate(&snapshot, &conversation, &name, &arguments, reload) {
                        Ok(Activated::AlreadyActive(notice)) => {
                            let found = snapshot
                                .require(&name)
                                .map_or_else(|_| name.clone(), |s| s.name.clone());
                            Ok(Activation::notice(found, notice))
                        }
                        Ok(Activated::Content(text)) => {
                            // The text is the host's; the structure comes from
                            // the cache (just filled: a hit).
                            let skill = snapshot.require(&name).map_err(|e| errors::core(&e))?;
                            let cached = host
                                .activation(skill, &arguments)
                                .map_err(|e| errors::core(&e))?;
                            Ok(Activation::content(
                                skill.name.clone(),
                                cached.activation(),
                                text.to_string(),
                            ))
                        }
                        Err(e) => Err(errors::tool(&e)),
                    }
                }
            }
        }))
    }

    /// The file `path` (relative to the skill folder) of skill `name`;
    /// paths that leave the skill folder are refused (`ResourceError`).
    #[napi(ts_return_type = "Promise<Resource>")]
    pub fn read(
        &self,
        name: String,
        path: String,
        options: Option<TraceOptions>,
    ) -> AsyncTask<Job<Resource>> {
        let inner = Arc::clone(&self.inner);
        let trace_id = options.and_then(|o| o.trace_id);
        spawn(move || {
            let _call = enter("deck.read", trace_id.as_deref());
            let snapshot = inner.host.snapshot();
            let skill = snapshot.require(&name).map_err(|e| errors::core(&e))?;
            let resource = skilldeck::read_resource(skill, &path).map_err(|e| errors::core(&e))?;
            Ok(Resource::new(skill.name.clone(), resource))
        })
    }

    /// Served skills matching `query` (BM25 over names and descriptions),
    /// best first.
    #[napi(ts_return_type = "Promise<SearchHit[]>")]
    pub fn search(
        &self,
        query: String,
        options: Option<SearchOptions>,
    ) -> napi::Result<AsyncTask<Job<Vec<SearchHit>>>> {
        let o = options.unwrap_or_default();
        let mut q = skilldeck::SearchQuery::new(&query).limit(o.limit.unwrap_or(10) as usize);
        if let Some(scopes) = o.source {
            let scopes = scopes
                .iter()
                .map(|s| s.parse::<skilldeck::Scope>())
                .collect::<Result<Vec<_>, String>>()
                .map_err(errors::invalid_value)?;
            q = q.scopes(scopes);
        }
        if let Some(p) = o.pattern {
            let re = regex::Regex::new(&p)
                .map_err(|e| errors::invalid_value(format!("pattern: {e}")))?;
            q = q.name_pattern(re);
        }
        for k in o.keywords.unwrap_or_default() {
            q = q.require(k);
        }
        let inner = Arc::clone(&self.inner);
        let trace_id = o.trace_id;
        Ok(spawn(move || {
            let _call = enter("deck.search", trace_id.as_deref());
            let snapshot = inner.host.snapshot();
            Ok(snapshot
                .search_index()
                .search(&q)
                .into_iter()
                .filter_map(|hit| {
                    let skill = snapshot.get(&hit.name)?;
                    Some(SearchHit {
                        name: skill.name.clone(),
                        description: skill.description.clone(),
                        score: hit.score,
                        scope: skill.scope.as_str().to_owned(),
                        model_invocable: skilldeck_host::is_model_invocable(skill),
                    })
                })
                .collect())
        }))
    }

    /// Discovers the skills again; when the catalog changed the new deck
    /// replaces the old one (and cached activations are dropped).
    #[napi(ts_return_type = "Promise<Reload>")]
    pub fn reload(&self, options: Option<TraceOptions>) -> AsyncTask<Job<Reload>> {
        let inner = Arc::clone(&self.inner);
        let trace_id = options.and_then(|o| o.trace_id);
        spawn(move || {
            let _call = enter("deck.reload", trace_id.as_deref());
            inner
                .host
                .reload()
                .map(Reload::from)
                .map_err(|e| errors::core(&e))
        })
    }

    /// Exports the spans still queued (when telemetry is on), waiting for
    /// the collector: call it at the end of a short script. The deck stays
    /// usable. False when nothing is exported.
    #[napi(ts_return_type = "Promise<boolean>")]
    pub fn close(&self) -> AsyncTask<Job<bool>> {
        telemetry::flush_job()
    }

    /// The activation cache's counters and sizes.
    #[napi]
    pub fn cache_stats(&self) -> CacheStats {
        self.inner.host.cache_stats().into()
    }

    /// Empties the activation cache.
    #[napi]
    pub fn clear_cache(&self) {
        self.inner.host.clear_cache();
    }

    /// The skill `name` changed in a way discovery cannot see: its cached
    /// activation is dropped and every conversation is told it anew.
    /// Returns in how many conversations it was active.
    #[napi]
    pub fn invalidate(&self, name: String) -> u32 {
        u32::try_from(self.inner.host.skill_files_changed(&name)).unwrap_or(u32::MAX)
    }

    /// Forgets what `conversation` received (one skill, or all).
    #[napi]
    pub fn forget(&self, conversation: String, skill: Option<String>) -> bool {
        self.inner
            .host
            .forget_activations(&conversation, skill.as_deref())
    }

    /// The host's agent tools as data (`activate_skill` with the catalog in
    /// its description, `read_skill_resource`, `search_skills`); none when
    /// no skill is served.
    #[napi]
    pub fn tool_specs(&self) -> Vec<ToolSpec> {
        let host = &self.inner.host;
        let snapshot = host.snapshot();
        host.tool_specs(&snapshot)
            .into_iter()
            .map(|t| ToolSpec {
                name: t.name.to_owned(),
                title: t.title.to_owned(),
                description: t.description,
                input_schema: t.input_schema,
                read_only: t.read_only,
            })
            .collect()
    }

    /// Calls one of the host's agent tools ([`Deck::tool_specs`]) or a
    /// host-implemented skill tool (its handler) for `conversation`, as a
    /// model would: the host checks the arguments and words every answer
    /// and error.
    #[napi(ts_return_type = "Promise<HostToolAnswer>")]
    pub fn call_host_tool(
        &self,
        tool: String,
        arguments: Value,
        conversation: String,
        options: Option<CallOptions>,
    ) -> AsyncTask<Job<HostToolAnswer>> {
        let trace_id = options.and_then(|o| o.trace_id);
        let inner = Arc::clone(&self.inner);
        spawn(move || {
            let _call = enter("deck.call_host_tool", trace_id.as_deref());
            let run = || {
                let arguments = object(arguments)?;
                let host = &inner.host;
                let snapshot = host.snapshot();
                let mut context = context(trace_id.as_deref());
                conversation.clone_into(&mut context.session_id);
                tool.clone_into(&mut context.tool);
                let called = host.call(&snapshot, &conversation, &tool, &arguments, context)?;
                let structured = match &called {
                    Called::Handled(h) => Some(h.structured.clone()),
                    Called::Run(r) => r.structured.clone(),
                    Called::Tool(_) => None,
                };
                Ok(HostToolAnswer {
                    text: called.text(),
                    structured,
                })
            };
            run().map_err(|e: ToolError| errors::tool(&e))
        })
    }

    /// Runs the file `path` (under the skill's `scripts/` folder) of skill
    /// `name` in the sandbox, under `[exec]`. A non-zero exit, a signal,
    /// the timeout or a refusal rejects with `SkillInvocationError`.
    #[napi(ts_return_type = "Promise<RunResult>")]
    pub fn run(
        &self,
        name: String,
        path: String,
        options: Option<RunOptions>,
    ) -> AsyncTask<Job<RunResult>> {
        let o = options.unwrap_or_default();
        let input = match o.stdin {
            None => Input::Null,
            Some(Either::A(text)) => Input::Bytes(text.into_bytes()),
            Some(Either::B(bytes)) => Input::Bytes(bytes.to_vec()),
        };
        let inner = Arc::clone(&self.inner);
        let (args, timeout, trace_id) = (o.args.unwrap_or_default(), o.timeout, o.trace_id);
        spawn(move || {
            let _call = enter("deck.run", trace_id.as_deref());
            let snapshot = inner.host.snapshot();
            overrides(timeout)
                .and_then(|overrides| {
                    Execution::prepare_script(
                        &snapshot.deck,
                        &name,
                        &path,
                        ScriptScope::Scripts,
                        args,
                        input,
                        context(trace_id.as_deref()),
                    )
                    .and_then(|run| inner.execution().run_prepared(run, &overrides))
                })
                .map(RunResult::from)
                .map_err(|e| errors::tool(&e))
        })
    }

    /// Calls the skill tool `fullName` (`{skill}__{tool}`) with `arguments`
    /// as the application: the host checks the arguments against the
    /// tool's schema before anything runs, then runs its script (or, for a
    /// host-implemented tool, its handler).
    #[napi(ts_return_type = "Promise<RunResult>")]
    pub fn call_tool(
        &self,
        full_name: String,
        arguments: Value,
        options: Option<CallOptions>,
    ) -> AsyncTask<Job<RunResult>> {
        let o = options.unwrap_or_default();
        let inner = Arc::clone(&self.inner);
        spawn(move || {
            let _call = enter("deck.call_tool", o.trace_id.as_deref());
            let run = || -> Result<RunResult, ToolError> {
                let snapshot = inner.host.snapshot();
                let overrides = overrides(o.timeout)?;
                let mut context = context(o.trace_id.as_deref());
                full_name.clone_into(&mut context.tool);
                let text = serde_json::to_string(&arguments)
                    .map_err(|e| ToolError::new(ToolErrorKind::InvalidArguments, e.to_string()))?;
                let run = Execution::prepare_tool_json(
                    &snapshot.deck,
                    snapshot.skill_tools(),
                    &full_name,
                    &text,
                    context,
                )?;
                inner
                    .execution()
                    .run_prepared(run, &overrides)
                    .map(RunResult::from)
            };
            run().map_err(|e| errors::tool(&e))
        })
    }

    /// Calls the skill tool `fullName` for `conversation` as a model would
    /// (the MCP server's path): only while `[exec] enabled`, only for a
    /// skill the model may use, only when `[exec] tools` offers it there.
    #[napi(ts_return_type = "Promise<RunResult>")]
    pub fn call_execution_tool(
        &self,
        full_name: String,
        arguments: Value,
        conversation: String,
        options: Option<CallOptions>,
    ) -> AsyncTask<Job<RunResult>> {
        let trace_id = options.and_then(|o| o.trace_id);
        let inner = Arc::clone(&self.inner);
        spawn(move || {
            let _call = enter("deck.call_execution_tool", trace_id.as_deref());
            let run = || -> Result<RunResult, ToolError> {
                let arguments = object(arguments)?;
                let host = &inner.host;
                let snapshot = host.snapshot();
                let mut context = context(trace_id.as_deref());
                conversation.clone_into(&mut context.session_id);
                full_name.clone_into(&mut context.tool);
                if host.is_host_implemented_tool(&snapshot, &full_name) {
                    return Err(handled_elsewhere(&full_name));
                }
                match host.call(&snapshot, &conversation, &full_name, &arguments, context)? {
                    Called::Run(run) => Ok(RunResult::from(*run)),
                    Called::Tool(_) => Err(ToolError::new(
                        ToolErrorKind::UnknownTool,
                        format!("'{full_name}' is one of the host's tools, not a skill tool"),
                    )),
                    Called::Handled(_) => Err(handled_elsewhere(&full_name)),
                }
            };
            run().map_err(|e| errors::tool(&e))
        })
    }
}

/// A host-implemented tool asked of the script path: nothing runs.
fn handled_elsewhere(full_name: &str) -> ToolError {
    ToolError::new(
        ToolErrorKind::UnknownTool,
        format!(
            "'{full_name}' is implemented by a handler, not a script: call it with \
             callHostTool (nothing was run)"
        ),
    )
}

/// Validates the skill at `path` (a folder or its `SKILL.md`) with the
/// core's validator, `strict` (default) or `lenient`: every problem, in
/// file order (empty when valid).
#[napi(ts_return_type = "Promise<Diagnostic[]>")]
pub fn validate(
    path: String,
    mode: Option<String>,
) -> napi::Result<AsyncTask<Job<Vec<Diagnostic>>>> {
    let options = match mode.as_deref().unwrap_or("strict") {
        "strict" => skilldeck::ValidationOptions::strict(),
        "lenient" => skilldeck::ValidationOptions::lenient(),
        other => {
            return Err(errors::invalid_value(format!(
                "mode: unknown variant `{other}`, expected `strict` or `lenient`"
            )));
        }
    };
    Ok(spawn(move || {
        let report = skilldeck::validate_path(std::path::Path::new(&path), &options);
        Ok(report.diagnostics.iter().map(Diagnostic::from).collect())
    }))
}
