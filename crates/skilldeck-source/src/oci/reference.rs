//! `oci://REGISTRY/REPOSITORY[:TAG][@sha256:DIGEST]`: what an OCI source
//! names, checked against the distribution spec's grammar before anything
//! is asked of a registry.

use std::fmt;
use std::net::IpAddr;

use skilldeck::Digest;

use crate::error::Error;

/// The scheme every OCI source starts with.
pub const OCI_SCHEME: &str = "oci://";

/// Longest repository name (the distribution spec's limit).
pub const MAX_REPOSITORY_BYTES: usize = 255;

/// The tag a reference with neither a tag nor a digest names.
pub const DEFAULT_TAG: &str = "latest";

/// Longest tag (the distribution spec's limit).
pub const MAX_TAG_BYTES: usize = 128;

/// True when `text` names an OCI source (`oci://...`).
pub fn is_oci_source(text: &str) -> bool {
    text.starts_with(OCI_SCHEME)
}

/// An OCI reference: a registry, a repository in it, and a tag, a manifest
/// digest, or both (the digest then wins: it is what is pulled, the tag
/// is only shown).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OciRef {
    /// `HOST[:PORT]`, lowercased (`ghcr.io`, `127.0.0.1:5000`, `[::1]:5000`).
    pub registry: String,
    /// `acme/skills/pdf-tools`.
    pub repository: String,
    /// `1.2.0`.
    pub tag: Option<String>,
    /// The manifest's digest (`sha256:...`).
    pub digest: Option<Digest>,
}

impl OciRef {
    /// Parses `oci://REGISTRY/REPOSITORY[:TAG][@sha256:HEX]`.
    pub fn parse(text: &str) -> Result<OciRef, Error> {
        let bad = |why: String| Error::Oci {
            reference: text.to_owned(),
            message: why,
        };
        let rest = text.strip_prefix(OCI_SCHEME).ok_or_else(|| {
            bad("an OCI source starts with oci:// (oci://REGISTRY/REPOSITORY:TAG)".into())
        })?;
        let (registry, path) = rest.split_once('/').ok_or_else(|| {
            bad(
                "it names no repository: write oci://REGISTRY/REPOSITORY:TAG \
                 (for example oci://ghcr.io/acme/pdf-tools:1.2.0)"
                    .into(),
            )
        })?;
        check_registry(registry).map_err(|why| bad(format!("the registry '{registry}' {why}")))?;
        let (name, digest) = match path.split_once('@') {
            Some((n, d)) => {
                let digest = parse_digest(d).map_err(&bad)?;
                (n, Some(digest))
            }
            None => (path, None),
        };
        let (repository, tag) = match name.rsplit_once(':') {
            Some((r, t)) if !t.contains('/') => (r, Some(t.to_owned())),
            _ => (name, None),
        };
        check_repository(repository)
            .map_err(|why| bad(format!("the repository '{repository}' {why}")))?;
        if let Some(t) = &tag {
            check_tag(t).map_err(|why| bad(format!("the tag '{t}' {why}")))?;
        }
        Ok(OciRef {
            registry: registry.to_ascii_lowercase(),
            repository: repository.to_owned(),
            tag,
            digest,
        })
    }

    /// The canonical source a lock records: `oci://REGISTRY/REPOSITORY@DIGEST`
    /// (the manifest digest pulled; no tag, which may move).
    pub fn canonical(&self, digest: &Digest) -> String {
        format!("{OCI_SCHEME}{}/{}@{digest}", self.registry, self.repository)
    }

    /// What a lock records for this reference pulled at `digest`: a
    /// reference with a digest is a pin, recorded as
    /// `oci://REGISTRY/REPOSITORY@DIGEST`; one by tag (none: `latest`)
    /// follows the tag, recorded as `oci://REGISTRY/REPOSITORY:TAG@DIGEST`
    /// (the digest is what is installed and what `install --frozen`
    /// pulls; the tag is what `outdated` and `update` resolve again).
    pub fn lock_source(&self, digest: &Digest) -> String {
        match (&self.tag, &self.digest) {
            (_, Some(_)) => self.canonical(digest),
            (tag, None) => format!(
                "{OCI_SCHEME}{}/{}:{}@{digest}",
                self.registry,
                self.repository,
                tag.as_deref().unwrap_or(DEFAULT_TAG)
            ),
        }
    }

