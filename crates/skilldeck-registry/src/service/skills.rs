//! Reading skills and versions (list, search, detail, archive, files),
//! moving labels, yanking and deprecating.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError};

use bytes::Bytes;

use crate::error::RegistryError;
use crate::names::{LATEST, Label, SkillRef};
use crate::service::cursor;
use crate::service::principal::Principal;
use crate::service::publish::{parse_version, recompute_latest};
use crate::service::registry::Registry;
use crate::service::state::SearchState;
use crate::service::store::{archive_key, file_key};
use crate::storage::db::now;
use crate::storage::versions::{MarkerKind, VersionRow};
use crate::storage::{labels, skills, versions};
use crate::wire::{
    FileEntry, LabelMoved, Page, ReviewState, SkillDetail, SkillSummary, VersionDetail,
};

/// A list or a search of skills.
#[derive(Debug, Clone, Default)]
pub struct SkillQuery {
    /// Free text, ranked by the core's BM25 over name and description.
    pub q: Option<String>,
    /// Only this namespace.
    pub namespace: Option<String>,
    /// The cursor a previous page gave.
    pub cursor: Option<String>,
    /// Page size.
    pub limit: Option<u32>,
}

/// Bytes of a blob with its digests.
#[derive(Debug, Clone)]
pub struct Blob {
    /// The bytes.
    pub bytes: Bytes,
    /// `sha256:<hex>` of the bytes.
    pub sha256: String,
    /// The version's content fingerprint.
    pub fingerprint: String,
}

/// Where a blob is and what it must hash to, found (and authorised)
/// before its bytes are read.
#[derive(Debug, Clone)]
pub struct BlobRef {
    /// Its key in the store.
    key: String,
    /// `sha256:<hex>` of the bytes.
    pub sha256: String,
    /// The version's content fingerprint.
    pub fingerprint: String,
}

/// A core `Skill` for a registry version (no folder on disk: the catalog
/// is rendered without locations, search reads no bodies).
pub(crate) fn virtual_skill(
    name: String,
    description: String,
    location: &str,
    host: skilldeck::HostFields,
) -> skilldeck::Skill {
    let dir = PathBuf::from(format!("/registry/{location}"));
    let root: Arc<Path> = Arc::from(dir.as_path());
    skilldeck::Skill {
        name,
        description,
        skill_md: dir.join("SKILL.md"),
        resolved_dir: None,
        scope: skilldeck::Scope::Extra,
        root,
        mode: skilldeck::SkillMode::default(),
        host,
    }
}

impl Registry {
    /// Skills by name, or ranked by the core's BM25 when `q` is given.
    pub async fn list_skills(
        &self,
        p: &Principal,
        query: &SkillQuery,
    ) -> Result<Page<SkillSummary>, RegistryError> {
        let limits = &self.inner.limits;
        let limit = cursor::page_limit(
            query.limit,
            limits.default_page_limit,
            limits.max_page_limit,
        )?;
        let namespace = listing_namespace(p, query.namespace.as_deref())?;
        if let Some(q) = query.q.as_deref().filter(|q| !q.trim().is_empty()) {
            return self
                .search(q, namespace.as_deref(), query.cursor.as_deref(), limit)
                .await;
        }
        let after = match &query.cursor {
            Some(c) => cursor::decode(c)?,
            None => String::new(),
        };
        let (after_ns, after_name) = after.split_once('/').unwrap_or(("", ""));
        let mut items = skills::page(
            &self.inner.db,
            &namespace.unwrap_or_default(),
            after_ns,
            after_name,
            i64::from(limit) + 1,
        )
        .await?;
        let next_cursor = if items.len() > limit as usize {
            items.truncate(limit as usize);
            items
                .last()
                .map(|s| cursor::encode(&format!("{}/{}", s.namespace, s.name)))
        } else {
            None
        };
        Ok(Page { items, next_cursor })
    }

    pub(crate) async fn search_state(&self) -> Result<Arc<SearchState>, RegistryError> {
        let generation = self.generation().await?;
        if let Some(s) = self
            .inner
            .search
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .filter(|s| s.generation == generation)
        {
            return Ok(Arc::clone(s));
        }
        let all = skills::all(&self.inner.db).await?;
        let mut skills = Vec::with_capacity(all.len());
        let mut summaries = HashMap::with_capacity(all.len());
        for s in all {
            let key = format!("{}/{}", s.namespace, s.name);
            skills.push(virtual_skill(
                key.clone(),
                s.description.clone(),
                &key,
                skilldeck::HostFields::default(),
            ));
            summaries.insert(key, s);
        }
        let state = Arc::new(SearchState {
            generation,
            index: skilldeck::SearchIndex::new(&skills),
            summaries,
        });
        *self
            .inner
            .search
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(Arc::clone(&state));
        Ok(state)
    }

