//! Skills: the list with search and pagination, a skill's page (versions,
//! labels, the move-label form) and a version's page (rendered SKILL.md,
//! files, diagnostics).

use askama::Template as _;
use axum::Form;
use axum::extract::{Path, Query, State};
use axum::response::{Html, IntoResponse, Redirect, Response};
use serde::Deserialize;
use skilldeck_registry::SkillQuery;
use skilldeck_registry::names::{Label, SkillRef};
use skilldeck_registry::wire::SkillDetail;

use crate::error::UiError;
use crate::limits::{MAX_DIFF_BYTES, PAGE_SIZE};
use crate::markdown::{render_markdown, skill_body};
use crate::state::{Signed, UiState};
use crate::views::{
    Changes, DiagRow, FileRow, ReviewsPage, SkillPage, SkillsPage, VersionPage, VersionRow,
    href_with, human_size,
};

/// The list's query.
#[derive(Deserialize, Default)]
pub struct ListQuery {
    #[serde(default)]
    q: String,
    #[serde(default)]
    cursor: String,
}

/// `GET /ui/skills?q=&cursor=`.
pub async fn list(
    State(state): State<UiState>,
    signed: Signed,
    Query(query): Query<ListQuery>,
) -> Result<Response, UiError> {
    let q = query.q.trim().to_owned();
    let page = state
        .registry
        .list_skills(
            &signed.principal,
            &SkillQuery {
                q: (!q.is_empty()).then(|| q.clone()),
                namespace: None,
                cursor: (!query.cursor.is_empty()).then(|| query.cursor.clone()),
                limit: Some(PAGE_SIZE),
            },
        )
        .await?;
    let next_href = page
        .next_cursor
        .as_deref()
        .map(|c| href_with("/ui/skills", &[("q", &q), ("cursor", c)]));
    let first_href = (!query.cursor.is_empty()).then(|| href_with("/ui/skills", &[("q", &q)]));
    let view = SkillsPage {
        chrome: signed.chrome("skills"),
        q,
        skills: page.items,
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

fn skill_page(signed: &Signed, skill: SkillDetail, move_error: Option<String>) -> SkillPage {
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
    }
}

/// `GET /ui/skills/{namespace}/{name}`.
pub async fn show(
    State(state): State<UiState>,
    signed: Signed,
    Path((namespace, name)): Path<(String, String)>,
) -> Result<Response, UiError> {
    let skill = skill_ref(&namespace, &name)?;
    let detail = state.registry.skill(&signed.principal, &skill).await?;
    Ok(Html(skill_page(&signed, detail, None).render()?).into_response())
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
            state.sessions.set_flash(&signed.session.id, message);
            Ok(Redirect::to(&skill_path(&skill)).into_response())
        }
        Err(e) => {
            let status = e.status();
            let detail = state.registry.skill(&signed.principal, &skill).await?;
            let page = skill_page(&signed, detail, Some(e.to_string()));
            Ok((status, Html(page.render()?)).into_response())
        }
    }
}

/// `GET /ui/skills/{namespace}/{name}/versions/{version}` (a label works too).
pub async fn version(
    State(state): State<UiState>,
    signed: Signed,
    Path((namespace, name, version)): Path<(String, String, String)>,
) -> Result<Response, UiError> {
    let skill = skill_ref(&namespace, &name)?;
    let detail = state
        .registry
        .version(&signed.principal, &skill, &version)
        .await?;
    let skill_md = state
        .registry
        .skill_md(&signed.principal, &skill, &detail.version)
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
    let changes = changes_since_previous(&state, &signed, &skill, &detail, &skill_md).await?;
    let page = VersionPage {
        changes,
        chrome: signed.chrome("skills"),
        base: skill_path(&skill),
        description,
        body_html: render_markdown(skill_body(&skill_md)),
        size: human_size(detail.size),
        files,
        diagnostics,
        v: detail,
    };
    Ok(Html(page.render()?).into_response())
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
