//! Agents (their settings as JSON) and their assignments of skills.

use sqlx::Row;
use sqlx::any::AnyRow;

use crate::error::RegistryError;
use crate::names::{AgentId, SkillRef};
use crate::storage::db::{Db, Write};
use crate::storage::skills::{key, namespace};
use crate::wire::{Agent, AgentSpec, Assignment, AssignmentView};

fn agent_of(row: &AnyRow) -> Result<Agent, RegistryError> {
    let spec: String = row.try_get("spec")?;
    Ok(Agent {
        spec: serde_json::from_str(&spec)?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

/// Whether agent `id` exists (inside a write, so a create is atomic).
pub(crate) async fn exists_in(w: &mut Write, id: &AgentId) -> Result<bool, RegistryError> {
    let found: Option<String> = sqlx::query_scalar("SELECT id FROM agents WHERE id = $1")
        .bind(id.as_str().to_owned())
        .fetch_optional(w.conn())
        .await?;
    Ok(found.is_some())
}

/// Stores a new agent created (and updated) at `at`.
pub(crate) async fn insert(w: &mut Write, spec: &AgentSpec, at: &str) -> Result<(), RegistryError> {
    sqlx::query("INSERT INTO agents (id, spec, created_at, updated_at) VALUES ($1, $2, $3, $3)")
        .bind(spec.id.as_str().to_owned())
        .bind(serde_json::to_string(spec)?)
        .bind(at.to_owned())
        .execute(w.conn())
        .await?;
    Ok(())
}

/// Replaces agent `id`'s settings; false when there is no such agent.
pub(crate) async fn update(
    w: &mut Write,
    id: &AgentId,
    spec: &AgentSpec,
    at: &str,
) -> Result<bool, RegistryError> {
    let changed = sqlx::query("UPDATE agents SET spec = $1, updated_at = $2 WHERE id = $3")
        .bind(serde_json::to_string(spec)?)
        .bind(at.to_owned())
        .bind(id.as_str().to_owned())
        .execute(w.conn())
        .await?
        .rows_affected();
    Ok(changed > 0)
}

/// Deletes agent `id` and its assignments; false when there is no such
/// agent (then nothing is deleted).
pub(crate) async fn delete(w: &mut Write, id: &AgentId) -> Result<bool, RegistryError> {
    let changed = sqlx::query("DELETE FROM agents WHERE id = $1")
        .bind(id.as_str().to_owned())
        .execute(w.conn())
        .await?
        .rows_affected();
    if changed == 0 {
        return Ok(false);
    }
    sqlx::query("DELETE FROM assignments WHERE agent = $1")
        .bind(id.as_str().to_owned())
        .execute(w.conn())
        .await?;
    Ok(true)
}

/// Agent `id`, or `None`.
pub(crate) async fn get(db: &Db, id: &AgentId) -> Result<Option<Agent>, RegistryError> {
    sqlx::query("SELECT spec, created_at, updated_at FROM agents WHERE id = $1")
        .bind(id.as_str().to_owned())
        .fetch_optional(db.pool())
        .await?
        .as_ref()
        .map(agent_of)
        .transpose()
}

/// At most `limit` agents with an id after `after`, by id.
pub(crate) async fn page(db: &Db, after: &str, limit: i64) -> Result<Vec<Agent>, RegistryError> {
    sqlx::query(
        "SELECT id, spec, created_at, updated_at FROM agents WHERE id > $1 ORDER BY id LIMIT $2",
    )
    .bind(after.to_owned())
    .bind(limit)
    .fetch_all(db.pool())
    .await?
    .iter()
    .map(agent_of)
    .collect()
}

/// Assigns `skill` to agent `id` (made or replaced) at `at`.
pub(crate) async fn assign(
    w: &mut Write,
    id: &AgentId,
    skill: &SkillRef,
    assignment: &Assignment,
    at: &str,
) -> Result<(), RegistryError> {
    let (ns, name) = key(skill);
    sqlx::query(
        "INSERT INTO assignments (agent, namespace, name, spec, updated_at) VALUES ($1, $2, $3, $4, $5) \
         ON CONFLICT (agent, namespace, name) DO UPDATE SET spec = excluded.spec, updated_at = excluded.updated_at",
    )
    .bind(id.as_str().to_owned())
    .bind(ns)
    .bind(name)
    .bind(serde_json::to_string(assignment)?)
    .bind(at.to_owned())
    .execute(w.conn())
    .await?;
    Ok(())
}

/// Removes the assignment of `skill` to agent `id`; false when there was
/// none.
pub(crate) async fn unassign(
    w: &mut Write,
    id: &AgentId,
    skill: &SkillRef,
) -> Result<bool, RegistryError> {
    let (ns, name) = key(skill);
    let changed =
        sqlx::query("DELETE FROM assignments WHERE agent = $1 AND namespace = $2 AND name = $3")
            .bind(id.as_str().to_owned())
            .bind(ns)
            .bind(name)
            .execute(w.conn())
            .await?
            .rows_affected();
    Ok(changed > 0)
}

/// Agent `id`'s assignments, by namespace/name.
pub(crate) async fn assignments(
    db: &Db,
    id: &AgentId,
) -> Result<Vec<AssignmentView>, RegistryError> {
    let rows = sqlx::query(
        "SELECT namespace, name, spec, updated_at FROM assignments WHERE agent = $1 ORDER BY namespace, name",
    )
    .bind(id.as_str().to_owned())
    .fetch_all(db.pool())
    .await?;
    rows.iter()
        .map(|row| {
            let ns: String = row.try_get("namespace")?;
            let spec: String = row.try_get("spec")?;
            Ok(AssignmentView {
                agent: id.clone(),
                namespace: namespace(&ns)?,
                name: row.try_get("name")?,
                assignment: serde_json::from_str(&spec)?,
                updated_at: row.try_get("updated_at")?,
                status: String::new(),
                status_detail: None,
            })
        })
        .collect()
}
