//! The route handlers: HTTP in, one [`Registry`] call, HTTP out. Every
//! rejection of axum's extractors becomes a [`RegistryError`] so every
//! error is a problem body.

use axum::Json;
use axum::body::Bytes;
use std::net::IpAddr;

use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{FromRequestParts, Path, Query, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use utoipa::IntoParams;

use crate::error::RegistryError;
use crate::http::peer::peer_of;
use crate::names::{AgentId, Label, Namespace, SkillRef, namespace_or_default};
use crate::service::principal::Principal;
use crate::service::registry::Registry;
use crate::service::resolve::{etag_matches, etag_of_digest};
use crate::service::skills::SkillQuery;
use crate::wire::{
    Agent, AgentLock, AgentSpec, Assignment, AssignmentView, AuditEntry, DIGEST_HEADER,
    FINGERPRINT_HEADER, GENERATION_HEADER, LabelMove, LabelMoved, NamespacePolicy, Page,
    PendingVersion, Problem, Published, ReasonBody, Resolved, ReviewDecision, SignerInfo,
    SignerKey, SkillDetail, SkillSummary, TestRunRequest, TestRunResult, TestRunTargets,
    TokenCreated, TokenInfo, TokenRequest, VersionDetail,
};

type Result<T> = std::result::Result<T, RegistryError>;

/// The caller, from `Authorization: Bearer <token>`; 401 without one.
async fn principal(
    registry: &Registry,
    headers: &HeaderMap,
    client: Option<IpAddr>,
) -> Result<Principal> {
    let value = headers
        .get(header::AUTHORIZATION)
        .ok_or(RegistryError::Unauthorized("no Authorization header"))?
        .to_str()
        .map_err(|_| RegistryError::Unauthorized("the Authorization header is not text"))?;
    let token = value
        .strip_prefix("Bearer ")
        .or_else(|| value.strip_prefix("bearer "))
        .ok_or(RegistryError::Unauthorized(
            "expected Authorization: Bearer <token>",
        ))?;
    registry.authenticate(token, client).await
}

/// The generation a client has seen (`x-skilldeck-generation`), if it
/// sent one: applied on this replica before anything else is read.
pub(crate) async fn catch_up(registry: &Registry, headers: &HeaderMap) -> Result<()> {
    let Some(value) = headers.get(GENERATION_HEADER) else {
        return Ok(());
    };
    let generation = value
        .to_str()
        .ok()
        .and_then(|v| v.trim().parse::<i64>().ok())
        .filter(|g| *g >= 0)
        .ok_or_else(|| {
            RegistryError::bad_request(
                "registry-invalid-generation",
                format!(
                    "the {GENERATION_HEADER} header must be a generation (a non-negative integer) from an earlier answer"
                ),
            )
        })?;
    registry.at_least(generation).await
}

/// Adds `x-skilldeck-generation` to `response`.
fn with_generation(mut response: Response, generation: i64) -> Result<Response> {
    response
        .headers_mut()
        .insert(GENERATION_HEADER, header_value(&generation.to_string())?);
    Ok(response)
}

/// The authenticated caller of a route. An extractor from the request
/// head: every handler takes it before its body, so a request is
/// authenticated (401/429) before a byte of its body is read.
pub struct Caller(pub Principal);

impl FromRequestParts<Registry> for Caller {
    type Rejection = RegistryError;

    async fn from_request_parts(parts: &mut Parts, registry: &Registry) -> Result<Self> {
        let client = peer_of(&parts.extensions).map(|a| a.ip());
        catch_up(registry, &parts.headers).await?;
        principal(registry, &parts.headers, client)
            .await
            .map(Caller)
    }
}

fn json_body<T>(body: std::result::Result<Json<T>, JsonRejection>) -> Result<T> {
    match body {
        Ok(Json(v)) => Ok(v),
        Err(e) if e.status() == StatusCode::PAYLOAD_TOO_LARGE => Err(RegistryError::TooLarge {
            limit: crate::service::config::MAX_JSON_BODY_BYTES,
        }),
        Err(e) => Err(RegistryError::bad_request(
            "registry-invalid-body",
            e.body_text(),
        )),
    }
}

fn query<T>(q: std::result::Result<Query<T>, QueryRejection>) -> Result<T> {
    q.map(|Query(v)| v)
        .map_err(|e| RegistryError::bad_request("registry-invalid-query", e.body_text()))
}

fn skill_ref(namespace: &str, name: &str) -> Result<SkillRef> {
    Ok(SkillRef::new(namespace, name)?)
}

fn not_modified(headers: &HeaderMap, etag: &str) -> bool {
    headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| etag_matches(v, etag))
}

fn header_value(text: &str) -> Result<HeaderValue> {
    HeaderValue::from_str(text)
        .map_err(|_| RegistryError::Internal(format!("header value {text:?}")))
}

/// A body with its ETag, or 304 when the client has it.
fn with_etag(headers: &HeaderMap, etag: &str, content_type: &str, body: Bytes) -> Result<Response> {
    let etag_value = header_value(etag)?;
    if not_modified(headers, etag) {
        return Ok((StatusCode::NOT_MODIFIED, [(header::ETAG, etag_value)]).into_response());
    }
    Ok((
        StatusCode::OK,
        [
            (header::ETAG, etag_value),
            (header::CONTENT_TYPE, header_value(content_type)?),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        body,
    )
        .into_response())
}

/// Publish query.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PublishQuery {
    /// The namespace (default `default`).
    pub namespace: Option<String>,
    /// The version (else the frontmatter's `metadata.version`).
    pub version: Option<String>,
}

/// A package as the OpenAPI document describes it: binary, not an array
/// of integers (what `Vec<u8>` would say).
#[derive(utoipa::ToSchema)]
#[schema(value_type = String, format = Binary)]
#[expect(dead_code, reason = "a schema only: the body is read as bytes")]
pub struct PackageBody(pub Vec<u8>);

