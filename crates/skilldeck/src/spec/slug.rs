//! The slug rule, once: 1 to `max` characters of `a-z` and `0-9` with
//! single inner hyphens (no `-` at either end, no `--`), which is
//! [`SLUG_PATTERN`] with a length limit. A skill name in the ASCII charset
//! is a slug of at most 64 characters; the registry's namespaces, agent ids
//! and labels are slugs too (its OpenAPI document states the pattern).

/// [`is_slug`] as a regular expression (JSON Schema / OpenAPI `pattern`).
pub const SLUG_PATTERN: &str = "^[a-z0-9]+(-[a-z0-9]+)*$";

/// The first rule a text breaks, in the order they are checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlugProblem {
    /// No characters.
    Empty,
    /// More than the limit.
    TooLong,
    /// A character other than `a-z`, `0-9` or `-`.
    Chars,
    /// A `-` at the start or the end.
    HyphenEdge,
    /// Two `-` in a row.
    DoubleHyphen,
}

impl SlugProblem {
    /// The rule, worded for an error message.
    pub fn reason(self) -> &'static str {
        match self {
            SlugProblem::Empty => "it is empty",
            SlugProblem::TooLong => "it is too long",
            SlugProblem::Chars => "only lowercase letters a-z, digits and '-' are allowed",
            SlugProblem::HyphenEdge => "it must not start or end with '-'",
            SlugProblem::DoubleHyphen => "it must not contain '--'",
        }
    }
}

/// True when `text` is a slug of at most `max` bytes, decided in one pass.
pub fn is_slug(text: &str, max: usize) -> bool {
    let bytes = text.as_bytes();
    let mut previous = b'-';
    let ok = !bytes.is_empty()
        && bytes.len() <= max
        && bytes.iter().all(|&b| {
            let fine =
                b.is_ascii_lowercase() || b.is_ascii_digit() || (b == b'-' && previous != b'-');
            previous = b;
            fine
        });
    ok && previous != b'-'
}

/// The first rule `text` breaks as a slug of at most `max` bytes; `None`
/// when it is one.
pub fn slug_problem(text: &str, max: usize) -> Option<SlugProblem> {
    if is_slug(text, max) {
        return None;
    }
    Some(if text.is_empty() {
        SlugProblem::Empty
    } else if text.len() > max {
        SlugProblem::TooLong
    } else if !text
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        SlugProblem::Chars
    } else if text.starts_with('-') || text.ends_with('-') {
        SlugProblem::HyphenEdge
    } else {
        SlugProblem::DoubleHyphen
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slug_is_lowercase_ascii_and_digits_with_single_inner_hyphens() {
        for good in ["a", "pdf-tools", "acme-2", "0", &"a".repeat(63)] {
            assert!(is_slug(good, 63), "{good:?}");
            assert_eq!(slug_problem(good, 63), None);
        }
        for (bad, problem) in [
            ("", SlugProblem::Empty),
            (&*"a".repeat(64), SlugProblem::TooLong),
            ("A", SlugProblem::Chars),
            ("a/b", SlugProblem::Chars),
            ("a b", SlugProblem::Chars),
            ("é", SlugProblem::Chars),
            ("a_b", SlugProblem::Chars),
            ("-a", SlugProblem::HyphenEdge),
            ("a-", SlugProblem::HyphenEdge),
            ("-", SlugProblem::HyphenEdge),
            ("a--b", SlugProblem::DoubleHyphen),
        ] {
            assert!(!is_slug(bad, 63), "{bad:?}");
            assert_eq!(slug_problem(bad, 63), Some(problem), "{bad:?}");
        }
    }

    #[test]
    fn the_slug_pattern_says_what_is_slug_says() {
        let re = regex::Regex::new(SLUG_PATTERN).unwrap_or_else(|e| panic!("{e}"));
        for text in [
            "a",
            "pdf-tools",
            "a1-b2-c3",
            "",
            "A",
            "-a",
            "a-",
            "a--b",
            "a_b",
            "é",
            "a b",
        ] {
            assert_eq!(re.is_match(text), is_slug(text, 64), "{text:?}");
        }
    }
}
