//! Reading and listing a skill's files: nothing outside the skill folder is
//! ever returned, whatever the path or the symlinks say.
//!
//! Every read runs on a watchdog thread, so a regression that blocks (a FIFO
//! opened for a blocking read) fails the test instead of hanging CI.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::symlink;
use std::path::PathBuf;

use base64::Engine as _;
use skilldeck::limits::{MAX_RESOURCE_BYTES, MAX_RESOURCE_LIST_DEPTH, MAX_RESOURCE_LIST_FILES};
use skilldeck::resources::read_resource_capped;
use skilldeck::{
    DiscoveryOptions, Error, Resource, ResourceContent, ResourceProblem, Skill, discover,
    list_resources, read_resource,
};

use crate::common::{mkfifo, within_deadline};

/// A temporary tree: `skills/demo/` (a skill with `references/a.md` and
/// `scripts/x.py`) and `outside/secret.txt` next to it.
struct Fixture {
    tmp: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        skilldeck_testkit::skill(tmp.path().join("skills"), "demo")
            .description("Demo skill. Use when testing.")
            .body("# Demo\n")
            .file("references/a.md", "# A\n")
            .file("scripts/x.py", "print('x')\n")
            .write();
        std::fs::create_dir_all(tmp.path().join("outside/sub")).unwrap();
        std::fs::write(tmp.path().join("outside/secret.txt"), "SECRET").unwrap();
        std::fs::write(tmp.path().join("outside/sub/deep.txt"), "SECRET").unwrap();
        Fixture { tmp }
    }

    fn dir(&self) -> PathBuf {
        self.tmp.path().join("skills/demo")
    }

    fn outside(&self) -> PathBuf {
        self.tmp.path().join("outside")
    }

    fn skill(&self) -> Skill {
        let deck = discover(&DiscoveryOptions::with_roots([self
            .tmp
            .path()
            .join("skills")]));
        deck.get("demo")
            .cloned()
            .unwrap_or_else(|| panic!("demo not discovered: {:#?}", deck.diagnostics()))
    }
}

fn read(skill: &Skill, path: &str) -> Result<Resource, Error> {
    let skill = skill.clone();
    let path = path.to_owned();
    within_deadline(move || read_resource(&skill, &path))
}

/// Reads `path`, expects a refusal, checks the message names the skill, the
/// path and the reason, and returns the problem.
fn refused(skill: &Skill, path: &str, reason: &str) -> ResourceProblem {
    let err = match read(skill, path) {
        Ok(r) => panic!("{path:?} was read: {r:?}"),
        Err(e) => e,
    };
    let message = err.to_string();
    assert!(message.contains("skill 'demo'"), "{message}");
    assert!(
        message.contains(&format!("'{}'", path.escape_debug())),
        "message does not name {path:?}: {message}"
    );
    assert!(message.contains(reason), "{path:?}: {message}");
    match err {
        Error::Resource { problem, .. } => problem,
        other => panic!("{path:?}: unexpected error {other:?}"),
    }
}

// ---- lexical refusals (agentskills-testing conformance cases first) ----

#[test]
fn parent_component_is_refused() {
    let f = Fixture::new();
    let skill = f.skill();
    for path in ["../etc/passwd", "..", "a/../../b", "./../x", "a/./../../x"] {
        let problem = refused(&skill, path, "'..' is not allowed");
        assert!(
            matches!(problem, ResourceProblem::ParentComponent),
            "{path}"
        );
    }
}

#[test]
fn parent_component_is_refused_even_when_it_stays_inside() {
    let f = Fixture::new();
    let skill = f.skill();
    let problem = refused(
        &skill,
        "references/../references/a.md",
        "'..' is not allowed",
    );
    assert!(matches!(problem, ResourceProblem::ParentComponent));
}

#[test]
fn absolute_path_is_refused() {
    let f = Fixture::new();
    let skill = f.skill();
    let inside = f.dir().join("references/a.md");
    for path in ["/etc/passwd", inside.to_str().unwrap()] {
        let problem = refused(&skill, path, "absolute paths are not allowed");
        assert!(matches!(problem, ResourceProblem::Absolute), "{path}");
    }
}

