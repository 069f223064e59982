//! The official MCP Skills extension (SEP-2640,
//! `io.modelcontextprotocol/skills`): skill entries with the verbatim
//! frontmatter and a complete `sha256:` manifest, for `skills/list` and
//! `skills/get`. Digests come from the host's manifest
//! ([`skilldeck_host::Manifest`]), cached by file stamp.
//!
//! A skill gets an entry only when it can honour the extension's promises:
//! its name can be a URI authority, its frontmatter is valid YAML with a
//! string `name` and `description`, every file is listed (no listing limit
//! hit), and it stays within [`MAX_SKILL_FILES`] files and
//! [`MAX_SKILL_BYTES`] bytes. Other skills are still served as tools,
//! prompts and resources; `skills/get` says why they have no entry.

use rmcp::model::{Skill as SkillEntry, SkillFrontmatter, SkillResource, SkillResources};
use skilldeck::Skill;
use skilldeck_host::ManifestFile;

use crate::engine::Engine;
use crate::uri;

/// Files per skill the extension lets a host refuse beyond (512).
pub const MAX_SKILL_FILES: usize = 512;
/// Total bytes per skill the extension lets a host refuse beyond (16 MiB).
pub const MAX_SKILL_BYTES: u64 = 16 * 1024 * 1024;

/// Why a skill has no extension entry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EntryError {
    /// The skill cannot be served through the extension (see the module
    /// documentation).
    #[error("skill '{name}' is not served through the Skills extension: {reason}")]
    NotServable {
        /// The skill.
        name: String,
        /// Why.
        reason: String,
    },
    /// A file could not be read while building the manifest.
    #[error("skill '{name}': {message}")]
    Read {
        /// The skill.
        name: String,
        /// What failed.
        message: String,
    },
}

fn not_servable(skill: &Skill, reason: impl Into<String>) -> EntryError {
    EntryError::NotServable {
        name: skill.name.clone(),
        reason: reason.into(),
    }
}

/// The verbatim frontmatter of `skill_md` (its bytes) as the extension's
/// object: `name` and `description` typed, every other field passed through.
pub fn frontmatter_of(skill: &Skill, skill_md: &[u8]) -> Result<SkillFrontmatter, EntryError> {
    let text =
        std::str::from_utf8(skill_md).map_err(|_| not_servable(skill, "SKILL.md is not UTF-8"))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let split = skilldeck::spec::split_frontmatter(text)
        .map_err(|d| not_servable(skill, format!("SKILL.md: {}", d.message)))?;
    let mut map = skilldeck::spec::to_json(split.yaml, split.yaml_line).map_err(|e| {
        not_servable(
            skill,
            format!(
                "its frontmatter is not valid YAML ({}:{}: {})",
                skill.skill_md.display(),
                e.pos.line,
                e.message
            ),
        )
    })?;
    let Some(serde_json::Value::String(name)) = map.remove("name") else {
        return Err(not_servable(skill, "its frontmatter has no string `name`"));
    };
    // A plugin skill is served as `PLUGIN:SKILL`; its frontmatter names
    // the skill alone.
    let plugin_skill = skill
        .name
        .split_once(uri::PLUGIN_SEPARATOR)
        .is_some_and(|(_, own)| own == name);
    if name != skill.name && !plugin_skill {
        return Err(not_servable(
            skill,
            format!("its frontmatter name '{name}' is not the name it is served under"),
        ));
    }
    let Some(serde_json::Value::String(description)) = map.remove("description") else {
        return Err(not_servable(
            skill,
            "its frontmatter has no string `description`",
        ));
    };
    let mut frontmatter = SkillFrontmatter::new(name, description);
    frontmatter.extra = map;
    Ok(frontmatter)
}

/// `_meta` of an entry: the skill's fingerprint (the core's, over the
/// entry's paths and digests) under
/// [`skilldeck_host::remote::FINGERPRINT_META_KEY`], so a gateway in front
/// of this server checks the manifest as a whole too.
fn fingerprint_meta(files: &[(String, skilldeck::digest::Digest)]) -> rmcp::model::MetaObject {
    let mut sorted: Vec<&(String, skilldeck::digest::Digest)> = files.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let fingerprint = skilldeck::digest::fingerprint(sorted.iter().map(|(p, d)| (p.as_str(), d)));
    let mut meta = rmcp::model::MetaObject::new();
    meta.insert(
        skilldeck_host::remote::FINGERPRINT_META_KEY.to_owned(),
        serde_json::Value::String(fingerprint.to_string()),
    );
    meta
}

