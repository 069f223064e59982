//! `skilldeck serve --upstream`: the gateway in front of a second
//! `skilldeck serve` (stdio and HTTP) and in front of a server that lies
//! (tests/mcp/lying_skills_server.py). Upstream skills are namespaced
//! (`UPSTREAM/skill`), merged with the local ones into one catalog,
//! listed without fetching anything, fetched and verified when activated,
//! and refused, naming the upstream and what was wrong, when they do not
//! verify, while the others stay served.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::json;
use skilldeck_testkit::mcp::{StdioClient, text};
use skilldeck_testkit::process::{lines_of, wait_for_line};

const BIN: &str = env!("CARGO_BIN_EXE_skilldeck");

/// An upstream's skills folder: `pdf` with a reference file.
fn upstream_skills(base: &Path) -> PathBuf {
    let root = skilldeck_testkit::dir(base, "upstream");
    skilldeck_testkit::skill(&root, "pdf")
        .description("Fill PDF forms.")
        .body("# PDF\n\nThe upstream's pdf instructions.\n")
        .file("references/FORMS.md", "How to fill forms.\n")
        .write();
    root
}

/// The gateway's own skills: `local-one`.
fn local_skills(base: &Path) -> PathBuf {
    let root = skilldeck_testkit::dir(base, "local");
    skilldeck_testkit::skill(&root, "local-one")
        .description("A local skill.")
        .body("# Local\n")
        .write();
    root
}

/// A command with an environment of its own (no user config or skills).
fn command(base: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.args(args)
        .env("HOME", base.join("home"))
        .env("XDG_CONFIG_HOME", base.join("home/config"))
        .env("XDG_CACHE_HOME", base.join("home/cache"))
        .env_remove("RUST_LOG")
        .current_dir(base);
    c
}

fn gateway(base: &Path, local: &Path, upstreams: &[String], cache: &Path) -> StdioClient {
    let mut args: Vec<String> = vec![
        "serve".into(),
        "--no-watch".into(),
        "--root".into(),
        local.display().to_string(),
    ];
    for u in upstreams {
        args.push("--upstream".into());
        args.push(u.clone());
    }
    args.push("--upstream-cache".into());
    args.push(cache.display().to_string());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    StdioClient::start(command(base, &args))
}

fn model_names(client: &mut StdioClient) -> Vec<String> {
    let tools = client.request("tools/list", json!({}));
    let activate = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "activate_skill")
        .unwrap()
        .clone();
    activate["inputSchema"]["properties"]["name"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect()
}

fn skill_uris(client: &mut StdioClient) -> Vec<String> {
    let listed = client.request("skills/list", json!({}));
    listed["result"]["skills"]
        .as_array()
        .unwrap_or_else(|| panic!("skills/list: {listed}"))
        .iter()
        .map(|s| s["uri"].as_str().unwrap().to_owned())
        .collect()
}

