//! The OpenAPI 3.1 document, generated from the handlers' annotations and
//! the wire types; security scheme `bearer`.

use axum::http::header;
use axum::response::{IntoResponse, Response};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

use crate::error::RegistryError;
use crate::http::handlers;
use crate::wire;

/// Adds the bearer security scheme.
struct Bearer;

impl Modify for Bearer {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some("a registry token (sdk_...)"))
                    .build(),
            ),
        );
    }
}

/// The registry's API.
#[derive(OpenApi)]
#[openapi(
    info(title = "skilldeck registry", description = "Skills for a fleet of agents: versions, labels, agents, assignments, catalogs and locks."),
    paths(
        handlers::publish, handlers::list_skills, handlers::skill, handlers::version,
        handlers::archive, handlers::file, handlers::move_label, handlers::yank,
        handlers::unyank, handlers::deprecate, handlers::undeprecate,
        handlers::create_agent, handlers::list_agents, handlers::agent,
        handlers::update_agent, handlers::delete_agent, handlers::assignments,
        handlers::assign, handlers::unassign, handlers::agent_token,
        handlers::create_token, handlers::list_tokens, handlers::revoke_token, handlers::resolved, handlers::catalog, handlers::lock,
        handlers::audit, openapi_json, handlers::healthz,
    ),
    components(schemas(
        wire::Problem, wire::WireDiagnostic, wire::FileEntry, wire::Published,
        wire::SkillSummary, wire::SkillDetail, wire::VersionSummary, wire::VersionDetail,
        wire::Marker, wire::ReasonBody, wire::LabelMove, wire::LabelMoved, wire::AgentSpec,
        wire::Agent, wire::Grants, wire::Assignment, wire::AssignmentView, wire::TokenRequest,
        wire::TokenCreated, wire::TokenInfo, wire::ResolvedSkill, wire::Excluded, wire::Resolved,
        wire::LockedSkill, wire::AgentLock, wire::AuditEntry,
    )),
    modifiers(&Bearer),
)]
pub struct ApiDoc;

/// This document.
#[utoipa::path(get, path = "/api/v1/openapi.json", tag = "meta",
    responses((status = 200, description = "the OpenAPI 3.1 document", content_type = "application/json", body = Object)))]
pub async fn openapi_json() -> Response {
    match ApiDoc::openapi().to_json() {
        Ok(text) => ([(header::CONTENT_TYPE, "application/json")], text).into_response(),
        Err(e) => RegistryError::Internal(format!("openapi: {e}")).into_response(),
    }
}
