//! Skills another MCP server serves through the Skills extension
//! (SEP-2640): the rules of `skilldeck serve --upstream`, stated here so
//! the face that speaks MCP to the upstream only moves bytes.
//!
//! - **Names** are namespaced per upstream: `<upstream>/<skill>`
//!   ([`namespaced`]). A local skill's name never holds a `/`, so an
//!   upstream's skill can never take a local one's place, and the name is
//!   the skill path it is re-served under (`skill://<upstream>/<skill>/...`,
//!   the nested form SEP-2640 allows).
//! - **The catalog** comes from the upstream's `skills/list` alone: an entry
//!   becomes a [`RemoteSkill`] when its URI, name, files, digests and sizes
//!   are well formed and within the named limits, and its frontmatter
//!   parses and validates with the core ([`RemoteSkill::from_listing`]).
//!   Nothing else is read: no prefetching.
//! - **Files** are fetched when the skill is first used (activated, a file
//!   read), `SKILL.md` first, each checked against its listed size and
//!   digest as it arrives, the fetched `SKILL.md`'s frontmatter compared
//!   field by field with the listing's, and the whole against the skill's
//!   fingerprint ([`skilldeck::digest`]); only then is the folder written,
//!   whole, into the cache under that fingerprint ([`RemoteSkills::materialise`]).
//!   Anything that does not verify is refused with the upstream's name and
//!   what was wrong ([`skilldeck::Error::Upstream`]); the other skills are
//!   served as before.
//!
//! The transport is the face's: it implements [`Upstream`].

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Map, Value};
use skilldeck::digest::{Digest, fingerprint};
use skilldeck::{Error, HostFields, Scope, Skill, SkillMode, UpstreamProblem, ValidationOptions};

/// The separator between an upstream's name and its skill's name.
pub const NAMESPACE_SEPARATOR: char = '/';

/// Longest upstream name, in characters.
pub const MAX_UPSTREAM_NAME_CHARS: usize = 64;

/// Skills taken from one upstream's listing; the rest are refused.
pub const MAX_UPSTREAM_SKILLS: usize = 10_000;

/// Files per upstream skill (the Skills extension's figure, as the server
/// side uses).
pub const MAX_REMOTE_SKILL_FILES: usize = 512;

/// Bytes of all an upstream skill's files together (16 MiB).
pub const MAX_REMOTE_SKILL_BYTES: u64 = 16 * 1024 * 1024;

/// The `_meta` key under which a skilldeck server announces a skill's
/// fingerprint in its `skills/list` entry.
pub const FINGERPRINT_META_KEY: &str = "dev.skilldeck/fingerprint";

/// The folder of the upstream records under the cache
/// ([`RemoteSkills::write_record`]).
pub const RECORDS_DIR: &str = ".upstreams";

/// An upstream's name: the namespace of its skills. Lowercase letters,
/// digits and `-`, 1 to [`MAX_UPSTREAM_NAME_CHARS`] characters, not
/// starting or ending with `-`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct UpstreamName(String);

impl UpstreamName {
    /// `text` as an upstream name, or why it is not one.
    pub fn new(text: &str) -> Result<UpstreamName, String> {
        let valid = !text.is_empty()
            && text.chars().count() <= MAX_UPSTREAM_NAME_CHARS
            && text
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            && !text.starts_with('-')
            && !text.ends_with('-');
        if valid {
            Ok(UpstreamName(text.to_owned()))
        } else {
            Err(format!(
                "'{text}' is not an upstream name: use 1 to {MAX_UPSTREAM_NAME_CHARS} lowercase \
                 letters, digits and '-' (not at either end), as in --upstream docs=URL"
            ))
        }
    }

