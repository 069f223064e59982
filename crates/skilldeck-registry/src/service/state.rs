//! The per-process state the service caches: an agent's resolution with
//! its lock (`CachedAgent`), a rendered catalog ([`Rendered`]) and the
//! search index (`SearchState`), a verified token (`AuthEntry`). Kept apart from the code that fills
//! them so the registry's shared state does not depend on it.

use std::collections::HashMap;

use bytes::Bytes;

use crate::service::principal::Principal;
use crate::wire::{AgentLock, AgentSpec, Resolved, SkillSummary};

/// An agent's resolution with its lock, as cached.
pub(crate) struct CachedAgent {
    /// The resolved set (its `generation` is the lock's ETag).
    pub resolved: Resolved,
    /// The lock.
    pub lock: AgentLock,
    /// The lock as served (JSON), serialised once.
    pub lock_json: Bytes,
    /// The agent's settings.
    pub spec: AgentSpec,
    /// When it was computed (what it is rendered into expires with it).
    pub computed_at: std::time::Instant,
}

/// A rendered catalog.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// The text.
    pub body: Bytes,
    /// A strong ETag (quoted).
    pub etag: String,
    /// Its media type.
    pub content_type: &'static str,
    /// The database generation it is valid at (`Skilldeck-Generation`).
    pub generation: i64,
}

/// The search index over every skill's `latest` version, built at one
/// database generation.
pub(crate) struct SearchState {
    /// The database generation it was built at.
    pub generation: i64,
    /// The core's BM25 index (names are `namespace/name`).
    pub index: skilldeck::SearchIndex,
    /// The summary of each skill, by `namespace/name`.
    pub summaries: HashMap<String, SkillSummary>,
}

/// A verified token as cached: its principal and when it expires.
pub(crate) struct AuthEntry {
    /// Who the token is.
    pub principal: Principal,
    /// When it stops working, if ever.
    pub expires_at: Option<chrono::DateTime<chrono::Utc>>,
}
