//! Well-known discovery sources: `https://HOST[/PATH][#NAME]`, whose
//! skills are listed at `/.well-known/agent-skills/index.json`
//! (agentskills.io discovery, schema 0.2.0:
//! [`skilldeck_package::discovery`]).
//!
//! The host is hostile. The index is read within
//! [`MAX_INDEX_BYTES`] and
//! refused unless its `$schema` is known; the artifact an entry names is
//! downloaded within its type's cap, and refused unless its SHA-256 is
//! the entry's digest **before** a byte is unpacked; then the archive
//! goes through the package crate's safe unpacker (paths, links, special
//! files, counts, sizes, compression ratio) and the skill it holds must
//! carry the entry's name. A `skill-md` artifact becomes a one-file
//! skill folder, packed. What is installed is recorded as
//! `wellknown+INDEX-URL#NAME` with skilldeck's content fingerprint.
//!
//! Plain `http://` is refused except to a loopback host, unless the
//! caller allows it (`--allow-http`); redirects are followed (the spec
//! requires it) and each target is held to the same rule. No credential
//! is ever sent.

use std::path::Path;

use skilldeck::Digest;
use skilldeck_package::discovery::{
    ArtifactType, DiscoveryEntry, MAX_INDEX_BYTES, ParsedIndex, check_artifact, parse_index,
};
use skilldeck_package::{PackOptions, UnpackOptions};
use skilldeck_registry::client::{PublicClient, Url};

use crate::error::Error;
use crate::fetch::write_package;

/// What a face serving an index needs from the package crate.
pub use skilldeck_package::discovery::{
    ARCHIVE_CONTENT_TYPE, DiscoveryArchive, DiscoveryIndex, INDEX_CONTENT_TYPE, INDEX_PATH,
    WELL_KNOWN_DIR,
};

/// The suffix of a served skill's archive under [`WELL_KNOWN_DIR`]
/// (`NAME.tar.gz`).
pub const SERVED_ARCHIVE_SUFFIX: &str = ".tar.gz";

/// How a served skill is packed for the index: the rules a host loads
/// skills by (lenient, no advisory lints) and the package limits.
pub fn served_pack_options() -> PackOptions {
    PackOptions {
        validation: UnpackOptions::default().validation,
        ..PackOptions::default()
    }
}

/// The archive of a served skill ([`skilldeck_package::discovery::pack_for_discovery`]).
pub fn served_archive(skill: &skilldeck::Skill) -> Result<DiscoveryArchive, Error> {
    Ok(skilldeck_package::discovery::pack_for_discovery(
        skill.dir(),
        &served_pack_options(),
    )?)
}

/// The index of `skills` as a host serves them: each an `archive` entry
/// at `NAME.tar.gz` (relative to the index) with the digest of
/// [`served_archive`]; a skill that does not pack is left out and logged.
pub fn served_index<'a>(skills: impl Iterator<Item = &'a skilldeck::Skill>) -> DiscoveryIndex {
    served_catalog(skills).0
}

/// [`served_index`] and the archives its entries name, by skill name,
/// packed once (a server keeps both until its skills change).
pub fn served_catalog<'a>(
    skills: impl Iterator<Item = &'a skilldeck::Skill>,
) -> (DiscoveryIndex, Vec<(String, DiscoveryArchive)>) {
    let mut entries = Vec::new();
    let mut archives = Vec::new();
    for skill in skills {
        match served_archive(skill) {
            Ok(a) => {
                entries.push(DiscoveryEntry::archive_with_digest(
                    &skill.name,
                    &skill.description,
                    a.packed.version.as_deref(),
                    format!("{}{SERVED_ARCHIVE_SUFFIX}", skill.name),
                    a.digest,
                ));
                archives.push((skill.name.clone(), a));
            }
            Err(e) => {
                tracing::warn!(skill = %skill.name, error = %e, "left out of the well-known index: it does not pack");
            }
        }
    }
    (DiscoveryIndex::new(entries), archives)
}

/// How a lockfile's source names a skill from a well-known index:
/// `wellknown+` then the index URL, `#`, the skill's name.
pub const LOCK_PREFIX: &str = "wellknown+";

/// True when `text` names a well-known source (`https://...`,
/// `http://...`, or a lock's `wellknown+https://...#NAME`).
pub fn is_well_known_source(text: &str) -> bool {
    let text = text.strip_prefix(LOCK_PREFIX).unwrap_or(text);
    text.starts_with("https://") || text.starts_with("http://")
}