/// A publish with the resolution of the skill's dependencies: a
/// `multipart/form-data` body.
#[derive(utoipa::ToSchema)]
#[expect(dead_code, reason = "a schema only: the form is read part by part")]
pub struct PublishForm {
    /// The tar.gz or zip package.
    #[schema(value_type = String, format = Binary)]
    pub package: Vec<u8>,
    /// JSON: the list of environment records `skilldeck publish` resolved
    /// (at most one per kind, each package pinned by hash).
    #[schema(value_type = Vec<Object>)]
    pub environments: Option<Vec<u8>>,
}

/// Publishes a package (tar.gz or zip body), or a `multipart/form-data`
/// form of the package (field `package`) and the resolution of its
/// dependencies (field `environments`, JSON).
#[utoipa::path(post, path = "/api/v1/skills", tag = "skills", params(PublishQuery),
    request_body(content((PackageBody = "application/gzip"), (PackageBody = "application/zip"), (PackageBody = "application/octet-stream"), (PublishForm = "multipart/form-data")), description = "a tar.gz or zip package, told by its first bytes; or a form of the package and its resolution"),
    responses(
        (status = 201, description = "published", body = Published),
        (status = 200, description = "the same content was already published", body = Published),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        (status = 409, body = Problem, content_type = "application/problem+json"),
        (status = 413, body = Problem, content_type = "application/problem+json"),
        (status = 422, body = Problem, content_type = "application/problem+json"),
    ), security(("bearer" = [])))]
pub async fn publish(
    State(registry): State<Registry>,
    Caller(p): Caller,
    headers: HeaderMap,
    q: std::result::Result<Query<PublishQuery>, QueryRejection>,
    request: axum::extract::Request,
) -> Result<Response> {
    use crate::service::publish::MAX_ENVIRONMENTS_BYTES;
    let q = query(q)?;
    let ns = namespace_or_default(q.namespace.as_deref().filter(|n| !n.is_empty()))?;
    // Authorised for this namespace before the body is read.
    p.require_publish(&ns)?;
    let limit = registry.limits().max_publish_bytes;
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let multipart = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.trim_start()
                .to_ascii_lowercase()
                .starts_with("multipart/form-data")
        });
    let form_limit = limit + MAX_ENVIRONMENTS_BYTES + super::MULTIPART_OVERHEAD_BYTES;
    if declared.is_some_and(|n| n > (if multipart { form_limit } else { limit }) as u64) {
        return Err(RegistryError::TooLarge { limit });
    }
    let signature = signature_header(&headers)?;
    if multipart {
        let (body, environments) = publish_form(request, limit).await?;
        let published = registry
            .publish(
                &p,
                &ns,
                q.version.as_deref(),
                body,
                signature.as_deref(),
                environments.as_deref(),
            )
            .await?;
        let status = if published.created {
            StatusCode::CREATED
        } else {
            StatusCode::OK
        };
        return Ok((status, Json(published)).into_response());
    }
    let body = axum::body::to_bytes(request.into_body(), limit)
        .await
        .map_err(|e| {
            let over = std::error::Error::source(&e)
                .is_some_and(|s| s.is::<http_body_util::LengthLimitError>());
            if over {
                RegistryError::TooLarge { limit }
            } else {
                RegistryError::bad_request(
                    "registry-invalid-body",
                    format!("the request body could not be read: {e}"),
                )
            }
        })?;
    let published = registry
        .publish(
            &p,
            &ns,
            q.version.as_deref(),
            body,
            signature.as_deref(),
            None,
        )
        .await?;
    let status = if published.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(published)).into_response())
}

/// The parts of a multipart publish: the package (at most `limit` bytes)
/// and the resolution (at most
/// [`MAX_ENVIRONMENTS_BYTES`](crate::service::publish::MAX_ENVIRONMENTS_BYTES)),
/// each read chunk by chunk and refused past its bound; any other part, a
/// part given twice, or no package is refused.
async fn publish_form(
    request: axum::extract::Request,
    limit: usize,
) -> Result<(bytes::Bytes, Option<Vec<u8>>)> {
    use crate::service::publish::{INVALID_ENVIRONMENTS, MAX_ENVIRONMENTS_BYTES};
    use crate::wire::{PUBLISH_ENVIRONMENTS_FIELD, PUBLISH_PACKAGE_FIELD};
    use axum::extract::FromRequest as _;
    let bad = |why: String| RegistryError::bad_request("registry-invalid-body", why);
    let mut form = axum::extract::Multipart::from_request(request, &())
        .await
        .map_err(|e| bad(format!("the multipart form could not be read: {e}")))?;
    let mut package: Option<Vec<u8>> = None;
    let mut environments: Option<Vec<u8>> = None;
    while let Some(mut field) = form
        .next_field()
        .await
        .map_err(|e| bad(format!("the multipart form could not be read: {e}")))?
    {
        let name = field.name().unwrap_or_default().to_owned();
        let (slot, cap) = if name == PUBLISH_PACKAGE_FIELD {
            (&mut package, limit)
        } else if name == PUBLISH_ENVIRONMENTS_FIELD {
            (&mut environments, MAX_ENVIRONMENTS_BYTES)
        } else {
            return Err(bad(format!(
                "unknown form field '{}' (a publish has '{PUBLISH_PACKAGE_FIELD}' and \
                 '{PUBLISH_ENVIRONMENTS_FIELD}')",
                name.escape_debug()
            )));
        };
        if slot.is_some() {
            return Err(bad(format!("form field '{name}' given twice")));
        }
        let mut bytes = Vec::new();
        while let Some(chunk) = field
            .chunk()
            .await
            .map_err(|e| bad(format!("form field '{name}' could not be read: {e}")))?
        {
            if bytes.len() + chunk.len() > cap {
                return Err(if name == PUBLISH_PACKAGE_FIELD {
                    RegistryError::TooLarge { limit }
                } else {
                    RegistryError::bad_request(
                        INVALID_ENVIRONMENTS,
                        format!(
                            "the publish's resolution is refused: more than \
                             {MAX_ENVIRONMENTS_BYTES} bytes"
                        ),
                    )
                });
            }
            bytes.extend_from_slice(&chunk);
        }
        *slot = Some(bytes);
    }
    let package = package.ok_or_else(|| {
        bad(format!(
            "the multipart form has no '{PUBLISH_PACKAGE_FIELD}' field (the tar.gz or zip)"
        ))
    })?;
    Ok((bytes::Bytes::from(package), environments))
}

