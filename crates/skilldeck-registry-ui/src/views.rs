//! The pages' templates (askama: compiled with the crate, auto-escaping
//! every value; only [`VersionPage::body_html`], already sanitised by
//! [`crate::markdown`], is marked `|safe`), and the plain view rows they
//! show.

use askama::Template;
use skilldeck_registry::wire::{Agent, SkillDetail, SkillSummary, VersionDetail, WireDiagnostic};

use crate::assets::{css_href, htmx_href, icon_href};

/// What every page shows around its content.
pub struct Chrome {
    /// The stylesheet's path.
    pub css: String,
    /// htmx's path.
    pub js: String,
    /// The icon's path.
    pub icon: String,
    /// The session's CSRF token (forms and `hx-headers`).
    pub csrf: String,
    /// Who is signed in (the token's name); `None` on the sign-in page.
    pub who: Option<String>,
    /// The current section (`skills`, `upload`, `agents`).
    pub nav: &'static str,
    /// A one-shot message from the previous request.
    pub flash: Option<String>,
    /// The signed-in token is an admin's (the admin pages are linked).
    pub admin: bool,
}

impl Chrome {
    /// The chrome of a page of this session.
    pub fn new(
        csrf: String,
        who: Option<String>,
        nav: &'static str,
        flash: Option<String>,
    ) -> Chrome {
        Chrome {
            css: css_href(),
            js: htmx_href(),
            icon: icon_href(),
            csrf,
            who,
            nav,
            flash,
            admin: false,
        }
    }

    /// The same chrome, linking the admin pages when `admin`.
    pub fn with_admin(mut self, admin: bool) -> Chrome {
        self.admin = admin;
        self
    }
}

/// A diagnostic as shown: its place as `file:line:column`.
pub struct DiagRow {
    /// `error` or `warning`.
    pub severity: String,
    /// The stable code.
    pub code: String,
    /// What is wrong.
    pub message: String,
    /// `file:line:column`, as much as is known.
    pub location: String,
}

/// A diagnostic's file as shown: relative to the skill folder. A server
/// path (absolute, from the registry's staging folder) is cut after the
/// skill's folder, or to its last component: a page never shows where
/// the server keeps its files.
pub fn display_file(file: &str, skill_name: &str) -> String {
    if !file.starts_with('/') {
        return file.to_owned();
    }
    let marker = format!("/{skill_name}/");
    match file.rfind(&marker) {
        Some(at) if !skill_name.is_empty() => file[at + marker.len()..].to_owned(),
        _ => file.rsplit('/').next().unwrap_or_default().to_owned(),
    }
}

impl DiagRow {
    /// The row of a diagnostic of skill `skill_name`.
    pub fn of(d: &WireDiagnostic, skill_name: &str) -> DiagRow {
        let mut location = d
            .file
            .as_deref()
            .map(|f| display_file(f, skill_name))
            .unwrap_or_else(|| "(package)".to_owned());
        if let Some(line) = d.line {
            location.push_str(&format!(":{line}"));
            if let Some(column) = d.column {
                location.push_str(&format!(":{column}"));
            }
        }
        DiagRow {
            severity: d.severity.clone(),
            code: d.code.clone(),
            message: d.message.clone(),
            location,
        }
    }
}

/// Sign in.
#[derive(Template)]
#[template(path = "signin.html")]
pub struct SignInPage {
    /// Around the page.
    pub chrome: Chrome,
    /// Why the last attempt failed.
    pub error: Option<String>,
    /// Whether the token form is shown.
    pub token_sign_in: bool,
    /// The single sign-on button, when configured.
    pub sso: Option<SsoButton>,
}

/// The single sign-on part of the sign-in page.
#[derive(Debug, Clone)]
pub struct SsoButton {
    /// The button's text.
    pub label: String,
    /// Why single sign-on cannot be used now (shown instead of the button).
    pub unavailable: Option<String>,
}

