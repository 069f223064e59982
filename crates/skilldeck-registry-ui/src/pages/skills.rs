//! Skills: the list with search and pagination, a skill's page (versions,
//! labels, the move-label form) and a version's page (rendered SKILL.md,
//! files, diagnostics).

use askama::Template as _;
use axum::Form;
use axum::extract::{Path, Query, State};
use axum::response::{Html, IntoResponse, Redirect, Response};
use serde::Deserialize;
use skilldeck_registry::names::{LATEST, Label, SkillRef};
use skilldeck_registry::wire::{Assignment, SkillDetail, TestRunRequest};
use skilldeck_registry::{BrowseQuery, BrowseSort, MAX_FACET_NAMESPACES, Need};
use std::collections::HashMap;

use crate::error::UiError;
use crate::limits::{ASSIGN_AGENTS_OFFERED, MAX_DIFF_BYTES, PAGE_SIZE};
use crate::markdown::{render_markdown, skill_body};
use crate::state::{Signed, UiState};
use crate::try_it::{ARGUMENTS_JSON_FIELD, RunView, arguments_of, fields_of, script_args};
use crate::views::{
    AssignForm, Changes, DiagRow, EnvView, FileRow, ReviewsPage, SkillPage, SkillsPage, TryIt,
    VersionPage, VersionRow, href_with, human_size,
};

/// The list's query.
#[derive(Deserialize, Default)]
pub struct ListQuery {
    #[serde(default)]
    q: String,
    #[serde(default)]
    namespace: String,
    /// `scripts`, `allowed-tools` or `requires:<capability>`.
    #[serde(default)]
    need: String,
    /// `name` or `recent` (else relevance with search text, or name).
    #[serde(default)]
    sort: String,
    /// Skills skipped before the page.
    #[serde(default)]
    offset: String,
}

/// The capability filter's choices: what a skill's `latest` version needs.
pub fn need_choices(declared: &[String]) -> Vec<(String, String)> {
    let mut out = vec![
        (String::new(), "anything".to_owned()),
        ("scripts".to_owned(), "runs scripts".to_owned()),
        (
            "allowed-tools".to_owned(),
            "declares allowed-tools".to_owned(),
        ),
    ];
    out.extend(
        declared
            .iter()
            .map(|c| (format!("requires:{c}"), format!("requires {c}"))),
    );
    out
}

/// An offset from the query (empty or not a number: the first page).
pub fn offset_of(text: &str) -> u64 {
    text.trim().parse().unwrap_or(0)
}

/// `GET /ui/skills?q=&namespace=&need=&sort=&offset=`.
pub async fn list(
    State(state): State<UiState>,
    signed: Signed,
    Query(query): Query<ListQuery>,
) -> Result<Response, UiError> {
    let q = query.q.trim().to_owned();
    let namespace = query.namespace.trim().to_owned();
    let need = Need::parse(&query.need).map_err(UiError::from)?;
    let need_text = need.as_ref().map(Need::as_text).unwrap_or_default();
    let sort = match query.sort.as_str() {
        "name" => BrowseSort::Name,
        "recent" => BrowseSort::Recent,
        _ => BrowseSort::Default,
    };
    let sort_text = match sort {
        BrowseSort::Name => "name",
        BrowseSort::Recent => "recent",
        BrowseSort::Default => "",
    };
    let offset = offset_of(&query.offset);
    let page = state
        .registry
        .browse_skills(
            &signed.principal,
            &BrowseQuery {
                q: (!q.is_empty()).then(|| q.clone()),
                namespace: (!namespace.is_empty()).then(|| namespace.clone()),
                need,
                sort,
                offset,
                limit: Some(PAGE_SIZE),
            },
        )
        .await?;
    let facets = state.registry.skill_facets(&signed.principal).await?;
    let href = |offset: u64| {
        let offset = if offset == 0 {
            String::new()
        } else {
            offset.to_string()
        };
        href_with(
            "/ui/skills",
            &[
                ("q", &q),
                ("namespace", &namespace),
                ("need", &need_text),
                ("sort", sort_text),
                ("offset", &offset),
            ],
        )
    };
    let limit = u64::from(page.limit);
    let shown = page.items.len() as u64;
    let next_href =
        (page.offset + shown < page.total && shown > 0).then(|| href(page.offset + limit));
    let prev_href = (page.offset > 0).then(|| href(page.offset.saturating_sub(limit)));
    let first_href = (page.offset > limit).then(|| href(0));
    let namespaces = if facets.namespaces <= u64::from(MAX_FACET_NAMESPACES) {
        facets.by_namespace.clone()
    } else {
        Vec::new()
    };
    let view = SkillsPage {
        chrome: signed.chrome("skills"),
        q,
        namespace,
        need: need_text,
        sort: sort_text.to_owned(),
        from: if shown == 0 { 0 } else { page.offset + 1 },
        to: page.offset + shown,
        matching: page.total,
        skills: page.items,
        total_skills: facets.skills,
        total_namespaces: facets.namespaces,
        namespaces,
        needs: need_choices(&facets.capabilities),
        prev_href,
        next_href,
        first_href,
    };
    Ok(Html(view.render()?).into_response())
}

