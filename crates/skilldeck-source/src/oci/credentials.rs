//! Credentials for a registry: the environment, a credentials file in
//! Docker's `config.json` format (what `docker login`, `oras login` and
//! `podman login --authfile` write), or none (anonymous).
//!
//! Order: `--oci-credentials FILE` (when given), then
//! `SKILLDECK_OCI_TOKEN` (bearer) or `SKILLDECK_OCI_USERNAME` +
//! `SKILLDECK_OCI_PASSWORD` (basic), then `$DOCKER_CONFIG/config.json` or
//! `~/.docker/config.json` when there is one, else anonymous. Credential
//! helpers (`credsStore`, `credHelpers`) are not run.

use std::fmt;
use std::path::{Path, PathBuf};

use base64::Engine as _;

use crate::error::Error;

/// A bearer token for every OCI registry named.
pub const TOKEN_ENV: &str = "SKILLDECK_OCI_TOKEN";

/// The user name of basic authentication (with [`PASSWORD_ENV`]).
pub const USERNAME_ENV: &str = "SKILLDECK_OCI_USERNAME";

/// The password of basic authentication (with [`USERNAME_ENV`]).
pub const PASSWORD_ENV: &str = "SKILLDECK_OCI_PASSWORD";

/// Docker's variable naming the folder of `config.json`.
pub const DOCKER_CONFIG_ENV: &str = "DOCKER_CONFIG";

/// Largest credentials file read.
pub const MAX_CREDENTIALS_FILE_BYTES: u64 = 1024 * 1024;

/// How to authenticate to a registry.
#[derive(Clone, PartialEq, Eq)]
pub enum Credentials {
    /// No credentials.
    Anonymous,
    /// HTTP basic (also exchanged for a token when the registry asks).
    Basic {
        /// The user.
        username: String,
        /// The password or access token.
        password: String,
    },
    /// A bearer token sent as is.
    Bearer(String),
}

/// Never prints a secret.
impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Credentials::Anonymous => f.write_str("Anonymous"),
            Credentials::Basic { username, .. } => write!(f, "Basic({username}, <redacted>)"),
            Credentials::Bearer(_) => f.write_str("Bearer(<redacted>)"),
        }
    }
}

