//! [`SkillServer`]: the `rmcp` [`ServerHandler`] over an [`Engine`]. One
//! value per MCP session (stdio: the process; HTTP: each `initialize`d
//! session, or each request of a 2026-07-28 stateless client), all sharing
//! one engine.
//!
//! Every request runs in a `request` span carrying `request_id`,
//! `trace_id` (from a W3C `traceparent` in `_meta` when the client sends
//! one, else a fresh id) and `method`, so each log line names its request.

use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CustomRequest, CustomResult,
    ErrorCode, GetPromptRequestParams, GetPromptResponse, GetSkillRequestParams, GetSkillResult,
    Implementation, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListSkillsResult, ListToolsResult, PaginatedRequestParams, ReadResourceDirectoryRequestParams,
    ReadResourceDirectoryResult, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, RequestMetaObject, ServerCapabilities, ServerConfig, SubscriptionFilter,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::{CancellationToken, DropGuard};
use tracing::Instrument as _;

use crate::engine::{Change, Engine, Snapshot};
use crate::extension::{self, EntryError};
use crate::{cursor, prompts, resources, telemetry, tools, uri};

/// `_meta` key a client may set to name its conversation: activations are
/// tracked per conversation instead of per MCP session (needed by
/// 2026-07-28 clients, which have no sessions).
pub const CONVERSATION_META_KEY: &str = "dev.skilldeck/conversation";

/// Methods this server implements: a request for one of them that reaches
/// the custom-request fallback had params that did not decode.
const STANDARD_METHODS: [&str; 16] = [
    "initialize",
    "server/discover",
    "ping",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/directory/read",
    "skills/list",
    "skills/get",
    "subscriptions/listen",
    "completion/complete",
    "logging/setLevel",
];

/// Methods protocol revision 2026-07-28 removed: a request of that
/// revision for one is an unknown method (`-32601`, HTTP 404), not a
/// request with bad params.
const REMOVED_IN_2026_07_28: [&str; 2] = ["initialize", "logging/setLevel"];

/// The revision that removed [`REMOVED_IN_2026_07_28`].
const STATELESS_REVISION: &str = "2026-07-28";

/// Method not found (`-32601`) for a method revision 2026-07-28 removed.
fn removed_method(method: &str) -> ErrorData {
    ErrorData::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!("method not found: {method} was removed in protocol revision {STATELESS_REVISION}"),
        None,
    )
}

/// A `resources/read` error as the client's revision words it: the URI
/// asked for in `data.uri` whatever went wrong (SEP-2164: a client tells
/// which read failed), and "no such resource" as `-32602` for revision
/// 2026-07-28 clients (SEP-2164) while older ones keep `-32002`.
fn read_error(mut error: ErrorData, uri: &str, stateless: bool) -> ErrorData {
    if error.data.is_none() {
        error.data = Some(serde_json::json!({ "uri": uri }));
    }
    if stateless && error.code == ErrorCode::RESOURCE_NOT_FOUND {
        error.code = ErrorCode::INVALID_PARAMS;
    }
    error
}

/// The log level a session asked for with `logging/setLevel`, as a rank
/// (`debug` 1 ... `emergency` 8); 0 until it asks: a session that never
/// set a level gets no `notifications/message` (revision 2026-07-28 says
/// the same of requests without a `logLevel`).
#[derive(Debug, Default)]
struct SessionLogLevel(std::sync::atomic::AtomicU8);

#[allow(deprecated)] // rmcp marks logging deprecated (SEP-2577); 2025-11-25 has it.
fn level_rank(level: rmcp::model::LoggingLevel) -> u8 {
    use rmcp::model::LoggingLevel as L;
    match level {
        L::Debug => 1,
        L::Info => 2,
        L::Notice => 3,
        L::Warning => 4,
        L::Error => 5,
        L::Critical => 6,
        L::Alert => 7,
        L::Emergency => 8,
    }
}