/// The publish's signature: the `x-skilldeck-signature` header, base64
/// of the armored `sshsig`.
fn signature_header(headers: &HeaderMap) -> Result<Option<Vec<u8>>> {
    use crate::service::signing::MAX_SIGNATURE_BYTES;
    use crate::wire::SIGNATURE_HEADER;
    use base64::Engine as _;
    let Some(value) = headers.get(SIGNATURE_HEADER) else {
        return Ok(None);
    };
    let bad = |why: &str| {
        RegistryError::bad_request(
            "registry-invalid-signature-header",
            format!("{SIGNATURE_HEADER}: {why} (expected base64 of an armored SSH signature)"),
        )
    };
    let text = value.to_str().map_err(|_| bad("not ASCII"))?;
    if text.len() > MAX_SIGNATURE_BYTES * 2 {
        return Err(bad("too long"));
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .map_err(|_| bad("not base64"))?;
    Ok(Some(bytes))
}

/// Skill list query.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Free text (BM25 over name and description).
    pub q: Option<String>,
    /// Only this namespace.
    pub namespace: Option<String>,
    /// From a previous page's `next_cursor`.
    pub cursor: Option<String>,
    /// Page size (default 50, at most 500).
    pub limit: Option<u32>,
}

/// Lists or searches skills.
#[utoipa::path(get, path = "/api/v1/skills", tag = "skills", params(ListQuery),
    responses(
        (status = 200, body = Page<SkillSummary>),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
    ), security(("bearer" = [])))]
pub async fn list_skills(
    State(registry): State<Registry>,
    Caller(p): Caller,
    q: std::result::Result<Query<ListQuery>, QueryRejection>,
) -> Result<Json<Page<SkillSummary>>> {
    let q = query(q)?;
    let query = SkillQuery {
        q: q.q,
        namespace: q.namespace,
        cursor: q.cursor,
        limit: q.limit,
    };
    Ok(Json(registry.list_skills(&p, &query).await?))
}

/// A skill with its labels and versions.
#[utoipa::path(get, path = "/api/v1/skills/{namespace}/{name}", tag = "skills",
    params(("namespace" = String, Path), ("name" = String, Path)),
    responses(
        (status = 200, body = SkillDetail),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ), security(("bearer" = [])))]
pub async fn skill(
    State(registry): State<Registry>,
    Caller(p): Caller,
    Path((namespace, name)): Path<(String, String)>,
) -> Result<Json<SkillDetail>> {
    Ok(Json(
        registry.skill(&p, &skill_ref(&namespace, &name)?).await?,
    ))
}

/// One version's manifest (`version` may be a label).
#[utoipa::path(get, path = "/api/v1/skills/{namespace}/{name}/versions/{version}", tag = "skills",
    params(("namespace" = String, Path), ("name" = String, Path), ("version" = String, Path, description = "a semver version or a label")),
    responses(
        (status = 200, body = VersionDetail),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ), security(("bearer" = [])))]
pub async fn version(
    State(registry): State<Registry>,
    Caller(p): Caller,
    Path((namespace, name, version)): Path<(String, String, String)>,
) -> Result<Json<VersionDetail>> {
    Ok(Json(
        registry
            .version(&p, &skill_ref(&namespace, &name)?, &version)
            .await?,
    ))
}

/// The version's canonical tar.gz.
#[utoipa::path(get, path = "/api/v1/skills/{namespace}/{name}/versions/{version}/archive", tag = "skills",
    params(("namespace" = String, Path), ("name" = String, Path), ("version" = String, Path)),
    responses(
        (status = 200, description = "the archive; ETag is its sha256", content_type = "application/gzip", body = Vec<u8>),
        (status = 304, description = "not modified"),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        (status = 500, body = Problem, content_type = "application/problem+json"),
    ), security(("bearer" = [])))]
pub async fn archive(
    State(registry): State<Registry>,
    Caller(p): Caller,
    headers: HeaderMap,
    Path((namespace, name, version)): Path<(String, String, String)>,
) -> Result<Response> {
    let r = registry
        .archive_ref(&p, &skill_ref(&namespace, &name)?, &version)
        .await?;
    let etag = etag_of_digest(&r.sha256)?;
    // 304 from the digest in the database: the store is not read.
    let bytes = if not_modified(&headers, &etag) {
        Bytes::new()
    } else {
        registry.fetch(r.clone()).await?.bytes
    };
    let mut response = with_etag(&headers, &etag, "application/gzip", bytes)?;
    let blob = r;
    response
        .headers_mut()
        .insert(FINGERPRINT_HEADER, header_value(&blob.fingerprint)?);
    Ok(response)
}

/// One file of a version.
#[utoipa::path(get, path = "/api/v1/skills/{namespace}/{name}/versions/{version}/files/{path}", tag = "skills",
    params(("namespace" = String, Path), ("name" = String, Path), ("version" = String, Path), ("path" = String, Path, description = "relative path, no `..`")),
    responses(
        (status = 200, description = "the bytes; ETag is the digest", content_type = "application/octet-stream", body = Vec<u8>),
        (status = 304, description = "not modified"),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        (status = 500, body = Problem, content_type = "application/problem+json"),
    ), security(("bearer" = [])))]
