//! The agentskills.io well-known index, both ways, between processes: the
//! registry (`registry serve`, `[registry.well-known] namespaces`) and
//! `serve --http` (`[serve] well-known = true`) serve
//! `/.well-known/agent-skills/index.json`; `install https://HOST#NAME`
//! (another process) lists, installs with the same fingerprint as a folder
//! install, `verify`s and `install --frozen`s it; a server that lies about
//! a digest is refused before anything is unpacked; a namespace not
//! listed stays out of the index.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use skilldeck_testkit::process::{lines_of, wait_for_line};
use skilldeck_testkit::registry::RegistryProcess;

use crate::common::{bin, sd};

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

fn failed(out: &Output) -> String {
    assert!(
        !out.status.success(),
        "expected a failure\nstdout: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn skill(base: &Path, name: &str, version: &str) -> PathBuf {
    skilldeck_testkit::skill(base, name)
        .description(format!("Does {name} things. Use when testing discovery."))
        .frontmatter_raw(format!("metadata:\n  version: \"{version}\""))
        .body(format!("# {name}\n"))
        .file("references/guide.md", "# Guide\n")
        .file("scripts/run.sh", "#!/bin/sh\necho hi\n")
        .write()
}

/// The `sha256:...` a line `installed NAME VERSION sha256:... from ...` names.
fn fingerprint_of(out: &str) -> String {
    out.split_whitespace()
        .find(|w| w.starts_with("sha256:"))
        .unwrap_or_else(|| panic!("no fingerprint in {out}"))
        .to_owned()
}

/// The fingerprint a plain folder install of `dir` prints.
fn folder_fingerprint(home: &Path, dir: &Path) -> String {
    let root = home.join("folder-install/skills");
    fingerprint_of(&ok(&sd(
        home,
        &[
            "install",
            dir.to_str().unwrap(),
            "--dir",
            root.to_str().unwrap(),
        ],
    )))
}

#[test]
fn a_registry_index_lists_public_namespaces_only_and_installs_with_the_folder_fingerprint() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let config = home.join("registry.toml");
    std::fs::write(
        &config,
        "[registry.well-known]\nnamespaces = [\"public\"]\n",
    )
    .unwrap();
    let server = RegistryProcess::start(
        bin(),
        &home.join("data"),
        &["--config", config.to_str().unwrap()],
    );
    let admin = server.admin_file.to_str().unwrap().to_owned();
    let pdf = skill(&home.join("src"), "pdf", "1.2.0");
    let secret = skill(&home.join("src"), "secret-sauce", "0.1.0");
    for (dir, ns) in [(&pdf, "public"), (&secret, "private")] {
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
                &admin,
            ],
        ));
    }
    // Anonymous: the index, with its ETag and a 304; the private namespace
    // is not in it, and its archive answers 404 without a token.
    let index = server.http("GET", "/.well-known/agent-skills/index.json", None, None);
    assert_eq!(index.status, 200, "{}", index.body);
    let json = index.json();
    assert_eq!(
        json["$schema"],
        "https://schemas.agentskills.io/discovery/0.2.0/schema.json"
    );
    let names: Vec<&str> = json["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["pdf"], "{json}");
    assert_eq!(json["skills"][0]["type"], "archive");
    assert_eq!(json["skills"][0]["version"], "1.2.0");
    let etag = index.header("etag").unwrap().to_owned();
    let (status, _) = raw_get(
        &server.addr,
        "/.well-known/agent-skills/index.json",
        &format!("If-None-Match: {etag}\r\n"),
    );
    assert_eq!(status, 304);
    let hidden = server.http(
        "GET",
        "/.well-known/agent-skills/private/secret-sauce/0.1.0/archive.tar.gz",
        None,
        None,
    );
    assert_eq!(hidden.status, 404, "{}", hidden.body);
    // The archive the index names has the spec's layout and its digest.
    let url = json["skills"][0]["url"].as_str().unwrap();
    let (status, archive) = raw_get(
        &server.addr,
        &format!("/.well-known/agent-skills/{url}"),
        "",
    );
    assert_eq!(status, 200);
    assert_eq!(
        format!("sha256:{}", sha256_hex(&archive)),
        json["skills"][0]["digest"].as_str().unwrap()
    );

    // Another process lists and installs it.
    let listed = ok(&sd(home, &["install", &server.url, "--list"]));
    assert!(listed.contains("pdf 1.2.0 archive sha256:"), "{listed}");
    assert!(!listed.contains("secret-sauce"), "{listed}");
    let out = ok(&sd(home, &["install", &format!("{}#pdf", server.url)]));
    let source = format!(
        "wellknown+{}/.well-known/agent-skills/index.json#pdf",
        server.url
    );
    assert!(
        out.starts_with("installed pdf 1.2.0 sha256:") && out.trim_end().ends_with(&source),
        "{out}"
    );
    assert_eq!(fingerprint_of(&out), folder_fingerprint(home, &pdf));
    let lock = std::fs::read_to_string(home.join(".agents/skilldeck.lock")).unwrap();
    assert!(lock.contains(&format!("source = \"{source}\"")), "{lock}");
    ok(&sd(home, &["verify"]));
    // A frozen install fetches it again and checks the locked fingerprint.
    std::fs::remove_dir_all(home.join(".agents/skills/pdf")).unwrap();
    let frozen = ok(&sd(home, &["install", "--frozen"]));
    assert!(frozen.contains(&fingerprint_of(&out)), "{frozen}");
    ok(&sd(home, &["verify"]));
    // Naming a skill the index does not list says which it does.
    let e = failed(&sd(
        home,
        &["install", &format!("{}#secret-sauce", server.url)],
    ));
    assert!(
        e.contains("no skill 'secret-sauce'") && e.contains("pdf"),
        "{e}"
    );
}

