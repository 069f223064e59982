//! The registry's telemetry over a real loopback socket served by the
//! registry's own server loop (`http::serve`): the request log line (its
//! fields, never a token, never a path's ids), `/metrics` in the
//! Prometheus text format (admin only on the public listener; without a
//! token on the private metrics router), and what it counts.
//! The OTLP export of the request spans is checked against a real
//! receiver by `scripts/test-otel.sh`.
//!
//! Each test runs alone in a process of its own: it installs the process's
//! global `tracing` subscriber, which would capture the other modules'
//! requests, and which a callsite the other tests' threads reach first
//! could miss.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write as _;
use std::sync::{Arc, Mutex, OnceLock};

use reqwest::StatusCode;
use serde_json::{Value, json};
use skilldeck_registry::{Registry, RegistryConfig, RegistryLimits, ServerLimits};
use skilldeck_testkit::process::in_own_process;

/// The log lines of this process (one JSON object per line).
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

/// Installs the process's subscriber once (the server's tasks run on the
/// runtime's worker threads: a thread-local default would miss them).
fn logs() -> &'static Captured {
    static LOGS: OnceLock<Captured> = OnceLock::new();
    LOGS.get_or_init(|| {
        let captured = Captured::default();
        let writer = captured.clone();
        tracing_subscriber::fmt()
            .json()
            .with_current_span(true)
            .with_span_list(false)
            .with_env_filter(tracing_subscriber::EnvFilter::new("info"))
            .with_writer(move || writer.clone())
            .init();
        captured
    })
}

struct Env {
    base: String,
    client: reqwest::Client,
    admin: String,
    _tmp: tempfile::TempDir,
}

async fn env() -> Env {
    logs();
    let tmp = tempfile::tempdir().unwrap();
    let config = RegistryConfig {
        database_url: format!(
            "sqlite://{}?mode=rwc",
            tmp.path().join("registry.db").display()
        ),
        store_url: format!("file://{}", tmp.path().join("blobs").display()),
        staging_dir: tmp.path().join("staging"),
        limits: RegistryLimits::default(),
        trust: Default::default(),
        report: Default::default(),
    };
    let registry = Registry::open(config).await.unwrap();
    let token_file = tmp.path().join("admin-token");
    registry.ensure_admin_token(&token_file).await.unwrap();
    let admin = std::fs::read_to_string(&token_file)
        .unwrap()
        .trim()
        .to_owned();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(skilldeck_registry::http::serve(
        listener,
        skilldeck_registry::http::api_router(registry),
        ServerLimits::default(),
        std::future::pending(),
    ));
    Env {
        base: format!("http://{addr}"),
        client: reqwest::Client::new(),
        admin,
        _tmp: tmp,
    }
}

impl Env {
    async fn token(&self, scopes: &[&str]) -> String {
        let r = self
            .client
            .post(format!("{}/api/v1/tokens", self.base))
            .bearer_auth(&self.admin)
            .json(&json!({"name": "t", "scopes": scopes}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::CREATED);
        let v: Value = r.json().await.unwrap();
        v["token"].as_str().unwrap().to_owned()
    }

    async fn metrics(&self, token: Option<&str>) -> reqwest::Response {
        let mut r = self.client.get(format!("{}/metrics", self.base));
        if let Some(t) = token {
            r = r.bearer_auth(t);
        }
        r.send().await.unwrap()
    }
}

fn package(name: &str) -> Vec<u8> {
    let tmp = tempfile::tempdir().unwrap();
    let dir = skilldeck_testkit::skill(tmp.path(), name)
        .description(format!("Does {name} things. Use when testing."))
        .body(format!("# {name}\n\nInstructions for {name}.\n"))
        .write();
    skilldeck_package::pack(&dir, &skilldeck_package::PackOptions::default())
        .unwrap()
        .bytes
}

/// The log lines (JSON) whose span carries `trace_id`.
fn lines_of_trace(trace_id: &str) -> Vec<Value> {
    logs()
        .text()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["span"]["trace_id"] == trace_id)
        .collect()
}