/// A skill reference from the path, or 400.
pub fn skill_ref(namespace: &str, name: &str) -> Result<SkillRef, UiError> {
    SkillRef::new(namespace, name).map_err(|e| UiError::BadInput(e.to_string()))
}

/// `/ui/skills/{namespace}/{name}`.
pub fn skill_path(skill: &SkillRef) -> String {
    format!("/ui/skills/{}/{}", skill.namespace(), skill.name())
}

fn skill_page(
    signed: &Signed,
    skill: SkillDetail,
    move_error: Option<String>,
    assign: Option<AssignForm>,
) -> SkillPage {
    let base = format!("/ui/skills/{}/{}", skill.namespace, skill.name);
    let labels: Vec<(String, String)> = skill
        .labels
        .iter()
        .map(|(l, v)| (l.clone(), v.clone()))
        .collect();
    let versions = skill
        .versions
        .iter()
        .map(|v| VersionRow {
            version: v.version.clone(),
            size: human_size(v.size),
            published_at: v.published_at.clone(),
            published_by: v.published_by.clone(),
            labels: labels
                .iter()
                .filter(|(_, lv)| *lv == v.version)
                .map(|(l, _)| l.clone())
                .collect(),
            yanked: v.yanked.as_ref().map(|m| m.reason.clone()),
            deprecated: v.deprecated.as_ref().map(|m| m.reason.clone()),
        })
        .collect();
    SkillPage {
        chrome: signed.chrome("skills"),
        skill,
        base,
        versions,
        labels,
        move_error,
        assign,
    }
}

/// The "assign to agent" form of `skill` for an admin (`None` for anyone
/// else: assigning is an admin's).
async fn assign_form(
    state: &UiState,
    signed: &Signed,
    skill: &SkillDetail,
    agent: String,
    pin: String,
    error: Option<String>,
) -> Result<Option<AssignForm>, UiError> {
    if !signed.principal.is_admin() {
        return Ok(None);
    }
    let agents = state
        .registry
        .list_agents(&signed.principal, None, Some(ASSIGN_AGENTS_OFFERED))
        .await?
        .items
        .into_iter()
        .map(|a| (a.spec.id.to_string(), a.spec.name))
        .collect();
    let mut pins = vec![LATEST.to_owned()];
    pins.extend(skill.labels.keys().filter(|l| *l != LATEST).cloned());
    pins.extend(skill.versions.iter().map(|v| v.version.clone()));
    Ok(Some(AssignForm {
        agents,
        pins,
        agent,
        pin,
        error,
    }))
}

