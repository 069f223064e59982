//! Publish: a package body, read once into a [`ValidatedUpload`]
//! (`skilldeck_package::unpack_bytes` streams each entry, with its
//! hostile-archive refusals, into a private folder under the registry's
//! [staging](crate::service::staging) folder and past its digest, keeping
//! the bytes; the skill is validated once there) → the canonical tar.gz,
//! packed from those bytes and digests → blobs under their content
//! addresses → one write that makes the version visible.
//!
//! The single pass is in the types: a [`ValidatedUpload`] is made only by
//! [`ValidatedUpload::read`], and everything after it (the archive, the
//! blobs, the rows, the report) reads its fields; nothing after it holds
//! a path to read, validate or hash again.

use std::path::Path;

use bytes::Bytes;
use skilldeck::environment::{Dependencies, LockedEnvironment};
use skilldeck::{Diagnostic, FileDigest, Mode, SkillManifest, ValidationOptions};
use skilldeck_package::{ArchiveFormat, PackageLimits, UnpackOptions};

use crate::error::RegistryError;
use crate::names::{LATEST, Namespace, SkillRef};
use crate::service::metrics::{failure_outcome, metrics};
use crate::service::principal::Principal;
use crate::service::registry::Registry;
use crate::service::signing;
use crate::service::store::{archive_key, file_key_of};
use crate::storage::db::{Write, now};
use crate::storage::versions::{Identity, NewVersion};
use crate::storage::{labels, policies, skills, versions};
use crate::wire::{
    Published, REPORT_LENIENT, REPORT_STRICT, ReviewState, StoredReport, WireAudit, WireDiagnostic,
    WireFinding,
};

/// An upload read once: unpacked (each file written once, hashed once as
/// it streamed), validated once, and packed into the canonical archive
/// from the bytes read. Made only by [`ValidatedUpload::read`].
struct ValidatedUpload {
    /// The skill's name.
    name: String,
    /// Its `metadata.version`, when it has one.
    meta_version: Option<String>,
    /// Every file with the digest taken as it was unpacked.
    manifest: SkillManifest,
    /// Each file's bytes, in the manifest's order.
    contents: Vec<Bytes>,
    /// The canonical tar.gz.
    archive: Bytes,
    /// `sha256:<hex>` of the canonical tar.gz.
    archive_digest: String,
    /// `sha256:<hex>` of the well-known index's tar.gz (files at the
    /// root; rebuilt from the canonical archive when downloaded).
    root_archive_digest: String,
    /// What `skilldeck validate` says for the package under the
    /// registry's report mode, naming files inside the skill.
    report: Vec<Diagnostic>,
    /// That mode ([`REPORT_LENIENT`] or [`REPORT_STRICT`]).
    report_mode: &'static str,
    /// The SKILL.md text.
    skill_md: String,
    /// The frontmatter, as stored.
    frontmatter: serde_json::Value,
    /// The description, control characters made spaces.
    description: String,
    /// The required capabilities.
    capabilities: Vec<String>,
    /// The static risk audit of every file, prose included.
    audit: skilldeck_audit::SkillAudit,
    /// What the skill declares (`requirements.txt`, `pyproject.toml`,
    /// `package.json`), or why that cannot be read: a published
    /// resolution must be for exactly these.
    declared: Result<Vec<Dependencies>, String>,
}

/// Bytes of the resolution a publish may carry (JSON): generous for the
/// largest sets
/// [`MAX_PUBLISHED_PACKAGES`](skilldeck::environment::MAX_PUBLISHED_PACKAGES) allows with every artifact
/// hash pinned, far below what a version row should hold.
pub const MAX_ENVIRONMENTS_BYTES: usize = 4 * 1024 * 1024;

/// Records (kinds) one resolution may hold: Python and Node.
pub const MAX_ENVIRONMENTS: usize = 2;

/// The stable code of a refused resolution.
pub const INVALID_ENVIRONMENTS: &str = "registry-invalid-environments";

