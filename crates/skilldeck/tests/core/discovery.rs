//! Discovery: roots, precedence and shadowing, symlinked layouts, loop
//! safety, explicit skills, and frontmatter-only reads.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use skilldeck::deck::{PROJECT_ROOT_NAMES, project_roots, user_roots_for};
use skilldeck::{Code, Config, DiscoveryOptions, ExplicitSkill, Root, Scope, SkillMode, discover};

fn root(path: &Path, scope: Scope) -> Root {
    Root {
        path: path.to_path_buf(),
        scope,
        required: true,
    }
}

fn options(roots: Vec<Root>) -> DiscoveryOptions {
    DiscoveryOptions {
        roots,
        ..DiscoveryOptions::default()
    }
}

#[test]
fn higher_scope_wins_and_the_loser_is_reported_as_shadowed() {
    let tmp = tempfile::tempdir().unwrap();
    let user = tmp.path().join("user");
    let project = tmp.path().join("project");
    skilldeck_testkit::skill(&user, "pdf")
        .description("User pdf. Use when testing.")
        .body("# pdf\n")
        .write();
    skilldeck_testkit::skill(&project, "pdf")
        .description("Project pdf. Use when testing.")
        .body("# pdf\n")
        .write();
    skilldeck_testkit::skill(&user, "only-user")
        .description("Use when testing.")
        .body("# only-user\n")
        .write();
    // Lower precedence listed first: the order of roots does not matter, scope does.
    let deck = discover(&options(vec![
        root(&user, Scope::User),
        root(&project, Scope::Project),
    ]));
    let pdf = deck.get("pdf").unwrap();
    assert_eq!(pdf.scope, Scope::Project);
    assert_eq!(pdf.description, "Project pdf. Use when testing.");
    assert_eq!(deck.shadowed().len(), 1);
    assert_eq!(deck.shadowed()[0].skill.scope, Scope::User);
    assert_eq!(deck.shadowed()[0].winner_scope, Scope::Project);
    let d = deck
        .diagnostics()
        .iter()
        .find(|d| d.code == Code::ShadowedSkill)
        .unwrap();
    assert!(
        d.message.contains("shadowed by the project skill"),
        "{}",
        d.message
    );
    assert!(deck.get("only-user").is_some());
}

#[test]
fn roots_rank_project_over_user_over_managed_over_bundled_over_extra() {
    let tmp = tempfile::tempdir().unwrap();
    // Every scope holds `pdf`; each also holds the name of the scope just
    // above it, so every pair of neighbours is compared once.
    let order = [
        Scope::Project,
        Scope::User,
        Scope::Managed,
        Scope::Bundled,
        Scope::Extra,
    ];
    let mut roots = Vec::new();
    for (i, scope) in order.iter().enumerate() {
        let dir = tmp.path().join(scope.as_str());
        let mut names = vec!["pdf".to_owned()];
        if i > 0 {
            names.push(format!("pair-{i}"));
        }
        if i + 1 < order.len() {
            names.push(format!("pair-{}", i + 1));
        }
        for name in names {
            skilldeck_testkit::skill(&dir, &name)
                .description(format!("{scope} {name}. Use when testing."))
                .body("# x\n")
                .write();
        }
        roots.push(root(&dir, *scope));
    }
    // Listed lowest first: the order of roots does not decide, scope does.
    roots.reverse();
    let deck = discover(&options(roots));
    assert_eq!(deck.get("pdf").unwrap().scope, Scope::Project);
    for i in 1..order.len() {
        let winner = deck.get(&format!("pair-{i}")).unwrap().scope;
        assert_eq!(winner, order[i - 1], "{} vs {}", order[i - 1], order[i]);
    }
    assert_eq!(Scope::ALL[1..], order, "Scope::ALL is the precedence");
}

