//! `skilldeck serve` runs no skill code unless the operator says so:
//! `--exec`, or `[exec] enabled = true` in the config. Driven as a process
//! over stdio: `initialize`, then `tools/list`, then stdin closes (the
//! server answers what it was sent before it leaves).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

fn tool_names(dir: &Path, extra: &[&str]) -> Vec<String> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_skilldeck"))
        .args(["serve", "--no-watch", "--root", "skills"])
        .args(extra)
        .current_dir(dir)
        .env("HOME", dir)
        .env("XDG_CONFIG_HOME", dir.join("xdg"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let requests = concat!(
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":",
        "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},",
        "\"clientInfo\":{\"name\":\"t\",\"version\":\"0\"}}}\n",
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n",
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{}}\n",
    );
    stdin.write_all(requests.as_bytes()).unwrap();
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    let answer: Value = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|m| m["id"] == 2)
        .unwrap_or_else(|| panic!("no tools/list answer in {text:?}"));
    answer["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

fn fixture(dir: &Path) {
    skilldeck_testkit::skill(dir.join("skills"), "words")
        .description("Looks words up. Use when testing.")
        .frontmatter_raw(
            "tools:\n  - name: lookup\n    description: Look a word up.\n    parameters:\n      word: {type: string, required: true}\n    run: scripts/lookup.sh\n",
        )
        .file("scripts/lookup.sh", "echo '{}'\n")
        .write();
}

#[test]
fn serve_offers_no_skill_code_tools_without_the_switch() {
    let tmp = tempfile::tempdir().unwrap();
    fixture(tmp.path());
    let names = tool_names(tmp.path(), &[]);
    assert_eq!(
        names,
        ["activate_skill", "read_skill_resource", "search_skills"]
    );
}

#[test]
fn serve_exec_or_the_config_switch_offers_run_skill_script_and_skill_tools() {
    let tmp = tempfile::tempdir().unwrap();
    fixture(tmp.path());
    let names = tool_names(tmp.path(), &["--exec"]);
    assert!(names.iter().any(|n| n == "run_skill_script"), "{names:?}");
    // on-activate (the default): not before the skill is activated.
    assert!(!names.iter().any(|n| n == "words__lookup"), "{names:?}");

    std::fs::write(
        tmp.path().join("skilldeck.toml"),
        "[exec]\nenabled = true\ntools = \"always\"\n",
    )
    .unwrap();
    let names = tool_names(tmp.path(), &[]);
    assert!(names.iter().any(|n| n == "run_skill_script"), "{names:?}");
    assert!(names.iter().any(|n| n == "words__lookup"), "{names:?}");
}
