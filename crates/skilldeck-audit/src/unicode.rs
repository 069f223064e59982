//! Characters that hide text from a reader but not from a model: tag
//! characters (ASCII smuggling), bidi overrides and isolates (text that
//! reads differently than it runs), zero-width characters, and words that
//! mix Latin letters with look-alike Cyrillic or Greek ones.

use crate::text::Lines;

/// One hidden-character finding before it becomes a [`crate::Finding`].
pub(crate) struct Hit {
    pub(crate) code: &'static str,
    /// Byte offset in the text.
    pub(crate) at: usize,
    /// Byte length of what to point at.
    pub(crate) len: usize,
    /// Extra message text (the decoded hidden text, the look-alike).
    pub(crate) note: String,
    /// Raised above the rule's severity (a zero-width character inside
    /// an ASCII word hides a word from a filter).
    pub(crate) raised: bool,
}

/// Every hidden-character problem of `text`, at most one per code and line.
pub(crate) fn scan(lines: &Lines<'_>) -> Vec<Hit> {
    let text = lines.text;
    if text.is_ascii() {
        return Vec::new();
    }
    let mut hits: Vec<Hit> = Vec::new();
    let mut last: Vec<(&'static str, usize)> = Vec::new();
    let mut push =
        |code: &'static str, at: usize, len: usize, note: String, hits: &mut Vec<Hit>| {
            let line = lines.index_of(at);
            if last.contains(&(code, line)) {
                return;
            }
            last.push((code, line));
            let raised = note.ends_with(" inside a word");
            hits.push(Hit {
                code,
                at,
                len,
                note,
                raised,
            });
        };
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut i = 0;
    while i < chars.len() {
        let (at, c) = chars[i];
        match c {
            '\u{E0000}'..='\u{E007F}' => {
                // Decode the run: tag characters mirror ASCII.
                let mut hidden = String::new();
                let mut j = i;
                while j < chars.len() && matches!(chars[j].1, '\u{E0000}'..='\u{E007F}') {
                    let ascii = u32::from(chars[j].1) - 0xE0000;
                    if let Some(a) =
                        char::from_u32(ascii).filter(|a| a.is_ascii_graphic() || *a == ' ')
                    {
                        hidden.push(a);
                    }
                    j += 1;
                }
                let end = chars.get(j).map_or(text.len(), |(o, _)| *o);
                push(
                    "injection.tag-characters",
                    at,
                    end - at,
                    format!(
                        "hidden text: \"{}\"",
                        skilldeck::secret::redact_secrets(&hidden)
                    ),
                    &mut hits,
                );
                i = j;
                continue;
            }
            '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' => {
                push(
                    "injection.bidi",
                    at,
                    c.len_utf8(),
                    format!("U+{:04X}", u32::from(c)),
                    &mut hits,
                );
            }
            '\u{200B}' | '\u{2060}' | '\u{180E}' | '\u{2061}'..='\u{2064}' => {
                let prev = i.checked_sub(1).map(|p| chars[p].1);
                let next = chars.get(i + 1).map(|n| n.1);
                let inside = prev.is_some_and(|p| p.is_ascii_alphanumeric())
                    && next.is_some_and(|n| n.is_ascii_alphanumeric());
                let note = if inside {
                    format!("U+{:04X} inside a word", u32::from(c))
                } else {
                    format!("U+{:04X}", u32::from(c))
                };
                push("injection.zero-width", at, c.len_utf8(), note, &mut hits);
            }
            '\u{FEFF}' if at > 0 => {
                push(
                    "injection.zero-width",
                    at,
                    c.len_utf8(),
                    "U+FEFF".into(),
                    &mut hits,
                );
            }
            // Joiners are part of emoji sequences and of scripts like
            // Persian or Devanagari: only between two ASCII characters
            // are they hiding something.
            '\u{200C}' | '\u{200D}' => {
                let prev = i.checked_sub(1).map(|p| chars[p].1);
                let next = chars.get(i + 1).map(|n| n.1);
                if prev.is_some_and(|p| p.is_ascii_alphanumeric())
                    && next.is_some_and(|n| n.is_ascii_alphanumeric())
                {
                    push(
                        "injection.zero-width",
                        at,
                        c.len_utf8(),
                        format!("U+{:04X} inside a word", u32::from(c)),
                        &mut hits,
                    );
                }
            }
            _ => {}
        }
        i += 1;
    }
    homoglyphs(text, &mut hits, &mut push);
    hits.sort_by_key(|h| h.at);
    hits
}

