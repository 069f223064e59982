//! Versions: immutable, one row per `namespace/name@version` with its
//! file list (`version_files`), its report and its yank and deprecation
//! markers.

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use skilldeck::environment::LockedEnvironment;

use crate::error::RegistryError;
use crate::names::SkillRef;
use crate::storage::db::{Db, Write, to_i64, to_u64};
use crate::storage::skills::{key, skill_ref};
use crate::wire::{
    FileEntry, Marker, Review, ReviewState, StoredReport, VersionSummary, WireAudit,
};

/// The reason an assignment's pinned version is not served while it waits
/// for review.
pub const PENDING_REVIEW: &str = "pending-review";

/// A stored version, as read back.
pub(crate) struct VersionRow {
    /// The version.
    pub version: String,
    /// The content fingerprint.
    pub fingerprint: String,
    /// `sha256:<hex>` of the canonical archive.
    pub archive_sha256: String,
    /// Bytes of all files.
    pub size: u64,
    /// The frontmatter as JSON text.
    frontmatter: String,
    /// The required capabilities.
    pub capabilities: Vec<String>,
    /// The validation report as JSON text.
    report: String,
    /// The SKILL.md text.
    pub skill_md: String,
    /// Who published it.
    pub published_by: String,
    /// When.
    pub published_at: String,
    /// Yanked: why and when.
    pub yanked: Option<Marker>,
    /// Deprecated: why and when.
    pub deprecated: Option<Marker>,
    /// Blocked: why and when.
    pub blocked: Option<Marker>,
    /// Where it stands in review.
    pub review: ReviewState,
    /// The review's decision, once made.
    pub reviewed: Option<Review>,
    /// The signer's key fingerprint, when signed.
    pub signer: Option<String>,
    /// The armored signature, when signed.
    pub signature: Option<String>,
    /// The audit verdict (`None` before the audit existed).
    pub audit_verdict: Option<String>,
    /// The audit findings as JSON text.
    audit_findings: Option<String>,
    /// The resolution stored at publish, as JSON text.
    environments: Option<String>,
}

impl VersionRow {
    /// The risk audit made at publish, if any.
    pub(crate) fn audit(&self) -> Result<Option<WireAudit>, RegistryError> {
        match (&self.audit_verdict, &self.audit_findings) {
            (Some(verdict), Some(findings)) => Ok(Some(WireAudit {
                verdict: verdict.clone(),
                findings: serde_json::from_str(findings)?,
            })),
            _ => Ok(None),
        }
    }

    /// The frontmatter.
    pub(crate) fn frontmatter(&self) -> Result<serde_json::Value, RegistryError> {
        Ok(serde_json::from_str(&self.frontmatter)?)
    }

    /// The report stored at publish ([`StoredReport::parse`]).
    pub(crate) fn report(&self) -> Result<StoredReport, RegistryError> {
        Ok(StoredReport::parse(&self.report)?)
    }

    /// The resolution stored at publish (empty: none).
    pub(crate) fn environments(&self) -> Result<Vec<LockedEnvironment>, RegistryError> {
        parse_environments(self.environments.as_deref())
    }
}

/// The stored resolution column's value (`None`: published without one).
fn parse_environments(text: Option<&str>) -> Result<Vec<LockedEnvironment>, RegistryError> {
    match text {
        Some(t) => Ok(serde_json::from_str(t)?),
        None => Ok(Vec::new()),
    }
}

/// What identifies a stored version's content (a second publish of the
/// same version compares against it).
pub(crate) struct Identity {
    /// The content fingerprint.
    pub fingerprint: String,
    /// Bytes of all files.
    pub size: u64,
    /// The report it was published with.
    pub report: StoredReport,
    /// The resolution it was published with (empty: none).
    pub environments: Vec<LockedEnvironment>,
}

