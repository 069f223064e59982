//! Collection of unreferenced blobs. A blob is deleted only when no
//! version references it and it is older than the grace period, so the
//! blobs of a publish in flight (written before its transaction) survive.

use std::collections::HashSet;
use std::time::Duration;

use crate::error::RegistryError;
use crate::service::registry::Registry;
use crate::service::store::{ARCHIVES_PREFIX, FILES_PREFIX};
use crate::storage::versions;

/// What a collection did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct GcReport {
    /// Blobs looked at.
    pub scanned: usize,
    /// Blobs still referenced.
    pub referenced: usize,
    /// Unreferenced but younger than the grace period.
    pub young: usize,
    /// Deleted.
    pub deleted: usize,
    /// Bytes deleted.
    pub deleted_bytes: u64,
}

impl Registry {
    /// Deletes blobs no version references that are older than
    /// `older_than`.
    pub async fn gc(&self, older_than: Duration) -> Result<GcReport, RegistryError> {
        let cutoff = chrono::Utc::now()
            - chrono::Duration::from_std(older_than)
                .map_err(|e| RegistryError::Config(format!("grace period: {e}")))?;
        // Listed before the references are read: a blob written after the
        // listing is not looked at; one written before is either
        // referenced by now or young.
        let mut listed = self.inner.store.list(FILES_PREFIX).await?;
        listed.extend(self.inner.store.list(ARCHIVES_PREFIX).await?);
        let mut referenced: HashSet<String> = HashSet::new();
        for d in versions::file_digests(&self.inner.db).await? {
            referenced.insert(crate::service::store::file_key(&d)?);
        }
        for d in versions::archive_digests(&self.inner.db).await? {
            referenced.insert(crate::service::store::archive_key(&d)?);
        }
        let mut report = GcReport::default();
        for meta in listed {
            report.scanned += 1;
            let key = meta.location.to_string();
            if referenced.contains(&key) {
                report.referenced += 1;
            } else if meta.last_modified > cutoff {
                report.young += 1;
            } else {
                self.inner.store.delete(&key).await?;
                report.deleted += 1;
                report.deleted_bytes += meta.size;
            }
        }
        Ok(report)
    }
}
