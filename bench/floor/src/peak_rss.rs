//! `peak-rss OUT CMD [ARGS...]`: runs CMD (its output inherited), then
//! writes CMD's peak resident set in KiB to the file OUT and exits with
//! CMD's status.
//!
//! Why not read `ru_maxrss` in the benchmark's Python process: a child's
//! peak includes the memory of the process that forked it (the copy before
//! `exec`), so every figure under ~15 MiB read as the Python parent's size.
//! Spawned from this small process, the inherited part is this process's
//! ~1 MiB, below any real figure.

use std::process::{Command, ExitCode};

use nix::sys::resource::{UsageWho, getrusage};

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let (Some(out), Some(program)) = (args.next(), args.next()) else {
        eprintln!("usage: peak-rss OUT CMD [ARGS...]");
        return ExitCode::from(2);
    };
    let status = match Command::new(&program).args(args).status() {
        Ok(status) => status,
        Err(e) => {
            eprintln!("peak-rss: cannot run {}: {e}", program.to_string_lossy());
            return ExitCode::from(127);
        }
    };
    // The one child, waited for: its peak (KiB on Linux).
    let peak = match getrusage(UsageWho::RUSAGE_CHILDREN) {
        Ok(usage) => usage.max_rss(),
        Err(e) => {
            eprintln!("peak-rss: getrusage failed: {e}");
            return ExitCode::from(1);
        }
    };
    if let Err(e) = std::fs::write(&out, format!("{peak}\n")) {
        eprintln!("peak-rss: cannot write {}: {e}", out.to_string_lossy());
        return ExitCode::from(1);
    }
    let code = status.code().unwrap_or(1);
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}