fn cached_folders(cache: &Path) -> Vec<String> {
    match std::fs::read_dir(cache) {
        Ok(entries) => entries
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with('.'))
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// What every gateway test checks of an honest upstream named `up`: one
/// merged, namespaced catalog; nothing fetched by listing; activation
/// yields the upstream's body, verified and cached by fingerprint; files
/// read through the tools and as resources.
fn check_gateway_serves_the_upstream(client: &mut StdioClient, cache: &Path, upstream: &Path) {
    let names = model_names(client);
    assert!(names.contains(&"local-one".to_owned()), "{names:?}");
    assert!(names.contains(&"up/pdf".to_owned()), "{names:?}");
    let uris = skill_uris(client);
    assert!(
        uris.contains(&"skill://local-one/SKILL.md".to_owned()),
        "{uris:?}"
    );
    assert!(
        uris.contains(&"skill://up/pdf/SKILL.md".to_owned()),
        "{uris:?}"
    );
    // The re-served entry: the upstream's frontmatter and digests, and the
    // fingerprint of the upstream's folder.
    let entry = client.request("skills/get", json!({"uri": "skill://up/pdf/SKILL.md"}));
    assert_eq!(
        entry["result"]["skill"]["frontmatter"]["name"], "pdf",
        "{entry}"
    );
    let fingerprint = entry["result"]["skill"]["_meta"]["dev.skilldeck/fingerprint"]
        .as_str()
        .unwrap_or_else(|| panic!("no fingerprint: {entry}"))
        .to_owned();
    let manifest = skilldeck::digest::SkillManifest::new(
        ["SKILL.md", "references/FORMS.md"]
            .iter()
            .map(|p| {
                skilldeck::digest::FileDigest::of_bytes(
                    *p,
                    &std::fs::read(upstream.join("pdf").join(p)).unwrap(),
                    false,
                )
            })
            .collect(),
    );
    assert_eq!(fingerprint, manifest.fingerprint().to_string());
    assert!(
        cached_folders(cache).is_empty(),
        "listing fetched files: {:?}",
        cached_folders(cache)
    );

    let activated = client.call("activate_skill", json!({"name": "up/pdf"}));
    assert_ne!(activated["isError"], json!(true), "{activated}");
    assert!(
        text(&activated).contains("The upstream's pdf instructions."),
        "{activated}"
    );
    assert_eq!(
        cached_folders(cache),
        vec![fingerprint.strip_prefix("sha256:").unwrap().to_owned()]
    );
    let read = client.call(
        "read_skill_resource",
        json!({"name": "up/pdf", "path": "references/FORMS.md"}),
    );
    assert!(text(&read).contains("How to fill forms."), "{read}");
    let resource = client.request(
        "resources/read",
        json!({"uri": "skill://up/pdf/references/FORMS.md"}),
    );
    assert_eq!(
        resource["result"]["contents"][0]["text"], "How to fill forms.\n",
        "{resource}"
    );
    let local = client.call("activate_skill", json!({"name": "local-one"}));
    assert!(text(&local).contains("# Local"), "{local}");
}

#[test]
fn gateway_in_front_of_a_stdio_skilldeck_serves_its_skills_namespaced_and_verified() {
    let tmp = tempfile::tempdir().unwrap();
    let upstream = upstream_skills(tmp.path());
    let local = local_skills(tmp.path());
    let cache = tmp.path().join("cache");
    let spec = format!(
        "up=stdio:{BIN} serve --no-watch --root {}",
        upstream.display()
    );
    let mut client = gateway(tmp.path(), &local, &[spec], &cache);
    check_gateway_serves_the_upstream(&mut client, &cache, &upstream);
}

#[test]
fn gateway_in_front_of_an_http_skilldeck_serves_its_skills_namespaced_and_verified() {
    let tmp = tempfile::tempdir().unwrap();
    let upstream = upstream_skills(tmp.path());
    let local = local_skills(tmp.path());
    let cache = tmp.path().join("cache");
    let root = upstream.display().to_string();
    let mut server = command(
        tmp.path(),
        &[
            "serve",
            "--no-watch",
            "--http",
            "127.0.0.1:0",
            "--root",
            &root,
        ],
    )
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let lines = lines_of(server.stderr.take().unwrap());
    let line = wait_for_line(
        &lines,
        "skilldeck serve: listening on ",
        "the HTTP upstream",
    );
    let url = line
        .trim_start_matches("skilldeck serve: listening on ")
        .trim()
        .to_owned();
    let mut client = gateway(tmp.path(), &local, &[format!("up={url}")], &cache);
    check_gateway_serves_the_upstream(&mut client, &cache, &upstream);
    drop(client);
    server.kill().unwrap();
    server.wait().unwrap();
}

fn lying_upstream(base: &Path) -> (String, PathBuf) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/mcp/lying_skills_server.py")
        .canonicalize()
        .unwrap();
    let reads = base.join("reads.log");
    (format!("liar=stdio:python3 {}", script.display()), reads)
}

