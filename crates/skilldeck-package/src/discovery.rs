//! The agentskills.io well-known discovery index, schema 0.2.0
//! (<https://agentskills.io/well-known-uri>): `GET
//! /.well-known/agent-skills/index.json` lists skills, each with `name`,
//! `type`, `description`, `url` and `digest` (`sha256:` of the artifact's
//! raw bytes), optionally `version`.
//!
//! Both directions live here, once, for every face:
//!
//! - **Serving** ([`DiscoveryEntry::archive`], [`pack_for_discovery`],
//!   [`reroot_archive`]): skilldeck always publishes `"type": "archive"`,
//!   a deterministic tar.gz whose files sit at the archive's root (the
//!   spec's layout: `SKILL.md` at the root, no wrapper folder), and the
//!   entry's `digest` is the SHA-256 of exactly those bytes. The registry
//!   and `skilldeck serve --http` map their skills onto this; they hold no
//!   rule of their own.
//! - **Reading** ([`parse_index`], [`check_artifact`]): an index is
//!   refused unless its `$schema` is [`DISCOVERY_SCHEMA`]; entries of an
//!   unknown `type` or malformed ones are skipped with a reason (the spec:
//!   skip and warn); a downloaded artifact is refused unless its SHA-256
//!   is the entry's digest, before a byte of it is unpacked.
//!
//! The artifact digest is the transport's check; skilldeck's content
//! fingerprint (the same for a folder, a tar.gz and a zip) is what the
//! lock records and `verify` re-checks.

use std::io::Read as _;
use std::path::Path;

use skilldeck::{Digest, FileDigest, SkillManifest};

use crate::error::Error;
use crate::limits::PackageLimits;
use crate::pack::{ArchiveFormat, PackOptions, Packed, archive_at_root, pack_parts};

/// The `$schema` of the index this code writes and reads.
pub const DISCOVERY_SCHEMA: &str = "https://schemas.agentskills.io/discovery/0.2.0/schema.json";

/// The path of the index on a host (RFC 8615 well-known URI).
pub const INDEX_PATH: &str = "/.well-known/agent-skills/index.json";

/// The folder every well-known path of skilldeck's lives under.
pub const WELL_KNOWN_DIR: &str = "/.well-known/agent-skills/";

/// The content type of the index.
pub const INDEX_CONTENT_TYPE: &str = "application/json";

/// The content type of an `archive` artifact skilldeck serves (tar.gz).
pub const ARCHIVE_CONTENT_TYPE: &str = "application/gzip";

/// Largest index read (bytes): some 20,000 entries of ordinary length.
pub const MAX_INDEX_BYTES: u64 = 16 * 1024 * 1024;

/// Most entries of an index read.
pub const MAX_INDEX_ENTRIES: usize = 100_000;

/// Largest `archive` artifact downloaded (bytes). A package is at most
/// [`crate::limits::MAX_PACKAGE_BYTES`] unpacked; its archive is not
/// larger than that plus headers, so twice it is generous.
pub const MAX_ARCHIVE_ARTIFACT_BYTES: u64 = 2 * crate::limits::MAX_PACKAGE_BYTES;

/// Largest `skill-md` artifact downloaded: the core's SKILL.md limit.
pub const MAX_SKILL_MD_ARTIFACT_BYTES: u64 = skilldeck::limits::MAX_SKILL_MD_BYTES;

/// Longest `description` kept from an index entry (the specification's
/// 1,024 characters, in bytes of UTF-8 at most four times that).
pub const MAX_ENTRY_DESCRIPTION_BYTES: usize = 4 * 1024;

/// Longest `url` of an index entry.
pub const MAX_ENTRY_URL_BYTES: usize = 2048;

/// What an entry's artifact is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ArtifactType {
    /// A single `SKILL.md` file.
    SkillMd,
    /// A `.tar.gz` or `.zip` of the skill's folder, files at its root.
    Archive,
}

impl ArtifactType {
    /// `skill-md` or `archive`.
    pub fn as_str(self) -> &'static str {
        match self {
            ArtifactType::SkillMd => "skill-md",
            ArtifactType::Archive => "archive",
        }
    }

    /// The most bytes of such an artifact a client downloads.
    pub fn max_bytes(self) -> u64 {
        match self {
            ArtifactType::SkillMd => MAX_SKILL_MD_ARTIFACT_BYTES,
            ArtifactType::Archive => MAX_ARCHIVE_ARTIFACT_BYTES,
        }
    }
}