/// `GET path` on `addr` with extra header lines: the status and the raw
/// body (these answers carry a Content-Length).
fn raw_get(addr: &str, path: &str, extra: &str) -> (u16, Vec<u8>) {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\n{extra}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&raw[..end]).into_owned();
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, raw[end + 4..].to_vec())
}

fn sha256_hex(bytes: &[u8]) -> String {
    skilldeck::Digest::of(bytes).hex()
}

/// `skilldeck serve --http 127.0.0.1:0` over `root` with `config`, its
/// base URL, and its standard error's lines (keep them: a dropped
/// receiver stops draining the pipe).
fn serve_http(
    home: &Path,
    root: &Path,
    config: &Path,
) -> (Child, String, std::sync::mpsc::Receiver<String>) {
    let mut child = Command::new(bin())
        .args(["serve", "--http", "127.0.0.1:0", "--root"])
        .arg(root)
        .arg("--config")
        .arg(config)
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

#[test]
fn the_index_of_serve_http_installs_in_another_process_with_the_folder_fingerprint() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let root = home.join("served");
    let review = skill(&root, "review", "0.3.0");
    let config = home.join("serve.toml");
    std::fs::write(&config, "[serve]\nwell-known = true\n").unwrap();
    let (mut child, url, _err) = serve_http(home, &root, &config);
    let listed = sd(home, &["install", &url, "--list"]);
    let install = sd(home, &["install", &url, "--skill", "review"]);
    let _ = child.kill();
    let _ = child.wait();
    let listed = ok(&listed);
    assert!(listed.contains("review 0.3.0 archive sha256:"), "{listed}");
    let out = ok(&install);
    assert!(out.starts_with("installed review 0.3.0 sha256:"), "{out}");
    assert_eq!(fingerprint_of(&out), folder_fingerprint(home, &review));
    ok(&sd(home, &["verify"]));
}

#[test]
fn serve_http_publishes_no_index_unless_switched_on() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let root = home.join("served");
    skill(&root, "review", "0.3.0");
    let config = home.join("serve.toml");
    std::fs::write(&config, "").unwrap();
    let (mut child, url, _err) = serve_http(home, &root, &config);
    let out = sd(home, &["install", &url, "--list"]);
    let _ = child.kill();
    let _ = child.wait();
    let e = failed(&out);
    assert!(e.contains("404"), "{e}");
}

/// A one-thread HTTP server that answers every request from `answer`
/// (path → body), until the test ends.
fn tiny_server(answer: impl Fn(&str) -> Option<Vec<u8>> + Send + 'static) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request = String::new();
            if reader.read_line(&mut request).is_err() {
                continue;
            }
            let path = request.split_whitespace().nth(1).unwrap_or("/").to_owned();
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
            }
            let (status, body) = match answer(&path) {
                Some(b) => ("200 OK", b),
                None => ("404 Not Found", b"not found".to_vec()),
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(&body);
            let _ = stream.flush();
            let mut rest = Vec::new();
            let _ = reader.read_to_end(&mut rest);
        }
    });
    url
}

