//! Running the server: over stdio (one client, the default) or streamable
//! HTTP (many clients; `Host` and `Origin` validated against DNS rebinding;
//! an optional bearer token). Both stop cleanly on Ctrl-C or SIGTERM.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::ServiceExt as _;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use crate::engine::Engine;
use crate::error::Error;
use crate::options::{HttpOptions, ServeOptions};
use crate::server::SkillServer;
use crate::sessions::SessionSlots;
use crate::stdio;
use skilldeck_source::{Poller, RegistrySource, Target, Watcher};

/// The HTTP path the MCP endpoint is served at.
pub const HTTP_PATH: &str = "/mcp";

/// After the client closed stdin: how long the last answers may take to
/// reach stdout.
const DRAIN_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// After a signal: how long to let output finish, and blocked stdin reads
/// be, before the process leaves them.
const SIGNAL_GRACE: std::time::Duration = std::time::Duration::from_millis(100);

/// After a failed `accept` (e.g. no file descriptor left): the pause
/// before the next.
const ACCEPT_BACKOFF: std::time::Duration = std::time::Duration::from_millis(50);

/// Host names always accepted in the `Host` header.
pub const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// HTTP serves many clients on every core; stdio serves one client, whose
/// requests gain nothing from crossing threads (file work still goes to
/// the blocking pool).
fn runtime(multi_thread: bool) -> Result<tokio::runtime::Runtime, Error> {
    let mut builder = if multi_thread {
        tokio::runtime::Builder::new_multi_thread()
    } else {
        tokio::runtime::Builder::new_current_thread()
    };
    builder.enable_all().build().map_err(Error::Runtime)
}

/// The watcher, being set up in the background (kept alive while held).
type WatchTask = Option<tokio::task::JoinHandle<Result<Watcher, skilldeck_source::Error>>>;

/// What keeps the skills current while held: the file watcher (being set
/// up in the background) or the registry's poller.
struct Sources {
    _watcher: WatchTask,
    _poller: Option<Poller>,
}

/// Discovers the deck (on a blocking thread), logs what was loaded, and
/// starts the watcher when reload is on. Registering the watches walks
/// every folder again, so it runs in the background: the first answer does
/// not wait for it. Once watching, the deck is checked once more, so an
/// edit made in between is not missed.
async fn start(options: ServeOptions) -> Result<(Arc<Engine>, Sources), Error> {
    // Every line of start-up carries the trace id of the exported
    // `startup` trace, whose `discover` span names the skills.
    let span = crate::telemetry::operation_span("startup");
    start_in(options, span.clone()).instrument(span).await
}