    async fn search(
        &self,
        q: &str,
        namespace: Option<&str>,
        cursor_text: Option<&str>,
        limit: u32,
    ) -> Result<Page<SkillSummary>, RegistryError> {
        let offset: usize = match cursor_text {
            Some(c) => cursor::decode(c)?
                .strip_prefix("o:")
                .and_then(|n| n.parse().ok())
                .ok_or_else(|| {
                    RegistryError::bad_request(
                        "registry-bad-cursor",
                        "the cursor is not one this registry gave",
                    )
                })?,
            None => 0,
        };
        let state = self.search_state().await?;
        let mut query = skilldeck::SearchQuery::new(q).limit(state.summaries.len());
        if let Some(ns) = namespace {
            let re = regex_for_namespace(ns)?;
            query = query.name_pattern(re);
        }
        let hits = state.index.search(&query);
        let mut items = Vec::new();
        for hit in hits.iter().skip(offset).take(limit as usize) {
            if let Some(s) = state.summaries.get(&hit.name) {
                let mut s = s.clone();
                s.score = Some(hit.score);
                items.push(s);
            }
        }
        let next = offset + limit as usize;
        let next_cursor = (hits.len() > next).then(|| cursor::encode(&format!("o:{next}")));
        Ok(Page { items, next_cursor })
    }

    /// A skill with its labels and versions, newest first.
    pub async fn skill(
        &self,
        p: &Principal,
        skill: &SkillRef,
    ) -> Result<SkillDetail, RegistryError> {
        if !p.can_read_namespace(skill.namespace()) {
            // A skill outside the agent's set answers as a missing one.
            if self.agent_versions(p, skill).await?.is_empty() {
                return Err(RegistryError::NotFound(format!("skill {skill}")));
            }
            return Err(RegistryError::Forbidden(
                "agent tokens read the versions of their agent's set, not a skill's history"
                    .to_owned(),
            ));
        }
        let Some(created_at) = skills::created_at(&self.inner.db, skill).await? else {
            return Err(RegistryError::NotFound(format!("skill {skill}")));
        };
        let labels: BTreeMap<String, String> = labels::of_skill(&self.inner.db, skill).await?;
        let rows = versions::of_skill(&self.inner.db, skill).await?;
        let mut versions = Vec::with_capacity(rows.len());
        let mut description_by_version = HashMap::new();
        for (v, description) in rows {
            description_by_version.insert(v.version.clone(), description);
            versions.push(v);
        }
        versions.sort_by(|a, b| {
            let va = semver::Version::parse(&a.version).ok();
            let vb = semver::Version::parse(&b.version).ok();
            vb.cmp(&va)
        });
        let description = labels
            .get(LATEST)
            .and_then(|v| description_by_version.get(v))
            .or_else(|| {
                versions
                    .first()
                    .and_then(|v| description_by_version.get(&v.version))
            })
            .cloned()
            .unwrap_or_default();
        Ok(SkillDetail {
            namespace: skill.namespace().clone(),
            name: skill.name().to_owned(),
            description,
            labels,
            versions,
            created_at,
        })
    }

    /// The version `v` names: a semver version, or a label's target.
    pub(crate) async fn version_of(
        &self,
        skill: &SkillRef,
        v: &str,
    ) -> Result<String, RegistryError> {
        if let Ok(version) = semver::Version::parse(v) {
            return Ok(version.to_string());
        }
        let label = Label::new(v).map_err(|_| {
            RegistryError::bad_request(
                "registry-invalid-version",
                format!("'{v}' is neither a semver version nor a label"),
            )
        })?;
        labels::get(&self.inner.db, skill, label.as_str())
            .await?
            .ok_or_else(|| RegistryError::NotFound(format!("label {label} of {skill}")))
    }

    /// The versions of `skill` in the resolved sets of the agents `p`
    /// reads as (agent tokens).
    async fn agent_versions(
        &self,
        p: &Principal,
        skill: &SkillRef,
    ) -> Result<Vec<String>, RegistryError> {
        let mut versions = Vec::new();
        for agent in p.agents() {
            let resolved = self.resolved_cached(agent).await?;
            versions.extend(
                resolved
                    .resolved
                    .skills
                    .iter()
                    .filter(|s| s.namespace == *skill.namespace() && s.name == skill.name())
                    .map(|s| s.version.clone()),
            );
        }
        Ok(versions)
    }

