//! The registry's JSON, as the server writes it and clients read it (one
//! definition for the server, the CLI, the MCP face and the web UI). Every
//! type derives `utoipa::ToSchema`, so the OpenAPI document is generated
//! from the same structs. Timestamps are RFC 3339 text in UTC.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::names::{AgentId, Label, Namespace};

/// The media type of every error body.
pub const PROBLEM_JSON: &str = "application/problem+json";
/// The header carrying a version's content fingerprint.
pub const FINGERPRINT_HEADER: &str = "x-skilldeck-fingerprint";
/// The header carrying a database generation. On an answer: the
/// generation it is valid at (every write up to it is reflected; on a
/// lock or catalog, none after it either). On a request: the newest the
/// client has seen; the replica applies every write up to it before
/// answering (read-your-writes and monotonic reads behind a load
/// balancer without affinity).
pub const GENERATION_HEADER: &str = "x-skilldeck-generation";
/// The header a publish carries its SSH signature in: the armored
/// `sshsig`, base64-encoded (a header holds no newline).
pub const SIGNATURE_HEADER: &str = "x-skilldeck-signature";
/// The multipart form field of a publish holding the package (a publish
/// whose body is `multipart/form-data`; a plain tar.gz or zip body is the
/// package alone).
pub const PUBLISH_PACKAGE_FIELD: &str = "package";
/// The multipart form field of a publish holding the resolution of the
/// skill's dependencies (JSON: a list of environment records, the
/// version's [`VersionDetail::environments`]).
pub const PUBLISH_ENVIRONMENTS_FIELD: &str = "environments";
/// The header carrying a file's `sha256:` digest.
pub const DIGEST_HEADER: &str = "x-skilldeck-digest";
/// The API's path prefix.
pub const API_PREFIX: &str = "/api/v1";

/// One check of `/readyz`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ReadyCheck {
    /// Whether it passed.
    pub ok: bool,
    /// What failed and what to look at (absent when it passed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// The answer of `/readyz` (200 when every check passed, else 503).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Readiness {
    /// Whether this replica should get traffic: every check passed.
    pub ready: bool,
    /// The database answered a bounded query.
    pub database: ReadyCheck,
    /// Every migration of this build is applied.
    pub migrations: ReadyCheck,
    /// The blob store answered.
    pub store: ReadyCheck,
}

/// An error (RFC 9457 problem details) with a stable `code` and, when a
/// package was refused, its diagnostics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Problem {
    /// A URI naming the kind of problem (`about:blank` or a code URI).
    #[serde(rename = "type")]
    pub kind: String,
    /// A short summary.
    pub title: String,
    /// The HTTP status.
    pub status: u16,
    /// What happened, for a person.
    pub detail: String,
    /// A stable kebab-case code (`registry-version-exists`, ...).
    pub code: String,
    /// The validation diagnostics of a refused package.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diagnostics: Vec<WireDiagnostic>,
    /// The risk audit's findings that refused a package.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<WireFinding>,
    /// The JSON pointer (RFC 6901) of the failing field, when a request's
    /// arguments were refused (`/target`, `/` for the whole object).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
}

/// One finding of the static risk audit (`skilldeck audit`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct WireFinding {
    /// The rule's stable code (`exec.pipe-to-shell`, ...).
    pub code: String,
    /// `low`, `medium`, `high` or `critical`.
    pub severity: String,
    /// The kind of risk.
    pub class: String,
    /// The file inside the skill.
    pub file: String,
    /// 1-based line.
    #[serde(default)]
    pub line: Option<u32>,
    /// 1-based column.
    #[serde(default)]
    pub column: Option<u32>,
    /// The text that matched (secrets redacted).
    pub evidence: String,
    /// What was found and why it matters.
    pub message: String,
    /// Why it was accepted, when the skill allows it.
    #[serde(default)]
    pub allowed: Option<String>,
}

/// A version's risk audit at publish.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct WireAudit {
    /// The worst finding that counts, or `clean`.
    pub verdict: String,
    /// Every finding.
    pub findings: Vec<WireFinding>,
}

/// A version's report made as `skilldeck validate --lenient` makes it (a
/// host's rules and the advisory lints).
pub const REPORT_LENIENT: &str = "lenient";
/// A version's report made as `skilldeck validate --strict` makes it (the
/// specification exactly, and the advisory lints).
pub const REPORT_STRICT: &str = "strict";
/// A version published before the report was the validator's: the
/// acceptance check's warnings only (no advisory lints).
pub const REPORT_ACCEPT_CHECK: &str = "accept-check";