async fn start_in(
    mut options: ServeOptions,
    span: tracing::Span,
) -> Result<(Arc<Engine>, Sources), Error> {
    let started = Instant::now();
    // A registry agent: its skills materialised first, the options pointed
    // at them (the registry's poll replaces the file watcher).
    let registry = match options.registry.take() {
        None => None,
        Some(settings) => {
            let in_span = span.clone();
            let (prepared, source) = tokio::task::spawn_blocking(move || {
                let _entered = in_span.enter();
                RegistrySource::prepare(&settings, &mut options.host).map(|s| {
                    // The registry's poll replaces the file watcher; skill
                    // code runs under the agent's id.
                    options.reload = None;
                    options.client_project_roots = false;
                    options.exec_agent_id = s.agent().as_str().to_owned();
                    (options, s)
                })
            })
            .await
            .map_err(|e| Error::Transport(format!("registry task failed: {e}")))??;
            options = prepared;
            Some(Arc::new(source))
        }
    };
    let upstreams = std::mem::take(&mut options.upstreams);
    let upstream_cache = options.upstream_cache.take().unwrap_or_else(|| {
        skilldeck::fs::dirs::cache_dir().join(crate::options::UPSTREAM_CACHE_SUBDIR)
    });
    let in_span = span.clone();
    let engine = tokio::task::spawn_blocking(move || in_span.in_scope(|| Engine::new(options)))
        .await
        .map_err(|e| Error::Transport(format!("discovery task failed: {e}")))??;
    let engine = Arc::new(engine);
    // The gateway: upstreams' catalogs merged in (their files are fetched
    // when used).
    if !upstreams.is_empty() {
        crate::gateway::attach(&engine, &upstreams, upstream_cache).await?;
    }
    let poller: Option<Poller> = match registry {
        Some(source) => Some(source.spawn_poller(Arc::downgrade(&engine))?),
        None => None,
    };
    let snapshot = engine.snapshot();
    // Skipped skills and a walk cut short at its limit (the core's one
    // list of what a loader must say).
    let mut errors = 0;
    for d in snapshot.deck.load_problems() {
        if d.is_error() {
            errors += 1;
            tracing::warn!(diagnostic = %d, "skill not loaded");
        } else {
            tracing::warn!(diagnostic = %d, "discovery incomplete");
        }
    }
    // Declared tools left out (a problem in their entry) or not offered
    // (host-implemented: `serve` registers no handler), each with its
    // file and line.
    let tool_problems = engine.host().unoffered_tools(&snapshot);
    for d in tool_problems {
        tracing::warn!(diagnostic = %d, "skill tool not offered");
    }
    tracing::info!(
        skills = snapshot.deck.len(),
        names = %skilldeck::deck::skill_names_capped(&snapshot.deck),
        skipped = errors,
        shadowed = snapshot.deck.shadowed().len(),
        elapsed_ms = started.elapsed().as_millis() as u64,
        "skills loaded"
    );
    let watcher = engine.options().reload.map(|debounce| {
        let engine = Arc::clone(&engine);
        tokio::task::spawn_blocking(move || {
            let span = crate::telemetry::operation_span("watch");
            let _entered = span.enter();
            let watcher = skilldeck_source::watch(Arc::clone(&engine), debounce);
            match &watcher {
                Ok(_) => {
                    if let Err(e) = engine.reload() {
                        tracing::error!(error = %e, "reload failed");
                    }
                }
                Err(e) => tracing::warn!(error = %e, "hot reload is off"),
            }
            watcher
        })
    });
    Ok((
        engine,
        Sources {
            _watcher: watcher,
            _poller: poller,
        },
    ))
}

/// The line a person sees when `serve` waits on stdio: how many skills,
/// from which roots (the deck just loaded: no second discovery).
fn waiting_line(deck: &skilldeck::Deck) -> String {
    let roots: Vec<String> = deck
        .roots()
        .iter()
        .filter(|r| r.used && r.found > 0)
        .map(|r| r.path.display().to_string())
        .collect();
    let from = if roots.is_empty() {
        "no root".to_owned()
    } else {
        roots.join(", ")
    };
    format!(
        "serving {} skill{} from {from} over stdio; waiting for an MCP client (Ctrl-C to stop)",
        deck.len(),
        if deck.len() == 1 { "" } else { "s" }
    )
}

/// Serves one client on stdin/stdout until it disconnects or a signal
/// arrives. Lines longer than `options.max_request_bytes` are dropped
/// (logged), and the server keeps reading.
pub fn serve_stdio(options: ServeOptions) -> Result<(), Error> {
    let runtime = runtime(false)?;
    let result = runtime.block_on(async move {
        let max = options.max_request_bytes;
        let (engine, _watcher) = start(options).await?;
        let stop = crate::shutdown::on_signal();
        if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
            // A person at a terminal: without this line, `serve` looks
            // like a hang (it waits for a client on stdin).
            eprintln!("{}", waiting_line(&engine.snapshot().deck));
        }
        let mut guard = stdio::spawn(tokio::io::stdin(), tokio::io::stdout(), max);
        let transport = AsyncRwTransport::new_server(guard.requests, guard.responses);
        let service = SkillServer::new(engine)
            .serve(transport)
            .await
            .map_err(|e| Error::Transport(e.to_string()))?;
        let cancel = service.cancellation_token();
        let grace = tokio::select! {
            quit = service.waiting() => {
                tracing::info!(reason = ?quit, "client disconnected");
                DRAIN_GRACE
            }
            () = stop => {
                cancel.cancel();
                SIGNAL_GRACE
            }
            // The writer stops only when stdout fails (EPIPE: the client
            // closed its end) or after the service ended: no answer can
            // reach the client any more, so the server leaves.
            _ = &mut guard.written => {
                tracing::warn!("stdout is closed; stopping");
                cancel.cancel();
                return Ok(());
            }
        };
        // Every answer out before the process ends.
        if tokio::time::timeout(grace, guard.written).await.is_err() {
            tracing::debug!("stdout not drained before shutdown");
        }
        Ok(())
    });
    // A stdin read may still be blocked on a thread; do not wait for it.
    runtime.shutdown_timeout(SIGNAL_GRACE);
    result
}

