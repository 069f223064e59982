//! The registry's clients against the real server (`skilldeck registry
//! serve --listen 127.0.0.1:0 --data TMP`, started as a process): publish,
//! install and verify, the agent/assign/token commands, and `serve
//! --registry --agent` over stdio following the agent's assignments.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skilldeck_testkit::mcp::StdioClient;
use skilldeck_testkit::process::GIVE_UP;
use skilldeck_testkit::registry::RegistryProcess;

use crate::common::{bin, sd};

/// A registry server process, stopped when dropped.
type Server = RegistryProcess;

/// Starts `skilldeck registry serve` on the data folder `data`.
fn start_registry(data: &Path) -> Server {
    RegistryProcess::start(bin(), data, &[])
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

fn skill(base: &Path, name: &str, version: &str, body: &str) -> PathBuf {
    skilldeck_testkit::skill(base, name)
        .description(format!(
            "Does {name} things. Use when testing the registry."
        ))
        .frontmatter_raw(format!("metadata:\n  version: \"{version}\""))
        .body(body)
        .file("references/guide.md", "# Guide\n")
        .write()
}

/// Publishes the folder `dir` into `acme` as the admin.
fn publish(home: &Path, server: &Server, dir: &Path) -> String {
    let admin = server.admin_file.to_str().unwrap();
    ok(&sd(
        home,
        &[
            "publish",
            dir.to_str().unwrap(),
            "--namespace",
            "acme",
            "--registry",
            &server.url,
            "--token-file",
            admin,
        ],
    ))
}

/// An HTTP/1.1 request to the registry API with the admin token: the
/// status code.
fn admin_request(server: &Server, method: &str, path: &str, body: &str) -> u16 {
    let token = server.admin_token();
    server.http(method, path, Some(&token), Some(body)).status
}

fn admin_args<'a>(server: &'a Server, args: &[&'a str]) -> Vec<&'a str> {
    let mut all = args.to_vec();
    all.extend([
        "--registry",
        server.url.as_str(),
        "--token-file",
        server.admin_file.to_str().unwrap(),
    ]);
    all
}

#[test]
fn publish_then_install_by_version_and_label_verifies_and_a_tampered_file_fails_verify() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let server = start_registry(&home.join("data"));
    let v1 = skill(&home.join("src1"), "pdf", "1.0.0", "# PDF one\n");
    let out = publish(home, &server, &v1);
    assert!(out.contains("published acme/pdf@1.0.0"), "{out}");
    // The same content again: a no-op.
    let again = publish(home, &server, &v1);
    assert!(again.contains("unchanged"), "{again}");
    // A package file (packed first) with another version.
    let v2 = skill(&home.join("src2"), "pdf", "1.1.0", "# PDF two\n");
    let package = home.join("pdf-1.1.0.tar.gz");
    ok(&sd(
        home,
        &[
            "pack",
            v2.to_str().unwrap(),
            "-o",
            package.to_str().unwrap(),
        ],
    ));
    let out = publish(home, &server, &package);
    assert!(out.contains("published acme/pdf@1.1.0"), "{out}");

    // By version.
    let root = home.join("proj/.agents/skills");
    let root_s = root.to_str().unwrap();
    let admin = server.admin_file.to_str().unwrap();
    let url = server.url.as_str();
    let out = ok(&sd(
        home,
        &[
            "install",
            "acme/pdf@1.0.0",
            "--registry",
            url,
            "--token-file",
            admin,
            "--root",
            root_s,
        ],
    ));
    assert!(out.contains("installed pdf 1.0.0"), "{out}");
    let lock = std::fs::read_to_string(home.join("proj/.agents/skilldeck.lock")).unwrap();
    assert!(
        lock.contains(&format!("source = \"registry+{url}#acme/pdf@1.0.0\"")),
        "{lock}"
    );
    assert!(
        std::fs::read_to_string(root.join("pdf/SKILL.md"))
            .unwrap()
            .contains("PDF one")
    );
    ok(&sd(home, &["verify", "--dir", root_s]));

    // A tampered file: verify fails; a frozen install downloads exactly the
    // locked version again and restores it.
    std::fs::write(root.join("pdf/references/guide.md"), "# Changed\n").unwrap();
    let out = sd(home, &["verify", "--dir", root_s]);
    assert!(!out.status.success(), "verify passed on a tampered file");
    ok(&sd(
        home,
        &[
            "install",
            "--frozen",
            "--force",
            "--token-file",
            admin,
            "--root",
            root_s,
        ],
    ));
    ok(&sd(home, &["verify", "--dir", root_s]));
    assert!(
        std::fs::read_to_string(root.join("pdf/SKILL.md"))
            .unwrap()
            .contains("PDF one")
    );

    // By label: `latest` is 1.1.0; the lock records the exact version.
    let root2 = home.join("proj2/.agents/skills");
    let out = ok(&sd(
        home,
        &[
            "install",
            "acme/pdf@latest",
            "--registry",
            url,
            "--token-file",
            admin,
            "--root",
            root2.to_str().unwrap(),
        ],
    ));
    assert!(out.contains("installed pdf 1.1.0"), "{out}");
    let lock = std::fs::read_to_string(home.join("proj2/.agents/skilldeck.lock")).unwrap();
    assert!(lock.contains("#acme/pdf@1.1.0\""), "{lock}");
    ok(&sd(home, &["verify", "--dir", root2.to_str().unwrap()]));
}

#[test]
fn a_package_the_registry_refuses_prints_each_diagnostic_as_file_line_code_message() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let server = start_registry(&home.join("data"));
    // A package whose SKILL.md frontmatter is broken YAML on line 3:
    // packed by hand (skilldeck pack would refuse it).
    let src = home.join("src/bad");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        src.join("SKILL.md"),
        "---\nname: bad\ndescription: [unclosed\nmetadata:\n  version: \"1.0.0\"\n---\n# Bad\n",
    )
    .unwrap();
    let package = home.join("bad.tar.gz");
    let status = Command::new("tar")
        .args(["czf", package.to_str().unwrap(), "-C"])
        .arg(home.join("src"))
        .arg("bad")
        .status()
        .unwrap();
    assert!(status.success());
    let out = sd(
        home,
        &admin_args(&server, &["publish", package.to_str().unwrap()]),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    // `bad/SKILL.md:2...: error <code> <message>`
    let line = stderr
        .lines()
        .find(|l| l.contains("SKILL.md:"))
        .unwrap_or_else(|| panic!("no file:line diagnostic in {stderr}"));
    let after = line.split("SKILL.md:").nth(1).unwrap();
    assert!(
        after.starts_with(|c: char| c.is_ascii_digit()),
        "no line number: {line}"
    );
    assert!(line.contains("error"), "{line}");
}

