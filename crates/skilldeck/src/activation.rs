//! Activation: a skill's instructions, ready for a model's context.
//!
//! [`activate`] reads the skill's `SKILL.md` (the safe, size-capped reader of
//! [`crate::load`]: regular files only, never a blocking read on a FIFO),
//! drops the frontmatter, substitutes the arguments and lists the skill's
//! files. [`Activation::render`] wraps the result in the envelope the
//! agentskills.io client guide describes (or Claude Code's text form, or
//! JSON).
//!
//! # Substitution
//!
//! Claude Code's documented placeholders, in the body only:
//!
//! | placeholder | becomes |
//! |---|---|
//! | `$ARGUMENTS` | the whole argument string, as given |
//! | `$ARGUMENTS[N]`, `$N` | the N-th argument (0-based); `$` and *all* the digits that follow are the index (`$10` is the eleventh); out of range → empty |
//! | `$name` | the argument at `name`'s position in the `arguments` frontmatter field; out of range → empty |
//! | `${SKILL_DIR}`, `${CLAUDE_SKILL_DIR}` | the skill folder (absolute) |
//! | `\$` before any of the above | the placeholder's text, literally (the `\` is dropped) |
//!
//! Arguments are split shell-style: whitespace separates, `'…'` and `"…"`
//! group (quotes removed), a `\` escapes a quote, a `\` or a blank. `#` is
//! not a comment and other backslashes are kept (`#123`, `C:\dir` survive).
//! Unbalanced quotes fall back to a plain whitespace split; splitting never
//! fails. Everything else with a `$` stays as written: `$HOME`, `$PATH`,
//! `${HOME}` in shell snippets are untouched, as is `\$HOME`. A name matches
//! only as a whole word (`$file` does not match inside `$filename`).
//!
//! When arguments were given (not blank) and no argument placeholder appears,
//! `ARGUMENTS: <arguments>` is appended after a blank line, as Claude Code does.
//!
//! # Body
//!
//! The body is the text after the closing `---` line, with one leading blank
//! line and all trailing whitespace removed. Frontmatter fields (the
//! `arguments` names) come from the [`Skill`] (discovery's snapshot); the body
//! is read fresh on every activation. After substitution, every
//! `<skill_content` and `</skill_content` (any case) has its `<` replaced by
//! `&lt;`, so neither the body nor an argument can close the envelope or fake
//! a new one.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::fs::Metadata;
use std::path::PathBuf;

use crate::diagnostic::Diagnostic;
use crate::error::Error;
use crate::frontmatter;
use crate::limits;
use crate::load;
use crate::resources::ResourceEntry;
use crate::skill::Skill;

/// Limits of one activation; every default is a constant in [`crate::limits`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActivationOptions {
    /// Largest `SKILL.md` read (bytes).
    pub max_skill_md_bytes: u64,
    /// Longest argument string accepted (bytes).
    pub max_arguments_bytes: usize,
    /// Longest body after substitution (bytes).
    pub max_body_bytes: usize,
    /// Most resource files listed; the rest are counted.
    pub max_resources: usize,
}

impl Default for ActivationOptions {
    fn default() -> Self {
        ActivationOptions {
            max_skill_md_bytes: limits::MAX_SKILL_MD_BYTES,
            max_arguments_bytes: limits::MAX_ARGUMENTS_BYTES,
            max_body_bytes: limits::MAX_ACTIVATION_BODY_BYTES,
            max_resources: limits::MAX_ACTIVATION_RESOURCES,
        }
    }
}

/// An activated skill: what goes into the model's context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Activation {
    /// The skill's name.
    pub name: String,
    /// The body: frontmatter removed, arguments substituted, envelope tags
    /// neutralised.
    pub body: String,
    /// The skill folder, absolute, as discovered.
    pub skill_dir: PathBuf,
    /// The skill's files (without `SKILL.md`), sorted, at most
    /// [`ActivationOptions::max_resources`].
    pub resources: Vec<ResourceEntry>,
    /// How many more files there are beyond `resources`.
    pub resources_omitted: usize,
}

/// How an activation is rendered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ActivationFormat {
    /// The agentskills.io envelope: `<skill_content name="...">`.
    #[default]
    Xml,
    /// Claude Code's form: `Base directory for this skill: ...`.
    Text,
    /// One JSON object: `name`, `skill_dir`, `body`, `resources`,
    /// `resources_omitted`, in that order.
    Json,
}

impl ActivationFormat {
    /// Every format.
    pub const ALL: [ActivationFormat; 3] = [
        ActivationFormat::Xml,
        ActivationFormat::Text,
        ActivationFormat::Json,
    ];