/// Reads the bearer token from `path`: the first line, trimmed; empty is
/// an error.
fn read_token(path: &Path) -> Result<String, Error> {
    let token = skilldeck::secret::read_secret_file(path).map_err(|e| Error::TokenFile {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    if let Ok(Some(mode)) = skilldeck::secret::open_to_others(path) {
        tracing::warn!(path = %path.display(), mode = format!("{mode:o}"), "token file is readable by other users (chmod 600 it)");
    }
    Ok(token)
}

async fn require_bearer(State(token): State<Arc<str>>, request: Request, next: Next) -> Response {
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    match presented {
        Some(t) if skilldeck::secret::secrets_equal(t, &token) => next.run(request).await,
        _ => {
            tracing::info!(path = %request.uri().path(), "refused: missing or wrong bearer token");
            let mut response = (
                StatusCode::UNAUTHORIZED,
                "a valid bearer token is required\n",
            )
                .into_response();
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            response
        }
    }
}

/// What `GET /` answers: where the endpoint is.
pub const ROOT_TEXT: &str = "skilldeck MCP server: POST JSON-RPC to /mcp\n";

/// What an unknown path answers.
pub const NOT_FOUND_TEXT: &str = "not found: the MCP endpoint is /mcp\n";

/// JSON-RPC's code for a message that is not a valid request (here: a body
/// over the size limit).
pub const INVALID_REQUEST: i32 = -32600;

/// JSON-RPC's code for a body that is not JSON.
pub const PARSE_ERROR: i32 = -32700;

/// True when the request says its body is JSON (`application/json`, any
/// parameters).
fn is_json(request: &Request) -> bool {
    request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.split(';').next().unwrap_or("").trim())
        .is_some_and(|essence| essence.eq_ignore_ascii_case("application/json"))
}

/// A JSON-RPC error answer with `id: null` (the request's id is unknown).
fn jsonrpc_error(status: StatusCode, code: i32, message: &str) -> Response {
    jsonrpc_error_with_id(status, code, &serde_json::Value::Null, message)
}

/// A JSON-RPC error answer to the request with `id`.
fn jsonrpc_error_with_id(
    status: StatusCode,
    code: i32,
    id: &serde_json::Value,
    message: &str,
) -> Response {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message},
    });
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body.to_string(),
    )
        .into_response()
}

/// Requests of one HTTP session whose answer has not finished, by
/// `(Mcp-Session-Id, JSON id)`. JSON-RPC ids must be unique among a
/// session's outstanding requests; rmcp routes answers by id, so a second
/// request with the id of one still running would take the first one's
/// answer and leave itself (or the first) unanswered. A duplicate is
/// refused at once with a JSON-RPC error instead.
#[derive(Debug, Default)]
struct InFlight(std::sync::Mutex<std::collections::HashSet<(String, String)>>);

