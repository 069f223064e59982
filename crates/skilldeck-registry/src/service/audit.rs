//! The audit log: one line per change, written in the change's
//! transaction; read newest first (admin).

use crate::error::RegistryError;
use crate::service::cursor;
use crate::service::principal::Principal;
use crate::service::registry::Registry;
use crate::storage;
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
        let mut items = storage::audit::page(&self.inner.db, before, i64::from(limit) + 1).await?;
        let next_cursor = if items.len() > limit as usize {
            items.truncate(limit as usize);
            items.last().map(|e| cursor::encode(&e.id.to_string()))
        } else {
            None
        };
        Ok(Page { items, next_cursor })
    }

    /// Audit entries of `actor` and `action` (each: any when empty),
    /// newest first (admin); paged as [`Registry::audit`].
    pub async fn audit_filtered(
        &self,
        p: &Principal,
        actor: &str,
        action: &str,
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
        let mut items = storage::audit::page_filtered(
            &self.inner.db,
            before,
            actor.trim(),
            action.trim(),
            i64::from(limit) + 1,
        )
        .await?;
        let next_cursor = if items.len() > limit as usize {
            items.truncate(limit as usize);
            items.last().map(|e| cursor::encode(&e.id.to_string()))
        } else {
            None
        };
        Ok(Page { items, next_cursor })
    }

    /// The actions the audit log holds (admin), for a filter's choices.
    pub async fn audit_actions(&self, p: &Principal) -> Result<Vec<String>, RegistryError> {
        p.require_admin()?;
        storage::audit::actions(&self.inner.db, AUDIT_ACTIONS_LISTED).await
    }
}

/// Distinct actions [`Registry::audit_actions`] lists at most.
pub const AUDIT_ACTIONS_LISTED: i64 = 200;