    /// The version `v` names, for reading by `p`. Admin and publishers
    /// read every version, a `read:<ns>` token every version of `ns`; an
    /// agent token only the versions of its
    /// agent's resolved set, and anything else (another skill, another
    /// version, a label pointing elsewhere, or nothing at all) answers the
    /// one 404 a missing version gets, decided before any lookup that
    /// could tell them apart: an agent learns nothing about skills outside
    /// its set.
    async fn readable_version(
        &self,
        p: &Principal,
        skill: &SkillRef,
        v: &str,
    ) -> Result<String, RegistryError> {
        if p.can_read_namespace(skill.namespace()) {
            return self.version_of(skill, v).await;
        }
        let hidden = || RegistryError::NotFound(format!("version {skill}@{v}"));
        let visible = self.agent_versions(p, skill).await?;
        if visible.is_empty() {
            return Err(hidden());
        }
        let version = match self.version_of(skill, v).await {
            Ok(version) => version,
            Err(RegistryError::NotFound(_)) => return Err(hidden()),
            Err(e) => return Err(e),
        };
        if visible.contains(&version) {
            Ok(version)
        } else {
            Err(hidden())
        }
    }

    pub(crate) async fn version_row(
        &self,
        skill: &SkillRef,
        version: &str,
    ) -> Result<VersionRow, RegistryError> {
        versions::get(&self.inner.db, skill, version)
            .await?
            .ok_or_else(|| RegistryError::NotFound(format!("version {skill}@{version}")))
    }

    pub(crate) async fn files_of(
        &self,
        skill: &SkillRef,
        version: &str,
    ) -> Result<Vec<FileEntry>, RegistryError> {
        versions::files(&self.inner.db, skill, version).await
    }

    pub(crate) async fn version_detail(
        &self,
        skill: &SkillRef,
        version: &str,
    ) -> Result<VersionDetail, RegistryError> {
        let r = self.version_row(skill, version).await?;
        let audit = r.audit()?;
        let report = r.report()?;
        let environments = r.environments()?;
        let files = self.files_of(skill, version).await?;
        let labels = labels::pointing_to(&self.inner.db, skill, version).await?;
        Ok(VersionDetail {
            namespace: skill.namespace().clone(),
            name: skill.name().to_owned(),
            frontmatter: r.frontmatter()?,
            report: report.diagnostics,
            report_mode: report.mode,
            version: r.version,
            fingerprint: r.fingerprint,
            size: r.size,
            files,
            capabilities: r.capabilities,
            published_by: r.published_by,
            published_at: r.published_at,
            labels,
            yanked: r.yanked,
            deprecated: r.deprecated,
            blocked: r.blocked,
            review: r.review,
            reviewed: r.reviewed,
            audit,
            signer: r.signer,
            signature: r.signature,
            environments,
        })
    }

    /// One version's manifest; `v` may be a label.
    pub async fn version(
        &self,
        p: &Principal,
        skill: &SkillRef,
        v: &str,
    ) -> Result<VersionDetail, RegistryError> {
        let version = self.readable_version(p, skill, v).await?;
        self.version_detail(skill, &version).await
    }

    /// The SKILL.md text of a version (for the web UI).
    pub async fn skill_md(
        &self,
        p: &Principal,
        skill: &SkillRef,
        v: &str,
    ) -> Result<String, RegistryError> {
        let version = self.readable_version(p, skill, v).await?;
        Ok(self.version_row(skill, &version).await?.skill_md)
    }

    /// Where a version's canonical archive is, after the read check: its
    /// digest answers `If-None-Match` before any byte is fetched.
    pub async fn archive_ref(
        &self,
        p: &Principal,
        skill: &SkillRef,
        v: &str,
    ) -> Result<BlobRef, RegistryError> {
        let version = self.readable_version(p, skill, v).await?;
        let r = self.version_row(skill, &version).await?;
        Ok(BlobRef {
            key: archive_key(&r.archive_sha256)?,
            sha256: r.archive_sha256,
            fingerprint: r.fingerprint,
        })
    }

    /// A version's canonical archive (tar.gz), checked against its digest.
    pub async fn archive(
        &self,
        p: &Principal,
        skill: &SkillRef,
        v: &str,
    ) -> Result<Blob, RegistryError> {
        let r = self.archive_ref(p, skill, v).await?;
        self.fetch(r).await
    }