#[test]
fn a_server_that_lies_about_a_digest_is_refused_naming_the_entry_and_both_digests() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let pdf = skill(&home.join("src"), "pdf", "1.0.0");
    let package = home.join("pdf.tar.gz");
    ok(&sd(
        home,
        &[
            "pack",
            pdf.to_str().unwrap(),
            "-o",
            package.to_str().unwrap(),
        ],
    ));
    let bytes = std::fs::read(&package).unwrap();
    let claimed = format!("sha256:{}", "ab".repeat(32));
    let index = format!(
        r#"{{"$schema":"https://schemas.agentskills.io/discovery/0.2.0/schema.json",
            "skills":[{{"name":"pdf","type":"archive","description":"d","url":"pdf.tar.gz","digest":"{claimed}"}}]}}"#
    );
    let url = tiny_server(move |path| match path {
        "/.well-known/agent-skills/index.json" => Some(index.clone().into_bytes()),
        "/.well-known/agent-skills/pdf.tar.gz" => Some(bytes.clone()),
        _ => None,
    });
    let e = failed(&sd(home, &["install", &format!("{url}#pdf")]));
    let actual = format!("sha256:{}", sha256_hex(&std::fs::read(&package).unwrap()));
    assert!(
        e.contains("skill 'pdf'") && e.contains(&claimed) && e.contains(&actual),
        "{e}"
    );
    assert!(!home.join(".agents/skills/pdf").exists());
    assert!(!home.join(".agents/skilldeck.lock").exists());
}

/// An index (schema 0.2.0) listing `pdf` as an archive with `digest`.
fn pdf_index(digest: &str) -> Vec<u8> {
    format!(
        r#"{{"$schema":"https://schemas.agentskills.io/discovery/0.2.0/schema.json",
            "skills":[{{"name":"pdf","type":"archive","description":"d","url":"pdf.tar.gz","digest":"{digest}"}}]}}"#
    )
    .into_bytes()
}

/// `skilldeck pack DIR` → the package's bytes.
fn packed(home: &Path, dir: &Path) -> Vec<u8> {
    let package = home.join("packed.tar.gz");
    let _ = std::fs::remove_file(&package);
    ok(&sd(
        home,
        &[
            "pack",
            dir.to_str().unwrap(),
            "-o",
            package.to_str().unwrap(),
        ],
    ));
    std::fs::read(&package).unwrap()
}

#[test]
fn an_index_whose_digest_for_the_name_changed_is_outdated_and_update_moves_it_all_or_nothing() {
    use std::sync::{Arc, Mutex};
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let v1 = packed(home, &skill(&home.join("v1"), "pdf", "1.0.0"));
    let v2 = packed(home, &skill(&home.join("v2"), "pdf", "2.0.0"));
    let digest = |b: &[u8]| format!("sha256:{}", sha256_hex(b));
    // (index, archive) the server answers with now.
    let served = Arc::new(Mutex::new((pdf_index(&digest(&v1)), v1.clone())));
    let state = served.clone();
    let url = tiny_server(move |path| {
        let s = state.lock().unwrap();
        match path {
            "/.well-known/agent-skills/index.json" => Some(s.0.clone()),
            "/.well-known/agent-skills/pdf.tar.gz" => Some(s.1.clone()),
            _ => None,
        }
    });
    let lockfile = home.join(".agents/skilldeck.lock");
    let out = ok(&sd(home, &["install", &format!("{url}#pdf")]));
    let old = fingerprint_of(&out);
    let o = ok(&sd(home, &["outdated"]));
    assert!(
        o.contains(&format!(
            "pdf: up to date at {old} (follows its well-known index)"
        )),
        "{o}"
    );

    // The index names other bytes for pdf: outdated.
    *served.lock().unwrap() = (pdf_index(&digest(&v2)), v2.clone());
    let o = sd(home, &["outdated"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let said = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        said.contains(&format!("pdf: fingerprint {old} → sha256:")),
        "{said}"
    );
    let json = sd(home, &["outdated", "--output", "json"]);
    let rows: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(rows[0]["channel"], "well-known", "{rows}");
    assert_eq!(rows[0]["kind"], "index", "{rows}");
    assert_eq!(rows[0]["locked"], old.as_str(), "{rows}");
    assert_eq!(rows[0]["changed"], true, "{rows}");
    assert_eq!(rows[0]["pinned"], false, "{rows}");
    let before = std::fs::read_to_string(&lockfile).unwrap();
    let dry = ok(&sd(home, &["update", "--dry-run"]));
    assert!(dry.contains("would update pdf"), "{dry}");
    assert_eq!(std::fs::read_to_string(&lockfile).unwrap(), before);

    // A server whose archive does not match its index's digest: update
    // refuses and writes nothing.
    *served.lock().unwrap() = (pdf_index(&digest(&v2)), v1.clone());
    let e = failed(&sd(home, &["update", "pdf"]));
    assert!(e.contains(&digest(&v2)) && e.contains(&digest(&v1)), "{e}");
    assert_eq!(
        std::fs::read_to_string(&lockfile).unwrap(),
        before,
        "nothing half-written"
    );

    *served.lock().unwrap() = (pdf_index(&digest(&v2)), v2.clone());
    let u = ok(&sd(home, &["update", "pdf"]));
    let new = fingerprint_of(&ok(&sd(
        home,
        &["install", &format!("{url}#pdf"), "--dir", "other/skills"],
    )));
    assert_ne!(new, old);
    assert!(
        u.contains(&format!(
            "updated pdf: fingerprint {old} → {new}, version 1.0.0 → 2.0.0"
        )),
        "{u}"
    );
    assert!(std::fs::read_to_string(&lockfile).unwrap().contains(&new));
    ok(&sd(home, &["outdated"]));
    ok(&sd(home, &["verify"]));
    // remove takes it out of the root and the lock, as any skill.
    let removed = ok(&sd(home, &["remove", "pdf"]));
    assert!(
        removed.starts_with(&format!("removed pdf {new} (wellknown+")),
        "{removed}"
    );
    assert!(!home.join(".agents/skills/pdf").exists());
    assert!(
        !std::fs::read_to_string(&lockfile)
            .unwrap()
            .contains("[skill.pdf]")
    );
}

/// `GET path` on `addr`: the body, the ETag, and the
/// `skilldeck-index-build` number of the build the answer comes from.
fn get_built(addr: &str, path: &str) -> (Vec<u8>, String, u64) {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&raw[..end]).into_owned();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let header = |name: &str| -> String {
        head.lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.trim()
                    .eq_ignore_ascii_case(name)
                    .then(|| v.trim().to_owned())
            })
            .unwrap_or_else(|| panic!("no {name} in {head}"))
    };
    (
        raw[end + 4..].to_vec(),
        header("etag"),
        header("skilldeck-index-build").parse().unwrap(),
    )
}

