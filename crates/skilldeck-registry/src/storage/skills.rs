//! Skills: one row per `namespace/name`, with its summary (the `latest`
//! version's description, the number of versions).

use sqlx::Row;
use sqlx::any::AnyRow;

use crate::error::RegistryError;
use crate::names::{Namespace, SkillRef};
use crate::storage::db::{Db, Write};
use crate::wire::SkillSummary;

/// The summary of every skill (the `FROM` and `JOIN`s the list and the
/// search index share).
const SUMMARY_SQL: &str = "SELECT s.namespace, s.name, s.updated_at, l.version AS latest, v.description, v.audit_verdict, \
     (SELECT COUNT(*) FROM versions c WHERE c.namespace = s.namespace AND c.name = s.name) AS n \
     FROM skills s \
     LEFT JOIN labels l ON l.namespace = s.namespace AND l.name = s.name AND l.label = 'latest' \
     LEFT JOIN versions v ON v.namespace = l.namespace AND v.name = l.name AND v.version = l.version";

/// A page of summaries by namespace/name (keyset).
const PAGE_SQL: &str = "SELECT s.namespace, s.name, s.updated_at, l.version AS latest, v.description, v.audit_verdict, \
     (SELECT COUNT(*) FROM versions c WHERE c.namespace = s.namespace AND c.name = s.name) AS n \
     FROM skills s \
     LEFT JOIN labels l ON l.namespace = s.namespace AND l.name = s.name AND l.label = 'latest' \
     LEFT JOIN versions v ON v.namespace = l.namespace AND v.name = l.name AND v.version = l.version \
     WHERE ($1 = '' OR s.namespace = $1) AND (s.namespace > $2 OR (s.namespace = $2 AND s.name > $3)) \
     ORDER BY s.namespace, s.name LIMIT $4";

/// The two columns that name a skill, as bound.
pub(super) fn key(skill: &SkillRef) -> (String, String) {
    (
        skill.namespace().as_str().to_owned(),
        skill.name().to_owned(),
    )
}

/// A stored namespace (checked again: a broken row is an internal error).
pub(super) fn namespace(text: &str) -> Result<Namespace, RegistryError> {
    Namespace::new(text).map_err(|e| RegistryError::Internal(e.to_string()))
}

/// A stored `namespace/name`.
pub(super) fn skill_ref(ns: &str, name: &str) -> Result<SkillRef, RegistryError> {
    SkillRef::new(ns, name).map_err(|e| RegistryError::Internal(e.to_string()))
}

pub(crate) fn summary_of(row: &AnyRow) -> Result<SkillSummary, RegistryError> {
    let ns: String = row.try_get("namespace")?;
    let n: i64 = row.try_get("n")?;
    Ok(SkillSummary {
        namespace: namespace(&ns)?,
        name: row.try_get("name")?,
        description: row
            .try_get::<Option<String>, _>("description")?
            .unwrap_or_default(),
        latest: row.try_get("latest")?,
        versions: u32::try_from(n).unwrap_or(u32::MAX),
        updated_at: row.try_get("updated_at")?,
        score: None,
        verdict: row.try_get("audit_verdict")?,
    })
}

/// At most `limit` summaries after `after_ns/after_name`, by
/// namespace/name; only `namespace`'s when it is not empty.
pub(crate) async fn page(
    db: &Db,
    namespace: &str,
    after_ns: &str,
    after_name: &str,
    limit: i64,
) -> Result<Vec<SkillSummary>, RegistryError> {
    sqlx::query(PAGE_SQL)
        .bind(namespace.to_owned())
        .bind(after_ns.to_owned())
        .bind(after_name.to_owned())
        .bind(limit)
        .fetch_all(db.pool())
        .await?
        .iter()
        .map(summary_of)
        .collect()
}

/// The summary of every skill (for the search index).
pub(crate) async fn all(db: &Db) -> Result<Vec<SkillSummary>, RegistryError> {
    sqlx::query(SUMMARY_SQL)
        .fetch_all(db.pool())
        .await?
        .iter()
        .map(summary_of)
        .collect()
}

/// When `skill` was first published, or `None` when it does not exist.
pub(crate) async fn created_at(db: &Db, skill: &SkillRef) -> Result<Option<String>, RegistryError> {
    let (ns, name) = key(skill);
    Ok(
        sqlx::query_scalar("SELECT created_at FROM skills WHERE namespace = $1 AND name = $2")
            .bind(ns)
            .bind(name)
            .fetch_optional(db.pool())
            .await?,
    )
}

/// Creates `skill` at `at`, or marks it updated at `at`.
pub(crate) async fn touch(w: &mut Write, skill: &SkillRef, at: &str) -> Result<(), RegistryError> {
    let (ns, name) = key(skill);
    sqlx::query(
        "INSERT INTO skills (namespace, name, created_at, updated_at) VALUES ($1, $2, $3, $3) \
         ON CONFLICT (namespace, name) DO UPDATE SET updated_at = excluded.updated_at",
    )
    .bind(ns)
    .bind(name)
    .bind(at.to_owned())
    .execute(w.conn())
    .await?;
    Ok(())
}
