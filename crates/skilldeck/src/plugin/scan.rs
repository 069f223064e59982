//! Which skill folders of a root belong to a plugin: discovery names those
//! `PLUGIN:SKILL`.
//!
//! A root may be a plugin itself, hold plugins (at any depth the walk
//! reaches), or be a marketplace whose local entries are plugin folders
//! (an entry without a manifest of its own, Claude Code's `strict: false`,
//! is a plugin made from the entry). The plugin of a skill folder is the
//! nearest folder above it, up to the root, with a manifest; the skill is
//! the plugin's when it is one of the plugin's skill paths or directly
//! inside one ([`Plugin::owns`]). Only the folders above skills the walk
//! found are looked at (one `lstat` per folder for each manifest kind, each
//! folder once), so a root without plugins costs a lookup per skill.
//!
//! A plugin whose manifest cannot be used (malformed JSON, a bad name, a
//! path leaving it) fails closed: its skills are not loaded, under any
//! name, and the problem is an error naming the manifest's line and column.
//! A skill folder inside a plugin that is not one of its skills keeps its
//! own name, unless the walk reached it through a symlink leading out of
//! the plugin: then it is not loaded either.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::diagnostic::Diagnostic;
use crate::plugin::manifest::{Plugin, PluginKind, read_plugin};
use crate::plugin::marketplace::{PluginSource, read_marketplace};

/// What a skill folder is to the plugins of its root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// No plugin: a skill of the root.
    None,
    /// A skill of the plugin with this index in [`RootPlugins::plugins`].
    Plugin(u32),
    /// Inside a plugin whose manifest cannot be used: not loaded.
    Refused,
}

/// The plugins of one root and what they make of its skill folders.
#[derive(Debug, Clone, Default)]
pub struct RootPlugins {
    /// The plugins that own at least one skill folder, by index.
    pub plugins: Vec<Plugin>,
    /// For each skill folder given, in order, its owner.
    pub owners: Vec<Owner>,
    /// Problems of manifests and marketplaces, each once.
    pub diagnostics: Vec<Diagnostic>,
}

/// A folder looked at: a usable plugin with its skill paths, a broken
/// one, or none.
enum Looked {
    Nothing,
    Plugin {
        plugin: Box<Plugin>,
        skill_paths: Vec<PathBuf>,
        index: Option<u32>,
    },
    Broken,
}

/// Assigns each of `skill_dirs` (skill folders found under `root`) to
/// the plugin it belongs to.
pub fn assign(root: &Path, skill_dirs: &[&Path]) -> RootPlugins {
    let mut out = RootPlugins {
        owners: Vec::with_capacity(skill_dirs.len()),
        ..RootPlugins::default()
    };
    let mut looked: HashMap<PathBuf, Looked> = HashMap::new();
    // The root's marketplaces: their local entries are plugins even
    // without a manifest of their own.
    for kind in PluginKind::ALL {
        let file = root.join(kind.marketplace_path());
        if std::fs::symlink_metadata(&file).is_err() {
            continue;
        }
        match read_marketplace(&file) {
            Err(problems) => out.diagnostics.extend(problems),
            Ok((market, problems)) => {
                out.diagnostics.extend(problems);
                for entry in &market.plugins {
                    let PluginSource::Local { path } = &entry.source else {
                        continue;
                    };
                    let dir = market.local_dir(path);
                    if looked.contains_key(&dir) || !dir.is_dir() {
                        continue;
                    }
                    let state = match entry.plugin_in(&dir, kind) {
                        Ok(plugin) => usable(plugin, &mut out.diagnostics),
                        Err(problems) => {
                            out.diagnostics.extend(problems);
                            Looked::Broken
                        }
                    };
                    looked.insert(dir, state);
                }
            }
        }
    }
    // The parent (as bytes) of the last skill folder whose folders above
    // were all without a plugin: a skill folder beside it has the same
    // folders above, so it is no plugin's either (the walk lists siblings
    // one after another; a root without plugins costs a byte comparison
    // per skill, not a lookup per folder above).
    let mut plain_parent: Option<&[u8]> = None;
    for dir in skill_dirs {
        let parent = crate::fs::path::plain_parent(dir);
        if parent.is_some() && parent == plain_parent {
            out.owners.push(Owner::None);
            continue;
        }
        let mut owner = Owner::None;
        let mut plugin_above = false;
        for above in dir.ancestors().skip(1) {
            if !above.starts_with(root) {
                break;
            }
            if !looked.contains_key(above) {
                let state = match read_plugin(above) {
                    None => Looked::Nothing,
                    Some(Ok(plugin)) => usable(plugin, &mut out.diagnostics),
                    Some(Err(problems)) => {
                        out.diagnostics.extend(problems);
                        Looked::Broken
                    }
                };
                looked.insert(above.to_path_buf(), state);
            }
            plugin_above = true;
            match looked.get_mut(above) {
                Some(Looked::Nothing) | None => {
                    plugin_above = false;
                    continue;
                }
                Some(Looked::Broken) => owner = Owner::Refused,
                Some(Looked::Plugin {
                    plugin,
                    skill_paths,
                    index,
                }) => {
                    if plugin.owns(dir, skill_paths) {
                        let i = *index.get_or_insert_with(|| {
                            out.plugins.push((**plugin).clone());
                            u32::try_from(out.plugins.len() - 1).unwrap_or(u32::MAX)
                        });
                        owner = Owner::Plugin(i);
                    } else if leaves(dir, &plugin.dir) {
                        // Reached through a symlink out of the plugin
                        // (a skills path refused, or any other link).
                        owner = Owner::Refused;
                    }
                }
            }
            break;
        }
        plain_parent = if plugin_above { None } else { parent };
        out.owners.push(owner);
    }
    out
}