    /// The lowercase name (`xml`, `text`, `json`).
    pub fn as_str(self) -> &'static str {
        match self {
            ActivationFormat::Xml => "xml",
            ActivationFormat::Text => "text",
            ActivationFormat::Json => "json",
        }
    }
}

impl std::fmt::Display for ActivationFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for ActivationFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ActivationFormat::ALL
            .into_iter()
            .find(|f| f.as_str() == s)
            .ok_or_else(|| format!("unknown format '{s}' (expected xml, text or json)"))
    }
}

/// The first line of the [`ActivationFormat::Text`] rendering, before the folder.
pub const TEXT_HEADER: &str = "Base directory for this skill: ";

/// The opening of the [`ActivationFormat::Xml`] envelope.
pub const XML_OPEN_TAG: &str = "<skill_content";

impl Activation {
    /// The activation in `format`.
    pub fn render(&self, format: ActivationFormat) -> String {
        match format {
            ActivationFormat::Xml => self.render_xml(),
            ActivationFormat::Text => self.render_text(),
            ActivationFormat::Json => self.render_json(),
        }
    }

    fn dir_text(&self) -> Cow<'_, str> {
        self.skill_dir.to_string_lossy()
    }

    fn render_xml(&self) -> String {
        let dir = self.dir_text();
        let dir = neutralise_envelope_tags(&dir);
        let mut out = String::with_capacity(
            self.body.len() + dir.len() + 200 + self.resources.len() * 48 + self.name.len(),
        );
        out.push_str(XML_OPEN_TAG);
        out.push_str(" name=\"");
        out.push_str(&escape_xml(&self.name));
        out.push_str("\">\n");
        if !self.body.is_empty() {
            out.push_str(&self.body);
            out.push_str("\n\n");
        }
        out.push_str("Skill directory: ");
        out.push_str(&dir);
        out.push_str("\nRelative paths in this skill are relative to the skill directory.\n");
        if !self.resources.is_empty() || self.resources_omitted > 0 {
            out.push_str("\n<skill_resources>\n");
            for r in &self.resources {
                out.push_str("  <file>");
                out.push_str(&escape_xml(&r.path));
                out.push_str("</file>\n");
            }
            if self.resources_omitted > 0 {
                let _ = writeln!(out, "  ... and {} more", self.resources_omitted);
            }
            out.push_str("</skill_resources>\n");
        }
        out.push_str("</skill_content>");
        out
    }

    fn render_text(&self) -> String {
        let dir = self.dir_text();
        let mut out =
            String::with_capacity(self.body.len() + dir.len() + 120 + self.resources.len() * 40);
        out.push_str(TEXT_HEADER);
        out.push_str(&dir);
        if !self.body.is_empty() {
            out.push_str("\n\n");
            out.push_str(&self.body);
        }
        if !self.resources.is_empty() || self.resources_omitted > 0 {
            out.push_str("\n\nSkill resources (relative to the base directory):\n");
            for r in &self.resources {
                out.push_str("- ");
                out.push_str(&r.path);
                out.push('\n');
            }
            if self.resources_omitted > 0 {
                let _ = writeln!(out, "- ... and {} more", self.resources_omitted);
            }
            out.truncate(out.trim_end_matches('\n').len());
        }
        out
    }

    fn render_json(&self) -> String {
        #[derive(serde::Serialize)]
        struct Json<'a> {
            name: &'a str,
            skill_dir: &'a str,
            body: &'a str,
            resources: Vec<&'a str>,
            resources_omitted: usize,
        }
        let dir = self.dir_text();
        let json = Json {
            name: &self.name,
            skill_dir: &dir,
            body: &self.body,
            resources: self.resources.iter().map(|r| r.path.as_str()).collect(),
            resources_omitted: self.resources_omitted,
        };
        // Strings and integers always serialise; the default is unreachable.
        serde_json::to_string(&json).unwrap_or_default()
    }
}

/// Activates `skill` with `arguments` (may be empty), with the default limits.
pub fn activate(skill: &Skill, arguments: &str) -> Result<Activation, Error> {
    activate_with(skill, arguments, &ActivationOptions::default())
}

/// [`activate`] with custom limits.
pub fn activate_with(
    skill: &Skill,
    arguments: &str,
    options: &ActivationOptions,
) -> Result<Activation, Error> {
    activate_stamped(skill, arguments, options).map(|(activation, _)| activation)
}

