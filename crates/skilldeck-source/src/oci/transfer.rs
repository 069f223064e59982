//! Push and pull of skill artifacts over the OCI distribution API, with
//! [`oci_client`] (auth challenges, token exchange, blob and manifest
//! transfer) on a current-thread tokio runtime: the functions block.
//!
//! Pull checks, in order: the manifest's bytes against the digest asked
//! for (or the one the tag resolved to), the manifest's form
//! ([`artifact::check`]), the fingerprint annotation against the lock's
//! (a frozen install), the layer's bytes against its descriptor (size and
//! digest, counted as they stream, so a registry sending more stops
//! early), then the unpacked skill's fingerprint against the annotation.
//! Any mismatch refuses, naming both values; nothing is installed.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use futures::StreamExt as _;
use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::errors::{OciDistributionError, OciErrorCode};
use oci_client::manifest::OciDescriptor;
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};
use skilldeck::Digest;
use skilldeck_package::{PackOptions, Source, UnpackOptions};

use super::artifact::{self, INDEX_MEDIA_TYPE, MANIFEST_MEDIA_TYPE};
use super::credentials::Credentials;
use super::reference::OciRef;
use crate::error::Error;

/// Longest wait for a connection to a registry.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// Longest wait for the next bytes of an answer.
pub const READ_TIMEOUT: Duration = Duration::from_secs(60);

/// Most tags named in the hint of a missing tag.
pub const MAX_TAGS_SHOWN: usize = 20;

/// How to reach a registry.
#[derive(Debug, Clone)]
pub struct OciOptions {
    /// Who to authenticate as.
    pub credentials: Credentials,
    /// Plain http to a registry that is not on this machine (loopback
    /// registries get http without it).
    pub insecure_http: bool,
}

impl Default for OciOptions {
    fn default() -> Self {
        OciOptions {
            credentials: Credentials::Anonymous,
            insecure_http: false,
        }
    }
}

/// What a push did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Pushed {
    /// The skill's name.
    pub name: String,
    /// Its `metadata.version`.
    pub version: Option<String>,
    /// Its content fingerprint (also the manifest's annotation).
    pub fingerprint: Digest,
    /// Where it was pushed, as given (`oci://HOST/REPO:TAG`).
    pub reference: String,
    /// The manifest's digest.
    pub digest: Digest,
    /// The reference a lock records when it is installed
    /// (`oci://HOST/REPO@sha256:...`).
    pub canonical: String,
    /// The layer's size in bytes.
    pub size: u64,
    /// Validation warnings of the packed skill.
    #[serde(skip)]
    pub warnings: Vec<skilldeck::Diagnostic>,
}

/// A skill pulled and checked, waiting in a temporary folder (removed
/// when this is dropped) to be installed.
#[derive(Debug)]
pub struct Pulled {
    /// The layer, a tar.gz package.
    pub package: PathBuf,
    /// The canonical source (`oci://HOST/REPO@sha256:...`).
    pub source: String,
    /// The manifest's digest.
    pub digest: Digest,
    /// The tag it was pulled by, if any.
    pub tag: Option<String>,
    /// The skill's fingerprint (the annotation's, checked).
    pub fingerprint: Digest,
    /// False when the manifest had no fingerprint annotation (an artifact
    /// another tool pushed): the fingerprint is then only the content's.
    pub annotated: bool,
    _dir: tempfile::TempDir,
}

impl Pulled {
    /// The install source: the package, recorded as [`Pulled::source`],
    /// refused unless its content has [`Pulled::fingerprint`].
    pub fn to_source(&self) -> Source {
        Source::Fetched {
            package: self.package.clone(),
            source: self.source.clone(),
            fingerprint: self.fingerprint,
            signature: None,
            published: Vec::new(),
        }
    }
}

fn oci_error(reference: &OciRef, message: String) -> Error {
    Error::Oci {
        reference: reference.to_string(),
        message,
    }
}

fn runtime(reference: &OciRef) -> Result<tokio::runtime::Runtime, Error> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| oci_error(reference, format!("cannot start the network runtime: {e}")))
}

fn client(reference: &OciRef, options: &OciOptions) -> (Client, RegistryAuth) {
    let plain = reference.is_loopback() || options.insecure_http;
    let config = ClientConfig {
        protocol: if plain {
            ClientProtocol::HttpsExcept(vec![reference.registry.clone()])
        } else {
            ClientProtocol::Https
        },
        // An index is refused, not resolved to a platform.
        platform_resolver: None,
        connect_timeout: Some(CONNECT_TIMEOUT),
        read_timeout: Some(READ_TIMEOUT),
        user_agent: concat!("skilldeck/", env!("CARGO_PKG_VERSION")),
        ..ClientConfig::default()
    };
    let auth = match &options.credentials {
        Credentials::Anonymous => RegistryAuth::Anonymous,
        Credentials::Basic { username, password } => {
            RegistryAuth::Basic(username.clone(), password.clone())
        }
        Credentials::Bearer(t) => RegistryAuth::Bearer(t.clone()),
    };
    (Client::new(config), auth)
}