    /// Where one file of a version is, after the path and read checks.
    pub async fn file_ref(
        &self,
        p: &Principal,
        skill: &SkillRef,
        v: &str,
        path: &str,
    ) -> Result<BlobRef, RegistryError> {
        skilldeck_package::check_entry_path(path.as_bytes()).map_err(|why| {
            RegistryError::bad_request("registry-invalid-path", format!("path '{path}': {why}"))
        })?;
        let version = self.readable_version(p, skill, v).await?;
        let (digest, fingerprint) = versions::file_digest(&self.inner.db, skill, &version, path)
            .await?
            .ok_or_else(|| RegistryError::NotFound(format!("file {path} of {skill}@{version}")))?;
        Ok(BlobRef {
            key: file_key(&digest)?,
            sha256: digest,
            fingerprint,
        })
    }

    /// One file of a version, checked against its digest.
    pub async fn file(
        &self,
        p: &Principal,
        skill: &SkillRef,
        v: &str,
        path: &str,
    ) -> Result<Blob, RegistryError> {
        let r = self.file_ref(p, skill, v, path).await?;
        self.fetch(r).await
    }

    /// The bytes a [`BlobRef`] names, from the store, checked against its
    /// digest (a missing or corrupt blob is an error, never empty bytes).
    pub async fn fetch(&self, r: BlobRef) -> Result<Blob, RegistryError> {
        let bytes = self.inner.store.get_verified(&r.key, &r.sha256).await?;
        Ok(Blob {
            bytes,
            sha256: r.sha256,
            fingerprint: r.fingerprint,
        })
    }

    /// Moves `label` to `version` (admin; `latest` is managed).
    pub async fn move_label(
        &self,
        p: &Principal,
        skill: &SkillRef,
        label: &Label,
        version: &str,
        override_reason: Option<&str>,
    ) -> Result<LabelMoved, RegistryError> {
        p.require_admin()?;
        let override_reason = override_reason.map(str::trim).filter(|r| !r.is_empty());
        if let Some(r) = override_reason {
            RegistryError::check_text("the override reason", r)?;
        }
        if label.as_str() == LATEST {
            return Err(RegistryError::bad_request(
                "registry-label-managed",
                "'latest' is moved by publish and yank, not by hand",
            ));
        }
        let version = parse_version(version)?.to_string();
        let row = self.version_row(skill, &version).await?;
        if row.yanked.is_some() {
            return Err(RegistryError::conflict(
                "registry-version-yanked",
                format!("{skill}@{version} is yanked; a label cannot point to it"),
            ));
        }
        if row.blocked.is_some() || row.review != ReviewState::Released {
            let why = if row.blocked.is_some() {
                "blocked"
            } else {
                row.review.as_str()
            };
            return Err(RegistryError::conflict(
                "registry-version-unreleased",
                format!("{skill}@{version} is {why}; a label points only to a released version"),
            ));
        }
        let overridden =
            self.check_protected_label(skill, label, &version, &row, override_reason)?;
        let mut w = self.begin_write().await?;
        let previous = labels::get_in(&mut w, skill, label.as_str()).await?;
        labels::set(&mut w, skill, label.as_str(), &version, &now()).await?;
        Registry::audit_in(
            &mut w,
            p,
            "label",
            &format!("{skill}:{label}"),
            serde_json::json!({
                "version": version, "previous": previous, "override_reason": overridden,
            }),
        )
        .await?;
        self.commit_scoped(w, &[crate::service::fresh::Scope::Skills])
            .await?;
        Ok(LabelMoved {
            label: label.clone(),
            version,
            previous,
        })
    }

