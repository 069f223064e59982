//! The streamable HTTP transport, driven with hand-written HTTP/1.1 over a
//! `TcpStream`: the address forms accepted, the answers off the MCP path,
//! JSON-RPC errors for bodies that are not JSON, and no server path in any
//! answer to a remote client.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use skilldeck::DiscoveryOptions;
use skilldeck_mcp::options::resolve_listen_address;
use skilldeck_mcp::transport::{prepare_stream, router, serve_connections};
use skilldeck_mcp::{Engine, HttpOptions, ServeOptions};
use tokio_util::sync::CancellationToken;

/// One answer: status, headers (lowercase names), body (de-chunked).
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC message in the body: plain JSON, or the first SSE
    /// `data:` line that holds one.
    fn json(&self) -> Value {
        if let Ok(v) = serde_json::from_str(&self.body) {
            return v;
        }
        self.body
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .find(|v| v.get("id").is_some())
            .unwrap_or_else(|| panic!("no JSON-RPC answer in {:?}", self.body))
    }
}

fn dechunk(mut raw: &str) -> String {
    let mut out = String::new();
    loop {
        let Some((size, rest)) = raw.split_once("\r\n") else {
            return out;
        };
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 {
            return out;
        }
        out.push_str(&rest[..size]);
        raw = rest[size..].strip_prefix("\r\n").unwrap_or(&rest[size..]);
    }
}

fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Answer {
    request_bytes(addr, method, path, headers, body.as_bytes())
}

/// [`request`] with a body of any bytes (not only UTF-8).
fn request_bytes(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Answer {
    let mut stream = TcpStream::connect(addr).unwrap();
    // A request left unanswered fails the test instead of hanging it.
    stream.set_read_timeout(Some(UNANSWERED)).unwrap();
    let mut text = format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        text.push_str(&format!("{name}: {value}\r\n"));
    }
    text.push_str("\r\n");
    let mut bytes = text.into_bytes();
    bytes.extend_from_slice(body);
    stream.write_all(&bytes).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap();
    let mut lines = head.lines();
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"));
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_owned()
    };
    Answer {
        status,
        headers,
        body,
    }
}

/// Longer than any answer may take: past it, a request counts as lost.
const UNANSWERED: std::time::Duration = std::time::Duration::from_secs(30);

const JSON_HEADERS: [(&str, &str); 2] = [
    ("Content-Type", "application/json"),
    ("Accept", "application/json, text/event-stream"),
];

/// Serves `engine` on `localhost:0` in the background; returns the runtime
/// (keep it alive) and the address.
fn serve(engine: Arc<Engine>) -> (tokio::runtime::Runtime, SocketAddr) {
    serve_configured(engine, |_| {})
}

/// [`serve`], with `configure` applied to the HTTP options first.
fn serve_configured(
    engine: Arc<Engine>,
    configure: impl FnOnce(&mut HttpOptions),
) -> (tokio::runtime::Runtime, SocketAddr) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let addr = resolve_listen_address("localhost:0").unwrap();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind(addr))
        .unwrap();
    let mut http = HttpOptions::new(listener.local_addr().unwrap());
    configure(&mut http);
    serve_with(engine, http, listener, runtime)
}

/// Serves `engine` with `http`'s options through the server's own accept
/// loop ([`serve_connections`]).
fn serve_with(
    engine: Arc<Engine>,
    http: HttpOptions,
    listener: tokio::net::TcpListener,
    runtime: tokio::runtime::Runtime,
) -> (tokio::runtime::Runtime, SocketAddr) {
    let local = listener.local_addr().unwrap();
    let app = router(engine, &http, None, CancellationToken::new());
    runtime.spawn(
        async move { serve_connections(listener, app, &http, std::future::pending()).await },
    );
    (runtime, local)
}

/// Options as `serve_http` sets them for remote clients.
fn remote_options(root: &Path) -> ServeOptions {
    let mut options = ServeOptions::new(DiscoveryOptions::with_roots([root.to_path_buf()]));
    options.reload = None;
    options.for_remote_clients()
}