fn oci_reference(reference: &OciRef) -> Reference {
    match (&reference.tag, &reference.digest) {
        (_, Some(d)) => Reference::with_digest(
            reference.registry.clone(),
            reference.repository.clone(),
            d.to_string(),
        ),
        (Some(t), None) => Reference::with_tag(
            reference.registry.clone(),
            reference.repository.clone(),
            t.clone(),
        ),
        (None, None) => Reference::with_tag(
            reference.registry.clone(),
            reference.repository.clone(),
            super::reference::DEFAULT_TAG.into(),
        ),
    }
}

/// The message of a client error, with what to do next.
fn explain(reference: &OciRef, options: &OciOptions, e: &OciDistributionError) -> String {
    let codes: Vec<&OciErrorCode> = match e {
        OciDistributionError::RegistryError { envelope, .. } => {
            envelope.errors.iter().map(|x| &x.code).collect()
        }
        _ => Vec::new(),
    };
    let unauthorized = matches!(e, OciDistributionError::UnauthorizedError { .. })
        || matches!(e, OciDistributionError::AuthenticationFailure(_))
        || codes
            .iter()
            .any(|c| matches!(c, OciErrorCode::Unauthorized | OciErrorCode::Denied));
    if unauthorized {
        let who = match options.credentials {
            Credentials::Anonymous => "no credentials were sent",
            _ => "the credentials were refused",
        };
        return format!(
            "the registry {} refused access ({who}): pass --oci-credentials FILE (a Docker \
             config.json), set {} and {} (or {}), or run `docker login {}`",
            reference.registry,
            super::credentials::USERNAME_ENV,
            super::credentials::PASSWORD_ENV,
            super::credentials::TOKEN_ENV,
            reference.registry
        );
    }
    if let OciDistributionError::RequestError(r) = e {
        let plain = reference.is_loopback() || options.insecure_http;
        let scheme = if plain { "http" } else { "https" };
        let hint = if plain {
            " (is the registry running?)".to_owned()
        } else {
            " (skilldeck speaks https to registries not on this machine; for a plain-http \
             registry you trust, pass --insecure-http)"
                .to_owned()
        };
        let mut cause = r.to_string();
        let mut source = std::error::Error::source(r);
        while let Some(s) = source {
            cause = format!("{cause}: {s}");
            source = s.source();
        }
        return format!(
            "cannot reach the registry at {scheme}://{}: {cause}{hint}",
            reference.registry
        );
    }
    e.to_string()
}

/// Packs the skill folder `dir` (validated strictly, as `skilldeck pack`
/// does), checks that the package unpacks to the same fingerprint, and
/// pushes it to `target` as a skill artifact: the layer, the config blob,
/// then the manifest under the tag (or by its digest when `target` has no
/// tag).
pub fn push(dir: &Path, target: &OciRef, options: &OciOptions) -> Result<Pushed, Error> {
    if target.digest.is_some() {
        return Err(oci_error(
            target,
            "push takes a tag (oci://REGISTRY/REPOSITORY:TAG) or none, not a digest: the \
             digest is the manifest's, known once it is built"
                .into(),
        ));
    }
    let packed = skilldeck_package::pack(dir, &PackOptions::default())?;
    let fingerprint = packed.fingerprint();
    // The package as an installer will read it: the same fingerprint, and
    // the frontmatter the config and annotations come from.
    let staging = tempfile::tempdir().map_err(|e| Error::Io {
        path: std::env::temp_dir(),
        source: e,
    })?;
    let shown = PathBuf::from(format!("{}.tar.gz", packed.name));
    let unpacked = skilldeck_package::unpack_bytes(
        &packed.bytes,
        &shown,
        &staging.path().join("check"),
        &UnpackOptions::default(),
    )?
    .unpacked;
    if unpacked.manifest.fingerprint() != fingerprint {
        return Err(oci_error(
            target,
            format!(
                "the package of {} unpacks to fingerprint {}, not {fingerprint}: nothing was pushed",
                dir.display(),
                unpacked.manifest.fingerprint()
            ),
        ));
    }
    let frontmatter = unpacked.frontmatter.unwrap_or_default();
    let built = artifact::build(
        &packed.bytes,
        &packed.name,
        packed.version.as_deref(),
        &fingerprint,
        &frontmatter,
    );
    let (client, auth) = client(target, options);
    let reference = oci_reference(&OciRef {
        digest: target.tag.is_none().then_some(built.digest),
        ..target.clone()
    });
    let layer_digest = Digest::of(&packed.bytes).to_string();
    let config_digest = Digest::of(&built.config).to_string();
    let rt = runtime(target)?;
    rt.block_on(async {
        client
            .store_auth_if_needed(reference.resolve_registry(), &auth)
            .await;
        client
            .push_blob(&reference, packed.bytes.clone(), &layer_digest)
            .await?;
        client
            .push_blob(&reference, built.config.clone(), &config_digest)
            .await?;
        client
            .push_manifest_raw(
                &reference,
                built.manifest.clone(),
                reqwest::header::HeaderValue::from_static(MANIFEST_MEDIA_TYPE),
            )
            .await
    })
    .map_err(|e| oci_error(target, explain(target, options, &e)))?;
    Ok(Pushed {
        name: packed.name,
        version: packed.version,
        fingerprint,
        reference: target.to_string(),
        digest: built.digest,
        canonical: target.canonical(&built.digest),
        size: packed.bytes.len() as u64,
        warnings: packed.warnings,
    })
}