/// [`activate_with`], also returning the metadata of the `SKILL.md` that was
/// read (for the content cache's change check).
pub(crate) fn activate_stamped(
    skill: &Skill,
    arguments: &str,
    options: &ActivationOptions,
) -> Result<(Activation, Metadata), Error> {
    if arguments.len() > options.max_arguments_bytes {
        return Err(Error::ArgumentsTooLong {
            name: skill.name.clone(),
            len: arguments.len(),
            limit: options.max_arguments_bytes,
        });
    }
    let fail = |d: Diagnostic| Error::Activation {
        name: skill.name.clone(),
        diagnostic: Box::new(d),
    };
    let (text, meta) =
        load::read_skill_md_with_metadata(&skill.skill_md, options.max_skill_md_bytes)
            .map_err(fail)?;
    let text = text.strip_prefix('\u{FEFF}').unwrap_or(&text);
    let split = frontmatter::split(text).map_err(|d| fail(d.in_file(&skill.skill_md)))?;
    let body = strip_one_leading_blank_line(split.body).trim_end();
    let dir = skill.dir.to_string_lossy();
    let names = skill.argument_names();
    let substituted = Substitution {
        arguments,
        names: &names,
        skill_dir: &dir,
        words: None,
    }
    .apply(body, options.max_body_bytes)
    .ok_or_else(|| Error::ActivationTooLarge {
        name: skill.name.clone(),
        limit: options.max_body_bytes,
    })?;
    let body = match neutralise_envelope_tags(&substituted) {
        Cow::Borrowed(_) => substituted,
        Cow::Owned(s) => s,
    };
    let (resources, resources_omitted) = list_resources(skill, options);
    Ok((
        Activation {
            name: skill.name.clone(),
            body,
            skill_dir: skill.dir.clone(),
            resources,
            resources_omitted,
        },
        meta,
    ))
}

/// `body` without its first line when that line is blank.
fn strip_one_leading_blank_line(body: &str) -> &str {
    let line_end = memchr::memchr(b'\n', body.as_bytes());
    match line_end {
        Some(i) if body[..i].trim().is_empty() => &body[i + 1..],
        _ => body,
    }
}

/// What a `$` starts.
enum Placeholder {
    /// `$ARGUMENTS`.
    Whole,
    /// `$N`, `$ARGUMENTS[N]` (`None`: an index too large to represent).
    Index(Option<usize>),
    /// `$name`: the position of `name` in the `arguments` field.
    Named(usize),
    /// `${SKILL_DIR}`, `${CLAUDE_SKILL_DIR}`.
    SkillDir,
}

const SKILL_DIR_VARS: [&str; 2] = ["{SKILL_DIR}", "{CLAUDE_SKILL_DIR}"];
const ARGUMENTS: &str = "ARGUMENTS";

struct Substitution<'a> {
    arguments: &'a str,
    names: &'a [String],
    skill_dir: &'a str,
    /// The split arguments, computed on first use.
    words: Option<Vec<String>>,
}

impl Substitution<'_> {
    /// `body` with every placeholder replaced; `None` when the result would
    /// exceed `max_bytes`.
    fn apply(mut self, body: &str, max_bytes: usize) -> Option<String> {
        let bytes = body.as_bytes();
        let mut out = String::with_capacity(body.len().min(max_bytes));
        let push = |out: &mut String, piece: &str| -> Option<()> {
            if out.len() + piece.len() > max_bytes {
                return None;
            }
            out.push_str(piece);
            Some(())
        };
        let mut copied = 0;
        let mut search = 0;
        let mut used = false;
        while let Some(offset) = memchr::memchr(b'$', &bytes[search..]) {
            let dollar = search + offset;
            let Some((placeholder, end)) = placeholder_at(body, dollar, self.names) else {
                search = dollar + 1;
                continue;
            };
            if dollar > copied && bytes[dollar - 1] == b'\\' {
                push(&mut out, &body[copied..dollar - 1])?;
                push(&mut out, &body[dollar..end])?;
            } else {
                push(&mut out, &body[copied..dollar])?;
                let value = self.value(&placeholder);
                push(&mut out, value)?;
                used |= !matches!(placeholder, Placeholder::SkillDir);
            }
            copied = end;
            search = end;
        }
        push(&mut out, &body[copied..])?;
        if !used && !self.arguments.trim().is_empty() {
            out.truncate(out.trim_end().len());
            if !out.is_empty() {
                push(&mut out, "\n\n")?;
            }
            push(&mut out, "ARGUMENTS: ")?;
            push(&mut out, self.arguments)?;
        }
        Some(out)
    }

    fn value(&mut self, placeholder: &Placeholder) -> &str {
        let index = match placeholder {
            Placeholder::Whole => return self.arguments,
            Placeholder::SkillDir => return self.skill_dir,
            Placeholder::Index(None) => return "",
            Placeholder::Index(Some(i)) | Placeholder::Named(i) => *i,
        };
        let arguments = self.arguments;
        self.words
            .get_or_insert_with(|| split_arguments(arguments))
            .get(index)
            .map_or("", String::as_str)
    }
}

