//! The MCP JSON-RPC message handling on arbitrary bytes, over a small
//! fixed deck (three skills: one with a script and a reference, one the
//! model may not invoke, one with arguments). Each input is sent
//!
//! 1. as one stdio line (it may hold more: each is a line) after the
//!    `initialize` handshake, through the stdio guard and the rmcp service,
//!    followed by a `ping` whose answer says the input was handled; every
//!    line the server writes must be a JSON-RPC message;
//! 2. as the body of `POST /mcp` without a session, and
//! 3. as the body of `POST /mcp` inside an initialized session (closed
//!    with `DELETE` afterwards), through the whole HTTP router.
//!
//! Nothing may panic (a panic on any task aborts: libFuzzer's hook), and
//! each wire must answer (a hang is reported by libFuzzer's `-timeout`).
#![no_main]

use std::sync::{Arc, OnceLock};

use axum::body::Body;
use axum::http::{Request, header};
use http_body_util::BodyExt as _;
use libfuzzer_sys::fuzz_target;
use rmcp::ServiceExt as _;
use rmcp::transport::async_rw::AsyncRwTransport;
use serde_json::Value;
use skilldeck::DiscoveryOptions;
use skilldeck_mcp::options::MAX_REQUEST_BYTES;
use skilldeck_mcp::transport::router;
use skilldeck_mcp::{Engine, HttpOptions, ServeOptions, SkillServer, stdio};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio_util::sync::CancellationToken;
use tower::ServiceExt as _;

const PROTOCOL: &str = "2025-11-25";
const SENTINEL_ID: &str = "fuzz-sentinel-7d1c";

struct Fixture {
    runtime: tokio::runtime::Runtime,
    engine: Arc<Engine>,
    _deck: tempfile::TempDir,
}

fn write(path: &std::path::Path, text: &str) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("fixture folder");
    }
    std::fs::write(path, text).expect("fixture file");
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let deck = tempfile::tempdir().expect("temp folder");
        let root = deck.path();
        write(
            &root.join("alpha/SKILL.md"),
            "---\nname: alpha\ndescription: Use when testing alpha.\n---\n\
             # Alpha\nRun [the script](scripts/run.sh), read [the guide](references/guide.md).\n",
        );
        write(
            &root.join("alpha/scripts/run.sh"),
            "#!/bin/sh\necho alpha\n",
        );
        write(
            &root.join("alpha/references/guide.md"),
            "# Guide\nsome text\n",
        );
        write(
            &root.join("beta/SKILL.md"),
            "---\nname: beta\ndescription: Use when deploying beta.\n\
             disable-model-invocation: true\n---\n# Beta\nDeploy.\n",
        );
        write(
            &root.join("gamma/SKILL.md"),
            "---\nname: gamma\ndescription: Use when greeting someone.\n\
             argument-hint: \"[name]\"\n---\n# Gamma\nGreet $ARGUMENTS.\n",
        );
        let mut options = ServeOptions::new(DiscoveryOptions::with_roots([root.to_path_buf()]));
        options.reload = None;
        let engine = Arc::new(Engine::new(options).expect("the fixture deck loads"));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        Fixture {
            runtime,
            engine,
            _deck: deck,
        }
    })
}

fn initialize(id: u32) -> Value {
    serde_json::json!({
        "jsonrpc": "2.0", "id": id, "method": "initialize",
        "params": {"protocolVersion": PROTOCOL, "capabilities": {},
                   "clientInfo": {"name": "fuzz", "version": "1"}}
    })
}

fn initialized() -> Value {
    serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
}

/// The input as stdio line(s) after the handshake, then a ping; waits for
/// the ping's answer. Every line written must be a JSON-RPC message.
async fn over_stdio(engine: Arc<Engine>, data: &[u8]) {
    let (mut client_in, server_in) = tokio::io::duplex(64 * 1024);
    let (server_out, client_out) = tokio::io::duplex(64 * 1024);
    let guard = stdio::spawn(server_in, server_out, MAX_REQUEST_BYTES);
    let mut input = Vec::with_capacity(data.len() + 512);
    for message in [initialize(0), initialized()] {
        input.extend(serde_json::to_vec(&message).expect("json"));
        input.push(b'\n');
    }
    input.extend_from_slice(data);
    input.push(b'\n');
    let ping = serde_json::json!({"jsonrpc": "2.0", "id": SENTINEL_ID, "method": "ping"});
    input.extend(serde_json::to_vec(&ping).expect("json"));
    input.push(b'\n');
    // Written while the service reads (the input may exceed the pipe).
    let writer = tokio::spawn(async move {
        let _ = client_in.write_all(&input).await;
        client_in
    });
    let transport = AsyncRwTransport::new_server(guard.requests, guard.responses);
    let service = SkillServer::new(engine)
        .serve(transport)
        .await
        .expect("the handshake of a fixed initialize succeeds");
    let mut lines = BufReader::new(client_out).lines();
    loop {
        match lines.next_line().await {
            Ok(Some(line)) => {
                let message: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line:?}"));
                assert!(
                    message.is_object() && message.get("jsonrpc") == Some(&Value::from("2.0")),
                    "stdout line is not a JSON-RPC message: {line:?}"
                );
                if message.get("id") == Some(&Value::from(SENTINEL_ID)) {
                    break;
                }
            }
            // The service stopped (the input may end the session): fine.
            Ok(None) | Err(_) => break,
        }
    }
    let client_in = writer.await.expect("the writer task");
    drop(client_in);
    let _ = service.cancel().await;
}

async fn post(
    app: &axum::Router,
    body: Vec<u8>,
    session: Option<&str>,
) -> (axum::http::StatusCode, Option<String>, Vec<u8>) {
    let mut request = Request::post("/mcp")
        .header(header::HOST, "localhost")
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json, text/event-stream");
    if let Some(id) = session {
        request = request
            .header("mcp-session-id", id)
            .header("mcp-protocol-version", PROTOCOL);
    }
    let request = request.body(Body::from(body)).expect("a request");
    let response = app.clone().oneshot(request).await.expect("infallible");
    let status = response.status();
    let session = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let body = response
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes().to_vec())
        .unwrap_or_default();
    (status, session, body)
}

/// The input as an HTTP body, outside and inside a session.
async fn over_http(engine: Arc<Engine>, data: &[u8]) {
    let cancel = CancellationToken::new();
    let http = HttpOptions::new(([127, 0, 0, 1], 0).into());
    let app = router(engine, &http, None, cancel.clone());
    post(&app, data.to_vec(), None).await;
    let (status, session, _) = post(
        &app,
        serde_json::to_vec(&initialize(1)).expect("json"),
        None,
    )
    .await;
    if let Some(id) = session.filter(|_| status.is_success()) {
        post(
            &app,
            serde_json::to_vec(&initialized()).expect("json"),
            Some(&id),
        )
        .await;
        post(&app, data.to_vec(), Some(&id)).await;
        let delete = Request::delete("/mcp")
            .header(header::HOST, "localhost")
            .header("mcp-session-id", &id)
            .header("mcp-protocol-version", PROTOCOL)
            .body(Body::empty())
            .expect("a request");
        let _ = app.clone().oneshot(delete).await;
    }
    cancel.cancel();
}

fuzz_target!(|data: &[u8]| {
    let fixture = fixture();
    fixture.runtime.block_on(async {
        over_stdio(Arc::clone(&fixture.engine), data).await;
        over_http(Arc::clone(&fixture.engine), data).await;
    });
});