pub async fn file(
    State(registry): State<Registry>,
    Caller(p): Caller,
    headers: HeaderMap,
    Path((namespace, name, version, path)): Path<(String, String, String, String)>,
) -> Result<Response> {
    let r = registry
        .file_ref(&p, &skill_ref(&namespace, &name)?, &version, &path)
        .await?;
    let etag = etag_of_digest(&r.sha256)?;
    // 304 from the digest in the database: the store is not read.
    let bytes = if not_modified(&headers, &etag) {
        Bytes::new()
    } else {
        registry.fetch(r.clone()).await?.bytes
    };
    let mut response = with_etag(&headers, &etag, "application/octet-stream", bytes)?;
    let blob = r;
    response
        .headers_mut()
        .insert(DIGEST_HEADER, header_value(&blob.sha256)?);
    response
        .headers_mut()
        .insert(FINGERPRINT_HEADER, header_value(&blob.fingerprint)?);
    Ok(response)
}

/// Moves a label to a version (admin).
#[utoipa::path(put, path = "/api/v1/skills/{namespace}/{name}/labels/{label}", tag = "skills",
    params(("namespace" = String, Path), ("name" = String, Path), ("label" = String, Path)),
    request_body = LabelMove,
    responses(
        (status = 200, body = LabelMoved),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        (status = 409, body = Problem, content_type = "application/problem+json"),
    ), security(("bearer" = [])))]
pub async fn move_label(
    State(registry): State<Registry>,
    Caller(p): Caller,
    Path((namespace, name, label)): Path<(String, String, String)>,
    body: std::result::Result<Json<LabelMove>, JsonRejection>,
) -> Result<Json<LabelMoved>> {
    let body = json_body(body)?;
    let label = Label::new(&label)?;
    Ok(Json(
        registry
            .move_label(
                &p,
                &skill_ref(&namespace, &name)?,
                &label,
                &body.version,
                body.override_reason.as_deref(),
            )
            .await?,
    ))
}

async fn marker(
    registry: Registry,
    p: Principal,
    (namespace, name, version): (String, String, String),
    reason: Option<String>,
    yank: bool,
) -> Result<Json<VersionDetail>> {
    let skill = skill_ref(&namespace, &name)?;
    let detail = if yank {
        registry.set_yanked(&p, &skill, &version, reason).await?
    } else {
        registry
            .set_deprecated(&p, &skill, &version, reason)
            .await?
    };
    Ok(Json(detail))
}

/// Yanks a version (admin): no longer `latest` nor auto-discovered.
#[utoipa::path(post, path = "/api/v1/skills/{namespace}/{name}/versions/{version}/yank", tag = "skills",
    params(("namespace" = String, Path), ("name" = String, Path), ("version" = String, Path)),
    request_body = ReasonBody,
    responses(
        (status = 200, body = VersionDetail),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ), security(("bearer" = [])))]
pub async fn yank(
    State(registry): State<Registry>,
    Caller(p): Caller,
    Path(path): Path<(String, String, String)>,
    body: std::result::Result<Json<ReasonBody>, JsonRejection>,
) -> Result<Json<VersionDetail>> {
    let reason = json_body(body)?.reason;
    marker(registry, p, path, Some(reason), true).await
}

/// Undoes a yank (admin).
#[utoipa::path(delete, path = "/api/v1/skills/{namespace}/{name}/versions/{version}/yank", tag = "skills",
    params(("namespace" = String, Path), ("name" = String, Path), ("version" = String, Path)),
    responses(
        (status = 200, body = VersionDetail),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ), security(("bearer" = [])))]
pub async fn unyank(
    State(registry): State<Registry>,
    Caller(p): Caller,
    Path(path): Path<(String, String, String)>,
) -> Result<Json<VersionDetail>> {
    marker(registry, p, path, None, true).await
}

/// Deprecates a version (admin).
#[utoipa::path(post, path = "/api/v1/skills/{namespace}/{name}/versions/{version}/deprecate", tag = "skills",
    params(("namespace" = String, Path), ("name" = String, Path), ("version" = String, Path)),
    request_body = ReasonBody,
    responses(
        (status = 200, body = VersionDetail),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ), security(("bearer" = [])))]
pub async fn deprecate(
    State(registry): State<Registry>,
    Caller(p): Caller,
    Path(path): Path<(String, String, String)>,
    body: std::result::Result<Json<ReasonBody>, JsonRejection>,
) -> Result<Json<VersionDetail>> {
    let reason = json_body(body)?.reason;
    marker(registry, p, path, Some(reason), false).await
}

/// Undoes a deprecation (admin).
#[utoipa::path(delete, path = "/api/v1/skills/{namespace}/{name}/versions/{version}/deprecate", tag = "skills",
    params(("namespace" = String, Path), ("name" = String, Path), ("version" = String, Path)),
    responses(
        (status = 200, body = VersionDetail),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ), security(("bearer" = [])))]
pub async fn undeprecate(
    State(registry): State<Registry>,
    Caller(p): Caller,
    Path(path): Path<(String, String, String)>,
) -> Result<Json<VersionDetail>> {
    marker(registry, p, path, None, false).await
}

/// Creates an agent (admin).
#[utoipa::path(post, path = "/api/v1/agents", tag = "agents", request_body = AgentSpec,
    responses(
        (status = 201, body = Agent),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        (status = 409, body = Problem, content_type = "application/problem+json"),
        (status = 413, body = Problem, content_type = "application/problem+json"),
    ), security(("bearer" = [])))]
pub async fn create_agent(
    State(registry): State<Registry>,
    Caller(p): Caller,
    body: std::result::Result<Json<AgentSpec>, JsonRejection>,
) -> Result<Response> {
    let agent = registry.create_agent(&p, json_body(body)?).await?;
    Ok((StatusCode::CREATED, Json(agent)).into_response())
}

/// Page query.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    /// From a previous page's `next_cursor`.
    pub cursor: Option<String>,
    /// Page size (default 50, at most 500).
    pub limit: Option<u32>,
}

/// Lists agents (admin).
#[utoipa::path(get, path = "/api/v1/agents", tag = "agents", params(PageQuery),
    responses(
        (status = 200, body = Page<Agent>),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
    ), security(("bearer" = [])))]
pub async fn list_agents(
    State(registry): State<Registry>,
    Caller(p): Caller,
    q: std::result::Result<Query<PageQuery>, QueryRejection>,
) -> Result<Json<Page<Agent>>> {
    let q = query(q)?;
    Ok(Json(
        registry
            .list_agents(&p, q.cursor.as_deref(), q.limit)
            .await?,
    ))
}

