//! Agent patterns: globs over `namespace/name` where `*` matches any run
//! of characters (including `/`) and `?` one character.

/// True when `text` matches `pattern`.
pub fn matches(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    // Iterative wildcard match with one backtrack point (linear-ish, no
    // recursion, so a hostile pattern cannot blow the stack).
    let (mut pi, mut ti) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == '*' {
        pi += 1;
    }
    pi == p.len()
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn a_star_matches_any_run_and_a_question_mark_one_character() {
        assert!(matches("acme/*", "acme/pdf"));
        assert!(matches("*/pdf", "acme/pdf"));
        assert!(matches("*", "acme/pdf"));
        assert!(matches("acme/p?f", "acme/pdf"));
        assert!(!matches("acme/*", "other/pdf"));
        assert!(!matches("acme/pdf", "acme/pdfx"));
        assert!(matches("a*b*c", "axxbyyc"));
    }
}
