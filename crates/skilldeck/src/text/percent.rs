//! Percent-encoding (RFC 3986), through the `percent-encoding` crate: which
//! bytes are escaped where, and how escapes are read back.
//!
//! - [`encode_component`]: a path segment or a query value. Every byte but
//!   the unreserved characters (`A-Z a-z 0-9 - . _ ~`) is escaped, so a
//!   value can never add a `/`, `?`, `&`, `=` or `#` of its own.
//! - [`encode_path`]: a `/`-separated path inside a URI (a `skill://`
//!   resource): unreserved characters, `/` and the sub-delimiters and `:`
//!   `@` stay as they are; everything else (space, `%`, `?`, `#`, non-ASCII)
//!   is escaped.
//! - [`decode_strict`] refuses a `%` not followed by two hex digits and
//!   text that does not decode to UTF-8 (a URI a client sent);
//!   [`decode_lossy`] leaves such a `%` as it is and replaces invalid UTF-8
//!   (a link in a skill's Markdown, only ever inspected).
//!
//! Escapes are written with uppercase hex digits (`%2F`).

use std::borrow::Cow;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};

/// The bytes [`encode_component`] escapes: all but the unreserved ones.
pub const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// The bytes [`encode_path`] escapes: [`COMPONENT`] less `/`, the
/// sub-delimiters, `:` and `@`.
pub const PATH: &AsciiSet = &COMPONENT
    .remove(b'/')
    .remove(b'!')
    .remove(b'$')
    .remove(b'&')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')')
    .remove(b'*')
    .remove(b'+')
    .remove(b',')
    .remove(b';')
    .remove(b'=')
    .remove(b':')
    .remove(b'@');

/// `text` as one path segment or query value (see the module docs).
pub fn encode_component(text: &str) -> Cow<'_, str> {
    utf8_percent_encode(text, COMPONENT).into()
}

/// `path` as a `/`-separated URI path (see the module docs).
pub fn encode_path(path: &str) -> Cow<'_, str> {
    utf8_percent_encode(path, PATH).into()
}

/// `text` with its `%XX` escapes decoded; `None` when a `%` is not
/// followed by two hex digits or the result is not UTF-8.
pub fn decode_strict(text: &str) -> Option<Cow<'_, str>> {
    let bytes = text.as_bytes();
    let well_formed = memchr::memchr_iter(b'%', bytes).all(|i| {
        bytes
            .get(i + 1..i + 3)
            .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit))
    });
    if !well_formed {
        return None;
    }
    percent_decode_str(text).decode_utf8().ok()
}

/// `text` with its well-formed `%XX` escapes decoded, any other `%` kept,
/// and invalid UTF-8 replaced by U+FFFD.
pub fn decode_lossy(text: &str) -> Cow<'_, str> {
    percent_decode_str(text).decode_utf8_lossy()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_component_escapes_everything_but_the_unreserved_characters() {
        assert_eq!(encode_component("pdf tables&x=1"), "pdf%20tables%26x%3D1");
        assert_eq!(encode_component("a/b?c#d"), "a%2Fb%3Fc%23d");
        assert_eq!(encode_component("é"), "%C3%A9");
        assert_eq!(encode_component("A-z_0.9~"), "A-z_0.9~");
        assert!(matches!(encode_component("plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn a_path_keeps_slashes_and_sub_delimiters_and_escapes_the_rest() {
        assert_eq!(
            encode_path("references/a file%.md"),
            "references/a%20file%25.md"
        );
        assert_eq!(encode_path("a/b!$&'()*+,;=:@"), "a/b!$&'()*+,;=:@");
        assert_eq!(encode_path("a?b#c\\d"), "a%3Fb%23c%5Cd");
    }

    #[test]
    fn strict_decoding_refuses_a_bad_escape_and_invalid_utf8_where_lossy_decoding_keeps_going() {
        assert_eq!(decode_strict("a%20b%2F").as_deref(), Some("a b/"));
        for bad in ["%zz", "%ff", "%2", "%", "a%+fb", "%e2%82"] {
            assert_eq!(decode_strict(bad), None, "{bad:?}");
        }
        assert_eq!(decode_lossy("a%20b%zz%"), "a b%zz%");
        assert_eq!(decode_lossy("%ff"), "\u{fffd}");
        assert_eq!(decode_lossy("%2e%2E/x"), "../x");
    }
}
