//! Scanning one text file: the pattern rules, the rules that pair two
//! facts (a secret read and a send; a download and `chmod +x`), hidden
//! instructions in HTML comments, hidden characters, and the grading of
//! each match (by host, by negation, by whether the text is an example).

use std::collections::HashMap;

use crate::finding::{Class, Finding, Severity};
use crate::hosts::{self, HostKind};
use crate::limits::{EXAMPLE_CONTEXT_LINES, MAX_FINDINGS_PER_CODE_PER_FILE, PROSE_PAIR_LINES};
use crate::patterns::{
    COMPILED, MAKE_EXECUTABLE_SIGNAL, NETWORK_USE_SIGNAL, PATTERNS, SECRET_SOURCE_SIGNAL, Scope,
};
use crate::rules::rule_of;
use crate::text::{Lines, MdLine, evidence, markdown_lines};
use crate::unicode;

/// One text file to scan.
pub(crate) struct TextFile<'a> {
    /// Path relative to the skill folder.
    pub(crate) path: &'a str,
    pub(crate) text: &'a str,
    /// Documentation rather than code.
    pub(crate) prose: bool,
    /// Markdown.
    pub(crate) markdown: bool,
}

/// What the skill as a whole tells the scanner.
pub(crate) struct SkillContext {
    /// The skill is about security: its documentation quotes attacks.
    pub(crate) security_topic: bool,
}

/// Facts about a file kept for the skill-level rules.
#[derive(Default)]
pub(crate) struct FileFacts {
    /// First network use in code: (line, evidence).
    pub(crate) network_use: Option<(u32, u32, String)>,
}

struct Collector<'a> {
    path: &'a str,
    lines: &'a Lines<'a>,
    md: Option<Vec<MdLine>>,
    security_topic: bool,
    out: Vec<Finding>,
    seen: HashMap<(&'static str, u32), ()>,
    per_code: HashMap<&'static str, usize>,
}

impl Collector<'_> {
    /// Adds a finding of `code` at byte range `[start, end)` of the text,
    /// with `severity` (before the example rule) and `message`.
    fn add(
        &mut self,
        code: &'static str,
        start: usize,
        end: usize,
        severity: Severity,
        message: String,
    ) {
        let Some(rule) = rule_of(code) else { return };
        let index = self.lines.index_of(start);
        let (line_no, col) = self.lines.position(start);
        if self.seen.insert((code, line_no), ()).is_some() {
            return;
        }
        let count = self.per_code.entry(code).or_insert(0);
        *count += 1;
        if *count > MAX_FINDINGS_PER_CODE_PER_FILE {
            return;
        }
        let (ls, le) = self.lines.range(index);
        let line = self.lines.line(index);
        let s = start.saturating_sub(ls).min(line.len());
        // Text in quotes is quoted, not said: `like "ignore previous ..."`.
        let quoted = line[..s].ends_with(['"', '\'', '“', '‘', '«']);
        let (severity, message) =
            self.grade_example(rule.class, code, index, quoted, severity, message);
        let e = end.min(le).saturating_sub(ls).max(s);
        self.out.push(Finding {
            code: code.to_owned(),
            severity,
            class: rule.class,
            file: self.path.to_owned(),
            line: Some(line_no),
            column: Some(col),
            evidence: evidence(line, s, e),
            message,
            help: Some(rule.help.to_owned()),
            allowed: None,
        });
    }

    /// In documentation, a match the nearby text marks as an example or a
    /// warning ("attackers use", "never run") is lowered one level, two in
    /// a skill about security. Hidden text is never an example, and code
    /// files are never lowered.
    fn grade_example(
        &self,
        class: Class,
        code: &str,
        index: usize,
        quoted: bool,
        severity: Severity,
        message: String,
    ) -> (Severity, String) {
        let Some(_) = &self.md else {
            return (severity, message);
        };
        let never = matches!(
            code,
            "injection.tag-characters"
                | "injection.bidi"
                | "injection.zero-width"
                | "injection.homoglyph"
                | "injection.html-comment"
        ) || class == Class::Unanalysable
            || class == Class::CapabilityMismatch;
        if never {
            return (severity, message);
        }
        // In a fenced block the words before the fence introduce it.
        let md = self.md.as_deref().unwrap_or(&[]);
        let mut top = index;
        while top > 0
            && md.get(top) == Some(&MdLine::Fence)
            && md.get(top - 1) == Some(&MdLine::Fence)
        {
            top -= 1;
        }
        let from = top.saturating_sub(EXAMPLE_CONTEXT_LINES);
        let marked = (from..=index).any(|i| has_marker(self.lines.line(i).as_bytes()))
            || self.lines.line(index).trim_start().starts_with('|')
            || quoted;
        let steps = u8::from(marked) + u8::from(self.security_topic);
        let lowered = severity.lowered(steps);
        if lowered == severity {
            return (severity, message);
        }
        (
            lowered,
            format!(
                "{message} (in documentation marked as an example or warning{}: {severity} lowered to {lowered})",
                if self.security_topic {
                    " of a security skill"
                } else {
                    ""
                }
            ),
        )
    }
}

