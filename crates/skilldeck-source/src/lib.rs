//! # skilldeck-source
//!
//! Where a host's skills come from, stated once for every face (the MCP
//! server, the CLI, the Python binding): the host itself
//! ([`skilldeck_host`]) stays free of HTTP, file watching and threads, and
//! a face holds no rule about sources.
//!
//! - **Watched folders** ([`watch()`]): the roots are watched (or polled
//!   beyond the watch budget) and the host reloaded when they change; what
//!   to watch is the host's rule ([`skilldeck_host::watch`]).
//! - **A registry agent** ([`RegistrySource`]): the agent's lock fetched,
//!   every skill materialised in a content-addressed cache and verified
//!   against its fingerprint, the host pointed at a generated root, the
//!   lock polled ([`RegistrySource::spawn_poller`]) or refreshed on demand
//!   ([`RegistrySource::try_refresh`]).
//! - **A registry version** ([`fetch_version`]): one skill at one version
//!   or label, its archive checked against the fingerprint, ready for
//!   `skilldeck-package` to install (`skilldeck install --registry`).
//!
//! - **A git repository** ([`git`]): a ref resolved, exactly its commit
//!   fetched shallow and the skill's folder written out of it, with no
//!   hook, filter or checkout of the repository's own running
//!   (`skilldeck install git+https://...`).
//!
//! - **An OCI registry** (module `oci`, feature `oci`): a skill pushed as an
//!   OCI artifact (its package as the one layer, its fingerprint as an
//!   annotation) and pulled back with every digest and the fingerprint
//!   checked (`skilldeck push oci://...`, `skilldeck install oci://...`).
//! - **A plugin marketplace entry** ([`marketplace`]): a Claude Code or
//!   Codex `marketplace.json`, one plugin of it (a local folder or a git
//!   repository, fetched as above), and its skills
//!   (`skilldeck install marketplace:PATH#PLUGIN[:SKILL]`).
//! - **A well-known index** ([`wellknown`]): the agentskills.io discovery
//!   index of a host, each artifact checked against its digest before it
//!   is unpacked (`skilldeck install https://HOST#NAME`).
//!
//! Both sources drive a [`Target`]: the host, plus whoever tells its
//! clients that their lists changed.

#![deny(missing_docs)]

mod error;
mod fetch;
pub mod git;
pub mod marketplace;
#[cfg(feature = "oci")]
pub mod oci;
mod registry;
mod target;
mod watch;
pub mod wellknown;

pub use error::Error;
pub use fetch::{Fetched, fetch_version};
pub use registry::{
    DEFAULT_REGISTRY_POLL, MIN_REGISTRY_POLL, Poller, RegistryOptions, RegistrySource,
    exec_config_of,
};
/// The registry's names and credentials a source is opened with.
pub use skilldeck_registry::{client::Token, names::AgentId};
pub use target::Target;
pub use watch::{Batch, RELOAD_DEBOUNCE, WatchMode, Watcher, apply, classify, watch};
