//! Advisory lints (warnings in both modes): body size, links to files the
//! skill does not contain, reference chains deeper than one level, and
//! descriptions that never say when to use the skill.

use std::collections::{HashMap, HashSet};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};

use crate::diagnostic::{Code, Pos};
use crate::fs::read::SKILL_MD;
use crate::limits::{
    CHARS_PER_TOKEN_ESTIMATE, MAX_BODY_LINES, MAX_BODY_TOKENS, MAX_LINT_LINKED_FILE_BYTES,
    MAX_LINT_LINKED_FILES,
};
use crate::spec::options::Sink;

/// Folders the spec names; bare mentions like `scripts/run.py` are checked.
const RESOURCE_DIRS: [&str; 3] = ["scripts/", "references/", "assets/"];

/// Phrases that say when to use a skill. Lowercase; matched on word starts.
const TRIGGER_PHRASES: &[&str] = &[
    "use when",
    "use this",
    "use it",
    "use for",
    "use if",
    "use to",
    "use whenever",
    "use before",
    "use after",
    "use during",
    "used when",
    "used for",
    "used to",
    "when ",
    "whenever",
    "if the user",
    "if you",
    "trigger",
    "invoke",
    "activate",
    "should be used",
    "apply when",
    "for use",
    "ask",
    "request",
    "need",
    "want",
];

/// The marker `skilldeck new` writes where the author must write text
/// (the scaffold re-exports it as `SCAFFOLD_PLACEHOLDER`, so the two cannot
/// drift).
pub const PLACEHOLDER_MARKER: &str = "TODO:";

const PLACEHOLDER_MESSAGE: &str = "replace the placeholder text before sharing the skill";

/// Reports the scaffold's placeholder at the start of the description.
pub(crate) fn description_placeholder(text: &str, pos: Option<Pos>, sink: &mut Sink<'_>) {
    if text.trim_start().starts_with(PLACEHOLDER_MARKER) {
        sink.push(
            Code::PlaceholderText,
            pos,
            format!("the description is still the scaffold's placeholder ({PLACEHOLDER_MARKER}); {PLACEHOLDER_MESSAGE}"),
        )
        .help = Some(
            "say what the skill does and when to use it, e.g. \"Extracts tables from PDFs. Use when ...\""
                .to_owned(),
        );
    }
}

/// The first body line that starts with the scaffold's placeholder marker
/// (after indentation and a list marker, as the scaffold writes it), as a
/// 0-based line and character column. Prose that mentions a TODO elsewhere in
/// a line is not a placeholder. One SIMD substring search over the body.
fn placeholder_line(body: &str) -> Option<(usize, usize)> {
    let bytes = body.as_bytes();
    memchr::memmem::find_iter(bytes, PLACEHOLDER_MARKER.as_bytes()).find_map(|at| {
        let line_start = memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |i| i + 1);
        let indent = &body[line_start..at];
        let prefix = indent.trim_start();
        // Four spaces of indentation make a code block, as do fences.
        let in_code = indent.len() - prefix.len() >= 4 || in_fence(&body[..line_start]);
        let list_marker = prefix.is_empty()
            || matches!(prefix, "- " | "* " | "+ ")
            || prefix
                .strip_suffix(". ")
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        (list_marker && !in_code).then(|| {
            let line = memchr::memchr_iter(b'\n', &bytes[..line_start]).count();
            (line, body[line_start..at].chars().count())
        })
    })
}

/// Opens or closes a fenced code block at `trimmed` (a line without its
/// leading whitespace): a fence closes only with the marker that opened it.
fn toggle_fence(fence: &mut Option<&'static str>, trimmed: &str) {
    for marker in ["```", "~~~"] {
        if trimmed.starts_with(marker) {
            *fence = match *fence {
                Some(open) if open == marker => None,
                None => Some(marker),
                other => other,
            };
        }
    }
}

/// Whether the text after `before` is inside a fenced code block (only
/// called for the rare placeholder candidates).
fn in_fence(before: &str) -> bool {
    let mut fence: Option<&str> = None;
    for line in lines(before) {
        toggle_fence(&mut fence, line.trim_start());
    }
    fence.is_some()
}

/// Warns when the description never says when to use the skill.
pub(crate) fn description(text: &str, pos: Option<Pos>, sink: &mut Sink<'_>) {
    if !says_when(&text.to_lowercase()) {
        sink.push(
            Code::DescriptionNoTrigger,
            pos,
            "description never says when to use the skill".to_owned(),
        )
        .help = Some(
            "add when it applies, e.g. \"Use when the user asks to ...\", so agents pick it at the right time"
                .to_owned(),
        );
    }
}

/// Whether a trigger phrase starts a word of `lower` (at its start, or after
/// a character that is not alphanumeric). One pass over the bytes (a
/// character decoded only where a non-ASCII one starts), comparing the
/// phrases only where a word starts with a phrase's first letter, instead of
/// a substring search per phrase. The phrases are ASCII, so each of their
/// occurrences starts at a character boundary: the same answer as searching
/// every occurrence of every phrase.
fn says_when(lower: &str) -> bool {
    /// The ASCII letters a trigger phrase starts with.
    const FIRST_LETTERS: [bool; 128] = {
        let mut table = [false; 128];
        let mut i = 0;
        while i < TRIGGER_PHRASES.len() {
            table[TRIGGER_PHRASES[i].as_bytes()[0] as usize] = true;
            i += 1;
        }
        table
    };
    let bytes = lower.as_bytes();
    let mut after_alphanumeric = false;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b.is_ascii() {
            if !after_alphanumeric
                && FIRST_LETTERS[usize::from(b)]
                && TRIGGER_PHRASES.iter().any(|phrase| {
                    // The first byte before the slice compare (a `bcmp`
                    // call): most phrases start with another letter.
                    phrase.as_bytes()[0] == b && bytes[i..].starts_with(phrase.as_bytes())
                })
            {
                return true;
            }
            after_alphanumeric = b.is_ascii_alphanumeric();
            i += 1;
        } else {
            // Only where a non-ASCII character starts: decode it.
            let Some(c) = lower[i..].chars().next() else {
                break;
            };
            after_alphanumeric = c.is_alphanumeric();
            i += c.len_utf8();
        }
    }
    false
}

