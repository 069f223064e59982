//! [`Refusals`]: every refusal observed inside one run, so that an operator
//! sees an attempted escape, not only an exit status. Counted while the run
//! goes (the seccomp supervisor, the proxy) and when it ends (the caps),
//! carried in the [`crate::Outcome`], logged once per run (one `warn` line
//! on target `skilldeck::audit`) and recorded as events on the run's
//! `execute_tool` span.
//!
//! What is observed, and how:
//! - denied system calls, by class: the native profile's seccomp filter
//!   hands each refusal to the parent (user notification), which counts it
//!   and answers `EPERM` as the filter did before. bwrap installs the
//!   filter itself (without a listener), so its refusals are enforced but
//!   not counted (`syscalls_observed` says so);
//! - blocked connections: the proxy of a host-list grant (host, port, why);
//! - writes outside the allowed paths (native profile): the same notifying
//!   filter hands the parent every call that may write to the file system;
//!   the parent resolves its path in the sandbox and checks it against the
//!   rules the run's Landlock ruleset is built from (`crate::writes`). A
//!   write outside is counted with its resolved path and failed as
//!   Landlock fails it (`EACCES`, or `EROFS` on the read-only skill mount);
//!   anything else goes on to Landlock, which stays the enforcement (a
//!   script racing the check can spoil the count, never write). Under
//!   bwrap the paths do not exist or are read-only mounts: refused, not
//!   counted (`writes_observed` says so);
//! - caps: timeout, output truncated, memory and process caps (the run's
//!   cgroup), the file-size limit (the script killed by `SIGXFSZ`), the
//!   work directory's quota (full at the end of the run).
//!
//! Not counted: the shells' probe of a controlling terminal (`/dev/tty`,
//! refused by Landlock; the sandbox has none: `crate::writes`).

use std::collections::BTreeMap;

use serde::Serialize;

/// Most blocked connections kept with their details per run; the count
/// goes on past it.
pub const MAX_RECORDED_CONNECTIONS: usize = 32;

/// Most refused writes kept with their paths per run; the count goes on
/// past it.
pub const MAX_RECORDED_WRITES: usize = 32;

/// Longest path kept for one refused write (characters; a longer one is
/// cut).
pub const MAX_RECORDED_PATH_CHARS: usize = 1024;

/// One write outside the allowed paths that the sandbox refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RefusedWrite {
    /// Where the write would have landed, as the script's mount namespace
    /// names it, symlinks and relative paths resolved (for a new file:
    /// its folder and its name).
    pub path: String,
    /// The system call (`openat`, `mkdir`, `renameat2`, …).
    pub call: &'static str,
}

/// One connection the proxy refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BlockedConnection {
    /// The host name (or address) the script asked for.
    pub host: String,
    /// The port.
    pub port: u16,
    /// Why: `host-not-granted`, `address-refused`, `resolve-failed`,
    /// `bad-request`, `limit`.
    pub reason: &'static str,
}

/// Caps a run hit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CapsHit {
    /// The wall timeout passed (the tree was killed).
    pub timeout: bool,
    /// Stdout or stderr went over the output cap.
    pub output_truncated: bool,
    /// The run's memory cap (a process was OOM-killed).
    pub memory: bool,
    /// The run's process cap (a fork was refused).
    pub processes: bool,
    /// The file-size limit (the script was killed by `SIGXFSZ`).
    pub file_size: bool,
    /// The work directory's quota (it was full at the end: writes failed
    /// with `ENOSPC`).
    pub workdir_quota: bool,
}

impl CapsHit {
    /// The names of the caps hit.
    pub fn names(&self) -> Vec<&'static str> {
        [
            (self.timeout, "timeout"),
            (self.output_truncated, "output"),
            (self.memory, "memory"),
            (self.processes, "processes"),
            (self.file_size, "file-size"),
            (self.workdir_quota, "workdir-quota"),
        ]
        .into_iter()
        .filter_map(|(hit, name)| hit.then_some(name))
        .collect()
    }
}

/// Every refusal observed in one run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Refusals {
    /// Denied system calls by class (`namespace`, `mount`, `ptrace`,
    /// `socket`, `sysv-ipc`, …) and count.
    pub syscalls: BTreeMap<&'static str, u64>,
    /// Whether denied system calls were observed at all for this run
    /// (profile native; false: enforced but not counted).
    pub syscalls_observed: bool,
    /// Connections the proxy refused (in all).
    pub connections_blocked: u64,
    /// The first [`MAX_RECORDED_CONNECTIONS`] of them.
    pub connections: Vec<BlockedConnection>,
    /// Writes outside the allowed paths refused (in all): a file
    /// created, opened for writing or truncated, a folder made, anything
    /// removed, renamed or linked where the run may not write.
    pub writes_outside: u64,
    /// The first [`MAX_RECORDED_WRITES`] of them.
    pub writes: Vec<RefusedWrite>,
    /// Whether writes outside were observed at all for this run (profile
    /// native; false: enforced but not counted, as under bwrap, whose
    /// mounts refuse them, or where this kernel kept skilldeck from
    /// reading a caller's memory).
    pub writes_observed: bool,
    /// glibc's name-service lookups refused (the Unix socket of `nscd`,
    /// which glibc tries on every user or group lookup, e.g. each `bash`
    /// start): refused like every socket, reported here apart from
    /// [`Refusals::syscalls`] so that ordinary scripts do not read as
    /// attempted escapes. Recognised by the exact call glibc makes
    /// (`socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)`); any other Unix socket counts under
    /// `socket`.
    pub name_service_probes: u64,
    /// Caps hit.
    pub caps: CapsHit,
}

