//! `skilldeck registry serve` as a process: the ready line on stdout, the
//! admin token file (0600) named on stderr but never the token, answers on
//! loopback, and a graceful stop on SIGTERM.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::PermissionsExt;
use std::process::Command;

use skilldeck_testkit::process::wait_for_line;
use skilldeck_testkit::registry::{RegistryProcess, http};

use crate::common::bin;

#[test]
fn registry_serve_prints_the_ready_line_keeps_the_token_private_and_stops_on_sigterm() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let mut server = RegistryProcess::start(bin(), &data, &[]);
    assert!(server.addr.starts_with("127.0.0.1:"), "{}", server.addr);

    let mode = std::fs::metadata(&server.admin_file)
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let token = server.admin_token();

    assert_eq!(server.http("GET", "/healthz", None, None).status, 200);
    assert_eq!(server.http("GET", "/api/v1/skills", None, None).status, 401);
    assert_eq!(
        server
            .http("GET", "/api/v1/skills", Some(&token), None)
            .status,
        200
    );

    let exit = server.terminate();
    assert!(exit.success(), "{exit:?}");
    let stderr = server.stderr_to_end();
    assert!(
        stderr.contains(&server.admin_file.display().to_string()),
        "{stderr}"
    );
    assert!(!stderr.contains(&token), "the token reached stderr");
    assert!(stderr.contains("stopped"), "{stderr}");
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
    let mut first = RegistryProcess::start(bin(), &data, &[]);
    let folders = process_folders(&staging);
    assert_eq!(folders.len(), 1, "{folders:?}");
    let killed = folders[0].clone();
    // A publish in flight when the process is killed: its temporary files.
    std::fs::create_dir_all(killed.join("publish-inflight/staging")).unwrap();
    std::fs::write(killed.join("publish-inflight/package"), vec![7u8; 4 << 20]).unwrap();
    first.stop();
    assert!(killed.exists(), "SIGKILL leaves the folder (nothing ran)");

    let mut second = RegistryProcess::start(bin(), &data, &[]);
    assert!(
        !killed.exists(),
        "the killed process's staging folder is still there"
    );
    let now = process_folders(&staging);
    assert_eq!(now.len(), 1, "{now:?}");
    // A graceful stop removes the process's own folder.
    let exit = second.terminate();
    assert!(exit.success(), "{exit:?}: {}", second.stderr_to_end());
    assert!(process_folders(&staging).is_empty());
}

#[test]
fn metrics_listen_serves_metrics_without_a_token_while_the_public_listener_needs_the_admin_token() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let mut command = Command::new(bin());
    command
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
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        .env_remove("RUST_LOG");
    let mut server = RegistryProcess::spawn(command, &data);
    let metrics = wait_for_line(
        &server.stdout,
        "skilldeck registry metrics (no token) on http://",
        "the registry",
    );
    let metrics = metrics
        .trim()
        .strip_suffix("/metrics")
        .unwrap_or_else(|| panic!("unexpected metrics line {metrics:?}"))
        .to_owned();
    let token = server.admin_token();

    assert_eq!(server.http("GET", "/metrics", None, None).status, 401);
    assert_eq!(
        server.http("GET", "/metrics", Some(&token), None).status,
        200
    );
    let private = http(&metrics, "GET", "/metrics", None, None);
    assert_eq!(private.status, 200);
    assert!(
        private.body.contains(
            "skilldeck_registry_http_requests_total{method=\"GET\",route=\"/metrics\",status_class=\"4xx\"} 1"
        ),
        "{}",
        private.body
    );
    // Only the metrics there: not the API.
    assert_eq!(
        http(&metrics, "GET", "/api/v1/skills", Some(&token), None).status,
        404
    );

    let exit = server.terminate();
    assert!(exit.success(), "{exit:?}");
    let stderr = server.stderr_to_end();
    // One request line each, with the principal's kind, never the token.
    assert!(
        stderr.contains(r#"route="/metrics" status=401"#)
            && stderr.contains(r#"principal="anonymous""#),
        "{stderr}"
    );
    assert!(stderr.contains(r#"principal="admin""#), "{stderr}");
    assert!(!stderr.contains(&token), "the token reached stderr");
}