/// Scans one text file; findings in file order.
pub(crate) fn scan(
    file: &TextFile<'_>,
    skill: &SkillContext,
    facts: &mut FileFacts,
) -> Vec<Finding> {
    let lines = Lines::new(file.text);
    let md = file.markdown.then(|| markdown_lines(&lines));
    let mut c = Collector {
        path: file.path,
        lines: &lines,
        md,
        security_topic: skill.security_topic,
        out: Vec::new(),
        seen: HashMap::new(),
        per_code: HashMap::new(),
    };
    let bytes = file.text.as_bytes();
    let compiled = &*COMPILED;
    let active = compiled.active(bytes);
    for (pattern_index, pattern) in PATTERNS.iter().enumerate() {
        let applies = match pattern.scope {
            Scope::Any => true,
            Scope::Prose => file.prose,
            Scope::Code => !file.prose,
        };
        if !active[pattern_index] || !applies {
            continue;
        }
        for m in compiled.each[pattern_index].find_iter(bytes) {
            let index = lines.index_of(m.start());
            let line = lines.line(index).as_bytes();
            if let Some((severity, message)) =
                grade(pattern.code, m.as_bytes(), line, &lines, index, &c)
            {
                c.add(pattern.code, m.start(), m.end(), severity, message);
            }
        }
    }
    let signal = |s: usize| active[PATTERNS.len() + s];
    if signal(MAKE_EXECUTABLE_SIGNAL) {
        download_then_run(&lines, &mut c);
    }
    if signal(SECRET_SOURCE_SIGNAL) {
        exfiltration(&lines, file.prose, &mut c);
    }
    if file.markdown && memchr::memmem::find(bytes, b"<!--").is_some() {
        html_comments(file.text, &mut c);
    }
    for hit in unicode::scan(&lines) {
        if let Some(rule) = rule_of(hit.code) {
            let message = format!("{}: {}", rule.title, hit.note);
            let severity = if hit.raised {
                Severity::High
            } else {
                rule.severity
            };
            c.add(hit.code, hit.at, hit.at + hit.len, severity, message);
        }
    }
    if !file.prose
        && signal(NETWORK_USE_SIGNAL)
        && let Some(m) = compiled.network_use.find(bytes)
    {
        let index = lines.index_of(m.start());
        let (line, col) = lines.position(m.start());
        let ls = lines.range(index).0;
        facts.network_use = Some((
            line,
            col,
            evidence(lines.line(index), m.start() - ls, m.end() - ls),
        ));
    }
    let mut out = c.out;
    out.sort_by(|a, b| (a.line, a.column, &a.code).cmp(&(b.line, b.column, &b.code)));
    out
}

