//! Helpers several modules share (each had its own copy, byte for byte,
//! when the modules were test binaries of their own).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use skilldeck::{Config, Error, Mode, ValidationOptions};

/// How long an operation on a hostile file may take before it counts as
/// hung (a guard against a hang, not a timing assertion).
pub const WATCHDOG: Duration = Duration::from_secs(20);

/// `f`'s result, run on a thread; panics when [`WATCHDOG`] passes first.
pub fn within_deadline<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(WATCHDOG)
        .expect("operation hung (watchdog expired)")
}

/// Makes a named pipe at `path` (`mkfifo`).
pub fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

/// `text` parsed as the config file `/cfg/skilldeck.toml`.
pub fn parse(text: &str) -> Result<Config, Error> {
    Config::parse(text, Path::new("/cfg/skilldeck.toml"))
}

/// Validation in `mode` without the lints.
pub fn options(mode: Mode) -> ValidationOptions {
    ValidationOptions {
        mode,
        lints: false,
        ..ValidationOptions::default()
    }
}
