//! Finding skills: BM25 search over names and descriptions
//! ([`SearchIndex`]), and lookup by name with "did you mean" suggestions
//! ([`lookup`], [`require`], [`suggest`]).

pub(crate) mod bm25;
pub(crate) mod lookup;

pub use bm25::{
    BM25_B, BM25_K1, BODY_WEIGHT, DESCRIPTION_WEIGHT, Hit, NAME_WEIGHT, STOP_WORDS, SearchIndex,
    SearchQuery, read_body, tokenize,
};
pub use lookup::{
    FUZZY_MIN_SCORE_PER_CHAR, Lookup, MIN_FUZZY_CHARS, MIN_PREFIX_CHARS, did_you_mean,
    did_you_mean_suffix, lookup, require, skipped_because, suggest, unknown_skill,
};