/// After a single sign-on: a page that moves on to the UI by itself (the
/// session cookie is `SameSite=Strict`: a redirect inside the provider's
/// cross-site navigation would not carry it).
#[derive(Template)]
#[template(path = "sso_done.html")]
pub struct SsoDonePage {
    /// Around the page (its stylesheet).
    pub chrome: Chrome,
    /// Where to go.
    pub next: String,
}

/// An error page.
#[derive(Template)]
#[template(path = "error.html")]
pub struct ErrorPage {
    /// Around the page.
    pub chrome: Chrome,
    /// A short summary.
    pub title: String,
    /// What happened.
    pub detail: String,
}

/// The skills list: totals, search, namespace and capability filters,
/// sort, and one page.
#[derive(Template)]
#[template(path = "skills.html")]
pub struct SkillsPage {
    /// Around the page.
    pub chrome: Chrome,
    /// The search text.
    pub q: String,
    /// The namespace filter (empty: all).
    pub namespace: String,
    /// The need filter as text (empty: any).
    pub need: String,
    /// `name`, `recent` or empty (relevance with search text, else name).
    pub sort: String,
    /// This page of skills.
    pub skills: Vec<SkillSummary>,
    /// Skills in the registry (that this token may list).
    pub total_skills: u64,
    /// Namespaces in the registry.
    pub total_namespaces: u64,
    /// Skills matching the filters.
    pub matching: u64,
    /// The first skill shown (1-based), 0 when none.
    pub from: u64,
    /// The last skill shown.
    pub to: u64,
    /// The namespaces offered in the filter (with counts), empty when
    /// there are too many to offer (a text field then).
    pub namespaces: Vec<(String, u64)>,
    /// The capability filter's choices: value and label.
    pub needs: Vec<(String, String)>,
    /// The previous page, if any.
    pub prev_href: Option<String>,
    /// The next page, if any.
    pub next_href: Option<String>,
    /// The first page, when this is not it.
    pub first_href: Option<String>,
}

/// One file of a version.
#[derive(Template)]
#[template(path = "file.html")]
pub struct FilePage {
    /// Around the page.
    pub chrome: Chrome,
    /// `namespace/name`.
    pub skill: String,
    /// The version.
    pub version: String,
    /// The skill's page.
    pub skill_href: String,
    /// The version's page.
    pub version_href: String,
    /// The file's path in the package.
    pub path: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// Its size, for people.
    pub size: String,
    /// `sha256:...`.
    pub sha256: String,
    /// The download link.
    pub download: String,
    /// Its text (UTF-8, escaped by the template), when shown.
    pub text: Option<String>,
    /// Not text.
    pub binary: bool,
    /// Too large to show.
    pub too_large: bool,
    /// The largest file shown, for people.
    pub max_view: String,
}

/// The skill page's "assign to agent" form.
pub struct AssignForm {
    /// Agents offered (id, name); more may exist (typed by id).
    pub agents: Vec<(String, String)>,
    /// The version or label choices: `latest`, the labels, the versions.
    pub pins: Vec<String>,
    /// The agent typed or picked last.
    pub agent: String,
    /// The pin picked last.
    pub pin: String,
    /// Why the last assignment was refused.
    pub error: Option<String>,
}

/// A token as the tokens page lists it.
pub struct TokenRow {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// Its scopes, space-separated.
    pub scopes: String,
    /// `api` or `admin-file`.
    pub source: String,
    /// `active`, `expired` or `revoked`.
    pub status: String,
    /// When it was made.
    pub created_at: String,
    /// When it expires (empty: never).
    pub expires_at: String,
    /// When it was last used (empty: never).
    pub last_used_at: String,
}

/// The tokens (admin): list, create, revoke.
#[derive(Template)]
#[template(path = "tokens.html")]
pub struct TokensPage {
    /// Around the page.
    pub chrome: Chrome,
    /// This page of tokens.
    pub tokens: Vec<TokenRow>,
    /// The next page, if any.
    pub next_href: Option<String>,
    /// The first page, when this is not it.
    pub first_href: Option<String>,
    /// A token just made: its secret, shown once.
    pub created: Option<(String, String)>,
    /// Why the last create or revoke was refused.
    pub error: Option<String>,
    /// The create form's name field as typed.
    pub name: String,
    /// The create form's scope field as typed.
    pub scope: String,
    /// The expiry choices: seconds (empty: never), label, selected.
    pub expiry_choices: Vec<(&'static str, &'static str, bool)>,
}