/// The severity and message of one match, or `None` when it does not count
/// (a warning rather than a request; a data URI rather than a blob).
fn grade(
    code: &'static str,
    matched: &[u8],
    line: &[u8],
    lines: &Lines<'_>,
    index: usize,
    c: &Collector<'_>,
) -> Option<(Severity, String)> {
    let rule = rule_of(code)?;
    match code {
        "exec.pipe-to-shell" | "prereq.download-installer" => {
            let host = hosts::worst_host(if code == "prereq.download-installer" {
                matched
            } else {
                line
            });
            if code == "prereq.download-installer" {
                // A script piped to a shell is reported by its own rule.
                let piped = PATTERNS
                    .iter()
                    .zip(&COMPILED.each)
                    .any(|(p, r)| p.code == "exec.pipe-to-shell" && r.is_match(line));
                if piped {
                    return None;
                }
                // An archive (zip, 7z, rar) is data unless the text around
                // it says to install or run what is inside.
                let lower = matched.to_ascii_lowercase();
                let archive = [b".zip".as_slice(), b".7z", b".rar"]
                    .iter()
                    .any(|e| memchr::memmem::find(&lower, e).is_some());
                let from = index.saturating_sub(2);
                let installing = (from..=index)
                    .any(|i| COMPILED.installer_words.is_match(lines.line(i).as_bytes()));
                if archive && !installing {
                    return Some((
                        Severity::Low,
                        format!(
                            "documentation links an archive to download {}",
                            host.describe()
                        ),
                    ));
                }
            }
            // A password next to the download makes it the ClawHavoc
            // pattern: reported by prereq.password-archive on its own line.
            let what = if code == "exec.pipe-to-shell" {
                "code downloaded and piped into a shell or interpreter"
            } else {
                "documentation links an installer or archive to download"
            };
            let advice = match host {
                HostKind::Local | HostKind::WellKnown => {
                    "; review the script before running it, or install through a package manager"
                }
                HostKind::CodeHost => "; pin a commit or release and check a checksum",
                _ => "",
            };
            Some((
                host.severity(),
                format!("{what} {}{advice}", host.describe()),
            ))
        }
        "creds.ask-seed-phrase" | "creds.ask-password" | "creds.ask-token" => {
            // "never share your seed phrase", "enter your password when
            // prompted by sudo": advice, not a request.
            if negated(line, matched) || COMPILED.os_prompt.is_match(line) {
                return None;
            }
            Some((rule.severity, rule.title.to_owned()))
        }
        "obfuscation.encoded-blob" => {
            let at = memchr::memmem::find(line, matched).unwrap_or(0);
            let before = &line[..at];
            if before.ends_with(b"base64,")
                || before.ends_with(b"sha512-")
                || before.ends_with(b"sha384-")
            {
                return None;
            }
            Some((rule.severity, rule.title.to_owned()))
        }
        "persist.startup-file" => {
            let lowered = line.to_ascii_lowercase();
            let fetches = [
                "curl",
                "wget",
                "base64",
                "/dev/tcp",
                " nc ",
                "python -c",
                "eval",
            ]
            .iter()
            .any(|w| memchr::memmem::find(&lowered, w.as_bytes()).is_some());
            if fetches {
                Some((
                    Severity::Critical,
                    "a shell start-up file gets a line that fetches or decodes code: it runs in every new shell".to_owned(),
                ))
            } else {
                Some((rule.severity, rule.title.to_owned()))
            }
        }
        "safety.bypass-approvals" if c.md.is_some() && !matched.starts_with(b"-") => {
            // Prose that tells the reader to keep a protection on ("do not
            // disable the sandbox") is no instruction to turn it off.
            if negated(line, matched) {
                return None;
            }
            Some((rule.severity, rule.title.to_owned()))
        }
        _ => Some((rule.severity, rule.title.to_owned())),
    }
}

/// A word marking an example or a warning, as a word of prose: not part
/// of a host name or path (`updates.example.invalid` marks nothing).
fn has_marker(line: &[u8]) -> bool {
    COMPILED.example_marker.find_iter(line).any(|m| {
        let before = m.start().checked_sub(1).map(|i| line[i]);
        let after = line.get(m.end()).copied();
        let after2 = line.get(m.end() + 1).copied();
        let in_name = matches!(before, Some(b'.' | b'/' | b'@' | b'-' | b'_'))
            || matches!(after, Some(b'-' | b'_' | b'/'))
            || (after == Some(b'.') && after2.is_some_and(|b| b.is_ascii_alphanumeric()));
        !in_name
    })
}