/// The MCP face of an [`Engine`]; cheap to clone (one per session).
#[derive(Debug, Clone)]
pub struct SkillServer {
    engine: Arc<Engine>,
    session: Arc<str>,
    /// This session's `logging/setLevel`.
    log_level: Arc<SessionLogLevel>,
    /// Forgets this session's conversations when the last clone goes
    /// (declared first: dropped before `ended` is cancelled, so whoever
    /// waits for the session's end finds them forgotten).
    end: Arc<SessionEnd>,
    /// Cancelled when the last clone of this session's server is dropped
    /// (rmcp drops it when the session ends: `DELETE`, idle expiry, the
    /// peer gone): the session's notification forwarder stops at once,
    /// releasing the session's channel and task with it.
    ended: CancellationToken,
    _ended_on_drop: Arc<DropGuard>,
}

/// What a session activated, forgotten when its server is dropped (rmcp
/// drops it when the session ends: `DELETE`, idle expiry, the peer gone),
/// so an expired session's activations do not outlive it. Conversations
/// named by the client (`_meta`) span sessions on purpose and stay.
#[derive(Debug)]
struct SessionEnd {
    engine: Arc<Engine>,
    conversations: Mutex<Vec<String>>,
}

impl SessionEnd {
    /// Notes that this session's requests track `conversation`.
    fn note(&self, conversation: &str) {
        let mut known = self
            .conversations
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if !known.iter().any(|c| c == conversation) {
            known.push(conversation.to_owned());
        }
    }
}

impl Drop for SessionEnd {
    fn drop(&mut self) {
        let known = std::mem::take(
            self.conversations
                .get_mut()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        for conversation in known {
            self.engine.host().end_conversation(&conversation);
        }
    }
}

impl SkillServer {
    /// A server for a new session over `engine`.
    pub fn new(engine: Arc<Engine>) -> Self {
        let session: Arc<str> = Arc::from(engine.host().new_session_key());
        let ended = CancellationToken::new();
        let end = Arc::new(SessionEnd {
            engine: Arc::clone(&engine),
            conversations: Mutex::new(vec![session.to_string()]),
        });
        SkillServer {
            engine,
            session,
            log_level: Arc::default(),
            _ended_on_drop: Arc::new(ended.clone().drop_guard()),
            ended,
            end,
        }
    }

    /// The shared engine.
    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// The conversation key for activation tracking (see
    /// [`CONVERSATION_META_KEY`]); else the HTTP session id; else this
    /// session.
    fn conversation(
        &self,
        meta: Option<&RequestMetaObject>,
        ctx: &RequestContext<RoleServer>,
    ) -> String {
        let from_meta = |m: &RequestMetaObject| {
            m.get(CONVERSATION_META_KEY)
                .and_then(|v| v.as_str())
                .map(|s| format!("meta:{s}"))
        };
        if let Some(c) = meta.and_then(from_meta).or_else(|| from_meta(&ctx.meta)) {
            return c;
        }
        if let Some(parts) = ctx.extensions.get::<http::request::Parts>()
            && let Some(id) = parts
                .headers
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok())
        {
            let conversation = http_conversation(id);
            self.end.note(&conversation);
            return conversation;
        }
        self.session.to_string()
    }

    /// Runs `work` on the current snapshot, on a blocking thread (it reads
    /// files), inside the request's span, and logs how it ended.
    async fn handle<T, F>(
        &self,
        method: &'static str,
        ctx: &RequestContext<RoleServer>,
        work: F,
    ) -> Result<T, ErrorData>
    where
        T: Send + 'static,
        F: FnOnce(Arc<Engine>, Arc<Snapshot>) -> Result<T, ErrorData> + Send + 'static,
    {
        let span = request_span(method, ctx, &self.session);
        let engine = Arc::clone(&self.engine);
        let result = async move {
            let snapshot = engine.snapshot();
            let host_engine = Arc::clone(&engine);
            let result = blocking(move || work(engine, snapshot))
                .await
                .map_err(|e| hide_paths(&host_engine, e));
            log_result(&result);
            result
        }
        .instrument(span)
        .await;
        self.log_outcome(&ctx.peer, method, &result).await;
        result
    }