#[test]
fn windows_separators_and_unc_paths_are_refused() {
    let f = Fixture::new();
    let skill = f.skill();
    for path in [
        "..\\..\\windows\\system32",
        "\\\\server\\share",
        "references\\a.md",
    ] {
        let problem = refused(&skill, path, "Windows separators");
        assert!(matches!(problem, ResourceProblem::Backslash), "{path}");
    }
}

#[test]
fn windows_drive_paths_are_refused() {
    let f = Fixture::new();
    let skill = f.skill();
    for path in ["C:\\x", "C:/x", "c:x"] {
        let problem = refused(&skill, path, "drive paths");
        assert!(matches!(problem, ResourceProblem::DrivePath), "{path}");
    }
}

#[test]
fn percent_encoded_paths_are_refused() {
    let f = Fixture::new();
    let skill = f.skill();
    for path in [
        "%2e%2e%2fetc%2fpasswd",
        "%2e%2e/x",
        "%252e%252e%252f",
        "references%2Fa.md",
    ] {
        let problem = refused(&skill, path, "percent-encoded");
        assert!(matches!(problem, ResourceProblem::PercentEncoded), "{path}");
    }
}

#[test]
fn percent_encoded_path_is_refused_even_when_the_file_exists() {
    let f = Fixture::new();
    std::fs::write(f.dir().join("%2e%2e"), "literal name").unwrap();
    let skill = f.skill();
    refused(&skill, "%2e%2e", "percent-encoded");
}

#[test]
fn nul_byte_is_refused() {
    let f = Fixture::new();
    let skill = f.skill();
    let problem = refused(&skill, "ok\0.md", "NUL byte");
    assert!(matches!(problem, ResourceProblem::NulByte));
}

#[test]
fn empty_path_is_refused() {
    let f = Fixture::new();
    let skill = f.skill();
    let problem = refused(&skill, "", "the path is empty");
    assert!(matches!(problem, ResourceProblem::Empty));
}

#[test]
fn overlong_path_is_refused() {
    let f = Fixture::new();
    let skill = f.skill();
    let path = "a/".repeat(skilldeck::limits::MAX_RESOURCE_PATH_BYTES);
    let problem = refused(&skill, &path, "byte limit");
    assert!(matches!(problem, ResourceProblem::PathTooLong { .. }));
}

// ---- symlinks: checked after resolving ----

#[test]
fn symlinked_file_pointing_outside_is_refused() {
    let f = Fixture::new();
    symlink(f.outside().join("secret.txt"), f.dir().join("leak.txt")).unwrap();
    let skill = f.skill();
    let problem = refused(&skill, "leak.txt", "outside the skill folder");
    assert!(matches!(problem, ResourceProblem::Escapes));
}

#[test]
fn relative_symlink_pointing_outside_is_refused() {
    let f = Fixture::new();
    symlink(
        "../../../outside/secret.txt",
        f.dir().join("references/leak.md"),
    )
    .unwrap();
    let skill = f.skill();
    refused(&skill, "references/leak.md", "outside the skill folder");
}

#[test]
fn symlinked_folder_pointing_outside_is_refused() {
    let f = Fixture::new();
    symlink(f.outside(), f.dir().join("refs")).unwrap();
    let skill = f.skill();
    refused(&skill, "refs/secret.txt", "outside the skill folder");
    refused(&skill, "refs/sub/deep.txt", "outside the skill folder");
}

#[test]
fn intermediate_folder_symlinked_to_etc_is_refused() {
    let f = Fixture::new();
    symlink("/etc", f.dir().join("refs")).unwrap();
    let skill = f.skill();
    let problem = refused(&skill, "refs/passwd", "outside the skill folder");
    assert!(matches!(problem, ResourceProblem::Escapes), "{problem:?}");
    // The answer names no server path (issue 11, finding 9).
    assert!(!problem.to_string().contains("/etc"), "{problem}");
}

