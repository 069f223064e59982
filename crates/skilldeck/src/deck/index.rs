//! The optional on-disk metadata index: a warm start beyond the I/O floor.
//!
//! For each `SKILL.md` discovery loaded, the index keeps what the deck keeps
//! of its frontmatter (name, description, host fields), keyed by the file's
//! path and its `(inode, size, mtime, ctime)`. On the next discovery, a skill whose file still has the same stamp is
//! rebuilt from the index after one `stat`, instead of open, read, parse and
//! close. Anything doubtful is re-read:
//!
//! - the file is one header line (magic, format version, skilldeck version,
//!   a key of the validation options, a checksum of the body) and a JSON body;
//!   a missing, corrupt, truncated or foreign file is ignored (and rewritten);
//! - only skills that loaded without errors are stored;
//! - an entry whose `ctime` is within [`RACY_WINDOW`] (configurable) of the
//!   moment the index is written is not stored (a change in the same clock
//!   tick could hide);
//! - the index is written to a temporary file and renamed into place.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::fs::stamp::FileStamp;
use crate::skill::{HostFields, Skill};
use crate::spec::options::ValidationOptions;

/// First bytes of an index file.
pub const MAGIC: &str = "skilldeck-index";
/// Format version; a file of another version is ignored.
pub const FORMAT_VERSION: u32 = 6;
/// Entries changed this close to the time the index is written are not stored.
pub const RACY_WINDOW: Duration = Duration::from_secs(2);
/// Largest index file read (bytes); a larger one is ignored.
pub const MAX_INDEX_BYTES: u64 = 256 * 1024 * 1024;

/// What is stored for one skill: what the deck keeps of its frontmatter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Entry {
    stamp: FileStamp,
    name: Option<String>,
    description: Option<String>,
    host: HostFields,
}

impl Entry {
    fn of_skill(stamp: FileStamp, skill: &Skill) -> Self {
        Entry {
            stamp,
            name: Some(skill.name.clone()),
            description: Some(skill.description.clone()),
            host: skill.host.clone(),
        }
    }
}

/// A skill's frontmatter as the index holds it: the fields the deck keeps.
#[derive(Debug, Clone, PartialEq)]
pub struct Cached {
    /// `name`.
    pub name: Option<String>,
    /// `description`.
    pub description: Option<String>,
    /// The host fields.
    pub host: HostFields,
}

/// Counters of one discovery's use of the index.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IndexStats {
    /// Skills rebuilt from the index after one `stat`.
    pub hits: usize,
    /// Skills read and parsed (new, changed, or not in the index).
    pub misses: usize,
}

/// An index loaded for one discovery, and what this discovery adds to it.
#[derive(Debug)]
pub struct MetadataIndex {
    path: PathBuf,
    key: String,
    /// Entries from the file; a hit moves its entry out (no copy).
    entries: Mutex<HashMap<PathBuf, Entry>>,
    /// How many entries the file held.
    loaded: usize,
    /// The stamp of every `SKILL.md` this discovery loaded.
    stamps: Mutex<HashMap<PathBuf, FileStamp>>,
    hits: AtomicUsize,
    misses: AtomicUsize,
    /// Why the file on disk was not used, if it was not.
    ignored: Option<String>,
    racy_window: Duration,
}

/// The key of everything that changes how a `SKILL.md` is parsed.
fn options_key(options: &ValidationOptions) -> String {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    env!("CARGO_PKG_VERSION").hash(&mut h);
    format!("{:?}", options.mode).hash(&mut h);
    format!("{:?}", options.charset).hash(&mut h);
    options.allowed_fields.hash(&mut h);
    options.max_skill_md_bytes.hash(&mut h);
    options.lints.hash(&mut h);
    format!("{:016x}", h.finish())
}

fn checksum(body: &[u8]) -> String {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    body.hash(&mut h);
    format!("{:016x}", h.finish())
}

impl MetadataIndex {
    /// Loads the index at `path` for discoveries with `options`. A missing,
    /// corrupt or stale file gives an empty index ([`MetadataIndex::ignored`]
    /// says why); it never fails.
    pub fn load(path: &Path, options: &ValidationOptions, racy_window: Duration) -> MetadataIndex {
        let key = options_key(options);
        let (entries, ignored) = match Self::read(path, &key) {
            Ok(entries) => (entries, None),
            Err(why) => (HashMap::new(), Some(why)),
        };
        MetadataIndex {
            path: path.to_path_buf(),
            key,
            loaded: entries.len(),
            entries: Mutex::new(entries),
            stamps: Mutex::new(HashMap::new()),
            hits: AtomicUsize::new(0),
            misses: AtomicUsize::new(0),
            ignored,
            racy_window,
        }
    }

