//! Output: rustc-style human diagnostics and JSON.

use std::collections::HashMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anstyle::{AnsiColor, Style};
use skilldeck::{Diagnostic, Severity, SkillReport};

const BOLD: Style = Style::new().bold();
const ERROR: Style = AnsiColor::Red.on_default().bold();
const WARNING: Style = AnsiColor::Yellow.on_default().bold();
const BLUE: Style = AnsiColor::Blue.on_default().bold();
const GREEN: Style = AnsiColor::Green.on_default().bold();

/// Buffered standard output: one `write` per 8 KiB instead of one per line
/// (stdout is line-buffered; a 10,000-skill listing is 100,000 lines).
/// Callers `flush()` before returning.
pub fn stdout() -> io::BufWriter<io::StdoutLock<'static>> {
    io::BufWriter::new(io::stdout().lock())
}

/// Text for a terminal: every control character (ESC, BEL, NUL, C1, bidi
/// controls; the core's rule, [`skilldeck::spec::is_control`]) replaced by
/// U+FFFD; tab and newline kept. The one sanitising function of the CLI:
/// [`text_stdout`] applies it to whole outputs, the diagnostic renderer to
/// each piece it prints around its own colour codes, `main` to errors.
pub fn safe(text: &str) -> std::borrow::Cow<'_, str> {
    skilldeck::spec::replace_controls(text, false)
}

/// [`stdout`] for a text format (`text`, `markdown`, a catalog, an
/// activation): what is written passes through [`safe`], so no skill text
/// reaches the terminal raw. JSON output keeps JSON's own escaping (use
/// [`stdout`]).
pub fn text_stdout() -> io::BufWriter<Sanitized<io::StdoutLock<'static>>> {
    io::BufWriter::new(Sanitized {
        inner: io::stdout().lock(),
        carry: Vec::new(),
    })
}

/// [`text_stdout`], or plain [`stdout`] for JSON.
pub fn stdout_for(json: bool) -> Box<dyn Write> {
    if json {
        Box::new(stdout())
    } else {
        Box::new(text_stdout())
    }
}

/// A writer that applies [`safe`] to UTF-8 text split across writes
/// anywhere (an incomplete character is carried to the next write); bytes
/// that are not UTF-8 become U+FFFD.
pub struct Sanitized<W: Write> {
    inner: W,
    carry: Vec<u8>,
}

impl<W: Write> Sanitized<W> {
    /// Writes the complete characters of `carry`; keeps an incomplete tail.
    fn drain(&mut self, at_end: bool) -> io::Result<()> {
        let mut pos = 0;
        while pos < self.carry.len() {
            match std::str::from_utf8(&self.carry[pos..]) {
                Ok(text) => {
                    self.inner.write_all(safe(text).as_bytes())?;
                    pos = self.carry.len();
                }
                Err(e) => {
                    let valid = e.valid_up_to();
                    let text = std::str::from_utf8(&self.carry[pos..pos + valid]).unwrap_or("");
                    self.inner.write_all(safe(text).as_bytes())?;
                    pos += valid;
                    match e.error_len() {
                        Some(bad) => {
                            self.inner.write_all("\u{FFFD}".as_bytes())?;
                            pos += bad;
                        }
                        None if at_end => {
                            self.inner.write_all("\u{FFFD}".as_bytes())?;
                            pos = self.carry.len();
                        }
                        None => break,
                    }
                }
            }
        }
        self.carry.drain(..pos);
        Ok(())
    }
}

impl<W: Write> Write for Sanitized<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.carry.extend_from_slice(buf);
        self.drain(false)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

impl<W: Write> Drop for Sanitized<W> {
    fn drop(&mut self) {
        // An incomplete character at the very end; nothing to report to.
        let _ = self.drain(true);
        let _ = self.inner.flush();
    }
}

/// [`stdout`] with ANSI colours kept on a terminal and stripped elsewhere
/// (and with `NO_COLOR`).
/// Buffered on both sides of the colour stripper: above it, so many small
/// writes (serde's) reach it in large chunks; below it, because stripping
/// splits the text at every escape, and over the line-buffered stdout each
/// piece with a newline was a `write` call (7,833 for the corpus's
/// diagnostics).
pub fn colored_stdout() -> io::BufWriter<anstream::AutoStream<Box<dyn Write>>> {
    let choice = anstream::AutoStream::choice(&io::stdout());
    let buffered: Box<dyn Write> = Box::new(stdout());
    io::BufWriter::new(anstream::AutoStream::new(buffered, choice))
}