impl Credentials {
    /// The credentials for `registry` (`HOST[:PORT]`): `file` when given
    /// (it must exist and hold an entry for the registry), else the
    /// environment, else Docker's default `config.json` when it exists and
    /// has an entry, else anonymous.
    pub fn resolve(registry: &str, file: Option<&Path>) -> Result<Credentials, Error> {
        if let Some(path) = file {
            return match from_file(path, registry)? {
                Some(c) => Ok(c),
                None => Err(Error::Oci {
                    reference: registry.to_owned(),
                    message: format!(
                        "{} has no credentials for {registry} (an \"auths\" entry named \
                         \"{registry}\" with \"auth\", \"username\"/\"password\" or \
                         \"registrytoken\")",
                        path.display()
                    ),
                }),
            };
        }
        if let Some(c) = from_env(registry)? {
            return Ok(c);
        }
        if let Some(path) = default_file()
            && path.is_file()
            && let Some(c) = from_file(&path, registry)?
        {
            return Ok(c);
        }
        Ok(Credentials::Anonymous)
    }
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

fn from_env(registry: &str) -> Result<Option<Credentials>, Error> {
    if let Some(token) = var(TOKEN_ENV) {
        return Ok(Some(Credentials::Bearer(token)));
    }
    match (var(USERNAME_ENV), var(PASSWORD_ENV)) {
        (Some(username), Some(password)) => Ok(Some(Credentials::Basic { username, password })),
        (None, None) => Ok(None),
        _ => Err(Error::Oci {
            reference: registry.to_owned(),
            message: format!("set both {USERNAME_ENV} and {PASSWORD_ENV}, or neither"),
        }),
    }
}

/// `$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`.
fn default_file() -> Option<PathBuf> {
    if let Some(dir) = var(DOCKER_CONFIG_ENV) {
        return Some(PathBuf::from(dir).join("config.json"));
    }
    var("HOME").map(|h| PathBuf::from(h).join(".docker").join("config.json"))
}

#[derive(serde::Deserialize)]
struct DockerConfig {
    #[serde(default)]
    auths: std::collections::BTreeMap<String, AuthEntry>,
}

#[derive(serde::Deserialize)]
struct AuthEntry {
    auth: Option<String>,
    username: Option<String>,
    password: Option<String>,
    registrytoken: Option<String>,
    identitytoken: Option<String>,
}

fn from_file(path: &Path, registry: &str) -> Result<Option<Credentials>, Error> {
    let bad = |message: String| Error::Oci {
        reference: registry.to_owned(),
        message: format!("{}: {message}", path.display()),
    };
    let meta = std::fs::metadata(path).map_err(|e| Error::Io {
        path: path.to_path_buf(),
        source: e,
    })?;
    if meta.len() > MAX_CREDENTIALS_FILE_BYTES {
        return Err(bad(format!(
            "larger than {MAX_CREDENTIALS_FILE_BYTES} bytes: not a credentials file"
        )));
    }
    let text = std::fs::read_to_string(path).map_err(|e| Error::Io {
        path: path.to_path_buf(),
        source: e,
    })?;
    let config: DockerConfig = serde_json::from_str(&text).map_err(|e| {
        bad(format!(
            "not a Docker config.json ({{\"auths\": {{...}}}}): {e}"
        ))
    })?;
    let Some(entry) = config
        .auths
        .iter()
        .find(|(key, _)| entry_host(key).eq_ignore_ascii_case(registry))
        .map(|(_, e)| e)
    else {
        return Ok(None);
    };
    if let Some(auth) = &entry.auth
        && !auth.is_empty()
    {
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(auth.trim())
            .map_err(|_| bad(format!("the \"auth\" of {registry} is not base64")))?;
        let decoded = String::from_utf8(decoded)
            .map_err(|_| bad(format!("the \"auth\" of {registry} is not UTF-8")))?;
        let (username, password) = decoded.split_once(':').ok_or_else(|| {
            bad(format!(
                "the \"auth\" of {registry} is not base64(USER:PASSWORD)"
            ))
        })?;
        return Ok(Some(Credentials::Basic {
            username: username.to_owned(),
            password: password.to_owned(),
        }));
    }
    if let (Some(username), Some(password)) = (&entry.username, &entry.password) {
        return Ok(Some(Credentials::Basic {
            username: username.clone(),
            password: password.clone(),
        }));
    }
    if let Some(token) = &entry.registrytoken {
        return Ok(Some(Credentials::Bearer(token.clone())));
    }
    if entry.identitytoken.is_some() {
        return Err(bad(format!(
            "the entry of {registry} holds only an identity token (an OAuth refresh token), \
             which skilldeck does not exchange: set {USERNAME_ENV} and {PASSWORD_ENV}, or \
             {TOKEN_ENV}"
        )));
    }
    // An empty entry: the secret lives in a credential helper.
    Ok(None)
}

/// The `HOST[:PORT]` of an `auths` key (`https://ghcr.io/v1/` → `ghcr.io`).
fn entry_host(key: &str) -> &str {
    let rest = key
        .strip_prefix("https://")
        .or_else(|| key.strip_prefix("http://"))
        .unwrap_or(key);
    rest.split('/').next().unwrap_or(rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    #[test]
    fn a_docker_config_entry_gives_basic_or_bearer_credentials() {
        let auth = base64::engine::general_purpose::STANDARD.encode("alice:s3cret");
        let (_d, path) = file(&format!(
            r#"{{"auths": {{"https://reg.example:5000/v1/": {{"auth": "{auth}"}},
                "tok.example": {{"registrytoken": "t0k"}},
                "up.example": {{"username": "bob", "password": "pw"}}}}}}"#
        ));
        assert_eq!(
            from_file(&path, "reg.example:5000").unwrap(),
            Some(Credentials::Basic {
                username: "alice".into(),
                password: "s3cret".into()
            })
        );
        assert_eq!(
            from_file(&path, "tok.example").unwrap(),
            Some(Credentials::Bearer("t0k".into()))
        );
        assert!(matches!(
            from_file(&path, "up.example").unwrap(),
            Some(Credentials::Basic { .. })
        ));
        assert_eq!(from_file(&path, "other.example").unwrap(), None);
        let e = Credentials::resolve("other.example", Some(&path)).unwrap_err();
        assert!(
            e.to_string()
                .contains("has no credentials for other.example"),
            "{e}"
        );
    }

    #[test]
    fn a_broken_credentials_file_is_an_error_naming_it() {
        let (_d, path) = file(r#"{"auths": {"r.example": {"auth": "%%%"}}}"#);
        let e = from_file(&path, "r.example").unwrap_err().to_string();
        assert!(e.contains("config.json") && e.contains("not base64"), "{e}");
        let (_d, path) = file("not json");
        assert!(from_file(&path, "r.example").is_err());
    }

    #[test]
    fn credentials_never_print_their_secret() {
        let c = Credentials::Basic {
            username: "u".into(),
            password: "hunter2".into(),
        };
        assert!(!format!("{c:?}").contains("hunter2"));
        assert!(!format!("{:?}", Credentials::Bearer("tok".into())).contains("tok"));
    }
}
