//! Skill files as MCP resources: `skill://<skill-path>/<path>` for every
//! file (the skill path is `<name>`, or `outer/<name>` for a nested skill:
//! `uri::skill_path`)
//! (SKILL.md as `text/markdown`, others by extension; text as text, the
//! rest as base64 blobs), two resource templates, and directory reads
//! (`skill://<name>` and its subfolders, `inode/directory`) for the Skills
//! extension. Reads go through the core's safe read: a path that leaves
//! the skill is refused whatever its spelling.

use rmcp::ErrorData;
use rmcp::model::{
    DIRECTORY_MIME_TYPE, ListResourceTemplatesResult, ListResourcesResult, Resource,
    ResourceContents, ResourceTemplate,
};
use skilldeck::{ResourceContent, ResourceProblem, Skill};

use crate::cursor;
use crate::engine::Snapshot;
use crate::uri;

/// The name of the skill's instructions file in its folder: `SKILL.md`, or
/// `skill.md` for skills that only have that (lenient discovery).
pub fn instructions_file(skill: &Skill) -> &str {
    skill
        .skill_md
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("SKILL.md")
}

/// The MCP resource describing a skill's `SKILL.md`.
pub fn skill_md_resource(skill: &Skill, size: Option<u64>) -> Resource {
    let mut r = Resource::new(
        uri::skill_uri(&uri::skill_path(skill), instructions_file(skill)),
        skill.name.clone(),
    )
    .with_description(skill.description.clone())
    .with_mime_type("text/markdown");
    if let Some(size) = size {
        r = r.with_size(size);
    }
    r
}

/// `resources/list`: every file of every served skill, a page of skills at
/// a time (a skill's files never straddle pages).
pub fn list(
    host: &skilldeck_host::Host,
    snapshot: &Snapshot,
    cursor_in: Option<&str>,
    skills_per_page: usize,
) -> Result<ListResourcesResult, ErrorData> {
    let remote = host.remote();
    let remote_of = |s: &Skill| remote.as_ref().and_then(|r| r.of(s).cloned());
    let skills: Vec<&Skill> = snapshot
        .served()
        .filter(|s| uri::name_fits_uri(&s.name) || remote_of(s).is_some())
        .collect();
    let (range, next) = cursor::page(
        cursor_in,
        snapshot.generation,
        skills.len(),
        skills_per_page,
    )?;
    let mut items = Vec::new();
    for skill in &skills[range] {
        // An upstream's skill: its listed files (nothing is fetched to
        // list them).
        if let Some(remote) = remote_of(skill) {
            for file in &remote.files {
                if file.path == "SKILL.md" {
                    items.push(skill_md_resource(skill, Some(file.size)));
                } else {
                    items.push(
                        Resource::new(uri::skill_uri(&skill.name, &file.path), file.path.clone())
                            .with_mime_type(skilldeck::resources::mime_for(&file.path, true))
                            .with_size(file.size),
                    );
                }
            }
            continue;
        }
        match skilldeck::list_resources(skill) {
            Ok(listing) => {
                for file in listing.files {
                    if file.path == instructions_file(skill) {
                        items.push(skill_md_resource(skill, Some(file.size)));
                    } else {
                        let mime = skilldeck::resources::mime_for(&file.path, true);
                        items.push(
                            Resource::new(
                                uri::skill_uri(&uri::skill_path(skill), &file.path),
                                file.path,
                            )
                            .with_mime_type(mime)
                            .with_size(file.size),
                        );
                    }
                }
            }
            Err(e) => {
                tracing::warn!(skill = %skill.name, error = %e, "cannot list skill files");
                items.push(skill_md_resource(skill, None));
            }
        }
    }
    let mut result = ListResourcesResult::with_all_items(items);
    result.next_cursor = next;
    Ok(result)
}

/// `resources/templates/list`: a skill's SKILL.md, and any file of a skill.
pub fn templates() -> ListResourceTemplatesResult {
    let skill_md = ResourceTemplate::new("skill://{name}/SKILL.md", "skill-instructions")
        .with_title("A skill's instructions")
        .with_description("The SKILL.md of the skill named {name}: frontmatter and instructions.")
        .with_mime_type("text/markdown");
    let file = ResourceTemplate::new("skill://{name}/{+path}", "skill-file")
        .with_title("A file of a skill")
        .with_description(
            "The file at {path} (relative, `/`-separated) in the folder of the skill named \
             {name}. Paths that leave the skill folder are refused.",
        );
    ListResourceTemplatesResult::with_all_items(vec![skill_md, file])
}

/// Resource not found (`-32002`), with the URI asked for in `data.uri`
/// (SEP-2164), so a client can tell which of its reads failed.
fn unknown_resource(uri: &str, why: impl std::fmt::Display) -> ErrorData {
    ErrorData::resource_not_found(
        format!("no resource at {uri}: {why}"),
        Some(serde_json::json!({ "uri": uri })),
    )
}

/// The skill a `skill://` URI names, and the decoded path in it: the most
/// specific skill path that is a served skill's (`uri::splits`), else the
/// first segment as a skill name (the flat form older releases published
/// for nested skills, still read).
pub fn resolve<'a>(
    snapshot: &'a Snapshot,
    uri_text: &str,
) -> Result<(&'a Skill, String), ErrorData> {
    let parsed =
        uri::parse(uri_text).map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
    for (name, skill_path, path) in uri::splits(&parsed) {
        if let Some(skill) = snapshot.get(&name)
            && uri::skill_path(skill) == skill_path
        {
            return Ok((skill, path));
        }
        // An upstream's skill: its namespaced name is its skill path.
        if skill_path.contains(skilldeck_host::remote::NAMESPACE_SEPARATOR)
            && let Some(skill) = snapshot.get(&skill_path)
        {
            return Ok((skill, path));
        }
    }
    let skill = snapshot
        .require(&parsed.name)
        .map_err(|e| unknown_resource(uri_text, e))?;
    Ok((skill, parsed.path))
}