fn fixture() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    skilldeck_testkit::skill(root, "pdf")
        .description("Does pdf things.")
        .body("# PDF\nRun ${SKILL_DIR}/scripts/fill.sh, see references/FORMS.md.\n")
        .file("references/FORMS.md", "# Forms\n")
        .file("scripts/fill.sh", "echo fill\n")
        .write();
    skilldeck_testkit::skill(root, "greet")
        .description("Does greet things.")
        .field("argument-hint", "\"[who]\"")
        .body("Hello, $ARGUMENTS!\n")
        .write();
    // Skipped by discovery: asking for it gives the reason, not its path.
    std::fs::create_dir_all(root.join("broken")).unwrap();
    std::fs::write(root.join("broken/SKILL.md"), "---\nname: broken\n").unwrap();
    tmp
}

#[test]
fn a_host_name_resolves_to_a_loopback_address() {
    let addr = resolve_listen_address("localhost:0").unwrap();
    assert!(addr.ip().is_loopback(), "{addr}");
    assert_eq!(addr.port(), 0);
    assert_eq!(
        resolve_listen_address("127.0.0.1:8765").unwrap(),
        "127.0.0.1:8765".parse::<SocketAddr>().unwrap()
    );
    let err = resolve_listen_address("localhost").unwrap_err().to_string();
    assert!(err.contains("HOST:PORT"), "{err}");
}

#[test]
fn the_root_path_names_the_endpoint_and_unknown_paths_are_a_short_404() {
    let tmp = fixture();
    let (_rt, addr) = serve(Arc::new(Engine::new(remote_options(tmp.path())).unwrap()));
    let root = request(addr, "GET", "/", &[], "");
    assert_eq!(root.status, 200);
    assert_eq!(root.body, "skilldeck MCP server: POST JSON-RPC to /mcp\n");
    let missing = request(addr, "GET", "/nope", &[], "");
    assert_eq!(missing.status, 404);
    assert!(missing.body.contains("/mcp"), "{}", missing.body);
}

#[test]
fn a_malformed_json_body_is_a_jsonrpc_parse_error() {
    let tmp = fixture();
    let (_rt, addr) = serve(Arc::new(Engine::new(remote_options(tmp.path())).unwrap()));
    let bad = request(
        addr,
        "POST",
        "/mcp",
        &JSON_HEADERS,
        "{\"jsonrpc\": \"2.0\", ",
    );
    assert_eq!(bad.status, 400, "{}", bad.body);
    let answer = bad.json();
    assert_eq!(answer["error"]["code"], -32700);
    assert_eq!(answer["id"], Value::Null);
    assert_eq!(answer["jsonrpc"], "2.0");
    // A wrong content type still says what is expected.
    let wrong = request(
        addr,
        "POST",
        "/mcp",
        &[
            ("Content-Type", "text/plain"),
            ("Accept", "application/json, text/event-stream"),
        ],
        "{}",
    );
    assert_eq!(wrong.status, 415);
    assert!(wrong.body.contains("application/json"), "{}", wrong.body);
}

/// A session: initialize, then each call with the session header.
struct Session {
    addr: SocketAddr,
    id: Option<String>,
    next: u64,
}

impl Session {
    fn open(addr: SocketAddr) -> Session {
        let mut session = Session {
            addr,
            id: None,
            next: 1,
        };
        let init = session.post(json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"}
            }
        }));
        assert!(init.json().get("result").is_some(), "{}", init.body);
        session.id = init.header("mcp-session-id").map(str::to_owned);
        session.post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        session
    }

    fn post(&mut self, message: Value) -> Answer {
        let mut headers = JSON_HEADERS.to_vec();
        let id = self.id.clone();
        if let Some(id) = id.as_deref() {
            headers.push(("Mcp-Session-Id", id));
            headers.push(("MCP-Protocol-Version", "2025-11-25"));
        }
        request(self.addr, "POST", "/mcp", &headers, &message.to_string())
    }

    /// Calls `method` and returns the raw answer body.
    fn call(&mut self, method: &str, params: Value) -> String {
        let id = self.next;
        self.next += 1;
        let answer =
            self.post(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let message = answer.json();
        assert_eq!(message["id"], id, "{}", answer.body);
        message.to_string()
    }
}

