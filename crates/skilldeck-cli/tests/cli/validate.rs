//! The `skilldeck` binary, driven as a user would: `validate` (its output,
//! modes, config and codes), `new`'s scaffold and `serve`'s refusals.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::{stderr, stdout};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn fixtures() -> PathBuf {
    root().join("crates/skilldeck/tests/fixtures")
}

fn skilldeck(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_skilldeck"))
        .args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .env("XDG_CONFIG_HOME", cwd.join(".no-user-config"))
        .output()
        .unwrap()
}

#[test]
fn bundled_examples_are_valid_in_strict_mode() {
    let o = skilldeck(&["validate", "--strict", "-r", "examples/skills"], &root());
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(
        stdout(&o).ends_with("4 skills: 4 valid, 0 invalid, 0 warnings\n"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn human_output_is_rustc_style_with_source_caret_and_help() {
    let o = skilldeck(&["validate", "codes/name-dir-mismatch/folder"], &fixtures());
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    let expected = "\
error[name-dir-mismatch]: Directory name 'folder' must match skill name 'other'
  --> codes/name-dir-mismatch/folder/SKILL.md:2:7
  |
2 | name: other
  |       ^^^^^
  = help: rename the folder to `other`, or set `name: folder`
";
    assert!(out.starts_with(expected), "{out}");
    assert!(
        out.ends_with("1 skill: 0 valid, 1 invalid, 0 warnings\n"),
        "{out}"
    );
}

#[test]
fn json_output_is_one_array_of_reports() {
    let o = skilldeck(
        &[
            "validate",
            "--format",
            "json",
            "codes/unknown-field/extra",
            "valid/complete-skill",
        ],
        &fixtures(),
    );
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let reports = v.as_array().unwrap();
    assert_eq!(reports.len(), 2);
    assert_eq!(reports[0]["path"], "codes/unknown-field/extra");
    assert_eq!(reports[0]["name"], "extra");
    assert_eq!(reports[0]["valid"], false);
    let d = &reports[0]["diagnostics"][0];
    assert_eq!(d["code"], "unknown-field");
    assert_eq!(d["severity"], "error");
    assert_eq!(d["line"], 4);
    assert_eq!(d["column"], 1);
    assert!(
        d["message"]
            .as_str()
            .unwrap()
            .starts_with("Unexpected fields in frontmatter: author.")
    );
    assert_eq!(reports[1]["valid"], true);
    assert_eq!(reports[1]["diagnostics"], serde_json::json!([]));
}

#[test]
fn lenient_mode_turns_spec_violations_into_warnings() {
    let o = skilldeck(
        &["validate", "--lenient", "codes/name-dir-mismatch/folder"],
        &fixtures(),
    );
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("warning[name-dir-mismatch]"));
    assert!(stdout(&o).ends_with("1 skill: 1 valid, 0 invalid, 1 warning\n"));
}

#[test]
fn allow_field_flag_admits_a_field() {
    let o = skilldeck(
        &[
            "validate",
            "--allow-field",
            "author",
            "codes/unknown-field/extra",
        ],
        &fixtures(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}

#[test]
fn missing_path_exits_2() {
    let o = skilldeck(&["validate", "does/not/exist"], &fixtures());
    assert_eq!(o.status.code(), Some(2));
    assert!(stdout(&o).contains("error[path-not-found]: Path does not exist: does/not/exist"));
}

#[test]
fn usage_error_exits_2() {
    let o = skilldeck(&["validate", "--strict", "--lenient", "x"], &fixtures());
    assert_eq!(o.status.code(), Some(2));
    // `validate` with no PATH is no longer a usage error (issue 10): it
    // checks the discovered skills; see validate_without_path_checks_every_discovered_skill.
}

#[test]
fn recursive_output_order_is_deterministic() {
    let a = skilldeck(
        &["validate", "-r", "--format", "json", "codes"],
        &fixtures(),
    );
    let b = skilldeck(
        &["validate", "-r", "--format", "json", "codes"],
        &fixtures(),
    );
    assert_eq!(a.stdout, b.stdout);
    let v: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    let paths: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    let mut sorted = paths.clone();
    sorted.sort_by(|a, b| Path::new(a).cmp(Path::new(b)));
    assert_eq!(paths, sorted);
    assert!(paths.len() >= 30, "{}", paths.len());
}

#[test]
fn skill_md_path_is_accepted() {
    let o = skilldeck(&["validate", "valid/complete-skill/SKILL.md"], &fixtures());
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}

#[test]
fn recursive_search_without_skills_fails() {
    let tmp = tempfile::tempdir().unwrap();
    let o = skilldeck(&["validate", "-r", "."], tmp.path());
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("no SKILL.md found under ."));
}

#[test]
fn config_file_sets_mode_and_allowed_fields() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("skilldeck.toml"),
        "[validate]\nallow-fields = [\"author\"]\n",
    )
    .unwrap();
    let skill = fixtures().join("codes/unknown-field/extra");
    let o = skilldeck(&["validate", skill.to_str().unwrap()], tmp.path());
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}

#[test]
fn config_unknown_key_names_file_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("skilldeck.toml"),
        "[validate]\nstrict = true\n",
    )
    .unwrap();
    let o = skilldeck(&["validate", "x"], tmp.path());
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.contains("skilldeck.toml:2:1"), "{err}");
    assert!(err.contains("strict"), "{err}");
}