/// A version to store.
pub(crate) struct NewVersion<'a> {
    /// The skill.
    pub skill: &'a SkillRef,
    /// The version.
    pub version: &'a str,
    /// The content fingerprint.
    pub fingerprint: &'a str,
    /// `sha256:<hex>` of the canonical archive.
    pub archive_sha256: &'a str,
    /// Bytes of the canonical archive.
    pub archive_size: u64,
    /// `sha256:<hex>` of the well-known index's archive (files at the
    /// root).
    pub root_archive_sha256: &'a str,
    /// Bytes of all files.
    pub size: u64,
    /// The description (no control characters).
    pub description: &'a str,
    /// The required capabilities.
    pub capabilities: &'a [String],
    /// The frontmatter.
    pub frontmatter: &'a serde_json::Value,
    /// The SKILL.md text.
    pub skill_md: &'a str,
    /// The report.
    pub report: &'a StoredReport,
    /// Who publishes it.
    pub published_by: &'a str,
    /// When.
    pub published_at: &'a str,
    /// Its files.
    pub files: &'a [skilldeck::FileDigest],
    /// `Released`, or `Pending` when its namespace requires review.
    pub review: ReviewState,
    /// The signature that verified at publish and its signer, if signed.
    pub signed: Option<(&'a str, &'a str)>,
    /// The risk audit at publish.
    pub audit: &'a WireAudit,
    /// The resolution of its dependencies, checked (empty: none).
    pub environments: &'a [LockedEnvironment],
}

/// Which marker of a version.
#[derive(Debug, Clone, Copy)]
pub(crate) enum MarkerKind {
    /// `yanked_reason`, `yanked_at`.
    Yanked,
    /// `deprecated_reason`, `deprecated_at`.
    Deprecated,
    /// `blocked_reason`, `blocked_at`.
    Blocked,
}

/// The columns every read of a version's state selects (a macro, so the
/// statements stay static text: sqlx refuses SQL built at run time).
macro_rules! state_columns {
    () => {
        "yanked_reason, yanked_at, deprecated_reason, deprecated_at, \
         blocked_reason, blocked_at, review_state, reviewed_by, reviewed_at, review_reason"
    };
}

/// A version's state: its markers and where it stands in review.
pub(crate) struct State {
    /// Yanked.
    pub yanked: Option<Marker>,
    /// Deprecated.
    pub deprecated: Option<Marker>,
    /// Blocked.
    pub blocked: Option<Marker>,
    /// Review.
    pub review: ReviewState,
    /// The review's decision.
    pub reviewed: Option<Review>,
}

impl State {
    /// Why an agent may not have this version (`yanked`, `blocked`,
    /// `pending-review`, `rejected`), with the detail; `None`: it may.
    pub(crate) fn unavailable(&self, version: &str) -> Option<(&'static str, String)> {
        if let Some(b) = &self.blocked {
            return Some((
                "blocked",
                format!("version {version} is blocked: {}", b.reason),
            ));
        }
        match self.review {
            ReviewState::Pending => {
                return Some((
                    PENDING_REVIEW,
                    format!("version {version} waits for review"),
                ));
            }
            ReviewState::Rejected => {
                return Some((
                    "rejected",
                    format!("version {version} was rejected in review"),
                ));
            }
            ReviewState::Released => {}
        }
        self.yanked
            .as_ref()
            .map(|_| ("yanked", format!("version {version} is yanked")))
    }
}

fn marker(reason: Option<String>, at: Option<String>) -> Option<Marker> {
    match (reason, at) {
        (Some(reason), Some(at)) => Some(Marker { reason, at }),
        _ => None,
    }
}

fn state(r: &AnyRow) -> Result<State, RegistryError> {
    let review: String = r.try_get("review_state")?;
    let review = ReviewState::parse(&review)
        .ok_or_else(|| RegistryError::Internal(format!("stored review state '{review}'")))?;
    let by: Option<String> = r.try_get("reviewed_by")?;
    let at: Option<String> = r.try_get("reviewed_at")?;
    let reviewed = match (by, at) {
        (Some(by), Some(at)) => Some(Review {
            by,
            at,
            reason: r.try_get("review_reason")?,
        }),
        _ => None,
    };
    Ok(State {
        yanked: marker(r.try_get("yanked_reason")?, r.try_get("yanked_at")?),
        deprecated: marker(r.try_get("deprecated_reason")?, r.try_get("deprecated_at")?),
        blocked: marker(r.try_get("blocked_reason")?, r.try_get("blocked_at")?),
        review,
        reviewed,
    })
}

