//! Attacks on the registry's authentication, over a real loopback socket
//! served by the registry's own server loop (`http::server::serve`):
//! bodies sent before authentication, slow request heads, failed-token
//! floods, and the token lifecycle (revocation, expiry, admin token file
//! rotation, agent deletion). Runs on the backend the environment names,
//! as `api.rs` does (SQLite + a folder when unset).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};
use skilldeck_registry::{Registry, RegistryConfig, RegistryLimits, ServerLimits};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use crate::common::{TestBackend, test_backend};

/// An upper bound for an event that should come at once: only there so a
/// regression fails instead of hanging; never a measure of speed.
const EVENT_BOUND: Duration = Duration::from_secs(60);
/// What an attacker claims to send.
const CLAIMED_BODY: usize = 20 * 1024 * 1024;

struct Env {
    addr: std::net::SocketAddr,
    client: reqwest::Client,
    admin: String,
    token_file: std::path::PathBuf,
    config: RegistryConfig,
    registry: Registry,
    /// Last: dropped after the registry (the test database goes with it).
    _backend: TestBackend,
}

async fn env_with(limits: RegistryLimits, server: ServerLimits) -> Env {
    let backend = test_backend().await;
    let tmp = &backend.tmp;
    let config = RegistryConfig {
        database_url: backend.database_url.clone(),
        store_url: backend.store_url.clone(),
        staging_dir: tmp.path().join("staging"),
        limits,
        trust: Default::default(),
        report: Default::default(),
    };
    let registry = Registry::open(config.clone()).await.unwrap();
    let token_file = tmp.path().join("admin-token");
    registry.ensure_admin_token(&token_file).await.unwrap();
    let admin = std::fs::read_to_string(&token_file)
        .unwrap()
        .trim()
        .to_owned();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = skilldeck_registry::http::api_router(registry.clone());
    tokio::spawn(skilldeck_registry::http::serve(
        listener,
        app,
        server,
        std::future::pending(),
    ));
    Env {
        addr,
        client: reqwest::Client::new(),
        admin,
        token_file,
        config,
        registry,
        _backend: backend,
    }
}

async fn env() -> Env {
    env_with(RegistryLimits::default(), ServerLimits::default()).await
}

impl Env {
    fn url(&self, path: &str) -> String {
        format!("http://{}/api/v1{path}", self.addr)
    }

    async fn get_as(&self, token: &str, path: &str) -> reqwest::Response {
        self.client
            .get(self.url(path))
            .bearer_auth(token)
            .send()
            .await
            .unwrap()
    }

    async fn json_as(
        &self,
        token: &str,
        method: reqwest::Method,
        path: &str,
        body: Value,
    ) -> reqwest::Response {
        self.client
            .request(method, self.url(path))
            .bearer_auth(token)
            .json(&body)
            .send()
            .await
            .unwrap()
    }

    async fn token(&self, body: Value) -> Value {
        let r = self
            .json_as(&self.admin, reqwest::Method::POST, "/tokens", body)
            .await;
        assert_eq!(r.status(), StatusCode::CREATED);
        r.json().await.unwrap()
    }

    async fn revoke(&self, as_token: &str, id: &str) -> reqwest::Response {
        self.client
            .delete(self.url(&format!("/tokens/{id}")))
            .bearer_auth(as_token)
            .send()
            .await
            .unwrap()
    }

    /// Sends `head` (and `first_bytes` of the body) on a raw connection
    /// and reads the answer's status line, without sending the rest.
    async fn status_before_body(&self, head: &str, first_bytes: &[u8]) -> String {
        let mut conn = tokio::net::TcpStream::connect(self.addr).await.unwrap();
        conn.write_all(head.as_bytes()).await.unwrap();
        conn.write_all(first_bytes).await.unwrap();
        let mut got = Vec::new();
        let read = async {
            let mut buf = [0u8; 1024];
            while !got.windows(2).any(|w| w == b"\r\n") {
                let n = conn.read(&mut buf).await.unwrap();
                if n == 0 {
                    break;
                }
                got.extend_from_slice(&buf[..n]);
            }
        };
        tokio::time::timeout(EVENT_BOUND, read)
            .await
            .expect("the server answered only after the whole body (or never)");
        let text = String::from_utf8_lossy(&got).into_owned();
        text.lines().next().unwrap_or_default().to_owned()
    }
}