    /// Sends `message` to the client as `notifications/message` when its
    /// session asked for `level` or lower ([`SessionLogLevel`]).
    #[allow(deprecated)] // see `level_rank`
    async fn log_to_client(
        &self,
        peer: &rmcp::Peer<RoleServer>,
        level: rmcp::model::LoggingLevel,
        data: serde_json::Value,
    ) {
        let wanted = self.log_level.0.load(std::sync::atomic::Ordering::Relaxed);
        if wanted == 0 || level_rank(level) < wanted {
            return;
        }
        let message =
            rmcp::model::LoggingMessageNotificationParam::new(level, data).with_logger("skilldeck");
        if let Err(e) = peer.notify_logging_message(message).await {
            tracing::debug!(error = %e, "log notification not sent");
        }
    }

    /// Tells the client how `method` ended (`debug` when answered, `warning`
    /// with the error when not), per its log level.
    #[allow(deprecated)] // see `level_rank`
    async fn log_outcome<T>(
        &self,
        peer: &rmcp::Peer<RoleServer>,
        method: &str,
        result: &Result<T, ErrorData>,
    ) {
        use rmcp::model::LoggingLevel;
        match result {
            Ok(_) => {
                self.log_to_client(
                    peer,
                    LoggingLevel::Debug,
                    serde_json::json!({"method": method, "outcome": "answered"}),
                )
                .await;
            }
            Err(e) => {
                self.log_to_client(
                    peer,
                    LoggingLevel::Warning,
                    serde_json::json!({
                        "method": method,
                        "outcome": "error",
                        "code": e.code.0,
                        "message": e.message,
                    }),
                )
                .await;
            }
        }
    }

    fn ttl_ms(&self) -> u64 {
        u64::try_from(self.engine.options().list_ttl.as_millis()).unwrap_or(u64::MAX)
    }
}

/// The activation tracker's conversation key of HTTP session `id` (when
/// the client names no conversation of its own).
pub(crate) fn http_conversation(id: &str) -> String {
    format!("http:{id}")
}

/// `error` with the host's folders hidden from its message
/// ([`skilldeck_host::Host::hide_paths`]).
fn hide_paths(engine: &Engine, mut error: ErrorData) -> ErrorData {
    if let std::borrow::Cow::Owned(hidden) = engine.host().hide_paths(&error.message) {
        error.message = hidden.into();
    }
    error
}

/// The client's trace context: `_meta.traceparent` (the request's own
/// `_meta`, then the context's), else the HTTP `traceparent` header.
fn trace_context(
    meta: Option<&RequestMetaObject>,
    ctx: &RequestContext<RoleServer>,
) -> Option<telemetry::TraceContext> {
    let headers = ctx
        .extensions
        .get::<http::request::Parts>()
        .map(|parts| &parts.headers);
    telemetry::trace_context(&[meta.map(|m| &m.0.0), Some(&ctx.meta.0.0)], headers)
}

/// The span of one request. When spans are exported it is named after the
/// method (`tools/list`; `tools/call <tool>` in [`tool_call_span`]), is a
/// server span, and the client's trace context is its parent.
fn request_span(
    method: &'static str,
    ctx: &RequestContext<RoleServer>,
    session: &str,
) -> tracing::Span {
    let trace = trace_context(None, ctx);
    let exporting = telemetry::exporting();
    let span = tracing::info_span!(
        "request",
        request_id = %ctx.id,
        trace_id = tracing::field::Empty,
        method,
        session,
        otel.name = exporting.then_some(method),
        otel.kind = exporting.then_some("server"),
        mcp.method.name = exporting.then_some(method),
        skilldeck.skills.available = tracing::field::Empty,
    );
    telemetry::bind_trace_id(&span, trace.as_ref());
    span
}

