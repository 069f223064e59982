//! The allocator policy of one-shot commands.
//!
//! glibc gives every thread that allocates its own arena. Discovery loads
//! skills on rayon's threads, so the strings a deck keeps (names,
//! descriptions, paths) end up spread over several arenas, each holding the
//! parse buffers it freed between them: at 100,000 skills that is about
//! 10 MiB of resident memory no one uses (82 MiB peak against 72 MiB with
//! one arena; `docs/benchmarks.md`). A command that loads, prints and exits
//! gains nothing from per-thread arenas, so it uses one. `serve` keeps
//! glibc's default: it answers many requests on many threads for hours.

/// Puts every thread of this process on one malloc arena. Call before any
/// thread is started (the first thing `main` does after parsing
/// arguments); a no-op where the C library is not glibc.
pub fn one_arena() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: `mallopt` only sets an allocator parameter; it takes no
        // pointer and has no precondition. Called before other threads
        // exist, so no allocation races with the change.
        #[allow(unsafe_code)]
        let _ = unsafe { libc::mallopt(libc::M_ARENA_MAX, 1) };
    }
}