/// The skill folder the link lints look files up in: its path, and its
/// open descriptor when the caller holds one (the walk, while it lists the
/// folder): files are then looked up relative to it, one short path instead
/// of the whole one per `stat` and `open`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SkillFolder<'a> {
    /// The folder's path (every link is resolved inside it).
    pub(crate) path: &'a Path,
    /// Its open descriptor, if any.
    pub(crate) fd: Option<rustix::fd::BorrowedFd<'a>>,
}

impl SkillFolder<'_> {
    /// `path` (made by [`resolve_inside`] on this folder) as the folder's
    /// descriptor sees it: the part after the folder's own path (`.` for
    /// the folder itself). `resolve_inside` starts its result with the
    /// folder's bytes, then adds normal components only.
    fn relative<'p>(&self, path: &'p Path) -> Option<&'p Path> {
        use std::os::unix::ffi::OsStrExt;
        let rest = path
            .as_os_str()
            .as_bytes()
            .strip_prefix(self.path.as_os_str().as_bytes())?;
        let rest = match rest.strip_prefix(b"/") {
            Some(rest) => rest,
            // Pushing onto a folder path that ends in `/` adds none.
            None if self.path.as_os_str().as_bytes().ends_with(b"/") || rest.is_empty() => rest,
            None => return None,
        };
        Some(if rest.is_empty() {
            Path::new(".")
        } else {
            Path::new(std::ffi::OsStr::from_bytes(rest))
        })
    }
}

/// Body lints. `dir` is the skill folder (link checks are skipped without it).
pub(crate) fn body(body: &str, body_line: u32, dir: Option<SkillFolder<'_>>, sink: &mut Sink<'_>) {
    let lines = line_count(body);
    if lines > MAX_BODY_LINES {
        let over = body_line.saturating_add(u32::try_from(MAX_BODY_LINES).unwrap_or(u32::MAX));
        sink.push(
            Code::BodyTooLong,
            Some(Pos::line(over)),
            format!("SKILL.md body is {lines} lines; keep it under {MAX_BODY_LINES}"),
        )
        .help = Some("move detailed material into references/ and link to it".to_owned());
    }
    // A character takes at least one byte: a body whose bytes are under the
    // limit is under it in characters too, without counting them.
    let tokens = if body.len() / CHARS_PER_TOKEN_ESTIMATE > MAX_BODY_TOKENS {
        body.chars().count() / CHARS_PER_TOKEN_ESTIMATE
    } else {
        0
    };
    if tokens > MAX_BODY_TOKENS {
        sink.push(
            Code::BodyTooManyTokens,
            Some(Pos::line(body_line)),
            format!("SKILL.md body is about {tokens} tokens; keep it under {MAX_BODY_TOKENS}"),
        )
        .help =
            Some("the whole body is loaded on activation; move detail into references/".to_owned());
    }
    if let Some((line, column)) = placeholder_line(body) {
        sink.push(
            Code::PlaceholderText,
            Some(Pos::new(
                body_line.saturating_add(u32::try_from(line).unwrap_or(u32::MAX)),
                u32::try_from(column + 1).unwrap_or(u32::MAX),
                u32::try_from(PLACEHOLDER_MARKER.len()).unwrap_or(0),
            )),
            format!("the body still holds the scaffold's placeholder ({PLACEHOLDER_MARKER}); {PLACEHOLDER_MESSAGE}"),
        )
        .help = Some("write the instructions this line stands for, or delete it".to_owned());
    }
    // The link checks are the lints that cost system calls (a `stat` a
    // link, an open and a read a linked Markdown file): they run only when
    // a code they give would be reported (not when `--allow` takes both, nor
    // under `--quiet`, as both are warnings).
    if let Some(dir) = dir
        && (sink.reports(Code::BrokenLink) || sink.reports(Code::NestedReference))
    {
        links(body, body_line, dir, sink);
    }
}

/// A relative file reference found in Markdown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Link {
    /// The path as written (fragment and query removed).
    pub(crate) target: String,
    /// 0-based line within the scanned text.
    pub(crate) line: usize,
    /// 0-based character column within that line.
    pub(crate) column: usize,
}

/// Relative links and bare resource paths in `text`. Markdown links inside
/// fenced code blocks are examples and are skipped; bare `scripts/…` paths are
/// collected everywhere, since that is how commands name them.
///
/// One pass over the whole text rather than line by line: a SIMD search for
/// the bytes every link holds (`]` or `/`) jumps from one candidate line to
/// the next; the lines between are only counted (SIMD), never split or
/// trimmed. The fence lines are found once, when the first line with a `]`
/// needs them (two SIMD substring searches for the markers, kept where only
/// whitespace precedes them on their line).
/// Lines, columns and fence state are those of a `str::lines` walk (the
/// property test `the_whole_text_link_scanner_finds_what_the_line_scanner_found`
/// pins it against that walk).
pub(crate) fn extract_links(text: &str) -> Vec<Link> {
    scan_links(text, true)
}

/// The targets [`extract_links`] finds, in the same order, for texts whose
/// link positions are never reported (the files `SKILL.md` links to): no
/// line is numbered and no character counted, the order comes from byte
/// offsets (a line's start, a link's byte column), which sort like lines
/// and character columns.
fn link_targets(text: &str) -> Vec<String> {
    scan_links(text, false)
        .into_iter()
        .map(|l| l.target)
        .collect()
}