/// The span of a `tools/call`, with the OpenTelemetry GenAI attributes
/// when exported: `tools/call <tool>`, `gen_ai.operation.name =
/// execute_tool`, `gen_ai.tool.name`, `gen_ai.tool.call.id` (the JSON-RPC
/// id) and Langfuse's `langfuse.observation.type = tool`.
fn tool_call_span(
    tool: &str,
    meta: Option<&RequestMetaObject>,
    ctx: &RequestContext<RoleServer>,
    session: &str,
) -> tracing::Span {
    let trace = trace_context(meta, ctx);
    let exporting = telemetry::exporting();
    let name = exporting.then(|| format!("tools/call {tool}"));
    let span = tracing::info_span!(
        "request",
        request_id = %ctx.id,
        trace_id = tracing::field::Empty,
        method = "tools/call",
        session,
        otel.name = name,
        otel.kind = exporting.then_some("server"),
        mcp.method.name = exporting.then_some("tools/call"),
        gen_ai.operation.name = exporting.then_some("execute_tool"),
        gen_ai.tool.name = exporting.then_some(tool),
        gen_ai.tool.call.id = exporting.then(|| ctx.id.to_string()),
        langfuse.observation.type = exporting.then_some("tool"),
        skilldeck.skills.available = tracing::field::Empty,
        error.type = tracing::field::Empty,
    );
    telemetry::bind_trace_id(&span, trace.as_ref());
    span
}

/// Runs blocking file work off the async workers.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ErrorData> + Send + 'static,
) -> Result<T, ErrorData> {
    let span = tracing::Span::current();
    tokio::task::spawn_blocking(move || span.in_scope(f))
        .await
        .map_err(|e| ErrorData::internal_error(format!("request task failed: {e}"), None))?
}

fn log_result<T>(result: &Result<T, ErrorData>) {
    match result {
        Ok(_) => tracing::debug!("ok"),
        Err(e) if e.code == ErrorCode::INTERNAL_ERROR => {
            tracing::error!(code = e.code.0, error = %e.message, "failed")
        }
        Err(e) => tracing::info!(code = e.code.0, error = %e.message, "refused"),
    }
}

fn entry_error(e: EntryError) -> ErrorData {
    match e {
        EntryError::NotServable { .. } => ErrorData::invalid_params(e.to_string(), None),
        EntryError::Read { .. } => ErrorData::internal_error(e.to_string(), None),
    }
}

