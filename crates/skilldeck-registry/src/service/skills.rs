//! Reading skills and versions (list, search, detail, archive, files),
//! moving labels, yanking and deprecating.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError};

use bytes::Bytes;
use sqlx::Row;
use sqlx::any::AnyRow;

use crate::names::{LATEST, Label, SkillRef};
use crate::service::cursor;
use crate::service::error::RegistryError;
use crate::service::principal::Principal;
use crate::service::publish::{parse_version, recompute_latest};
use crate::service::registry::{Registry, now};
use crate::service::state::SearchState;
use crate::service::store::{archive_key, file_key};
use crate::wire::{
    FileEntry, LabelMoved, Marker, Page, SkillDetail, SkillSummary, VersionDetail, VersionSummary,
    WireDiagnostic,
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

const SUMMARY_SQL: &str = "SELECT s.namespace, s.name, s.updated_at, l.version AS latest, v.description, \
     (SELECT COUNT(*) FROM versions c WHERE c.namespace = s.namespace AND c.name = s.name) AS n \
     FROM skills s \
     LEFT JOIN labels l ON l.namespace = s.namespace AND l.name = s.name AND l.label = 'latest' \
     LEFT JOIN versions v ON v.namespace = l.namespace AND v.name = l.name AND v.version = l.version";

fn summary_of(row: &AnyRow) -> Result<SkillSummary, RegistryError> {
    let ns: String = row.try_get("namespace")?;
    let n: i64 = row.try_get("n")?;
    Ok(SkillSummary {
        namespace: crate::names::Namespace::new(&ns)
            .map_err(|e| RegistryError::Internal(e.to_string()))?,
        name: row.try_get("name")?,
        description: row
            .try_get::<Option<String>, _>("description")?
            .unwrap_or_default(),
        latest: row.try_get("latest")?,
        versions: u32::try_from(n).unwrap_or(u32::MAX),
        updated_at: row.try_get("updated_at")?,
        score: None,
    })
}

fn marker(reason: Option<String>, at: Option<String>) -> Option<Marker> {
    match (reason, at) {
        (Some(reason), Some(at)) => Some(Marker { reason, at }),
        _ => None,
    }
}

fn ns_name(skill: &SkillRef) -> (String, String) {
    (
        skill.namespace().as_str().to_owned(),
        skill.name().to_owned(),
    )
}

impl Registry {
    /// Skills by name, or ranked by the core's BM25 when `q` is given.
    pub async fn list_skills(
        &self,
        p: &Principal,
        query: &SkillQuery,
    ) -> Result<Page<SkillSummary>, RegistryError> {
        if !p.can_read_all() {
            return Err(RegistryError::Forbidden(
                "agent tokens read only their agent's skills".to_owned(),
            ));
        }
        let limits = &self.inner.limits;
        let limit = cursor::page_limit(
            query.limit,
            limits.default_page_limit,
            limits.max_page_limit,
        )?;
        let namespace = query.namespace.clone().filter(|n| !n.is_empty());
        if let Some(ns) = &namespace {
            crate::names::Namespace::new(ns)?;
        }
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
        let sql = const_format_list();
        let rows = sqlx::query(sql)
            .bind(namespace.unwrap_or_default())
            .bind(after_ns.to_owned())
            .bind(after_name.to_owned())
            .bind(i64::from(limit) + 1)
            .fetch_all(&self.inner.db)
            .await?;
        let mut items = rows.iter().map(summary_of).collect::<Result<Vec<_>, _>>()?;
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

    async fn search_state(&self) -> Result<Arc<SearchState>, RegistryError> {
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
        let rows = sqlx::query(SUMMARY_SQL).fetch_all(&self.inner.db).await?;
        let mut skills = Vec::with_capacity(rows.len());
        let mut summaries = HashMap::with_capacity(rows.len());
        for row in &rows {
            let s = summary_of(row)?;
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
        if !p.can_read_all() {
            // A skill outside the agent's set answers as a missing one.
            if self.agent_versions(p, skill).await?.is_empty() {
                return Err(RegistryError::NotFound(format!("skill {skill}")));
            }
            return Err(RegistryError::Forbidden(
                "agent tokens read the versions of their agent's set, not a skill's history"
                    .to_owned(),
            ));
        }
        let (ns, name) = ns_name(skill);
        let created: Option<String> =
            sqlx::query_scalar("SELECT created_at FROM skills WHERE namespace = $1 AND name = $2")
                .bind(ns.clone())
                .bind(name.clone())
                .fetch_optional(&self.inner.db)
                .await?;
        let Some(created_at) = created else {
            return Err(RegistryError::NotFound(format!("skill {skill}")));
        };
        let labels: BTreeMap<String, String> =
            sqlx::query("SELECT label, version FROM labels WHERE namespace = $1 AND name = $2")
                .bind(ns.clone())
                .bind(name.clone())
                .fetch_all(&self.inner.db)
                .await?
                .iter()
                .map(|r| Ok((r.try_get("label")?, r.try_get("version")?)))
                .collect::<Result<_, sqlx::Error>>()?;
        let rows = sqlx::query(
            "SELECT version, fingerprint, size, description, published_by, published_at, yanked_reason, yanked_at, \
             deprecated_reason, deprecated_at FROM versions WHERE namespace = $1 AND name = $2",
        )
        .bind(ns.clone())
        .bind(name.clone())
        .fetch_all(&self.inner.db)
        .await?;
        let mut versions = Vec::with_capacity(rows.len());
        let mut description_by_version = HashMap::new();
        for r in &rows {
            let version: String = r.try_get("version")?;
            let size: i64 = r.try_get("size")?;
            description_by_version.insert(version.clone(), r.try_get::<String, _>("description")?);
            versions.push(VersionSummary {
                version,
                fingerprint: r.try_get("fingerprint")?,
                size: u64::try_from(size).unwrap_or(0),
                published_by: r.try_get("published_by")?,
                published_at: r.try_get("published_at")?,
                yanked: marker(r.try_get("yanked_reason")?, r.try_get("yanked_at")?),
                deprecated: marker(r.try_get("deprecated_reason")?, r.try_get("deprecated_at")?),
            });
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
        let (ns, name) = ns_name(skill);
        sqlx::query_scalar(
            "SELECT version FROM labels WHERE namespace = $1 AND name = $2 AND label = $3",
        )
        .bind(ns)
        .bind(name)
        .bind(label.as_str().to_owned())
        .fetch_optional(&self.inner.db)
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
    /// read every version; an agent token only the versions of its
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
        if p.can_read_all() {
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

    async fn version_row(&self, skill: &SkillRef, version: &str) -> Result<AnyRow, RegistryError> {
        let (ns, name) = ns_name(skill);
        sqlx::query(
            "SELECT version, fingerprint, archive_sha256, size, frontmatter, capabilities, report, skill_md, \
             published_by, published_at, yanked_reason, yanked_at, deprecated_reason, deprecated_at \
             FROM versions WHERE namespace = $1 AND name = $2 AND version = $3",
        )
        .bind(ns)
        .bind(name)
        .bind(version.to_owned())
        .fetch_optional(&self.inner.db)
        .await?
        .ok_or_else(|| RegistryError::NotFound(format!("version {skill}@{version}")))
    }

    pub(crate) async fn files_of(
        &self,
        skill: &SkillRef,
        version: &str,
    ) -> Result<Vec<FileEntry>, RegistryError> {
        let (ns, name) = ns_name(skill);
        let rows = sqlx::query(
            "SELECT path, size, sha256, executable FROM version_files \
             WHERE namespace = $1 AND name = $2 AND version = $3 ORDER BY path",
        )
        .bind(ns)
        .bind(name)
        .bind(version.to_owned())
        .fetch_all(&self.inner.db)
        .await?;
        let mut files = rows
            .iter()
            .map(|r| {
                let size: i64 = r.try_get("size")?;
                let exec: i64 = r.try_get("executable")?;
                Ok(FileEntry {
                    path: r.try_get("path")?,
                    size: u64::try_from(size).unwrap_or(0),
                    sha256: r.try_get("sha256")?,
                    executable: exec != 0,
                })
            })
            .collect::<Result<Vec<_>, sqlx::Error>>()?;
        // Byte order of the path, as the manifest and fingerprint use.
        files.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
        Ok(files)
    }

    async fn version_detail(
        &self,
        skill: &SkillRef,
        version: &str,
    ) -> Result<VersionDetail, RegistryError> {
        let r = self.version_row(skill, version).await?;
        let files = self.files_of(skill, version).await?;
        let (ns, name) = ns_name(skill);
        let labels: Vec<String> = sqlx::query_scalar(
            "SELECT label FROM labels WHERE namespace = $1 AND name = $2 AND version = $3 ORDER BY label",
        )
        .bind(ns)
        .bind(name)
        .bind(version.to_owned())
        .fetch_all(&self.inner.db)
        .await?;
        let size: i64 = r.try_get("size")?;
        let frontmatter: String = r.try_get("frontmatter")?;
        let report: String = r.try_get("report")?;
        let caps: String = r.try_get("capabilities")?;
        let report: Vec<WireDiagnostic> = serde_json::from_str(&report)?;
        Ok(VersionDetail {
            namespace: skill.namespace().clone(),
            name: skill.name().to_owned(),
            version: r.try_get("version")?,
            fingerprint: r.try_get("fingerprint")?,
            size: u64::try_from(size).unwrap_or(0),
            files,
            frontmatter: serde_json::from_str(&frontmatter)?,
            capabilities: caps.split_whitespace().map(str::to_owned).collect(),
            report,
            published_by: r.try_get("published_by")?,
            published_at: r.try_get("published_at")?,
            labels,
            yanked: marker(r.try_get("yanked_reason")?, r.try_get("yanked_at")?),
            deprecated: marker(r.try_get("deprecated_reason")?, r.try_get("deprecated_at")?),
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
        let r = self.version_row(skill, &version).await?;
        Ok(r.try_get("skill_md")?)
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
        let digest: String = r.try_get("archive_sha256")?;
        Ok(BlobRef {
            key: archive_key(&digest)?,
            sha256: digest,
            fingerprint: r.try_get("fingerprint")?,
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
        let (ns, name) = ns_name(skill);
        let row = sqlx::query(
            "SELECT f.sha256, v.fingerprint FROM version_files f JOIN versions v \
             ON v.namespace = f.namespace AND v.name = f.name AND v.version = f.version \
             WHERE f.namespace = $1 AND f.name = $2 AND f.version = $3 AND f.path = $4",
        )
        .bind(ns)
        .bind(name)
        .bind(version.clone())
        .bind(path.to_owned())
        .fetch_optional(&self.inner.db)
        .await?
        .ok_or_else(|| RegistryError::NotFound(format!("file {path} of {skill}@{version}")))?;
        let digest: String = row.try_get("sha256")?;
        Ok(BlobRef {
            key: file_key(&digest)?,
            sha256: digest,
            fingerprint: row.try_get("fingerprint")?,
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
    ) -> Result<LabelMoved, RegistryError> {
        p.require_admin()?;
        if label.as_str() == LATEST {
            return Err(RegistryError::bad_request(
                "registry-label-managed",
                "'latest' is moved by publish and yank, not by hand",
            ));
        }
        let version = parse_version(version)?.to_string();
        let row = self.version_row(skill, &version).await?;
        if row.try_get::<Option<String>, _>("yanked_at")?.is_some() {
            return Err(RegistryError::conflict(
                "registry-version-yanked",
                format!("{skill}@{version} is yanked; a label cannot point to it"),
            ));
        }
        let (ns, name) = ns_name(skill);
        let (mut tx, generation) = self.begin_write().await?;
        let previous: Option<String> = sqlx::query_scalar(
            "SELECT version FROM labels WHERE namespace = $1 AND name = $2 AND label = $3",
        )
        .bind(ns.clone())
        .bind(name.clone())
        .bind(label.as_str().to_owned())
        .fetch_optional(&mut *tx)
        .await?;
        sqlx::query(
            "INSERT INTO labels (namespace, name, label, version, updated_at) VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (namespace, name, label) DO UPDATE SET version = excluded.version, updated_at = excluded.updated_at",
        )
        .bind(ns)
        .bind(name)
        .bind(label.as_str().to_owned())
        .bind(version.clone())
        .bind(now())
        .execute(&mut *tx)
        .await?;
        Registry::audit_in(
            &mut tx,
            generation,
            p,
            "label",
            &format!("{skill}:{label}"),
            serde_json::json!({"version": version, "previous": previous}),
        )
        .await?;
        self.commit(tx).await?;
        Ok(LabelMoved {
            label: label.clone(),
            version,
            previous,
        })
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
        self.set_marker(p, skill, v, reason, true).await
    }

    /// Deprecates a version (`Some(reason)`) or undoes it (`None`).
    pub async fn set_deprecated(
        &self,
        p: &Principal,
        skill: &SkillRef,
        v: &str,
        reason: Option<String>,
    ) -> Result<VersionDetail, RegistryError> {
        self.set_marker(p, skill, v, reason, false).await
    }

    async fn set_marker(
        &self,
        p: &Principal,
        skill: &SkillRef,
        v: &str,
        reason: Option<String>,
        yank: bool,
    ) -> Result<VersionDetail, RegistryError> {
        p.require_admin()?;
        if let Some(r) = &reason {
            RegistryError::check_text("the reason", r)?;
        }
        let version = self.version_of(skill, v).await?;
        self.version_row(skill, &version).await?;
        let (ns, name) = ns_name(skill);
        let at = reason.as_ref().map(|_| now());
        let (mut tx, generation) = self.begin_write().await?;
        let sql = if yank {
            "UPDATE versions SET yanked_reason = $1, yanked_at = $2 WHERE namespace = $3 AND name = $4 AND version = $5"
        } else {
            "UPDATE versions SET deprecated_reason = $1, deprecated_at = $2 WHERE namespace = $3 AND name = $4 AND version = $5"
        };
        sqlx::query(sql)
            .bind(reason.clone())
            .bind(at)
            .bind(ns)
            .bind(name)
            .bind(version.clone())
            .execute(&mut *tx)
            .await?;
        let latest = if yank {
            recompute_latest(&mut tx, skill).await?
        } else {
            None
        };
        let action = match (yank, reason.is_some()) {
            (true, true) => "yank",
            (true, false) => "unyank",
            (false, true) => "deprecate",
            (false, false) => "undeprecate",
        };
        Registry::audit_in(
            &mut tx,
            generation,
            p,
            action,
            &format!("{skill}@{version}"),
            serde_json::json!({"reason": reason, "latest": latest}),
        )
        .await?;
        self.commit(tx).await?;
        self.version_detail(skill, &version).await
    }
}

fn const_format_list() -> &'static str {
    "SELECT s.namespace, s.name, s.updated_at, l.version AS latest, v.description, \
     (SELECT COUNT(*) FROM versions c WHERE c.namespace = s.namespace AND c.name = s.name) AS n \
     FROM skills s \
     LEFT JOIN labels l ON l.namespace = s.namespace AND l.name = s.name AND l.label = 'latest' \
     LEFT JOIN versions v ON v.namespace = l.namespace AND v.name = l.name AND v.version = l.version \
     WHERE ($1 = '' OR s.namespace = $1) AND (s.namespace > $2 OR (s.namespace = $2 AND s.name > $3)) \
     ORDER BY s.namespace, s.name LIMIT $4"
}

/// The name filter of a namespace in the search index (names there are
/// `namespace/name`).
fn regex_for_namespace(ns: &str) -> Result<regex::Regex, RegistryError> {
    regex::Regex::new(&format!("^{}/", regex::escape(ns)))
        .map_err(|e| RegistryError::Internal(format!("namespace filter: {e}")))
}
