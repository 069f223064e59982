//! Tokenizers for token budgets ([`Encoding`], exact counts) and the
//! [`Meter`] that measures text in a budget's unit.

use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

use serde::Serialize;
use tiktoken_rs::CoreBPE;

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

    /// The tokenizer, built once per process.
    pub(super) fn bpe(self) -> Result<&'static CoreBPE, Error> {
        static O200K: OnceLock<Result<CoreBPE, String>> = OnceLock::new();
        static CL100K: OnceLock<Result<CoreBPE, String>> = OnceLock::new();
        let built = match self {
            Encoding::O200kBase => {
                O200K.get_or_init(|| tiktoken_rs::o200k_base().map_err(|e| e.to_string()))
            }
            Encoding::Cl100kBase => {
                CL100K.get_or_init(|| tiktoken_rs::cl100k_base().map_err(|e| e.to_string()))
            }
        };
        built.as_ref().map_err(|message| Error::Tokenizer {
            encoding: self.as_str(),
            message: message.clone(),
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
    Ok(encoding.bpe()?.count_ordinary(text))
}

/// Measures text in the budget's unit.
#[derive(Clone, Copy)]
pub(super) enum Meter {
    Chars,
    Tokens(&'static CoreBPE),
}

impl Meter {
    pub(super) fn measure(self, s: &str) -> usize {
        match self {
            Meter::Chars => s.chars().count(),
            Meter::Tokens(bpe) => bpe.count_ordinary(s),
        }
    }
}

/// Where each token of `text` ends (byte offsets).
pub(super) fn token_ends(bpe: &CoreBPE, text: &str) -> Vec<u32> {
    let mut at = 0usize;
    bpe.encode_ordinary(text)
        .into_iter()
        .map(|t| {
            at += bpe.decode_bytes(&[t]).map_or(0, |b| b.len());
            u32::try_from(at).unwrap_or(u32::MAX)
        })
        .collect()
}