#[test]
fn answers_to_remote_clients_carry_no_server_path() {
    let tmp = fixture();
    let root = tmp.path().to_string_lossy().into_owned();
    let resolved = std::fs::canonicalize(tmp.path())
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let (_rt, addr) = serve(Arc::new(Engine::new(remote_options(tmp.path())).unwrap()));
    let mut session = Session::open(addr);
    let calls = [
        ("tools/list", json!({})),
        (
            "tools/call",
            json!({"name": "activate_skill", "arguments": {"name": "pdf"}}),
        ),
        (
            "tools/call",
            json!({"name": "read_skill_resource", "arguments": {"name": "pdf", "path": "references/FORMS.md"}}),
        ),
        (
            "tools/call",
            json!({"name": "search_skills", "arguments": {"query": "pdf"}}),
        ),
        ("prompts/list", json!({})),
        (
            "prompts/get",
            json!({"name": "greet", "arguments": {"arguments": "Ada"}}),
        ),
        ("prompts/get", json!({"name": "pdf"})),
        ("resources/list", json!({})),
        ("resources/templates/list", json!({})),
        ("resources/read", json!({"uri": "skill://pdf/SKILL.md"})),
        ("skills/list", json!({})),
        ("skills/get", json!({"uri": "skill://pdf/SKILL.md"})),
        ("resources/directory/read", json!({"uri": "skill://pdf/"})),
        (
            "tools/call",
            json!({"name": "activate_skill", "arguments": {"name": "broken"}}),
        ),
        ("prompts/get", json!({"name": "broken"})),
        ("skills/get", json!({"uri": "skill://broken/SKILL.md"})),
    ];
    let mut seen_activation = false;
    for (method, params) in calls {
        let text = session.call(method, params.clone());
        assert!(
            !text.contains(&root) && !text.contains(&resolved),
            "{method} {params} names the server's folder: {text}"
        );
        if text.contains("skill_content") {
            seen_activation = true;
            assert!(!text.contains("Skill directory:"), "{text}");
            assert!(text.contains("read_skill_resource"), "{text}");
        }
        if text.contains("skill_content") && text.contains("Run ") {
            assert!(text.contains("./scripts/fill.sh"), "{text}");
        }
    }
    assert!(seen_activation, "no activation was answered");
}

#[test]
fn accepted_sockets_send_without_nagle_delay() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let _client = tokio::net::TcpStream::connect(addr).await.unwrap();
        let (accepted, _) = listener.accept().await.unwrap();
        assert!(
            !accepted.nodelay().unwrap(),
            "the kernel default is Nagle on"
        );
        prepare_stream(&accepted).unwrap();
        assert!(accepted.nodelay().unwrap());
    });
}

#[test]
fn a_client_that_never_finishes_its_headers_is_disconnected() {
    let tmp = fixture();
    let engine = Arc::new(Engine::new(remote_options(tmp.path())).unwrap());
    let (_rt, addr) = serve_configured(engine, |http| {
        http.header_read_timeout = std::time::Duration::from_millis(300);
    });
    // Slowloris: a request line and one header, then nothing.
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(UNANSWERED)).unwrap();
    stream
        .write_all(b"POST /mcp HTTP/1.1\r\nHost: localhost\r\n")
        .unwrap();
    let mut rest = Vec::new();
    // The server closes the connection (an error or end of stream), rather
    // than the read timing out on an open one.
    match stream.read_to_end(&mut rest) {
        Ok(_) => {}
        Err(e) => assert!(
            !matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ),
            "the connection is still open: {e}"
        ),
    }
}

