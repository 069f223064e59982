//! [`UiError`]: everything a page can answer instead of its content, and
//! how each is shown (an HTML error page with the right status).

use askama::Template as _;
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Redirect, Response};

use skilldeck_registry::RegistryError;
use skilldeck_registry::http::problem::problem_of;

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
            UiError::Registry(e) => registry_status(e),
        }
    }

    fn title(&self) -> &'static str {
        match self {
            UiError::Csrf(_) => "Request refused",
            UiError::TooLarge(_) => "Too large",
            UiError::SignInRequired => "Sign in",
            UiError::BadInput(_) => "Bad request",
            UiError::Random(_) | UiError::Render(_) => "Server error",
            UiError::Registry(e) => match registry_status(e) {
                StatusCode::NOT_FOUND => "Not found",
                StatusCode::FORBIDDEN => "Not allowed",
                StatusCode::UNAUTHORIZED => "Sign in",
                s if s.is_server_error() => "Registry error",
                _ => "Refused",
            },
        }
    }
}

/// The HTTP status the registry's API gives this error (one mapping,
/// the API's own).
pub fn registry_status(e: &RegistryError) -> StatusCode {
    StatusCode::from_u16(problem_of(e).status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

/// An HTML error page with `status`.
pub fn error_page(status: StatusCode, title: &str, detail: &str) -> Response {
    let page = ErrorPage {
        chrome: Chrome::new(String::new(), None, "", None),
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
        error_page(self.status(), self.title(), &self.to_string())
    }
}