/// One skill of an index.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DiscoveryEntry {
    /// The skill's name (its frontmatter `name`).
    pub name: String,
    /// The artifact's kind.
    #[serde(rename = "type")]
    pub kind: ArtifactType,
    /// What the skill does and when to use it (its frontmatter
    /// `description`).
    pub description: String,
    /// Where the artifact is: absolute, path-absolute or relative to the
    /// index's URL (RFC 3986 resolution).
    pub url: String,
    /// `sha256:<hex>` of the artifact's raw bytes.
    pub digest: Digest,
    /// The artifact's version, when the publisher knows one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

impl DiscoveryEntry {
    /// The entry of a skill served as the `archive` artifact `bytes` at
    /// `url`: the one rule every skilldeck face publishes by.
    pub fn archive(
        name: &str,
        description: &str,
        version: Option<&str>,
        url: String,
        bytes: &[u8],
    ) -> DiscoveryEntry {
        DiscoveryEntry::archive_with_digest(name, description, version, url, Digest::of(bytes))
    }

    /// [`DiscoveryEntry::archive`] when the archive's digest is already
    /// known (a registry keeps it beside the version).
    pub fn archive_with_digest(
        name: &str,
        description: &str,
        version: Option<&str>,
        url: String,
        digest: Digest,
    ) -> DiscoveryEntry {
        DiscoveryEntry {
            name: name.to_owned(),
            kind: ArtifactType::Archive,
            description: description.to_owned(),
            url,
            digest,
            version: version.map(str::to_owned),
        }
    }
}

/// A whole index.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DiscoveryIndex {
    /// [`DISCOVERY_SCHEMA`].
    #[serde(rename = "$schema")]
    pub schema: &'static str,
    /// The skills.
    pub skills: Vec<DiscoveryEntry>,
}

impl DiscoveryIndex {
    /// The index of `skills`, sorted by name (a stable body, so a stable
    /// `ETag`).
    pub fn new(mut skills: Vec<DiscoveryEntry>) -> DiscoveryIndex {
        skills.sort_by(|a, b| a.name.cmp(&b.name));
        DiscoveryIndex {
            schema: DISCOVERY_SCHEMA,
            skills,
        }
    }

    /// The JSON body served.
    pub fn to_json(&self) -> Vec<u8> {
        // Serializing plain strings and digests cannot fail.
        serde_json::to_vec_pretty(self).unwrap_or_default()
    }
}

/// A skill folder packed for the index: the archive served (files at the
/// root) and what [`pack`](crate::pack) found.
#[derive(Debug, Clone)]
pub struct DiscoveryArchive {
    /// The skill as packed (name, version, manifest; `bytes` is the
    /// canonical archive, in a folder named after the skill).
    pub packed: Packed,
    /// The tar.gz served, files at its root.
    pub bytes: Vec<u8>,
    /// `sha256:` of [`DiscoveryArchive::bytes`]: the entry's digest.
    pub digest: Digest,
}

/// Packs the skill folder `dir` (validated and limited as [`pack`](crate::pack)
/// does with `options`) into the tar.gz an index serves: its files at
/// the archive's root, deterministic (the same folder gives the same
/// bytes, so the same digest, on every request and every machine).
pub fn pack_for_discovery(dir: &Path, options: &PackOptions) -> Result<DiscoveryArchive, Error> {
    let (packed, contents) = pack_parts(dir, options)?;
    let bytes = archive_at_root(&packed.manifest, &contents, ArchiveFormat::TarGz)
        .map_err(|e| Error::io(dir, e))?;
    let digest = Digest::of(&bytes);
    Ok(DiscoveryArchive {
        packed,
        bytes,
        digest,
    })
}

