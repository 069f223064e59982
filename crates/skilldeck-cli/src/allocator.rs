//! The allocator of the `skilldeck` binary, chosen per command.
//!
//! Discovery and validation work on rayon's threads. glibc's allocator
//! made a choice between memory and time there: an arena per thread kept
//! free space in every arena (a 100,000-skill `list` peaked at 86 MiB), and
//! one arena for the whole process made the threads wait on its lock (the
//! same `list` took 1.8–2.7 s instead of 1.1–1.3 s). mimalloc has no such
//! lock (each thread allocates from its own pages, and frees from other
//! threads go to the page's own list) and keeps less free space. So every
//! command that loads, answers and exits allocates with mimalloc, with two
//! of its defaults changed:
//! - transparent huge pages are off for the process (`PR_SET_THP_DISABLE`):
//!   mimalloc asks for them on its arenas (`MADV_HUGEPAGE`), and where the
//!   system grants them (on request, or unasked when set to `always`), one
//!   touched byte of a fresh region makes two resident mebibytes (90–96 MiB
//!   for that `list`). The processes it starts (scripts) inherit that.
//! - freed memory goes back to the system at once (`purge_delay` 0, where
//!   mimalloc keeps it a while for reuse): a one-shot command never reuses
//!   it. With both, that `list` peaks at 66 MiB.
//!
//! The servers (`serve`, `registry`) keep the system's allocator: under
//! the registry's load test, mimalloc peaked at 216 MiB against 121–125 MiB
//! and was no faster overall.
//!
//! The choice is made once, from the command line, before the first
//! allocation (`.preinit_array` runs before every constructor and before
//! the Rust runtime allocates), so every block is freed by the allocator
//! that made it. Where there is no such hook (outside Linux with glibc),
//! every command uses mimalloc with its defaults. The libraries
//! (`skilldeck`, the Python and Node modules) never choose an allocator:
//! the program that embeds them does. Measured in `docs/benchmarks.md`,
//! "The allocator"; the alternatives rejected are in `docs/design.md`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, Ordering};

use mimalloc::MiMalloc;

/// The first arguments (subcommands) whose process keeps the system's
/// allocator: the long-running servers.
const SERVER_COMMANDS: [&[u8]; 2] = [b"serve", b"registry"];

/// mimalloc's `mi_option_purge_delay` (the sixteenth option of
/// `mi_option_e` in `mimalloc.h`, the same in its v2 and v3): how long freed
/// memory is kept before it goes back to the system, in milliseconds.
/// `libmimalloc-sys` does not name it.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Whether this process allocates with the system's allocator. Set at most
/// once, before the first allocation; never changed after.
static SYSTEM: AtomicBool = AtomicBool::new(false);

/// The binary's allocator: mimalloc, or the system's for a server.
struct PerCommand;

#[global_allocator]
static GLOBAL: PerCommand = PerCommand;

/// Calls `$method` of the allocator this process uses (the one `SYSTEM`
/// chose). A branch, not a `&dyn GlobalAlloc`: the indirect call cost
/// `serve`'s start 3.2 % more instructions, the branch 1.2 %.
macro_rules! chosen {
    ($method:ident($($arg:expr),*)) => {
        if SYSTEM.load(Ordering::Relaxed) {
            System.$method($($arg),*)
        } else {
            MiMalloc.$method($($arg),*)
        }
    };
}

