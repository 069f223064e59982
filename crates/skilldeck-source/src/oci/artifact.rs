//! The skill artifact's format: an OCI image manifest (v1.1, with
//! `artifactType`) of one config blob and one layer, the layer being
//! skilldeck's deterministic package of the skill, plus the annotations
//! that name it and carry its fingerprint. Built here for `push`, checked
//! here on every pull; no network.
//!
//! The media types are the Agent Skills OCI artifact convention
//! (`application/vnd.agentskills.*`, used by several skill tools), so an
//! artifact skilldeck pushes is read by them and theirs by skilldeck; the
//! fingerprint annotation is skilldeck's own.

use std::collections::BTreeMap;

use skilldeck::{Digest, Frontmatter};
use skilldeck_package::limits::MAX_PACKAGE_BYTES;

/// The manifest's `artifactType`: a skill.
pub const ARTIFACT_TYPE: &str = "application/vnd.agentskills.skill.v1";

/// The config blob's media type: the skill's frontmatter as JSON.
pub const CONFIG_MEDIA_TYPE: &str = "application/vnd.agentskills.skill.config.v1+json";

/// The layer's media type: the skill folder as a tar.gz whose one top
/// folder is the skill's name (skilldeck's package, `skilldeck pack`).
pub const LAYER_MEDIA_TYPE: &str = "application/vnd.agentskills.skill.content.v1.tar+gzip";

/// The OCI image manifest media type (what is pushed and accepted).
pub const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";

/// The OCI image index media type (recognised to say it is not a skill).
pub const INDEX_MEDIA_TYPE: &str = "application/vnd.oci.image.index.v1+json";

/// Annotation: the skill's content fingerprint (`sha256:...`, the one a
/// folder, a tar.gz and a zip of it share), checked against the layer's
/// content on every pull.
pub const ANNOTATION_FINGERPRINT: &str = "dev.skilldeck.skill.fingerprint";

/// Annotation: the skill's name (the Agent Skills convention's key).
pub const ANNOTATION_SKILL_NAME: &str = "io.agentskills.skill.name";

/// Annotation: the skill's name (the OCI pre-defined key).
pub const ANNOTATION_TITLE: &str = "org.opencontainers.image.title";

/// Annotation: the skill's `metadata.version`.
pub const ANNOTATION_VERSION: &str = "org.opencontainers.image.version";

/// Annotation: the skill's description.
pub const ANNOTATION_DESCRIPTION: &str = "org.opencontainers.image.description";

/// Largest manifest accepted (the distribution server's own limit).
pub const MAX_MANIFEST_BYTES: usize = 4 * 1024 * 1024;

/// Largest layer pulled: a package holds at most [`MAX_PACKAGE_BYTES`]
/// unpacked; incompressible content plus tar headers may compress to a
/// little more, never to half as much again.
pub const MAX_LAYER_BYTES: u64 = MAX_PACKAGE_BYTES + MAX_PACKAGE_BYTES / 2;

/// One descriptor of a manifest.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Descriptor {
    /// What the blob is.
    pub media_type: String,
    /// Its digest (`sha256:...`).
    pub digest: String,
    /// Its size in bytes.
    pub size: u64,
    /// Its annotations.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// An OCI image manifest, as far as a skill artifact needs (unknown
/// fields are ignored when reading).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    /// Always 2.
    pub schema_version: u32,
    /// [`MANIFEST_MEDIA_TYPE`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    /// [`ARTIFACT_TYPE`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_type: Option<String>,
    /// The config blob.
    pub config: Descriptor,
    /// The layers: one of [`LAYER_MEDIA_TYPE`].
    #[serde(default)]
    pub layers: Vec<Descriptor>,
    /// Name, version, description, fingerprint.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// The config blob: the frontmatter fields other tools read.
#[derive(Debug, serde::Serialize)]
struct SkillConfig<'a> {
    name: &'a str,
    description: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    version: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    license: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    compatibility: Option<&'a str>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    metadata: BTreeMap<&'a str, &'a str>,
    #[serde(rename = "allowed-tools", skip_serializing_if = "<[String]>::is_empty")]
    allowed_tools: &'a [String],
}

/// A skill artifact ready to push: its blobs and the manifest naming them.
#[derive(Debug, Clone)]
pub struct Artifact {
    /// The config blob.
    pub config: Vec<u8>,
    /// The manifest's bytes (what its digest is taken of).
    pub manifest: Vec<u8>,
    /// The manifest's digest.
    pub digest: Digest,
}

