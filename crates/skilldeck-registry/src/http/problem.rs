//! The one mapping from [`RegistryError`] to an HTTP status, a stable code
//! and an `application/problem+json` body.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::error::RegistryError;
use crate::service::publish::wire_diagnostic;
use crate::wire::{PROBLEM_JSON, Problem};

/// The status and stable code of an error.
pub fn status_and_code(e: &RegistryError) -> (StatusCode, &'static str) {
    match e {
        RegistryError::Unauthorized(_) => (StatusCode::UNAUTHORIZED, "registry-unauthorized"),
        RegistryError::TooManyAttempts { .. } => {
            (StatusCode::TOO_MANY_REQUESTS, "registry-too-many-attempts")
        }
        RegistryError::RateLimited { code, .. } => (StatusCode::TOO_MANY_REQUESTS, code),
        RegistryError::InvalidArguments { .. } => (
            StatusCode::UNPROCESSABLE_ENTITY,
            "registry-test-run-invalid-arguments",
        ),
        RegistryError::Unavailable { code, .. } => (StatusCode::SERVICE_UNAVAILABLE, code),
        RegistryError::Busy { code, .. } => (StatusCode::SERVICE_UNAVAILABLE, code),
        RegistryError::Forbidden(_) => (StatusCode::FORBIDDEN, "registry-forbidden"),
        RegistryError::NotFound(_) => (StatusCode::NOT_FOUND, "registry-not-found"),
        RegistryError::MethodNotAllowed => (
            StatusCode::METHOD_NOT_ALLOWED,
            "registry-method-not-allowed",
        ),
        RegistryError::BadRequest { code, .. } => (StatusCode::BAD_REQUEST, code),
        RegistryError::Conflict { code, .. } => (StatusCode::CONFLICT, code),
        RegistryError::Unprocessable { code, .. } => (StatusCode::UNPROCESSABLE_ENTITY, code),
        RegistryError::Refused(_) => (StatusCode::UNPROCESSABLE_ENTITY, "registry-package-refused"),
        RegistryError::RiskRefused { .. } => {
            (StatusCode::UNPROCESSABLE_ENTITY, "registry-audit-refused")
        }
        RegistryError::TooLarge { .. } => (StatusCode::PAYLOAD_TOO_LARGE, "registry-too-large"),
        RegistryError::BlobMissing(_) => {
            (StatusCode::INTERNAL_SERVER_ERROR, "registry-blob-missing")
        }
        RegistryError::BlobCorrupt(_) => {
            (StatusCode::INTERNAL_SERVER_ERROR, "registry-blob-corrupt")
        }
        RegistryError::Database(_) | RegistryError::Migrate(_) => {
            (StatusCode::SERVICE_UNAVAILABLE, "registry-database")
        }
        RegistryError::Store(_) => (StatusCode::SERVICE_UNAVAILABLE, "registry-store"),
        RegistryError::Io { .. } | RegistryError::Internal(_) => {
            (StatusCode::INTERNAL_SERVER_ERROR, "registry-internal")
        }
        RegistryError::Config(_) => (StatusCode::INTERNAL_SERVER_ERROR, "registry-config"),
    }
}

/// The problem body of an error. Server-side failures say what failed
/// without internal detail (that goes to the log).
pub fn problem_of(e: &RegistryError) -> Problem {
    let (status, code) = status_and_code(e);
    let detail = match e {
        RegistryError::Database(_) | RegistryError::Migrate(_) => {
            "the database failed; see the server log".to_owned()
        }
        RegistryError::Store(_) => "the blob store failed; see the server log".to_owned(),
        RegistryError::Io { .. } | RegistryError::Internal(_) | RegistryError::Config(_) => {
            "internal error; see the server log".to_owned()
        }
        other => other.to_string(),
    };
    let diagnostics = match e {
        RegistryError::Refused(ds) => ds.iter().map(wire_diagnostic).collect(),
        _ => Vec::new(),
    };
    let findings = match e {
        RegistryError::RiskRefused { findings, .. } => findings.clone(),
        _ => Vec::new(),
    };
    Problem {
        kind: format!("https://skilldeck.dev/problems/{code}"),
        title: status.canonical_reason().unwrap_or("error").to_owned(),
        status: status.as_u16(),
        detail,
        code: code.to_owned(),
        diagnostics,
        findings,
        pointer: match e {
            RegistryError::InvalidArguments { pointer, .. } => Some(pointer.clone()),
            _ => None,
        },
    }
}

impl IntoResponse for RegistryError {
    fn into_response(self) -> Response {
        let problem = problem_of(&self);
        if problem.status >= 500 {
            tracing::error!(error = %self, code = %problem.code, "registry request failed");
        }
        let status =
            StatusCode::from_u16(problem.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let body = serde_json::to_vec(&problem).unwrap_or_default();
        let mut response = (status, body).into_response();
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON));
        if status == StatusCode::UNAUTHORIZED {
            headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        if let RegistryError::TooManyAttempts { retry_after }
        | RegistryError::RateLimited { retry_after, .. }
        | RegistryError::Busy { retry_after, .. } = self
        {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(retry_after));
        }
        response
    }
}