#[test]
fn the_managed_roots_come_from_the_config_and_default_to_etc_skilldeck() {
    let tmp = tempfile::tempdir().unwrap();
    let managed = tmp.path().join("managed");
    skilldeck_testkit::skill(&managed, "ops")
        .description("Operator skill. Use when testing.")
        .body("# ops\n")
        .write();
    let config = Config::parse(
        "[discovery]\nmanaged = [\"managed\"]\nuser = false\nproject = false\nbundled = \"never\"\n",
        &tmp.path().join("skilldeck.toml"),
    )
    .unwrap();
    let deck = discover(&DiscoveryOptions::from_config(&config, tmp.path(), None));
    assert_eq!(deck.get("ops").unwrap().scope, Scope::Managed);
    // `--root` replaces every default root, the managed ones included.
    let only = discover(&DiscoveryOptions::from_config(
        &config,
        tmp.path(),
        Some(&[tmp.path().join("elsewhere")]),
    ));
    assert!(only.get("ops").is_none());
    assert_eq!(
        Config::default().managed_roots(),
        [PathBuf::from(skilldeck::deck::MANAGED_ROOT)]
    );
    let none = Config::parse("[discovery]\nmanaged = []\n", Path::new("c.toml")).unwrap();
    assert!(none.managed_roots().is_empty());
}

#[test]
fn within_a_scope_the_earlier_root_wins() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a");
    let b = tmp.path().join("b");
    skilldeck_testkit::skill(&a, "x")
        .description("From a. Use when testing.")
        .body("# x\n")
        .write();
    skilldeck_testkit::skill(&b, "x")
        .description("From b. Use when testing.")
        .body("# x\n")
        .write();
    let deck = discover(&options(vec![
        root(&a, Scope::Extra),
        root(&b, Scope::Extra),
    ]));
    assert_eq!(&*deck.get("x").unwrap().root, a.as_path());
    assert_eq!(&*deck.shadowed()[0].skill.root, b.as_path());
}

#[test]
fn explicit_skills_outrank_every_root_and_are_checked_at_load() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("project");
    skilldeck_testkit::skill(&project, "deploy")
        .description("Project deploy. Use when testing.")
        .body("# deploy\n")
        .write();
    let ops = skilldeck_testkit::skill(tmp.path().join("ops"), "deploy")
        .description("Ops deploy. Use when testing.")
        .body("# deploy\n")
        .write();
    let wrong = skilldeck_testkit::skill(tmp.path().join("ops"), "other")
        .description("Use when testing.")
        .body("# other\n")
        .write();
    let mut opts = options(vec![root(&project, Scope::Project)]);
    opts.explicit = vec![
        ExplicitSkill {
            name: "deploy".into(),
            path: ops.clone(),
            mode: Some(SkillMode::Pinned),
        },
        ExplicitSkill {
            name: "mislabelled".into(),
            path: wrong,
            mode: None,
        },
        ExplicitSkill {
            name: "ghost".into(),
            path: tmp.path().join("missing"),
            mode: None,
        },
    ];
    let deck = discover(&opts);
    let deploy = deck.get("deploy").unwrap();
    assert_eq!(
        (deploy.scope, deploy.mode),
        (Scope::Explicit, SkillMode::Pinned)
    );
    assert_eq!(deploy.dir(), ops);
    let codes: Vec<Code> = deck.diagnostics().iter().map(|d| d.code).collect();
    assert!(codes.contains(&Code::NameDirMismatch), "{codes:?}");
    assert!(codes.contains(&Code::PathNotFound), "{codes:?}");
    assert!(deck.get("mislabelled").is_none() && deck.get("other").is_none());
}

#[test]
fn project_roots_cover_cwd_and_ancestors_up_to_the_repository_root() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    let cwd = repo.join("a/b");
    std::fs::create_dir_all(&cwd).unwrap();
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    let roots = project_roots(&cwd);
    assert_eq!(roots.len(), 3 * PROJECT_ROOT_NAMES.len());
    assert_eq!(roots[0], cwd.join(".agents/skills"));
    assert_eq!(roots[1], cwd.join(".claude/skills"));
    assert_eq!(roots[2], cwd.join(".skills"));
    assert_eq!(roots.last().unwrap(), &repo.join(".skills"));
    assert!(
        !roots
            .iter()
            .any(|r| r.starts_with(tmp.path().join(".skills")))
    );
    // Outside a repository: only the current folder.
    let lonely = tmp.path().join("lonely");
    std::fs::create_dir_all(&lonely).unwrap();
    assert_eq!(project_roots(&lonely).len(), PROJECT_ROOT_NAMES.len());
}

