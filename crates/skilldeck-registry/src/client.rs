//! A blocking HTTP client of the registry API (no `server` feature needed):
//! one typed method per endpoint, returning the [`crate::wire`] types.
//!
//! - Errors: every non-success answer becomes a [`ClientError`]; an
//!   `application/problem+json` body is kept whole as
//!   [`ClientError::Problem`] (its diagnostics print as `file:line:col:
//!   code message`, [`diagnostic_line`]).
//! - The bearer token ([`Token`]) comes from a file or `SKILLDECK_TOKEN`; it
//!   is sent only as the `Authorization` header, never printed (its
//!   `Debug` is redacted), and redirects are not followed (a redirect could
//!   carry it to another host).
//! - Limits are named constants: [`CONNECT_TIMEOUT`], [`REQUEST_TIMEOUT`],
//!   [`MAX_DOWNLOAD_BYTES`], [`MAX_JSON_BYTES`].
//! - Downloads are verified before anyone uses them ([`Client::archive`]):
//!   the archive's sha256 against its `ETag`, the version's fingerprint
//!   against the `X-Skilldeck-Fingerprint` header. The content fingerprint
//!   of the unpacked files is checked again by whoever unpacks it
//!   (`skilldeck_package::Source::Fetched`).

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::names::{AgentId, Label, Namespace, SkillRef};
use crate::wire::{
    API_PREFIX, Agent, AgentLock, AgentSpec, Assignment, AssignmentView, FINGERPRINT_HEADER,
    GENERATION_HEADER, LabelMove, LabelMoved, PROBLEM_JSON, Page, Problem, Published, ReasonBody,
    Resolved, SkillDetail, SkillSummary, TestRunRequest, TestRunResult, TestRunTargets,
    TokenCreated, TokenInfo, TokenRequest, VersionDetail, WireDiagnostic,
};

/// Longest wait for a connection to the registry.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest one request may take, its body read in full.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(120);
/// Largest archive or file downloaded (a bigger answer is refused, not
/// truncated).
pub const MAX_DOWNLOAD_BYTES: u64 = 64 * 1024 * 1024;
/// Largest JSON answer read.
pub const MAX_JSON_BYTES: u64 = 16 * 1024 * 1024;
/// The environment variable holding the bearer token when no token file is
/// given.
pub const TOKEN_ENV: &str = "SKILLDECK_TOKEN";
/// Most characters of a non-problem error body quoted in an error.
const BODY_EXCERPT_CHARS: usize = 200;

/// Everything a registry call can fail with.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The registry answered with a problem (RFC 9457), kept whole.
    #[error("{url}: HTTP {} {}: {}", .problem.status, .problem.code, .problem.detail)]
    Problem {
        /// The request's URL.
        url: String,
        /// The problem as sent.
        problem: Box<Problem>,
    },
    /// The registry answered with an error that is not a problem document.
    #[error("{url}: HTTP {status}: {body}")]
    Status {
        /// The request's URL.
        url: String,
        /// The status.
        status: u16,
        /// The start of the body.
        body: String,
    },
    /// The request could not be sent or its answer not read.
    #[error("{url}: {message}")]
    Transport {
        /// The request's URL.
        url: String,
        /// What failed.
        message: String,
    },
    /// An answer that is not the JSON the endpoint documents.
    #[error("{url}: unexpected answer: {message}")]
    Decode {
        /// The request's URL.
        url: String,
        /// What is wrong.
        message: String,
    },
    /// An answer larger than allowed.
    #[error("{url}: the answer is larger than {limit} bytes; refused")]
    TooLarge {
        /// The request's URL.
        url: String,
        /// The limit.
        limit: u64,
    },
    /// A download whose bytes do not match its digest or fingerprint.
    #[error("{url}: integrity check failed: {message}; the download was discarded")]
    Integrity {
        /// The request's URL.
        url: String,
        /// What did not match.
        message: String,
    },
    /// The registry URL is not usable.
    #[error("registry URL '{url}': {message}")]
    Url {
        /// The URL as given.
        url: String,
        /// Why.
        message: String,
    },
    /// The token file cannot be read or is empty.
    #[error("{}: {message}", path.display())]
    Token {
        /// The token file.
        path: PathBuf,
        /// Why.
        message: String,
    },
}

impl ClientError {
    /// The problem the registry sent, when it sent one.
    pub fn problem(&self) -> Option<&Problem> {
        match self {
            ClientError::Problem { problem, .. } => Some(problem),
            _ => None,
        }
    }