/// The message for `path`, which must be refused.
fn refusal_message(skill: &Skill, path: &str) -> String {
    match read(skill, path) {
        Ok(r) => panic!("{path:?} was read: {r:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn paths_outside_get_one_refusal_whether_or_not_they_exist() {
    let f = Fixture::new();
    symlink("/", f.dir().join("rootfs")).unwrap();
    symlink(f.outside(), f.dir().join("refs")).unwrap();
    symlink(f.outside().join("gone.txt"), f.dir().join("gone-link")).unwrap();
    symlink(f.outside().join("secret.txt"), f.dir().join("secret-link")).unwrap();
    let skill = f.skill();
    let message = |path: &str| refusal_message(&skill, path).replace(path, "PATH");
    let existing = message("refs/secret.txt");
    assert_eq!(message("refs/missing.txt"), existing);
    assert_eq!(message("refs/missing/deeper.txt"), existing);
    assert_eq!(message("rootfs/etc/passwd"), existing);
    assert_eq!(message("rootfs/etc/no-such-file-here"), existing);
    assert_eq!(message("gone-link"), existing);
    assert_eq!(message("secret-link"), existing);
    assert!(existing.contains("outside the skill folder"), "{existing}");
    assert!(
        !existing.contains(&*f.tmp.path().to_string_lossy()),
        "{existing}"
    );
}

#[test]
fn refusals_through_proc_self_reveal_no_pid() {
    let f = Fixture::new();
    symlink("/", f.dir().join("rootfs")).unwrap();
    let skill = f.skill();
    let pid = std::process::id().to_string();
    for path in [
        "rootfs/proc/self/environ",
        "rootfs/proc/self/cwd/x",
        "rootfs/proc/self/no-such-entry",
    ] {
        let message = refusal_message(&skill, path);
        assert!(message.contains("outside the skill folder"), "{message}");
        assert!(!message.contains(&pid), "{path}: {message}");
    }
}

#[test]
fn hardlinked_files_are_refused_and_unlisted_by_default() {
    let f = Fixture::new();
    std::fs::hard_link(
        f.outside().join("secret.txt"),
        f.dir().join("references/linked.txt"),
    )
    .unwrap();
    let skill = f.skill();
    let problem = refused(&skill, "references/linked.txt", "hard links");
    assert!(
        matches!(problem, ResourceProblem::Hardlinked),
        "{problem:?}"
    );
    let list = list_resources(&skill).unwrap();
    assert!(
        list.files.iter().all(|e| e.path != "references/linked.txt"),
        "{list:?}"
    );
    assert_eq!(list.omitted, 1);
    // A file with one link is still read.
    assert_eq!(
        read(&skill, "references/a.md").unwrap().text(),
        Some("# A\n")
    );
}

#[test]
fn hardlinked_files_are_served_when_the_config_allows_them() {
    let f = Fixture::new();
    std::fs::hard_link(
        f.outside().join("secret.txt"),
        f.dir().join("references/linked.txt"),
    )
    .unwrap();
    let config = skilldeck::Config::parse(
        "[resources]\nallow-hardlinks = true\n",
        &f.tmp.path().join("skilldeck.toml"),
    )
    .unwrap();
    let options =
        DiscoveryOptions::from_config(&config, f.tmp.path(), Some(&[f.tmp.path().join("skills")]));
    assert!(options.allow_hardlinks);
    let deck = discover(&options);
    let skill = deck.get("demo").unwrap();
    assert!(skill.allows_hardlinks());
    assert_eq!(
        read(skill, "references/linked.txt").unwrap().text(),
        Some("SECRET")
    );
    let list = list_resources(skill).unwrap();
    assert!(list.files.iter().any(|e| e.path == "references/linked.txt"));
}

#[test]
fn symlink_chain_ending_outside_is_refused() {
    let f = Fixture::new();
    // first -> second (inside) -> third (inside) -> outside/secret.txt
    symlink(f.outside().join("secret.txt"), f.dir().join("third")).unwrap();
    symlink("third", f.dir().join("second")).unwrap();
    symlink("second", f.dir().join("first")).unwrap();
    let skill = f.skill();
    refused(&skill, "first", "outside the skill folder");
}

#[test]
fn symlink_to_a_device_is_refused_without_reading() {
    let f = Fixture::new();
    symlink("/dev/zero", f.dir().join("zero")).unwrap();
    let skill = f.skill();
    refused(&skill, "zero", "outside the skill folder");
}

#[test]
fn symlinks_staying_inside_are_followed() {
    let f = Fixture::new();
    symlink("references/a.md", f.dir().join("alias.md")).unwrap();
    symlink("references", f.dir().join("docs")).unwrap();
    symlink(f.dir().join("scripts/x.py"), f.dir().join("abs.py")).unwrap();
    symlink("alias.md", f.dir().join("chain.md")).unwrap();
    let skill = f.skill();
    for path in ["alias.md", "docs/a.md", "chain.md"] {
        let r = read(&skill, path).unwrap();
        assert_eq!(r.text(), Some("# A\n"), "{path}");
        assert_eq!(r.path, path);
    }
    assert_eq!(read(&skill, "abs.py").unwrap().text(), Some("print('x')\n"));
}

#[test]
fn skill_folder_reached_through_a_symlink_still_reads() {
    let f = Fixture::new();
    let linked = f.tmp.path().join("linked");
    std::fs::create_dir(&linked).unwrap();
    symlink(f.dir(), linked.join("demo")).unwrap();
    let deck = discover(&DiscoveryOptions::with_roots([linked]));
    let skill = deck.get("demo").unwrap();
    assert_eq!(
        read(skill, "references/a.md").unwrap().text(),
        Some("# A\n")
    );
}

#[test]
fn dangling_symlink_is_not_found() {
    let f = Fixture::new();
    symlink("nowhere.md", f.dir().join("dangling.md")).unwrap();
    let skill = f.skill();
    let problem = refused(&skill, "dangling.md", "not found");
    assert!(matches!(problem, ResourceProblem::NotFound));
}

#[test]
fn symlink_loop_is_an_error_not_a_hang() {
    let f = Fixture::new();
    symlink("loop-b", f.dir().join("loop-a")).unwrap();
    symlink("loop-a", f.dir().join("loop-b")).unwrap();
    let skill = f.skill();
    let problem = refused(&skill, "loop-a", "cannot read");
    assert!(matches!(problem, ResourceProblem::Io(_)));
}

// ---- what is read ----

#[test]
fn fifo_is_refused_without_blocking() {
    let f = Fixture::new();
    mkfifo(&f.dir().join("pipe"));
    symlink("pipe", f.dir().join("pipe-link")).unwrap();
    let skill = f.skill();
    for path in ["pipe", "pipe-link"] {
        let problem = refused(&skill, path, "a FIFO, not a regular file");
        assert!(matches!(problem, ResourceProblem::NotRegular(_)), "{path}");
    }
}

#[test]
fn folder_is_refused_with_a_hint_to_list() {
    let f = Fixture::new();
    let skill = f.skill();
    for path in ["references", "references/", ".", "./"] {
        let problem = refused(&skill, path, "use list_resources");
        assert!(matches!(problem, ResourceProblem::Folder), "{path}");
    }
}

#[test]
fn missing_file_is_not_found() {
    let f = Fixture::new();
    let skill = f.skill();
    let problem = refused(&skill, "references/missing.md", "not found");
    assert!(matches!(problem, ResourceProblem::NotFound));
}

#[test]
fn allowed_relative_paths_are_read() {
    let f = Fixture::new();
    let skill = f.skill();
    let a = read(&skill, "references/a.md").unwrap();
    assert_eq!(a.path, "references/a.md");
    assert_eq!(a.size, 4);
    assert_eq!(a.mime, "text/markdown");
    let x = read(&skill, "./scripts/x.py").unwrap();
    assert_eq!(x.path, "scripts/x.py");
    assert_eq!(x.mime, "text/x-python");
    assert_eq!(
        read(&skill, "references//a.md").unwrap().path,
        "references/a.md"
    );
}

#[test]
fn skill_md_itself_may_be_read() {
    let f = Fixture::new();
    let skill = f.skill();
    let r = read(&skill, "SKILL.md").unwrap();
    assert!(r.text().unwrap().starts_with("---\nname: demo\n"));
}

#[test]
fn size_cap_refuses_larger_files_and_names_the_size() {
    let f = Fixture::new();
    let at_cap = vec![b'a'; usize::try_from(MAX_RESOURCE_BYTES).unwrap()];
    std::fs::write(f.dir().join("at-cap.txt"), &at_cap).unwrap();
    let mut over = at_cap;
    over.push(b'a');
    std::fs::write(f.dir().join("over-cap.txt"), &over).unwrap();
    let skill = f.skill();
    assert_eq!(read(&skill, "at-cap.txt").unwrap().size, MAX_RESOURCE_BYTES);
    let size = MAX_RESOURCE_BYTES + 1;
    let problem = refused(
        &skill,
        "over-cap.txt",
        &format!("{size} bytes, over the {MAX_RESOURCE_BYTES} byte limit"),
    );
    assert!(matches!(problem, ResourceProblem::TooLarge { .. }));
}

#[test]
fn custom_size_cap_applies() {
    let f = Fixture::new();
    let skill = f.skill();
    let err = read_resource_capped(&skill, "scripts/x.py", 4).unwrap_err();
    assert!(
        err.to_string().contains("11 bytes, over the 4 byte limit"),
        "{err}"
    );
}

#[test]
fn utf8_without_nul_is_text() {
    let f = Fixture::new();
    std::fs::write(f.dir().join("notes.txt"), "héllo ✓\n").unwrap();
    let skill = f.skill();
    let r = read(&skill, "notes.txt").unwrap();
    assert_eq!(r.content, ResourceContent::Text("héllo ✓\n".into()));
    assert_eq!(r.mime, "text/plain");
    let json = r.to_json();
    assert_eq!(json["encoding"], "utf-8");
    assert_eq!(json["text"], "héllo ✓\n");
    assert!(json.get("content_base64").is_none());
}

#[test]
fn invalid_utf8_or_nul_bytes_are_binary_with_base64_json() {
    let f = Fixture::new();
    let png = [
        0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d,
    ];
    std::fs::create_dir(f.dir().join("assets")).unwrap();
    std::fs::write(f.dir().join("assets/logo.png"), png).unwrap();
    std::fs::write(f.dir().join("assets/nul.txt"), b"a\0b").unwrap();
    std::fs::write(f.dir().join("assets/blob"), [0xff, 0xfe, 0x00]).unwrap();
    let skill = f.skill();

    let logo = read(&skill, "assets/logo.png").unwrap();
    assert_eq!(logo.content, ResourceContent::Binary(png.to_vec()));
    assert_eq!(logo.mime, "image/png");
    let json = logo.to_json();
    assert_eq!(json["encoding"], "base64");
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(json["content_base64"].as_str().unwrap())
        .unwrap();
    assert_eq!(decoded, png);
    assert!(json.get("text").is_none());
    // Serialize gives the same shape as to_json.
    assert_eq!(serde_json::to_value(&logo).unwrap(), json);

    let nul = read(&skill, "assets/nul.txt").unwrap();
    assert!(!nul.is_text());
    assert_eq!(nul.bytes(), b"a\0b");
    assert_eq!(nul.mime, "text/plain");
    let blob = read(&skill, "assets/blob").unwrap();
    assert_eq!(blob.mime, "application/octet-stream");
}

// ---- listing ----

#[test]
fn listing_is_sorted_with_sizes_and_skips_git_and_node_modules() {
    let f = Fixture::new();
    std::fs::create_dir_all(f.dir().join(".git/objects")).unwrap();
    std::fs::write(f.dir().join(".git/HEAD"), "ref").unwrap();
    std::fs::create_dir_all(f.dir().join("node_modules/x")).unwrap();
    std::fs::write(f.dir().join("node_modules/x/i.js"), "").unwrap();
    std::fs::write(f.dir().join("references/b.md"), "bb").unwrap();
    std::fs::write(f.dir().join("a.md"), "a").unwrap();
    let skill = f.skill();
    let list = list_resources(&skill).unwrap();
    let paths: Vec<(&str, u64)> = list
        .files
        .iter()
        .map(|e| (e.path.as_str(), e.size))
        .collect();
    let skill_md_len = std::fs::metadata(f.dir().join("SKILL.md")).unwrap().len();
    assert_eq!(
        paths,
        [
            ("SKILL.md", skill_md_len),
            ("a.md", 1),
            ("references/a.md", 4),
            ("references/b.md", 2),
            ("scripts/x.py", 11),
        ]
    );
    assert_eq!(list.skill, "demo");
    assert!(!list.truncated);
    assert_eq!(list.omitted, 0);
}

#[test]
fn listing_follows_only_symlinks_that_stay_inside() {
    let f = Fixture::new();
    symlink(f.outside().join("secret.txt"), f.dir().join("leak.txt")).unwrap();
    symlink(f.outside(), f.dir().join("refs")).unwrap();
    symlink("/etc", f.dir().join("etc")).unwrap();
    symlink("references/a.md", f.dir().join("alias.md")).unwrap();
    symlink("references", f.dir().join("docs")).unwrap();
    symlink(".", f.dir().join("self")).unwrap();
    mkfifo(&f.dir().join("pipe"));
    let skill = f.skill();
    let list = within_deadline(move || list_resources(&skill).unwrap());
    let paths: Vec<&str> = list.files.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "SKILL.md",
            "alias.md",
            "docs/a.md",
            "references/a.md",
            "scripts/x.py",
        ]
    );
}

