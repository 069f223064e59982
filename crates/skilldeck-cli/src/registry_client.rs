//! What every command talking to a registry shares: `--registry URL` and
//! `--token-file F` (else `SKILLDECK_TOKEN`), printing a refusal's
//! diagnostics as `file:line:col: code message`, and fetching a version
//! into a checked package file for `skilldeck-package` to install.

use std::io::Write;
use std::path::{Path, PathBuf};

use skilldeck_package::Source;
use skilldeck_registry::client::{Client, ClientError, Token, diagnostic_line};
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

/// Ends a command on a registry error: a refusal of the content (422: its
/// validation diagnostics, the risk audit's findings, a signature) prints
/// what the registry said (each diagnostic and finding as
/// `file:line:col: code message`) and exits [`exit::INVALID`]; any other
/// error is a [`CliError`].
pub fn failed(e: ClientError) -> Result<u8, CliError> {
    match refusal_lines(&e) {
        Some(lines) => {
            let mut err = std::io::stderr().lock();
            for line in lines {
                writeln!(err, "{}", render::safe(&line))?;
            }
            Ok(exit::INVALID)
        }
        None => Err(e.into()),
    }
}

/// A refusal of the content, in lines: `error: URL refused it (STATUS
/// CODE): detail`, then each diagnostic and finding as `file:line:col:
/// code message` (not yet made safe for a terminal). `None` for any other
/// error.
pub fn refusal_lines(e: &ClientError) -> Option<Vec<String>> {
    let p = e
        .problem()
        .filter(|p| p.status == 422 || !p.diagnostics.is_empty())?;
    let mut lines = vec![format!(
        "error: {} refused it ({} {}): {}",
        e_url(e),
        p.status,
        p.code,
        p.detail
    )];
    lines.extend(p.diagnostics.iter().map(diagnostic_line));
    lines.extend(p.findings.iter().map(|f| {
        let at = match (f.line, f.column) {
            (Some(l), Some(c)) => format!("{}:{l}:{c}", f.file),
            (Some(l), None) => format!("{}:{l}", f.file),
            _ => f.file.clone(),
        };
        format!("{at}: {} {} {}", f.severity, f.code, f.message)
    }));
    Some(lines)
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

/// `[NS/]NAME[@VERSION|@LABEL]`: the skill (a bare `NAME` is in the
/// default namespace, as `publish` puts it:
/// [`SkillRef::parse_or_default`]) and the version or label (default
/// `latest`).
pub fn parse_spec(text: &str) -> Result<(SkillRef, String), CliError> {
    let (name, version) = match text.split_once('@') {
        Some((n, v)) if !v.is_empty() => (n, v.to_owned()),
        Some(_) => {
            return Err(CliError::Usage(format!(
                "'{text}': expected [NS/]NAME[@VERSION|@LABEL]"
            )));
        }
        None => (text, LATEST.to_owned()),
    };
    let skill =
        SkillRef::parse_or_default(name).map_err(|e| CliError::Usage(format!("'{text}': {e}")))?;
    Ok((skill, version))
}

/// A version fetched into a package file, checked, ready to install.
pub struct Fetched {
    /// The source to install (the file, its lock source, its fingerprint).
    pub source: Source,
    /// Keeps the package file until dropped.
    _file: skilldeck_source::Fetched,
}

/// Fetches `skill` at `version_or_label` from `client`
/// ([`skilldeck_source::fetch_version`], the one download path: the
/// archive checked against the version's fingerprint, and `expected`, when
/// given, too), into a temporary package file in `dir`.
pub fn fetch(
    client: &Client,
    skill: &SkillRef,
    version_or_label: &str,
    expected: Option<&skilldeck::Digest>,
    dir: &Path,
) -> Result<Fetched, CliError> {
    let fetched = skilldeck_source::fetch_version(client, skill, version_or_label, expected, dir)
        .map_err(|e| match e {
        skilldeck_source::Error::Client(e) => CliError::RegistryClient(e),
        skilldeck_source::Error::Io { path, source } => CliError::Io { path, source },
        other => CliError::Usage(other.to_string()),
    })?;
    Ok(Fetched {
        source: Source::Fetched {
            package: fetched.package().to_path_buf(),
            source: fetched.lock_source.clone(),
            fingerprint: fetched.fingerprint,
            signature: fetched.signature.clone(),
            published: fetched.environments.clone(),
        },
        _file: fetched,
    })
}