/// [`extract_links`]; with `numbered` false, a link's `line` is the byte
/// offset where its line starts and its `column` a byte column.
fn scan_links(text: &str, numbered: bool) -> Vec<Link> {
    let bytes = text.as_bytes();
    // Found on the first line that needs them (many texts have no `]`).
    let mut fences: Option<Vec<(usize, &'static str)>> = None;
    let mut next_fence = 0;
    let mut fence: Option<&str> = None;
    let mut out = Vec::new();
    // `pos` is always the start of a line not yet looked at; `line_no` its
    // 0-based number. `from` is where the search for link bytes goes on.
    let mut pos = 0;
    let mut line_no = 0;
    let mut from = 0;
    while from < bytes.len() {
        let Some(hit) = memchr::memchr2(b']', b'/', &bytes[from..]).map(|i| from + i) else {
            break;
        };
        // Only a `](` or `]:` can start a Markdown link, and only a `/`
        // right after `scripts`, `references` or `assets` can end a
        // resource folder (what `bare_paths` looks for): a line with
        // neither yields nothing.
        let useful = if bytes[hit] == b']' {
            matches!(bytes.get(hit + 1), Some(b'(' | b':'))
        } else {
            hit > 0 && bytes[hit - 1] == b's' && {
                let before = &bytes[..hit];
                RESOURCE_DIRS
                    .iter()
                    .any(|d| before.ends_with(&d.as_bytes()[..d.len() - 1]))
            }
        };
        if !useful {
            from = hit + 1;
            continue;
        }
        let gap = &bytes[pos..hit];
        let start = match memchr::memrchr(b'\n', gap) {
            Some(i) => {
                if numbered {
                    line_no += memchr::memchr_iter(b'\n', gap).count();
                }
                pos + i + 1
            }
            None => pos,
        };
        if !numbered {
            line_no = start;
        }
        let end = memchr::memchr(b'\n', &bytes[hit..]).map_or(bytes.len(), |i| hit + i);
        let raw = &text[start..end];
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        // Without a `]` there is no Markdown link, in a fence or not.
        if memchr::memchr(b']', line.as_bytes()).is_some() {
            // Fence lines up to and including this one, in order.
            let fences = fences.get_or_insert_with(|| fence_lines(text));
            while let Some(&(at, marker)) = fences.get(next_fence) {
                if at > start {
                    break;
                }
                fence = match fence {
                    Some(open) if open == marker => None,
                    None => Some(marker),
                    other => other,
                };
                next_fence += 1;
            }
            if fence.is_none() {
                markdown_links(line, line.trim_start(), line_no, numbered, &mut out);
            }
        }
        bare_paths(line, line_no, numbered, &mut out);
        pos = end + 1;
        from = pos;
        line_no += 1;
    }
    out.sort_by_key(|l| (l.line, l.column));
    out.dedup_by(|a, b| a.line == b.line && a.target == b.target);
    out
}

/// The lines of `text` that open or close a fenced code block (their text
/// starts, after leading whitespace, with ```` ``` ```` or `~~~`): the byte
/// where each line starts and its marker, in text order.
fn fence_lines(text: &str) -> Vec<(usize, &'static str)> {
    let bytes = text.as_bytes();
    let mut found: Vec<(usize, &'static str)> = Vec::new();
    for marker in ["```", "~~~"] {
        let mut last_line = None;
        for at in memchr::memmem::find_iter(bytes, marker.as_bytes()) {
            let start = memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |i| i + 1);
            if last_line == Some(start) {
                continue;
            }
            // `trim_start` stops at the first non-whitespace character: the
            // marker must be it.
            if text[start..at].chars().all(char::is_whitespace) {
                found.push((start, marker));
                last_line = Some(start);
            }
        }
    }
    // A line starts with at most one of the markers: no ties.
    found.sort_unstable_by_key(|&(at, _)| at);
    found
}

/// What `str::lines(text).count()` gives: every `\n` ends a line, and so
/// does the end of a text that does not end with one (one SIMD count, no
/// line splitting).
fn line_count(text: &str) -> usize {
    memchr::memchr_iter(b'\n', text.as_bytes()).count()
        + usize::from(!text.is_empty() && !text.ends_with('\n'))
}

/// `str::lines` with one SIMD `memchr` pass over the text instead of a
/// searcher per line (linked reference files can be long).
fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut start = 0;
    let mut ends = memchr::memchr_iter(b'\n', text.as_bytes());
    std::iter::from_fn(move || {
        if start >= text.len() {
            return None;
        }
        let end = ends.next().unwrap_or(text.len());
        let line = &text[start..end];
        start = end + 1;
        Some(line.strip_suffix('\r').unwrap_or(line))
    })
}

/// The character column of `byte` in `line` (its byte column when the
/// positions are only sorted, not reported).
fn char_col(line: &str, byte: usize, numbered: bool) -> usize {
    if numbered {
        line[..byte].chars().count()
    } else {
        byte
    }
}

/// The first `]` followed by `next` at or after `from` (a `memchr` for
/// the `]`, instead of building a substring searcher per line).
fn find_bracket_then(bytes: &[u8], from: usize, next: u8) -> Option<usize> {
    let mut i = from;
    while let Some(j) = memchr::memchr(b']', bytes.get(i..)?) {
        let at = i + j;
        if bytes.get(at + 1) == Some(&next) {
            return Some(at);
        }
        i = at + 1;
    }
    None
}