#[test]
fn user_roots_are_agents_claude_and_xdg() {
    let roots = user_roots_for(Some(Path::new("/home/u")), Some(Path::new("/cfg")));
    assert_eq!(
        roots,
        vec![
            PathBuf::from("/home/u/.agents/skills"),
            PathBuf::from("/home/u/.claude/skills"),
            PathBuf::from("/cfg/skilldeck/skills"),
        ]
    );
}

#[test]
fn config_root_override_replaces_defaults_but_keeps_config_roots() {
    let tmp = tempfile::tempdir().unwrap();
    let extra = tmp.path().join("extra");
    let cli = tmp.path().join("cli");
    skilldeck_testkit::skill(&extra, "from-config")
        .description("Use when testing.")
        .body("# from-config\n")
        .write();
    skilldeck_testkit::skill(&cli, "from-flag")
        .description("Use when testing.")
        .body("# from-flag\n")
        .write();
    let config = Config::parse(
        "roots = [\"extra\"]\n[modes]\nfrom-flag = \"name-only\"\n",
        &tmp.path().join("skilldeck.toml"),
    )
    .unwrap();
    let opts = DiscoveryOptions::from_config(&config, tmp.path(), Some(std::slice::from_ref(&cli)));
    assert!(opts.roots.iter().all(|r| r.scope == Scope::Extra));
    let deck = discover(&opts);
    let names: Vec<&str> = deck.skills().iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, vec!["from-config", "from-flag"]);
    assert_eq!(deck.get("from-flag").unwrap().mode, SkillMode::NameOnly);
}

#[test]
fn stow_style_symlinked_skill_folders_are_found() {
    // GNU Stow: ~/.claude/skills/pdf -> ../../dotfiles/skills/pdf
    let tmp = tempfile::tempdir().unwrap();
    let real = skilldeck_testkit::skill(tmp.path().join("dotfiles/skills"), "pdf")
        .description("Use when testing.")
        .body("# pdf\n")
        .write();
    let skills = tmp.path().join("home/.claude/skills");
    std::fs::create_dir_all(&skills).unwrap();
    symlink("../../../dotfiles/skills/pdf", skills.join("pdf")).unwrap();
    let deck = discover(&options(vec![root(&skills, Scope::User)]));
    let pdf = deck.get("pdf").unwrap();
    assert_eq!(pdf.dir(), skills.join("pdf"));
    assert_eq!(pdf.real_dir(), std::fs::canonicalize(real).unwrap());
}

#[test]
fn nix_style_symlinked_skill_md_files_are_found() {
    // Nix/home-manager: a real folder whose SKILL.md links into a store.
    let tmp = tempfile::tempdir().unwrap();
    let store = skilldeck_testkit::skill(tmp.path().join("store/abc123-pdf"), "pdf")
        .description("Use when testing.")
        .body("# pdf\n")
        .write();
    let skills = tmp.path().join("skills");
    std::fs::create_dir_all(skills.join("pdf")).unwrap();
    symlink(store.join("SKILL.md"), skills.join("pdf/SKILL.md")).unwrap();
    let deck = discover(&options(vec![root(&skills, Scope::User)]));
    assert!(deck.get("pdf").is_some(), "{:?}", deck.diagnostics());
    assert!(deck.diagnostics().is_empty(), "{:?}", deck.diagnostics());
}

