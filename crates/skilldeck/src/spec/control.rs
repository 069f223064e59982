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
    if !has_control_candidate(text) {
        return None;
    }
    text.chars()
        .find(|&c| is_control(c) || (one_line && matches!(c, '\t' | '\n')))
}

/// `text` with every control character replaced by [`REPLACEMENT`];
/// borrowed when there is none. Tab and line feed are kept, unless
/// `one_line` (a name).
pub fn replace_controls(text: &str, one_line: bool) -> Cow<'_, str> {
    if first_control(text, one_line).is_none() {
        return Cow::Borrowed(text);
    }
    let bad = |c: char| is_control(c) || (one_line && matches!(c, '\t' | '\n'));
    Cow::Owned(
        text.chars()
            .map(|c| if bad(c) { REPLACEMENT } else { c })
            .collect(),
    )
}

/// False when `text` surely holds no control character (nor tab or line
/// feed): no byte below 0x20, no DEL, and no byte that starts a C1 or bidi
/// control's UTF-8 form (0xC2, 0xD8, 0xE2). One pass over the bytes; clean
/// text stops here.
fn has_control_candidate(text: &str) -> bool {
    text.bytes()
        .any(|b| b < 0x20 || b == 0x7f || b == 0xc2 || b == 0xd8 || b == 0xe2)
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
}