#[test]
fn every_listed_path_can_be_read() {
    let f = Fixture::new();
    std::fs::write(f.dir().join("a%41.md"), "x").unwrap();
    std::fs::write(f.dir().join("back\\slash.md"), "x").unwrap();
    std::fs::write(f.dir().join("C:drive.md"), "x").unwrap();
    let skill = f.skill();
    let list = list_resources(&skill).unwrap();
    assert_eq!(list.omitted, 3, "{list:?}");
    for entry in &list.files {
        let r = read(&skill, &entry.path).unwrap();
        assert_eq!(r.size, entry.size);
    }
}

#[test]
fn listing_is_bounded_by_depth() {
    let f = Fixture::new();
    // Folder levels 1..=MAX are listed; level MAX + 1 is not.
    let mut deep = f.dir();
    for i in 0..=MAX_RESOURCE_LIST_DEPTH {
        deep = deep.join(format!("d{i}"));
    }
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::write(deep.join("too-deep.md"), "x").unwrap();
    std::fs::write(deep.parent().unwrap().join("deepest-listed.md"), "x").unwrap();
    let skill = f.skill();
    let list = list_resources(&skill).unwrap();
    assert!(list.truncated);
    assert_eq!(list.omitted, 1);
    assert!(
        list.files
            .iter()
            .any(|e| e.path.ends_with("deepest-listed.md"))
    );
    assert!(!list.files.iter().any(|e| e.path.ends_with("too-deep.md")));
}