async fn problem(r: reqwest::Response, status: StatusCode) -> Value {
    assert_eq!(r.status(), status);
    r.json().await.unwrap()
}

fn publish_head(token: Option<&str>, namespace: &str) -> String {
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    format!(
        "POST /api/v1/skills?namespace={namespace} HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/gzip\r\nContent-Length: {CLAIMED_BODY}\r\n\r\n"
    )
}

#[tokio::test]
async fn an_anonymous_publish_is_refused_before_its_body_is_read() {
    let env = env().await;
    let status = env
        .status_before_body(&publish_head(None, "acme"), &[0x1f, 0x8b, 0, 0])
        .await;
    assert!(status.contains(" 401 "), "{status}");
    let status = env
        .status_before_body(&publish_head(Some("sdk_not-a-real-token"), "acme"), b"x")
        .await;
    assert!(status.contains(" 401 "), "{status}");
}

#[tokio::test]
async fn a_publish_into_a_namespace_the_token_may_not_use_is_refused_before_its_body() {
    let env = env().await;
    let created = env
        .token(json!({"name": "pub-a", "scopes": ["publish:a"]}))
        .await;
    let token = created["token"].as_str().unwrap();
    let status = env
        .status_before_body(&publish_head(Some(token), "b"), &[0x1f, 0x8b])
        .await;
    assert!(status.contains(" 403 "), "{status}");
}

#[tokio::test]
async fn an_anonymous_json_body_is_refused_before_it_is_read() {
    let env = env().await;
    let head = "POST /api/v1/skills/acme/demo/versions/1.0.0/yank HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 60000\r\n\r\n";
    let status = env.status_before_body(head, b"{\"reason\":").await;
    assert!(status.contains(" 401 "), "{status}");
}

/// Reads until the server closes the connection; true when it did.
async fn closed_by_server(conn: &mut tokio::net::TcpStream) -> bool {
    let wait = async {
        let mut buf = [0u8; 1024];
        loop {
            match conn.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    };
    tokio::time::timeout(EVENT_BOUND, wait).await.is_ok()
}

#[tokio::test]
async fn a_client_that_never_finishes_its_request_head_is_disconnected() {
    let env = env_with(
        RegistryLimits::default(),
        ServerLimits {
            header_read_timeout: Duration::from_secs(1),
            ..ServerLimits::default()
        },
    )
    .await;
    let mut conn = tokio::net::TcpStream::connect(env.addr).await.unwrap();
    conn.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        .await
        .unwrap();
    assert!(
        closed_by_server(&mut conn).await,
        "a half-sent request head held its connection open"
    );
}

#[tokio::test]
async fn a_body_that_stops_arriving_fails_its_request_and_frees_the_connection() {
    let env = env_with(
        RegistryLimits::default(),
        ServerLimits {
            body_read_timeout: Duration::from_secs(1),
            ..ServerLimits::default()
        },
    )
    .await;
    let mut conn = tokio::net::TcpStream::connect(env.addr).await.unwrap();
    let head = publish_head(Some(&env.admin), "acme").replace(
        &format!("Content-Length: {CLAIMED_BODY}"),
        "Content-Length: 1000",
    );
    conn.write_all(head.as_bytes()).await.unwrap();
    conn.write_all(&[0x1f, 0x8b]).await.unwrap();
    let mut answer = Vec::new();
    let wait = async {
        let mut buf = [0u8; 4096];
        loop {
            match conn.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => answer.extend_from_slice(&buf[..n]),
            }
        }
    };
    assert!(
        tokio::time::timeout(EVENT_BOUND, wait).await.is_ok(),
        "a stalled body held its connection open"
    );
    let text = String::from_utf8_lossy(&answer);
    assert!(text.starts_with("HTTP/1.1 400"), "{text}");
}

#[tokio::test]
async fn failed_tokens_from_one_client_are_throttled_but_a_good_token_still_works() {
    let limits = RegistryLimits {
        max_failed_auth: 5,
        ..RegistryLimits::default()
    };
    let env = env_with(limits, ServerLimits::default()).await;
    for i in 0..5 {
        // A different token each time: the client's address is what
        // is counted.
        let r = env.get_as(&format!("sdk_guess{i:03}xyz"), "/skills").await;
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED, "attempt {i}");
    }
    let r = env.get_as("sdk_guess999xyz", "/skills").await;
    assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
    let retry: u64 = r.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(retry >= 1);
    let p: Value = r.json().await.unwrap();
    assert_eq!(p["code"], "registry-too-many-attempts");
    // The throttle never refuses a valid token.
    let r = env.get_as(&env.admin, "/skills").await;
    assert_eq!(r.status(), StatusCode::OK);
}

