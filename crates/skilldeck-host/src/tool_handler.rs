//! The handler an application registers for a host-implemented skill tool
//! (a tool declared without `run`), and the registry of them a host holds.
//! The rules around calling one are in `host_tools.rs`.

use std::collections::HashMap;
use std::sync::{Arc, PoisonError, RwLock};

use serde_json::Value;
use skilldeck_exec::CallContext;

/// One call of a host-implemented tool, as its handler sees it.
#[derive(Debug, Clone, Copy)]
pub struct HandlerCall<'a> {
    /// The skill that declares the tool.
    pub skill: &'a str,
    /// The tool's full name (`{skill}__{tool}`).
    pub full_name: &'a str,
    /// The arguments, already checked against the tool's schema.
    pub arguments: &'a Value,
    /// Who calls (agent, user, session, call id).
    pub context: &'a CallContext,
}

/// The application's implementation of a host-implemented tool: its JSON
/// result, or an error message for the model.
pub trait ToolHandler: Send + Sync {
    /// Answers one call.
    fn call(&self, call: &HandlerCall<'_>) -> Result<Value, String>;
}

impl<F> ToolHandler for F
where
    F: Fn(&HandlerCall<'_>) -> Result<Value, String> + Send + Sync,
{
    fn call(&self, call: &HandlerCall<'_>) -> Result<Value, String> {
        self(call)
    }
}

/// The registered handlers by full name. They outlive reloads: a tool that
/// disappears and comes back keeps its handler.
#[derive(Default)]
pub(crate) struct ToolHandlers(RwLock<HashMap<String, Arc<dyn ToolHandler>>>);

impl std::fmt::Debug for ToolHandlers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let map = self.0.read().unwrap_or_else(PoisonError::into_inner);
        f.debug_set().entries(map.keys()).finish()
    }
}

impl ToolHandlers {
    /// Registers `handler` under `full_name`, replacing any earlier one.
    pub(crate) fn insert(&self, full_name: &str, handler: Arc<dyn ToolHandler>) {
        let mut map = self.0.write().unwrap_or_else(PoisonError::into_inner);
        map.insert(full_name.to_owned(), handler);
    }

    /// Removes the handler of `full_name`; true when there was one.
    pub(crate) fn remove(&self, full_name: &str) -> bool {
        let mut map = self.0.write().unwrap_or_else(PoisonError::into_inner);
        map.remove(full_name).is_some()
    }

    /// The handler of `full_name`.
    pub(crate) fn get(&self, full_name: &str) -> Option<Arc<dyn ToolHandler>> {
        let map = self.0.read().unwrap_or_else(PoisonError::into_inner);
        map.get(full_name).cloned()
    }

    /// True when `full_name` has a handler.
    pub(crate) fn contains(&self, full_name: &str) -> bool {
        let map = self.0.read().unwrap_or_else(PoisonError::into_inner);
        map.contains_key(full_name)
    }
}
