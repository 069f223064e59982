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

/// States each name rule on the path parameters that carry one (a
/// namespace, a skill name, an agent id, a label): the pattern and length
/// come from the rules themselves ([`skilldeck::spec::SLUG_PATTERN`],
/// [`names`](crate::names)), so the document cannot drift from them.
struct NameRules;

impl NameRules {
    /// The pattern and length limit of the parameter `name` of `path`.
    fn rule(path: &str, name: &str) -> Option<(&'static str, usize)> {
        use crate::names::{LABEL_PATTERN, MAX_AGENT_ID_LEN, MAX_LABEL_LEN, MAX_NAMESPACE_LEN};
        use skilldeck::spec::SLUG_PATTERN;
        match name {
            "namespace" => Some((SLUG_PATTERN, MAX_NAMESPACE_LEN)),
            "name" => Some((SLUG_PATTERN, skilldeck::limits::MAX_NAME_CHARS)),
            "label" => Some((LABEL_PATTERN, MAX_LABEL_LEN)),
            "id" if path.contains("/agents/{id}") => Some((SLUG_PATTERN, MAX_AGENT_ID_LEN)),
            _ => None,
        }
    }
}

impl Modify for NameRules {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::path::ParameterIn;
        use utoipa::openapi::{ObjectBuilder, RefOr, Schema, Type};
        for (path, item) in &mut openapi.paths.paths {
            let operations = [
                &mut item.get,
                &mut item.put,
                &mut item.post,
                &mut item.delete,
                &mut item.patch,
            ];
            for operation in operations.into_iter().flatten() {
                for parameter in operation.parameters.iter_mut().flatten() {
                    let RefOr::T(parameter) = parameter else {
                        continue;
                    };
                    if !matches!(parameter.parameter_in, ParameterIn::Path) {
                        continue;
                    }
                    if let Some((pattern, max)) = NameRules::rule(path, &parameter.name) {
                        parameter.schema = Some(RefOr::T(Schema::Object(
                            ObjectBuilder::new()
                                .schema_type(Type::String)
                                .pattern(Some(pattern))
                                .max_length(Some(max))
                                .build(),
                        )));
                    }
                }
            }
        }
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
        handlers::audit, openapi_json, handlers::well_known_index, handlers::well_known_archive, handlers::healthz, handlers::readyz, handlers::metrics, handlers::block, handlers::unblock,
        handlers::review, handlers::reviews, handlers::namespace_policy,
        handlers::set_namespace_policy, handlers::signers, handlers::add_signer,
        handlers::remove_signer, handlers::test_run, handlers::test_run_targets,
    ),
    components(schemas(
        wire::Problem, wire::WireDiagnostic, wire::FileEntry, wire::Published,
        wire::SkillSummary, wire::SkillDetail, wire::VersionSummary, wire::VersionDetail,
        wire::Marker, wire::ReasonBody, wire::LabelMove, wire::LabelMoved, wire::AgentSpec,
        wire::Agent, wire::Grants, wire::Assignment, wire::AssignmentView, wire::TokenRequest,
        wire::TokenCreated, wire::TokenInfo, wire::ResolvedSkill, wire::Excluded, wire::Resolved,
        wire::LockedSkill, wire::AgentLock, wire::AuditEntry, wire::ReviewState, wire::Review,
        wire::ReviewDecision, wire::Decision, wire::NamespacePolicy, wire::PendingVersion,
        wire::SignerInfo, wire::SignerKey, wire::TestRunRequest, wire::TestRunPolicy,
        wire::TestRunOutcome, wire::TestRunResult, wire::TestRunTool, wire::TestRunTargets,
        wire::Readiness, wire::ReadyCheck,
    )),
    modifiers(&Bearer, &NameRules),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_parameter_in_the_openapi_document_states_the_core_slug_rule() {
        let doc = serde_json::to_value(ApiDoc::openapi()).unwrap_or_default();
        let mut checked = 0;
        for (path, item) in doc["paths"].as_object().into_iter().flatten() {
            for operation in item.as_object().into_iter().flatten().map(|(_, o)| o) {
                for p in operation["parameters"].as_array().into_iter().flatten() {
                    let name = p["name"].as_str().unwrap_or_default();
                    let expected = match name {
                        "namespace" | "name" => skilldeck::spec::SLUG_PATTERN,
                        "id" if path.contains("/agents/{id}") => skilldeck::spec::SLUG_PATTERN,
                        "label" => crate::names::LABEL_PATTERN,
                        _ => continue,
                    };
                    if p["in"] != "path" {
                        continue;
                    }
                    assert_eq!(p["schema"]["pattern"], expected, "{path} {name}");
                    assert!(p["schema"]["maxLength"].as_u64().is_some(), "{path} {name}");
                    checked += 1;
                }
            }
        }
        assert!(checked >= 30, "only {checked} name parameters found");
    }

    #[test]
    fn the_label_pattern_says_what_a_label_is() {
        let re = regex::Regex::new(crate::names::LABEL_PATTERN).unwrap_or_else(|e| panic!("{e}"));
        for text in ["latest", "prod-2", "1-0", "-a", "a-", "a--b", "A", ""] {
            assert_eq!(
                re.is_match(text),
                crate::names::Label::new(text).is_ok(),
                "{text:?}"
            );
        }
    }
}
