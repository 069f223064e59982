//! The agentskills.io well-known discovery index of the skills this
//! server serves (`[serve] well-known = true`, HTTP only):
//!
//! - `GET /.well-known/agent-skills/index.json`: one `archive` entry per
//!   served skill (`skilldeck_package::discovery` builds it: the one
//!   rule, mapped by [`skilldeck_source::wellknown::served_index`]), its
//!   `url` relative (`NAME.tar.gz`), its `digest` the SHA-256 of the
//!   tar.gz served there;
//! - `GET /.well-known/agent-skills/NAME.tar.gz`: that archive, packed
//!   deterministically from the skill's folder (files at the root), so
//!   its bytes are the ones the index's digest names while the folder is
//!   unchanged.
//!
//! Both are answered without a token even when `--token-file` protects
//! `/mcp`: turning the switch on publishes the served skills. Both carry
//! an `ETag` (the body's digest) and `Cache-Control: no-cache` (clients
//! revalidate: a skill folder may change at any time), and answer `304`
//! to a matching `If-None-Match`. Each request packs the served skills
//! afresh on a blocking thread (no state to go stale; the cost is reading
//! the skills' files once per request).

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use skilldeck_source::wellknown::{
    ARCHIVE_CONTENT_TYPE, INDEX_CONTENT_TYPE, INDEX_PATH, SERVED_ARCHIVE_SUFFIX, WELL_KNOWN_DIR,
    served_archive, served_index,
};

use crate::engine::Engine;

/// The routes, over `engine`'s current skills.
pub fn router(engine: Arc<Engine>) -> axum::Router {
    axum::Router::new()
        .route(INDEX_PATH, axum::routing::get(index))
        .route(
            &format!("{WELL_KNOWN_DIR}{{file}}"),
            axum::routing::get(archive),
        )
        .with_state(engine)
}

fn with_etag(headers: &HeaderMap, etag: &str, content_type: &str, body: Vec<u8>) -> Response {
    let matches = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(',')
                .any(|t| t.trim() == "*" || t.trim().trim_start_matches("W/") == etag)
        });
    let mut response = if matches {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        ([(header::CONTENT_TYPE, content_type)], body).into_response()
    };
    let h = response.headers_mut();
    if let Ok(v) = HeaderValue::from_str(etag) {
        h.insert(header::ETAG, v);
    }
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

fn not_found(what: &str) -> Response {
    (StatusCode::NOT_FOUND, format!("not found: {what}\n")).into_response()
}

async fn index(State(engine): State<Arc<Engine>>, headers: HeaderMap) -> Response {
    match tokio::task::spawn_blocking(move || served_index(engine.snapshot().served())).await {
        Ok(index) => {
            let body = index.to_json();
            let etag = skilldeck::Digest::of(&body).etag();
            with_etag(&headers, &etag, INDEX_CONTENT_TYPE, body)
        }
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, format!("{e}\n")).into_response(),
    }
}

async fn archive(
    State(engine): State<Arc<Engine>>,
    headers: HeaderMap,
    Path(file): Path<String>,
) -> Response {
    let Some(name) = file.strip_suffix(SERVED_ARCHIVE_SUFFIX) else {
        return not_found(&file);
    };
    let name = name.to_owned();
    let packed = tokio::task::spawn_blocking(move || {
        let snapshot = engine.snapshot();
        let skill = snapshot.served().find(|s| s.name == name)?;
        Some(served_archive(skill).map_err(|e| e.to_string()))
    })
    .await;
    match packed {
        Ok(Some(Ok(a))) => with_etag(&headers, &a.digest.etag(), ARCHIVE_CONTENT_TYPE, a.bytes),
        Ok(Some(Err(e))) => {
            tracing::warn!(file = %file, error = %e, "a well-known archive could not be packed");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                "the skill does not pack\n",
            )
                .into_response()
        }
        Ok(None) => not_found(&file),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, format!("{e}\n")).into_response(),
    }
}