    fn read(path: &Path, key: &str) -> Result<HashMap<PathBuf, Entry>, String> {
        use std::io::Read;
        let file = std::fs::File::open(path).map_err(|e| format!("not read: {e}"))?;
        let mut bytes = Vec::new();
        file.take(MAX_INDEX_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("not read: {e}"))?;
        if bytes.len() as u64 > MAX_INDEX_BYTES {
            return Err("too large".to_owned());
        }
        let newline = memchr::memchr(b'\n', &bytes).ok_or("no header")?;
        let header = std::str::from_utf8(&bytes[..newline]).map_err(|_| "bad header")?;
        let body = &bytes[newline + 1..];
        let expected = format!("{MAGIC} {FORMAT_VERSION} {key} {}", checksum(body));
        if header != expected {
            return Err("stale or corrupt (header or checksum differs)".to_owned());
        }
        let list: Vec<(PathBuf, Entry)> =
            serde_json::from_slice(body).map_err(|e| format!("corrupt: {e}"))?;
        Ok(list.into_iter().collect())
    }

    /// Why the file on disk was not used (`None` when it was): missing,
    /// corrupt, or written for other options or another skilldeck version.
    pub fn ignored(&self) -> Option<&str> {
        self.ignored.as_deref()
    }

    /// What the index holds for `skill_md` if it holds it with this stamp
    /// (the caller's one `stat`, taken before any read).
    pub fn lookup(&self, skill_md: &Path, stamp: FileStamp) -> Option<Cached> {
        let entry = lock(&self.entries).remove(skill_md)?;
        if stamp != entry.stamp {
            return None;
        }
        self.hits.fetch_add(1, Ordering::Relaxed);
        lock(&self.stamps).insert(skill_md.to_path_buf(), stamp);
        Some(Cached {
            name: entry.name,
            description: entry.description,
            host: entry.host,
        })
    }

    /// Records that `skill_md` was read and parsed. `stamp` must be taken
    /// before the read: if the file changed in between, the stored stamp is
    /// the older one and the next run reads the file again.
    pub fn record(&self, skill_md: &Path, stamp: FileStamp) {
        self.misses.fetch_add(1, Ordering::Relaxed);
        lock(&self.stamps).insert(skill_md.to_path_buf(), stamp);
    }

    /// Hits and misses so far.
    pub fn stats(&self) -> IndexStats {
        IndexStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
        }
    }

    /// Writes an entry for each of `skills` (the discovery's result; skills
    /// no longer found are dropped), atomically. Does nothing when every
    /// skill came from the index and the file held no others.
    pub fn save<'a>(&self, skills: impl IntoIterator<Item = &'a Skill>) -> Result<(), Error> {
        let stats = self.stats();
        if self.ignored.is_none() && stats.misses == 0 && stats.hits == self.loaded {
            return Ok(());
        }
        let now_ns = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i128::try_from(d.as_nanos()).unwrap_or(i128::MAX));
        let racy = i128::try_from(self.racy_window.as_nanos()).unwrap_or(i128::MAX);
        let stamps = lock(&self.stamps);
        let mut list: Vec<(&Path, Entry)> = skills
            .into_iter()
            .filter_map(|skill| {
                let stamp = *stamps.get(&skill.skill_md)?;
                (now_ns - stamp.ctime_ns() > racy)
                    .then(|| (skill.skill_md.as_path(), Entry::of_skill(stamp, skill)))
            })
            .collect();
        list.sort_by(|a, b| a.0.cmp(b.0));
        let body = serde_json::to_vec(&list)
            .map_err(|e| Error::io(&self.path, std::io::Error::other(e)))?;
        let mut bytes = format!(
            "{MAGIC} {FORMAT_VERSION} {} {}\n",
            self.key,
            checksum(&body)
        )
        .into_bytes();
        bytes.extend_from_slice(&body);
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let tmp = self
            .path
            .with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&tmp, &bytes).map_err(|e| Error::io(&tmp, e))?;
        std::fs::rename(&tmp, &self.path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            Error::io(&self.path, e)
        })
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// The default index file for a set of roots: under
/// `$XDG_CACHE_HOME/skilldeck/index/` (else `~/.cache/...`), named by a hash
/// of the roots, so each set of roots keeps its own index.
pub fn default_path<'a>(roots: impl IntoIterator<Item = &'a Path>) -> PathBuf {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for r in roots {
        r.hash(&mut h);
    }
    crate::fs::dirs::cache_dir()
        .join("index")
        .join(format!("{:016x}.idx", h.finish()))
}
