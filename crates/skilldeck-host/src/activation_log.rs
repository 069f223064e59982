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

/// What a conversation receives when a skill is activated in it
/// ([`deliver`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivery<T> {
    /// The instructions (first time, other arguments, or `reload`).
    Content(T),
    /// The same content is still active there: the short notice
    /// ([`crate::tracker::already_active_notice`]).
    AlreadyActive(String),
}

/// Why [`deliver`] failed: the log could not be read or written, or the
/// content could not be rendered (then nothing stays recorded).
#[derive(Debug)]
pub enum DeliveryError<E> {
    /// The activation log failed.
    Log(Error),
    /// Rendering failed.
    Render(E),
}

/// The conversation rule, once for every store and face: `reload` forgets
/// what was sent (the client compacted it away); the activation is then
/// recorded in one step with the check, so the same skill with the same
/// arguments gets the notice and other arguments get the content; when
/// `render` fails the record is taken back. A face that fails to send the
/// content afterwards calls [`ActivationLog::forget`] itself.
pub fn deliver<L: ActivationLog, T, E>(
    log: &mut L,
    conversation: &str,
    skill: &str,
    arguments: &str,
    reload: bool,
    render: impl FnOnce() -> Result<T, E>,
) -> Result<Delivery<T>, DeliveryError<E>> {
    if reload {
        log.forget(conversation, skill)
            .map_err(DeliveryError::Log)?;
    }
    let key = crate::tracker::content_key(arguments);
    if log
        .record(conversation, skill, key)
        .map_err(DeliveryError::Log)?
        == Seen::Again
    {
        return Ok(Delivery::AlreadyActive(
            crate::tracker::already_active_notice(skill),
        ));
    }
    match render() {
        Ok(content) => Ok(Delivery::Content(content)),
        Err(e) => {
            // Best effort: the render error is the one to report.
            let _ = log.forget(conversation, skill);
            Err(DeliveryError::Render(e))
        }
    }
}
