//! Bearer tokens: `sdk_` + 32 random bytes base64url, stored as their
//! SHA-256 hex, compared in constant time; the admin token file (0600).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sqlx::Row;
use subtle::ConstantTimeEq;

use crate::names::AgentId;
use crate::service::config::{MAX_TEXT_LEN, TOKEN_RANDOM_BYTES};
use crate::service::error::RegistryError;
use crate::service::principal::{Principal, Scope};
use crate::service::registry::{Registry, now};
use crate::wire::{TokenCreated, TokenRequest};

/// Every token starts with this.
pub const TOKEN_PREFIX: &str = "sdk_";

/// `n` random bytes from the operating system (fails closed).
pub(crate) fn random_bytes(n: usize) -> Result<Vec<u8>, RegistryError> {
    let mut buf = vec![0u8; n];
    getrandom::fill(&mut buf)
        .map_err(|e| RegistryError::Internal(format!("no randomness available: {e}")))?;
    Ok(buf)
}

/// A fresh token.
fn new_token() -> Result<String, RegistryError> {
    Ok(format!(
        "{TOKEN_PREFIX}{}",
        URL_SAFE_NO_PAD.encode(random_bytes(TOKEN_RANDOM_BYTES)?)
    ))
}

/// A fresh token id (not secret).
fn new_token_id() -> Result<String, RegistryError> {
    Ok(format!("tok_{}", URL_SAFE_NO_PAD.encode(random_bytes(9)?)))
}

/// Refuses a token file others can read or write (fails closed: the
/// admin token must stay the operator's).
fn check_private(path: &Path) -> Result<(), RegistryError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path)
            .map_err(|e| RegistryError::io(path, e))?
            .permissions()
            .mode();
        if mode & 0o077 != 0 {
            return Err(RegistryError::Config(format!(
                "{}: the admin token file is open to other users (mode {:o}); run chmod 600 on it",
                path.display(),
                mode & 0o777
            )));
        }
    }
    Ok(())
}

/// SHA-256 hex of a token (what is stored).
fn token_hash(token: &str) -> String {
    let digest = skilldeck::sha256_digest(token.as_bytes());
    digest
        .strip_prefix(skilldeck::DIGEST_PREFIX)
        .unwrap_or(&digest)
        .to_owned()
}