/// The audit log (admin), filtered and paged.
#[derive(Template)]
#[template(path = "audit.html")]
pub struct AuditPage {
    /// Around the page.
    pub chrome: Chrome,
    /// This page of entries, newest first.
    pub entries: Vec<skilldeck_registry::wire::AuditEntry>,
    /// The actor filter.
    pub actor: String,
    /// The action filter.
    pub action: String,
    /// The actions the log holds.
    pub actions: Vec<String>,
    /// The next (older) page, if any.
    pub next_href: Option<String>,
    /// The first page, when this is not it.
    pub first_href: Option<String>,
}

/// A version in a skill's table.
pub struct VersionRow {
    /// The version.
    pub version: String,
    /// Its size, for people.
    pub size: String,
    /// When.
    pub published_at: String,
    /// By whom.
    pub published_by: String,
    /// Labels pointing here.
    pub labels: Vec<String>,
    /// Why it was yanked.
    pub yanked: Option<String>,
    /// Why it was deprecated.
    pub deprecated: Option<String>,
}

/// A skill: versions, labels, the move-label form.
#[derive(Template)]
#[template(path = "skill.html")]
pub struct SkillPage {
    /// Around the page.
    pub chrome: Chrome,
    /// The skill.
    pub skill: SkillDetail,
    /// `/ui/skills/{namespace}/{name}`.
    pub base: String,
    /// Its versions, newest first.
    pub versions: Vec<VersionRow>,
    /// Label → version.
    pub labels: Vec<(String, String)>,
    /// Why the last label move failed.
    pub move_error: Option<String>,
    /// "Assign to agent" (admins).
    pub assign: Option<AssignForm>,
}

/// A file of a version.
pub struct FileRow {
    /// Its path.
    pub path: String,
    /// Its page (the file viewer).
    pub href: String,
    /// Its size, for people.
    pub size: String,
    /// `sha256:...`.
    pub sha256: String,
    /// Executable.
    pub executable: bool,
}

/// A version: rendered SKILL.md, files, diagnostics.
#[derive(Template)]
#[template(path = "version.html")]
pub struct VersionPage {
    /// Around the page.
    pub chrome: Chrome,
    /// The version.
    pub v: VersionDetail,
    /// `/ui/skills/{namespace}/{name}`.
    pub base: String,
    /// The frontmatter's description (escaped text).
    pub description: String,
    /// The SKILL.md body, rendered and sanitised.
    pub body_html: String,
    /// Total size, for people.
    pub size: String,
    /// The files.
    pub files: Vec<FileRow>,
    /// The validation report.
    pub diagnostics: Vec<DiagRow>,
    /// What made it, for people: `skilldeck validate --lenient`, or the
    /// acceptance check of an older version.
    pub report_by: &'static str,
    /// What changed since the previous released version, when there is
    /// one.
    pub changes: Option<Changes>,
    /// The "Try it" panel, for a caller allowed to test-run.
    pub try_it: Option<TryIt>,
    /// Why the last yank or deprecation change was refused.
    pub marker_error: Option<String>,
    /// The dependencies resolved at publish (`publish` without
    /// `--no-environments`), one per environment.
    pub environments: Vec<EnvView>,
}

/// One environment resolved at publish, for people: which interpreters
/// install exactly these pins (the core's rule,
/// [`skilldeck::environment::compatible_interpreter_version`]) and every
/// package with what pins it.
pub struct EnvView {
    /// `Python`, `Node`.
    pub kind: &'static str,
    /// The interpreter version it was resolved with (`3.11.2`, `20.20.2`).
    pub resolved_with: String,
    /// The versions that install these exact pins (`3.11`, `20`); other
    /// interpreters resolve the requirements anew.
    pub installs_on: String,
    /// `(name, version, pins)`: pins are the sha256 digests (Python) or the
    /// npm integrity (Node), space-separated; a Node package's folder when it
    /// is nested.
    pub packages: Vec<(String, String, String)>,
}