#[test]
fn concurrent_requests_with_one_id_in_a_session_are_all_answered() {
    let tmp = fixture();
    let (_rt, addr) = serve(Arc::new(Engine::new(remote_options(tmp.path())).unwrap()));
    let session = Session::open(addr);
    let session_id = session.id.clone().unwrap();
    let calls: Vec<_> = (0..100)
        .map(|_| {
            let session_id = session_id.clone();
            std::thread::spawn(move || {
                let headers = [
                    JSON_HEADERS[0],
                    JSON_HEADERS[1],
                    ("Mcp-Session-Id", session_id.as_str()),
                    ("MCP-Protocol-Version", "2025-11-25"),
                ];
                let body = json!({
                    "jsonrpc": "2.0", "id": 7, "method": "tools/call",
                    "params": {"name": "activate_skill", "arguments": {"name": "pdf"}}
                });
                request(addr, "POST", "/mcp", &headers, &body.to_string())
            })
        })
        .collect();
    let (mut results, mut refused) = (0, 0);
    for call in calls {
        let answer = call.join().unwrap();
        let message = answer.json();
        assert_eq!(message["id"], 7, "{}", answer.body);
        if message.get("result").is_some() {
            results += 1;
        } else {
            assert_eq!(message["error"]["code"], -32600, "{}", answer.body);
            assert!(
                message["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("not been answered yet"),
                "{}",
                answer.body
            );
            assert_eq!(answer.status, 409);
            refused += 1;
        }
    }
    assert_eq!(results + refused, 100);
    assert!(results >= 1);
}

#[test]
fn sessions_beyond_the_cap_are_refused_until_one_closes() {
    let tmp = fixture();
    let engine = Arc::new(Engine::new(remote_options(tmp.path())).unwrap());
    let (_rt, addr) = serve_configured(engine, |http| http.max_sessions = 2);
    let first = Session::open(addr);
    let _second = Session::open(addr);
    let initialize = json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}
        }
    });
    let refused = request(addr, "POST", "/mcp", &JSON_HEADERS, &initialize.to_string());
    assert_eq!(refused.status, 503, "{}", refused.body);
    let message = refused.json();
    assert_eq!(message["error"]["code"], -32600, "{}", refused.body);
    assert!(
        message["error"]["message"]
            .as_str()
            .unwrap()
            .contains("too many sessions"),
        "{}",
        refused.body
    );
    // Closing one makes room again.
    let id = first.id.clone().unwrap();
    let closed = request(
        addr,
        "DELETE",
        "/mcp",
        &[
            ("Mcp-Session-Id", id.as_str()),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
        "",
    );
    assert!(closed.status < 300, "{} {}", closed.status, closed.body);
    let deadline = std::time::Instant::now() + UNANSWERED;
    loop {
        let again = request(addr, "POST", "/mcp", &JSON_HEADERS, &initialize.to_string());
        if again.status == 200 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{} {}",
            again.status,
            again.body
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// How long a closed session's forwarder may linger (the task has to be
/// scheduled once); the old forwarder checked every 30 s.
const RELEASED: std::time::Duration = std::time::Duration::from_secs(10);

/// Waits until `engine` has `want` change listeners (one per live
/// session's notification forwarder), or [`RELEASED`] passes.
fn wait_for_listeners(engine: &Engine, want: usize) -> usize {
    let deadline = std::time::Instant::now() + RELEASED;
    loop {
        let now = engine.change_listeners();
        if now == want || std::time::Instant::now() >= deadline {
            return now;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn a_deleted_session_leaves_no_notification_forwarder_behind() {
    // Each initialized session holds a forwarder (a task, a broadcast
    // receiver, and with it the session's channel to its peer). It used
    // to notice the session's end only on a 30 s poll, so sessions churned
    // faster than that piled up in memory (~11 KB each).
    let tmp = fixture();
    let engine = Arc::new(Engine::new(remote_options(tmp.path())).unwrap());
    let (_rt, addr) = serve(Arc::clone(&engine));
    let baseline = engine.change_listeners();
    let sessions: Vec<Session> = (0..8).map(|_| Session::open(addr)).collect();
    assert_eq!(wait_for_listeners(&engine, baseline + 8), baseline + 8);
    for session in &sessions {
        let id = session.id.clone().unwrap();
        let closed = request(
            addr,
            "DELETE",
            "/mcp",
            &[
                ("Mcp-Session-Id", id.as_str()),
                ("MCP-Protocol-Version", "2025-11-25"),
            ],
            "",
        );
        assert!(closed.status < 300, "{} {}", closed.status, closed.body);
    }
    assert_eq!(wait_for_listeners(&engine, baseline), baseline);
}

/// An `initialize` of revision 2025-11-25, outside a session.
fn initialize_body() -> String {
    json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}
        }
    })
    .to_string()
}

#[test]
fn a_page_of_the_loopback_listener_itself_is_an_accepted_origin() {
    let tmp = fixture();
    let (_rt, addr) = serve(Arc::new(Engine::new(remote_options(tmp.path())).unwrap()));
    let port = addr.port();
    for origin in [
        format!("http://127.0.0.1:{port}"),
        format!("http://localhost:{port}"),
        format!("http://[::1]:{port}"),
    ] {
        let mut headers = JSON_HEADERS.to_vec();
        headers.push(("Origin", origin.as_str()));
        let answer = request(addr, "POST", "/mcp", &headers, &initialize_body());
        assert_eq!(answer.status, 200, "Origin {origin}: {}", answer.body);
    }
    // DNS rebinding protection stays: another port, another host, a
    // look-alike, `null`.
    for origin in [
        format!("http://localhost:{}", port.wrapping_add(1).max(1)),
        format!("http://evil.example:{port}"),
        format!("http://127.0.0.1.evil.example:{port}"),
        format!("https://localhost:{port}"),
        "null".to_owned(),
    ] {
        let mut headers = JSON_HEADERS.to_vec();
        headers.push(("Origin", origin.as_str()));
        let answer = request(addr, "POST", "/mcp", &headers, &initialize_body());
        assert_eq!(answer.status, 403, "Origin {origin}: {}", answer.body);
    }
}

#[test]
fn batches_null_and_invalid_utf8_bodies_get_jsonrpc_errors_not_415() {
    let tmp = fixture();
    let (_rt, addr) = serve(Arc::new(Engine::new(remote_options(tmp.path())).unwrap()));
    let cases: [(&[u8], i64, Value); 6] = [
        (
            br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
            -32600,
            Value::Null,
        ),
        (b"null", -32600, Value::Null),
        (b"42", -32600, Value::Null),
        (br#"{"jsonrpc":"2.0","id":7}"#, -32600, json!(7)),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffng\"}",
            -32700,
            Value::Null,
        ),
        (b"\xfe\xff{}", -32700, Value::Null),
    ];
    for (body, code, id) in cases {
        let answer = request_bytes(addr, "POST", "/mcp", &JSON_HEADERS, body);
        let shown = String::from_utf8_lossy(body);
        assert_eq!(answer.status, 400, "{shown}: {}", answer.body);
        let message = answer.json();
        assert_eq!(message["jsonrpc"], "2.0", "{shown}: {}", answer.body);
        assert_eq!(message["error"]["code"], code, "{shown}: {}", answer.body);
        assert_eq!(message["id"], id, "{shown}: {}", answer.body);
    }
    // The server goes on.
    let ok = request(addr, "POST", "/mcp", &JSON_HEADERS, &initialize_body());
    assert_eq!(ok.status, 200, "{}", ok.body);
}

#[test]
fn delete_ends_the_session_with_204_and_forgets_what_it_activated() {
    let tmp = fixture();
    let engine = Arc::new(Engine::new(remote_options(tmp.path())).unwrap());
    let (_rt, addr) = serve(Arc::clone(&engine));
    let mut session = Session::open(addr);
    let id = session.id.clone().unwrap();
    let activated = session.call(
        "tools/call",
        json!({"name": "activate_skill", "arguments": {"name": "pdf"}}),
    );
    assert!(activated.contains("skill_content"), "{activated}");
    let conversation = format!("http:{id}");
    assert!(
        engine
            .host()
            .tracker()
            .lock()
            .is_active(&conversation, "pdf")
    );
    let closed = request(
        addr,
        "DELETE",
        "/mcp",
        &[
            ("Mcp-Session-Id", id.as_str()),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
        "",
    );
    assert!(
        closed.status == 200 || closed.status == 204,
        "{} {}",
        closed.status,
        closed.body
    );
    assert!(
        !engine
            .host()
            .tracker()
            .lock()
            .is_active(&conversation, "pdf")
    );
    // The session is gone.
    let after = session.post(json!({"jsonrpc": "2.0", "id": 9, "method": "ping"}));
    assert_eq!(after.status, 404, "{}", after.body);
}

#[test]
fn the_session_cap_holds_exactly_under_concurrent_initializes() {
    const CAP: usize = 4;
    const CLIENTS: usize = 48;
    let tmp = fixture();
    let engine = Arc::new(Engine::new(remote_options(tmp.path())).unwrap());
    let (_rt, addr) = serve_configured(engine, |http| http.max_sessions = CAP);
    let start = Arc::new(std::sync::Barrier::new(CLIENTS));
    let threads: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let start = Arc::clone(&start);
            std::thread::spawn(move || {
                start.wait();
                let answer = request(addr, "POST", "/mcp", &JSON_HEADERS, &initialize_body());
                (
                    answer.status,
                    answer.header("mcp-session-id").map(str::to_owned),
                )
            })
        })
        .collect();
    let answers: Vec<(u16, Option<String>)> =
        threads.into_iter().map(|t| t.join().unwrap()).collect();
    let admitted: Vec<&String> = answers
        .iter()
        .filter(|(status, _)| *status == 200)
        .filter_map(|(_, id)| id.as_ref())
        .collect();
    let refused = answers.iter().filter(|(status, _)| *status == 503).count();
    assert_eq!(admitted.len(), CAP, "{answers:?}");
    assert_eq!(refused, CLIENTS - CAP, "{answers:?}");
    // Every admitted session is real, and ending one admits a new one.
    let closed = request(
        addr,
        "DELETE",
        "/mcp",
        &[
            ("Mcp-Session-Id", admitted[0].as_str()),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
        "",
    );
    assert!(closed.status < 300, "{} {}", closed.status, closed.body);
    let again = request(addr, "POST", "/mcp", &JSON_HEADERS, &initialize_body());
    assert_eq!(again.status, 200, "{}", again.body);
    let full = request(addr, "POST", "/mcp", &JSON_HEADERS, &initialize_body());
    assert_eq!(full.status, 503, "{}", full.body);
}

#[test]
fn a_full_server_closes_its_longest_idle_session_to_admit_a_new_one() {
    let tmp = fixture();
    let engine = Arc::new(Engine::new(remote_options(tmp.path())).unwrap());
    let (_rt, addr) = serve_configured(engine, |http| {
        http.max_sessions = 2;
        http.session_evict_idle = std::time::Duration::ZERO;
    });
    let mut oldest = Session::open(addr);
    let mut newer = Session::open(addr);
    // The newer one was used last: the oldest is the idlest.
    newer.call("ping", json!({}));
    let third = request(addr, "POST", "/mcp", &JSON_HEADERS, &initialize_body());
    assert_eq!(third.status, 200, "{}", third.body);
    let evicted = oldest.post(json!({"jsonrpc": "2.0", "id": 5, "method": "ping"}));
    assert_eq!(evicted.status, 404, "{}", evicted.body);
    newer.call("ping", json!({}));
}

#[test]
fn a_session_with_a_request_running_is_never_evicted() {
    // A session whose event stream (GET) is open is busy: with every slot
    // held by such sessions, a new one is refused rather than cutting one.
    let tmp = fixture();
    let engine = Arc::new(Engine::new(remote_options(tmp.path())).unwrap());
    let (_rt, addr) = serve_configured(engine, |http| {
        http.max_sessions = 1;
        http.session_evict_idle = std::time::Duration::ZERO;
    });
    let session = Session::open(addr);
    let id = session.id.clone().unwrap();
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(UNANSWERED)).unwrap();
    write!(
        stream,
        "GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\
         Mcp-Session-Id: {id}\r\nMCP-Protocol-Version: 2025-11-25\r\n\r\n"
    )
    .unwrap();
    // Wait for the stream's head: the request is running.
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        stream.read_exact(&mut byte).unwrap();
        head.push(byte[0]);
    }
    assert!(
        String::from_utf8_lossy(&head).contains(" 200 "),
        "{}",
        String::from_utf8_lossy(&head)
    );
    let refused = request(addr, "POST", "/mcp", &JSON_HEADERS, &initialize_body());
    assert_eq!(refused.status, 503, "{}", refused.body);
    // Once the stream is closed the session is idle, and may give way.
    drop(stream);
    let deadline = std::time::Instant::now() + UNANSWERED;
    loop {
        let again = request(addr, "POST", "/mcp", &JSON_HEADERS, &initialize_body());
        if again.status == 200 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{} {}",
            again.status,
            again.body
        );
        std::thread::yield_now();
    }
}

