//! Content cache: activations kept by (skill, arguments), least recently
//! used dropped first.
//!
//! A hit costs one hash of the `SKILL.md` path and the argument string, one
//! lookup and one `stat` of the `SKILL.md`: when its (mtime, size, inode,
//! device) differs from when it was read, the skill is activated again
//! (counted as a miss and a reload). Only `SKILL.md` is watched: a resource
//! file added later shows in the listing after the entry is reloaded,
//! evicted or [invalidated](ContentCache::invalidate).
//!
//! Entries are [`CachedActivation`]s behind an [`Arc`]: each rendering is
//! built on first use and kept, so a hit never re-renders, and a caller can
//! render after releasing whatever lock guards the cache.
//!
//! Bounded by entry count ([`CONTENT_CACHE_CAPACITY`]) and by the bytes of
//! the bodies kept ([`CONTENT_CACHE_MAX_BYTES`]). Not thread-safe by itself
//! (`&mut self`); share it behind a `Mutex`.

use std::hash::{BuildHasher, RandomState};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use lru::LruCache;

use skilldeck::limits::{CONTENT_CACHE_CAPACITY, CONTENT_CACHE_MAX_BYTES};
use skilldeck::{Activation, ActivationFormat, ActivationOptions, Error, FileStamp, Skill};

/// An activation with its renderings, each built once on first use.
#[derive(Debug)]
pub struct CachedActivation {
    activation: Activation,
    rendered: [OnceLock<String>; 3],
}

impl CachedActivation {
    /// Wraps `activation`; nothing is rendered yet.
    pub fn new(activation: Activation) -> Self {
        CachedActivation {
            activation,
            rendered: [OnceLock::new(), OnceLock::new(), OnceLock::new()],
        }
    }

    /// The activation.
    pub fn activation(&self) -> &Activation {
        &self.activation
    }

    /// The activation in `format`, rendered on the first call only.
    pub fn rendered(&self, format: ActivationFormat) -> &str {
        let slot = match format {
            ActivationFormat::Xml => &self.rendered[0],
            ActivationFormat::Text => &self.rendered[1],
            ActivationFormat::Json => &self.rendered[2],
        };
        slot.get_or_init(|| self.activation.render(format))
    }
}

#[derive(Debug)]
struct Entry {
    skill_md: PathBuf,
    arguments: Box<str>,
    skill: Box<str>,
    stamp: FileStamp,
    bytes: usize,
    content: Arc<CachedActivation>,
}

/// Bounds and activation limits of a [`ContentCache`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContentCacheOptions {
    /// Most entries kept; 0 disables caching (every call activates).
    pub capacity: usize,
    /// Most body bytes kept; a body larger than this is never cached.
    pub max_bytes: usize,
    /// Limits of each activation.
    pub activation: ActivationOptions,
}

impl Default for ContentCacheOptions {
    fn default() -> Self {
        ContentCacheOptions {
            capacity: CONTENT_CACHE_CAPACITY,
            max_bytes: CONTENT_CACHE_MAX_BYTES,
            activation: ActivationOptions::default(),
        }
    }
}

impl ContentCacheOptions {
    /// Options from a config file's `[cache]` (and `[validate]`'s SKILL.md
    /// size cap); unset values keep their defaults.
    pub fn from_config(config: &skilldeck::Config) -> Self {
        let mut options = ContentCacheOptions::default();
        if let Some(capacity) = config.cache.capacity {
            options.capacity = capacity;
        }
        if let Some(max) = config.validate.max_skill_md_bytes {
            options.activation.max_skill_md_bytes = max;
        }
        options
    }
}

/// Counters since the cache was made (not reset by [`ContentCache::clear`]).
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
pub struct CacheStats {
    /// Answered from the cache.
    pub hits: u64,
    /// Activated from disk (reloads included).
    pub misses: u64,
    /// Misses because `SKILL.md` changed (or vanished) since it was cached.
    pub reloads: u64,
    /// Entries dropped to stay within capacity or the byte budget.
    pub evictions: u64,
    /// Entries now.
    pub entries: usize,
    /// Body bytes now.
    pub bytes: usize,
    /// `hits / (hits + misses)`, 0 before the first call.
    pub hit_rate: f64,
}

