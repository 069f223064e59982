//! Bearer tokens: `sdk_` + 32 random bytes base64url, stored as their
//! SHA-256 hex, compared in constant time; the admin token file (0600).
//!
//! A token has a lifecycle: an optional expiry, a revocation (kept, so the
//! list shows it and a client presenting it is told why it is refused),
//! a last-use time. Verified tokens are cached per process for
//! [`RegistryLimits::auth_cache_ttl`](crate::RegistryLimits::auth_cache_ttl):
//! a revocation clears this process's cache at once, other replicas stop
//! accepting the token within that TTL; an expiry is checked on every
//! request, cached or not.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::error::RegistryError;
use crate::names::AgentId;
use crate::service::cache::Computed;
use crate::service::config::{MAX_TEXT_LEN, TOKEN_RANDOM_BYTES};
use crate::service::cursor;
use crate::service::fresh::Scope as CacheScope;
use crate::service::principal::{Principal, Scope};
use crate::service::principal::{PrincipalKind, report_caller};
use crate::service::registry::Registry;
use crate::service::state::AuthEntry;
use crate::service::throttle::{ThrottleKey, Window};
use crate::storage::auth_failures;
use crate::storage::db::{self, now};
use crate::storage::tokens::{self as stored, NewToken, TokenRecord};
use crate::wire::{Page, TokenCreated, TokenInfo, TokenRequest};

/// Where a token came from: the API (or the CLI through it).
pub const SOURCE_API: &str = "api";
/// Where a token came from: the registry's admin token file.
pub const SOURCE_ADMIN_FILE: &str = "admin-file";
/// The longest expiry a token may be given (ten years).
pub const MAX_TOKEN_LIFETIME_SECS: u64 = 10 * 366 * 24 * 60 * 60;

fn parse_time(text: &str) -> Result<chrono::DateTime<chrono::Utc>, RegistryError> {
    chrono::DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&chrono::Utc))
        .map_err(|e| RegistryError::Internal(format!("stored time {text:?}: {e}")))
}

fn parse_scopes(text: &str) -> Result<Vec<Scope>, RegistryError> {
    text.split_whitespace()
        .map(Scope::parse)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| RegistryError::Internal(format!("stored scopes: {e}")))
}

fn token_info(t: TokenRecord) -> Result<TokenInfo, RegistryError> {
    let status = if t.revoked_at.is_some() {
        "revoked"
    } else if t
        .expires_at
        .as_deref()
        .map(parse_time)
        .transpose()?
        .is_some_and(|at| at <= chrono::Utc::now())
    {
        "expired"
    } else {
        "active"
    };
    Ok(TokenInfo {
        id: t.id,
        name: t.name,
        scopes: t.scopes.split_whitespace().map(str::to_owned).collect(),
        source: t.source,
        status: status.to_owned(),
        created_at: t.created_at,
        expires_at: t.expires_at,
        last_used_at: t.last_used_at,
        revoked_at: t.revoked_at,
    })
}

pub use crate::service::config::TOKEN_PREFIX;

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
    if let Some(mode) =
        skilldeck::secret::open_to_others(path).map_err(|e| RegistryError::io(path, e))?
    {
        return Err(RegistryError::Config(format!(
            "{}: the admin token file is open to other users (mode {:o}); run chmod 600 on it",
            path.display(),
            mode
        )));
    }
    Ok(())
}

/// The admin token in `path`, created first when the file is missing:
/// a fresh token goes to a private temporary file in the same folder,
/// synced, then moved into place only if nothing is there yet
/// (`persist_noclobber`: `renameat2(RENAME_NOREPLACE)` or `link`, both
/// atomic and exclusive), so a reader never sees a half-written file and
/// two processes racing never both win; the loser reads the winner's.
fn read_or_create_token_file(path: &Path) -> Result<String, RegistryError> {
    match std::fs::read_to_string(path) {
        Ok(text) => return token_of_file(path, &text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(RegistryError::io(path, e)),
    }
    let parent = match path.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(parent) => parent.to_path_buf(),
        None => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).map_err(|e| RegistryError::io(&parent, e))?;
    let token = new_token()?;
    // tempfile creates the file 0600 on Unix.
    let mut temp = tempfile::Builder::new()
        .prefix(".admin-token.")
        .tempfile_in(&parent)
        .map_err(|e| RegistryError::io(&parent, e))?;
    temp.write_all(format!("{token}\n").as_bytes())
        .and_then(|()| temp.as_file().sync_all())
        .map_err(|e| RegistryError::io(temp.path(), e))?;
    match temp.persist_noclobber(path) {
        Ok(_) => {
            // The new name is durable once its folder is synced.
            if let Ok(dir) = std::fs::File::open(&parent) {
                let _ = dir.sync_all();
            }
            Ok(token)
        }
        Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => {
            // Another process made it first: its file is complete.
            let text = std::fs::read_to_string(path).map_err(|e| RegistryError::io(path, e))?;
            token_of_file(path, &text)
        }
        Err(e) => Err(RegistryError::io(path, e.error)),
    }
}