fn resource_error(uri_text: &str, error: skilldeck::Error) -> ErrorData {
    match &error {
        skilldeck::Error::Resource { problem, .. } => match problem {
            ResourceProblem::NotFound => unknown_resource(uri_text, "no such file in the skill"),
            ResourceProblem::Io(_) => ErrorData::internal_error(error.to_string(), None),
            _ => ErrorData::invalid_params(format!("{uri_text}: {error}"), None),
        },
        _ => ErrorData::internal_error(error.to_string(), None),
    }
}

/// An upstream's skill fetched and verified before its files are read
/// ([`skilldeck_host::Host::ensure_local`]); a refusal is the client's
/// error to see, naming the upstream and what was wrong.
pub fn ensure_local(host: &skilldeck_host::Host, skill: &Skill) -> Result<(), ErrorData> {
    host.ensure_local(skill).map_err(|e| match e {
        skilldeck::Error::Upstream { .. } => ErrorData::internal_error(e.to_string(), None),
        other => ErrorData::internal_error(other.to_string(), None),
    })
}

/// `resources/read` of a skill file.
pub fn read(
    host: &skilldeck_host::Host,
    snapshot: &Snapshot,
    uri_text: &str,
) -> Result<ResourceContents, ErrorData> {
    let (skill, path) = resolve(snapshot, uri_text)?;
    ensure_local(host, skill)?;
    if path.is_empty() {
        return Err(ErrorData::invalid_params(
            format!("{uri_text} is a directory resource; read it with resources/directory/read"),
            None,
        ));
    }
    let resource =
        skilldeck::read_resource(skill, &path).map_err(|e| resource_error(uri_text, e))?;
    let mime = resource.mime;
    Ok(match resource.content {
        ResourceContent::Text(text) => ResourceContents::text(text, uri_text).with_mime_type(mime),
        ResourceContent::Binary(bytes) => {
            use base64::Engine as _;
            let blob = base64::engine::general_purpose::STANDARD.encode(bytes);
            ResourceContents::blob(blob, uri_text).with_mime_type(mime)
        }
    })
}

/// `resources/directory/read`: the direct children of a skill folder or one
/// of its subfolders (files with their metadata, subfolders as
/// `inode/directory`), a page at a time.
pub fn read_directory(
    host: &skilldeck_host::Host,
    snapshot: &Snapshot,
    uri_text: &str,
    cursor_in: Option<&str>,
    page: usize,
) -> Result<ListResourcesResult, ErrorData> {
    let not_directory =
        || ErrorData::invalid_params(format!("{uri_text} is not a directory resource"), None);
    let (skill, dir) = resolve(snapshot, uri_text).map_err(|e| {
        if e.code == rmcp::model::ErrorCode::RESOURCE_NOT_FOUND {
            ErrorData::invalid_params(e.message, e.data)
        } else {
            e
        }
    })?;
    let remote = host.remote().is_some_and(|r| r.of(skill).is_some());
    if !uri::name_fits_uri(&skill.name) && !remote {
        return Err(not_directory());
    }
    ensure_local(host, skill)?;
    let skill_path = uri::skill_path(skill);
    let dir = if dir.is_empty() {
        dir
    } else {
        skilldeck::resources::normalize_resource_path(&dir)
            .map_err(|p| ErrorData::invalid_params(format!("{uri_text}: {p}"), None))?
    };
    let listing = skilldeck::list_resources(skill).map_err(|e| resource_error(uri_text, e))?;
    let prefix = if dir.is_empty() {
        String::new()
    } else {
        format!("{dir}/")
    };
    let mut children: Vec<Resource> = Vec::new();
    let mut last_dir: Option<&str> = None;
    let mut found = dir.is_empty();
    for file in &listing.files {
        let Some(rest) = file.path.strip_prefix(&prefix) else {
            continue;
        };
        found = true;
        match rest.split_once('/') {
            None if file.path == instructions_file(skill) => {
                children.push(skill_md_resource(skill, Some(file.size)));
            }
            None => children.push(
                Resource::new(uri::skill_uri(&skill_path, &file.path), rest.to_owned())
                    .with_mime_type(skilldeck::resources::mime_for(rest, true))
                    .with_size(file.size),
            ),
            Some((sub, _)) => {
                // Files are sorted by path, so a folder's files are adjacent.
                if last_dir != Some(sub) {
                    last_dir = Some(sub);
                    let child = format!("{prefix}{sub}");
                    children.push(
                        Resource::new(uri::skill_uri(&skill_path, &child), sub.to_owned())
                            .with_mime_type(DIRECTORY_MIME_TYPE),
                    );
                }
            }
        }
    }
    // Folders holding no listable file (empty ones) are children too.
    let subfolders = skilldeck::resources::list_folders(skill, &dir);
    if !found && subfolders.is_none() {
        return Err(not_directory());
    }
    for sub in subfolders.unwrap_or_default() {
        let child = format!("{prefix}{sub}");
        children.push(
            Resource::new(uri::skill_uri(&skill_path, &child), sub)
                .with_mime_type(DIRECTORY_MIME_TYPE),
        );
    }
    children.sort_by(|a, b| a.uri.cmp(&b.uri));
    children.dedup_by(|a, b| a.uri == b.uri);
    let (range, next) = cursor::page(cursor_in, snapshot.generation, children.len(), page)?;
    let items: Vec<Resource> = children.drain(range).collect();
    let mut result = ListResourcesResult::with_all_items(items);
    result.next_cursor = next;
    Ok(result)
}
