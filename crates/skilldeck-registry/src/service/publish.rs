//! Publish: a package body → a temporary file (under the registry's
//! [staging](crate::service::staging) folder) → `skilldeck_package::unpack`
//! (its hostile-archive refusals and validation) into a private staging
//! folder → the canonical tar.gz (`skilldeck_package::pack` of the staged
//! folder) → blobs under their content addresses → one transaction that
//! makes the version visible.

use std::path::Path;

use bytes::Bytes;
use skilldeck::{Diagnostic, FileDigest, ValidationOptions};
use skilldeck_package::{ArchiveFormat, PackOptions, PackageLimits, UnpackOptions};
use sqlx::{Any, Row, Transaction};

use crate::names::{LATEST, Namespace, SkillRef};
use crate::service::error::RegistryError;
use crate::service::principal::Principal;
use crate::service::registry::{Registry, now};
use crate::service::store::{archive_key, file_key_of};
use crate::wire::{Published, WireDiagnostic};

/// A package unpacked, validated and re-packed, ready to store.
struct Staged {
    name: String,
    meta_version: Option<String>,
    fingerprint: String,
    files: Vec<(FileDigest, Bytes)>,
    archive: Bytes,
    warnings: Vec<Diagnostic>,
    skill_md: String,
    frontmatter: serde_json::Value,
    description: String,
    capabilities: Vec<String>,
}

/// The validation a published skill passes: what a host can load
/// (lenient, without the advisory lints), as `unpack` applies it.
fn publish_validation() -> ValidationOptions {
    UnpackOptions::default().validation
}

/// Makes a diagnostic's file relative to the package (never a temporary
/// path of this server): the body itself is `package`, a staged file its
/// path inside the skill.
fn relative_file(mut d: Diagnostic, tmp: &Path, package: &Path) -> Diagnostic {
    if let Some(file) = d.file.take() {
        let shown = if file == package {
            Path::new("package").to_path_buf()
        } else if let Ok(rest) = file.strip_prefix(tmp) {
            let parts: Vec<_> = rest
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .filter(|c| c != "staging" && c != ".tree")
                .collect();
            parts.join("/").into()
        } else {
            file.file_name().map(Into::into).unwrap_or_default()
        };
        d.file = Some(shown);
    }
    d
}

/// Makes a published skill's diagnostic file relative to its folder
/// (`SKILL.md`, `scripts/run.py`), as the version's file list names them.
fn in_skill(mut d: Diagnostic, dir: &Path) -> Diagnostic {
    if let Some(file) = d.file.take() {
        d.file = Some(match file.strip_prefix(dir) {
            Ok(rest) => rest.to_path_buf(),
            Err(_) => file.file_name().map(Into::into).unwrap_or_default(),
        });
    }
    d
}

/// Required capabilities: `metadata.capabilities`, comma- or
/// space-separated words `^[a-z0-9][a-z0-9._-]*$`.
pub fn parse_capabilities(text: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for word in text.split(|c: char| c == ',' || c.is_whitespace()) {
        if word.is_empty() {
            continue;
        }
        let ok = word.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
            && word.chars().all(|c| {
                c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-')
            });
        if !ok {
            return Err(format!(
                "capability '{word}' must match ^[a-z0-9][a-z0-9._-]*$"
            ));
        }
        if !out.iter().any(|w| w == word) {
            out.push(word.to_owned());
        }
    }
    out.sort();
    Ok(out)
}