/// A version's report as stored: how it was made and what it says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredReport {
    /// [`REPORT_LENIENT`], [`REPORT_STRICT`] or [`REPORT_ACCEPT_CHECK`].
    pub mode: String,
    /// The diagnostics, positions relative to the skill folder.
    pub diagnostics: Vec<WireDiagnostic>,
}

impl StoredReport {
    /// Reads a stored report: the object this registry writes, or the
    /// bare list older versions hold ([`REPORT_ACCEPT_CHECK`]).
    pub fn parse(text: &str) -> Result<StoredReport, serde_json::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Any {
            Report(StoredReport),
            Legacy(Vec<WireDiagnostic>),
        }
        Ok(match serde_json::from_str(text)? {
            Any::Report(r) => r,
            Any::Legacy(diagnostics) => StoredReport {
                mode: REPORT_ACCEPT_CHECK.to_owned(),
                diagnostics,
            },
        })
    }
}

/// A diagnostic of the core, with its file and position.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct WireDiagnostic {
    /// Stable kebab-case code.
    pub code: String,
    /// `error` or `warning`.
    pub severity: String,
    /// What is wrong.
    pub message: String,
    /// The file, relative to the skill folder or the archive entry.
    #[serde(default)]
    pub file: Option<String>,
    /// 1-based line.
    #[serde(default)]
    pub line: Option<u32>,
    /// 1-based column.
    #[serde(default)]
    pub column: Option<u32>,
}

/// One file of a version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct FileEntry {
    /// The path relative to the skill folder (`/`-separated).
    pub path: String,
    /// Its size in bytes.
    pub size: u64,
    /// `sha256:` and the lowercase hex digest.
    pub sha256: String,
    /// True when the file is executable.
    #[serde(default)]
    pub executable: bool,
}

/// A page of a list, with the cursor of the next page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Page<T> {
    /// The items of this page.
    pub items: Vec<T>,
    /// Pass as `cursor` for the next page; absent on the last page.
    #[serde(default)]
    pub next_cursor: Option<String>,
}

/// The answer to a publish.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Published {
    /// The namespace.
    #[schema(value_type = String)]
    pub namespace: Namespace,
    /// The skill name.
    pub name: String,
    /// The version.
    pub version: String,
    /// The content fingerprint (`sha256:`...).
    pub fingerprint: String,
    /// Total bytes of the files.
    pub size: u64,
    /// False when this exact content was already published (idempotent).
    pub created: bool,
    /// Where `latest` points after the publish.
    #[serde(default)]
    pub latest: Option<String>,
    /// What `skilldeck validate` says for this package under the
    /// registry's report mode ([`Published::report_mode`]); errors of the
    /// host's lenient check refuse the package instead.
    #[serde(default)]
    pub report: Vec<WireDiagnostic>,
    /// How `report` was made ([`REPORT_LENIENT`], [`REPORT_STRICT`], or
    /// [`REPORT_ACCEPT_CHECK`] for versions published before the report
    /// was the validator's).
    #[serde(default)]
    pub report_mode: String,
    /// `released`, or `pending` when the namespace requires review (then
    /// no agent resolves it until a reviewer approves it).
    #[serde(default)]
    pub review: ReviewState,
    /// The resolution of the skill's declared dependencies made when the
    /// version was published (one record per kind: Python, Node; each
    /// package pinned with its hashes or integrity), what every consumer
    /// installs exactly. Empty: published without one (an older client,
    /// `--no-environments`, or a skill that declares no dependencies).
    /// Part of the immutable version.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(value_type = Vec<Object>)]
    pub environments: Vec<skilldeck::environment::LockedEnvironment>,
}

/// Where a version stands in review.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ReviewState {
    /// Available: resolves for agents, may carry labels.
    #[default]
    Released,
    /// Waiting for a reviewer: never resolved for agents.
    Pending,
    /// Refused by a reviewer: never resolved for agents.
    Rejected,
}

