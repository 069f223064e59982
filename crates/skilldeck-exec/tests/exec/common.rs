//! The fixture the exec tests share: one skill with the given files,
//! discovered into a deck that the tests' runs borrow it from; and helpers
//! several modules had a copy of, byte for byte, when they were test
//! binaries of their own.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use skilldeck_exec::{CallContext, Executor, Input, Outcome, Policy, Request, probe};
use skilldeck_testkit::Root;

/// One skill named `name` with `files`, and the deck it was discovered in.
pub struct Fixture {
    _root: Root,
    deck: skilldeck::Deck,
    name: &'static str,
}

/// Writes the skill `name` (a description and a one-line body) with
/// `files` (path, text) and discovers it.
pub fn fixture(name: &'static str, files: &[(&str, &str)]) -> Fixture {
    let root = Root::new();
    let mut skill = root
        .skill(name)
        .description(format!("{name} probes. Use in tests."))
        .body(format!("# {name}\n"));
    for (path, text) in files {
        skill = skill.file(path, text);
    }
    skill.write();
    let deck = skilldeck::discover(&skilldeck::DiscoveryOptions::with_roots([root
        .path()
        .to_path_buf()]));
    Fixture {
        _root: root,
        deck,
        name,
    }
}

impl Fixture {
    /// The skill (it loads: the fixture writes a valid one).
    pub fn skill(&self) -> &skilldeck::Skill {
        self.deck.get(self.name).expect("the fixture's skill loads")
    }
}

impl Fixture {
    /// Runs `path` of the skill with `args` under `policy` (a refusal of the
    /// run itself panics: these tests attack what runs).
    pub fn run(&self, path: &str, args: &[String], policy: &Policy) -> Outcome {
        Executor::default()
            .run(
                Request {
                    skill: self.skill(),
                    path,
                    args: args.to_vec(),
                    stdin: Input::Null,
                    context: CallContext::local("refusals-test"),
                },
                policy,
            )
            .unwrap_or_else(|e| panic!("{}: {e}", policy.profile.name()))
    }
}

/// The native profile, or `None` (saying why) where this machine lacks it.
pub fn native() -> Option<Policy> {
    let p = probe();
    if !p.native_ready {
        eprintln!(
            "SKIPPED: native profile unavailable: {}",
            p.missing().join("; ")
        );
        return None;
    }
    let mut policy = Policy::default();
    policy.limits.timeout = Duration::from_secs(30);
    Some(policy)
}

/// Calls three denied system calls by number (given as arguments, so the
/// script is the same on every architecture) and prints each errno.
pub const DENIED_CALLS: &str = r#"#!/usr/bin/python3
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
ptrace, unshare, mount = (int(a) for a in sys.argv[1:4])
def call(name, nr, *args):
    ctypes.set_errno(0)
    r = libc.syscall(nr, *args)
    print(name, r, ctypes.get_errno())
call('ptrace', ptrace, 16, 1, 0, 0)
call('unshare', unshare, 0x40000000)
call('mount', mount, b'none', b'/tmp', b'tmpfs', 0, 0)
"#;

/// The denied calls' numbers on this architecture.
pub fn denied_call_args() -> Vec<String> {
    [libc::SYS_ptrace, libc::SYS_unshare, libc::SYS_mount]
        .iter()
        .map(ToString::to_string)
        .collect()
}

/// `b` as text (lossy UTF-8).
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A log writer for a test's subscriber: what was written, kept.
#[derive(Clone, Default)]
pub struct Buffer(pub Arc<Mutex<Vec<u8>>>);

impl Write for Buffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