/// Parses the resolution a publish carries (JSON, a list of environment
/// records), bounded: at most [`MAX_ENVIRONMENTS_BYTES`] and
/// [`MAX_ENVIRONMENTS`] records; refused (400
/// `registry-invalid-environments`) when it is not that. Its content is
/// checked against the skill once the package is read
/// ([`skilldeck::environment::check_published`]).
pub fn parse_environments(bytes: &[u8]) -> Result<Vec<LockedEnvironment>, RegistryError> {
    let bad = |why: String| {
        RegistryError::bad_request(
            INVALID_ENVIRONMENTS,
            format!(
                "the publish's resolution is refused: {why} (expected a JSON list of environment \
                 records as `skilldeck publish` sends; publish without one with --no-environments)"
            ),
        )
    };
    if bytes.len() > MAX_ENVIRONMENTS_BYTES {
        return Err(bad(format!(
            "{} bytes, more than {MAX_ENVIRONMENTS_BYTES}",
            bytes.len()
        )));
    }
    let envs: Vec<LockedEnvironment> =
        serde_json::from_slice(bytes).map_err(|e| bad(format!("not valid JSON: {e}")))?;
    if envs.len() > MAX_ENVIRONMENTS {
        return Err(bad(format!(
            "{} records, more than {MAX_ENVIRONMENTS} (one per kind)",
            envs.len()
        )));
    }
    Ok(envs)
}

/// A finding as the wire carries it.
pub fn wire_finding(f: &skilldeck_audit::Finding) -> WireFinding {
    WireFinding {
        code: f.code.clone(),
        severity: f.severity.as_str().to_owned(),
        class: f.class.as_str().to_owned(),
        file: f.file.clone(),
        line: f.line,
        column: f.column,
        evidence: f.evidence.clone(),
        message: f.message.clone(),
        allowed: f.allowed.clone(),
    }
}

/// The validation a published skill passes: what a host can load
/// (lenient, without the advisory lints), as `unpack` applies it.
fn publish_validation() -> ValidationOptions {
    UnpackOptions::default().validation
}