impl ReviewState {
    /// The stored text.
    pub fn as_str(self) -> &'static str {
        match self {
            ReviewState::Released => "released",
            ReviewState::Pending => "pending",
            ReviewState::Rejected => "rejected",
        }
    }

    /// The stored text read back (an unknown value is `None`).
    pub fn parse(text: &str) -> Option<ReviewState> {
        match text {
            "released" => Some(ReviewState::Released),
            "pending" => Some(ReviewState::Pending),
            "rejected" => Some(ReviewState::Rejected),
            _ => None,
        }
    }
}

/// Who decided a review, when and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Review {
    /// The reviewer (the token's name).
    pub by: String,
    /// When.
    pub at: String,
    /// The reason given.
    #[serde(default)]
    pub reason: Option<String>,
}

/// A reviewer's decision on a pending version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReviewDecision {
    /// `approve` or `reject`.
    pub decision: Decision,
    /// Why (required to reject).
    #[serde(default)]
    pub reason: Option<String>,
}

/// Approve or reject.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// Release the version.
    Approve,
    /// Refuse it for good.
    Reject,
}

/// What a namespace requires of its versions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NamespacePolicy {
    /// New versions are `pending` until a reviewer approves them.
    #[serde(default)]
    pub require_review: bool,
    /// A version must be signed by a key registered for the namespace.
    #[serde(default)]
    pub require_signature: bool,
}

/// An SSH key allowed to sign a namespace's versions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct SignerInfo {
    /// The namespace.
    #[schema(value_type = String)]
    pub namespace: Namespace,
    /// The key's fingerprint, `SHA256:...` (as `ssh-keygen -l` prints it).
    pub fingerprint: String,
    /// The OpenSSH public key line.
    pub public_key: String,
    /// Who registered it.
    pub added_by: String,
    /// When.
    pub added_at: String,
}

/// A key to register: an OpenSSH public key line (`ssh-ed25519 AAAA...`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SignerKey {
    /// The public key line, as in a `.pub` file.
    pub public_key: String,
}

/// A version waiting for review.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct PendingVersion {
    /// The namespace.
    #[schema(value_type = String)]
    pub namespace: Namespace,
    /// The skill name.
    pub name: String,
    /// The version.
    pub version: String,
    /// Who published it.
    pub published_by: String,
    /// When.
    pub published_at: String,
    /// The released version before it (what a review diffs against).
    #[serde(default)]
    pub previous: Option<String>,
}

/// A skill in a list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SkillSummary {
    /// The namespace.
    #[schema(value_type = String)]
    pub namespace: Namespace,
    /// The skill name.
    pub name: String,
    /// The description of its `latest` version.
    pub description: String,
    /// The version `latest` points to.
    #[serde(default)]
    pub latest: Option<String>,
    /// How many versions it has.
    pub versions: u32,
    /// When its last version was published.
    pub updated_at: String,
    /// The search score, when the list answers a query.
    #[serde(default)]
    pub score: Option<f64>,
    /// The risk audit's verdict on its `latest` version (`clean`, `low`
    /// ... `critical`; `None` for versions published before the audit).
    #[serde(default)]
    pub verdict: Option<String>,
}

/// A version in a skill's list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct VersionSummary {
    /// The semver version.
    pub version: String,
    /// The content fingerprint.
    pub fingerprint: String,
    /// Total bytes of the files.
    pub size: u64,
    /// Who published it (the token's name).
    pub published_by: String,
    /// When.
    pub published_at: String,
    /// Yanked: no longer chosen by `latest` or auto-discovery.
    #[serde(default)]
    pub yanked: Option<Marker>,
    /// Deprecated: still served, with a warning.
    #[serde(default)]
    pub deprecated: Option<Marker>,
    /// Blocked by an admin: no agent resolves or downloads it.
    #[serde(default)]
    pub blocked: Option<Marker>,
    /// Where it stands in review.
    #[serde(default)]
    pub review: ReviewState,
}

/// A yank, a deprecation or a block: why and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Marker {
    /// The reason given.
    pub reason: String,
    /// When.
    pub at: String,
}

/// A body with a reason (yank, deprecate).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReasonBody {
    /// Why.
    pub reason: String,
}

/// A skill with its labels and versions (newest first).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SkillDetail {
    /// The namespace.
    #[schema(value_type = String)]
    pub namespace: Namespace,
    /// The skill name.
    pub name: String,
    /// The description of its `latest` version.
    pub description: String,
    /// Label → version.
    pub labels: BTreeMap<String, String>,
    /// Every version, newest first.
    pub versions: Vec<VersionSummary>,
    /// When it was first published.
    pub created_at: String,
}

