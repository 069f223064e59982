//! Escaping names, descriptions and locations per format, fast for the
//! common case of text with nothing to escape.

/// How special characters are written.
#[derive(Clone, Copy)]
pub(super) enum Esc {
    /// `&apos;` for `'`.
    Xml,
    /// Python's `html.escape`: `&#x27;` for `'`.
    Html,
    /// Markdown names: XML entities plus `\` before Markdown syntax.
    MarkdownName,
    /// JSON string contents.
    Json,
    /// Nothing (skills-ref locations).
    Raw,
}

/// JSON escapes for the control characters U+0000–U+001F.
pub(super) const JSON_CONTROL: [&str; 32] = [
    "\\u0000", "\\u0001", "\\u0002", "\\u0003", "\\u0004", "\\u0005", "\\u0006", "\\u0007", "\\b",
    "\\t", "\\n", "\\u000b", "\\f", "\\r", "\\u000e", "\\u000f", "\\u0010", "\\u0011", "\\u0012",
    "\\u0013", "\\u0014", "\\u0015", "\\u0016", "\\u0017", "\\u0018", "\\u0019", "\\u001a",
    "\\u001b", "\\u001c", "\\u001d", "\\u001e", "\\u001f",
];

/// The replacement for byte `b` (every escaped character is ASCII).
#[inline]
pub(super) fn escape_byte(esc: Esc, b: u8) -> Option<&'static str> {
    match esc {
        Esc::Raw => None,
        Esc::Xml | Esc::Html | Esc::MarkdownName => match b {
            // Python's `html.escape` writes `'` as `&#x27;`.
            b'\'' if matches!(esc, Esc::Html) => Some("&#x27;"),
            b'&' | b'<' | b'>' | b'"' | b'\'' => crate::text::xml::entity(b),
            _ if matches!(esc, Esc::MarkdownName) => match b {
                b'\\' => Some("\\\\"),
                b'*' => Some("\\*"),
                b'_' => Some("\\_"),
                b'`' => Some("\\`"),
                b'[' => Some("\\["),
                b']' => Some("\\]"),
                _ => None,
            },
            _ => None,
        },
        Esc::Json => match b {
            b'"' => Some("\\\""),
            b'\\' => Some("\\\\"),
            b'&' => Some("\\u0026"),
            b'<' => Some("\\u003c"),
            b'>' => Some("\\u003e"),
            b'\'' => Some("\\u0027"),
            0..=0x1f => Some(JSON_CONTROL[usize::from(b)]),
            _ => None,
        },
    }
}

/// A byte lookup table: `true` for the bytes in `special`, and for the
/// control characters when `control` is set.
pub(super) const fn byte_table(special: &[u8], control: bool) -> [bool; 256] {
    let mut table = [false; 256];
    let mut i = 0;
    while i < special.len() {
        table[special[i] as usize] = true;
        i += 1;
    }
    if control {
        let mut c = 0;
        while c < 0x20 {
            table[c] = true;
            c += 1;
        }
    }
    table
}

pub(super) static XML_SPECIAL: [bool; 256] = byte_table(b"&<>\"'", false);
pub(super) static MARKDOWN_NAME_SPECIAL: [bool; 256] = byte_table(b"&<>\"'\\*_`[]", false);
pub(super) static JSON_SPECIAL: [bool; 256] = byte_table(b"&<>\"'\\", true);
pub(super) static NO_SPECIAL: [bool; 256] = [false; 256];

/// The bytes `esc` replaces (a fast scan for the common case: none).
pub(super) fn special_bytes(esc: Esc) -> &'static [bool; 256] {
    match esc {
        Esc::Xml | Esc::Html => &XML_SPECIAL,
        Esc::MarkdownName => &MARKDOWN_NAME_SPECIAL,
        Esc::Json => &JSON_SPECIAL,
        Esc::Raw => &NO_SPECIAL,
    }
}

