//! `skilldeck serve` when the system runs out of inotify watches: a real
//! `ENOSPC` from the kernel, not a simulated one. The server runs in a user
//! namespace whose `max_inotify_watches` is lowered to a handful (the
//! per-namespace limit is writable by the namespace's owner, and the
//! kernel enforces it for every process inside), so the watcher hits the
//! limit part-way through its plan. It must say so once, fall back to
//! polling, and still notice an edit.
//!
//! Where user namespaces are not available (`unshare` missing, or
//! unprivileged namespaces disabled) the test says so on stderr and
//! passes without running: the limit cannot be lowered for one process
//! without them, and lowering the machine's own would break every other
//! program of the user.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Far longer than the server needs (polling every 2 s): past it, it did not.
const GIVE_UP: Duration = Duration::from_secs(60);

/// The watches the namespace allows: fewer than the plan needs.
const WATCHES: &str = "4";

/// A shell line run inside the namespace: lower the limit, then run `$@`.
const LOWER_THEN_RUN: &str = "echo $0 > /proc/sys/user/max_inotify_watches && exec \"$@\"";

fn user_namespaces_work() -> bool {
    Command::new("unshare")
        .args([
            "--user",
            "--map-root-user",
            "sh",
            "-c",
            LOWER_THEN_RUN,
            WATCHES,
            "true",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn skill_md(marker: &str) -> String {
    format!("---\nname: pdf\ndescription: Does pdf things ({marker}).\n---\n# PDF\n")
}

#[test]
fn out_of_system_watches_warns_once_polls_and_still_notices_an_edit() {
    if !user_namespaces_work() {
        eprintln!("skipped: no user namespaces here (unshare --user --map-root-user failed)");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("skills");
    std::fs::create_dir_all(root.join("pdf")).unwrap();
    std::fs::write(root.join("pdf/SKILL.md"), skill_md("v0")).unwrap();
    for i in 0..10 {
        std::fs::create_dir_all(root.join(format!("empty{i}"))).unwrap();
    }
    let mut child = Command::new("unshare")
        .args([
            "--user",
            "--map-root-user",
            "sh",
            "-c",
            LOWER_THEN_RUN,
            WATCHES,
        ])
        .arg(env!("CARGO_BIN_EXE_skilldeck"))
        .args(["serve", "--root"])
        .arg(&root)
        .env("RUST_LOG", "info")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (log_tx, log_rx) = mpsc::channel::<String>();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = log_tx.send(line);
        }
    });
    let (out_tx, out_rx) = mpsc::channel::<String>();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = out_tx.send(line);
        }
    });
    let mut stdin = child.stdin.take().unwrap();
    let mut send = |text: String| {
        stdin.write_all(text.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    };
    send(
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#
            .to_owned(),
    );
    out_rx.recv_timeout(GIVE_UP).unwrap();
    send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned());

    // The watcher reaches the namespace's limit and says so.
    let mut log = Vec::new();
    let started = Instant::now();
    while !log
        .iter()
        .any(|l: &String| l.contains("watching skill roots"))
    {
        let left = GIVE_UP.saturating_sub(started.elapsed());
        match log_rx.recv_timeout(left) {
            Ok(line) => log.push(line),
            Err(_) => break,
        }
    }
    let watching = log.iter().find(|l| l.contains("watching skill roots"));
    assert!(watching.is_some_and(|l| l.contains("Polling")), "{log:#?}");

    // Edits are still noticed, by polling: two of them, as the first may
    // be caught by the check the server makes once its watcher is up.
    let mut id = 1;
    let mut noticed = true;
    for marker in ["v1-edited", "v2-edited"] {
        std::fs::write(root.join("pdf/SKILL.md"), skill_md(marker)).unwrap();
        let edited = Instant::now();
        noticed &= loop {
            id += 1;
            send(format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#
            ));
            let answer = out_rx.recv_timeout(GIVE_UP).unwrap();
            if answer.contains(marker) {
                break true;
            }
            if edited.elapsed() > GIVE_UP {
                break false;
            }
            std::thread::sleep(Duration::from_millis(200));
        };
    }
    while let Ok(line) = log_rx.try_recv() {
        log.push(line);
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(noticed, "the edit was not noticed: {log:#?}");
    let warnings: Vec<&String> = log
        .iter()
        .filter(|l| l.contains("file watch limit is reached"))
        .collect();
    assert_eq!(warnings.len(), 1, "{log:#?}");
}