/// The index's archive of a canonical archive (a tar.gz whose files are
/// in one folder named after the skill, as [`archive`](crate::archive)
/// writes it and a registry stores it): the same files at the root,
/// deterministic. `shown` names the archive in errors; the entries are
/// held to `limits` (files, bytes) as they stream.
pub fn reroot_archive(
    canonical: &[u8],
    shown: &Path,
    limits: &PackageLimits,
) -> Result<Vec<u8>, Error> {
    let bad = |why: String| Error::io(shown, std::io::Error::other(why));
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(canonical));
    let mut files: Vec<(FileDigest, Vec<u8>)> = Vec::new();
    let mut total: u64 = 0;
    for entry in tar.entries().map_err(|e| Error::io(shown, e))? {
        let mut entry = entry.map_err(|e| Error::io(shown, e))?;
        if entry.header().entry_type() != tar::EntryType::Regular {
            return Err(bad("a canonical archive holds regular files only".into()));
        }
        let path = entry
            .path()
            .map_err(|e| Error::io(shown, e))?
            .to_string_lossy()
            .into_owned();
        let Some((_, inner)) = path.split_once('/') else {
            return Err(bad(format!(
                "entry \"{path}\" is not inside the skill's folder"
            )));
        };
        crate::path::check_entry_path(inner.as_bytes())
            .map_err(|why| bad(format!("entry \"{path}\": {why}")))?;
        if files.len() >= limits.max_files {
            return Err(bad(format!("more than {} files", limits.max_files)));
        }
        let executable = entry.header().mode().map_err(|e| Error::io(shown, e))? & 0o111 != 0;
        let mut bytes = Vec::new();
        let left = limits.max_bytes.saturating_sub(total);
        (&mut entry)
            .take(left + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| Error::io(shown, e))?;
        total += bytes.len() as u64;
        if total > limits.max_bytes {
            return Err(bad(format!("more than {} bytes", limits.max_bytes)));
        }
        files.push((FileDigest::of_bytes(inner, &bytes, executable), bytes));
    }
    files.sort_by(|a, b| a.0.path.cmp(&b.0.path));
    let (digests, contents): (Vec<FileDigest>, Vec<Vec<u8>>) = files.into_iter().unzip();
    let manifest = SkillManifest::new(digests);
    archive_at_root(&manifest, &contents, ArchiveFormat::TarGz).map_err(|e| Error::io(shown, e))
}

/// An entry of a read index that was left out, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SkippedEntry {
    /// Its place in `skills` (0-based).
    pub position: usize,
    /// Its `name`, when it has a readable one.
    pub name: Option<String>,
    /// Why it was skipped.
    pub reason: String,
}

/// An index as read: its usable entries and the skipped ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedIndex {
    /// The entries, in the index's order.
    pub entries: Vec<DiscoveryEntry>,
    /// The entries left out (unknown `type`, malformed), with why.
    pub skipped: Vec<SkippedEntry>,
}

impl ParsedIndex {
    /// The entry named `name`. Two entries of one name are ambiguous: an
    /// error, as is none (naming the index and the names it has).
    pub fn entry(&self, name: &str, shown: &str) -> Result<&DiscoveryEntry, Error> {
        let mut found = self.entries.iter().filter(|e| e.name == name);
        match (found.next(), found.next()) {
            (Some(e), None) => Ok(e),
            (Some(_), Some(_)) => Err(Error::Discovery {
                url: shown.to_owned(),
                message: format!(
                    "the index lists skill '{name}' more than once; refused (ask its publisher \
                     to fix the index)"
                ),
            }),
            (None, _) => {
                let why = self
                    .skipped
                    .iter()
                    .find(|s| s.name.as_deref() == Some(name))
                    .map(|s| format!(": its entry was skipped: {}", s.reason))
                    .unwrap_or_default();
                let mut names: Vec<&str> = self.entries.iter().map(|e| e.name.as_str()).collect();
                names.truncate(20);
                Err(Error::Discovery {
                    url: shown.to_owned(),
                    message: format!(
                        "no skill '{name}' in the index{why}{}",
                        if names.is_empty() {
                            " (it lists none)".to_owned()
                        } else {
                            format!(" (it lists: {})", names.join(", "))
                        }
                    ),
                })
            }
        }
    }
}

/// The raw shape before each entry is checked.
#[derive(serde::Deserialize)]
struct RawIndex {
    #[serde(rename = "$schema")]
    schema: Option<String>,
    skills: Option<Vec<serde_json::Value>>,
}