/// The placeholder starting at the `$` at byte `dollar`, and the byte just past it.
fn placeholder_at(body: &str, dollar: usize, names: &[String]) -> Option<(Placeholder, usize)> {
    let start = dollar + 1;
    let rest = &body[start..];
    if let Some(var) = SKILL_DIR_VARS.iter().find(|v| rest.starts_with(**v)) {
        return Some((Placeholder::SkillDir, start + var.len()));
    }
    let digits = leading_digits(rest);
    if digits > 0 {
        return Some((
            Placeholder::Index(rest[..digits].parse().ok()),
            start + digits,
        ));
    }
    if let Some(after) = rest.strip_prefix(ARGUMENTS) {
        if let Some(index) = after.strip_prefix('[') {
            let n = leading_digits(index);
            if n > 0 && index[n..].starts_with(']') {
                let end = start + ARGUMENTS.len() + 1 + n + 1;
                return Some((Placeholder::Index(index[..n].parse().ok()), end));
            }
        }
        if !starts_with_word_char(after) {
            return Some((Placeholder::Whole, start + ARGUMENTS.len()));
        }
    }
    let mut best: Option<(usize, usize)> = None;
    for (i, name) in names.iter().enumerate() {
        if rest.starts_with(name.as_str())
            && !starts_with_word_char(&rest[name.len()..])
            && best.is_none_or(|(_, len)| name.len() > len)
        {
            best = Some((i, name.len()));
        }
    }
    best.map(|(i, len)| (Placeholder::Named(i), start + len))
}

fn leading_digits(s: &str) -> usize {
    s.bytes().take_while(u8::is_ascii_digit).count()
}

fn starts_with_word_char(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_alphanumeric() || c == '_')
}

/// Joins separate arguments (a command line's words) into one argument
/// string that splits back into exactly those words: words with blanks,
/// quotes or backslashes, and empty words, are double-quoted.
pub fn join_arguments<S: AsRef<str>>(words: &[S]) -> String {
    let mut out = String::new();
    for (i, word) in words.iter().enumerate() {
        let word = word.as_ref();
        if i > 0 {
            out.push(' ');
        }
        let plain = !word.is_empty()
            && !word
                .chars()
                .any(|c| c.is_whitespace() || matches!(c, '"' | '\'' | '\\'));
        if plain {
            out.push_str(word);
        } else {
            out.push('"');
            for c in word.chars() {
                if matches!(c, '"' | '\\') {
                    out.push('\\');
                }
                out.push(c);
            }
            out.push('"');
        }
    }
    out
}

/// Splits an argument string shell-style, as `$N` sees it; unbalanced
/// quotes fall back to a whitespace split.
pub fn split_arguments(arguments: &str) -> Vec<String> {
    shell_split(arguments)
        .unwrap_or_else(|| arguments.split_whitespace().map(str::to_owned).collect())
}

/// Whitespace separates words; `'…'` and `"…"` group (inside double quotes,
/// `\"` and `\\` are escapes); outside quotes, `\` escapes a quote, a `\` or
/// a blank and is kept before anything else. `None` on an unclosed quote.
fn shell_split(s: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => word.push(c),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' if matches!(chars.peek(), Some('"' | '\\')) => {
                            word.push(chars.next()?)
                        }
                        c => word.push(c),
                    }
                }
            }
            '\\' if chars
                .peek()
                .is_some_and(|&n| matches!(n, '"' | '\'' | '\\') || n.is_whitespace()) =>
            {
                in_word = true;
                word.push(chars.next()?);
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Some(words)
}

/// True when the bytes after a `<` open or close our envelope tag (ASCII
/// case-insensitive).
fn is_envelope_tag(after_lt: &[u8]) -> bool {
    const TAG: &[u8] = b"skill_content";
    let t = after_lt.strip_prefix(b"/").unwrap_or(after_lt);
    t.get(..TAG.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(TAG))
}

/// `text` with the `<` of every `<skill_content` / `</skill_content` (any
/// case) replaced by `&lt;`; borrowed when there is none.
pub(crate) fn neutralise_envelope_tags(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    for i in memchr::memchr_iter(b'<', bytes) {
        if is_envelope_tag(&bytes[i + 1..]) {
            let o = out.get_or_insert_with(|| String::with_capacity(text.len() + 16));
            o.push_str(&text[copied..i]);
            o.push_str("&lt;");
            copied = i + 1;
        }
    }
    match out {
        None => Cow::Borrowed(text),
        Some(mut o) => {
            o.push_str(&text[copied..]);
            Cow::Owned(o)
        }
    }
}