fn join_scopes(scopes: &[Scope]) -> String {
    scopes
        .iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

impl Registry {
    /// The principal of a bearer token; 401 when unknown.
    pub async fn authenticate(&self, bearer: &str) -> Result<Principal, RegistryError> {
        let bearer = bearer.trim();
        if !bearer.starts_with(TOKEN_PREFIX) || bearer.len() > MAX_TEXT_LEN {
            return Err(RegistryError::Unauthorized(
                "the token is not a registry token",
            ));
        }
        let hash = token_hash(bearer);
        if let Some(p) = self.inner.auth.get(&hash) {
            return Ok((*p).clone());
        }
        let row = sqlx::query("SELECT id, name, hash, scopes FROM tokens WHERE hash = $1")
            .bind(hash.clone())
            .fetch_optional(&self.inner.db)
            .await?;
        let Some(row) = row else {
            return Err(RegistryError::Unauthorized("unknown token"));
        };
        let stored: String = row.try_get("hash")?;
        if !bool::from(stored.as_bytes().ct_eq(hash.as_bytes())) {
            return Err(RegistryError::Unauthorized("unknown token"));
        }
        let scopes_text: String = row.try_get("scopes")?;
        let scopes = scopes_text
            .split_whitespace()
            .map(Scope::parse)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| RegistryError::Internal(format!("stored scopes: {e}")))?;
        let principal = Principal {
            token_id: row.try_get("id")?,
            name: row.try_get("name")?,
            scopes,
        };
        self.inner.auth.insert(hash, Arc::new(principal.clone()));
        Ok(principal)
    }

    /// Makes sure the admin token in `path` exists and is known: creates
    /// the file (mode 0600) with a fresh token when it is missing, and
    /// registers the token's hash. Returns the path (never the token).
    pub async fn ensure_admin_token(&self, path: &Path) -> Result<PathBuf, RegistryError> {
        let token = match std::fs::read_to_string(path) {
            Ok(text) => {
                check_private(path)?;
                let t = text.trim().to_owned();
                if !t.starts_with(TOKEN_PREFIX) {
                    return Err(RegistryError::Config(format!(
                        "{}: not a registry token (expected {TOKEN_PREFIX}...)",
                        path.display()
                    )));
                }
                t
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let t = new_token()?;
                if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                    std::fs::create_dir_all(parent).map_err(|e| RegistryError::io(parent, e))?;
                }
                let mut options = std::fs::OpenOptions::new();
                options.write(true).create_new(true);
                #[cfg(unix)]
                {
                    use std::os::unix::fs::OpenOptionsExt;
                    options.mode(0o600);
                }
                let mut f = options.open(path).map_err(|e| RegistryError::io(path, e))?;
                f.write_all(format!("{t}\n").as_bytes())
                    .and_then(|()| f.sync_all())
                    .map_err(|e| RegistryError::io(path, e))?;
                t
            }
            Err(e) => return Err(RegistryError::io(path, e)),
        };
        let hash = token_hash(&token);
        let known: Option<String> = sqlx::query_scalar("SELECT id FROM tokens WHERE hash = $1")
            .bind(hash.clone())
            .fetch_optional(&self.inner.db)
            .await?;
        if known.is_none() {
            let system = Principal {
                token_id: "system".to_owned(),
                name: "registry".to_owned(),
                scopes: vec![Scope::Admin],
            };
            let stored = self
                .store_token(
                    &system,
                    hash.clone(),
                    "admin-file".to_owned(),
                    &[Scope::Admin],
                )
                .await;
            if let Err(e) = stored {
                // Replicas started together with one token file race to
                // register it: the hash is unique, so the loser finds it.
                let now_known: Option<String> =
                    sqlx::query_scalar("SELECT id FROM tokens WHERE hash = $1")
                        .bind(hash)
                        .fetch_optional(&self.inner.db)
                        .await?;
                if now_known.is_none() {
                    return Err(e);
                }
            }
        }
        Ok(path.to_path_buf())
    }

    async fn store_token(
        &self,
        by: &Principal,
        hash: String,
        name: String,
        scopes: &[Scope],
    ) -> Result<String, RegistryError> {
        let id = new_token_id()?;
        let (mut tx, generation) = self.begin_write().await?;
        sqlx::query(
            "INSERT INTO tokens (id, name, hash, scopes, created_at) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(id.clone())
        .bind(name.clone())
        .bind(hash)
        .bind(join_scopes(scopes))
        .bind(now())
        .execute(&mut *tx)
        .await?;
        Registry::audit_in(
            &mut tx,
            generation,
            by,
            "token.create",
            &format!("token:{id}"),
            serde_json::json!({"name": name, "scopes": join_scopes(scopes)}),
        )
        .await?;
        self.commit(tx).await?;
        Ok(id)
    }

    async fn issue(
        &self,
        by: &Principal,
        name: String,
        scopes: Vec<Scope>,
    ) -> Result<TokenCreated, RegistryError> {
        RegistryError::check_text("the token name", &name)?;
        let token = new_token()?;
        let id = self
            .store_token(by, token_hash(&token), name.clone(), &scopes)
            .await?;
        Ok(TokenCreated {
            token,
            id,
            name,
            scopes: scopes.iter().map(|s| s.to_string()).collect(),
        })
    }

    /// A token with any scopes (admin only).
    pub async fn create_token(
        &self,
        p: &Principal,
        request: TokenRequest,
    ) -> Result<TokenCreated, RegistryError> {
        p.require_admin()?;
        if request.scopes.is_empty() {
            return Err(RegistryError::bad_request(
                "registry-invalid-scope",
                "a token needs at least one scope",
            ));
        }
        let scopes = request
            .scopes
            .iter()
            .map(|s| Scope::parse(s))
            .collect::<Result<Vec<_>, _>>()?;
        let name = request.name.unwrap_or_else(|| "token".to_owned());
        self.issue(p, name, scopes).await
    }

    /// A token scoped to agent `id` (admin only; the agent must exist).
    pub async fn agent_token(
        &self,
        p: &Principal,
        id: &AgentId,
        name: Option<String>,
    ) -> Result<TokenCreated, RegistryError> {
        p.require_admin()?;
        self.agent(p, id).await?;
        let name = name.unwrap_or_else(|| format!("agent-{id}"));
        self.issue(p, name, vec![Scope::Agent(id.clone())]).await
    }
}
