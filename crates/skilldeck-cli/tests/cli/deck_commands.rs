//! `list` and `completions`, driven as a user would, against throwaway
//! skill roots (HOME and XDG folders point into a tempdir).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

use crate::common::{stderr, stdout};

/// The skill `name` in `root` as these tests list it: a description and a
/// body that both name it. Frontmatter lines added to the builder follow the
/// description.
fn listed_skill(root: &Path, name: &str) -> skilldeck_testkit::Skill {
    skilldeck_testkit::skill(root, name)
        .description(format!("{name} does things. Use when testing."))
        .body(format!("# {name}\n\nBody of {name}.\n"))
}

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

#[test]
fn list_with_no_setup_shows_the_bundled_skills() {
    let tmp = tempfile::tempdir().unwrap();
    let o = skilldeck(&["list"], tmp.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.starts_with("NAME"), "{out}");
    assert!(
        out.contains("skill-authoring") && out.contains("bundled"),
        "{out}"
    );
}

#[test]
fn list_json_is_stable_and_ordered_by_scope_then_name() {
    let tmp = tempfile::tempdir().unwrap();
    listed_skill(&tmp.path().join(".skills"), "zeta").write();
    listed_skill(&tmp.path().join("home/.agents/skills"), "alpha").write();
    let o = skilldeck(&["list", "--format", "json"], tmp.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = v.as_array().unwrap();
    assert_eq!(rows[0]["name"], "zeta");
    assert_eq!(rows[0]["scope"], "project");
    assert_eq!(rows[1]["name"], "alpha");
    assert_eq!(rows[1]["scope"], "user");
    // Bundled examples are a fallback: other roots have skills.
    assert!(rows.iter().all(|r| r["scope"] != "bundled"));
    // Field order in the text is the documented order.
    let text = stdout(&o);
    let first = &text[..text.find('}').unwrap()];
    let positions: Vec<usize> = [
        "name",
        "description",
        "scope",
        "mode",
        "dir",
        "skill_md",
        "root",
        "model_invocable",
        "user_invocable",
    ]
    .iter()
    .map(|k| first.find(&format!("\"{k}\":")).unwrap())
    .collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{first}");
}

#[test]
fn list_shadowed_shows_the_losers_and_a_note_says_how_many() {
    let tmp = tempfile::tempdir().unwrap();
    listed_skill(&tmp.path().join(".claude/skills"), "dup").write();
    listed_skill(&tmp.path().join("home/.claude/skills"), "dup").write();
    let o = skilldeck(&["list", "--scope", "project"], tmp.path());
    assert!(
        stderr(&o).contains("note: 1 shadowed skill"),
        "{}",
        stderr(&o)
    );
    let o = skilldeck(&["list", "--shadowed"], tmp.path());
    let out = stdout(&o);
    assert!(out.starts_with("dup  user  "), "{out}");
    assert!(out.contains("shadowed by project"), "{out}");
}

#[test]
fn root_flag_replaces_default_roots() {
    let tmp = tempfile::tempdir().unwrap();
    listed_skill(&tmp.path().join(".skills"), "project-one").write();
    listed_skill(&tmp.path().join("mine"), "mine-one").write();
    let o = skilldeck(&["list", "--root", "mine", "--format", "json"], tmp.path());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let names: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["mine-one"]);
}

#[test]
fn skipped_skills_are_reported_with_file_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    skilldeck_testkit::skill(tmp.path().join("mine"), "bad")
        .description("[unclosed")
        .write();
    listed_skill(&tmp.path().join("mine"), "good").write();
    let o = skilldeck(&["list", "--root", "mine"], tmp.path());
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("good"));
    let err = stderr(&o);
    assert!(err.contains("mine/bad/SKILL.md:3:"), "{err}");
    assert!(err.contains("error[invalid-yaml]"), "{err}");
}