    /// The tag a lock entry follows: `Some` for a source recorded by
    /// [`OciRef::lock_source`] from a tag (`...:TAG@DIGEST`), `None` for a
    /// pin (`...@DIGEST`).
    pub fn followed_tag(&self) -> Option<&str> {
        self.digest.as_ref().and(self.tag.as_deref())
    }

    /// The same repository at its tag, with no digest (what `outdated`
    /// resolves).
    pub fn at_tag(&self) -> OciRef {
        OciRef {
            digest: None,
            ..self.clone()
        }
    }

    /// The same repository at exactly `digest` (no tag).
    pub fn at_digest(&self, digest: Digest) -> OciRef {
        OciRef {
            tag: None,
            digest: Some(digest),
            ..self.clone()
        }
    }

    /// True when the registry is on this machine (`localhost`, 127.0.0.0/8,
    /// `::1`): plain http is then allowed without `--insecure-http`.
    pub fn is_loopback(&self) -> bool {
        let host = host_of(&self.registry);
        host.eq_ignore_ascii_case("localhost")
            || host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    }

    /// `REGISTRY/REPOSITORY`, the repository's full name.
    pub fn name(&self) -> String {
        format!("{}/{}", self.registry, self.repository)
    }
}

/// `oci://REGISTRY/REPOSITORY[:TAG][@DIGEST]`.
impl fmt::Display for OciRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{OCI_SCHEME}{}/{}", self.registry, self.repository)?;
        if let Some(t) = &self.tag {
            write!(f, ":{t}")?;
        }
        if let Some(d) = &self.digest {
            write!(f, "@{d}")?;
        }
        Ok(())
    }
}

/// The host of `HOST[:PORT]` (an IPv6 literal keeps its brackets).
fn host_of(registry: &str) -> &str {
    if registry.starts_with('[') {
        return match registry.find(']') {
            Some(i) => &registry[..=i],
            None => registry,
        };
    }
    registry.split(':').next().unwrap_or(registry)
}

fn parse_digest(text: &str) -> Result<Digest, String> {
    let Some(hex) = text.strip_prefix("sha256:") else {
        return Err(format!(
            "the digest '{text}' is not sha256:HEX (skilldeck pulls sha256 manifests only)"
        ));
    };
    if hex.len() != 64 || !hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return Err(format!(
            "the digest '{text}' is not sha256: followed by 64 lowercase hex digits"
        ));
    }
    Digest::parse(text).map_err(|e| format!("the digest '{text}': {e}"))
}

/// `HOST[:PORT]`: DNS labels or an IP literal, an optional numeric port.
fn check_registry(registry: &str) -> Result<(), &'static str> {
    if registry.is_empty() {
        return Err("is empty");
    }
    let host = host_of(registry);
    let port = &registry[host.len()..];
    if let Some(p) = port.strip_prefix(':') {
        if p.is_empty() || p.len() > 5 || !p.bytes().all(|b| b.is_ascii_digit()) {
            return Err("has a port that is not a number");
        }
    } else if !port.is_empty() {
        return Err("is not HOST[:PORT]");
    }
    if let Some(inner) = host.strip_prefix('[') {
        let inner = inner.strip_suffix(']').ok_or("has an unclosed '['")?;
        return inner
            .parse::<std::net::Ipv6Addr>()
            .map(|_| ())
            .map_err(|_| "is not a valid IPv6 address");
    }
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
    };
    if host.len() > 253 || !host.split('.').all(label_ok) {
        return Err("is not a host name (letters, digits, '-' and '.')");
    }
    Ok(())
}

