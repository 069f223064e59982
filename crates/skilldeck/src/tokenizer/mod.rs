//! Exact BPE token counts for `o200k_base` and `cl100k_base`, the way
//! tiktoken counts ordinary text, without building a tokenizer at run time.
//!
//! tiktoken (and tiktoken-rs) decode the vocabulary from base64 and hash
//! 200,000 tokens into a map on first use: about 190 ms and 45 MiB before
//! the first count. Here the vocabulary is precomputed by `build.rs` into
//! static tables ([`vocab`]): the first count compiles only the
//! pre-tokenizer pattern (a few milliseconds), and lookups touch the table
//! pages they need. The pieces the pattern finds are merged with tiktoken's
//! algorithm ([`merge`]); tests compare every count with tiktoken-rs.

mod hash;
mod merge;
mod vocab;

use std::cell::RefCell;
use std::sync::OnceLock;

use fancy_regex::Regex;

use self::vocab::Vocab;

/// tiktoken's pre-tokenizer pattern for `o200k_base`.
pub(crate) const O200K_BASE_PATTERN: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    "|",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    "|",
    r"\p{N}{1,3}",
    "|",
    r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
    "|",
    r"\s*[\r\n]+",
    "|",
    r"\s+(?!\S)",
    "|",
    r"\s+"
);

/// tiktoken's pre-tokenizer pattern for `cl100k_base`.
pub(crate) const CL100K_BASE_PATTERN: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";

/// A byte-pair encoder: a precomputed vocabulary and its pre-tokenizer.
pub struct Bpe {
    vocab: Vocab,
    pattern: Regex,
}

impl std::fmt::Debug for Bpe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bpe").finish_non_exhaustive()
    }
}

thread_local! {
    /// The merge's scratch space, reused across pieces and calls.
    static SCRATCH: RefCell<Vec<(usize, u32)>> = const { RefCell::new(Vec::new()) };
}

impl Bpe {
    /// `o200k_base`, made on first use (the pattern compiles once per
    /// process).
    pub fn o200k_base() -> Result<&'static Bpe, String> {
        static BPE: OnceLock<Result<Bpe, String>> = OnceLock::new();
        BPE.get_or_init(|| Bpe::new(Vocab::O200K_BASE, O200K_BASE_PATTERN))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// `cl100k_base`, made on first use.
    pub fn cl100k_base() -> Result<&'static Bpe, String> {
        static BPE: OnceLock<Result<Bpe, String>> = OnceLock::new();
        BPE.get_or_init(|| Bpe::new(Vocab::CL100K_BASE, CL100K_BASE_PATTERN))
            .as_ref()
            .map_err(Clone::clone)
    }

    fn new(vocab: Vocab, pattern: &str) -> Result<Bpe, String> {
        let pattern = Regex::new(pattern).map_err(|e| e.to_string())?;
        Ok(Bpe { vocab, pattern })
    }

    /// Calls `emit` with the byte length of each token of `text`, in order
    /// (special-token markers count as the text they are). Stops at the
    /// first piece the pattern cannot match in bounded work (fancy-regex's
    /// backtrack limit): the rest is counted a byte a token, an overcount.
    fn for_each_token(&self, text: &str, mut emit: impl FnMut(usize)) {
        SCRATCH.with(|scratch| {
            let mut scratch = scratch.borrow_mut();
            let mut at = 0;
            for found in self.pattern.find_iter(text) {
                let Ok(m) = found else {
                    (at..text.len()).for_each(|_| emit(1));
                    return;
                };
                let piece = &text.as_bytes()[m.start()..m.end()];
                merge::token_lengths(&self.vocab, piece, &mut scratch, &mut emit);
                at = m.end();
            }
        });
    }

    /// The number of tokens of `text` as ordinary text (tiktoken's
    /// `encode_ordinary(text).len()`).
    pub fn count(&self, text: &str) -> usize {
        let mut n = 0;
        self.for_each_token(text, |_| n += 1);
        n
    }

    /// Where each token of `text` ends (byte offsets, ascending).
    pub fn token_ends(&self, text: &str) -> Vec<u32> {
        let mut ends = Vec::new();
        let mut at = 0usize;
        self.for_each_token(text, |len| {
            at += len;
            ends.push(u32::try_from(at).unwrap_or(u32::MAX));
        });
        ends
    }
}

#[cfg(test)]
mod tests;