#[test]
fn agent_assign_unassign_and_token_commands_drive_the_registry() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let server = start_registry(&home.join("data"));
    publish(
        home,
        &server,
        &skill(&home.join("src"), "pdf", "1.0.0", "# PDF\n"),
    );

    let created: Value = serde_json::from_str(&ok(&sd(
        home,
        &admin_args(
            &server,
            &[
                "registry",
                "agent",
                "create",
                "bot-1",
                "--capability",
                "web",
                "--max-concurrent",
                "2",
                "--format",
                "json",
            ],
        ),
    )))
    .unwrap();
    assert_eq!(created["id"], "bot-1");
    assert_eq!(created["capabilities"], json!(["web"]));
    // update: the given setting changes, the others stay.
    ok(&sd(
        home,
        &admin_args(
            &server,
            &[
                "registry",
                "agent",
                "update",
                "bot-1",
                "--timeout-secs",
                "30",
            ],
        ),
    ));
    let shown: Value = serde_json::from_str(&ok(&sd(
        home,
        &admin_args(
            &server,
            &["registry", "agent", "show", "bot-1", "--format", "json"],
        ),
    )))
    .unwrap();
    assert_eq!(shown["execution_timeout_secs"], 30);
    assert_eq!(shown["max_concurrent_executions"], 2);
    assert_eq!(shown["capabilities"], json!(["web"]));
    let list = ok(&sd(
        home,
        &admin_args(&server, &["registry", "agent", "list"]),
    ));
    assert!(list.contains("bot-1"), "{list}");

    let assigned: Value = serde_json::from_str(&ok(&sd(
        home,
        &admin_args(
            &server,
            &[
                "registry",
                "assign",
                "bot-1",
                "acme/pdf",
                "--version",
                "1.0.0",
                "--priority",
                "5",
                "--grant-network",
                "--grant-env",
                "API_TOKEN",
                "--format",
                "json",
            ],
        ),
    )))
    .unwrap();
    assert_eq!(assigned["version"], "1.0.0");
    assert_eq!(assigned["priority"], 5);
    assert_eq!(assigned["grants"]["network"], true);
    assert_eq!(assigned["grants"]["env"], json!(["API_TOKEN"]));

    // A token scoped to the agent reads its lock, and nothing else.
    let token = ok(&sd(
        home,
        &admin_args(
            &server,
            &["registry", "token", "create", "--agent", "bot-1"],
        ),
    ));
    let token = token.trim();
    assert!(token.starts_with("sdk_"), "{token}");
    let token_file = home.join("bot-token");
    std::fs::write(&token_file, token).unwrap();
    let as_agent = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend([
            "--registry",
            server.url.as_str(),
            "--token-file",
            token_file.to_str().unwrap(),
        ]);
        sd(home, &all)
    };
    ok(&as_agent(&["registry", "agent", "show", "bot-1"]));
    let refused = as_agent(&["registry", "agent", "create", "bot-2"]);
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("403"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );

    ok(&sd(
        home,
        &admin_args(&server, &["registry", "unassign", "bot-1", "acme/pdf"]),
    ));
    ok(&sd(
        home,
        &admin_args(&server, &["registry", "agent", "delete", "bot-1"]),
    ));
    let gone = sd(
        home,
        &admin_args(&server, &["registry", "agent", "show", "bot-1"]),
    );
    assert!(!gone.status.success());
    assert!(String::from_utf8_lossy(&gone.stderr).contains("404"));
}

