//! [`Target`]: what a source changes when its skills change. A source
//! reloads the target's [`Host`] and tells the target what clients must
//! hear; the face (the MCP server, a binding) decides how they hear it.

use skilldeck_host::Host;

/// What a source drives: a host, and whoever tells its clients about
/// changes. The provided methods are the host's rules; a face overrides
/// them only to add its notifications (and calls the host's rule itself).
pub trait Target: Send + Sync {
    /// The host whose skills the source provides.
    fn host(&self) -> &Host;

    /// Discovers the deck again ([`Host::reload`]); `Ok(true)` when the
    /// catalog changed (names, descriptions or modes: clients' tool,
    /// prompt and resource lists are stale).
    fn reload(&self) -> Result<bool, skilldeck::Error> {
        let reload = self.host().reload()?;
        for d in &reload.errors {
            tracing::warn!(diagnostic = %d, "skill not loaded");
        }
        Ok(reload.catalog_changed)
    }

    /// A file inside skill `name` changed without changing the catalog
    /// ([`Host::skill_files_changed`]: its cached activation is dropped).
    fn skill_files_changed(&self, name: &str) {
        let forgotten = self.host().skill_files_changed(name);
        tracing::debug!(skill = name, sessions = forgotten, "skill content changed");
    }

    /// Files were added to or removed from skills: only the resource list
    /// changed (nothing to do for a host without clients).
    fn resources_changed(&self) {}

    /// The span one piece of the source's work runs in (`watch`: a batch of
    /// file events or a poll of the roots; `poll`: one look at the
    /// registry), so its log lines share one trace id. A server gives it
    /// the trace id of its exported trace; by default a plain span.
    fn operation_span(&self, name: &'static str) -> tracing::Span {
        tracing::info_span!("operation", operation = name)
    }
}

/// A host alone (a binding, a one-shot command): the host's rules, no one
/// to tell.
impl Target for Host {
    fn host(&self) -> &Host {
        self
    }
}