/// The artifact of a packed skill: `package` (its tar.gz), `name`,
/// `version`, `fingerprint` and `frontmatter` from the one validation of
/// the packed content. The same skill gives the same bytes (no time
/// stamp), so the same manifest digest.
pub fn build(
    package: &[u8],
    name: &str,
    version: Option<&str>,
    fingerprint: &Digest,
    frontmatter: &Frontmatter,
) -> Artifact {
    let description = frontmatter.description.as_deref().unwrap_or_default();
    let config = SkillConfig {
        name,
        description,
        version,
        license: frontmatter.license.as_deref(),
        compatibility: frontmatter.compatibility.as_deref(),
        metadata: frontmatter
            .metadata
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect(),
        allowed_tools: &frontmatter.allowed_tools,
    };
    // A struct of strings and maps of strings always serialises.
    let config = serde_json::to_vec(&config).unwrap_or_default();
    let mut annotations = BTreeMap::new();
    annotations.insert(ANNOTATION_FINGERPRINT.to_owned(), fingerprint.to_string());
    annotations.insert(ANNOTATION_SKILL_NAME.to_owned(), name.to_owned());
    annotations.insert(ANNOTATION_TITLE.to_owned(), name.to_owned());
    if !description.is_empty() {
        annotations.insert(ANNOTATION_DESCRIPTION.to_owned(), description.to_owned());
    }
    if let Some(v) = version {
        annotations.insert(ANNOTATION_VERSION.to_owned(), v.to_owned());
    }
    let file_name = match version {
        Some(v) => format!("{name}-{v}.tar.gz"),
        None => format!("{name}.tar.gz"),
    };
    let manifest = Manifest {
        schema_version: 2,
        media_type: Some(MANIFEST_MEDIA_TYPE.to_owned()),
        artifact_type: Some(ARTIFACT_TYPE.to_owned()),
        config: Descriptor {
            media_type: CONFIG_MEDIA_TYPE.to_owned(),
            digest: Digest::of(&config).to_string(),
            size: config.len() as u64,
            annotations: BTreeMap::new(),
        },
        layers: vec![Descriptor {
            media_type: LAYER_MEDIA_TYPE.to_owned(),
            digest: Digest::of(package).to_string(),
            size: package.len() as u64,
            annotations: BTreeMap::from([(ANNOTATION_TITLE.to_owned(), file_name)]),
        }],
        annotations,
    };
    let manifest = serde_json::to_vec(&manifest).unwrap_or_default();
    let digest = Digest::of(&manifest);
    Artifact {
        config,
        manifest,
        digest,
    }
}

/// What a pulled manifest says about its skill, once checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    /// The layer's digest.
    pub layer: Digest,
    /// The layer's size.
    pub layer_size: u64,
    /// The fingerprint annotation (`None`: not pushed by skilldeck).
    pub fingerprint: Option<Digest>,
    /// The skill's name as annotated.
    pub name: Option<String>,
}

