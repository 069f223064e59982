//! Skill names: the spec's rules, and the validated [`SkillName`] newtype.

use std::fmt;

use unicode_normalization::UnicodeNormalization;

use crate::diagnostic::Code;
pub use crate::error::NameProblem;
use crate::limits::MAX_NAME_CHARS;

/// Which characters a name may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NameCharset {
    /// Unicode letters and digits plus `-`, as the reference validator
    /// allows (`技能`, `мой-навык`).
    #[default]
    Unicode,
    /// Only `a-z`, `0-9` and `-` (`--ascii-names`).
    Ascii,
}

/// Normalises a name as the spec compares it: trimmed, then NFKC.
pub fn normalize(name: &str) -> String {
    let name = name.trim();
    if name.is_ascii() {
        // NFKC leaves ASCII unchanged; skip the per-character pass.
        return name.to_owned();
    }
    name.nfkc().collect()
}

/// The key by which two texts that must not look alike are compared (two
/// registry agents' display names, two paths of one package): NFKC, then
/// lowercase, then NFKC again (lowercasing can leave text unnormalised),
/// without invisible format characters (zero-width spaces and joiners,
/// soft hyphens, byte-order marks: Unicode's `Cf` characters a reader
/// cannot see) and with every run of whitespace as one space, trimmed.
/// `Café`, `Cafe\u{301}`, `ＣＡＦÉ` and `Caf\u{200b}é` share one key.
/// Letters of different scripts that look alike (Latin `a`, Cyrillic `а`)
/// keep distinct keys: that needs Unicode's confusables table (UTS #39),
/// which the places that must refuse it avoid by allowing ASCII only.
pub fn lookalike_key(text: &str) -> String {
    let lower: String = text.nfkc().collect::<String>().to_lowercase();
    let mut out = String::with_capacity(lower.len());
    let mut space = false;
    for c in lower.nfkc() {
        if is_invisible_format(c) {
            continue;
        }
        if c.is_whitespace() {
            space = true;
            continue;
        }
        if space && !out.is_empty() {
            out.push(' ');
        }
        space = false;
        out.push(c);
    }
    out
}

/// Invisible format characters (`Cf`, and the variation selectors and
/// combining grapheme joiner that render as nothing on their own).
fn is_invisible_format(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{17B4}'
        | '\u{17B5}' | '\u{180B}'..='\u{180F}' | '\u{200B}'..='\u{200F}'
        | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{206F}' | '\u{3164}'
        | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}' | '\u{FFA0}' | '\u{FFF0}'..='\u{FFF8}'
        | '\u{1BCA0}'..='\u{1BCA3}' | '\u{1D173}'..='\u{1D17A}'
        | '\u{E0000}'..='\u{E0FFF}')
}