#[test]
fn new_scaffolds_a_skill_that_validates_strictly_once_its_placeholders_are_replaced() {
    let tmp = tempfile::tempdir().unwrap();
    let o = skilldeck(&["new", "pdf-tools", "--dir", "skills"], tmp.path());
    assert_eq!(o.status.code(), Some(0), "{:?}", o);
    let dir = tmp.path().join("skills/pdf-tools");
    assert!(dir.join("references").is_dir());
    assert!(dir.join("scripts").is_dir());
    let text = std::fs::read_to_string(dir.join("SKILL.md")).unwrap();
    let start = text.find("description:").unwrap();
    let end = text.find("license:").unwrap();
    let text = format!(
        "{}description: Fills PDF forms. Use when the user asks to fill a PDF form.\n{}",
        &text[..start],
        &text[end..]
    )
    .replace("TODO: ", "");
    std::fs::write(dir.join("SKILL.md"), text).unwrap();
    let o = skilldeck(&["validate", "--strict", "skills/pdf-tools"], tmp.path());
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(
        stdout(&o).ends_with("1 skill: 1 valid, 0 invalid, 0 warnings\n"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn new_refuses_invalid_names_with_the_same_diagnostics() {
    let tmp = tempfile::tempdir().unwrap();
    let o = skilldeck(&["new", "Bad--Name"], tmp.path());
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.contains("error[name-not-lowercase]"), "{err}");
    assert!(err.contains("error[name-consecutive-hyphens]"), "{err}");
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
}

#[test]
fn new_refuses_to_overwrite() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("taken")).unwrap();
    std::fs::write(tmp.path().join("taken/notes.txt"), "mine").unwrap();
    let o = skilldeck(&["new", "taken", "--dir", "."], tmp.path());
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("taken/notes.txt")).unwrap(),
        "mine"
    );
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1);
}

#[test]
fn serve_refuses_a_non_loopback_address_without_a_token() {
    let tmp = tempfile::tempdir().unwrap();
    let o = skilldeck(&["serve", "--http", "0.0.0.0:0"], tmp.path());
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.contains("without authentication"), "{err}");
}

#[test]
fn serve_refuses_an_empty_token_file_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let token = tmp.path().join("token");
    std::fs::write(&token, "\n").unwrap();
    let o = skilldeck(
        &[
            "serve",
            "--http",
            "127.0.0.1:0",
            "--token-file",
            token.to_str().unwrap(),
        ],
        tmp.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.contains("token file") && err.contains("holds no token"),
        "{err}"
    );
}

#[test]
fn serve_answers_initialize_over_stdio_with_the_bundled_skills() {
    use std::io::Write;
    let tmp = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_skilldeck"))
        .args(["serve", "--no-watch"])
        .current_dir(tmp.path())
        .env("HOME", tmp.path())
        .env("XDG_CONFIG_HOME", tmp.path().join("config"))
        .env("XDG_CACHE_HOME", tmp.path().join("cache"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
    )
    .unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":2,"method":"tools/list"}}"#).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert_eq!(lines[0]["result"]["serverInfo"]["name"], "skilldeck");
    let tools = lines[1]["result"]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 3);
    assert!(
        tools[0]["description"]
            .as_str()
            .unwrap()
            .contains("code-review")
    );
}

/// A skill whose description never says when to use it (a warning).
fn no_trigger_skill(root: &Path) -> PathBuf {
    skilldeck_testkit::skill(root, "tables")
        .description("Formats tables.")
        .write();
    root.join("tables")
}

#[test]
fn allow_flag_silences_a_warning_and_deny_fails_on_it() {
    let tmp = tempfile::tempdir().unwrap();
    let skill = no_trigger_skill(tmp.path());
    let path = skill.to_str().unwrap();
    let o = skilldeck(&["validate", path], tmp.path());
    assert!(stdout(&o).contains("warning[description-no-trigger]"));
    let o = skilldeck(
        &["validate", "--allow", "description-no-trigger", path],
        tmp.path(),
    );
    assert_eq!(o.status.code(), Some(0));
    assert!(
        stdout(&o).ends_with("1 skill: 1 valid, 0 invalid, 0 warnings\n"),
        "{}",
        stdout(&o)
    );
    let o = skilldeck(
        &["validate", "--deny", "description-no-trigger", path],
        tmp.path(),
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).contains("error[description-no-trigger]"),
        "{}",
        stdout(&o)
    );
    let o = skilldeck(&["validate", "--quiet", path], tmp.path());
    assert_eq!(o.status.code(), Some(0));
    assert!(!stdout(&o).contains("warning["), "{}", stdout(&o));
}