/// `text` with `& < > " '` escaped for XML text and attribute values.
pub fn escape_xml(text: &str) -> Cow<'_, str> {
    if !text
        .bytes()
        .any(|b| matches!(b, b'&' | b'<' | b'>' | b'"' | b'\''))
    {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// The skill's files except its `SKILL.md`, as [`crate::list_resources`]
/// lists them (sorted, bounded, only files `read_resource` would return):
/// the first `max_resources` and a count of the rest. The listing is
/// advisory, so a folder that cannot be listed gives an empty list.
fn list_resources(skill: &Skill, options: &ActivationOptions) -> (Vec<ResourceEntry>, usize) {
    let Ok(list) = crate::resources::list_resources(skill) else {
        return (Vec::new(), 0);
    };
    let skill_md = skill
        .skill_md
        .file_name()
        .map(|n| n.to_string_lossy().into_owned());
    let mut files: Vec<ResourceEntry> = list
        .files
        .into_iter()
        .filter(|f| Some(&f.path) != skill_md.as_ref())
        .collect();
    let omitted = files.len().saturating_sub(options.max_resources) + list.omitted;
    files.truncate(options.max_resources);
    (files, omitted)
}

#[cfg(test)]
mod tests {
    proptest::proptest! {
        #[test]
        fn joined_arguments_split_back_into_the_same_words(
            words in proptest::collection::vec("[a-z \"'\\\\\t$]{0,6}", 0..5)
        ) {
            let joined = super::join_arguments(&words);
            proptest::prop_assert_eq!(super::split_arguments(&joined), words);
        }
    }

    use super::*;

    fn sub(body: &str, arguments: &str, names: &[&str]) -> String {
        let names: Vec<String> = names.iter().map(|s| (*s).to_owned()).collect();
        Substitution {
            arguments,
            names: &names,
            skill_dir: "/skills/x",
            words: None,
        }
        .apply(body, usize::MAX)
        .unwrap_or_default()
    }

    #[test]
    fn shell_split_groups_quotes_and_keeps_hash_and_backslashes() {
        assert_eq!(
            shell_split(r#"a "b c" 'd e' #12 C:\dir x\ y"#).unwrap(),
            ["a", "b c", "d e", "#12", r"C:\dir", "x y"]
        );
        assert_eq!(shell_split(r#""" ''"#).unwrap(), ["", ""]);
        assert_eq!(
            shell_split(r#"say "a \"q\" b""#).unwrap(),
            ["say", r#"a "q" b"#]
        );
    }

    #[test]
    fn unclosed_quote_is_not_a_shell_split() {
        assert!(shell_split(r#"a "b c"#).is_none());
        assert_eq!(split_arguments(r#"a "b c"#), ["a", "\"b", "c"]);
    }

    #[test]
    fn index_overflow_is_out_of_range() {
        assert_eq!(sub("[$99999999999999999999999999]", "a", &[]), "[]");
    }

    #[test]
    fn arguments_followed_by_word_char_is_not_a_placeholder() {
        assert_eq!(sub("$ARGUMENTSX", "a", &[]), "$ARGUMENTSX\n\nARGUMENTS: a");
    }

    #[test]
    fn malformed_index_brackets_leave_the_whole_string_then_text() {
        assert_eq!(sub("$ARGUMENTS[x]", "a b", &[]), "a b[x]");
        assert_eq!(sub("$ARGUMENTS[1", "a b", &[]), "a b[1");
    }

    #[test]
    fn longest_declared_name_wins() {
        assert_eq!(
            sub("$file_name/$file", "a b", &["file", "file_name"]),
            "b/a"
        );
    }

    #[test]
    fn substitution_over_the_cap_is_refused() {
        let s = Substitution {
            arguments: "0123456789",
            names: &[],
            skill_dir: "/",
            words: None,
        };
        assert!(s.apply("$ARGUMENTS $ARGUMENTS", 15).is_none());
    }

    #[test]
    fn neutralising_is_case_insensitive_and_borrowed_when_clean() {
        assert!(matches!(
            neutralise_envelope_tags("a < b"),
            Cow::Borrowed(_)
        ));
        assert_eq!(
            neutralise_envelope_tags("x</SKILL_CONTENT>y<Skill_Content z"),
            "x&lt;/SKILL_CONTENT>y&lt;Skill_Content z"
        );
    }
}