/// Activations by (`SKILL.md` path, argument string). See the module
/// documentation.
#[derive(Debug)]
pub struct ContentCache {
    entries: LruCache<u64, Entry>,
    options: ContentCacheOptions,
    hasher: RandomState,
    bytes: usize,
    hits: u64,
    misses: u64,
    reloads: u64,
    evictions: u64,
}

impl Default for ContentCache {
    fn default() -> Self {
        ContentCache::with_options(ContentCacheOptions::default())
    }
}

impl ContentCache {
    /// A cache of at most `capacity` entries (0 disables caching), other
    /// limits at their defaults.
    pub fn new(capacity: usize) -> Self {
        ContentCache::with_options(ContentCacheOptions {
            capacity,
            ..ContentCacheOptions::default()
        })
    }

    /// A cache with every limit given.
    pub fn with_options(options: ContentCacheOptions) -> Self {
        ContentCache {
            entries: LruCache::unbounded(),
            options,
            hasher: RandomState::new(),
            bytes: 0,
            hits: 0,
            misses: 0,
            reloads: 0,
            evictions: 0,
        }
    }

    /// The limits in force.
    pub fn options(&self) -> &ContentCacheOptions {
        &self.options
    }

    /// `skill` activated with `arguments`: from the cache when its
    /// `SKILL.md` is unchanged, else read again (and cached).
    pub fn activate(
        &mut self,
        skill: &Skill,
        arguments: &str,
    ) -> Result<Arc<CachedActivation>, Error> {
        let key = self
            .hasher
            .hash_one((skill.skill_md.as_os_str(), arguments));
        let mut stale = false;
        if let Some(entry) = self.entries.get(&key)
            && entry.skill_md.as_os_str() == skill.skill_md.as_os_str()
            && &*entry.arguments == arguments
            && *entry.skill == *skill.name
        {
            match std::fs::metadata(&skill.skill_md) {
                Ok(meta) if FileStamp::of(&meta) == entry.stamp => {
                    self.hits += 1;
                    return Ok(Arc::clone(&entry.content));
                }
                _ => stale = true,
            }
        }
        self.misses += 1;
        if stale {
            self.reloads += 1;
        }
        // A stale entry, or another key with the same hash: replaced.
        if let Some(old) = self.entries.pop(&key) {
            self.bytes -= old.bytes;
        }
        // Stamped before reading: an edit between the stamp and the read
        // leaves a stamp older than the content, so the next call reloads
        // (never the reverse, which would serve a stale body).
        let stamp = FileStamp::read(&skill.skill_md);
        let activation = skilldeck::activate_with(skill, arguments, &self.options.activation)?;
        let bytes = activation.body.len();
        let content = Arc::new(CachedActivation::new(activation));
        if let Some(stamp) = stamp
            && self.options.capacity > 0
            && bytes <= self.options.max_bytes
        {
            self.entries.push(
                key,
                Entry {
                    skill_md: skill.skill_md.clone(),
                    arguments: arguments.into(),
                    skill: skill.name.as_str().into(),
                    stamp,
                    bytes,
                    content: Arc::clone(&content),
                },
            );
            self.bytes += bytes;
            self.evict_to_limits();
        }
        Ok(content)
    }

    fn evict_to_limits(&mut self) {
        while self.entries.len() > self.options.capacity || self.bytes > self.options.max_bytes {
            let Some((_, old)) = self.entries.pop_lru() else {
                break;
            };
            self.bytes -= old.bytes;
            self.evictions += 1;
        }
    }

    /// Drops every entry of the skill named `skill_name`; returns how many.
    pub fn invalidate(&mut self, skill_name: &str) -> usize {
        let before = self.entries.len();
        let mut freed = 0;
        self.entries.retain(|_, e| {
            let keep = *e.skill != *skill_name;
            if !keep {
                freed += e.bytes;
            }
            keep
        });
        self.bytes -= freed;
        before - self.entries.len()
    }

    /// Drops every entry (the counters stay).
    pub fn clear(&mut self) {
        self.entries.clear();
        self.bytes = 0;
    }

    /// Entries now.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Counters and sizes.
    pub fn stats(&self) -> CacheStats {
        let calls = self.hits + self.misses;
        CacheStats {
            hits: self.hits,
            misses: self.misses,
            reloads: self.reloads,
            evictions: self.evictions,
            entries: self.entries.len(),
            bytes: self.bytes,
            hit_rate: if calls == 0 {
                0.0
            } else {
                self.hits as f64 / calls as f64
            },
        }
    }
}
