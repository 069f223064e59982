//! The peer address [`crate::http::serve`] puts in each request's
//! extensions (`ConnectInfo`), read by the handlers (the failed-sign-in
//! throttle) and the request log.

use std::net::SocketAddr;

use axum::extract::ConnectInfo;

/// The peer address of a request served by [`crate::http::serve`] (`None`
/// when the router is called some other way, e.g. in-process in tests).
pub fn peer_of(extensions: &axum::http::Extensions) -> Option<SocketAddr> {
    extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(a)| *a)
}