/// The "assign to agent" form's fields.
#[derive(Deserialize)]
pub struct AssignToAgent {
    #[serde(default)]
    agent: String,
    #[serde(default)]
    pin: String,
    #[serde(default, deserialize_with = "crate::views::checkbox")]
    allow_pending: bool,
}

/// `POST /ui/skills/{namespace}/{name}/assign`: assigns the skill to an
/// agent at a version or label through the registry's `assign` (the API's
/// rule: an unknown version or label is refused unless `allow_pending`
/// for a label). An existing assignment keeps its priority and grants.
pub async fn assign(
    State(state): State<UiState>,
    signed: Signed,
    Path((namespace, name)): Path<(String, String)>,
    Form(form): Form<AssignToAgent>,
) -> Result<Response, UiError> {
    let skill = skill_ref(&namespace, &name)?;
    let p = &signed.principal;
    let outcome: Result<String, UiError> = async {
        let agent = crate::pages::agents::agent_id(form.agent.trim())?;
        let (version, label) = parse_pin(&form.pin).map_err(UiError::BadInput)?;
        let existing = state
            .registry
            .assignments(p, &agent)
            .await?
            .into_iter()
            .find(|a| a.namespace == *skill.namespace() && a.name == skill.name());
        let (priority, grants) = existing
            .map(|a| (a.assignment.priority, a.assignment.grants))
            .unwrap_or_default();
        let view = state
            .registry
            .assign(
                p,
                &agent,
                &skill,
                Assignment {
                    version,
                    label,
                    enabled: true,
                    priority,
                    grants,
                    allow_pending: form.allow_pending,
                },
            )
            .await?;
        Ok(format!(
            "{skill} assigned to agent {agent} ({}){}.",
            if form.pin.trim().is_empty() {
                LATEST
            } else {
                form.pin.trim()
            },
            if view.status == skilldeck_registry::wire::ASSIGNMENT_PENDING {
                ": pending until the label is set"
            } else {
                ""
            }
        ))
    }
    .await;
    match outcome {
        Ok(message) => {
            state.sessions.set_flash(&signed.session.id, message).await;
            Ok(Redirect::to(&skill_path(&skill)).into_response())
        }
        Err(e @ UiError::Registry(_)) | Err(e @ UiError::BadInput(_)) => {
            let status = e.status();
            let detail = state.registry.skill(p, &skill).await?;
            let form_view = assign_form(
                &state,
                &signed,
                &detail,
                form.agent.trim().to_owned(),
                form.pin.trim().to_owned(),
                Some(e.to_string()),
            )
            .await?;
            let page = skill_page(&signed, detail, None, form_view);
            Ok((status, Html(page.render()?)).into_response())
        }
        Err(e) => Err(e),
    }
}

/// The yank / deprecate form's fields.
#[derive(Deserialize)]
pub struct MarkerForm {
    /// `yank`, `unyank`, `deprecate` or `undeprecate`.
    #[serde(default)]
    change: String,
    #[serde(default)]
    reason: String,
}