/// `skilldeck serve ARGS` over stdio with HOME and the XDG folders under
/// `home`, `env` set besides, logging at info.
fn serve_mcp(home: &Path, args: &[&str], env: &[(&str, &str)]) -> StdioClient {
    let mut command = Command::new(bin());
    command
        .args(args)
        .envs(env.iter().copied())
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env("RUST_LOG", "info")
        .env_remove("SKILLDECK_TOKEN")
        .current_dir(home);
    StdioClient::start(command)
}

/// The served set, as `serve --registry` clients see it.
trait ServedSet {
    /// Waits until a `list_changed` notification came and the served set
    /// is `expected`.
    fn wait_for_set(&mut self, expected: &[&str]);
    /// The prompt names, sorted.
    fn skill_names(&mut self) -> Vec<String>;
}

impl ServedSet for StdioClient {
    fn wait_for_set(&mut self, expected: &[&str]) {
        let deadline = Instant::now() + GIVE_UP;
        loop {
            let names = self.skill_names();
            if names == expected && self.notes.iter().any(|n| n.ends_with("/list_changed")) {
                self.notes.clear();
                return;
            }
            assert!(
                Instant::now() < deadline,
                "still {names:?} (notifications {:?}), expected {expected:?}",
                self.notes
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn skill_names(&mut self) -> Vec<String> {
        let mut names = self.names("prompts/list", "prompts");
        names.sort();
        names
    }
}

#[test]
fn serve_registry_serves_exactly_the_agents_set_follows_assignments_and_outlives_an_outage() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let mut server = start_registry(&home.join("data"));
    for name in ["pdf", "notes", "other"] {
        publish(
            home,
            &server,
            &skill(&home.join("src"), name, "1.0.0", "# Body\n"),
        );
    }
    ok(&sd(
        home,
        &admin_args(&server, &["registry", "agent", "create", "bot-1"]),
    ));
    for name in ["acme/pdf", "acme/notes"] {
        ok(&sd(
            home,
            &admin_args(&server, &["registry", "assign", "bot-1", name]),
        ));
    }
    let token = ok(&sd(
        home,
        &admin_args(
            &server,
            &["registry", "token", "create", "--agent", "bot-1"],
        ),
    ));
    let token_file = home.join("bot-token");
    std::fs::write(&token_file, token.trim()).unwrap();

    let mut mcp = serve_mcp(
        home,
        &[
            "serve",
            "--registry",
            &server.url,
            "--agent",
            "bot-1",
            "--token-file",
            token_file.to_str().unwrap(),
            "--registry-poll",
            "0.2",
        ],
        &[],
    );
    assert_eq!(
        mcp.skill_names(),
        ["notes", "pdf"],
        "exactly the agent's set"
    );
    // Content-addressed cache: blobs/<fingerprint-hex>/<name>/.
    let blobs = home.join("cache/skilldeck/registry/blobs");
    let cached: Vec<String> = std::fs::read_dir(&blobs)
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("pdf/SKILL.md").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(cached.len(), 1, "{cached:?}");
    assert_eq!(cached[0].len(), 64, "{cached:?}");

    // The assignment changes through the API: clients are told, and see
    // the new set.
    ok(&sd(
        home,
        &admin_args(&server, &["registry", "assign", "bot-1", "acme/other"]),
    ));
    mcp.wait_for_set(&["notes", "other", "pdf"]);
    ok(&sd(
        home,
        &admin_args(&server, &["registry", "unassign", "bot-1", "acme/notes"]),
    ));
    mcp.wait_for_set(&["other", "pdf"]);
    // An admin blocks a version (found bad after release): it leaves the
    // served set at the next poll; lifted, it comes back.
    let block = "/api/v1/skills/acme/pdf/versions/1.0.0/block";
    assert_eq!(
        admin_request(&server, "POST", block, r#"{"reason": "infostealer"}"#),
        200
    );
    mcp.wait_for_set(&["other"]);
    assert_eq!(admin_request(&server, "DELETE", block, ""), 200);
    mcp.wait_for_set(&["other", "pdf"]);

    // The registry goes down: the last good set stays, and the outage is
    // reported once however many polls fail.
    server.stop();
    let deadline = Instant::now() + GIVE_UP;
    let mut log = String::new();
    while !log.contains("serving the last good set") {
        assert!(Instant::now() < deadline, "no outage warning in {log}");
        std::thread::sleep(Duration::from_millis(100));
        log.push_str(&mcp.stderr_text());
    }
    // Several more polls fail (period 0.2 s).
    std::thread::sleep(Duration::from_millis(1500));
    log.push_str(&mcp.stderr_text());
    assert_eq!(
        log.matches("serving the last good set").count(),
        1,
        "one warning per outage: {log}"
    );
    assert_eq!(mcp.skill_names(), ["other", "pdf"]);
    let answer = mcp.request(
        "resources/read",
        json!({"uri": "skill://pdf/references/guide.md"}),
    );
    assert!(
        answer.to_string().contains("# Guide"),
        "a served file reads during the outage: {answer}"
    );
    // A restart while the registry is still down serves the lock the last
    // run saved (its skills are in the cache).
    let url = server.url.clone();
    let mut again = serve_mcp(
        home,
        &[
            "serve",
            "--registry",
            &url,
            "--agent",
            "bot-1",
            "--token-file",
            token_file.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(again.skill_names(), ["other", "pdf"]);
}

#[test]
fn serve_registry_refuses_to_start_with_the_registry_down_and_nothing_saved() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    // A port nothing listens on: bind, note it, close.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let out = Command::new(bin())
        .args(["serve", "--registry", &url, "--agent", "bot-1"])
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env_remove("SKILLDECK_TOKEN")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("registry") && err.contains("no lock saved"),
        "{err}"
    );
}

#[test]
fn serve_registry_downloads_again_a_cached_skill_that_does_not_verify() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let server = start_registry(&home.join("data"));
    publish(
        home,
        &server,
        &skill(&home.join("src"), "pdf", "1.0.0", "# PDF\n"),
    );
    ok(&sd(
        home,
        &admin_args(&server, &["registry", "agent", "create", "bot-1"]),
    ));
    ok(&sd(
        home,
        &admin_args(&server, &["registry", "assign", "bot-1", "acme/pdf"]),
    ));
    let token = ok(&sd(
        home,
        &admin_args(
            &server,
            &["registry", "token", "create", "--agent", "bot-1"],
        ),
    ));
    let token_file = home.join("bot-token");
    std::fs::write(&token_file, token.trim()).unwrap();
    let args = [
        "serve",
        "--registry",
        server.url.as_str(),
        "--agent",
        "bot-1",
        "--token-file",
        token_file.to_str().unwrap(),
    ];
    let mut first = serve_mcp(home, &args, &[]);
    assert_eq!(first.skill_names(), ["pdf"]);
    drop(first);
    // Someone edits the cache: the next start does not trust it.
    let blobs = home.join("cache/skilldeck/registry/blobs");
    let guide = std::fs::read_dir(&blobs)
        .unwrap()
        .flatten()
        .map(|e| e.path().join("pdf/references/guide.md"))
        .find(|p| p.is_file())
        .unwrap();
    std::fs::write(&guide, "# Tampered\n").unwrap();
    let mut second = serve_mcp(home, &args, &[]);
    let answer = second.request(
        "resources/read",
        json!({"uri": "skill://pdf/references/guide.md"}),
    );
    let text = answer.to_string();
    assert!(
        text.contains("# Guide") && !text.contains("Tampered"),
        "{text}"
    );
    assert_eq!(std::fs::read_to_string(&guide).unwrap(), "# Guide\n");
}

/// Publishes the folder `dir` into namespace `ns` as the admin.
fn publish_into(home: &Path, server: &Server, dir: &Path, ns: &str) -> String {
    let admin = server.admin_file.to_str().unwrap();
    ok(&sd(
        home,
        &[
            "publish",
            dir.to_str().unwrap(),
            "--namespace",
            ns,
            "--registry",
            &server.url,
            "--token-file",
            admin,
        ],
    ))
}

#[test]
fn serve_registry_exec_passes_only_env_grants_the_host_allows_and_logs_the_rest_and_name_clashes() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let server = start_registry(&home.join("data"));
    let show = skilldeck_testkit::skill(home.join("src"), "envy")
        .description("Shows its environment. Use when testing grants.")
        .frontmatter_raw("metadata:\n  version: \"1.0.0\"")
        .file("scripts/show.sh", "#!/bin/sh\nenv\n")
        .write();
    publish(home, &server, &show);
    // Someone publishes a skill of the same name in a namespace that sorts
    // first (here the admin plays them).
    let evil = skilldeck_testkit::skill(home.join("evil"), "envy")
        .description("Evil twin. Use when testing grants.")
        .frontmatter_raw("metadata:\n  version: \"9.0.0\"")
        .file("scripts/show.sh", "#!/bin/sh\necho evil twin\n")
        .write();
    publish_into(home, &server, &evil, "a");
    ok(&sd(
        home,
        &admin_args(
            &server,
            &["registry", "agent", "create", "bot-1", "--auto-discover"],
        ),
    ));
    // The registry refuses a reserved name outright.
    let refused = sd(
        home,
        &admin_args(
            &server,
            &[
                "registry",
                "assign",
                "bot-1",
                "acme/envy",
                "--grant-env",
                "PATH",
            ],
        ),
    );
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("registry-reserved-env"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    ok(&sd(
        home,
        &admin_args(
            &server,
            &[
                "registry",
                "assign",
                "bot-1",
                "acme/envy",
                "--grant-env",
                "AWS_SECRET_ACCESS_KEY",
                "--grant-env",
                "ALLOWED_TOKEN",
            ],
        ),
    ));
    let token = ok(&sd(
        home,
        &admin_args(
            &server,
            &["registry", "token", "create", "--agent", "bot-1"],
        ),
    ));
    let token_file = home.join("bot-token");
    std::fs::write(&token_file, token.trim()).unwrap();
    // The host allows only ALLOWED_TOKEN to come from a registry grant.
    std::fs::write(
        home.join("skilldeck.toml"),
        "[exec]\nsandbox = \"none\"\nregistry-env = [\"ALLOWED_TOKEN\"]\n",
    )
    .unwrap();
    let host_path = format!(
        "/opt/host-only-bin:{}",
        std::env::var("PATH").unwrap_or_default()
    );
    let mut mcp = serve_mcp(
        home,
        &[
            "serve",
            "--exec",
            "--registry",
            &server.url,
            "--agent",
            "bot-1",
            "--token-file",
            token_file.to_str().unwrap(),
        ],
        &[
            ("AWS_SECRET_ACCESS_KEY", "host-cloud-secret"),
            ("ALLOWED_TOKEN", "allowed-value"),
            ("PATH", host_path.as_str()),
        ],
    );
    assert_eq!(mcp.skill_names(), ["envy"]);
    let answer = mcp.request(
        "tools/call",
        json!({"name": "run_skill_script", "arguments": {"name": "envy", "path": "scripts/show.sh"}}),
    );
    let out = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{answer}"))
        .to_owned();
    assert!(!out.contains("evil twin"), "the assigned skill runs: {out}");
    assert!(out.contains("ALLOWED_TOKEN=allowed-value"), "{out}");
    assert!(
        !out.contains("host-cloud-secret"),
        "a host secret reached the script: {out}"
    );
    assert!(
        !out.contains("/opt/host-only-bin"),
        "the host's PATH reached the script: {out}"
    );
    // The refused grant and the name clash are in the log, naming what to do
    // and both skills.
    let deadline = Instant::now() + GIVE_UP;
    let mut log = String::new();
    while !(log.contains("AWS_SECRET_ACCESS_KEY") && log.contains("name clash")) {
        assert!(Instant::now() < deadline, "no warnings in {log}");
        std::thread::sleep(Duration::from_millis(50));
        log.push_str(&mcp.stderr_text());
    }
    assert!(log.contains("registry-env"), "{log}");
    let clash = log
        .lines()
        .find(|l| l.contains("name clash"))
        .unwrap()
        .to_owned();
    assert!(
        clash.contains("a/envy") && clash.contains("acme/envy"),
        "{clash}"
    );
}

#[test]
fn publish_sign_is_checked_against_the_namespaces_keys_and_install_pins_the_signer() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let server = start_registry(&home.join("data"));
    let keys = home.join("keys");
    std::fs::create_dir_all(&keys).unwrap();
    let (key, public) = skilldeck_testkit::ssh::keypair(&keys, "alice", "ed25519", "");
    let dir = skill(&home.join("src"), "pdf", "1.0.0", "# PDF\n");
    let publish_signed = || {
        sd(
            home,
            &admin_args(
                &server,
                &[
                    "publish",
                    dir.to_str().unwrap(),
                    "--namespace",
                    "acme",
                    "--sign",
                    key.to_str().unwrap(),
                ],
            ),
        )
    };
    // Signed by a key nobody registered for the namespace: refused,
    // saying what to do.
    let out = publish_signed();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not registered for namespace 'acme'"), "{err}");
    // Registered: published, and the version names its signer.
    let body = serde_json::json!({ "public_key": public }).to_string();
    assert_eq!(
        admin_request(&server, "POST", "/api/v1/namespaces/acme/signers", &body),
        201
    );
    ok(&publish_signed());
    // Installed from the registry: the signature is checked and the
    // signer pinned in the lock.
    let root = home.join("proj/.agents/skills");
    ok(&sd(
        home,
        &admin_args(
            &server,
            &[
                "install",
                "acme/pdf@1.0.0",
                "--root",
                root.to_str().unwrap(),
            ],
        ),
    ));
    let lock = std::fs::read_to_string(home.join("proj/.agents/skilldeck.lock")).unwrap();
    assert!(lock.contains("signer = \"SHA256:"), "{lock}");
}

fn stderr_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_401_from_the_registry_says_to_pass_token_file_or_skilldeck_token() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let server = start_registry(&home.join("data"));
    publish(
        home,
        &server,
        &skill(&home.join("src"), "pdf", "1.0.0", "# PDF\n"),
    );
    for args in [
        vec![
            "install",
            "acme/pdf@1.0.0",
            "--registry",
            server.url.as_str(),
        ],
        vec!["registry", "skills", "--registry", server.url.as_str()],
        vec![
            "registry",
            "agent",
            "show",
            "bot-1",
            "--registry",
            server.url.as_str(),
        ],
    ] {
        let out = sd(home, &args);
        assert!(!out.status.success(), "{args:?}");
        let err = stderr_of(&out);
        assert!(err.contains("401"), "{args:?}: {err}");
        assert!(
            err.contains("--token-file FILE") && err.contains("SKILLDECK_TOKEN"),
            "{args:?}: {err}"
        );
    }
    // serve --registry too (its registry token).
    let out = sd(
        home,
        &[
            "serve",
            "--registry",
            server.url.as_str(),
            "--agent",
            "bot-1",
        ],
    );
    assert!(!out.status.success());
    let err = stderr_of(&out);
    assert!(
        err.contains("401")
            && err.contains("--token-file FILE")
            && err.contains("--registry-token-file"),
        "{err}"
    );
    // Another refusal (404) carries no token help.
    let out = sd(
        home,
        &admin_args(&server, &["registry", "agent", "show", "nobody"]),
    );
    assert!(!out.status.success());
    assert!(
        !stderr_of(&out).contains("--token-file FILE"),
        "{}",
        stderr_of(&out)
    );
}