impl ServerHandler for SkillServer {
    #[allow(deprecated)] // `enable_logging`: see `level_rank`
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_resources()
            .enable_resources_list_changed()
            .enable_skills_with_directory_read()
            .enable_logging()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(
                Implementation::new("skilldeck", env!("CARGO_PKG_VERSION"))
                    .with_title("skilldeck")
                    .with_description("Agent Skills: activate, read and search SKILL.md skills"),
            )
            .with_instructions(
                "This server serves Agent Skills. Before a task, check the `activate_skill` \
                 tool's catalog; when a skill matches, activate it and follow its instructions. \
                 Skill files are also resources under skill://<name>/<path>.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let span = request_span("tools/list", &ctx, &self.session);
        let _enter = span.enter();
        let snapshot = self.engine.snapshot();
        if telemetry::exporting() {
            span.record(
                "skilldeck.skills.available",
                snapshot.model_names.len() as i64,
            );
        }
        let mut tools = tools::definitions(&snapshot);
        let conversation = self.conversation(None, &ctx);
        let host = self.engine.host();
        tools.extend(
            host.execution_tool_specs(&snapshot, &conversation)
                .into_iter()
                .map(tools::exec_tool),
        );
        tracing::debug!(tools = tools.len(), "listed");
        Ok(ListToolsResult::with_all_items(tools).with_ttl_ms(self.ttl_ms()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let span = tool_call_span(&request.name, request.meta.as_ref(), &ctx, &self.session);
        let conversation = self.conversation(request.meta.as_ref(), &ctx);
        let engine = Arc::clone(&self.engine);
        let peer = ctx.peer.clone();
        let call_id = ctx.id.to_string();
        let server = self.clone();
        async move {
            let snapshot = engine.snapshot();
            let args = request.arguments.unwrap_or_default();
            let name = request.name.to_string();
            let span = tracing::Span::current();
            if telemetry::exporting() {
                span.record(
                    "skilldeck.skills.available",
                    snapshot.model_names.len() as i64,
                );
            }
            telemetry::record_content(&span, "gen_ai.tool.call.arguments", || {
                serde_json::Value::Object(args.clone()).to_string()
            });
            let activated = args.get("name").and_then(|v| v.as_str()).map(str::to_owned);
            let activated_name = activated.clone();
            tracing::debug!(tool = %name, "call");
            // Every tool through the host's one entry (`Host::call`); the
            // face only decides where it runs: skill code, file reads and
            // activations that may run dynamic context on a blocking thread.
            let host = engine.host();
            let runs_code = host.is_execution_tool(&name);
            let context = call_context(&engine, &conversation, &name, call_id);
            // An activation may also fetch an upstream's skill (the
            // gateway: `Host::ensure_local`).
            let called = if runs_code
                || name == tools::READ
                || ((host.execution().is_some() || host.remote().is_some())
                    && name == tools::ACTIVATE)
            {
                let engine = Arc::clone(&engine);
                let (tool, conversation) = (name.clone(), conversation.clone());
                let snapshot = Arc::clone(&snapshot);
                let approver = crate::approval::ElicitationApprover::new(peer.clone());
                blocking(move || {
                    Ok(engine.host().call_with(
                        &snapshot,
                        &conversation,
                        &tool,
                        &args,
                        context,
                        &approver,
                    ))
                })
                .await
            } else {
                Ok(host.call(&snapshot, &conversation, &name, &args, context))
            };
            let result: Result<CallToolResult, ErrorData> = match called {
                Err(e) => Err(e),
                Ok(Err(e)) if tools::is_protocol_error(&e) => {
                    Err(ErrorData::invalid_params(e.message, None))
                }
                Ok(Ok(skilldeck_host::Called::Run(run))) => Ok(tools::exec_result(Ok(*run))),
                Ok(Ok(skilldeck_host::Called::Tool(output))) => Ok(tools::result(Ok(output))),
                Ok(Ok(skilldeck_host::Called::Handled(handled))) => {
                    Ok(tools::handled_result(handled))
                }
                Ok(Err(e)) => {
                    if runs_code {
                        tracing::info!(kind = ?e.kind, "skill code refused or failed");
                    } else if e.kind == skilldeck_host::ToolErrorKind::Failed
                        && name == tools::ACTIVATE
                    {
                        tracing::warn!(error = %e, "activation failed");
                    }
                    Ok(tools::result(Err(e)))
                }
            };
            if runs_code {
                log_result(&result);
                return result.map(CallToolResponse::from);
            }
            if let Ok(r) = &result
                && r.is_error == Some(true)
            {
                tracing::info!(tool = %name, "tool error");
                span.record("error.type", "tool_error");
            }
            if name == tools::ACTIVATE
                && let Ok(r) = &result
                && r.is_error != Some(true)
                && let Some(skill) = activated
                && engine.host().activation_offers_tools(&snapshot, &skill)
            {
                // The skill's tools are offered to this session from now on.
                if let Err(e) = peer.notify_tool_list_changed().await {
                    tracing::debug!(error = %e, "tools/list_changed not sent");
                } else {
                    tracing::info!(skill = %skill, "tools/list_changed sent: skill tools offered");
                }
            }
            log_result(&result);
            server.log_outcome(&peer, "tools/call", &result).await;
            if name == tools::ACTIVATE
                && let Ok(r) = &result
                && r.is_error != Some(true)
                && let Some(skill) = &activated_name
            {
                #[allow(deprecated)] // see `level_rank`
                let info = rmcp::model::LoggingLevel::Info;
                server
                    .log_to_client(
                        &peer,
                        info,
                        serde_json::json!({"event": "skill activated", "skill": skill}),
                    )
                    .await;
            }
            if let Ok(r) = &result {
                telemetry::record_content(&span, "gen_ai.tool.call.result", || {
                    serde_json::to_string(&r.content).unwrap_or_default()
                });
            }
            result.map(CallToolResponse::from)
        }
        .instrument(span)
        .await
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let ttl = self.ttl_ms();
        self.handle("prompts/list", &ctx, move |_, snapshot| {
            let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
            prompts::list(&snapshot, cursor).map(|r| r.with_ttl_ms(ttl))
        })
        .await
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        self.handle("prompts/get", &ctx, move |engine, snapshot| {
            tracing::debug!(prompt = %request.name, "get");
            prompts::get(
                &engine,
                &snapshot,
                &request.name,
                request.arguments.as_ref(),
            )
            .map(GetPromptResponse::from)
        })
        .await
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let ttl = self.ttl_ms();
        self.handle("resources/list", &ctx, move |engine, snapshot| {
            let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
            resources::list(engine.host(), &snapshot, cursor, engine.options().page_size)
                .map(|r| r.with_ttl_ms(ttl))
        })
        .await
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let span = request_span("resources/templates/list", &ctx, &self.session);
        let _enter = span.enter();
        Ok(resources::templates().with_ttl_ms(self.ttl_ms()))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let ttl = self.ttl_ms();
        let stateless = ctx
            .protocol_version()
            .is_some_and(|v| v.as_str() >= STATELESS_REVISION);
        self.handle("resources/read", &ctx, move |engine, snapshot| {
            tracing::debug!(uri = %request.uri, "read");
            resources::read(engine.host(), &snapshot, &request.uri)
                .map(|contents| {
                    ReadResourceResult::new(vec![contents])
                        .with_ttl_ms(ttl)
                        .into()
                })
                .map_err(|e| read_error(e, &request.uri, stateless))
        })
        .await
    }

    async fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceDirectoryResult, ErrorData> {
        self.handle("resources/directory/read", &ctx, move |engine, snapshot| {
            tracing::debug!(uri = %request.uri, "read directory");
            let page = engine.options().page_size;
            resources::read_directory(
                engine.host(),
                &snapshot,
                &request.uri,
                request.cursor.as_deref(),
                page,
            )
        })
        .await
    }

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        let ttl = self.ttl_ms();
        self.handle("skills/list", &ctx, move |engine, snapshot| {
            let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
            list_skills_page(&engine, &snapshot, cursor).map(|r| r.with_ttl_ms(ttl))
        })
        .await
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        let ttl = self.ttl_ms();
        self.handle("skills/get", &ctx, move |engine, snapshot| {
            tracing::debug!(uri = %request.uri, "get");
            let mut result =
                GetSkillResult::new(get_skill_entry(&engine, &snapshot, &request.uri)?);
            result.ttl_ms = Some(ttl);
            Ok(result)
        })
        .await
    }

    #[allow(deprecated)] // see `level_rank`
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let span = request_span("logging/setLevel", &ctx, &self.session);
        let _enter = span.enter();
        if ctx
            .protocol_version()
            .is_some_and(|v| v.as_str() >= STATELESS_REVISION)
        {
            // Revision 2026-07-28 removed it (a request carries its own
            // `logLevel`): an unknown method, HTTP 404.
            return Err(removed_method("logging/setLevel"));
        }
        self.log_level.0.store(
            level_rank(request.level),
            std::sync::atomic::Ordering::Relaxed,
        );
        tracing::debug!(level = ?request.level, "client log level set");
        Ok(())
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let span = request_span("custom", &ctx, &self.session);
        let _enter = span.enter();
        // rmcp hands a standard method whose params did not decode to this
        // fallback: that is a bad request, not an unknown method.
        let stateless = ctx
            .protocol_version()
            .is_some_and(|v| v.as_str() >= STATELESS_REVISION);
        let error = if stateless && REMOVED_IN_2026_07_28.contains(&request.method.as_str()) {
            removed_method(&request.method)
        } else if STANDARD_METHODS.contains(&request.method.as_str()) {
            ErrorData::invalid_params(
                format!(
                    "invalid params for {}: they do not match the method's schema",
                    request.method
                ),
                None,
            )
        } else {
            ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("method not found: {}", request.method),
                None,
            )
        };
        log_result::<()>(&Err(error.clone()));
        Err(error)
    }

    async fn on_initialized(&self, ctx: NotificationContext<RoleServer>) {
        // Sessions opened with `initialize` (2025-11-25 and older) get
        // list_changed notifications pushed; 2026-07-28 clients ask for
        // them with subscriptions/listen (below).
        let mut changes = self.engine.subscribe();
        let peer = ctx.peer;
        let session = Arc::clone(&self.session);
        let client = peer
            .peer_info()
            .map(|p| format!("{} {}", p.client_info.name, p.client_info.version))
            .unwrap_or_default();
        tracing::info!(%session, %client, "client initialized");
        self.follow_client_roots(&peer);
        let ended = self.ended.clone();
        tokio::spawn(async move {
            loop {
                let change = tokio::select! {
                    change = changes.recv() => change,
                    () = ended.cancelled() => break,
                };
                let change = match change {
                    Ok(c) => c,
                    // Missed some: tell everything.
                    Err(RecvError::Lagged(_)) => Change::Catalog,
                    Err(RecvError::Closed) => break,
                };
                let sent = match change {
                    Change::Catalog => {
                        let a = peer.notify_tool_list_changed().await;
                        let b = peer.notify_prompt_list_changed().await;
                        let c = peer.notify_resource_list_changed().await;
                        a.and(b).and(c)
                    }
                    Change::Resources => peer.notify_resource_list_changed().await,
                };
                if sent.is_err() {
                    tracing::debug!(%session, "session closed; notifications stop");
                    break;
                }
                tracing::info!(%session, ?change, "list_changed sent");
            }
        });
    }

    async fn on_roots_list_changed(&self, ctx: NotificationContext<RoleServer>) {
        self.follow_client_roots(&ctx.peer);
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let offered = SubscriptionFilter::builder()
            .tools_list_changed()
            .prompts_list_changed()
            .resources_list_changed()
            .build();
        Some(requested.intersection(&offered))
    }

    async fn listen(&self, subscription: SubscriptionContext) -> Result<(), ErrorData> {
        let mut changes = self.engine.subscribe();
        let accepted = subscription.accepted().clone();
        let sink = subscription.sink();
        loop {
            let change = tokio::select! {
                () = subscription.cancelled() => return Ok(()),
                change = changes.recv() => change,
            };
            let change = match change {
                Ok(c) => c,
                Err(RecvError::Lagged(_)) => Change::Catalog,
                Err(RecvError::Closed) => return Ok(()),
            };
            let catalog = change == Change::Catalog;
            let mut result = Ok(());
            if catalog && accepted.tools_list_changed == Some(true) {
                result = result.and(sink.notify_tool_list_changed().await);
            }
            if catalog && accepted.prompts_list_changed == Some(true) {
                result = result.and(sink.notify_prompt_list_changed().await);
            }
            if accepted.resources_list_changed == Some(true) {
                result = result.and(sink.notify_resource_list_changed().await);
            }
            if let Err(e) = result {
                tracing::debug!(error = %e, "subscription closed");
                return Ok(());
            }
        }
    }
}

