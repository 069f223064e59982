//! [`FileStamp`]: one file's identity and version, from one `stat`. Every
//! cache keyed by a file (the metadata index, the content cache, the digest
//! manifest) compares stamps to know whether the file changed.

use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// What identifies one version of a file: device, inode, size, and the
/// modification and status-change times in nanoseconds. An edit, a rename
/// over the file or a `touch` each change it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FileStamp {
    dev: u64,
    ino: u64,
    size: u64,
    mtime_ns: i128,
    ctime_ns: i128,
}

impl FileStamp {
    /// The stamp of already fetched metadata.
    pub fn of(meta: &Metadata) -> FileStamp {
        FileStamp {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
            ctime_ns: i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
        }
    }

    /// The stamp of `path` (symlinks followed); `None` when it cannot be
    /// read.
    pub fn read(path: &Path) -> Option<FileStamp> {
        std::fs::metadata(path).ok().map(|m| FileStamp::of(&m))
    }

    /// The file's size in bytes when stamped.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The modification time, in nanoseconds since the epoch.
    pub fn mtime_ns(&self) -> i128 {
        self.mtime_ns
    }

    /// The status-change time, in nanoseconds since the epoch.
    pub fn ctime_ns(&self) -> i128 {
        self.ctime_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rewrite_changes_the_stamp() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = tmp.path().join("f");
        std::fs::write(&path, "one").unwrap_or_else(|e| panic!("{e}"));
        let first = FileStamp::read(&path);
        std::fs::write(&path, "three").unwrap_or_else(|e| panic!("{e}"));
        let second = FileStamp::read(&path);
        assert!(first.is_some());
        assert_ne!(first, second);
        assert_eq!(second.map(|s| s.size()), Some(5));
        assert_eq!(FileStamp::read(&tmp.path().join("missing")), None);
    }
}
