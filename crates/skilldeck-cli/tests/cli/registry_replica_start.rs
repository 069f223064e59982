//! Replicas of `skilldeck registry serve` started together on one
//! database and one shared admin token file that does not exist yet
//! (issue 29): every start succeeds, and all of them serve the one token
//! the file ends up with.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::Duration;

/// Double starts (the issue saw 2 failures in 20).
const ROUNDS: usize = 20;

fn http_get(addr: &str, path: &str, token: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

/// `registry serve` on the shared `data` folder (one SQLite database, one
/// blob folder) with the admin token file `token_file`.
fn spawn(data: &Path, token_file: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_skilldeck"))
        .args(["registry", "serve", "--listen", "127.0.0.1:0", "--data"])
        .arg(data)
        .arg("--admin-token-file")
        .arg(token_file)
        .env_remove("SKILLDECK_REGISTRY_DATABASE_URL")
        .env_remove("SKILLDECK_REGISTRY_STORE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The address of a started server, or what it said when it failed.
/// Its stdout goes to `keep` (open for the server's life).
fn ready(child: &mut Child, keep: &mut Vec<BufReader<ChildStdout>>) -> Result<String, String> {
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    keep.push(stdout);
    match line
        .trim()
        .strip_prefix("skilldeck registry listening on http://")
    {
        Some(addr) => Ok(addr.to_owned()),
        None => {
            let _ = child.wait();
            let mut stderr = String::new();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut stderr)
                .unwrap();
            Err(stderr)
        }
    }
}

fn stop(mut child: Child) {
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let _ = child.wait();
}

#[test]
fn twenty_double_starts_on_a_missing_shared_admin_token_file_all_succeed() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    for round in 0..ROUNDS {
        let token_file = tmp.path().join(format!("shared/round-{round}/admin-token"));
        let mut pair = [spawn(&data, &token_file), spawn(&data, &token_file)];
        let mut outputs = Vec::new();
        let addrs: Vec<Result<String, String>> = pair
            .iter_mut()
            .map(|child| ready(child, &mut outputs))
            .collect();
        let token = std::fs::read_to_string(&token_file)
            .ok()
            .map(|t| t.trim().to_owned());
        let [a, b] = pair;
        let outcome = (|| {
            let token = token.ok_or("the token file was not made")?;
            for (i, addr) in addrs.iter().enumerate() {
                let addr = addr
                    .as_ref()
                    .map_err(|stderr| format!("start {i} failed: {stderr}"))?;
                let listed = http_get(addr, "/api/v1/agents", &token);
                if !listed.starts_with("HTTP/1.1 200") {
                    return Err(format!("start {i} refused the file's token: {listed}"));
                }
            }
            Ok::<(), String>(())
        })();
        stop(a);
        stop(b);
        if let Err(e) = outcome {
            panic!("round {round}: {e}");
        }
    }
}