impl EnvView {
    /// The view of `env`.
    pub fn of(env: &skilldeck::environment::LockedEnvironment) -> EnvView {
        use skilldeck::environment::{EnvKind, compatible_interpreter_version};
        let (kind, resolved_with) = match env.kind {
            EnvKind::Python => ("Python", env.python.clone()),
            EnvKind::Node => ("Node", env.node.clone()),
        };
        let packages = env
            .packages
            .iter()
            .map(|p| {
                let mut pins: Vec<String> = p.hashes.iter().map(|h| h.to_string()).collect();
                pins.extend(p.integrity.iter().map(|i| i.to_string()));
                let name = match &p.path {
                    Some(path) if path != &format!("node_modules/{}", p.name) => {
                        format!("{} ({path})", p.name)
                    }
                    _ => p.name.clone(),
                };
                (name, p.version.clone(), pins.join(" "))
            })
            .collect();
        EnvView {
            kind,
            installs_on: compatible_interpreter_version(env.kind, &resolved_with),
            resolved_with,
            packages,
        }
    }
}

/// The version page's "Try it" panel.
pub struct TryIt {
    /// `.../versions/{version}/test-run` (the form's target) under /ui.
    pub action: String,
    /// The version page itself (the tool picker's target).
    pub page: String,
    /// Why test runs are unavailable on this host (what is missing); the
    /// forms are not shown then.
    pub unavailable: Option<String>,
    /// The tools: name and description.
    pub tools: Vec<(String, String)>,
    /// The tool picked.
    pub tool: Option<String>,
    /// Its generated fields (`None`: one JSON object).
    pub fields: Option<Vec<crate::try_it::FieldView>>,
    /// The whole arguments object as typed, when not generated.
    pub arguments_json: String,
    /// The files under `scripts/`.
    pub scripts: Vec<String>,
    /// The script picked.
    pub script: String,
    /// Its arguments as typed (one per line).
    pub script_args: String,
    /// The policy a run gets, in words.
    pub policy: String,
    /// The last run's outcome.
    pub run: Option<crate::try_it::RunView>,
    /// The last run's refusal, with the failing field's pointer.
    pub error: Option<(String, Option<String>)>,
}

/// What changed between two versions: files and the SKILL.md text.
pub struct Changes {
    /// The version compared against.
    pub previous: String,
    /// Files only in this version.
    pub added: Vec<String>,
    /// Files only in the previous one.
    pub removed: Vec<String>,
    /// Files in both with other content (or another executable bit).
    pub changed: Vec<String>,
    /// The unified diff of SKILL.md (empty: unchanged).
    pub skill_md_diff: String,
    /// The diff was longer than the page shows.
    pub cut: bool,
}

/// The versions waiting for review the signed-in token may review.
#[derive(Template)]
#[template(path = "reviews.html")]
pub struct ReviewsPage {
    /// Around the page.
    pub chrome: Chrome,
    /// The queue, oldest first.
    pub pending: Vec<skilldeck_registry::wire::PendingVersion>,
}

/// Why an upload was refused.
pub struct Refusal {
    /// What the registry said.
    pub detail: String,
    /// The diagnostics, each with its file:line.
    pub diagnostics: Vec<DiagRow>,
}

/// The upload form (and its refusal).
#[derive(Template)]
#[template(path = "upload.html")]
pub struct UploadPage {
    /// Around the page.
    pub chrome: Chrome,
    /// The namespace field.
    pub namespace: String,
    /// The version field.
    pub version: String,
    /// The largest package, for people.
    pub max_size: String,
    /// The last refusal.
    pub refusal: Option<Refusal>,
}

/// The agents list.
#[derive(Template)]
#[template(path = "agents.html")]
pub struct AgentsPage {
    /// Around the page.
    pub chrome: Chrome,
    /// This page of agents.
    pub agents: Vec<Agent>,
    /// The next page, if any.
    pub next_href: Option<String>,
    /// The first page, when this is not it.
    pub first_href: Option<String>,
}