#[test]
fn the_same_folder_reached_twice_is_one_skill_not_a_shadow() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a");
    skilldeck_testkit::skill(&a, "pdf")
        .description("Use when testing.")
        .body("# pdf\n")
        .write();
    let b = tmp.path().join("b");
    symlink(&a, &b).unwrap();
    let deck = discover(&options(vec![
        root(&a, Scope::Project),
        root(&b, Scope::User),
    ]));
    assert_eq!(deck.len(), 1);
    assert!(deck.shadowed().is_empty());
}

#[test]
fn symlink_loops_in_a_root_do_not_hang_or_duplicate() {
    let tmp = tempfile::tempdir().unwrap();
    let r = tmp.path().join("root");
    let pdf = skilldeck_testkit::skill(&r, "pdf")
        .description("Use when testing.")
        .body("# pdf\n")
        .write();
    symlink(&r, pdf.join("loop")).unwrap();
    symlink(&r, r.join("self")).unwrap();
    let deck = discover(&options(vec![root(&r, Scope::Extra)]));
    assert_eq!(deck.len(), 1);
    assert!(
        deck.diagnostics()
            .iter()
            .any(|d| d.code == Code::SymlinkLoop)
    );
}

#[test]
fn nested_skills_are_listed_flat() {
    let tmp = tempfile::tempdir().unwrap();
    let r = tmp.path().join("root");
    let outer = skilldeck_testkit::skill(&r, "outer")
        .description("Use when testing.")
        .body("# outer\n")
        .write();
    skilldeck_testkit::skill(outer.join("parts"), "inner")
        .description("Use when testing.")
        .body("# inner\n")
        .write();
    let deck = discover(&options(vec![root(&r, Scope::Extra)]));
    let names: Vec<&str> = deck.skills().iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, vec!["inner", "outer"]);
}

#[test]
fn walk_depth_is_bounded() {
    let tmp = tempfile::tempdir().unwrap();
    let r = tmp.path().join("root");
    skilldeck_testkit::skill(r.join("1/2/3/4/5/6/7"), "deep")
        .description("Use when testing.")
        .body("# deep\n")
        .write();
    skilldeck_testkit::skill(r.join("1/2"), "shallow")
        .description("Use when testing.")
        .body("# shallow\n")
        .write();
    let deck = discover(&options(vec![root(&r, Scope::Extra)]));
    assert!(deck.get("shallow").is_some());
    assert!(deck.get("deep").is_none());
}

#[test]
fn a_bad_skill_never_hides_the_others() {
    let tmp = tempfile::tempdir().unwrap();
    let r = tmp.path().join("root");
    skilldeck_testkit::skill(&r, "good")
        .description("Use when testing.")
        .body("# good\n")
        .write();
    let bad = skilldeck_testkit::skill(&r, "bad").write();
    let deck = discover(&options(vec![root(&r, Scope::Extra)]));
    assert_eq!(deck.len(), 1);
    let d = &deck.diagnostics()[0];
    assert_eq!(d.code, Code::DescriptionMissing);
    assert_eq!(d.file.as_deref(), Some(bad.join("SKILL.md").as_path()));
}

#[test]
fn lenient_loading_keeps_spec_violations_as_warnings() {
    let tmp = tempfile::tempdir().unwrap();
    let r = tmp.path().join("root");
    skilldeck_testkit::skill(&r, "Other_Name")
        .folder("folder")
        .description("Use when: testing colons")
        .field("author", "me")
        .write();
    let deck = discover(&options(vec![root(&r, Scope::Extra)]));
    let s = deck.get("Other_Name").unwrap();
    assert_eq!(s.description, "Use when: testing colons");
    assert!(deck.diagnostics().iter().all(|d| !d.is_error()));
}

#[test]
fn discovery_reads_the_frontmatter_only() {
    let tmp = tempfile::tempdir().unwrap();
    let r = tmp.path().join("root");
    // A body that would fail validation if it were read: invalid UTF-8 and NUL.
    let mut body = vec![0xff, 0xfe, 0, b'\n'];
    body.extend(std::iter::repeat_n(b'x', 100_000));
    skilldeck_testkit::skill(&r, "lazy")
        .description("Use when testing.")
        .body(body)
        .write();
    let deck = discover(&options(vec![root(&r, Scope::Extra)]));
    assert!(deck.get("lazy").is_some(), "{:?}", deck.diagnostics());
}

