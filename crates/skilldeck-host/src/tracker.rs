//! Activation tracking: which skills each conversation has already received,
//! so a second activation can answer with a short notice instead of the
//! whole body again.
//!
//! Memory is bounded three ways, all constants in [`skilldeck::limits`]: at most
//! `capacity` conversations (least recently active forgotten first), at most
//! [`TRACKER_SKILLS_PER_CONVERSATION`] skills per conversation (oldest
//! activation forgotten first), and each activation is forgotten `ttl` after
//! its body was sent (a later activation sends the body again). Conversation
//! ids are kept as 64-bit keyed hashes ([`RandomState`]), so a long id costs
//! no memory and two ids collide with negligible probability.
//!
//! Time is passed in: every method has an `_at` form taking the current
//! [`Instant`], so tests and hosts with their own clock never sleep.
//!
//! [`ActivationTracker`] takes `&mut self`; [`SharedActivationTracker`] wraps
//! it in a [`Mutex`] for servers that share one tracker across sessions.
//!
//! [`is_skill_content`] tells hosts which messages are skill content, to
//! keep them out of context compaction (if the body is compacted away, the
//! "already active" notice would point at nothing).

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::num::NonZeroUsize;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use lru::LruCache;

use skilldeck::activation::{TEXT_HEADER, XML_OPEN_TAG, escape_xml};
use skilldeck::limits::{TRACKER_CONVERSATIONS, TRACKER_SKILLS_PER_CONVERSATION, TRACKER_TTL};

/// The identity of an activation's content for deduplication: the skill's
/// arguments, trimmed (the same skill with other arguments is other
/// content, delivered again). Stable across processes (the CLI's
/// conversation files store it).
pub fn content_key(arguments: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    arguments.trim().hash(&mut h);
    h.finish()
}

/// Whether a conversation had already received a skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Seen {
    /// Not active (never, forgotten, or expired): send the body. Now recorded.
    First,
    /// Already active with the same content (the same arguments): send
    /// [`already_active_notice`] instead.
    Again,
}

#[derive(Debug, Default)]
struct Conversation {
    /// Skill name → when its body was sent, and its [`content_key`].
    skills: HashMap<String, (Instant, u64)>,
}

/// Remembers, per conversation, which skills were activated. See the module
/// documentation for the bounds.
#[derive(Debug)]
pub struct ActivationTracker {
    conversations: LruCache<u64, Conversation>,
    ttl: Duration,
    max_skills: usize,
    hasher: RandomState,
}

impl Default for ActivationTracker {
    fn default() -> Self {
        ActivationTracker::new(TRACKER_CONVERSATIONS, TRACKER_TTL)
    }
}

impl ActivationTracker {
    /// A tracker for at most `capacity_conversations` conversations (at least
    /// 1) whose activations expire after `ttl`.
    pub fn new(capacity_conversations: usize, ttl: Duration) -> Self {
        ActivationTracker::with_limits(capacity_conversations, ttl, TRACKER_SKILLS_PER_CONVERSATION)
    }

    /// [`ActivationTracker::new`] with a custom bound on skills per
    /// conversation (at least 1).
    pub fn with_limits(
        capacity_conversations: usize,
        ttl: Duration,
        skills_per_conversation: usize,
    ) -> Self {
        let capacity = NonZeroUsize::new(capacity_conversations).unwrap_or(NonZeroUsize::MIN);
        ActivationTracker {
            conversations: LruCache::new(capacity),
            ttl,
            max_skills: skills_per_conversation.max(1),
            hasher: RandomState::new(),
        }
    }

    /// The time-to-live of an activation.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// Most conversations remembered.
    pub fn capacity(&self) -> usize {
        self.conversations.cap().get()
    }

    /// Conversations currently remembered (expired ones included until
    /// [`ActivationTracker::purge_expired_at`] or eviction).
    pub fn len(&self) -> usize {
        self.conversations.len()
    }

    /// True when no conversation is remembered.
    pub fn is_empty(&self) -> bool {
        self.conversations.is_empty()
    }

    fn key(&self, conversation: &str) -> u64 {
        self.hasher.hash_one(conversation)
    }

    fn live(&self, sent: Instant, now: Instant) -> bool {
        now.saturating_duration_since(sent) < self.ttl
    }

