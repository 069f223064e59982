//! Claude Code's dynamic context: shell commands in a skill's body whose
//! output replaces them at activation.
//!
//! Two forms are directives:
//! - `` !`cmd` ``: a `!` at the start of a line or after whitespace,
//!   directly followed by a backtick, the command, and a closing backtick on
//!   the same line;
//! - a fenced block whose opening fence is ```` ```! ```` (up to three
//!   spaces of indentation; `~~~!` too): every line up to the closing fence
//!   is the command.
//!
//! Not directives: a `!` inside a word (`Hello!`), anything inside an
//! ordinary code span (`` `!`x`` ``) or an ordinary fenced block, and an
//! unclosed `` !` ``.
//!
//! What replaces a directive is a [`DynamicContext`]'s answer. Execution is
//! off by default ([`DisabledDynamicContext`]): each directive becomes
//! [`DYNAMIC_DISABLED_TEXT`]. A host that runs commands in a sandbox plugs
//! in its own [`DynamicContext`] (`activate_with_dynamic`). Directives are
//! expanded on the body as written, before argument substitution, so an
//! argument never reaches a command.

use std::borrow::Cow;
use std::ops::Range;

use crate::limits::MAX_DYNAMIC_DIRECTIVES;
use crate::skill::Skill;

/// What a directive becomes while shell execution is not enabled.
pub const DYNAMIC_DISABLED_TEXT: &str = "[shell execution disabled]";

/// The form of a directive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DirectiveKind {
    /// `` !`cmd` ``.
    Inline,
    /// A ```` ```! ```` fenced block.
    Block,
}

/// One dynamic-context directive found in a body.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Directive {
    /// Its form.
    pub kind: DirectiveKind,
    /// The command text (a block's lines, joined with `\n`).
    pub command: String,
    /// The bytes of the body it occupies (what its output replaces): from
    /// the `!` to the closing backtick, or from the opening fence's line to
    /// the end of the closing fence's line (without the final line break).
    pub range: Range<usize>,
    /// 1-based line of the body where it starts.
    pub line: u32,
}

/// Answers a directive with the text that replaces it.
pub trait DynamicContext {
    /// The replacement for `directive` of `skill`'s body (its output, or a
    /// sentence saying why there is none). Never fails: a failed command is
    /// text the model reads.
    fn expand(&self, skill: &Skill, directive: &Directive) -> String;
}

/// Execution off: every directive becomes [`DYNAMIC_DISABLED_TEXT`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DisabledDynamicContext;

impl DynamicContext for DisabledDynamicContext {
    fn expand(&self, _skill: &Skill, _directive: &Directive) -> String {
        DYNAMIC_DISABLED_TEXT.to_owned()
    }
}

/// Every directive in `body`, in order.
pub fn find_directives(body: &str) -> Vec<Directive> {
    let mut out = Vec::new();
    if memchr::memchr(b'!', body.as_bytes()).is_none() {
        return out;
    }
    // Open ordinary fence: (char, length).
    let mut fence: Option<(u8, usize)> = None;
    // Open dynamic block: (char, length, start byte, start line, command lines).
    let mut block: Option<(u8, usize, usize, u32, Vec<&str>)> = None;
    let mut offset = 0usize;
    for (index, raw_line) in body.split_inclusive('\n').enumerate() {
        let line_no = u32::try_from(index + 1).unwrap_or(u32::MAX);
        let start = offset;
        offset += raw_line.len();
        let line = raw_line.trim_end_matches(['\n', '\r']);
        if let Some((c, n, bstart, bline, lines)) = &mut block {
            if closes(line, *c, *n) {
                out.push(Directive {
                    kind: DirectiveKind::Block,
                    command: lines.join("\n"),
                    range: *bstart..start + line.len(),
                    line: *bline,
                });
                block = None;
            } else {
                lines.push(line);
            }
            continue;
        }
        if let Some((c, n)) = fence {
            if closes(line, c, n) {
                fence = None;
            }
            continue;
        }
        if let Some((c, n, info)) = opening_fence(line) {
            if info.starts_with('!') {
                block = Some((c, n, start, line_no, Vec::new()));
            } else {
                fence = Some((c, n));
            }
            continue;
        }
        inline_directives(line, start, line_no, &mut out);
    }
    // An unclosed ```! block runs to the end, as an unclosed fence does.
    if let Some((_, _, bstart, bline, lines)) = block {
        out.push(Directive {
            kind: DirectiveKind::Block,
            command: lines.join("\n"),
            range: bstart..body.trim_end_matches(['\n', '\r']).len().max(bstart),
            line: bline,
        });
    }
    out
}