#[tokio::test]
async fn a_revoked_token_is_refused_at_once_with_a_problem_saying_so() {
    let env = env().await;
    let created = env
        .token(json!({"name": "ci", "scopes": ["publish:acme"]}))
        .await;
    let token = created["token"].as_str().unwrap();
    let id = created["id"].as_str().unwrap();
    // Used once: now in the token cache.
    assert_eq!(env.get_as(token, "/skills").await.status(), StatusCode::OK);
    let r = env.revoke(&env.admin, id).await;
    assert_eq!(r.status(), StatusCode::OK);
    let info: Value = r.json().await.unwrap();
    assert_eq!(info["status"], "revoked");
    assert!(info["revoked_at"].is_string());
    let p = problem(env.get_as(token, "/skills").await, StatusCode::UNAUTHORIZED).await;
    assert!(p["detail"].as_str().unwrap().contains("revoked"), "{p}");
    // Revoking again changes nothing; an unknown id is 404.
    assert_eq!(env.revoke(&env.admin, id).await.status(), StatusCode::OK);
    assert_eq!(
        env.revoke(&env.admin, "tok_nope").await.status(),
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn only_an_admin_revokes_another_token_and_a_token_may_revoke_itself() {
    let env = env().await;
    let a = env.token(json!({"scopes": ["publish:a"]})).await;
    let b = env.token(json!({"scopes": ["publish:b"]})).await;
    let (a_token, b_id) = (a["token"].as_str().unwrap(), b["id"].as_str().unwrap());
    problem(env.revoke(a_token, b_id).await, StatusCode::FORBIDDEN).await;
    let r = env.revoke(a_token, a["id"].as_str().unwrap()).await;
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(
        env.get_as(a_token, "/skills").await.status(),
        StatusCode::UNAUTHORIZED
    );
    let b_token = b["token"].as_str().unwrap();
    assert_eq!(
        env.get_as(b_token, "/skills").await.status(),
        StatusCode::OK
    );
}

#[tokio::test]
async fn an_expired_token_is_refused_with_a_problem_saying_so() {
    let env = env().await;
    let lasting = env
        .token(json!({"scopes": ["publish:a"], "expires_in_seconds": 3600}))
        .await;
    assert!(lasting["expires_at"].is_string());
    assert_eq!(
        env.get_as(lasting["token"].as_str().unwrap(), "/skills")
            .await
            .status(),
        StatusCode::OK
    );
    let brief = env
        .token(json!({"scopes": ["publish:a"], "expires_in_seconds": 1}))
        .await;
    let token = brief["token"].as_str().unwrap();
    // Wait for the refusal (the expiry passing), bounded.
    let refused = async {
        loop {
            let r = env.get_as(token, "/skills").await;
            if r.status() != StatusCode::OK {
                return r;
            }
            tokio::task::yield_now().await;
        }
    };
    let r = tokio::time::timeout(EVENT_BOUND, refused)
        .await
        .expect("a 1-second token still worked");
    let p = problem(r, StatusCode::UNAUTHORIZED).await;
    assert!(p["detail"].as_str().unwrap().contains("expired"), "{p}");
    let list: Value = env
        .get_as(&env.admin, "/tokens")
        .await
        .json()
        .await
        .unwrap();
    let row = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == brief["id"])
        .unwrap();
    assert_eq!(row["status"], "expired");
    // An expiry of zero or past ten years is refused.
    for bad in [0u64, 20 * 366 * 86_400] {
        let r = env
            .json_as(
                &env.admin,
                reqwest::Method::POST,
                "/tokens",
                json!({"scopes": ["admin"], "expires_in_seconds": bad}),
            )
            .await;
        let p = problem(r, StatusCode::BAD_REQUEST).await;
        assert_eq!(p["code"], "registry-invalid-expiry");
    }
}

#[tokio::test]
async fn tokens_are_listed_without_secrets_or_hashes() {
    let env = env().await;
    let created = env
        .token(json!({"name": "lister", "scopes": ["publish:a"]}))
        .await;
    let secret = created["token"].as_str().unwrap();
    env.get_as(secret, "/skills").await;
    let r = env.get_as(&env.admin, "/tokens").await;
    assert_eq!(r.status(), StatusCode::OK);
    let text = r.text().await.unwrap();
    assert!(!text.contains(secret) && !text.contains(&env.admin));
    for t in [secret, env.admin.as_str()] {
        let hash = skilldeck::sha256_digest(t.as_bytes());
        let hex = hash.strip_prefix(skilldeck::DIGEST_PREFIX).unwrap();
        assert!(!text.contains(hex), "a token hash is listed");
    }
    let list: Value = serde_json::from_str(&text).unwrap();
    let items = list["items"].as_array().unwrap();
    assert_eq!(items.len(), 2, "{list}");
    let admin_row = items.iter().find(|t| t["source"] == "admin-file").unwrap();
    assert_eq!(admin_row["status"], "active");
    let row = items.iter().find(|t| t["id"] == created["id"]).unwrap();
    assert_eq!(row["name"], "lister");
    assert_eq!(row["scopes"], json!(["publish:a"]));
    assert!(row["created_at"].is_string() && row["last_used_at"].is_string());
    // Another token sees only itself.
    let own: Value = env.get_as(secret, "/tokens").await.json().await.unwrap();
    assert_eq!(own["items"].as_array().unwrap().len(), 1);
    assert_eq!(own["items"][0]["id"], created["id"]);
}

#[tokio::test]
async fn replacing_the_admin_token_file_revokes_the_old_admin_token() {
    let env = env().await;
    let old = env.admin.clone();
    assert_eq!(env.get_as(&old, "/tokens").await.status(), StatusCode::OK);
    // The operator replaces the file and restarts (a second registry on
    // the same database stands in for the restarted process).
    let new = "sdk_rotated-admin-token-0123456789abcdefghijklmnop";
    std::fs::write(&env.token_file, format!("{new}\n")).unwrap();
    let restarted = Registry::open(env.config.clone()).await.unwrap();
    restarted.ensure_admin_token(&env.token_file).await.unwrap();
    // The restarted process refuses the old token, saying why.
    let e = restarted.authenticate(&old, None).await.unwrap_err();
    assert!(e.to_string().contains("revoked"), "{e}");
    restarted.authenticate(new, None).await.unwrap();
    // A replica still holding the old file refuses to start rather than
    // bring the old token back.
    let stale = env._backend.tmp.path().join("old-admin-token");
    std::fs::write(&stale, format!("{old}\n")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&stale, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let e = restarted.ensure_admin_token(&stale).await.unwrap_err();
    assert!(e.to_string().contains("revoked"), "{e}");
    // Starting again with the current file is fine (and revokes nothing).
    restarted.ensure_admin_token(&env.token_file).await.unwrap();
    restarted.authenticate(new, None).await.unwrap();
}

#[tokio::test]
async fn deleting_an_agent_revokes_every_token_scoped_to_it_whatever_its_scope_text() {
    let env = env().await;
    let r = env
        .json_as(
            &env.admin,
            reqwest::Method::POST,
            "/agents",
            json!({"id": "gone", "name": "Gone"}),
        )
        .await;
    assert_eq!(r.status(), StatusCode::CREATED);
    let plain = env.token(json!({"scopes": ["agent:gone"]})).await;
    let mixed = env
        .token(json!({"scopes": ["publish:x", "agent:gone"]}))
        .await;
    let other = env.token(json!({"scopes": ["publish:x"]})).await;
    for t in [&plain, &mixed] {
        let token = t["token"].as_str().unwrap();
        assert_eq!(
            env.get_as(token, "/agents/gone").await.status(),
            StatusCode::OK
        );
    }
    let r = env
        .client
        .delete(env.url("/agents/gone"))
        .bearer_auth(&env.admin)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::NO_CONTENT);
    for t in [&plain, &mixed] {
        let token = t["token"].as_str().unwrap();
        let p = problem(env.get_as(token, "/skills").await, StatusCode::UNAUTHORIZED).await;
        assert!(p["detail"].as_str().unwrap().contains("revoked"), "{p}");
    }
    let token = other["token"].as_str().unwrap();
    assert_eq!(env.get_as(token, "/skills").await.status(), StatusCode::OK);
    // The registry that served all this agrees (same process).
    env.registry
        .authenticate(other["token"].as_str().unwrap(), None)
        .await
        .unwrap();
}