/// The manifest digest `reference`'s tag names now (a `HEAD` of the
/// manifest, its `Docker-Content-Digest`), for `outdated`: nothing is
/// pulled or trusted beyond that (an `update` pulls and checks every
/// byte). A reference with a digest is answered with it, unasked.
pub fn resolve(reference: &OciRef, options: &OciOptions) -> Result<Digest, Error> {
    if let Some(d) = reference.digest {
        return Ok(d);
    }
    let (client, auth) = client(reference, options);
    let oci = oci_reference(reference);
    let rt = runtime(reference)?;
    let text = rt.block_on(async {
        match client.fetch_manifest_digest(&oci, &auth).await {
            Ok(d) => Ok(d),
            Err(e) => Err(manifest_error(&client, &auth, reference, options, &oci, e).await),
        }
    });
    let text = text.map_err(|m| oci_error(reference, m))?;
    Digest::parse(&text).map_err(|e| {
        oci_error(
            reference,
            format!("the registry named the tag's manifest by '{text}', not a sha256 digest: {e}"),
        )
    })
}

/// Pulls the skill artifact `reference` names (its digest when it has one,
/// else its tag now) and checks it (see the module); with `locked` (a
/// frozen install), the artifact's fingerprint must be that one.
pub fn pull(
    reference: &OciRef,
    locked: Option<&Digest>,
    options: &OciOptions,
) -> Result<Pulled, Error> {
    let (client, auth) = client(reference, options);
    let oci = oci_reference(reference);
    let rt = runtime(reference)?;
    let fetched = rt.block_on(async {
        let (body, _) = match client
            .pull_manifest_raw(&oci, &auth, &[MANIFEST_MEDIA_TYPE, INDEX_MEDIA_TYPE])
            .await
        {
            Ok(m) => m,
            Err(e) => return Err(manifest_error(&client, &auth, reference, options, &oci, e).await),
        };
        let digest = Digest::of(&body);
        if let Some(want) = &reference.digest
            && &digest != want
        {
            return Err(format!(
                "the registry sent a manifest whose digest is {digest}, not the {want} asked for: \
                 refused, nothing was installed"
            ));
        }
        let checked = artifact::check(&body)?;
        if let (Some(lock), Some(annotated)) = (locked, &checked.fingerprint)
            && lock != annotated
        {
            return Err(format!(
                "the artifact's fingerprint annotation says {annotated}; the lock records {lock}: \
                 refused, nothing was installed"
            ));
        }
        let layer = fetch_layer(&client, &oci, &checked)
            .await
            .map_err(|e| match e {
                LayerError::Client(e) => explain(reference, options, &e),
                LayerError::Refused(m) => m,
            })?;
        Ok((digest, checked, layer))
    });
    let (digest, checked, layer) = fetched.map_err(|m| oci_error(reference, m))?;
    let dir = tempfile::tempdir().map_err(|e| Error::Io {
        path: std::env::temp_dir(),
        source: e,
    })?;
    let name = checked
        .name
        .as_deref()
        .filter(|n| skilldeck_package::check_entry_path(n.as_bytes()).is_ok() && !n.contains('/'))
        .unwrap_or("skill");
    let package = dir.path().join(format!("{name}.tar.gz"));
    let source = reference.lock_source(&digest);
    // The content's fingerprint, from the package as install will read it.
    let unpacked = skilldeck_package::unpack_bytes(
        &layer,
        Path::new(&source),
        &dir.path().join("check"),
        &UnpackOptions::default(),
    )?
    .unpacked;
    let found = unpacked.manifest.fingerprint();
    if let Some(annotated) = &checked.fingerprint
        && &found != annotated
    {
        return Err(oci_error(
            reference,
            format!(
                "the skill in the layer has fingerprint {found}, but the manifest's annotation \
                 {} says {annotated}: refused, nothing was installed (the artifact was changed \
                 after it was pushed, or pushed with a wrong annotation: ask its publisher to \
                 push it again with `skilldeck push`)",
                artifact::ANNOTATION_FINGERPRINT
            ),
        ));
    }
    if let Some(lock) = locked
        && &found != lock
    {
        return Err(oci_error(
            reference,
            format!(
                "the skill in the layer has fingerprint {found}; the lock records {lock}: \
                 refused, nothing was installed"
            ),
        ));
    }
    std::fs::remove_dir_all(dir.path().join("check")).map_err(|e| Error::Io {
        path: dir.path().join("check"),
        source: e,
    })?;
    let mut file = std::fs::File::create(&package).map_err(|e| Error::Io {
        path: package.clone(),
        source: e,
    })?;
    file.write_all(&layer).map_err(|e| Error::Io {
        path: package.clone(),
        source: e,
    })?;
    Ok(Pulled {
        package,
        source,
        digest,
        tag: reference.tag.clone(),
        fingerprint: found,
        annotated: checked.fingerprint.is_some(),
        _dir: dir,
    })
}