/// The socket type glibc's `nscd` client asks for
/// (`socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)`).
#[cfg(target_os = "linux")]
pub const NAME_SERVICE_PROBE_TYPE: libc::c_int =
    libc::SOCK_STREAM | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK;

/// The class [`syscall_class`] gives glibc's name-service lookup.
pub(crate) const NAME_SERVICE_PROBE: &str = "name-service-probe";

impl Refusals {
    /// Nothing was refused.
    pub fn is_empty(&self) -> bool {
        self.total() == 0
    }

    /// The number of refusals (each denied call, each blocked connection,
    /// each write outside, each cap hit).
    pub fn total(&self) -> u64 {
        let caps = u64::try_from(self.caps.names().len()).unwrap_or(u64::MAX);
        self.syscalls
            .values()
            .sum::<u64>()
            .saturating_add(self.connections_blocked)
            .saturating_add(self.writes_outside)
            .saturating_add(caps)
    }

    /// The refusals of what the script attempted (each denied call, each
    /// blocked connection, each write outside), the caps aside.
    pub fn attempts_refused(&self) -> u64 {
        self.syscalls_denied()
            .saturating_add(self.connections_blocked)
            .saturating_add(self.writes_outside)
    }

    /// Denied system calls in all.
    pub fn syscalls_denied(&self) -> u64 {
        self.syscalls.values().sum()
    }

    /// Counts one denied system call of `class`.
    pub(crate) fn syscall(&mut self, class: &'static str) {
        if class == NAME_SERVICE_PROBE {
            self.name_service_probes = self.name_service_probes.saturating_add(1);
            return;
        }
        let n = self.syscalls.entry(class).or_insert(0);
        *n = n.saturating_add(1);
    }

    /// Counts one blocked connection.
    pub(crate) fn connection(&mut self, host: &str, port: u16, reason: &'static str) {
        self.connections_blocked = self.connections_blocked.saturating_add(1);
        if self.connections.len() < MAX_RECORDED_CONNECTIONS {
            self.connections.push(BlockedConnection {
                host: host.chars().take(256).collect(),
                port,
                reason,
            });
        }
    }

    /// Counts one write outside the allowed paths, refused by `call`.
    pub(crate) fn write_outside(&mut self, path: &str, call: &'static str) {
        self.writes_outside = self.writes_outside.saturating_add(1);
        if self.writes.len() < MAX_RECORDED_WRITES {
            self.writes.push(RefusedWrite {
                path: path.chars().take(MAX_RECORDED_PATH_CHARS).collect(),
                call,
            });
        }
    }

    /// One line for the model and the log: `refused: 3 system calls
    /// (namespace 2, ptrace 1); 1 connection (evil.example:443); 1 write
    /// outside (/etc/passwd); caps: timeout`. Empty when nothing was
    /// refused.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        if !self.syscalls.is_empty() {
            let by: Vec<String> = self
                .syscalls
                .iter()
                .map(|(class, n)| format!("{class} {n}"))
                .collect();
            parts.push(format!(
                "{} system call{} ({})",
                self.syscalls_denied(),
                if self.syscalls_denied() == 1 { "" } else { "s" },
                by.join(", ")
            ));
        }
        if self.connections_blocked > 0 {
            let mut hosts: Vec<String> = Vec::new();
            for c in &self.connections {
                let h = format!("{}:{}", c.host, c.port);
                if !hosts.contains(&h) {
                    hosts.push(h);
                }
            }
            parts.push(format!(
                "{} connection{} ({})",
                self.connections_blocked,
                if self.connections_blocked == 1 {
                    ""
                } else {
                    "s"
                },
                hosts.join(", ")
            ));
        }
        if self.writes_outside > 0 {
            let mut paths: Vec<&str> = Vec::new();
            for w in &self.writes {
                if !paths.contains(&w.path.as_str()) {
                    paths.push(&w.path);
                }
            }
            parts.push(format!(
                "{} write{} outside ({})",
                self.writes_outside,
                if self.writes_outside == 1 { "" } else { "s" },
                paths.join(", ")
            ));
        }
        let caps = self.caps.names();
        if !caps.is_empty() {
            parts.push(format!("caps: {}", caps.join(", ")));
        }
        if parts.is_empty() {
            String::new()
        } else {
            format!("refused: {}", parts.join("; "))
        }
    }
}