    /// The HTTP status of an error answer.
    pub fn status(&self) -> Option<u16> {
        match self {
            ClientError::Problem { problem, .. } => Some(problem.status),
            ClientError::Status { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// True when the registry could not be reached or answered with a
    /// server error (worth retrying later; the last good state stays).
    pub fn is_unavailable(&self) -> bool {
        match self {
            ClientError::Transport { .. } => true,
            other => other.status().is_some_and(|s| s >= 500),
        }
    }
}

/// One diagnostic of a refusal as one line: `file:line:col: code message`
/// (the parts that are known).
pub fn diagnostic_line(d: &WireDiagnostic) -> String {
    let mut place = d.file.clone().unwrap_or_default();
    if let Some(line) = d.line {
        place.push_str(&format!(":{line}"));
        if let Some(col) = d.column {
            place.push_str(&format!(":{col}"));
        }
    }
    if place.is_empty() {
        format!("{}: {} {}", d.severity, d.code, d.message)
    } else {
        format!("{place}: {} {} {}", d.severity, d.code, d.message)
    }
}

/// A bearer token. Its `Debug` and `Display` never show it.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl Token {
    /// A token from its text (trimmed).
    pub fn new(text: &str) -> Option<Token> {
        let t = text.trim();
        (!t.is_empty()).then(|| Token(t.to_owned()))
    }

    /// The first line of `path`: the core's token-file rule
    /// ([`skilldeck::secret::read_secret_file`]).
    pub fn from_file(path: &Path) -> Result<Token, ClientError> {
        skilldeck::secret::read_secret_file(path)
            .map(Token)
            .map_err(|e| ClientError::Token {
                path: path.to_path_buf(),
                message: e.to_string(),
            })
    }

    /// `file`'s token when given, else [`TOKEN_ENV`]'s, else none.
    pub fn resolve(file: Option<&Path>) -> Result<Option<Token>, ClientError> {
        match file {
            Some(path) => Token::from_file(path).map(Some),
            None => Ok(std::env::var(TOKEN_ENV).ok().and_then(|t| Token::new(&t))),
        }
    }

    fn header(&self) -> String {
        format!("Bearer {}", self.0)
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Token({})", skilldeck::secret::REDACTED)
    }
}

/// A registry's lock as fetched with `If-None-Match`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockFetch {
    /// The lock has not changed since the ETag given.
    NotModified,
    /// The lock and its ETag.
    Fresh {
        /// The lock.
        lock: AgentLock,
        /// Its ETag (to send next time).
        etag: String,
        /// The database generation it is valid at (`None` from a
        /// registry that does not say): a lock of a lower generation than
        /// one already applied is older and must not replace it.
        generation: Option<i64>,
    },
}

/// A downloaded archive, checked.
#[derive(Debug, Clone)]
pub struct Archive {
    /// The tar.gz bytes.
    pub bytes: Vec<u8>,
    /// The SHA-256 of the bytes.
    pub sha256: skilldeck::Digest,
}

/// The content a publish sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PackageKind {
    /// A tar.gz.
    TarGz,
    /// A zip.
    Zip,
}

impl PackageKind {
    /// Told by the first bytes; `None` when neither.
    pub fn sniff(bytes: &[u8]) -> Option<PackageKind> {
        if bytes.starts_with(&[0x1f, 0x8b]) {
            Some(PackageKind::TarGz)
        } else if bytes.starts_with(b"PK\x03\x04") || bytes.starts_with(b"PK\x05\x06") {
            Some(PackageKind::Zip)
        } else {
            None
        }
    }

    fn content_type(self) -> &'static str {
        match self {
            PackageKind::TarGz => "application/gzip",
            PackageKind::Zip => "application/zip",
        }
    }
}

/// The `source` a lockfile records for a skill installed from a registry:
/// `registry+URL#namespace/name@version`.
pub fn lock_source(registry: &str, skill: &SkillRef, version: &str) -> String {
    format!(
        "registry+{}#{skill}@{version}",
        registry.trim_end_matches('/')
    )
}

/// The registry URL, skill and version of a [`lock_source`] string; `None`
/// when `source` is not one.
pub fn parse_lock_source(source: &str) -> Option<(String, SkillRef, String)> {
    let rest = source.strip_prefix("registry+")?;
    let (url, spec) = rest.rsplit_once('#')?;
    let (skill, version) = spec.rsplit_once('@')?;
    let skill = SkillRef::parse(skill).ok()?;
    (!url.is_empty() && !version.is_empty()).then(|| (url.to_owned(), skill, version.to_owned()))
}

/// Percent-encodes one path segment or query value: the core's rule
/// ([`skilldeck::text::percent::encode_component`]).
fn encode(text: &str) -> std::borrow::Cow<'_, str> {
    skilldeck::text::percent::encode_component(text)
}

/// The error an answer with status `status` (an error) maps to.
pub fn error_from_answer(
    url: &str,
    status: u16,
    content_type: Option<&str>,
    body: &[u8],
) -> ClientError {
    let is_json = content_type.is_some_and(|c| {
        let c = c.split(';').next().unwrap_or_default().trim();
        c.eq_ignore_ascii_case(PROBLEM_JSON) || c.eq_ignore_ascii_case("application/json")
    });
    if is_json && let Ok(problem) = serde_json::from_slice::<Problem>(body) {
        return ClientError::Problem {
            url: url.to_owned(),
            problem: Box::new(problem),
        };
    }
    let text = String::from_utf8_lossy(body);
    let body: String = skilldeck::spec::replace_controls(&text, true)
        .chars()
        .take(BODY_EXCERPT_CHARS)
        .collect();
    ClientError::Status {
        url: url.to_owned(),
        status,
        body,
    }
}

