//! The audit log: one line per change, written in the change's
//! transaction; read newest first (admin).

use sqlx::Row;

use crate::service::cursor;
use crate::service::error::RegistryError;
use crate::service::principal::Principal;
use crate::service::registry::Registry;
use crate::wire::{AuditEntry, Page};

impl Registry {
    /// Audit entries, newest first (admin).
    pub async fn audit(
        &self,
        p: &Principal,
        cursor_text: Option<&str>,
        limit: Option<u32>,
    ) -> Result<Page<AuditEntry>, RegistryError> {
        p.require_admin()?;
        let limits = &self.inner.limits;
        let limit = cursor::page_limit(limit, limits.default_page_limit, limits.max_page_limit)?;
        let before: i64 = match cursor_text {
            Some(c) => cursor::decode(c)?.parse().map_err(|_| {
                RegistryError::bad_request(
                    "registry-bad-cursor",
                    "the cursor is not one this registry gave",
                )
            })?,
            None => i64::MAX,
        };
        let rows = sqlx::query(
            "SELECT id, at, actor, action, target, detail FROM audit WHERE id < $1 ORDER BY id DESC LIMIT $2",
        )
        .bind(before)
        .bind(i64::from(limit) + 1)
        .fetch_all(&self.inner.db)
        .await?;
        let mut items = rows
            .iter()
            .map(|r| {
                let detail: String = r.try_get("detail")?;
                Ok(AuditEntry {
                    id: r.try_get("id")?,
                    at: r.try_get("at")?,
                    actor: r.try_get("actor")?,
                    action: r.try_get("action")?,
                    target: r.try_get("target")?,
                    detail: serde_json::from_str(&detail)?,
                })
            })
            .collect::<Result<Vec<_>, RegistryError>>()?;
        let next_cursor = if items.len() > limit as usize {
            items.truncate(limit as usize);
            items.last().map(|e| cursor::encode(&e.id.to_string()))
        } else {
            None
        };
        Ok(Page { items, next_cursor })
    }
}