    /// A protected label ([`TrustPolicy::protected_labels`]) points only
    /// to a version the risk audit rated below
    /// [`TrustPolicy::protected_label_refuse_at`], unless the admin gives a
    /// reason (returned, for the audit log). A version published before
    /// the audit existed counts as unrated: it needs the reason too.
    ///
    /// [`TrustPolicy::protected_labels`]: crate::TrustPolicy::protected_labels
    /// [`TrustPolicy::protected_label_refuse_at`]: crate::TrustPolicy::protected_label_refuse_at
    fn check_protected_label<'r>(
        &self,
        skill: &SkillRef,
        label: &Label,
        version: &str,
        row: &VersionRow,
        override_reason: Option<&'r str>,
    ) -> Result<Option<&'r str>, RegistryError> {
        let trust = &self.inner.trust;
        if !trust.protected_labels.iter().any(|l| l == label.as_str()) {
            return Ok(None);
        }
        let threshold = trust.protected_label_refuse_at;
        let refused = match row.audit_verdict.as_deref() {
            None => Some("not audited".to_owned()),
            Some(verdict) => skilldeck_audit::Severity::parse(verdict)
                .filter(|s| *s >= threshold)
                .map(|s| format!("rated {}", s.as_str())),
        };
        let Some(why) = refused else {
            return Ok(None);
        };
        match override_reason {
            Some(reason) => Ok(Some(reason)),
            None => Err(RegistryError::conflict(
                "registry-label-protected",
                format!(
                    "'{label}' is a protected label and {skill}@{version} is {why} by the risk \
                     audit (protected labels take versions below {}); read its findings, and \
                     if it is safe move the label with an \"override_reason\" (recorded in \
                     the audit log)",
                    threshold.as_str()
                ),
            )),
        }
    }

    /// Yanks a version (`Some(reason)`) or undoes it (`None`); `latest`
    /// follows.
    pub async fn set_yanked(
        &self,
        p: &Principal,
        skill: &SkillRef,
        v: &str,
        reason: Option<String>,
    ) -> Result<VersionDetail, RegistryError> {
        self.set_marker(p, skill, v, reason, MarkerKind::Yanked)
            .await
    }

    /// Deprecates a version (`Some(reason)`) or undoes it (`None`).
    pub async fn set_deprecated(
        &self,
        p: &Principal,
        skill: &SkillRef,
        v: &str,
        reason: Option<String>,
    ) -> Result<VersionDetail, RegistryError> {
        self.set_marker(p, skill, v, reason, MarkerKind::Deprecated)
            .await
    }

    pub(crate) async fn set_marker(
        &self,
        p: &Principal,
        skill: &SkillRef,
        v: &str,
        reason: Option<String>,
        kind: MarkerKind,
    ) -> Result<VersionDetail, RegistryError> {
        p.require_admin()?;
        if let Some(r) = &reason {
            RegistryError::check_text("the reason", r)?;
        }
        let version = self.version_of(skill, v).await?;
        self.version_row(skill, &version).await?;
        let at = reason.as_ref().map(|_| now());
        // Yanks and blocks change which versions an agent may have.
        let moves_latest = matches!(kind, MarkerKind::Yanked | MarkerKind::Blocked);
        let mut w = self.begin_write().await?;
        versions::set_marker(
            &mut w,
            skill,
            &version,
            kind,
            reason.as_deref(),
            at.as_deref(),
        )
        .await?;
        let latest = if moves_latest {
            recompute_latest(&mut w, skill).await?
        } else {
            None
        };
        let action = match (kind, reason.is_some()) {
            (MarkerKind::Yanked, true) => "yank",
            (MarkerKind::Yanked, false) => "unyank",
            (MarkerKind::Deprecated, true) => "deprecate",
            (MarkerKind::Deprecated, false) => "undeprecate",
            (MarkerKind::Blocked, true) => "block",
            (MarkerKind::Blocked, false) => "unblock",
        };
        Registry::audit_in(
            &mut w,
            p,
            action,
            &format!("{skill}@{version}"),
            serde_json::json!({"reason": reason, "latest": latest}),
        )
        .await?;
        self.commit_scoped(w, &[crate::service::fresh::Scope::Skills])
            .await?;
        self.version_detail(skill, &version).await
    }
}

/// The name filter of a namespace in the search index (names there are
/// `namespace/name`).
pub(crate) fn regex_for_namespace(ns: &str) -> Result<regex::Regex, RegistryError> {
    regex::Regex::new(&format!("^{}/", regex::escape(ns)))
        .map_err(|e| RegistryError::Internal(format!("namespace filter: {e}")))
}

/// The namespace a list by `p` covers: the one `asked` (when `p` reads
/// it), every namespace (`None`) for a token that reads them all, the one
/// namespace a `read:<ns>` token reads; refused for an agent token (its
/// agent's set is its catalog) and for a token reading several namespaces
/// that did not say which.
pub(crate) fn listing_namespace(
    p: &Principal,
    asked: Option<&str>,
) -> Result<Option<String>, RegistryError> {
    let asked = asked
        .filter(|n| !n.is_empty())
        .map(crate::names::Namespace::new)
        .transpose()?;
    if p.can_read_all() {
        return Ok(asked.map(|n| n.to_string()));
    }
    let readable = p.read_namespaces();
    let ns = match (&asked, readable.as_slice()) {
        (_, []) => {
            return Err(RegistryError::Forbidden(
                "agent tokens read only their agent's skills".to_owned(),
            ));
        }
        (Some(ns), _) if p.can_read_namespace(ns) => ns.clone(),
        (None, [one]) => (*one).clone(),
        _ => {
            let names: Vec<String> = readable.iter().map(|n| n.to_string()).collect();
            return Err(RegistryError::Forbidden(format!(
                "this token reads only the namespace{} {}; ask for one of them with ?namespace=",
                if names.len() == 1 { "" } else { "s" },
                names.join(", ")
            )));
        }
    };
    Ok(Some(ns.to_string()))
}