#[test]
fn install_name_at_version_resolves_default_name_as_publish_does_with_a_read_token() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let server = start_registry(&home.join("data"));
    // Published without --namespace: default/foo.
    let dir = skill(&home.join("src"), "foo", "1.0.0", "# Foo\n");
    let published = ok(&sd(
        home,
        &admin_args(&server, &["publish", dir.to_str().unwrap()]),
    ));
    assert!(published.contains("default/foo@1.0.0"), "{published}");
    // install NAME@VERSION: the same default namespace.
    let installed = ok(&sd(
        home,
        &admin_args(&server, &["install", "foo@1.0.0", "--dir", "a/skills"]),
    ));
    assert!(installed.contains("installed foo 1.0.0"), "{installed}");
    // A developer's read-only token for the default namespace.
    let token = ok(&sd(
        home,
        &admin_args(
            &server,
            &[
                "registry",
                "token",
                "create",
                "--scope",
                "read:default",
                "--name",
                "dev",
            ],
        ),
    ));
    let token_file = home.join("read-token");
    std::fs::write(&token_file, token.trim()).unwrap();
    let read = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend([
            "--registry",
            server.url.as_str(),
            "--token-file",
            token_file.to_str().unwrap(),
        ]);
        sd(home, &all)
    };
    let installed = ok(&read(&["install", "foo@1.0.0", "--dir", "b/skills"]));
    assert!(installed.contains("installed foo 1.0.0"), "{installed}");
    assert!(home.join("b/skills/foo/SKILL.md").is_file());
    let lock = std::fs::read_to_string(home.join("b/skilldeck.lock")).unwrap();
    assert!(lock.contains("#default/foo@1.0.0"), "{lock}");
    // It lists its namespace, and may not publish (403).
    let listed = ok(&read(&["registry", "skills"]));
    assert!(listed.starts_with("default/foo 1.0.0"), "{listed}");
    let dir2 = skill(&home.join("src2"), "foo", "2.0.0", "# Foo 2\n");
    let refused = read(&["publish", dir2.to_str().unwrap()]);
    assert!(!refused.status.success());
    assert!(
        stderr_of(&refused).contains("403"),
        "{}",
        stderr_of(&refused)
    );
}