#[test]
fn missing_required_root_is_reported_and_default_roots_are_quiet() {
    let tmp = tempfile::tempdir().unwrap();
    let mut quiet = root(&tmp.path().join("nope"), Scope::Project);
    quiet.required = false;
    let deck = discover(&options(vec![
        quiet,
        root(&tmp.path().join("gone"), Scope::Extra),
    ]));
    assert_eq!(deck.diagnostics().len(), 1);
    assert_eq!(deck.diagnostics()[0].code, Code::PathNotFound);
    assert!(deck.diagnostics()[0].message.contains("gone"));
}

#[test]
fn discovery_is_deterministic() {
    let tmp = tempfile::tempdir().unwrap();
    let r = tmp.path().join("root");
    for i in 0..40 {
        let name = format!("s{:02}", 39 - i);
        skilldeck_testkit::skill(&r, &name)
            .description("Use when testing.")
            .body(format!("# {name}\n"))
            .write();
    }
    let a = discover(&options(vec![root(&r, Scope::Extra)]));
    let b = discover(&options(vec![root(&r, Scope::Extra)]));
    let names = |d: &skilldeck::Deck| {
        d.skills()
            .iter()
            .map(|s| s.name.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&a), names(&b));
    let mut sorted = names(&a);
    sorted.sort();
    assert_eq!(names(&a), sorted);
}

#[test]
fn bundled_scope_provides_the_example_skills() {
    let dir = skilldeck::deck::materialize_bundled().unwrap();
    let deck = discover(&options(vec![root(&dir, Scope::Bundled)]));
    assert!(deck.get("skill-authoring").is_some());
    assert!(deck.skills().iter().all(|s| s.scope == Scope::Bundled));
}

#[test]
fn a_skills_resource_folders_are_not_searched_for_skills() {
    let tmp = tempfile::tempdir().unwrap();
    let r = tmp.path().join("root");
    let outer = skilldeck_testkit::skill(&r, "outer")
        .description("Use when testing.")
        .body("# outer\n")
        .write();
    skilldeck_testkit::skill(outer.join("assets"), "template")
        .description("A template, not a skill.")
        .body("# template\n")
        .write();
    skilldeck_testkit::skill(outer.join("references"), "example")
        .description("An example, not a skill.")
        .body("# example\n")
        .write();
    skilldeck_testkit::skill(outer.join("parts"), "nested")
        .description("Use when testing.")
        .body("# nested\n")
        .write();
    // Outside a skill, a folder named assets is an ordinary folder.
    skilldeck_testkit::skill(r.join("assets"), "loose")
        .description("Use when testing.")
        .body("# loose\n")
        .write();
    let deck = discover(&options(vec![root(&r, Scope::Extra)]));
    let names: Vec<&str> = deck.skills().iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, vec!["loose", "nested", "outer"]);
}

fn indexed(roots: Vec<Root>, index: &Path) -> DiscoveryOptions {
    DiscoveryOptions {
        roots,
        index: Some(index.to_path_buf()),
        index_racy_window: std::time::Duration::ZERO,
        ..DiscoveryOptions::default()
    }
}

#[test]
fn metadata_index_serves_unchanged_skills_without_reading_them() {
    let tmp = tempfile::tempdir().unwrap();
    let r = tmp.path().join("root");
    for i in 0..5 {
        let name = format!("s{i}");
        skilldeck_testkit::skill(&r, &name)
            .description("Use when testing.")
            .body(format!("# {name}\n"))
            .write();
    }
    let index = tmp.path().join("index.idx");
    let cold = discover(&indexed(vec![root(&r, Scope::Extra)], &index));
    assert_eq!(cold.index_stats().unwrap().misses, 5);
    assert!(index.is_file());
    let warm = discover(&indexed(vec![root(&r, Scope::Extra)], &index));
    let stats = warm.index_stats().unwrap();
    assert_eq!((stats.hits, stats.misses), (5, 0));
    assert_eq!(cold.skills(), warm.skills());
}