/// A valid name close to `name`, for fix-its: lowercase, every run of
/// characters the charset refuses turned into one `-`, no `-` at either end,
/// cut to the length limit. `None` when nothing valid is left.
pub fn suggest(name: &str, charset: NameCharset) -> Option<String> {
    let lower = normalize(name).to_lowercase();
    let mut out = String::with_capacity(lower.len());
    for c in lower.chars() {
        let ok = match charset {
            NameCharset::Ascii => c.is_ascii_lowercase() || c.is_ascii_digit(),
            NameCharset::Unicode => c.is_alphanumeric(),
        };
        if ok {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    let cut: String = out.chars().take(MAX_NAME_CHARS).collect();
    let trimmed = cut.trim_matches('-');
    (!trimmed.is_empty() && check(trimmed, charset).is_empty()).then(|| trimmed.to_owned())
}

/// Checks a *normalised* name against every naming rule and returns all the
/// problems found (empty when the name is valid). The folder-name rule is
/// checked by the validator, which knows the folder.
pub fn check(name: &str, charset: NameCharset) -> Vec<NameProblem> {
    if is_plain_valid(name) {
        return Vec::new();
    }
    check_rules(name, charset)
}

/// [`check`] rule by rule.
fn check_rules(name: &str, charset: NameCharset) -> Vec<NameProblem> {
    let mut problems = Vec::new();
    let mut push = |code, message: String| problems.push(NameProblem { code, message });
    if name.is_empty() {
        push(
            Code::NameEmpty,
            "Field 'name' must be a non-empty string".to_owned(),
        );
        return problems;
    }
    let chars = name.chars().count();
    if chars > MAX_NAME_CHARS {
        push(
            Code::NameTooLong,
            format!("Skill name '{name}' exceeds {MAX_NAME_CHARS} character limit ({chars} chars)"),
        );
    }
    if name.to_lowercase() != name {
        push(
            Code::NameNotLowercase,
            format!("Skill name '{name}' must be lowercase"),
        );
    }
    if name.starts_with('-') || name.ends_with('-') {
        push(
            Code::NameHyphenEdge,
            "Skill name cannot start or end with a hyphen".to_owned(),
        );
    }
    if name.contains("--") {
        push(
            Code::NameConsecutiveHyphens,
            "Skill name cannot contain consecutive hyphens".to_owned(),
        );
    }
    let allowed = |c: char| match charset {
        // Uppercase letters are reported by the lowercase rule, not here.
        NameCharset::Ascii => c.is_ascii_alphanumeric() || c == '-',
        NameCharset::Unicode => c.is_alphanumeric() || c == '-',
    };
    if !name.chars().all(allowed) {
        let only = match charset {
            NameCharset::Ascii => "Only a-z, 0-9, and hyphens are allowed.",
            NameCharset::Unicode => "Only letters, digits, and hyphens are allowed.",
        };
        push(
            Code::NameInvalidChars,
            format!("Skill name '{name}' contains invalid characters. {only}"),
        );
    }
    problems
}

/// True for the common valid name, decided in one pass over the bytes:
/// 1 to [`MAX_NAME_CHARS`] of `a-z`, `0-9` and single inner hyphens (valid
/// in both charsets). Anything else takes the rule-by-rule path, which
/// also words the problems.
fn is_plain_valid(name: &str) -> bool {
    crate::spec::slug::is_slug(name, MAX_NAME_CHARS)
}

/// A skill name that passed every naming rule (trimmed, NFKC-normalised).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct SkillName(String);

impl SkillName {
    /// Normalises and validates `name` with the default (Unicode) charset.
    pub fn new(name: &str) -> Result<Self, crate::error::Error> {
        Self::with_charset(name, NameCharset::Unicode)
    }

    /// Normalises and validates `name` with the given charset.
    pub fn with_charset(name: &str, charset: NameCharset) -> Result<Self, crate::error::Error> {
        let normalized = normalize(name);
        let problems = check(&normalized, charset);
        if problems.is_empty() {
            Ok(SkillName(normalized))
        } else {
            Err(crate::error::Error::InvalidName {
                name: name.to_owned(),
                problems,
            })
        }
    }

    /// The name as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SkillName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for SkillName {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::str::FromStr for SkillName {
    type Err = crate::error::Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SkillName::new(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_one_pass_name_check_agrees_with_the_rules() {
        let alphabet = ['a', 'z', '0', '9', '-', 'A', '_', 'é', ' '];
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        for _ in 0..20_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let len = (state % 70) as usize;
            let name: String = (0..len)
                .map(|i| alphabet[((state >> (i % 60)) as usize + i) % alphabet.len()])
                .collect();
            let ascii_ok = check_rules(&name, NameCharset::Ascii).is_empty();
            assert_eq!(is_plain_valid(&name), ascii_ok, "{name:?}");
            if is_plain_valid(&name) {
                assert!(
                    check_rules(&name, NameCharset::Unicode).is_empty(),
                    "{name:?}"
                );
            }
        }
        for name in ["a", "a-b", "a1-2b", &"a".repeat(MAX_NAME_CHARS)] {
            assert!(is_plain_valid(name), "{name:?}");
        }
        for name in ["", "-a", "a-", "a--b", "A", &"a".repeat(MAX_NAME_CHARS + 1)] {
            assert!(!is_plain_valid(name), "{name:?}");
        }
    }

    fn codes(name: &str, charset: NameCharset) -> Vec<Code> {
        check(&normalize(name), charset)
            .into_iter()
            .map(|p| p.code)
            .collect()
    }

    #[test]
    fn texts_that_differ_only_by_normalisation_case_or_invisible_characters_share_a_lookalike_key()
    {
        let key = lookalike_key("Caf\u{e9} Ops");
        for same in [
            "Cafe\u{301} Ops",
            "\u{ff23}\u{ff21}\u{ff26}\u{c9} OPS",
            "Caf\u{200b}\u{e9}  Ops ",
            "\u{feff}caf\u{e9}\tops",
        ] {
            assert_eq!(lookalike_key(same), key, "{same:?}");
        }
        assert_ne!(lookalike_key("Cafe Ops"), key);
        assert_eq!(lookalike_key("\u{fb01}le"), lookalike_key("FILE"));
    }

    #[test]
    fn ascii_fast_path_matches_nfkc() {
        for name in ["pdf-tools", "  Trim Me  ", "a\tb", "", "x\u{7f}"] {
            assert_eq!(
                normalize(name),
                name.trim().nfkc().collect::<String>(),
                "{name:?}"
            );
        }
    }

    #[test]
    fn valid_names_pass() {
        for name in ["pdf-processing", "a", "x1", "技能", "мой-навык"] {
            assert!(SkillName::new(name).is_ok(), "{name}");
        }
    }

    #[test]
    fn ascii_charset_rejects_unicode_letters() {
        assert_eq!(
            codes("мой-навык", NameCharset::Ascii),
            vec![Code::NameInvalidChars]
        );
    }

    #[test]
    fn uppercase_with_underscore_reports_both_rules() {
        assert_eq!(
            codes("My_Skill", NameCharset::Unicode),
            vec![Code::NameNotLowercase, Code::NameInvalidChars]
        );
    }

    #[test]
    fn length_is_counted_after_trim_and_nfkc() {
        // U+FB01 (ﬁ ligature) becomes "fi" under NFKC: 64 ligatures = 128 chars.
        let name = "\u{FB01}".repeat(40);
        assert_eq!(codes(&name, NameCharset::Unicode), vec![Code::NameTooLong]);
        assert!(SkillName::new(&format!("  {}  ", "a".repeat(64))).is_ok());
    }
}
