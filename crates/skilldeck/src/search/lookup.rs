//! Looking a skill up by name: exact, then a unique match ignoring case and
//! Unicode compatibility forms, else "did you mean" suggestions (prefix,
//! edit distance, fuzzy subsequence); and the unknown-skill error with the
//! reason discovery skipped a folder of that name.

use std::collections::HashSet;

use nucleo_matcher::{Config, Matcher, Utf32Str};
use unicode_normalization::UnicodeNormalization;

use crate::deck::deck::Deck;
use crate::diagnostic::Diagnostic;
use crate::error::Error;
use crate::limits::{MAX_SUGGESTION_EDITS, MAX_SUGGESTIONS};
use crate::skill::Skill;

/// Name lookup: shortest typed name offered prefix completions.
pub const MIN_PREFIX_CHARS: usize = 2;
/// Name lookup: shortest typed name offered fuzzy (subsequence) matches.
pub const MIN_FUZZY_CHARS: usize = 3;
/// Name lookup: least fuzzy-match score per typed character. One point per
/// character is a plain match (16 in nucleo); the bar is set so that
/// matches with gaps across unrelated words fall below it.
pub const FUZZY_MIN_SCORE_PER_CHAR: usize = 16;

/// The result of looking a skill up by name.
#[derive(Debug, Clone, PartialEq)]
pub enum Lookup<'a> {
    /// The skill: same name, or the only skill whose name is equal after
    /// trimming, NFKC and lowercasing.
    Exact(&'a Skill),
    /// No such skill; the closest names, best first (may be empty).
    Suggestions(Vec<String>),
}

/// Looks `name` up in `deck`: exact match, then a unique match ignoring
/// case and Unicode compatibility forms, else suggestions (see [`suggest`]).
pub fn lookup<'a>(deck: &'a Deck, name: &str) -> Lookup<'a> {
    if let Some(skill) = deck.get(name) {
        return Lookup::Exact(skill);
    }
    let key = name_key(name);
    let mut same = deck.skills().iter().filter(|s| name_key(&s.name) == key);
    if let (Some(skill), None) = (same.next(), same.next()) {
        return Lookup::Exact(skill);
    }
    Lookup::Suggestions(suggest(name, deck.skills().iter().map(|s| s.name.as_str())))
}

/// [`lookup`], with an unknown name as [`Error::UnknownSkill`] (see
/// [`unknown_skill`]).
pub fn require<'a>(deck: &'a Deck, name: &str) -> Result<&'a Skill, Error> {
    match lookup(deck, name) {
        Lookup::Exact(skill) => Ok(skill),
        Lookup::Suggestions(suggestions) => Err(unknown(deck, name, suggestions)),
    }
}

/// The error for `name`, which is not among `candidates` (the names a host
/// serves): the error that kept a folder of that name out of `deck` when
/// discovery reported one, else the names in `candidates` close to it.
pub fn unknown_skill<'c, I>(deck: &Deck, name: &str, candidates: I) -> Error
where
    I: IntoIterator<Item = &'c str>,
{
    unknown(deck, name, suggest(name, candidates))
}

fn unknown(deck: &Deck, name: &str, suggestions: Vec<String>) -> Error {
    Error::UnknownSkill {
        name: name.to_owned(),
        reason: skipped_because(deck, name).map(|d| Box::new(d.clone())),
        suggestions,
    }
}

/// The error that kept a skill folder named `name` out of `deck`, if
/// discovery reported one.
pub fn skipped_because<'d>(deck: &'d Deck, name: &str) -> Option<&'d Diagnostic> {
    deck.diagnostics().iter().find(|d| {
        d.is_error()
            && d.file.as_deref().is_some_and(|f| {
                let dir = if f
                    .file_name()
                    .is_some_and(|n| n.eq_ignore_ascii_case("SKILL.md"))
                {
                    f.parent()
                } else {
                    Some(f)
                };
                dir.and_then(std::path::Path::file_name)
                    .is_some_and(|n| n == name)
            })
    })
}

