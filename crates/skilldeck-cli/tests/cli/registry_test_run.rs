//! Test runs from the registry (`POST .../versions/{version}/test-run`)
//! against `skilldeck registry serve` as a process: the registry service
//! composed with the host layer's sandbox runner, on SQLite and a local
//! blob folder, over loopback HTTP. Each test attacks one rule: who may
//! run, the rate per token, the strict policy (no network), the argument
//! check before anything runs, and the audit line of every run.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};
use skilldeck_registry::client::{Client, Token};
use skilldeck_registry::names::{AgentId, Namespace};
use skilldeck_registry::wire::TokenRequest;
use skilldeck_testkit::registry::RegistryProcess;

/// A registry process on a free loopback port, stopped when dropped.
struct Server {
    process: RegistryProcess,
    addr: String,
    admin: String,
    _data: tempfile::TempDir,
}

fn serve(extra: &[&str]) -> Server {
    let data = tempfile::tempdir().unwrap();
    let process = RegistryProcess::start(env!("CARGO_BIN_EXE_skilldeck"), data.path(), extra);
    Server {
        addr: process.addr.clone(),
        admin: process.admin_token(),
        process,
        _data: data,
    }
}

impl Server {
    fn client(&self, token: &str) -> Client {
        Client::new(&format!("http://{}", self.addr), Token::new(token)).unwrap()
    }

    /// A token with `scopes`, made by the admin.
    fn token(&self, name: &str, scopes: &[&str]) -> String {
        self.client(&self.admin)
            .create_token(&TokenRequest {
                name: Some(name.to_owned()),
                scopes: scopes.iter().map(|s| (*s).to_owned()).collect(),
                expires_in_seconds: None,
            })
            .unwrap()
            .token
    }

    /// One HTTP request: the status, the headers (lowercase names) and the
    /// body as JSON (`Null` when it is not JSON).
    fn call(
        &self,
        method: &str,
        path: &str,
        token: &str,
        body: Option<&Value>,
    ) -> (u16, Vec<(String, String)>, Value) {
        let body = body.map(Value::to_string);
        let answer = self
            .process
            .http(method, path, Some(token), body.as_deref());
        let json = answer.json();
        (answer.status, answer.headers, json)
    }

    fn test_run(
        &self,
        token: &str,
        version: &str,
        body: &Value,
    ) -> (u16, Vec<(String, String)>, Value) {
        self.call(
            "POST",
            &format!("/api/v1/skills/acme/weather/versions/{version}/test-run"),
            token,
            Some(body),
        )
    }

    /// The audit entries with action `test-run`, newest first.
    fn test_run_audit(&self) -> Vec<Value> {
        let (status, _, page) = self.call("GET", "/api/v1/audit", &self.admin, None);
        assert_eq!(status, 200, "{page}");
        page["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["action"] == "test-run")
            .cloned()
            .collect()
    }
}

/// The skill every test publishes as `acme/weather@1.0.0`: a tool
/// `forecast` (a required city, a whole number of days) whose script
/// answers JSON, and a script that tries to connect to an address.
fn weather_skill(root: &Path) -> std::path::PathBuf {
    let dir = root.join("weather");
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: weather\ndescription: Forecasts the weather for a city. Use when asked about the weather.\n\
         tools:\n  - name: forecast\n    description: The forecast of a city.\n    parameters:\n      \
         city: {type: string, description: The city, required: true}\n      \
         days: {type: integer, description: How many days}\n    run: scripts/forecast.py\n---\n\n# Weather\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("scripts/forecast.py"),
        "import json, sys\nargs = json.load(sys.stdin)\n\
         print(json.dumps({\"city\": args[\"city\"], \"days\": args.get(\"days\", 1), \"sky\": \"sunny\"}))\n\
         print(\"forecast made\", file=sys.stderr)\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("scripts/connect.py"),
        "import socket, sys\nhost, port = sys.argv[1].rsplit(':', 1)\n\
         try:\n    socket.create_connection((host, int(port)), timeout=5).close()\n    print('connected')\n\
         except OSError as e:\n    print('refused: %s' % e)\n    sys.exit(3)\n",
    )
    .unwrap();
    dir
}