impl InFlight {
    fn ids(&self) -> std::sync::MutexGuard<'_, std::collections::HashSet<(String, String)>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Holds a request's `(session, id)` in [`InFlight`] until dropped (with
/// the answer's body, once it has been sent).
struct InFlightEntry {
    set: Arc<InFlight>,
    key: (String, String),
}

impl Drop for InFlightEntry {
    fn drop(&mut self) {
        self.set.ids().remove(&self.key);
    }
}

/// What the MCP path's guard needs: the size cap, the in-flight ids and
/// the session slots.
#[derive(Debug, Clone)]
struct BodyCheck {
    limit: usize,
    in_flight: Arc<InFlight>,
    slots: Arc<SessionSlots>,
}

/// True when `message` is an `initialize` request sent outside a session
/// (one that would open a new session).
fn opens_session(parts: &http::request::Parts, message: &serde_json::Value) -> bool {
    !parts.headers.contains_key(SESSION_ID_HEADER)
        && message.get("method").and_then(serde_json::Value::as_str) == Some("initialize")
}

/// The header naming a request's MCP session.
const SESSION_ID_HEADER: &str = "mcp-session-id";

/// The `Mcp-Session-Id` a request or answer carries.
fn session_id(headers: &http::HeaderMap) -> Option<String> {
    headers
        .get(SESSION_ID_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

/// The session and id of a request (not a notification or response) sent
/// in a session, when `message` is one.
fn session_request_key(
    parts: &http::request::Parts,
    message: &serde_json::Value,
) -> Option<(String, String)> {
    let session = session_id(&parts.headers)?;
    message.get("method")?;
    match message.get("id")? {
        serde_json::Value::Null => None,
        id => Some((session, id.to_string())),
    }
}

/// `response`, its body holding `held` until the body has been sent.
fn holding<T: Send + Sync + 'static>(response: Response, held: T) -> Response {
    use http_body_util::BodyExt as _;
    response.map(|body| {
        axum::body::Body::new(body.map_frame(move |frame| {
            let _held = &held;
            frame
        }))
    })
}

/// The rules in front of rmcp on the MCP path, each answered as JSON-RPC
/// says where the SDK would not:
///
/// - a POST whose JSON body does not parse (invalid UTF-8 included) gets
///   Parse error (`-32700`, `id: null`, HTTP 400) instead of the SDK's
///   `415`; valid JSON that is not one JSON-RPC message (a batch, `null`,
///   a number, a request without `method`...) gets Invalid Request
///   (`-32600`, HTTP 400, with the message's id when it has a valid one);
/// - a request whose id is that of a request of the same session still in
///   flight gets Invalid Request (`-32600`, HTTP 409) with that id;
/// - an `initialize` outside a session takes a slot of the session cap
///   first ([`SessionSlots::reserve`]): HTTP 503 and `-32600` when none is
///   free;
/// - `DELETE` ends the session and its per-session state and answers 204
///   (rmcp says 202, which the transport does not allow for `DELETE`).
///
/// Other requests (a wrong content type included: the SDK's `415` names the
/// expected type) pass through untouched.
async fn guard_mcp(State(check): State<BodyCheck>, request: Request, next: Next) -> Response {
    let limit = check.limit;
    if request.method() == axum::http::Method::DELETE {
        // rmcp closes the session through the session manager, which frees
        // its slot and forgets what it activated.
        let mut response = next.run(request).await;
        if response.status().is_success() {
            *response.status_mut() = StatusCode::NO_CONTENT;
            *response.body_mut() = axum::body::Body::empty();
            response.headers_mut().remove(header::CONTENT_TYPE);
            response.headers_mut().remove(header::CONTENT_LENGTH);
        }
        return response;
    }
    let busy = session_id(request.headers()).and_then(|id| check.slots.busy(&id));
    if request.method() != axum::http::Method::POST || !is_json(&request) {
        return holding(next.run(request).await, busy);
    }
    let (parts, body) = request.into_parts();
    let bytes = match axum::body::to_bytes(body, limit).await {
        Ok(bytes) => bytes,
        Err(_) => {
            return jsonrpc_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                INVALID_REQUEST,
                &format!("the request body is larger than {limit} bytes or was cut short"),
            );
        }
    };
    let message = match serde_json::from_slice::<serde_json::Value>(&bytes) {
        Ok(message) => message,
        Err(e) => {
            return jsonrpc_error(
                StatusCode::BAD_REQUEST,
                PARSE_ERROR,
                &format!("Parse error: the body is not valid JSON ({e})"),
            );
        }
    };
    if let Some((id, why)) = stdio::envelope_problem(&message) {
        tracing::info!(reason = why, "refused: not a JSON-RPC message");
        return jsonrpc_error_with_id(
            StatusCode::BAD_REQUEST,
            INVALID_REQUEST,
            &id,
            &format!("invalid request: {why}"),
        );
    }
    let admission = if opens_session(&parts, &message) {
        match check.slots.reserve().await {
            Ok(admission) => Some(admission),
            Err(full) => {
                tracing::warn!(
                    open = full.open,
                    cap = check.slots.cap(),
                    "refused: session cap reached"
                );
                return jsonrpc_error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    INVALID_REQUEST,
                    &format!(
                        "too many sessions: this server holds {} (its cap is {}) and none is \
                         idle; close one (DELETE with its Mcp-Session-Id) or retry later",
                        full.open,
                        check.slots.cap()
                    ),
                );
            }
        }
    } else {
        None
    };
    let entry = match session_request_key(&parts, &message) {
        Some(key) => {
            if !check.in_flight.ids().insert(key.clone()) {
                tracing::info!(id = %key.1, "refused: duplicate id of a request in flight");
                let id = message.get("id").cloned().unwrap_or_default();
                return jsonrpc_error_with_id(
                    StatusCode::CONFLICT,
                    INVALID_REQUEST,
                    &id,
                    &stdio::duplicate_id_message(&key.1),
                );
            }
            Some(InFlightEntry {
                set: Arc::clone(&check.in_flight),
                key,
            })
        }
        None => None,
    };
    let request = next.run(Request::from_parts(parts, axum::body::Body::from(bytes)));
    let response = match &admission {
        // The session rmcp creates takes the admission's slot
        // (`SessionSlots::create_session`).
        Some(admission) => admission.run(request).await,
        None => request.await,
    };
    // The id stays taken, and the session busy (a new one: being opened),
    // until the answer's body is done.
    holding(response, (entry, busy, admission))
}

/// An answer must have started within the request timeout (the body read
/// included); else `408` and the connection closes.
async fn request_timeout(
    State(limit): State<std::time::Duration>,
    request: Request,
    next: Next,
) -> Response {
    match tokio::time::timeout(limit, next.run(request)).await {
        Ok(response) => response,
        Err(_) => {
            tracing::info!(timeout_ms = limit.as_millis() as u64, "request timed out");
            let mut response = (
                StatusCode::REQUEST_TIMEOUT,
                format!("the request took longer than {} ms\n", limit.as_millis()),
            )
                .into_response();
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            response
        }
    }
}

/// The `Origin`s of pages served by this very listener when it is a
/// loopback one: `http://127.0.0.1:PORT`, `http://localhost:PORT` and
/// `http://[::1]:PORT`, with the listener's port (none for port 0, not yet
/// bound, or a non-loopback address). A page on another port or host is
/// still refused (DNS rebinding protection); `--allowed-origin` adds more.
pub fn loopback_origins(addr: SocketAddr) -> Vec<String> {
    if !addr.ip().is_loopback() || addr.port() == 0 {
        return Vec::new();
    }
    let port = addr.port();
    ["127.0.0.1", "localhost", "[::1]"]
        .iter()
        .map(|host| format!("http://{host}:{port}"))
        .collect()
}

/// The HTTP router (the MCP endpoint at [`HTTP_PATH`], [`ROOT_TEXT`] at
/// `/`), for hosts that mount it in their own server. `http.addr` is the
/// bound address (its port names the loopback origins accepted:
/// [`loopback_origins`]). `token`: require
/// `Authorization: Bearer`. The engine should be built with
/// `expose_paths` off ([`serve_http`] does): HTTP clients are remote.
pub fn router(
    engine: Arc<Engine>,
    http: &HttpOptions,
    token: Option<String>,
    cancel: CancellationToken,
) -> axum::Router {
    let well_known = http
        .well_known
        .then(|| crate::well_known::router(Arc::clone(&engine)));
    let mut hosts: Vec<String> = LOOPBACK_HOSTS.iter().map(|h| (*h).to_owned()).collect();
    hosts.extend(http.allowed_hosts.iter().cloned());
    let mut origins = http.allowed_origins.clone();
    origins.extend(loopback_origins(http.addr));
    let engine_limit = engine.options().max_request_bytes;
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins)
        .enforce_origin_validation()
        .with_max_request_body_bytes(engine.options().max_request_bytes)
        .with_cancellation_token(cancel);
    let mut manager = LocalSessionManager::default();
    manager.session_config.keep_alive = Some(http.session_idle_timeout);
    let slots = Arc::new(SessionSlots::new(
        http.max_sessions,
        http.session_evict_idle,
        manager,
        Arc::clone(&engine),
    ));
    let service = StreamableHttpService::new(
        move || Ok(SkillServer::new(Arc::clone(&engine))),
        Arc::clone(&slots),
        config,
    );
    let limit = engine_limit;
    let mcp =
        axum::Router::new()
            .nest_service(HTTP_PATH, service)
            .layer(middleware::from_fn_with_state(
                BodyCheck {
                    limit,
                    in_flight: Arc::default(),
                    slots,
                },
                guard_mcp,
            ));
    let router = axum::Router::new()
        .route("/", axum::routing::get(|| async { ROOT_TEXT }))
        .merge(mcp)
        .fallback(|| async { (StatusCode::NOT_FOUND, NOT_FOUND_TEXT) });
    let router = match token {
        Some(token) => router.layer(middleware::from_fn_with_state(
            Arc::<str>::from(token),
            require_bearer,
        )),
        None => router,
    };
    // Published without a token: the switch says these skills are public.
    let router = match well_known {
        Some(w) => router.merge(w),
        None => router,
    };
    router.layer(middleware::from_fn_with_state(
        http.request_timeout,
        request_timeout,
    ))
}