#[test]
fn expired_sessions_free_their_slots() {
    let tmp = fixture();
    let engine = Arc::new(Engine::new(remote_options(tmp.path())).unwrap());
    let (_rt, addr) = serve_configured(engine, |http| {
        http.max_sessions = 1;
        // No eviction: only the session's own expiry frees its slot.
        http.session_evict_idle = UNANSWERED * 10;
        http.session_idle_timeout = std::time::Duration::from_millis(200);
    });
    let _first = Session::open(addr);
    let deadline = std::time::Instant::now() + UNANSWERED;
    loop {
        let again = request(addr, "POST", "/mcp", &JSON_HEADERS, &initialize_body());
        if again.status == 200 {
            break;
        }
        assert_eq!(again.status, 503, "{}", again.body);
        assert!(
            std::time::Instant::now() < deadline,
            "the session never expired"
        );
        std::thread::yield_now();
    }
}

fn nested_fixture() -> tempfile::TempDir {
    let tmp = fixture();
    skilldeck_testkit::skill(tmp.path(), "outer")
        .description("The outer skill.")
        .body("# Outer\n")
        .write();
    skilldeck_testkit::skill(tmp.path(), "inner")
        .folder("outer/inner")
        .description("A skill nested in another.")
        .body("# Inner\n")
        .file("notes.md", "inner notes\n")
        .write();
    tmp
}