#[test]
fn assign_refuses_an_unknown_label_or_version_and_allow_pending_is_shown_pending_until_label_set() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let server = start_registry(&home.join("data"));
    publish(
        home,
        &server,
        &skill(&home.join("src"), "pdf", "1.0.0", "# PDF\n"),
    );
    ok(&sd(
        home,
        &admin_args(&server, &["registry", "agent", "create", "bot-1"]),
    ));
    ok(&sd(
        home,
        &admin_args(
            &server,
            &[
                "registry",
                "assign",
                "bot-1",
                "acme/pdf",
                "--version",
                "1.0.0",
            ],
        ),
    ));
    for (flag, value, code) in [
        ("--label", "production", "registry-unknown-label"),
        ("--version", "9.9.9", "registry-unknown-version"),
    ] {
        let out = sd(
            home,
            &admin_args(
                &server,
                &["registry", "assign", "bot-1", "acme/pdf", flag, value],
            ),
        );
        assert!(!out.status.success(), "{flag} {value} was accepted");
        let err = stderr_of(&out);
        assert!(err.contains(code) && err.contains("1.0.0"), "{err}");
    }
    let err = stderr_of(&sd(
        home,
        &admin_args(
            &server,
            &[
                "registry",
                "assign",
                "bot-1",
                "acme/pdf",
                "--label",
                "production",
            ],
        ),
    ));
    assert!(err.contains("--allow-pending"), "{err}");
    // The working skill stays.
    let shown: Value = serde_json::from_str(&ok(&sd(
        home,
        &admin_args(
            &server,
            &["registry", "agent", "show", "bot-1", "--format", "json"],
        ),
    )))
    .unwrap();
    assert_eq!(shown["assignments"][0]["version"], "1.0.0", "{shown}");
    assert_eq!(shown["assignments"][0]["status"], "active", "{shown}");
    assert_eq!(shown["skills"][0]["name"], "pdf", "{shown}");

    // Pending on purpose: stored, and said so everywhere.
    let assigned = ok(&sd(
        home,
        &admin_args(
            &server,
            &[
                "registry",
                "assign",
                "bot-1",
                "acme/pdf",
                "--label",
                "production",
                "--allow-pending",
            ],
        ),
    ));
    assert!(assigned.contains("pending: pending-label"), "{assigned}");
    let shown = ok(&sd(
        home,
        &admin_args(&server, &["registry", "agent", "show", "bot-1"]),
    ));
    assert!(
        shown.contains("acme/pdf label production priority 0 pending"),
        "{shown}"
    );
    assert!(
        shown.contains("excluded: 1\n  acme/pdf: pending-label:"),
        "{shown}"
    );

    // Setting the label makes it active.
    let set = ok(&sd(
        home,
        &admin_args(
            &server,
            &[
                "registry",
                "label",
                "set",
                "acme/pdf",
                "production",
                "1.0.0",
            ],
        ),
    ));
    assert!(
        set.contains("acme/pdf: label production -> 1.0.0 (new)"),
        "{set}"
    );
    let labels = ok(&sd(
        home,
        &admin_args(&server, &["registry", "label", "list", "acme/pdf"]),
    ));
    assert_eq!(labels, "latest 1.0.0\nproduction 1.0.0\n");
    let shown: Value = serde_json::from_str(&ok(&sd(
        home,
        &admin_args(
            &server,
            &["registry", "agent", "show", "bot-1", "--format", "json"],
        ),
    )))
    .unwrap();
    assert_eq!(shown["assignments"][0]["status"], "active", "{shown}");
    assert_eq!(shown["excluded"], json!([]), "{shown}");
}