    /// A name made from `hint` (a host name, a program name): lowercased,
    /// every run of other characters one `-`; `upstream` when nothing is
    /// left.
    pub fn from_hint(hint: &str) -> UpstreamName {
        let mut out = String::new();
        for c in hint.chars() {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_lowercase() || c.is_ascii_digit() {
                out.push(c);
            } else if !out.is_empty() && !out.ends_with('-') {
                out.push('-');
            }
        }
        let mut out: String = out.chars().take(MAX_UPSTREAM_NAME_CHARS).collect();
        while out.ends_with('-') {
            out.pop();
        }
        if out.is_empty() {
            out.push_str("upstream");
        }
        UpstreamName(out)
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for UpstreamName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The name an upstream's skill is served under: `<upstream>/<skill>`.
pub fn namespaced(upstream: &UpstreamName, skill: &str) -> String {
    format!("{upstream}{NAMESPACE_SEPARATOR}{skill}")
}

/// One `skills/list` entry as the upstream sent it, free of any protocol
/// type: the face copies it out of its SDK's.
#[derive(Debug, Clone, PartialEq)]
pub struct Listing {
    /// The URI of its `SKILL.md` (`skill://<skill-path>/SKILL.md`).
    pub uri: String,
    /// The frontmatter, as a JSON object (`name` and `description` in it).
    pub frontmatter: Map<String, Value>,
    /// Every file: URI, `sha256:` digest, size in bytes.
    pub files: Vec<(String, String, u64)>,
    /// The fingerprint the upstream announces, if it does
    /// ([`FINGERPRINT_META_KEY`]).
    pub fingerprint: Option<String>,
}

/// A file of a [`RemoteSkill`]: where the upstream serves it and what it
/// must be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteFile {
    /// Its path in the skill folder (`/`-separated, normalised).
    pub path: String,
    /// The URI the upstream serves it at.
    pub uri: String,
    /// Its digest.
    pub digest: Digest,
    /// Its size in bytes.
    pub size: u64,
}

/// An upstream's skill, as listed (nothing fetched).
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteSkill {
    /// The upstream serving it.
    pub upstream: UpstreamName,
    /// The name it is served under here ([`namespaced`]).
    pub name: String,
    /// Its name at the upstream (its frontmatter `name`).
    pub skill_name: String,
    /// The upstream's URI of its `SKILL.md`.
    pub uri: String,
    /// The listed frontmatter, verbatim.
    pub frontmatter: Map<String, Value>,
    /// Its files, sorted by path (`SKILL.md` among them).
    pub files: Vec<RemoteFile>,
    /// The fingerprint its files make ([`skilldeck::digest::fingerprint`]).
    pub fingerprint: Digest,
}

fn refuse(
    upstream: &UpstreamName,
    skill: &str,
    problem: UpstreamProblem,
    message: String,
) -> Error {
    Error::Upstream {
        upstream: upstream.to_string(),
        skill: skill.to_owned(),
        problem,
        message,
    }
}

/// How a skill URI marks a plugin's segment (`skill://PLUGIN%3A/SKILL/...`,
/// either hex case): the segment before the skill's own ends with it.
const PLUGIN_MARKERS: [&str; 2] = ["%3A", "%3a"];

/// The plugin of a skill path `[...]/PLUGIN%3A/SKILL`, if it has one.
fn plugin_of(skill_path: &str) -> Option<&str> {
    let (before, _skill) = skill_path.rsplit_once('/')?;
    let segment = before.rsplit('/').next()?;
    PLUGIN_MARKERS
        .iter()
        .find_map(|m| segment.strip_suffix(m))
        .filter(|p| !p.is_empty() && !p.contains('%'))
}

/// `skill_path` without its plugin marker (to check it has no other
/// escape).
fn without_plugin(skill_path: &str) -> String {
    match plugin_of(skill_path) {
        Some(plugin) => {
            let (before, skill) = skill_path.rsplit_once('/').unwrap_or(("", skill_path));
            let outer = before.rsplit_once('/').map(|(o, _)| format!("{o}/"));
            format!("{}{plugin}/{skill}", outer.unwrap_or_default())
        }
        None => skill_path.to_owned(),
    }
}

/// The text of a `SKILL.md` holding only `frontmatter` (JSON is YAML).
fn frontmatter_text(frontmatter: &Map<String, Value>) -> String {
    format!("---\n{}\n---\n", Value::Object(frontmatter.clone()))
}

/// The frontmatter of a fetched `SKILL.md` as a JSON object, or why not.
fn frontmatter_of(skill_md: &[u8]) -> Result<Map<String, Value>, String> {
    let text = std::str::from_utf8(skill_md).map_err(|_| "SKILL.md is not UTF-8".to_owned())?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let split = skilldeck::spec::split_frontmatter(text).map_err(|d| d.message.clone())?;
    skilldeck::spec::to_json(split.yaml, split.yaml_line)
        .map_err(|e| format!("line {}: {}", e.pos.line, e.message))
}

/// The core's verdict on `text` (a `SKILL.md`): its frontmatter, or the
/// first error.
fn validate(text: &str, options: &ValidationOptions) -> Result<skilldeck::Frontmatter, String> {
    let checked = skilldeck::check_text(text, None, options);
    if let Some(error) = checked.diagnostics.iter().find(|d| d.is_error()) {
        return Err(format!("{} ({})", error.message, error.code.as_str()));
    }
    checked
        .frontmatter
        .ok_or_else(|| "it has no frontmatter".to_owned())
}

impl RemoteSkill {
    /// Checks `listing` from `upstream`: a `skill://<path>/SKILL.md` URI
    /// whose last path segment is the frontmatter's `name`; a frontmatter
    /// that validates with the core under `options`; every file under the
    /// skill's URI, with a well-formed path, digest and size, `SKILL.md`
    /// among them; no more than [`MAX_REMOTE_SKILL_FILES`] files and
    /// [`MAX_REMOTE_SKILL_BYTES`] bytes; and the announced fingerprint, if
    /// any, the one the files make. Returns the skill and its validated
    /// frontmatter.
    pub fn from_listing(
        upstream: &UpstreamName,
        listing: Listing,
        options: &ValidationOptions,
    ) -> Result<(RemoteSkill, skilldeck::Frontmatter), Error> {
        let label = match listing.frontmatter.get("name") {
            Some(Value::String(name)) => name.clone(),
            _ => listing.uri.clone(),
        };
        let bad = |problem, message: String| refuse(upstream, &label, problem, message);
        let Some(Value::String(name)) = listing.frontmatter.get("name") else {
            return Err(bad(
                UpstreamProblem::Frontmatter,
                "its listed frontmatter has no string `name`".into(),
            ));
        };
        let name = name.clone();
        let skill_path = listing
            .uri
            .strip_prefix("skill://")
            .and_then(|rest| rest.strip_suffix("/SKILL.md"))
            .filter(|p| {
                !p.is_empty() && !p.contains(['?', '#']) && !without_plugin(p).contains('%')
            })
            .ok_or_else(|| {
                bad(
                    UpstreamProblem::Listing,
                    format!(
                        "its URI {} is not skill://<skill-path>/SKILL.md",
                        listing.uri
                    ),
                )
            })?;
        if skill_path.rsplit('/').next() != Some(name.as_str()) {
            return Err(bad(
                UpstreamProblem::Frontmatter,
                format!(
                    "its frontmatter name '{name}' is not the last segment of its URI {}",
                    listing.uri
                ),
            ));
        }
        let frontmatter =
            validate(&frontmatter_text(&listing.frontmatter), options).map_err(|e| {
                bad(
                    UpstreamProblem::Frontmatter,
                    format!("its listed frontmatter: {e}"),
                )
            })?;
        if listing.files.len() > MAX_REMOTE_SKILL_FILES {
            return Err(bad(
                UpstreamProblem::TooLarge,
                format!(
                    "it lists {} files; the limit is {MAX_REMOTE_SKILL_FILES}",
                    listing.files.len()
                ),
            ));
        }
        let prefix = format!("skill://{skill_path}/");
        let mut files = Vec::with_capacity(listing.files.len());
        let mut total: u64 = 0;
        for (uri, digest, size) in &listing.files {
            let encoded = uri.strip_prefix(&prefix).ok_or_else(|| {
                bad(
                    UpstreamProblem::Listing,
                    format!("it lists {uri}, which is not under {prefix}"),
                )
            })?;
            let decoded = skilldeck::text::percent::decode_strict(encoded).ok_or_else(|| {
                bad(
                    UpstreamProblem::Listing,
                    format!("{uri} has a malformed escape"),
                )
            })?;
            let path = skilldeck::resources::normalize_resource_path(&decoded)
                .map_err(|p| bad(UpstreamProblem::Listing, format!("it lists {uri}: {p}")))?;
            let digest = Digest::parse(digest)
                .map_err(|e| bad(UpstreamProblem::Listing, format!("{uri}: {e}")))?;
            total = total.saturating_add(*size);
            files.push(RemoteFile {
                path,
                uri: uri.clone(),
                digest,
                size: *size,
            });
        }
        if total > MAX_REMOTE_SKILL_BYTES {
            return Err(bad(
                UpstreamProblem::TooLarge,
                format!("its files total {total} bytes; the limit is {MAX_REMOTE_SKILL_BYTES}"),
            ));
        }
        files.sort_by(|a, b| a.path.cmp(&b.path));
        if let Some(twice) = files.windows(2).find(|w| w[0].path == w[1].path) {
            return Err(bad(
                UpstreamProblem::Listing,
                format!("it lists {} twice", twice[0].path),
            ));
        }
        if !files.iter().any(|f| f.path == "SKILL.md") {
            return Err(bad(
                UpstreamProblem::Listing,
                "its files do not include SKILL.md".into(),
            ));
        }
        let computed = fingerprint(files.iter().map(|f| (f.path.as_str(), &f.digest)));
        if let Some(announced) = &listing.fingerprint {
            let announced = Digest::parse(announced).map_err(|e| {
                bad(
                    UpstreamProblem::Fingerprint,
                    format!("its fingerprint: {e}"),
                )
            })?;
            if announced != computed {
                return Err(bad(
                    UpstreamProblem::Fingerprint,
                    format!(
                        "it announces fingerprint {announced}, but its listed files make {computed}"
                    ),
                ));
            }
        }
        Ok((
            RemoteSkill {
                upstream: upstream.clone(),
                // A plugin's skill (`PLUGIN%3A/SKILL`) keeps its plugin in
                // its served name: `UPSTREAM/PLUGIN:SKILL`.
                name: match plugin_of(skill_path) {
                    Some(plugin) => namespaced(upstream, &format!("{plugin}:{name}")),
                    None => namespaced(upstream, &name),
                },
                skill_name: name,
                uri: listing.uri,
                frontmatter: listing.frontmatter,
                files,
                fingerprint: computed,
            },
            frontmatter,
        ))
    }

