//! Text helpers the catalog shares: ASCII checks, Python's `strip`,
//! whitespace collapsing, and where a shortened description is cut.

use std::borrow::Cow;

use crate::catalog::escape::HIGH_BITS;
use crate::limits::CATALOG_MIN_FLOOR_CHARS;

/// Appended to a shortened description.
pub const ELLIPSIS: &str = "…";

/// `str::is_ascii` as a branch-free OR of whole words (the standard one
/// stops at the first non-ASCII byte and cost ~1 instruction per byte here;
/// a byte-wise fold was no better).
pub(super) fn all_ascii(s: &str) -> bool {
    let bytes = s.as_bytes();
    let mut words = bytes.chunks_exact(8);
    let high = words
        .by_ref()
        .map(|w| <[u8; 8]>::try_from(w).map_or(HIGH_BITS, u64::from_le_bytes))
        .fold(0, |acc, w| acc | w)
        & HIGH_BITS;
    high == 0 && words.remainder().iter().all(u8::is_ascii)
}

/// A path as text: borrowed when it is UTF-8 (`to_str` validates with the
/// standard library's ASCII fast path, `to_string_lossy` chunk by chunk).
pub(super) fn path_text(path: &std::path::Path) -> Cow<'_, str> {
    match path.to_str() {
        Some(text) => Cow::Borrowed(text),
        None => path.to_string_lossy(),
    }
}

/// Python's `str.strip()`: Unicode whitespace plus the ASCII separators
/// U+001C–U+001F, which Rust's `trim` keeps.
pub(super) fn python_strip(s: &str) -> &str {
    // Most descriptions start and end with a visible ASCII character.
    let visible = |b: Option<&u8>| b.is_some_and(|&b| b > b' ' && b < 0x7f);
    if visible(s.as_bytes().first()) && visible(s.as_bytes().last()) {
        return s;
    }
    s.trim_matches(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c))
}

/// Every whitespace run as one space.
pub(super) fn collapse_whitespace(s: &str) -> Cow<'_, str> {
    if is_one_line(s) {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(s.split_whitespace().collect::<Vec<_>>().join(" "))
    }
}

/// True when [`collapse_whitespace`] leaves `s` as it is.
pub(super) fn is_one_line(s: &str) -> bool {
    let bytes = s.as_bytes();
    if bytes.is_ascii() {
        // ASCII whitespace other than the space is U+0009–U+000D; a
        // branch-free fold (vectorized) instead of a byte-by-byte search.
        let breaks = bytes
            .iter()
            .fold(false, |any, &b| any | (b.wrapping_sub(0x09) < 5));
        !breaks && memchr::memmem::find(bytes, b"  ").is_none()
    } else {
        let mut prev_space = false;
        s.chars().all(|c| {
            let ok = c == ' ' && !prev_space || !c.is_whitespace();
            prev_space = c == ' ';
            ok
        })
    }
}

/// Where a description longer than `cap` characters is cut (byte offset):
/// the last word end that leaves room for `…`, or inside the first word when
/// it alone is too long. `None` when it fits.
pub(super) fn cut_end(desc: &str, cap: usize) -> Option<usize> {
    let cap = cap.max(CATALOG_MIN_FLOOR_CHARS);
    let keep = cap - 1;
    let mut chars = desc.char_indices().skip(keep);
    let (keep_byte, keep_char) = chars.next()?; // the first character not kept
    chars.next()?; // the description has more than `cap` characters
    if keep_char.is_whitespace() {
        return Some(desc[..keep_byte].trim_end().len());
    }
    match desc[..keep_byte].rfind(char::is_whitespace) {
        Some(ws) => Some(desc[..ws].trim_end().len()),
        None => Some(keep_byte),
    }
}

/// `12345` as `12,345`.
pub(super) fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_end_stops_at_word_ends_and_leaves_room_for_the_ellipsis() {
        let d = "alpha beta gamma delta";
        assert_eq!(cut_end(d, 100), None);
        assert_eq!(cut_end(d, 22), None);
        // cap 12: keep at most 11 chars: "alpha beta " -> "alpha beta"
        assert_eq!(&d[..cut_end(d, 12).unwrap_or(0)], "alpha beta");
        // cap 11: keep 10 = "alpha beta", char 10 is a space
        assert_eq!(&d[..cut_end(d, 11).unwrap_or(0)], "alpha beta");
        // cap 10: keep 9 = "alpha bet" -> back to "alpha"
        assert_eq!(&d[..cut_end(d, 10).unwrap_or(0)], "alpha");
        // one long word: cut inside it
        assert_eq!(
            &"abcdefghij"[..cut_end("abcdefghij", 5).unwrap_or(0)],
            "abcd"
        );
    }

    #[test]
    fn all_ascii_matches_is_ascii() {
        for s in [
            "",
            "a",
            "abcdefgh",
            "abcdefghé",
            "é",
            "abcdefgh12345678x",
            "1234567é12345678",
        ] {
            assert_eq!(all_ascii(s), s.is_ascii(), "{s:?}");
        }
    }

    #[test]
    fn python_strip_also_strips_ascii_separators() {
        assert_eq!(python_strip("\u{1c} x \u{1f}\n"), "x");
    }

    #[test]
    fn collapse_whitespace_borrows_clean_text() {
        assert!(matches!(collapse_whitespace("a b c"), Cow::Borrowed(_)));
        assert_eq!(collapse_whitespace("a\n  b\tc"), "a b c");
        assert_eq!(collapse_whitespace("a\u{b}b  c"), "a b c");
        assert_eq!(collapse_whitespace("é\u{a0}b"), "é b");
        assert!(matches!(collapse_whitespace("é b"), Cow::Borrowed(_)));
    }
}