#[test]
fn a_nested_skill_is_published_under_its_folder_path() {
    let tmp = nested_fixture();
    let (_rt, addr) = serve(Arc::new(Engine::new(remote_options(tmp.path())).unwrap()));
    let mut session = Session::open(addr);
    let listed: Value = serde_json::from_str(&session.call("skills/list", json!({}))).unwrap();
    let uris: Vec<&str> = listed["result"]["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["uri"].as_str().unwrap())
        .collect();
    assert!(uris.contains(&"skill://outer/inner/SKILL.md"), "{uris:?}");
    assert!(uris.contains(&"skill://outer/SKILL.md"), "{uris:?}");
    assert!(!uris.contains(&"skill://inner/SKILL.md"), "{uris:?}");
    let inner = listed["result"]["skills"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["uri"] == "skill://outer/inner/SKILL.md")
        .unwrap();
    let files: Vec<&str> = inner["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert!(files.contains(&"skill://outer/inner/notes.md"), "{files:?}");
    // The entry is fetched by its URI, and its files read by theirs.
    let got: Value = serde_json::from_str(
        &session.call("skills/get", json!({"uri": "skill://outer/inner/SKILL.md"})),
    )
    .unwrap();
    assert_eq!(
        got["result"]["skill"]["frontmatter"]["name"], "inner",
        "{got}"
    );
    let read: Value = serde_json::from_str(&session.call(
        "resources/read",
        json!({"uri": "skill://outer/inner/notes.md"}),
    ))
    .unwrap();
    assert_eq!(
        read["result"]["contents"][0]["text"], "inner notes\n",
        "{read}"
    );
    // The outer skill's own files are still its own.
    let outer: Value = serde_json::from_str(
        &session.call("resources/read", json!({"uri": "skill://outer/SKILL.md"})),
    )
    .unwrap();
    assert!(
        outer["result"]["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("# Outer"),
        "{outer}"
    );
    // The flat form older releases published still reads.
    let flat: Value = serde_json::from_str(
        &session.call("resources/read", json!({"uri": "skill://inner/notes.md"})),
    )
    .unwrap();
    assert_eq!(
        flat["result"]["contents"][0]["text"], "inner notes\n",
        "{flat}"
    );
    // The folder is a directory resource at the same path.
    let dir: Value = serde_json::from_str(&session.call(
        "resources/directory/read",
        json!({"uri": "skill://outer/inner"}),
    ))
    .unwrap();
    assert!(
        dir.to_string().contains("skill://outer/inner/notes.md"),
        "{dir}"
    );
}

#[test]
fn a_resource_not_found_error_names_the_uri_in_its_data() {
    let tmp = fixture();
    let (_rt, addr) = serve(Arc::new(Engine::new(remote_options(tmp.path())).unwrap()));
    let mut session = Session::open(addr);
    for uri in [
        "skill://pdf/references/NOPE.md",
        "skill://no-such-skill/SKILL.md",
    ] {
        let answer: Value =
            serde_json::from_str(&session.call("resources/read", json!({"uri": uri}))).unwrap();
        assert_eq!(answer["error"]["code"], -32002, "{answer}");
        assert_eq!(answer["error"]["data"]["uri"], uri, "{answer}");
    }
}

#[test]
fn methods_removed_in_2026_07_28_are_unknown_to_stateless_clients() {
    let tmp = fixture();
    let (_rt, addr) = serve(Arc::new(Engine::new(remote_options(tmp.path())).unwrap()));
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let mut headers = JSON_HEADERS.to_vec();
    headers.push(("MCP-Protocol-Version", "2026-07-28"));
    for (id, method, mut params) in [
        (1, "initialize", json!({})),
        (2, "logging/setLevel", json!({"level": "info"})),
        (3, "unknown/method", json!({})),
    ] {
        params["_meta"] = meta.clone();
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let mut headers = headers.clone();
        headers.push(("Mcp-Method", method));
        let answer = request(addr, "POST", "/mcp", &headers, &body.to_string());
        assert_eq!(answer.status, 404, "{method}: {}", answer.body);
        let message = answer.json();
        assert_eq!(
            message["error"]["code"], -32601,
            "{method}: {}",
            answer.body
        );
        assert_eq!(message["id"], id, "{method}: {}", answer.body);
    }
    // A request that is not removed is answered as usual.
    let body =
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {"_meta": meta}});
    headers.push(("Mcp-Method", "tools/list"));
    let answer = request(addr, "POST", "/mcp", &headers, &body.to_string());
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert!(
        answer.json()["result"]["tools"].is_array(),
        "{}",
        answer.body
    );
}

#[test]
fn a_stateless_client_gets_invalid_params_with_the_uri_for_a_missing_resource() {
    // SEP-2164 (revision 2026-07-28): -32602 and `data.uri`, for a skill
    // file that does not exist and for a URI no skill can have.
    let tmp = fixture();
    let (_rt, addr) = serve(Arc::new(Engine::new(remote_options(tmp.path())).unwrap()));
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let mut headers = JSON_HEADERS.to_vec();
    headers.push(("MCP-Protocol-Version", "2026-07-28"));
    headers.push(("Mcp-Method", "resources/read"));
    for (id, uri) in [
        (1, "skill://pdf/references/NOPE.md"),
        (2, "test://nonexistent-resource"),
    ] {
        headers.retain(|(name, _)| *name != "Mcp-Name");
        headers.push(("Mcp-Name", uri));
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "resources/read",
                          "params": {"uri": uri, "_meta": meta}});
        let answer = request(addr, "POST", "/mcp", &headers, &body.to_string());
        let message = answer.json();
        assert_eq!(message["error"]["code"], -32602, "{uri}: {}", answer.body);
        assert_eq!(
            message["error"]["data"]["uri"], uri,
            "{uri}: {}",
            answer.body
        );
    }
}

