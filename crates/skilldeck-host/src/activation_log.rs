//! [`ActivationLog`]: what a face needs to know about a conversation's
//! activations, whichever store keeps them: the in-memory
//! [`crate::tracker::ActivationTracker`] (servers: many sessions, one process) or
//! the file-backed [`crate::conversation::ConversationStore`] (the CLI: one process per
//! call). A face picks one; the rule it applies is the same.

use crate::error::Error;
use crate::tracker::Seen;

/// Record-and-check of activations per conversation.
pub trait ActivationLog {
    /// Records that `conversation` activates `skill` with the content
    /// `key` ([`crate::tracker::content_key`] of its arguments), in one step
    /// with the check: [`Seen::Again`] when that content is still active
    /// there (send the notice), else [`Seen::First`] (send the body; now
    /// recorded).
    fn record(&mut self, conversation: &str, skill: &str, key: u64) -> Result<Seen, Error>;

    /// Forgets that `conversation` activated `skill` (the body could not
    /// be sent after all); true when it was remembered.
    fn forget(&mut self, conversation: &str, skill: &str) -> Result<bool, Error>;
}

impl ActivationLog for crate::tracker::ActivationTracker {
    fn record(&mut self, conversation: &str, skill: &str, key: u64) -> Result<Seen, Error> {
        Ok(crate::tracker::ActivationTracker::record(
            self,
            conversation,
            skill,
            key,
        ))
    }

    fn forget(&mut self, conversation: &str, skill: &str) -> Result<bool, Error> {
        Ok(crate::tracker::ActivationTracker::forget(
            self,
            conversation,
            skill,
        ))
    }
}

impl ActivationLog for &crate::tracker::SharedActivationTracker {
    fn record(&mut self, conversation: &str, skill: &str, key: u64) -> Result<Seen, Error> {
        Ok(crate::tracker::SharedActivationTracker::record(
            self,
            conversation,
            skill,
            key,
        ))
    }

    fn forget(&mut self, conversation: &str, skill: &str) -> Result<bool, Error> {
        Ok(crate::tracker::SharedActivationTracker::forget(
            self,
            conversation,
            skill,
        ))
    }
}