/// One version in full.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct VersionDetail {
    /// The namespace.
    #[schema(value_type = String)]
    pub namespace: Namespace,
    /// The skill name.
    pub name: String,
    /// The version.
    pub version: String,
    /// The content fingerprint.
    pub fingerprint: String,
    /// Total bytes of the files.
    pub size: u64,
    /// Every file, sorted by path.
    pub files: Vec<FileEntry>,
    /// The SKILL.md frontmatter as JSON.
    pub frontmatter: serde_json::Value,
    /// Capabilities it requires (`metadata.capabilities`).
    pub capabilities: Vec<String>,
    /// What `skilldeck validate` said for this package at publish, under
    /// [`VersionDetail::report_mode`].
    pub report: Vec<WireDiagnostic>,
    /// How `report` was made: [`REPORT_LENIENT`] (`skilldeck validate
    /// --lenient`), [`REPORT_STRICT`] (`skilldeck validate --strict`), or
    /// [`REPORT_ACCEPT_CHECK`] (published before the report was the
    /// validator's: the acceptance check only, without the advisory
    /// lints).
    #[serde(default)]
    pub report_mode: String,
    /// Who published it.
    pub published_by: String,
    /// When.
    pub published_at: String,
    /// Labels pointing at this version.
    pub labels: Vec<String>,
    /// Yanked, with why and when.
    #[serde(default)]
    pub yanked: Option<Marker>,
    /// Deprecated, with why and when.
    #[serde(default)]
    pub deprecated: Option<Marker>,
    /// Blocked by an admin, with why and when.
    #[serde(default)]
    pub blocked: Option<Marker>,
    /// Where it stands in review.
    #[serde(default)]
    pub review: ReviewState,
    /// The review's decision, once made.
    #[serde(default)]
    pub reviewed: Option<Review>,
    /// The fingerprint of the key that signed it (`SHA256:...`), when
    /// it was published signed.
    #[serde(default)]
    pub signer: Option<String>,
    /// Its SSH signature (armored `sshsig` over the fingerprint text).
    #[serde(default)]
    pub signature: Option<String>,
    /// The risk audit made at publish (`None` for versions published
    /// before the audit existed).
    #[serde(default)]
    pub audit: Option<WireAudit>,
    /// The resolution of the skill's declared dependencies made when the
    /// version was published (one record per kind: Python, Node; each
    /// package pinned with its hashes or integrity), what every consumer
    /// installs exactly. Empty: published without one (an older client,
    /// `--no-environments`, or a skill that declares no dependencies).
    /// Part of the immutable version.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(value_type = Vec<Object>)]
    pub environments: Vec<skilldeck::environment::LockedEnvironment>,
}

/// Move a label to a version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LabelMove {
    /// The version the label should point to.
    pub version: String,
    /// Why a protected label may point to a version the risk audit rated
    /// at or above the registry's threshold (admin; recorded in the audit
    /// log).
    #[serde(default)]
    pub override_reason: Option<String>,
}

/// A label after a move.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct LabelMoved {
    /// The label.
    #[schema(value_type = String)]
    pub label: Label,
    /// Where it points now.
    pub version: String,
    /// Where it pointed before.
    #[serde(default)]
    pub previous: Option<String>,
}

/// An agent as created or replaced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentSpec {
    /// Its id.
    #[schema(value_type = String)]
    pub id: AgentId,
    /// A display name.
    pub name: String,
    /// What it can do; auto-discovery offers skills whose required
    /// capabilities are a subset.
    #[serde(default)]
    pub capabilities: Vec<String>,
    /// Offer every skill whose capabilities it has, besides its
    /// assignments.
    #[serde(default)]
    pub auto_discover: bool,
    /// Globs over `namespace/name`; when not empty, auto-discovery offers
    /// only skills matching one.
    #[serde(default)]
    pub allowed_patterns: Vec<String>,
    /// Globs over `namespace/name` never offered, even when assigned.
    #[serde(default)]
    pub denied_patterns: Vec<String>,
    /// Its sandbox's concurrency cap.
    #[serde(default)]
    pub max_concurrent_executions: Option<u32>,
    /// Its sandbox's timeout per run, in seconds.
    #[serde(default)]
    pub execution_timeout_secs: Option<u32>,
    /// Its catalog budget in tokens.
    #[serde(default)]
    pub budget_tokens: Option<u32>,
    /// Offer the `run_code` tool to this agent (code the model writes,
    /// run in the agent host's sandbox under the same policy as skill
    /// scripts). Default off; delivered to `serve --registry` hosts in the
    /// agent's lock.
    #[serde(default)]
    pub run_code: bool,
}