/// `POST /ui/skills/{namespace}/{name}/versions/{version}/markers`: yank,
/// unyank, deprecate or undeprecate through the registry (admin; audited
/// there); a refusal shows on the version page.
pub async fn set_marker(
    State(state): State<UiState>,
    signed: Signed,
    Path((namespace, name, version)): Path<(String, String, String)>,
    Form(form): Form<MarkerForm>,
) -> Result<Response, UiError> {
    let skill = skill_ref(&namespace, &name)?;
    let p = &signed.principal;
    let reason = Some(form.reason.trim().to_owned()).filter(|r| !r.is_empty());
    let outcome = match (form.change.as_str(), reason) {
        ("yank", Some(r)) => {
            state
                .registry
                .set_yanked(p, &skill, &version, Some(r))
                .await
        }
        ("deprecate", Some(r)) => {
            state
                .registry
                .set_deprecated(p, &skill, &version, Some(r))
                .await
        }
        ("unyank", _) => state.registry.set_yanked(p, &skill, &version, None).await,
        ("undeprecate", _) => {
            state
                .registry
                .set_deprecated(p, &skill, &version, None)
                .await
        }
        ("yank" | "deprecate", None) => {
            return marker_refused(
                &state,
                &signed,
                &skill,
                &version,
                UiError::BadInput(format!("Say why ({} needs a reason).", form.change)),
            )
            .await;
        }
        _ => {
            return Err(UiError::BadInput(
                "change must be yank, unyank, deprecate or undeprecate".to_owned(),
            ));
        }
    };
    match outcome {
        Ok(detail) => {
            let done = match form.change.as_str() {
                "yank" => "yanked",
                "unyank" => "no longer yanked",
                "deprecate" => "deprecated",
                _ => "no longer deprecated",
            };
            state
                .sessions
                .set_flash(
                    &signed.session.id,
                    format!("{skill}@{} is {done}.", detail.version),
                )
                .await;
            Ok(Redirect::to(&format!(
                "{}/versions/{}",
                skill_path(&skill),
                detail.version
            ))
            .into_response())
        }
        Err(e) => marker_refused(&state, &signed, &skill, &version, e.into()).await,
    }
}

async fn marker_refused(
    state: &UiState,
    signed: &Signed,
    skill: &SkillRef,
    version: &str,
    e: UiError,
) -> Result<Response, UiError> {
    if matches!(
        &e,
        UiError::Registry(skilldeck_registry::RegistryError::Forbidden(_))
    ) {
        return Err(e);
    }
    let status = e.status();
    let mut page = version_page(state, signed, skill, version, TryState::default()).await?;
    page.marker_error = Some(e.to_string());
    Ok((status, Html(page.render()?)).into_response())
}

/// `GET /ui/skills/{namespace}/{name}`.
pub async fn show(
    State(state): State<UiState>,
    signed: Signed,
    Path((namespace, name)): Path<(String, String)>,
) -> Result<Response, UiError> {
    let skill = skill_ref(&namespace, &name)?;
    let detail = state.registry.skill(&signed.principal, &skill).await?;
    let assign = assign_form(
        &state,
        &signed,
        &detail,
        String::new(),
        LATEST.to_owned(),
        None,
    )
    .await?;
    Ok(Html(skill_page(&signed, detail, None, assign).render()?).into_response())
}

/// The move-label form.
#[derive(Deserialize)]
pub struct MoveLabelForm {
    #[serde(default)]
    label: String,
    #[serde(default)]
    version: String,
}

/// `POST /ui/skills/{namespace}/{name}/labels`.
pub async fn move_label(
    State(state): State<UiState>,
    signed: Signed,
    Path((namespace, name)): Path<(String, String)>,
    Form(form): Form<MoveLabelForm>,
) -> Result<Response, UiError> {
    let skill = skill_ref(&namespace, &name)?;
    let outcome = match Label::new(form.label.trim()) {
        Ok(label) => state
            .registry
            .move_label(&signed.principal, &skill, &label, form.version.trim(), None)
            .await
            .map_err(UiError::from),
        Err(e) => Err(UiError::BadInput(e.to_string())),
    };
    match outcome {
        Ok(moved) => {
            let message = match moved.previous {
                Some(prev) if prev != moved.version => {
                    format!(
                        "Label {} moved from {prev} to {}.",
                        moved.label, moved.version
                    )
                }
                _ => format!("Label {} now points to {}.", moved.label, moved.version),
            };
            state.sessions.set_flash(&signed.session.id, message).await;
            Ok(Redirect::to(&skill_path(&skill)).into_response())
        }
        Err(e) => {
            let status = e.status();
            let detail = state.registry.skill(&signed.principal, &skill).await?;
            let assign = assign_form(
                &state,
                &signed,
                &detail,
                String::new(),
                LATEST.to_owned(),
                None,
            )
            .await?;
            let page = skill_page(&signed, detail, Some(e.to_string()), assign);
            Ok((status, Html(page.render()?)).into_response())
        }
    }
}