/// Checks the manifest `body`: an OCI image manifest of a skill artifact,
/// with exactly one layer of [`LAYER_MEDIA_TYPE`] within
/// [`MAX_LAYER_BYTES`] and a well-formed fingerprint annotation when there
/// is one. The error says what the manifest is instead.
pub fn check(body: &[u8]) -> Result<Checked, String> {
    if body.len() > MAX_MANIFEST_BYTES {
        return Err(format!(
            "the manifest is {} bytes, more than the {MAX_MANIFEST_BYTES} accepted",
            body.len()
        ));
    }
    let value: serde_json::Value =
        serde_json::from_slice(body).map_err(|e| format!("the manifest is not JSON: {e}"))?;
    if value.get("mediaType").and_then(|m| m.as_str()) == Some(INDEX_MEDIA_TYPE)
        || value.get("manifests").is_some()
    {
        return Err(
            "it names an image index (a list of manifests, as for multi-platform images), \
             not a skill artifact: name one skill manifest by its digest, or push the skill \
             with `skilldeck push`"
                .into(),
        );
    }
    let manifest: Manifest = serde_json::from_value(value)
        .map_err(|e| format!("the manifest is not an OCI image manifest: {e}"))?;
    if manifest.schema_version != 2 {
        return Err(format!(
            "the manifest's schemaVersion is {}, not 2",
            manifest.schema_version
        ));
    }
    if let Some(m) = &manifest.media_type
        && m != MANIFEST_MEDIA_TYPE
    {
        return Err(format!(
            "the manifest's mediaType is {m}, not {MANIFEST_MEDIA_TYPE} (a Docker image \
             manifest is not a skill artifact)"
        ));
    }
    let is_skill = match &manifest.artifact_type {
        Some(t) => t == ARTIFACT_TYPE,
        None => manifest.config.media_type == CONFIG_MEDIA_TYPE,
    };
    if !is_skill {
        return Err(format!(
            "it is not a skill artifact: its artifactType is {} (config {}); a skill's is \
             {ARTIFACT_TYPE}",
            manifest.artifact_type.as_deref().unwrap_or("(none)"),
            manifest.config.media_type
        ));
    }
    let layers: Vec<&Descriptor> = manifest
        .layers
        .iter()
        .filter(|l| l.media_type == LAYER_MEDIA_TYPE)
        .collect();
    let layer = match layers.as_slice() {
        [one] => *one,
        [] => {
            return Err(format!(
                "the manifest has no layer of media type {LAYER_MEDIA_TYPE} (the skill's content)"
            ));
        }
        more => {
            return Err(format!(
                "the manifest has {} layers of media type {LAYER_MEDIA_TYPE}; a skill artifact \
                 has one",
                more.len()
            ));
        }
    };
    let digest = Digest::parse(&layer.digest).map_err(|_| {
        format!(
            "the layer's digest '{}' is not sha256: and 64 hex digits",
            layer.digest
        )
    })?;
    if layer.size > MAX_LAYER_BYTES {
        return Err(format!(
            "the layer is {} bytes, more than the {MAX_LAYER_BYTES} a skill package may be",
            layer.size
        ));
    }
    let fingerprint = manifest
        .annotations
        .get(ANNOTATION_FINGERPRINT)
        .map(|f| {
            Digest::parse(f).map_err(|_| {
                format!(
                    "the annotation {ANNOTATION_FINGERPRINT} is not a sha256 fingerprint: '{f}'"
                )
            })
        })
        .transpose()?;
    let name = manifest
        .annotations
        .get(ANNOTATION_SKILL_NAME)
        .or_else(|| manifest.annotations.get(ANNOTATION_TITLE))
        .cloned();
    Ok(Checked {
        layer: digest,
        layer_size: layer.size,
        fingerprint,
        name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frontmatter() -> Frontmatter {
        Frontmatter {
            name: Some("pdf".into()),
            description: Some("Reads PDFs.".into()),
            metadata: vec![("version".into(), "1.0.0".into())],
            ..Frontmatter::default()
        }
    }

    #[test]
    fn the_built_manifest_is_deterministic_and_passes_its_own_check() {
        let fp = Digest::of(b"content");
        let a = build(b"tar", "pdf", Some("1.0.0"), &fp, &frontmatter());
        let b = build(b"tar", "pdf", Some("1.0.0"), &fp, &frontmatter());
        assert_eq!(a.manifest, b.manifest);
        assert_eq!(a.digest, Digest::of(&a.manifest));
        let c = check(&a.manifest).unwrap();
        assert_eq!(c.layer, Digest::of(b"tar"));
        assert_eq!(c.fingerprint, Some(fp));
        assert_eq!(c.name.as_deref(), Some("pdf"));
        let m: serde_json::Value = serde_json::from_slice(&a.manifest).unwrap();
        assert_eq!(m["artifactType"], ARTIFACT_TYPE);
        assert_eq!(m["layers"][0]["mediaType"], LAYER_MEDIA_TYPE);
        assert_eq!(m["config"]["mediaType"], CONFIG_MEDIA_TYPE);
        assert_eq!(m["annotations"][ANNOTATION_VERSION], "1.0.0");
        assert_eq!(m["annotations"][ANNOTATION_DESCRIPTION], "Reads PDFs.");
        let config: serde_json::Value = serde_json::from_slice(&a.config).unwrap();
        assert_eq!(config["name"], "pdf");
        assert_eq!(config["metadata"]["version"], "1.0.0");
    }

    fn manifest_with(edit: impl FnOnce(&mut serde_json::Value)) -> Vec<u8> {
        let a = build(b"tar", "pdf", None, &Digest::of(b"x"), &frontmatter());
        let mut v: serde_json::Value = serde_json::from_slice(&a.manifest).unwrap();
        edit(&mut v);
        serde_json::to_vec(&v).unwrap()
    }

    #[test]
    fn manifests_that_are_not_one_skill_are_refused_saying_what_they_are() {
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (b"not json".to_vec(), "not JSON"),
            (
                br#"{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[]}"#.to_vec(),
                "image index",
            ),
            (
                manifest_with(|v| v["artifactType"] = "application/vnd.example.other".into()),
                "not a skill artifact",
            ),
            (
                manifest_with(|v| v["layers"][0]["mediaType"] = "application/octet-stream".into()),
                "no layer",
            ),
            (
                manifest_with(|v| {
                    let l = v["layers"][0].clone();
                    v["layers"].as_array_mut().unwrap().push(l);
                }),
                "2 layers",
            ),
            (
                manifest_with(|v| v["layers"][0]["size"] = (MAX_LAYER_BYTES + 1).into()),
                "more than",
            ),
            (
                manifest_with(|v| v["annotations"][ANNOTATION_FINGERPRINT] = "md5:abc".into()),
                "not a sha256 fingerprint",
            ),
            (
                manifest_with(|v| v["layers"][0]["digest"] = "sha256:zz".into()),
                "not sha256:",
            ),
            (manifest_with(|v| v["schemaVersion"] = 1.into()), "schemaVersion"),
            (
                manifest_with(|v| {
                    v["mediaType"] =
                        "application/vnd.docker.distribution.manifest.v2+json".into()
                }),
                "Docker image",
            ),
        ];
        for (body, want) in cases {
            let e = check(&body).unwrap_err();
            assert!(e.contains(want), "{want}: {e}");
        }
        let big = vec![b' '; MAX_MANIFEST_BYTES + 1];
        assert!(check(&big).unwrap_err().contains("more than"));
    }

    #[test]
    fn an_artifact_of_another_tool_without_the_fingerprint_annotation_is_read() {
        let body = manifest_with(|v| {
            v["annotations"]
                .as_object_mut()
                .unwrap()
                .remove(ANNOTATION_FINGERPRINT);
            v.as_object_mut().unwrap().remove("artifactType");
        });
        let c = check(&body).unwrap();
        assert_eq!(c.fingerprint, None);
    }
}