/// Writes all reports as one JSON array: [`write_json`]'s bytes exactly.
///
/// Each report is serialized into its own buffer in parallel, then the
/// buffers are written in order inside the array, one level deeper (every
/// line break of a report gains the array's two-space indent: JSON strings
/// hold no raw line breaks, so each one is the pretty printer's).
pub fn json(out: &mut dyn Write, reports: &[SkillReport]) -> io::Result<()> {
    use rayon::prelude::*;
    if reports.is_empty() {
        return write_json(out, reports);
    }
    let parts: Vec<io::Result<Vec<u8>>> = reports
        .par_iter()
        .map(|report| {
            let mut buf = Vec::new();
            write_json(&mut buf, report)?;
            // `write_json` ends with a newline; the array adds its own.
            buf.pop();
            Ok(indent_lines(&buf))
        })
        .collect();
    out.write_all(b"[")?;
    for (i, part) in parts.into_iter().enumerate() {
        out.write_all(if i == 0 { b"\n  " } else { b",\n  " })?;
        out.write_all(&part?)?;
    }
    out.write_all(b"\n]\n")
}

/// `json` with two spaces after every line break.
fn indent_lines(json: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(json.len() + json.len() / 8);
    let mut start = 0;
    for at in memchr::memchr_iter(b'\n', json) {
        out.extend_from_slice(&json[start..=at]);
        out.extend_from_slice(b"  ");
        start = at + 1;
    }
    out.extend_from_slice(&json[start..]);
    out
}

/// Pretty JSON plus a newline; I/O errors keep their kind (a closed pipe
/// stays a closed pipe, so it can be ignored quietly).
pub fn write_json<T: serde::Serialize + ?Sized>(out: &mut dyn Write, value: &T) -> io::Result<()> {
    crate::format::to_writer_safe(&mut *out, value).map_err(|e| match e.io_error_kind() {
        Some(kind) => io::Error::new(kind, e),
        None => io::Error::other(e),
    })?;
    writeln!(out)
}

/// Writes every diagnostic like rustc, then the summary line.
///
/// Each report is rendered into its own buffer in parallel (a report's
/// diagnostics name its own files, so each has its own source cache), then
/// the buffers are written in report order: the output is the serial one,
/// byte for byte.
pub fn human(
    out: &mut dyn Write,
    reports: &[SkillReport],
    tree_problems: &[Diagnostic],
    cap: u64,
) -> io::Result<()> {
    use rayon::prelude::*;
    let mut sources = Sources::new(cap);
    for d in tree_problems {
        diagnostic(out, d, &mut sources)?;
    }
    let rendered: Vec<Vec<u8>> = reports
        .par_iter()
        .map(|report| {
            let mut buf = Vec::new();
            let mut sources = Sources::new(cap);
            for d in &report.diagnostics {
                // Writing to a Vec cannot fail.
                let _ = diagnostic(&mut buf, d, &mut sources);
            }
            buf
        })
        .collect();
    for buf in &rendered {
        out.write_all(buf)?;
    }
    let total = reports.len();
    let valid = reports.iter().filter(|r| r.valid).count();
    let warnings: usize = reports
        .iter()
        .map(SkillReport::warning_count)
        .sum::<usize>()
        + tree_problems
            .iter()
            .filter(|d| d.severity == Severity::Warning)
            .count();
    let style = if valid == total { GREEN } else { ERROR };
    writeln!(
        out,
        "{style}{total} skill{}{style:#}: {valid} valid, {} invalid, {warnings} warning{}",
        if total == 1 { "" } else { "s" },
        total - valid,
        if warnings == 1 { "" } else { "s" },
    )
}

fn diagnostic(out: &mut dyn Write, d: &Diagnostic, sources: &mut Sources) -> io::Result<()> {
    let level = match d.severity {
        Severity::Error => ERROR,
        Severity::Warning => WARNING,
    };
    writeln!(
        out,
        "{level}{}[{}]{level:#}{BOLD}: {}{BOLD:#}",
        d.severity,
        d.code,
        safe(&d.message)
    )?;
    let Some(file) = &d.file else {
        if let Some(help) = &d.help {
            writeln!(out, "  {BLUE}={BLUE:#} {BOLD}help{BOLD:#}: {}", safe(help))?;
        }
        return writeln!(out);
    };
    let location = match (d.line, d.column) {
        (Some(l), Some(c)) => format!("{}:{l}:{c}", file.display()),
        (Some(l), None) => format!("{}:{l}", file.display()),
        _ => file.display().to_string(),
    };
    let location = safe(&location);
    writeln!(out, "  {BLUE}-->{BLUE:#} {location}")?;
    let source_line = d.line.and_then(|l| sources.line(file, l));
    let gutter = d.line.map_or(1, |l| l.to_string().len());
    let pad = " ".repeat(gutter);
    if let (Some(line_no), Some(text)) = (d.line, source_line.filter(|l| !l.trim().is_empty())) {
        let column = usize::try_from(d.column.unwrap_or(1).max(1)).unwrap_or(1);
        let shown: String = text
            .chars()
            .map(|c| match c {
                '\t' => ' ',
                c if skilldeck::spec::is_control(c) => skilldeck::spec::REPLACEMENT,
                c => c,
            })
            .collect();
        let width = shown.chars().count();
        let start = (column - 1).min(width);
        let len = usize::try_from(d.len.max(1))
            .unwrap_or(1)
            .min(width.saturating_sub(start).max(1));
        let (shown, caret_at, len) = window(&shown, width, start, len);
        writeln!(out, "{pad} {BLUE}|{BLUE:#}")?;
        writeln!(out, "{BLUE}{line_no}{BLUE:#} {BLUE}|{BLUE:#} {shown}")?;
        writeln!(
            out,
            "{pad} {BLUE}|{BLUE:#} {}{level}{}{level:#}",
            " ".repeat(caret_at),
            "^".repeat(len)
        )?;
    }
    if let Some(help) = &d.help {
        writeln!(
            out,
            "{pad} {BLUE}={BLUE:#} {BOLD}help{BOLD:#}: {}",
            safe(help)
        )?;
    }
    writeln!(out)
}