/// Words (runs of letters and digits) holding both an ASCII letter and a
/// Cyrillic or Greek letter that looks like a Latin one.
fn homoglyphs(
    text: &str,
    hits: &mut Vec<Hit>,
    push: &mut impl FnMut(&'static str, usize, usize, String, &mut Vec<Hit>),
) {
    let mut start: Option<usize> = None;
    let mut ascii = false;
    let mut lookalike: Option<char> = None;
    let mut finish =
        |s: usize, end: usize, ascii: bool, lookalike: Option<char>, hits: &mut Vec<Hit>| {
            if let (true, Some(c)) = (ascii, lookalike) {
                let word = &text[s..end];
                push(
                    "injection.homoglyph",
                    s,
                    end - s,
                    format!(
                        "\"{}\" holds {} (U+{:04X}), which looks like a Latin letter",
                        crate::text::evidence(word, 0, word.len()),
                        c,
                        u32::from(c)
                    ),
                    hits,
                );
            }
        };
    for (at, c) in text.char_indices() {
        if c.is_alphanumeric() {
            if start.is_none() {
                start = Some(at);
                ascii = false;
                lookalike = None;
            }
            if c.is_ascii_alphabetic() {
                ascii = true;
            } else if is_lookalike(c) {
                lookalike.get_or_insert(c);
            }
        } else if let Some(s) = start.take() {
            finish(s, at, ascii, lookalike, hits);
        }
    }
    if let Some(s) = start {
        finish(s, text.len(), ascii, lookalike, hits);
    }
}

/// Cyrillic and Greek letters drawn like Latin ones. Greek letters with
/// their own shape (α, ρ, τ, κ, χ, ν) are not in it: science writes `Cα`,
/// `ρ_AB` and `α-Gal`.
fn is_lookalike(c: char) -> bool {
    matches!(
        c,
        'а' | 'с'
            | 'е'
            | 'о'
            | 'р'
            | 'х'
            | 'у'
            | 'і'
            | 'ј'
            | 'ѕ'
            | 'һ'
            | 'ԁ'
            | 'ԛ'
            | 'ԝ'
            | 'А'
            | 'В'
            | 'С'
            | 'Е'
            | 'Н'
            | 'І'
            | 'Ј'
            | 'К'
            | 'М'
            | 'О'
            | 'Р'
            | 'Ѕ'
            | 'Т'
            | 'Х'
            | 'Υ'
            | 'ο'
            | 'Α'
            | 'Β'
            | 'Ε'
            | 'Ζ'
            | 'Η'
            | 'Ι'
            | 'Κ'
            | 'Μ'
            | 'Ν'
            | 'Ο'
            | 'Ρ'
            | 'Τ'
            | 'Χ'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(text: &str) -> Vec<&'static str> {
        scan(&Lines::new(text))
            .into_iter()
            .map(|h| h.code)
            .collect()
    }

    #[test]
    fn hidden_characters_are_found_and_emoji_joiners_are_not() {
        assert_eq!(codes("plain ascii"), Vec::<&str>::new());
        assert_eq!(
            codes("family 👨\u{200D}👩\u{200D}👧 and café"),
            Vec::<&str>::new()
        );
        assert_eq!(codes("Привет мир"), Vec::<&str>::new());
        assert_eq!(codes("ig\u{200B}nore"), vec!["injection.zero-width"]);
        assert_eq!(codes("a\u{202E}b"), vec!["injection.bidi"]);
        assert_eq!(codes("run \u{0441}url now"), vec!["injection.homoglyph"]);
        assert_eq!(codes("Cα atoms, ρ_AB, α-Gal epitopes"), Vec::<&str>::new());
        let smuggled: String = "hi"
            .chars()
            .map(|c| char::from_u32(0xE0000 + u32::from(c)).unwrap_or(' '))
            .collect();
        let hits = scan(&Lines::new(&format!("x{smuggled}y")));
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].code, "injection.tag-characters");
        assert!(hits[0].note.contains("\"hi\""), "{}", hits[0].note);
    }
}
