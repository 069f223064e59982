//! Splitting `SKILL.md` into its YAML frontmatter and Markdown body.
//!
//! Written by hand (no frontmatter crate) because the rules are the product:
//! the file must open with a `---` line and the frontmatter closes at the next
//! line that is exactly `---` (a trailing `\r` or blanks tolerated); a `---`
//! inside a line never closes it. Line numbers are kept so every later
//! diagnostic points at the real file line.

use crate::diagnostic::{Code, Diagnostic, Pos, Severity};
use crate::limits::MAX_FRONTMATTER_BYTES;

/// A `SKILL.md` split at its frontmatter delimiters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Split<'a> {
    /// The YAML text between the delimiter lines (may be empty).
    pub yaml: &'a str,
    /// File line of the first YAML line (the line after the opening `---`).
    pub yaml_line: u32,
    /// The Markdown after the closing `---` line.
    pub body: &'a str,
    /// File line where the body starts.
    pub body_line: u32,
}

/// True when `line` (without its `\n`) is a `---` delimiter.
fn is_delimiter(line: &str) -> bool {
    line.trim_end_matches([' ', '\t', '\r']) == "---"
}

/// Splits `text` (BOM already removed) into frontmatter and body.
///
/// Errors are `no-frontmatter`, `unclosed-frontmatter` and
/// `frontmatter-too-large`, positioned at the offending line.
pub fn split(text: &str) -> Result<Split<'_>, Diagnostic> {
    let mut lines = Lines::new(text);
    let opening = lines.next().map(|(_, line)| line);
    if !opening.is_some_and(is_delimiter) {
        let help = if text.trim_start().starts_with("---") {
            "remove everything before the opening `---` line"
        } else {
            "start the file with a `---` line, then `name:` and `description:`, then a closing `---` line"
        };
        return Err(Diagnostic::new(
            Code::NoFrontmatter,
            Severity::Error,
            "SKILL.md must start with YAML frontmatter (---)",
        )
        .at(Pos::new(1, 1, first_line_len(text)))
        .with_help(help));
    }
    let yaml_start = lines.offset;
    let mut line_no: u32 = 1;
    for (start, line) in lines.by_ref() {
        line_no = line_no.saturating_add(1);
        if start - yaml_start > MAX_FRONTMATTER_BYTES {
            return Err(too_large(line_no));
        }
        if is_delimiter(line) {
            return Ok(Split {
                yaml: &text[yaml_start..start],
                yaml_line: 2,
                body: &text[lines.offset..],
                body_line: line_no.saturating_add(1),
            });
        }
    }
    // Discovery reads only a prefix of a bit more than the limit: a
    // frontmatter whose last line runs past the limit is too large there
    // and in the whole file alike (one code for one file).
    if text.len() - yaml_start > MAX_FRONTMATTER_BYTES {
        return Err(too_large(line_no));
    }
    Err(Diagnostic::new(
        Code::UnclosedFrontmatter,
        Severity::Error,
        "SKILL.md frontmatter not properly closed with ---",
    )
    .at(Pos::new(1, 1, 3))
    .with_help("add a line containing only `---` after the last frontmatter field"))
}

fn too_large(line_no: u32) -> Diagnostic {
    Diagnostic::new(
        Code::FrontmatterTooLarge,
        Severity::Error,
        format!("frontmatter exceeds {MAX_FRONTMATTER_BYTES} byte limit before its closing ---"),
    )
    .at(Pos::new(line_no, 1, 0))
    .with_help("keep only metadata in the frontmatter; move long text into the body")
}

fn first_line_len(text: &str) -> u32 {
    let line = text.split('\n').next().unwrap_or("");
    u32::try_from(line.trim_end_matches('\r').chars().count()).unwrap_or(u32::MAX)
}

/// Lines with their byte offsets; `\n` separated, the `\n` excluded.
struct Lines<'a> {
    text: &'a str,
    offset: usize,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Self {
        Lines { text, offset: 0 }
    }
}

impl<'a> Iterator for Lines<'a> {
    type Item = (usize, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        if self.offset >= self.text.len() {
            return None;
        }
        let start = self.offset;
        let rest = &self.text[start..];
        let (line, advance) = match memchr::memchr(b'\n', rest.as_bytes()) {
            Some(i) => (&rest[..i], i + 1),
            None => (rest, rest.len()),
        };
        self.offset = start + advance;
        Some((start, line))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frontmatter_closes_at_first_exact_delimiter_line() {
        let s = split("---\nname: a\ndescription: x --- y\n---\n# Body\n").unwrap();
        assert_eq!(s.yaml, "name: a\ndescription: x --- y\n");
        assert_eq!(s.body, "# Body\n");
        assert_eq!(s.body_line, 5);
    }

    #[test]
    fn delimiter_inside_a_line_does_not_close() {
        let err = split("---\nname: a --- b\n").unwrap_err();
        assert_eq!(err.code, Code::UnclosedFrontmatter);
    }

    #[test]
    fn crlf_delimiters_are_tolerated() {
        let s = split("---\r\nname: a\r\n---\r\nbody\r\n").unwrap();
        assert_eq!(s.yaml, "name: a\r\n");
        assert_eq!(s.body, "body\r\n");
        assert_eq!(s.body_line, 4);
    }

    #[test]
    fn file_without_opening_delimiter_has_no_frontmatter() {
        let err = split("# Title\n---\n").unwrap_err();
        assert_eq!(err.code, Code::NoFrontmatter);
        assert_eq!(err.line, Some(1));
    }

    #[test]
    fn leading_blank_line_gets_a_specific_hint() {
        let err = split("\n---\nname: a\n---\n").unwrap_err();
        assert_eq!(err.code, Code::NoFrontmatter);
        assert!(err.help.unwrap().contains("before the opening"));
    }

    #[test]
    fn closing_delimiter_at_end_of_file_gives_empty_body() {
        let s = split("---\nname: a\n---").unwrap();
        assert_eq!(s.body, "");
        assert_eq!(s.yaml, "name: a\n");
    }

    #[test]
    fn empty_frontmatter_is_split() {
        let s = split("---\n---\nbody").unwrap();
        assert_eq!(s.yaml, "");
        assert_eq!(s.body_line, 3);
    }

    #[test]
    fn frontmatter_over_limit_is_refused_before_parsing() {
        let mut text = String::from("---\n");
        while text.len() <= MAX_FRONTMATTER_BYTES + 10 {
            text.push_str("k: vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv\n");
        }
        text.push_str("---\n");
        assert_eq!(split(&text).unwrap_err().code, Code::FrontmatterTooLarge);
    }
}
