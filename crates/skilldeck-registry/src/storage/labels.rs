//! Labels: a movable name (`latest`, `stable`, ...) per skill pointing to
//! one of its versions.

use std::collections::BTreeMap;

use sqlx::{AnyConnection, Row};

use crate::error::RegistryError;
use crate::names::SkillRef;
use crate::storage::db::{Db, Write};
use crate::storage::skills::key;

async fn get_on(
    conn: &mut AnyConnection,
    skill: &SkillRef,
    label: &str,
) -> Result<Option<String>, RegistryError> {
    let (ns, name) = key(skill);
    Ok(sqlx::query_scalar(
        "SELECT version FROM labels WHERE namespace = $1 AND name = $2 AND label = $3",
    )
    .bind(ns)
    .bind(name)
    .bind(label.to_owned())
    .fetch_optional(conn)
    .await?)
}

/// The version `label` of `skill` points to.
pub(crate) async fn get(
    db: &Db,
    skill: &SkillRef,
    label: &str,
) -> Result<Option<String>, RegistryError> {
    let mut conn = db.acquire().await?;
    get_on(&mut conn, skill, label).await
}

/// [`get`], inside a write.
pub(crate) async fn get_in(
    w: &mut Write,
    skill: &SkillRef,
    label: &str,
) -> Result<Option<String>, RegistryError> {
    get_on(w.conn(), skill, label).await
}

/// Every label of `skill` with its version.
pub(crate) async fn of_skill(
    db: &Db,
    skill: &SkillRef,
) -> Result<BTreeMap<String, String>, RegistryError> {
    let (ns, name) = key(skill);
    sqlx::query("SELECT label, version FROM labels WHERE namespace = $1 AND name = $2")
        .bind(ns)
        .bind(name)
        .fetch_all(db.pool())
        .await?
        .iter()
        .map(|r| Ok((r.try_get("label")?, r.try_get("version")?)))
        .collect()
}

/// The labels of `skill` pointing to `version`, sorted.
pub(crate) async fn pointing_to(
    db: &Db,
    skill: &SkillRef,
    version: &str,
) -> Result<Vec<String>, RegistryError> {
    let (ns, name) = key(skill);
    Ok(sqlx::query_scalar(
        "SELECT label FROM labels WHERE namespace = $1 AND name = $2 AND version = $3 ORDER BY label",
    )
    .bind(ns)
    .bind(name)
    .bind(version.to_owned())
    .fetch_all(db.pool())
    .await?)
}

/// Points `label` of `skill` to `version` (made or moved) at `at`.
pub(crate) async fn set(
    w: &mut Write,
    skill: &SkillRef,
    label: &str,
    version: &str,
    at: &str,
) -> Result<(), RegistryError> {
    let (ns, name) = key(skill);
    sqlx::query(
        "INSERT INTO labels (namespace, name, label, version, updated_at) VALUES ($1, $2, $3, $4, $5) \
         ON CONFLICT (namespace, name, label) DO UPDATE SET version = excluded.version, updated_at = excluded.updated_at",
    )
    .bind(ns)
    .bind(name)
    .bind(label.to_owned())
    .bind(version.to_owned())
    .bind(at.to_owned())
    .execute(w.conn())
    .await?;
    Ok(())
}

/// Removes `label` of `skill` (missing is fine).
pub(crate) async fn remove(
    w: &mut Write,
    skill: &SkillRef,
    label: &str,
) -> Result<(), RegistryError> {
    let (ns, name) = key(skill);
    sqlx::query("DELETE FROM labels WHERE namespace = $1 AND name = $2 AND label = $3")
        .bind(ns)
        .bind(name)
        .bind(label.to_owned())
        .execute(w.conn())
        .await?;
    Ok(())
}
