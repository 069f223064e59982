//! The small system facts and conversions every layer shares: the
//! process's ids, C strings of paths, whether the kernel offers seccomp.
//! A leaf module (it imports no other module of the crate but the error),
//! so the sandbox, the work dir, the runner and the probe can all use it
//! without an import circle.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::error::ExecError;

/// A C string of `path`.
pub(crate) fn c_path(path: &Path) -> Result<CString, ExecError> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| {
        ExecError::InvalidInput(format!("path {} contains a NUL byte", path.display()))
    })
}

/// The effective user id of this process.
pub(crate) fn euid() -> u32 {
    // SAFETY: `geteuid` has no preconditions and cannot fail.
    #[allow(unsafe_code)]
    unsafe {
        libc::geteuid()
    }
}

/// The effective group id of this process.
pub(crate) fn egid() -> u32 {
    // SAFETY: `getegid` has no preconditions and cannot fail.
    #[allow(unsafe_code)]
    unsafe {
        libc::getegid()
    }
}

/// The kernel offers seccomp filters (`Seccomp:` in `/proc/self/status`).
pub(crate) fn seccomp_supported() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .map(|s| s.lines().any(|l| l.starts_with("Seccomp:")))
        .unwrap_or(false)
}
