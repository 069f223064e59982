//! Counting the writes a run attempts outside its allowed paths (native
//! profile).
//!
//! Landlock refuses such a write with `EACCES` and tells no one but the
//! kernel's audit log. To count it, the native profile's notifying seccomp
//! program (`crate::sandbox::notifying_programs`) also hands the parent
//! every call that may write to the file system ([`write_call_rules`]):
//! `open`/`openat`/`creat` with a flag that may write (decided in the
//! filter, from the registers), `openat2` (its flags are in memory),
//! `mkdir`, `mknod`, `symlink`, `link`, `unlink`, `rmdir`, `rename` in
//! each of their forms, and `truncate`. The parent's supervisor reads the
//! path from the caller's memory, resolves it in the caller's mount
//! namespace (through `/proc/PID/root`, `/proc/PID/cwd` and
//! `/proc/PID/fd/N`), and asks what Landlock asks: does the object (or
//! the folder it is made in, removed from, renamed into) have the right
//! the call needs, given the rules of the run's ruleset ([`WriteRules`],
//! built from the very rules the ruleset is built from, matched by file
//! identity on the way up to the root as Landlock walks)?
//!
//! - no: the write is refused: counted with its resolved path, and
//!   answered with the error the kernel would give (`EACCES`, Landlock's;
//!   `EROFS` on a read-only mount, which the kernel checks first; `EXDEV`
//!   for a link or rename Landlock refuses only for reparenting);
//! - yes, or anything unclear (the path unreadable, a component missing,
//!   a magic link, the caller gone): the call goes on
//!   (`SECCOMP_USER_NOTIF_FLAG_CONTINUE`) and Landlock decides.
//!
//! The counting is never the security decision. The path is read from
//! memory the script controls and the file tree may change between the
//! check and the call (time of check, time of use): another thread can
//! swap the path or a symlink after the parent looked. That can only
//! miscount (a refused write uncounted, or a write the script makes fail
//! on purpose counted): whatever the parent answers, an allowed call still
//! meets Landlock, which decides on the objects the kernel really opens.
//! The parent only ever refuses in addition, what Landlock would refuse.

use std::ffi::CString;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use landlock::{AccessFs, BitFlags};
use rustix::fs::{FileType, Mode, OFlags, ResolveFlags, StatVfsMountFlags};
use rustix::io::Errno;

/// Open flags that may write (any of them makes an `open` a write-intent
/// call the parent judges): write access, create, truncate. `O_APPEND`
/// only writes with `O_WRONLY` or `O_RDWR`, `O_TMPFILE` needs one of
/// them too.
pub(crate) const OPEN_WRITE_FLAGS: [u64; 4] = [
    libc::O_WRONLY as u64,
    libc::O_RDWR as u64,
    libc::O_CREAT as u64,
    libc::O_TRUNC as u64,
];

/// Longest path read from a caller's memory (`PATH_MAX`, its NUL
/// included); a longer one fails in the kernel with `ENAMETOOLONG`.
const MAX_PATH_BYTES: usize = 4096;

/// Devices a write-open of which is refused (Landlock) but not counted:
/// the controlling terminal, which every shell probes at start-up
/// (`bash` opens `/dev/tty` read-write). The sandbox's worker leads a
/// session of its own without a terminal, so the open could reach none
/// even where allowed; counting it would report every shell as an
/// attempted escape.
pub(crate) const UNCOUNTED_DEVICES: &[&str] = &["/dev/tty"];

/// Most symlinks followed resolving one path (the kernel's own limit).
const MAX_SYMLINKS: usize = 40;

/// Most folders walked up from a path to the root looking for rules.
const MAX_DEPTH: usize = 4096;

/// Most folders whose rights a run's judge remembers (then it forgets
/// them all and starts again).
const MAX_CACHED_FOLDERS: usize = 4096;