/// True when the real location of `dir` is outside the real location of
/// `plugin_dir` (a symlink inside the plugin leading out).
fn leaves(dir: &Path, plugin_dir: &Path) -> bool {
    match (
        std::fs::canonicalize(dir),
        std::fs::canonicalize(plugin_dir),
    ) {
        (Ok(real), Ok(base)) => !real.starts_with(base),
        // Cannot tell: fail closed.
        _ => true,
    }
}

fn usable(plugin: Plugin, diagnostics: &mut Vec<Diagnostic>) -> Looked {
    let (skill_paths, problems) = plugin.skill_paths();
    diagnostics.extend(problems);
    Looked::Plugin {
        plugin: Box::new(plugin),
        skill_paths,
        index: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Code;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn skills_in_a_plugins_skills_folder_are_the_plugins_and_others_are_not() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        write(
            &root.join("docs/.claude-plugin/plugin.json"),
            r#"{"name":"document-skills"}"#,
        );
        let pdf = root.join("docs/skills/pdf");
        let other = root.join("docs/other/x");
        let plain = root.join("plain");
        for d in [&pdf, &other, &plain] {
            std::fs::create_dir_all(d).unwrap();
        }
        let r = assign(root, &[&pdf, &other, &plain]);
        assert_eq!(r.owners, [Owner::Plugin(0), Owner::None, Owner::None]);
        assert_eq!(r.plugins[0].manifest.name, "document-skills");
    }

    #[test]
    fn siblings_share_their_owner_only_when_no_plugin_is_above_them() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        write(
            &root.join("p/.claude-plugin/plugin.json"),
            r#"{"name":"p"}"#,
        );
        let dirs: Vec<PathBuf> = [
            "plain/a",
            "plain/b",
            "p/skills/c",
            "p/skills/d",
            "p/e",
            "plain/f",
        ]
        .iter()
        .map(|d| root.join(d))
        .collect();
        for d in &dirs {
            std::fs::create_dir_all(d).unwrap();
        }
        let refs: Vec<&Path> = dirs.iter().map(PathBuf::as_path).collect();
        let r = assign(root, &refs);
        assert_eq!(
            r.owners,
            [
                Owner::None,
                Owner::None,
                Owner::Plugin(0),
                Owner::Plugin(0),
                Owner::None,
                Owner::None
            ]
        );
    }

    #[test]
    fn the_skills_of_a_plugin_with_a_broken_manifest_are_refused() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        write(&root.join("p/.codex-plugin/plugin.json"), "{\"name\": ");
        let s = root.join("p/skills/s");
        std::fs::create_dir_all(&s).unwrap();
        let r = assign(root, &[&s]);
        assert_eq!(r.owners, [Owner::Refused]);
        assert_eq!(r.diagnostics[0].code, Code::PluginManifestInvalid);
    }

    #[test]
    fn a_marketplace_entry_without_a_manifest_is_a_plugin() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        write(
            &root.join(".claude-plugin/marketplace.json"),
            r#"{"name":"m","plugins":[{"name":"loose","source":"./loose","strict":false}]}"#,
        );
        let s = root.join("loose/skills/s");
        std::fs::create_dir_all(&s).unwrap();
        let r = assign(root, &[&s]);
        assert_eq!(r.owners, [Owner::Plugin(0)]);
        assert_eq!(r.plugins[0].manifest.name, "loose");
    }
}
