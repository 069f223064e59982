//! Control characters in frontmatter text: which characters are never
//! shown raw (to a terminal, an XML or Markdown catalog, a model) and what
//! replaces them.
//!
//! The rule, once: C0 controls (U+0000–U+001F) except tab and line feed,
//! DEL (U+007F), C1 controls (U+0080–U+009F), and the Unicode bidi
//! controls (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069) are
//! control characters. Each is replaced by U+FFFD (one character for one:
//! lengths and budgets are unchanged, and the reader sees that something was
//! there). A name may not hold a line feed or tab either.

use std::borrow::Cow;

/// What replaces each control character.
pub const REPLACEMENT: char = '\u{FFFD}';

/// True for a control character (see the module docs); tab and line feed
/// are not.
pub fn is_control(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{8}'
        | '\u{b}'..='\u{1f}'
        | '\u{7f}'..='\u{9f}'
        | '\u{61c}'
        | '\u{200e}'
        | '\u{200f}'
        | '\u{202a}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}')
}

/// The first control character in `text`, if any; with `one_line`, tab and
/// line feed count too (a name is one line).
pub fn first_control(text: &str, one_line: bool) -> Option<char> {
    if !may_hold_control(text) {
        return None;
    }
    text.chars()
        .find(|&c| is_control(c) || (one_line && matches!(c, '\t' | '\n')))
}

/// True when `text` holds a control character (with `one_line`, a tab or
/// line feed too): the check for text that is refused rather than cleaned
/// (a registry field, a cursor, a package entry path, a token).
pub fn has_control(text: &str, one_line: bool) -> bool {
    first_control(text, one_line).is_some()
}

/// `text` with every control character replaced by [`REPLACEMENT`];
/// borrowed when there is none. Tab and line feed are kept, unless
/// `one_line` (a name).
pub fn replace_controls(text: &str, one_line: bool) -> Cow<'_, str> {
    replace_controls_with(text, one_line, REPLACEMENT)
}

/// [`replace_controls`] with another replacement character (the registry
/// stores a description's controls as spaces, which PostgreSQL and a
/// terminal both take).
pub fn replace_controls_with(text: &str, one_line: bool, replacement: char) -> Cow<'_, str> {
    if first_control(text, one_line).is_none() {
        return Cow::Borrowed(text);
    }
    let bad = |c: char| is_control(c) || (one_line && matches!(c, '\t' | '\n'));
    Cow::Owned(
        text.chars()
            .map(|c| if bad(c) { replacement } else { c })
            .collect(),
    )
}