/// `(fence char, fence length, info string)` when `line` opens a fence.
fn opening_fence(line: &str) -> Option<(u8, usize, &str)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let c = *rest.as_bytes().first()?;
    if c != b'`' && c != b'~' {
        return None;
    }
    let n = rest.bytes().take_while(|&b| b == c).count();
    if n < 3 {
        return None;
    }
    let info = &rest[n..];
    // A backtick fence's info string holds no backtick.
    if c == b'`' && info.contains('`') {
        return None;
    }
    Some((c, n, info.trim()))
}

fn closes(line: &str, c: u8, n: usize) -> bool {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return false;
    }
    let rest = line[indent..].trim_end();
    rest.len() >= n && rest.bytes().all(|b| b == c)
}

/// The `` !`cmd` `` directives of one line outside fences, skipping
/// ordinary code spans.
fn inline_directives(line: &str, line_start: usize, line_no: u32, out: &mut Vec<Directive>) {
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'!' if bytes.get(i + 1) == Some(&b'`')
                && (i == 0 || bytes[i - 1].is_ascii_whitespace())
                && bytes.get(i + 2) != Some(&b'`') =>
            {
                let cmd_start = i + 2;
                match memchr::memchr(b'`', &bytes[cmd_start..]) {
                    Some(len) if !line[cmd_start..cmd_start + len].trim().is_empty() => {
                        let end = cmd_start + len + 1;
                        out.push(Directive {
                            kind: DirectiveKind::Inline,
                            command: line[cmd_start..cmd_start + len].trim().to_owned(),
                            range: line_start + i..line_start + end,
                            line: line_no,
                        });
                        i = end;
                    }
                    _ => i += 1,
                }
            }
            b'`' => {
                // An ordinary code span: skip to the closing run of the same
                // length; an unmatched run is literal text.
                let n = bytes[i..].iter().take_while(|&&b| b == b'`').count();
                let after = i + n;
                i = closing_run(bytes, after, n).map_or(after, |close| close + n);
            }
            _ => i += 1,
        }
    }
}

/// Start of the next run of exactly `n` backticks at or after `from`.
fn closing_run(bytes: &[u8], from: usize, n: usize) -> Option<usize> {
    let mut j = from;
    while j < bytes.len() {
        if bytes[j] == b'`' {
            let run = bytes[j..].iter().take_while(|&&b| b == b'`').count();
            if run == n {
                return Some(j);
            }
            j += run;
        } else {
            j += 1;
        }
    }
    None
}