#[test]
fn config_modes_show_in_list() {
    let tmp = tempfile::tempdir().unwrap();
    listed_skill(&tmp.path().join("mine"), "pinned-one").write();
    std::fs::write(
        tmp.path().join("skilldeck.toml"),
        "[modes]\npinned-one = \"pinned\"\n",
    )
    .unwrap();
    let o = skilldeck(&["list", "--root", "mine"], tmp.path());
    assert!(
        stdout(&o).contains("pinned-one  extra     pinned"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn completions_are_generated_for_bash() {
    let tmp = tempfile::tempdir().unwrap();
    let o = skilldeck(&["completions", "bash"], tmp.path());
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("_skilldeck()"), "{}", stdout(&o));
}

#[test]
fn read_prints_a_skill_file_and_refuses_traversal() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("mine");
    listed_skill(&root, "docs")
        .file("references/guide.md", "# Guide\n")
        .write();
    let o = skilldeck(
        &["read", "docs", "references/guide.md", "--root", "mine"],
        tmp.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "# Guide\n");
    let o = skilldeck(
        &[
            "read",
            "docs",
            "references/guide.md",
            "--format",
            "json",
            "--root",
            "mine",
        ],
        tmp.path(),
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["text"], "# Guide\n");
    assert_eq!(v["mime"], "text/markdown");
    for hostile in [
        "../docs/SKILL.md",
        "/etc/passwd",
        "%2e%2e%2fetc%2fpasswd",
        "..\\..\\x",
    ] {
        let o = skilldeck(&["read", "docs", hostile, "--root", "mine"], tmp.path());
        assert_eq!(o.status.code(), Some(2), "{hostile}");
        assert!(stderr(&o).contains("refused"), "{hostile}: {}", stderr(&o));
        assert!(o.stdout.is_empty());
    }
}

#[test]
fn unknown_skill_names_get_a_did_you_mean() {
    let tmp = tempfile::tempdir().unwrap();
    listed_skill(&tmp.path().join("mine"), "pdf-tools").write();
    for cmd in [
        vec!["show", "pdf-tols"],
        vec!["read", "pdf-tols", "SKILL.md"],
    ] {
        let mut args = cmd.clone();
        args.extend(["--root", "mine"]);
        let o = skilldeck(&args, tmp.path());
        assert_eq!(o.status.code(), Some(2));
        assert!(
            stderr(&o).contains("unknown skill 'pdf-tols'; did you mean 'pdf-tools'?"),
            "{}",
            stderr(&o)
        );
    }
}

#[test]
fn search_ranks_by_relevance_with_filters() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("mine");
    for (name, desc) in [
        (
            "pdf-tools",
            "Extract text and tables from PDF files. Use when reading PDFs.",
        ),
        (
            "csv-clean",
            "Clean CSV files and fix encodings. Use when a CSV is messy.",
        ),
        (
            "git-notes",
            "Summarise git history. Use when asked what changed.",
        ),
    ] {
        skilldeck_testkit::skill(&root, name)
            .description(desc)
            .body("Body\n")
            .write();
    }
    let o = skilldeck(
        &["search", "pdf tables", "--root", "mine", "--format", "json"],
        tmp.path(),
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v[0]["name"], "pdf-tools");
    assert!(v[0]["score"].as_f64().unwrap() > 0.0);
    let o = skilldeck(
        &[
            "search", "files", "--root", "mine", "--name", "^csv", "--format", "json",
        ],
        tmp.path(),
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1);
    assert_eq!(v[0]["name"], "csv-clean");
    let o = skilldeck(&["search", "pdf", "--root", "mine"], tmp.path());
    assert!(stdout(&o).contains("pdf-tools"), "{}", stdout(&o));
}

#[test]
fn show_prints_metadata_body_and_files() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("mine");
    listed_skill(&root, "docs")
        .frontmatter_raw("license: MIT\nmetadata:\n  version: 1.0\n")
        .file("scripts/run.sh", "echo hi\n")
        .write();
    let o = skilldeck(&["show", "docs", "--root", "mine"], tmp.path());
    let out = stdout(&o);
    assert!(out.starts_with("# docs\n"), "{out}");
    assert!(out.contains("| license | MIT |"), "{out}");
    assert!(out.contains("Body of docs."), "{out}");
    assert!(out.contains("- `scripts/run.sh` (8 bytes)"), "{out}");
    let o = skilldeck(
        &["show", "docs", "--root", "mine", "--format", "json"],
        tmp.path(),
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["frontmatter"]["metadata"]["version"], "1.0");
    assert!(v["body"].as_str().unwrap().contains("Body of docs."));
}

#[test]
fn show_json_frontmatter_carries_the_files_name_and_description() {
    let tmp = tempfile::tempdir().unwrap();
    listed_skill(&tmp.path().join("mine"), "docs").write();
    let o = skilldeck(
        &["show", "docs", "--root", "mine", "--format", "json"],
        tmp.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["frontmatter"]["name"], "docs", "{v}");
    assert_eq!(
        v["frontmatter"]["description"], "docs does things. Use when testing.",
        "{v}"
    );
}

