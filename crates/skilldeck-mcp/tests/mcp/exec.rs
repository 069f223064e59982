//! Skill code over MCP, driven in process through the real rmcp service
//! on a byte pipe (JSON-RPC lines, as over stdio): no skill tools without
//! execution; with it, a skill's tools offered once it is activated (and
//! `tools/list_changed` sent), a call's JSON stdout as
//! `structuredContent`, invalid arguments and refusals as `isError`.
//!
//! Where this machine lacks a layer of the native sandbox, the tests that
//! run code assert the refusal instead of the result (never a silent skip).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceExt as _;
use rmcp::transport::async_rw::AsyncRwTransport;
use serde_json::{Value, json};
use skilldeck::DiscoveryOptions;
use skilldeck::deck::{ExecConfig, SandboxProfile, ToolExposure};
use skilldeck_mcp::{Engine, ServeOptions, SkillServer};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// Longer than any answer may take: past it, a request counts as lost.
const UNANSWERED: Duration = Duration::from_secs(60);

const WORDS_TOOL: &str = "tools:\n  - name: lookup\n    description: Look a word up.\n    parameters:\n      word: {type: string, required: true}\n      tags: {type: array, items: {type: string}}\n    run: scripts/lookup.sh\n";

/// One MCP client session over an in-process pipe.
struct Client {
    runtime: tokio::runtime::Runtime,
    writer: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    lines: tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
    next_id: u64,
    /// Notifications received so far, in order.
    notifications: Vec<Value>,
}

impl Client {
    fn connect(engine: Arc<Engine>) -> Client {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let (client_end, server_end) = tokio::io::duplex(1 << 20);
        runtime.spawn(async move {
            let (read, write) = tokio::io::split(server_end);
            let transport = AsyncRwTransport::new_server(read, write);
            let service = SkillServer::new(engine).serve(transport).await.unwrap();
            let _ = service.waiting().await;
        });
        let (read, writer) = tokio::io::split(client_end);
        let mut client = Client {
            runtime,
            writer,
            lines: BufReader::new(read).lines(),
            next_id: 0,
            notifications: Vec::new(),
        };
        let init = client.request(
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "exec-test", "version": "1"}
            }),
        );
        assert!(init.get("result").is_some(), "{init}");
        client.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        client
    }

    fn send(&mut self, message: &Value) {
        let mut line = message.to_string();
        line.push('\n');
        let writer = &mut self.writer;
        self.runtime
            .block_on(async { writer.write_all(line.as_bytes()).await })
            .unwrap();
    }

    /// Sends a request and returns its answer; notifications that arrive
    /// first are kept.
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let lines = &mut self.lines;
            let line = self
                .runtime
                .block_on(async { tokio::time::timeout(UNANSWERED, lines.next_line()).await })
                .unwrap_or_else(|_| panic!("no answer to {method}"))
                .unwrap()
                .expect("the server closed the pipe");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message.get("id") == Some(&json!(id)) {
                return message;
            }
            if message.get("method").is_some() && message.get("id").is_none() {
                self.notifications.push(message);
            }
        }
    }

    fn tool_names(&mut self) -> Vec<String> {
        let answer = self.request("tools/list", json!({}));
        answer["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    }

    fn tool(&mut self, name: &str) -> Value {
        let answer = self.request("tools/list", json!({}));
        answer["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} is not listed"))
    }

    /// A `tools/call` result (its `result` object).
    fn call(&mut self, name: &str, arguments: Value) -> Value {
        let answer = self.request("tools/call", json!({"name": name, "arguments": arguments}));
        answer
            .get("result")
            .cloned()
            .unwrap_or_else(|| panic!("tools/call {name} failed: {answer}"))
    }

    fn tools_list_changed(&self) -> usize {
        self.notifications
            .iter()
            .filter(|n| n["method"] == "notifications/tools/list_changed")
            .count()
    }
}