/// The version page's query: the tool the "Try it" panel shows.
#[derive(Deserialize, Default)]
pub struct VersionQuery {
    #[serde(default)]
    tool: String,
}

/// What the "Try it" panel shows besides the forms: the fields as typed,
/// and the last run's outcome or refusal.
#[derive(Default)]
struct TryState {
    tool: String,
    values: HashMap<String, String>,
    script: String,
    script_args: String,
    run: Option<RunView>,
    error: Option<(String, Option<String>)>,
}

/// `GET /ui/skills/{namespace}/{name}/versions/{version}` (a label works too).
pub async fn version(
    State(state): State<UiState>,
    signed: Signed,
    Path((namespace, name, version)): Path<(String, String, String)>,
    Query(query): Query<VersionQuery>,
) -> Result<Response, UiError> {
    let skill = skill_ref(&namespace, &name)?;
    let page = version_page(
        &state,
        &signed,
        &skill,
        &version,
        TryState {
            tool: query.tool,
            ..TryState::default()
        },
    )
    .await?;
    Ok(Html(page.render()?).into_response())
}

/// `POST /ui/skills/{namespace}/{name}/versions/{version}/test-run`: runs
/// the tool (fields from the generated form) or the script picked, through
/// the service's test run (its authorization, rate limit, policy and audit
/// log), and shows the version page with the outcome.
pub async fn test_run(
    State(state): State<UiState>,
    signed: Signed,
    Path((namespace, name, version)): Path<(String, String, String)>,
    Form(fields): Form<Vec<(String, String)>>,
) -> Result<Response, UiError> {
    let skill = skill_ref(&namespace, &name)?;
    let values: HashMap<String, String> = fields.into_iter().collect();
    let get = |k: &str| values.get(k).cloned().unwrap_or_default();
    let mut try_state = TryState {
        tool: get("tool"),
        script: get("script"),
        script_args: get("args"),
        ..TryState::default()
    };
    let request = if get("kind") == "script" {
        Ok(TestRunRequest {
            tool: None,
            arguments: None,
            script: Some(try_state.script.clone()),
            args: script_args(&try_state.script_args),
        })
    } else {
        let targets = state
            .registry
            .test_run_targets(&signed.principal, &skill, &version)
            .await?;
        match targets.tools.iter().find(|t| t.name == try_state.tool) {
            Some(tool) => arguments_of(tool, &values).map(|arguments| TestRunRequest {
                tool: Some(tool.name.clone()),
                arguments: Some(arguments),
                script: None,
                args: Vec::new(),
            }),
            None => Err(format!("Pick one of the tools of {skill}@{version}.")),
        }
    };
    let mut status = axum::http::StatusCode::OK;
    match request {
        Err(message) => {
            status = axum::http::StatusCode::BAD_REQUEST;
            try_state.error = Some((message, None));
        }
        Ok(request) => match state
            .registry
            .test_run(&signed.principal, &skill, &version, request)
            .await
        {
            Ok(result) => try_state.run = Some(RunView::of(&result)),
            Err(e) => {
                let pointer = match &e {
                    skilldeck_registry::RegistryError::InvalidArguments { pointer, .. } => {
                        Some(pointer.clone())
                    }
                    _ => None,
                };
                let e = UiError::from(e);
                status = e.status();
                // A refusal of the run itself shows in the panel; anything
                // else (not allowed, not found, a server failure) is the
                // usual error page.
                let about_the_run = matches!(status.as_u16(), 400 | 409 | 422 | 429 | 503);
                if !about_the_run {
                    return Err(e);
                }
                try_state.error = Some((e.to_string(), pointer));
            }
        },
    }
    try_state.values = values;
    let page = version_page(&state, &signed, &skill, &version, try_state).await?;
    Ok((status, Html(page.render()?)).into_response())
}

