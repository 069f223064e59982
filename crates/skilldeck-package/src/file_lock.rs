//! Exclusive file locks: the install lock of a root and the environment
//! store's lock take them the same way.

use std::fs;
use std::path::Path;

use crate::error::Error;

/// The file at `path` (created if missing, never truncated) with an
/// exclusive lock held, waiting for another holder: the lock lasts while
/// the returned handle lives. One rule for the install and the
/// environment store's locks.
pub(crate) fn exclusive(path: &Path) -> Result<fs::File, Error> {
    let file = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|e| Error::io(path, e))?;
    file.lock().map_err(|e| Error::io(path, e))?;
    Ok(file)
}