/// Reads an index body (`shown`: its URL, for errors). Refused unless it
/// is JSON with `$schema` [`DISCOVERY_SCHEMA`] and a `skills` array of
/// at most [`MAX_INDEX_ENTRIES`]; each entry is checked on its own (a
/// name of the specification's form, a known `type`, a `sha256:` digest,
/// a URL and description within their limits) and skipped with a reason
/// when it fails. Fields the schema does not name are ignored.
pub fn parse_index(body: &[u8], shown: &str) -> Result<ParsedIndex, Error> {
    let fail = |message: String| Error::Discovery {
        url: shown.to_owned(),
        message,
    };
    let raw: RawIndex = serde_json::from_slice(body)
        .map_err(|e| fail(format!("not a discovery index (JSON): {e}")))?;
    match raw.schema.as_deref() {
        Some(DISCOVERY_SCHEMA) => {}
        Some(other) => {
            return Err(fail(format!(
                "the index's $schema is '{}', which this skilldeck does not know (it reads \
                 {DISCOVERY_SCHEMA}); nothing was read",
                other.escape_debug()
            )));
        }
        None => {
            return Err(fail(format!(
                "the index has no $schema (a version 0.1 index, or not a discovery index); this \
                 skilldeck reads {DISCOVERY_SCHEMA} only"
            )));
        }
    }
    let skills = raw
        .skills
        .ok_or_else(|| fail("the index has no `skills` array".to_owned()))?;
    if skills.len() > MAX_INDEX_ENTRIES {
        return Err(fail(format!(
            "the index lists {} skills, more than {MAX_INDEX_ENTRIES}; refused",
            skills.len()
        )));
    }
    let mut entries = Vec::with_capacity(skills.len());
    let mut skipped = Vec::new();
    for (position, value) in skills.into_iter().enumerate() {
        let name = value
            .get("name")
            .and_then(|n| n.as_str())
            .map(|n| skilldeck::spec::replace_controls(n, true).into_owned());
        match check_entry(value) {
            Ok(e) => entries.push(e),
            Err(reason) => skipped.push(SkippedEntry {
                position,
                name,
                reason,
            }),
        }
    }
    Ok(ParsedIndex { entries, skipped })
}

fn check_entry(value: serde_json::Value) -> Result<DiscoveryEntry, String> {
    let text = |field: &str| -> Result<String, String> {
        value
            .get(field)
            .and_then(|v| v.as_str())
            .map(str::to_owned)
            .ok_or_else(|| format!("no `{field}` text"))
    };
    let name = text("name")?;
    match skilldeck::SkillName::with_charset(&name, skilldeck::NameCharset::Ascii) {
        Ok(n) if n.as_str() == name => {}
        _ => {
            return Err(format!(
                "name '{}' is not a skill name (1-64 of a-z, 0-9 and single inner hyphens)",
                name.escape_debug()
            ));
        }
    }
    let kind = match text("type")?.as_str() {
        "archive" => ArtifactType::Archive,
        "skill-md" => ArtifactType::SkillMd,
        other => {
            return Err(format!(
                "type '{}' is unknown (this skilldeck reads archive and skill-md)",
                other.escape_debug()
            ));
        }
    };
    let description = text("description")?;
    if description.len() > MAX_ENTRY_DESCRIPTION_BYTES {
        return Err(format!(
            "description is longer than {MAX_ENTRY_DESCRIPTION_BYTES} bytes"
        ));
    }
    let url = text("url")?;
    if url.is_empty() || url.len() > MAX_ENTRY_URL_BYTES || skilldeck::spec::has_control(&url, true)
    {
        return Err(format!(
            "url is empty, longer than {MAX_ENTRY_URL_BYTES} bytes or holds a control character"
        ));
    }
    let digest = Digest::parse(&text("digest")?).map_err(|e| format!("digest: {e}"))?;
    let version = value
        .get("version")
        .and_then(|v| v.as_str())
        .filter(|v| v.len() <= 128 && !skilldeck::spec::has_control(v, true))
        .map(str::to_owned);
    Ok(DiscoveryEntry {
        name,
        kind,
        description: skilldeck::spec::replace_controls_with(&description, true, ' ').into_owned(),
        url,
        digest,
        version,
    })
}

