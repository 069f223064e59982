//! Secrets (bearer tokens, session ids, CSRF tokens): how one is read from
//! a file, compared, stored and shown. Each rule is here once; the MCP
//! server's and the registry client's token files, the registry's stored
//! token hashes and the UI's session keys call these.
//!
//! - A token file holds the secret on its first line, surrounding white
//!   space trimmed; it must be one word of printable characters (no space,
//!   no control character), so it can go into an HTTP header unchanged.
//! - Secrets are compared in time that does not depend on where they
//!   differ ([`secrets_equal`], the `subtle` crate).
//! - A secret is stored as the lowercase hex SHA-256 of its text
//!   ([`secret_hash`]), never as itself.
//! - A secret is never shown: [`REDACTED`] stands in its place.

use std::path::Path;

use subtle::ConstantTimeEq as _;

use crate::digest::Digest;

/// What `Debug` and logs show instead of a secret.
pub const REDACTED: &str = "<redacted>";

/// Why a token file holds no usable secret.
#[derive(Debug, thiserror::Error)]
pub enum SecretFileError {
    /// The file could not be read.
    #[error("{0}")]
    Read(#[from] std::io::Error),
    /// The first line is empty.
    #[error("holds no token (the token goes on the first line)")]
    Empty,
    /// The first line holds a space or a control character.
    #[error("the token must be one word of printable characters")]
    NotOneWord,
}

/// The secret `text` holds: its first line, trimmed, one word of printable
/// characters.
pub fn parse_secret(text: &str) -> Result<&str, SecretFileError> {
    let secret = text.lines().next().unwrap_or_default().trim();
    if secret.is_empty() {
        return Err(SecretFileError::Empty);
    }
    if crate::spec::control::has_control(secret, true) || secret.contains(char::is_whitespace) {
        return Err(SecretFileError::NotOneWord);
    }
    Ok(secret)
}

/// The secret in the file at `path` ([`parse_secret`]).
pub fn read_secret_file(path: &Path) -> Result<String, SecretFileError> {
    let text = std::fs::read_to_string(path)?;
    parse_secret(&text).map(str::to_owned)
}

/// The permission bits (`mode & 0o777`) of the file at `path` when users
/// other than its owner may read or write it (any of `0o077`); `None` when
/// only the owner may, and always on systems without Unix modes. A secret's
/// file should be `0o600`.
pub fn open_to_others(path: &Path) -> std::io::Result<Option<u32>> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path)?.permissions().mode();
        Ok((mode & 0o077 != 0).then_some(mode & 0o777))
    }
    #[cfg(not(unix))]
    {
        std::fs::metadata(path).map(|_| None)
    }
}

/// True when `given` equals `expected`, in time that does not depend on
/// where they differ.
pub fn secrets_equal(given: &str, expected: &str) -> bool {
    given.as_bytes().ct_eq(expected.as_bytes()).into()
}

/// What is stored instead of a secret: the lowercase hex SHA-256 of its
/// text (64 digits).
pub fn secret_hash(secret: &str) -> String {
    Digest::of(secret.as_bytes()).hex()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_token_file_holds_one_printable_word_on_its_first_line() {
        assert_eq!(parse_secret("  sdk_abc \nignored\n").unwrap(), "sdk_abc");
        assert!(matches!(parse_secret(""), Err(SecretFileError::Empty)));
        assert!(matches!(parse_secret(" \n"), Err(SecretFileError::Empty)));
        for bad in [
            "a b",
            "a\u{0}b",
            "a\u{1b}b",
            "a\rb",
            "tok\u{202e}en",
            "a\u{85}b",
        ] {
            assert!(
                matches!(parse_secret(bad), Err(SecretFileError::NotOneWord)),
                "{bad:?}"
            );
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "sdk_x\n").unwrap();
        assert_eq!(read_secret_file(&path).unwrap(), "sdk_x");
        assert!(matches!(
            read_secret_file(&dir.path().join("missing")),
            Err(SecretFileError::Read(_))
        ));
    }

    #[cfg(unix)]
    #[test]
    fn a_secret_file_others_can_read_is_reported_with_its_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "sdk_x\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(open_to_others(&path).unwrap(), None);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        assert_eq!(open_to_others(&path).unwrap(), Some(0o640));
        assert!(open_to_others(&dir.path().join("missing")).is_err());
    }

    #[test]
    fn secrets_compare_equal_only_when_identical_and_are_stored_as_their_hash() {
        assert!(secrets_equal("abc", "abc"));
        for other in ["abd", "ab", "", "abcd"] {
            assert!(!secrets_equal(other, "abc"), "{other:?}");
        }
        assert_eq!(
            secret_hash("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert!(!secret_hash("abc").contains("abc"));
    }
}
