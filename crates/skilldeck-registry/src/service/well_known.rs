//! The anonymous agentskills.io well-known index
//! (`GET /.well-known/agent-skills/index.json`) and its archives: what the
//! registry may show without a token, by [`WellKnownPolicy`] (off unless
//! the operator names namespaces: every other route needs a token).
//!
//! - **What is listed**: per listed namespace (in the policy's order), the
//!   version `latest` points to, when it is released and neither yanked
//!   nor blocked; a name an earlier namespace already listed is left out
//!   (the index's names are unique). Entries come from
//!   [`skilldeck_package::discovery::DiscoveryEntry`] (the one rule):
//!   `archive`, a relative `url`
//!   (`NS/NAME/VERSION/archive.tar.gz`), the digest of the archive served
//!   there, the version.
//! - **The archive** has the spec's layout (files at the root); it is
//!   rebuilt on download from the stored canonical archive
//!   ([`skilldeck_package::discovery::reroot_archive`], deterministic) and
//!   checked against the digest recorded at publish before it is served.
//!   Versions published before the digest was recorded get it the first
//!   time the index lists them.
//! - **Scale**: one keyset-paged query per page of [`MAX_PAGE_LIMIT`]
//!   skills per namespace (no query per skill); the body is cached like
//!   catalogs, tagged with the generation it was built from and dropped
//!   by any write to skills ([`crate::service::fresh`]), with a strong
//!   `ETag` for `304`s.

use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use skilldeck_package::discovery::{
    ARCHIVE_CONTENT_TYPE, DiscoveryEntry, DiscoveryIndex, INDEX_CONTENT_TYPE,
};

use crate::error::RegistryError;
use crate::names::{Namespace, SkillRef};
use crate::service::cache::Computed;
use crate::service::config::{MAX_PAGE_LIMIT, WellKnownPolicy};
use crate::service::registry::Registry;
use crate::service::resolve::etag_of;
use crate::service::state::Rendered;
use crate::service::store::{archive_key, digest_of};
use crate::storage::versions::{self, IndexedVersion};

/// The file name of every archive under its version's path.
pub const ARCHIVE_FILE: &str = "archive.tar.gz";

/// The index's relative URL of a version's archive.
fn archive_url(ns: &str, name: &str, version: &str) -> String {
    let e = skilldeck::text::percent::encode_component;
    format!("{}/{}/{}/{ARCHIVE_FILE}", e(ns), e(name), e(version))
}

impl Registry {
    /// Sets what the anonymous index lists (once, before serving).
    pub fn set_well_known(&self, policy: WellKnownPolicy) -> Result<(), RegistryError> {
        self.inner
            .well_known
            .set(policy)
            .map_err(|_| RegistryError::Internal("the well-known policy is already set".into()))
    }

    fn well_known_policy(&self) -> WellKnownPolicy {
        self.inner.well_known.get().cloned().unwrap_or_default()
    }

    /// The index archive of a canonical archive, on a blocking thread.
    async fn reroot(&self, row: &IndexedVersion) -> Result<Bytes, RegistryError> {
        let canonical = self
            .inner
            .store
            .get_verified(&archive_key(&row.archive_sha256)?, &row.archive_sha256)
            .await?;
        let limits = self.inner.limits.package;
        let shown = format!("{}@{}", row.name, row.version);
        tokio::task::spawn_blocking(move || {
            skilldeck_package::discovery::reroot_archive(
                &canonical,
                std::path::Path::new(&shown),
                &limits,
            )
        })
        .await
        .map_err(|e| RegistryError::Internal(format!("index archive task: {e}")))?
        .map(Bytes::from)
        .map_err(|e| RegistryError::Internal(format!("rebuilding the index archive: {e}")))
    }

    /// The index archive digest of `row`, recorded now when it was not.
    async fn root_digest(
        &self,
        ns: &Namespace,
        row: &IndexedVersion,
    ) -> Result<String, RegistryError> {
        if let Some(d) = &row.root_archive_sha256 {
            return Ok(d.clone());
        }
        let bytes = self.reroot(row).await?;
        let digest = skilldeck::sha256_digest(&bytes);
        let skill = SkillRef::new(ns.as_str(), &row.name)?;
        versions::set_root_archive(&self.inner.db, &skill, &row.version, &digest).await?;
        Ok(digest)
    }