/// `s`, escaped unless `plain` says it needs no escape.
#[inline]
pub(super) fn push_text(out: &mut String, s: &str, esc: Esc, plain: bool) {
    if plain {
        out.push_str(s);
    } else {
        push_escaped(out, s, esc);
    }
}

pub(super) fn push_escaped(out: &mut String, s: &str, esc: Esc) {
    let bytes = s.as_bytes();
    match esc {
        Esc::Raw => out.push_str(s),
        // Names and most paths: a table scan beats starting SIMD searches.
        _ if bytes.len() < SHORT_TEXT_BYTES => push_escaped_scanning(out, s, esc),
        Esc::Xml | Esc::Html => push_escaped_searching(out, s, esc, |from| {
            let a = memchr::memchr3(b'&', b'<', b'>', &bytes[from..]);
            let b = memchr::memchr2(b'"', b'\'', &bytes[from..]);
            earliest(a, b).map(|i| from + i)
        }),
        // Control characters are rare; scan for them with the table.
        Esc::Json if !bytes.iter().any(|&b| b < 0x20) => {
            push_escaped_searching(out, s, esc, |from| {
                let a = memchr::memchr3(b'&', b'<', b'>', &bytes[from..]);
                let b = memchr::memchr3(b'"', b'\'', b'\\', &bytes[from..]);
                earliest(a, b).map(|i| from + i)
            })
        }
        Esc::Json | Esc::MarkdownName => push_escaped_scanning(out, s, esc),
    }
}

/// Texts shorter than this are escaped with a table scan.
pub(super) const SHORT_TEXT_BYTES: usize = 64;

pub(super) fn earliest(a: Option<usize>, b: Option<usize>) -> Option<usize> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Escapes with `next(from)`, which finds the next special byte at or
/// after `from` (SIMD searches: most text has none).
pub(super) fn push_escaped_searching(
    out: &mut String,
    s: &str,
    esc: Esc,
    next: impl Fn(usize) -> Option<usize>,
) {
    let bytes = s.as_bytes();
    let mut start = 0;
    while let Some(at) = next(start) {
        out.push_str(&s[start..at]);
        out.push_str(escape_byte(esc, bytes[at]).unwrap_or_default());
        start = at + 1;
    }
    out.push_str(&s[start..]);
}

/// Escapes short texts: eight bytes at a time while no word holds a special
/// byte (SWAR, see [`word_may_hold_special`]), the table from the first word
/// that does. The last word overlaps the one before it, so no byte is left
/// for the table unless the text is shorter than a word.
pub(super) fn push_escaped_scanning(out: &mut String, s: &str, esc: Esc) {
    let bytes = s.as_bytes();
    let clean_until = match esc {
        Esc::MarkdownName => 0,
        _ => clean_prefix(bytes, esc),
    };
    if clean_until == bytes.len() {
        out.push_str(s);
        return;
    }
    let special = special_bytes(esc);
    let mut start = 0;
    let mut i = clean_until;
    while let Some(offset) = bytes[i..].iter().position(|&b| special[usize::from(b)]) {
        let at = i + offset;
        out.push_str(&s[start..at]);
        out.push_str(escape_byte(esc, bytes[at]).unwrap_or_default());
        start = at + 1;
        i = start;
    }
    out.push_str(&s[start..]);
}

/// How many leading bytes certainly need no escape, in steps of eight
/// bytes (all of them when no word holds a special byte).
pub(super) fn clean_prefix(bytes: &[u8], esc: Esc) -> usize {
    let word_at = |i: usize| {
        bytes
            .get(i..i + 8)
            .and_then(|w| <[u8; 8]>::try_from(w).ok())
            .map(u64::from_le_bytes)
    };
    let mut i = 0;
    while i + 8 <= bytes.len() {
        if word_at(i).is_some_and(|w| word_may_hold_special(esc, w)) {
            return i;
        }
        i += 8;
    }
    if i == bytes.len() {
        return i;
    }
    // The tail: one last word ending at the end, when there is one.
    match bytes.len().checked_sub(8).and_then(word_at) {
        Some(w) if !word_may_hold_special(esc, w) => bytes.len(),
        _ => i,
    }
}