/// [`replace_controls`] for one-line text already held as a `Cow` (a path
/// shown in a catalog or an activation): a folder named with ESC or a
/// newline cannot reach a terminal raw, break the markup, or put a
/// character XML 1.0 forbids into the output. Unchanged (no copy) when
/// there is none.
pub(crate) fn one_line_without_controls(text: Cow<'_, str>) -> Cow<'_, str> {
    if first_control(&text, true).is_none() {
        return text;
    }
    Cow::Owned(replace_controls(&text, true).into_owned())
}

/// False when `text` surely holds no control character, tab or line feed:
/// no byte below 0x20, no DEL, and no byte that starts a C1 or bidi
/// control's UTF-8 form (0xC2, 0xD8, 0xE2). True means "decode and look":
/// most non-ASCII text has such a lead byte without holding a control.
///
/// The prefilter every control check runs first (the catalog, the CLI's
/// JSON and terminal output, validation), eight bytes at a time (SWAR):
/// a word of ASCII text above 0x1F and below DEL (nearly every word) is
/// cleared with one rough test; only a word the rough test flags is tested
/// exactly. Clean text never decodes a character.
pub fn may_hold_control(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut words = bytes.chunks_exact(8);
    for chunk in words.by_ref() {
        // A chunk is always 8 bytes; 0 would read as "maybe" (fails safe).
        let w = <[u8; 8]>::try_from(chunk).map_or(0, u64::from_le_bytes);
        if word_may_be_outside_printable_ascii(w) && word_may_hold_control(w) {
            return true;
        }
    }
    words.remainder().iter().any(|&b| is_candidate_byte(b))
}

/// A byte [`may_hold_control`] must look at: below 0x20, DEL, or the lead
/// byte of a C1 (0xC2) or bidi (0xD8, 0xE2) control.
#[inline]
fn is_candidate_byte(b: u8) -> bool {
    b < 0x20 || b == 0x7f || b == 0xc2 || b == 0xd8 || b == 0xe2
}

const LOW_BITS: u64 = 0x0101_0101_0101_0101;
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// `b` in every byte lane.
#[inline]
const fn lanes(b: u8) -> u64 {
    LOW_BITS * b as u64
}

/// Nonzero exactly when some byte of `w` is below `n` (`n` at most 0x80).
#[inline]
fn below(w: u64, n: u8) -> u64 {
    w.wrapping_sub(lanes(n)) & !w & HIGH_BITS
}

/// Nonzero exactly when some byte of `w` equals `b`.
#[inline]
fn equal(w: u64, b: u8) -> u64 {
    let x = w ^ lanes(b);
    x.wrapping_sub(LOW_BITS) & !x & HIGH_BITS
}

/// True when some byte of `w` is below 0x20, DEL, or not ASCII: a lane's
/// low seven bits plus one reach the high bit only for 0x7F (no carry
/// crosses lanes), and non-ASCII bytes have it already.
#[inline]
fn word_may_be_outside_printable_ascii(w: u64) -> bool {
    (below(w, 0x20) | (((w & !HIGH_BITS).wrapping_add(LOW_BITS) | w) & HIGH_BITS)) != 0
}

/// True exactly when some byte of `w` is a candidate byte.
#[inline]
fn word_may_hold_control(w: u64) -> bool {
    (below(w, 0x20) | equal(w, 0x7f) | equal(w, 0xc2) | equal(w, 0xd8) | equal(w, 0xe2)) != 0
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn control_characters_are_c0_c1_del_and_bidi_controls() {
        for c in [
            '\u{0}', '\u{7}', '\u{1b}', '\r', '\u{7f}', '\u{85}', '\u{202e}', '\u{2066}',
        ] {
            assert!(is_control(c), "{c:?}");
        }
        for c in ['\t', '\n', ' ', 'a', 'é', '—', '\u{200d}', '技'] {
            assert!(!is_control(c), "{c:?}");
        }
    }

    #[test]
    fn replacing_keeps_tab_and_newline_and_borrows_clean_text() {
        assert!(matches!(
            replace_controls("plain — text", false),
            Cow::Borrowed(_)
        ));
        assert_eq!(
            replace_controls("a\u{1b}[2Jb\tc\nd\u{202e}", false),
            "a\u{fffd}[2Jb\tc\nd\u{fffd}"
        );
        assert_eq!(replace_controls("a\nb", true), "a\u{fffd}b");
        assert_eq!(first_control("a\nb", true), Some('\n'));
        assert_eq!(first_control("a\nb", false), None);
    }

    #[test]
    fn a_control_character_is_c0_c1_del_or_bidi_and_one_line_text_refuses_tab_and_newline_too() {
        for bad in [
            "a\u{0}b",
            "a\u{1b}[31m",
            "a\rb",
            "\u{85}",
            "admin\u{202e}txt",
        ] {
            assert!(has_control(bad, false), "{bad:?}");
            assert!(has_control(bad, true), "{bad:?}");
        }
        for multi in ["a\tb", "a\nb"] {
            assert!(!has_control(multi, false), "{multi:?}");
            assert!(has_control(multi, true), "{multi:?}");
        }
        assert!(!has_control("plain — é 技 text", true));
        assert_eq!(
            replace_controls_with("Has a \u{0} NUL\n\u{202e}", true, ' '),
            "Has a   NUL  "
        );
        assert!(matches!(
            replace_controls_with("clean", true, ' '),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn the_prefilter_never_misses_a_control_character() {
        // Every control character, tab and line feed, at every offset of a
        // text longer than two blocks: the prefilter must say "maybe".
        let controls = (0..=0x10ffff_u32)
            .filter_map(char::from_u32)
            .filter(|&c| is_control(c) || matches!(c, '\t' | '\n'));
        let filler = "plain ascii text, and some é and 技 ";
        for c in controls {
            for at in [0, 1, 31, 32, 33, 63, 64, 70] {
                let mut text: String = filler.chars().cycle().take(at).collect();
                text.push(c);
                text.push_str(filler);
                assert!(may_hold_control(&text), "{c:?} at {at}");
            }
        }
        assert!(!may_hold_control(&"plain ü text; ascii and 技".repeat(9)));
        assert!(!may_hold_control(""));
        // The word tests agree with the byte test for every byte in every lane.
        for b in 0..=255u8 {
            for lane in 0..8 {
                let mut word = *b"abcdefgh";
                word[lane] = b;
                let w = u64::from_le_bytes(word);
                assert_eq!(word_may_hold_control(w), is_candidate_byte(b), "{b:#x}");
                if is_candidate_byte(b) {
                    assert!(word_may_be_outside_printable_ascii(w), "{b:#x}");
                }
            }
        }
    }
}