/// Byte ranges of the inline code spans of `line`: a run of N backticks
/// up to the next run of exactly N (CommonMark; an unclosed run is literal).
/// Empty without a backtick (one `memchr`).
fn code_spans(line: &str) -> Vec<(usize, usize)> {
    let bytes = line.as_bytes();
    let mut spans = Vec::new();
    let Some(first) = memchr::memchr(b'`', bytes) else {
        return spans;
    };
    let run_at = |i: usize| bytes[i..].iter().take_while(|&&b| b == b'`').count();
    let mut i = first;
    while i < bytes.len() {
        let Some(open) = memchr::memchr(b'`', &bytes[i..]).map(|j| i + j) else {
            break;
        };
        let n = run_at(open);
        let mut j = open + n;
        let mut closed = None;
        while let Some(k) = memchr::memchr(b'`', &bytes[j..]).map(|k| j + k) {
            let m = run_at(k);
            if m == n {
                closed = Some(k + m);
                break;
            }
            j = k + m;
        }
        match closed {
            Some(end) => {
                spans.push((open, end));
                i = end;
            }
            // An unclosed run is literal text; later runs may still open spans.
            None => i = open + n,
        }
    }
    spans
}

/// `trimmed` is `line` without its leading whitespace.
fn markdown_links(line: &str, trimmed: &str, line_no: usize, numbered: bool, out: &mut Vec<Link>) {
    // Links inside inline code (`[name](url)`) are examples, like fenced ones.
    let spans = code_spans(line);
    let in_code = |at: usize| spans.iter().any(|&(s, e)| s <= at && at < e);
    let mut rest = 0;
    while let Some(at) = find_bracket_then(line.as_bytes(), rest, b'(') {
        if in_code(at) {
            rest = at + 2;
            continue;
        }
        let start = at + 2;
        let tail = &line[start..];
        let (target, _) = if let Some(inner) = tail.strip_prefix('<') {
            match memchr::memchr(b'>', inner.as_bytes()) {
                Some(end) => (&inner[..end], 0),
                None => break,
            }
        } else {
            let end = memchr::memchr2(b')', b' ', tail.as_bytes()).unwrap_or(tail.len());
            (&tail[..end], 0)
        };
        if let Some(target) = local_target(target) {
            out.push(Link {
                target,
                line: line_no,
                column: char_col(line, start, numbered),
            });
        }
        rest = start;
    }
    // Reference definitions: `[id]: path "title"`; footnotes (`[^1]: text`)
    // are prose, not links.
    let t = trimmed;
    if t.starts_with('[')
        && !t.starts_with("[^")
        && let Some(close) = find_bracket_then(t.as_bytes(), 0, b':')
    {
        let target = t[close + 2..].split_whitespace().next().unwrap_or("");
        if let Some(found) = local_target(target) {
            let byte = line.len() - t.len() + close + 2;
            out.push(Link {
                target: found,
                line: line_no,
                column: char_col(line, byte, numbered) + 1,
            });
        }
    }
}

fn bare_paths(line: &str, line_no: usize, numbered: bool, out: &mut Vec<Link>) {
    // Every resource path has a '/' right after the folder name: find the
    // slashes (SIMD memchr) and look back, instead of searching each name.
    for slash in memchr::memchr_iter(b'/', line.as_bytes()) {
        let before = &line[..slash];
        let Some(dir) = RESOURCE_DIRS
            .iter()
            .find(|d| before.ends_with(&d[..d.len() - 1]))
        else {
            continue;
        };
        let i = slash + 1 - dir.len();
        // Must start a word: `python scripts/x.py`, `(scripts/x.py)`.
        let prev = line[..i].chars().next_back();
        if prev.is_some_and(|c| {
            c.is_alphanumeric() || matches!(c, '/' | '.' | '_' | '-' | '$' | '{' | '~')
        }) || line[..i].ends_with("](")
        {
            // Part of a longer path, or a Markdown link (handled, or an
            // example inside a fence).
            continue;
        }
        let end = path_end(&line[i..]).map_or(line.len(), |e| i + e);
        if line[end..].starts_with(['*', '{', '<', '$']) {
            // A pattern such as `references/span-*.md`.
            continue;
        }
        let raw = strip_line_suffix(line[i..end].trim_end_matches(['.', ':', '!', '?']));
        if raw.len() <= dir.len() || raw.contains("...") {
            continue;
        }
        if let Some(target) = local_target(raw) {
            out.push(Link {
                target,
                line: line_no,
                column: char_col(line, i, numbered),
            });
        }
    }
}

/// Where a bare resource path ends: at the first whitespace character or
/// one of `` `'"()[]<>,;|&*{}$ ``. Byte tests for ASCII (a table), and a
/// decoded character only where a non-ASCII one starts (it may be Unicode
/// whitespace): the answer of a `find` over the characters.
fn path_end(text: &str) -> Option<usize> {
    const ENDS: [bool; 128] = {
        let mut table = [false; 128];
        let ends = b"`'\"()[]<>,;|&*{}$\t\n\x0B\x0C\r ";
        let mut i = 0;
        while i < ends.len() {
            table[ends[i] as usize] = true;
            i += 1;
        }
        table
    };
    let bytes = text.as_bytes();
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b.is_ascii() {
            if ENDS[usize::from(b)] {
                return Some(i);
            }
            i += 1;
        } else {
            let c = text[i..].chars().next()?;
            if c.is_whitespace() {
                return Some(i);
            }
            i += c.len_utf8();
        }
    }
    None
}

/// Whether the last component of `path` is `SKILL.md` (`Path::ends_with`),
/// from the bytes when the path ends in a plain name (no trailing `/` or
/// `.`, which `Path` would skip).
fn names_skill_md(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let bytes = path.as_os_str().as_bytes();
    match bytes.last() {
        Some(b'/' | b'.') => path.ends_with(SKILL_MD),
        _ => {
            bytes.ends_with(SKILL_MD.as_bytes())
                && (bytes.len() == SKILL_MD.len()
                    || bytes[bytes.len() - SKILL_MD.len() - 1] == b'/')
        }
    }
}

