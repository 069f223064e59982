//! `skilldeck-mcp`: Agent Skills for every MCP client.
//!
//! One server, on the official `rmcp` SDK, gives any Model Context Protocol
//! client the skills a [`skilldeck::Deck`] holds, through every face a client
//! may speak:
//!
//! - **tools** ([`tools`]): `activate_skill` (its description carries the
//!   catalog, under a budget), `read_skill_resource`, `search_skills`;
//! - **prompts** ([`prompts`]): each user-invocable skill as `/name`;
//! - **resources** ([`resources`]): every skill file as
//!   `skill://<name>/<path>`, with templates and directory reads;
//! - **the official Skills extension** ([`extension`], SEP-2640,
//!   `io.modelcontextprotocol/skills`): `skills/list`, `skills/get` and
//!   `resources/directory/read`, with verbatim frontmatter and `sha256:`
//!   manifests.
//!
//! Clients of protocol revision 2026-07-28 (`server/discover`, metadata in
//! each request's `_meta`) and of 2025-11-25 (`initialize`) are served by the
//! same process, over stdio or streamable HTTP ([`transport`]). Where the
//! skills come from (watched roots, a registry agent) is
//! [`skilldeck_source`]'s: when the catalog changes, the [`Engine`] (a
//! [`skilldeck_source::Target`]) tells clients with `list_changed`
//! notifications.
//!
//! Every rule (what is served, activation and its notice, the tools, the
//! manifest) lives in the synchronous host layer, [`skilldeck_host`]; this
//! crate maps it to MCP and owns the async runtime. Hosts
//! embedding the server call [`serve_stdio`] or [`serve_http`] (or build an
//! [`Engine`] and a [`SkillServer`] themselves).

#![deny(missing_docs)]

mod approval;
mod cursor;
mod engine;
mod error;
pub mod extension;
pub mod gateway;
pub mod logging;
pub mod options;
pub mod prompts;
pub mod resources;
mod server;
mod sessions;
pub mod shutdown;
pub mod stdio;
pub mod telemetry;
pub mod tools;
pub mod transport;
mod uri;
pub mod well_known;

pub use engine::{Activated, CHANGE_CHANNEL_CAPACITY, Change, Engine, Snapshot};
pub use error::Error;
pub use logging::LogFormat;
pub use options::{HttpOptions, ServeOptions};
pub use server::SkillServer;
pub use transport::{serve_http, serve_stdio};