fn text(result: &Value) -> String {
    result["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

fn fixture(root: &Path, script: &str) {
    skilldeck_testkit::skill(root, "words")
        .description("Looks words up. Use when testing.")
        .frontmatter_raw(WORDS_TOOL)
        .body("Call the words__lookup tool.\n")
        .file("scripts/lookup.sh", script)
        .file("scripts/hello.sh", "echo \"hello $1\"\n")
        .file("notes/outside.sh", "echo outside\n")
        .write();
}

fn engine(root: &Path, exec: Option<ExecConfig>) -> Arc<Engine> {
    let mut options = ServeOptions::new(DiscoveryOptions::with_roots([root.to_path_buf()]));
    options.reload = None;
    if let Some(exec) = exec {
        options.exec = exec;
    }
    Arc::new(Engine::new(options).unwrap())
}

fn exec(profile: SandboxProfile) -> ExecConfig {
    ExecConfig {
        enabled: true,
        sandbox: profile,
        ..ExecConfig::default()
    }
}

const JSON_SCRIPT: &str = "read -r args\nprintf '{\"skill\":\"%s\",\"agent\":\"%s\",\"session\":\"%s\",\"args\":%s}\\n' \"$SKILLDECK_SKILL_NAME\" \"$SKILLDECK_AGENT_ID\" \"$SKILLDECK_SESSION_ID\" \"$args\"\n";

/// True when the native sandbox can run here; else `result` must be the
/// refusal naming what is missing.
fn runs_here(result: &Value) -> bool {
    let probe = skilldeck_exec::probe();
    if probe.native_ready {
        return true;
    }
    assert_eq!(result["isError"], true, "{result}");
    assert!(text(result).contains("sandbox unavailable"), "{result}");
    eprintln!(
        "refusal path tested: missing {}",
        probe.missing().join("; ")
    );
    false
}

#[test]
fn without_exec_no_tool_runs_skill_code() {
    let root = skilldeck_testkit::Root::new();
    fixture(&root, JSON_SCRIPT);
    let mut client = Client::connect(engine(&root, None));
    assert_eq!(
        client.tool_names(),
        ["activate_skill", "read_skill_resource", "search_skills"]
    );
    client.call("activate_skill", json!({"name": "words"}));
    assert_eq!(client.tool_names().len(), 3);
    assert_eq!(client.tools_list_changed(), 0);
    let answer = client.request(
        "tools/call",
        json!({"name": "words__lookup", "arguments": {"word": "x"}}),
    );
    assert!(answer.get("error").is_some(), "{answer}");
}

#[test]
fn a_skills_tools_appear_once_it_is_activated_and_the_list_change_is_sent() {
    let root = skilldeck_testkit::Root::new();
    fixture(&root, JSON_SCRIPT);
    let mut client = Client::connect(engine(&root, Some(exec(SandboxProfile::Landlock))));
    assert_eq!(
        client.tool_names(),
        [
            "activate_skill",
            "read_skill_resource",
            "search_skills",
            "run_skill_script"
        ]
    );
    // Not offered yet: refused, nothing runs.
    let early = client.call("words__lookup", json!({"word": "x"}));
    assert_eq!(early["isError"], true);
    assert!(text(&early).contains("activate_skill"), "{early}");

    let activation = client.call("activate_skill", json!({"name": "words"}));
    assert_ne!(activation["isError"], true, "{activation}");
    assert_eq!(client.tools_list_changed(), 1);
    let tool = client.tool("words__lookup");
    assert_eq!(tool["inputSchema"]["required"], json!(["word"]));
    assert_eq!(tool["description"], "Look a word up.");

    let result = client.call("words__lookup", json!({"word": "kiwi"}));
    if !runs_here(&result) {
        return;
    }
    assert_ne!(result["isError"], true, "{result}");
    let structured = &result["structuredContent"];
    assert_eq!(structured["skill"], "words");
    assert_eq!(structured["args"], json!({"word": "kiwi"}));
    // The call context: the server's agent id and this session's key.
    assert_eq!(structured["agent"], "skilldeck-mcp");
    assert!(
        structured["session"]
            .as_str()
            .is_some_and(|s| !s.is_empty()),
        "{structured}"
    );
    let expected = structured.clone();
    let text: Value = serde_json::from_str(text(&result).trim()).unwrap();
    assert_eq!(text, expected);
}

#[test]
fn invalid_arguments_are_a_tool_error_naming_the_field_and_nothing_runs() {
    // No sandbox (the operator's explicit choice), so the script can mark
    // its own folder when it runs.
    let root = skilldeck_testkit::Root::new();
    fixture(
        &root,
        "touch \"$SKILLDECK_SKILL_DIR/ran.marker\"\necho '{}'\n",
    );
    let config = ExecConfig {
        tools: ToolExposure::Always,
        ..exec(SandboxProfile::None)
    };
    let mut client = Client::connect(engine(&root, Some(config)));
    let result = client.call("words__lookup", json!({"word": "x", "tags": ["ok", 3]}));
    assert_eq!(result["isError"], true);
    assert!(text(&result).contains("/tags/1"), "{result}");
    assert!(result.get("structuredContent").is_none());
    assert!(!root.path().join("words/ran.marker").exists());
    // The same call with valid arguments runs the script.
    let result = client.call("words__lookup", json!({"word": "x", "tags": ["ok"]}));
    assert_ne!(result["isError"], true, "{result}");
    assert!(root.path().join("words/ran.marker").exists());
}

#[test]
fn a_failing_script_is_a_tool_error_saying_how_it_ended() {
    let root = skilldeck_testkit::Root::new();
    fixture(&root, "echo 'dictionary offline' >&2\nexit 2\n");
    let config = ExecConfig {
        tools: ToolExposure::Always,
        ..exec(SandboxProfile::Landlock)
    };
    let mut client = Client::connect(engine(&root, Some(config)));
    let result = client.call("words__lookup", json!({"word": "x"}));
    if !runs_here(&result) {
        return;
    }
    assert_eq!(result["isError"], true);
    let text = text(&result);
    assert!(text.contains("exit code 2"), "{text}");
    assert!(text.contains("dictionary offline"), "{text}");
}

#[test]
fn run_skill_script_runs_scripts_and_refuses_anything_outside_scripts() {
    let root = skilldeck_testkit::Root::new();
    fixture(&root, JSON_SCRIPT);
    let mut client = Client::connect(engine(&root, Some(exec(SandboxProfile::Landlock))));
    for path in [
        "notes/outside.sh",
        "scripts/../notes/outside.sh",
        "SKILL.md",
    ] {
        let result = client.call("run_skill_script", json!({"name": "words", "path": path}));
        assert_eq!(result["isError"], true, "{path}");
        assert!(text(&result).contains("scripts/"), "{result}");
    }
    let bad = client.call(
        "run_skill_script",
        json!({"name": "words", "path": "scripts/hello.sh", "args": [1]}),
    );
    assert_eq!(bad["isError"], true);
    assert!(text(&bad).contains("args/0"), "{bad}");
    let result = client.call(
        "run_skill_script",
        json!({"name": "words", "path": "scripts/hello.sh", "args": ["there"]}),
    );
    if !runs_here(&result) {
        return;
    }
    assert_ne!(result["isError"], true, "{result}");
    assert_eq!(text(&result).trim(), "hello there");
}