/// Bytes of a line before a match searched for a negation.
const NEGATION_REACH: usize = 40;

/// A negation ("never", "do not") shortly before `matched` in `line`.
fn negated(line: &[u8], matched: &[u8]) -> bool {
    let at = memchr::memmem::find(line, matched).unwrap_or(0);
    let from = at.saturating_sub(NEGATION_REACH);
    COMPILED.negation.is_match(&line[from..at])
}

/// A download to a file followed (within 10 lines) by making a file
/// executable or starting it, graded by the download's host.
fn download_then_run(lines: &Lines<'_>, c: &mut Collector<'_>) {
    const WINDOW: usize = 10;
    let text = lines.text.as_bytes();
    let compiled = &*COMPILED;
    if !compiled.make_executable.is_match(text) || !compiled.download_to_file.is_match(text) {
        return;
    }
    let mut last_download: Option<(usize, HostKind)> = None;
    for i in 0..lines.len() {
        let line = lines.line(i).as_bytes();
        if compiled.download_to_file.is_match(line) && !hosts::urls(line).is_empty() {
            last_download = Some((i, hosts::worst_host(line)));
        }
        if let Some(m) = compiled.make_executable.find(line)
            && let Some((at, host)) = last_download.filter(|(at, _)| i - at <= WINDOW)
        {
            let (ls, _) = lines.range(i);
            c.add(
                "exec.download-then-run",
                ls + m.start(),
                ls + m.end(),
                host.severity(),
                format!(
                    "a file downloaded {} (line {}) is made executable or run",
                    host.describe(),
                    at + 1
                ),
            );
            last_download = None;
        }
    }
}

/// Secrets read and sent: in code anywhere in the same file, in
/// documentation within a few lines (one instruction).
fn exfiltration(lines: &Lines<'_>, prose: bool, c: &mut Collector<'_>) {
    let text = lines.text.as_bytes();
    let compiled = &*COMPILED;
    let sources: Vec<(usize, usize)> = compiled
        .secret_source
        .find_iter(text)
        .map(|m| (m.start(), m.end()))
        .collect();
    if sources.is_empty() {
        return;
    }
    let sends: Vec<(usize, usize)> = compiled
        .network_send
        .find_iter(text)
        .map(|m| (m.start(), m.end()))
        .collect();
    for &(s, e) in &sources {
        let source_line = lines.position(s).0;
        let paired = sends.iter().find(|(ss, _)| {
            !prose || lines.position(*ss).0.abs_diff(source_line) <= PROSE_PAIR_LINES
        });
        match paired {
            Some(&(ss, _)) => {
                let send_line = lines.position(ss).0;
                c.add(
                    "exfil.secret-send",
                    s,
                    e,
                    Severity::Critical,
                    format!("secrets are read here and sent over the network (line {send_line})"),
                );
            }
            None => {
                if let Some(rule) = rule_of("exfil.secret-read") {
                    c.add(
                        "exfil.secret-read",
                        s,
                        e,
                        rule.severity,
                        rule.title.to_owned(),
                    );
                }
            }
        }
    }
}

/// HTML comments that hold instructions for a model.
fn html_comments(text: &str, c: &mut Collector<'_>) {
    let compiled = &*COMPILED;
    for cap in compiled.html_comment.captures_iter(text.as_bytes()) {
        let Some(body) = cap.get(1) else { continue };
        let shown =
            c.md.as_ref()
                .is_some_and(|md| md.get(c.lines.index_of(body.start())) == Some(&MdLine::Fence));
        if shown {
            continue;
        }
        if let Some(m) = compiled.comment_instruction.find(body.as_bytes()) {
            let at = body.start() + m.start();
            c.add(
                "injection.html-comment",
                at,
                body.start() + m.end(),
                Severity::High,
                "an HTML comment (invisible when rendered, read by the model) holds instructions"
                    .to_owned(),
            );
        }
    }
}