/// The write-intent calls the notifying program hands to the parent:
/// `(number, Some(argument))` for an open whose flags are that argument
/// (matched only with one of [`OPEN_WRITE_FLAGS`]), `(number, None)` for
/// every call of that number.
pub(crate) fn write_call_rules() -> Vec<(i64, Option<u8>)> {
    let mut calls = vec![
        (libc::SYS_openat, Some(2)),
        (libc::SYS_openat2, None),
        (libc::SYS_mkdirat, None),
        (libc::SYS_mknodat, None),
        (libc::SYS_symlinkat, None),
        (libc::SYS_linkat, None),
        (libc::SYS_unlinkat, None),
        (libc::SYS_renameat2, None),
        (libc::SYS_truncate, None),
    ];
    #[cfg(target_arch = "x86_64")]
    calls.extend([
        (libc::SYS_open, Some(1)),
        (libc::SYS_creat, None),
        (libc::SYS_mkdir, None),
        (libc::SYS_mknod, None),
        (libc::SYS_symlink, None),
        (libc::SYS_link, None),
        (libc::SYS_unlink, None),
        (libc::SYS_rmdir, None),
        (libc::SYS_rename, None),
        (libc::SYS_renameat, None),
    ]);
    calls
}

/// True when `nr` is one of [`write_call_rules`].
pub(crate) fn is_write_call(nr: i64) -> bool {
    write_call_rules().iter().any(|(n, _)| *n == nr)
}

/// One rule of the run's Landlock ruleset: the file it is on (device and
/// inode) and the rights granted there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Rule {
    dev: u64,
    ino: u64,
    access: BitFlags<AccessFs>,
}

/// The rules of a run's Landlock ruleset, as the counting of refused
/// writes needs them (`crate::sandbox::write_rules`).
#[derive(Debug, Clone, Default)]
pub(crate) struct WriteRules {
    rules: Vec<Rule>,
    /// Rules on paths that exist only inside the sandbox (the work
    /// directory's tmpfs), resolved there at the first call judged.
    deferred: Vec<(PathBuf, BitFlags<AccessFs>)>,
}

impl WriteRules {
    /// A rule granting `access` on the file `meta` describes.
    pub(crate) fn add(&mut self, meta: &std::fs::Metadata, access: BitFlags<AccessFs>) {
        self.rules.push(Rule {
            dev: meta.dev(),
            ino: meta.ino(),
            access,
        });
    }

    /// A rule granting `access` (a kernel bit mask) beneath `path` as the
    /// sandbox sees it.
    pub(crate) fn defer(&mut self, path: &Path, access: u64) {
        self.deferred
            .push((path.to_path_buf(), BitFlags::from_bits_truncate(access)));
    }

    /// The rights granted on the file `(dev, ino)` itself.
    fn on(&self, dev: u64, ino: u64) -> BitFlags<AccessFs> {
        self.rules
            .iter()
            .filter(|r| r.dev == dev && r.ino == ino)
            .fold(BitFlags::empty(), |acc, r| acc | r.access)
    }
}

/// The answer to one write-intent call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Let the call go on (Landlock decides).
    Continue,
    /// A write outside: count it (`path`) and fail the call with `errno`.
    Refuse {
        /// The resolved path.
        path: String,
        /// The error the kernel would give.
        errno: i32,
    },
}

/// The name of write-intent call `nr`, for the record.
pub(crate) fn call_name(nr: i64) -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        let legacy = [
            (libc::SYS_open, "open"),
            (libc::SYS_creat, "creat"),
            (libc::SYS_mkdir, "mkdir"),
            (libc::SYS_mknod, "mknod"),
            (libc::SYS_symlink, "symlink"),
            (libc::SYS_link, "link"),
            (libc::SYS_unlink, "unlink"),
            (libc::SYS_rmdir, "rmdir"),
            (libc::SYS_rename, "rename"),
            (libc::SYS_renameat, "renameat"),
        ];
        if let Some((_, name)) = legacy.iter().find(|(n, _)| *n == nr) {
            return name;
        }
    }
    [
        (libc::SYS_openat, "openat"),
        (libc::SYS_openat2, "openat2"),
        (libc::SYS_mkdirat, "mkdirat"),
        (libc::SYS_mknodat, "mknodat"),
        (libc::SYS_symlinkat, "symlinkat"),
        (libc::SYS_linkat, "linkat"),
        (libc::SYS_unlinkat, "unlinkat"),
        (libc::SYS_renameat2, "renameat2"),
        (libc::SYS_truncate, "truncate"),
    ]
    .iter()
    .find(|(n, _)| *n == nr)
    .map_or("write", |(_, name)| name)
}

/// A path argument: the folder descriptor it is relative to and the
/// address of the string.
#[derive(Debug, Clone, Copy)]
struct PathArg {
    dirfd: i32,
    addr: u64,
}

