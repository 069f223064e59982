//! Marketplace sources: `marketplace:LOCATION#PLUGIN[:SKILL]`.
//!
//! `LOCATION` is a marketplace folder (one holding
//! `.claude-plugin/marketplace.json` or `.agents/plugins/marketplace.json`)
//! or a marketplace file; `PLUGIN` one of its entries; `SKILL` one of the
//! plugin's skills, as Claude Code names it (`document-skills:pdf`; without
//! it, every skill of the plugin). The entry's plugin is a folder inside
//! the marketplace (kept inside it, symlinks resolved) or a git repository
//! (fetched by [`crate::git`]: the ref resolved, exactly one commit, no
//! hook or filter run). Each skill is then installed like any skill
//! folder, and the lock records `marketplace:LOCATION#PLUGIN:SKILL` (the
//! location relative to the lockfile, as folder sources are) with the
//! commit for a git plugin. The manifests are read by the core
//! ([`skilldeck::plugin`]).

use std::path::{Path, PathBuf};

use skilldeck::Diagnostic;
use skilldeck::plugin::{
    self, Marketplace, MarketplaceEntry, PluginSource, qualified_name, split_qualified,
};
use skilldeck_package::PackageLimits;

use crate::error::Error;
use crate::git::{self, GitCheckout, GitSpec, RemoteRefs};

/// The prefix of a marketplace source.
pub const MARKETPLACE_PREFIX: &str = "marketplace:";

/// A git plugin folder may hold this many times a package's files and
/// bytes (a plugin holds several skills; each is still held to the package
/// limits when it is installed).
pub const PLUGIN_CHECKOUT_FACTOR: usize = 16;

/// Most skill names an error lists.
const MAX_NAMES_SHOWN: usize = 20;

/// True when `text` is a marketplace source.
pub fn is_marketplace_source(text: &str) -> bool {
    text.starts_with(MARKETPLACE_PREFIX)
}

/// What a marketplace source asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarketplaceSpec {
    /// The marketplace folder or file, as given.
    pub location: PathBuf,
    /// The plugin's name.
    pub plugin: String,
    /// The skill's name inside the plugin; `None`: every skill.
    pub skill: Option<String>,
}

impl MarketplaceSpec {
    /// Parses `marketplace:LOCATION#PLUGIN[:SKILL]` (the last `#` ends
    /// the location).
    pub fn parse(text: &str) -> Result<MarketplaceSpec, Error> {
        let bad = |message: &str| Error::Plugin {
            spec: text.to_owned(),
            message: message.to_owned(),
        };
        let rest = text
            .strip_prefix(MARKETPLACE_PREFIX)
            .ok_or_else(|| bad("a marketplace source starts with marketplace:"))?;
        let (location, entry) = rest.rsplit_once('#').ok_or_else(|| {
            bad("name the plugin: marketplace:PATH#PLUGIN or marketplace:PATH#PLUGIN:SKILL")
        })?;
        if location.is_empty() {
            return Err(bad(
                "the marketplace's folder or file is missing before '#'",
            ));
        }
        let (plugin, skill) = match split_qualified(entry) {
            Some((p, s)) => (p, Some(s)),
            None if !entry.contains(plugin::PLUGIN_SEPARATOR) => (entry, None),
            None => return Err(bad("write the entry as PLUGIN or PLUGIN:SKILL")),
        };
        if !plugin::is_plugin_name(plugin) {
            return Err(bad(&format!(
                "'{plugin}' is not a plugin name (lowercase letters, digits, single hyphens)"
            )));
        }
        if let Some(s) = skill
            && skilldeck::SkillName::new(s).is_err()
        {
            return Err(bad(&format!("'{s}' is not a skill name")));
        }
        Ok(MarketplaceSpec {
            location: PathBuf::from(location),
            plugin: plugin.to_owned(),
            skill: skill.map(str::to_owned),
        })
    }

    /// The source the lock records for skill `skill` of this plugin:
    /// `marketplace:LOCATION#PLUGIN:SKILL`, the location relative to the
    /// lockfile's folder (as folder sources are).
    pub fn lock_text(&self, skill: &str, lockfile: &Path) -> String {
        format!(
            "{MARKETPLACE_PREFIX}{}#{}",
            skilldeck_package::lock_source(&self.location, lockfile),
            qualified_name(&self.plugin, skill)
        )
    }

    /// This spec with its location as a lock's source names it (relative
    /// ones against the lockfile's folder).
    pub fn resolved_against(mut self, lockfile: &Path) -> MarketplaceSpec {
        self.location =
            skilldeck_package::resolve_source(&self.location.to_string_lossy(), lockfile);
        self
    }
}

