//! Plugins both ways, as a user runs them: Claude Code and Codex plugins
//! and marketplaces discovered (`PLUGIN:SKILL`), a marketplace entry
//! installed (from a folder and from a git repository) with the same
//! fingerprint as the skill's folder, `export` round-tripping through
//! discovery and install, and hostile manifests refused with their file,
//! line and column.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};
use skilldeck_testkit::git::Repo;
use skilldeck_testkit::plugins::{
    claude_marketplace, claude_plugin, codex_marketplace, codex_plugin, description, plugin_at,
};

use crate::common::text;

fn skilldeck(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_skilldeck"))
        .args(args)
        .current_dir(cwd)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("XDG_CONFIG_HOME", cwd.join(".xdg-config"))
        .env("HOME", cwd)
        .output()
        .unwrap()
}

fn ok(out: Output) -> String {
    assert!(out.status.success(), "{}", text(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The skill names `list --root ROOT` shows.
fn names(cwd: &Path, root: &Path) -> Vec<String> {
    let out = ok(skilldeck(
        cwd,
        &[
            "list",
            "--root",
            &root.to_string_lossy(),
            "--format",
            "json",
        ],
    ));
    let rows: Vec<Value> = serde_json::from_str(&out).unwrap();
    let mut names: Vec<String> = rows
        .iter()
        .map(|r| r["name"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    names
}

/// The errors `doctor --root ROOT` says were skipped.
fn skipped(cwd: &Path, root: &Path) -> Vec<Value> {
    let out = ok(skilldeck(
        cwd,
        &[
            "doctor",
            "--root",
            &root.to_string_lossy(),
            "--format",
            "json",
        ],
    ));
    let report: Value = serde_json::from_str(&out).unwrap();
    report["skipped"].as_array().unwrap().clone()
}

/// The fingerprint on the `installed NAME VERSION sha256:... from SOURCE`
/// line for `name`.
fn installed_fingerprint(stdout: &str, name: &str) -> String {
    let line = stdout
        .lines()
        .find(|l| l.starts_with(&format!("installed {name} ")))
        .unwrap_or_else(|| panic!("no installed line for {name}:\n{stdout}"));
    line.split_whitespace()
        .find(|w| w.starts_with("sha256:"))
        .unwrap()
        .to_owned()
}

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

#[test]
fn a_claude_code_plugins_skills_are_named_plugin_colon_skill_beside_plain_ones() {
    let t = tmp();
    let root = t.path().join("root");
    claude_plugin(&root, "document-skills", &["pdf", "xlsx"]);
    skilldeck_testkit::skill(&root, "pdf")
        .description(description("pdf"))
        .write();
    assert_eq!(
        names(t.path(), &root),
        ["document-skills:pdf", "document-skills:xlsx", "pdf"]
    );
    let shown = ok(skilldeck(
        t.path(),
        &[
            "show",
            "document-skills:pdf",
            "--root",
            &root.to_string_lossy(),
        ],
    ));
    assert!(shown.contains("Steps for pdf"), "{shown}");
}

#[test]
fn a_root_that_is_a_plugin_names_its_skills_after_it() {
    let t = tmp();
    let plugin = claude_plugin(t.path(), "review", &["quality"]);
    assert_eq!(names(t.path(), &plugin), ["review:quality"]);
}

#[test]
fn a_codex_plugin_in_a_codex_marketplace_is_discovered() {
    let t = tmp();
    let root = t.path().join("market");
    codex_plugin(&root.join("plugins"), "notes", &["search", "summarize"]);
    codex_marketplace(&root, "team", &[("notes", "./plugins/notes")]);
    assert_eq!(names(t.path(), &root), ["notes:search", "notes:summarize"]);
}

#[test]
fn a_claude_marketplace_entry_without_a_manifest_is_a_plugin() {
    let t = tmp();
    let root = t.path().join("market");
    // Claude Code's `strict: false`: the entry defines the plugin.
    skilldeck_testkit::file(
        root.join("loose/skills/lint/SKILL.md"),
        skilldeck_testkit::skill_md("lint", &description("lint"), "# lint\n"),
    );
    claude_marketplace(&root, "team", &[("loose", json!("./loose"))]);
    assert_eq!(names(t.path(), &root), ["loose:lint"]);
}

#[test]
fn a_malformed_plugin_json_is_an_error_at_its_line_and_column_and_its_skills_stay_out() {
    let t = tmp();
    let root = t.path().join("root");
    let plugin = claude_plugin(&root, "docs", &["pdf"]);
    skilldeck_testkit::file(
        plugin.join(".claude-plugin/plugin.json"),
        "{\n  \"name\": \"docs\",\n  \"version\": 1.0.0\n}\n",
    );
    claude_plugin(&root, "other", &["csv"]);
    // Fail closed: the broken plugin's skills are not loaded under any name.
    assert_eq!(names(t.path(), &root), ["other:csv"]);
    let errors = skipped(t.path(), &root);
    let e = errors
        .iter()
        .find(|e| e["code"] == "plugin-manifest-invalid")
        .unwrap_or_else(|| panic!("{errors:#?}"));
    assert!(
        e["file"]
            .as_str()
            .unwrap()
            .ends_with("docs/.claude-plugin/plugin.json"),
        "{e}"
    );
    assert_eq!(e["line"], 3);
    assert!(e["column"].as_u64().unwrap() > 0, "{e}");
}

#[test]
fn skills_paths_that_leave_the_plugin_are_refused() {
    let t = tmp();
    let root = t.path().join("root");
    std::fs::create_dir_all(t.path().join("outside/stolen")).unwrap();
    skilldeck_testkit::file(
        t.path().join("outside/stolen/SKILL.md"),
        skilldeck_testkit::skill_md("stolen", &description("stolen"), "# no\n"),
    );
    // Lexically out, and out through a symlink.
    plugin_at(
        &root,
        "evil",
        ".claude-plugin/plugin.json",
        &json!({"name": "evil", "skills": ["../../outside"]}),
        &["fine"],
    );
    let sneaky = plugin_at(
        &root,
        "sneaky",
        ".codex-plugin/plugin.json",
        &json!({"name": "sneaky", "skills": "./link"}),
        &["ok"],
    );
    std::os::unix::fs::symlink(t.path().join("outside"), sneaky.join("link")).unwrap();
    let listed = names(t.path(), &root);
    assert!(!listed.iter().any(|n| n.contains("stolen")), "{listed:?}");
    assert!(listed.contains(&"sneaky:ok".to_owned()), "{listed:?}");
    let errors = skipped(t.path(), &root);
    let codes: Vec<&str> = errors.iter().map(|e| e["code"].as_str().unwrap()).collect();
    assert_eq!(
        codes.iter().filter(|c| **c == "plugin-path-escape").count(),
        2,
        "{errors:#?}"
    );
}

#[test]
fn a_huge_plugin_json_is_refused_unread() {
    let t = tmp();
    let root = t.path().join("root");
    let plugin = claude_plugin(&root, "big", &["pdf"]);
    let padding =
        " ".repeat(usize::try_from(skilldeck::limits::MAX_PLUGIN_MANIFEST_BYTES).unwrap());
    skilldeck_testkit::file(
        plugin.join(".claude-plugin/plugin.json"),
        format!("{{\"name\": \"big\"{padding}}}"),
    );
    assert!(names(t.path(), &root).is_empty());
    let errors = skipped(t.path(), &root);
    assert!(
        errors.iter().any(|e| e["code"] == "file-too-large"),
        "{errors:#?}"
    );
}

/// A marketplace at `t/market` with the Claude Code plugin
/// `document-skills` (skills `pdf`, `xlsx`) in `plugins/`.
fn local_marketplace(base: &Path) -> PathBuf {
    let market = base.join("market");
    claude_plugin(&market.join("plugins"), "document-skills", &["pdf", "xlsx"]);
    claude_marketplace(
        &market,
        "acme",
        &[("document-skills", json!("./plugins/document-skills"))],
    );
    market
}

#[test]
fn a_skill_installed_from_a_marketplace_entry_has_its_folders_fingerprint() {
    let t = tmp();
    let market = local_marketplace(t.path());
    let folder = market.join("plugins/document-skills/skills/pdf");
    let a = t.path().join("a/.agents/skills");
    let b = t.path().join("b/.agents/skills");
    let from_folder = ok(skilldeck(
        t.path(),
        &[
            "install",
            &folder.to_string_lossy(),
            "--dir",
            &a.to_string_lossy(),
        ],
    ));
    let from_market = ok(skilldeck(
        t.path(),
        &[
            "install",
            "marketplace:market#document-skills:pdf",
            "--dir",
            &b.to_string_lossy(),
        ],
    ));
    assert_eq!(
        installed_fingerprint(&from_folder, "pdf"),
        installed_fingerprint(&from_market, "pdf")
    );
    assert!(
        from_market.contains("from marketplace:../../market#document-skills:pdf"),
        "{from_market}"
    );
    let lock = std::fs::read_to_string(t.path().join("b/.agents/skilldeck.lock")).unwrap();
    assert!(
        lock.contains("source = \"marketplace:../../market#document-skills:pdf\""),
        "{lock}"
    );
    ok(skilldeck(
        t.path(),
        &["verify", "--dir", &b.to_string_lossy()],
    ));
    // Frozen: the entry read again, the fingerprint held to the lock's.
    std::fs::remove_dir_all(b.join("pdf")).unwrap();
    let frozen = ok(skilldeck(
        t.path(),
        &["install", "--frozen", "--dir", &b.to_string_lossy()],
    ));
    assert!(frozen.contains("pdf"), "{frozen}");
    // The marketplace's skill changed: a frozen install refuses it.
    skilldeck_testkit::file(
        market.join("plugins/document-skills/skills/pdf/SKILL.md"),
        skilldeck_testkit::skill_md("pdf", &description("pdf"), "# changed\n"),
    );
    std::fs::remove_dir_all(b.join("pdf")).unwrap();
    let refused = skilldeck(
        t.path(),
        &["install", "--frozen", "--dir", &b.to_string_lossy()],
    );
    assert!(!refused.status.success(), "{}", text(&refused));
}

#[test]
fn a_whole_plugin_installs_every_skill_and_unknown_names_list_the_choices() {
    let t = tmp();
    local_marketplace(t.path());
    let dir = t.path().join("p/.agents/skills");
    let out = ok(skilldeck(
        t.path(),
        &[
            "install",
            "marketplace:market/.claude-plugin/marketplace.json#document-skills",
            "--dir",
            &dir.to_string_lossy(),
        ],
    ));
    assert!(
        out.contains("installed pdf ") && out.contains("installed xlsx "),
        "{out}"
    );
    let bad = skilldeck(
        t.path(),
        &[
            "install",
            "marketplace:market#document-skills:docx",
            "--dir",
            &dir.to_string_lossy(),
        ],
    );
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("document-skills:pdf") && err.contains("document-skills:xlsx"),
        "{err}"
    );
    let bad = skilldeck(
        t.path(),
        &[
            "install",
            "marketplace:market#nope",
            "--dir",
            &dir.to_string_lossy(),
        ],
    );
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("it lists: document-skills"),
        "{}",
        text(&bad)
    );
}

#[test]
fn a_marketplace_entry_leaving_its_folder_is_refused() {
    let t = tmp();
    let market = t.path().join("market");
    claude_plugin(t.path(), "outside", &["pdf"]);
    claude_marketplace(&market, "acme", &[("outside", json!("../outside"))]);
    let dir = t.path().join("p/.agents/skills");
    let out = skilldeck(
        t.path(),
        &[
            "install",
            "marketplace:market#outside:pdf",
            "--dir",
            &dir.to_string_lossy(),
        ],
    );
    assert!(!out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("plugin-path-escape"),
        "{}",
        text(&out)
    );
    assert!(!dir.join("pdf").exists());
    // Through a symlink: refused too.
    std::os::unix::fs::symlink(t.path().join("outside"), market.join("link")).unwrap();
    claude_marketplace(&market, "acme", &[("outside", json!("./link"))]);
    let out = skilldeck(
        t.path(),
        &[
            "install",
            "marketplace:market#outside:pdf",
            "--dir",
            &dir.to_string_lossy(),
        ],
    );
    assert!(!out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("outside the marketplace"),
        "{}",
        text(&out)
    );
}

#[test]
fn a_marketplace_entry_from_a_git_repository_is_installed_at_its_commit() {
    let t = tmp();
    let repo = Repo::new(&t.path().join("git"));
    repo.write(
        ".claude-plugin/plugin.json",
        r#"{"name": "document-skills", "version": "2.0.0"}"#,
    );
    repo.write(
        "skills/pdf/SKILL.md",
        &skilldeck_testkit::skill_md("pdf", &description("pdf"), "# pdf from git\n"),
    );
    let commit = repo.commit("plugin");
    repo.tag("v2.0.0", false);
    let url = repo.url().trim_start_matches("git+").to_owned();
    let market = t.path().join("market");
    claude_marketplace(
        &market,
        "acme",
        &[(
            "document-skills",
            json!({"source": "url", "url": url, "ref": "v2.0.0"}),
        )],
    );
    let dir = t.path().join("p/.agents/skills");
    let out = ok(skilldeck(
        t.path(),
        &[
            "install",
            "marketplace:market#document-skills:pdf",
            "--dir",
            &dir.to_string_lossy(),
        ],
    ));
    assert!(out.contains(&format!("at commit {commit}")), "{out}");
    // The same skill written as a folder has the same fingerprint.
    let folder = t.path().join("plain/pdf");
    skilldeck_testkit::file(
        folder.join("SKILL.md"),
        skilldeck_testkit::skill_md("pdf", &description("pdf"), "# pdf from git\n"),
    );
    let other = t.path().join("q/.agents/skills");
    let plain = ok(skilldeck(
        t.path(),
        &[
            "install",
            &folder.to_string_lossy(),
            "--dir",
            &other.to_string_lossy(),
        ],
    ));
    assert_eq!(
        installed_fingerprint(&out, "pdf"),
        installed_fingerprint(&plain, "pdf")
    );
    let lock = std::fs::read_to_string(t.path().join("p/.agents/skilldeck.lock")).unwrap();
    assert!(lock.contains(&format!("commit = \"{commit}\"")), "{lock}");
    // Frozen: fetched again at exactly the locked commit.
    std::fs::remove_dir_all(dir.join("pdf")).unwrap();
    ok(skilldeck(
        t.path(),
        &["install", "--frozen", "--dir", &dir.to_string_lossy()],
    ));
    assert!(dir.join("pdf/SKILL.md").is_file());
}

/// Exports `root` as `kind` to `out` and returns `(skill, fingerprint)`
/// per `exported` line.
fn export(
    cwd: &Path,
    kind: &str,
    root: &Path,
    out: &Path,
    extra: &[&str],
) -> Vec<(String, String)> {
    let mut args = vec![
        "export",
        kind,
        root.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--name",
        "acme",
    ];
    args.extend_from_slice(extra);
    let stdout = ok(skilldeck(cwd, &args));
    stdout
        .lines()
        .filter(|l| l.starts_with("exported "))
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            let fp = w.iter().find(|x| x.starts_with("sha256:")).unwrap();
            (w[1].to_owned(), (*fp).to_owned())
        })
        .collect()
}

#[test]
fn export_then_discovery_and_install_give_the_same_fingerprints() {
    for kind in ["claude-plugin", "codex-plugin"] {
        let t = tmp();
        let root = t.path().join("src/.agents/skills");
        for s in ["pdf", "xlsx"] {
            skilldeck_testkit::skill(&root, s)
                .description(description(s))
                .file("scripts/run.sh", "echo hi\n")
                .write();
        }
        // Installed skills carry the lock's fingerprints.
        let installed = t.path().join("proj/.agents/skills");
        let lines = ok(skilldeck(
            t.path(),
            &[
                "install",
                &root.join("pdf").to_string_lossy(),
                &root.join("xlsx").to_string_lossy(),
                "--dir",
                &installed.to_string_lossy(),
            ],
        ));
        let out = t.path().join("dist");
        let exported = export(t.path(), kind, &installed, &out, &[]);
        assert_eq!(exported.len(), 2, "{kind}");
        for (name, fp) in &exported {
            assert_eq!(&installed_fingerprint(&lines, name), fp, "{kind} {name}");
        }
        // The manifest and marketplace are where the tool looks.
        let manifest_path = if kind == "claude-plugin" {
            ".claude-plugin/plugin.json"
        } else {
            ".codex-plugin/plugin.json"
        };
        let manifest: Value = serde_json::from_str(
            &std::fs::read_to_string(out.join("plugins/acme").join(manifest_path)).unwrap(),
        )
        .unwrap();
        assert_eq!(manifest["name"], "acme");
        assert_eq!(manifest["version"], "0.1.0");
        assert!(manifest["description"].is_string());
        // Discovery of the output names the skills acme:SKILL.
        assert_eq!(names(t.path(), &out), ["acme:pdf", "acme:xlsx"], "{kind}");
        // The sidecar lock verifies the copy.
        ok(skilldeck(
            t.path(),
            &[
                "verify",
                "--dir",
                &out.join("plugins/acme/skills").to_string_lossy(),
            ],
        ));
        // And an install of the entry prints the same fingerprint.
        let again = t.path().join("other/.agents/skills");
        let line = ok(skilldeck(
            t.path(),
            &[
                "install",
                &format!("marketplace:{}#acme:pdf", out.display()),
                "--dir",
                &again.to_string_lossy(),
            ],
        ));
        let pdf = &exported.iter().find(|(n, _)| n == "pdf").unwrap().1;
        assert_eq!(&installed_fingerprint(&line, "pdf"), pdf, "{kind}");
    }
}

#[test]
fn export_refuses_a_non_empty_folder_unless_forced_and_never_half_writes() {
    let t = tmp();
    let root = t.path().join("skills");
    skilldeck_testkit::skill(&root, "pdf")
        .description(description("pdf"))
        .write();
    let out = t.path().join("dist");
    skilldeck_testkit::file(out.join("keep.txt"), "mine");
    let refused = skilldeck(
        t.path(),
        &[
            "export",
            "claude-plugin",
            root.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--name",
            "acme",
        ],
    );
    assert!(!refused.status.success(), "{}", text(&refused));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("export-not-empty"),
        "{}",
        text(&refused)
    );
    assert_eq!(
        std::fs::read_to_string(out.join("keep.txt")).unwrap(),
        "mine"
    );
    // A skill that fails validation: nothing is written, no temporary folder is left.
    skilldeck_testkit::skill(&root, "broken")
        .description("")
        .write();
    let bad = skilldeck(
        t.path(),
        &[
            "export",
            "claude-plugin",
            root.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--name",
            "acme",
            "--force",
        ],
    );
    assert!(!bad.status.success(), "{}", text(&bad));
    assert_eq!(
        std::fs::read_to_string(out.join("keep.txt")).unwrap(),
        "mine"
    );
    std::fs::remove_dir_all(root.join("broken")).unwrap();
    let forced = export(t.path(), "claude-plugin", &root, &out, &["--force"]);
    assert_eq!(forced.len(), 1);
    assert!(!out.join("keep.txt").exists());
    let leftovers: Vec<_> = std::fs::read_dir(t.path())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with(".skilldeck-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn export_refuses_a_skill_with_local_edits_against_the_lock() {
    let t = tmp();
    let src = t.path().join("src");
    skilldeck_testkit::skill(&src, "pdf")
        .description(description("pdf"))
        .write();
    let root = t.path().join("proj/.agents/skills");
    ok(skilldeck(
        t.path(),
        &[
            "install",
            &src.join("pdf").to_string_lossy(),
            "--dir",
            &root.to_string_lossy(),
        ],
    ));
    skilldeck_testkit::file(root.join("pdf/extra.md"), "edited");
    let out = skilldeck(
        t.path(),
        &[
            "export",
            "codex-plugin",
            root.to_str().unwrap(),
            "-o",
            t.path().join("dist").to_str().unwrap(),
            "--name",
            "acme",
        ],
    );
    assert!(!out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("local edits"),
        "{}",
        text(&out)
    );
    assert!(!t.path().join("dist").exists());
}

/// The value of `key = "..."` in the lock entry `[skill.NAME]` of `lock`.
fn entry_value(lock: &Path, name: &str, key: &str) -> String {
    let text = std::fs::read_to_string(lock).unwrap();
    let start = text
        .find(&format!("[skill.{name}]"))
        .unwrap_or_else(|| panic!("no {name} in {text}"));
    text[start..]
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{key} = \"")))
        .map(|v| v.trim_end_matches('"').to_owned())
        .unwrap_or_else(|| panic!("no {key} for {name} in {text}"))
}