/// What a write-intent call asks, decoded from its registers.
#[derive(Debug, Clone, Copy)]
enum Call {
    /// `open`, `openat`, `creat`, `openat2` (flags read from memory when
    /// `how` is set).
    Open {
        path: PathArg,
        flags: u64,
        how: Option<u64>,
    },
    /// `mkdir`, `mknod`, `symlink`: a new object of `right` in a folder.
    Make { path: PathArg, right: AccessFs },
    /// `unlink`, `rmdir`, `unlinkat`.
    Remove { path: PathArg, dir: bool },
    /// `rename*` and `link*`.
    Move {
        old: PathArg,
        new: PathArg,
        link: bool,
        follow_old: bool,
        exchange: bool,
        no_replace: bool,
    },
    /// `truncate`.
    Truncate { path: PathArg },
}

fn fd_arg(v: u64) -> i32 {
    // The kernel reads a descriptor argument as an `int`: the low half.
    #[allow(clippy::cast_possible_truncation)]
    let low = v as u32;
    i32::from_ne_bytes(low.to_ne_bytes())
}

fn cwd(addr: u64) -> PathArg {
    PathArg {
        dirfd: libc::AT_FDCWD,
        addr,
    }
}

fn at(dirfd: u64, addr: u64) -> PathArg {
    PathArg {
        dirfd: fd_arg(dirfd),
        addr,
    }
}

/// The right `mknod` with `mode` needs.
fn mknod_right(mode: u64) -> AccessFs {
    let kind = u32::try_from(mode & u64::from(libc::S_IFMT)).unwrap_or(0);
    match kind {
        libc::S_IFCHR => AccessFs::MakeChar,
        libc::S_IFBLK => AccessFs::MakeBlock,
        libc::S_IFIFO => AccessFs::MakeFifo,
        libc::S_IFSOCK => AccessFs::MakeSock,
        _ => AccessFs::MakeReg,
    }
}

/// Decodes the write-intent call `nr` with `args`.
fn decode(nr: i64, a: [u64; 6]) -> Option<Call> {
    let flag = |v: u64, f: libc::c_int| v & u64::from(f.unsigned_abs()) != 0;
    #[cfg(target_arch = "x86_64")]
    {
        let call = match nr {
            libc::SYS_open => Some(Call::Open {
                path: cwd(a[0]),
                flags: a[1],
                how: None,
            }),
            libc::SYS_creat => Some(Call::Open {
                path: cwd(a[0]),
                flags: (libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC)
                    .unsigned_abs()
                    .into(),
                how: None,
            }),
            libc::SYS_mkdir => Some(Call::Make {
                path: cwd(a[0]),
                right: AccessFs::MakeDir,
            }),
            libc::SYS_mknod => Some(Call::Make {
                path: cwd(a[0]),
                right: mknod_right(a[1]),
            }),
            libc::SYS_symlink => Some(Call::Make {
                path: cwd(a[1]),
                right: AccessFs::MakeSym,
            }),
            libc::SYS_link => Some(Call::Move {
                old: cwd(a[0]),
                new: cwd(a[1]),
                link: true,
                follow_old: false,
                exchange: false,
                no_replace: true,
            }),
            libc::SYS_unlink => Some(Call::Remove {
                path: cwd(a[0]),
                dir: false,
            }),
            libc::SYS_rmdir => Some(Call::Remove {
                path: cwd(a[0]),
                dir: true,
            }),
            libc::SYS_rename => Some(Call::Move {
                old: cwd(a[0]),
                new: cwd(a[1]),
                link: false,
                follow_old: false,
                exchange: false,
                no_replace: false,
            }),
            libc::SYS_renameat => Some(Call::Move {
                old: at(a[0], a[1]),
                new: at(a[2], a[3]),
                link: false,
                follow_old: false,
                exchange: false,
                no_replace: false,
            }),
            _ => None,
        };
        if call.is_some() {
            return call;
        }
    }
    match nr {
        libc::SYS_openat => Some(Call::Open {
            path: at(a[0], a[1]),
            flags: a[2],
            how: None,
        }),
        libc::SYS_openat2 => Some(Call::Open {
            path: at(a[0], a[1]),
            flags: 0,
            how: Some(a[2]),
        }),
        libc::SYS_mkdirat => Some(Call::Make {
            path: at(a[0], a[1]),
            right: AccessFs::MakeDir,
        }),
        libc::SYS_mknodat => Some(Call::Make {
            path: at(a[0], a[1]),
            right: mknod_right(a[2]),
        }),
        libc::SYS_symlinkat => Some(Call::Make {
            path: at(a[1], a[2]),
            right: AccessFs::MakeSym,
        }),
        libc::SYS_linkat => {
            // `AT_EMPTY_PATH` links a descriptor, not a path: left to
            // Landlock.
            if flag(a[4], libc::AT_EMPTY_PATH) {
                return None;
            }
            Some(Call::Move {
                old: at(a[0], a[1]),
                new: at(a[2], a[3]),
                link: true,
                follow_old: flag(a[4], libc::AT_SYMLINK_FOLLOW),
                exchange: false,
                no_replace: true,
            })
        }
        libc::SYS_unlinkat => Some(Call::Remove {
            path: at(a[0], a[1]),
            dir: flag(a[2], libc::AT_REMOVEDIR),
        }),
        libc::SYS_renameat2 => {
            let f = u32::try_from(a[4] & 0xffff_ffff).unwrap_or(0);
            Some(Call::Move {
                old: at(a[0], a[1]),
                new: at(a[2], a[3]),
                link: false,
                follow_old: false,
                exchange: f & libc::RENAME_EXCHANGE != 0,
                no_replace: f & libc::RENAME_NOREPLACE != 0,
            })
        }
        libc::SYS_truncate => Some(Call::Truncate { path: cwd(a[0]) }),
        _ => None,
    }
}