/// The call context skill code runs under for this call: the server's
/// agent and user ids, the conversation as the session, the request id.
fn call_context(
    engine: &Engine,
    conversation: &str,
    tool: &str,
    call_id: String,
) -> skilldeck_exec::CallContext {
    let options = engine.options();
    skilldeck_exec::CallContext {
        agent_id: options.exec_agent_id.clone(),
        user_id: options.exec_user_id.clone(),
        session_id: conversation.to_owned(),
        call_id,
        tool: tool.to_owned(),
    }
}

impl SkillServer {
    /// When the host searches a client's folders for project roots
    /// ([`skilldeck_host::HostOptions::client_project_roots`]: a local
    /// client, which may have started `serve` from `/`) and the client
    /// offers `roots`, asks for them (on a task of its own) and, when their
    /// project roots changed, discovers again: the client hears
    /// `list_changed` like after any reload. (`roots` is deprecated by
    /// SEP-2577 in revision 2026-07-28; the desktop clients this is for
    /// speak 2025-11-25, where it is how they say which folders are open.)
    #[allow(deprecated)]
    fn follow_client_roots(&self, peer: &rmcp::Peer<RoleServer>) {
        if !self.engine.host().options().client_project_roots {
            return;
        }
        let offers_roots = peer
            .peer_info()
            .is_some_and(|p| p.capabilities.roots.is_some());
        if !offers_roots {
            return;
        }
        let (engine, peer) = (Arc::clone(&self.engine), peer.clone());
        tokio::spawn(async move {
            let roots = match peer.list_roots().await {
                Ok(result) => result.roots,
                Err(e) => {
                    tracing::info!(error = %e, "roots/list failed; the client's folders are not searched");
                    return;
                }
            };
            let folders: Vec<std::path::PathBuf> =
                roots.iter().filter_map(|r| local_folder(&r.uri)).collect();
            tracing::info!(folders = ?folders, "client roots");
            let changed = blocking(move || {
                Ok(engine.host().set_client_folders(&folders)
                    && skilldeck_source::Target::reload(&*engine).unwrap_or_else(|e| {
                        tracing::error!(error = %e, "reload failed");
                        false
                    }))
            })
            .await;
            tracing::debug!(?changed, "client roots applied");
        });
    }
}