/// A server with `acme/weather@1.0.0` published by the admin.
fn server_with_weather(extra: &[&str]) -> Server {
    let server = serve(extra);
    let tmp = tempfile::tempdir().unwrap();
    let dir = weather_skill(tmp.path());
    // Packed as a host loads skills (lenient: `tools` is skilldeck's
    // extension of the frontmatter), as the registry validates a publish.
    let options = skilldeck_package::PackOptions {
        validation: skilldeck_package::UnpackOptions::default().validation,
        ..skilldeck_package::PackOptions::default()
    };
    let packed = skilldeck_package::pack(&dir, &options).unwrap();
    server
        .client(&server.admin)
        .publish(
            &Namespace::new("acme").unwrap(),
            Some("1.0.0"),
            packed.bytes,
            None,
        )
        .unwrap();
    server
}

#[test]
fn a_publisher_test_runs_a_published_tool_and_gets_its_structured_output_under_the_strict_policy() {
    let server = server_with_weather(&[]);
    let publisher = server.token("ci", &["publish:acme"]);
    let (status, _, result) = server.test_run(
        &publisher,
        "latest",
        &json!({"tool": "forecast", "arguments": {"city": "Oslo", "days": 3}}),
    );
    assert_eq!(status, 200, "{result}");
    assert_eq!(result["version"], "1.0.0", "the label resolved");
    assert_eq!(result["tool"], "forecast");
    let outcome = &result["outcome"];
    assert_eq!(outcome["exit_code"], 0, "{outcome}");
    assert_eq!(outcome["success"], true);
    assert_eq!(
        outcome["structured"],
        json!({"city": "Oslo", "days": 3, "sky": "sunny"})
    );
    assert!(
        outcome["stderr"]
            .as_str()
            .unwrap()
            .contains("forecast made")
    );
    assert!(outcome["duration_ms"].is_u64());
    let policy = &outcome["policy"];
    assert_eq!(policy["network"], false);
    assert_ne!(policy["profile"], "none", "{policy}");
    assert_eq!(
        policy["timeout_secs"],
        skilldeck_registry::TestRunLimits::default()
            .timeout
            .as_secs()
    );
    assert!(
        policy["layers"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l == "network-namespace"),
        "{policy}"
    );

    // What the UI's form is generated from.
    let (status, _, targets) = server.call(
        "GET",
        "/api/v1/skills/acme/weather/versions/1.0.0/test-run",
        &publisher,
        None,
    );
    assert_eq!(status, 200, "{targets}");
    assert_eq!(targets["tools"][0]["name"], "forecast");
    assert_eq!(
        targets["tools"][0]["input_schema"]["properties"]["days"]["type"],
        "integer"
    );
    assert_eq!(
        targets["scripts"],
        json!(["scripts/connect.py", "scripts/forecast.py"])
    );
}

#[test]
fn invalid_tool_arguments_are_refused_with_their_json_pointer_before_anything_runs() {
    let server = server_with_weather(&[]);
    let (status, _, problem) = server.test_run(
        &server.admin,
        "1.0.0",
        &json!({"tool": "forecast", "arguments": {"city": "Oslo", "days": "three"}}),
    );
    assert_eq!(status, 422, "{problem}");
    assert_eq!(problem["code"], "registry-test-run-invalid-arguments");
    assert_eq!(problem["pointer"], "/days");
    let (status, _, problem) = server.test_run(
        &server.admin,
        "1.0.0",
        &json!({"tool": "forecast", "arguments": {}}),
    );
    assert_eq!(status, 422, "{problem}");
    assert_eq!(problem["code"], "registry-test-run-invalid-arguments");
    // Nothing ran: the audit lines record refusals, never an exit.
    let audit = server.test_run_audit();
    assert_eq!(audit.len(), 2, "{audit:?}");
    for entry in &audit {
        assert_eq!(
            entry["detail"]["refused"], "registry-test-run-invalid-arguments",
            "{entry}"
        );
        assert!(entry["detail"].get("exit_code").is_none(), "{entry}");
    }
    let (status, _, problem) = server.test_run(&server.admin, "1.0.0", &json!({"tool": "nowcast"}));
    assert_eq!(status, 422, "{problem}");
    assert_eq!(problem["code"], "registry-test-run-unknown-tool");
    assert!(problem["detail"].as_str().unwrap().contains("forecast"));
}