pub(super) const LOW_BITS: u64 = 0x0101_0101_0101_0101;
pub(super) const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// High bit set in each byte lane of `word` that is zero, and possibly in
/// lanes above a zero lane: nonzero exactly when some byte of `word` is zero.
#[inline]
pub(super) fn zero_lanes(word: u64) -> u64 {
    word.wrapping_sub(LOW_BITS) & !word & HIGH_BITS
}

/// True when some byte of `word` may need escaping under `esc` (exact for
/// the XML, HTML and JSON sets; always true for the larger Markdown set, which
/// the table scan handles alone). Pairs of special bytes one bit apart share
/// one test: `&` and `'` are 0x26 and 0x27, `<` and `>` are 0x3c and 0x3e.
#[inline]
pub(super) fn word_may_hold_special(esc: Esc, w: u64) -> bool {
    let lanes = |b: u8| LOW_BITS * u64::from(b);
    let amp_apos = zero_lanes((w & !lanes(0x01)) ^ lanes(b'&'));
    let angles = zero_lanes((w & !lanes(0x02)) ^ lanes(b'<'));
    let quote = zero_lanes(w ^ lanes(b'"'));
    match esc {
        Esc::Raw => false,
        Esc::Xml | Esc::Html => amp_apos | angles | quote != 0,
        Esc::Json => {
            // A byte below 0x20 (a control character), or a backslash.
            let control = w.wrapping_sub(lanes(0x20)) & !w & HIGH_BITS;
            let backslash = zero_lanes(w ^ lanes(b'\\'));
            amp_apos | angles | quote | control | backslash != 0
        }
        Esc::MarkdownName => true,
    }
}

/// Escaped size of `c`: (bytes, characters).
pub(super) fn escaped_size(esc: Esc, c: char) -> (usize, usize) {
    match u8::try_from(c).ok().and_then(|b| escape_byte(esc, b)) {
        Some(rep) => (rep.len(), rep.len()),
        None => (c.len_utf8(), 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_tables_match_the_escapes() {
        for esc in [Esc::Xml, Esc::Html, Esc::MarkdownName, Esc::Json, Esc::Raw] {
            for b in 0..=255u8 {
                assert_eq!(
                    special_bytes(esc)[usize::from(b)],
                    escape_byte(esc, b).is_some(),
                    "byte {b}"
                );
            }
        }
    }

    #[test]
    fn word_tests_agree_with_the_tables() {
        for esc in [Esc::Xml, Esc::Html, Esc::Json, Esc::Raw] {
            for b in 0..=255u8 {
                for lane in 0..8 {
                    let mut word = *b"abcdefgh";
                    word[lane] = b;
                    let w = u64::from_le_bytes(word);
                    assert_eq!(
                        word_may_hold_special(esc, w),
                        special_bytes(esc)[usize::from(b)],
                        "byte {b} lane {lane}"
                    );
                }
            }
        }
        let cases = [
            ("0123456789<abcdefgh>'\"\u{1}é&", Esc::Json),
            ("0123456789abcdefghi&", Esc::Xml),
            ("0123456789abcdefghij", Esc::Xml),
            ("ab<", Esc::Xml),
            ("", Esc::Xml),
            ("é'é", Esc::Html),
            ("abcdefgh", Esc::Json),
            ("abcdefg\\", Esc::Json),
            ("a_b*c", Esc::MarkdownName),
        ];
        for (text, esc) in cases {
            let mut fast = String::new();
            push_escaped_scanning(&mut fast, text, esc);
            let slow: String = text
                .chars()
                .map(
                    |c| match u8::try_from(c).ok().and_then(|b| escape_byte(esc, b)) {
                        Some(rep) => rep.to_owned(),
                        None => c.to_string(),
                    },
                )
                .collect();
            assert_eq!(fast, slow, "{text:?}");
        }
    }
}