/// The distribution spec's path components: `[a-z0-9]+` joined by `.`,
/// `_`, `__` or dashes, components joined by `/`.
fn check_repository(repository: &str) -> Result<(), &'static str> {
    if repository.is_empty() {
        return Err("is empty");
    }
    if repository.len() > MAX_REPOSITORY_BYTES {
        return Err("is longer than 255 bytes");
    }
    for component in repository.split('/') {
        let b = component.as_bytes();
        if b.is_empty() {
            return Err("has an empty path component");
        }
        let alnum = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
        if !alnum(b[0]) || !alnum(b[b.len() - 1]) {
            return Err("has a component that does not start and end with [a-z0-9]");
        }
        let mut i = 0;
        while i < b.len() {
            if alnum(b[i]) {
                i += 1;
                continue;
            }
            let start = i;
            while i < b.len() && !alnum(b[i]) {
                i += 1;
            }
            let sep = &component[start..i];
            if !(sep == "." || sep == "_" || sep == "__" || sep.bytes().all(|c| c == b'-')) {
                return Err(
                    "holds a character repositories cannot have (only a-z, 0-9, \
                            '.', '_', '__', '-' and '/')",
                );
            }
        }
    }
    Ok(())
}

/// `[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}`.
fn check_tag(tag: &str) -> Result<(), &'static str> {
    let b = tag.as_bytes();
    if b.is_empty() || b.len() > MAX_TAG_BYTES {
        return Err("is empty or longer than 128 bytes");
    }
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    if !word(b[0]) || !b.iter().all(|&c| word(c) || c == b'.' || c == b'-') {
        return Err(
            "is not a valid tag (letters, digits, '_', '.', '-'; not starting with '.' or '-')",
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const D: &str = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn a_reference_parses_into_registry_repository_tag_and_digest() {
        let r = OciRef::parse("oci://127.0.0.1:5000/acme/pdf-tools:1.2.0").unwrap();
        assert_eq!(r.registry, "127.0.0.1:5000");
        assert_eq!(r.repository, "acme/pdf-tools");
        assert_eq!(r.tag.as_deref(), Some("1.2.0"));
        assert!(r.digest.is_none());
        assert!(r.is_loopback());
        let r = OciRef::parse(&format!("oci://GHCR.io/acme/pdf@{D}")).unwrap();
        assert_eq!(r.registry, "ghcr.io");
        assert_eq!(r.tag, None);
        assert_eq!(r.digest.unwrap().to_string(), D);
        assert!(!r.is_loopback());
        let r = OciRef::parse(&format!("oci://[::1]:5000/a/b:v1@{D}")).unwrap();
        assert!(r.is_loopback());
        assert_eq!(r.to_string(), format!("oci://[::1]:5000/a/b:v1@{D}"));
        assert_eq!(
            r.canonical(&r.digest.unwrap()),
            format!("oci://[::1]:5000/a/b@{D}")
        );
        assert!(OciRef::parse("oci://localhost/x").unwrap().is_loopback());
    }

    #[test]
    fn references_outside_the_distribution_grammar_are_refused() {
        for bad in [
            "oci://ghcr.io",
            "oci:///repo:tag",
            "oci://ghcr.io/Acme/pdf:1",
            "oci://ghcr.io/acme//pdf:1",
            "oci://ghcr.io/acme/pdf:-x",
            "oci://ghcr.io/acme/pdf:.x",
            "oci://ghcr.io/acme/pdf@sha512:00",
            "oci://ghcr.io/acme/pdf@sha256:ABC",
            "oci://gh cr.io/acme/pdf:1",
            "oci://host:port/acme/pdf:1",
            "oci://ghcr.io/acme/pdf..x:1",
            "oci://ghcr.io/../pdf:1",
            "oci://ghcr.io/acme/pdf:a/b",
            "https://ghcr.io/acme/pdf:1",
        ] {
            assert!(OciRef::parse(bad).is_err(), "{bad} was accepted");
        }
        let e = OciRef::parse("oci://ghcr.io").unwrap_err().to_string();
        assert!(e.contains("oci://REGISTRY/REPOSITORY:TAG"), "{e}");
    }
}
