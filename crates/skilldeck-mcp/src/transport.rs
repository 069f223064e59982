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

use crate::engine::Engine;
use crate::error::Error;
use crate::options::{HttpOptions, ServeOptions};
use crate::reload;
use crate::server::SkillServer;
use crate::stdio;

/// The HTTP path the MCP endpoint is served at.
pub const HTTP_PATH: &str = "/mcp";

/// After the client closed stdin: how long the last answers may take to
/// reach stdout.
const DRAIN_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// After a signal: how long to let output finish, and blocked stdin reads
/// be, before the process leaves them.
const SIGNAL_GRACE: std::time::Duration = std::time::Duration::from_millis(100);

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
type WatchTask = Option<tokio::task::JoinHandle<Result<reload::Watcher, Error>>>;

/// Discovers the deck (on a blocking thread), logs what was loaded, and
/// starts the watcher when reload is on. Registering the watches walks
/// every folder again, so it runs in the background: the first answer does
/// not wait for it. Once watching, the deck is checked once more, so an
/// edit made in between is not missed.
async fn start(options: ServeOptions) -> Result<(Arc<Engine>, WatchTask), Error> {
    let started = Instant::now();
    let engine = tokio::task::spawn_blocking(move || Engine::new(options))
        .await
        .map_err(|e| Error::Transport(format!("discovery task failed: {e}")))??;
    let engine = Arc::new(engine);
    let snapshot = engine.snapshot();
    let errors = snapshot
        .deck
        .diagnostics()
        .iter()
        .filter(|d| d.severity == skilldeck::Severity::Error)
        .inspect(|d| tracing::warn!(diagnostic = %d, "skill not loaded"))
        .count();
    tracing::info!(
        skills = snapshot.deck.len(),
        skipped = errors,
        shadowed = snapshot.deck.shadowed().len(),
        elapsed_ms = started.elapsed().as_millis() as u64,
        "skills loaded"
    );
    let watcher = engine.options().reload.map(|debounce| {
        let engine = Arc::clone(&engine);
        tokio::task::spawn_blocking(move || {
            let watcher = reload::watch(Arc::clone(&engine), debounce);
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
    Ok((engine, watcher))
}

/// Resolves on Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
    tracing::info!("shutting down");
}

/// Serves one client on stdin/stdout until it disconnects or a signal
/// arrives. Lines longer than `options.max_request_bytes` are dropped
/// (logged), and the server keeps reading.
pub fn serve_stdio(options: ServeOptions) -> Result<(), Error> {
    let runtime = runtime(false)?;
    let result = runtime.block_on(async move {
        let max = options.max_request_bytes;
        let (engine, _watcher) = start(options).await?;
        let guard = stdio::spawn(tokio::io::stdin(), tokio::io::stdout(), max);
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
            () = shutdown_signal() => {
                cancel.cancel();
                SIGNAL_GRACE
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
    let fail = |message: String| Error::TokenFile {
        path: path.to_path_buf(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| fail(e.to_string()))?;
    let token = text.lines().next().unwrap_or("").trim();
    if token.is_empty() {
        return Err(fail("holds no token".to_owned()));
    }
    if token.chars().any(|c| c.is_control() || c == ' ') {
        return Err(fail(
            "the token must be one word of printable characters".to_owned(),
        ));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(meta) = std::fs::metadata(path)
            && meta.permissions().mode() & 0o077 != 0
        {
            tracing::warn!(path = %path.display(), "token file is readable by other users (chmod 600 it)");
        }
    }
    Ok(token.to_owned())
}

/// Compares without an early exit on the first differing byte.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

async fn require_bearer(State(token): State<Arc<str>>, request: Request, next: Next) -> Response {
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    match presented {
        Some(t) if constant_time_eq(t.as_bytes(), token.as_bytes()) => next.run(request).await,
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
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
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

/// A POST whose JSON body does not parse gets JSON-RPC's Parse error
/// (`-32700`, `id: null`, HTTP 400) instead of the SDK's `415`; other
/// requests (a wrong content type included: the SDK's `415` names the
/// expected type) pass through untouched.
async fn parse_error_as_jsonrpc(
    State(limit): State<usize>,
    request: Request,
    next: Next,
) -> Response {
    if request.method() != axum::http::Method::POST || !is_json(&request) {
        return next.run(request).await;
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
    if let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(&bytes) {
        return jsonrpc_error(
            StatusCode::BAD_REQUEST,
            PARSE_ERROR,
            &format!("Parse error: the body is not valid JSON ({e})"),
        );
    }
    next.run(Request::from_parts(parts, axum::body::Body::from(bytes)))
        .await
}

/// The HTTP router (the MCP endpoint at [`HTTP_PATH`], [`ROOT_TEXT`] at
/// `/`), for hosts that mount it in their own server. `token`: require
/// `Authorization: Bearer`. The engine should be built with
/// `expose_paths` off ([`serve_http`] does): HTTP clients are remote.
pub fn router(
    engine: Arc<Engine>,
    http: &HttpOptions,
    token: Option<String>,
    cancel: CancellationToken,
) -> axum::Router {
    let mut hosts: Vec<String> = LOOPBACK_HOSTS.iter().map(|h| (*h).to_owned()).collect();
    hosts.extend(http.allowed_hosts.iter().cloned());
    let engine_limit = engine.options().max_request_bytes;
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(http.allowed_origins.clone())
        .enforce_origin_validation()
        .with_max_request_body_bytes(engine.options().max_request_bytes)
        .with_cancellation_token(cancel);
    let service = StreamableHttpService::new(
        move || Ok(SkillServer::new(Arc::clone(&engine))),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let limit = engine_limit;
    let mcp =
        axum::Router::new()
            .nest_service(HTTP_PATH, service)
            .layer(middleware::from_fn_with_state(
                limit,
                parse_error_as_jsonrpc,
            ));
    let router = axum::Router::new()
        .route("/", axum::routing::get(|| async { ROOT_TEXT }))
        .merge(mcp)
        .fallback(|| async { (StatusCode::NOT_FOUND, NOT_FOUND_TEXT) });
    match token {
        Some(token) => router.layer(middleware::from_fn_with_state(
            Arc::<str>::from(token),
            require_bearer,
        )),
        None => router,
    }
}

/// Serves streamable HTTP on `http.addr` until a signal arrives. Answers
/// name no folder of the server (the catalog has no locations, activations
/// no skill directory: `expose_paths` off): an HTTP client's model cannot
/// read the server's files (it uses `read_skill_resource`), and should not
/// learn the server's folder layout.
pub fn serve_http(mut options: ServeOptions, http: HttpOptions) -> Result<(), Error> {
    options.tool_catalog.locations = false;
    options.expose_paths = false;
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
        let app = router(engine, &http, token, cancel.child_token());
        tracing::info!(url = %format!("http://{local}{HTTP_PATH}"), "listening");
        // The first line on stderr names the address (useful with port 0).
        eprintln!("skilldeck serve: listening on http://{local}{HTTP_PATH}");
        axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                shutdown_signal().await;
                cancel.cancel();
            })
            .await
            .map_err(|e| Error::Transport(e.to_string()))
    })
}
