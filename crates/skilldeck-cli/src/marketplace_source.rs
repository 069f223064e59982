//! Marketplace sources for `install`: `marketplace:LOCATION#PLUGIN[:SKILL]`
//! resolved by [`skilldeck_source::marketplace`] (the entry's plugin read
//! or fetched), each skill installed through the one install path as a
//! [`Source::Checkout`]: the lock records
//! `marketplace:LOCATION#PLUGIN:SKILL`, the fingerprint, and the commit of
//! a git plugin.

use std::path::Path;

use skilldeck_package::{LockEntry, Source};
use skilldeck_source::marketplace::{self, FetchedPlugin, MarketplaceSpec};

use crate::error::CliError;

/// True when `text` names a marketplace source.
pub fn is_marketplace(text: &str) -> bool {
    marketplace::is_marketplace_source(text)
}

fn source_error(e: skilldeck_source::Error) -> CliError {
    CliError::Usage(e.to_string())
}

/// Reads the marketplace source `text` for `install`: every skill it
/// names as a source (the plugin's folder lives in the returned value).
pub fn fetch_for_install(
    text: &str,
    lockfile: &Path,
    tmp: &Path,
) -> Result<(FetchedPlugin, Vec<Source>), CliError> {
    let spec = MarketplaceSpec::parse(text).map_err(source_error)?;
    let fetched = marketplace::fetch(&spec, None, tmp).map_err(source_error)?;
    let sources = fetched
        .skills
        .iter()
        .map(|s| Source::Checkout {
            folder: s.folder.clone(),
            source: spec.lock_text(&s.skill, lockfile),
            commit: fetched.commit.clone(),
            fingerprint: None,
        })
        .collect();
    Ok((fetched, sources))
}

/// A lock entry's marketplace source again (for `install --frozen`): a git
/// plugin at exactly its locked commit; refused unless the skill has the
/// locked fingerprint.
pub fn fetch_locked(
    name: &str,
    entry: &LockEntry,
    lockfile: &Path,
    tmp: &Path,
) -> Result<(FetchedPlugin, Source), CliError> {
    let (fetched, folder) = fetch_entry(name, entry, entry.commit.as_deref(), lockfile, tmp)?;
    let source = Source::Checkout {
        folder,
        source: entry.source.clone(),
        commit: fetched.commit.clone(),
        fingerprint: Some(entry.fingerprint),
    };
    Ok((fetched, source))
}

/// What a lock entry's marketplace entry offers for its skill now
/// (`outdated`, `update`): the marketplace read again, a git plugin at
/// its ref's commit now; the skill's folder, its fingerprint and the
/// source to install it as (refused by the install unless it still has
/// that fingerprint).
pub fn fetch_now(
    name: &str,
    entry: &LockEntry,
    lockfile: &Path,
    tmp: &Path,
) -> Result<(FetchedPlugin, Source, skilldeck::Digest), CliError> {
    let (fetched, folder) = fetch_entry(name, entry, None, lockfile, tmp)?;
    let fingerprint =
        skilldeck_package::folder_manifest(&folder, &skilldeck_package::PackageLimits::default())
            .map_err(|e| CliError::Usage(format!("{}: {e}", entry.source)))?
            .fingerprint();
    let source = Source::Checkout {
        folder,
        source: entry.source.clone(),
        commit: fetched.commit.clone(),
        fingerprint: Some(fingerprint),
    };
    Ok((fetched, source, fingerprint))
}

/// A lock entry's marketplace entry fetched (a git plugin at `commit`, or
/// at its ref's commit now when `None`) and the folder of its one skill;
/// refused when the entry names no skill or the plugin has none.
fn fetch_entry(
    name: &str,
    entry: &LockEntry,
    commit: Option<&str>,
    lockfile: &Path,
    tmp: &Path,
) -> Result<(FetchedPlugin, std::path::PathBuf), CliError> {
    let spec = MarketplaceSpec::parse(&entry.source)
        .map_err(source_error)?
        .resolved_against(lockfile);
    if spec.skill.is_none() {
        return Err(CliError::Usage(format!(
            "{}: skill '{name}' has the source {} with no skill after the plugin: install it \
             again to record one",
            lockfile.display(),
            entry.source
        )));
    }
    let fetched = marketplace::fetch(&spec, commit, tmp).map_err(source_error)?;
    let skill = fetched.skills.first().ok_or_else(|| {
        CliError::Usage(format!(
            "{}: {} has no skill",
            lockfile.display(),
            entry.source
        ))
    })?;
    let folder = skill.folder.clone();
    Ok((fetched, folder))
}
