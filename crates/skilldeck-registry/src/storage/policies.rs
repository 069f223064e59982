//! Namespace policies: what a namespace requires of its versions (review
//! before release, signatures). A namespace without a row requires
//! neither.

use sqlx::{AnyConnection, Row};

use crate::error::RegistryError;
use crate::names::Namespace;
use crate::storage::db::{Db, Write};
use crate::wire::NamespacePolicy;

async fn get_on(
    conn: &mut AnyConnection,
    ns: &Namespace,
) -> Result<NamespacePolicy, RegistryError> {
    let row = sqlx::query(
        "SELECT require_review, require_signature FROM namespace_policies WHERE namespace = $1",
    )
    .bind(ns.as_str().to_owned())
    .fetch_optional(conn)
    .await?;
    match row {
        None => Ok(NamespacePolicy::default()),
        Some(r) => {
            let review: i64 = r.try_get("require_review")?;
            let signature: i64 = r.try_get("require_signature")?;
            Ok(NamespacePolicy {
                require_review: review != 0,
                require_signature: signature != 0,
            })
        }
    }
}

/// The policy of `ns` (the default when none was set).
pub(crate) async fn get(db: &Db, ns: &Namespace) -> Result<NamespacePolicy, RegistryError> {
    let mut conn = db.acquire().await?;
    get_on(&mut conn, ns).await
}

/// [`get`], inside a write (a publish decides its review state by it).
pub(crate) async fn get_in(
    w: &mut Write,
    ns: &Namespace,
) -> Result<NamespacePolicy, RegistryError> {
    get_on(w.conn(), ns).await
}

/// Replaces the policy of `ns`.
pub(crate) async fn set(
    w: &mut Write,
    ns: &Namespace,
    policy: NamespacePolicy,
    at: &str,
) -> Result<(), RegistryError> {
    sqlx::query("DELETE FROM namespace_policies WHERE namespace = $1")
        .bind(ns.as_str().to_owned())
        .execute(w.conn())
        .await?;
    sqlx::query(
        "INSERT INTO namespace_policies (namespace, require_review, require_signature, updated_at) \
         VALUES ($1, $2, $3, $4)",
    )
    .bind(ns.as_str().to_owned())
    .bind(i64::from(policy.require_review))
    .bind(i64::from(policy.require_signature))
    .bind(at.to_owned())
    .execute(w.conn())
    .await?;
    Ok(())
}