/// Every version of `skill` (unordered) with its description.
pub(crate) async fn of_skill(
    db: &Db,
    skill: &SkillRef,
) -> Result<Vec<(VersionSummary, String)>, RegistryError> {
    let (ns, name) = key(skill);
    let rows = sqlx::query(concat!(
        "SELECT version, fingerprint, size, description, published_by, published_at, ",
        state_columns!(),
        " FROM versions WHERE namespace = $1 AND name = $2"
    ))
    .bind(ns)
    .bind(name)
    .fetch_all(db.pool())
    .await?;
    rows.iter()
        .map(|r| {
            let size: i64 = r.try_get("size")?;
            let state = state(r)?;
            Ok((
                VersionSummary {
                    version: r.try_get("version")?,
                    fingerprint: r.try_get("fingerprint")?,
                    size: to_u64(size),
                    published_by: r.try_get("published_by")?,
                    published_at: r.try_get("published_at")?,
                    yanked: state.yanked,
                    deprecated: state.deprecated,
                    blocked: state.blocked,
                    review: state.review,
                },
                r.try_get("description")?,
            ))
        })
        .collect()
}

/// One version, or `None`.
pub(crate) async fn get(
    db: &Db,
    skill: &SkillRef,
    version: &str,
) -> Result<Option<VersionRow>, RegistryError> {
    let (ns, name) = key(skill);
    let row = sqlx::query(concat!(
        "SELECT version, fingerprint, archive_sha256, size, frontmatter, capabilities, report, skill_md, \
         published_by, published_at, signer, signature, audit_verdict, audit_findings, environments, ",
        state_columns!(),
        " FROM versions WHERE namespace = $1 AND name = $2 AND version = $3"
    ))
    .bind(ns)
    .bind(name)
    .bind(version.to_owned())
    .fetch_optional(db.pool())
    .await?;
    row.map(|r| {
        let size: i64 = r.try_get("size")?;
        let caps: String = r.try_get("capabilities")?;
        let state = state(&r)?;
        Ok(VersionRow {
            version: r.try_get("version")?,
            fingerprint: r.try_get("fingerprint")?,
            archive_sha256: r.try_get("archive_sha256")?,
            size: to_u64(size),
            frontmatter: r.try_get("frontmatter")?,
            capabilities: caps.split_whitespace().map(str::to_owned).collect(),
            report: r.try_get("report")?,
            skill_md: r.try_get("skill_md")?,
            published_by: r.try_get("published_by")?,
            published_at: r.try_get("published_at")?,
            yanked: state.yanked,
            deprecated: state.deprecated,
            blocked: state.blocked,
            review: state.review,
            reviewed: state.reviewed,
            signer: r.try_get("signer")?,
            signature: r.try_get("signature")?,
            audit_verdict: r.try_get("audit_verdict")?,
            audit_findings: r.try_get("audit_findings")?,
            environments: r.try_get("environments")?,
        })
    })
    .transpose()
}

/// The files of a version, in byte order of the path (as the manifest and
/// the fingerprint use).
pub(crate) async fn files(
    db: &Db,
    skill: &SkillRef,
    version: &str,
) -> Result<Vec<FileEntry>, RegistryError> {
    let (ns, name) = key(skill);
    let rows = sqlx::query(
        "SELECT path, size, sha256, executable FROM version_files \
         WHERE namespace = $1 AND name = $2 AND version = $3 ORDER BY path",
    )
    .bind(ns)
    .bind(name)
    .bind(version.to_owned())
    .fetch_all(db.pool())
    .await?;
    let mut files = rows
        .iter()
        .map(|r| {
            let size: i64 = r.try_get("size")?;
            let exec: i64 = r.try_get("executable")?;
            Ok(FileEntry {
                path: r.try_get("path")?,
                size: to_u64(size),
                sha256: r.try_get("sha256")?,
                executable: exec != 0,
            })
        })
        .collect::<Result<Vec<_>, sqlx::Error>>()?;
    files.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
    Ok(files)
}