/// The validation of a version's stored report: what `skilldeck validate
/// --lenient` or `--strict` runs (the advisory lints included), with no
/// config's allow or deny lists (the registry has none), so the report
/// equals `skilldeck validate --format json` of the same package.
fn report_validation(mode: Mode) -> ValidationOptions {
    ValidationOptions {
        mode,
        ..ValidationOptions::default()
    }
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

impl ValidatedUpload {
    /// Reads `body` once under `within` (this process's staging folder,
    /// never the system's temporary folder: a killed publish's leftovers
    /// are swept at the next start); the folder is removed on return.
    fn read(
        body: &[u8],
        limits: PackageLimits,
        within: &Path,
        report_mode: Mode,
    ) -> Result<ValidatedUpload, RegistryError> {
        let tmp = tempfile::Builder::new()
            .prefix("publish-")
            .tempdir_in(within)
            .map_err(|e| RegistryError::io(within, e))?;
        // Refusals name the body `package`, never a path of this server.
        let package = Path::new("package");
        let refused = |e: skilldeck_package::Error| match e {
            skilldeck_package::Error::Refused(ds) => RegistryError::Refused(
                ds.into_iter()
                    .map(|d| relative_file(d, tmp.path(), package))
                    .collect(),
            ),
            other => RegistryError::Internal(format!("unpack: {other}")),
        };
        let options = UnpackOptions {
            limits,
            validation: publish_validation(),
        };
        let read =
            skilldeck_package::unpack_bytes(body, package, &tmp.path().join("staging"), &options)
                .map_err(refused)?;
        let unpacked = read.unpacked;
        let archive = skilldeck_package::archive(
            &unpacked.name,
            &unpacked.manifest,
            &read.contents,
            ArchiveFormat::TarGz,
        )
        .map_err(|e| RegistryError::Internal(format!("packing the canonical archive: {e}")))?;
        let root_archive = skilldeck_package::archive_at_root(
            &unpacked.manifest,
            &read.contents,
            ArchiveFormat::TarGz,
        )
        .map_err(|e| RegistryError::Internal(format!("packing the index archive: {e}")))?;
        let contents: Vec<Bytes> = read.contents.into_iter().map(Bytes::from).collect();
        let skill_md = unpacked
            .manifest
            .files()
            .iter()
            .position(|f| f.path == "SKILL.md")
            .and_then(|i| contents.get(i))
            .map(|bytes| String::from_utf8_lossy(bytes).into_owned())
            .ok_or_else(|| RegistryError::Internal("SKILL.md: not in the package".to_owned()))?;
        let fm = unpacked.frontmatter.unwrap_or_default();
        // `metadata.capabilities` and seed 004's top-level
        // `required_capabilities`, merged by the core.
        let capabilities = parse_capabilities(&fm.capabilities.join(" ")).map_err(|why| {
            RegistryError::bad_request(
                "registry-invalid-capabilities",
                format!("SKILL.md: metadata.capabilities / required_capabilities: {why}"),
            )
        })?;
        // Audited from the bytes read (the registry's audit has no allow
        // list: a finding is the publisher's to fix, or the reviewer's to
        // weigh).
        let files: Vec<skilldeck_audit::SkillFile<'_>> = unpacked
            .manifest
            .files()
            .iter()
            .zip(&contents)
            .map(|(f, bytes)| skilldeck_audit::SkillFile {
                path: f.path.as_str(),
                bytes,
            })
            .collect();
        let audit = skilldeck_audit::audit_files(
            Path::new(&unpacked.name),
            &files,
            &skilldeck_audit::AuditOptions::default(),
        );
        Ok(ValidatedUpload {
            audit,
            name: unpacked.name,
            meta_version: unpacked.version,
            archive_digest: skilldeck::sha256_digest(&archive),
            root_archive_digest: skilldeck::sha256_digest(&root_archive),
            archive: Bytes::from(archive),
            // Control characters (a YAML "\0" escape decodes to NUL, which
            // PostgreSQL refuses in text) become spaces, as the deck does.
            description: skilldeck::spec::replace_controls_with(
                fm.description.as_deref().unwrap_or_default(),
                true,
                ' ',
            )
            .into_owned(),
            frontmatter: serde_json::to_value(&fm)?,
            // Positions relative to the skill folder, like the version's
            // file list (`SKILL.md`): never this server's temporary folder.
            report: skilldeck::validate_dir(&unpacked.dir, &report_validation(report_mode))
                .diagnostics
                .into_iter()
                .map(|d| in_skill(d, &unpacked.dir))
                .collect(),
            report_mode: match report_mode {
                Mode::Strict => REPORT_STRICT,
                Mode::Lenient => REPORT_LENIENT,
            },
            declared: skilldeck::environment::declared_dependencies(&unpacked.dir).map_err(|ds| {
                ds.into_iter()
                    .map(|d| in_skill(d, &unpacked.dir).to_string())
                    .collect::<Vec<_>>()
                    .join("; ")
            }),
            manifest: unpacked.manifest,
            contents,
            skill_md,
            capabilities,
        })
    }

    /// The content fingerprint.
    fn fingerprint(&self) -> String {
        self.manifest.fingerprint().to_string()
    }

    /// Each file with its bytes.
    fn files(&self) -> impl Iterator<Item = (&FileDigest, &Bytes)> {
        self.manifest.files().iter().zip(&self.contents)
    }
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
    w: &mut Write,
    skill: &SkillRef,
) -> Result<Option<String>, RegistryError> {
    let versions: Vec<semver::Version> = versions::live_in(w, skill)
        .await?
        .iter()
        .filter_map(|text| semver::Version::parse(text).ok())
        .collect();
    let best = versions
        .iter()
        .filter(|v| v.pre.is_empty())
        .max()
        .or_else(|| versions.iter().max())
        .map(|v| v.to_string());
    match &best {
        Some(v) => labels::set(w, skill, LATEST, v, &now()).await?,
        None => labels::remove(w, skill, LATEST).await?,
    }
    Ok(best)
}

impl Registry {
    /// Publishes a package (tar.gz or zip) into `ns`, with its SSH
    /// signature when given (checked against the namespace's registered keys)
    /// and the resolution of its dependencies when given (JSON,
    /// [`parse_environments`], checked against what the skill declares and
    /// stored with the version). The same content
    /// again is a no-op (`created: false`, the stored resolution kept:
    /// versions are immutable); other content under an
    /// existing version is 409 `registry-version-exists`. Counted in
    /// `/metrics` by outcome (created, unchanged, refused, failed).
    pub async fn publish(
        &self,
        p: &Principal,
        ns: &Namespace,
        version: Option<&str>,
        body: Bytes,
        signature: Option<&[u8]>,
        environments: Option<&[u8]>,
    ) -> Result<Published, RegistryError> {
        let result = self
            .publish_package(p, ns, version, body, signature, environments)
            .await;
        metrics().publish(match &result {
            Ok(published) if published.created => "created",
            Ok(_) => "unchanged",
            Err(e) => failure_outcome(e),
        });
        result
    }

    async fn publish_package(
        &self,
        p: &Principal,
        ns: &Namespace,
        version: Option<&str>,
        body: Bytes,
        signature: Option<&[u8]>,
        environments: Option<&[u8]>,
    ) -> Result<Published, RegistryError> {
        p.require_publish(ns)?;
        let limit = self.inner.limits.max_publish_bytes;
        if body.len() > limit {
            return Err(RegistryError::TooLarge { limit });
        }
        let environments = environments
            .map(parse_environments)
            .transpose()?
            .unwrap_or_default();
        let limits = self.inner.limits.package;
        let within = self.inner.staging.dir().to_path_buf();
        let report_mode = self.inner.report.mode;
        let upload = tokio::task::spawn_blocking(move || {
            ValidatedUpload::read(&body, limits, &within, report_mode)
        })
        .await
        .map_err(|e| RegistryError::Internal(format!("publish task: {e}")))??;
        let version_text = match version
            .filter(|v| !v.is_empty())
            .or(upload.meta_version.as_deref())
        {
            Some(v) => parse_version(v)?.to_string(),
            None => {
                return Err(RegistryError::bad_request(
                    "registry-version-missing",
                    "no version: pass ?version= or set metadata.version in SKILL.md",
                ));
            }
        };
        let skill = SkillRef::new(ns.as_str(), &upload.name)?;
        let threshold = self.inner.trust.refuse_publish_at;
        if upload.audit.verdict.at_least(threshold) {
            return Err(RegistryError::RiskRefused {
                verdict: upload.audit.verdict.as_str().to_owned(),
                threshold: threshold.as_str().to_owned(),
                findings: upload.audit.at_least(threshold).map(wire_finding).collect(),
            });
        }
        if !environments.is_empty() {
            let declared = upload.declared.as_ref().map_err(|why| {
                RegistryError::unprocessable(
                    INVALID_ENVIRONMENTS,
                    format!("the publish carries a resolution, but the skill's declared dependencies cannot be read: {why}"),
                )
            })?;
            skilldeck::environment::check_published(&environments, declared).map_err(|why| {
                RegistryError::unprocessable(
                    INVALID_ENVIRONMENTS,
                    format!(
                        "the publish's resolution is refused: {why}; publish again with \
                         `skilldeck publish` (which resolves the skill's dependencies), or \
                         without a resolution (--no-environments)"
                    ),
                )
            })?;
        }
        let fingerprint = upload.fingerprint();
        if let Some(existing) = versions::identity(&self.inner.db, &skill, &version_text).await? {
            return self
                .same_or_conflict(&skill, &version_text, existing, &fingerprint)
                .await;
        }
        // Blobs first, under their content addresses: a version row never
        // exists before its blobs.
        for (f, bytes) in upload.files() {
            self.inner
                .store
                .put(&file_key_of(&f.sha256), bytes.clone())
                .await?;
        }
        self.inner
            .store
            .put(
                &archive_key(&upload.archive_digest)?,
                upload.archive.clone(),
            )
            .await?;
        let size: u64 = upload.manifest.total_size();
        let report = StoredReport {
            mode: upload.report_mode.to_owned(),
            diagnostics: upload.report.iter().map(wire_diagnostic).collect(),
        };
        let mut w = self.begin_write().await?;
        if let Some(existing) = versions::identity_in(&mut w, &skill, &version_text).await? {
            drop(w);
            return self
                .same_or_conflict(&skill, &version_text, existing, &fingerprint)
                .await;
        }
        let at = now();
        // A namespace that requires review holds the version back until
        // a reviewer approves it.
        let signed = signing::check_publish(&mut w, ns, &fingerprint, signature).await?;
        let review = if policies::get_in(&mut w, ns).await?.require_review {
            ReviewState::Pending
        } else {
            ReviewState::Released
        };
        skills::touch(&mut w, &skill, &at).await?;
        versions::insert(
            &mut w,
            &NewVersion {
                skill: &skill,
                version: &version_text,
                fingerprint: &fingerprint,
                archive_sha256: &upload.archive_digest,
                archive_size: upload.archive.len() as u64,
                root_archive_sha256: &upload.root_archive_digest,
                size,
                description: &upload.description,
                capabilities: &upload.capabilities,
                frontmatter: &upload.frontmatter,
                skill_md: &upload.skill_md,
                report: &report,
                published_by: &p.name,
                published_at: &at,
                files: upload.manifest.files(),
                review,
                signed: signed
                    .as_ref()
                    .map(|s| (s.signature.as_str(), s.signer.as_str())),
                audit: &WireAudit {
                    verdict: upload.audit.verdict.as_str().to_owned(),
                    findings: upload.audit.findings.iter().map(wire_finding).collect(),
                },
                environments: &environments,
            },
        )
        .await?;
        let latest = recompute_latest(&mut w, &skill).await?;
        Registry::audit_in(
            &mut w,
            p,
            "publish",
            &format!("{skill}@{version_text}"),
            serde_json::json!({
                "fingerprint": fingerprint, "size": size, "latest": latest,
                "review": review.as_str(),
                "signer": signed.as_ref().map(|s| s.signer.as_str()),
                "verdict": upload.audit.verdict.as_str(),
                "environments": environments.iter().map(|e| serde_json::json!({
                    "kind": e.kind.as_str(), "key": e.key.to_string(), "packages": e.packages.len(),
                })).collect::<Vec<_>>(),
            }),
        )
        .await?;
        self.commit_scoped(w, &[crate::service::fresh::Scope::Skills])
            .await?;
        Ok(Published {
            namespace: skill.namespace().clone(),
            name: skill.name().to_owned(),
            version: version_text,
            fingerprint,
            size,
            created: true,
            latest,
            report: report.diagnostics,
            report_mode: report.mode,
            review,
            environments,
        })
    }

    async fn same_or_conflict(
        &self,
        skill: &SkillRef,
        version: &str,
        existing: Identity,
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
        let latest = labels::get(&self.inner.db, skill, LATEST).await?;
        let review = versions::state_of(&self.inner.db, skill, version)
            .await?
            .map(|s| s.review)
            .unwrap_or_default();
        Ok(Published {
            namespace: skill.namespace().clone(),
            name: skill.name().to_owned(),
            version: version.to_owned(),
            fingerprint: existing.fingerprint,
            size: existing.size,
            created: false,
            latest,
            report: existing.report.diagnostics,
            report_mode: existing.report.mode,
            review,
            environments: existing.environments,
        })
    }
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