/// `body` with every directive replaced by `context`'s answer (borrowed
/// when there is none). At most [`MAX_DYNAMIC_DIRECTIVES`] are passed to
/// `context`; the rest become [`DYNAMIC_DISABLED_TEXT`].
pub fn expand_dynamic<'b>(
    body: &'b str,
    skill: &Skill,
    context: &dyn DynamicContext,
) -> Cow<'b, str> {
    let directives = find_directives(body);
    if directives.is_empty() {
        return Cow::Borrowed(body);
    }
    let mut out = String::with_capacity(body.len());
    let mut at = 0;
    for (n, d) in directives.iter().enumerate() {
        out.push_str(&body[at..d.range.start]);
        if n < MAX_DYNAMIC_DIRECTIVES {
            out.push_str(&context.expand(skill, d));
        } else {
            out.push_str(DYNAMIC_DISABLED_TEXT);
        }
        at = d.range.end;
    }
    out.push_str(&body[at..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commands(body: &str) -> Vec<(DirectiveKind, String)> {
        find_directives(body)
            .into_iter()
            .map(|d| (d.kind, d.command))
            .collect()
    }

    #[test]
    fn bang_backtick_at_line_start_or_after_whitespace_is_a_directive() {
        let body = "!`git status`\nBranch: !`git branch --show-current` now\n\t!`date`";
        assert_eq!(
            commands(body),
            vec![
                (DirectiveKind::Inline, "git status".to_owned()),
                (
                    DirectiveKind::Inline,
                    "git branch --show-current".to_owned()
                ),
                (DirectiveKind::Inline, "date".to_owned()),
            ]
        );
        let d = &find_directives(body)[1];
        assert_eq!(&body[d.range.clone()], "!`git branch --show-current`");
        assert_eq!(d.line, 2);
    }

    #[test]
    fn bang_fenced_block_is_a_directive_up_to_its_closing_fence() {
        let body = "Intro\n```!\nls -la\necho hi\n```\nAfter\n~~~!\nuname\n~~~\n";
        let found = find_directives(body);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].kind, DirectiveKind::Block);
        assert_eq!(found[0].command, "ls -la\necho hi");
        assert_eq!(&body[found[0].range.clone()], "```!\nls -la\necho hi\n```");
        assert_eq!(found[0].line, 2);
        assert_eq!(found[1].command, "uname");
    }

    #[test]
    fn mid_word_bang_is_not_a_directive() {
        assert!(commands("Hello!`world` and wow!`x`").is_empty());
    }

    #[test]
    fn bang_inside_inline_code_is_not_a_directive() {
        assert!(commands("Write `` !`cmd` `` to run a command, or `a !`b`.").is_empty());
    }

    #[test]
    fn bang_inside_an_ordinary_fence_is_not_a_directive() {
        let body = "```bash\n!`rm -rf /`\n```\n~~~\n```!\nls\n```\n~~~\n";
        assert!(commands(body).is_empty());
    }

    #[test]
    fn unclosed_or_empty_bang_backtick_is_not_a_directive() {
        assert!(commands("!`never closed\n!`` empty\n! `spaced`").is_empty());
    }

    #[test]
    fn disabled_context_replaces_every_directive_with_the_disabled_text() {
        let skill = test_skill();
        let body = "Now: !`date`\n```!\nls\n```\nEnd `!`kept``";
        let out = expand_dynamic(body, &skill, &DisabledDynamicContext);
        assert_eq!(
            out,
            "Now: [shell execution disabled]\n[shell execution disabled]\nEnd `!`kept``"
        );
    }

    #[test]
    fn a_body_without_directives_is_borrowed() {
        let skill = test_skill();
        assert!(matches!(
            expand_dynamic("Wow! plain `code`", &skill, &DisabledDynamicContext),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn a_custom_context_answers_each_directive_with_its_command() {
        struct Echo;
        impl DynamicContext for Echo {
            fn expand(&self, skill: &Skill, d: &Directive) -> String {
                format!("<{}:{}>", skill.name, d.command)
            }
        }
        let skill = test_skill();
        let out = expand_dynamic("a !`one` b !`two`", &skill, &Echo);
        assert_eq!(out, "a <demo:one> b <demo:two>");
    }

    fn test_skill() -> Skill {
        Skill {
            name: "demo".to_owned(),
            description: "Demo.".to_owned(),
            resolved_dir: None,
            skill_md: "/nonexistent/demo/SKILL.md".into(),
            scope: crate::skill::Scope::Extra,
            root: std::sync::Arc::from(std::path::Path::new("/nonexistent")),
            mode: crate::skill::SkillMode::Auto,
            host: crate::skill::HostFields::default(),
        }
    }
}