#[test]
fn activate_joins_words_shell_quoted_so_dollar_one_is_a_group() {
    let tmp = tempfile::tempdir().unwrap();
    skilldeck_testkit::skill(tmp.path().join("mine"), "x")
        .description("Use when testing.")
        .body("first=$0 second=$1 all=$ARGUMENTS\n")
        .write();
    let o = skilldeck(
        &[
            "activate", "x", "a", "b c", "--root", "mine", "--format", "json",
        ],
        tmp.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["body"], "first=a second=b c all=a \"b c\"");
}

#[test]
fn activate_wraps_the_body_in_the_client_guide_envelope() {
    let tmp = tempfile::tempdir().unwrap();
    skilldeck_testkit::skill(tmp.path().join("mine"), "x")
        .description("Use when testing.")
        .body("Review code\n")
        .write();
    let o = skilldeck(
        &["activate", "x", "def foo()", "--root", "mine"],
        tmp.path(),
    );
    let out = stdout(&o);
    assert!(
        out.starts_with("<skill_content name=\"x\">\nReview code\n\nARGUMENTS: \"def foo()\""),
        "{out}"
    );
    assert!(out.contains("Skill directory: "), "{out}");
    assert!(
        out.contains("Relative paths in this skill are relative to the skill directory."),
        "{out}"
    );
    assert!(out.trim_end().ends_with("</skill_content>"), "{out}");
}

#[test]
fn activate_in_the_same_conversation_twice_gives_the_notice() {
    let tmp = tempfile::tempdir().unwrap();
    skilldeck_testkit::skill(tmp.path().join("mine"), "x")
        .description("Use when testing.")
        .body("Body\n")
        .write();
    let args = [
        "activate",
        "x",
        "--root",
        "mine",
        "--conversation",
        "chat-1",
    ];
    let first = stdout(&skilldeck(&args, tmp.path()));
    assert!(first.contains("Body"), "{first}");
    let second = stdout(&skilldeck(&args, tmp.path()));
    assert!(second.contains("already active"), "{second}");
    assert!(!second.contains("Body"), "{second}");
    let other = stdout(&skilldeck(
        &[
            "activate",
            "x",
            "--root",
            "mine",
            "--conversation",
            "chat-2",
        ],
        tmp.path(),
    ));
    assert!(other.contains("Body"), "{other}");
}

#[test]
fn activate_in_a_conversation_delivers_other_arguments_and_reloads_on_request() {
    let tmp = tempfile::tempdir().unwrap();
    skilldeck_testkit::skill(tmp.path().join("mine"), "greet")
        .description("Use when greeting.")
        .body("Greet $ARGUMENTS.\n")
        .write();
    let run = |extra: &[&str]| {
        let mut args = vec!["activate", "greet", "--root", "mine", "--conversation", "c"];
        args.extend_from_slice(extra);
        stdout(&skilldeck(&args, tmp.path()))
    };
    assert!(run(&["--", "Ada"]).contains("Greet Ada."));
    let bob = run(&["--", "Bob"]);
    assert!(
        bob.contains("Greet Bob."),
        "other arguments are delivered: {bob}"
    );
    let again = run(&["--", "Bob"]);
    assert!(again.contains("already active"), "{again}");
    let reloaded = run(&["--reload", "--", "Bob"]);
    assert!(reloaded.contains("Greet Bob."), "{reloaded}");
}

#[test]
fn activate_refuses_skills_turned_off() {
    let tmp = tempfile::tempdir().unwrap();
    skilldeck_testkit::skill(tmp.path().join("mine"), "x")
        .description("Use when testing.")
        .body("Body\n")
        .write();
    std::fs::write(tmp.path().join("skilldeck.toml"), "[modes]\nx = \"off\"\n").unwrap();
    let o = skilldeck(&["activate", "x", "--root", "mine"], tmp.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("turned off"), "{}", stderr(&o));
}

#[test]
fn prompt_prints_the_catalog_and_leaves_out_hidden_skills() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("mine");
    listed_skill(&root, "visible").write();
    listed_skill(&root, "hidden")
        .frontmatter_raw("disable-model-invocation: true\n")
        .write();
    listed_skill(&root, "manual-one").write();
    std::fs::write(
        tmp.path().join("skilldeck.toml"),
        "[modes]\nmanual-one = \"manual\"\n",
    )
    .unwrap();
    let o = skilldeck(&["prompt", "--root", "mine"], tmp.path());
    let out = stdout(&o);
    assert!(
        out.starts_with("<available_skills>\n  <skill>\n    <name>visible</name>"),
        "{out}"
    );
    assert!(
        !out.contains("hidden") && !out.contains("manual-one"),
        "{out}"
    );
}