/// The calling process, seen from the parent.
struct Caller {
    pid: u32,
    mem: std::fs::File,
    /// Its root folder (`/proc/PID/root`): paths resolve in its mount
    /// namespace from there.
    root: OwnedFd,
}

impl Caller {
    fn open(pid: u32) -> Option<Caller> {
        let mem = std::fs::File::open(format!("/proc/{pid}/mem")).ok()?;
        let root = rustix::fs::open(
            format!("/proc/{pid}/root"),
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .ok()?;
        Some(Caller { pid, mem, root })
    }

    /// `len` bytes at `addr` of the caller's memory (fewer where its
    /// mapping ends).
    fn read(&self, addr: u64, len: usize) -> Option<Vec<u8>> {
        use std::os::unix::fs::FileExt;
        let mut buf = vec![0u8; len];
        let n = self.mem.read_at(&mut buf, addr).ok()?;
        buf.truncate(n);
        Some(buf)
    }

    /// The NUL-terminated string at `addr`.
    fn string(&self, addr: u64) -> Option<Vec<u8>> {
        if addr == 0 {
            return None;
        }
        let mut bytes = self.read(addr, MAX_PATH_BYTES)?;
        let end = bytes.iter().position(|b| *b == 0)?;
        bytes.truncate(end);
        Some(bytes)
    }

    /// `path` made absolute in the caller's mount namespace: relative to
    /// its working directory or to the folder `dirfd` is open on.
    fn absolute(&self, arg: PathArg) -> Option<Vec<u8>> {
        let path = self.string(arg.addr)?;
        if path.is_empty() {
            // `AT_EMPTY_PATH` or `ENOENT`: not a path to judge.
            return None;
        }
        if path.first() == Some(&b'/') {
            return Some(path);
        }
        let link = if arg.dirfd == libc::AT_FDCWD {
            format!("/proc/{}/cwd", self.pid)
        } else if arg.dirfd >= 0 {
            format!("/proc/{}/fd/{}", self.pid, arg.dirfd)
        } else {
            return None;
        };
        let base = std::fs::read_link(link).ok()?;
        let base = base.as_os_str().as_bytes();
        // Not a folder of the tree (`pipe:[…]`), or one deleted since.
        if base.first() != Some(&b'/') || base.ends_with(b" (deleted)") {
            return None;
        }
        let mut out = base.to_vec();
        out.push(b'/');
        out.extend_from_slice(&path);
        Some(out)
    }
}

/// Where a path leads, in the caller's mount namespace.
enum Located {
    /// It exists: the object (not followed when a symlink is not to be)
    /// and the folder it is in.
    Existing { object: OwnedFd, parent: OwnedFd },
    /// Its folder exists, not it: the folder and the name.
    New { parent: OwnedFd, name: Vec<u8> },
}

/// `path` split into its folder and last name (trailing slashes dropped);
/// `None` for `/` or a last name `.` or `..`.
fn split(path: &[u8]) -> Option<(&[u8], &[u8])> {
    let mut end = path.len();
    while end > 1 && path[end - 1] == b'/' {
        end -= 1;
    }
    let path = &path[..end];
    let slash = path.iter().rposition(|b| *b == b'/')?;
    let name = &path[slash + 1..];
    if name.is_empty() || name == b"." || name == b".." {
        return None;
    }
    let dir = if slash == 0 {
        &path[..1]
    } else {
        &path[..slash]
    };
    Some((dir, name))
}

fn c(bytes: &[u8]) -> Option<CString> {
    CString::new(bytes).ok()
}

/// Opens `path` (absolute, in the caller's mount namespace) as `O_PATH`
/// beneath `root`: `..` and absolute symlinks stay in the caller's root,
/// magic links (`/proc/…/fd/N`) are not followed.
fn open_in(root: &OwnedFd, path: &[u8], flags: OFlags) -> Result<OwnedFd, Errno> {
    let path = c(path).ok_or(Errno::INVAL)?;
    rustix::fs::openat2(
        root,
        path.as_c_str(),
        OFlags::PATH | OFlags::CLOEXEC | flags,
        Mode::empty(),
        ResolveFlags::IN_ROOT | ResolveFlags::NO_MAGICLINKS,
    )
}

/// The path of `fd` as the caller's mount namespace names it.
fn name_of(fd: &impl AsFd) -> Option<Vec<u8>> {
    let link = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_fd().as_raw_fd())).ok()?;
    Some(link.as_os_str().as_bytes().to_vec())
}

