//! The rule of issue 30, "every channel, one fingerprint": one skill
//! folder installed through every channel skilldeck reads (a local folder,
//! its `.tar.gz` and `.zip` packages, a `git+file://` repository at a tag,
//! a Claude Code marketplace entry, a Codex plugin in a Codex marketplace,
//! the well-known index of `skilldeck serve --http`, the registry and its
//! well-known index, and an OCI registry when `scripts/test-oci.sh` provides
//! one) prints the same `sha256:` fingerprint, records it in each
//! project's `skilldeck.lock` with the channel's canonical source, and
//! `verify`s.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use serde_json::json;
use skilldeck_testkit::git::Repo;
use skilldeck_testkit::plugins::{claude_marketplace, codex_marketplace, plugin_at};
use skilldeck_testkit::process::{lines_of, wait_for_line};
use skilldeck_testkit::registry::RegistryProcess;

const BIN: &str = env!("CARGO_BIN_EXE_skilldeck");

/// `skilldeck ARGS` in `cwd`, with HOME, the XDG folders, git's and
/// Docker's configuration under `home` (nothing of the user's is read).
fn sd(home: &Path, cwd: &Path, args: &[&str]) -> Output {
    let docker = home.join(".docker-none");
    std::fs::create_dir_all(&docker).unwrap();
    Command::new(BIN)
        .args(args)
        .current_dir(cwd)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("DOCKER_CONFIG", &docker)
        .env_remove("SKILLDECK_TOKEN")
        .env_remove("SKILLDECK_REGISTRY_URL")
        .env_remove("SKILLDECK_OCI_TOKEN")
        .env_remove("SKILLDECK_OCI_USERNAME")
        .env_remove("SKILLDECK_OCI_PASSWORD")
        .env_remove("SKILLDECK_OCI_CREDENTIALS")
        .output()
        .unwrap()
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// The files of the skill every channel carries: `SKILL.md`, a reference
/// and an executable script.
const FILES: &[(&str, &str, bool)] = &[
    (
        "SKILL.md",
        "---\nname: pdf\ndescription: Extract text from PDF files. Use when a task reads PDFs.\n\
         metadata:\n  version: \"1.0.0\"\n---\n\n# PDF\n\nRun scripts/extract.sh.\n",
        false,
    ),
    (
        "references/guide.md",
        "# Guide\n\nPages, then text.\n",
        false,
    ),
    ("scripts/extract.sh", "#!/bin/sh\necho extracting\n", true),
];

/// Writes the skill's files into `dir` (the script executable).
fn write_skill(dir: &Path) -> PathBuf {
    for (rel, text, exec) in FILES {
        let path = skilldeck_testkit::file(dir.join(rel), text);
        #[cfg(unix)]
        if *exec {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        #[cfg(not(unix))]
        let _ = (path, exec);
    }
    dir.to_path_buf()
}

/// One install: the channel, the source installed, and the project it
/// went into.
struct Channel {
    name: &'static str,
    source: String,
    project: PathBuf,
}

/// Installs `args` into the project `home/projects/NAME` and checks the
/// rule: the `installed pdf 1.0.0 sha256:...` line carries `fingerprint`,
/// the lock records it for `pdf` with a source starting with
/// `source_prefix`, and `verify` passes.
fn check_channel(
    home: &Path,
    name: &'static str,
    args: &[&str],
    source_prefix: &str,
    fingerprint: &str,
) -> Channel {
    let project = home.join("projects").join(name);
    std::fs::create_dir_all(&project).unwrap();
    let mut all = vec!["install"];
    all.extend_from_slice(args);
    let out = ok(&sd(home, &project, &all));
    let line = out
        .lines()
        .find(|l| l.starts_with("installed pdf "))
        .unwrap_or_else(|| panic!("{name}: no installed line in {out}"));
    let printed = line
        .split_whitespace()
        .find(|w| w.starts_with("sha256:"))
        .unwrap_or_else(|| panic!("{name}: no fingerprint in {line}"));
    assert_eq!(
        printed, fingerprint,
        "{name}: printed another fingerprint: {line}"
    );
    assert!(
        line.starts_with(&format!(
            "installed pdf 1.0.0 {fingerprint} from {source_prefix}"
        )),
        "{name}: {line}"
    );
    let lock_text = std::fs::read_to_string(project.join(".agents/skilldeck.lock")).unwrap();
    let lock: toml::Value = toml::from_str(&lock_text).unwrap();
    let entry = &lock["skill"]["pdf"];
    assert_eq!(
        entry["fingerprint"].as_str(),
        Some(fingerprint),
        "{name}: {lock_text}"
    );
    let source = entry["source"].as_str().unwrap().to_owned();
    assert!(source.starts_with(source_prefix), "{name}: {lock_text}");
    ok(&sd(home, &project, &["verify"]));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let script = project.join(".agents/skills/pdf/scripts/extract.sh");
        let mode = std::fs::metadata(&script).unwrap().permissions().mode();
        assert_eq!(mode & 0o111, 0o111, "{name}: the script lost its x bit");
    }
    Channel {
        name,
        source,
        project,
    }
}

/// `skilldeck serve --http 127.0.0.1:0 --root ROOT` with the well-known
/// index on; its base URL and its standard error's lines (kept, so the
/// pipe stays drained).
fn serve_http(home: &Path, root: &Path) -> (Child, String, std::sync::mpsc::Receiver<String>) {
    let config = skilldeck_testkit::file(home.join("serve.toml"), "[serve]\nwell-known = true\n");
    let mut child = Command::new(BIN)
        .args(["serve", "--no-watch", "--http", "127.0.0.1:0", "--root"])
        .arg(root)
        .arg("--config")
        .arg(&config)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_CACHE_HOME", home.join("cache"))
        .current_dir(home)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let err = lines_of(child.stderr.take().unwrap());
    let line = wait_for_line(&err, "skilldeck serve: listening on ", "serve --http");
    let url = line.trim().trim_end_matches("/mcp").to_owned();
    (child, url, err)
}

/// Kills the child when dropped (a failing assertion leaves no server).
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn one_skill_has_one_fingerprint_through_every_channel_and_the_lock_records_it() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let folder = write_skill(&home.join("src/pdf"));
    let mut channels = Vec::new();

    // 1. The folder: the reference fingerprint.
    let project = home.join("projects/folder");
    std::fs::create_dir_all(&project).unwrap();
    let out = ok(&sd(home, &project, &["install", folder.to_str().unwrap()]));
    let fingerprint = out
        .split_whitespace()
        .find(|w| w.starts_with("sha256:"))
        .unwrap()
        .to_owned();
    channels.push(check_channel(
        home,
        "folder-again",
        &[folder.to_str().unwrap()],
        "",
        &fingerprint,
    ));

    // 2. Its packages, tar.gz and zip.
    for (name, file) in [("tar-gz", "pdf-1.0.0.tar.gz"), ("zip", "pdf-1.0.0.zip")] {
        let package = home.join("packages").join(file);
        std::fs::create_dir_all(package.parent().unwrap()).unwrap();
        ok(&sd(
            home,
            home,
            &[
                "pack",
                folder.to_str().unwrap(),
                "-o",
                package.to_str().unwrap(),
            ],
        ));
        channels.push(check_channel(
            home,
            name,
            &[package.to_str().unwrap()],
            "",
            &fingerprint,
        ));
    }

    // 3. A git repository at a tag.
    let repo = Repo::new(&home.join("git"));
    write_skill(&repo.work.join("skills/pdf"));
    repo.commit("pdf 1.0.0");
    repo.tag("v1.0.0", false);
    let git_source = format!("{}#v1.0.0:skills/pdf", repo.url());
    channels.push(check_channel(
        home,
        "git",
        &[&git_source],
        &git_source,
        &fingerprint,
    ));

    // 4. A Claude Code marketplace entry, 5. a Codex plugin in a Codex
    // marketplace: the skill inside a plugin.
    let claude = home.join("claude-market");
    let plugin = plugin_at(
        &claude.join("plugins"),
        "docs",
        ".claude-plugin/plugin.json",
        &json!({"name": "docs", "version": "1.0.0", "description": "Docs"}),
        &[],
    );
    write_skill(&plugin.join("skills/pdf"));
    claude_marketplace(&claude, "acme", &[("docs", json!("./plugins/docs"))]);
    channels.push(check_channel(
        home,
        "claude-marketplace",
        &[&format!("marketplace:{}#docs:pdf", claude.display())],
        "marketplace:",
        &fingerprint,
    ));
    let codex = home.join("codex-market");
    let plugin = plugin_at(
        &codex.join("plugins"),
        "docs",
        ".codex-plugin/plugin.json",
        &json!({"name": "docs", "version": "1.0.0", "description": "Docs",
                "skills": "./skills/"}),
        &[],
    );
    write_skill(&plugin.join("skills/pdf"));
    codex_marketplace(&codex, "acme", &[("docs", "./plugins/docs")]);
    channels.push(check_channel(
        home,
        "codex-plugin",
        &[&format!("marketplace:{}#docs:pdf", codex.display())],
        "marketplace:",
        &fingerprint,
    ));

    // 6. The well-known index of `serve --http`.
    let served = home.join("served");
    write_skill(&served.join("pdf"));
    let (child, url, _err) = serve_http(home, &served);
    let _server = Killed(child);
    channels.push(check_channel(
        home,
        "serve-http-well-known",
        &[&format!("{url}#pdf")],
        &format!("wellknown+{url}/.well-known/agent-skills/index.json#pdf"),
        &fingerprint,
    ));

    // 7. The registry, and its well-known index.
    let config = skilldeck_testkit::file(
        home.join("registry.toml"),
        "[registry.well-known]\nnamespaces = [\"acme\"]\n",
    );
    let registry = RegistryProcess::start(
        BIN,
        &home.join("registry-data"),
        &["--config", config.to_str().unwrap()],
    );
    let admin = registry.admin_file.to_str().unwrap().to_owned();
    ok(&sd(
        home,
        home,
        &[
            "publish",
            folder.to_str().unwrap(),
            "--namespace",
            "acme",
            "--registry",
            &registry.url,
            "--token-file",
            &admin,
        ],
    ));
    channels.push(check_channel(
        home,
        "registry",
        &[
            "acme/pdf@1.0.0",
            "--registry",
            &registry.url,
            "--token-file",
            &admin,
        ],
        &format!("registry+{}#acme/pdf@1.0.0", registry.url),
        &fingerprint,
    ));
    channels.push(check_channel(
        home,
        "registry-well-known",
        &[&format!("{}#pdf", registry.url)],
        &format!(
            "wellknown+{}/.well-known/agent-skills/index.json#pdf",
            registry.url
        ),
        &fingerprint,
    ));

    // 8. An OCI registry (scripts/test-oci.sh starts docker-registry).
    if let Some(oci) = skilldeck_testkit::oci::registry("one_fingerprint") {
        let reference = format!("oci://{}/skilldeck-tests/one-fingerprint:1.0.0", oci.addr);
        let pushed = ok(&sd(
            home,
            home,
            &["push", &reference, folder.to_str().unwrap()],
        ));
        assert!(pushed.contains(&fingerprint), "{pushed}");
        channels.push(check_channel(
            home,
            "oci",
            &[&reference],
            &format!(
                "oci://{}/skilldeck-tests/one-fingerprint:1.0.0@sha256:",
                oci.addr
            ),
            &fingerprint,
        ));
    }

    // Every lock names the skill with the same files, whatever the source.
    let files_of = |c: &Channel| {
        let text = std::fs::read_to_string(c.project.join(".agents/skilldeck.lock")).unwrap();
        let lock: toml::Value = toml::from_str(&text).unwrap();
        lock["skill"]["pdf"]["files"].clone()
    };
    let first = files_of(&channels[0]);
    for c in &channels {
        assert_eq!(files_of(c), first, "{} ({})", c.name, c.source);
    }
    let names: Vec<&str> = channels.iter().map(|c| c.name).collect();
    eprintln!(
        "one fingerprint {fingerprint} through: {}",
        names.join(", ")
    );
}
