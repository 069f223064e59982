//! An MCP client on a server process's stdio (JSON-RPC, one message per
//! line), for tests that drive `skilldeck serve` as its users' clients do.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::Receiver;

use serde_json::{Value, json};

use crate::process::{GIVE_UP, lines_of};

/// The protocol version the client asks for.
pub const PROTOCOL_VERSION: &str = "2025-11-25";

/// An initialized MCP session with a child process; the process is killed
/// when this is dropped.
pub struct StdioClient {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    stderr: Receiver<String>,
    next_id: u64,
    /// The folders answered to the server's `roots/list` requests.
    pub roots: Vec<PathBuf>,
    /// The methods of the notifications seen so far (oldest first).
    pub notes: Vec<String>,
}

impl StdioClient {
    /// Spawns `command` (its program, arguments, environment and folder
    /// already set) with piped stdio and completes the `initialize`
    /// handshake with no client capabilities.
    pub fn start(command: Command) -> StdioClient {
        StdioClient::start_with(command, json!({}), Vec::new())
    }

    /// Like [`StdioClient::start`], declaring `capabilities` and answering
    /// `roots/list` with `roots` (declare `{"roots": {...}}` for that).
    pub fn start_with(
        mut command: Command,
        capabilities: Value,
        roots: Vec<PathBuf>,
    ) -> StdioClient {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {command:?}: {e}"));
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            panic!("stdio was piped")
        };
        let mut client = StdioClient {
            child,
            stdin,
            lines: lines_of(stdout),
            stderr: lines_of(stderr),
            next_id: 0,
            roots,
            notes: Vec::new(),
        };
        let init = client.request(
            "initialize",
            json!({"protocolVersion": PROTOCOL_VERSION, "capabilities": capabilities,
                   "clientInfo": {"name": "skilldeck-testkit", "version": "0"}}),
        );
        assert!(init.get("result").is_some(), "initialize failed: {init}");
        client.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        client
    }

    /// Writes one message.
    pub fn send(&mut self, message: &Value) {
        let mut line = message.to_string();
        line.push('\n');
        if let Err(e) = self
            .stdin
            .write_all(line.as_bytes())
            .and_then(|()| self.stdin.flush())
        {
            panic!("cannot write to the server: {e}");
        }
    }

    /// The next message from the server that is not a `roots/list` request
    /// (those are answered on the way); notifications are also recorded in
    /// [`StdioClient::notes`].
    pub fn next_message(&mut self) -> Value {
        loop {
            let line = self
                .lines
                .recv_timeout(GIVE_UP)
                .unwrap_or_else(|e| panic!("the server said nothing: {e}"));
            let Ok(message) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if message["method"] == "roots/list" {
                let roots: Vec<Value> = self
                    .roots
                    .iter()
                    .map(|p| json!({"uri": format!("file://{}", p.display()), "name": "project"}))
                    .collect();
                let answer =
                    json!({"jsonrpc": "2.0", "id": message["id"], "result": {"roots": roots}});
                self.send(&answer);
                continue;
            }
            if message.get("id").is_none()
                && let Some(method) = message["method"].as_str()
            {
                self.notes.push(method.to_owned());
            }
            return message;
        }
    }

    /// Sends a request and waits for its answer (the whole JSON-RPC
    /// message); other messages meanwhile are recorded or answered.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let message = self.next_message();
            if message.get("id") == Some(&json!(id)) {
                return message;
            }
        }
    }

    /// Waits for a notification whose method is `method`.
    pub fn wait_for_notification(&mut self, method: &str) {
        while self.next_message()["method"] != method {}
    }

    /// The `name` of each entry of `result.KEY` of `method` (e.g.
    /// `tools/list`, `tools`), in the server's order.
    pub fn names(&mut self, method: &str, key: &str) -> Vec<String> {
        let answer = self.request(method, json!({}));
        answer["result"][key]
            .as_array()
            .unwrap_or_else(|| panic!("{method}: {answer}"))
            .iter()
            .map(|t| t["name"].as_str().unwrap_or_default().to_owned())
            .collect()
    }

    /// The `result` object of a `tools/call`.
    pub fn call(&mut self, name: &str, arguments: Value) -> Value {
        let answer = self.request("tools/call", json!({"name": name, "arguments": arguments}));
        answer
            .get("result")
            .cloned()
            .unwrap_or_else(|| panic!("tools/call {name} is not a tool result: {answer}"))
    }

    /// Waits for a stderr line holding every one of `needles` (the event,
    /// not a duration) and returns it; panics with what came instead when
    /// stderr ends or [`GIVE_UP`] passes.
    pub fn wait_for_stderr(&self, needles: &[&str]) -> String {
        let mut seen = Vec::new();
        loop {
            let Ok(line) = self.stderr.recv_timeout(GIVE_UP) else {
                panic!("no stderr line with {needles:?} in:\n{}", seen.join("\n"));
            };
            if needles.iter().all(|n| line.contains(n)) {
                return line;
            }
            seen.push(line);
        }
    }

    /// What the server wrote to stderr so far.
    pub fn stderr_text(&self) -> String {
        self.stderr.try_iter().collect::<Vec<_>>().join("\n")
    }
}

impl Drop for StdioClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The text of a tool result's `text` contents, joined by newlines.
pub fn text(result: &Value) -> String {
    result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}
