//! Every limit a package is held to, as named constants and one options
//! struct.

/// Most files in a package (or a skill folder packed or installed).
pub const MAX_PACKAGE_FILES: usize = 512;

/// Most entries of any kind (files, folders) an archive may hold; counted
/// before anything else is read where the format allows (zip).
pub const MAX_PACKAGE_ENTRIES: usize = 4 * MAX_PACKAGE_FILES;

/// Most unpacked bytes in a package (16 MiB).
pub const MAX_PACKAGE_BYTES: u64 = 16 * 1024 * 1024;

/// Highest ratio of unpacked bytes to compressed bytes read, checked as the
/// archive streams (so a bomb stops early).
pub const MAX_COMPRESSION_RATIO: u64 = 200;

/// The ratio bound applies once this many bytes were unpacked: a small
/// file of repeated text may compress far better than the bound.
pub const RATIO_FLOOR_BYTES: u64 = 1024 * 1024;

/// Longest entry path accepted (bytes).
pub const MAX_ENTRY_PATH_BYTES: usize = 1024;

/// Deepest folder nesting in a package (`a/b/c.md` is depth 3).
pub const MAX_ENTRY_DEPTH: usize = 16;

/// The modification time every packed entry carries: 2000-01-01T00:00:00Z
/// (zip's DOS dates cannot go before 1980, so not the Unix epoch).
pub const PACKAGE_MTIME: u64 = 946_684_800;

/// The limits a package is checked against (defaults: the constants).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PackageLimits {
    /// Most files.
    pub max_files: usize,
    /// Most entries of any kind.
    pub max_entries: usize,
    /// Most unpacked bytes.
    pub max_bytes: u64,
    /// Highest unpacked/compressed ratio (beyond [`RATIO_FLOOR_BYTES`]).
    pub max_ratio: u64,
}

impl Default for PackageLimits {
    fn default() -> Self {
        PackageLimits {
            max_files: MAX_PACKAGE_FILES,
            max_entries: MAX_PACKAGE_ENTRIES,
            max_bytes: MAX_PACKAGE_BYTES,
            max_ratio: MAX_COMPRESSION_RATIO,
        }
    }
}

/// Largest signature file read (`PACKAGE.sig`; an ed25519 one is about
/// 300 bytes).
pub const MAX_SIGNATURE_BYTES: usize = 16 * 1024;

/// Largest allowed-signers file read (1 MiB: thousands of keys).
pub const MAX_ALLOWED_SIGNERS_BYTES: usize = 1024 * 1024;

/// Largest private key file read.
pub const MAX_SIGNING_KEY_BYTES: usize = 64 * 1024;
