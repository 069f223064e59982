//! # skilldeck-host
//!
//! The host layer of skilldeck: everything an agent host does with a deck
//! of skills beyond parsing them, stated once so every face (the MCP
//! server, the CLI, language bindings) only maps it to its protocol and
//! contains no rule of its own.
//!
//! - which skills are served, and to whom ([`rules`]), over one immutable
//!   [`Snapshot`] of the deck that a [`Host`] swaps whole on reload;
//! - activation: the content cache ([`ContentCache`]) and, per session, the
//!   "already active" notice ([`ActivationTracker`] in memory,
//!   [`ConversationStore`] on disk, one [`ActivationLog`] trait);
//! - the agent tools as data ([`tools`]): specs, handlers, typed outputs
//!   and errors; the tools skills declare ([`skill_tools`]): full names,
//!   resolution, argument checks; and, when the operator turns execution
//!   on, running them in the sandbox ([`execution`]: the `[exec]` config
//!   mapped to a policy, skill tools, `run_skill_script`, dynamic context);
//!   the tools a skill declares without a script, answered by handlers the
//!   application registers ([`ToolHandler`], [`Host::register_tool_handler`]);
//!   LangChain tool packages' tools, found and run by a worker inside the
//!   sandbox ([`langchain`]);
//! - the per-file `sha256:` [`Manifest`] of a skill;
//! - what a face opens a host from ([`HostSpec`]: config files, roots,
//!   working folder);
//! - what to watch for hot reload, missing roots included ([`watch`]).
//!
//! Synchronous and runtime-free: no async runtime, no protocol SDK.
//! Messages about skills (unknown, turned off) come from the core's
//! [`skilldeck::Error`].

#![deny(missing_docs)]

mod activation_log;
pub mod approval;
mod cache;
mod catalog;
pub mod code;
mod conversation;
pub mod environment;
mod error;
pub mod execution;
mod host;
mod host_tools;
pub mod langchain;
mod manifest;
pub mod options;
pub mod remote;
pub mod rules;
mod run_code;
pub mod skill_tools;
mod snapshot;
mod spec;
mod tool_error;
mod tool_handler;
mod tool_names;
pub mod tools;
mod tracker;
pub mod watch;

pub use activation_log::{ActivationLog, Delivery, DeliveryError, deliver};
pub use approval::{ApprovalRequest, Approver, CallerApprover, Decision};
pub use cache::{CacheStats, CachedActivation, ContentCache, ContentCacheOptions};
pub use catalog::{CatalogRequest, ComposedCatalog};
pub use code::{Language, OutputFile, RUN_CODE};
pub use conversation::{CONVERSATIONS_DIR, ConversationStore};
pub use error::Error;
pub use execution::{Execution, RUN_SKILL_SCRIPT, SandboxedDynamicContext, ToolRun};
pub use host::{Activated, DYNAMIC_CONTEXT_AGENT, Host, Reload};
pub use host_tools::HandledCall;
pub use langchain::{Described, Interpreter, PackageTools};
pub use manifest::{Manifest, ManifestFile};
pub use options::HostOptions;
pub use rules::{
    ModelRefusal, ModelRefusalReason, ModelUse, is_model_invocable, is_served, is_user_invocable,
    model_access, require_served,
};
pub use skill_tools::{MAX_TOOL_ARGUMENT_BYTES, ResolvedTool, SkillToolEntry, SkillTools};
pub use skilldeck::digest::{DIGEST_PREFIX, sha256_digest};
pub use snapshot::{Snapshot, catalog_fingerprint};
pub use spec::{HostConfig, HostSpec};
pub use tool_error::{ToolError, ToolErrorKind};
pub use tool_handler::{HandlerCall, ToolHandler};
pub use tools::{Called, ExecToolSpec, FileContent, FileOutput, SearchHit, ToolOutput, ToolSpec};
pub use tracker::{
    ActivationTracker, Seen, SharedActivationTracker, already_active_notice, content_key,
    is_skill_content,
};
pub use watch::{Relevance, Survey, WatchPlan, WatchTarget};