#[test]
fn listing_is_bounded_by_file_count() {
    let f = Fixture::new();
    let many = f.dir().join("many");
    std::fs::create_dir(&many).unwrap();
    // With SKILL.md, references/a.md and scripts/x.py: 3 over the limit.
    for i in 0..MAX_RESOURCE_LIST_FILES {
        std::fs::write(many.join(format!("{i:05}.txt")), "").unwrap();
    }
    let skill = f.skill();
    let list = list_resources(&skill).unwrap();
    assert_eq!(list.files.len(), MAX_RESOURCE_LIST_FILES);
    assert!(list.truncated);
    assert_eq!(list.omitted, 3);
    assert!(list.files.windows(2).all(|w| w[0].path < w[1].path));
}

#[test]
fn folder_listing_shows_empty_folders_and_nothing_outside() {
    let f = Fixture::new();
    std::fs::create_dir_all(f.dir().join("assets/empty")).unwrap();
    std::fs::create_dir_all(f.dir().join(".git")).unwrap();
    symlink(f.outside(), f.dir().join("escape")).unwrap();
    symlink(f.dir().join("references"), f.dir().join("refs-link")).unwrap();
    let skill = f.skill();
    assert_eq!(
        skilldeck::resources::list_folders(&skill, "").unwrap(),
        ["assets", "references", "refs-link", "scripts"]
    );
    assert_eq!(
        skilldeck::resources::list_folders(&skill, "assets").unwrap(),
        ["empty"]
    );
    // A file, a folder outside (through a symlink), `..` and a missing
    // folder are not folders of the skill.
    assert_eq!(
        skilldeck::resources::list_folders(&skill, "scripts/x.py"),
        None
    );
    assert_eq!(skilldeck::resources::list_folders(&skill, "escape"), None);
    assert_eq!(
        skilldeck::resources::list_folders(&skill, "../outside"),
        None
    );
    assert_eq!(skilldeck::resources::list_folders(&skill, "missing"), None);
}