    async fn build_well_known(
        &self,
        policy: &WellKnownPolicy,
    ) -> Result<DiscoveryIndex, RegistryError> {
        let namespaces: Vec<Namespace> = match policy {
            WellKnownPolicy::Off => Vec::new(),
            WellKnownPolicy::Namespaces(list) => list.clone(),
            WellKnownPolicy::All => versions::namespaces(&self.inner.db)
                .await?
                .iter()
                .map(|n| Namespace::new(n).map_err(RegistryError::from))
                .collect::<Result<_, _>>()?,
        };
        let mut seen = std::collections::HashSet::new();
        let mut entries = Vec::new();
        let page = i64::from(MAX_PAGE_LIMIT);
        for ns in &namespaces {
            let mut after = String::new();
            loop {
                let rows =
                    versions::indexed_page(&self.inner.db, ns.as_str(), &after, page).await?;
                for row in &rows {
                    if !seen.insert(row.name.clone()) {
                        tracing::debug!(namespace = %ns, name = %row.name, "left out of the well-known index: an earlier namespace lists the name");
                        continue;
                    }
                    let digest = digest_of(&self.root_digest(ns, row).await?)?;
                    entries.push(DiscoveryEntry::archive_with_digest(
                        &row.name,
                        &row.description,
                        Some(&row.version),
                        archive_url(ns.as_str(), &row.name, &row.version),
                        digest,
                    ));
                }
                match rows.last() {
                    Some(last) if rows.len() as i64 == page => after = last.name.clone(),
                    _ => break,
                }
            }
        }
        Ok(DiscoveryIndex::new(entries))
    }

    /// The anonymous index (cached; see the module text); `NotFound` when
    /// the policy is off.
    pub async fn well_known_index(&self) -> Result<Rendered, RegistryError> {
        let policy = self.well_known_policy();
        if policy == WellKnownPolicy::Off {
            return Err(RegistryError::NotFound(
                "the well-known skills index (this registry publishes none: [registry.well-known] namespaces)".to_owned(),
            ));
        }
        self.ensure_fresh().await?;
        let fresh = &self.inner.fresh;
        let served = fresh.served();
        let floor = fresh.skills_floor();
        let (tag, rendered) = self
            .inner
            .well_known_index
            .get_or_compute("index", floor, || async {
                let tag = self.generation().await?;
                let at = Instant::now();
                let body = Bytes::from(self.build_well_known(&policy).await?.to_json());
                Ok(Computed {
                    tag,
                    at,
                    value: Arc::new(Rendered {
                        etag: etag_of(&body),
                        body,
                        content_type: INDEX_CONTENT_TYPE,
                        generation: tag,
                    }),
                })
            })
            .await?;
        let mut rendered = (*rendered).clone();
        rendered.generation = tag.max(served);
        Ok(rendered)
    }

    /// The digest (as an `ETag`) of a listed version's index archive, and
    /// a way to its bytes: `NotFound` unless the namespace is listed and
    /// the version is live.
    pub async fn well_known_archive_etag(
        &self,
        skill: &SkillRef,
        version: &str,
    ) -> Result<(String, WellKnownArchive), RegistryError> {
        let missing = || RegistryError::NotFound(format!("{skill}@{version}"));
        if !self.well_known_policy().lists(skill.namespace()) {
            return Err(missing());
        }
        let row = versions::indexed_one(&self.inner.db, skill, version)
            .await?
            .ok_or_else(missing)?;
        let digest = self.root_digest(skill.namespace(), &row).await?;
        let etag = digest_of(&digest)?.etag();
        Ok((etag, WellKnownArchive { row, digest }))
    }

    /// The bytes of an archive [`Registry::well_known_archive_etag`]
    /// found, rebuilt and checked against its recorded digest.
    pub async fn well_known_archive(&self, a: WellKnownArchive) -> Result<Bytes, RegistryError> {
        let bytes = self.reroot(&a.row).await?;
        let got = skilldeck::sha256_digest(&bytes);
        if got != a.digest {
            return Err(RegistryError::Internal(format!(
                "the index archive of {}@{} rebuilt as {got}, not the recorded {}",
                a.row.name, a.row.version, a.digest
            )));
        }
        Ok(bytes)
    }
}

/// A listed version's archive, found and not yet read.
#[derive(Debug)]
pub struct WellKnownArchive {
    row: IndexedVersion,
    digest: String,
}

/// The archive's media type.
pub const fn archive_content_type() -> &'static str {
    ARCHIVE_CONTENT_TYPE
}
