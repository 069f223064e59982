//! Security headers on every response of the UI: a strict
//! Content-Security-Policy (scripts and styles only from this origin: no
//! inline script, no inline style, no `eval`), no framing, no MIME
//! sniffing, no referrer to other sites (`same-origin`: Chromium sends
//! `Origin: null` on a form post under `no-referrer`, which the CSRF
//! origin check would refuse), and `no-store` for pages (they show private
//! data; static assets set their own long cache header).

use axum::extract::Request;
use axum::http::{HeaderName, HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;

/// The Content-Security-Policy of every UI response.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// Every header this module sets, with its value.
pub const SECURITY_HEADERS: [(&str, &str); 6] = [
    ("content-security-policy", CONTENT_SECURITY_POLICY),
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "same-origin"),
    ("x-frame-options", "DENY"),
    ("cross-origin-opener-policy", "same-origin"),
    (
        "permissions-policy",
        "camera=(), microphone=(), geolocation=(), payment=()",
    ),
];

/// The middleware.
pub async fn security_headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    for (name, value) in SECURITY_HEADERS {
        headers.insert(
            HeaderName::from_static(name),
            HeaderValue::from_static(value),
        );
    }
    if !headers.contains_key(header::CACHE_CONTROL) {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::Router;
    use axum::body::Body;
    use axum::http::StatusCode;
    use axum::routing::get;
    use tower::ServiceExt as _;

    async fn headers_of(path: &str) -> axum::http::HeaderMap {
        let router = Router::new()
            .route("/ui/page", get(|| async { "page" }))
            .route(
                "/ui/static/a.css",
                get(|| async {
                    (
                        [(header::CACHE_CONTROL, "public, max-age=31536000, immutable")],
                        "a",
                    )
                }),
            )
            .layer(axum::middleware::from_fn(security_headers));
        let res = router
            .oneshot(Request::builder().uri(path).body(Body::empty()).unwrap())
            .await
            .unwrap();
        res.headers().clone()
    }

    #[tokio::test]
    async fn every_response_has_a_strict_csp_without_inline_script_or_style() {
        for path in ["/ui/page", "/ui/missing"] {
            let h = headers_of(path).await;
            let csp = h["content-security-policy"].to_str().unwrap();
            for directive in [
                "default-src 'self'",
                "script-src 'self'",
                "style-src 'self'",
                "frame-ancestors 'none'",
                "object-src 'none'",
                "base-uri 'none'",
                "form-action 'self'",
            ] {
                assert!(csp.contains(directive), "{directive} missing from {csp}");
            }
            for loose in ["unsafe-inline", "unsafe-eval", "*", "data:", "http:"] {
                assert!(!csp.contains(loose), "{loose} in {csp}");
            }
            assert_eq!(h["x-content-type-options"], "nosniff");
            assert_eq!(h["referrer-policy"], "same-origin");
            assert_eq!(h["x-frame-options"], "DENY");
        }
    }

    #[tokio::test]
    async fn pages_are_not_cached_but_static_assets_keep_their_long_cache() {
        assert_eq!(
            headers_of("/ui/page").await[header::CACHE_CONTROL],
            "no-store"
        );
        assert_eq!(
            headers_of("/ui/static/a.css").await[header::CACHE_CONTROL],
            "public, max-age=31536000, immutable"
        );
        let _ = StatusCode::OK;
    }
}
