//! Argument strings: joining a command line's words into one string that
//! splits back into the same words (shell quoting rules).

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
pub(super) fn shell_split(s: &str) -> Option<Vec<String>> {
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
}