enum LayerError {
    Client(OciDistributionError),
    Refused(String),
}

/// The layer's bytes, held to the descriptor's size as they stream and
/// checked against its digest.
async fn fetch_layer(
    client: &Client,
    oci: &Reference,
    checked: &artifact::Checked,
) -> Result<Vec<u8>, LayerError> {
    let descriptor = OciDescriptor {
        media_type: artifact::LAYER_MEDIA_TYPE.to_owned(),
        digest: checked.layer.to_string(),
        size: i64::try_from(checked.layer_size).unwrap_or(i64::MAX),
        ..OciDescriptor::default()
    };
    let mut stream = client
        .pull_blob_stream(oci, &descriptor)
        .await
        .map_err(LayerError::Client)?;
    let mut bytes = Vec::with_capacity(usize::try_from(checked.layer_size).unwrap_or(0));
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| LayerError::Client(e.into()))?;
        if bytes.len() as u64 + chunk.len() as u64 > checked.layer_size {
            return Err(LayerError::Refused(format!(
                "the registry sent more than the {} bytes the manifest gives the layer {}: \
                 refused, nothing was installed",
                checked.layer_size, checked.layer
            )));
        }
        bytes.extend_from_slice(&chunk);
    }
    let found = Digest::of(&bytes);
    if found != checked.layer || bytes.len() as u64 != checked.layer_size {
        return Err(LayerError::Refused(format!(
            "the layer blob the registry sent has digest {found} ({} bytes); the manifest names \
             {} ({} bytes): refused, nothing was installed",
            bytes.len(),
            checked.layer,
            checked.layer_size
        )));
    }
    Ok(bytes)
}

/// Why a manifest could not be pulled; a missing tag names the tags there
/// are.
async fn manifest_error(
    client: &Client,
    auth: &RegistryAuth,
    reference: &OciRef,
    options: &OciOptions,
    oci: &Reference,
    e: OciDistributionError,
) -> String {
    let unknown = match &e {
        OciDistributionError::RegistryError { envelope, .. } => envelope.errors.iter().any(|x| {
            matches!(
                x.code,
                OciErrorCode::ManifestUnknown | OciErrorCode::NameUnknown | OciErrorCode::NotFound
            )
        }),
        OciDistributionError::ServerError { code: 404, .. } => true,
        OciDistributionError::ImageManifestNotFoundError(_) => true,
        _ => false,
    };
    if !unknown {
        return explain(reference, options, &e);
    }
    let what = match (&reference.digest, &reference.tag) {
        (Some(d), _) => format!("no manifest {d}"),
        (None, Some(t)) => format!("no tag '{t}'"),
        (None, None) => "no tag 'latest' (no tag was given)".to_owned(),
    };
    let tags = match client
        .list_tags(oci, auth, Some(MAX_TAGS_SHOWN + 1), None)
        .await
    {
        Ok(t) if !t.tags.is_empty() => {
            let more = if t.tags.len() > MAX_TAGS_SHOWN {
                ", ..."
            } else {
                ""
            };
            let shown: Vec<&str> = t
                .tags
                .iter()
                .take(MAX_TAGS_SHOWN)
                .map(String::as_str)
                .collect();
            format!("; its tags: {}{more}", shown.join(", "))
        }
        _ => "; the repository has no tags (or does not exist)".to_owned(),
    };
    format!(
        "the registry {} has {what} in {}{tags}. Check the reference, or publish the skill \
         there with `skilldeck push oci://{}/{}:TAG SKILL_DIR`",
        reference.registry, reference.repository, reference.registry, reference.repository
    )
}
