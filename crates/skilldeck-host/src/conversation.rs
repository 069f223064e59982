//! [`ConversationStore`]: activations remembered across processes, one
//! small JSON file per conversation (the CLI's `--conversation ID`), so the
//! "already active" notice works across separate calls.
//!
//! Files live in `skilldeck::dirs::state_dir()/conversations`, named after
//! a 64-bit hash of the conversation id (`<16 hex>.json`), and hold
//! `{skill: seconds since the epoch}`. Entries expire after
//! [`skilldeck::limits::TRACKER_TTL`], as in the in-process tracker. A
//! missing or corrupt file is an empty conversation; files are written to a
//! temporary file and renamed, so they are never half-written.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::activation_log::ActivationLog;
use crate::error::Error;
use crate::tracker::Seen;

/// The folder under the state folder that holds the conversation files.
pub const CONVERSATIONS_DIR: &str = "conversations";

/// Skill name → activation time (seconds since the epoch) and content key.
type Active = BTreeMap<String, Entry>;

/// One activation in a conversation file: `[seconds, content key]`; a bare
/// number (files written before content keys) is the activation without
/// arguments.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
#[serde(untagged)]
enum Entry {
    Keyed(u64, u64),
    At(u64),
}

impl Entry {
    fn at(self) -> u64 {
        match self {
            Entry::Keyed(at, _) | Entry::At(at) => at,
        }
    }

    fn key(self) -> u64 {
        match self {
            Entry::Keyed(_, key) => key,
            Entry::At(_) => crate::tracker::content_key(""),
        }
    }
}

/// Conversations kept as files in one folder. See the module documentation.
#[derive(Debug, Clone)]
pub struct ConversationStore {
    dir: PathBuf,
    ttl: Duration,
}

impl Default for ConversationStore {
    fn default() -> Self {
        ConversationStore::new(
            skilldeck::dirs::state_dir().join(CONVERSATIONS_DIR),
            skilldeck::limits::TRACKER_TTL,
        )
    }
}

/// Seconds since the epoch (the store's clock).
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl ConversationStore {
    /// A store in `dir` whose activations expire after `ttl`.
    pub fn new(dir: impl Into<PathBuf>, ttl: Duration) -> Self {
        ConversationStore {
            dir: dir.into(),
            ttl,
        }
    }

    /// The folder holding the files.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of `conversation`.
    pub fn path(&self, conversation: &str) -> PathBuf {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        conversation.hash(&mut h);
        self.dir.join(format!("{:016x}.json", h.finish()))
    }

    /// The live activations of `conversation` at `now` (seconds).
    fn load_at(&self, conversation: &str, now: u64) -> Active {
        let mut active: Active = std::fs::read(self.path(conversation))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        let ttl = self.ttl.as_secs();
        active.retain(|_, entry| now.saturating_sub(entry.at()) < ttl);
        active
    }

    fn save(&self, conversation: &str, active: &Active) -> Result<(), Error> {
        let path = self.path(conversation);
        std::fs::create_dir_all(&self.dir).map_err(|e| Error::io(&self.dir, e))?;
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        let bytes = serde_json::to_vec(active).map_err(|e| Error::io(&tmp, e.into()))?;
        std::fs::write(&tmp, bytes).map_err(|e| Error::io(&tmp, e))?;
        std::fs::rename(&tmp, &path).map_err(|e| Error::io(&path, e))
    }

    /// True when `skill` is active in `conversation` now.
    pub fn is_active(&self, conversation: &str, skill: &str) -> bool {
        self.is_active_at(conversation, skill, now())
    }

    /// [`ConversationStore::is_active`] at `now` (seconds since the epoch).
    pub fn is_active_at(&self, conversation: &str, skill: &str, now: u64) -> bool {
        self.load_at(conversation, now).contains_key(skill)
    }

    /// True when `conversation` received `skill` with the content `key`
    /// ([`crate::tracker::content_key`] of its arguments) and it has not
    /// expired: the same activation again gets the notice.
    pub fn was_delivered(&self, conversation: &str, skill: &str, key: u64) -> bool {
        self.load_at(conversation, now())
            .get(skill)
            .is_some_and(|entry| entry.key() == key)
    }

    /// [`ActivationLog::record`] at `now` (seconds since the epoch).
    pub fn record_at(
        &self,
        conversation: &str,
        skill: &str,
        key: u64,
        now: u64,
    ) -> Result<Seen, Error> {
        let mut active = self.load_at(conversation, now);
        if active.get(skill).is_some_and(|entry| entry.key() == key) {
            return Ok(Seen::Again);
        }
        active.insert(skill.to_owned(), Entry::Keyed(now, key));
        self.save(conversation, &active)?;
        Ok(Seen::First)
    }

    /// [`ActivationLog::forget`], at `now` (expired entries are dropped from
    /// the file on the way).
    pub fn forget_at(&self, conversation: &str, skill: &str, now: u64) -> Result<bool, Error> {
        let mut active = self.load_at(conversation, now);
        if active.remove(skill).is_none() {
            return Ok(false);
        }
        self.save(conversation, &active)?;
        Ok(true)
    }
}

impl ActivationLog for ConversationStore {
    fn record(&mut self, conversation: &str, skill: &str, key: u64) -> Result<Seen, Error> {
        self.record_at(conversation, skill, key, now())
    }

    fn forget(&mut self, conversation: &str, skill: &str) -> Result<bool, Error> {
        self.forget_at(conversation, skill, now())
    }
}