/// Resolves `path` in the caller's mount namespace; `follow`: a symlink
/// as the last component is followed. `None`: not resolvable (a folder
/// on the way missing or not a folder, a magic link, too many links).
fn locate(root: &OwnedFd, path: &[u8], follow: bool) -> Option<Located> {
    let mut path = path.to_vec();
    for _ in 0..=MAX_SYMLINKS {
        let (dir, name) = split(&path)?;
        let parent = open_in(root, dir, OFlags::DIRECTORY).ok()?;
        let name_c = c(name)?;
        let object = match rustix::fs::openat(
            &parent,
            name_c.as_c_str(),
            OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        ) {
            Ok(o) => o,
            Err(Errno::NOENT) => {
                return Some(Located::New {
                    parent,
                    name: name.to_vec(),
                });
            }
            Err(_) => return None,
        };
        let is_link = rustix::fs::fstat(&object)
            .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Symlink);
        if !(is_link && follow) {
            return Some(Located::Existing { object, parent });
        }
        let target = rustix::fs::readlinkat(&object, c"", Vec::new()).ok()?;
        let target = target.as_bytes();
        path = if target.first() == Some(&b'/') {
            target.to_vec()
        } else {
            let mut p = name_of(&parent)?;
            p.push(b'/');
            p.extend_from_slice(target);
            p
        };
    }
    None
}

/// `(dev, ino)` of `fd`.
fn identity(fd: &impl AsFd) -> Option<(u64, u64)> {
    rustix::fs::fstat(fd).ok().map(|st| (st.st_dev, st.st_ino))
}

/// The kind of file `fd` is.
fn kind(fd: &impl AsFd) -> Option<FileType> {
    rustix::fs::fstat(fd)
        .ok()
        .map(|st| FileType::from_raw_mode(st.st_mode))
}

/// The mount `fd` is on.
fn mount_id(fd: &impl AsFd) -> Option<u64> {
    rustix::fs::statx(
        fd,
        c"",
        rustix::fs::AtFlags::EMPTY_PATH,
        rustix::fs::StatxFlags::MNT_ID,
    )
    .ok()
    .map(|st| st.stx_mnt_id)
}

/// True when `fd` is on a read-only mount.
fn read_only(fd: &impl AsFd) -> bool {
    rustix::fs::fstatvfs(fd).is_ok_and(|st| st.f_flag.contains(StatVfsMountFlags::RDONLY))
}

/// The right to make an object of `kind`.
fn make_right(kind: FileType) -> AccessFs {
    match kind {
        FileType::Directory => AccessFs::MakeDir,
        FileType::Symlink => AccessFs::MakeSym,
        FileType::CharacterDevice => AccessFs::MakeChar,
        FileType::BlockDevice => AccessFs::MakeBlock,
        FileType::Fifo => AccessFs::MakeFifo,
        FileType::Socket => AccessFs::MakeSock,
        _ => AccessFs::MakeReg,
    }
}

/// The right to remove an object of `kind`.
fn remove_right(kind: FileType) -> AccessFs {
    if kind == FileType::Directory {
        AccessFs::RemoveDir
    } else {
        AccessFs::RemoveFile
    }
}

