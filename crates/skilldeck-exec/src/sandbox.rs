//! The isolation layers, prepared in the parent and applied in the child.
//!
//! Everything that allocates or opens files (the Landlock ruleset with its
//! path descriptors, the seccomp programs, C strings for mounts) is built
//! here, before the fork; the code that runs after the fork
//! ([`Plan::enter`]) only makes system calls, as a child of a
//! multi-threaded parent must.
//!
//! Process shape (native profile): the spawned child is a *supervisor*
//! outside the new namespaces; it forks the *init* of a fresh PID, mount,
//! IPC and network namespace, which forks the *worker* that becomes the
//! script.
//! The init reaps orphans and reports the worker's status on a pipe; when
//! it exits (the worker finished, or the parent killed it on timeout) the
//! kernel kills every process left in the namespace, daemons included.
//! The bwrap and none backends use the same [`Plan`] without namespaces:
//! a supervisor and a worker leading its own session (bwrap as root also
//! binds the skill and drops root here, before `bwrap` starts).

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{BorrowedFd, RawFd};
use std::path::Path;

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd,
    Ruleset, RulesetAttr, RulesetCreated, RulesetCreatedAttr, RulesetStatus, Scope,
};
use rustix::fs::{Mode, OFlags, StatVfsMountFlags};
use rustix::io::{Errno, FdFlags};
use rustix::mount::{
    MountFlags, MountPropagationFlags, mount_bind_recursive, mount_change, mount_remount,
};
use rustix::process::{Gid, Pid, Resource, Rlimit, Signal, Uid, WaitOptions, WaitStatus};
use rustix::thread::{UnshareFlags, set_thread_groups, set_thread_res_gid, set_thread_res_uid};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, sock_filter,
};

use crate::error::ExecError;
use crate::policy::{Limits, NETWORK_READ_PATHS, SANDBOX_UID, SYSTEM_DEVICES, SYSTEM_READ_PATHS};
use crate::writes::WriteRules;

/// The Landlock ABI this crate was written and tested against.
pub(crate) const LANDLOCK_ABI: ABI = ABI::V7;

/// Status-pipe record tags (one `write` of [`RECORD_LEN`] bytes each).
pub(crate) const TAG_PID: u8 = b'P';
pub(crate) const TAG_EXIT: u8 = b'X';
pub(crate) const TAG_SIGNAL: u8 = b'S';
pub(crate) const TAG_ERROR: u8 = b'E';
/// The work directory's tmpfs was full when the script ended.
pub(crate) const TAG_WORKDIR_FULL: u8 = b'Q';
/// Tag, step, then a little-endian `i32`.
pub(crate) const RECORD_LEN: usize = 6;

/// The setup steps a child can fail at (the step byte of an error record).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Step {
    UserNamespace = 1,
    Namespaces = 2,
    Fork = 3,
    MountPrivate = 4,
    BindSkill = 5,
    RemountSkill = 6,
    Rlimit = 7,
    DropUser = 8,
    Landlock = 9,
    LandlockPartial = 10,
    Seccomp = 11,
    Session = 12,
    WorkdirTmpfs = 13,
    ProxyNetwork = 14,
    SeccompNotify = 15,
}

impl Step {
    pub(crate) fn from_byte(b: u8) -> Option<Step> {
        use Step::*;
        [
            UserNamespace,
            Namespaces,
            Fork,
            MountPrivate,
            BindSkill,
            RemountSkill,
            Rlimit,
            DropUser,
            Landlock,
            LandlockPartial,
            Seccomp,
            Session,
            WorkdirTmpfs,
            ProxyNetwork,
            SeccompNotify,
        ]
        .into_iter()
        .find(|s| *s as u8 == b)
    }

    /// What a failure at this step means for the operator.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Step::UserNamespace => "user namespace (unprivileged user namespaces disabled?)",
            Step::Namespaces => {
                "PID/mount/IPC/network namespaces (CAP_SYS_ADMIN or a user namespace needed)"
            }
            Step::Fork => "fork inside the sandbox",
            Step::MountPrivate => "private mount namespace",
            Step::BindSkill => "bind mount of the skill folder",
            Step::RemountSkill => "read-only remount of the skill folder",
            Step::Rlimit => "resource limits (setrlimit)",
            Step::DropUser => "dropping root to the unprivileged sandbox user",
            Step::Landlock => "Landlock (restrict_self)",
            Step::LandlockPartial => "Landlock ABI 7 fully enforced (only partially enforced here)",
            Step::Seccomp => "seccomp filter",
            Step::Session => "new session (setsid)",
            Step::WorkdirTmpfs => "the work directory's size-capped tmpfs",
            Step::ProxyNetwork => {
                "the proxy's port inside the sandbox's network namespace (loopback up, listener handed to skilldeck)"
            }
            Step::SeccompNotify => {
                "the seccomp filter whose refusals skilldeck counts (user notification)"
            }
        }
    }
}