#[test]
fn only_admin_or_publish_scope_on_the_namespace_may_test_run() {
    let server = server_with_weather(&[]);
    let other = server.token("other-team", &["publish:other"]);
    let reviewer = server.token("reviewer", &["review:acme"]);
    server
        .client(&server.admin)
        .create_agent(&skilldeck_registry::wire::AgentSpec {
            id: AgentId::new("bot-1").unwrap(),
            name: "bot".into(),
            capabilities: Vec::new(),
            auto_discover: true,
            allowed_patterns: Vec::new(),
            denied_patterns: Vec::new(),
            max_concurrent_executions: None,
            execution_timeout_secs: None,
            budget_tokens: None,
            run_code: false,
        })
        .unwrap();
    let agent = server.token("bot", &["agent:bot-1"]);
    let body = json!({"tool": "forecast", "arguments": {"city": "Oslo"}});
    for token in [&other, &reviewer, &agent] {
        let (status, _, problem) = server.test_run(token, "1.0.0", &body);
        assert_eq!(status, 403, "{problem}");
        assert_eq!(problem["code"], "registry-forbidden");
        let (status, _, _) = server.call(
            "GET",
            "/api/v1/skills/acme/weather/versions/1.0.0/test-run",
            token,
            None,
        );
        assert_eq!(status, 403);
    }
    let (status, _, problem) = server.test_run("sdk_not-a-token", "1.0.0", &body);
    assert_eq!(status, 401, "{problem}");
    assert!(
        server.test_run_audit().is_empty(),
        "a refused caller ran nothing"
    );
}

#[test]
fn test_runs_past_the_per_token_rate_are_refused_with_retry_after() {
    let server = server_with_weather(&["--test-runs-per-minute", "2"]);
    let first = server.token("first", &["publish:acme"]);
    let body = json!({"tool": "forecast", "arguments": {"city": "Oslo"}});
    for _ in 0..2 {
        let (status, _, result) = server.test_run(&first, "1.0.0", &body);
        assert_eq!(status, 200, "{result}");
    }
    let (status, headers, problem) = server.test_run(&first, "1.0.0", &body);
    assert_eq!(status, 429, "{problem}");
    assert_eq!(problem["code"], "registry-test-run-rate-limited");
    let retry: u64 = headers
        .iter()
        .find(|(k, _)| k == "retry-after")
        .map(|(_, v)| v.parse().unwrap())
        .expect("a Retry-After header");
    assert!((1..=60).contains(&retry), "{retry}");
    // Another token has its own bucket.
    let second = server.token("second", &["publish:acme"]);
    let (status, _, result) = server.test_run(&second, "1.0.0", &body);
    assert_eq!(status, 200, "{result}");
}

#[test]
fn every_test_run_is_in_the_audit_log_with_who_what_the_arguments_digest_and_the_exit() {
    let server = server_with_weather(&[]);
    let publisher = server.token("ci", &["publish:acme"]);
    let (status, _, result) = server.test_run(
        &publisher,
        "1.0.0",
        &json!({"tool": "forecast", "arguments": {"city": "Bergen"}}),
    );
    assert_eq!(status, 200, "{result}");
    let audit = server.test_run_audit();
    assert_eq!(audit.len(), 1, "{audit:?}");
    let entry = &audit[0];
    assert!(
        entry["actor"].as_str().unwrap().starts_with("ci ("),
        "{entry}"
    );
    assert_eq!(entry["target"], "acme/weather@1.0.0");
    assert_eq!(entry["detail"]["tool"], "forecast");
    assert_eq!(entry["detail"]["exit_code"], 0);
    assert_eq!(
        entry["detail"]["arguments_sha256"],
        result["arguments_sha256"]
    );
    assert_eq!(
        result["arguments_sha256"],
        skilldeck::digest::sha256_digest(json!({"city": "Bergen"}).to_string().as_bytes())
    );
}

#[test]
fn a_test_run_reaches_no_network_not_even_the_registry_itself() {
    let server = server_with_weather(&[]);
    let (status, _, result) = server.test_run(
        &server.admin,
        "1.0.0",
        &json!({"script": "scripts/connect.py", "args": [server.addr.clone()]}),
    );
    assert_eq!(status, 200, "{result}");
    let outcome = &result["outcome"];
    assert!(
        !outcome["stdout"].as_str().unwrap().contains("connected"),
        "the sandbox reached {}: {outcome}",
        server.addr
    );
    assert_eq!(outcome["exit_code"], 3, "{outcome}");
    assert_eq!(outcome["policy"]["network"], false);
}

