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
//! to a matching `If-None-Match`.
//!
//! The index and every archive are built together, once per state of the
//! served skills ([`skilldeck_host::Host::content_generation`]: a new
//! snapshot, or a file inside a skill that the watcher saw change), on a
//! blocking thread, and kept until that state changes: a request packs
//! nothing while the deck stays as it is, and one build at a time runs
//! (requests meanwhile wait for it and share it). Each build is logged
//! (`well-known index built`) and numbered: every answer carries the
//! number of the build it comes from in [`BUILD_HEADER`], so a client
//! (and a test) can tell a kept answer from a rebuilt one.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use skilldeck::Digest;
use skilldeck_source::wellknown::{
    ARCHIVE_CONTENT_TYPE, INDEX_CONTENT_TYPE, INDEX_PATH, SERVED_ARCHIVE_SUFFIX, WELL_KNOWN_DIR,
    served_catalog,
};

use crate::engine::Engine;

/// The response header naming the build an answer comes from (1 for the
/// first; it grows by one per rebuild).
pub const BUILD_HEADER: &str = "skilldeck-index-build";

/// The index and the archives of one state of the served skills.
struct Built {
    /// Its number (1 for the first build).
    number: u64,
    /// [`skilldeck_host::Host::content_generation`] when it was built.
    generation: (u64, u64),
    /// The index's JSON and its ETag.
    index: Bytes,
    index_etag: String,
    /// Each archive's bytes and digest, by skill name.
    archives: HashMap<String, (Bytes, Digest)>,
}

/// The routes' state: the engine, the last build, and how many builds
/// there have been.
struct WellKnown {
    engine: Arc<Engine>,
    built: Mutex<Option<Arc<Built>>>,
    builds: AtomicU64,
}

impl WellKnown {
    /// The build of the served skills as they are now: the kept one while
    /// they have not changed, else a new one (blocking: call it on a
    /// blocking thread).
    fn current(&self) -> Arc<Built> {
        let mut kept = self.built.lock().unwrap_or_else(PoisonError::into_inner);
        // Read before the files are: a change during the build makes the
        // next request build again.
        let generation = self.engine.host().content_generation();
        if let Some(b) = kept.as_ref()
            && b.generation == generation
        {
            return Arc::clone(b);
        }
        let snapshot = self.engine.snapshot();
        let (index, archives) = served_catalog(snapshot.served());
        let body = index.to_json();
        let number = self.builds.fetch_add(1, Ordering::Relaxed) + 1;
        let built = Arc::new(Built {
            number,
            generation,
            index_etag: Digest::of(&body).etag(),
            index: Bytes::from(body),
            archives: archives
                .into_iter()
                .map(|(name, a)| (name, (Bytes::from(a.bytes), a.digest)))
                .collect(),
        });
        tracing::info!(
            build = number,
            skills = built.archives.len(),
            generation = generation.0,
            files_generation = generation.1,
            "well-known index built"
        );
        *kept = Some(Arc::clone(&built));
        built
    }
}

/// The routes, over `engine`'s current skills.
pub fn router(engine: Arc<Engine>) -> axum::Router {
    let state = Arc::new(WellKnown {
        engine,
        built: Mutex::new(None),
        builds: AtomicU64::new(0),
    });
    axum::Router::new()
        .route(INDEX_PATH, axum::routing::get(index))
        .route(
            &format!("{WELL_KNOWN_DIR}{{file}}"),
            axum::routing::get(archive),
        )
        .with_state(state)
}

fn with_etag(
    headers: &HeaderMap,
    build: u64,
    etag: &str,
    content_type: &str,
    body: Bytes,
) -> Response {
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
    h.insert(BUILD_HEADER, HeaderValue::from(build));
    response
}

fn not_found(what: &str) -> Response {
    (StatusCode::NOT_FOUND, format!("not found: {what}\n")).into_response()
}

async fn built(state: Arc<WellKnown>) -> Result<Arc<Built>, Response> {
    tokio::task::spawn_blocking(move || state.current())
        .await
        .map_err(|e| (StatusCode::INTERNAL_SERVER_ERROR, format!("{e}\n")).into_response())
}

async fn index(State(state): State<Arc<WellKnown>>, headers: HeaderMap) -> Response {
    match built(state).await {
        Ok(b) => with_etag(
            &headers,
            b.number,
            &b.index_etag,
            INDEX_CONTENT_TYPE,
            b.index.clone(),
        ),
        Err(r) => r,
    }
}

async fn archive(
    State(state): State<Arc<WellKnown>>,
    headers: HeaderMap,
    Path(file): Path<String>,
) -> Response {
    let Some(name) = file.strip_suffix(SERVED_ARCHIVE_SUFFIX) else {
        return not_found(&file);
    };
    let b = match built(state).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    match b.archives.get(name) {
        Some((bytes, digest)) => with_etag(
            &headers,
            b.number,
            &digest.etag(),
            ARCHIVE_CONTENT_TYPE,
            bytes.clone(),
        ),
        // Not served, or it does not pack (logged when built).
        None => not_found(&file),
    }
}