/// One agent (admin or that agent).
#[utoipa::path(get, path = "/api/v1/agents/{id}", tag = "agents", params(("id" = String, Path)),
    responses(
        (status = 200, body = Agent),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ), security(("bearer" = [])))]
pub async fn agent(
    State(registry): State<Registry>,
    Caller(p): Caller,
    Path(id): Path<String>,
) -> Result<Json<Agent>> {
    Ok(Json(registry.agent(&p, &AgentId::new(&id)?).await?))
}

/// Replaces an agent's settings (admin).
#[utoipa::path(put, path = "/api/v1/agents/{id}", tag = "agents", params(("id" = String, Path)), request_body = AgentSpec,
    responses(
        (status = 200, body = Agent),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ), security(("bearer" = [])))]
pub async fn update_agent(
    State(registry): State<Registry>,
    Caller(p): Caller,
    Path(id): Path<String>,
    body: std::result::Result<Json<AgentSpec>, JsonRejection>,
) -> Result<Json<Agent>> {
    let id = AgentId::new(&id)?;
    Ok(Json(
        registry.update_agent(&p, &id, json_body(body)?).await?,
    ))
}

/// Deletes an agent, its assignments and tokens (admin).
#[utoipa::path(delete, path = "/api/v1/agents/{id}", tag = "agents", params(("id" = String, Path)),
    responses(
        (status = 204, description = "deleted"),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ), security(("bearer" = [])))]
pub async fn delete_agent(
    State(registry): State<Registry>,
    Caller(p): Caller,
    Path(id): Path<String>,
) -> Result<StatusCode> {
    registry.delete_agent(&p, &AgentId::new(&id)?).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// An agent's assignments (admin or that agent).
#[utoipa::path(get, path = "/api/v1/agents/{id}/skills", tag = "agents", params(("id" = String, Path)),
    responses(
        (status = 200, body = Vec<AssignmentView>),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ), security(("bearer" = [])))]
pub async fn assignments(
    State(registry): State<Registry>,
    Caller(p): Caller,
    Path(id): Path<String>,
) -> Result<Json<Vec<AssignmentView>>> {
    Ok(Json(registry.assignments(&p, &AgentId::new(&id)?).await?))
}

/// Assigns a skill to an agent (admin).
#[utoipa::path(put, path = "/api/v1/agents/{id}/skills/{namespace}/{name}", tag = "agents",
    params(("id" = String, Path), ("namespace" = String, Path), ("name" = String, Path)),
    request_body = Assignment,
    responses(
        (status = 200, body = AssignmentView),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ), security(("bearer" = [])))]
pub async fn assign(
    State(registry): State<Registry>,
    Caller(p): Caller,
    Path((id, namespace, name)): Path<(String, String, String)>,
    body: std::result::Result<Json<Assignment>, JsonRejection>,
) -> Result<Json<AssignmentView>> {
    let id = AgentId::new(&id)?;
    let skill = skill_ref(&namespace, &name)?;
    Ok(Json(
        registry.assign(&p, &id, &skill, json_body(body)?).await?,
    ))
}

/// Removes an assignment (admin).
#[utoipa::path(delete, path = "/api/v1/agents/{id}/skills/{namespace}/{name}", tag = "agents",
    params(("id" = String, Path), ("namespace" = String, Path), ("name" = String, Path)),
    responses(
        (status = 204, description = "removed"),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ), security(("bearer" = [])))]
pub async fn unassign(
    State(registry): State<Registry>,
    Caller(p): Caller,
    Path((id, namespace, name)): Path<(String, String, String)>,
) -> Result<StatusCode> {
    registry
        .unassign(&p, &AgentId::new(&id)?, &skill_ref(&namespace, &name)?)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// A token scoped to this agent (admin); shown once.
#[utoipa::path(post, path = "/api/v1/agents/{id}/tokens", tag = "tokens", params(("id" = String, Path)),
    request_body = TokenRequest,
    responses(
        (status = 201, body = TokenCreated),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ), security(("bearer" = [])))]
pub async fn agent_token(
    State(registry): State<Registry>,
    Caller(p): Caller,
    Path(id): Path<String>,
    body: std::result::Result<Json<TokenRequest>, JsonRejection>,
) -> Result<Response> {
    let request = match body {
        Err(JsonRejection::MissingJsonContentType(_)) => TokenRequest::default(),
        other => json_body(other)?,
    };
    if !request.scopes.is_empty() {
        return Err(RegistryError::bad_request(
            "registry-invalid-scope",
            "an agent token's scope is its agent; use POST /tokens for other scopes",
        ));
    }
    let created = registry
        .agent_token(
            &p,
            &AgentId::new(&id)?,
            request.name,
            request.expires_in_seconds,
        )
        .await?;
    Ok((StatusCode::CREATED, Json(created)).into_response())
}

/// A token with any scopes (admin); shown once.
#[utoipa::path(post, path = "/api/v1/tokens", tag = "tokens", request_body = TokenRequest,
    responses(
        (status = 201, body = TokenCreated),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
    ), security(("bearer" = [])))]
pub async fn create_token(
    State(registry): State<Registry>,
    Caller(p): Caller,
    body: std::result::Result<Json<TokenRequest>, JsonRejection>,
) -> Result<Response> {
    let created = registry.create_token(&p, json_body(body)?).await?;
    Ok((StatusCode::CREATED, Json(created)).into_response())
}

/// Lists tokens, never their secrets or hashes (admin: every token;
/// another token: itself).
#[utoipa::path(get, path = "/api/v1/tokens", tag = "tokens", params(PageQuery),
    responses(
        (status = 200, body = Page<TokenInfo>),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 401, body = Problem, content_type = "application/problem+json"),
    ), security(("bearer" = [])))]