/// Serves streamable HTTP on `http.addr` until a signal arrives. Answers
/// name no folder of the server (the catalog has no locations, activations
/// no skill directory: `expose_paths` off): an HTTP client's model cannot
/// read the server's files (it uses `read_skill_resource`), and should not
/// learn the server's folder layout.
pub fn serve_http(options: ServeOptions, mut http: HttpOptions) -> Result<(), Error> {
    let options = options.for_remote_clients();
    let token = http.token_file.as_deref().map(read_token).transpose()?;
    if token.is_none() && !http.addr.ip().is_loopback() {
        return Err(Error::Unauthenticated { addr: http.addr });
    }
    runtime(true)?.block_on(async move {
        let listener = tokio::net::TcpListener::bind(http.addr)
            .await
            .map_err(|source| Error::Bind {
                addr: http.addr,
                source,
            })?;
        let local: SocketAddr = listener.local_addr().map_err(|source| Error::Bind {
            addr: http.addr,
            source,
        })?;
        let (engine, _watcher) = start(options).await?;
        let cancel = CancellationToken::new();
        // The port actually bound (port 0 picks one): the loopback origins
        // name it.
        http.addr = local;
        let app = router(engine, &http, token, cancel.child_token());
        // Before the address is announced (see `shutdown`).
        let stop = crate::shutdown::on_signal();
        tracing::info!(url = %format!("http://{local}{HTTP_PATH}"), "listening");
        // The first line on stderr names the address (useful with port 0).
        eprintln!("skilldeck serve: listening on http://{local}{HTTP_PATH}");
        serve_connections(listener, app, &http, stop).await;
        cancel.cancel();
        Ok(())
    })
}

