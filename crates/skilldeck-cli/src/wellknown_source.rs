//! Well-known sources for `install`: `https://HOST[/PATH][#NAME]` read
//! through [`skilldeck_source::wellknown`] (the index, each artifact's
//! digest checked before it is unpacked), installed through the one
//! install path as a [`Source::Fetched`] recorded as
//! `wellknown+INDEX-URL#NAME` with the skill's fingerprint.

use std::io::Write;
use std::path::Path;

use skilldeck_package::discovery::ParsedIndex;
use skilldeck_package::{LockEntry, Source};
use skilldeck_source::wellknown::{WellKnownClient, WellKnownFetched, WellKnownSpec};

use crate::error::CliError;
use crate::render;

/// True when `text` names a well-known source.
pub fn is_well_known(text: &str) -> bool {
    skilldeck_source::wellknown::is_well_known_source(text)
}

fn source_error(e: skilldeck_source::Error) -> CliError {
    match e {
        skilldeck_source::Error::Client(e) => CliError::RegistryClient(e),
        other => CliError::Usage(other.to_string()),
    }
}

/// Longest description shown per entry by `install --list`.
const LIST_DESCRIPTION_CHARS: usize = 100;

/// `install URL --list`: every entry of the index (name, version, type,
/// digest, description), then the skipped ones with why.
pub fn list(text: &str, allow_http: bool, out: &mut dyn Write) -> Result<(), CliError> {
    let spec = WellKnownSpec::parse(text, allow_http).map_err(source_error)?;
    let client = WellKnownClient::new(allow_http).map_err(source_error)?;
    let index = client.index(&spec).map_err(source_error)?;
    writeln!(out, "{}", render::safe(spec.index.as_str()))?;
    for e in &index.entries {
        let mut description: String = e.description.chars().take(LIST_DESCRIPTION_CHARS).collect();
        if description.len() < e.description.len() {
            description.push('…');
        }
        let line = format!(
            "  {} {} {} {}  {}",
            e.name,
            e.version.as_deref().unwrap_or("-"),
            e.kind.as_str(),
            e.digest,
            description
        );
        writeln!(out, "{}", render::safe(&line))?;
    }
    for s in &index.skipped {
        let line = format!(
            "  skipped #{} {}: {}",
            s.position,
            s.name.as_deref().unwrap_or("(no name)"),
            s.reason
        );
        writeln!(out, "{}", render::safe(&line))?;
    }
    writeln!(
        out,
        "{} skill{} (install one: skilldeck install '{}#NAME')",
        index.entries.len(),
        if index.entries.len() == 1 { "" } else { "s" },
        text.split('#').next().unwrap_or(text)
    )?;
    Ok(())
}

/// A fetched skill and the source to install it as.
pub struct Fetched {
    /// What to install.
    pub source: Source,
    /// Its content fingerprint (checked again by the install).
    pub fingerprint: skilldeck::Digest,
    /// Keeps the package file until dropped.
    _file: WellKnownFetched,
}

fn fetched(f: WellKnownFetched) -> Fetched {
    Fetched {
        fingerprint: f.fingerprint,
        source: Source::Fetched {
            package: f.package().to_path_buf(),
            source: f.lock_source.clone(),
            fingerprint: f.fingerprint,
            signature: None,
            published: Vec::new(),
        },
        _file: f,
    }
}

fn names_hint(index: &ParsedIndex) -> String {
    let mut names: Vec<&str> = index.entries.iter().map(|e| e.name.as_str()).collect();
    let more = names.len().saturating_sub(10);
    names.truncate(10);
    let mut text = names.join(", ");
    if more > 0 {
        text.push_str(&format!(" and {more} more"));
    }
    text
}

/// Fetches the skills `text` (and `--skill` names) asks for from its
/// index, each artifact's digest checked.
pub fn fetch_for_install(
    text: &str,
    skills: &[String],
    allow_http: bool,
    tmp: &Path,
) -> Result<Vec<Fetched>, CliError> {
    let spec = WellKnownSpec::parse(text, allow_http).map_err(source_error)?;
    let client = WellKnownClient::new(allow_http).map_err(source_error)?;
    let index = client.index(&spec).map_err(source_error)?;
    let mut names: Vec<&str> = spec.skill.iter().map(String::as_str).collect();
    names.extend(skills.iter().map(String::as_str));
    if names.is_empty() {
        return Err(CliError::Usage(format!(
            "{}: name the skill to install: '{}#NAME' or --skill NAME (the index lists: {}; \
             `skilldeck install {} --list` shows them)",
            spec.index,
            text,
            names_hint(&index),
            text
        )));
    }
    names
        .into_iter()
        .map(|name| {
            client
                .fetch(&spec, &index, name, None, tmp)
                .map(fetched)
                .map_err(source_error)
        })
        .collect()
}

/// Fetches a lock entry's well-known skill again (`install --frozen`):
/// the index read now, the artifact's digest checked against it, and the
/// skill refused unless its fingerprint is the locked one.
pub fn fetch_locked(
    name: &str,
    entry: &LockEntry,
    allow_http: bool,
    tmp: &Path,
) -> Result<Fetched, CliError> {
    fetch_entry(name, entry, Some(&entry.fingerprint), allow_http, tmp)
}

/// Fetches what a lock entry's index offers for its skill now (`outdated`,
/// `update`): the artifact's digest checked against the index, whatever
/// its fingerprint.
pub fn fetch_now(
    name: &str,
    entry: &LockEntry,
    allow_http: bool,
    tmp: &Path,
) -> Result<Fetched, CliError> {
    fetch_entry(name, entry, None, allow_http, tmp)
}

fn fetch_entry(
    name: &str,
    entry: &LockEntry,
    expected: Option<&skilldeck::Digest>,
    allow_http: bool,
    tmp: &Path,
) -> Result<Fetched, CliError> {
    let spec = WellKnownSpec::parse(&entry.source, allow_http).map_err(source_error)?;
    let skill = spec.skill.clone().unwrap_or_else(|| name.to_owned());
    let client = WellKnownClient::new(allow_http).map_err(source_error)?;
    let index = client.index(&spec).map_err(source_error)?;
    client
        .fetch(&spec, &index, &skill, expected, tmp)
        .map(fetched)
        .map_err(source_error)
}