/// The entry of an upstream's skill as this server re-serves it, from its
/// listing alone (nothing fetched): `skill://<upstream>/<skill>/SKILL.md`,
/// the upstream's frontmatter verbatim, its files with their listed
/// digests and sizes (a read fetches and verifies them first).
pub fn remote_entry(remote: &skilldeck_host::remote::RemoteSkill) -> SkillEntry {
    let mut extra = remote.frontmatter.clone();
    let description = match extra.remove("description") {
        Some(serde_json::Value::String(d)) => d,
        _ => String::new(),
    };
    extra.remove("name");
    let mut frontmatter = SkillFrontmatter::new(remote.skill_name.clone(), description);
    frontmatter.extra = extra;
    let files: Vec<SkillResource> = remote
        .files
        .iter()
        .map(|f| {
            SkillResource::new(
                uri::skill_uri(&remote.name, &f.path),
                f.digest.to_string(),
                f.size,
            )
        })
        .collect();
    let digests: Vec<(String, skilldeck::digest::Digest)> = remote
        .files
        .iter()
        .map(|f| (f.path.clone(), f.digest))
        .collect();
    SkillEntry::new(
        uri::skill_md_uri(&remote.name),
        frontmatter,
        SkillResources::Files(files),
    )
    .with_meta(fingerprint_meta(&digests))
}

/// The extension's entry for `skill`: `skill://<skill-path>/SKILL.md`
/// (`<name>`, or `outer/<name>` when nested: `uri::skill_path`), the
/// verbatim frontmatter, and every file with its digest and size.
pub fn entry(engine: &Engine, skill: &Skill) -> Result<SkillEntry, EntryError> {
    if !uri::name_fits_uri(&skill.name) {
        return Err(not_servable(
            skill,
            "its name cannot be the authority of a skill:// URI",
        ));
    }
    if crate::resources::instructions_file(skill) != "SKILL.md" {
        return Err(not_servable(
            skill,
            "its instructions file is not named SKILL.md, which the extension requires",
        ));
    }
    let read_error = |e: skilldeck::Error| EntryError::Read {
        name: skill.name.clone(),
        message: e.to_string(),
    };
    let listing = skilldeck::list_resources(skill).map_err(read_error)?;
    if listing.truncated || listing.omitted > 0 {
        return Err(not_servable(
            skill,
            format!(
                "its files cannot all be listed ({} not listable: too deep, too many, or names \
                 a URI path cannot carry)",
                listing.omitted
            ),
        ));
    }
    if listing.files.len() > MAX_SKILL_FILES {
        return Err(not_servable(
            skill,
            format!(
                "it has {} files; the extension's limit is {MAX_SKILL_FILES}",
                listing.files.len()
            ),
        ));
    }
    let listed_bytes: u64 = listing.files.iter().map(|f| f.size).sum();
    if listed_bytes > MAX_SKILL_BYTES {
        return Err(not_servable(
            skill,
            format!(
                "its files total {listed_bytes} bytes; the extension's limit is {MAX_SKILL_BYTES}"
            ),
        ));
    }
    let skill_md = skilldeck::read_resource(skill, "SKILL.md").map_err(read_error)?;
    let frontmatter = frontmatter_of(skill, skill_md.bytes())?;
    let skill_path = uri::skill_path(skill);
    let skill_md_uri = uri::skill_md_uri(&skill_path);
    let mut files = Vec::with_capacity(listing.files.len());
    let mut digests = Vec::with_capacity(listing.files.len() + 1);
    let mut total = 0u64;
    let mut has_skill_md = false;
    for file in &listing.files {
        let file_uri = uri::skill_uri(&skill_path, &file.path);
        let line = if file.path == "SKILL.md" {
            has_skill_md = true;
            // The bytes the frontmatter came from.
            ManifestFile::of_bytes(&file.path, skill_md.bytes())
        } else {
            engine
                .host()
                .manifest()
                .file(skill, &file.path)
                .map_err(read_error)?
        };
        total += line.size;
        if let Ok(digest) = skilldeck::digest::Digest::parse(&line.digest) {
            digests.push((file.path.clone(), digest));
        }
        files.push(SkillResource::new(
            file_uri,
            line.digest.to_string(),
            line.size,
        ));
    }
    if !has_skill_md {
        // SKILL.md reached through a symlink the listing does not follow.
        let line = ManifestFile::of_bytes("SKILL.md", skill_md.bytes());
        total += line.size;
        if let Ok(digest) = skilldeck::digest::Digest::parse(&line.digest) {
            digests.push(("SKILL.md".to_owned(), digest));
        }
        files.insert(
            0,
            SkillResource::new(skill_md_uri.clone(), line.digest.to_string(), line.size),
        );
    }
    if total > MAX_SKILL_BYTES {
        return Err(not_servable(
            skill,
            format!("its files total {total} bytes; the extension's limit is {MAX_SKILL_BYTES}"),
        ));
    }
    let entry = SkillEntry::new(skill_md_uri, frontmatter, SkillResources::Files(files));
    // Every digest is the manifest's own (always well formed).
    Ok(if digests.len() == entry_files(&entry) {
        entry.with_meta(fingerprint_meta(&digests))
    } else {
        entry
    })
}

fn entry_files(entry: &SkillEntry) -> usize {
    match &entry.resources {
        SkillResources::Files(files) => files.len(),
        _ => 0,
    }
}