#[test]
fn prompt_with_no_skills_prints_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("empty")).unwrap();
    let o = skilldeck(&["prompt", "--root", "empty"], tmp.path());
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stdout(&o), "");
}

#[test]
fn prompt_budget_is_respected_and_explained_on_stderr() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("mine");
    for i in 0..30 {
        listed_skill(&root, &format!("skill-{i:02}")).write();
    }
    let o = skilldeck(
        &[
            "prompt",
            "--root",
            "mine",
            "--budget-chars",
            "2000",
            "--explain",
        ],
        tmp.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).chars().count() <= 2000);
    let err = stderr(&o);
    assert!(err.contains("of 2,000 characters"), "{err}");
    // Every listed skill keeps a description; the rest are not listed.
    assert!(err.contains("not listed"), "{err}");
    assert!(
        stdout(&o)
            .contains("more skills are not listed here; find them with `skilldeck search WORDS`.")
    );
    let o = skilldeck(
        &[
            "prompt",
            "--root",
            "mine",
            "--budget-tokens",
            "300",
            "--format",
            "markdown",
        ],
        tmp.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    let tokens = skilldeck::count_tokens(&text, skilldeck::Encoding::O200kBase).unwrap();
    assert!(tokens <= 300, "{tokens}");
}

#[test]
fn prompt_query_keeps_the_relevant_skill_when_the_budget_is_tight() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("mine");
    for i in 0..20 {
        listed_skill(&root, &format!("filler-{i:02}")).write();
    }
    skilldeck_testkit::skill(&root, "zz-kubernetes")
        .description("Deploy services to kubernetes clusters. Use when deploying.")
        .body("Body\n")
        .write();
    let o = skilldeck(
        &[
            "prompt",
            "--root",
            "mine",
            "--budget-chars",
            "600",
            "--query",
            "deploy to kubernetes",
            "--format",
            "json",
        ],
        tmp.path(),
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v[0]["name"], "zz-kubernetes", "{v}");
}

#[test]
fn index_flag_keeps_a_metadata_index_and_lists_the_same_skills() {
    let tmp = tempfile::tempdir().unwrap();
    listed_skill(&tmp.path().join("mine"), "alpha").write();
    listed_skill(&tmp.path().join("mine"), "beta").write();
    let plain = skilldeck(&["list", "--format", "json", "--root", "mine"], tmp.path());
    let first = skilldeck(
        &["list", "--index", "--format", "json", "--root", "mine"],
        tmp.path(),
    );
    let second = skilldeck(
        &["list", "--index", "--format", "json", "--root", "mine"],
        tmp.path(),
    );
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    assert_eq!(plain.stdout, first.stdout);
    assert_eq!(first.stdout, second.stdout);
    let index_dir = tmp.path().join("home/.cache/skilldeck/index");
    assert_eq!(std::fs::read_dir(&index_dir).unwrap().count(), 1);
}

#[test]
fn config_catalog_section_sets_the_prompt_format() {
    let tmp = tempfile::tempdir().unwrap();
    listed_skill(&tmp.path().join("mine"), "alpha").write();
    std::fs::write(
        tmp.path().join("skilldeck.toml"),
        "[catalog]\nformat = \"markdown\"\n",
    )
    .unwrap();
    let o = skilldeck(&["prompt", "--root", "mine"], tmp.path());
    assert!(
        stdout(&o).starts_with("## Available skills"),
        "{}",
        stdout(&o)
    );
    std::fs::write(
        tmp.path().join("skilldeck.toml"),
        "[catalog]\nformat = \"yaml\"\n",
    )
    .unwrap();
    let o = skilldeck(&["prompt", "--root", "mine"], tmp.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("yaml"), "{}", stderr(&o));
}