pub async fn list_tokens(
    State(registry): State<Registry>,
    Caller(p): Caller,
    q: std::result::Result<Query<PageQuery>, QueryRejection>,
) -> Result<Json<Page<TokenInfo>>> {
    let q = query(q)?;
    Ok(Json(
        registry
            .list_tokens(&p, q.cursor.as_deref(), q.limit)
            .await?,
    ))
}

/// Revokes a token by id (admin; or a token itself). It keeps its record,
/// marked revoked, and is refused with 401 from then on.
#[utoipa::path(delete, path = "/api/v1/tokens/{id}", tag = "tokens", params(("id" = String, Path, max_length = 64)),
    responses(
        (status = 200, body = TokenInfo),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ), security(("bearer" = [])))]
pub async fn revoke_token(
    State(registry): State<Registry>,
    Caller(p): Caller,
    Path(id): Path<String>,
) -> Result<Json<TokenInfo>> {
    Ok(Json(registry.revoke_token(&p, &id).await?))
}

/// The agent's resolved skills and what was left out (admin or that agent).
#[utoipa::path(get, path = "/api/v1/agents/{id}/resolved", tag = "agents", params(("id" = String, Path)),
    responses(
        (status = 200, body = Resolved),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ), security(("bearer" = [])))]
pub async fn resolved(
    State(registry): State<Registry>,
    Caller(p): Caller,
    Path(id): Path<String>,
) -> Result<Json<Resolved>> {
    Ok(Json(registry.resolve(&p, &AgentId::new(&id)?).await?))
}

/// Catalog query.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct CatalogQuery {
    /// `xml` (default), `skills-ref`, `markdown` or `json`.
    pub format: Option<String>,
    /// The budget in tokens (else the agent's).
    pub budget_tokens: Option<u32>,
}

/// The agent's catalog in the core's formats (ETag, 304).
#[utoipa::path(get, path = "/api/v1/agents/{id}/catalog", tag = "agents", params(("id" = String, Path), CatalogQuery),
    responses(
        (status = 200, description = "the catalog text", content_type = "application/xml", body = String),
        (status = 304, description = "not modified"),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ), security(("bearer" = [])))]
pub async fn catalog(
    State(registry): State<Registry>,
    Caller(p): Caller,
    headers: HeaderMap,
    Path(id): Path<String>,
    q: std::result::Result<Query<CatalogQuery>, QueryRejection>,
) -> Result<Response> {
    let q = query(q)?;
    let format = match q.format.as_deref() {
        None | Some("") => skilldeck::CatalogFormat::Xml,
        Some(f) => f.parse().map_err(|_| {
            RegistryError::bad_request(
                "registry-invalid-format",
                format!("format '{f}' is not xml, skills-ref, markdown or json"),
            )
        })?,
    };
    let rendered = registry
        .catalog(&p, &AgentId::new(&id)?, format, q.budget_tokens)
        .await?;
    let response = with_etag(
        &headers,
        &rendered.etag,
        rendered.content_type,
        rendered.body,
    )?;
    with_generation(response, rendered.generation)
}

/// The agent's lock: name, version, fingerprint and files per skill (ETag, 304).
#[utoipa::path(get, path = "/api/v1/agents/{id}/lock", tag = "agents", params(("id" = String, Path)),
    responses(
        (status = 200, body = AgentLock),
        (status = 304, description = "not modified"),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ), security(("bearer" = [])))]
pub async fn lock(
    State(registry): State<Registry>,
    Caller(p): Caller,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Response> {
    let (body, etag, generation) = registry.lock_json(&p, &AgentId::new(&id)?).await?;
    with_generation(
        with_etag(&headers, &etag, "application/json", body)?,
        generation,
    )
}

/// The audit log, newest first (admin).
#[utoipa::path(get, path = "/api/v1/audit", tag = "audit", params(PageQuery),
    responses(
        (status = 200, body = Page<AuditEntry>),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
    ), security(("bearer" = [])))]
pub async fn audit(
    State(registry): State<Registry>,
    Caller(p): Caller,
    q: std::result::Result<Query<PageQuery>, QueryRejection>,
) -> Result<Json<Page<AuditEntry>>> {
    let q = query(q)?;
    Ok(Json(
        registry.audit(&p, q.cursor.as_deref(), q.limit).await?,
    ))
}

/// The registry's metrics in the Prometheus text format (requests and
/// latencies by method, route and status class; publishes and test runs by
/// outcome; cache hits and misses; blob store errors). An admin token on
/// the public listener; a private listener (`--metrics-listen`) serves
/// them without one.
#[utoipa::path(get, path = "/metrics", tag = "meta",
    responses(
        (status = 200, description = "the Prometheus text format 0.0.4", content_type = "text/plain", body = String),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
    ), security(("bearer" = [])))]
pub async fn metrics(Caller(p): Caller) -> Result<Response> {
    p.require_admin()?;
    metrics_text()
}

/// `/metrics` of the private metrics listener: no token.
pub async fn open_metrics() -> Result<Response> {
    metrics_text()
}

fn metrics_text() -> Result<Response> {
    use crate::service::metrics::{CONTENT_TYPE, metrics};
    let text = metrics().encode()?;
    Ok((
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE)),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
        ],
        text,
    )
        .into_response())
}

/// The agentskills.io well-known discovery index (schema 0.2.0) of what
/// the registry shows without a token (`[registry.well-known]
/// namespaces`; 404 when none): per listed namespace, each skill's
/// `latest` live version as an `archive` entry (ETag, 304).
#[utoipa::path(get, path = "/.well-known/agent-skills/index.json", tag = "discovery",
    responses(
        (status = 200, description = "the index", content_type = "application/json", body = serde_json::Value),
        (status = 304, description = "not modified"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ))]
pub async fn well_known_index(
    State(registry): State<Registry>,
    headers: HeaderMap,
) -> Result<Response> {
    let r = registry.well_known_index().await?;
    with_generation(
        with_etag(&headers, &r.etag, r.content_type, r.body)?,
        r.generation,
    )
}