#[test]
fn the_served_index_is_built_once_per_state_of_the_skills_and_rebuilt_when_a_file_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let root = home.join("served");
    let review = skill(&root, "review", "0.3.0");
    skill(&root, "lint", "0.1.0");
    let config = home.join("serve.toml");
    std::fs::write(&config, "[serve]\nwell-known = true\n").unwrap();
    let (mut child, url, _err) = serve_http(home, &root, &config);
    let addr = url.trim_start_matches("http://").to_owned();
    let index_path = "/.well-known/agent-skills/index.json";
    let archive_path = "/.well-known/agent-skills/review.tar.gz";
    let digest_of = |body: &[u8], name: &str| -> String {
        let json: serde_json::Value = serde_json::from_slice(body).unwrap();
        json["skills"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {json}"))["digest"]
            .as_str()
            .unwrap()
            .to_owned()
    };

    // Indexes and archives asked again and again: one build (the first),
    // the same bytes and ETags.
    let (index1, etag1, build1) = get_built(&addr, index_path);
    let (archive1, aetag1, abuild1) = get_built(&addr, archive_path);
    let (index2, etag2, build2) = get_built(&addr, index_path);
    let (archive2, aetag2, abuild2) = get_built(&addr, archive_path);
    assert_eq!((build1, abuild1, build2, abuild2), (1, 1, 1, 1));
    assert_eq!((&index1, &etag1), (&index2, &etag2));
    assert_eq!((&archive1, &aetag1), (&archive2, &aetag2));
    assert_eq!(
        digest_of(&index1, "review"),
        format!("sha256:{}", sha256_hex(&archive1))
    );

    // A file of review changes: once the watcher has seen it, the index is
    // built again, with the new archive's digest (lint's is the same).
    std::fs::write(review.join("references/guide.md"), "# Guide, revised\n").unwrap();
    let give_up = std::time::Instant::now() + skilldeck_testkit::process::GIVE_UP;
    let (revised, build) = loop {
        let (body, _, build) = get_built(&addr, index_path);
        if digest_of(&body, "review") != digest_of(&index1, "review") {
            break (body, build);
        }
        // Until the watcher reports the change, the kept build answers.
        assert_eq!(build, 1, "rebuilt with nothing changed");
        assert!(
            std::time::Instant::now() < give_up,
            "the index never saw the change"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert!(build > 1);
    let (archive3, _, abuild3) = get_built(&addr, archive_path);
    let _ = child.kill();
    let _ = child.wait();
    assert!(abuild3 >= build);
    assert_eq!(
        digest_of(&revised, "review"),
        format!("sha256:{}", sha256_hex(&archive3))
    );
    assert_eq!(digest_of(&revised, "lint"), digest_of(&index1, "lint"));
}