/// An agent as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Agent {
    /// What it was created with.
    #[serde(flatten)]
    pub spec: AgentSpec,
    /// When it was created.
    pub created_at: String,
    /// When it last changed.
    pub updated_at: String,
}

/// Permissions granted to a skill in one agent's execution sandbox. A
/// registry never grants host paths to read: that stays the operator's
/// local `[exec.skills]` decision.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Grants {
    /// Network access.
    #[serde(default)]
    pub network: bool,
    /// Names of environment variables passed through.
    #[serde(default)]
    pub env: Vec<String>,
}

/// Assign a skill to an agent: a pinned version or a label (`latest` when
/// neither is given; both is an error).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Assignment {
    /// A pinned version.
    #[serde(default)]
    pub version: Option<String>,
    /// A label to follow.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub label: Option<Label>,
    /// Off: the skill is excluded, even from auto-discovery.
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Higher comes first.
    #[serde(default)]
    pub priority: i32,
    /// Sandbox permissions.
    #[serde(default)]
    pub grants: Grants,
    /// Accept a `label` that points to no version yet: the assignment is
    /// stored and shown as `pending` until the label is set (without it,
    /// an unknown label is refused with `registry-unknown-label`).
    #[serde(default)]
    pub allow_pending: bool,
}

fn yes() -> bool {
    true
}

/// An assignment as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct AssignmentView {
    /// The agent.
    #[schema(value_type = String)]
    pub agent: AgentId,
    /// The namespace.
    #[schema(value_type = String)]
    pub namespace: Namespace,
    /// The skill name.
    pub name: String,
    /// What was asked.
    #[serde(flatten)]
    pub assignment: Assignment,
    /// When it last changed.
    pub updated_at: String,
    /// What the agent's resolution made of it: `active` (served),
    /// `pending` (its label is not set yet, or its version waits for
    /// review: served once that changes) or `excluded` (left out; the
    /// reason is in `status_detail`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub status: String,
    /// For `pending` and `excluded`: the resolution's reason code and
    /// why, for a person (`missing-label: label 'production' ...`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_detail: Option<String>,
}

/// An assignment the resolution serves.
pub const ASSIGNMENT_ACTIVE: &str = "active";
/// An assignment waiting for its label to be set or its version's review.
pub const ASSIGNMENT_PENDING: &str = "pending";
/// An assignment the resolution leaves out.
pub const ASSIGNMENT_EXCLUDED: &str = "excluded";

/// Ask for a token.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TokenRequest {
    /// A name to recognise it by (audit lines show it).
    #[serde(default)]
    pub name: Option<String>,
    /// Scopes (`admin`, `publish:<namespace>`, `agent:<id>`); only for
    /// `POST /tokens`.
    #[serde(default)]
    pub scopes: Vec<String>,
    /// The token stops working this many seconds after it is created
    /// (none: it works until revoked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_in_seconds: Option<u64>,
}

/// A new token: shown once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct TokenCreated {
    /// The secret; only its hash is stored.
    pub token: String,
    /// Its id, for audit lines and revocation.
    pub id: String,
    /// Its name.
    pub name: String,
    /// What it may do.
    pub scopes: Vec<String>,
    /// When it stops working (RFC 3339), if it expires.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
}

/// What a token is, never its secret or its hash (`GET /tokens`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct TokenInfo {
    /// Its id (not secret): what revocation names.
    pub id: String,
    /// Its name.
    pub name: String,
    /// What it may do.
    pub scopes: Vec<String>,
    /// `api` (made through the API or the CLI) or `admin-file` (the
    /// registry's admin token file).
    pub source: String,
    /// `active`, `expired` or `revoked`.
    pub status: String,
    /// When it was made (RFC 3339).
    pub created_at: String,
    /// When it stops working, if it expires.
    #[serde(default)]
    pub expires_at: Option<String>,
    /// When it last authenticated a request (updated at most once per
    /// token-cache TTL per replica), if ever.
    #[serde(default)]
    pub last_used_at: Option<String>,
    /// When it was revoked, if it was.
    #[serde(default)]
    pub revoked_at: Option<String>,
}

