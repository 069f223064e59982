//! The small system facts and conversions every layer shares: the
//! process's ids, C strings of paths, close-on-exec pipes, whether the
//! kernel offers seccomp. A leaf module (it imports no other module of the
//! crate but the error), so the backends, the sandbox, the work dir, the
//! spawner and the probe can all use it without an import circle.

use std::ffi::CString;
#[cfg(target_os = "linux")]
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

#[cfg(target_os = "linux")]
use rustix::pipe::PipeFlags;

use crate::error::ExecError;

/// A C string of `path`.
pub(crate) fn c_path(path: &Path) -> Result<CString, ExecError> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| {
        ExecError::InvalidInput(format!("path {} contains a NUL byte", path.display()))
    })
}

/// The effective user id of this process.
pub(crate) fn euid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// The effective group id of this process.
pub(crate) fn egid() -> u32 {
    rustix::process::getegid().as_raw()
}

/// A pipe whose both ends are close-on-exec: `(read, write)`.
#[cfg(target_os = "linux")]
pub(crate) fn cloexec_pipe() -> Result<(OwnedFd, OwnedFd), ExecError> {
    rustix::pipe::pipe_with(PipeFlags::CLOEXEC)
        .map_err(|e| ExecError::io("creating a pipe", std::io::Error::from(e)))
}

/// The kernel offers seccomp filters (`Seccomp:` in `/proc/self/status`).
pub(crate) fn seccomp_supported() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .map(|s| s.lines().any(|l| l.starts_with("Seccomp:")))
        .unwrap_or(false)
}