/// A listed version's archive for the well-known index: its files at the
/// root, the index's digest its sha256 (the ETag); no token.
#[utoipa::path(get, path = "/.well-known/agent-skills/{namespace}/{name}/{version}/archive.tar.gz", tag = "discovery",
    params(("namespace" = String, Path), ("name" = String, Path), ("version" = String, Path)),
    responses(
        (status = 200, description = "the archive; ETag is its sha256", content_type = "application/gzip", body = Vec<u8>),
        (status = 304, description = "not modified"),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        (status = 500, body = Problem, content_type = "application/problem+json"),
    ))]
pub async fn well_known_archive(
    State(registry): State<Registry>,
    headers: HeaderMap,
    Path((namespace, name, version)): Path<(String, String, String)>,
) -> Result<Response> {
    let skill = skill_ref(&namespace, &name)?;
    let (etag, found) = registry.well_known_archive_etag(&skill, &version).await?;
    // 304 from the digest in the database: nothing is rebuilt.
    let bytes = if not_modified(&headers, &etag) {
        Bytes::new()
    } else {
        registry.well_known_archive(found).await?
    };
    with_etag(
        &headers,
        &etag,
        crate::service::well_known::archive_content_type(),
        bytes,
    )
}

/// Liveness: the process answers (no auth).
#[utoipa::path(get, path = "/healthz", tag = "meta",
    responses((status = 200, description = "ok", content_type = "text/plain", body = String)))]
pub async fn healthz() -> &'static str {
    "ok\n"
}

/// Readiness: the database answers a bounded query, every migration of
/// this build is applied, the blob store answers (no auth). 503 with the
/// same body when a check failed: take the replica out of rotation.
#[utoipa::path(get, path = "/readyz", tag = "meta",
    responses(
        (status = 200, description = "ready", body = crate::wire::Readiness),
        (status = 503, description = "not ready: the failed checks say why", body = crate::wire::Readiness),
    ))]
pub async fn readyz(State(registry): State<Registry>) -> Response {
    let readiness = registry.readiness().await;
    let status = if readiness.ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (
        status,
        [(header::CACHE_CONTROL, HeaderValue::from_static("no-store"))],
        axum::Json(readiness),
    )
        .into_response()
}

/// Any other path under the API: a 404 problem.
pub async fn not_found() -> RegistryError {
    RegistryError::NotFound("this path".to_owned())
}

/// A known path with another method: a 405 problem.
pub async fn method_not_allowed() -> RegistryError {
    RegistryError::MethodNotAllowed
}

/// Blocks a version (admin): agents no longer resolve or download it, and
/// every `serve --registry` drops it at its next poll.
#[utoipa::path(post, path = "/api/v1/skills/{namespace}/{name}/versions/{version}/block", tag = "review",
    params(("namespace" = String, Path), ("name" = String, Path), ("version" = String, Path)),
    request_body = ReasonBody,
    responses(
        (status = 200, body = VersionDetail),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ), security(("bearer" = [])))]
pub async fn block(
    State(registry): State<Registry>,
    Caller(p): Caller,
    Path((namespace, name, version)): Path<(String, String, String)>,
    body: std::result::Result<Json<ReasonBody>, JsonRejection>,
) -> Result<Json<VersionDetail>> {
    let reason = json_body(body)?.reason;
    let skill = skill_ref(&namespace, &name)?;
    Ok(Json(
        registry
            .set_blocked(&p, &skill, &version, Some(reason))
            .await?,
    ))
}

/// Lifts a block (admin).
#[utoipa::path(delete, path = "/api/v1/skills/{namespace}/{name}/versions/{version}/block", tag = "review",
    params(("namespace" = String, Path), ("name" = String, Path), ("version" = String, Path)),
    responses(
        (status = 200, body = VersionDetail),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ), security(("bearer" = [])))]
pub async fn unblock(
    State(registry): State<Registry>,
    Caller(p): Caller,
    Path((namespace, name, version)): Path<(String, String, String)>,
) -> Result<Json<VersionDetail>> {
    let skill = skill_ref(&namespace, &name)?;
    Ok(Json(
        registry.set_blocked(&p, &skill, &version, None).await?,
    ))
}

/// A reviewer approves or rejects a pending version (admin or
/// `review:<namespace>`; never the version's publisher).
#[utoipa::path(post, path = "/api/v1/skills/{namespace}/{name}/versions/{version}/review", tag = "review",
    params(("namespace" = String, Path), ("name" = String, Path), ("version" = String, Path)),
    request_body = ReviewDecision,
    responses(
        (status = 200, body = VersionDetail),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        (status = 409, body = Problem, content_type = "application/problem+json"),
    ), security(("bearer" = [])))]
pub async fn review(
    State(registry): State<Registry>,
    Caller(p): Caller,
    Path((namespace, name, version)): Path<(String, String, String)>,
    body: std::result::Result<Json<ReviewDecision>, JsonRejection>,
) -> Result<Json<VersionDetail>> {
    let decision = json_body(body)?;
    let skill = skill_ref(&namespace, &name)?;
    Ok(Json(
        registry.review(&p, &skill, &version, &decision).await?,
    ))
}

/// What a version can test-run: its tools with their argument schemas,
/// its scripts, and the strict policy a run gets here (admin or
/// `publish:<namespace>`; 503 when this host has no sandbox).
#[utoipa::path(get, path = "/api/v1/skills/{namespace}/{name}/versions/{version}/test-run", tag = "test-run",
    params(("namespace" = String, Path), ("name" = String, Path), ("version" = String, Path, description = "a semver version or a label")),
    responses(
        (status = 200, body = TestRunTargets),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        (status = 503, body = Problem, content_type = "application/problem+json", description = "registry-sandbox-unavailable: what is missing"),
    ), security(("bearer" = [])))]
pub async fn test_run_targets(
    State(registry): State<Registry>,
    Caller(p): Caller,
    Path((namespace, name, version)): Path<(String, String, String)>,
) -> Result<Json<TestRunTargets>> {
    let skill = skill_ref(&namespace, &name)?;
    Ok(Json(registry.test_run_targets(&p, &skill, &version).await?))
}