/// What the child must do, prepared by the parent.
pub(crate) struct Plan {
    /// Namespaces, Landlock, seccomp, uid drop (false: profiles `bwrap`
    /// and `none`).
    pub native: bool,
    /// The caller is root: the worker drops to [`SANDBOX_UID`] (native:
    /// before Landlock; bwrap: before exec'ing `bwrap`, which then runs
    /// unprivileged in its own user namespace).
    pub drop_root: bool,
    /// Not root: enter a user namespace mapping the caller's own ids.
    pub user_maps: Option<UserMaps>,
    /// Give the sandbox its own (empty) network namespace.
    pub new_netns: bool,
    /// Bind the skill folder (source) read-only onto the mount point
    /// (target), with the source's locked mount flags. Native: done by the
    /// init. Not native (bwrap as root): the worker does it in a private
    /// mount namespace before dropping root, so the unprivileged `bwrap`
    /// can bind the mount point even when the skill lives under a 0700
    /// home.
    pub bind: Option<(CString, CString, MountFlags)>,
    /// The work directory's size-capped tmpfs, mounted by the init.
    pub workdir_mount: Option<crate::tmpfs::TmpfsMount>,
    /// Landlock ruleset, taken by the worker.
    pub landlock: Option<RulesetCreated>,
    /// Seccomp programs, applied in order.
    pub seccomp: Vec<BpfProgram>,
    /// `(resource, soft, hard)`.
    pub rlimits: Vec<(Resource, u64, u64)>,
    /// Write end of the status pipe.
    pub status_fd: RawFd,
    /// Descriptors the worker hands to the program it execs (the seccomp
    /// programs for `bwrap --add-seccomp-fd`); every other descriptor
    /// above stderr is closed at exec.
    pub inherit_fds: Vec<RawFd>,
    /// The child's end of the channel (a Unix `SOCK_SEQPACKET` pair) on
    /// which it hands descriptors to the parent: the proxy port's listener
    /// and the seccomp notification descriptor. Never reaches the script.
    pub channel_fd: Option<RawFd>,
    /// A host-list network grant: inside the run's network namespace
    /// (its own, empty), bring loopback up and listen on
    /// `127.0.0.1:PORT`, handing the listener to the parent, which runs
    /// the filtering proxy on it.
    pub proxy_port: Option<u16>,
    /// Not native (bwrap): the worker creates that network namespace
    /// itself (bwrap then keeps it with `--share-net`).
    pub proxy_own_netns: bool,
    /// The index in `seccomp` of the program installed with a listener
    /// (`SECCOMP_FILTER_FLAG_NEW_LISTENER`): its refusals are answered by
    /// the parent, which counts them (see `crate::refusals`).
    pub notify_program: Option<usize>,
}

/// `/proc/self/{setgroups,uid_map,gid_map}` contents.
pub(crate) struct UserMaps {
    pub uid_map: CString,
    pub gid_map: CString,
}

/// The rlimits for `limits` (core dumps off): `(resource, soft, hard)`.
pub(crate) fn rlimits(limits: &Limits) -> Vec<(Resource, u64, u64)> {
    vec![
        (Resource::As, limits.memory_bytes, limits.memory_bytes),
        (Resource::Nproc, limits.max_processes, limits.max_processes),
        (
            Resource::Fsize,
            limits.file_size_bytes,
            limits.file_size_bytes,
        ),
        (
            Resource::Cpu,
            limits.cpu_seconds,
            limits.cpu_seconds.saturating_add(1),
        ),
        (Resource::Nofile, limits.open_files, limits.open_files),
        (Resource::Core, 0, 0),
    ]
}

/// Paths for the Landlock ruleset.
pub(crate) struct FsAccess<'a> {
    /// Readable and executable (the skill folder, extra read grants).
    pub read: Vec<&'a Path>,
    /// Readable and writable (work dir, private tmp, extra write grants).
    pub write: Vec<&'a Path>,
    /// The whole network granted (also opens the resolver's `/etc` files).
    pub network: bool,
    /// A host-list grant: TCP connections are handled (so denied) but
    /// for this port, the proxy's inside the sandbox.
    pub proxy_port: Option<u16>,
}

fn landlock_error(e: impl std::fmt::Display) -> ExecError {
    ExecError::Unavailable {
        missing: format!("Landlock ABI 7 ({e})"),
    }
}

/// Builds the Landlock ruleset (ABI 7, hard requirement): everything
/// handled, only the listed paths allowed; TCP bind/connect handled (so
/// denied) unless the network is granted; signals and abstract Unix
/// sockets scoped to the sandbox. Missing system paths are skipped; a
/// missing granted path is an error.
pub(crate) fn landlock_ruleset(access: &FsAccess<'_>) -> Result<RulesetCreated, ExecError> {
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(LANDLOCK_ABI))
        .map_err(landlock_error)?
        .scope(Scope::from_all(LANDLOCK_ABI))
        .map_err(landlock_error)?;
    if !access.network {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(LANDLOCK_ABI))
            .map_err(landlock_error)?;
    }
    let mut created = ruleset.create().map_err(landlock_error)?;
    if let Some(port) = access.proxy_port {
        created = created
            .add_rule(landlock::NetPort::new(port, AccessNet::ConnectTcp))
            .map_err(landlock_error)?;
    }
    for (path, _, access) in fs_rules(access)? {
        let fd = PathFd::new(path).map_err(landlock_error)?;
        created = created
            .add_rule(PathBeneath::new(fd, access))
            .map_err(landlock_error)?;
    }
    Ok(created)
}

/// One filesystem rule: the path, its metadata, the rights granted.
type FsRule<'a> = (&'a Path, std::fs::Metadata, BitFlags<AccessFs>);