/// The digest of one file of a version and the version's fingerprint.
pub(crate) async fn file_digest(
    db: &Db,
    skill: &SkillRef,
    version: &str,
    path: &str,
) -> Result<Option<(String, String)>, RegistryError> {
    let (ns, name) = key(skill);
    let row = sqlx::query(
        "SELECT f.sha256, v.fingerprint FROM version_files f JOIN versions v \
         ON v.namespace = f.namespace AND v.name = f.name AND v.version = f.version \
         WHERE f.namespace = $1 AND f.name = $2 AND f.version = $3 AND f.path = $4",
    )
    .bind(ns)
    .bind(name)
    .bind(version.to_owned())
    .bind(path.to_owned())
    .fetch_optional(db.pool())
    .await?;
    row.map(|r| Ok((r.try_get("sha256")?, r.try_get("fingerprint")?)))
        .transpose()
}

async fn identity_on(
    conn: &mut AnyConnection,
    skill: &SkillRef,
    version: &str,
) -> Result<Option<Identity>, RegistryError> {
    let (ns, name) = key(skill);
    let row = sqlx::query(
        "SELECT fingerprint, size, report, environments FROM versions WHERE namespace = $1 AND name = $2 AND version = $3",
    )
    .bind(ns)
    .bind(name)
    .bind(version.to_owned())
    .fetch_optional(conn)
    .await?;
    row.map(|row| {
        let report: String = row.try_get("report")?;
        let size: i64 = row.try_get("size")?;
        let environments: Option<String> = row.try_get("environments")?;
        Ok(Identity {
            fingerprint: row.try_get("fingerprint")?,
            size: to_u64(size),
            report: StoredReport::parse(&report)?,
            environments: parse_environments(environments.as_deref())?,
        })
    })
    .transpose()
}

/// The identity of a stored version, or `None`.
pub(crate) async fn identity(
    db: &Db,
    skill: &SkillRef,
    version: &str,
) -> Result<Option<Identity>, RegistryError> {
    let mut conn = db.acquire().await?;
    identity_on(&mut conn, skill, version).await
}

/// [`identity`], inside a write.
pub(crate) async fn identity_in(
    w: &mut Write,
    skill: &SkillRef,
    version: &str,
) -> Result<Option<Identity>, RegistryError> {
    identity_on(w.conn(), skill, version).await
}