#[test]
fn a_marketplace_entry_whose_plugin_moved_is_outdated_and_update_moves_it_all_or_nothing() {
    let t = tmp();
    let market = local_marketplace(t.path());
    let root = t.path().join("p/.agents/skills");
    let dir = root.to_string_lossy().into_owned();
    let lockfile = t.path().join("p/.agents/skilldeck.lock");
    ok(skilldeck(
        t.path(),
        &[
            "install",
            "marketplace:market#document-skills",
            "--dir",
            &dir,
        ],
    ));
    let (old_pdf, old_xlsx) = (
        entry_value(&lockfile, "pdf", "fingerprint"),
        entry_value(&lockfile, "xlsx", "fingerprint"),
    );
    let o = ok(skilldeck(t.path(), &["outdated", "--dir", &dir]));
    assert!(
        o.contains("pdf: up to date") && o.contains("2 skills checked, 0 outdated"),
        "{o}"
    );

    // The entry now points at another folder whose pdf changed and whose
    // xlsx does not validate: outdated names both, update refuses and
    // writes nothing.
    let moved = claude_plugin(
        &market.join("plugins-v2"),
        "document-skills",
        &["pdf", "xlsx"],
    );
    skilldeck_testkit::file(
        moved.join("skills/pdf/SKILL.md"),
        skilldeck_testkit::skill_md("pdf", &description("pdf"), "# pdf, moved on\n"),
    );
    skilldeck_testkit::file(
        moved.join("skills/xlsx/SKILL.md"),
        "---\nname: xlsx\ndescription: [unclosed\n---\nbroken\n",
    );
    claude_marketplace(
        &market,
        "acme",
        &[("document-skills", json!("./plugins-v2/document-skills"))],
    );
    let o = skilldeck(t.path(), &["outdated", "--dir", &dir]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let said = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        said.contains(&format!("pdf: fingerprint {old_pdf} → sha256:"))
            && said.contains("follows its marketplace entry"),
        "{said}"
    );
    let before = std::fs::read_to_string(&lockfile).unwrap();
    let dry = ok(skilldeck(t.path(), &["update", "--dry-run", "--dir", &dir]));
    assert!(dry.contains("would update pdf"), "{dry}");
    assert_eq!(std::fs::read_to_string(&lockfile).unwrap(), before);
    let refused = skilldeck(t.path(), &["update", "--dir", &dir]);
    assert!(!refused.status.success(), "{}", text(&refused));
    assert_eq!(
        std::fs::read_to_string(&lockfile).unwrap(),
        before,
        "nothing half-written"
    );
    assert!(
        !std::fs::read_to_string(root.join("pdf/SKILL.md"))
            .unwrap()
            .contains("moved on")
    );

    // The xlsx fixed (the same as installed): only pdf moves.
    skilldeck_testkit::file(
        moved.join("skills/xlsx/SKILL.md"),
        std::fs::read_to_string(root.join("xlsx/SKILL.md")).unwrap(),
    );
    let u = ok(skilldeck(t.path(), &["update", "--dir", &dir]));
    let new_pdf = entry_value(&lockfile, "pdf", "fingerprint");
    assert_ne!(new_pdf, old_pdf);
    assert!(
        u.contains(&format!("updated pdf: fingerprint {old_pdf} → {new_pdf}"))
            && u.contains(&format!("unchanged xlsx at {old_xlsx}")),
        "{u}"
    );
    assert_eq!(entry_value(&lockfile, "xlsx", "fingerprint"), old_xlsx);
    assert!(
        std::fs::read_to_string(root.join("pdf/SKILL.md"))
            .unwrap()
            .contains("moved on")
    );
    ok(skilldeck(t.path(), &["outdated", "--dir", &dir]));
    ok(skilldeck(t.path(), &["verify", "--dir", &dir]));
    // remove works for it as for any skill.
    ok(skilldeck(t.path(), &["remove", "pdf", "--dir", &dir]));
    assert!(!root.join("pdf").exists());
    assert!(
        !std::fs::read_to_string(&lockfile)
            .unwrap()
            .contains("[skill.pdf]")
    );
}