#[test]
fn an_expired_session_forgets_what_it_activated() {
    // A client that goes away without `DELETE`: rmcp ends the session
    // once it is idle for `session_idle_timeout`. What it activated used
    // to stay in the tracker until the next admission swept it.
    let tmp = fixture();
    let engine = Arc::new(Engine::new(remote_options(tmp.path())).unwrap());
    let (_rt, addr) = serve_configured(Arc::clone(&engine), |http| {
        http.session_idle_timeout = std::time::Duration::from_secs(1);
    });
    let tracker = engine.host().tracker();
    // Open sessions until one activates before it idles out (a loaded
    // machine may pause longer than the timeout between two requests).
    let conversation = loop {
        let mut session = Session::open(addr);
        let id = session.id.clone().unwrap();
        let answer = session.post(json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "activate_skill", "arguments": {"name": "pdf"}}
        }));
        let conversation = format!("http:{id}");
        if answer.status == 200
            && answer.body.contains("skill_content")
            && tracker.lock().is_active(&conversation, "pdf")
        {
            break conversation;
        }
    };
    // Nothing more is asked: the session expires, its server is dropped.
    let deadline = std::time::Instant::now() + RELEASED * 6;
    while tracker.lock().is_active(&conversation, "pdf") && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(
        !tracker.lock().is_active(&conversation, "pdf"),
        "the expired session's activation is still tracked"
    );
}

#[test]
fn a_server_for_remote_clients_never_searches_their_folders() {
    // Over HTTP one host serves many clients: the folders one announces
    // (MCP `roots`) must not decide what the others see.
    let tmp = fixture();
    let project = tempfile::tempdir().unwrap();
    skilldeck_testkit::skill(project.path().join(".agents/skills"), "theirs")
        .description("A project skill of one client.")
        .write();
    let mut options = remote_options(tmp.path());
    options.host.client_project_roots = true;
    // A local (stdio) server with the same options does search them.
    let local = Engine::new(options.clone()).unwrap();
    assert!(
        local
            .host()
            .set_client_folders(&[project.path().to_path_buf()])
    );
    local.host().reload().unwrap();
    assert!(local.host().snapshot().get("theirs").is_some());
    let engine = Engine::new(options.for_remote_clients()).unwrap();
    assert!(!engine.host().options().client_project_roots);
    assert!(
        !engine
            .host()
            .set_client_folders(&[project.path().to_path_buf()])
    );
    engine.host().reload().unwrap();
    assert!(engine.host().snapshot().get("theirs").is_none());
}
