//! The first hour of a new user: `new` then `show`, `doctor`, skipped
//! skills, bundled examples, one format vocabulary, help with examples,
//! completions of skill names, fuzzy search and folder reads. HOME and XDG
//! folders point into a tempdir.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

use crate::common::{stderr, stdout};

fn skilldeck_env(args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_skilldeck"));
    cmd.args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .env_remove("COMPLETE")
        .env("HOME", cwd.join("home"))
        .env("XDG_CONFIG_HOME", cwd.join("home/.config"))
        .env("XDG_CACHE_HOME", cwd.join("home/.cache"))
        .env("XDG_STATE_HOME", cwd.join("home/.state"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn skilldeck(args: &[&str], cwd: &Path) -> Output {
    skilldeck_env(args, cwd, &[])
}

fn skill(root: &Path, name: &str) -> skilldeck_testkit::Skill {
    skilldeck_testkit::skill(root, name)
        .description(format!("{name} does things. Use when testing."))
        .body(format!("# {name}\n"))
}

fn json(o: &Output) -> serde_json::Value {
    assert_eq!(o.status.code(), Some(0), "{}", stderr(o));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn new_puts_the_skill_in_the_project_root_so_show_finds_it() {
    let tmp = tempfile::tempdir().unwrap();
    let o = skilldeck(&["new", "pdf-tools"], tmp.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
    let dir = tmp.path().join(".agents/skills/pdf-tools");
    assert!(dir.join("SKILL.md").is_file());
    let o = skilldeck(&["show", "pdf-tools", "--format", "json"], tmp.path());
    let v = json(&o);
    assert_eq!(v["name"], "pdf-tools");
    assert_eq!(v["scope"], "project");
    // No placeholder files served as resources.
    let files: Vec<&str> = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["SKILL.md"]);
}

#[test]
fn new_writes_the_placeholder_marker_in_the_description_and_body() {
    let tmp = tempfile::tempdir().unwrap();
    skilldeck(&["new", "pdf-tools"], tmp.path());
    let text =
        std::fs::read_to_string(tmp.path().join(".agents/skills/pdf-tools/SKILL.md")).unwrap();
    let (front, body) = text[3..].split_once("\n---\n").unwrap();
    let description = front.split("description:").nth(1).unwrap();
    assert!(
        description
            .trim_start_matches([' ', '>', '-', '\n'])
            .starts_with(skilldeck::SCAFFOLD_PLACEHOLDER),
        "{front}"
    );
    assert!(body.contains(skilldeck::SCAFFOLD_PLACEHOLDER), "{body}");
    assert_eq!(skilldeck::SCAFFOLD_PLACEHOLDER, "TODO:");
}

#[test]
fn new_in_a_folder_discovery_does_not_search_warns_how_to_add_it() {
    let tmp = tempfile::tempdir().unwrap();
    let o = skilldeck(&["new", "pdf-tools", "--dir", "skills"], tmp.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("not a folder skilldeck searches"), "{err}");
    assert!(
        err.contains("--root skills") && err.contains("roots = [\"skills\"]"),
        "{err}"
    );
    // As the warning says: with --root it is found.
    let o = skilldeck(&["show", "pdf-tools", "--root", "skills"], tmp.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // A --dir that is a searched root gets no warning.
    let o = skilldeck(&["new", "other", "--dir", ".claude/skills"], tmp.path());
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
}

#[test]
fn show_and_activate_of_a_skipped_skill_answer_with_its_diagnostic() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(".agents/skills/x");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: x\ndescription: [unclosed\n---\n# x\n",
    )
    .unwrap();
    for command in ["show", "activate"] {
        let o = skilldeck(&[command, "x"], tmp.path());
        assert_eq!(o.status.code(), Some(2), "{command}");
        let err = stderr(&o);
        let expected = format!(
            "error: skill 'x' is not available: {}:3:",
            dir.join("SKILL.md").display()
        );
        assert!(err.contains(&expected), "{command}: {err}");
        assert!(err.contains("invalid-yaml"), "{command}: {err}");
        assert!(!err.contains("unknown skill"), "{command}: {err}");
    }
}

#[test]
fn doctor_lists_the_roots_in_order_with_scope_existence_and_counts() {
    let tmp = tempfile::tempdir().unwrap();
    skill(&tmp.path().join(".agents/skills"), "a").write();
    skill(&tmp.path().join(".agents/skills"), "b").write();
    skill(&tmp.path().join("home/.claude/skills"), "c").write();
    let v = json(&skilldeck(&["doctor", "--format", "json"], tmp.path()));
    let roots = v["roots"].as_array().unwrap();
    let scopes: Vec<&str> = roots.iter().map(|r| r["scope"].as_str().unwrap()).collect();
    let mut sorted = scopes.clone();
    sorted.sort_by_key(|s| {
        ["explicit", "project", "user", "managed", "bundled", "extra"]
            .iter()
            .position(|x| x == s)
    });
    assert_eq!(scopes, sorted, "precedence order");
    let project = &roots[0];
    assert!(
        project["path"]
            .as_str()
            .unwrap()
            .ends_with(".agents/skills")
    );
    assert_eq!(project["exists"], true);
    assert_eq!(project["found"], 2);
    let missing = roots
        .iter()
        .find(|r| r["path"].as_str().unwrap().ends_with(".skills"))
        .unwrap();
    assert_eq!(missing["exists"], false);
    let user = roots
        .iter()
        .find(|r| r["path"].as_str().unwrap().ends_with("home/.claude/skills"))
        .unwrap();
    assert_eq!(user["scope"], "user");
    assert_eq!(user["found"], 1);
    assert_eq!(v["found"], 3);
    assert_eq!(v["loaded"], 3);
}

#[test]
fn doctor_shows_the_user_and_project_config_merged_and_where_each_setting_comes_from() {
    let tmp = tempfile::tempdir().unwrap();
    let v = json(&skilldeck(&["doctor", "--format", "json"], tmp.path()));
    let files = v["config_files"].as_array().unwrap();
    assert_eq!(files.len(), 2);
    // Lowest precedence first, as they merge: the user's, then the project's.
    assert!(
        files[0]["path"]
            .as_str()
            .unwrap()
            .ends_with("home/.config/skilldeck/config.toml")
    );
    assert_eq!(files[1]["path"], "skilldeck.toml");
    assert!(
        files
            .iter()
            .all(|f| f["exists"] == false && f["read"] == false)
    );
    let user_config = tmp.path().join("home/.config/skilldeck");
    std::fs::create_dir_all(&user_config).unwrap();
    std::fs::write(
        user_config.join("config.toml"),
        "[discovery]\nuser = false\nbundled = \"never\"\n[catalog]\nbudget-chars = 1234\n",
    )
    .unwrap();
    std::fs::write(
        tmp.path().join("skilldeck.toml"),
        "[catalog]\nbudget-chars = 4321\n",
    )
    .unwrap();
    let v = json(&skilldeck(&["doctor", "--format", "json"], tmp.path()));
    assert!(
        v["config_files"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["read"] == true)
    );
    // The user's setting holds where the project says nothing ...
    assert!(
        v["roots"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["scope"] != "user" && r["scope"] != "bundled")
    );
    // ... and the project's wins where both speak.
    assert_eq!(v["settings"]["catalog.budget-chars"], "skilldeck.toml");
    assert!(
        v["settings"]["discovery.user"]
            .as_str()
            .unwrap()
            .ends_with("home/.config/skilldeck/config.toml")
    );
    let text = stdout(&skilldeck(&["doctor"], tmp.path()));
    assert!(
        text.contains("settings, and the file each comes from:"),
        "{text}"
    );
}

#[test]
fn doctor_reports_skipped_with_file_and_line_shadowed_and_excluded() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join(".agents/skills");
    skill(&project, "dup").write();
    skill(&tmp.path().join("home/.agents/skills"), "dup").write();
    skill(&project, "hidden").write();
    skill(&project, "quiet").write();
    std::fs::create_dir_all(project.join("broken")).unwrap();
    std::fs::write(project.join("broken/SKILL.md"), "---\nname: broken\n---\n").unwrap();
    std::fs::write(
        tmp.path().join("skilldeck.toml"),
        "[modes]\nhidden = \"off\"\nquiet = \"manual\"\n",
    )
    .unwrap();
    let v = json(&skilldeck(&["doctor", "--format", "json"], tmp.path()));
    let skipped = v["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    assert!(
        skipped[0]["file"]
            .as_str()
            .unwrap()
            .ends_with("broken/SKILL.md")
    );
    assert_eq!(skipped[0]["code"], "description-missing");
    let shadowed = v["shadowed"].as_array().unwrap();
    assert_eq!(shadowed.len(), 1);
    assert_eq!(shadowed[0]["name"], "dup");
    assert_eq!(shadowed[0]["scope"], "user");
    assert_eq!(shadowed[0]["winner_scope"], "project");
    let excluded: Vec<(&str, &str)> = v["excluded"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| (x["name"].as_str().unwrap(), x["why"].as_str().unwrap()))
        .collect();
    assert_eq!(excluded.len(), 2, "{excluded:?}");
    assert!(excluded[0].0 == "hidden" && excluded[0].1.starts_with("mode off"));
    assert!(excluded[1].0 == "quiet" && excluded[1].1.starts_with("mode manual"));
    let text = stdout(&skilldeck(&["doctor"], tmp.path()));
    assert!(text.contains("1 skipped, 1 shadowed, 2 excluded"), "{text}");
}

#[test]
fn doctor_reports_the_catalog_size_against_its_budget() {
    let tmp = tempfile::tempdir().unwrap();
    for i in 0..30 {
        skill(&tmp.path().join(".agents/skills"), &format!("skill-{i:02}")).write();
    }
    std::fs::write(
        tmp.path().join("skilldeck.toml"),
        "[catalog]\nbudget-chars = 1500\n",
    )
    .unwrap();
    let v = json(&skilldeck(&["doctor", "--format", "json"], tmp.path()));
    let c = &v["catalog"];
    assert_eq!(c["budget"], 1500);
    assert_eq!(c["unit"], "characters");
    assert!(c["size"].as_u64().unwrap() <= 1500, "{c}");
    let listed = c["listed"].as_u64().unwrap();
    assert_eq!(listed + c["unlisted"].as_u64().unwrap(), 30, "{c}");
    assert!(listed < 30, "{c}");
}

#[test]
fn bundled_examples_are_served_only_when_no_other_root_has_a_skill() {
    let tmp = tempfile::tempdir().unwrap();
    let names = |o: &Output| -> Vec<String> {
        json(o)
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let alone = names(&skilldeck(&["list", "--format", "json"], tmp.path()));
    assert!(alone.contains(&"skill-authoring".to_owned()), "{alone:?}");
    skill(&tmp.path().join(".agents/skills"), "mine").write();
    let with_mine = names(&skilldeck(&["list", "--format", "json"], tmp.path()));
    assert_eq!(with_mine, ["mine"]);
    std::fs::write(
        tmp.path().join("skilldeck.toml"),
        "[discovery]\nbundled = \"always\"\n",
    )
    .unwrap();
    let always = names(&skilldeck(&["list", "--format", "json"], tmp.path()));
    assert!(always.contains(&"mine".to_owned()) && always.contains(&"skill-authoring".to_owned()));
    std::fs::remove_dir_all(tmp.path().join(".agents")).unwrap();
    std::fs::write(
        tmp.path().join("skilldeck.toml"),
        "[discovery]\nbundled = false\n",
    )
    .unwrap();
    let never = names(&skilldeck(&["list", "--format", "json"], tmp.path()));
    assert!(never.is_empty(), "{never:?}");
}

#[test]
fn one_format_vocabulary_with_the_old_names_as_aliases() {
    let tmp = tempfile::tempdir().unwrap();
    skill(&tmp.path().join(".agents/skills"), "a").write();
    for (command, format) in [
        (&["list"][..], "text"),
        (&["list"][..], "table"),
        (&["search", "a"][..], "text"),
        (&["show", "a"][..], "markdown"),
        (&["show", "a"][..], "md"),
        (&["doctor"][..], "text"),
    ] {
        let mut args = command.to_vec();
        args.extend(["--format", format]);
        let o = skilldeck(&args, tmp.path());
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
    }
    let o = skilldeck(&["show", "a", "--format", "table"], tmp.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("markdown"), "{}", stderr(&o));
}

#[test]
fn every_subcommand_help_ends_with_an_example() {
    let tmp = tempfile::tempdir().unwrap();
    for command in [
        "validate",
        "new",
        "list",
        "show",
        "prompt",
        "activate",
        "read",
        "search",
        "serve",
        "doctor",
        "completions",
    ] {
        let o = skilldeck(&[command, "--help"], tmp.path());
        assert_eq!(o.status.code(), Some(0), "{command}");
        let help = stdout(&o);
        let tail = help.rsplit("Examples:\n").next().unwrap();
        assert!(help.contains("Examples:\n"), "{command}: {help}");
        assert!(
            tail.trim_start().starts_with("skilldeck") || tail.contains("skilldeck "),
            "{command}: {tail}"
        );
    }
}

#[test]
fn skill_source_options_are_accepted_only_where_they_mean_something() {
    let tmp = tempfile::tempdir().unwrap();
    for args in [
        &["new", "x", "--root", "r"][..],
        &["new", "x", "--config", "c.toml"][..],
        &["completions", "bash", "--index"][..],
    ] {
        let o = skilldeck(args, tmp.path());
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&o).contains("unexpected argument"),
            "{args:?}: {}",
            stderr(&o)
        );
    }
    assert!(!tmp.path().join(".agents/skills/x").exists());
    for command in [
        "list", "show", "prompt", "activate", "read", "search", "serve", "doctor", "validate",
    ] {
        let help = stdout(&skilldeck(&[command, "--help"], tmp.path()));
        assert!(
            help.contains("--root") && help.contains("--config") && help.contains("--index"),
            "{command}"
        );
    }
}

#[test]
fn dynamic_completion_completes_skill_names() {
    let tmp = tempfile::tempdir().unwrap();
    skill(&tmp.path().join(".agents/skills"), "pdf-tools").write();
    skill(&tmp.path().join(".agents/skills"), "changelog").write();
    let o = skilldeck_env(
        &["--", "skilldeck", "show", ""],
        tmp.path(),
        &[("COMPLETE", "fish")],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    let names: Vec<&str> = text
        .lines()
        .map(|l| l.split('\t').next().unwrap())
        .collect();
    assert!(
        names.contains(&"pdf-tools") && names.contains(&"changelog"),
        "{names:?}"
    );
    let o = skilldeck_env(
        &["--", "skilldeck", "activate", "pd"],
        tmp.path(),
        &[("COMPLETE", "fish")],
    );
    assert_eq!(
        stdout(&o)
            .lines()
            .map(|l| l.split('\t').next().unwrap())
            .collect::<Vec<_>>(),
        ["pdf-tools"]
    );
    // The registration script for a shell.
    let o = skilldeck_env(&[], tmp.path(), &[("COMPLETE", "bash")]);
    assert!(stdout(&o).contains("skilldeck"), "{}", stdout(&o));
    // The static script still works.
    let o = skilldeck(&["completions", "bash"], tmp.path());
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn search_for_a_misspelled_name_offers_similar_names() {
    let tmp = tempfile::tempdir().unwrap();
    skilldeck_testkit::skill(tmp.path().join(".agents/skills"), "changelog-from-git")
        .description("Writes release notes from commits. Use when preparing a release.")
        .body("# c\n")
        .write();
    skill(&tmp.path().join(".agents/skills"), "pdf-tools").write();
    let o = skilldeck(&["search", "changlog"], tmp.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("no skill matches 'changlog'"),
        "{}",
        stderr(&o)
    );
    assert!(
        stdout(&o).starts_with("changelog-from-git  Writes release notes"),
        "{}",
        stdout(&o)
    );
    assert!(!stdout(&o).contains("pdf-tools"));
}

#[test]
fn read_of_a_folder_lists_its_files() {
    let tmp = tempfile::tempdir().unwrap();
    skill(&tmp.path().join(".agents/skills"), "docs")
        .file("references/a.md", "A")
        .file("references/b.md", "B")
        .file("scripts/x.sh", "echo")
        .write();
    let o = skilldeck(&["read", "docs", "references"], tmp.path());
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains(
            "'references' is a folder, not a file; its files: references/a.md, references/b.md"
        ),
        "{err}"
    );
    assert!(
        !err.contains("list_resources") && !err.contains("scripts/x.sh"),
        "{err}"
    );
}