/// `scripts/tool.py:15` or `scripts/tool.py:15:3` names a place in a file:
/// the file is `scripts/tool.py`.
fn strip_line_suffix(path: &str) -> &str {
    let mut path = path;
    for _ in 0..2 {
        match path.rsplit_once(':') {
            Some((file, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                path = file;
            }
            _ => break,
        }
    }
    path
}

/// The file part of a link when it is a relative local path.
///
/// Byte tests throughout: every character looked for is ASCII, and no byte
/// of a multi-byte UTF-8 character is.
fn local_target(raw: &str) -> Option<String> {
    let raw = raw.trim();
    let bytes = raw.as_bytes();
    if raw.is_empty()
        || raw.starts_with(['#', '/', '~', '\\'])
        || bytes
            .iter()
            .any(|b| matches!(b, b'<' | b'>' | b'{' | b'}' | b'$' | b'*'))
    {
        return None;
    }
    if let Some(colon) = memchr::memchr(b':', bytes) {
        // A scheme (`mailto:`, `data:`): letters then ':' before any '/';
        // or a URL (`://`) anywhere.
        if bytes[..colon]
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'.' | b'-'))
            || memchr::memchr_iter(b':', &bytes[colon..])
                .any(|i| bytes[colon + i + 1..].starts_with(b"//"))
        {
            return None;
        }
    }
    let path = &raw[..memchr::memchr2(b'#', b'?', bytes).unwrap_or(bytes.len())];
    if path.is_empty() {
        return None;
    }
    Some(if memchr::memchr(b'%', path.as_bytes()).is_some() {
        crate::text::percent::decode_lossy(path).into_owned()
    } else {
        path.to_owned()
    })
}

/// Where `target` lands inside `dir`, lexically; `None` if it leaves `dir`.
fn resolve_inside(dir: &Path, from: &Path, target: &str) -> Option<PathBuf> {
    let mut parts: Vec<Component<'_>> = Vec::new();
    for c in from.components().chain(Path::new(target).components()) {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::Normal(_) => parts.push(c),
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    let mut path = PathBuf::with_capacity(dir.as_os_str().len() + target.len() + 1);
    path.push(dir);
    for c in parts {
        path.push(c);
    }
    Some(path)
}

/// What `stat` (following symlinks) said about a path: a regular file or
/// not, and its size.
#[derive(Debug, Clone, Copy)]
struct Stat {
    is_file: bool,
    len: u64,
}

/// `stat` results of one skill's lint run, by path: a file linked from
/// `SKILL.md` and again from its references is looked up once. With the
/// folder's descriptor, the `stat` is made relative to it.
/// Keyed by the path's bytes with a fast hasher: the paths come from
/// [`resolve_inside`], already normal (no `.`, `..` or doubled separators),
/// so bytes compare as `Path`s would, without `Path`'s component-wise hash.
struct Stats<'a> {
    folder: SkillFolder<'a>,
    known: HashMap<std::ffi::OsString, Option<Stat>, foldhash::fast::RandomState>,
}

impl<'a> Stats<'a> {
    fn new(folder: SkillFolder<'a>) -> Self {
        Stats {
            folder,
            known: HashMap::default(),
        }
    }

    /// `None`: nothing there (or unreadable).
    fn get(&mut self, path: &Path) -> Option<Stat> {
        if let Some(&known) = self.known.get(path.as_os_str()) {
            return known;
        }
        #[cfg(test)]
        tests::LINK_IO.with(|io| io.set((io.get().0 + 1, io.get().1)));
        let found = match self.at(path) {
            // Following symlinks, as `std::fs::metadata` does.
            Some((fd, rel)) => rustix::fs::statat(fd, rel, rustix::fs::AtFlags::empty())
                .ok()
                .map(|st| Stat {
                    is_file: rustix::fs::FileType::from_raw_mode(st.st_mode)
                        == rustix::fs::FileType::RegularFile,
                    len: u64::try_from(st.st_size).unwrap_or(0),
                }),
            None => std::fs::metadata(path).ok().map(|m| Stat {
                is_file: m.is_file(),
                len: m.len(),
            }),
        };
        self.known.insert(path.as_os_str().to_owned(), found);
        found
    }

    /// The folder's descriptor and `path` relative to it, when the folder
    /// is open.
    fn at<'p>(&self, path: &'p Path) -> Option<(rustix::fd::BorrowedFd<'a>, &'p Path)> {
        Some((self.folder.fd?, self.folder.relative(path)?))
    }
}

/// A Markdown file `SKILL.md` links to: where it is, the link as written,
/// where the link is, and its size (from the `stat` that found it).
struct LinkedMd {
    path: PathBuf,
    target: String,
    pos: Pos,
    len: u64,
}

fn links(body: &str, body_line: u32, folder: SkillFolder<'_>, sink: &mut Sink<'_>) {
    let dir = folder.path;
    // Linked files are read only for the nested-reference check.
    let nested = sink.reports(Code::NestedReference);
    let mut stats = Stats::new(folder);
    let mut seen: HashSet<String, foldhash::fast::RandomState> = HashSet::default();
    let mut linked_md: Vec<LinkedMd> = Vec::new();
    for link in extract_links(body) {
        let pos = Pos::new(
            body_line.saturating_add(u32::try_from(link.line).unwrap_or(u32::MAX)),
            u32::try_from(link.column + 1).unwrap_or(u32::MAX),
            u32::try_from(link.target.chars().count()).unwrap_or(0),
        );
        let Some(path) = resolve_inside(dir, Path::new(""), &link.target) else {
            if !seen.contains(&link.target) {
                sink.push(
                    Code::BrokenLink,
                    Some(pos),
                    format!(
                        "'{}' points outside the skill folder; it will be missing wherever the skill is installed on its own",
                        link.target
                    ),
                )
                .help = Some("copy the file into the skill (references/ or assets/) and link to the copy".to_owned());
                seen.insert(link.target);
            }
            continue;
        };
        if seen.contains(&link.target) {
            continue;
        }
        // One stat answers "does it exist", "is it a file" and "how long".
        let Some(stat) = stats.get(&path) else {
            sink.push(
                Code::BrokenLink,
                Some(pos),
                format!("'{}' is not a file in this skill", link.target),
            )
            .help = Some("fix the path, or add the file to the skill".to_owned());
            seen.insert(link.target);
            continue;
        };
        if nested
            && path
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("md"))
            && stat.is_file
            && !names_skill_md(&path)
        {
            linked_md.push(LinkedMd {
                path,
                target: link.target.clone(),
                pos,
                len: stat.len,
            });
        }
        seen.insert(link.target);
    }
    nested_references(dir, &linked_md, &mut stats, sink);
}