/// The token an admin token file holds (the file must be private).
fn token_of_file(path: &Path, text: &str) -> Result<String, RegistryError> {
    check_private(path)?;
    let t = text.trim().to_owned();
    if !t.starts_with(TOKEN_PREFIX) {
        return Err(RegistryError::Config(format!(
            "{}: not a registry token (expected {TOKEN_PREFIX}...)",
            path.display()
        )));
    }
    Ok(t)
}

/// SHA-256 hex of a token (what is stored).
fn token_hash(token: &str) -> String {
    skilldeck::secret::secret_hash(token)
}

fn join_scopes(scopes: &[Scope]) -> String {
    scopes
        .iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

impl Registry {
    /// The principal of a bearer token; 401 when unknown, expired or
    /// revoked (the problem says which), 429 once `client` (or the token's
    /// prefix) has failed too often, counted across replicas
    /// (see the registry manual, "Failed authentication"). A token this process
    /// verified recently is never refused by the throttle; another token
    /// from a throttled client is looked up at most once per probe
    /// interval (429 otherwise), so a flood costs no query per request.
    pub async fn authenticate(
        &self,
        bearer: &str,
        client: Option<std::net::IpAddr>,
    ) -> Result<Principal, RegistryError> {
        let result = self.authenticate_token(bearer, client).await;
        report_caller(match &result {
            Ok(p) => p.kind(),
            Err(_) => PrincipalKind::Invalid,
        });
        result
    }

    async fn authenticate_token(
        &self,
        bearer: &str,
        client: Option<std::net::IpAddr>,
    ) -> Result<Principal, RegistryError> {
        let bearer = bearer.trim();
        if let Some(cached) = self.cached(bearer) {
            return cached;
        }
        let throttle = &self.inner.throttle;
        let keys = ThrottleKey::of(client, bearer);
        let window = throttle.window_now();
        if let Err(retry_after) = throttle.admit(&keys, window) {
            return Err(RegistryError::TooManyAttempts { retry_after });
        }
        match self.verify(bearer).await {
            Err(RegistryError::Unauthorized(why)) => {
                if self.count_failure(&keys, window).await {
                    Err(RegistryError::TooManyAttempts {
                        retry_after: window.left(),
                    })
                } else {
                    Err(RegistryError::Unauthorized(why))
                }
            }
            other => other,
        }
    }

    /// Counts a failed authentication of `keys` here and in the database;
    /// whether one of them is now over the limit. A database that cannot
    /// count leaves this process's own count as the bound (logged).
    async fn count_failure(&self, keys: &[ThrottleKey], window: Window) -> bool {
        let throttle = &self.inner.throttle;
        let (shared, mut over) = throttle.fail_here(keys, window);
        for key in shared {
            let Some(stored_key) = key.stored() else {
                continue;
            };
            let counted = auth_failures::count(
                &self.inner.db,
                &stored_key,
                window.start(),
                window.previous_start(),
            )
            .await;
            match counted {
                Ok(n) if n > i64::from(throttle.max()) => {
                    throttle.mark_over(&key, window);
                    over = true;
                }
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "could not count a failed authentication in the database; this replica's own count applies");
                }
            }
        }
        if throttle.should_prune(window)
            && let Err(e) = auth_failures::prune(&self.inner.db, window.previous_start()).await
        {
            tracing::warn!(error = %e, "could not delete old failed-authentication counts");
        }
        over
    }

    /// The answer for a token found in this process's token cache (no
    /// database query), or `None` when it is not there.
    fn cached(&self, bearer: &str) -> Option<Result<Principal, RegistryError>> {
        if !bearer.starts_with(TOKEN_PREFIX) || bearer.len() > MAX_TEXT_LEN {
            return None;
        }
        // The floor this replica knows (no database check here: this path
        // serves a throttled key without a query).
        let (_, entry) = self
            .inner
            .auth
            .get(&token_hash(bearer), self.inner.fresh.auth_floor())?;
        Some(
            if entry.expires_at.is_some_and(|t| t <= chrono::Utc::now()) {
                Err(RegistryError::Unauthorized("the token has expired"))
            } else {
                Ok(entry.principal.clone())
            },
        )
    }

    async fn verify(&self, bearer: &str) -> Result<Principal, RegistryError> {
        let bearer = bearer.trim();
        if !bearer.starts_with(TOKEN_PREFIX) || bearer.len() > MAX_TEXT_LEN {
            return Err(RegistryError::Unauthorized(
                "the token is not a registry token",
            ));
        }
        let hash = token_hash(bearer);
        let now = chrono::Utc::now();
        self.ensure_fresh().await?;
        // Tagged with the newest generation known before the row is read:
        // a revocation after it raises the floor above the tag.
        let tag = self.inner.fresh.known();
        let floor = self.inner.fresh.auth_floor();
        if let Some((_, entry)) = self.inner.auth.get(&hash, floor) {
            if entry.expires_at.is_some_and(|t| t <= now) {
                return Err(RegistryError::Unauthorized("the token has expired"));
            }
            return Ok(entry.principal.clone());
        }
        let Some(row) = stored::by_hash(&self.inner.db, &hash).await? else {
            return Err(RegistryError::Unauthorized("unknown token"));
        };
        if !skilldeck::secret::secrets_equal(&row.hash, &hash) {
            return Err(RegistryError::Unauthorized("unknown token"));
        }
        if row.revoked_at.is_some() {
            return Err(RegistryError::Unauthorized("the token has been revoked"));
        }
        let expires_at = row.expires_at.as_deref().map(parse_time).transpose()?;
        if expires_at.is_some_and(|t| t <= now) {
            return Err(RegistryError::Unauthorized("the token has expired"));
        }
        let principal = Principal {
            token_id: row.id,
            name: row.name,
            scopes: parse_scopes(&row.scopes)?,
        };
        // Last use, at most once per cache TTL per replica (a cache hit
        // does not write). Best effort: a busy database does not refuse
        // a valid token.
        if let Err(e) = stored::set_last_used(
            &self.inner.db,
            &principal.token_id,
            &crate::storage::db::time_text(now),
        )
        .await
        {
            tracing::warn!(error = %e, token = %principal.token_id, "could not record a token's last use");
        }
        self.inner.auth.insert(
            hash,
            &Computed {
                tag,
                at: std::time::Instant::now(),
                value: Arc::new(AuthEntry {
                    principal: principal.clone(),
                    expires_at,
                }),
            },
            floor,
        );
        Ok(principal)
    }

    /// Whether the token behind `p` still works (not revoked, not
    /// expired): for a face that keeps a principal longer than one request
    /// (the web UI's sessions). Answers from the database at most once per
    /// token-cache TTL per token; a local revocation is seen at once.
    pub async fn still_valid(&self, p: &Principal) -> Result<(), RegistryError> {
        let result = self.check_still_valid(p).await;
        report_caller(match &result {
            Err(RegistryError::Unauthorized(_)) => PrincipalKind::Invalid,
            _ => p.kind(),
        });
        result
    }

    async fn check_still_valid(&self, p: &Principal) -> Result<(), RegistryError> {
        let key = format!("id:{}", p.token_id);
        let now = chrono::Utc::now();
        self.ensure_fresh().await?;
        let tag = self.inner.fresh.known();
        let floor = self.inner.fresh.auth_floor();
        if let Some((_, entry)) = self.inner.auth.get(&key, floor) {
            return if entry.expires_at.is_some_and(|t| t <= now) {
                Err(RegistryError::Unauthorized("the token has expired"))
            } else {
                Ok(())
            };
        }
        let Some((expires_at, revoked_at)) = stored::lifecycle(&self.inner.db, &p.token_id).await?
        else {
            return Err(RegistryError::Unauthorized("unknown token"));
        };
        if revoked_at.is_some() {
            return Err(RegistryError::Unauthorized("the token has been revoked"));
        }
        let expires_at = expires_at.as_deref().map(parse_time).transpose()?;
        if expires_at.is_some_and(|t| t <= now) {
            return Err(RegistryError::Unauthorized("the token has expired"));
        }
        self.inner.auth.insert(
            key,
            &Computed {
                tag,
                at: std::time::Instant::now(),
                value: Arc::new(AuthEntry {
                    principal: p.clone(),
                    expires_at,
                }),
            },
            floor,
        );
        Ok(())
    }

    /// Makes sure the admin token in `path` exists and is known: creates
    /// the file (mode 0600) with a fresh token when it is missing, and
    /// registers the token's hash. Returns the path (never the token).
    ///
    /// Safe when replicas start together on one shared file and one
    /// database: the file is created whole or not at all (a fresh token is
    /// written to a private temporary file beside it, synced, then linked
    /// into place only if nothing is there; a replica that loses that race
    /// reads the winner's file), and the token is registered in one write
    /// that finds it or inserts it (`ON CONFLICT DO NOTHING`), so every
    /// replica ends with the same token, registered once.
    pub async fn ensure_admin_token(&self, path: &Path) -> Result<PathBuf, RegistryError> {
        let file = path.to_path_buf();
        let token = tokio::task::spawn_blocking(move || read_or_create_token_file(&file))
            .await
            .map_err(|e| RegistryError::Internal(format!("admin token file task: {e}")))??;
        let hash = token_hash(&token);
        let system = Principal {
            token_id: "system".to_owned(),
            name: "registry".to_owned(),
            scopes: vec![Scope::Admin],
        };
        // One write (writes are serialised): find the token or insert it,
        // then retire the older file tokens.
        let mut w = self.begin_write().await?;
        let (id, created) = match stored::id_by_hash_in(&mut w, &hash).await? {
            Some((_, Some(_))) => {
                w.rollback().await?;
                return Err(RegistryError::Config(format!(
                    "{}: this admin token was revoked (a newer admin token file replaced it, or it was revoked through the API); \
                     put the current admin token in this file, or delete the file to have a fresh one made (which revokes the current one)",
                    path.display()
                )));
            }
            Some((id, None)) => (id, false),
            None => {
                let id = new_token_id()?;
                let inserted = stored::insert_unless_known(
                    &mut w,
                    &NewToken {
                        id: &id,
                        name: "admin-file",
                        hash: &hash,
                        scopes: &join_scopes(&[Scope::Admin]),
                        created_at: &now(),
                        source: SOURCE_ADMIN_FILE,
                        expires_at: None,
                    },
                )
                .await?;
                if inserted {
                    (id, true)
                } else {
                    // Registered by another replica since this write's
                    // lookup (a database without the write lock).
                    match stored::id_by_hash_in(&mut w, &hash).await? {
                        Some((id, None)) => (id, false),
                        _ => {
                            return Err(RegistryError::Internal(
                                "the admin token vanished while it was registered".to_owned(),
                            ));
                        }
                    }
                }
            }
        };
        // Rotation: the file's token replaces every earlier file-sourced
        // admin token. Replicas started together with one file all keep
        // the same one; a replica started with an older file refuses to
        // start (above) instead of bringing the old token back.
        let revoked = stored::revoke_source_except(&mut w, SOURCE_ADMIN_FILE, &id, &now()).await?;
        // One audit line per write (its id is the write's generation):
        // the registration, saying what it revoked, or the rotation.
        let changed = created || revoked > 0;
        if changed {
            let action = if created {
                "token.create"
            } else {
                "token.rotate"
            };
            Registry::audit_in(
                &mut w,
                &system,
                action,
                &format!("token:{id}"),
                serde_json::json!({"name": "admin-file", "scopes": "admin", "source": SOURCE_ADMIN_FILE, "revoked": revoked}),
            )
            .await?;
        }
        if changed {
            self.commit_scoped(w, &[CacheScope::Tokens]).await?;
        } else {
            w.rollback().await?;
        }
        Ok(path.to_path_buf())
    }

    async fn store_token(
        &self,
        by: &Principal,
        hash: String,
        name: String,
        scopes: &[Scope],
        source: &str,
        expires_at: Option<String>,
    ) -> Result<String, RegistryError> {
        let id = new_token_id()?;
        let mut w = self.begin_write().await?;
        stored::insert(
            &mut w,
            &NewToken {
                id: &id,
                name: &name,
                hash: &hash,
                scopes: &join_scopes(scopes),
                created_at: &now(),
                source,
                expires_at: expires_at.as_deref(),
            },
        )
        .await?;
        Registry::audit_in(
            &mut w,
            by,
            "token.create",
            &format!("token:{id}"),
            serde_json::json!({"name": name, "scopes": join_scopes(scopes), "source": source, "expires_at": expires_at}),
        )
        .await?;
        self.commit_scoped(w, &[CacheScope::Tokens]).await?;
        Ok(id)
    }

    async fn issue(
        &self,
        by: &Principal,
        name: String,
        scopes: Vec<Scope>,
        expires_in_seconds: Option<u64>,
    ) -> Result<TokenCreated, RegistryError> {
        RegistryError::check_text("the token name", &name)?;
        let expires_at = match expires_in_seconds {
            None => None,
            Some(0) => {
                return Err(RegistryError::bad_request(
                    "registry-invalid-expiry",
                    "expires_in_seconds must be at least 1",
                ));
            }
            Some(s) if s > MAX_TOKEN_LIFETIME_SECS => {
                return Err(RegistryError::bad_request(
                    "registry-invalid-expiry",
                    format!(
                        "expires_in_seconds must be at most {MAX_TOKEN_LIFETIME_SECS} (ten years)"
                    ),
                ));
            }
            Some(s) => {
                let secs = i64::try_from(s).map_err(|_| {
                    RegistryError::bad_request("registry-invalid-expiry", "expiry out of range")
                })?;
                Some(crate::storage::db::time_text(
                    chrono::Utc::now() + chrono::Duration::seconds(secs),
                ))
            }
        };
        let token = new_token()?;
        let id = self
            .store_token(
                by,
                token_hash(&token),
                name.clone(),
                &scopes,
                SOURCE_API,
                expires_at.clone(),
            )
            .await?;
        Ok(TokenCreated {
            token,
            id,
            name,
            scopes: scopes.iter().map(|s| s.to_string()).collect(),
            expires_at,
        })
    }

    /// The tokens, never their secrets or hashes: every token for an admin,
    /// the caller's own token otherwise. Ordered by id, paged.
    pub async fn list_tokens(
        &self,
        p: &Principal,
        cursor_text: Option<&str>,
        limit: Option<u32>,
    ) -> Result<Page<TokenInfo>, RegistryError> {
        let limits = &self.inner.limits;
        let limit = cursor::page_limit(limit, limits.default_page_limit, limits.max_page_limit)?;
        let after = cursor_text
            .map(cursor::decode)
            .transpose()?
            .unwrap_or_default();
        let rows = if p.is_admin() {
            stored::page(&self.inner.db, &after, i64::from(limit) + 1).await?
        } else {
            stored::one_after(&self.inner.db, &p.token_id, &after).await?
        };
        let mut items = rows
            .into_iter()
            .map(token_info)
            .collect::<Result<Vec<_>, _>>()?;
        let next_cursor = if items.len() > limit as usize {
            items.truncate(limit as usize);
            items.last().map(|t| cursor::encode(&t.id))
        } else {
            None
        };
        Ok(Page { items, next_cursor })
    }

    /// Revokes token `id` (an admin any token; any token itself). The
    /// token is kept, marked revoked; this process stops accepting it at
    /// once, other replicas within the token-cache TTL. Revoking a revoked
    /// token changes nothing and answers its record.
    pub async fn revoke_token(&self, p: &Principal, id: &str) -> Result<TokenInfo, RegistryError> {
        if !(p.is_admin() || p.token_id == id) {
            return Err(RegistryError::Forbidden(
                "only an admin token may revoke another token".to_owned(),
            ));
        }
        let mut w = self.begin_write().await?;
        let changed = stored::revoke_live(&mut w, id, &now()).await?;
        if changed {
            Registry::audit_in(
                &mut w,
                p,
                "token.revoke",
                &format!("token:{id}"),
                serde_json::json!({}),
            )
            .await?;
        }
        let Some(row) = stored::get_in(&mut w, id).await? else {
            return Err(RegistryError::NotFound(format!("token {id}")));
        };
        let info = token_info(row)?;
        if changed {
            self.commit_scoped(w, &[CacheScope::Tokens]).await?;
            // Its web UI sessions end on every replica at once.
            self.end_ui_sessions_of(id).await?;
        } else {
            w.rollback().await?;
        }
        Ok(info)
    }

    /// Revokes, inside the write `w`, every live token with a scope for agent `id`,
    /// matched on the parsed scope (not its text). Returns how many.
    pub(crate) async fn revoke_agent_tokens_in(
        w: &mut db::Write,
        id: &AgentId,
    ) -> Result<u64, RegistryError> {
        let at = now();
        let mut revoked = 0;
        for (token, scopes) in stored::live_scopes_in(w).await? {
            let hit = scopes
                .split_whitespace()
                .any(|text| matches!(Scope::parse(text), Ok(Scope::Agent(a)) if a == *id));
            if hit {
                stored::revoke_live(w, &token, &at).await?;
                revoked += 1;
            }
        }
        Ok(revoked)
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
        self.issue(p, name, scopes, request.expires_in_seconds)
            .await
    }

    /// A token scoped to agent `id` (admin only; the agent must exist).
    pub async fn agent_token(
        &self,
        p: &Principal,
        id: &AgentId,
        name: Option<String>,
        expires_in_seconds: Option<u64>,
    ) -> Result<TokenCreated, RegistryError> {
        p.require_admin()?;
        self.agent(p, id).await?;
        let name = name.unwrap_or_else(|| format!("agent-{id}"));
        self.issue(p, name, vec![Scope::Agent(id.clone())], expires_in_seconds)
            .await
    }
}