/// True when `out` holds a control character other than tab and newline.
fn has_control(out: &[u8]) -> bool {
    String::from_utf8_lossy(out).chars().any(|c| {
        matches!(c, '\u{0}'..='\u{8}' | '\u{b}'..='\u{1f}' | '\u{7f}'..='\u{9f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    })
}

#[test]
fn control_characters_never_reach_the_terminal_raw() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("mine");
    skilldeck_testkit::skill(&root, "ctl")
        .description("\"Clears \\e[2J\\e[H rings \\a rlo \\u202e. Use when testing.\"")
        .frontmatter_raw("license: \"MIT \\e[31m\"\n")
        .body("# ctl\n\nBody \u{1b}[2J with escape.\n")
        .file("references/esc.md", "file \u{1b}]0;title\u{7}\n")
        .write();
    for args in [
        vec!["list", "--root", "mine"],
        vec!["show", "ctl", "--root", "mine"],
        vec!["prompt", "--root", "mine"],
        vec!["prompt", "--root", "mine", "--format", "markdown"],
        vec!["search", "clears", "--root", "mine"],
        vec!["activate", "ctl", "--root", "mine"],
        vec!["validate", "mine/ctl"],
        vec!["doctor", "--root", "mine"],
    ] {
        let o = skilldeck(&args, tmp.path());
        assert!(!has_control(&o.stdout), "{args:?}: {:?}", stdout(&o));
        assert!(!has_control(&o.stderr), "{args:?}: {:?}", stderr(&o));
    }
    // JSON keeps JSON's escaping: the text is there, its C0 controls escaped.
    let o = skilldeck(
        &["show", "ctl", "--root", "mine", "--format", "json"],
        tmp.path(),
    );
    assert!(
        !o.stdout.contains(&0x1b) && !o.stdout.contains(&0x07),
        "{}",
        stdout(&o)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["body"].as_str().unwrap().contains('\u{1b}'), "{v}");
    // `read` to a pipe gives the bytes as they are.
    let o = skilldeck(
        &["read", "ctl", "references/esc.md", "--root", "mine"],
        tmp.path(),
    );
    assert_eq!(o.stdout, b"file \x1b]0;title\x07\n");
}

#[test]
fn validate_reports_control_characters_in_descriptions() {
    let tmp = tempfile::tempdir().unwrap();
    skilldeck_testkit::skill(tmp.path().join("mine"), "ctl")
        .description("\"Rings \\a. Use when testing.\"")
        .write();
    let o = skilldeck(&["validate", "mine/ctl"], tmp.path());
    let out = stdout(&o);
    assert!(out.contains("error[control-character]"), "{out}");
    assert!(out.contains("Field 'description'"), "{out}");
}

#[test]
fn commands_that_walk_report_the_walk_limit() {
    let tmp = tempfile::tempdir().unwrap();
    for name in ["a", "b", "c", "d"] {
        listed_skill(&tmp.path().join("mine"), name).write();
    }
    // Two skill folders (the root is not counted).
    std::fs::write(tmp.path().join("limit.toml"), "[discovery]\nmax-dirs = 2\n").unwrap();
    for args in [
        vec!["list"],
        vec!["prompt"],
        vec!["activate", "a"],
        vec!["search", "does"],
    ] {
        let mut args = args;
        args.extend(["--root", "mine", "--config", "limit.toml"]);
        let o = skilldeck(&args, tmp.path());
        assert!(
            stderr(&o).contains("warning[walk-limit]"),
            "{args:?}: {}",
            stderr(&o)
        );
    }
    let o = skilldeck(
        &[
            "list",
            "--root",
            "mine",
            "--config",
            "limit.toml",
            "--format",
            "json",
        ],
        tmp.path(),
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let names: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a", "b"]);
}

#[test]
fn doctor_and_show_say_which_declared_tools_are_not_offered_and_why() {
    let tmp = tempfile::tempdir().unwrap();
    skilldeck_testkit::file(
        tmp.path().join("mine/deep-research/SKILL.md"),
        skilldeck_testkit::seeds::SEED_002_DEEP_RESEARCH,
    );
    listed_skill(&tmp.path().join("mine"), "broken-tool")
        .frontmatter_raw(
            "tools:\n  - name: go\n    description: Go.\n    parameters: [not, a, map]\n    run: scripts/go.sh\n",
        )
        .file("scripts/go.sh", "echo go\n")
        .write();
    let o = skilldeck(&["doctor", "--root", "mine"], tmp.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("declared tools left out or not offered"),
        "{out}"
    );
    assert!(
        out.contains("deep-research/SKILL.md:7") && out.contains("tool-handler-missing"),
        "{out}"
    );
    assert!(
        out.contains("broken-tool/SKILL.md:") && out.contains("tool-schema-invalid"),
        "{out}"
    );
    let o = skilldeck(&["show", "deep-research", "--root", "mine"], tmp.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("implemented by the host"),
        "{}",
        stdout(&o)
    );
}
