//! The model-access rule over MCP, attacked through the real server:
//! `skilldeck serve` as a process over stdio (JSON-RPC lines), with
//! execution on, no sandbox and every skill tool offered from the start
//! (`[exec] tools = "always"`). A skill with `disable-model-invocation:
//! true` and one set to mode `manual` each have a script and a declared
//! tool: `tools/list` must not list their tools, and `tools/call` of
//! `run_skill_script` or of their tool must be refused (`isError`, saying
//! the skill is user-invoked only and how the user can run it) without
//! running anything. The skill the model may use runs, so the setup can
//! fail. Both stay prompts: the user invokes them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use serde_json::{Value, json};
use skilldeck_testkit::model_access::{
    EXEC_ALWAYS_TOML, MANUAL, OPEN, SCRIPT, TOOL, USER_ONLY, ran, tool_full_name, write,
};

/// Longer than any answer may take: past it, a request counts as lost
/// (a guard against a hung test, not a timing assertion).
const UNANSWERED: Duration = Duration::from_secs(120);

struct Server {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    next_id: u64,
}

impl Server {
    fn start(dir: &Path) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_skilldeck"))
            .args(["serve", "--no-watch", "--root", "skills"])
            .current_dir(dir)
            .env("HOME", dir)
            .env("XDG_CONFIG_HOME", dir.join("xdg"))
            .env("XDG_STATE_HOME", dir.join("state"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut server = Server {
            child,
            stdin,
            lines,
            next_id: 0,
        };
        let init = server.request(
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "model-access", "version": "0"}
            }),
        );
        assert!(init.get("result").is_some(), "{init}");
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    fn send(&mut self, message: &Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.stdin.write_all(line.as_bytes()).unwrap();
        self.stdin.flush().unwrap();
    }

    /// Sends a request and waits for its answer (notifications skipped).
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let line = self
                .lines
                .recv_timeout(UNANSWERED)
                .unwrap_or_else(|_| panic!("no answer to {method}"));
            let Ok(message) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if message.get("id") == Some(&json!(id)) {
                return message;
            }
        }
    }

    fn names(&mut self, method: &str, key: &str) -> Vec<String> {
        let answer = self.request(method, json!({}));
        answer["result"][key]
            .as_array()
            .unwrap_or_else(|| panic!("{method}: {answer}"))
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    }

    /// A `tools/call` result (its `result` object).
    fn call(&mut self, name: &str, arguments: Value) -> Value {
        let answer = self.request("tools/call", json!({"name": name, "arguments": arguments}));
        answer
            .get("result")
            .cloned()
            .unwrap_or_else(|| panic!("tools/call {name} is not a tool result: {answer}"))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn text(result: &Value) -> String {
    result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

fn fixture() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path().join("skills"));
    std::fs::write(tmp.path().join("skilldeck.toml"), EXEC_ALWAYS_TOML).unwrap();
    tmp
}

#[test]
fn serve_never_lists_the_tools_of_a_skill_the_model_may_not_invoke() {
    let tmp = fixture();
    let mut server = Server::start(tmp.path());
    let tools = server.names("tools/list", "tools");
    assert!(tools.iter().any(|t| t == "run_skill_script"), "{tools:?}");
    assert!(
        tools.contains(&tool_full_name(OPEN)),
        "tools = always lists the usable skill's tool: {tools:?}"
    );
    for skill in [USER_ONLY, MANUAL] {
        assert!(!tools.contains(&tool_full_name(skill)), "{tools:?}");
    }
    // The user still has them, as prompts.
    let prompts = server.names("prompts/list", "prompts");
    for skill in [USER_ONLY, MANUAL] {
        assert!(prompts.iter().any(|p| p == skill), "{prompts:?}");
    }
}

#[test]
fn serve_refuses_the_model_the_scripts_and_tools_of_a_skill_it_may_not_invoke() {
    let tmp = fixture();
    let skills = tmp.path().join("skills");
    let mut server = Server::start(tmp.path());
    for skill in [USER_ONLY, MANUAL] {
        let script = server.call("run_skill_script", json!({"name": skill, "path": SCRIPT}));
        assert_eq!(script["isError"], true, "{script}");
        let message = text(&script);
        assert!(message.contains("user-invoked only"), "{message}");
        assert!(
            message.contains(&format!("`skilldeck run {skill} {SCRIPT}`")),
            "{message}"
        );
        let tool = server.call(&tool_full_name(skill), json!({"target": "prod"}));
        assert_eq!(tool["isError"], true, "{tool}");
        let message = text(&tool);
        assert!(message.contains("user-invoked only"), "{message}");
        assert!(
            message.contains(&format!("`skilldeck call {skill} {TOOL} --args JSON`")),
            "{message}"
        );
        let activation = server.call("activate_skill", json!({"name": skill}));
        assert_eq!(activation["isError"], true, "{activation}");
        assert!(
            text(&activation).contains(&format!("/{skill}")),
            "{activation}"
        );
        assert!(!ran(&skills, skill), "{skill}'s code ran");
    }
    // The skill the model may use runs: the refusals above are the rule's.
    let open = server.call(&tool_full_name(OPEN), json!({"target": "prod"}));
    assert_ne!(open["isError"], true, "{open}");
    assert!(ran(&skills, OPEN));
}
