//! Opaque page cursors: the last key of a page, base64url-encoded, so a
//! client cannot build one by hand and keys stay free to change.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::error::RegistryError;

/// The cursor of a key.
pub fn encode(key: &str) -> String {
    URL_SAFE_NO_PAD.encode(key.as_bytes())
}

/// The key of a cursor, or 400 `registry-bad-cursor`.
pub fn decode(cursor: &str) -> Result<String, RegistryError> {
    URL_SAFE_NO_PAD
        .decode(cursor.as_bytes())
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .filter(|k| !skilldeck::spec::has_control(k, true))
        .ok_or_else(|| {
            RegistryError::bad_request(
                "registry-bad-cursor",
                "the cursor is not one this registry gave",
            )
        })
}

/// The page size: `limit` (default `default`), at most `max`, at least 1.
pub fn page_limit(limit: Option<u32>, default: u32, max: u32) -> Result<u32, RegistryError> {
    match limit {
        None => Ok(default),
        Some(0) => Err(RegistryError::bad_request(
            "registry-bad-limit",
            "limit must be at least 1",
        )),
        Some(n) if n > max => Err(RegistryError::bad_request(
            "registry-bad-limit",
            format!("limit must be at most {max}"),
        )),
        Some(n) => Ok(n),
    }
}
