//! A file's text as the scanners see it: line starts for positions,
//! Markdown structure (fences, HTML comments), and evidence cut from a
//! line with secrets redacted and invisible characters made visible.

use std::borrow::Cow;

use crate::limits::EVIDENCE_CHARS;

/// A text with the offsets of its line starts.
pub(crate) struct Lines<'a> {
    pub(crate) text: &'a str,
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        let starts = std::iter::once(0)
            .chain(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1))
            .collect();
        Lines { text, starts }
    }

    /// 0-based line index of a byte offset.
    pub(crate) fn index_of(&self, offset: usize) -> usize {
        match self.starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        }
    }

    /// Number of lines.
    pub(crate) fn len(&self) -> usize {
        self.starts.len()
    }

    /// Byte range of line `index` without its line end.
    pub(crate) fn range(&self, index: usize) -> (usize, usize) {
        let start = self.starts.get(index).copied().unwrap_or(self.text.len());
        let mut end = self
            .starts
            .get(index + 1)
            .map_or(self.text.len(), |e| e - 1);
        if end > start && self.text.as_bytes().get(end - 1) == Some(&b'\r') {
            end -= 1;
        }
        (start, end.max(start))
    }

    /// Line `index` without its line end.
    pub(crate) fn line(&self, index: usize) -> &'a str {
        let (s, e) = self.range(index);
        self.text.get(s..e).unwrap_or("")
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub(crate) fn position(&self, offset: usize) -> (u32, u32) {
        let index = self.index_of(offset);
        let start = self.starts.get(index).copied().unwrap_or(0);
        let col = self
            .text
            .get(start..offset.min(self.text.len()))
            .map_or(0, |s| s.chars().count());
        (to_u32(index + 1), to_u32(col + 1))
    }
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// What a Markdown line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MdLine {
    /// Prose (including the frontmatter).
    Prose,
    /// Inside a fenced code block (or its fence lines).
    Fence,
}

/// Per-line Markdown structure: which lines are fenced code.
pub(crate) fn markdown_lines(lines: &Lines<'_>) -> Vec<MdLine> {
    let mut out = Vec::with_capacity(lines.len());
    let mut fence: Option<(u8, usize)> = None;
    for i in 0..lines.len() {
        let line = lines.line(i);
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let marker = trimmed.bytes().next().filter(|b| *b == b'`' || *b == b'~');
        let run = marker.map_or(0, |m| trimmed.bytes().take_while(|b| *b == m).count());
        match (fence, marker) {
            (Some((m, n)), Some(b)) if b == m && run >= n && trimmed[run..].trim().is_empty() => {
                out.push(MdLine::Fence);
                fence = None;
            }
            (Some(_), _) => out.push(MdLine::Fence),
            (None, Some(b)) if run >= 3 && indent < 4 => {
                out.push(MdLine::Fence);
                fence = Some((b, run));
            }
            (None, _) => out.push(MdLine::Prose),
        }
    }
    out
}

/// Evidence from `line` around the byte range `[start, end)` of the line:
/// secrets redacted (the core's rules, on the whole line first so a cut
/// never shows half a secret), invisible and control characters written
/// as `<U+XXXX>`, at most [`EVIDENCE_CHARS`] characters.
pub(crate) fn evidence(line: &str, start: usize, end: usize) -> String {
    let start = floor_char(line, start.min(line.len()));
    let end = floor_char(line, end.clamp(start, line.len()));
    let redacted = skilldeck::secret::redact_secrets(line);
    let (text, at, width) = match &redacted {
        Cow::Borrowed(_) => (line, start, line[start..end].chars().count()),
        Cow::Owned(r) => {
            // Where the match is in the redacted line: after the redacted
            // text before it.
            let before = skilldeck::secret::redact_secrets(&line[..start]).len();
            (r.as_str(), floor_char(r, before.min(r.len())), 1)
        }
    };
    let chars: Vec<char> = text.chars().collect();
    let at_char = text.get(..at).map_or(0, |s| s.chars().count());
    let take = EVIDENCE_CHARS;
    let from = if chars.len() <= take {
        0
    } else {
        let lead = take.saturating_sub(width.min(take)) / 3;
        at_char.saturating_sub(lead).min(chars.len() - take)
    };
    let to = (from + take).min(chars.len());
    let mut out = String::new();
    if from > 0 {
        out.push('…');
    }
    for &c in chars[from..to].iter() {
        if is_hidden(c) {
            out.push_str(&format!("<U+{:04X}>", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    if to < chars.len() {
        out.push('…');
    }
    out.trim().to_owned()
}

/// The largest char boundary at or below `at`.
fn floor_char(text: &str, mut at: usize) -> usize {
    while at > 0 && !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// Characters shown as code points in evidence: controls (tab aside),
/// format characters (zero-width, bidi), tag characters, and the BOM.
pub(crate) fn is_hidden(c: char) -> bool {
    (c.is_control() && c != '\t')
        || matches!(c,
            '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{2069}' | '\u{FEFF}' | '\u{061C}' | '\u{180E}' | '\u{00AD}'
            | '\u{E0000}'..='\u{E007F}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_one_based_lines_and_character_columns() {
        let l = Lines::new("ab\r\nçd x\n\nz");
        assert_eq!(l.position(0), (1, 1));
        assert_eq!(l.position(4), (2, 1));
        assert_eq!(l.position(7), (2, 3));
        assert_eq!(l.line(0), "ab");
        assert_eq!(l.line(2), "");
        assert_eq!(l.line(3), "z");
    }

    #[test]
    fn evidence_redacts_secrets_and_shows_invisible_characters() {
        let line = "curl -d token=ghp_abcdefghijklmnopqrstuvwxyz0123456789 https://x.invalid";
        let e = evidence(line, 0, 4);
        assert!(!e.contains("ghp_abc"), "{e}");
        assert!(e.contains("<redacted>"), "{e}");
        assert_eq!(evidence("a\u{200B}b", 0, 1), "a<U+200B>b");
        let long = format!("{}MATCH{}", "x".repeat(300), "y".repeat(300));
        let e = evidence(&long, 300, 305);
        assert!(
            e.contains("MATCH") && e.chars().count() <= EVIDENCE_CHARS + 2,
            "{e}"
        );
    }

    #[test]
    fn fenced_blocks_are_told_from_prose() {
        let text = "a\n```bash\ncurl x\n```\nb\n~~~~\n```\n~~~~\n";
        let l = Lines::new(text);
        let kinds = markdown_lines(&l);
        use MdLine::*;
        assert_eq!(
            kinds,
            vec![
                Prose, Fence, Fence, Fence, Prose, Fence, Fence, Fence, Prose
            ]
        );
    }
}