/// An agent form's fields, as text (so a refused form shows what was typed).
#[derive(Debug, Clone, Default, serde::Deserialize)]
pub struct AgentForm {
    /// The id.
    #[serde(default)]
    pub id: String,
    /// The display name.
    #[serde(default)]
    pub name: String,
    /// Comma- or space-separated.
    #[serde(default)]
    pub capabilities: String,
    /// `on` when checked.
    #[serde(default, deserialize_with = "checkbox")]
    pub auto_discover: bool,
    /// One per line.
    #[serde(default)]
    pub allowed_patterns: String,
    /// One per line.
    #[serde(default)]
    pub denied_patterns: String,
    /// Empty: the default.
    #[serde(default)]
    pub budget_tokens: String,
    /// Empty: unlimited.
    #[serde(default)]
    pub max_concurrent_executions: String,
    /// Empty: the default.
    #[serde(default)]
    pub execution_timeout_secs: String,
    /// `on` when checked: offer the agent the `run_code` tool.
    #[serde(default, deserialize_with = "checkbox")]
    pub run_code: bool,
}

/// An HTML checkbox: present (any value) is on.
pub fn checkbox<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    let value: Option<String> = serde::Deserialize::deserialize(d)?;
    Ok(value.is_some())
}

/// Create or edit an agent.
#[derive(Template)]
#[template(path = "agent_form.html")]
pub struct AgentFormPage {
    /// Around the page.
    pub chrome: Chrome,
    /// Editing an existing agent (the id is read-only).
    pub editing: bool,
    /// The fields.
    pub form: AgentForm,
    /// Why the last attempt failed.
    pub error: Option<String>,
}

/// One skill on an agent's selection page.
pub struct SkillRow {
    /// The HTML id (`row-namespace--name`).
    pub key: String,
    /// The namespace.
    pub namespace: String,
    /// The name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// Where the row's form posts.
    pub action: String,
    /// `assigned`, `auto-discovered`, `pending`, `left out: ...`, `not
    /// selected`.
    pub status: String,
    /// The badge's class (`ok`, `warn`, `bad`, `plain`).
    pub status_class: &'static str,
    /// More about the status (version chosen, why left out).
    pub status_detail: String,
    /// An explicit assignment exists.
    pub assigned: bool,
    /// In the resolved set.
    pub in_set: bool,
    /// The toggle's state.
    pub enabled: bool,
    /// Its priority.
    pub priority: i32,
    /// A version or a label (empty: `latest`).
    pub pin: String,
    /// Known versions and labels, offered in the pin field.
    pub pin_options: Vec<String>,
    /// Network granted.
    pub network: bool,
    /// Env names granted, comma-separated.
    pub env: String,
    /// Why the last save failed.
    pub error: Option<String>,
}

/// Something left out of the catalog, and why.
pub struct LeftOut {
    /// `namespace/name` or the skill name.
    pub name: String,
    /// The reason code.
    pub reason: String,
    /// More, for people.
    pub detail: String,
}

/// The live preview of an agent's catalog.
pub struct PreviewView {
    /// The agent id.
    pub agent: String,
    /// The catalog exactly as the model sees it.
    pub text: String,
    /// Its size in tokens.
    pub tokens: u32,
    /// The budget.
    pub budget: Option<u32>,
    /// The meter's maximum.
    pub meter_max: u32,
    /// Where the meter turns to "high".
    pub meter_high: u32,
    /// The skills in the catalog, in order.
    pub included: Vec<String>,
    /// Left out by resolution (excluded) or by the budget (omitted).
    pub left_out: Vec<LeftOut>,
    /// Name clashes between namespaces (also in `left_out`), shown apart
    /// so a takeover attempt or a misconfiguration stands out.
    pub clashes: Vec<Clash>,
}

