//! [`UiError`]: everything a page can answer instead of its content, and
//! how each is shown (an HTML error page with the right status).
//!
//! The UI maps the service's errors itself ([`registry_page`]): a page is
//! not a problem document, and the UI does not depend on the HTTP API's
//! mapping (a face maps the one service error enum to its own terms).

use askama::Template as _;
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Redirect, Response};

use skilldeck_registry::RegistryError;

use crate::secret::RandomUnavailable;
use crate::views::{Chrome, ErrorPage};

/// Everything that can go wrong in the UI.
#[derive(Debug, thiserror::Error)]
pub enum UiError {
    /// The OS random generator failed (no session can be made).
    #[error(transparent)]
    Random(#[from] RandomUnavailable),
    /// A state-changing request without its CSRF token (or from another site).
    #[error("refused: {0}")]
    Csrf(&'static str),
    /// A form over its cap.
    #[error("the form is over the limit of {0} bytes")]
    TooLarge(usize),
    /// Not signed in (redirects to the sign-in page).
    #[error("sign in first")]
    SignInRequired,
    /// A malformed form field or path.
    #[error("{0}")]
    BadInput(String),
    /// The registry refused or failed.
    #[error("{}", .0)]
    Registry(#[from] RegistryError),
    /// A template failed to render (a bug).
    #[error("rendering the page failed: {0}")]
    Render(#[from] askama::Error),
}

impl UiError {
    /// The status this error answers with.
    pub fn status(&self) -> StatusCode {
        match self {
            UiError::Random(_) | UiError::Render(_) => StatusCode::INTERNAL_SERVER_ERROR,
            UiError::Csrf(_) => StatusCode::FORBIDDEN,
            UiError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            UiError::SignInRequired => StatusCode::UNAUTHORIZED,
            UiError::BadInput(_) => StatusCode::BAD_REQUEST,
            UiError::Registry(e) => registry_page(e).status,
        }
    }

    fn title(&self) -> &'static str {
        match self {
            UiError::Csrf(_) => "Request refused",
            UiError::TooLarge(_) => "Too large",
            UiError::SignInRequired => "Sign in",
            UiError::BadInput(_) => "Bad request",
            UiError::Random(_) | UiError::Render(_) => "Server error",
            UiError::Registry(e) => registry_page(e).title,
        }
    }

    /// What the page says: a server-side failure says what failed without
    /// its internal detail (that goes to the log).
    fn detail(&self) -> String {
        match self {
            UiError::Registry(e) => registry_page(e)
                .hidden
                .map_or_else(|| e.to_string(), str::to_owned),
            other => other.to_string(),
        }
    }
}

/// How the UI shows a service error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegistryPage {
    /// The page's status.
    pub status: StatusCode,
    /// The page's title.
    pub title: &'static str,
    /// What the page says instead of the error's own text (server-side
    /// failures, whose detail is for the log only).
    pub hidden: Option<&'static str>,
}

/// The UI's mapping of the service's error enum: the status, title and
/// shown detail of each variant.
pub fn registry_page(e: &RegistryError) -> RegistryPage {
    let page = |status, title| RegistryPage {
        status,
        title,
        hidden: None,
    };
    let failed = |status, hidden| RegistryPage {
        status,
        title: "Registry error",
        hidden: Some(hidden),
    };
    match e {
        RegistryError::Unauthorized(_) => page(StatusCode::UNAUTHORIZED, "Sign in"),
        RegistryError::TooManyAttempts { .. } | RegistryError::RateLimited { .. } => {
            page(StatusCode::TOO_MANY_REQUESTS, "Refused")
        }
        RegistryError::InvalidArguments { .. } => page(StatusCode::UNPROCESSABLE_ENTITY, "Refused"),
        RegistryError::Unavailable { .. } | RegistryError::Busy { .. } => {
            page(StatusCode::SERVICE_UNAVAILABLE, "Unavailable")
        }
        RegistryError::Forbidden(_) => page(StatusCode::FORBIDDEN, "Not allowed"),
        RegistryError::NotFound(_) => page(StatusCode::NOT_FOUND, "Not found"),
        RegistryError::MethodNotAllowed => page(StatusCode::METHOD_NOT_ALLOWED, "Refused"),
        RegistryError::BadRequest { .. } => page(StatusCode::BAD_REQUEST, "Refused"),
        RegistryError::Conflict { .. } => page(StatusCode::CONFLICT, "Refused"),
        RegistryError::Unprocessable { .. } => page(StatusCode::UNPROCESSABLE_ENTITY, "Refused"),
        RegistryError::Refused(_) | RegistryError::RiskRefused { .. } => {
            page(StatusCode::UNPROCESSABLE_ENTITY, "Refused")
        }
        RegistryError::TooLarge { .. } => page(StatusCode::PAYLOAD_TOO_LARGE, "Refused"),
        RegistryError::BlobMissing(_) | RegistryError::BlobCorrupt(_) => failed(
            StatusCode::INTERNAL_SERVER_ERROR,
            "a stored file is missing or damaged; see the server log",
        ),
        RegistryError::Database(_) | RegistryError::Migrate(_) => failed(
            StatusCode::SERVICE_UNAVAILABLE,
            "the database failed; see the server log",
        ),
        RegistryError::Store(_) => failed(
            StatusCode::SERVICE_UNAVAILABLE,
            "the blob store failed; see the server log",
        ),
        RegistryError::Io { .. } | RegistryError::Internal(_) | RegistryError::Config(_) => failed(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal error; see the server log",
        ),
    }
}

/// An HTML error page with `status`.
pub fn error_page(status: StatusCode, title: &str, detail: &str) -> Response {
    // The main navigation stays on an error page (its links lead to sign-in
    // when the session is gone): the one way on from a page not found.
    let page = ErrorPage {
        chrome: Chrome::new(String::new(), None, "error", None),
        title: title.to_owned(),
        detail: detail.to_owned(),
    };
    match page.render() {
        Ok(html) => (status, Html(html)).into_response(),
        Err(_) => (status, detail.to_owned()).into_response(),
    }
}

impl IntoResponse for UiError {
    fn into_response(self) -> Response {
        if matches!(self, UiError::SignInRequired) {
            return Redirect::to("/ui/signin").into_response();
        }
        if let UiError::Registry(e) = &self
            && registry_page(e).hidden.is_some()
        {
            tracing::error!(error = %e, "a registry page failed");
        }
        error_page(self.status(), self.title(), &self.detail())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ui_maps_every_service_error_to_a_status_and_hides_server_side_detail() {
        let cases = [
            (
                RegistryError::NotFound("skill acme/x".to_owned()),
                StatusCode::NOT_FOUND,
                false,
            ),
            (
                RegistryError::Forbidden("no".to_owned()),
                StatusCode::FORBIDDEN,
                false,
            ),
            (
                RegistryError::Unauthorized("unknown token"),
                StatusCode::UNAUTHORIZED,
                false,
            ),
            (
                RegistryError::conflict("registry-version-exists", "taken"),
                StatusCode::CONFLICT,
                false,
            ),
            (
                RegistryError::bad_request("registry-invalid-name", "bad"),
                StatusCode::BAD_REQUEST,
                false,
            ),
            (
                RegistryError::TooManyAttempts { retry_after: 3 },
                StatusCode::TOO_MANY_REQUESTS,
                false,
            ),
            (
                RegistryError::Internal("row 7: secret detail".to_owned()),
                StatusCode::INTERNAL_SERVER_ERROR,
                true,
            ),
            (
                RegistryError::Config("postgres://user:pw@host".to_owned()),
                StatusCode::INTERNAL_SERVER_ERROR,
                true,
            ),
            (
                RegistryError::BlobCorrupt("files/sha256/ab".to_owned()),
                StatusCode::INTERNAL_SERVER_ERROR,
                true,
            ),
        ];
        for (e, status, hidden) in cases {
            let page = registry_page(&e);
            assert_eq!(page.status, status, "{e}");
            assert_eq!(page.hidden.is_some(), hidden, "{e}");
            let shown = UiError::Registry(e).detail();
            if hidden {
                assert!(
                    !shown.contains("secret")
                        && !shown.contains("pw@")
                        && !shown.contains("sha256"),
                    "{shown}"
                );
            }
        }
    }
}