/// Refuses `bytes` downloaded from `url` for `entry` unless their SHA-256
/// is the entry's digest (the error names the entry, the URL and both
/// digests). Called before anything is unpacked or written.
pub fn check_artifact(entry: &DiscoveryEntry, url: &str, bytes: &[u8]) -> Result<(), Error> {
    let actual = Digest::of(bytes);
    if actual == entry.digest {
        Ok(())
    } else {
        Err(Error::DigestMismatch {
            name: entry.name.clone(),
            url: url.to_owned(),
            expected: entry.digest,
            actual,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(entries: &str) -> String {
        format!(r#"{{"$schema":"{DISCOVERY_SCHEMA}","skills":[{entries}]}}"#)
    }

    const DIGEST: &str = "sha256:0000000000000000000000000000000000000000000000000000000000000000";

    #[test]
    fn an_index_without_the_known_schema_is_refused() {
        let e = parse_index(br#"{"skills":[]}"#, "u").unwrap_err();
        assert!(e.to_string().contains("no $schema"), "{e}");
        let e = parse_index(
            br#"{"$schema":"https://schemas.agentskills.io/discovery/9.0.0/schema.json","skills":[]}"#,
            "u",
        )
        .unwrap_err();
        assert!(e.to_string().contains("does not know"), "{e}");
    }

    #[test]
    fn unknown_types_and_malformed_entries_are_skipped_with_a_reason() {
        let body = index(&format!(
            r#"{{"name":"good","type":"archive","description":"d","url":"good.tar.gz","digest":"{DIGEST}","extra":1}},
               {{"name":"odd","type":"wasm","description":"d","url":"x","digest":"{DIGEST}"}},
               {{"name":"Bad Name","type":"archive","description":"d","url":"x","digest":"{DIGEST}"}},
               {{"name":"nodigest","type":"archive","description":"d","url":"x","digest":"md5:00"}}"#
        ));
        let parsed = parse_index(body.as_bytes(), "u").unwrap();
        assert_eq!(parsed.entries.len(), 1);
        assert_eq!(parsed.entries[0].name, "good");
        let reasons: Vec<&str> = parsed.skipped.iter().map(|s| s.reason.as_str()).collect();
        assert!(reasons[0].contains("type 'wasm' is unknown"), "{reasons:?}");
        assert!(reasons[1].contains("not a skill name"), "{reasons:?}");
        assert!(reasons[2].starts_with("digest"), "{reasons:?}");
        let e = parsed.entry("odd", "u").unwrap_err();
        assert!(e.to_string().contains("skipped: type 'wasm'"), "{e}");
    }

    #[test]
    fn a_name_listed_twice_is_ambiguous() {
        let one = format!(
            r#"{{"name":"dup","type":"archive","description":"d","url":"x","digest":"{DIGEST}"}}"#
        );
        let parsed = parse_index(index(&format!("{one},{one}")).as_bytes(), "u").unwrap();
        assert!(parsed.entry("dup", "u").is_err());
    }

    #[test]
    fn an_artifact_whose_digest_differs_is_refused_naming_both_digests() {
        let entry = DiscoveryEntry::archive("pdf", "d", None, "pdf.tar.gz".into(), b"right");
        check_artifact(&entry, "http://h/pdf.tar.gz", b"right").unwrap();
        let e = check_artifact(&entry, "http://h/pdf.tar.gz", b"wrong").unwrap_err();
        let text = e.to_string();
        assert!(text.contains("'pdf'"), "{text}");
        assert!(text.contains(&Digest::of(b"right").to_string()), "{text}");
        assert!(text.contains(&Digest::of(b"wrong").to_string()), "{text}");
    }

    #[test]
    fn the_index_written_is_read_back_the_same() {
        let entry = DiscoveryEntry::archive("pdf", "Reads PDFs.", Some("1.0.0"), "a".into(), b"x");
        let body = DiscoveryIndex::new(vec![entry.clone()]).to_json();
        let text = String::from_utf8(body.clone()).unwrap();
        assert!(text.contains(r#""type": "archive""#), "{text}");
        assert_eq!(parse_index(&body, "u").unwrap().entries, vec![entry]);
    }

    #[test]
    fn a_canonical_archive_rerooted_is_the_archive_packed_for_the_index() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("pdf");
        std::fs::create_dir_all(dir.join("scripts")).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            "---\nname: pdf\ndescription: Reads PDF files. Use when a PDF is given.\n---\n# PDF\n",
        )
        .unwrap();
        std::fs::write(dir.join("scripts/run.sh"), "#!/bin/sh\necho hi\n").unwrap();
        let served = pack_for_discovery(&dir, &PackOptions::default()).unwrap();
        let again = pack_for_discovery(&dir, &PackOptions::default()).unwrap();
        assert_eq!(served.bytes, again.bytes, "deterministic");
        let rerooted = reroot_archive(
            &served.packed.bytes,
            Path::new("pdf.tar.gz"),
            &PackageLimits::default(),
        )
        .unwrap();
        assert_eq!(rerooted, served.bytes);
        // Its files are at the root, and it unpacks to the same fingerprint.
        let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(served.bytes.as_slice()));
        let mut paths: Vec<String> = tar
            .entries()
            .unwrap()
            .map(|e| e.unwrap().path().unwrap().to_string_lossy().into_owned())
            .collect();
        paths.sort();
        assert_eq!(paths, ["SKILL.md", "scripts/run.sh"]);
        let unpacked = crate::unpack_bytes(
            &served.bytes,
            Path::new("pdf.tar.gz"),
            &tmp.path().join("staging"),
            &crate::UnpackOptions::default(),
        )
        .unwrap();
        assert_eq!(
            unpacked.unpacked.manifest.fingerprint(),
            served.packed.fingerprint()
        );
    }
}
