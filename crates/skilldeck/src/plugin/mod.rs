//! Plugins: Claude Code's (`.claude-plugin/plugin.json`) and Codex's
//! (`.codex-plugin/plugin.json`), and their marketplaces.
//!
//! A plugin bundles skills (and other things skilldeck does not use:
//! commands, agents, hooks, MCP servers). Discovery reads a plugin's skills
//! under the plugin's namespace, `PLUGIN:SKILL`, as both tools show them
//! ([`name`] holds that rule, once); `install` takes a marketplace entry;
//! `export` writes skills as a plugin. Manifests and marketplaces are read
//! as hostile input: bounded reads, every path kept inside its folder, and
//! each problem a diagnostic with a stable code at its line and column.

pub mod manifest;
pub mod marketplace;
pub mod scan;

/// The naming rule of plugin skills (it lives with the other naming rules,
/// in [`crate::spec`]).
pub use crate::spec::plugin_name as name;

pub use manifest::{
    DEFAULT_SKILLS_DIR, Plugin, PluginKind, PluginManifest, parse_manifest, read_manifest,
    read_plugin,
};
pub use marketplace::{
    Marketplace, MarketplaceEntry, PluginSource, marketplace_file, parse_marketplace,
    read_marketplace,
};
pub use name::{
    IDENTIFIER_SEPARATOR, PLUGIN_SEPARATOR, from_identifier, identifier, is_plugin_name,
    qualified_name, split_qualified,
};
