//! A desktop client starts `skilldeck serve` from `/` and says which
//! folders are open with MCP `roots`: the server asks for them after
//! `initialized`, searches them for project roots, reloads and tells the
//! client (`notifications/tools/list_changed`); when the client's roots
//! change (`notifications/roots/list_changed`), it asks again. Driven
//! through the real binary over stdio; every wait is for a message, with
//! a deadline only against a hang.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use serde_json::{Value, json};

/// Longer than any answer may take: past it, a message counts as lost (a
/// guard against a hung test, not a timing assertion).
const UNANSWERED: Duration = Duration::from_secs(120);

struct Client {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    next_id: u64,
    /// The folders answered to `roots/list`.
    roots: Vec<PathBuf>,
}

impl Client {
    fn start(home: &Path, roots: Vec<PathBuf>) -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_skilldeck"))
            .args(["serve", "--no-watch"])
            // Where a desktop client starts it: no project root there.
            .current_dir("/")
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", home.join("xdg"))
            .env("XDG_CACHE_HOME", home.join("cache"))
            .env("XDG_STATE_HOME", home.join("state"))
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
        let mut client = Client {
            child,
            stdin,
            lines,
            next_id: 0,
            roots,
        };
        let init = client.request(
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {"roots": {"listChanged": true}},
                "clientInfo": {"name": "desktop", "version": "0"}
            }),
        );
        assert!(init.get("result").is_some(), "{init}");
        client.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        client
    }

    fn send(&mut self, message: &Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.stdin.write_all(line.as_bytes()).unwrap();
        self.stdin.flush().unwrap();
    }

    /// The next message from the server, answering its `roots/list`
    /// requests on the way; returns whatever else arrives.
    fn next(&mut self) -> Value {
        loop {
            let line = self
                .lines
                .recv_timeout(UNANSWERED)
                .expect("the server said nothing");
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
            return message;
        }
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let message = self.next();
            if message.get("id") == Some(&json!(id)) {
                return message;
            }
        }
    }

    /// Waits for `notifications/tools/list_changed`.
    fn wait_for_tools_changed(&mut self) {
        loop {
            if self.next()["method"] == "notifications/tools/list_changed" {
                return;
            }
        }
    }

    fn prompts(&mut self) -> Vec<String> {
        let answer = self.request("prompts/list", json!({}));
        answer["result"]["prompts"]
            .as_array()
            .unwrap_or_else(|| panic!("{answer}"))
            .iter()
            .map(|p| p["name"].as_str().unwrap().to_owned())
            .collect()
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn project(base: &Path, name: &str, skill: &str) -> PathBuf {
    let dir = base.join(name);
    // A repository: project roots stop at the folder with `.git`.
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    skilldeck_testkit::skill(dir.join(".agents/skills"), skill)
        .description(format!(
            "{skill} of project {name}. Use when testing roots."
        ))
        .body("# Instructions\n")
        .write();
    std::fs::canonicalize(dir).unwrap()
}

#[test]
fn serve_started_from_the_filesystem_root_finds_project_skills_in_the_clients_roots() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let first = project(tmp.path(), "first", "first-skill");
    let second = project(tmp.path(), "second", "second-skill");
    let mut client = Client::start(&home, vec![first]);
    client.wait_for_tools_changed();
    let prompts = client.prompts();
    assert!(prompts.contains(&"first-skill".to_owned()), "{prompts:?}");
    assert!(!prompts.contains(&"second-skill".to_owned()), "{prompts:?}");

    // The client opens the other project instead.
    client.roots = vec![second];
    client.send(&json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}));
    client.wait_for_tools_changed();
    let prompts = client.prompts();
    assert!(prompts.contains(&"second-skill".to_owned()), "{prompts:?}");
    assert!(!prompts.contains(&"first-skill".to_owned()), "{prompts:?}");
}

#[test]
fn a_client_without_roots_sees_only_the_servers_own_roots() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    skilldeck_testkit::skill(home.join(".agents/skills"), "mine")
        .description("The user's own skill. Use when testing roots.")
        .body("# Mine\n")
        .write();
    let mut client = Client::start(&home, Vec::new());
    let prompts = client.prompts();
    assert_eq!(prompts, ["mine"]);
}