/// Runs a tool (arguments checked against its schema first) or a script
/// (under `scripts/`) of this version in the registry host's sandbox under
/// the strict test-run policy (no network, no grants, short timeout, small
/// caps) and returns how it ended. Admin or `publish:<namespace>`;
/// rate-limited per token; audited (`test-run`).
#[utoipa::path(post, path = "/api/v1/skills/{namespace}/{name}/versions/{version}/test-run", tag = "test-run",
    params(("namespace" = String, Path), ("name" = String, Path), ("version" = String, Path, description = "a semver version or a label")),
    request_body = TestRunRequest,
    responses(
        (status = 200, body = TestRunResult, description = "it ran (a non-zero exit or a timeout is an outcome)"),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        (status = 409, body = Problem, content_type = "application/problem+json", description = "registry-version-blocked"),
        (status = 422, body = Problem, content_type = "application/problem+json", description = "registry-test-run-unknown-tool, registry-test-run-unknown-script, registry-test-run-invalid-arguments (with `pointer`), registry-test-run-denied, registry-test-run-refused: nothing ran"),
        (status = 429, body = Problem, content_type = "application/problem+json", description = "registry-test-run-rate-limited, with Retry-After"),
        (status = 503, body = Problem, content_type = "application/problem+json", description = "registry-sandbox-unavailable (what is missing) or registry-test-run-busy: nothing ran"),
    ), security(("bearer" = [])))]
pub async fn test_run(
    State(registry): State<Registry>,
    Caller(p): Caller,
    Path((namespace, name, version)): Path<(String, String, String)>,
    body: std::result::Result<Json<TestRunRequest>, JsonRejection>,
) -> Result<Json<TestRunResult>> {
    let skill = skill_ref(&namespace, &name)?;
    // Authorised before the body is looked at.
    p.require_test_run(skill.namespace())?;
    let request = json_body(body)?;
    Ok(Json(
        registry.test_run(&p, &skill, &version, request).await?,
    ))
}

/// The versions waiting for review that the caller may review, oldest
/// first.
#[utoipa::path(get, path = "/api/v1/reviews", tag = "review",
    responses(
        (status = 200, body = Vec<PendingVersion>),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
    ), security(("bearer" = [])))]
pub async fn reviews(
    State(registry): State<Registry>,
    Caller(p): Caller,
) -> Result<Json<Vec<PendingVersion>>> {
    Ok(Json(registry.pending_reviews(&p).await?))
}

/// What a namespace requires of its versions.
#[utoipa::path(get, path = "/api/v1/namespaces/{namespace}/policy", tag = "review",
    params(("namespace" = String, Path)),
    responses(
        (status = 200, body = NamespacePolicy),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
    ), security(("bearer" = [])))]
pub async fn namespace_policy(
    State(registry): State<Registry>,
    Caller(p): Caller,
    Path(namespace): Path<String>,
) -> Result<Json<NamespacePolicy>> {
    let ns = Namespace::new(&namespace)?;
    Ok(Json(registry.namespace_policy(&p, &ns).await?))
}

/// Replaces what a namespace requires (admin).
#[utoipa::path(put, path = "/api/v1/namespaces/{namespace}/policy", tag = "review",
    params(("namespace" = String, Path)),
    request_body = NamespacePolicy,
    responses(
        (status = 200, body = NamespacePolicy),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
    ), security(("bearer" = [])))]
pub async fn set_namespace_policy(
    State(registry): State<Registry>,
    Caller(p): Caller,
    Path(namespace): Path<String>,
    body: std::result::Result<Json<NamespacePolicy>, JsonRejection>,
) -> Result<Json<NamespacePolicy>> {
    let ns = Namespace::new(&namespace)?;
    let policy = json_body(body)?;
    Ok(Json(registry.set_namespace_policy(&p, &ns, policy).await?))
}

/// The SSH keys allowed to sign a namespace's versions.
#[utoipa::path(get, path = "/api/v1/namespaces/{namespace}/signers", tag = "review",
    params(("namespace" = String, Path)),
    responses(
        (status = 200, body = Vec<SignerInfo>),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
    ), security(("bearer" = [])))]
pub async fn signers(
    State(registry): State<Registry>,
    Caller(p): Caller,
    Path(namespace): Path<String>,
) -> Result<Json<Vec<SignerInfo>>> {
    let ns = Namespace::new(&namespace)?;
    Ok(Json(registry.signers(&p, &ns).await?))
}

/// Registers a key allowed to sign a namespace's versions (admin): 201,
/// or 200 when it was registered already.
#[utoipa::path(post, path = "/api/v1/namespaces/{namespace}/signers", tag = "review",
    params(("namespace" = String, Path)),
    request_body = SignerKey,
    responses(
        (status = 201, body = SignerInfo),
        (status = 200, body = SignerInfo),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
    ), security(("bearer" = [])))]
pub async fn add_signer(
    State(registry): State<Registry>,
    Caller(p): Caller,
    Path(namespace): Path<String>,
    body: std::result::Result<Json<SignerKey>, JsonRejection>,
) -> Result<Response> {
    let ns = Namespace::new(&namespace)?;
    let key = json_body(body)?;
    let (info, added) = registry.add_signer(&p, &ns, &key).await?;
    let status = if added {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(info)).into_response())
}

/// Removes a key from a namespace (admin).
#[utoipa::path(delete, path = "/api/v1/namespaces/{namespace}/signers/{fingerprint}", tag = "review",
    params(("namespace" = String, Path), ("fingerprint" = String, Path)),
    responses(
        (status = 204),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ), security(("bearer" = [])))]
pub async fn remove_signer(
    State(registry): State<Registry>,
    Caller(p): Caller,
    Path((namespace, fingerprint)): Path<(String, String)>,
) -> Result<StatusCode> {
    let ns = Namespace::new(&namespace)?;
    registry.remove_signer(&p, &ns, &fingerprint).await?;
    Ok(StatusCode::NO_CONTENT)
}