/// The filesystem rules of the Landlock ruleset for `access`: each path
/// that exists (following symlinks, as Landlock opens it), its metadata
/// and the rights granted beneath it (on the file itself for a file).
/// Missing system paths are skipped, a missing granted path refused.
/// [`landlock_ruleset`] enforces these rules and [`write_rules`] counts
/// what they refuse: one list for both.
fn fs_rules<'a>(access: &FsAccess<'a>) -> Result<Vec<FsRule<'a>>, ExecError> {
    let read_dir = AccessFs::from_read(LANDLOCK_ABI);
    let file_only = AccessFs::from_file(LANDLOCK_ABI);
    let all = AccessFs::from_all(LANDLOCK_ABI);
    // (path, access, required): a missing system path is skipped, a
    // missing granted path refused.
    let mut wanted: Vec<(&Path, BitFlags<AccessFs>, bool)> = Vec::new();
    wanted.extend(
        SYSTEM_READ_PATHS
            .iter()
            .map(|p| (Path::new(*p), read_dir, false)),
    );
    if access.network {
        wanted.extend(
            NETWORK_READ_PATHS
                .iter()
                .map(|p| (Path::new(*p), read_dir, false)),
        );
    }
    wanted.extend(
        SYSTEM_DEVICES
            .iter()
            .map(|p| (Path::new(*p), file_only, false)),
    );
    wanted.extend(access.read.iter().map(|p| (*p, read_dir, true)));
    wanted.extend(access.write.iter().map(|p| (*p, all, true)));
    let mut rules = Vec::with_capacity(wanted.len());
    for (path, dir_access, required) in wanted {
        let meta = match std::fs::metadata(path) {
            Ok(m) => m,
            Err(_) if !required => continue,
            Err(e) => {
                return Err(ExecError::InvalidInput(format!(
                    "granted path {}: {e}",
                    path.display()
                )));
            }
        };
        let access = if meta.is_dir() {
            dir_access
        } else {
            dir_access & file_only
        };
        rules.push((path, meta, access));
    }
    Ok(rules)
}

/// What the ruleset of `access` lets a run write, for counting the writes
/// it refuses (`crate::writes`): the same rules ([`fs_rules`]), each as
/// the identity of its file and the rights granted there. The work
/// directory's tmpfs, which the init adds to the ruleset inside the
/// sandbox, is added by the caller ([`WriteRules::defer`]).
pub(crate) fn write_rules(access: &FsAccess<'_>) -> Result<WriteRules, ExecError> {
    let mut rules = WriteRules::default();
    for (_, meta, access) in fs_rules(access)? {
        rules.add(&meta, access);
    }
    Ok(rules)
}

/// Every ABI-7 filesystem right, as the kernel's bit mask: what a
/// writable path is granted (the work directory's tmpfs rule).
pub(crate) fn landlock_write_access() -> u64 {
    AccessFs::from_all(LANDLOCK_ABI).bits()
}

/// True when this kernel enforces Landlock ABI 7 (a ruleset with every
/// ABI-7 right created as a hard requirement).
pub(crate) fn landlock_available() -> Result<(), ExecError> {
    Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(LANDLOCK_ABI))
        .map_err(landlock_error)?
        .handle_access(AccessNet::from_all(LANDLOCK_ABI))
        .map_err(landlock_error)?
        .scope(Scope::from_all(LANDLOCK_ABI))
        .map_err(landlock_error)?
        .create()
        .map_err(landlock_error)?;
    Ok(())
}

/// Syscalls refused with `EPERM`: tracing and reading other processes,
/// kernel attack surface, namespace and mount changes.
const DENIED_SYSCALLS: &[libc::c_long] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_kcmp,
    libc::SYS_pidfd_getfd,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_fsopen,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_open_by_handle_at,
    libc::SYS_name_to_handle_at,
    libc::SYS_acct,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_reboot,
    libc::SYS_syslog,
    libc::SYS_quotactl,
    // System V IPC (second layer behind the private IPC namespace: a
    // segment, queue or semaphore set is neither reachable on the host nor
    // created to outlive the run). The `ipc(2)` multiplexer does not exist
    // on the 64-bit ABIs seccompiler targets; on x86_64 the i386 one is
    // reachable only through the 32-bit ABI, which the ABI filter kills.
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
];

/// `AUDIT_ARCH_*` of the native system-call ABI (`seccomp_data.arch`).
#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 62 | 0x8000_0000 | 0x4000_0000;
/// `AUDIT_ARCH_*` of the native system-call ABI (`seccomp_data.arch`).
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 183 | 0x8000_0000 | 0x4000_0000;
/// `AUDIT_ARCH_*` of the native system-call ABI (`seccomp_data.arch`).
#[cfg(target_arch = "riscv64")]
const AUDIT_ARCH: u32 = 243 | 0x8000_0000 | 0x4000_0000;

/// `__X32_SYSCALL_BIT`: x32 system calls arrive with the x86_64 audit
/// arch and this bit set in the number, so an exact-number filter never
/// matches them.
pub(crate) const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// Classic BPF opcodes of the ABI filter (`linux/bpf_common.h`).
/// `BPF_LD | BPF_W | BPF_ABS`.
const BPF_LD_W_ABS: u16 = 0x20;
/// `BPF_JMP | BPF_JEQ | BPF_K`.
const BPF_JMP_JEQ_K: u16 = 0x15;
/// `BPF_JMP | BPF_JGE | BPF_K`.
const BPF_JMP_JGE_K: u16 = 0x35;
/// `BPF_RET | BPF_K`.
const BPF_RET_K: u16 = 0x06;
/// Offsets in `struct seccomp_data`.
const SECCOMP_DATA_NR: u32 = 0;
const SECCOMP_DATA_ARCH: u32 = 4;