/// True when `url`'s host is this machine (`localhost`, `127.0.0.0/8`,
/// `::1`).
pub fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// The rule every URL of a well-known source is held to (the index, each
/// artifact, each redirect): `https`, or `http` to a loopback host (any
/// host when `allow_http`); no user name or password in it.
pub fn check_url(url: &Url, allow_http: bool) -> Result<(), String> {
    if !url.username().is_empty() || url.password().is_some() {
        return Err("a URL with a user name or password is refused (no credential is sent to a discovery index)".to_owned());
    }
    match url.scheme() {
        "https" => Ok(()),
        "http" if allow_http || is_loopback(url) => Ok(()),
        "http" => Err(
            "plain http to another machine has no integrity in transit; use https (or \
             --allow-http, when you trust the network)"
                .to_owned(),
        ),
        other => Err(format!(
            "the scheme '{other}' is not allowed (only https, and http to this machine)"
        )),
    }
}

/// A well-known source as given: the index and, when named, the skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WellKnownSpec {
    /// The index's URL.
    pub index: Url,
    /// The skill asked for (`#NAME`), if any.
    pub skill: Option<String>,
}

impl WellKnownSpec {
    /// Parses `https://HOST[:PORT][/PATH][#NAME]` (the index is
    /// `PATH/.well-known/agent-skills/index.json`, or `PATH` itself when
    /// it ends in `.json`: a pinned snapshot such as
    /// `/.well-known/agent-skills/v1.2.0/index.json`), or a lock's
    /// `wellknown+INDEX-URL#NAME`.
    pub fn parse(text: &str, allow_http: bool) -> Result<WellKnownSpec, Error> {
        let bad = |message: String| Error::WellKnown {
            spec: text.to_owned(),
            message,
        };
        let body = text.strip_prefix(LOCK_PREFIX).unwrap_or(text);
        let (location, fragment) = match body.split_once('#') {
            Some((l, f)) => (l, Some(f)),
            None => (body, None),
        };
        let mut url = Url::parse(location)
            .map_err(|e| bad(format!("not a URL ({e}); write https://HOST[/PATH][#NAME]")))?;
        check_url(&url, allow_http).map_err(bad)?;
        if url.host().is_none() {
            return Err(bad("the URL has no host".to_owned()));
        }
        if !url.path().ends_with(".json") {
            if url.query().is_some() {
                return Err(bad(
                    "a query is only allowed on the index's own URL (one ending in .json)"
                        .to_owned(),
                ));
            }
            let base = url.path().trim_end_matches('/').to_owned();
            url.set_path(&format!("{base}{INDEX_PATH}"));
        }
        let skill = match fragment {
            None | Some("") => None,
            Some(name) => {
                match skilldeck::SkillName::with_charset(name, skilldeck::NameCharset::Ascii) {
                    Ok(n) if n.as_str() == name => Some(name.to_owned()),
                    _ => {
                        return Err(bad(format!(
                            "'{}' after # is not a skill name (a-z, 0-9 and single inner hyphens)",
                            name.escape_debug()
                        )));
                    }
                }
            }
        };
        Ok(WellKnownSpec { index: url, skill })
    }

    /// What the lock records for skill `name` of this index:
    /// `wellknown+INDEX-URL#NAME`.
    pub fn lock_source(&self, name: &str) -> String {
        format!("{LOCK_PREFIX}{}#{name}", self.index)
    }
}

/// A skill fetched from an index into a package file, its artifact's
/// digest checked, ready to install. The file is removed when dropped.
#[derive(Debug)]
pub struct WellKnownFetched {
    /// The index entry it came from.
    pub entry: DiscoveryEntry,
    /// The artifact's URL (resolved, after redirects).
    pub artifact_url: String,
    /// The skill's content fingerprint (of the files unpacked).
    pub fingerprint: Digest,
    /// How a lockfile names it ([`WellKnownSpec::lock_source`]).
    pub lock_source: String,
    package: tempfile::TempPath,
}

impl WellKnownFetched {
    /// The package file (a tar.gz or zip).
    pub fn package(&self) -> &Path {
        &self.package
    }
}

/// Reads well-known indexes and their artifacts.
#[derive(Debug, Clone)]
pub struct WellKnownClient {
    http: PublicClient,
    allow_http: bool,
}

impl WellKnownClient {
    /// A client; `allow_http`: plain http to any host (else loopback
    /// only).
    pub fn new(allow_http: bool) -> Result<WellKnownClient, Error> {
        let http = PublicClient::new(move |url| check_url(url, allow_http))?;
        Ok(WellKnownClient { http, allow_http })
    }

    /// Fetches and reads the index of `spec`.
    pub fn index(&self, spec: &WellKnownSpec) -> Result<ParsedIndex, Error> {
        let answer = self.http.get(spec.index.as_str(), MAX_INDEX_BYTES)?;
        Ok(parse_index(&answer.body, spec.index.as_str())?)
    }

