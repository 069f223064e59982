//! The rule set: from `SKILL.md` text to a typed [`Frontmatter`] plus every
//! problem found. One rule set, two modes: `strict` (the specification) and
//! `lenient` (how hosts should load skills).

use std::path::Path;

use crate::diagnostic::{Code, Diagnostic, Pos};
use crate::spec::fields::Frontmatter;
use crate::spec::fields::check_fields;
use crate::spec::fields::description_pos;
use crate::spec::frontmatter;
use crate::spec::lints::{self, SkillFolder};
use crate::spec::name::{self};
use crate::spec::options::Mode;
use crate::spec::options::Sink;
use crate::spec::options::ValidationOptions;
use crate::spec::options::help;
use crate::spec::yaml::{self, Node};

/// What [`check_text`] found.
#[derive(Debug, Clone, Default)]
pub struct Checked {
    /// The typed frontmatter, when the YAML could be read.
    pub frontmatter: Option<Frontmatter>,
    /// File line where the body starts (0 if there is no body).
    pub body_line: u32,
    /// Every problem, in file order.
    pub diagnostics: Vec<Diagnostic>,
}

/// Checks the text of a `SKILL.md` in `dir` (the skill folder, used for the
/// folder-name rule and the link lints; `None` skips both).
pub fn check_text(text: &str, dir: Option<&Path>, options: &ValidationOptions) -> Checked {
    check_text_in(
        text,
        dir.map(|path| SkillFolder { path, fd: None }),
        options,
    )
}

/// [`check_text`], with the folder's open descriptor when the caller has
/// one (the link lints then look files up relative to it).
pub(crate) fn check_text_in(
    text: &str,
    folder: Option<SkillFolder<'_>>,
    options: &ValidationOptions,
) -> Checked {
    let unmarked = text.strip_prefix('\u{FEFF}').unwrap_or(text);
    if let Some(offset) = memchr::memchr(0, unmarked.as_bytes()) {
        let frontmatter = crate::fs::read::frontmatter_as_discovery_reads(text.as_bytes()).ok();
        return check_not_text(
            frontmatter.as_deref(),
            crate::fs::read::nul_byte(unmarked.as_bytes(), offset),
            folder,
            options,
        );
    }
    check(text, folder, options, Part::WholeFile)
}

/// Checks a `SKILL.md` that is not text: `problem` is its first bad byte (a
/// NUL, or bytes that are not UTF-8), `frontmatter` the frontmatter as
/// discovery reads it when that is text (the bad byte comes after it). The
/// frontmatter is checked as discovery checks it, so `validate` names every
/// error `list` names, and the problem beside them; without a readable
/// frontmatter, the problem alone.
pub(crate) fn check_not_text(
    frontmatter: Option<&str>,
    problem: Diagnostic,
    folder: Option<SkillFolder<'_>>,
    options: &ValidationOptions,
) -> Checked {
    let mut checked = match frontmatter {
        // A NUL in it is the problem itself: the first bad byte.
        Some(fm) if memchr::memchr(0, fm.as_bytes()).is_none() => {
            check(fm, folder, options, Part::Frontmatter)
        }
        _ => Checked::default(),
    };
    let mut sink = Sink::new(options);
    sink.diagnostics.append(&mut checked.diagnostics);
    sink.add(problem);
    finish(sink, checked.frontmatter, checked.body_line)
}

/// What of a `SKILL.md` [`check`] is given.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    /// The whole file, as text.
    WholeFile,
    /// Its frontmatter alone (the rest is not text): the body's lints do
    /// not run.
    Frontmatter,
}