fn reads(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_lying_upstreams_skills_are_refused_naming_it_and_the_others_stay_served() {
    let tmp = tempfile::tempdir().unwrap();
    let local = local_skills(tmp.path());
    let cache = tmp.path().join("cache");
    let (spec, log) = lying_upstream(tmp.path());
    let command_line = [
        "serve".to_owned(),
        "--no-watch".into(),
        "--root".into(),
        local.display().to_string(),
        "--upstream".into(),
        spec,
        "--upstream-cache".into(),
        cache.display().to_string(),
    ];
    let args: Vec<&str> = command_line.iter().map(String::as_str).collect();
    let mut c = command(tmp.path(), &args);
    c.env("READS_LOG", &log);
    let mut client = StdioClient::start(c);

    // A listing that does not validate is kept out of the catalog (and
    // said so); the others are listed, nothing is read.
    let names = model_names(&mut client);
    let mut upstream_names: Vec<&String> =
        names.iter().filter(|n| n.starts_with("liar/")).collect();
    upstream_names.sort();
    assert_eq!(
        upstream_names,
        [
            "liar/bad-frontmatter",
            "liar/honest",
            "liar/wrong-digest",
            "liar/wrong-size"
        ]
    );
    assert!(names.contains(&"local-one".to_owned()));
    client.wait_for_stderr(&[
        "upstream skill refused",
        "'bad-listing' from upstream 'liar'",
        "upstream-listing",
        "skill://elsewhere/SKILL.md",
    ]);
    assert!(
        reads(&log).is_empty(),
        "listing read files: {:?}",
        reads(&log)
    );

    for (name, code, detail) in [
        (
            "wrong-digest",
            "upstream-digest-mismatch",
            "hashes to sha256:",
        ),
        (
            "wrong-size",
            "upstream-size-mismatch",
            "bytes were received",
        ),
        ("bad-frontmatter", "upstream-frontmatter", "`description`"),
    ] {
        let answer = client.call("activate_skill", json!({"name": format!("liar/{name}")}));
        assert_eq!(answer["isError"], json!(true), "{name}: {answer}");
        let message = text(&answer);
        for needle in [&format!("'{name}'"), "upstream 'liar'", code, detail] {
            assert!(message.contains(needle), "{name}: no {needle} in {message}");
        }
        assert!(!message.contains("Evil body"), "{message}");
        // Refused content is never served as a resource either.
        let read = client.request(
            "resources/read",
            json!({"uri": format!("skill://liar/{name}/SKILL.md")}),
        );
        assert!(read.get("error").is_some(), "{name}: {read}");
    }
    // Nothing refused was cached.
    assert!(
        cached_folders(&cache).is_empty(),
        "{:?}",
        cached_folders(&cache)
    );

    // The honest skill and the local one are served.
    let honest = client.call("activate_skill", json!({"name": "liar/honest"}));
    assert!(text(&honest).contains("The honest body."), "{honest}");
    let reference = client.call(
        "read_skill_resource",
        json!({"name": "liar/honest", "path": "references/REF.md"}),
    );
    assert!(
        text(&reference).contains("A reference file."),
        "{reference}"
    );
    let local = client.call("activate_skill", json!({"name": "local-one"}));
    assert!(text(&local).contains("# Local"), "{local}");
    assert_eq!(cached_folders(&cache).len(), 1);
    // SKILL.md is fetched (and checked) before any other file of a skill.
    let log = reads(&log);
    let honest_reads: Vec<&String> = log.iter().filter(|u| u.contains("//honest/")).collect();
    assert_eq!(
        honest_reads,
        [
            "skill://honest/SKILL.md",
            "skill://honest/references/REF.md"
        ]
    );
}

#[test]
fn an_upstream_that_cannot_be_reached_stops_serve_with_what_to_do() {
    let tmp = tempfile::tempdir().unwrap();
    let local = local_skills(tmp.path());
    let output = command(
        tmp.path(),
        &[
            "serve",
            "--no-watch",
            "--root",
            &local.display().to_string(),
            "--upstream",
            "gone=stdio:/nonexistent/skilldeck-upstream",
        ],
    )
    .stdin(Stdio::null())
    .output()
    .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("upstream 'gone'"), "{stderr}");
    assert!(stderr.contains("cannot start"), "{stderr}");
}