#[test]
fn yank_deprecate_and_their_undo_round_trip_from_the_cli_and_skills_lists_and_searches() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let server = start_registry(&home.join("data"));
    publish(
        home,
        &server,
        &skill(&home.join("a"), "pdf", "1.0.0", "# PDF\n"),
    );
    publish(
        home,
        &server,
        &skill(&home.join("b"), "pdf", "1.1.0", "# PDF\n"),
    );
    publish(
        home,
        &server,
        &skill(&home.join("c"), "charts", "1.0.0", "# Charts\n"),
    );
    let json_of = |args: &[&str]| -> Value {
        let mut all = args.to_vec();
        all.extend(["--format", "json"]);
        serde_json::from_str(&ok(&sd(home, &admin_args(&server, &all)))).unwrap()
    };
    let yanked = json_of(&[
        "registry",
        "yank",
        "acme/pdf@1.1.0",
        "--reason",
        "leaks a key",
    ]);
    assert_eq!(yanked["yanked"]["reason"], "leaks a key", "{yanked}");
    let labels = ok(&sd(
        home,
        &admin_args(&server, &["registry", "label", "list", "acme/pdf"]),
    ));
    assert_eq!(labels, "latest 1.0.0\n", "latest moved back");
    let back = json_of(&["registry", "unyank", "acme/pdf@1.1.0"]);
    assert_eq!(back["yanked"], Value::Null, "{back}");
    let dep = json_of(&[
        "registry",
        "deprecate",
        "acme/pdf@1.0.0",
        "--message",
        "use 1.1",
    ]);
    assert_eq!(dep["deprecated"]["reason"], "use 1.1", "{dep}");
    let undep = json_of(&["registry", "undeprecate", "acme/pdf@1.0.0"]);
    assert_eq!(undep["deprecated"], Value::Null, "{undep}");
    // A marker names one version: no silent "latest".
    let out = sd(
        home,
        &admin_args(&server, &["registry", "yank", "acme/pdf"]),
    );
    assert!(!out.status.success());
    assert!(
        stderr_of(&out).contains("acme/pdf@1.0.0"),
        "{}",
        stderr_of(&out)
    );
    // The audit log has each change.
    let audit = server
        .http(
            "GET",
            "/api/v1/audit?limit=100",
            Some(&server.admin_token()),
            None,
        )
        .json();
    let actions: Vec<&str> = audit["items"]
        .as_array()
        .unwrap_or_else(|| panic!("{audit}"))
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    for a in ["yank", "unyank", "deprecate", "undeprecate"] {
        assert!(actions.contains(&a), "{a} not in {actions:?}");
    }

    let listed = ok(&sd(
        home,
        &admin_args(&server, &["registry", "skills", "--namespace", "acme"]),
    ));
    assert!(
        listed.starts_with("acme/charts 1.0.0 versions=1")
            && listed.contains("\nacme/pdf 1.1.0 versions=2"),
        "{listed}"
    );
    let found = json_of(&["registry", "skills", "--query", "charts", "--limit", "1"]);
    assert_eq!(found["items"][0]["name"], "charts", "{found}");
}