    /// [`ActivationTracker::record_at`] now.
    pub fn record(&mut self, conversation: &str, skill: &str, key: u64) -> Seen {
        self.record_at(conversation, skill, key, Instant::now())
    }

    /// Records that `conversation` activates `skill` with the content
    /// `key` ([`content_key`] of its arguments) at `now`: [`Seen::Again`]
    /// when that content is still active there (sent less than `ttl` ago;
    /// the time is not refreshed), else [`Seen::First`] and the activation
    /// is remembered from `now` with `key` (other arguments replace the
    /// ones remembered).
    pub fn record_at(&mut self, conversation: &str, skill: &str, key: u64, now: Instant) -> Seen {
        let content = key;
        let key = self.key(conversation);
        let ttl = self.ttl;
        let max_skills = self.max_skills;
        let conv = self
            .conversations
            .get_or_insert_mut(key, Conversation::default);
        if let Some(entry) = conv.skills.get_mut(skill) {
            if entry.1 == content && now.saturating_duration_since(entry.0) < ttl {
                return Seen::Again;
            }
            *entry = (now, content);
            return Seen::First;
        }
        if conv.skills.len() >= max_skills {
            conv.skills
                .retain(|_, (sent, _)| now.saturating_duration_since(*sent) < ttl);
        }
        if conv.skills.len() >= max_skills {
            let oldest = conv
                .skills
                .iter()
                .min_by_key(|(_, (sent, _))| *sent)
                .map(|(name, _)| name.clone());
            if let Some(oldest) = oldest {
                conv.skills.remove(&oldest);
            }
        }
        conv.skills.insert(skill.to_owned(), (now, content));
        Seen::First
    }

    /// [`ActivationTracker::is_active_at`] now.
    pub fn is_active(&self, conversation: &str, skill: &str) -> bool {
        self.is_active_at(conversation, skill, Instant::now())
    }

    /// True when `skill` is active in `conversation` at `now`, without
    /// recording anything or refreshing the conversation's recency.
    pub fn is_active_at(&self, conversation: &str, skill: &str, now: Instant) -> bool {
        self.conversations
            .peek(&self.key(conversation))
            .and_then(|c| c.skills.get(skill))
            .is_some_and(|&(sent, _)| self.live(sent, now))
    }