/// One skill of an agent's resolved set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ResolvedSkill {
    /// The namespace.
    #[schema(value_type = String)]
    pub namespace: Namespace,
    /// The skill name.
    pub name: String,
    /// The version chosen.
    pub version: String,
    /// Its fingerprint.
    pub fingerprint: String,
    /// `assigned` or `auto`.
    pub source: String,
    /// How the version was chosen: `version` or `label:<name>`.
    pub via: String,
    /// Its priority (auto-discovered skills: 0).
    pub priority: i32,
    /// Sandbox permissions.
    pub grants: Grants,
}

/// A skill left out of an agent's set, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Excluded {
    /// The namespace.
    #[schema(value_type = String)]
    pub namespace: Namespace,
    /// The skill name.
    pub name: String,
    /// `disabled`, `denied`, `shadowed` (another skill of the same name
    /// comes first), `shadowed-by-assignment` (an auto-discovered skill
    /// whose name an explicit assignment holds), `yanked`, `blocked`,
    /// `rejected`, `pending-review`, `missing-version`, `missing-label`,
    /// `pending-label` (assigned with `allow_pending` before the label
    /// was set).
    pub reason: String,
    /// More, for a person.
    pub detail: String,
    /// For `shadowed` and `shadowed-by-assignment`: the skill
    /// (`namespace/name`) that holds the name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shadowed_by: Option<String>,
}

/// An agent's resolved skills.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Resolved {
    /// The agent.
    #[schema(value_type = String)]
    pub agent: AgentId,
    /// Changes whenever the set changes (the lock's ETag).
    pub generation: String,
    /// One per name (assignments before auto-discovered skills), in
    /// order: priority descending, then namespace/name.
    pub skills: Vec<ResolvedSkill>,
    /// What was left out.
    pub excluded: Vec<Excluded>,
}

/// One skill of an agent's lock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct LockedSkill {
    /// The namespace.
    #[schema(value_type = String)]
    pub namespace: Namespace,
    /// The skill name.
    pub name: String,
    /// The version.
    pub version: String,
    /// Its fingerprint.
    pub fingerprint: String,
    /// Sandbox permissions.
    pub grants: Grants,
    /// Every file with its digest.
    pub files: Vec<FileEntry>,
    /// The fingerprint of the key that signed this version, when signed:
    /// a host verifies [`LockedSkill::signature`] and this signer before
    /// it serves the skill.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signer: Option<String>,
    /// The version's SSH signature (armored `sshsig`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// The risk audit's verdict on this version (a host logs it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<String>,
    /// The resolution of the skill's declared dependencies made when the
    /// version was published (one record per kind: Python, Node; each
    /// package pinned with its hashes or integrity), what every consumer
    /// installs exactly. Empty: published without one (an older client,
    /// `--no-environments`, or a skill that declares no dependencies).
    /// Part of the immutable version.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(value_type = Vec<Object>)]
    pub environments: Vec<skilldeck::environment::LockedEnvironment>,
}

/// An agent's lock: exactly what it serves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct AgentLock {
    /// The agent.
    #[schema(value_type = String)]
    pub agent: AgentId,
    /// Its concurrency cap, when set.
    #[serde(default)]
    pub max_concurrent_executions: Option<u32>,
    /// Its run timeout in seconds, when set.
    #[serde(default)]
    pub execution_timeout_secs: Option<u32>,
    /// The skills, in resolution order.
    pub skills: Vec<LockedSkill>,
    /// Name clashes: skills left out because another skill of the same
    /// name (in another namespace) holds it, each naming the winner, so a
    /// host serving the lock can report them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shadowed: Vec<Excluded>,
    /// Every other skill the resolution left out (a missing or pending
    /// label, a missing, yanked, blocked or unreviewed version, a
    /// disabled assignment, a denied pattern), with the reason, so a
    /// host serving the lock can log why a skill is not served.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub excluded: Vec<Excluded>,
    /// The agent's `run_code` setting: a host serving this lock may offer
    /// the `run_code` tool (code the model writes, run in the same
    /// sandbox as skill scripts). Off unless an admin turned it on.
    #[serde(default)]
    pub run_code: bool,
}

