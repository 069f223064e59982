//! [`BlobStore`]: content-addressed blobs on a local folder or S3
//! (`object_store`). Keys are `files/sha256/<hex>` and
//! `archives/sha256/<hex>`; a put is idempotent (same key, same bytes), so
//! publishers never need to coordinate on blobs.

use std::sync::Arc;

use bytes::Bytes;
use futures::TryStreamExt;
use object_store::aws::AmazonS3Builder;
use object_store::local::LocalFileSystem;
use object_store::path::Path as StorePath;
use object_store::prefix::PrefixStore;
use object_store::{ObjectMeta, ObjectStore, ObjectStoreExt, PutPayload};

use skilldeck::Digest;

use crate::error::RegistryError;

/// The key `/readyz` looks up (never written; blob keys are content
/// addresses under their own prefixes).
const PROBE_KEY: &str = "readyz-probe";
use crate::service::metrics::metrics;

/// The key prefix of file blobs.
pub const FILES_PREFIX: &str = "files/sha256";
/// The key prefix of canonical archives.
pub const ARCHIVES_PREFIX: &str = "archives/sha256";

/// A blob store.
#[derive(Clone)]
pub struct BlobStore {
    store: Arc<dyn ObjectStore>,
    /// What it is, for logs (never credentials).
    shown: String,
}

impl std::fmt::Debug for BlobStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown)
    }
}

/// A stored `sha256:<hex>` digest, checked by the core's one rule
/// ([`Digest::parse`]); a malformed one is a server fault.
pub fn digest_of(digest: &str) -> Result<Digest, RegistryError> {
    Digest::parse(digest).map_err(|e| RegistryError::Internal(e.to_string()))
}

/// The key of a file blob.
pub fn file_key(digest: &str) -> Result<String, RegistryError> {
    Ok(file_key_of(&digest_of(digest)?))
}

/// The key of the file blob of `digest`.
pub fn file_key_of(digest: &Digest) -> String {
    format!("{FILES_PREFIX}/{}", digest.hex())
}

/// The key of an archive blob.
pub fn archive_key(digest: &str) -> Result<String, RegistryError> {
    Ok(archive_key_of(&digest_of(digest)?))
}

/// The key of the archive blob of `digest`.
pub fn archive_key_of(digest: &Digest) -> String {
    format!("{ARCHIVES_PREFIX}/{}", digest.hex())
}

/// `e` as a [`RegistryError`], counted in the store errors of
/// `/metrics` under `operation`.
fn counted(operation: &'static str, e: object_store::Error) -> RegistryError {
    metrics().store_error(operation);
    e.into()
}

impl BlobStore {
    /// Opens `file:///abs/dir` (created when missing) or
    /// `s3://bucket[/prefix]` with the `AWS_*` environment.
    pub fn open(url: &str) -> Result<BlobStore, RegistryError> {
        if let Some(path) = url.strip_prefix("file://") {
            let dir = std::path::Path::new(path);
            if !dir.is_absolute() {
                return Err(RegistryError::Config(format!(
                    "store {url}: a file:// store needs an absolute path"
                )));
            }
            std::fs::create_dir_all(dir).map_err(|e| RegistryError::io(dir, e))?;
            let fs = LocalFileSystem::new_with_prefix(dir)?;
            return Ok(BlobStore {
                store: Arc::new(fs),
                shown: url.to_owned(),
            });
        }
        if let Some(rest) = url.strip_prefix("s3://") {
            let (bucket, prefix) = match rest.split_once('/') {
                Some((b, p)) => (b, p.trim_matches('/')),
                None => (rest, ""),
            };
            if bucket.is_empty() {
                return Err(RegistryError::Config(format!("store {url}: no bucket")));
            }
            let mut builder = AmazonS3Builder::from_env().with_bucket_name(bucket);
            if std::env::var_os("AWS_REGION").is_none()
                && std::env::var_os("AWS_DEFAULT_REGION").is_none()
            {
                builder = builder.with_region("us-east-1");
            }
            let s3 = builder.build()?;
            let store: Arc<dyn ObjectStore> = if prefix.is_empty() {
                Arc::new(s3)
            } else {
                Arc::new(PrefixStore::new(s3, prefix))
            };
            return Ok(BlobStore {
                store,
                shown: format!("s3://{bucket}/{prefix}"),
            });
        }
        Err(RegistryError::Config(format!(
            "store {url}: expected file:///abs/dir or s3://bucket[/prefix]"
        )))
    }

    /// Writes `bytes` at `key` (idempotent: keys are content addresses).
    pub async fn put(&self, key: &str, bytes: Bytes) -> Result<(), RegistryError> {
        self.store
            .put(&StorePath::from(key), PutPayload::from_bytes(bytes))
            .await
            .map_err(|e| counted("put", e))?;
        Ok(())
    }

    /// The bytes at `key`, checked against `digest` (`sha256:<hex>`). A
    /// missing blob is [`RegistryError::BlobMissing`], never empty bytes.
    pub async fn get_verified(&self, key: &str, digest: &str) -> Result<Bytes, RegistryError> {
        let got = match self.store.get(&StorePath::from(key)).await {
            Ok(got) => got,
            Err(object_store::Error::NotFound { .. }) => {
                return Err(RegistryError::BlobMissing(key.to_owned()));
            }
            Err(e) => return Err(counted("get", e)),
        };
        let bytes = got.bytes().await.map_err(|e| counted("get", e))?;
        if Digest::of(&bytes) != digest {
            return Err(RegistryError::BlobCorrupt(key.to_owned()));
        }
        Ok(bytes)
    }

    /// Every blob under `prefix`.
    pub async fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, RegistryError> {
        self.store
            .list(Some(&StorePath::from(prefix)))
            .try_collect()
            .await
            .map_err(|e| counted("list", e))
    }

    /// Whether the store answers: a `HEAD` of a key that is never
    /// written (missing is the answer expected).
    pub async fn probe(&self) -> Result<(), RegistryError> {
        match self.store.head(&StorePath::from(PROBE_KEY)).await {
            Ok(_) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(counted("head", e)),
        }
    }

    /// Deletes `key` (missing is fine).
    pub async fn delete(&self, key: &str) -> Result<(), RegistryError> {
        match self.store.delete(&StorePath::from(key)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(counted("delete", e)),
        }
    }
}