/// The "Try it" panel of `skill@version` for `signed`: `None` unless it may
/// test-run the namespace; without the forms (and saying what is missing)
/// when this host cannot run them.
async fn try_it_panel(
    state: &UiState,
    signed: &Signed,
    skill: &SkillRef,
    version: &str,
    try_state: TryState,
) -> Result<Option<TryIt>, UiError> {
    if !signed.principal.can_test_run(skill.namespace()) {
        return Ok(None);
    }
    let base = format!("{}/versions/{version}", skill_path(skill));
    let mut panel = TryIt {
        action: format!("{base}/test-run"),
        page: base,
        unavailable: None,
        tools: Vec::new(),
        tool: None,
        fields: None,
        arguments_json: try_state
            .values
            .get(ARGUMENTS_JSON_FIELD)
            .cloned()
            .unwrap_or_else(|| "{}".to_owned()),
        scripts: Vec::new(),
        script: try_state.script,
        script_args: try_state.script_args,
        policy: String::new(),
        run: try_state.run,
        error: try_state.error,
    };
    let targets = match state
        .registry
        .test_run_targets(&signed.principal, skill, version)
        .await
    {
        Ok(t) => t,
        Err(e @ skilldeck_registry::RegistryError::Unavailable { .. }) => {
            panel.unavailable = Some(e.to_string());
            return Ok(Some(panel));
        }
        Err(e) => return Err(e.into()),
    };
    let p = &targets.policy;
    panel.policy = format!(
        "sandbox {} ({}); network {}; timeout {} s; output {} per stream; memory {}; {} processes",
        p.profile,
        p.layers.join(", "),
        if p.network { "on" } else { "off" },
        p.timeout_secs,
        human_size(p.output_cap_bytes),
        human_size(p.memory_bytes),
        p.max_processes
    );
    let picked = targets
        .tools
        .iter()
        .find(|t| t.name == try_state.tool)
        .or_else(|| targets.tools.first());
    if let Some(tool) = picked {
        panel.tool = Some(tool.name.clone());
        panel.fields = fields_of(tool, &try_state.values);
    }
    panel.tools = targets
        .tools
        .iter()
        .map(|t| (t.name.clone(), t.description.clone()))
        .collect();
    panel.scripts = targets.scripts;
    Ok(Some(panel))
}

async fn version_page(
    state: &UiState,
    signed: &Signed,
    skill: &SkillRef,
    version: &str,
    try_state: TryState,
) -> Result<VersionPage, UiError> {
    let detail = state
        .registry
        .version(&signed.principal, skill, version)
        .await?;
    let skill_md = state
        .registry
        .skill_md(&signed.principal, skill, &detail.version)
        .await?;
    let description = detail
        .frontmatter
        .get("description")
        .and_then(|d| d.as_str())
        .unwrap_or_default()
        .to_owned();
    let files = detail
        .files
        .iter()
        .map(|f| FileRow {
            href: format!(
                "{}/versions/{}/files/{}",
                skill_path(skill),
                detail.version,
                f.path
            ),
            path: f.path.clone(),
            size: human_size(f.size),
            sha256: f.sha256.clone(),
            executable: f.executable,
        })
        .collect();
    let diagnostics = detail
        .report
        .iter()
        .map(|d| DiagRow::of(d, &detail.name))
        .collect();
    let changes = changes_since_previous(state, signed, skill, &detail, &skill_md).await?;
    let try_it = try_it_panel(state, signed, skill, &detail.version, try_state).await?;
    Ok(VersionPage {
        changes,
        chrome: signed.chrome("skills"),
        base: skill_path(skill),
        description,
        body_html: render_markdown(skill_body(&skill_md)),
        size: human_size(detail.size),
        files,
        report_by: report_by(&detail.report_mode),
        diagnostics,
        try_it,
        marker_error: None,
        environments: detail.environments.iter().map(EnvView::of).collect(),
        v: detail,
    })
}