#[test]
fn metadata_index_rereads_a_changed_skill() {
    let tmp = tempfile::tempdir().unwrap();
    let r = tmp.path().join("root");
    skilldeck_testkit::skill(&r, "a")
        .description("Old text. Use when testing.")
        .body("# a\n")
        .write();
    skilldeck_testkit::skill(&r, "b")
        .description("Use when testing.")
        .body("# b\n")
        .write();
    let index = tmp.path().join("index.idx");
    discover(&indexed(vec![root(&r, Scope::Extra)], &index));
    // Same size, new content: the inode's ctime and mtime change.
    skilldeck_testkit::skill(&r, "a")
        .description("New text. Use when testing.")
        .body("# a\n")
        .write();
    let deck = discover(&indexed(vec![root(&r, Scope::Extra)], &index));
    assert_eq!(
        deck.get("a").unwrap().description,
        "New text. Use when testing."
    );
    let stats = deck.index_stats().unwrap();
    assert_eq!((stats.hits, stats.misses), (1, 1));
}

#[test]
fn corrupt_or_foreign_metadata_index_is_ignored_and_rewritten() {
    let tmp = tempfile::tempdir().unwrap();
    let r = tmp.path().join("root");
    skilldeck_testkit::skill(&r, "a")
        .description("Use when testing.")
        .body("# a\n")
        .write();
    let index = tmp.path().join("index.idx");
    for garbage in [
        &b"not an index"[..],
        b"skilldeck-index 1 0 0\n[[\"x\"",
        b"\xff\xfe\n{}",
    ] {
        std::fs::write(&index, garbage).unwrap();
        let deck = discover(&indexed(vec![root(&r, Scope::Extra)], &index));
        assert!(deck.get("a").is_some());
        assert_eq!(deck.index_stats().unwrap().misses, 1);
    }
    // Truncating a good index is caught by its checksum.
    let good = std::fs::read(&index).unwrap();
    std::fs::write(&index, &good[..good.len() - 3]).unwrap();
    let deck = discover(&indexed(vec![root(&r, Scope::Extra)], &index));
    assert_eq!(deck.index_stats().unwrap().misses, 1);
    // Other validation options make the index stale.
    let mut opts = indexed(vec![root(&r, Scope::Extra)], &index);
    opts.validation.allowed_fields.push("author".into());
    assert_eq!(discover(&opts).index_stats().unwrap().misses, 1);
}

#[test]
fn metadata_index_does_not_store_files_changed_within_the_racy_window() {
    let tmp = tempfile::tempdir().unwrap();
    let r = tmp.path().join("root");
    skilldeck_testkit::skill(&r, "a")
        .description("Use when testing.")
        .body("# a\n")
        .write();
    let index = tmp.path().join("index.idx");
    let mut opts = indexed(vec![root(&r, Scope::Extra)], &index);
    opts.index_racy_window = std::time::Duration::from_secs(3600);
    discover(&opts);
    // Just written: too recent to trust, so the next run reads it again.
    assert_eq!(discover(&opts).index_stats().unwrap().misses, 1);
}

