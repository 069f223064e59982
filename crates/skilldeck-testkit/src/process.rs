//! Child processes driven by tests: their output read line by line from a
//! thread, so a test waits for a line (the event), with a deadline only
//! against a hang.

use std::io::{BufRead as _, BufReader, Read};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

/// Far longer than any answer may take: past it, a line or message counts
/// as lost. A guard against a hung test, never a timing assertion.
pub const GIVE_UP: Duration = Duration::from_secs(120);

/// Each line of `r`, sent from a thread until `r` ends or the receiver is
/// dropped.
pub fn lines_of(r: impl Read + Send + 'static) -> Receiver<String> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(r).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Waits for the first line of `lines` that starts with `prefix` and
/// returns the rest of it (lines before it are skipped). Panics, naming
/// `what`, when the output ends or [`GIVE_UP`] passes first.
pub fn wait_for_line(lines: &Receiver<String>, prefix: &str, what: &str) -> String {
    loop {
        let line = lines
            .recv_timeout(GIVE_UP)
            .unwrap_or_else(|e| panic!("{what} never printed a line starting {prefix:?}: {e}"));
        if let Some(rest) = line.strip_prefix(prefix) {
            return rest.to_owned();
        }
    }
}
