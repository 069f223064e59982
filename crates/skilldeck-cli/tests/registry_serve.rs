//! `skilldeck registry serve` as a process: the ready line on stdout, the
//! admin token file (0600) named on stderr but never the token, answers on
//! loopback, and a graceful stop on SIGTERM.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Stdio};
use std::time::Duration;

fn http_get(addr: &str, path: &str, token: Option<&str>) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\n{auth}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

#[test]
fn registry_serve_prints_the_ready_line_keeps_the_token_private_and_stops_on_sigterm() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let mut child = Command::new(env!("CARGO_BIN_EXE_skilldeck"))
        .args(["registry", "serve", "--listen", "127.0.0.1:0", "--data"])
        .arg(&data)
        .env_remove("SKILLDECK_REGISTRY_DATABASE_URL")
        .env_remove("SKILLDECK_REGISTRY_STORE")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let addr = line
        .trim()
        .strip_prefix("skilldeck registry listening on http://")
        .unwrap_or_else(|| panic!("unexpected ready line {line:?}"))
        .to_owned();
    assert!(addr.starts_with("127.0.0.1:"), "{addr}");

    let token_file = data.join("admin-token");
    let mode = std::fs::metadata(&token_file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let token = std::fs::read_to_string(&token_file)
        .unwrap()
        .trim()
        .to_owned();

    let health = http_get(&addr, "/healthz", None);
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
    let anonymous = http_get(&addr, "/api/v1/skills", None);
    assert!(anonymous.starts_with("HTTP/1.1 401"), "{anonymous}");
    let listed = http_get(&addr, "/api/v1/skills", Some(&token));
    assert!(listed.starts_with("HTTP/1.1 200"), "{listed}");

    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let exit = child.wait().unwrap();
    assert!(exit.success(), "{exit:?}");
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(
        stderr.contains(&token_file.display().to_string()),
        "{stderr}"
    );
    assert!(!stderr.contains(&token), "the token reached stderr");
    assert!(stderr.contains("stopped"), "{stderr}");
}

/// Starts `registry serve` on `data` and waits for its ready line; the
/// reader keeps its stdout open.
fn start(data: &std::path::Path) -> (std::process::Child, BufReader<std::process::ChildStdout>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_skilldeck"))
        .args(["registry", "serve", "--listen", "127.0.0.1:0", "--data"])
        .arg(data)
        .env_remove("SKILLDECK_REGISTRY_DATABASE_URL")
        .env_remove("SKILLDECK_REGISTRY_STORE")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert!(
        line.starts_with("skilldeck registry listening on"),
        "{line:?}"
    );
    (child, stdout)
}

/// The process staging folders under `staging` (not the sweep lock).
fn process_folders(staging: &std::path::Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(staging)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect()
}

#[test]
fn a_killed_registrys_publish_staging_folder_is_removed_at_the_next_start() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let staging = data.join("staging");
    let (mut first, _out) = start(&data);
    let folders = process_folders(&staging);
    assert_eq!(folders.len(), 1, "{folders:?}");
    let killed = folders[0].clone();
    // A publish in flight when the process is killed: its temporary files.
    std::fs::create_dir_all(killed.join("publish-inflight/staging")).unwrap();
    std::fs::write(killed.join("publish-inflight/package"), vec![7u8; 4 << 20]).unwrap();
    first.kill().unwrap();
    first.wait().unwrap();
    assert!(killed.exists(), "SIGKILL leaves the folder (nothing ran)");

    let (mut second, _out2) = start(&data);
    assert!(
        !killed.exists(),
        "the killed process's staging folder is still there"
    );
    let now = process_folders(&staging);
    assert_eq!(now.len(), 1, "{now:?}");
    // A graceful stop removes the process's own folder.
    let status = Command::new("kill")
        .args(["-TERM", &second.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let exit = second.wait().unwrap();
    let mut stderr = String::new();
    second
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(exit.success(), "{exit:?}: {stderr}");
    assert!(process_folders(&staging).is_empty());
}

#[test]
fn metrics_listen_serves_metrics_without_a_token_while_the_public_listener_needs_the_admin_token() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let mut child = Command::new(env!("CARGO_BIN_EXE_skilldeck"))
        .args([
            "registry",
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--metrics-listen",
            "127.0.0.1:0",
            "--data",
        ])
        .arg(&data)
        .env_remove("SKILLDECK_REGISTRY_DATABASE_URL")
        .env_remove("SKILLDECK_REGISTRY_STORE")
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let addr = line
        .trim()
        .strip_prefix("skilldeck registry listening on http://")
        .unwrap_or_else(|| panic!("unexpected ready line {line:?}"))
        .to_owned();
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let metrics = line
        .trim()
        .strip_prefix("skilldeck registry metrics (no token) on http://")
        .and_then(|rest| rest.strip_suffix("/metrics"))
        .unwrap_or_else(|| panic!("unexpected metrics line {line:?}"))
        .to_owned();
    let token = std::fs::read_to_string(data.join("admin-token"))
        .unwrap()
        .trim()
        .to_owned();

    let public = http_get(&addr, "/metrics", None);
    assert!(public.starts_with("HTTP/1.1 401"), "{public}");
    let admin = http_get(&addr, "/metrics", Some(&token));
    assert!(admin.starts_with("HTTP/1.1 200"), "{admin}");
    let private = http_get(&metrics, "/metrics", None);
    assert!(private.starts_with("HTTP/1.1 200"), "{private}");
    assert!(
        private.contains(
            "skilldeck_registry_http_requests_total{method=\"GET\",route=\"/metrics\",status_class=\"4xx\"} 1"
        ),
        "{private}"
    );
    // Only the metrics there: not the API.
    let api = http_get(&metrics, "/api/v1/skills", Some(&token));
    assert!(api.starts_with("HTTP/1.1 404"), "{api}");

    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let exit = child.wait().unwrap();
    assert!(exit.success(), "{exit:?}");
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    // One request line each, with the principal's kind, never the token.
    assert!(
        stderr.contains(r#"route="/metrics" status=401"#)
            && stderr.contains(r#"principal="anonymous""#),
        "{stderr}"
    );
    assert!(stderr.contains(r#"principal="admin""#), "{stderr}");
    assert!(!stderr.contains(&token), "the token reached stderr");
}