#[test]
fn the_deck_keeps_host_fields_and_reads_the_rest_of_the_frontmatter_on_demand() {
    let tmp = tempfile::tempdir().unwrap();
    skilldeck_testkit::skill(tmp.path(), "full")
        .description("Full. Use when testing.")
        .field("license", "MIT")
        .field("compatibility", "Requires git")
        .frontmatter_raw("metadata:\n  author: me\n  version: \"1.0\"\n")
        .field("allowed-tools", "Bash Read")
        .field("argument-hint", "'[file] [mode]'")
        .field("arguments", "[file, mode]")
        .field("disable-model-invocation", "true")
        .field("user-invocable", "false")
        .body("# Full\n")
        .write();
    let plain = skilldeck_testkit::skill(tmp.path(), "plain")
        .description("Plain. Use when testing.")
        .body("# plain\n")
        .write();
    for index in [false, true] {
        let mut opts = options(vec![root(tmp.path(), Scope::Extra)]);
        if index {
            opts.index = Some(tmp.path().join("index.idx"));
            opts.index_racy_window = std::time::Duration::ZERO;
        }
        // Twice with the index: the second run serves both skills from it.
        for run in 0..1 + usize::from(index) {
            let deck = discover(&opts);
            if run == 1 {
                assert_eq!(deck.index_stats().unwrap().hits, 2);
            }
            let full = deck.get("full").unwrap();
            assert!(!full.model_invocable());
            assert!(!full.user_invocable());
            assert_eq!(full.argument_hint(), Some("[file] [mode]"));
            assert_eq!(full.argument_names(), ["file", "mode"]);
            let fm = full.frontmatter().unwrap();
            assert_eq!(fm.name.as_deref(), Some("full"));
            assert_eq!(fm.license.as_deref(), Some("MIT"));
            assert_eq!(fm.compatibility.as_deref(), Some("Requires git"));
            assert_eq!(
                fm.metadata,
                [
                    ("author".to_owned(), "me".to_owned()),
                    ("version".to_owned(), "1.0".to_owned())
                ]
            );
            assert_eq!(fm.allowed_tools, ["Bash", "Read"]);
            let p = deck.get("plain").unwrap();
            assert!(p.model_invocable() && p.user_invocable());
            assert_eq!(p.argument_hint(), None);
            assert!(p.argument_names().is_empty());
            assert!(p.frontmatter().unwrap().license.is_none());
        }
    }
    // The file gone: a clear error naming the skill, not a panic.
    let deck = discover(&options(vec![root(tmp.path(), Scope::Extra)]));
    std::fs::remove_file(plain.join("SKILL.md")).unwrap();
    let err = deck.get("plain").unwrap().frontmatter().unwrap_err();
    assert!(matches!(err, skilldeck::Error::Frontmatter { ref name, .. } if name == "plain"));
}

#[test]
fn the_walk_limit_counts_skill_folders_not_the_root() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("skills");
    for i in 0..5 {
        skilldeck_testkit::skill(&root, &format!("s{i}"))
            .description("Use when testing.")
            .write();
    }
    // Exactly as many skill folders as the limit: all found, nothing said.
    let mut options = DiscoveryOptions::with_roots([root]);
    options.limits.max_dirs = 5;
    let deck = discover(&options);
    assert_eq!(deck.len(), 5);
    assert_eq!(deck.load_problems().count(), 0, "{:#?}", deck.diagnostics());
    // One fewer: the last is not searched, and the limit is reported.
    options.limits.max_dirs = 4;
    let deck = discover(&options);
    assert_eq!(deck.len(), 4);
    let limit: Vec<_> = deck.load_problems().map(|d| d.code).collect();
    assert_eq!(limit, [skilldeck::Code::WalkLimit]);
}

#[test]
fn a_walk_limit_keeps_the_first_folders_in_sorted_order_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("skills");
    // Created in reverse order, so directory order is not sorted order.
    for name in ["s9", "s8", "s7", "s6", "s5", "s4", "s3", "s2", "s1", "s0"] {
        skilldeck_testkit::skill(&root, name)
            .description("Use when testing.")
            .write();
    }
    let mut options = DiscoveryOptions::with_roots([root]);
    // Three skill folders (the root is not counted).
    options.limits.max_dirs = 3;
    for _ in 0..5 {
        let deck = discover(&options);
        let names: Vec<&str> = deck.skills().iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["s0", "s1", "s2"]);
        let limit: Vec<_> = deck.load_problems().map(|d| d.code).collect();
        assert_eq!(
            limit,
            [skilldeck::Code::WalkLimit],
            "{:#?}",
            deck.diagnostics()
        );
    }
}