fn stage(body: Bytes, limits: PackageLimits, within: &Path) -> Result<Staged, RegistryError> {
    // Under this process's staging folder, never the system's temporary
    // folder: a killed publish's leftovers are swept at the next start.
    let tmp = tempfile::Builder::new()
        .prefix("publish-")
        .tempdir_in(within)
        .map_err(|e| RegistryError::io(within, e))?;
    let package = tmp.path().join("package");
    std::fs::write(&package, &body).map_err(|e| RegistryError::io(&package, e))?;
    let staging = tmp.path().join("staging");
    let refused = |e: skilldeck_package::Error| match e {
        skilldeck_package::Error::Refused(ds) => RegistryError::Refused(
            ds.into_iter()
                .map(|d| relative_file(d, tmp.path(), &package))
                .collect(),
        ),
        other => RegistryError::Internal(format!("unpack: {other}")),
    };
    let options = UnpackOptions {
        limits,
        validation: publish_validation(),
    };
    let unpacked = skilldeck_package::unpack(&package, &staging, &options).map_err(refused)?;
    let packed = skilldeck_package::pack(
        &unpacked.dir,
        &PackOptions {
            format: ArchiveFormat::TarGz,
            validation: publish_validation(),
            limits,
        },
    )
    .map_err(refused)?;
    let skill_md_path = unpacked.dir.join("SKILL.md");
    let skill_md =
        std::fs::read_to_string(&skill_md_path).map_err(|e| RegistryError::io("SKILL.md", e))?;
    let checked = skilldeck::check_text(&skill_md, None, &publish_validation());
    let fm = checked.frontmatter.unwrap_or_default();
    let capabilities = fm
        .metadata
        .iter()
        .find(|(k, _)| k == "capabilities")
        .map(|(_, v)| parse_capabilities(v))
        .transpose()
        .map_err(|why| {
            RegistryError::bad_request(
                "registry-invalid-capabilities",
                format!("SKILL.md: metadata.capabilities: {why}"),
            )
        })?
        .unwrap_or_default();
    let mut files = Vec::with_capacity(packed.manifest.files().len());
    for f in packed.manifest.files() {
        let full = unpacked.dir.join(&f.path);
        let bytes = std::fs::read(&full).map_err(|e| RegistryError::io(&f.path, e))?;
        if skilldeck::Digest::of(&bytes) != f.sha256 {
            return Err(RegistryError::Internal(format!(
                "{}: changed while it was staged",
                f.path
            )));
        }
        files.push((f.clone(), Bytes::from(bytes)));
    }
    Ok(Staged {
        name: packed.name.clone(),
        meta_version: packed.version.clone(),
        fingerprint: packed.fingerprint().to_string(),
        // Control characters (a YAML "\0" escape decodes to NUL, which
        // PostgreSQL refuses in text) become spaces, as the deck does.
        description: skilldeck::spec::replace_controls_with(
            fm.description.as_deref().unwrap_or_default(),
            true,
            ' ',
        )
        .into_owned(),
        frontmatter: serde_json::to_value(&fm)?,
        files,
        archive: Bytes::from(packed.bytes),
        // Positions relative to the skill folder, like the version's file
        // list (`SKILL.md`): never this server's temporary folder.
        warnings: packed
            .warnings
            .into_iter()
            .map(|d| in_skill(d, &unpacked.dir))
            .collect(),
        skill_md,
        capabilities,
    })
}

/// A core diagnostic as the wire shows it.
pub fn wire_diagnostic(d: &Diagnostic) -> WireDiagnostic {
    WireDiagnostic {
        code: d.code.as_str().to_owned(),
        severity: if d.is_error() { "error" } else { "warning" }.to_owned(),
        message: d.message.clone(),
        file: d
            .file
            .as_ref()
            .map(|f| f.to_string_lossy().replace('\\', "/")),
        line: d.line,
        column: d.column,
    }
}

/// Parses a semver version, or 400 `registry-invalid-version`.
pub fn parse_version(text: &str) -> Result<semver::Version, RegistryError> {
    semver::Version::parse(text.trim()).map_err(|e| {
        RegistryError::bad_request(
            "registry-invalid-version",
            format!("'{text}' is not a semver 2.0 version: {e}"),
        )
    })
}

/// Moves `latest` to the highest non-yanked release (a prerelease only
/// when no release exists); removes it when every version is yanked.
pub(crate) async fn recompute_latest(
    tx: &mut Transaction<'static, Any>,
    skill: &SkillRef,
) -> Result<Option<String>, RegistryError> {
    let rows = sqlx::query(
        "SELECT version FROM versions WHERE namespace = $1 AND name = $2 AND yanked_at IS NULL",
    )
    .bind(skill.namespace().as_str().to_owned())
    .bind(skill.name().to_owned())
    .fetch_all(&mut **tx)
    .await?;
    let mut versions = Vec::new();
    for row in rows {
        let text: String = row.try_get("version")?;
        if let Ok(v) = semver::Version::parse(&text) {
            versions.push(v);
        }
    }
    let best = versions
        .iter()
        .filter(|v| v.pre.is_empty())
        .max()
        .or_else(|| versions.iter().max())
        .map(|v| v.to_string());
    match &best {
        Some(v) => {
            sqlx::query(
                "INSERT INTO labels (namespace, name, label, version, updated_at) VALUES ($1, $2, $3, $4, $5) \
                 ON CONFLICT (namespace, name, label) DO UPDATE SET version = excluded.version, updated_at = excluded.updated_at",
            )
            .bind(skill.namespace().as_str().to_owned())
            .bind(skill.name().to_owned())
            .bind(LATEST)
            .bind(v.clone())
            .bind(now())
            .execute(&mut **tx)
            .await?;
        }
        None => {
            sqlx::query("DELETE FROM labels WHERE namespace = $1 AND name = $2 AND label = $3")
                .bind(skill.namespace().as_str().to_owned())
                .bind(skill.name().to_owned())
                .bind(LATEST)
                .execute(&mut **tx)
                .await?;
        }
    }
    Ok(best)
}

