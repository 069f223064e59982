//! Placeholders in a skill body: `$ARGUMENTS`, `$ARGUMENTS[N]`, `$N`, named
//! arguments and `${SKILL_DIR}`, replaced in one pass.

use crate::activation::arguments::split_arguments;

/// What a `$` starts.
pub(super) enum Placeholder {
    /// `$ARGUMENTS`.
    Whole,
    /// `$N`, `$ARGUMENTS[N]` (`None`: an index too large to represent).
    Index(Option<usize>),
    /// `$name`: the position of `name` in the `arguments` field.
    Named(usize),
    /// `${SKILL_DIR}`, `${CLAUDE_SKILL_DIR}`.
    SkillDir,
}

pub(super) const SKILL_DIR_VARS: [&str; 2] = ["{SKILL_DIR}", "{CLAUDE_SKILL_DIR}"];
pub(super) const ARGUMENTS: &str = "ARGUMENTS";

pub(super) struct Substitution<'a> {
    pub(super) arguments: &'a str,
    pub(super) names: &'a [String],
    pub(super) skill_dir: &'a str,
    /// The split arguments, computed on first use.
    pub(super) words: Option<Vec<String>>,
}

impl Substitution<'_> {
    /// `body` with every placeholder replaced; `None` when the result would
    /// exceed `max_bytes`.
    pub(super) fn apply(mut self, body: &str, max_bytes: usize) -> Option<String> {
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

    pub(super) fn value(&mut self, placeholder: &Placeholder) -> &str {
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
pub(super) fn placeholder_at(
    body: &str,
    dollar: usize,
    names: &[String],
) -> Option<(Placeholder, usize)> {
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

pub(super) fn leading_digits(s: &str) -> usize {
    s.bytes().take_while(u8::is_ascii_digit).count()
}

pub(super) fn starts_with_word_char(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {

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
}
