//! Tokenizers for token budgets ([`Encoding`], exact counts) and the
//! [`Meter`] that measures text in a budget's unit.

use std::fmt;
use std::str::FromStr;

use crate::tokenizer::Bpe;
use serde::Serialize;

use crate::error::Error;

/// A tokenizer for token budgets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
pub enum Encoding {
    /// GPT-4o, GPT-4.1, GPT-5, o-series.
    #[default]
    #[serde(rename = "o200k_base")]
    O200kBase,
    /// GPT-4, GPT-3.5.
    #[serde(rename = "cl100k_base")]
    Cl100kBase,
}

impl Encoding {
    /// Its name (`o200k_base`, `cl100k_base`).
    pub fn as_str(self) -> &'static str {
        match self {
            Encoding::O200kBase => "o200k_base",
            Encoding::Cl100kBase => "cl100k_base",
        }
    }

    /// The tokenizer: its vocabulary is precomputed, its pattern compiled
    /// once per process on first use (a few milliseconds).
    pub(super) fn bpe(self) -> Result<&'static Bpe, Error> {
        let built = match self {
            Encoding::O200kBase => Bpe::o200k_base(),
            Encoding::Cl100kBase => Bpe::cl100k_base(),
        };
        built.map_err(|message| Error::Tokenizer {
            encoding: self.as_str(),
            message,
        })
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Encoding {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        [Encoding::O200kBase, Encoding::Cl100kBase]
            .into_iter()
            .find(|e| e.as_str() == s)
            .ok_or_else(|| Error::InvalidValue {
                what: "encoding",
                value: s.to_owned(),
                expected: "o200k_base or cl100k_base",
            })
    }
}

/// Exact token count of `text` (as ordinary text: special-token markers are
/// counted as the characters they are).
pub fn count_tokens(text: &str, encoding: Encoding) -> Result<usize, Error> {
    Ok(encoding.bpe()?.count(text))
}

/// Measures text in the budget's unit.
#[derive(Clone, Copy)]
pub(super) enum Meter {
    Chars,
    Tokens(&'static Bpe),
}

impl Meter {
    pub(super) fn measure(self, s: &str) -> usize {
        match self {
            Meter::Chars => s.chars().count(),
            Meter::Tokens(bpe) => bpe.count(s),
        }
    }
}

/// Where each token of `text` ends (byte offsets).
pub(super) fn token_ends(bpe: &Bpe, text: &str) -> Vec<u32> {
    bpe.token_ends(text)
}