impl Registry {
    /// Publishes a package (tar.gz or zip) into `ns`. The same content
    /// again is a no-op (`created: false`); other content under an
    /// existing version is 409 `registry-version-exists`.
    pub async fn publish(
        &self,
        p: &Principal,
        ns: &Namespace,
        version: Option<&str>,
        body: Bytes,
    ) -> Result<Published, RegistryError> {
        p.require_publish(ns)?;
        let limit = self.inner.limits.max_publish_bytes;
        if body.len() > limit {
            return Err(RegistryError::TooLarge { limit });
        }
        let limits = self.inner.limits.package;
        let within = self.inner.staging.dir().to_path_buf();
        let staged = tokio::task::spawn_blocking(move || stage(body, limits, &within))
            .await
            .map_err(|e| RegistryError::Internal(format!("publish task: {e}")))??;
        let version_text = match version
            .filter(|v| !v.is_empty())
            .or(staged.meta_version.as_deref())
        {
            Some(v) => parse_version(v)?.to_string(),
            None => {
                return Err(RegistryError::bad_request(
                    "registry-version-missing",
                    "no version: pass ?version= or set metadata.version in SKILL.md",
                ));
            }
        };
        let skill = SkillRef::new(ns.as_str(), &staged.name)?;
        if let Some(existing) = self.existing(&skill, &version_text).await? {
            return self
                .same_or_conflict(&skill, &version_text, existing, &staged.fingerprint)
                .await;
        }
        // Blobs first, under their content addresses: a version row never
        // exists before its blobs.
        for (f, bytes) in &staged.files {
            self.inner
                .store
                .put(&file_key_of(&f.sha256), bytes.clone())
                .await?;
        }
        let archive_digest = skilldeck::sha256_digest(&staged.archive);
        self.inner
            .store
            .put(&archive_key(&archive_digest)?, staged.archive.clone())
            .await?;
        let size: u64 = staged.files.iter().map(|(f, _)| f.size).sum();
        let report: Vec<WireDiagnostic> = staged.warnings.iter().map(wire_diagnostic).collect();
        let (mut tx, generation) = self.begin_write().await?;
        if let Some(existing) = existing_in(&mut tx, &skill, &version_text).await? {
            drop(tx);
            return self
                .same_or_conflict(&skill, &version_text, existing, &staged.fingerprint)
                .await;
        }
        let at = now();
        let ns_s = skill.namespace().as_str().to_owned();
        let name_s = skill.name().to_owned();
        sqlx::query(
            "INSERT INTO skills (namespace, name, created_at, updated_at) VALUES ($1, $2, $3, $3) \
             ON CONFLICT (namespace, name) DO UPDATE SET updated_at = excluded.updated_at",
        )
        .bind(ns_s.clone())
        .bind(name_s.clone())
        .bind(at.clone())
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "INSERT INTO versions (namespace, name, version, fingerprint, archive_sha256, archive_size, size, \
             description, capabilities, frontmatter, skill_md, report, published_by, published_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
        )
        .bind(ns_s.clone())
        .bind(name_s.clone())
        .bind(version_text.clone())
        .bind(staged.fingerprint.clone())
        .bind(archive_digest.clone())
        .bind(i64::try_from(staged.archive.len()).unwrap_or(i64::MAX))
        .bind(i64::try_from(size).unwrap_or(i64::MAX))
        .bind(staged.description.clone())
        .bind(staged.capabilities.join(" "))
        .bind(staged.frontmatter.to_string())
        .bind(staged.skill_md.clone())
        .bind(serde_json::to_string(&report)?)
        .bind(p.name.clone())
        .bind(at.clone())
        .execute(&mut *tx)
        .await?;
        for (f, _) in &staged.files {
            sqlx::query(
                "INSERT INTO version_files (namespace, name, version, path, size, sha256, executable) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7)",
            )
            .bind(ns_s.clone())
            .bind(name_s.clone())
            .bind(version_text.clone())
            .bind(f.path.clone())
            .bind(i64::try_from(f.size).unwrap_or(i64::MAX))
            .bind(f.sha256.to_string())
            .bind(i64::from(f.executable))
            .execute(&mut *tx)
            .await?;
        }
        let latest = recompute_latest(&mut tx, &skill).await?;
        Registry::audit_in(
            &mut tx,
            generation,
            p,
            "publish",
            &format!("{skill}@{version_text}"),
            serde_json::json!({"fingerprint": staged.fingerprint, "size": size, "latest": latest}),
        )
        .await?;
        self.commit(tx).await?;
        Ok(Published {
            namespace: skill.namespace().clone(),
            name: skill.name().to_owned(),
            version: version_text,
            fingerprint: staged.fingerprint,
            size,
            created: true,
            latest,
            report,
        })
    }

    async fn existing(
        &self,
        skill: &SkillRef,
        version: &str,
    ) -> Result<Option<Existing>, RegistryError> {
        let mut conn = self.inner.db.acquire().await?;
        existing_on(&mut conn, skill, version).await
    }

    async fn same_or_conflict(
        &self,
        skill: &SkillRef,
        version: &str,
        existing: Existing,
        fingerprint: &str,
    ) -> Result<Published, RegistryError> {
        if existing.fingerprint != fingerprint {
            return Err(RegistryError::conflict(
                "registry-version-exists",
                format!(
                    "{skill}@{version} is already published with other content ({}); versions are immutable",
                    existing.fingerprint
                ),
            ));
        }
        let latest: Option<String> = sqlx::query_scalar(
            "SELECT version FROM labels WHERE namespace = $1 AND name = $2 AND label = $3",
        )
        .bind(skill.namespace().as_str().to_owned())
        .bind(skill.name().to_owned())
        .bind(LATEST)
        .fetch_optional(&self.inner.db)
        .await?;
        Ok(Published {
            namespace: skill.namespace().clone(),
            name: skill.name().to_owned(),
            version: version.to_owned(),
            fingerprint: existing.fingerprint,
            size: existing.size,
            created: false,
            latest,
            report: existing.report,
        })
    }
}