#[test]
fn a_script_test_run_runs_only_files_under_scripts() {
    let server = server_with_weather(&[]);
    for path in ["SKILL.md", "scripts/missing.py"] {
        let (status, _, problem) =
            server.test_run(&server.admin, "1.0.0", &json!({"script": path}));
        assert_eq!(status, 422, "{path}: {problem}");
        assert_eq!(problem["code"], "registry-test-run-unknown-script");
    }
    let (status, _, problem) = server.test_run(
        &server.admin,
        "1.0.0",
        &json!({"script": "../../etc/passwd"}),
    );
    assert_eq!(status, 400, "{problem}");
    assert_eq!(problem["code"], "registry-invalid-path");
}

#[test]
fn the_run_code_setting_of_an_agent_reaches_its_lock_and_is_off_by_default() {
    let server = serve(&[]);
    let token_file = server.process.admin_file.clone();
    let url = format!("http://{}", server.addr);
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_skilldeck"))
            .args(["registry", "agent"])
            .args(args)
            .args(["--registry", &url, "--token-file"])
            .arg(&token_file)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let created = run(&["create", "bot-1"]);
    assert!(created.contains("run_code=false"), "{created}");
    let client = server.client(&server.admin);
    let id = AgentId::new("bot-1").unwrap();
    let lock = |client: &Client| match client.lock(&id, None).unwrap() {
        skilldeck_registry::client::LockFetch::Fresh { lock, .. } => lock,
        other => panic!("{other:?}"),
    };
    assert!(!lock(&client).run_code);
    let updated = run(&["update", "bot-1", "--run-code"]);
    assert!(updated.contains("run_code=true"), "{updated}");
    assert!(client.agent(&id).unwrap().spec.run_code);
    assert!(lock(&client).run_code, "the lock carries the setting");
    run(&["update", "bot-1", "--run-code=false"]);
    assert!(!lock(&client).run_code);
}

#[test]
fn the_cli_test_runs_a_tool_or_a_script_and_exits_with_the_runs_status() {
    let server = server_with_weather(&[]);
    let tmp = tempfile::tempdir().unwrap();
    let token_file = tmp.path().join("token");
    std::fs::write(&token_file, server.token("ci", &["publish:acme"])).unwrap();
    let url = format!("http://{}", server.addr);
    let cli = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_skilldeck"))
            .args(["registry", "test-run", "--registry"])
            .arg(&url)
            .arg("--token-file")
            .arg(&token_file)
            .args(args)
            .output()
            .unwrap()
    };

    let out = cli(&[
        "acme/weather@1.0.0",
        "--tool",
        "forecast",
        "--arguments",
        r#"{"city": "Oslo", "days": 2}"#,
    ]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let answer: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(answer, json!({"city": "Oslo", "days": 2, "sky": "sunny"}));
    assert!(stderr.contains("forecast made"), "{stderr}");
    assert!(
        stderr.contains("test run of acme/weather@1.0.0 forecast: exit 0"),
        "{stderr}"
    );

    // A script with arguments after `--`: its own exit status (3: the
    // connection was refused, the sandbox has no network).
    let out = cli(&[
        "acme/weather",
        "--script",
        "scripts/connect.py",
        "--",
        &server.addr,
    ]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("refused"));

    // --list as JSON: what the UI's form is generated from.
    let out = cli(&["acme/weather@1.0.0", "--list", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0));
    let targets: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(targets["tools"][0]["full_name"], "weather__forecast");

    // Arguments the schema refuses: the registry's refusal, nothing ran.
    let out = cli(&[
        "acme/weather@1.0.0",
        "--tool",
        "forecast",
        "--arguments",
        r#"{"days": "three"}"#,
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("/days") || stderr.contains("city"),
        "{stderr}"
    );

    // Nothing named to run, or arguments that are not an object: usage.
    let out = cli(&["acme/weather@1.0.0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--list"));
    let out = cli(&["acme/weather", "--tool", "forecast", "--arguments", "[1]"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("JSON object"));
}