/// Widest source line shown whole; longer lines are shown as a window of
/// this many characters around the column, with `…` on each cut side.
const SOURCE_WINDOW_CHARS: usize = 80;

/// Characters of context kept before the column in a window.
const SOURCE_WINDOW_LEAD: usize = 20;

/// The part of a `width`-character line to show for a problem at character
/// `start` spanning `len`: the text, where the caret starts in it, and how
/// many carets fit.
fn window(line: &str, width: usize, start: usize, len: usize) -> (String, usize, usize) {
    if width <= SOURCE_WINDOW_CHARS {
        return (line.to_owned(), start, len);
    }
    let from = start
        .saturating_sub(SOURCE_WINDOW_LEAD)
        .min(width - SOURCE_WINDOW_CHARS);
    let to = from + SOURCE_WINDOW_CHARS;
    let mut text = String::new();
    let lead = usize::from(from > 0);
    if from > 0 {
        text.push('…');
    }
    text.extend(line.chars().skip(from).take(SOURCE_WINDOW_CHARS));
    if to < width {
        text.push('…');
    }
    let caret_at = start - from + lead;
    let len = len.min(to.saturating_sub(start)).max(1);
    (text, caret_at, len)
}

/// Source lines of files with diagnostics, read once each (through the same
/// safe reader as validation; bytes that are not UTF-8 are shown as U+FFFD,
/// so the line of a `not-utf8` error is quoted too). A file is kept whole with the byte offset of
/// each line start (one SIMD pass), not split into a `String` per line.
struct Sources {
    cap: u64,
    files: HashMap<PathBuf, Option<SourceFile>>,
}

struct SourceFile {
    text: String,
    /// Where each line starts, as `str::lines` splits them.
    starts: Vec<usize>,
}

impl SourceFile {
    fn new(text: String) -> Self {
        let starts = std::iter::once(0)
            .chain(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1))
            .filter(|&s| s < text.len())
            .collect();
        SourceFile { text, starts }
    }

    /// Line `index` (0-based) without its line end, as `str::lines` gives it.
    fn line(&self, index: usize) -> Option<&str> {
        let start = *self.starts.get(index)?;
        let end = self
            .starts
            .get(index + 1)
            .copied()
            .unwrap_or(self.text.len());
        let line = self.text.get(start..end)?;
        // `\r` ends a line only before `\n`.
        Some(match line.strip_suffix('\n') {
            Some(line) => line.strip_suffix('\r').unwrap_or(line),
            None => line,
        })
    }
}

impl Sources {
    fn new(cap: u64) -> Self {
        Sources {
            cap,
            files: HashMap::new(),
        }
    }

    fn line(&mut self, file: &Path, line: u32) -> Option<String> {
        let source = self.files.entry(file.to_path_buf()).or_insert_with(|| {
            skilldeck::fs::read_skill_md_lossy(file, self.cap)
                .ok()
                .map(SourceFile::new)
        });
        let index = usize::try_from(line).ok()?.checked_sub(1)?;
        source
            .as_ref()?
            .line(index)
            .map(|l| l.trim_start_matches('\u{FEFF}').to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_lines_are_the_lines_str_lines_gives() {
        for text in [
            "",
            "a",
            "a\n",
            "a\r\nb",
            "\n\nx\r\n",
            "x\ry\n",
            "\r\n",
            "a\n\n",
            "\u{FEFF}a\nb",
            "a\r",
            "a\r\r\n",
        ] {
            let file = SourceFile::new(text.to_owned());
            let expected: Vec<&str> = text.lines().collect();
            let got: Vec<&str> = (0..expected.len() + 2)
                .map_while(|i| file.line(i))
                .collect();
            assert_eq!(got, expected, "{text:?}");
        }
    }
}