/// The local folder a `file://` root URI names (percent-decoded), if it is
/// one: `file:///home/me/project` or `file://localhost/...`.
fn local_folder(uri: &str) -> Option<std::path::PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    let path = rest.strip_prefix("localhost").unwrap_or(rest);
    if !path.starts_with('/') {
        return None;
    }
    let decoded = skilldeck::text::percent::decode_strict(path)?;
    Some(std::path::PathBuf::from(decoded.as_ref()))
}

/// One page of `skills/list`: skills without an entry (see
/// [`crate::extension`]) are left out and logged.
fn list_skills_page(
    engine: &Engine,
    snapshot: &Snapshot,
    cursor_in: Option<&str>,
) -> Result<ListSkillsResult, ErrorData> {
    let skills: Vec<&skilldeck::Skill> = snapshot.served().collect();
    let (range, next) = cursor::page(
        cursor_in,
        snapshot.generation,
        skills.len(),
        engine.options().page_size,
    )?;
    let mut entries = Vec::with_capacity(range.len());
    let remote = engine.host().remote();
    for skill in &skills[range] {
        if let Some(upstream) = remote.as_ref().and_then(|r| r.of(skill)) {
            entries.push(extension::remote_entry(upstream));
            continue;
        }
        match extension::entry(engine, skill) {
            Ok(e) => entries.push(e),
            Err(e) => tracing::info!(error = %e, "left out of skills/list"),
        }
    }
    let mut result = ListSkillsResult::with_all_items(entries);
    result.next_cursor = next;
    Ok(result)
}

