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
//! - A secret is never shown: [`REDACTED`] stands in its place, in logs
//!   and in text quoted from files ([`redact_secrets`]: the shapes of
//!   well-known credentials and `password = ...`-style assignments).

use std::borrow::Cow;
use std::path::Path;
use std::sync::LazyLock;

use subtle::ConstantTimeEq as _;

use crate::digest::Digest;

/// What `Debug` and logs show instead of a secret.
pub const REDACTED: &str = "<redacted>";

/// The shapes of secrets in quoted text: each alternative's `v` group (or
/// the whole match when it has none) is the secret. Well-known credential
/// formats (AWS access key ids, GitHub, GitLab, Slack, OpenAI, Anthropic,
/// Google API keys, JWTs, private key blocks), bearer tokens, passwords in
/// URLs, and `password = ...` / `api_key: ...` style assignments.
static SECRET_SHAPES: LazyLock<regex::Regex> = LazyLock::new(|| {
    let shapes = [
        r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
        r"\bgh[pousr]_[A-Za-z0-9]{30,}",
        r"\bgithub_pat_[A-Za-z0-9_]{20,}",
        r"\bglpat-[A-Za-z0-9_\-]{20,}",
        r"\bxox[abprs]-[A-Za-z0-9\-]{10,}",
        r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_\-]{20,}",
        r"\bAIza[0-9A-Za-z_\-]{35}",
        r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)",
        r"(?i:\bbearer\s+)(?P<v1>[A-Za-z0-9._~+/\-]{12,}=*)",
        r"://[^/\s:@]+:(?P<v2>[^/\s@]{3,})@",
        r#"(?i:(?:password|passwd|pwd|passphrase|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|client[_-]?secret)["']?\s*[:=]\s*["']?)(?P<v3>[^\s"'`,;]{6,})"#,
    ];
    // The patterns are fixed and tested below.
    #[allow(clippy::expect_used)]
    regex::Regex::new(&shapes.join("|")).expect("the secret shapes compile")
});

/// `text` with every secret it holds (the shapes above)
/// replaced by [`REDACTED`]; borrowed when there is none. For text quoted
/// from files into reports (an audit's evidence), logs and messages.
pub fn redact_secrets(text: &str) -> Cow<'_, str> {
    if !SECRET_SHAPES.is_match(text) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for caps in SECRET_SHAPES.captures_iter(text) {
        let secret = ["v1", "v2", "v3"]
            .iter()
            .find_map(|g| caps.name(g))
            .or_else(|| caps.get(0));
        let Some(secret) = secret else { continue };
        // A value that is itself a placeholder or a variable is no secret.
        if is_placeholder(secret.as_str()) {
            continue;
        }
        out.push_str(&text[last..secret.start()]);
        out.push_str(REDACTED);
        last = secret.end();
    }
    out.push_str(&text[last..]);
    Cow::Owned(out)
}

/// A value that names a secret rather than being one: a variable
/// (`$TOKEN`, `${KEY}`, `%KEY%`), a template (`{{ key }}`, `<your-key>`),
/// a function call, or a run of one repeated character (`xxxx`, `****`).
fn is_placeholder(value: &str) -> bool {
    let v = value.trim_matches(|c| c == '"' || c == '\'');
    v.starts_with('$')
        || v.starts_with('%')
        || v.starts_with('<')
        || v.starts_with('{')
        || v.contains('(')
        || v.chars().all(|c| c == v.chars().next().unwrap_or('x'))
        || v == REDACTED
}

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
    fn secrets_in_quoted_text_are_redacted_and_placeholders_kept() {
        let cases = [
            ("key AKIAIOSFODNN7EXAMPLE here", "key <redacted> here"),
            (
                "export GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789",
                "export GITHUB_TOKEN=<redacted>",
            ),
            (
                "curl -H 'Authorization: Bearer abcdef0123456789xyz' x",
                "curl -H 'Authorization: Bearer <redacted>' x",
            ),
            ("password = \"hunter22hunter\"", "password = \"<redacted>\""),
            (
                "https://bob:s3cretpw@example.invalid/x",
                "https://bob:<redacted>@example.invalid/x",
            ),
            (
                "-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----",
                "<redacted>",
            ),
            ("sk-ant-api03-abcdefghijklmnopqrstuv", "<redacted>"),
        ];
        for (text, want) in cases {
            assert_eq!(redact_secrets(text), want, "{text}");
        }
        for kept in [
            "api_key = $OPENAI_API_KEY",
            "token: ${{ secrets.TOKEN }}",
            "password=<your-password>",
            "api_key = os.environ.get(\"KEY\")",
            "no secret here at all",
            "password: ********",
        ] {
            assert_eq!(redact_secrets(kept), kept, "{kept}");
        }
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