#[test]
fn a_malformed_upstream_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let output = command(
        tmp.path(),
        &["serve", "--upstream", "ftp://example.com/mcp"],
    )
    .stdin(Stdio::null())
    .output()
    .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("http(s)://"), "{stderr}");
}

/// The record the gateway keeps of what it serves from `upstream`.
fn record(cache: &Path, upstream: &str) -> serde_json::Value {
    let path = cache.join(".upstreams").join(format!("{upstream}.json"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// skilldeck's fingerprint of the skill folder `dir` (its files' paths
/// and digests), as `sha256:...`.
fn folder_fingerprint(dir: &Path) -> String {
    let mut files = Vec::new();
    for entry in walk(dir) {
        let rel = entry
            .strip_prefix(dir)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        files.push(skilldeck::digest::FileDigest::of_bytes(
            &rel,
            &std::fs::read(&entry).unwrap(),
            false,
        ));
    }
    skilldeck::digest::SkillManifest::new(files)
        .fingerprint()
        .to_string()
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// The gateway in front of the upstream `spec` (serving `upstream`, its
/// watcher on) follows its list changes: a new skill and a changed one
/// are re-served, its clients hear `list_changed`, and its record names
/// what it serves with the upstream folder's fingerprints.
fn check_gateway_follows_the_upstream(base: &Path, upstream: &Path, spec: String) {
    let local = local_skills(base);
    let cache = base.join("cache");
    let mut client = gateway(base, &local, &[spec], &cache);
    let names = model_names(&mut client);
    assert!(names.contains(&"up/pdf".to_owned()), "{names:?}");
    let rec = record(&cache, "up");
    assert_eq!(rec["upstream"], "up");
    assert_eq!(rec["skills"].as_array().unwrap().len(), 1, "{rec}");
    assert_eq!(rec["skills"][0]["name"], "up/pdf");
    assert_eq!(
        rec["skills"][0]["fingerprint"].as_str().unwrap(),
        folder_fingerprint(&upstream.join("pdf"))
    );

    // A new skill at the upstream: the gateway's clients hear of it and
    // get it.
    client.notes.clear();
    skilldeck_testkit::skill(upstream, "docx")
        .description("Edit Word documents.")
        .body("# DOCX\n\nThe upstream's docx instructions.\n")
        .write();
    if !client
        .notes
        .iter()
        .any(|n| n == "notifications/resources/list_changed")
    {
        client.wait_for_notification("notifications/resources/list_changed");
    }
    let names = model_names(&mut client);
    assert!(names.contains(&"up/docx".to_owned()), "{names:?}");
    let docx = client.call("activate_skill", json!({"name": "up/docx"}));
    assert!(
        text(&docx).contains("The upstream's docx instructions."),
        "{docx}"
    );
    let rec = record(&cache, "up");
    let served: Vec<&str> = rec["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(served, ["up/docx", "up/pdf"], "{rec}");

    // pdf changes (its description and its body): re-served with its new
    // fingerprint, so activation fetches and verifies the new files.
    client.notes.clear();
    skilldeck_testkit::skill(upstream, "pdf")
        .description("Fill and sign PDF forms.")
        .body("# PDF\n\nThe upstream's revised pdf instructions.\n")
        .file("references/FORMS.md", "How to fill forms.\n")
        .write();
    if !client
        .notes
        .iter()
        .any(|n| n == "notifications/resources/list_changed")
    {
        client.wait_for_notification("notifications/resources/list_changed");
    }
    let pdf = client.call("activate_skill", json!({"name": "up/pdf"}));
    assert!(
        text(&pdf).contains("The upstream's revised pdf instructions."),
        "{pdf}"
    );
    let rec = record(&cache, "up");
    let pdf_record = rec["skills"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "up/pdf")
        .unwrap()
        .clone();
    assert_eq!(
        pdf_record["fingerprint"].as_str().unwrap(),
        folder_fingerprint(&upstream.join("pdf"))
    );
}

#[test]
fn gateway_follows_a_stdio_upstreams_list_changes_and_records_what_it_serves() {
    let tmp = tempfile::tempdir().unwrap();
    let upstream = upstream_skills(tmp.path());
    let spec = format!("up=stdio:{BIN} serve --root {}", upstream.display());
    check_gateway_follows_the_upstream(tmp.path(), &upstream, spec);
}

#[test]
fn gateway_follows_an_http_upstreams_list_changes_and_records_what_it_serves() {
    let tmp = tempfile::tempdir().unwrap();
    let upstream = upstream_skills(tmp.path());
    let root = upstream.display().to_string();
    let mut server = command(
        tmp.path(),
        &["serve", "--http", "127.0.0.1:0", "--root", &root],
    )
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let lines = lines_of(server.stderr.take().unwrap());
    let line = wait_for_line(
        &lines,
        "skilldeck serve: listening on ",
        "the HTTP upstream",
    );
    let url = line.trim().to_owned();
    check_gateway_follows_the_upstream(tmp.path(), &upstream, format!("up={url}"));
    server.kill().unwrap();
    server.wait().unwrap();
}

#[test]
fn gateway_serves_an_upstreams_plugin_skill_under_its_plugin_name_beside_a_plain_one() {
    let tmp = tempfile::tempdir().unwrap();
    let upstream = upstream_skills(tmp.path());
    let plugin = skilldeck_testkit::plugins::claude_plugin(&upstream, "document-skills", &["pdf"]);
    skilldeck_testkit::file(
        plugin.join("skills/pdf/references/forms.md"),
        "plugin forms\n",
    );
    let local = local_skills(tmp.path());
    let cache = tmp.path().join("cache");
    let spec = format!(
        "up=stdio:{BIN} serve --no-watch --root {}",
        upstream.display()
    );
    let mut client = gateway(tmp.path(), &local, &[spec], &cache);
    let names = model_names(&mut client);
    for want in ["up/pdf", "up/document-skills:pdf"] {
        assert!(names.contains(&want.to_owned()), "{want} not in {names:?}");
    }
    let uris = skill_uris(&mut client);
    let plugin_md = "skill://up/document-skills%3A/pdf/SKILL.md";
    assert!(uris.contains(&plugin_md.to_owned()), "{uris:?}");
    assert!(
        uris.contains(&"skill://up/pdf/SKILL.md".to_owned()),
        "{uris:?}"
    );
    let activated = client.call("activate_skill", json!({"name": "up/document-skills:pdf"}));
    assert!(text(&activated).contains("Steps for pdf"), "{activated}");
    let read = client.request(
        "resources/read",
        json!({"uri": "skill://up/document-skills%3A/pdf/references/forms.md"}),
    );
    assert_eq!(
        read["result"]["contents"][0]["text"], "plugin forms\n",
        "{read}"
    );
    let plain = client.call("activate_skill", json!({"name": "up/pdf"}));
    assert!(
        text(&plain).contains("The upstream's pdf instructions."),
        "{plain}"
    );
    let rec = record(&cache, "up");
    let entry = rec["skills"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "up/document-skills:pdf")
        .unwrap_or_else(|| panic!("{rec}"))
        .clone();
    assert_eq!(
        entry["fingerprint"].as_str().unwrap(),
        folder_fingerprint(&plugin.join("skills/pdf"))
    );
}