    /// Fetches skill `name` of `index` (read from `spec`'s URL) into a
    /// package file in `dir`: the artifact downloaded within its cap and
    /// refused unless its digest is the entry's, then unpacked by the
    /// safe unpacker into a scratch folder to take its fingerprint and
    /// check that it holds skill `name`. `expected` (a lock's
    /// fingerprint) must be that fingerprint when given.
    pub fn fetch(
        &self,
        spec: &WellKnownSpec,
        index: &ParsedIndex,
        name: &str,
        expected: Option<&Digest>,
        dir: &Path,
    ) -> Result<WellKnownFetched, Error> {
        let shown = spec.index.as_str();
        let entry = index.entry(name, shown)?.clone();
        let bad = |message: String| Error::WellKnown {
            spec: spec.lock_source(name),
            message,
        };
        let url = spec
            .index
            .join(&entry.url)
            .map_err(|e| bad(format!("its url '{}' does not resolve: {e}", entry.url)))?;
        check_url(&url, self.allow_http).map_err(|why| bad(format!("its url {url}: {why}")))?;
        let answer = self.http.get(url.as_str(), entry.kind.max_bytes())?;
        // The digest first: nothing unverified is unpacked or written.
        check_artifact(&entry, url.as_str(), &answer.body)?;
        let scratch = tempfile::Builder::new()
            .prefix(".skilldeck-wellknown-")
            .tempdir_in(std::env::temp_dir())
            .map_err(|e| Error::Io {
                path: std::env::temp_dir(),
                source: e,
            })?;
        let (package_bytes, skill, fingerprint) = match entry.kind {
            ArtifactType::Archive => {
                let read = skilldeck_package::unpack_bytes(
                    &answer.body,
                    Path::new(url.as_str()),
                    &scratch.path().join("staging"),
                    &UnpackOptions::default(),
                )?;
                let fp = read.unpacked.manifest.fingerprint();
                (answer.body, read.unpacked.name, fp)
            }
            ArtifactType::SkillMd => {
                let folder = scratch.path().join(&entry.name);
                std::fs::create_dir_all(&folder)
                    .and_then(|()| std::fs::write(folder.join("SKILL.md"), &answer.body))
                    .map_err(|e| Error::Io {
                        path: folder.clone(),
                        source: e,
                    })?;
                let packed = skilldeck_package::pack(
                    &folder,
                    &PackOptions {
                        validation: UnpackOptions::default().validation,
                        ..PackOptions::default()
                    },
                )?;
                let fp = packed.fingerprint();
                (packed.bytes, packed.name, fp)
            }
        };
        if skill != entry.name {
            return Err(bad(format!(
                "the index lists '{}' but its artifact holds skill '{}'; refused",
                entry.name,
                skill.escape_debug()
            )));
        }
        if let Some(want) = expected
            && *want != fingerprint
        {
            return Err(bad(format!(
                "the artifact's fingerprint is {fingerprint}; the lock says {want}: the index \
                 now serves other content. Nothing was installed; to accept it, install the \
                 source again without --frozen"
            )));
        }
        let package = write_package(&package_bytes, dir)?;
        Ok(WellKnownFetched {
            lock_source: spec.lock_source(&entry.name),
            artifact_url: answer.url,
            entry,
            fingerprint,
            package,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_names_its_well_known_index_and_a_json_url_is_the_index_itself() {
        let s = WellKnownSpec::parse("https://skills.example.com#pdf", false).unwrap();
        assert_eq!(
            s.index.as_str(),
            "https://skills.example.com/.well-known/agent-skills/index.json"
        );
        assert_eq!(s.skill.as_deref(), Some("pdf"));
        let s = WellKnownSpec::parse("https://h.example/team/", false).unwrap();
        assert_eq!(
            s.index.as_str(),
            "https://h.example/team/.well-known/agent-skills/index.json"
        );
        let pinned = "https://h.example/.well-known/agent-skills/v1.2.0/index.json";
        assert_eq!(
            WellKnownSpec::parse(pinned, false).unwrap().index.as_str(),
            pinned
        );
        let lock = s.lock_source("pdf");
        assert_eq!(
            lock,
            "wellknown+https://h.example/team/.well-known/agent-skills/index.json#pdf"
        );
        assert_eq!(WellKnownSpec::parse(&lock, false).unwrap().index, s.index);
    }

    #[test]
    fn plain_http_is_refused_beyond_loopback_unless_allowed() {
        assert!(WellKnownSpec::parse("http://skills.example.com", false).is_err());
        assert!(WellKnownSpec::parse("http://skills.example.com", true).is_ok());
        assert!(WellKnownSpec::parse("http://127.0.0.1:8080", false).is_ok());
        assert!(WellKnownSpec::parse("http://localhost:8080", false).is_ok());
        assert!(WellKnownSpec::parse("http://[::1]:8080", false).is_ok());
        assert!(WellKnownSpec::parse("ftp://h.example", true).is_err());
    }

    #[test]
    fn credentials_and_bad_names_in_the_source_are_refused() {
        let e = WellKnownSpec::parse("https://u:p@h.example", false).unwrap_err();
        assert!(e.to_string().contains("user name or password"), "{e}");
        assert!(WellKnownSpec::parse("https://h.example#Bad_Name", false).is_err());
        assert!(WellKnownSpec::parse("https://h.example#../x", false).is_err());
    }
}