/// `parent`'s path joined with `name`.
fn joined(parent: &OwnedFd, name: &[u8]) -> String {
    let mut p = name_of(parent).unwrap_or_else(|| b"?".to_vec());
    if p.last() != Some(&b'/') {
        p.push(b'/');
    }
    p.extend_from_slice(name);
    String::from_utf8_lossy(&p).into_owned()
}

/// The path of an existing object.
fn shown(object: &OwnedFd) -> String {
    String::from_utf8_lossy(&name_of(object).unwrap_or_else(|| b"?".to_vec())).into_owned()
}

/// Judges a run's write-intent calls against its [`WriteRules`].
pub(crate) struct Judge {
    rules: WriteRules,
    blind: bool,
    /// The rights found for folders already walked, by identity: a
    /// folder moves into or out of a writable tree only by a rename that
    /// tree's rules allow, so its rights hold for the run (and a stale
    /// entry could only spoil the count, never a refusal: see the module
    /// doc).
    folders: std::collections::HashMap<(u64, u64), BitFlags<AccessFs>>,
}

impl Judge {
    pub(crate) fn new(rules: WriteRules) -> Judge {
        Judge {
            rules,
            blind: false,
            folders: std::collections::HashMap::new(),
        }
    }

    /// True once a live caller's memory or root could not be opened (a
    /// kernel or a security module forbidding it): its writes outside
    /// were refused by Landlock but not counted, so the run must not
    /// claim they were observed.
    pub(crate) fn blind(&self) -> bool {
        self.blind
    }

    /// The rights Landlock grants on the folder `dir` (and so on what is
    /// made or removed in it): those of every rule met walking up from it
    /// to the root, through mount points, as Landlock walks.
    fn rights_in(&mut self, dir: &OwnedFd) -> Option<BitFlags<AccessFs>> {
        let start = identity(dir)?;
        if let Some(rights) = self.folders.get(&start) {
            return Some(*rights);
        }
        let rights = self.walk_up(dir, start)?;
        if self.folders.len() >= MAX_CACHED_FOLDERS {
            self.folders.clear();
        }
        self.folders.insert(start, rights);
        Some(rights)
    }