/// The link targets of a linked file's start (at most
/// [`MAX_LINT_LINKED_FILE_BYTES`]): open, one `read` into this thread's
/// reusable buffer when the file is as long as its `stat` said, close. The open does not block
/// (a FIFO swapped in after the `stat` reads as empty). `None` when it
/// cannot be read or is not UTF-8.
fn linked_targets(path: &Path, len: u64, stats: &Stats<'_>) -> Option<Vec<String>> {
    thread_local! {
        static BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    #[cfg(test)]
    tests::LINK_IO.with(|io| io.set((io.get().0, io.get().1 + 1)));
    let file = match stats.at(path) {
        Some((fd, rel)) => {
            use rustix::fs::{Mode, OFlags};
            let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
            std::fs::File::from(rustix::fs::openat(fd, rel, flags, Mode::empty()).ok()?)
        }
        None => std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
            .open(path)
            .ok()?,
    };
    crate::fs::read::with_sized_read(&BUFFER, file, len, MAX_LINT_LINKED_FILE_BYTES, |read| {
        let bytes = read.ok()?;
        // A file longer than the limit is scanned up to it, less a
        // character the limit cut.
        let cut = u64::try_from(bytes.len()).is_ok_and(|n| n >= MAX_LINT_LINKED_FILE_BYTES);
        let text = crate::fs::read::utf8_cut(bytes, cut).ok()?;
        Some(link_targets(text))
    })
}

/// Spec: keep file references one level deep from SKILL.md.
fn nested_references(dir: &Path, linked: &[LinkedMd], stats: &mut Stats<'_>, sink: &mut Sink<'_>) {
    // The link targets of each file read (`None`: unreadable): a file
    // linked twice (`references/a.md`, `./references/a.md`) is read once.
    let mut read: Vec<(&Path, Option<Vec<String>>)> = Vec::new();
    for LinkedMd {
        path,
        target,
        pos,
        len,
    } in linked.iter().take(MAX_LINT_LINKED_FILES)
    {
        // Both come from `resolve_inside` on the same folder: the same path
        // is the same bytes (no component-wise `Path` comparison).
        let i = match read
            .iter()
            .position(|(p, _)| p.as_os_str() == path.as_os_str())
        {
            Some(i) => i,
            None => {
                let targets = linked_targets(path, *len, stats);
                read.push((path, targets));
                read.len() - 1
            }
        };
        let Some(targets) = &read[i].1 else {
            continue;
        };
        let from = Path::new(target).parent().unwrap_or(Path::new(""));
        let onward: Vec<&str> = targets
            .iter()
            .filter(|t| {
                resolve_inside(dir, from, t).is_some_and(|p| {
                    // Both come from `resolve_inside` on the same folder: the
                    // same path is the same bytes.
                    p.as_os_str() != path.as_os_str()
                        && !names_skill_md(&p)
                        && stats.get(&p).is_some_and(|s| s.is_file)
                })
            })
            .map(String::as_str)
            .collect();
        if let Some(first) = onward.first() {
            sink.push(
                Code::NestedReference,
                Some(*pos),
                format!(
                    "'{target}' links on to '{first}'{}; keep references one level deep from SKILL.md",
                    if onward.len() > 1 {
                        format!(" and {} more", onward.len() - 1)
                    } else {
                        String::new()
                    }
                ),
            )
            .help = Some(format!("link '{first}' from SKILL.md directly"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        /// The link checks' file-system calls on this thread: `stat`s and
        /// linked files opened.
        pub(super) static LINK_IO: std::cell::Cell<(usize, usize)> =
            const { std::cell::Cell::new((0, 0)) };
    }

    #[test]
    fn link_checks_run_only_when_their_codes_are_reported() {
        use crate::spec::options::ValidationOptions;
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("references")).unwrap();
        std::fs::write(dir.path().join("references/a.md"), "See [b](b.md).\n").unwrap();
        std::fs::write(dir.path().join("references/b.md"), "b\n").unwrap();
        let text = "Read [a](references/a.md) and [gone](references/gone.md).\n";
        let strict = ValidationOptions::strict;
        let allow = |codes: &[Code]| ValidationOptions {
            allow: codes.to_vec(),
            ..strict()
        };
        // (options, (stats, files read), codes reported)
        let cases = [
            (
                strict(),
                (3, 1),
                vec![Code::BrokenLink, Code::NestedReference],
            ),
            (
                allow(&[Code::NestedReference]),
                (2, 0),
                vec![Code::BrokenLink],
            ),
            (
                allow(&[Code::BrokenLink]),
                (3, 1),
                vec![Code::NestedReference],
            ),
            (
                allow(&[Code::BrokenLink, Code::NestedReference]),
                (0, 0),
                vec![],
            ),
            (
                ValidationOptions {
                    quiet: true,
                    ..strict()
                },
                (0, 0),
                vec![],
            ),
            (
                ValidationOptions {
                    quiet: true,
                    deny: vec![Code::NestedReference],
                    ..strict()
                },
                (3, 1),
                vec![Code::NestedReference],
            ),
        ];
        for (options, io, codes) in cases {
            LINK_IO.with(|c| c.set((0, 0)));
            let mut sink = Sink::new(&options);
            let folder = SkillFolder {
                path: dir.path(),
                fd: None,
            };
            body(text, 5, Some(folder), &mut sink);
            let reported: Vec<Code> = sink
                .diagnostics
                .iter()
                .map(|d| d.code)
                .filter(|c| matches!(c, Code::BrokenLink | Code::NestedReference))
                .collect();
            assert_eq!(reported, codes, "{options:?}");
            assert_eq!(LINK_IO.with(|c| c.get()), io, "{options:?}");
        }
    }

    /// The line-by-line scanner [`extract_links`] replaced, kept as the
    /// reference for its property test.
    ///
    /// Relative links and bare resource paths in `text`. Markdown links inside
    /// fenced code blocks are examples and are skipped; bare `scripts/…` paths are
    /// collected everywhere, since that is how commands name them.
    fn extract_links_by_line(text: &str) -> Vec<Link> {
        let bytes = text.as_bytes();
        let mut out = Vec::new();
        let mut fence: Option<&str> = None;
        let mut start = 0;
        let mut line_no = 0;
        // Line by line, as `str::lines` splits them; one search per line finds
        // its end or its first `]` or `/` (every link holds one; most lines
        // have neither, and need only the fence check).
        while start < bytes.len() {
            let (end, has_link_bytes) = match memchr::memchr3(b'\n', b']', b'/', &bytes[start..]) {
                Some(i) if bytes[start + i] == b'\n' => (start + i, false),
                Some(i) => (
                    memchr::memchr(b'\n', &bytes[start + i..])
                        .map_or(bytes.len(), |j| start + i + j),
                    true,
                ),
                None => (bytes.len(), false),
            };
            let raw = &text[start..end];
            let line = raw.strip_suffix('\r').unwrap_or(raw);
            // Most lines start with a visible ASCII character: nothing to trim.
            let trimmed = match line.as_bytes().first() {
                Some(&b) if b > b' ' && b < 0x80 => line,
                _ => line.trim_start(),
            };
            toggle_fence(&mut fence, trimmed);
            if has_link_bytes {
                if fence.is_none() {
                    markdown_links(line, trimmed, line_no, true, &mut out);
                }
                bare_paths(line, line_no, true, &mut out);
            }
            start = end + 1;
            line_no += 1;
        }
        out.sort_by_key(|l| (l.line, l.column));
        out.dedup_by(|a, b| a.line == b.line && a.target == b.target);
        out
    }

    /// Pieces of Markdown that move the scanners' state: fences of both
    /// kinds (indented, longer, with an info string, after text), inline code,
    /// links of every form, bare resource paths, line ends of both kinds,
    /// Unicode whitespace and multi-byte text.
    const MARKDOWN_PIECES: &[&str] = &[
        "```",
        "~~~",
        "````",
        "  ```md",
        "\t~~~",
        "\u{a0}```",
        "x ```",
        "`",
        "``",
        "[a](references/x.md)",
        "[b](<references/y z.md>)",
        "[c](scripts/run.sh \"t\")",
        "[id]: assets/a.png",
        "[^1]: notes.md",
        "[x]:",
        "](",
        "]",
        "[",
        "/",
        "//",
        "scripts/run.py",
        "references/a.md.",
        "assets/logo.png,",
        "scripts/t.py:15",
        "(scripts/x.sh)",
        "scripts/*.md",
        "./scripts/y.sh",
        "https://x.io/scripts/a",
        "references/../../up.md",
        "a",
        "é",
        "日本",
        " ",
        "\t",
        "\u{2003}",
        "\n",
        "\n",
        "\r\n",
        "\r",
        "%20",
        "#top",
    ];

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        #[test]
        fn the_whole_text_link_scanner_finds_what_the_line_scanner_found(
            pieces in proptest::collection::vec(proptest::sample::select(MARKDOWN_PIECES), 0..80)
        ) {
            let text = pieces.concat();
            proptest::prop_assert_eq!(extract_links(&text), extract_links_by_line(&text), "{:?}", text);
        }

        #[test]
        fn the_unnumbered_scan_finds_the_targets_of_the_numbered_one_in_order(
            pieces in proptest::collection::vec(proptest::sample::select(MARKDOWN_PIECES), 0..80)
        ) {
            let text = pieces.concat();
            let numbered: Vec<String> = extract_links(&text).into_iter().map(|l| l.target).collect();
            proptest::prop_assert_eq!(link_targets(&text), numbered, "{:?}", text);
        }

        #[test]
        fn a_bare_path_ends_where_the_character_search_ends_it(
            pieces in proptest::collection::vec(proptest::sample::select(MARKDOWN_PIECES), 0..40)
        ) {
            let text = pieces.concat();
            let by_chars = text.find(|c: char| c.is_whitespace() || "`'\"()[]<>,;|&*{}$".contains(c));
            proptest::prop_assert_eq!(path_end(&text), by_chars, "{:?}", text);
        }

        #[test]
        fn the_body_line_count_is_the_count_of_str_lines(
            pieces in proptest::collection::vec(proptest::sample::select(MARKDOWN_PIECES), 0..40)
        ) {
            let text = pieces.concat();
            proptest::prop_assert_eq!(line_count(&text), text.lines().count(), "{:?}", text);
        }
    }

    #[test]
    fn fence_lines_count_only_markers_after_whitespace() {
        let t = "```\nx ```\n  ~~~~ a\n\u{a0}```\n`` ` ```\n";
        assert_eq!(fence_lines(t), vec![(0, "```"), (10, "~~~"), (19, "```")]);
    }

    fn targets(text: &str) -> Vec<String> {
        extract_links(text).into_iter().map(|l| l.target).collect()
    }

    #[test]
    fn markdown_links_and_bare_paths_are_found() {
        let t =
            "See [guide](references/GUIDE.md#top) and run scripts/run.py.\n[x]: assets/a%20b.png\n";
        assert_eq!(
            targets(t),
            vec!["references/GUIDE.md", "scripts/run.py", "assets/a b.png"]
        );
    }

    #[test]
    fn urls_anchors_and_placeholders_are_not_links() {
        let t = "[a](https://x.io/a) [b](#sec) [c](mailto:a@b) scripts/<name>.py scripts/{x}.sh [d](/etc/passwd)";
        assert!(targets(t).is_empty(), "{:?}", targets(t));
    }

    #[test]
    fn markdown_links_in_fences_are_examples() {
        let t = "```md\n[guide](references/missing.md)\n```\n";
        assert!(targets(t).is_empty());
    }

    #[test]
    fn links_keep_their_lines_across_crlf_blank_and_last_lines() {
        let t = "a\r\n\r\n[x](scripts/a.sh)\r\n```\n[y](references/b.md) scripts/c.sh\n```\nassets/d.png";
        let found: Vec<(String, usize)> = extract_links(t)
            .into_iter()
            .map(|l| (l.target, l.line))
            .collect();
        assert_eq!(
            found,
            [
                ("scripts/a.sh".to_owned(), 2),
                ("scripts/c.sh".to_owned(), 4),
                ("assets/d.png".to_owned(), 6)
            ]
        );
    }

    #[test]
    fn lines_match_str_lines() {
        for text in ["", "a", "a\n", "a\r\nb", "\n\nx\r\n", "x\ry\n"] {
            assert_eq!(
                lines(text).collect::<Vec<_>>(),
                text.lines().collect::<Vec<_>>(),
                "{text:?}"
            );
        }
    }

    #[test]
    fn links_inside_inline_code_are_examples() {
        let t =
            "Write `[name](references/x.md)` or ``[a](b.md) `x` `` like [real](references/r.md).\n";
        assert_eq!(targets(t), vec!["references/r.md"]);
        // An unclosed backtick is literal text: the link after it counts.
        assert_eq!(
            targets("a ` b [c](references/c.md)"),
            vec!["references/c.md"]
        );
    }

    #[test]
    fn a_line_number_after_a_path_is_not_part_of_it() {
        assert_eq!(
            targets("See `scripts/tool.py:15` and scripts/b.sh:3:1 or scripts/c.sh"),
            vec!["scripts/tool.py", "scripts/b.sh", "scripts/c.sh"]
        );
    }

    #[test]
    fn footnotes_are_not_links() {
        let t = "Data from GitHub.[^1]\n\n[^1]: GitHub Blog.\n[^2]: See notes.md\n[ref]: references/r.md\n";
        assert_eq!(targets(t), vec!["references/r.md"]);
    }

    #[test]
    fn reference_definitions_with_urls_or_titles() {
        let t =
            "[docs]: https://example.com/a \"Docs\"\n[guide]: references/guide.md \"The guide\"\n";
        assert_eq!(targets(t), vec!["references/guide.md"]);
    }

    #[test]
    fn placeholder_marker_counts_only_at_a_line_start() {
        assert_eq!(
            placeholder_line("# Title\n\nTODO: write the steps\n"),
            Some((2, 0))
        );
        assert_eq!(placeholder_line("a\n  - TODO: step\n"), Some((1, 4)));
        assert_eq!(placeholder_line("a\n3. TODO: step\n"), Some((1, 3)));
        assert_eq!(
            placeholder_line(
                "Keep a TODO: list in the repo.\n- add TODO: markers\n// TODO: later\n"
            ),
            None
        );
    }

    #[test]
    fn skill_md_is_named_by_the_last_component_only() {
        for path in [
            "SKILL.md",
            "/s/SKILL.md",
            "/s/references/SKILL.md",
            "/s/XSKILL.md",
            "/s/SKILL.md/",
            "/s/SKILL.md/.",
            "/s/SKILL.mdx",
            "/s/skill.md",
            "/s/.",
            "/",
        ] {
            assert_eq!(
                names_skill_md(Path::new(path)),
                Path::new(path).ends_with(SKILL_MD),
                "{path}"
            );
        }
    }

    /// The phrase-by-phrase search [`says_when`] replaced, kept as the
    /// reference for its property test.
    fn says_when_by_search(lower: &str) -> bool {
        TRIGGER_PHRASES.iter().any(|phrase| {
            lower.match_indices(phrase).any(|(i, _)| {
                i == 0
                    || !lower[..i]
                        .chars()
                        .next_back()
                        .is_some_and(char::is_alphanumeric)
            })
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        #[test]
        fn the_one_pass_trigger_search_answers_like_the_search_per_phrase(
            pieces in proptest::collection::vec(proptest::sample::select(&[
                "use", " ", "when", "use when", "ask", "task", "é", "日本", "x", "1", "-",
                "(", "trigger", "need", "re", "quest", "\u{a0}", "_", "if you", "Ä",
            ][..]), 0..30)
        ) {
            let text = pieces.concat().to_lowercase();
            proptest::prop_assert_eq!(says_when(&text), says_when_by_search(&text), "{:?}", text);
        }
    }

    #[test]
    fn trigger_phrases_count_only_at_word_starts() {
        assert!(says_when("use when the user asks"));
        assert!(says_when("extracts tables. use it for pdfs"));
        assert!(says_when("(trigger: pdf)"));
        assert!(!says_when("reuse the cache; misuse is rare"));
        assert!(!says_when("tasked with nothing"));
        assert!(says_when("é ask"));
        assert!(!says_when("éask"));
    }

    #[test]
    fn resolve_refuses_escapes() {
        let d = Path::new("/s");
        assert!(resolve_inside(d, Path::new(""), "../x").is_none());
        assert_eq!(
            resolve_inside(d, Path::new("references"), "../scripts/a.py"),
            Some(PathBuf::from("/s/scripts/a.py"))
        );
    }
}
