//! Requests to the UI router and what the tests read from its answers,
//! shared by several modules (each had its own copy, byte for byte, when
//! the modules were test binaries of their own).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use tower::ServiceExt as _;

/// Sends `req` to `router`: the status, the headers and the body (text).
pub async fn send(
    router: &Router,
    req: Request<Body>,
) -> (StatusCode, axum::http::HeaderMap, String) {
    let res = router.clone().oneshot(req).await.unwrap();
    let status = res.status();
    let headers = res.headers().clone();
    let body = axum::body::to_bytes(res.into_body(), 1 << 22)
        .await
        .unwrap();
    (status, headers, String::from_utf8_lossy(&body).into_owned())
}

/// A GET of `path` (Host 127.0.0.1:7878), with the session `cookie`.
pub fn get(path: &str, cookie: Option<&str>) -> Request<Body> {
    let mut b = Request::builder()
        .uri(path)
        .header(header::HOST, "127.0.0.1:7878");
    if let Some(c) = cookie {
        b = b.header(header::COOKIE, c);
    }
    b.body(Body::empty()).unwrap()
}

/// A form POST of `body` to `path` with the session `cookie`.
pub fn post_form(path: &str, cookie: &str, body: &str) -> Request<Body> {
    Request::builder()
        .method("POST")
        .uri(path)
        .header(header::HOST, "127.0.0.1:7878")
        .header(header::COOKIE, cookie)
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from(body.to_owned()))
        .unwrap()
}

/// The `name=value` of the answer's `Set-Cookie`.
pub fn cookie_of(headers: &axum::http::HeaderMap) -> String {
    let set = headers[header::SET_COOKIE].to_str().unwrap();
    set.split(';').next().unwrap().to_owned()
}

/// The CSRF token of the first form in `html`.
pub fn csrf_of(html: &str) -> String {
    let at = html.find("name=\"csrf\" value=\"").unwrap() + "name=\"csrf\" value=\"".len();
    html[at..at + 43].to_owned()
}

/// `s` percent-encoded for a form body.
pub fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}