    /// The skills active in `conversation` at `now`, sorted, without
    /// recording anything or refreshing the conversation's recency.
    pub fn active_at(&self, conversation: &str, now: Instant) -> Vec<String> {
        let mut names: Vec<String> = self
            .conversations
            .peek(&self.key(conversation))
            .map(|c| {
                c.skills
                    .iter()
                    .filter(|(_, (sent, _))| self.live(*sent, now))
                    .map(|(name, _)| name.clone())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }

    /// Forgets that `conversation` activated `skill` (its context lost the
    /// body, say); true when it was remembered.
    pub fn forget(&mut self, conversation: &str, skill: &str) -> bool {
        let key = self.key(conversation);
        self.conversations
            .peek_mut(&key)
            .is_some_and(|c| c.skills.remove(skill).is_some())
    }

    /// Forgets `skill` in every conversation (its instructions changed on
    /// disk, so the next activation must send them again); returns in how
    /// many conversations it was active.
    pub fn forget_skill(&mut self, skill: &str) -> usize {
        let mut forgotten = 0;
        for (_, conversation) in self.conversations.iter_mut() {
            forgotten += usize::from(conversation.skills.remove(skill).is_some());
        }
        forgotten
    }

    /// Forgets every skill `gone` names in every conversation, in one pass
    /// over the conversations (a reload can withdraw thousands of skills at
    /// once); returns how many activations were forgotten.
    pub fn forget_skills(&mut self, gone: &std::collections::HashSet<&str>) -> usize {
        let mut forgotten = 0;
        for (_, conversation) in self.conversations.iter_mut() {
            let before = conversation.skills.len();
            conversation
                .skills
                .retain(|name, _| !gone.contains(name.as_str()));
            forgotten += before - conversation.skills.len();
        }
        forgotten
    }

    /// Forgets a whole conversation; true when it was remembered.
    pub fn forget_conversation(&mut self, conversation: &str) -> bool {
        let key = self.key(conversation);
        self.conversations.pop(&key).is_some()
    }

    /// Drops every activation expired at `now`, and conversations left
    /// empty; returns how many activations were dropped.
    pub fn purge_expired_at(&mut self, now: Instant) -> usize {
        let ttl = self.ttl;
        let mut dropped = 0;
        self.conversations.retain(|_, c| {
            let before = c.skills.len();
            c.skills
                .retain(|_, (sent, _)| now.saturating_duration_since(*sent) < ttl);
            dropped += before - c.skills.len();
            !c.skills.is_empty()
        });
        dropped
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.conversations.clear();
    }
}

/// An [`ActivationTracker`] behind a [`Mutex`], for sharing across threads
/// (an MCP server's sessions). Each call holds the lock only for the
/// bookkeeping; a panic while holding it cannot leave the tracker
/// inconsistent, so a poisoned lock is simply taken over.
#[derive(Debug, Default)]
pub struct SharedActivationTracker {
    inner: Mutex<ActivationTracker>,
}

impl SharedActivationTracker {
    /// Shares `tracker`.
    pub fn new(tracker: ActivationTracker) -> Self {
        SharedActivationTracker {
            inner: Mutex::new(tracker),
        }
    }

    /// The tracker, locked.
    pub fn lock(&self) -> MutexGuard<'_, ActivationTracker> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// [`ActivationTracker::record`].
    pub fn record(&self, conversation: &str, skill: &str, key: u64) -> Seen {
        self.lock().record(conversation, skill, key)
    }

    /// [`ActivationTracker::record_at`].
    pub fn record_at(&self, conversation: &str, skill: &str, key: u64, now: Instant) -> Seen {
        self.lock().record_at(conversation, skill, key, now)
    }

    /// [`ActivationTracker::forget`].
    pub fn forget(&self, conversation: &str, skill: &str) -> bool {
        self.lock().forget(conversation, skill)
    }

    /// [`ActivationTracker::forget_skill`].
    pub fn forget_skill(&self, skill: &str) -> usize {
        self.lock().forget_skill(skill)
    }

    /// [`ActivationTracker::forget_skills`].
    pub fn forget_skills(&self, gone: &std::collections::HashSet<&str>) -> usize {
        self.lock().forget_skills(gone)
    }

    /// [`ActivationTracker::forget_conversation`].
    pub fn forget_conversation(&self, conversation: &str) -> bool {
        self.lock().forget_conversation(conversation)
    }
}

/// The short answer to a repeated activation, in the envelope's form (so
/// [`is_skill_content`] recognises it):
/// `<skill_content name="x" status="already-active">Skill 'x' is already
/// active in this conversation with these arguments; its instructions are
/// above. If they are no longer in the conversation, call activate_skill
/// again with "reload": true.</skill_content>`.
pub fn already_active_notice(name: &str) -> String {
    let name = escape_xml(name);
    format!(
        "{XML_OPEN_TAG} name=\"{name}\" status=\"already-active\">Skill '{name}' is already \
         active in this conversation with these arguments; its instructions are above. If \
         they are no longer in the conversation (it was compacted), call activate_skill \
         again with \"reload\": true to receive them again.</skill_content>"
    )
}

/// True when `text` (after leading whitespace) is a rendered activation in
/// any of skilldeck's formats, or an [`already_active_notice`]: it opens with
/// `<skill_content` (any case), with `Base directory for this skill:`, or with
/// the JSON rendering's `{"name":"…","skill_dir":`.
pub fn is_skill_content(text: &str) -> bool {
    let t = text.trim_start();
    let b = t.as_bytes();
    let xml = b
        .get(..XML_OPEN_TAG.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(XML_OPEN_TAG.as_bytes()))
        && b.get(XML_OPEN_TAG.len())
            .is_some_and(|&c| c == b'>' || c == b'/' || c.is_ascii_whitespace());
    xml || t.starts_with(TEXT_HEADER.trim_end()) || is_json_activation(t)
}

fn is_json_activation(t: &str) -> bool {
    let Some(rest) = t.strip_prefix(r#"{"name":""#) else {
        return false;
    };
    let bytes = rest.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return rest[i + 1..].starts_with(r#","skill_dir":"#),
            _ => i += 1,
        }
    }
    false
}
