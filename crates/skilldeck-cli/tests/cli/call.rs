//! `skilldeck call NAME TOOL --args JSON`, driven as a user would.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output, Stdio};

use skilldeck_testkit::Root;

fn skilldeck(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_skilldeck"))
        .args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .env("XDG_CONFIG_HOME", cwd.join(".no-user-config"))
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

const TOOLS: &str = "tools:\n  - name: search_notes\n    description: Search the notes.\n    parameters:\n      query: {type: string, description: Words, required: true}\n      limit: {type: integer}\n    run: scripts/search.py\n  - name: info\n    description: Say which skill this is.\n    input_schema: {type: object, properties: {}}\n    run: scripts/info.sh";

fn deck() -> Root {
    let root = Root::new();
    root.skill("notes")
        .description("Search notes. Use for notes.")
        .frontmatter_raw(TOOLS)
        .file(
            "scripts/search.py",
            "import json, sys\nargs = json.load(sys.stdin)\nprint(json.dumps({'query': args['query'], 'hits': [args['query'] + '-1']}))\n",
        )
        .file("scripts/info.sh", "echo \"I am $SKILLDECK_SKILL_NAME\"\n")
        .write();
    root.skill("other")
        .description("Other notes. Use for other notes.")
        .frontmatter_raw(
            "tools:\n  - name: info\n    description: Say which skill this is.\n    input_schema: {type: object, properties: {}}\n    run: scripts/info.sh",
        )
        .file("scripts/info.sh", "echo \"other here: $SKILLDECK_SKILL_NAME\"\n")
        .write();
    root
}

fn ready(cwd: &Path) -> bool {
    let o = skilldeck(&["sandbox", "--format", "json"], cwd);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v["ready"].as_bool().unwrap()
}

#[test]
fn a_call_passes_the_arguments_on_stdin_and_returns_structured_json() {
    let root = deck();
    let r = root.to_str().unwrap();
    let o = skilldeck(
        &[
            "call",
            "--root",
            r,
            "--format",
            "json",
            "notes",
            "search_notes",
            "--args",
            r#"{"query": "rust"}"#,
        ],
        &root,
    );
    if !ready(&root) {
        assert_eq!(o.status.code(), Some(125), "{}", text(&o.stderr));
        return;
    }
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["tool"], "notes__search_notes");
    assert_eq!(v["structured"], true);
    assert_eq!(
        v["result"],
        serde_json::json!({"query": "rust", "hits": ["rust-1"]})
    );
    assert_eq!(v["outcome"]["exit_code"], 0);
}

#[test]
fn invalid_arguments_never_run_the_script_and_name_the_failing_field() {
    let root = deck();
    let r = root.to_str().unwrap();
    let o = skilldeck(
        &[
            "call",
            "--root",
            r,
            "notes",
            "search_notes",
            "--args",
            r#"{"query": "x", "limit": "ten"}"#,
        ],
        &root,
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(err.contains("/limit"), "{err}");
    assert!(err.contains("nothing was run"), "{err}");
    assert!(o.stdout.is_empty());
    let o = skilldeck(
        &["call", "--root", r, "notes", "search_notes", "--args", "{}"],
        &root,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("query"), "{}", text(&o.stderr));
    let o = skilldeck(
        &[
            "call",
            "--root",
            r,
            "notes",
            "search_notes",
            "--args",
            "not json",
        ],
        &root,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("not JSON"), "{}", text(&o.stderr));
    let o = skilldeck(&["call", "--root", r, "notes", "nope"], &root);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("search_notes, info"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn each_tool_runs_its_own_skills_script() {
    let root = deck();
    let r = root.to_str().unwrap();
    let a = skilldeck(&["call", "--root", r, "notes", "info"], &root);
    let b = skilldeck(&["call", "--root", r, "other", "info"], &root);
    let c = skilldeck(&["call", "--root", r, "other", "other__info"], &root);
    if !ready(&root) {
        assert_eq!(a.status.code(), Some(125));
        return;
    }
    assert_eq!(text(&a.stdout), "I am notes\n", "{}", text(&a.stderr));
    assert_eq!(
        text(&b.stdout),
        "other here: other\n",
        "{}",
        text(&b.stderr)
    );
    assert_eq!(text(&c.stdout), "other here: other\n");
}

#[test]
fn invalid_arguments_name_the_field_and_start_no_process() {
    let root = Root::new();
    root.skill("marker")
        .description("Leaves a mark. Use when testing.")
        .frontmatter_raw(
            "tools:\n  - name: mark\n    description: Leave a mark.\n    parameters:\n      count: {type: integer, required: true}\n    run: scripts/mark.sh",
        )
        .file(
            "scripts/mark.sh",
            "touch \"$SKILLDECK_SKILL_DIR/ran.marker\"\necho marked\n",
        )
        .write();
    let r = root.to_str().unwrap();
    let marker = root.path().join("marker/ran.marker");
    let call = |json: &str| {
        skilldeck(
            &[
                "call",
                "--root",
                r,
                "--sandbox",
                "none",
                "marker",
                "mark",
                "--args",
                json,
            ],
            &root,
        )
    };
    let o = call(r#"{"count": "many"}"#);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("/count"), "{}", text(&o.stderr));
    assert!(o.stdout.is_empty());
    assert!(
        !marker.exists(),
        "invalid arguments must not start the script"
    );
    // The same call with valid arguments does run it (the marker can appear).
    let o = call(r#"{"count": 2}"#);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "marked\n");
    assert!(marker.exists());
}