impl std::fmt::Display for MarketplaceSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{MARKETPLACE_PREFIX}{}#{}",
            self.location.display(),
            self.plugin
        )?;
        if let Some(s) = &self.skill {
            write!(f, ":{s}")?;
        }
        Ok(())
    }
}

/// One skill of a fetched plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginSkill {
    /// Its name inside the plugin (its folder's name).
    pub skill: String,
    /// Its folder.
    pub folder: PathBuf,
}

/// A marketplace entry's plugin, on this machine: its skills (all, or the
/// one asked for) and, for a git plugin, the commit; the git folder lives
/// while this does.
#[derive(Debug)]
pub struct FetchedPlugin {
    /// The marketplace read.
    pub marketplace: Marketplace,
    /// The entry.
    pub entry: MarketplaceEntry,
    /// The skills asked for, sorted by name.
    pub skills: Vec<PluginSkill>,
    /// The commit, for a git plugin.
    pub commit: Option<String>,
    /// The git plugin's folder, removed when dropped.
    pub checkout: Option<GitCheckout>,
}

fn rendered(problems: &[Diagnostic]) -> String {
    problems
        .iter()
        .map(|d| format!("  {d}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Reads the marketplace and fetches the entry's plugin: a local folder
/// as it is (kept inside the marketplace's folder), a git one at
/// `commit` when given (a frozen install), else at its `sha`, else at its
/// ref's commit now; `tmp` holds the git folder.
pub fn fetch(
    spec: &MarketplaceSpec,
    commit: Option<&str>,
    tmp: &Path,
) -> Result<FetchedPlugin, Error> {
    let err = |message: String| Error::Plugin {
        spec: spec.to_string(),
        message,
    };
    let file = plugin::marketplace_file(&spec.location).ok_or_else(|| {
        err(format!(
            "{} holds no marketplace file ({} or {})",
            spec.location.display(),
            plugin::PluginKind::ClaudePlugin.marketplace_path(),
            plugin::PluginKind::CodexPlugin.marketplace_path()
        ))
    })?;
    let (market, problems) = plugin::read_marketplace(&file)
        .map_err(|p| err(format!("the marketplace cannot be read:\n{}", rendered(&p))))?;
    let Some(entry) = market.entry(&spec.plugin).cloned() else {
        let names: Vec<&str> = market.plugins.iter().map(|p| p.name.as_str()).collect();
        let mut message = format!(
            "the marketplace '{}' lists no plugin '{}'; it lists: {}",
            market.name,
            spec.plugin,
            if names.is_empty() {
                "(none)".to_owned()
            } else {
                names.join(", ")
            }
        );
        if !problems.is_empty() {
            message.push_str(&format!("\nentries left out:\n{}", rendered(&problems)));
        }
        return Err(err(message));
    };
    let (dir, checkout, commit) = match &entry.source {
        PluginSource::Local { path } => {
            let dir = market.local_dir(path);
            let real_root = std::fs::canonicalize(&market.root).map_err(|e| Error::Io {
                path: market.root.clone(),
                source: e,
            })?;
            let real = std::fs::canonicalize(&dir).map_err(|e| {
                err(format!(
                    "plugin '{}': its folder {} cannot be opened: {e}",
                    entry.name,
                    dir.display()
                ))
            })?;
            if !real.starts_with(&real_root) {
                return Err(err(format!(
                    "plugin '{}': its folder leads outside the marketplace's folder (to {}); \
                     refused",
                    entry.name,
                    real.display()
                )));
            }
            (real, None, None)
        }
        PluginSource::Git {
            url,
            reference,
            sha,
            path,
        } => {
            // `git+URL#[REF][:PATH]`: the git source's own parser checks it.
            let mut text = format!("git+{url}#");
            if let Some(r) = sha.as_ref().or(reference.as_ref()) {
                text.push_str(r);
            }
            if !path.is_empty() {
                text.push(':');
                text.push_str(path);
            }
            let git_spec = GitSpec::parse(&text)
                .map_err(|e| err(format!("plugin '{}': its source: {e}", entry.name)))?;
            let at = match commit {
                Some(c) => c.to_owned(),
                None => match sha {
                    Some(s) if git::is_full_commit(s) => s.to_ascii_lowercase(),
                    _ => {
                        let refs = RemoteRefs::list(&git_spec)?;
                        refs.resolve(&git_spec)?.commit
                    }
                },
            };
            let base = PackageLimits::default();
            let limits = PackageLimits {
                max_files: base.max_files.saturating_mul(PLUGIN_CHECKOUT_FACTOR),
                max_entries: base.max_entries.saturating_mul(PLUGIN_CHECKOUT_FACTOR),
                max_bytes: base.max_bytes.saturating_mul(PLUGIN_CHECKOUT_FACTOR as u64),
                ..base
            };
            let co = git::checkout_folder(&git_spec, &at, &limits, tmp)?;
            let commit = co.commit.clone();
            (co.folder(), Some(co), Some(commit))
        }
        PluginSource::Unsupported { kind } => {
            return Err(err(format!(
                "plugin '{}' comes from a '{kind}' source, which skilldeck does not fetch \
                 (it fetches local folders and git repositories)",
                entry.name
            )));
        }
    };
    let found = entry
        .plugin_in(&dir, market.kind)
        .map_err(|p| err(format!("plugin '{}':\n{}", entry.name, rendered(&p))))?;
    if found.manifest.name != entry.name {
        return Err(err(format!(
            "the marketplace lists plugin '{}' but its manifest names it '{}'",
            entry.name, found.manifest.name
        )));
    }
    let (paths, problems) = found.skill_paths();
    if !problems.is_empty() {
        return Err(err(format!(
            "plugin '{}':\n{}",
            entry.name,
            rendered(&problems)
        )));
    }
    let mut skills = plugin_skills(&paths);
    if let Some(want) = &spec.skill {
        skills.retain(|s| &s.skill == want);
        if skills.is_empty() {
            let all = plugin_skills(&paths);
            let names: Vec<String> = all
                .iter()
                .take(MAX_NAMES_SHOWN)
                .map(|s| qualified_name(&entry.name, &s.skill))
                .collect();
            return Err(err(format!(
                "plugin '{}' has no skill '{want}'; it has: {}{}",
                entry.name,
                if names.is_empty() {
                    "(none)".to_owned()
                } else {
                    names.join(", ")
                },
                if all.len() > MAX_NAMES_SHOWN {
                    ", ..."
                } else {
                    ""
                }
            )));
        }
    } else if skills.is_empty() {
        return Err(err(format!(
            "plugin '{}' has no skill (no folder with a SKILL.md in {})",
            entry.name,
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    Ok(FetchedPlugin {
        marketplace: market,
        entry,
        skills,
        commit,
        checkout,
    })
}

/// The skill folders of a plugin's skill paths: each path that holds a
/// `SKILL.md`, and each folder directly inside one that does; sorted by
/// name, the first of a name kept.
fn plugin_skills(paths: &[PathBuf]) -> Vec<PluginSkill> {
    let is_skill = |d: &Path| d.join(skilldeck::fs::SKILL_MD).is_file();
    let mut out: Vec<PluginSkill> = Vec::new();
    let mut push = |folder: PathBuf| {
        let Some(skill) = folder
            .file_name()
            .and_then(|n| n.to_str())
            .map(str::to_owned)
        else {
            return;
        };
        if !out.iter().any(|s| s.skill == skill) {
            out.push(PluginSkill { skill, folder });
        }
    };
    for p in paths {
        if is_skill(p) {
            push(p.clone());
            continue;
        }
        let Ok(list) = std::fs::read_dir(p) else {
            continue;
        };
        let mut dirs: Vec<PathBuf> = list
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|d| d.is_dir() && is_skill(d))
            .collect();
        dirs.sort();
        dirs.into_iter().for_each(&mut push);
    }
    out.sort_by(|a, b| a.skill.cmp(&b.skill));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marketplace_source_names_a_location_a_plugin_and_maybe_a_skill() {
        let s = MarketplaceSpec::parse("marketplace:../mkt#document-skills:pdf").unwrap();
        assert_eq!(s.location, PathBuf::from("../mkt"));
        assert_eq!(
            (s.plugin.as_str(), s.skill.as_deref()),
            ("document-skills", Some("pdf"))
        );
        let all =
            MarketplaceSpec::parse("marketplace:/m/.claude-plugin/marketplace.json#docs").unwrap();
        assert_eq!(all.skill, None);
        // The last '#' ends the location.
        let odd = MarketplaceSpec::parse("marketplace:./a#b#docs:pdf").unwrap();
        assert_eq!(odd.location, PathBuf::from("./a#b"));
        for bad in [
            "marketplace:./m",
            "marketplace:#docs",
            "marketplace:./m#Docs",
            "marketplace:./m#docs:Bad Name",
            "marketplace:./m#a:b:c",
        ] {
            assert!(MarketplaceSpec::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_lock_text_is_relative_to_the_lockfile() {
        let s = MarketplaceSpec::parse("marketplace:/work/mkt#docs:pdf").unwrap();
        assert_eq!(
            s.lock_text("pdf", Path::new("/work/proj/.agents/skilldeck.lock")),
            "marketplace:../../mkt#docs:pdf"
        );
    }
}