/// A skill left out because another skill holds its name.
pub struct Clash {
    /// The name both have.
    pub name: String,
    /// The skill left out (`namespace/name`).
    pub left_out: String,
    /// The skill that holds the name (`namespace/name`).
    pub served_by: String,
    /// True when the holder is an explicit assignment and the skill left
    /// out was auto-discovered.
    pub by_assignment: bool,
}

/// An agent's skill selection with the live preview.
#[derive(Template)]
#[template(path = "selection.html")]
pub struct SelectionPage {
    /// Around the page.
    pub chrome: Chrome,
    /// The agent.
    pub agent: Agent,
    /// The agent's assignments (matching the filters), listed first.
    pub assigned_rows: Vec<SkillRow>,
    /// One page of the other skills (matching the filters).
    pub rows: Vec<SkillRow>,
    /// The filters in force.
    pub filters: SelectionFilters,
    /// How to connect a host to this agent.
    pub connect: ConnectView,
    /// The agent's tokens (for an admin; `None` otherwise).
    pub tokens: Option<Vec<AgentTokenRow>>,
    /// The next page's link, when there is one.
    pub next_page: Option<String>,
    /// The first page's link, when this is not the first page.
    pub first_page: Option<String>,
    /// The other skills shown: first, last (1-based) and how many match.
    pub others: Option<(u64, u64, u64)>,
    /// The preview.
    pub preview: PreviewView,
    /// Always false here (the preview is in place).
    pub oob: bool,
}

/// "Connect this agent": the commands and the MCP client configuration
/// that serve this agent's skills from this registry.
pub struct ConnectView {
    /// This registry's URL as the browser reached it.
    pub registry: String,
    /// Making the agent's token (an admin's command).
    pub token_command: String,
    /// `skilldeck serve --registry ... --agent ...`.
    pub serve_command: String,
    /// An MCP client's `mcpServers` entry (JSON).
    pub mcp_config: String,
}

/// One of the agent's tokens, as the agent page lists it.
pub struct AgentTokenRow {
    /// Its id (`registry token revoke ID`).
    pub id: String,
    /// Its name.
    pub name: String,
    /// `active`, `expired` or `revoked`.
    pub status: String,
    /// When it was made.
    pub created_at: String,
    /// When it expires (empty: never).
    pub expires_at: String,
    /// When it was last used (empty: never).
    pub last_used_at: String,
}

/// The selection page's filters, as the form shows them.
pub struct SelectionFilters {
    /// Free text (the registry's search: name and description).
    pub q: String,
    /// Only this namespace (empty: all).
    pub namespace: String,
    /// `all`, `assigned` or `unassigned`.
    pub show: &'static str,
    /// A budget to try instead of the agent's (kept across filters).
    pub budget: String,
    /// The need filter as text (empty: anything).
    pub need: String,
    /// The need filter's choices: value and label.
    pub needs: Vec<(String, String)>,
}

/// The htmx answer to a row change: the row, and the preview swapped
/// out-of-band.
#[derive(Template)]
#[template(path = "selection_update.html")]
pub struct SelectionUpdate {
    /// Carries the CSRF token for the row's forms.
    pub chrome: Chrome,
    /// The row after the change.
    pub row: SkillRow,
    /// The preview after the change.
    pub preview: PreviewView,
    /// True: swap the preview out-of-band.
    pub oob: bool,
}

/// The htmx answer to "try another budget".
#[derive(Template)]
#[template(path = "preview_only.html")]
pub struct PreviewFragment {
    /// The preview.
    pub preview: PreviewView,
    /// False: the preview is the target.
    pub oob: bool,
}

/// An RFC 3339 UTC timestamp for people: `2026-11-23 03:28 UTC` (other
/// text unchanged).
pub fn short_time(text: &str) -> String {
    let b = text.as_bytes();
    if b.len() >= 16 && b[10] == b'T' && b[13] == b':' && text.is_char_boundary(16) {
        format!("{} {} UTC", &text[..10], &text[11..16])
    } else {
        text.to_owned()
    }
}

