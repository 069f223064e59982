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

/// States `x-skilldeck-generation` ([`wire::GENERATION_HEADER`]) where the
/// registry reads and writes it: an optional request header on every
/// authenticated operation (the caller extractor applies it before
/// anything is read: read-your-writes across replicas) and a header of
/// every answer.
struct GenerationHeader;

impl GenerationHeader {
    const REQUEST: &'static str = "A generation from an earlier answer of any replica: \
        this replica applies every write up to it before answering (read-your-writes and \
        monotonic reads behind a load balancer). Not a number: 400 registry-invalid-generation.";
    const RESPONSE: &'static str = "The generation this answer is valid at (a lock or \
        catalog: the one it was computed at; after a write: one that covers it). Send it back \
        to read at least this state on any replica.";
}

impl Modify for GenerationHeader {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::header::HeaderBuilder;
        use utoipa::openapi::path::{ParameterBuilder, ParameterIn};
        use utoipa::openapi::{ObjectBuilder, RefOr, Required, Schema, Type};
        let integer = || {
            ObjectBuilder::new()
                .schema_type(Type::Integer)
                .format(Some(utoipa::openapi::SchemaFormat::KnownFormat(
                    utoipa::openapi::KnownFormat::Int64,
                )))
                .minimum(Some(0))
                .build()
        };
        for item in openapi.paths.paths.values_mut() {
            let operations = [
                &mut item.get,
                &mut item.put,
                &mut item.post,
                &mut item.delete,
                &mut item.patch,
            ];
            for operation in operations.into_iter().flatten() {
                if operation.security.as_ref().is_some_and(|s| !s.is_empty()) {
                    operation
                        .parameters
                        .get_or_insert_with(Vec::new)
                        .push(RefOr::T(
                            ParameterBuilder::new()
                                .name(wire::GENERATION_HEADER)
                                .parameter_in(ParameterIn::Header)
                                .required(Required::False)
                                .description(Some(Self::REQUEST))
                                .schema(Some(integer()))
                                .build(),
                        ));
                }
                for response in operation.responses.responses.values_mut() {
                    if let RefOr::T(response) = response {
                        response.headers.insert(
                            wire::GENERATION_HEADER.to_owned(),
                            RefOr::T(
                                HeaderBuilder::new()
                                    .schema(Some(Schema::Object(integer())))
                                    .description(Some(Self::RESPONSE))
                                    .build(),
                            ),
                        );
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
    modifiers(&Bearer, &NameRules, &GenerationHeader),
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
    fn every_authenticated_operation_states_the_generation_header_both_ways() {
        let doc = serde_json::to_value(ApiDoc::openapi()).unwrap_or_default();
        let mut authenticated = 0;
        for (path, item) in doc["paths"].as_object().into_iter().flatten() {
            for (method, operation) in item.as_object().into_iter().flatten() {
                let secured = operation["security"]
                    .as_array()
                    .is_some_and(|s| !s.is_empty());
                let asks = operation["parameters"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|p| p["name"] == wire::GENERATION_HEADER && p["in"] == "header");
                assert_eq!(asks, secured, "{method} {path}");
                authenticated += usize::from(secured);
                for (status, response) in operation["responses"].as_object().into_iter().flatten() {
                    assert!(
                        response["headers"][wire::GENERATION_HEADER].is_object(),
                        "{method} {path} {status}"
                    );
                }
            }
        }
        assert!(
            authenticated >= 30,
            "only {authenticated} authenticated operations"
        );
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
