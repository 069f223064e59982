//! Random secrets (session ids, CSRF tokens) from the operating system's
//! generator, and their constant-time comparison.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::limits::SECRET_BYTES;

/// The OS random generator failed.
#[derive(Debug, thiserror::Error)]
#[error("no secure random numbers from the operating system: {0}")]
pub struct RandomUnavailable(String);

/// [`SECRET_BYTES`] random bytes as base64url text (43 characters). Fails
/// closed: no secret without the OS generator.
pub fn random_secret() -> Result<String, RandomUnavailable> {
    let mut bytes = [0u8; SECRET_BYTES];
    getrandom::fill(&mut bytes).map_err(|e| RandomUnavailable(e.to_string()))?;
    Ok(URL_SAFE_NO_PAD.encode(bytes))
}

/// Constant-time comparison: the core's rule.
pub use skilldeck::secret::secrets_equal;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_43_base64url_characters_and_differ() {
        let a = random_secret().unwrap();
        let b = random_secret().unwrap();
        assert_eq!(a.len(), 43);
        assert!(
            a.bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
        );
        assert_ne!(a, b);
    }

    #[test]
    fn secret_comparison_needs_the_exact_text() {
        assert!(secrets_equal("abc", "abc"));
        assert!(!secrets_equal("abd", "abc"));
        assert!(!secrets_equal("ab", "abc"));
        assert!(!secrets_equal("", "abc"));
    }
}