/// One answer, read in full (within a cap).
struct Answer {
    status: u16,
    etag: Option<String>,
    generation: Option<i64>,
    fingerprint: Option<String>,
    body: Vec<u8>,
}

/// A client of one registry.
#[derive(Debug, Clone)]
pub struct Client {
    http: reqwest::blocking::Client,
    base: String,
    token: Option<Token>,
    /// The newest database generation any answer carried (shared by
    /// clones). Sent with every request, so a registry of N replicas
    /// behind a load balancer never answers with an older view than one
    /// this client has seen (its own writes included).
    seen: std::sync::Arc<std::sync::atomic::AtomicI64>,
}

impl Client {
    /// A client of the registry at `url` (`http://` or `https://`; the
    /// API is under [`API_PREFIX`]), sending `token` when given.
    pub fn new(url: &str, token: Option<Token>) -> Result<Client, ClientError> {
        let base = url.trim_end_matches('/').to_owned();
        let fail = |message: &str| ClientError::Url {
            url: url.to_owned(),
            message: message.to_owned(),
        };
        let rest = base
            .strip_prefix("http://")
            .or_else(|| base.strip_prefix("https://"))
            .ok_or_else(|| fail("expected http:// or https://"))?;
        if rest.is_empty() || rest.contains(['?', '#', ' ']) {
            return Err(fail("expected http(s)://HOST[:PORT][/PATH]"));
        }
        let http = reqwest::blocking::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(REQUEST_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("skilldeck/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| fail(&e.to_string()))?;
        Ok(Client {
            http,
            base,
            token,
            seen: std::sync::Arc::new(std::sync::atomic::AtomicI64::new(0)),
        })
    }

    /// The newest database generation an answer to this client (or a
    /// clone) carried; 0 before any.
    pub fn seen(&self) -> i64 {
        self.seen.load(std::sync::atomic::Ordering::Acquire)
    }

    /// The registry's URL as given (without a trailing `/`).
    pub fn url(&self) -> &str {
        &self.base
    }

    fn api(&self, path: &str) -> String {
        format!("{}{API_PREFIX}{path}", self.base)
    }

    fn send(
        &self,
        request: reqwest::blocking::RequestBuilder,
        url: &str,
        cap: u64,
    ) -> Result<Answer, ClientError> {
        let request = match &self.token {
            Some(t) => request.header(reqwest::header::AUTHORIZATION, t.header()),
            None => request,
        };
        let seen = self.seen();
        let request = if seen > 0 {
            request.header(GENERATION_HEADER, seen.to_string())
        } else {
            request
        };
        let response = request.send().map_err(|e| ClientError::Transport {
            url: url.to_owned(),
            message: error_chain(&e),
        })?;
        let status = response.status().as_u16();
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let etag = header("etag");
        let generation = header(GENERATION_HEADER).and_then(|g| g.trim().parse::<i64>().ok());
        if let Some(g) = generation {
            self.seen.fetch_max(g, std::sync::atomic::Ordering::AcqRel);
        }
        let fingerprint = header(FINGERPRINT_HEADER);
        let content_type = header("content-type");
        if response.content_length().is_some_and(|n| n > cap) {
            return Err(ClientError::TooLarge {
                url: url.to_owned(),
                limit: cap,
            });
        }
        let mut body = Vec::new();
        response
            .take(cap + 1)
            .read_to_end(&mut body)
            .map_err(|e| ClientError::Transport {
                url: url.to_owned(),
                message: e.to_string(),
            })?;
        if body.len() as u64 > cap {
            return Err(ClientError::TooLarge {
                url: url.to_owned(),
                limit: cap,
            });
        }
        if status >= 400 {
            return Err(error_from_answer(
                url,
                status,
                content_type.as_deref(),
                &body,
            ));
        }
        Ok(Answer {
            status,
            etag,
            generation,
            fingerprint,
            body,
        })
    }

    fn json<T: serde::de::DeserializeOwned>(url: &str, answer: &Answer) -> Result<T, ClientError> {
        serde_json::from_slice(&answer.body).map_err(|e| ClientError::Decode {
            url: url.to_owned(),
            message: e.to_string(),
        })
    }

    fn get<T: serde::de::DeserializeOwned>(&self, path: &str) -> Result<T, ClientError> {
        let url = self.api(path);
        let answer = self.send(self.http.get(&url), &url, MAX_JSON_BYTES)?;
        Client::json(&url, &answer)
    }

    fn with_body<B: serde::Serialize, T: serde::de::DeserializeOwned>(
        &self,
        method: reqwest::Method,
        path: &str,
        body: &B,
    ) -> Result<T, ClientError> {
        let url = self.api(path);
        let bytes = serde_json::to_vec(body).map_err(|e| ClientError::Decode {
            url: url.clone(),
            message: e.to_string(),
        })?;
        let request = self
            .http
            .request(method, &url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(bytes);
        let answer = self.send(request, &url, MAX_JSON_BYTES)?;
        Client::json(&url, &answer)
    }

    fn delete(&self, path: &str) -> Result<(), ClientError> {
        let url = self.api(path);
        self.send(self.http.delete(&url), &url, MAX_JSON_BYTES)
            .map(|_| ())
    }

    fn delete_json<T: serde::de::DeserializeOwned>(&self, path: &str) -> Result<T, ClientError> {
        let url = self.api(path);
        let answer = self.send(self.http.delete(&url), &url, MAX_JSON_BYTES)?;
        Client::json(&url, &answer)
    }

    /// `GET /healthz`: Ok when the registry answers.
    pub fn health(&self) -> Result<(), ClientError> {
        let url = format!("{}/healthz", self.base);
        self.send(self.http.get(&url), &url, MAX_JSON_BYTES)
            .map(|_| ())
    }

    /// `POST /skills`: publishes a package (tar.gz or zip bytes) into
    /// `namespace`, as `version` (else the frontmatter's
    /// `metadata.version`).
    pub fn publish(
        &self,
        namespace: &Namespace,
        version: Option<&str>,
        package: Vec<u8>,
        signature: Option<&[u8]>,
    ) -> Result<Published, ClientError> {
        self.publish_with(namespace, version, package, signature, &[])
    }

    /// `POST /skills` with the resolution of the skill's dependencies
    /// (`environments`, stored with the version; empty: none, the package
    /// is the whole body), as a `multipart/form-data` form of the package
    /// and the resolution's JSON.
    pub fn publish_with(
        &self,
        namespace: &Namespace,
        version: Option<&str>,
        package: Vec<u8>,
        signature: Option<&[u8]>,
        environments: &[skilldeck::environment::LockedEnvironment],
    ) -> Result<Published, ClientError> {
        let mut url = self.api(&format!("/skills?namespace={}", encode(namespace.as_str())));
        if let Some(v) = version {
            url.push_str(&format!("&version={}", encode(v)));
        }
        let kind = PackageKind::sniff(&package).ok_or_else(|| ClientError::Decode {
            url: url.clone(),
            message: "the package is neither a tar.gz nor a zip".to_owned(),
        })?;
        let mut request = self.http.post(&url);
        if environments.is_empty() {
            request = request.header(reqwest::header::CONTENT_TYPE, kind.content_type());
        }
        if let Some(signature) = signature {
            use base64::Engine as _;
            request = request.header(
                crate::wire::SIGNATURE_HEADER,
                base64::engine::general_purpose::STANDARD.encode(signature),
            );
        }
        let request = if environments.is_empty() {
            request.body(package)
        } else {
            let json = serde_json::to_vec(environments).map_err(|e| ClientError::Decode {
                url: url.clone(),
                message: format!("the resolution could not be written: {e}"),
            })?;
            let (content_type, body) = publish_form(&package, kind.content_type(), &json);
            request
                .header(reqwest::header::CONTENT_TYPE, content_type)
                .body(body)
        };
        let answer = self.send(request, &url, MAX_JSON_BYTES)?;
        Client::json(&url, &answer)
    }

    /// `GET /skills`: one page of skills (ranked when `q` is given).
    pub fn list_skills(
        &self,
        q: Option<&str>,
        namespace: Option<&Namespace>,
        cursor: Option<&str>,
        limit: Option<u32>,
    ) -> Result<Page<SkillSummary>, ClientError> {
        let mut query = Vec::new();
        if let Some(q) = q {
            query.push(format!("q={}", encode(q)));
        }
        if let Some(ns) = namespace {
            query.push(format!("namespace={}", encode(ns.as_str())));
        }
        if let Some(c) = cursor {
            query.push(format!("cursor={}", encode(c)));
        }
        if let Some(l) = limit {
            query.push(format!("limit={l}"));
        }
        let path = if query.is_empty() {
            "/skills".to_owned()
        } else {
            format!("/skills?{}", query.join("&"))
        };
        self.get(&path)
    }

    fn skill_path(skill: &SkillRef) -> String {
        format!(
            "/skills/{}/{}",
            encode(skill.namespace().as_str()),
            encode(skill.name())
        )
    }

    /// `GET /skills/{namespace}/{name}`.
    pub fn skill(&self, skill: &SkillRef) -> Result<SkillDetail, ClientError> {
        self.get(&Client::skill_path(skill))
    }

    /// `GET /skills/{namespace}/{name}/versions/{version}` (`version` may
    /// be a label).
    pub fn version(&self, skill: &SkillRef, version: &str) -> Result<VersionDetail, ClientError> {
        self.get(&Client::version_path(skill, version))
    }

    fn version_path(skill: &SkillRef, version: &str) -> String {
        format!("{}/versions/{}", Client::skill_path(skill), encode(version))
    }

    /// `GET .../versions/{version}/test-run`: the tools and scripts a
    /// test run of that version (or label) can run, and its policy.
    pub fn test_run_targets(
        &self,
        skill: &SkillRef,
        version: &str,
    ) -> Result<TestRunTargets, ClientError> {
        self.get(&format!(
            "{}/test-run",
            Client::version_path(skill, version)
        ))
    }

    /// `POST .../versions/{version}/test-run`: runs one tool or script of
    /// that version in the registry host's sandbox (admin, or publish
    /// scope on the namespace) and returns how it ended.
    pub fn test_run(
        &self,
        skill: &SkillRef,
        version: &str,
        request: &TestRunRequest,
    ) -> Result<TestRunResult, ClientError> {
        self.with_body(
            reqwest::Method::POST,
            &format!("{}/test-run", Client::version_path(skill, version)),
            request,
        )
    }

    /// `GET .../versions/{version}/archive` of the version `detail`
    /// describes (by its exact version, never a label, so a label moving
    /// meanwhile cannot mix two versions): [`Client::archive_of`].
    pub fn archive(&self, detail: &VersionDetail) -> Result<Archive, ClientError> {
        let skill = SkillRef::new(detail.namespace.as_str(), &detail.name).map_err(|e| {
            ClientError::Decode {
                url: self.base.clone(),
                message: e.to_string(),
            }
        })?;
        self.archive_of(&skill, &detail.version, &detail.fingerprint)
    }

    /// `GET .../versions/{version}/archive`, checked: the bytes against the
    /// `ETag` (their sha256) and the `X-Skilldeck-Fingerprint` header
    /// against `fingerprint` (the manifest's or the lock's). A mismatch
    /// discards the bytes.
    pub fn archive_of(
        &self,
        skill: &SkillRef,
        version: &str,
        fingerprint: &str,
    ) -> Result<Archive, ClientError> {
        let url = self.api(&format!(
            "{}/versions/{}/archive",
            Client::skill_path(skill),
            encode(version)
        ));
        let answer = self.send(self.http.get(&url), &url, MAX_DOWNLOAD_BYTES)?;
        let sha256 = skilldeck::Digest::of(&answer.body);
        if let Some(etag) = &answer.etag
            && skilldeck::Digest::from_etag(etag) != Some(sha256)
        {
            return Err(ClientError::Integrity {
                url,
                message: format!("the archive's sha256 is {sha256}; its ETag says {etag}"),
            });
        }
        match &answer.fingerprint {
            Some(f) if f.trim() == fingerprint => {}
            Some(f) => {
                return Err(ClientError::Integrity {
                    url,
                    message: format!("the archive is of fingerprint {f}; expected {fingerprint}"),
                });
            }
            None => {
                return Err(ClientError::Integrity {
                    url,
                    message: format!("the answer has no {FINGERPRINT_HEADER} header"),
                });
            }
        }
        Ok(Archive {
            bytes: answer.body,
            sha256,
        })
    }

    /// `PUT /skills/{namespace}/{name}/labels/{label}`.
    pub fn move_label(
        &self,
        skill: &SkillRef,
        label: &Label,
        version: &str,
    ) -> Result<LabelMoved, ClientError> {
        self.move_label_overriding(skill, label, version, None)
    }

    /// [`Client::move_label`] with an `override_reason` (a protected
    /// label to a version the risk audit rated too high; recorded in the
    /// audit log).
    pub fn move_label_overriding(
        &self,
        skill: &SkillRef,
        label: &Label,
        version: &str,
        override_reason: Option<&str>,
    ) -> Result<LabelMoved, ClientError> {
        self.with_body(
            reqwest::Method::PUT,
            &format!(
                "{}/labels/{}",
                Client::skill_path(skill),
                encode(label.as_str())
            ),
            &LabelMove {
                override_reason: override_reason.map(str::to_owned),
                version: version.to_owned(),
            },
        )
    }

    fn marker_path(skill: &SkillRef, version: &str, marker: &str) -> String {
        format!("{}/{marker}", Client::version_path(skill, version))
    }

    /// `POST .../versions/{version}/yank`: agents stop getting it and
    /// `latest` moves back (admin).
    pub fn yank(
        &self,
        skill: &SkillRef,
        version: &str,
        reason: &str,
    ) -> Result<VersionDetail, ClientError> {
        self.with_body(
            reqwest::Method::POST,
            &Client::marker_path(skill, version, "yank"),
            &ReasonBody {
                reason: reason.to_owned(),
            },
        )
    }

    /// `DELETE .../versions/{version}/yank` (admin).
    pub fn unyank(&self, skill: &SkillRef, version: &str) -> Result<VersionDetail, ClientError> {
        self.delete_json(&Client::marker_path(skill, version, "yank"))
    }

    /// `POST .../versions/{version}/deprecate`: still served, marked with
    /// `message` (admin).
    pub fn deprecate(
        &self,
        skill: &SkillRef,
        version: &str,
        message: &str,
    ) -> Result<VersionDetail, ClientError> {
        self.with_body(
            reqwest::Method::POST,
            &Client::marker_path(skill, version, "deprecate"),
            &ReasonBody {
                reason: message.to_owned(),
            },
        )
    }

    /// `DELETE .../versions/{version}/deprecate` (admin).
    pub fn undeprecate(
        &self,
        skill: &SkillRef,
        version: &str,
    ) -> Result<VersionDetail, ClientError> {
        self.delete_json(&Client::marker_path(skill, version, "deprecate"))
    }

    fn agent_path(id: &AgentId) -> String {
        format!("/agents/{}", encode(id.as_str()))
    }

    /// `POST /agents`.
    pub fn create_agent(&self, spec: &AgentSpec) -> Result<Agent, ClientError> {
        self.with_body(reqwest::Method::POST, "/agents", spec)
    }

    /// `GET /agents/{id}`.
    pub fn agent(&self, id: &AgentId) -> Result<Agent, ClientError> {
        self.get(&Client::agent_path(id))
    }

    /// `GET /agents`: one page.
    pub fn list_agents(
        &self,
        cursor: Option<&str>,
        limit: Option<u32>,
    ) -> Result<Page<Agent>, ClientError> {
        let mut query = Vec::new();
        if let Some(c) = cursor {
            query.push(format!("cursor={}", encode(c)));
        }
        if let Some(l) = limit {
            query.push(format!("limit={l}"));
        }
        if query.is_empty() {
            self.get("/agents")
        } else {
            self.get(&format!("/agents?{}", query.join("&")))
        }
    }

    /// `PUT /agents/{id}` (replaces the agent's settings).
    pub fn update_agent(&self, spec: &AgentSpec) -> Result<Agent, ClientError> {
        self.with_body(reqwest::Method::PUT, &Client::agent_path(&spec.id), spec)
    }

    /// `DELETE /agents/{id}`.
    pub fn delete_agent(&self, id: &AgentId) -> Result<(), ClientError> {
        self.delete(&Client::agent_path(id))
    }

    fn assignment_path(id: &AgentId, skill: &SkillRef) -> String {
        format!(
            "{}/skills/{}/{}",
            Client::agent_path(id),
            encode(skill.namespace().as_str()),
            encode(skill.name())
        )
    }

    /// `PUT /agents/{id}/skills/{namespace}/{name}`.
    pub fn assign(
        &self,
        id: &AgentId,
        skill: &SkillRef,
        assignment: &Assignment,
    ) -> Result<AssignmentView, ClientError> {
        self.with_body(
            reqwest::Method::PUT,
            &Client::assignment_path(id, skill),
            assignment,
        )
    }

    /// `DELETE /agents/{id}/skills/{namespace}/{name}`.
    pub fn unassign(&self, id: &AgentId, skill: &SkillRef) -> Result<(), ClientError> {
        self.delete(&Client::assignment_path(id, skill))
    }

    /// `GET /agents/{id}/skills`.
    pub fn assignments(&self, id: &AgentId) -> Result<Vec<AssignmentView>, ClientError> {
        self.get(&format!("{}/skills", Client::agent_path(id)))
    }

    /// `POST /agents/{id}/tokens`: a token scoped to the agent (shown
    /// once), expiring `expires_in_seconds` after creation when given.
    pub fn agent_token(
        &self,
        id: &AgentId,
        name: Option<String>,
        expires_in_seconds: Option<u64>,
    ) -> Result<TokenCreated, ClientError> {
        self.with_body(
            reqwest::Method::POST,
            &format!("{}/tokens", Client::agent_path(id)),
            &TokenRequest {
                name,
                scopes: Vec::new(),
                expires_in_seconds,
            },
        )
    }

    /// `POST /tokens`: a token with any scopes (admin; shown once).
    pub fn create_token(&self, request: &TokenRequest) -> Result<TokenCreated, ClientError> {
        self.with_body(reqwest::Method::POST, "/tokens", request)
    }

    /// `GET /tokens`: one page (an admin sees every token, another token
    /// itself); never secrets or hashes.
    pub fn list_tokens(
        &self,
        cursor: Option<&str>,
        limit: Option<u32>,
    ) -> Result<Page<TokenInfo>, ClientError> {
        let mut query = Vec::new();
        if let Some(c) = cursor {
            query.push(format!("cursor={}", encode(c)));
        }
        if let Some(l) = limit {
            query.push(format!("limit={l}"));
        }
        if query.is_empty() {
            self.get("/tokens")
        } else {
            self.get(&format!("/tokens?{}", query.join("&")))
        }
    }

    /// `DELETE /tokens/{id}`: revokes a token; answers its record.
    pub fn revoke_token(&self, id: &str) -> Result<TokenInfo, ClientError> {
        let url = self.api(&format!("/tokens/{}", encode(id)));
        let answer = self.send(self.http.delete(&url), &url, MAX_JSON_BYTES)?;
        Client::json(&url, &answer)
    }

    /// `GET /agents/{id}/resolved`.
    pub fn resolved(&self, id: &AgentId) -> Result<Resolved, ClientError> {
        self.get(&format!("{}/resolved", Client::agent_path(id)))
    }

    /// `GET /agents/{id}/lock`, with `If-None-Match: etag` when given.
    pub fn lock(&self, id: &AgentId, etag: Option<&str>) -> Result<LockFetch, ClientError> {
        let url = self.api(&format!("{}/lock", Client::agent_path(id)));
        let mut request = self.http.get(&url);
        if let Some(tag) = etag {
            request = request.header(reqwest::header::IF_NONE_MATCH, tag);
        }
        let answer = self.send(request, &url, MAX_JSON_BYTES)?;
        if answer.status == 304 {
            return Ok(LockFetch::NotModified);
        }
        let lock = Client::json(&url, &answer)?;
        let etag = answer.etag.ok_or_else(|| ClientError::Decode {
            url: url.clone(),
            message: "the lock has no ETag".to_owned(),
        })?;
        Ok(LockFetch::Fresh {
            lock,
            etag,
            generation: answer.generation,
        })
    }
}

/// An error with its causes (reqwest hides the useful part in `source`).
/// URLs as the HTTP client parses and resolves them (RFC 3986).
pub use reqwest::Url;

/// Most redirects a [`PublicClient`] follows for one request.
pub const MAX_PUBLIC_REDIRECTS: usize = 5;

/// A public document fetched by a [`PublicClient`].
#[derive(Debug, Clone)]
pub struct PublicAnswer {
    /// The URL the answer came from (after redirects).
    pub url: String,
    /// Its `Content-Type`, when given.
    pub content_type: Option<String>,
    /// The body, read in full within the cap.
    pub body: Vec<u8>,
}

/// A client of public documents on any host (a well-known discovery
/// index and the artifacts it names): the registry client's HTTP stack,
/// timeouts and size caps, no credential ever sent, and redirects
/// followed (the discovery spec requires it) at most
/// [`MAX_PUBLIC_REDIRECTS`] times, each target checked by the caller's
/// rule first (a redirect to a URL the rule refuses fails the request).
#[derive(Debug, Clone)]
pub struct PublicClient {
    http: reqwest::blocking::Client,
}

impl PublicClient {
    /// A client whose every URL, redirects included, must pass `allowed`
    /// (`Err(why)` refuses it). The caller checks the first URL itself.
    pub fn new(
        allowed: impl Fn(&reqwest::Url) -> Result<(), String> + Send + Sync + 'static,
    ) -> Result<PublicClient, ClientError> {
        let policy = reqwest::redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() >= MAX_PUBLIC_REDIRECTS {
                let why = format!("more than {MAX_PUBLIC_REDIRECTS} redirects");
                return attempt.error(why);
            }
            match allowed(attempt.url()) {
                Ok(()) => attempt.follow(),
                Err(why) => {
                    let why = format!("a redirect to {}: {why}", attempt.url());
                    attempt.error(why)
                }
            }
        });
        let http = reqwest::blocking::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(REQUEST_TIMEOUT)
            .redirect(policy)
            .user_agent(concat!("skilldeck/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ClientError::Url {
                url: "(public client)".to_owned(),
                message: e.to_string(),
            })?;
        Ok(PublicClient { http })
    }

    /// `GET url`, its body read in full when at most `cap` bytes (a larger
    /// one is refused, not truncated). An error status is an error.
    pub fn get(&self, url: &str, cap: u64) -> Result<PublicAnswer, ClientError> {
        let response = self
            .http
            .get(url)
            .send()
            .map_err(|e| ClientError::Transport {
                url: url.to_owned(),
                message: error_chain(&e),
            })?;
        let status = response.status().as_u16();
        let final_url = response.url().to_string();
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        if response.content_length().is_some_and(|n| n > cap) {
            return Err(ClientError::TooLarge {
                url: url.to_owned(),
                limit: cap,
            });
        }
        let mut body = Vec::new();
        response
            .take(cap + 1)
            .read_to_end(&mut body)
            .map_err(|e| ClientError::Transport {
                url: url.to_owned(),
                message: e.to_string(),
            })?;
        if body.len() as u64 > cap {
            return Err(ClientError::TooLarge {
                url: url.to_owned(),
                limit: cap,
            });
        }
        if status >= 400 {
            return Err(error_from_answer(
                url,
                status,
                content_type.as_deref(),
                &body,
            ));
        }
        Ok(PublicAnswer {
            url: final_url,
            content_type,
            body,
        })
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

/// A `multipart/form-data` body of a publish (RFC 7578): the package
/// (`content_type`) and the resolution's JSON, separated by a boundary
/// made from their digest and checked to occur in neither. Returns the
/// form's content type and its bytes.
fn publish_form(package: &[u8], content_type: &str, json: &[u8]) -> (String, Vec<u8>) {
    use crate::wire::{PUBLISH_ENVIRONMENTS_FIELD, PUBLISH_PACKAGE_FIELD};
    let mut seed = skilldeck::Digest::of(json).hex();
    let boundary = loop {
        let b = format!("skilldeck-{}", &seed[..40]);
        let inside = |hay: &[u8]| hay.windows(b.len()).any(|w| w == b.as_bytes());
        if !inside(package) && !inside(json) {
            break b;
        }
        seed = skilldeck::Digest::of(seed.as_bytes()).hex();
    };
    let mut body = Vec::with_capacity(package.len() + json.len() + 512);
    let part = |body: &mut Vec<u8>, name: &str, extra: &str, ty: &str, bytes: &[u8]| {
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"{extra}\r\n\
                 Content-Type: {ty}\r\n\r\n"
            )
            .as_bytes(),
        );
        body.extend_from_slice(bytes);
        body.extend_from_slice(b"\r\n");
    };
    part(
        &mut body,
        PUBLISH_PACKAGE_FIELD,
        "; filename=\"package\"",
        content_type,
        package,
    );
    part(
        &mut body,
        PUBLISH_ENVIRONMENTS_FIELD,
        "",
        "application/json",
        json,
    );
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem_body() -> Vec<u8> {
        serde_json::to_vec(&serde_json::json!({
            "type": "about:blank",
            "title": "package refused",
            "status": 422,
            "detail": "the package was refused",
            "code": "registry-package-refused",
            "diagnostics": [{
                "code": "name-mismatch",
                "severity": "error",
                "message": "name does not match the folder",
                "file": "pdf/SKILL.md",
                "line": 2,
                "column": 7
            }]
        }))
        .unwrap_or_default()
    }

    #[test]
    fn a_problem_json_answer_becomes_a_typed_problem_with_its_diagnostics() {
        let e = error_from_answer(
            "http://r/api/v1/skills",
            422,
            Some("application/problem+json"),
            &problem_body(),
        );
        let p = e.problem().cloned().unwrap_or_else(|| panic!("{e:?}"));
        assert_eq!(p.code, "registry-package-refused");
        assert_eq!(e.status(), Some(422));
        assert_eq!(
            diagnostic_line(&p.diagnostics[0]),
            "pdf/SKILL.md:2:7: error name-mismatch name does not match the folder"
        );
        assert!(e.to_string().contains("HTTP 422 registry-package-refused"));
    }

    #[test]
    fn a_non_problem_error_keeps_status_and_a_short_printable_excerpt() {
        let body = format!("oops\x1b[31m{}", "x".repeat(1000));
        let e = error_from_answer("http://r/x", 502, Some("text/html"), body.as_bytes());
        match &e {
            ClientError::Status { status, body, .. } => {
                assert_eq!(*status, 502);
                assert!(body.chars().count() <= BODY_EXCERPT_CHARS);
                assert!(!body.contains('\x1b'));
            }
            other => panic!("{other:?}"),
        }
        assert!(e.is_unavailable());
    }

    #[test]
    fn a_malformed_problem_body_is_a_status_error_not_a_panic() {
        let e = error_from_answer("http://r/x", 403, Some(PROBLEM_JSON), b"{not json");
        assert!(matches!(e, ClientError::Status { status: 403, .. }));
        assert!(!e.is_unavailable());
    }

    #[test]
    fn a_client_error_status_is_not_unavailability_but_transport_is() {
        let e = error_from_answer("u", 404, Some(PROBLEM_JSON), &problem_body());
        assert!(!e.is_unavailable());
        let t = ClientError::Transport {
            url: "u".into(),
            message: "connection refused".into(),
        };
        assert!(t.is_unavailable());
    }

    #[test]
    fn the_token_never_shows_in_debug_output() {
        let t = Token::new(" sdk_secret ").unwrap_or_else(|| panic!("token"));
        assert_eq!(format!("{t:?}"), "Token(<redacted>)");
        let c = Client::new("http://127.0.0.1:1", Some(t)).unwrap_or_else(|e| panic!("{e}"));
        assert!(!format!("{c:?}").contains("sdk_secret"));
    }

    #[test]
    fn an_empty_token_file_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("token");
        std::fs::write(&path, "\n").unwrap_or_else(|e| panic!("{e}"));
        let e = Token::from_file(&path)
            .err()
            .unwrap_or_else(|| panic!("empty"));
        assert!(e.to_string().contains(&path.display().to_string()));
    }

    #[test]
    fn registry_urls_must_be_http_or_https() {
        assert!(Client::new("ftp://x", None).is_err());
        assert!(Client::new("http://", None).is_err());
        let c = Client::new("http://127.0.0.1:7878/", None).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.url(), "http://127.0.0.1:7878");
    }

    #[test]
    fn a_lock_source_round_trips() {
        let skill = SkillRef::parse("acme/pdf").unwrap_or_else(|e| panic!("{e}"));
        let s = lock_source("http://127.0.0.1:7878/", &skill, "1.2.0");
        assert_eq!(s, "registry+http://127.0.0.1:7878#acme/pdf@1.2.0");
        let (url, back, v) = parse_lock_source(&s).unwrap_or_else(|| panic!("{s}"));
        assert_eq!(
            (url.as_str(), &back, v.as_str()),
            ("http://127.0.0.1:7878", &skill, "1.2.0")
        );
        assert!(parse_lock_source("../dist/pdf.tar.gz").is_none());
    }

    #[test]
    fn query_values_and_segments_are_percent_encoded() {
        assert_eq!(encode("pdf tables&x=1"), "pdf%20tables%26x%3D1");
        assert_eq!(encode("1.2.0+build"), "1.2.0%2Bbuild");
    }
}