fn bpf(code: u16, jt: u8, jf: u8, k: u32) -> sock_filter {
    sock_filter { code, jt, jf, k }
}

/// The ABI filter, installed first: a system call made through any ABI
/// but the native one (i386 `int 0x80` on x86_64, AArch32 on aarch64)
/// kills the process, and on x86_64 a call carrying the x32 bit is refused
/// with `EPERM` whether or not the kernel was built with x32 support. The
/// other programs only ever see native numbers. (seccompiler's programs
/// check the arch too; this one does not rely on that, and adds x32.)
pub(crate) fn abi_program() -> BpfProgram {
    let eperm = libc::SECCOMP_RET_ERRNO | libc::EPERM.unsigned_abs();
    let mut p = vec![
        bpf(BPF_LD_W_ABS, 0, 0, SECCOMP_DATA_ARCH),
        // Native arch: go on; else fall through to the kill.
        bpf(BPF_JMP_JEQ_K, 1, 0, AUDIT_ARCH),
        bpf(BPF_RET_K, 0, 0, libc::SECCOMP_RET_KILL_PROCESS),
    ];
    if cfg!(target_arch = "x86_64") {
        p.extend([
            bpf(BPF_LD_W_ABS, 0, 0, SECCOMP_DATA_NR),
            bpf(BPF_JMP_JGE_K, 0, 1, X32_SYSCALL_BIT),
            bpf(BPF_RET_K, 0, 0, eperm),
        ]);
    }
    p.push(bpf(BPF_RET_K, 0, 0, libc::SECCOMP_RET_ALLOW));
    p
}

/// Namespace flags refused in `clone`.
const NAMESPACE_FLAGS: &[libc::c_int] = &[
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWNS,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWNET,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWCGROUP,
];

fn seccomp_error(e: impl std::fmt::Display) -> ExecError {
    ExecError::Unavailable {
        missing: format!("seccomp filter ({e})"),
    }
}

fn cond(arg: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition, ExecError> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value).map_err(seccomp_error)
}

fn rule(conditions: Vec<SeccompCondition>) -> Result<SeccompRule, ExecError> {
    SeccompRule::new(conditions).map_err(seccomp_error)
}

fn as_u64(v: libc::c_int) -> u64 {
    u64::from(v.unsigned_abs())
}

/// The seccomp programs: (0) the ABI filter ([`abi_program`]: foreign
/// arch killed, x32 refused); (1) `EPERM` for [`DENIED_SYSCALLS`] (System V
/// IPC among them), `clone` with
/// a namespace flag, the terminal-injection ioctls, and `socket` for every
/// family (every family but IPv4/IPv6 when the network is granted: host
/// Unix sockets stay closed either way, which Landlock ABI 7 cannot do);
/// `socketpair` only for `AF_UNIX`. (2) `ENOSYS` for `clone3`, whose flags
/// a filter cannot read, so libc falls back to `clone`.
pub(crate) fn seccomp_programs(ip_sockets: bool) -> Result<Vec<BpfProgram>, ExecError> {
    build_programs(ip_sockets, false)
}

/// The native profile's programs: those of [`seccomp_programs`], with
/// the main one ([`MAIN_PROGRAM`], installed with a listener) handing
/// each refusal to the parent, which counts it and answers `EPERM` as
/// the filter did before, and also every call that may write to the
/// file system ([`crate::writes::write_call_rules`]), which the parent
/// judges: outside the allowed paths it counts the write and answers as
/// Landlock would; otherwise it lets the call go on, to Landlock (the
/// enforcement stays Landlock's). If the parent is gone the kernel
/// answers `ENOSYS`: still a refusal.
pub(crate) fn notifying_programs(ip_sockets: bool) -> Result<Vec<BpfProgram>, ExecError> {
    let mut programs = build_programs(ip_sockets, true)?;
    if let Some(main) = programs.get_mut(MAIN_PROGRAM) {
        let eperm = libc::SECCOMP_RET_ERRNO | libc::EPERM.unsigned_abs();
        for insn in main.iter_mut() {
            if insn.code == BPF_RET_K && insn.k == eperm {
                insn.k = libc::SECCOMP_RET_USER_NOTIF;
            }
        }
    }
    Ok(programs)
}

