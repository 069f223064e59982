//! The HTTP API: every route under `/api/v1`, `/healthz` (liveness),
//! `/readyz` (readiness) and the OpenAPI
//! document. Handlers only translate HTTP to [`Registry`] calls; errors
//! become `application/problem+json` in one place (`problem`).

mod handlers;
mod observe;
mod openapi;
mod peer;
mod problem;
mod server;

pub use observe::{REQUEST_TARGET, trace_context};
pub use peer::peer_of;
pub use server::serve;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{delete, get, post, put};

use crate::service::registry::Registry;
use crate::wire::API_PREFIX;

/// Bytes a multipart publish may spend on its form's framing (boundaries,
/// part headers) beyond its two parts.
pub const MULTIPART_OVERHEAD_BYTES: usize = 64 * 1024;

/// The API router (`/api/v1/...`, `/healthz`, `/readyz`), with its state.
pub fn api_router(registry: Registry) -> Router {
    // A multipart publish carries the package and its resolution (each
    // bounded on its own in the handler) and the form's framing.
    let publish_cap = registry.limits().max_publish_bytes
        + crate::service::publish::MAX_ENVIRONMENTS_BYTES
        + MULTIPART_OVERHEAD_BYTES;
    let json_cap = registry.limits().max_json_body_bytes;
    let publish = Router::new()
        .route(
            "/skills",
            post(handlers::publish).get(handlers::list_skills),
        )
        .layer(DefaultBodyLimit::max(publish_cap));
    let api = Router::new()
        .route("/skills/{namespace}/{name}", get(handlers::skill))
        .route(
            "/skills/{namespace}/{name}/versions/{version}",
            get(handlers::version),
        )
        .route(
            "/skills/{namespace}/{name}/versions/{version}/archive",
            get(handlers::archive),
        )
        .route(
            "/skills/{namespace}/{name}/versions/{version}/files/{*path}",
            get(handlers::file),
        )
        .route(
            "/skills/{namespace}/{name}/versions/{version}/yank",
            post(handlers::yank).delete(handlers::unyank),
        )
        .route(
            "/skills/{namespace}/{name}/versions/{version}/deprecate",
            post(handlers::deprecate).delete(handlers::undeprecate),
        )
        .route(
            "/skills/{namespace}/{name}/versions/{version}/block",
            post(handlers::block).delete(handlers::unblock),
        )
        .route(
            "/skills/{namespace}/{name}/versions/{version}/review",
            post(handlers::review),
        )
        .route(
            "/skills/{namespace}/{name}/versions/{version}/test-run",
            post(handlers::test_run).get(handlers::test_run_targets),
        )
        .route("/reviews", get(handlers::reviews))
        .route(
            "/namespaces/{namespace}/signers",
            get(handlers::signers).post(handlers::add_signer),
        )
        .route(
            "/namespaces/{namespace}/signers/{fingerprint}",
            delete(handlers::remove_signer),
        )
        .route(
            "/namespaces/{namespace}/policy",
            get(handlers::namespace_policy).put(handlers::set_namespace_policy),
        )
        .route(
            "/skills/{namespace}/{name}/labels/{label}",
            put(handlers::move_label),
        )
        .route(
            "/agents",
            post(handlers::create_agent).get(handlers::list_agents),
        )
        .route(
            "/agents/{id}",
            get(handlers::agent)
                .put(handlers::update_agent)
                .delete(handlers::delete_agent),
        )
        .route("/agents/{id}/skills", get(handlers::assignments))
        .route(
            "/agents/{id}/skills/{namespace}/{name}",
            put(handlers::assign).delete(handlers::unassign),
        )
        .route("/agents/{id}/tokens", post(handlers::agent_token))
        .route("/agents/{id}/resolved", get(handlers::resolved))
        .route("/agents/{id}/catalog", get(handlers::catalog))
        .route("/agents/{id}/lock", get(handlers::lock))
        .route(
            "/tokens",
            post(handlers::create_token).get(handlers::list_tokens),
        )
        .route("/tokens/{id}", delete(handlers::revoke_token))
        .route("/audit", get(handlers::audit))
        .route("/openapi.json", get(openapi::openapi_json))
        .layer(DefaultBodyLimit::max(json_cap))
        .merge(publish)
        .fallback(handlers::not_found)
        .method_not_allowed_fallback(handlers::method_not_allowed);
    Router::new()
        .nest(API_PREFIX, api)
        .route(
            skilldeck_package::discovery::INDEX_PATH,
            get(handlers::well_known_index),
        )
        .route(
            "/.well-known/agent-skills/{namespace}/{name}/{version}/archive.tar.gz",
            get(handlers::well_known_archive),
        )
        .route("/healthz", get(handlers::healthz))
        .route("/readyz", get(handlers::readyz))
        .route("/metrics", get(handlers::metrics))
        .layer(axum::middleware::from_fn_with_state(
            registry.clone(),
            generation_header,
        ))
        .with_state(registry)
}

/// Every answer says the generation this replica is at
/// (`x-skilldeck-generation`) unless its handler set a more precise one
/// (a lock or catalog: the generation it is valid at). After a write it
/// covers the write, so a client sending it back reads its own write on
/// any replica.
async fn generation_header(
    axum::extract::State(registry): axum::extract::State<Registry>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    if !headers.contains_key(crate::wire::GENERATION_HEADER)
        && let Ok(value) =
            axum::http::HeaderValue::from_str(&registry.served_generation().to_string())
    {
        headers.insert(crate::wire::GENERATION_HEADER, value);
    }
    response
}

/// The router of a private metrics listener (`registry serve
/// --metrics-listen`): `/metrics` without a token, for a scrape network
/// the public cannot reach, and `/healthz`. Serve it with
/// [`serve`]. The public listener serves `/metrics` to admin tokens only
/// ([`api_router`]).
pub fn metrics_router() -> Router {
    Router::new()
        .route("/metrics", get(handlers::open_metrics))
        .route("/healthz", get(handlers::healthz))
}