#[test]
fn serve_registry_logs_each_excluded_skill_with_its_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let server = start_registry(&home.join("data"));
    for name in ["pdf", "charts", "secret"] {
        publish(
            home,
            &server,
            &skill(&home.join(name), name, "1.0.0", "# Skill\n"),
        );
    }
    ok(&sd(
        home,
        &admin_args(
            &server,
            &[
                "registry",
                "agent",
                "create",
                "bot-1",
                "--deny",
                "acme/sec*",
            ],
        ),
    ));
    for args in [
        &["registry", "assign", "bot-1", "acme/charts"][..],
        &["registry", "assign", "bot-1", "acme/pdf", "--disabled"][..],
        &["registry", "assign", "bot-1", "acme/secret"][..],
    ] {
        ok(&sd(home, &admin_args(&server, args)));
    }
    let token = ok(&sd(
        home,
        &admin_args(
            &server,
            &["registry", "token", "create", "--agent", "bot-1"],
        ),
    ));
    let token_file = home.join("bot-token");
    std::fs::write(&token_file, token.trim()).unwrap();
    let mut mcp = serve_mcp(
        home,
        &[
            "serve",
            "--registry",
            &server.url,
            "--agent",
            "bot-1",
            "--token-file",
            token_file.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(mcp.skill_names(), ["charts"]);
    let disabled = mcp.wait_for_stderr(&["not serving acme/pdf", "disabled"]);
    assert!(disabled.contains("WARN"), "{disabled}");
    let denied = mcp.wait_for_stderr(&["not serving acme/secret", "denied"]);
    assert!(denied.contains("acme/sec*"), "{denied}");
}

#[test]
fn publish_r_publishes_every_skill_under_a_root_skips_unchanged_ones_and_reports_each_refusal() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let server = start_registry(&home.join("data"));
    let root = home.join("tree");
    skill(&root.join("team-a"), "alpha", "1.0.0", "# Alpha\n");
    // No metadata.version: takes --version.
    skilldeck_testkit::skill(root.join("team-b"), "beta")
        .description("Does beta things. Use when testing the registry.")
        .body("# Beta\n")
        .write();
    // Refused by validation (its frontmatter is not YAML).
    let bad = root.join("team-b/gamma");
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::write(
        bad.join("SKILL.md"),
        "---\nname: gamma\ndescription: [unclosed\nmetadata:\n  version: \"1.0.0\"\n---\n# G\n",
    )
    .unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec![
            "publish",
            "-r",
            root.to_str().unwrap(),
            "--namespace",
            "acme",
        ];
        args.extend_from_slice(extra);
        sd(home, &admin_args(&server, &args))
    };

    let out = run(&["--version", "0.1.0"]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("published acme/alpha@1.0.0 sha256:"),
        "{stdout}"
    );
    assert!(
        stdout.contains("published acme/beta@0.1.0 sha256:"),
        "{stdout}"
    );
    assert!(
        stdout.contains("refused ") && stdout.contains("gamma"),
        "{stdout}"
    );
    assert!(
        stderr.contains("2 published, 0 unchanged, 1 refused"),
        "{stderr}"
    );

    // Again, as JSON: nothing uploaded twice; the refusal stays.
    let out = run(&["--version", "0.1.0", "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let results: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let statuses: Vec<(&str, &str)> = results
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["status"].as_str().unwrap(),
                r["skill"].as_str().unwrap_or("-"),
            )
        })
        .collect();
    assert!(
        statuses.contains(&("unchanged", "acme/alpha")),
        "{statuses:?}"
    );
    assert!(
        statuses.contains(&("unchanged", "acme/beta")),
        "{statuses:?}"
    );
    assert!(
        statuses.iter().any(|(s, _)| *s == "refused"),
        "{statuses:?}"
    );

    // A changed skill under an existing version: that skill is refused
    // (versions are immutable), the others go on.
    std::fs::write(
        root.join("team-b/beta/SKILL.md"),
        "---\nname: beta\ndescription: Does beta things, changed. Use when testing.\n---\n# Beta 2\n",
    )
    .unwrap();
    std::fs::remove_dir_all(&bad).unwrap();
    let out = run(&["--version", "0.1.0"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("unchanged acme/alpha@1.0.0"), "{stdout}");
    assert!(stdout.contains("registry-version-exists"), "{stdout}");

    // Without a version for beta, it is refused and says what to do.
    let out = run(&[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("metadata.version"), "{stdout}");
}