/// The programs; `write_calls`: the main program also matches the calls
/// that may write (only ever with a listener: [`notifying_programs`]).
fn build_programs(ip_sockets: bool, write_calls: bool) -> Result<Vec<BpfProgram>, ExecError> {
    let arch = std::env::consts::ARCH.try_into().map_err(seccomp_error)?;
    let mut rules: std::collections::BTreeMap<i64, Vec<SeccompRule>> =
        DENIED_SYSCALLS.iter().map(|s| (*s, Vec::new())).collect();
    let clone_rules = NAMESPACE_FLAGS
        .iter()
        .map(|f| {
            rule(vec![cond(
                0,
                SeccompCmpOp::MaskedEq(as_u64(*f)),
                as_u64(*f),
            )?])
        })
        .collect::<Result<Vec<_>, _>>()?;
    rules.insert(libc::SYS_clone, clone_rules);
    rules.insert(
        libc::SYS_ioctl,
        vec![
            rule(vec![cond(1, SeccompCmpOp::Eq, libc::TIOCSTI)?])?,
            rule(vec![cond(1, SeccompCmpOp::Eq, libc::TIOCLINUX)?])?,
        ],
    );
    let socket_rules = if ip_sockets {
        vec![rule(vec![
            cond(0, SeccompCmpOp::Ne, as_u64(libc::AF_INET))?,
            cond(0, SeccompCmpOp::Ne, as_u64(libc::AF_INET6))?,
        ])?]
    } else {
        Vec::new()
    };
    rules.insert(libc::SYS_socket, socket_rules);
    rules.insert(
        libc::SYS_socketpair,
        vec![rule(vec![cond(
            0,
            SeccompCmpOp::Ne,
            as_u64(libc::AF_UNIX),
        )?])?],
    );
    if write_calls {
        for (nr, flags) in crate::writes::write_call_rules() {
            let call_rules = match flags {
                // Unconditional: every call of this number.
                None => Vec::new(),
                // Only with a flag that may write in argument `arg`.
                Some(arg) => crate::writes::OPEN_WRITE_FLAGS
                    .iter()
                    .map(|f| rule(vec![cond(arg, SeccompCmpOp::MaskedEq(*f), *f)?]))
                    .collect::<Result<Vec<_>, _>>()?,
            };
            rules.insert(nr, call_rules);
        }
    }
    let eperm = u32::try_from(libc::EPERM).unwrap_or(1);
    let enosys = u32::try_from(libc::ENOSYS).unwrap_or(38);
    let main = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(eperm),
        arch,
    )
    .map_err(seccomp_error)?;
    let clone3 = SeccompFilter::new(
        [(libc::SYS_clone3, Vec::new())].into_iter().collect(),
        SeccompAction::Allow,
        SeccompAction::Errno(enosys),
        arch,
    )
    .map_err(seccomp_error)?;
    Ok(vec![
        abi_program(),
        main.try_into().map_err(seccomp_error)?,
        clone3.try_into().map_err(seccomp_error)?,
    ])
}

/// Index of the main program (the refusals) in [`seccomp_programs`].
pub(crate) const MAIN_PROGRAM: usize = 1;

/// The bytes of a BPF program as the kernel reads them (`struct
/// sock_filter` array), for `bwrap --add-seccomp-fd`.
pub(crate) fn program_bytes(program: &BpfProgram) -> Vec<u8> {
    let mut out = Vec::with_capacity(program.len() * 8);
    for insn in program {
        out.extend_from_slice(&insn.code.to_ne_bytes());
        out.push(insn.jt);
        out.push(insn.jf);
        out.extend_from_slice(&insn.k.to_ne_bytes());
    }
    out
}