#[tokio::test]
async fn each_request_logs_one_line_with_route_status_duration_and_principal_kind_never_the_token()
{
    if !in_own_process(
        "telemetry::each_request_logs_one_line_with_route_status_duration_and_principal_kind_never_the_token",
        &[],
    ) {
        return;
    }
    let env = env().await;
    let publisher = env.token(&["publish:acme"]).await;
    let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    // A token in the header and in the query, ids in the path: none of
    // them may reach the log.
    let r = env
        .client
        .get(format!(
            "{}/api/v1/skills/acme/secret-skill-name?token={publisher}",
            env.base
        ))
        .bearer_auth(&publisher)
        .header("traceparent", format!("00-{trace}-00f067aa0ba902b7-01"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    let anonymous = "0af7651916cd43dd8448eb211c80319c";
    let r = env
        .client
        .get(format!("{}/api/v1/agents", env.base))
        .header("traceparent", format!("00-{anonymous}-b7ad6b7169203331-01"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    let refused = "1af7651916cd43dd8448eb211c80319d";
    let r = env
        .client
        .get(format!("{}/api/v1/agents", env.base))
        .bearer_auth("skd_not-a-real-token-at-all")
        .header("traceparent", format!("00-{refused}-b7ad6b7169203331-01"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);

    // The line is written before the response is sent.
    let lines = lines_of_trace(trace);
    assert_eq!(lines.len(), 1, "one line per request: {lines:?}");
    let f = &lines[0]["fields"];
    assert_eq!(lines[0]["target"], "skilldeck::registry::request");
    assert_eq!(lines[0]["level"], "INFO");
    assert_eq!(f["method"], "GET");
    assert_eq!(f["route"], "/api/v1/skills/{namespace}/{name}");
    assert_eq!(f["status"], 404);
    assert_eq!(f["principal"], "publisher");
    assert!(f["duration_ms"].as_f64().unwrap() >= 0.0, "{f}");
    let line = lines_of_trace(anonymous);
    assert_eq!(line.len(), 1, "{line:?}");
    assert_eq!(line[0]["fields"]["principal"], "anonymous");
    assert_eq!(line[0]["fields"]["status"], 401);
    let line = lines_of_trace(refused);
    assert_eq!(line[0]["fields"]["principal"], "invalid");

    let all = logs().text();
    for secret in [&publisher, &env.admin] {
        assert!(!all.contains(secret.as_str()), "a token in the log:\n{all}");
    }
    assert!(
        !all.contains("secret-skill-name"),
        "a path in the log:\n{all}"
    );
}

/// Checks `text` line by line against the Prometheus text format 0.0.4:
/// `# HELP`/`# TYPE` lines, then samples `name{label="value",...} value`
/// of a declared family. Returns the samples.
fn parse_prometheus(text: &str) -> Vec<(String, String, f64)> {
    let name = r"[a-zA-Z_:][a-zA-Z0-9_:]*";
    let help = regex::Regex::new(&format!(r"^# HELP ({name}) \S.*$")).unwrap();
    let kind = regex::Regex::new(&format!(
        r"^# TYPE ({name}) (counter|gauge|histogram|summary|untyped)$"
    ))
    .unwrap();
    let label = r#"[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*""#;
    let sample = regex::Regex::new(&format!(
        r"^({name})(\{{(?:{label})(?:,{label})*\}})? (\S+)$"
    ))
    .unwrap();
    let mut families: Vec<(String, String)> = Vec::new();
    let mut samples = Vec::new();
    // Empty is a valid exposition: the first scrape of a process that has
    // counted nothing yet (labelled families have no sample until then).
    assert!(
        text.is_empty() || text.ends_with('\n'),
        "the text ends with a newline"
    );
    for line in text.lines() {
        if let Some(c) = help.captures(line) {
            assert!(c.get(1).is_some());
        } else if let Some(c) = kind.captures(line) {
            families.push((c[1].to_owned(), c[2].to_owned()));
        } else if let Some(c) = sample.captures(line) {
            let metric = c[1].to_owned();
            let value = &c[3];
            let parsed: f64 = match value {
                "+Inf" => f64::INFINITY,
                "-Inf" => f64::NEG_INFINITY,
                v => v
                    .parse()
                    .unwrap_or_else(|_| panic!("not a number in {line:?}")),
            };
            let declared = families.iter().any(|(f, k)| {
                let rest = metric.strip_prefix(f.as_str());
                matches!(
                    (k.as_str(), rest),
                    (_, Some("")) | ("histogram", Some("_bucket" | "_sum" | "_count"))
                )
            });
            assert!(declared, "{line:?}: a sample of no declared family");
            samples.push((
                metric,
                c.get(2).map_or(String::new(), |l| l.as_str().to_owned()),
                parsed,
            ));
        } else {
            panic!("not Prometheus text: {line:?}");
        }
    }
    samples
}

fn value(samples: &[(String, String, f64)], metric: &str, labels: &[&str]) -> f64 {
    samples
        .iter()
        .filter(|(m, l, _)| m == metric && labels.iter().all(|x| l.contains(x)))
        .map(|(_, _, v)| v)
        .sum()
}

#[tokio::test]
async fn metrics_parse_as_prometheus_text_and_count_publishes_requests_and_cache_lookups() {
    if !in_own_process(
        "telemetry::metrics_parse_as_prometheus_text_and_count_publishes_requests_and_cache_lookups",
        &[],
    ) {
        return;
    }
    let env = env().await;
    let r = env
        .client
        .post(format!(
            "{}/api/v1/skills?namespace=acme&version=1.0.0",
            env.base
        ))
        .bearer_auth(&env.admin)
        .header("content-type", "application/gzip")
        .body(package("counted"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::CREATED);
    let r = env.metrics(Some(&env.admin)).await;
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(
        r.headers()["content-type"],
        "text/plain; version=0.0.4; charset=utf-8"
    );
    let samples = parse_prometheus(&r.text().await.unwrap());
    assert!(
        value(
            &samples,
            "skilldeck_registry_publishes_total",
            &[r#"outcome="created""#]
        ) >= 1.0
    );
    assert!(
        value(
            &samples,
            "skilldeck_registry_http_requests_total",
            &[
                r#"method="POST""#,
                r#"route="/api/v1/skills""#,
                r#"status_class="2xx""#
            ]
        ) >= 1.0
    );
    assert!(
        value(
            &samples,
            "skilldeck_registry_http_request_duration_seconds_count",
            &[r#"route="/api/v1/skills""#]
        ) >= 1.0
    );
    // The admin token was verified, then found in the auth cache.
    assert!(
        value(
            &samples,
            "skilldeck_registry_cache_lookups_total",
            &[r#"cache="auth""#]
        ) >= 1.0
    );
    // A scanner's paths are one label value, not one each.
    for path in ["/wp-admin/a1", "/wp-admin/a2", "/api/v1/x/y/z"] {
        env.client
            .get(format!("{}{path}", env.base))
            .send()
            .await
            .unwrap();
    }
    let text = env.metrics(Some(&env.admin)).await.text().await.unwrap();
    assert!(!text.contains("wp-admin"), "{text}");
    assert!(text.contains(r#"route="unmatched""#), "{text}");
}

#[tokio::test]
async fn the_public_metrics_need_an_admin_token() {
    if !in_own_process("telemetry::the_public_metrics_need_an_admin_token", &[]) {
        return;
    }
    let env = env().await;
    assert_eq!(env.metrics(None).await.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        env.metrics(Some("skd_forged")).await.status(),
        StatusCode::UNAUTHORIZED
    );
    for scopes in [
        &["publish:acme"][..],
        &["review:acme"],
        &["read:acme"],
        &["agent:bot"],
    ] {
        if scopes[0].starts_with("agent:") {
            let r = env
                .client
                .post(format!("{}/api/v1/agents", env.base))
                .bearer_auth(&env.admin)
                .json(&json!({"id": "bot", "name": "Bot"}))
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), StatusCode::CREATED);
        }
        let token = env.token(scopes).await;
        let r = env.metrics(Some(&token)).await;
        assert_eq!(r.status(), StatusCode::FORBIDDEN, "{scopes:?}");
        assert!(!r.text().await.unwrap().contains("skilldeck_registry_"));
    }
    assert_eq!(env.metrics(Some(&env.admin)).await.status(), StatusCode::OK);
}

#[tokio::test]
async fn the_private_metrics_router_serves_them_without_a_token() {
    if !in_own_process(
        "telemetry::the_private_metrics_router_serves_them_without_a_token",
        &[],
    ) {
        return;
    }
    logs();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(skilldeck_registry::http::serve(
        listener,
        skilldeck_registry::http::metrics_router(),
        ServerLimits::default(),
        std::future::pending(),
    ));
    let r = reqwest::get(format!("http://{addr}/metrics"))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let samples = parse_prometheus(&r.text().await.unwrap());
    // Its own first request is counted once the next scrape comes.
    let r = reqwest::get(format!("http://{addr}/metrics"))
        .await
        .unwrap();
    let samples_after = parse_prometheus(&r.text().await.unwrap());
    assert!(
        value(
            &samples_after,
            "skilldeck_registry_http_requests_total",
            &[r#"route="/metrics""#]
        ) > value(
            &samples,
            "skilldeck_registry_http_requests_total",
            &[r#"route="/metrics""#]
        )
    );
    // Nothing else is served there.
    let r = reqwest::get(format!("http://{addr}/api/v1/agents"))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    let _ = std::io::stderr().flush();
}