/// The extension entry for the skill whose `SKILL.md` is at `uri`.
fn get_skill_entry(
    engine: &Engine,
    snapshot: &Snapshot,
    uri_text: &str,
) -> Result<rmcp::model::Skill, ErrorData> {
    let unknown = |why: Option<String>| {
        let mut message = format!("No skill is served at {uri_text}");
        if let Some(why) = why {
            message.push_str(": ");
            message.push_str(&why);
        }
        ErrorData::invalid_params(message, None)
    };
    let parsed = uri::parse(uri_text).map_err(|_| unknown(None))?;
    // An upstream's skill, under its namespaced name.
    if let Some(remote) = engine.host().remote()
        && let Some(upstream) = snapshot
            .served()
            .filter_map(|s| remote.of(s))
            .find(|r| uri::skill_md_uri(&r.name) == uri_text)
    {
        return Ok(extension::remote_entry(upstream));
    }
    // Only the URI the entry is published under (`skill://<skill-path>/
    // SKILL.md`) names a skill here.
    let skill = uri::splits(&parsed)
        .into_iter()
        .find_map(|(name, skill_path, path)| {
            let skill = snapshot.get(&name)?;
            (path == "SKILL.md"
                && uri::skill_path(skill) == skill_path
                && uri::skill_md_uri(&skill_path) == uri_text)
                .then_some(skill)
        });
    let Some(skill) = skill else {
        if parsed.path != "SKILL.md" || uri::skill_md_uri(&parsed.name) != uri_text {
            return Err(unknown(None));
        }
        let why = snapshot.require(&parsed.name).err().map(|e| e.to_string());
        return Err(unknown(why));
    };
    extension::entry(engine, skill).map_err(entry_error)
}
