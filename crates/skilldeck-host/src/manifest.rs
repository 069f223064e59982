//! The per-file manifest of a skill: each file's path, size and
//! `sha256:<lowercase hex>` digest, the form the MCP Skills extension
//! publishes. The digest itself is the core's [`skilldeck::digest`] (the
//! one place a SHA-256 is computed).
//!
//! Bytes are read through the core's safe [`skilldeck::read_resource`], so
//! a digest covers exactly what a read returns. Digests are kept in an LRU
//! keyed by the file's path and checked against its [`FileStamp`]: a second
//! manifest reads nothing that did not change, and an edited file is read
//! again.

use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use lru::LruCache;
use skilldeck::digest::sha256_digest;
use skilldeck::{FileStamp, Skill};

/// One file of a skill, as a manifest lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestFile {
    /// The path relative to the skill folder (`/`-separated).
    pub path: String,
    /// Its size in bytes (of the bytes a read returns).
    pub size: u64,
    /// `sha256:` and the lowercase hex SHA-256 of those bytes.
    pub digest: Arc<str>,
}

#[derive(Debug, Clone)]
struct Entry {
    stamp: FileStamp,
    digest: Arc<str>,
    size: u64,
}

/// Digests of skill files, cached by path and stamp. Thread-safe.
#[derive(Debug)]
pub struct Manifest {
    digests: Mutex<LruCache<PathBuf, Entry>>,
}

impl Manifest {
    /// A manifest cache of at most `capacity` files (at least 1).
    pub fn new(capacity: usize) -> Self {
        let capacity = NonZeroUsize::new(capacity).unwrap_or(NonZeroUsize::MIN);
        Manifest {
            digests: Mutex::new(LruCache::new(capacity)),
        }
    }

    fn lock(&self) -> MutexGuard<'_, LruCache<PathBuf, Entry>> {
        // Each critical section leaves the cache consistent.
        self.digests.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Files whose digests are cached now.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// True when no digest is cached.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    /// The manifest line of the file at `path` (relative to the skill
    /// folder): from the cache when the file's stamp is unchanged, else read
    /// through the core's safe read and digested.
    pub fn file(&self, skill: &Skill, path: &str) -> Result<ManifestFile, skilldeck::Error> {
        let full = skill.real_dir().join(path);
        let stamp = FileStamp::read(&full);
        if let Some(stamp) = stamp
            && let Some(entry) = self.lock().get(&full)
            && entry.stamp == stamp
        {
            return Ok(ManifestFile {
                path: path.to_owned(),
                size: entry.size,
                digest: Arc::clone(&entry.digest),
            });
        }
        let resource = skilldeck::read_resource(skill, path)?;
        let file = ManifestFile::of_bytes(path, resource.bytes());
        if let Some(stamp) = stamp {
            self.lock().put(
                full,
                Entry {
                    stamp,
                    digest: Arc::clone(&file.digest),
                    size: file.size,
                },
            );
        }
        Ok(file)
    }
}

impl ManifestFile {
    /// The manifest line of bytes already read (not cached).
    pub fn of_bytes(path: &str, bytes: &[u8]) -> ManifestFile {
        ManifestFile {
            path: path.to_owned(),
            size: bytes.len() as u64,
            digest: Arc::from(sha256_digest(bytes)),
        }
    }
}