#[test]
fn config_allow_and_deny_lists_grade_codes() {
    let tmp = tempfile::tempdir().unwrap();
    let skill = no_trigger_skill(tmp.path());
    std::fs::write(
        tmp.path().join("skilldeck.toml"),
        "[validate]\ndeny = [\"description-no-trigger\"]\n",
    )
    .unwrap();
    let path = skill.to_str().unwrap();
    let o = skilldeck(&["validate", path], tmp.path());
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    // The command line overrides the config for that code.
    let o = skilldeck(
        &["validate", "--allow", "description-no-trigger", path],
        tmp.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}

#[test]
fn unknown_or_unallowable_codes_are_usage_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let o = skilldeck(&["validate", "--allow", "broken-links", "."], tmp.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("valid codes:"), "{}", stderr(&o));
    assert!(stderr(&o).contains("broken-link,"), "{}", stderr(&o));
    let o = skilldeck(&["validate", "--allow", "no-frontmatter", "."], tmp.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot be allowed"), "{}", stderr(&o));
    std::fs::write(
        tmp.path().join("skilldeck.toml"),
        "[validate]\nallow = [\"nope\"]\n",
    )
    .unwrap();
    let o = skilldeck(&["validate", "."], tmp.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("skilldeck.toml:2"), "{}", stderr(&o));
    assert!(stderr(&o).contains("unknown code 'nope'"), "{}", stderr(&o));
}

#[test]
fn long_lines_are_shown_as_a_window_around_the_column() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("long");
    std::fs::create_dir(&dir).unwrap();
    let long = "word ".repeat(410);
    std::fs::write(
        dir.join("SKILL.md"),
        format!("---\nname: long\ndescription: Use when {long}\n---\n"),
    )
    .unwrap();
    let o = skilldeck(&["validate", "long"], tmp.path());
    let out = stdout(&o);
    let source = out
        .lines()
        .find(|l| l.starts_with("3 | "))
        .unwrap_or_else(|| panic!("{out}"));
    let carets = out.lines().find(|l| l.contains('^')).unwrap();
    assert!(source.chars().count() < 100, "{source}");
    assert!(source.ends_with('…'), "{source}");
    assert!(carets.chars().count() < 100, "{carets}");
    // The caret sits under the value's first character.
    let caret_col = carets.find('^').unwrap();
    assert_eq!(
        &source[caret_col..caret_col + 3],
        "Use",
        "{source}\n{carets}"
    );
}

#[test]
fn validate_without_path_checks_every_discovered_skill() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("skills");
    skilldeck_testkit::skill(&root, "good")
        .description("Use when testing.")
        .write();
    std::fs::create_dir_all(root.join("broken")).unwrap();
    std::fs::write(root.join("broken/SKILL.md"), "no frontmatter\n").unwrap();
    let o = skilldeck(&["validate", "--root", "skills"], tmp.path());
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let out = stdout(&o);
    assert!(out.contains("error[no-frontmatter]"), "{out}");
    assert!(
        out.ends_with("2 skills: 1 valid, 1 invalid, 0 warnings\n"),
        "{out}"
    );
}

#[test]
fn validate_of_a_folder_of_skills_suggests_recursive() {
    let tmp = tempfile::tempdir().unwrap();
    skilldeck_testkit::skill(tmp.path().join("skills"), "one")
        .description("Use when testing.")
        .write();
    let o = skilldeck(&["validate", "skills"], tmp.path());
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(out.contains("1 skill folder found below it"), "{out}");
    assert!(out.contains("skilldeck validate -r skills"), "{out}");
}

#[test]
fn a_file_that_is_not_text_is_quoted_at_its_bad_byte_beside_its_frontmatter_errors() {
    // The body holds a byte that is not UTF-8; the frontmatter's YAML is
    // broken. Both are reported, each quoting its line (the bad byte shown
    // as U+FFFD under the caret).
    let tmp = tempfile::tempdir().unwrap();
    skilldeck_testkit::file(
        tmp.path().join("latin1/SKILL.md"),
        b"---\nname: latin1\ndescription: [unclosed\n---\n# Caf\xe9\n",
    );
    let o = skilldeck(&["validate", "latin1"], tmp.path());
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(out.contains("error[invalid-yaml]"), "{out}");
    let bad_byte = "\
error[not-utf8]: SKILL.md is not valid UTF-8 (invalid byte at offset 49)
  --> latin1/SKILL.md:5:6
  |
5 | # Caf\u{FFFD}
  |      ^
";
    assert!(out.contains(bad_byte), "{out}");
}