    /// Where its verified files live in `cache` (by fingerprint).
    pub fn folder(&self, cache: &Path) -> PathBuf {
        cache.join(self.fingerprint.hex())
    }

    /// The deck's skill for it: its namespaced name, the listed
    /// description and host fields, its `SKILL.md` in the cache folder
    /// (which exists once it is materialised).
    fn skill(&self, cache: &Path, frontmatter: &skilldeck::Frontmatter) -> Skill {
        let folder = self.folder(cache);
        Skill {
            name: self.name.clone(),
            description: frontmatter.description.clone().unwrap_or_default(),
            resolved_dir: None,
            skill_md: folder.join("SKILL.md"),
            scope: Scope::Extra,
            root: Arc::from(folder.as_path()),
            mode: SkillMode::default(),
            host: HostFields::from_frontmatter(frontmatter),
        }
    }

    fn refuse(&self, problem: UpstreamProblem, message: String) -> Error {
        refuse(&self.upstream, &self.skill_name, problem, message)
    }

    /// Checks one fetched file against its listing: size, then digest; for
    /// `SKILL.md`, its frontmatter against the listed one and the core's
    /// validation.
    pub fn verify(
        &self,
        file: &RemoteFile,
        bytes: &[u8],
        options: &ValidationOptions,
    ) -> Result<(), Error> {
        let received = bytes.len() as u64;
        if received != file.size {
            return Err(self.refuse(
                UpstreamProblem::SizeMismatch,
                format!(
                    "{} is listed as {} bytes but {received} bytes were received",
                    file.uri, file.size
                ),
            ));
        }
        let digest = Digest::of(bytes);
        if digest != file.digest {
            return Err(self.refuse(
                UpstreamProblem::DigestMismatch,
                format!(
                    "{} is listed with digest {} but its content hashes to {digest}",
                    file.uri, file.digest
                ),
            ));
        }
        if file.path == "SKILL.md" {
            let fetched = frontmatter_of(bytes).map_err(|e| {
                self.refuse(
                    UpstreamProblem::Frontmatter,
                    format!("its SKILL.md frontmatter does not parse: {e}"),
                )
            })?;
            let keys = self.frontmatter.keys().chain(fetched.keys());
            if let Some(key) = keys
                .into_iter()
                .find(|k| self.frontmatter.get(*k) != fetched.get(*k))
            {
                return Err(self.refuse(
                    UpstreamProblem::Frontmatter,
                    format!(
                        "its SKILL.md frontmatter field `{key}` is {} but the listing says {}",
                        shown(fetched.get(key)),
                        shown(self.frontmatter.get(key))
                    ),
                ));
            }
            let text = String::from_utf8_lossy(bytes);
            validate(&text, options).map_err(|e| {
                self.refuse(
                    UpstreamProblem::Frontmatter,
                    format!("its SKILL.md does not validate: {e}"),
                )
            })?;
        }
        Ok(())
    }
}

fn shown(value: Option<&Value>) -> String {
    let text = value.map_or_else(|| "absent".to_owned(), Value::to_string);
    if text.chars().count() > 80 {
        let cut: String = text.chars().take(77).collect();
        format!("{cut}...")
    } else {
        text
    }
}

/// What the face provides for each upstream: reading one resource.
pub trait Upstream: Send + Sync + fmt::Debug {
    /// The upstream's name.
    fn name(&self) -> &UpstreamName;

