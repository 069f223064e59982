//! `list`, `list --all`, `show` and `activate` for skills with `requires`
//! and `tools`: an ineligible skill is hidden from `list` unless `--all`,
//! which says why; `show` says why and lists the tools; activating it fails
//! with the reason.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

fn skilldeck(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_skilldeck"))
        .args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .env("HOME", cwd.join("home"))
        .env("XDG_CONFIG_HOME", cwd.join("home/.config"))
        .env("XDG_CACHE_HOME", cwd.join("home/.cache"))
        .env("XDG_STATE_HOME", cwd.join("home/.state"))
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

/// `.skills/needy` (requires a binary nobody has) and `.skills/notes`
/// (declares a tool).
fn fixture() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join(".skills");
    skilldeck_testkit::skill(&root, "needy")
        .description("Needs a binary. Use when testing.")
        .frontmatter_raw("requires:\n  bins: [skilldeck-no-such-binary-xyz]\n")
        .body("# Needy\n")
        .write();
    skilldeck_testkit::skill(&root, "notes")
        .description("Searches notes. Use when testing.")
        .frontmatter_raw(
            "tools:\n  - name: search\n    description: Search the notes.\n    parameters:\n      query: {type: string, required: true}\n    run: scripts/search.py\n",
        )
        .file("scripts/search.py", "print('[]')\n")
        .body("# Notes\n")
        .write();
    tmp
}

#[test]
fn list_hides_ineligible_skills_and_list_all_says_why() {
    let tmp = fixture();
    let o = skilldeck(&["list"], tmp.path());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains("notes") && !out.contains("needy"), "{out}");
    assert!(
        text(&o.stderr).contains("list --all"),
        "{}",
        text(&o.stderr)
    );

    let o = skilldeck(&["list", "--all"], tmp.path());
    let out = text(&o.stdout);
    assert!(out.contains("needy"), "{out}");
    assert!(
        out.contains("[not eligible: needs 'skilldeck-no-such-binary-xyz'"),
        "{out}"
    );

    let o = skilldeck(&["list", "--all", "--format", "json"], tmp.path());
    let rows: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let needy = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "needy")
        .unwrap();
    assert_eq!(needy["eligible"], false);
    assert_eq!(
        needy["ineligible_reason"],
        "needs 'skilldeck-no-such-binary-xyz' on PATH (requires.bins)"
    );
}

#[test]
fn show_says_why_a_skill_is_not_eligible() {
    let tmp = fixture();
    let o = skilldeck(&["show", "needy"], tmp.path());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(
        out.contains("| eligible | no: needs 'skilldeck-no-such-binary-xyz' on PATH"),
        "{out}"
    );
}

#[test]
fn show_lists_the_declared_tools_with_full_names_and_schemas() {
    let tmp = fixture();
    let o = skilldeck(&["show", "notes"], tmp.path());
    let out = text(&o.stdout);
    assert!(
        out.contains("- `search` (`notes__search`, runs `scripts/search.py`): Search the notes."),
        "{out}"
    );
    let o = skilldeck(&["show", "notes", "--format", "json"], tmp.path());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let tool = &v["tools"][0];
    assert_eq!(tool["full_name"], "notes__search");
    assert_eq!(tool["run"], "scripts/search.py");
    assert_eq!(tool["input_schema"]["required"][0], "query");
    assert_eq!(tool["input_schema"]["additionalProperties"], false);
}

#[test]
fn activating_an_ineligible_skill_fails_with_the_reason() {
    let tmp = fixture();
    let o = skilldeck(&["activate", "needy"], tmp.path());
    assert_ne!(o.status.code(), Some(0));
    let err = text(&o.stderr);
    assert!(
        err.contains("not available here") && err.contains("skilldeck-no-such-binary-xyz"),
        "{err}"
    );
}
