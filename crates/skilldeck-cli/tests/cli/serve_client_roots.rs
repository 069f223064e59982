//! A desktop client starts `skilldeck serve` from `/` and says which
//! folders are open with MCP `roots`: the server asks for them after
//! `initialized`, searches them for project roots, reloads and tells the
//! client (`notifications/tools/list_changed`); when the client's roots
//! change (`notifications/roots/list_changed`), it asks again. Driven
//! through the real binary over stdio; every wait is for a message, with
//! a deadline only against a hang.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;
use skilldeck_testkit::mcp::StdioClient;

/// `skilldeck serve` started from `/`, as a desktop client starts it (no
/// project root there), with the client's `roots`.
fn serve_from_root(home: &Path, roots: Vec<PathBuf>) -> StdioClient {
    let mut command = Command::new(env!("CARGO_BIN_EXE_skilldeck"));
    command
        .args(["serve", "--no-watch"])
        .current_dir("/")
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("xdg"))
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env("XDG_STATE_HOME", home.join("state"));
    StdioClient::start_with(command, json!({"roots": {"listChanged": true}}), roots)
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
    let mut client = serve_from_root(&home, vec![first]);
    client.wait_for_notification("notifications/tools/list_changed");
    let prompts = client.names("prompts/list", "prompts");
    assert!(prompts.contains(&"first-skill".to_owned()), "{prompts:?}");
    assert!(!prompts.contains(&"second-skill".to_owned()), "{prompts:?}");

    // The client opens the other project instead.
    client.roots = vec![second];
    client.send(&json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}));
    client.wait_for_notification("notifications/tools/list_changed");
    let prompts = client.names("prompts/list", "prompts");
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
    let mut client = serve_from_root(&home, Vec::new());
    let prompts = client.names("prompts/list", "prompts");
    assert_eq!(prompts, ["mine"]);
}