    /// The walk of [`Judge::rights_in`] from `dir` (identity `start`).
    fn walk_up(&self, dir: &OwnedFd, start: (u64, u64)) -> Option<BitFlags<AccessFs>> {
        let mut acc = BitFlags::empty();
        let mut here = start;
        let mut owned: Option<OwnedFd> = None;
        for _ in 0..MAX_DEPTH {
            acc |= self.rules.on(here.0, here.1);
            let current = owned.as_ref().unwrap_or(dir);
            let up = rustix::fs::openat(
                current,
                c"..",
                OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .ok()?;
            let above = identity(&up)?;
            if above == here {
                return Some(acc);
            }
            here = above;
            owned = Some(up);
        }
        None
    }

    /// The rights on the existing `object` in `parent`: its own rule's and
    /// its folders'.
    fn rights_on(&mut self, object: &OwnedFd, parent: &OwnedFd) -> Option<BitFlags<AccessFs>> {
        let (dev, ino) = identity(object)?;
        Some(self.rules.on(dev, ino) | self.rights_in(parent)?)
    }

    /// Resolves the deferred rules (the work directory's tmpfs) in the
    /// caller's mount namespace, once.
    fn resolve_deferred(&mut self, caller: &Caller) {
        let deferred = std::mem::take(&mut self.rules.deferred);
        for (path, access) in deferred {
            match open_in(&caller.root, path.as_os_str().as_bytes(), OFlags::empty())
                .ok()
                .and_then(|fd| identity(&fd))
            {
                Some((dev, ino)) => {
                    self.rules.rules.push(Rule { dev, ino, access });
                    // Rights found before this rule existed are stale.
                    self.folders.clear();
                }
                None => self.rules.deferred.push((path, access)),
            }
        }
    }

    /// Judges the write-intent call `nr` with `args` of process `pid`;
    /// `valid` tells whether the notification still stands (the caller
    /// alive, its pid not reused), checked after its memory was read.
    pub(crate) fn judge(
        &mut self,
        pid: u32,
        nr: i64,
        args: [u64; 6],
        valid: impl Fn() -> bool,
    ) -> Verdict {
        let Some(call) = decode(nr, args) else {
            return Verdict::Continue;
        };
        let Some(caller) = Caller::open(pid) else {
            if valid() {
                self.blind = true;
            }
            return Verdict::Continue;
        };
        if !self.rules.deferred.is_empty() {
            self.resolve_deferred(&caller);
        }
        let verdict = self.judge_call(&caller, call);
        // The pid may have been reused between the notification and the
        // opening of its /proc files: then nothing read means anything.
        if !valid() {
            return Verdict::Continue;
        }
        verdict.unwrap_or(Verdict::Continue)
    }

    fn judge_call(&mut self, caller: &Caller, call: Call) -> Option<Verdict> {
        match call {
            Call::Open { path, flags, how } => self.open(caller, path, flags, how),
            Call::Make { path, right } => {
                let abs = caller.absolute(path)?;
                match locate(&caller.root, &abs, false)? {
                    // EEXIST, from the kernel.
                    Located::Existing { .. } => None,
                    Located::New { parent, name } => {
                        let have = self.rights_in(&parent)?;
                        self.refuse_unless(have, right.into(), &parent, || joined(&parent, &name))
                    }
                }
            }
            Call::Remove { path, dir } => {
                let abs = caller.absolute(path)?;
                match locate(&caller.root, &abs, false)? {
                    Located::New { .. } => None,
                    Located::Existing { object, parent } => {
                        let k = kind(&object)?;
                        // ENOTDIR or EISDIR, from the kernel.
                        if (k == FileType::Directory) != dir {
                            return None;
                        }
                        let have = self.rights_in(&parent)?;
                        self.refuse_unless(have, remove_right(k).into(), &parent, || shown(&object))
                    }
                }
            }
            Call::Truncate { path } => {
                let abs = caller.absolute(path)?;
                match locate(&caller.root, &abs, true)? {
                    Located::New { .. } => None,
                    Located::Existing { object, parent } => {
                        if kind(&object)? != FileType::RegularFile {
                            return None;
                        }
                        let have = self.rights_on(&object, &parent)?;
                        self.refuse_unless(have, AccessFs::Truncate.into(), &object, || {
                            shown(&object)
                        })
                    }
                }
            }
            Call::Move {
                old,
                new,
                link,
                follow_old,
                exchange,
                no_replace,
            } => self.moved(caller, old, new, link, follow_old, exchange, no_replace),
        }
    }

    /// `Refuse` unless `have` holds `need`; the errno is `EROFS` when
    /// `on` is on a read-only mount (the kernel checks that first), else
    /// Landlock's `EACCES`.
    fn refuse_unless(
        &self,
        have: BitFlags<AccessFs>,
        need: BitFlags<AccessFs>,
        on: &OwnedFd,
        path: impl FnOnce() -> String,
    ) -> Option<Verdict> {
        if have.contains(need) {
            return None;
        }
        Some(Verdict::Refuse {
            path: path(),
            errno: if read_only(on) {
                libc::EROFS
            } else {
                libc::EACCES
            },
        })
    }

    fn open(
        &mut self,
        caller: &Caller,
        path: PathArg,
        flags: u64,
        how: Option<u64>,
    ) -> Option<Verdict> {
        let flags = match how {
            // `struct open_how` starts with the 64-bit flags.
            Some(addr) => {
                let bytes = caller.read(addr, 8)?;
                u64::from_ne_bytes(bytes.try_into().ok()?)
            }
            None => flags,
        };
        let has =
            |f: libc::c_int| flags & u64::from(f.unsigned_abs()) == u64::from(f.unsigned_abs());
        let mode = flags & u64::from(libc::O_ACCMODE.unsigned_abs());
        let write = mode == u64::from(libc::O_WRONLY.unsigned_abs())
            || mode == u64::from(libc::O_RDWR.unsigned_abs());
        let create = has(libc::O_CREAT);
        let exclusive = create && has(libc::O_EXCL);
        let truncate = has(libc::O_TRUNC);
        if !(write || create || truncate) {
            return None;
        }
        let abs = caller.absolute(path)?;
        if has(libc::O_TMPFILE) {
            // An unnamed file in the folder `path`: written there.
            let dir = open_in(&caller.root, &abs, OFlags::DIRECTORY).ok()?;
            let have = self.rights_in(&dir)?;
            return self.refuse_unless(have, AccessFs::WriteFile.into(), &dir, || shown(&dir));
        }
        let follow = !has(libc::O_NOFOLLOW) && !exclusive;
        match locate(&caller.root, &abs, follow)? {
            Located::New { parent, name } => {
                // ENOENT, from the kernel.
                if !create {
                    return None;
                }
                let have = self.rights_in(&parent)?;
                self.refuse_unless(have, AccessFs::MakeReg.into(), &parent, || {
                    joined(&parent, &name)
                })
            }
            Located::Existing { object, parent } => {
                let k = kind(&object)?;
                // EEXIST, EISDIR or ELOOP, from the kernel.
                if exclusive || k == FileType::Directory || k == FileType::Symlink {
                    return None;
                }
                if k == FileType::CharacterDevice
                    && name_of(&object)
                        .is_some_and(|n| UNCOUNTED_DEVICES.iter().any(|d| d.as_bytes() == n))
                {
                    return None;
                }
                let mut need = BitFlags::empty();
                if write {
                    need |= AccessFs::WriteFile;
                }
                if truncate && k == FileType::RegularFile {
                    need |= AccessFs::Truncate;
                }
                if need.is_empty() {
                    return None;
                }
                let have = self.rights_on(&object, &parent)?;
                self.refuse_unless(have, need, &object, || shown(&object))
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn moved(
        &mut self,
        caller: &Caller,
        old: PathArg,
        new: PathArg,
        link: bool,
        follow_old: bool,
        exchange: bool,
        no_replace: bool,
    ) -> Option<Verdict> {
        let old_abs = caller.absolute(old)?;
        let new_abs = caller.absolute(new)?;
        // The source must exist (else ENOENT, from the kernel).
        let Located::Existing {
            object: source,
            parent: from,
        } = locate(&caller.root, &old_abs, follow_old)?
        else {
            return None;
        };
        let source_kind = kind(&source)?;
        let (to, target_kind, target_name) = match locate(&caller.root, &new_abs, false)? {
            Located::New { parent, name } => {
                if exchange {
                    return None;
                }
                (parent, None, name)
            }
            Located::Existing { object, parent } => {
                if link || no_replace {
                    // EEXIST, from the kernel.
                    return None;
                }
                let name = split(&new_abs).map(|(_, n)| n.to_vec()).unwrap_or_default();
                let k = kind(&object)?;
                (parent, Some(k), name)
            }
        };
        // Across mounts the kernel answers EXDEV before Landlock is asked.
        if mount_id(&from)? != mount_id(&to)? {
            return None;
        }
        let mut need_from: BitFlags<AccessFs> = BitFlags::empty();
        let mut need_to: BitFlags<AccessFs> = make_right(source_kind).into();
        if !link {
            need_from |= remove_right(source_kind);
        }
        if let Some(k) = target_kind {
            need_to |= remove_right(k);
            if exchange {
                need_from |= make_right(k);
            }
        }
        let reparent = identity(&from)? != identity(&to)?;
        let have_from = self.rights_in(&from)?;
        let have_to = self.rights_in(&to)?;
        let refer = if reparent {
            BitFlags::from(AccessFs::Refer)
        } else {
            BitFlags::empty()
        };
        if have_from.contains(need_from | refer) && have_to.contains(need_to | refer) {
            return None;
        }
        // The kernel checks the mount is writable first; Landlock prefers
        // EACCES to EXDEV (a refusal of reparenting alone).
        let errno = if read_only(&to) {
            libc::EROFS
        } else if have_from.contains(need_from) && have_to.contains(need_to) {
            libc::EXDEV
        } else {
            libc::EACCES
        };
        let path = if have_to.contains(need_to | refer) {
            shown(&source)
        } else {
            joined(&to, &target_name)
        };
        Some(Verdict::Refuse { path, errno })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_splits_into_its_folder_and_last_name() {
        assert_eq!(split(b"/etc/x"), Some((&b"/etc"[..], &b"x"[..])));
        assert_eq!(split(b"/x//"), Some((&b"/"[..], &b"x"[..])));
        assert_eq!(split(b"/a/b/c/"), Some((&b"/a/b"[..], &b"c"[..])));
        assert_eq!(split(b"/"), None);
        assert_eq!(split(b"/a/.."), None);
    }

    #[test]
    fn every_write_call_is_decoded_and_named() {
        for (nr, _) in write_call_rules() {
            assert_ne!(call_name(nr), "write", "{nr}");
            assert!(is_write_call(nr));
            // `linkat` with `AT_EMPTY_PATH` aside, every call decodes.
            assert!(decode(nr, [0; 6]).is_some(), "{}", call_name(nr));
        }
        assert!(!is_write_call(libc::SYS_read));
    }
}
