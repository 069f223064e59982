//! Upload a package (multipart): published through the registry exactly
//! like `POST /api/v1/skills`; a refusal shows its diagnostics, each with
//! its file:line, with status 422.

use askama::Template as _;
use axum::body::Bytes;
use axum::extract::{Multipart, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Redirect, Response};
use skilldeck_registry::RegistryError;
use skilldeck_registry::names::{DEFAULT_NAMESPACE, Namespace};
use skilldeck_registry::wire_diagnostic;

use crate::error::UiError;
use crate::state::{Signed, UiState};
use crate::views::{DiagRow, Refusal, UploadPage, human_size};

/// `GET /ui/upload`.
pub async fn form(State(state): State<UiState>, signed: Signed) -> Result<Response, UiError> {
    let page = UploadPage {
        chrome: signed.chrome("upload"),
        namespace: DEFAULT_NAMESPACE.to_owned(),
        version: String::new(),
        max_size: human_size(state.registry.limits().max_publish_bytes as u64),
        refusal: None,
    };
    Ok(Html(page.render()?).into_response())
}

/// `POST /ui/upload` (multipart: `namespace`, `version`, `package`).
pub async fn upload(
    State(state): State<UiState>,
    signed: Signed,
    mut multipart: Multipart,
) -> Result<Response, UiError> {
    let mut namespace = DEFAULT_NAMESPACE.to_owned();
    let mut version = String::new();
    let mut package: Option<Bytes> = None;
    while let Some(field) = multipart
        .next_field()
        .await
        .map_err(|e| UiError::BadInput(format!("the upload form could not be read: {e}")))?
    {
        let name = field.name().unwrap_or_default().to_owned();
        let read_error = |e: axum::extract::multipart::MultipartError| {
            UiError::BadInput(format!("the field '{name}' could not be read: {e}"))
        };
        match name.as_str() {
            "namespace" => namespace = field.text().await.map_err(read_error)?.trim().to_owned(),
            "version" => version = field.text().await.map_err(read_error)?.trim().to_owned(),
            "package" => package = Some(field.bytes().await.map_err(read_error)?),
            _ => {}
        }
    }
    let refuse = |status: StatusCode, detail: String, diagnostics: Vec<DiagRow>| {
        let page = UploadPage {
            chrome: signed.chrome("upload"),
            namespace: namespace.clone(),
            version: version.clone(),
            max_size: human_size(state.registry.limits().max_publish_bytes as u64),
            refusal: Some(Refusal {
                detail,
                diagnostics,
            }),
        };
        Ok::<Response, UiError>((status, Html(page.render()?)).into_response())
    };
    let package = match package {
        Some(p) if !p.is_empty() => p,
        _ => {
            return refuse(
                StatusCode::BAD_REQUEST,
                "Choose a package file.".to_owned(),
                vec![],
            );
        }
    };
    let ns = match Namespace::new(&namespace) {
        Ok(ns) => ns,
        Err(e) => return refuse(StatusCode::BAD_REQUEST, e.to_string(), vec![]),
    };
    let version_arg = (!version.is_empty()).then_some(version.as_str());
    match state
        .registry
        .publish(&signed.principal, &ns, version_arg, package, None, None)
        .await
    {
        Ok(published) => {
            let message = if published.created {
                format!(
                    "Published {}/{} {}.",
                    published.namespace, published.name, published.version
                )
            } else {
                format!(
                    "{}/{} {} was already published with this exact content.",
                    published.namespace, published.name, published.version
                )
            };
            state.sessions.set_flash(&signed.session.id, message).await;
            Ok(Redirect::to(&format!(
                "/ui/skills/{}/{}/versions/{}",
                published.namespace, published.name, published.version
            ))
            .into_response())
        }
        Err(RegistryError::Refused(diagnostics)) => {
            let rows: Vec<DiagRow> = diagnostics
                .iter()
                .map(|d| DiagRow::of(&wire_diagnostic(d), ""))
                .collect();
            refuse(
                StatusCode::UNPROCESSABLE_ENTITY,
                format!(
                    "Validation found {} problem{}; nothing was published.",
                    rows.len(),
                    if rows.len() == 1 { "" } else { "s" }
                ),
                rows,
            )
        }
        Err(e) => {
            let e = UiError::from(e);
            refuse(e.status(), e.to_string(), vec![])
        }
    }
}