#[test]
fn a_plugin_skill_has_a_skill_uri_that_round_trips_and_never_collides_with_a_plain_one() {
    use skilldeck_testkit::mcp::StdioClient;
    let t = tmp();
    let root = t.path().join("root");
    claude_plugin(&root, "document-skills", &["pdf"]);
    skilldeck_testkit::skill(&root, "pdf")
        .description(description("pdf"))
        .body("# the plain pdf\n")
        .file("references/plain.md", "plain\n")
        .write();
    skilldeck_testkit::file(
        root.join("document-skills/skills/pdf/references/forms.md"),
        "plugin forms\n",
    );
    let mut command = Command::new(env!("CARGO_BIN_EXE_skilldeck"));
    command
        .args(["serve", "--no-watch", "--root"])
        .arg(&root)
        .current_dir(t.path())
        .env("HOME", t.path())
        .env("XDG_CONFIG_HOME", t.path().join(".xdg-config"))
        .env("XDG_CACHE_HOME", t.path().join(".xdg-cache"));
    let mut client = StdioClient::start(command);
    let plugin_md = "skill://document-skills%3A/pdf/SKILL.md";
    let plugin_ref = "skill://document-skills%3A/pdf/references/forms.md";

    let listed = client.request("resources/list", json!({}));
    let uris: Vec<&str> = listed["result"]["resources"]
        .as_array()
        .unwrap_or_else(|| panic!("{listed}"))
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    for want in [
        plugin_md,
        plugin_ref,
        "skill://pdf/SKILL.md",
        "skill://pdf/references/plain.md",
    ] {
        assert!(uris.contains(&want), "{want} not in {uris:?}");
    }
    // The extension lists it under that URI, its frontmatter verbatim
    // (the skill's own name: the plugin is in the URI).
    let skills = client.request("skills/list", json!({}));
    let entry = skills["result"]["skills"]
        .as_array()
        .unwrap_or_else(|| panic!("{skills}"))
        .iter()
        .find(|s| s["uri"] == plugin_md)
        .unwrap_or_else(|| panic!("{plugin_md} not in {skills}"))
        .clone();
    assert_eq!(entry["frontmatter"]["name"], "pdf", "{entry}");
    assert!(
        entry["resources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["uri"] == plugin_ref),
        "{entry}"
    );
    let got = client.request("skills/get", json!({"uri": plugin_md}));
    assert!(got.get("result").is_some(), "{got}");

    // resources/read gives the plugin's files, never the plain skill's.
    let read = |client: &mut StdioClient, uri: &str| -> String {
        let r = client.request("resources/read", json!({"uri": uri}));
        r["result"]["contents"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{uri}: {r}"))
            .to_owned()
    };
    assert!(read(&mut client, plugin_md).contains("Steps for pdf"));
    assert_eq!(read(&mut client, plugin_ref), "plugin forms\n");
    assert!(read(&mut client, "skill://pdf/SKILL.md").contains("the plain pdf"));
    // The lower-case escape names the same skill; a bare `:` (a port, in a
    // URI) and other escapes name none.
    assert!(read(&mut client, "skill://document-skills%3a/pdf/SKILL.md").contains("Steps for pdf"));
    for bad in [
        "skill://document-skills:pdf/SKILL.md",
        "skill://document-skills%3Apdf/SKILL.md",
        "skill://document-skills/pdf/SKILL.md",
        "skill://document-skills%2Fpdf/SKILL.md",
        "skill://pdf/references/forms.md",
    ] {
        let r = client.request("resources/read", json!({"uri": bad}));
        assert!(r.get("error").is_some(), "{bad}: {r}");
    }
}