/// The rule set on `text`, a `SKILL.md` (or `part` of it) with no NUL.
fn check(
    text: &str,
    folder: Option<SkillFolder<'_>>,
    options: &ValidationOptions,
    part: Part,
) -> Checked {
    let dir = folder.map(|f| f.path);
    let mut sink = Sink::new(options);
    let mut text = text;
    if let Some(rest) = text.strip_prefix('\u{FEFF}') {
        text = rest;
        sink.push(
            Code::Bom,
            Some(Pos::new(1, 1, 1)),
            "SKILL.md starts with a UTF-8 byte order mark".to_owned(),
        )
        .help = Some("save the file as UTF-8 without BOM".to_owned());
    }
    let split = match frontmatter::split(text) {
        Ok(split) => split,
        Err(d) => {
            sink.add(d);
            return finish(sink, None, 0);
        }
    };
    let root = match parse_yaml(split.yaml, split.yaml_line, &mut sink) {
        Some(root) => root,
        None => return finish(sink, None, split.body_line),
    };
    let dir_name = dir.and_then(folder_name);
    // Tool schemas need YAML's types (`minimum: 3` is a number); the tree
    // keeps scalars as text, so a frontmatter with `tools` is also read typed.
    let typed_tools = match &root.kind {
        yaml::NodeKind::Map(entries) if entries.iter().any(|(k, _)| k.text == "tools") => {
            yaml::to_json(split.yaml, split.yaml_line)
                .ok()
                .and_then(|mut map| map.remove("tools"))
        }
        _ => None,
    };
    let fm = check_fields(
        &root,
        dir_name.as_deref(),
        dir,
        typed_tools.as_ref(),
        split.body,
        &mut sink,
    );
    if options.lints {
        if let Some(description) = &fm.description {
            lints::description_placeholder(description, description_pos(&root), &mut sink);
            lints::description(description, description_pos(&root), &mut sink);
        }
        if part == Part::WholeFile {
            lints::body(split.body, split.body_line, folder, &mut sink);
        }
    }
    finish(sink, Some(fm), split.body_line)
}

fn finish(sink: Sink<'_>, frontmatter: Option<Frontmatter>, body_line: u32) -> Checked {
    let mut diagnostics = sink.diagnostics;
    diagnostics.sort_by_key(|d| (d.line.unwrap_or(0), d.column.unwrap_or(0)));
    Checked {
        frontmatter,
        body_line,
        diagnostics,
    }
}

/// The folder's name as the spec compares it (NFKC). `None` when the path has
/// no final component even after resolving (`/`).
fn folder_name(dir: &Path) -> Option<String> {
    let owned;
    let name = match crate::fs::path::file_name(dir) {
        Some(name) => name,
        None => {
            owned = std::fs::canonicalize(dir).ok()?;
            owned.file_name()?
        }
    };
    Some(name::normalize(&name.to_string_lossy()))
}

/// Parses the YAML, retrying once with unquoted `: ` values repaired.
fn parse_yaml(yaml_text: &str, first_line: u32, sink: &mut Sink<'_>) -> Option<Node> {
    let err = match yaml::parse(yaml_text, first_line) {
        Ok(root) => return Some(root),
        Err(err) => err,
    };
    let repaired = yaml::repair_unquoted_colons(yaml_text, first_line)
        .and_then(|(fixed, repairs)| yaml::parse(&fixed, first_line).ok().map(|r| (r, repairs)));
    let message = format!("Invalid YAML in frontmatter: {}", err.message);
    match (repaired, sink.options.mode) {
        (Some((root, repairs)), Mode::Lenient) => {
            for repair in repairs {
                let d = sink.push(
                    Code::YamlRecovered,
                    Some(Pos::line(repair.line)),
                    format!(
                        "the value of '{}' contains ': ' and must be quoted; loaded it as a quoted string",
                        repair.key
                    ),
                );
                help(d, format!("quote the value: {}", repair.suggestion));
            }
            Some(root)
        }
        (Some((root, repairs)), Mode::Strict) => {
            let d = sink.push(Code::InvalidYaml, Some(err.pos), message);
            let fixes: Vec<String> = repairs
                .iter()
                .map(|r| format!("line {}: {}", r.line, r.suggestion))
                .collect();
            help(
                d,
                format!("a value holding ': ' must be quoted; {}", fixes.join("; ")),
            );
            // Report the other problems too, from the repaired text.
            Some(root)
        }
        (None, _) => {
            let d = sink.push(Code::InvalidYaml, Some(err.pos), message);
            if err.message.contains("budget") {
                help(
                    d,
                    "the frontmatter expands to too many nodes, aliases or levels; write it out plainly",
                );
            }
            None
        }
    }
}

/// True when `checked` has no errors.
pub fn is_valid(checked: &Checked) -> bool {
    !checked.diagnostics.iter().any(Diagnostic::is_error)
}
