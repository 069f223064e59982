//! Helpers several modules share (each had its own copy, byte for byte,
//! when the modules were test binaries of their own).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

/// The exit status, stdout and stderr of `out`, for a failure message.
pub fn text(out: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// `o`'s stdout (UTF-8).
pub fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

/// `o`'s stderr (UTF-8).
pub fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

/// The lock file of `project` (`.agents/skilldeck.lock`).
pub fn lock(project: &Path) -> String {
    std::fs::read_to_string(project.join(".agents/skilldeck.lock")).unwrap()
}

/// The value of `key = "..."` in `project`'s lock file.
pub fn lock_value(project: &Path, key: &str) -> String {
    lock(project)
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{key} = \"")))
        .map(|v| v.trim_end_matches('"').to_owned())
        .unwrap_or_else(|| panic!("no {key} in the lock:\n{}", lock(project)))
}

/// The `skilldeck` binary under test.
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_skilldeck")
}

/// `skilldeck ARGS` with HOME and the XDG folders under `home`.
pub fn sd(home: &Path, args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env_remove("SKILLDECK_TOKEN")
        .env_remove("SKILLDECK_REGISTRY_URL")
        .current_dir(home)
        .output()
        .unwrap()
}