/// The templates' own filters.
mod filters {
    /// `{{ x|when }}`: [`super::short_time`].
    #[askama::filter_fn]
    pub fn when(value: impl std::fmt::Display, _: &dyn askama::Values) -> askama::Result<String> {
        Ok(super::short_time(&value.to_string()))
    }
}

/// Bytes for people: `812 B`, `3.4 KiB`, `1.2 MiB`.
pub fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// A path with query parameters, each percent-encoded (empty ones left
/// out).
pub fn href_with(path: &str, params: &[(&str, &str)]) -> String {
    let mut out = path.to_owned();
    let mut first = true;
    for (key, value) in params {
        if value.is_empty() {
            continue;
        }
        out.push(if first { '?' } else { '&' });
        first = false;
        out.push_str(key);
        out.push('=');
        out.push_str(&skilldeck::text::percent::encode_component(value));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_read_as_date_and_minute() {
        assert_eq!(
            short_time("2026-11-23T03:28:36.945995Z"),
            "2026-11-23 03:28 UTC"
        );
        assert_eq!(short_time("yesterday"), "yesterday");
    }

    #[test]
    fn sizes_read_in_binary_units() {
        assert_eq!(human_size(812), "812 B");
        assert_eq!(human_size(3482), "3.4 KiB");
        assert_eq!(human_size(5 * 1024 * 1024), "5.0 MiB");
    }

    #[test]
    fn query_values_are_percent_encoded() {
        assert_eq!(
            href_with("/ui/skills", &[("q", "a b&c=<d>"), ("cursor", "")]),
            "/ui/skills?q=a%20b%26c%3D%3Cd%3E"
        );
        assert_eq!(href_with("/ui/skills", &[]), "/ui/skills");
    }

    #[test]
    fn a_diagnostic_shows_file_line_and_column() {
        let d = WireDiagnostic {
            code: "name-invalid".into(),
            severity: "error".into(),
            message: "bad".into(),
            file: Some("SKILL.md".into()),
            line: Some(2),
            column: Some(7),
        };
        assert_eq!(DiagRow::of(&d, "x").location, "SKILL.md:2:7");
    }

    #[test]
    fn a_server_path_in_a_diagnostic_is_shown_relative_to_the_skill() {
        assert_eq!(
            display_file("/tmp/.tmpX/staging/pdf-tools/scripts/a.py", "pdf-tools"),
            "scripts/a.py"
        );
        assert_eq!(
            display_file("/srv/elsewhere/SKILL.md", "pdf-tools"),
            "SKILL.md"
        );
        assert_eq!(
            display_file("pdf-tools/SKILL.md", "pdf-tools"),
            "pdf-tools/SKILL.md"
        );
    }

    #[test]
    fn templates_escape_skill_text() {
        let page = SkillsPage {
            chrome: Chrome::new("tok".into(), Some("admin".into()), "skills", None),
            q: "<script>alert(1)</script>".into(),
            namespace: "<b>ns</b>".into(),
            need: String::new(),
            sort: String::new(),
            total_skills: 1,
            total_namespaces: 1,
            matching: 1,
            from: 1,
            to: 1,
            namespaces: vec![("acme".into(), 1)],
            needs: Vec::new(),
            prev_href: None,
            skills: vec![SkillSummary {
                namespace: skilldeck_registry::names::Namespace::new("acme").unwrap(),
                name: "x".into(),
                description: "<img src=x onerror=alert(1)>".into(),
                latest: Some("1.0.0".into()),
                versions: 1,
                updated_at: "now".into(),
                score: None,
                verdict: Some("<b>high</b>".into()),
            }],
            next_href: None,
            first_href: None,
        };
        let html = page.render().unwrap();
        assert!(!html.contains("<script>alert"), "{html}");
        assert!(!html.contains("<img src=x"), "{html}");
        assert!(!html.contains("<b>ns</b>"), "{html}");
        assert!(
            html.contains("&#60;img src=x onerror=alert(1)&#62;") || html.contains("&lt;img"),
            "{html}"
        );
        assert!(!html.contains("style="), "no inline style");
        assert!(!html.contains("<script>"), "no inline script");
    }
}