/// Up to [`MAX_SUGGESTIONS`] names from `candidates` close to `name`, best
/// first. Names are compared trimmed, NFKC-normalised and lowercased. In
/// order of preference: equal names; names `name` is a prefix of (at least
/// [`MIN_PREFIX_CHARS`] typed, shortest completion first); names within a
/// few edits (one per three characters typed, at most
/// [`MAX_SUGGESTION_EDITS`]; a swap of neighbours is one edit), fewest
/// first; names holding `name` as a good fuzzy subsequence (nucleo score
/// at least [`FUZZY_MIN_SCORE_PER_CHAR`] per character, at least
/// [`MIN_FUZZY_CHARS`] typed), best first. Ties go by name.
pub fn suggest<I, S>(name: &str, candidates: I) -> Vec<String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let query = name_key(name);
    let typed: Vec<char> = query.chars().collect();
    if typed.is_empty() {
        return Vec::new();
    }
    let max_edits = (typed.len() / 3).clamp(1, MAX_SUGGESTION_EDITS);
    let mut matcher = Matcher::new(Config::DEFAULT);
    let mut needle_buf = Vec::new();
    let needle = Utf32Str::new(&query, &mut needle_buf);
    let mut haystack_buf = Vec::new();
    let mut ranked: Vec<(u8, usize, String)> = Vec::new();
    let mut seen = HashSet::new();
    for candidate in candidates {
        let candidate = candidate.as_ref();
        if !seen.insert(candidate.to_owned()) {
            continue;
        }
        let key = name_key(candidate);
        let key_chars: Vec<char> = key.chars().collect();
        let rank = if key == query {
            Some((0, 0))
        } else if typed.len() >= MIN_PREFIX_CHARS && key.starts_with(&query) {
            Some((1, key_chars.len() - typed.len()))
        } else if let Some(edits) = edit_distance(&typed, &key_chars, max_edits) {
            Some((2, edits))
        } else if typed.len() >= MIN_FUZZY_CHARS {
            matcher
                .fuzzy_match(Utf32Str::new(&key, &mut haystack_buf), needle)
                .map(usize::from)
                .filter(|&score| score >= typed.len() * FUZZY_MIN_SCORE_PER_CHAR)
                .map(|score| (3, usize::from(u16::MAX).saturating_sub(score)))
        } else {
            None
        };
        if let Some((tier, metric)) = rank {
            ranked.push((tier, metric, candidate.to_owned()));
        }
    }
    ranked.sort();
    ranked
        .into_iter()
        .take(MAX_SUGGESTIONS)
        .map(|(_, _, name)| name)
        .collect()
}

/// "unknown skill 'pdf-tols'; did you mean 'pdf-tools'?", or `None` when no
/// candidate is close to `name`.
pub fn did_you_mean<I, S>(name: &str, candidates: I) -> Option<String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let suggestions = suggest(name, candidates);
    if suggestions.is_empty() {
        return None;
    }
    let error = Error::UnknownSkill {
        name: name.to_owned(),
        reason: None,
        suggestions,
    };
    Some(error.to_string())
}

/// `"; did you mean 'a', 'b' or 'c'?"`, or nothing without suggestions:
/// the tail hosts append to their own "not found" messages.
pub fn did_you_mean_suffix(suggestions: &[String]) -> String {
    crate::error::did_you_mean_suffix(suggestions)
}

fn name_key(name: &str) -> String {
    name.trim().nfkc().collect::<String>().to_lowercase()
}

/// Restricted Damerau–Levenshtein distance (insert, delete, substitute,
/// swap two neighbours) between `a` and `b`, if at most `max`.
fn edit_distance(a: &[char], b: &[char], max: usize) -> Option<usize> {
    if a.len().abs_diff(b.len()) > max {
        return None;
    }
    let width = b.len() + 1;
    let mut prev2 = vec![0usize; width];
    let mut prev: Vec<usize> = (0..width).collect();
    let mut cur = vec![0usize; width];
    for i in 1..=a.len() {
        cur[0] = i;
        let mut row_min = cur[0];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(prev2[j - 2] + 1);
            }
            cur[j] = d;
            row_min = row_min.min(d);
        }
        if row_min > max {
            return None;
        }
        std::mem::swap(&mut prev2, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    let d = prev[b.len()];
    (d <= max).then_some(d)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn edit_distance_counts_swaps_as_one_edit() {
        let c = |s: &str| s.chars().collect::<Vec<_>>();
        assert_eq!(edit_distance(&c("pdf-tols"), &c("pdf-tools"), 2), Some(1));
        assert_eq!(edit_distance(&c("pdf-toosl"), &c("pdf-tools"), 2), Some(1));
        assert_eq!(edit_distance(&c("abc"), &c("xyz"), 2), None);
        assert_eq!(edit_distance(&c(""), &c("ab"), 2), Some(2));
    }

    #[test]
    fn did_you_mean_lists_every_suggestion() {
        assert_eq!(did_you_mean_suffix(&[]), "");
        assert_eq!(
            did_you_mean_suffix(&["a".into(), "b".into(), "c".into()]),
            "; did you mean 'a', 'b' or 'c'?"
        );
    }
}
