//! The SSH keys allowed to sign a namespace's versions.

use sqlx::{AnyConnection, Row};

use crate::error::RegistryError;
use crate::names::Namespace;
use crate::storage::db::{Db, Write};
use crate::wire::SignerInfo;

async fn list_on(
    conn: &mut AnyConnection,
    ns: &Namespace,
) -> Result<Vec<SignerInfo>, RegistryError> {
    let rows = sqlx::query(
        "SELECT fingerprint, public_key, added_by, added_at FROM namespace_signers \
         WHERE namespace = $1 ORDER BY added_at, fingerprint",
    )
    .bind(ns.as_str().to_owned())
    .fetch_all(conn)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(SignerInfo {
                namespace: ns.clone(),
                fingerprint: r.try_get("fingerprint")?,
                public_key: r.try_get("public_key")?,
                added_by: r.try_get("added_by")?,
                added_at: r.try_get("added_at")?,
            })
        })
        .collect()
}

/// The keys registered for `ns`, oldest first.
pub(crate) async fn list(db: &Db, ns: &Namespace) -> Result<Vec<SignerInfo>, RegistryError> {
    let mut conn = db.acquire().await?;
    list_on(&mut conn, ns).await
}

/// [`list`], inside a write (a publish checks its signature by them).
pub(crate) async fn list_in(
    w: &mut Write,
    ns: &Namespace,
) -> Result<Vec<SignerInfo>, RegistryError> {
    list_on(w.conn(), ns).await
}

/// Registers a key; false when it was already registered.
pub(crate) async fn add(w: &mut Write, signer: &SignerInfo) -> Result<bool, RegistryError> {
    let exists: Option<String> = sqlx::query_scalar(
        "SELECT fingerprint FROM namespace_signers WHERE namespace = $1 AND fingerprint = $2",
    )
    .bind(signer.namespace.as_str().to_owned())
    .bind(signer.fingerprint.clone())
    .fetch_optional(w.conn())
    .await?;
    if exists.is_some() {
        return Ok(false);
    }
    sqlx::query(
        "INSERT INTO namespace_signers (namespace, fingerprint, public_key, added_by, added_at) \
         VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(signer.namespace.as_str().to_owned())
    .bind(signer.fingerprint.clone())
    .bind(signer.public_key.clone())
    .bind(signer.added_by.clone())
    .bind(signer.added_at.clone())
    .execute(w.conn())
    .await?;
    Ok(true)
}

/// Removes a key; false when it was not registered.
pub(crate) async fn remove(
    w: &mut Write,
    ns: &Namespace,
    fingerprint: &str,
) -> Result<bool, RegistryError> {
    let done =
        sqlx::query("DELETE FROM namespace_signers WHERE namespace = $1 AND fingerprint = $2")
            .bind(ns.as_str().to_owned())
            .bind(fingerprint.to_owned())
            .execute(w.conn())
            .await?;
    Ok(done.rows_affected() > 0)
}
