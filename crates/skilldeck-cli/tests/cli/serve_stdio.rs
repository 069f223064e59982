//! `skilldeck serve` over stdio, as a process: what happens when the client
//! goes away.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Far longer than the server needs to notice: past it, it did not.
const GIVE_UP: Duration = Duration::from_secs(30);

#[test]
fn serve_stdio_exits_when_stdout_is_closed() {
    let tmp = tempfile::tempdir().unwrap();
    skilldeck_testkit::skill(tmp.path(), "pdf")
        .description("Does pdf things.")
        .body("# PDF\n")
        .write();
    let mut child = Command::new(env!("CARGO_BIN_EXE_skilldeck"))
        .args(["serve", "--root"])
        .arg(tmp.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The client closes its end of stdout and keeps stdin open.
    drop(child.stdout.take());
    let mut stdin = child.stdin.take().unwrap();
    let request = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":\
                   {\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\
                   \"clientInfo\":{\"name\":\"t\",\"version\":\"0\"}}}\n";
    stdin.write_all(request.as_bytes()).unwrap();
    stdin.flush().unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > GIVE_UP {
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    if status.is_none() {
        child.kill().unwrap();
        child.wait().unwrap();
    }
    drop(stdin);
    assert!(
        status.is_some(),
        "serve kept running with stdout closed and stdin open"
    );
}