/// What changed since the released version before `detail` (what a
/// reviewer reads): files added, removed and changed, and the SKILL.md
/// diff, cut at [`MAX_DIFF_BYTES`]. `None` for a first version.
async fn changes_since_previous(
    state: &UiState,
    signed: &Signed,
    skill: &SkillRef,
    detail: &skilldeck_registry::wire::VersionDetail,
    skill_md: &str,
) -> Result<Option<Changes>, UiError> {
    let Some(previous) = state
        .registry
        .previous_release(skill, &detail.version)
        .await?
    else {
        return Ok(None);
    };
    let before = state
        .registry
        .version(&signed.principal, skill, &previous)
        .await?;
    let before_md = state
        .registry
        .skill_md(&signed.principal, skill, &previous)
        .await?;
    let old: std::collections::BTreeMap<&str, (&str, bool)> = before
        .files
        .iter()
        .map(|f| (f.path.as_str(), (f.sha256.as_str(), f.executable)))
        .collect();
    let new: std::collections::BTreeMap<&str, (&str, bool)> = detail
        .files
        .iter()
        .map(|f| (f.path.as_str(), (f.sha256.as_str(), f.executable)))
        .collect();
    let added = new
        .keys()
        .filter(|p| !old.contains_key(*p))
        .map(|p| (*p).to_owned())
        .collect();
    let removed = old
        .keys()
        .filter(|p| !new.contains_key(*p))
        .map(|p| (*p).to_owned())
        .collect();
    let changed = new
        .iter()
        .filter(|(p, f)| old.get(*p).is_some_and(|o| o != *f))
        .map(|(p, _)| (*p).to_owned())
        .collect();
    let mut diff = similar::TextDiff::from_lines(before_md.as_str(), skill_md)
        .unified_diff()
        .context_radius(3)
        .header(
            &format!("SKILL.md {previous}"),
            &format!("SKILL.md {}", detail.version),
        )
        .to_string();
    let cut = diff.len() > MAX_DIFF_BYTES;
    if cut {
        let mut end = MAX_DIFF_BYTES;
        while !diff.is_char_boundary(end) {
            end -= 1;
        }
        diff.truncate(end);
    }
    Ok(Some(Changes {
        previous,
        added,
        removed,
        changed,
        skill_md_diff: diff,
        cut,
    }))
}

/// The versions waiting for review that the signed-in token may review.
pub async fn reviews(State(state): State<UiState>, signed: Signed) -> Result<Response, UiError> {
    let pending = state.registry.pending_reviews(&signed.principal).await?;
    let page = ReviewsPage {
        chrome: signed.chrome("reviews"),
        pending,
    };
    Ok(Html(page.render()?).into_response())
}

/// What made a version's report, as the version page says it.
fn report_by(mode: &str) -> &'static str {
    match mode {
        skilldeck_registry::wire::REPORT_STRICT => "skilldeck validate --strict",
        skilldeck_registry::wire::REPORT_LENIENT => "skilldeck validate --lenient",
        _ => "the acceptance check at publish (an older version: no advisory lints)",
    }
}

/// A pin as typed: empty or `latest` (follow `latest`), a version (starts
/// with a digit) or a label; or what is wrong with it.
pub fn parse_pin(pin: &str) -> Result<(Option<String>, Option<Label>), String> {
    let pin = pin.trim();
    Ok(if pin.is_empty() || pin == LATEST {
        (None, None)
    } else if pin.starts_with(|c: char| c.is_ascii_digit()) {
        (Some(pin.to_owned()), None)
    } else {
        let label = Label::new(pin).map_err(|e| e.to_string())?;
        (None, Some(label))
    })
}
