//! The work directory's size-capped tmpfs (Linux): prepared before the
//! fork from the run's [`WorkDir`], mounted by the sandbox's init inside
//! its mount namespace, where it hides the host folder, and added to the
//! worker's Landlock ruleset (it did not exist when the ruleset was
//! built).

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;

use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;
use rustix::mount::MountFlags;
use rustix::process::{Gid, Uid};

use crate::error::ExecError;
use crate::policy::WORKDIR_INODES;
use crate::sys;
use crate::workdir::WorkDir;

/// The work dir's tmpfs, prepared before the fork and mounted by the
/// sandbox's init inside its mount namespace ([`TmpfsMount::mount`]).
pub(crate) struct TmpfsMount {
    target: CString,
    options: CString,
    work: CString,
    tmp: CString,
    uid: u32,
    gid: u32,
    /// A second descriptor of the worker's Landlock ruleset: the init adds
    /// the tmpfs (which did not exist when the ruleset was built) to it.
    ruleset: Option<OwnedFd>,
    access: u64,
}

/// `struct landlock_path_beneath_attr` (packed, as the kernel reads it).
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// `LANDLOCK_RULE_PATH_BENEATH`.
const LANDLOCK_RULE_PATH_BENEATH: i32 = 1;

impl TmpfsMount {
    /// A tmpfs of `bytes` on `dir.data` owned by `uid:gid`; `ruleset` (a
    /// clone of the worker's Landlock ruleset) gets a rule granting
    /// `access` beneath it.
    pub(crate) fn new(
        dir: &WorkDir,
        bytes: u64,
        uid: u32,
        gid: u32,
        ruleset: Option<OwnedFd>,
        access: u64,
    ) -> Result<TmpfsMount, ExecError> {
        let options =
            format!("size={bytes},nr_inodes={WORKDIR_INODES},mode=0700,uid={uid},gid={gid}");
        Ok(TmpfsMount {
            target: sys::c_path(&dir.data)?,
            options: sys::c_path(Path::new(&options))?,
            work: sys::c_path(&dir.work)?,
            tmp: sys::c_path(&dir.tmp)?,
            uid,
            gid,
            ruleset,
            access,
        })
    }

    /// Mounts the tmpfs, creates `work` and `tmp` in it and adds it to the
    /// Landlock ruleset. Runs in the init after the fork: system calls on
    /// prepared data only (every path is a `CStr` made before the fork).
    /// Returns the errno on failure.
    /// True when the tmpfs is full (no block left for the script: its
    /// writes failed with `ENOSPC`). After the fork: one system call.
    pub(crate) fn is_full(&self) -> bool {
        rustix::fs::statvfs(self.target.as_c_str()).is_ok_and(|st| st.f_bavail == 0)
    }

    pub(crate) fn mount(&self) -> Result<(), i32> {
        let err = |e: Errno| e.raw_os_error();
        rustix::mount::mount(
            c"tmpfs",
            self.target.as_c_str(),
            c"tmpfs",
            MountFlags::NOSUID | MountFlags::NODEV,
            Some(self.options.as_c_str()),
        )
        .map_err(err)?;
        let owner = (Some(Uid::from_raw(self.uid)), Some(Gid::from_raw(self.gid)));
        for d in [&self.work, &self.tmp] {
            rustix::fs::mkdir(d.as_c_str(), Mode::from_raw_mode(0o700)).map_err(err)?;
            rustix::fs::chown(d.as_c_str(), owner.0, owner.1).map_err(err)?;
        }
        // The spawner set the cwd to the host folder now hidden under
        // the tmpfs; the worker (forked next) must start in the tmpfs,
        // or relative writes would land on the host's disk.
        rustix::process::chdir(self.work.as_c_str()).map_err(err)?;
        if let Some(ruleset) = &self.ruleset {
            let dir = rustix::fs::open(
                self.target.as_c_str(),
                OFlags::PATH | OFlags::CLOEXEC | OFlags::DIRECTORY,
                Mode::empty(),
            )
            .map_err(err)?;
            let attr = PathBeneathAttr {
                allowed_access: self.access,
                parent_fd: dir.as_raw_fd(),
            };
            // SAFETY: the landlock_add_rule system call (which rustix does
            // not wrap) with a descriptor we hold and a packed struct on
            // the stack that outlives the call.
            #[allow(unsafe_code)]
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_landlock_add_rule,
                    ruleset.as_raw_fd(),
                    LANDLOCK_RULE_PATH_BENEATH,
                    std::ptr::addr_of!(attr),
                    0,
                )
            };
            if rc != 0 {
                return Err(io::Error::last_os_error()
                    .raw_os_error()
                    .unwrap_or(Errno::IO.raw_os_error()));
            }
        }
        Ok(())
    }
}