    /// The bytes of the resource at `uri` (text as UTF-8, blobs decoded),
    /// refusing (with a message) anything over `limit` bytes.
    fn read(&self, uri: &str, limit: u64) -> Result<Vec<u8>, String>;
}

/// Every upstream's skills, as the host serves them: the catalog from
/// their listings, files fetched and verified on first use into a cache
/// by fingerprint.
#[derive(Debug)]
pub struct RemoteSkills {
    cache: PathBuf,
    options: ValidationOptions,
    skills: HashMap<String, (Arc<RemoteSkill>, Skill)>,
    upstreams: HashMap<UpstreamName, Arc<dyn Upstream>>,
    refused: Vec<Error>,
    /// One materialisation at a time per host (two requests for one skill
    /// fetch it once).
    fetching: Mutex<()>,
}

impl RemoteSkills {
    /// The skills of `upstreams` (each with its listing), their files to be
    /// cached under `cache`, frontmatter validated under `options`.
    /// Entries that do not verify are kept out (see
    /// [`RemoteSkills::refused`]); the rest are served.
    pub fn new(
        cache: PathBuf,
        options: ValidationOptions,
        upstreams: Vec<(Arc<dyn Upstream>, Vec<Listing>)>,
    ) -> RemoteSkills {
        let mut skills = HashMap::new();
        let mut refused = Vec::new();
        let mut by_name = HashMap::new();
        for (upstream, listings) in upstreams {
            let name = upstream.name().clone();
            for (i, listing) in listings.into_iter().enumerate() {
                if i >= MAX_UPSTREAM_SKILLS {
                    refused.push(refuse(
                        &name,
                        &listing.uri,
                        UpstreamProblem::TooLarge,
                        format!("the upstream lists more than {MAX_UPSTREAM_SKILLS} skills"),
                    ));
                    continue;
                }
                match RemoteSkill::from_listing(&name, listing, &options) {
                    Ok((remote, frontmatter)) => {
                        if skills.contains_key(&remote.name) {
                            refused.push(remote.refuse(
                                UpstreamProblem::Listing,
                                "the upstream lists it twice".into(),
                            ));
                            continue;
                        }
                        let skill = remote.skill(&cache, &frontmatter);
                        skills.insert(remote.name.clone(), (Arc::new(remote), skill));
                    }
                    Err(e) => refused.push(e),
                }
            }
            by_name.insert(name, upstream);
        }
        RemoteSkills {
            cache,
            options,
            skills,
            upstreams: by_name,
            refused,
            fetching: Mutex::new(()),
        }
    }

