//! A version's files: one file shown as text (escaped, at most
//! [`MAX_FILE_VIEW_BYTES`]), or said to be binary with its size, and its
//! download. The path is the registry's to check (`file_ref` refuses a
//! path that climbs out, is absolute or is not the package's); the UI also
//! shows only a path the version lists.

use askama::Template as _;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, header};
use axum::response::{Html, IntoResponse, Response};

use crate::error::UiError;
use crate::limits::MAX_FILE_VIEW_BYTES;
use crate::pages::skills::{skill_path, skill_ref};
use crate::state::{Signed, UiState};
use crate::views::{FilePage, human_size};

/// What a file is, as its page shows it.
pub enum FileShown {
    /// UTF-8 text without NUL bytes.
    Text(String),
    /// Anything else.
    Binary,
    /// Larger than [`MAX_FILE_VIEW_BYTES`] (not read).
    TooLarge,
}

/// Text when `bytes` is UTF-8 without a NUL byte.
pub fn shown(bytes: &[u8]) -> FileShown {
    match std::str::from_utf8(bytes) {
        Ok(text) if !text.contains('\0') => FileShown::Text(text.to_owned()),
        _ => FileShown::Binary,
    }
}

/// `GET /ui/skills/{namespace}/{name}/versions/{version}/files/{*path}`.
pub async fn view(
    State(state): State<UiState>,
    signed: Signed,
    Path((namespace, name, version, path)): Path<(String, String, String, String)>,
) -> Result<Response, UiError> {
    let skill = skill_ref(&namespace, &name)?;
    let p = &signed.principal;
    let detail = state.registry.version(p, &skill, &version).await?;
    // The registry checks the path first (a traversal is a 400 whether or
    // not such a file exists); then only a listed file is shown.
    let blob_ref = state
        .registry
        .file_ref(p, &skill, &detail.version, &path)
        .await?;
    let entry = detail
        .files
        .iter()
        .find(|f| f.path == path)
        .ok_or_else(|| {
            UiError::Registry(skilldeck_registry::RegistryError::NotFound(format!(
                "file {path} of {skill}@{}",
                detail.version
            )))
        })?;
    let content = if entry.size > MAX_FILE_VIEW_BYTES {
        FileShown::TooLarge
    } else {
        shown(&state.registry.fetch(blob_ref).await?.bytes)
    };
    let base = format!("{}/versions/{}", skill_path(&skill), detail.version);
    let (text, binary, too_large) = match content {
        FileShown::Text(t) => (Some(t), false, false),
        FileShown::Binary => (None, true, false),
        FileShown::TooLarge => (None, false, true),
    };
    let page = FilePage {
        chrome: signed.chrome("skills"),
        download: format!("{base}/raw/{path}"),
        skill_href: skill_path(&skill),
        version_href: base,
        skill: skill.to_string(),
        version: detail.version.clone(),
        path: entry.path.clone(),
        bytes: entry.size,
        size: human_size(entry.size),
        sha256: entry.sha256.clone(),
        text,
        binary,
        too_large,
        max_view: human_size(MAX_FILE_VIEW_BYTES),
    };
    Ok(Html(page.render()?).into_response())
}

/// `GET /ui/skills/{namespace}/{name}/versions/{version}/raw/{*path}`: the
/// file's bytes as a download (never rendered by the browser).
pub async fn raw(
    State(state): State<UiState>,
    signed: Signed,
    Path((namespace, name, version, path)): Path<(String, String, String, String)>,
) -> Result<Response, UiError> {
    let skill = skill_ref(&namespace, &name)?;
    let blob = state
        .registry
        .file(&signed.principal, &skill, &version, &path)
        .await?;
    let file_name: String = path
        .rsplit('/')
        .next()
        .unwrap_or("file")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut response = blob.bytes.into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    if let Ok(v) = HeaderValue::from_str(&format!("attachment; filename=\"{file_name}\"")) {
        headers.insert(header::CONTENT_DISPOSITION, v);
    }
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_utf8_without_nul_and_anything_else_is_binary() {
        assert!(matches!(shown(b"print('hi')\n"), FileShown::Text(_)));
        assert!(matches!(shown(b"\x89PNG\r\n\x1a\n\0\0"), FileShown::Binary));
        assert!(matches!(shown(b"a\0b"), FileShown::Binary));
        assert!(matches!(shown(&[0xff, 0xfe, 0x41]), FileShown::Binary));
    }
}