/// One change, as the audit log records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct AuditEntry {
    /// Increasing id.
    pub id: i64,
    /// When.
    pub at: String,
    /// The token's name (never the token).
    pub actor: String,
    /// `publish`, `label`, `yank`, `agent.create`, `assign`, ...
    pub action: String,
    /// What it changed (`acme/pdf@1.2.0`, `agent:bot-1`, ...).
    pub target: String,
    /// Details as JSON.
    pub detail: serde_json::Value,
}

/// A test run of one version (`POST .../versions/{version}/test-run`):
/// either a tool the version declares with its arguments, or a file
/// under its `scripts/` folder with command-line arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TestRunRequest {
    /// A tool the version declares (its name, or its full name
    /// `{skill}__{tool}`); the arguments are checked against its schema
    /// before anything runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The tool's arguments (a JSON object; default `{}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<serde_json::Value>,
    /// A file under the version's `scripts/` folder (`scripts/check.py`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script: Option<String>,
    /// The script's command-line arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
}

/// The sandbox policy a test run ran under (always the registry's strict
/// default: no network, no grants).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct TestRunPolicy {
    /// The isolation profile (`native`, `bwrap`).
    pub profile: String,
    /// Whether the run could reach a network (always false).
    pub network: bool,
    /// The wall-clock timeout in seconds.
    pub timeout_secs: u64,
    /// Bytes kept per output stream.
    pub output_cap_bytes: u64,
    /// Memory of the run, in bytes.
    pub memory_bytes: u64,
    /// Most processes of the run.
    pub max_processes: u64,
    /// Size of the run's work folder, in bytes.
    pub workdir_bytes: u64,
    /// The isolation layers that were in force.
    pub layers: Vec<String>,
}

/// How a test run ended (it ran: a refusal is a problem instead).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct TestRunOutcome {
    /// The exit code; `None` when killed by a signal.
    #[serde(default)]
    pub exit_code: Option<i32>,
    /// The signal that killed it, if any.
    #[serde(default)]
    pub signal: Option<i32>,
    /// Killed because the timeout passed.
    pub timed_out: bool,
    /// Exit code 0.
    pub success: bool,
    /// Standard output (invalid UTF-8 replaced), at most the cap.
    pub stdout: String,
    /// Standard error, at most the cap.
    pub stderr: String,
    /// Stdout went over the cap (the rest was dropped).
    pub stdout_truncated: bool,
    /// Stderr went over the cap.
    pub stderr_truncated: bool,
    /// Stdout parsed as JSON, when it is JSON (a tool's structured
    /// result).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured: Option<serde_json::Value>,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
    /// Refusals inside the run (denied system calls, blocked
    /// connections, caps hit): an attempted escape shows here, not only
    /// in the exit status.
    #[serde(default)]
    pub refusals: u64,
    /// Those refusals in words, when there were any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusals_summary: Option<String>,
    /// The policy it ran under.
    pub policy: TestRunPolicy,
}

/// A finished test run: what ran, and how it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct TestRunResult {
    /// The namespace.
    #[schema(value_type = String)]
    pub namespace: Namespace,
    /// The skill name.
    pub name: String,
    /// The version (a label in the path is resolved).
    pub version: String,
    /// The version's content fingerprint.
    pub fingerprint: String,
    /// The tool's full name, for a tool run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The script, for a script run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script: Option<String>,
    /// `sha256:<hex>` of the arguments as sent (the tool's JSON, or the
    /// script's arguments as a JSON array): what the audit log records.
    pub arguments_sha256: String,
    /// How it ended.
    pub outcome: TestRunOutcome,
}

/// A tool a version declares, as a test run offers it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct TestRunTool {
    /// The name the skill declares.
    pub name: String,
    /// The full name (`{skill}__{tool}`).
    pub full_name: String,
    /// What it does.
    pub description: String,
    /// The JSON Schema of its arguments.
    pub input_schema: serde_json::Value,
}

/// What a version can test-run (`GET .../versions/{version}/test-run`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct TestRunTargets {
    /// The version.
    pub version: String,
    /// The tools it declares.
    pub tools: Vec<TestRunTool>,
    /// The files under its `scripts/` folder.
    pub scripts: Vec<String>,
    /// The policy a test run gets.
    pub policy: TestRunPolicy,
}