/// The class of the denied system call `nr` with first argument `arg0`
/// and second `arg1` (the refusals of `crate::sandbox::seccomp_programs`).
pub(crate) fn syscall_class(nr: i64, arg0: u64, arg1: u64) -> &'static str {
    #[cfg(target_os = "linux")]
    {
        let is = |list: &[libc::c_long]| list.contains(&nr);
        if is(&[libc::SYS_clone, libc::SYS_unshare, libc::SYS_setns]) {
            return "namespace";
        }
        if is(&[
            libc::SYS_mount,
            libc::SYS_umount2,
            libc::SYS_pivot_root,
            libc::SYS_chroot,
            libc::SYS_move_mount,
            libc::SYS_open_tree,
            libc::SYS_fsopen,
            libc::SYS_fsmount,
            libc::SYS_fspick,
            libc::SYS_mount_setattr,
        ]) {
            return "mount";
        }
        if is(&[
            libc::SYS_ptrace,
            libc::SYS_process_vm_readv,
            libc::SYS_process_vm_writev,
            libc::SYS_kcmp,
            libc::SYS_pidfd_getfd,
        ]) {
            return "ptrace";
        }
        // `int` arguments: their low 32 bits.
        let int = |arg: u64| arg & u64::from(u32::MAX);
        if nr == libc::SYS_socket
            && int(arg0) == u64::from(libc::AF_UNIX.unsigned_abs())
            && int(arg1) == u64::from(NAME_SERVICE_PROBE_TYPE.unsigned_abs())
        {
            return NAME_SERVICE_PROBE;
        }
        if is(&[libc::SYS_socket, libc::SYS_socketpair]) {
            return "socket";
        }
        if is(&[libc::SYS_ioctl]) {
            let _ = arg1;
            return "terminal-injection";
        }
        if is(&[
            libc::SYS_shmget,
            libc::SYS_shmat,
            libc::SYS_shmctl,
            libc::SYS_shmdt,
            libc::SYS_msgget,
            libc::SYS_msgsnd,
            libc::SYS_msgrcv,
            libc::SYS_msgctl,
            libc::SYS_semget,
            libc::SYS_semop,
            libc::SYS_semtimedop,
            libc::SYS_semctl,
        ]) {
            return "sysv-ipc";
        }
        if is(&[libc::SYS_keyctl, libc::SYS_add_key, libc::SYS_request_key]) {
            return "keyring";
        }
        if is(&[
            libc::SYS_io_uring_setup,
            libc::SYS_io_uring_enter,
            libc::SYS_io_uring_register,
            libc::SYS_bpf,
            libc::SYS_perf_event_open,
            libc::SYS_userfaultfd,
        ]) {
            return "kernel-interface";
        }
        if is(&[libc::SYS_open_by_handle_at, libc::SYS_name_to_handle_at]) {
            return "file-handle";
        }
        "system-admin"
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (nr, arg0, arg1);
        "other"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_names_each_kind_of_refusal_once() {
        let mut r = Refusals::default();
        assert!(r.is_empty() && r.summary().is_empty());
        r.syscall("namespace");
        r.syscall("namespace");
        r.syscall("ptrace");
        r.connection("evil.example", 443, "host-not-granted");
        r.connection("evil.example", 443, "host-not-granted");
        r.caps.timeout = true;
        assert_eq!(r.total(), 6);
        assert_eq!(
            r.summary(),
            "refused: 3 system calls (namespace 2, ptrace 1); 2 connections (evil.example:443); caps: timeout"
        );
        assert_eq!(r.attempts_refused(), 5);
        r.write_outside("/etc/passwd", "openat");
        assert_eq!(r.total(), 7);
        assert_eq!(r.attempts_refused(), 6);
        assert_eq!(
            r.summary(),
            "refused: 3 system calls (namespace 2, ptrace 1); 2 connections (evil.example:443); 1 write outside (/etc/passwd); caps: timeout"
        );
        r.write_outside("/etc/passwd", "truncate");
        r.write_outside("/home/x", "mkdir");
        assert!(
            r.summary()
                .contains("; 3 writes outside (/etc/passwd, /home/x);"),
            "{}",
            r.summary()
        );
        for _ in 0..100 {
            r.write_outside("/x", "openat");
        }
        assert_eq!(r.writes.len(), MAX_RECORDED_WRITES);
        assert_eq!(r.writes_outside, 103);
        for _ in 0..100 {
            r.connection("x", 1, "limit");
        }
        assert_eq!(r.connections.len(), MAX_RECORDED_CONNECTIONS);
        assert_eq!(r.connections_blocked, 102);
    }
}