/// Prepares an accepted socket: `TCP_NODELAY`, so an answer written in
/// two parts (head, then body) is not held back by Nagle's algorithm
/// waiting for the client's delayed ACK (~40 ms per keep-alive request).
pub fn prepare_stream(stream: &tokio::net::TcpStream) -> std::io::Result<()> {
    stream.set_nodelay(true)
}

/// Serves `app` on `listener` until `shutdown` resolves, then lets the open
/// connections finish (for 100 ms at most). Each socket is prepared by
/// [`prepare_stream`]; each connection has `http.header_read_timeout` to
/// send its request headers (per request, keep-alive included).
pub async fn serve_connections(
    listener: tokio::net::TcpListener,
    app: axum::Router,
    http: &HttpOptions,
    shutdown: impl std::future::Future<Output = ()>,
) {
    use hyper_util::rt::{TokioIo, TokioTimer};
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    tokio::pin!(shutdown);
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(http.header_read_timeout)
        .keep_alive(true);
    loop {
        let (stream, _peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors and the like: wait, go on.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        if let Err(e) = prepare_stream(&stream) {
            tracing::debug!(error = %e, "cannot set TCP_NODELAY");
        }
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        let connection = builder.serve_connection(TokioIo::new(stream), service);
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, "connection ended");
            }
        });
    }
    if tokio::time::timeout(SIGNAL_GRACE, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::debug!("connections still open at shutdown");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_terminal_line_counts_skills_from_the_loaded_deck() {
        assert_eq!(
            waiting_line(&skilldeck::Deck::default()),
            "serving 0 skills from no root over stdio; waiting for an MCP client (Ctrl-C to stop)"
        );
    }
}