    /// The listings refused, each with its reason.
    pub fn refused(&self) -> &[Error] {
        &self.refused
    }

    /// What is served from `upstream`, as a record a check can hold the
    /// upstream to later: each skill's served name, its name and URI at
    /// the upstream, its fingerprint and every file's path, digest and
    /// size (sorted by name), and the listings refused with why.
    pub fn record(&self, upstream: &UpstreamName) -> Value {
        let mut skills: Vec<&Arc<RemoteSkill>> = self
            .skills
            .values()
            .map(|(remote, _)| remote)
            .filter(|r| &r.upstream == upstream)
            .collect();
        skills.sort_by(|a, b| a.name.cmp(&b.name));
        let refused: Vec<Value> = self
            .refused
            .iter()
            .filter_map(|e| match e {
                Error::Upstream {
                    upstream: u,
                    skill,
                    problem,
                    message,
                } if u == upstream.as_str() => Some(serde_json::json!({
                    "skill": skill,
                    "code": problem.code(),
                    "message": message,
                })),
                _ => None,
            })
            .collect();
        serde_json::json!({
            "upstream": upstream.as_str(),
            "skills": skills.iter().map(|r| serde_json::json!({
                "name": r.name,
                "skill": r.skill_name,
                "uri": r.uri,
                "fingerprint": r.fingerprint.to_string(),
                "files": r.files.iter().map(|f| serde_json::json!({
                    "path": f.path,
                    "digest": f.digest.to_string(),
                    "size": f.size,
                })).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "refused": refused,
        })
    }

    /// Where [`RemoteSkills::write_record`] keeps `upstream`'s record:
    /// `CACHE/.upstreams/NAME.json` (a dot folder: never a skill's).
    pub fn record_path(&self, upstream: &UpstreamName) -> PathBuf {
        self.cache
            .join(RECORDS_DIR)
            .join(format!("{}.json", upstream.as_str()))
    }

    /// Writes `upstream`'s [`RemoteSkills::record`] to
    /// [`RemoteSkills::record_path`], whole (a temporary file renamed over
    /// the last one: a reader never sees half a record).
    pub fn write_record(&self, upstream: &UpstreamName) -> Result<PathBuf, Error> {
        let path = self.record_path(upstream);
        let io = |p: &Path, e: std::io::Error| Error::Io {
            path: p.to_path_buf(),
            source: e,
        };
        let dir = self.cache.join(RECORDS_DIR);
        std::fs::create_dir_all(&dir).map_err(|e| io(&dir, e))?;
        let mut text = serde_json::to_string_pretty(&self.record(upstream))
            .map_err(|e| io(&path, std::io::Error::other(e)))?;
        text.push('\n');
        let mut file = tempfile::NamedTempFile::new_in(&dir).map_err(|e| io(&dir, e))?;
        std::io::Write::write_all(&mut file, text.as_bytes()).map_err(|e| io(&path, e))?;
        file.persist(&path).map_err(|e| io(&path, e.error))?;
        Ok(path)
    }

    /// The deck's skills for the accepted listings.
    pub fn skills(&self) -> Vec<Skill> {
        let mut skills: Vec<Skill> = self.skills.values().map(|(_, s)| s.clone()).collect();
        skills.sort_by(|a, b| a.name.cmp(&b.name));
        skills
    }

    /// The upstream skill served as `name`, if it is one.
    pub fn get(&self, name: &str) -> Option<&Arc<RemoteSkill>> {
        self.skills.get(name).map(|(remote, _)| remote)
    }

    /// The remote skill `skill` is, when it is one (its name and folder
    /// are the remote's).
    pub fn of(&self, skill: &Skill) -> Option<&Arc<RemoteSkill>> {
        self.skills
            .get(&skill.name)
            .filter(|(_, s)| s.skill_md == skill.skill_md)
            .map(|(remote, _)| remote)
    }

    /// True when `remote`'s verified files are in the cache.
    pub fn is_local(&self, remote: &RemoteSkill) -> bool {
        remote.folder(&self.cache).join("SKILL.md").is_file()
    }

    /// Makes `remote`'s files local: nothing to do when its folder is in
    /// the cache; else every file fetched from its upstream (`SKILL.md`
    /// first, so a skill whose instructions do not verify costs one read),
    /// each verified ([`RemoteSkill::verify`]), the fingerprint of what
    /// arrived checked, and the folder written whole (a temporary folder
    /// renamed into place). Returns true when it fetched.
    pub fn materialise(&self, remote: &RemoteSkill) -> Result<bool, Error> {
        let _one = self.fetching.lock().unwrap_or_else(PoisonError::into_inner);
        let folder = remote.folder(&self.cache);
        if folder.join("SKILL.md").is_file() {
            return Ok(false);
        }
        let upstream = self.upstreams.get(&remote.upstream).ok_or_else(|| {
            remote.refuse(
                UpstreamProblem::Fetch,
                "its upstream is not connected".into(),
            )
        })?;
        let mut order: Vec<&RemoteFile> = remote.files.iter().collect();
        order.sort_by_key(|f| f.path != "SKILL.md");
        let mut fetched: Vec<(&RemoteFile, Vec<u8>)> = Vec::with_capacity(order.len());
        for file in order {
            let bytes = upstream
                .read(&file.uri, file.size)
                .map_err(|e| remote.refuse(UpstreamProblem::Fetch, format!("{}: {e}", file.uri)))?;
            remote.verify(file, &bytes, &self.options)?;
            fetched.push((file, bytes));
        }
        fetched.sort_by(|a, b| a.0.path.cmp(&b.0.path));
        let made = fingerprint(
            fetched
                .iter()
                .map(|(f, bytes)| (f.path.as_str(), Digest::of(bytes)))
                .collect::<Vec<_>>()
                .iter()
                .map(|(p, d)| (*p, d)),
        );
        if made != remote.fingerprint {
            return Err(remote.refuse(
                UpstreamProblem::Fingerprint,
                format!("its files make {made}, not {}", remote.fingerprint),
            ));
        }
        let io = |path: &Path, e: std::io::Error| Error::Io {
            path: path.to_path_buf(),
            source: e,
        };
        std::fs::create_dir_all(&self.cache).map_err(|e| io(&self.cache, e))?;
        let staging = tempfile::Builder::new()
            .prefix(".fetching-")
            .tempdir_in(&self.cache)
            .map_err(|e| io(&self.cache, e))?;
        for (file, bytes) in &fetched {
            let target = staging.path().join(&file.path);
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
            }
            std::fs::write(&target, bytes).map_err(|e| io(&target, e))?;
        }
        let staged = staging.keep();
        if let Err(e) = std::fs::rename(&staged, &folder) {
            let _ = std::fs::remove_dir_all(&staged);
            if !folder.join("SKILL.md").is_file() {
                return Err(io(&folder, e));
            }
        }
        tracing::info!(
            skill = %remote.name,
            upstream = %remote.upstream,
            fingerprint = %remote.fingerprint,
            files = remote.files.len(),
            "upstream skill fetched and verified"
        );
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plugin_marker_names_the_plugin_and_no_other_escape_passes() {
        assert_eq!(plugin_of("document-skills%3A/pdf"), Some("document-skills"));
        assert_eq!(plugin_of("outer/docs%3a/pdf"), Some("docs"));
        assert_eq!(plugin_of("pdf"), None);
        assert_eq!(plugin_of("outer/pdf"), None);
        // Not before the skill's own segment, empty, or with another escape.
        assert_eq!(plugin_of("docs%3A/pdf/x"), None);
        assert_eq!(plugin_of("%3A/pdf"), None);
        assert_eq!(plugin_of("a%2F%3A/pdf"), None);
        assert_eq!(
            without_plugin("document-skills%3A/pdf"),
            "document-skills/pdf"
        );
        assert_eq!(without_plugin("outer/docs%3A/pdf"), "outer/docs/pdf");
        assert!(without_plugin("a%2Fb/pdf").contains('%'));
        assert!(without_plugin("docs%3A/pdf/x").contains('%'));
    }
}
