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

use std::path::Path;
use std::process::Command;

use serde_json::json;
use skilldeck_testkit::mcp::{StdioClient, text};
use skilldeck_testkit::model_access::{
    EXEC_ALWAYS_TOML, MANUAL, OPEN, SCRIPT, TOOL, USER_ONLY, ran, tool_full_name, write,
};

/// `skilldeck serve` over stdio in `dir`, its skills under `dir/skills`.
fn serve(dir: &Path) -> StdioClient {
    let mut command = Command::new(env!("CARGO_BIN_EXE_skilldeck"));
    command
        .args(["serve", "--no-watch", "--root", "skills"])
        .current_dir(dir)
        .env("HOME", dir)
        .env("XDG_CONFIG_HOME", dir.join("xdg"))
        .env("XDG_STATE_HOME", dir.join("state"));
    StdioClient::start(command)
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
    let mut server = serve(tmp.path());
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
    let mut server = serve(tmp.path());
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
