//! Skill-defined tools in the host: full names, resolution (each tool to its
//! own skill's script), argument checks before anything runs, the argument
//! cap, and eligibility (an ineligible skill offers no tool and cannot be
//! activated, with the reason).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use serde_json::json;
use skilldeck::DiscoveryOptions;
use skilldeck_host::{Error, Host, HostOptions, ToolErrorKind};

const NOTES_TOOL: &str = "tools:\n  - name: search\n    description: Search.\n    parameters:\n      query: {type: string, required: true}\n      tags: {type: array, items: {type: string}}\n      limit: {type: integer}\n    run: scripts/search.py\n";

fn tool_skill(root: &Path, name: &str, tools: &str, script: &str) {
    skilldeck_testkit::skill(root, name)
        .description(format!("Does {name} things. Use when testing."))
        .frontmatter_raw(tools)
        .file("scripts/search.py", script)
        .write();
}

fn host(root: &Path) -> Host {
    Host::new(HostOptions::new(DiscoveryOptions::with_roots([
        root.to_path_buf()
    ])))
    .unwrap()
}

#[test]
fn each_tool_resolves_to_its_own_skills_script() {
    // Two skills declare a tool of the same name: the closure-capture trap.
    let tmp = tempfile::tempdir().unwrap();
    tool_skill(tmp.path(), "notes-a", NOTES_TOOL, "print('a')\n");
    tool_skill(tmp.path(), "notes-b", NOTES_TOOL, "print('b')\n");
    let host = host(tmp.path());
    let snap = host.snapshot();
    let tools = snap.skill_tools();
    let names: Vec<&str> = tools.served(&snap.deck).map(|t| t.full_name).collect();
    assert_eq!(names, ["notes_a__search", "notes_b__search"]);
    for (full, skill, content) in [
        ("notes_a__search", "notes-a", "print('a')\n"),
        ("notes_b__search", "notes-b", "print('b')\n"),
    ] {
        let resolved = tools.resolve(&snap.deck, full).unwrap();
        assert_eq!(resolved.skill.name, skill);
        assert_eq!(resolved.tool.name.as_str(), "search");
        let path = resolved.script_path().unwrap();
        assert!(path.starts_with(std::fs::canonicalize(tmp.path().join(skill)).unwrap()));
        assert_eq!(std::fs::read_to_string(path).unwrap(), content);
    }
    let of_b = tools.of_skill(&snap.deck, "notes-b").unwrap();
    assert_eq!(of_b.len(), 1);
    assert_eq!(of_b[0].full_name, "notes_b__search");
}

#[test]
fn invalid_arguments_are_refused_naming_the_failing_path() {
    let tmp = tempfile::tempdir().unwrap();
    tool_skill(tmp.path(), "notes", NOTES_TOOL, "print(1)\n");
    let host = host(tmp.path());
    let snap = host.snapshot();
    let tools = snap.skill_tools();
    let ok = json!({"query": "x", "tags": ["a", "b"], "limit": 3});
    tools
        .check_arguments(&snap.deck, "notes__search", &ok)
        .unwrap();

    let bad = json!({"query": "x", "tags": ["a", "b", 7]});
    let err = tools
        .check_arguments(&snap.deck, "notes__search", &bad)
        .unwrap_err();
    match &err {
        Error::InvalidToolArguments { tool, path, .. } => {
            assert_eq!(tool, "notes__search");
            assert_eq!(path, "/tags/2");
        }
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains("nothing was run"), "{err}");
    assert_eq!(err.to_tool_error().kind, ToolErrorKind::InvalidArguments);

    // A missing required field and an unknown one (additionalProperties false).
    let err = tools
        .check_arguments(&snap.deck, "notes__search", &json!({"tags": []}))
        .unwrap_err();
    assert!(err.to_string().contains("query"), "{err}");
    let err = tools
        .check_arguments(
            &snap.deck,
            "notes__search",
            &json!({"query": "x", "rm": true}),
        )
        .unwrap_err();
    assert!(err.to_string().contains("rm"), "{err}");
    // The schema is compiled once and reused: a second check agrees.
    assert!(
        tools
            .check_arguments(&snap.deck, "notes__search", &ok)
            .is_ok()
    );
}

#[test]
fn ten_megabyte_arguments_are_refused_before_parsing_or_validation() {
    let tmp = tempfile::tempdir().unwrap();
    tool_skill(tmp.path(), "notes", NOTES_TOOL, "print(1)\n");
    let host = host(tmp.path());
    let snap = host.snapshot();
    let tools = snap.skill_tools();
    let huge = "x".repeat(10 * 1024 * 1024);
    let value = json!({ "query": huge });
    let err = tools
        .check_arguments(&snap.deck, "notes__search", &value)
        .unwrap_err();
    assert!(
        matches!(err, Error::ToolArgumentsTooLarge { .. }),
        "{err:?}"
    );
    let text = value.to_string();
    let err = tools
        .parse_arguments(&snap.deck, "notes__search", &text)
        .unwrap_err();
    assert!(
        matches!(err, Error::ToolArgumentsTooLarge { .. }),
        "{err:?}"
    );
    // Small and malformed: a JSON error, not a crash.
    let err = tools
        .parse_arguments(&snap.deck, "notes__search", "{\"query\": ")
        .unwrap_err();
    assert!(matches!(err, Error::ToolArgumentsNotJson { .. }), "{err:?}");
    let parsed = tools
        .parse_arguments(&snap.deck, "notes__search", "{\"query\": \"q\"}")
        .unwrap();
    assert_eq!(parsed, json!({"query": "q"}));
}

#[test]
fn an_unknown_tool_name_is_an_error_with_close_names() {
    let tmp = tempfile::tempdir().unwrap();
    tool_skill(tmp.path(), "notes", NOTES_TOOL, "print(1)\n");
    let host = host(tmp.path());
    let snap = host.snapshot();
    let err = snap
        .skill_tools()
        .resolve(&snap.deck, "notes__serch")
        .unwrap_err();
    assert!(matches!(err, Error::UnknownSkillTool { .. }));
    assert!(
        err.to_string().contains("did you mean notes__search"),
        "{err}"
    );
    assert_eq!(err.to_tool_error().kind, ToolErrorKind::UnknownTool);
}

#[test]
fn an_ineligible_skill_offers_no_tools_and_activation_says_why() {
    let tmp = tempfile::tempdir().unwrap();
    let tools_and_requires =
        format!("{NOTES_TOOL}requires:\n  bins: [skilldeck-no-such-binary-xyz]\n");
    tool_skill(tmp.path(), "needy", &tools_and_requires, "print(1)\n");
    let host = host(tmp.path());
    let snap = host.snapshot();
    assert_eq!(snap.skill_tools().served(&snap.deck).count(), 0);
    assert!(snap.get("needy").is_none());
    assert!(snap.model_names.is_empty());

    let err = snap
        .skill_tools()
        .resolve(&snap.deck, "needy__search")
        .unwrap_err();
    assert!(
        matches!(&err, Error::Core(skilldeck::Error::SkillIneligible { name, .. }) if name == "needy"),
        "{err:?}"
    );
    let err = host.activate(&snap, "s1", "needy", "", false).unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::UnknownSkill);
    assert!(
        err.message
            .contains("needs 'skilldeck-no-such-binary-xyz' on PATH (requires.bins)"),
        "{}",
        err.message
    );
}
