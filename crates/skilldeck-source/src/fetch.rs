//! [`fetch_version`]: one skill at one version (or label) from a registry,
//! its archive checked against the version's fingerprint and written to a
//! package file for `skilldeck-package` to install or unpack. The one
//! download path: `skilldeck install --registry` and the registry agent
//! source ([`crate::RegistrySource`]) both write archives through
//! [`write_package`].

use std::io::Write;
use std::path::Path;

use skilldeck::Digest;
use skilldeck_registry::client::{Client, lock_source};
use skilldeck_registry::names::SkillRef;

use crate::error::Error;

/// A version fetched into a package file, checked, ready to install. The
/// file is removed when this is dropped.
#[derive(Debug)]
pub struct Fetched {
    /// The exact version the label or version resolved to.
    pub version: String,
    /// The version's content fingerprint, checked.
    pub fingerprint: Digest,
    /// How a lockfile names it: `registry+URL#ns/name@version`.
    pub lock_source: String,
    /// The version's SSH signature (armored), when it was published
    /// signed: install checks it and pins its signer like a `.sig` beside
    /// a package.
    pub signature: Option<Vec<u8>>,
    /// The resolution of the skill's dependencies stored with the version
    /// at publish (empty: none): what an install of it installs exactly.
    pub environments: Vec<skilldeck::environment::LockedEnvironment>,
    package: tempfile::TempPath,
}

impl Fetched {
    /// The package file (`.tar.gz`).
    pub fn package(&self) -> &Path {
        &self.package
    }
}

/// Fetches `skill` at `version_or_label` from `client`: the version's
/// manifest, then its archive by exact version, checked against the
/// manifest's fingerprint; `expected`, when given (a lock entry), must be
/// that fingerprint too. The package is written to a temporary file in
/// `dir`.
pub fn fetch_version(
    client: &Client,
    skill: &SkillRef,
    version_or_label: &str,
    expected: Option<&Digest>,
    dir: &Path,
) -> Result<Fetched, Error> {
    let detail = client.version(skill, version_or_label)?;
    let fingerprint = Digest::parse(&detail.fingerprint).map_err(|e| {
        Error::Registry(format!(
            "{skill}@{}: the registry {} serves a malformed fingerprint: {e}",
            detail.version,
            client.url()
        ))
    })?;
    if let Some(want) = expected
        && *want != fingerprint
    {
        return Err(Error::Registry(format!(
            "{skill}@{}: the registry {} serves fingerprint {}; the lock says {want}",
            detail.version,
            client.url(),
            detail.fingerprint
        )));
    }
    let archive = client.archive(&detail)?;
    let package = write_package(&archive.bytes, dir)?;
    Ok(Fetched {
        lock_source: lock_source(client.url(), skill, &detail.version),
        signature: detail.signature.map(String::into_bytes),
        environments: detail.environments,
        version: detail.version,
        fingerprint,
        package,
    })
}

/// Writes archive `bytes` to a new package file in `dir` (created when
/// missing), removed when the returned path is dropped.
pub(crate) fn write_package(bytes: &[u8], dir: &Path) -> Result<tempfile::TempPath, Error> {
    let io = |path: &Path, source: std::io::Error| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    let mut file = tempfile::Builder::new()
        .prefix(".skilldeck-fetch-")
        .suffix(".tar.gz")
        .tempfile_in(dir)
        .map_err(|e| io(dir, e))?;
    file.write_all(bytes)
        .and_then(|()| file.flush())
        .map_err(|e| io(file.path(), e))?;
    Ok(file.into_temp_path())
}