// SAFETY: each method forwards to the allocator `chosen!` picks, with the
// caller's own guarantees. That choice is fixed before the first
// allocation, so a block is always freed or resized by the allocator that
// made it.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for PerCommand {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded (see the impl).
        unsafe { chosen!(alloc(layout)) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded (see the impl).
        unsafe { chosen!(alloc_zeroed(layout)) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded (see the impl).
        unsafe { chosen!(dealloc(ptr, layout)) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded (see the impl).
        unsafe { chosen!(realloc(ptr, layout, new_size)) }
    }
}

/// Whether the command whose first argument is `command` keeps the
/// system's allocator (a server).
fn keeps_system_allocator(command: Option<&[u8]>) -> bool {
    command.is_some_and(|c| SERVER_COMMANDS.contains(&c))
}

// SAFETY (of the section): glibc calls each pointer of `.preinit_array`
// once, before constructors, with `argc`, `argv` and `envp`; this function
// has that signature.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
#[used]
#[unsafe(link_section = ".preinit_array")]
static CHOOSE: extern "C" fn(libc::c_int, *const *const libc::c_char, *const *const libc::c_char) =
    choose;

/// Chooses the allocator from the command line and sets mimalloc's policy
/// before anything allocates (module docs).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
extern "C" fn choose(
    argc: libc::c_int,
    argv: *const *const libc::c_char,
    _envp: *const *const libc::c_char,
) {
    let command = if argc >= 2 && !argv.is_null() {
        // SAFETY: glibc passes the process's `argv`: `argc` pointers to
        // NUL-terminated strings, alive for the whole process.
        #[allow(unsafe_code)]
        unsafe {
            let first = *argv.add(1);
            (!first.is_null()).then(|| std::ffi::CStr::from_ptr(first).to_bytes())
        }
    } else {
        None
    };
    if keeps_system_allocator(command) {
        SYSTEM.store(true, Ordering::Relaxed);
        return;
    }
    // SAFETY: `prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0)` sets one flag of this
    // process and reads no memory of ours; if the kernel refuses (before
    // Linux 3.15), the system's setting stays, which costs memory, not
    // correctness. `mi_option_set` stores one option's value (no pointer,
    // no precondition); set before mimalloc starts, it is kept over the
    // environment's.
    #[allow(unsafe_code)]
    unsafe {
        let _ = libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
        libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Resident bytes of this process (`VmRSS` of `/proc/self/status`).
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn resident() -> usize {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let kib: usize = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0);
        kib * 1024
    }

    #[test]
    fn the_servers_keep_the_system_allocator_and_other_commands_use_mimalloc() {
        assert!(keeps_system_allocator(Some(b"serve")));
        assert!(keeps_system_allocator(Some(b"registry")));
        for command in [&b"list"[..], b"validate", b"prompt", b"run", b"--help", b""] {
            assert!(!keeps_system_allocator(Some(command)), "{command:?}");
        }
        assert!(!keeps_system_allocator(None));
        // This test binary runs a one-shot command's policy.
        assert!(!SYSTEM.load(Ordering::Relaxed));
    }

    #[test]
    fn every_server_command_named_here_is_a_subcommand_of_the_cli() {
        // The names are compared before clap exists: a renamed subcommand
        // must be renamed here too.
        let cli = <crate::Cli as clap::CommandFactory>::command();
        for name in SERVER_COMMANDS {
            let name = std::str::from_utf8(name).unwrap_or_default();
            assert!(
                cli.find_subcommand(name).is_some(),
                "no subcommand {name:?}"
            );
        }
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn the_process_has_no_huge_pages_from_its_start() {
        // Nothing called: `.preinit_array` did it before `main`.
        // SAFETY: `PR_GET_THP_DISABLE` reads one flag of this process.
        #[allow(unsafe_code)]
        let thp_disabled = unsafe { libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0) };
        assert_eq!(thp_disabled, 1);
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn freed_memory_goes_back_to_the_system_at_once() {
        // 64 MiB in 16 KiB blocks (mimalloc's small pages, not a mapping
        // of their own), written so that they are resident, then freed.
        let blocks: Vec<Vec<u8>> = (0..4096).map(|_| vec![1u8; 16 * 1024]).collect();
        let full = resident();
        drop(blocks);
        let after = resident();
        // Other tests run beside this one and allocate too, but not tens of
        // mebibytes: with mimalloc's delay, all 64 MiB would still be here.
        assert!(
            after + (32 << 20) < full,
            "resident {full} bytes full, {after} bytes after the free"
        );
    }
}