/// The mount flags of the file system holding `path` that a bind remount
/// must keep (a user namespace may not clear locked flags).
pub(crate) fn locked_mount_flags(path: &Path) -> Result<MountFlags, ExecError> {
    let st = rustix::fs::statvfs(path)
        .map_err(|e| ExecError::io(format!("statvfs {}", path.display()), io::Error::from(e)))?;
    let mut out = MountFlags::empty();
    for (st_flag, ms) in [
        (StatVfsMountFlags::NOSUID, MountFlags::NOSUID),
        (StatVfsMountFlags::NODEV, MountFlags::NODEV),
        (StatVfsMountFlags::NOEXEC, MountFlags::NOEXEC),
        (StatVfsMountFlags::NOATIME, MountFlags::NOATIME),
        (StatVfsMountFlags::NODIRATIME, MountFlags::NODIRATIME),
        (StatVfsMountFlags::RELATIME, MountFlags::RELATIME),
    ] {
        if st.f_flag.contains(st_flag) {
            out |= ms;
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------
// After the fork: system calls only (no allocation, no locks). rustix
// makes them directly (paths are `CStr`s built before the fork, so no
// conversion allocates); `fork`, `_exit` and `close_range` stay libc (see
// the design notes).
// ---------------------------------------------------------------------

/// The status pipe's write end, borrowed for one call.
fn status(fd: RawFd) -> BorrowedFd<'static> {
    // SAFETY: `fd` is the write end of the status pipe, which the parent
    // keeps open until the spawn returned and this process keeps open
    // until it execs or exits (`close_all_but` spares it).
    #[allow(unsafe_code)]
    unsafe {
        BorrowedFd::borrow_raw(fd)
    }
}

/// One status record on the pipe (a single write, atomic under PIPE_BUF).
fn record(fd: RawFd, tag: u8, step: u8, value: i32) {
    let v = value.to_le_bytes();
    let buf = [tag, step, v[0], v[1], v[2], v[3]];
    // A failed write only loses the report (the parent then sees no status).
    let _ = rustix::io::write(status(fd), &buf);
}

/// The raw error number of `e`.
fn errno(e: Errno) -> i32 {
    e.raw_os_error()
}

/// Reports a failed step and returns the error for `pre_exec` (the worker)
/// to hand back to the spawner.
fn fail(fd: RawFd, step: Step, err: i32) -> io::Error {
    record(fd, TAG_ERROR, step as u8, err);
    io::Error::from_raw_os_error(err)
}

/// Ends a helper process (supervisor or init) without running any Rust
/// or libc exit handlers, which belong to the parent's copy.
fn exit_now(code: i32) -> ! {
    // SAFETY: `_exit` is async-signal-safe and never returns.
    #[allow(unsafe_code)]
    unsafe {
        libc::_exit(code)
    }
}

/// Closes every descriptor but `keep`.
fn close_all_but(keep: RawFd) {
    let keep = u32::try_from(keep).unwrap_or(0);
    // SAFETY: closes descriptors of this (forked, single-threaded) helper
    // process; nothing in it uses them afterwards.
    #[allow(unsafe_code)]
    unsafe {
        if keep > 0 {
            libc::close_range(0, keep - 1, 0);
        }
        libc::close_range(keep + 1, u32::MAX, 0);
    }
}

/// Waits for `pid` (reaping any other child meanwhile, as an init must)
/// and returns its wait status, or `None` when there is nothing left to
/// wait for.
fn wait_for(pid: Pid) -> Option<WaitStatus> {
    loop {
        match rustix::process::wait(WaitOptions::empty()) {
            Ok(Some((reaped, status))) if reaped == pid => return Some(status),
            Ok(Some(_)) | Err(Errno::INTR) => {}
            Ok(None) | Err(_) => return None,
        }
    }
}

/// Reports `status` (of the worker) on the pipe.
fn report_status(fd: RawFd, status: WaitStatus) {
    if let Some(code) = status.exit_status() {
        record(fd, TAG_EXIT, 0, code);
    } else if let Some(signal) = status.terminating_signal() {
        record(fd, TAG_SIGNAL, 0, signal);
    }
}

/// `fork`: `Some(child)` in the parent, `None` in the child, or the error.
fn fork() -> Result<Option<Pid>, i32> {
    // SAFETY: called in a single-threaded forked child; the new child only
    // makes system calls until it execs or exits.
    #[allow(unsafe_code)]
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        Err(io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(Errno::IO.raw_os_error()))
    } else {
        Ok(Pid::from_raw(pid))
    }
}

/// Dies with the parent (`PR_SET_PDEATHSIG`).
fn die_with_parent() {
    // Cannot fail with a valid signal.
    let _ = rustix::process::set_parent_process_death_signal(Some(Signal::KILL));
}

/// Writes `contents` to the existing file `path`.
fn write_file(path: &CStr, contents: &[u8]) -> Result<(), i32> {
    let file =
        rustix::fs::open(path, OFlags::WRONLY | OFlags::CLOEXEC, Mode::empty()).map_err(errno)?;
    match rustix::io::write(&file, contents) {
        Ok(n) if n == contents.len() => Ok(()),
        Ok(_) => Err(Errno::IO.raw_os_error()),
        Err(e) => Err(errno(e)),
    }
}

/// `unshare(flags)`.
fn unshare(flags: UnshareFlags) -> Result<(), i32> {
    // SAFETY: only namespace flags, never `FILES`: no thread of this
    // (single-threaded, forked) process can observe another descriptor
    // table.
    #[allow(unsafe_code)]
    unsafe { rustix::thread::unshare_unsafe(flags) }.map_err(errno)
}

impl Plan {
    /// Runs in the spawned child (`pre_exec`). Returns `Ok` only in the
    /// worker, which then execs the script; the supervisor and the init
    /// never return.
    pub(crate) fn enter(&mut self) -> io::Result<()> {
        let fd = self.status_fd;
        die_with_parent();
        if self.native {
            if let Some(maps) = &self.user_maps {
                self.enter_user_namespace(maps)?;
            }
            // A private IPC namespace: System V objects of the host are out
            // of reach and the ones made inside die with the namespace.
            let mut flags = UnshareFlags::NEWPID | UnshareFlags::NEWNS | UnshareFlags::NEWIPC;
            if self.new_netns {
                flags |= UnshareFlags::NEWNET;
            }
            unshare(flags).map_err(|e| fail(fd, Step::Namespaces, e))?;
            // Now in the run's own network namespace (still privileged in
            // it): the proxy's port, before anything of the script exists.
            if let (Some(port), Some(channel)) = (self.proxy_port, self.channel_fd) {
                proxy_listener(channel, port).map_err(|e| fail(fd, Step::ProxyNetwork, e))?;
            }
        }
        if let Some(child) = fork().map_err(|e| fail(fd, Step::Fork, e))? {
            // Supervisor: report the pid to kill on timeout, wait, exit.
            record(fd, TAG_PID, 0, child.as_raw_nonzero().get());
            close_all_but(fd);
            let status = wait_for(child);
            if !self.native
                && let Some(status) = status
            {
                report_status(fd, status);
            }
            exit_now(0);
        }
        die_with_parent();
        if self.native {
            self.become_init()?;
        } else {
            // The worker leads its own process group, which the parent
            // kills on timeout.
            rustix::process::setsid().map_err(|e| fail(fd, Step::Session, errno(e)))?;
            if self.bind.is_some() {
                // bwrap as root: the skill folder is bound here, while
                // still root, in a mount namespace of the worker's own.
                unshare(UnshareFlags::NEWNS).map_err(|e| fail(fd, Step::Namespaces, e))?;
                self.mount_skill().map_err(|(step, e)| fail(fd, step, e))?;
            }
            if self.proxy_own_netns
                && let (Some(port), Some(channel)) = (self.proxy_port, self.channel_fd)
            {
                // bwrap: the run's network namespace is made here (bwrap
                // keeps it with --share-net), as root or in a user
                // namespace of the caller's own ids.
                if let Some(maps) = &self.user_maps {
                    self.enter_user_namespace(maps)?;
                }
                unshare(UnshareFlags::NEWNET).map_err(|e| fail(fd, Step::ProxyNetwork, e))?;
                proxy_listener(channel, port).map_err(|e| fail(fd, Step::ProxyNetwork, e))?;
            }
        }
        self.restrict()
    }

    fn enter_user_namespace(&self, maps: &UserMaps) -> io::Result<()> {
        let fd = self.status_fd;
        unshare(UnshareFlags::NEWUSER).map_err(|e| fail(fd, Step::UserNamespace, e))?;
        write_file(c"/proc/self/setgroups", b"deny")
            .and_then(|()| write_file(c"/proc/self/uid_map", maps.uid_map.as_bytes()))
            .and_then(|()| write_file(c"/proc/self/gid_map", maps.gid_map.as_bytes()))
            .map_err(|e| fail(fd, Step::UserNamespace, e))
    }

    /// PID 1 of the new namespace: private mounts, the skill folder bound
    /// read-only, then fork the worker and reap until it ends.
    fn become_init(&mut self) -> io::Result<()> {
        let fd = self.status_fd;
        if let Err((step, e)) = self.mount_skill() {
            record(fd, TAG_ERROR, step as u8, e);
            exit_now(127);
        }
        if let Some(tmpfs) = &self.workdir_mount
            && let Err(e) = tmpfs.mount()
        {
            record(fd, TAG_ERROR, Step::WorkdirTmpfs as u8, e);
            exit_now(127);
        }
        match fork() {
            Ok(Some(worker)) => {
                close_all_but(fd);
                let status = wait_for(worker);
                // Before the status: the parent reads records to the end.
                if self.workdir_mount.as_ref().is_some_and(|t| t.is_full()) {
                    record(fd, TAG_WORKDIR_FULL, 0, 1);
                }
                if let Some(status) = status {
                    report_status(fd, status);
                }
                // Leaving kills whatever is left in the namespace.
                exit_now(0);
            }
            Ok(None) => {}
            Err(e) => {
                record(fd, TAG_ERROR, Step::Fork as u8, e);
                exit_now(127);
            }
        }
        die_with_parent();
        // A new session detaches the worker from any controlling terminal.
        rustix::process::setsid().map_err(|e| fail(fd, Step::Session, errno(e)))?;
        Ok(())
    }

    /// Makes every mount private (nothing propagates to the host), then
    /// binds the skill folder read-only onto its mount point.
    fn mount_skill(&self) -> Result<(), (Step, i32)> {
        mount_change(
            c"/",
            MountPropagationFlags::REC | MountPropagationFlags::PRIVATE,
        )
        .map_err(|e| (Step::MountPrivate, errno(e)))?;
        if let Some((src, dst, locked)) = &self.bind {
            mount_bind_recursive(src.as_c_str(), dst.as_c_str())
                .map_err(|e| (Step::BindSkill, errno(e)))?;
            let flags = MountFlags::BIND
                | MountFlags::RDONLY
                | MountFlags::NOSUID
                | MountFlags::NODEV
                | *locked;
            mount_remount(dst.as_c_str(), flags, c"")
                .map_err(|e| (Step::RemountSkill, errno(e)))?;
        }
        Ok(())
    }

    /// The worker: rlimits, drop root, then (native) Landlock, seccomp.
    fn restrict(&mut self) -> io::Result<()> {
        let fd = self.status_fd;
        // SAFETY: marks descriptors close-on-exec (nothing leaks into the
        // script but stdio).
        #[allow(unsafe_code)]
        unsafe {
            libc::close_range(3, u32::MAX, libc::CLOSE_RANGE_CLOEXEC as libc::c_int);
        }
        // Then the few handed over (bwrap's seccomp programs) lose the flag.
        for inherit in &self.inherit_fds {
            let _ = rustix::io::fcntl_setfd(status(*inherit), FdFlags::empty());
        }
        for (resource, soft, hard) in &self.rlimits {
            let limit = Rlimit {
                current: Some(*soft),
                maximum: Some(*hard),
            };
            rustix::process::setrlimit(*resource, limit)
                .map_err(|e| fail(fd, Step::Rlimit, errno(e)))?;
        }
        if self.drop_root {
            // This process is single-threaded (a child of fork), so the
            // per-thread system calls change the whole process's ids.
            let gid = Gid::from_raw(SANDBOX_UID);
            let uid = Uid::from_raw(SANDBOX_UID);
            set_thread_groups(&[])
                .and_then(|()| set_thread_res_gid(gid, gid, gid))
                .and_then(|()| set_thread_res_uid(uid, uid, uid))
                .map_err(|e| fail(fd, Step::DropUser, errno(e)))?;
        }
        if !self.native {
            return Ok(());
        }
        let Some(ruleset) = self.landlock.take() else {
            return Err(fail(fd, Step::Landlock, Errno::INVAL.raw_os_error()));
        };
        match ruleset.restrict_self() {
            Ok(status) if status.ruleset == RulesetStatus::FullyEnforced => {}
            Ok(_) => {
                return Err(fail(fd, Step::LandlockPartial, Errno::PERM.raw_os_error()));
            }
            Err(_) => return Err(fail(fd, Step::Landlock, last_errno())),
        }
        for (i, program) in self.seccomp.iter().enumerate() {
            if self.notify_program == Some(i)
                && let Some(channel) = self.channel_fd
            {
                let listener =
                    install_notifying(program).map_err(|e| fail(fd, Step::SeccompNotify, e))?;
                // The script must never hold the listener (it could answer
                // its own refusals): handed over, then closed here.
                let sent = send_fd(channel, CHANNEL_TAG_NOTIFY, listener);
                close_fd(listener);
                sent.map_err(|e| fail(fd, Step::SeccompNotify, e))?;
            } else if seccompiler::apply_filter(program).is_err() {
                return Err(fail(fd, Step::Seccomp, last_errno()));
            }
        }
        if let Some(channel) = self.channel_fd {
            close_fd(channel);
        }
        Ok(())
    }
}

/// Channel message tags: the proxy port's listener, the seccomp listener.
pub(crate) const CHANNEL_TAG_PROXY: u8 = b'L';
pub(crate) const CHANNEL_TAG_NOTIFY: u8 = b'N';
/// Pending connections on the proxy port inside the sandbox.
const PROXY_BACKLOG: i32 = 64;

/// Closes `fd` (after the fork: a plain system call).
fn close_fd(fd: RawFd) {
    // SAFETY: `fd` is a descriptor this process owns and no longer uses.
    #[allow(unsafe_code)]
    unsafe {
        libc::close(fd);
    }
}

/// In the run's fresh network namespace: loopback up, a TCP listener on
/// `127.0.0.1:port`, handed to the parent on `channel` and closed here.
/// System calls on stack data only (after the fork).
fn proxy_listener(channel: RawFd, port: u16) -> Result<(), i32> {
    // SAFETY: plain socket system calls on stack-allocated, zeroed C
    // structs of the right size; every descriptor opened here is closed
    // here on every path.
    #[allow(unsafe_code)]
    unsafe {
        let ctl = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if ctl < 0 {
            return Err(last_errno());
        }
        let mut ifr: libc::ifreq = std::mem::zeroed();
        for (dst, src) in ifr.ifr_name.iter_mut().zip(b"lo\0") {
            *dst = *src as libc::c_char;
        }
        if libc::ioctl(ctl, libc::SIOCGIFFLAGS, &mut ifr) < 0 {
            let e = last_errno();
            libc::close(ctl);
            return Err(e);
        }
        ifr.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
        let up = libc::ioctl(ctl, libc::SIOCSIFFLAGS, &ifr);
        let e = last_errno();
        libc::close(ctl);
        if up < 0 {
            return Err(e);
        }
        let l = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if l < 0 {
            return Err(last_errno());
        }
        let mut addr: libc::sockaddr_in = std::mem::zeroed();
        addr.sin_family = libc::AF_INET as libc::sa_family_t;
        addr.sin_port = port.to_be();
        addr.sin_addr.s_addr = u32::from(std::net::Ipv4Addr::LOCALHOST).to_be();
        let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        if libc::bind(l, (&raw const addr).cast(), len) < 0 || libc::listen(l, PROXY_BACKLOG) < 0 {
            let e = last_errno();
            libc::close(l);
            return Err(e);
        }
        let sent = send_fd(channel, CHANNEL_TAG_PROXY, l);
        libc::close(l);
        sent
    }
}

/// Sends `fd` with the one-byte `tag` on `channel` (`SCM_RIGHTS`).
fn send_fd(channel: RawFd, tag: u8, fd: RawFd) -> Result<(), i32> {
    // Room for one `cmsghdr` carrying one descriptor, aligned.
    #[repr(C, align(8))]
    struct Control([u8; 32]);
    // SAFETY: `msghdr` and the control buffer live on the stack for the
    // call; `CMSG_*` compute offsets inside that buffer, which is large
    // enough for one descriptor (`CMSG_SPACE(4)` is 24 on 64-bit Linux).
    #[allow(unsafe_code)]
    unsafe {
        let mut data = [tag];
        let mut iov = libc::iovec {
            iov_base: data.as_mut_ptr().cast(),
            iov_len: 1,
        };
        let mut control = Control([0; 32]);
        let space = libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) as usize;
        if space > control.0.len() {
            return Err(Errno::INVAL.raw_os_error());
        }
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &raw mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.0.as_mut_ptr().cast();
        msg.msg_controllen = space;
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if cmsg.is_null() {
            return Err(Errno::INVAL.raw_os_error());
        }
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as usize;
        std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>(), fd);
        loop {
            if libc::sendmsg(channel, &msg, libc::MSG_NOSIGNAL) >= 0 {
                return Ok(());
            }
            let e = last_errno();
            if e != libc::EINTR {
                return Err(e);
            }
        }
    }
}

/// Installs `program` with a new listener and returns the listener.
fn install_notifying(program: &BpfProgram) -> Result<RawFd, i32> {
    let len = u16::try_from(program.len()).map_err(|_| Errno::INVAL.raw_os_error())?;
    let prog = libc::sock_fprog {
        len,
        filter: program.as_ptr().cast_mut().cast(),
    };
    // SAFETY: `prog` points at the program, alive for the call; no new
    // privileges was set when the ABI program was applied before this one.
    #[allow(unsafe_code)]
    let fd = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            libc::SECCOMP_FILTER_FLAG_NEW_LISTENER,
            &raw const prog,
        )
    };
    if fd < 0 {
        return Err(last_errno());
    }
    RawFd::try_from(fd).map_err(|_| Errno::INVAL.raw_os_error())
}

/// The error number the last failed libc-level call left (the Landlock
/// and seccomp crates report through it).
fn last_errno() -> i32 {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(Errno::IO.raw_os_error())
}