/// A stored version's identity.
struct Existing {
    fingerprint: String,
    size: u64,
    report: Vec<WireDiagnostic>,
}

async fn existing_on(
    conn: &mut sqlx::AnyConnection,
    skill: &SkillRef,
    version: &str,
) -> Result<Option<Existing>, RegistryError> {
    let row = sqlx::query(
        "SELECT fingerprint, size, report FROM versions WHERE namespace = $1 AND name = $2 AND version = $3",
    )
    .bind(skill.namespace().as_str().to_owned())
    .bind(skill.name().to_owned())
    .bind(version.to_owned())
    .fetch_optional(&mut *conn)
    .await?;
    row.map(|row| {
        let report: String = row.try_get("report")?;
        let size: i64 = row.try_get("size")?;
        Ok(Existing {
            fingerprint: row.try_get("fingerprint")?,
            size: u64::try_from(size).unwrap_or(0),
            report: serde_json::from_str(&report)?,
        })
    })
    .transpose()
}

async fn existing_in(
    tx: &mut Transaction<'static, Any>,
    skill: &SkillRef,
    version: &str,
) -> Result<Option<Existing>, RegistryError> {
    existing_on(tx, skill, version).await
}

#[cfg(test)]
mod tests {
    use super::parse_capabilities;

    #[test]
    fn capabilities_are_comma_or_space_separated_words_sorted_and_deduplicated() {
        assert_eq!(
            parse_capabilities("network, gpu  fs.read,network").unwrap(),
            ["fs.read", "gpu", "network"]
        );
        assert!(parse_capabilities("").unwrap().is_empty());
        assert!(parse_capabilities("Network").is_err());
        assert!(parse_capabilities("-gpu").is_err());
        assert!(parse_capabilities("gpu;rm").is_err());
    }
}
