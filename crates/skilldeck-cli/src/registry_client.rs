//! What every command talking to a registry shares: `--registry URL` and
//! `--token-file F` (else `SKILLDECK_TOKEN`), printing a refusal's
//! diagnostics as `file:line:col: code message`, and fetching a version
//! into a checked package file for `skilldeck-package` to install.

use std::io::Write;
use std::path::{Path, PathBuf};

use skilldeck_package::Source;
use skilldeck_registry::client::{Client, ClientError, Token, diagnostic_line, lock_source};
use skilldeck_registry::names::{LATEST, SkillRef};

use crate::error::CliError;
use crate::exit;
use crate::render;

/// Where the registry is and how to authenticate.
#[derive(Debug, Clone, clap::Args)]
pub struct ClientArgs {
    /// The registry's URL (http(s)://HOST:PORT).
    #[arg(long, value_name = "URL", env = "SKILLDECK_REGISTRY_URL")]
    pub registry: String,
    /// A file whose first line is the bearer token (else the
    /// SKILLDECK_TOKEN environment variable).
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
}

impl ClientArgs {
    /// A client of the registry these flags name.
    pub fn client(&self) -> Result<Client, CliError> {
        client_for(&self.registry, self.token_file.as_deref())
    }
}

/// A client of `url` with the token of `token_file` (else the
/// environment's).
pub fn client_for(url: &str, token_file: Option<&Path>) -> Result<Client, CliError> {
    let token = Token::resolve(token_file)?;
    Ok(Client::new(url, token)?)
}

/// Ends a command on a registry error: a refusal with diagnostics prints
/// them (`file:line:col: code message`) and exits [`exit::INVALID`]; any
/// other error is a [`CliError`].
pub fn failed(e: ClientError) -> Result<u8, CliError> {
    match e.problem() {
        Some(p) if !p.diagnostics.is_empty() => {
            let mut err = std::io::stderr().lock();
            writeln!(
                err,
                "error: {} refused it ({} {}): {}",
                e_url(&e),
                p.status,
                p.code,
                render::safe(&p.detail)
            )?;
            for d in &p.diagnostics {
                writeln!(err, "{}", render::safe(&diagnostic_line(d)))?;
            }
            Ok(exit::INVALID)
        }
        _ => Err(e.into()),
    }
}

fn e_url(e: &ClientError) -> &str {
    match e {
        ClientError::Problem { url, .. }
        | ClientError::Status { url, .. }
        | ClientError::Transport { url, .. }
        | ClientError::Decode { url, .. }
        | ClientError::TooLarge { url, .. }
        | ClientError::Integrity { url, .. }
        | ClientError::Url { url, .. } => url,
        ClientError::Token { .. } => "the registry",
    }
}

/// `NS/NAME[@VERSION|@LABEL]`: the skill and the version or label (default
/// `latest`).
pub fn parse_spec(text: &str) -> Result<(SkillRef, String), CliError> {
    let (name, version) = match text.split_once('@') {
        Some((n, v)) if !v.is_empty() => (n, v.to_owned()),
        Some(_) => {
            return Err(CliError::Usage(format!(
                "'{text}': expected NS/NAME[@VERSION|@LABEL]"
            )));
        }
        None => (text, LATEST.to_owned()),
    };
    let skill = SkillRef::parse(name).map_err(|e| CliError::Usage(format!("'{text}': {e}")))?;
    Ok((skill, version))
}

/// A version fetched into a package file, checked, ready to install.
pub struct Fetched {
    /// The source to install (the file, its lock source, its fingerprint).
    pub source: Source,
    /// Keeps the package file until dropped.
    _file: tempfile::TempPath,
}

/// Fetches `skill` at `version_or_label` from `client`: the version's
/// manifest, then its archive by exact version, checked against the
/// manifest's fingerprint ([`Client::archive`]); `expected`, when given
/// (a lock entry), must be that fingerprint too. The package is written to
/// a temporary file in `dir`.
pub fn fetch(
    client: &Client,
    skill: &SkillRef,
    version_or_label: &str,
    expected: Option<&skilldeck::Digest>,
    dir: &Path,
) -> Result<Fetched, CliError> {
    let detail = client.version(skill, version_or_label)?;
    let fingerprint = skilldeck::Digest::parse(&detail.fingerprint).map_err(|e| {
        CliError::Usage(format!(
            "{skill}@{}: the registry {} serves a malformed fingerprint: {e}",
            detail.version,
            client.url()
        ))
    })?;
    if let Some(want) = expected
        && *want != fingerprint
    {
        return Err(CliError::Usage(format!(
            "{skill}@{}: the registry {} serves fingerprint {}; the lock says {want}",
            detail.version,
            client.url(),
            detail.fingerprint
        )));
    }
    let archive = client.archive(&detail)?;
    std::fs::create_dir_all(dir).map_err(|source| CliError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut file = tempfile::Builder::new()
        .prefix(".skilldeck-fetch-")
        .suffix(".tar.gz")
        .tempfile_in(dir)
        .map_err(|source| CliError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
    file.write_all(&archive.bytes)
        .and_then(|()| file.flush())
        .map_err(|source| CliError::Io {
            path: file.path().to_path_buf(),
            source,
        })?;
    let path = file.into_temp_path();
    Ok(Fetched {
        source: Source::Fetched {
            package: path.to_path_buf(),
            source: lock_source(client.url(), skill, &detail.version),
            fingerprint,
        },
        _file: path,
    })
}