/// Stores a version and its file list.
pub(crate) async fn insert(w: &mut Write, v: &NewVersion<'_>) -> Result<(), RegistryError> {
    let (ns, name) = key(v.skill);
    sqlx::query(
        "INSERT INTO versions (namespace, name, version, fingerprint, archive_sha256, archive_size, size, \
         description, capabilities, frontmatter, skill_md, report, published_by, published_at, review_state, \
         signature, signer, audit_verdict, audit_findings, root_archive_sha256, environments) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)",
    )
    .bind(ns.clone())
    .bind(name.clone())
    .bind(v.version.to_owned())
    .bind(v.fingerprint.to_owned())
    .bind(v.archive_sha256.to_owned())
    .bind(to_i64(v.archive_size))
    .bind(to_i64(v.size))
    .bind(v.description.to_owned())
    .bind(v.capabilities.join(" "))
    .bind(v.frontmatter.to_string())
    .bind(v.skill_md.to_owned())
    .bind(serde_json::to_string(v.report)?)
    .bind(v.published_by.to_owned())
    .bind(v.published_at.to_owned())
    .bind(v.review.as_str())
    .bind(v.signed.map(|(signature, _)| signature.to_owned()))
    .bind(v.signed.map(|(_, signer)| signer.to_owned()))
    .bind(v.audit.verdict.clone())
    .bind(serde_json::to_string(&v.audit.findings)?)
    .bind(v.root_archive_sha256.to_owned())
    .bind(if v.environments.is_empty() {
        None
    } else {
        Some(serde_json::to_string(v.environments)?)
    })
    .execute(w.conn())
    .await?;
    for f in v.files {
        sqlx::query(
            "INSERT INTO version_files (namespace, name, version, path, size, sha256, executable) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(ns.clone())
        .bind(name.clone())
        .bind(v.version.to_owned())
        .bind(f.path.clone())
        .bind(to_i64(f.size))
        .bind(f.sha256.to_string())
        .bind(i64::from(f.executable))
        .execute(w.conn())
        .await?;
    }
    Ok(())
}

/// The versions of `skill` an agent may have: released, not yanked, not
/// blocked (inside a write: `latest` is recomputed from them).
pub(crate) async fn live_in(w: &mut Write, skill: &SkillRef) -> Result<Vec<String>, RegistryError> {
    let (ns, name) = key(skill);
    Ok(sqlx::query_scalar(
        "SELECT version FROM versions WHERE namespace = $1 AND name = $2 AND yanked_at IS NULL \
         AND blocked_at IS NULL AND review_state = 'released'",
    )
    .bind(ns)
    .bind(name)
    .fetch_all(w.conn())
    .await?)
}

/// Sets (`Some`) or clears (`None`) a marker of a version; `at` is when.
pub(crate) async fn set_marker(
    w: &mut Write,
    skill: &SkillRef,
    version: &str,
    kind: MarkerKind,
    reason: Option<&str>,
    at: Option<&str>,
) -> Result<(), RegistryError> {
    let (ns, name) = key(skill);
    let sql = match kind {
        MarkerKind::Yanked => {
            "UPDATE versions SET yanked_reason = $1, yanked_at = $2 WHERE namespace = $3 AND name = $4 AND version = $5"
        }
        MarkerKind::Deprecated => {
            "UPDATE versions SET deprecated_reason = $1, deprecated_at = $2 WHERE namespace = $3 AND name = $4 AND version = $5"
        }
        MarkerKind::Blocked => {
            "UPDATE versions SET blocked_reason = $1, blocked_at = $2 WHERE namespace = $3 AND name = $4 AND version = $5"
        }
    };
    sqlx::query(sql)
        .bind(reason.map(str::to_owned))
        .bind(at.map(str::to_owned))
        .bind(ns)
        .bind(name)
        .bind(version.to_owned())
        .execute(w.conn())
        .await?;
    Ok(())
}

/// A version's state, or `None` when it does not exist.
pub(crate) async fn state_of(
    db: &Db,
    skill: &SkillRef,
    version: &str,
) -> Result<Option<State>, RegistryError> {
    let (ns, name) = key(skill);
    let row = sqlx::query(concat!(
        "SELECT ",
        state_columns!(),
        " FROM versions WHERE namespace = $1 AND name = $2 AND version = $3"
    ))
    .bind(ns)
    .bind(name)
    .bind(version.to_owned())
    .fetch_optional(db.pool())
    .await?;
    row.map(|r| state(&r)).transpose()
}

/// Records a review's decision (`state` with who, when, why).
pub(crate) async fn set_review(
    w: &mut Write,
    skill: &SkillRef,
    version: &str,
    state: ReviewState,
    review: &Review,
) -> Result<(), RegistryError> {
    let (ns, name) = key(skill);
    sqlx::query(
        "UPDATE versions SET review_state = $1, reviewed_by = $2, reviewed_at = $3, review_reason = $4 \
         WHERE namespace = $5 AND name = $6 AND version = $7",
    )
    .bind(state.as_str())
    .bind(review.by.clone())
    .bind(review.at.clone())
    .bind(review.reason.clone())
    .bind(ns)
    .bind(name)
    .bind(version.to_owned())
    .execute(w.conn())
    .await?;
    Ok(())
}

/// A version waiting for review, as stored.
pub(crate) struct PendingRow {
    /// The skill.
    pub skill: SkillRef,
    /// The version.
    pub version: String,
    /// Who published it.
    pub published_by: String,
    /// When.
    pub published_at: String,
}

/// Every version waiting for review, oldest first.
pub(crate) async fn pending(db: &Db) -> Result<Vec<PendingRow>, RegistryError> {
    let rows = sqlx::query(
        "SELECT namespace, name, version, published_by, published_at FROM versions \
         WHERE review_state = 'pending' ORDER BY published_at, namespace, name, version",
    )
    .fetch_all(db.pool())
    .await?;
    rows.iter()
        .map(|r| {
            let ns: String = r.try_get("namespace")?;
            let name: String = r.try_get("name")?;
            Ok(PendingRow {
                skill: skill_ref(&ns, &name)?,
                version: r.try_get("version")?,
                published_by: r.try_get("published_by")?,
                published_at: r.try_get("published_at")?,
            })
        })
        .collect()
}

/// What an agent's lock says of a version: its fingerprint, and its
/// signer and signature when signed; `None` when it does not exist.
pub(crate) struct LockFacts {
    /// The content fingerprint.
    pub fingerprint: String,
    /// The signer's key fingerprint.
    pub signer: Option<String>,
    /// The armored signature.
    pub signature: Option<String>,
    /// The risk audit's verdict.
    pub verdict: Option<String>,
    /// The resolution stored at publish (empty: none).
    pub environments: Vec<LockedEnvironment>,
}

/// [`LockFacts`] of a version, or `None`.
pub(crate) async fn lock_facts(
    db: &Db,
    skill: &SkillRef,
    version: &str,
) -> Result<Option<LockFacts>, RegistryError> {
    let (ns, name) = key(skill);
    let row = sqlx::query(
        "SELECT fingerprint, signer, signature, audit_verdict, environments FROM versions \
         WHERE namespace = $1 AND name = $2 AND version = $3",
    )
    .bind(ns)
    .bind(name)
    .bind(version.to_owned())
    .fetch_optional(db.pool())
    .await?;
    row.map(|r| {
        let environments: Option<String> = r.try_get("environments")?;
        Ok(LockFacts {
            fingerprint: r.try_get("fingerprint")?,
            signer: r.try_get("signer")?,
            signature: r.try_get("signature")?,
            verdict: r.try_get("audit_verdict")?,
            environments: parse_environments(environments.as_deref())?,
        })
    })
    .transpose()
}

/// The SKILL.md text of a version, or `None`.
pub(crate) async fn skill_md(
    db: &Db,
    skill: &SkillRef,
    version: &str,
) -> Result<Option<String>, RegistryError> {
    let (ns, name) = key(skill);
    Ok(sqlx::query_scalar(
        "SELECT skill_md FROM versions WHERE namespace = $1 AND name = $2 AND version = $3",
    )
    .bind(ns)
    .bind(name)
    .bind(version.to_owned())
    .fetch_optional(db.pool())
    .await?)
}

/// A skill's `latest` version that is not yanked, with its capabilities.
pub(crate) struct LatestRelease {
    /// The skill.
    pub skill: SkillRef,
    /// Its `latest` version.
    pub version: String,
    /// The capabilities that version requires.
    pub capabilities: Vec<String>,
}

/// Every skill's `latest` version that is not yanked, by namespace/name
/// (what auto-discovery chooses from).
pub(crate) async fn latest_releases(db: &Db) -> Result<Vec<LatestRelease>, RegistryError> {
    let rows = sqlx::query(
        "SELECT l.namespace, l.name, l.version, v.capabilities FROM labels l JOIN versions v \
         ON v.namespace = l.namespace AND v.name = l.name AND v.version = l.version \
         WHERE l.label = 'latest' AND v.yanked_at IS NULL AND v.blocked_at IS NULL \
         AND v.review_state = 'released' ORDER BY l.namespace, l.name",
    )
    .fetch_all(db.pool())
    .await?;
    rows.iter()
        .map(|r| {
            let ns: String = r.try_get("namespace")?;
            let name: String = r.try_get("name")?;
            let caps: String = r.try_get("capabilities")?;
            Ok(LatestRelease {
                skill: skill_ref(&ns, &name)?,
                version: r.try_get("version")?,
                capabilities: caps.split_whitespace().map(str::to_owned).collect(),
            })
        })
        .collect()
}

/// Every file digest a version references (blob collection).
pub(crate) async fn file_digests(db: &Db) -> Result<Vec<String>, RegistryError> {
    Ok(
        sqlx::query_scalar("SELECT DISTINCT sha256 FROM version_files")
            .fetch_all(db.pool())
            .await?,
    )
}

/// Every archive digest a version references (blob collection).
pub(crate) async fn archive_digests(db: &Db) -> Result<Vec<String>, RegistryError> {
    Ok(
        sqlx::query_scalar("SELECT DISTINCT archive_sha256 FROM versions")
            .fetch_all(db.pool())
            .await?,
    )
}

/// One version the well-known index lists.
#[derive(Debug, Clone)]
pub(crate) struct IndexedVersion {
    /// Its skill's name.
    pub name: String,
    /// The version.
    pub version: String,
    /// Its description.
    pub description: String,
    /// `sha256:<hex>` of the canonical archive.
    pub archive_sha256: String,
    /// `sha256:<hex>` of the index's archive; `None` until filled in.
    pub root_archive_sha256: Option<String>,
}

/// One page of the versions `latest` points to in `namespace`, released,
/// neither yanked nor blocked, by name after `after` (keyset paging: one
/// query per page, whatever the page).
pub(crate) async fn indexed_page(
    db: &Db,
    namespace: &str,
    after: &str,
    limit: i64,
) -> Result<Vec<IndexedVersion>, RegistryError> {
    sqlx::query(
        "SELECT v.name, v.version, v.description, v.archive_sha256, v.root_archive_sha256 \
         FROM labels l JOIN versions v ON v.namespace = l.namespace AND v.name = l.name \
         AND v.version = l.version \
         WHERE l.label = 'latest' AND l.namespace = $1 AND l.name > $2 \
         AND v.yanked_at IS NULL AND v.blocked_at IS NULL AND v.review_state = 'released' \
         ORDER BY l.name LIMIT $3",
    )
    .bind(namespace.to_owned())
    .bind(after.to_owned())
    .bind(limit)
    .fetch_all(db.pool())
    .await?
    .iter()
    .map(|r| {
        Ok(IndexedVersion {
            name: r.try_get("name")?,
            version: r.try_get("version")?,
            description: r.try_get("description")?,
            archive_sha256: r.try_get("archive_sha256")?,
            root_archive_sha256: r.try_get("root_archive_sha256")?,
        })
    })
    .collect()
}

/// One live version (released, neither yanked nor blocked) of `skill`,
/// as the index lists it; `None` when there is no such live version.
pub(crate) async fn indexed_one(
    db: &Db,
    skill: &SkillRef,
    version: &str,
) -> Result<Option<IndexedVersion>, RegistryError> {
    let (ns, name) = key(skill);
    sqlx::query(
        "SELECT name, version, description, archive_sha256, root_archive_sha256 FROM versions \
         WHERE namespace = $1 AND name = $2 AND version = $3 AND yanked_at IS NULL \
         AND blocked_at IS NULL AND review_state = 'released'",
    )
    .bind(ns)
    .bind(name)
    .bind(version.to_owned())
    .fetch_optional(db.pool())
    .await?
    .map(|r| {
        Ok(IndexedVersion {
            name: r.try_get("name")?,
            version: r.try_get("version")?,
            description: r.try_get("description")?,
            archive_sha256: r.try_get("archive_sha256")?,
            root_archive_sha256: r.try_get("root_archive_sha256")?,
        })
    })
    .transpose()
}

/// The namespaces that hold skills, in order (for `*`).
pub(crate) async fn namespaces(db: &Db) -> Result<Vec<String>, RegistryError> {
    Ok(
        sqlx::query_scalar("SELECT DISTINCT namespace FROM skills ORDER BY namespace")
            .fetch_all(db.pool())
            .await?,
    )
}

/// Records the index archive digest of a version published before the
/// column existed. Derived data of an immutable version (the same value
/// whoever computes it), so no generation is taken: nothing cached
/// changes meaning.
pub(crate) async fn set_root_archive(
    db: &Db,
    skill: &SkillRef,
    version: &str,
    digest: &str,
) -> Result<(), RegistryError> {
    let (ns, name) = key(skill);
    sqlx::query(
        "UPDATE versions SET root_archive_sha256 = $1 WHERE namespace = $2 AND name = $3 \
         AND version = $4 AND root_archive_sha256 IS NULL",
    )
    .bind(digest.to_owned())
    .bind(ns)
    .bind(name)
    .bind(version.to_owned())
    .execute(db.pool())
    .await?;
    Ok(())
}
