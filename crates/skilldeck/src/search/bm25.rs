//! BM25 search over skill names and descriptions (bodies optional).
//!
//! **Ranking** is BM25F: a term's frequency in each field is weighted
//! ([`NAME_WEIGHT`], [`DESCRIPTION_WEIGHT`], [`BODY_WEIGHT`]) and
//! length-normalised per field (`b` = [`BM25_B`]) before the usual
//! saturation (`k1` = [`BM25_K1`]); IDF is the non-negative Lucene form
//! `ln(1 + (N - df + 0.5) / (df + 0.5))`. Query terms are OR-ed and
//! counted once each. Ties are broken by name, then scope, so results are
//! deterministic.
//!
//! **Tokens**: lowercase, split on every non-alphanumeric character (so
//! `pdf-tools` is `pdf` + `tools`), [`STOP_WORDS`] dropped, and one trivial
//! stemming rule: a trailing `s` is removed from ASCII words longer than
//! three letters not ending in `ss` (`tools` → `tool`, `pdfs` → `pdf`;
//! `class` stays). No other stemming: it would have to be right in every
//! language skills are written in.
//!
//! **Cost**: the index is built once (an inverted index: term → postings of
//! document and per-field term frequency, sorted by document; per-document
//! field factors precomputed). A query reads only the postings of its terms,
//! accumulates into one score array, and keeps the best `limit` in a binary
//! heap; filters run only on documents that would enter the heap.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};
use std::path::Path;

use rayon::prelude::*;
use serde::Serialize;

use crate::deck::deck::Deck;
use crate::diagnostic::Diagnostic;
use crate::fs::read::read_skill_md;
use crate::limits::DEFAULT_SEARCH_LIMIT;
use crate::skill::{Scope, Skill};

/// BM25 term-frequency saturation.
pub const BM25_K1: f64 = 1.2;
/// BM25 length normalisation (0 = none, 1 = full).
pub const BM25_B: f64 = 0.75;
/// Weight of a term in the name (a name match counts twice a description match).
pub const NAME_WEIGHT: f64 = 2.0;
/// Weight of a term in the description.
pub const DESCRIPTION_WEIGHT: f64 = 1.0;
/// Weight of a term in the body (only with [`SearchIndex::with_bodies`]).
pub const BODY_WEIGHT: f64 = 0.5;

/// Words never indexed or searched: English glue, plus `use`/`when`, which
/// nearly every description holds ("Use when ...").
pub const STOP_WORDS: [&str; 31] = [
    "a", "an", "and", "are", "as", "at", "be", "by", "do", "for", "from", "how", "if", "in",
    "into", "is", "it", "its", "of", "on", "or", "that", "the", "this", "to", "use", "used",
    "using", "when", "with", "you",
];

const NAME: usize = 0;
const DESCRIPTION: usize = 1;
const BODY: usize = 2;
const FIELDS: usize = 3;
const FIELD_WEIGHTS: [f64; FIELDS] = [NAME_WEIGHT, DESCRIPTION_WEIGHT, BODY_WEIGHT];

/// Splits `text` into search tokens (see the module docs).
pub fn tokenize(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .filter(|w| !STOP_WORDS.contains(&w.as_str()))
        .map(stem)
        .collect()
}

fn stem(mut word: String) -> String {
    if word.len() > 3 && word.is_ascii() && word.ends_with('s') && !word.ends_with("ss") {
        word.pop();
    }
    word
}

/// A search: free text plus filters.
#[derive(Debug, Clone)]
pub struct SearchQuery {
    /// Free text. With no tokens (empty, or only stop words) every skill
    /// passing the filters is a hit, with score 0, in name order.
    pub text: String,
    /// Most hits returned.
    pub limit: usize,
    /// Only skills of these scopes (`None`: every scope).
    pub scopes: Option<Vec<Scope>>,
    /// Only skills whose name matches (unanchored; add `^...$` to anchor).
    pub name_pattern: Option<regex::Regex>,
    /// Each must appear in the name, description or (when indexed) body.
    /// Keywords are tokenized like the text: `pdf-tools` requires both
    /// `pdf` and `tool`; a keyword of only stop words requires nothing.
    pub required_keywords: Vec<String>,
}

impl Default for SearchQuery {
    fn default() -> Self {
        SearchQuery {
            text: String::new(),
            limit: DEFAULT_SEARCH_LIMIT,
            scopes: None,
            name_pattern: None,
            required_keywords: Vec::new(),
        }
    }
}

impl SearchQuery {
    /// A query for `text`, at most [`DEFAULT_SEARCH_LIMIT`] hits, no filters.
    pub fn new(text: impl Into<String>) -> Self {
        SearchQuery {
            text: text.into(),
            ..SearchQuery::default()
        }
    }

    /// Sets the most hits returned.
    pub fn limit(mut self, limit: usize) -> Self {
        self.limit = limit;
        self
    }

    /// Keeps only skills of these scopes.
    pub fn scopes(mut self, scopes: impl IntoIterator<Item = Scope>) -> Self {
        self.scopes = Some(scopes.into_iter().collect());
        self
    }

    /// Keeps only skills whose name matches `pattern`.
    pub fn name_pattern(mut self, pattern: regex::Regex) -> Self {
        self.name_pattern = Some(pattern);
        self
    }

    /// Requires `keyword` in every hit.
    pub fn require(mut self, keyword: impl Into<String>) -> Self {
        self.required_keywords.push(keyword.into());
        self
    }
}

/// One search result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hit {
    /// The skill's name.
    pub name: String,
    /// BM25 score (higher is better; 0 for a query without terms).
    pub score: f64,
    /// Where the skill was found.
    pub scope: Scope,
    /// Its description.
    pub description: String,
}

#[derive(Debug, Clone)]
struct Doc {
    name: String,
    description: String,
    scope: Scope,
    /// Rank in (name, scope, index) order: the tie-break.
    order: u32,
}

#[derive(Debug, Clone, Copy)]
struct Posting {
    doc: u32,
    tf: [u16; FIELDS],
}

/// An inverted index over a set of skills, built once and queried many
/// times.
#[derive(Debug, Clone, Default)]
pub struct SearchIndex {
    docs: Vec<Doc>,
    terms: HashMap<String, u32>,
    postings: Vec<Vec<Posting>>,
    /// Per document and field: `weight / (1 - b + b * len / avg_len)`.
    field_factor: Vec<[f64; FIELDS]>,
    bodies: bool,
    diagnostics: Vec<Diagnostic>,
}

/// The tokens of a query's text, resolved against the index.
enum QueryTerms {
    /// The text has no tokens: every document matches with score 0.
    All,
    /// Known term ids, deduplicated (empty when every token is unknown).
    Terms(Vec<u32>),
}

impl SearchIndex {
    /// Indexes the names and descriptions of `skills`.
    pub fn new(skills: &[Skill]) -> Self {
        build(skills, None)
    }

    /// Indexes every skill of `deck`.
    pub fn from_deck(deck: &Deck) -> Self {
        Self::new(deck.skills())
    }

    /// Indexes names, descriptions and bodies. Bodies are read in parallel
    /// through the safe reader ([`read_skill_md`](crate::fs::read_skill_md)); a skill
    /// whose body cannot be read is indexed without it, and the problem is
    /// kept in [`SearchIndex::diagnostics`].
    pub fn with_bodies(skills: &[Skill]) -> Self {
        let read: Vec<Result<String, Diagnostic>> =
            skills.par_iter().map(|s| read_body(&s.skill_md)).collect();
        let mut diagnostics = Vec::new();
        let bodies: Vec<String> = read
            .into_iter()
            .map(|r| {
                r.unwrap_or_else(|d| {
                    diagnostics.push(d);
                    String::new()
                })
            })
            .collect();
        let mut index = build(skills, Some(&bodies));
        index.diagnostics = diagnostics;
        index
    }

    /// Number of skills indexed.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// True when no skill is indexed.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// True when bodies are indexed.
    pub fn indexes_bodies(&self) -> bool {
        self.bodies
    }

    /// Bodies that could not be read (with [`SearchIndex::with_bodies`]).
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// The best hits for `query`, by score (highest first), then name, then
    /// scope.
    pub fn search(&self, query: &SearchQuery) -> Vec<Hit> {
        if query.limit == 0 || self.docs.is_empty() {
            return Vec::new();
        }
        let Some(required) = self.required_terms(&query.required_keywords) else {
            return Vec::new();
        };
        let passes = |doc: u32| {
            let d = &self.docs[doc as usize];
            query.scopes.as_ref().is_none_or(|s| s.contains(&d.scope))
                && required.iter().all(|&t| self.contains(t, doc))
                && query
                    .name_pattern
                    .as_ref()
                    .is_none_or(|re| re.is_match(&d.name))
        };
        let mut top = TopK::new(query.limit);
        match self.query_terms(&query.text) {
            QueryTerms::All => {
                for (doc, d) in (0u32..).zip(&self.docs) {
                    if top.accepts(0.0, d.order) && passes(doc) {
                        top.push(0.0, d.order, doc);
                    }
                }
            }
            QueryTerms::Terms(ids) => {
                let (scores, touched) = self.accumulate(&ids);
                for doc in touched {
                    let score = scores[doc as usize];
                    let order = self.docs[doc as usize].order;
                    if top.accepts(score, order) && passes(doc) {
                        top.push(score, order, doc);
                    }
                }
            }
        }
        top.into_sorted()
            .into_iter()
            .map(|r| {
                let d = &self.docs[r.doc as usize];
                Hit {
                    name: d.name.clone(),
                    score: r.score,
                    scope: d.scope,
                    description: d.description.clone(),
                }
            })
            .collect()
    }

    /// The score of every skill matching `text` (no filters, no limit),
    /// by name; for a catalog's relevance ranking. Empty when `text` has no
    /// known terms. With same-named skills in several scopes, the best score.
    pub fn scores(&self, text: &str) -> HashMap<String, f64> {
        let QueryTerms::Terms(ids) = self.query_terms(text) else {
            return HashMap::new();
        };
        let (scores, touched) = self.accumulate(&ids);
        let mut out: HashMap<String, f64> = HashMap::with_capacity(touched.len());
        for doc in touched {
            let score = scores[doc as usize];
            out.entry(self.docs[doc as usize].name.clone())
                .and_modify(|s| *s = s.max(score))
                .or_insert(score);
        }
        out
    }

    fn query_terms(&self, text: &str) -> QueryTerms {
        let tokens = tokenize(text);
        if tokens.is_empty() {
            return QueryTerms::All;
        }
        let mut ids: Vec<u32> = tokens
            .iter()
            .filter_map(|t| self.terms.get(t).copied())
            .collect();
        ids.sort_unstable();
        ids.dedup();
        QueryTerms::Terms(ids)
    }

    /// Term ids every hit must contain; `None` when one is not in the
    /// index at all (so nothing can match).
    fn required_terms(&self, keywords: &[String]) -> Option<Vec<u32>> {
        let mut ids = Vec::new();
        for keyword in keywords {
            for token in tokenize(keyword) {
                ids.push(*self.terms.get(&token)?);
            }
        }
        ids.sort_unstable();
        ids.dedup();
        Some(ids)
    }

    fn contains(&self, term: u32, doc: u32) -> bool {
        self.postings[term as usize]
            .binary_search_by_key(&doc, |p| p.doc)
            .is_ok()
    }

    /// BM25F scores of the documents holding any of `ids`, and which
    /// documents those are.
    fn accumulate(&self, ids: &[u32]) -> (Vec<f64>, Vec<u32>) {
        let n = self.docs.len() as f64;
        let mut scores = vec![0.0f64; self.docs.len()];
        let mut touched = Vec::new();
        for &term in ids {
            let list = &self.postings[term as usize];
            let df = list.len() as f64;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for p in list {
                let factor = &self.field_factor[p.doc as usize];
                let tf: f64 = (0..FIELDS).map(|f| f64::from(p.tf[f]) * factor[f]).sum();
                if tf <= 0.0 {
                    continue;
                }
                let slot = &mut scores[p.doc as usize];
                if *slot == 0.0 {
                    touched.push(p.doc);
                }
                *slot += idf * tf * (BM25_K1 + 1.0) / (BM25_K1 + tf);
            }
        }
        (scores, touched)
    }
}

fn build(skills: &[Skill], bodies: Option<&[String]>) -> SearchIndex {
    let mut terms: HashMap<String, u32> = HashMap::new();
    let mut postings: Vec<Vec<Posting>> = Vec::new();
    let mut lens: Vec<[u32; FIELDS]> = Vec::with_capacity(skills.len());
    let mut doc_terms: HashMap<u32, [u16; FIELDS]> = HashMap::new();
    for (doc, skill) in (0u32..).zip(skills) {
        doc_terms.clear();
        let body = bodies
            .and_then(|b| b.get(doc as usize))
            .map_or("", String::as_str);
        let mut len = [0u32; FIELDS];
        for (field, text) in [
            (NAME, skill.name.as_str()),
            (DESCRIPTION, skill.description.as_str()),
            (BODY, body),
        ] {
            for token in tokenize(text) {
                len[field] = len[field].saturating_add(1);
                let id = match terms.get(&token) {
                    Some(&id) => id,
                    None => {
                        let id = u32::try_from(postings.len()).unwrap_or(u32::MAX);
                        terms.insert(token, id);
                        postings.push(Vec::new());
                        id
                    }
                };
                let tf = doc_terms.entry(id).or_insert([0; FIELDS]);
                tf[field] = tf[field].saturating_add(1);
            }
        }
        for (&id, &tf) in &doc_terms {
            if let Some(list) = postings.get_mut(id as usize) {
                list.push(Posting { doc, tf });
            }
        }
        lens.push(len);
    }
    let n = skills.len().max(1) as f64;
    let mut avg = [0.0f64; FIELDS];
    for len in &lens {
        for f in 0..FIELDS {
            avg[f] += f64::from(len[f]) / n;
        }
    }
    let field_factor = lens
        .iter()
        .map(|len| {
            let mut factor = [0.0; FIELDS];
            for f in 0..FIELDS {
                if avg[f] > 0.0 {
                    let norm = 1.0 - BM25_B + BM25_B * f64::from(len[f]) / avg[f];
                    factor[f] = FIELD_WEIGHTS[f] / norm;
                }
            }
            factor
        })
        .collect();
    let mut by_name: Vec<usize> = (0..skills.len()).collect();
    by_name.sort_by(|&a, &b| {
        (&skills[a].name, skills[a].scope, a).cmp(&(&skills[b].name, skills[b].scope, b))
    });
    let mut order = vec![0u32; skills.len()];
    for (rank, &i) in (0u32..).zip(&by_name) {
        order[i] = rank;
    }
    let docs = skills
        .iter()
        .zip(order)
        .map(|(s, order)| Doc {
            name: s.name.clone(),
            description: s.description.clone(),
            scope: s.scope,
            order,
        })
        .collect();
    SearchIndex {
        docs,
        terms,
        postings,
        field_factor,
        bodies: bodies.is_some(),
        diagnostics: Vec::new(),
    }
}

/// The Markdown body of a `SKILL.md`, read with every safety check of
/// [`read_skill_md`](crate::fs::read_skill_md).
pub fn read_body(skill_md: &Path) -> Result<String, Diagnostic> {
    let text = read_skill_md(skill_md)?;
    let text = text.strip_prefix('\u{FEFF}').unwrap_or(&text);
    let split = crate::spec::frontmatter::split(text).map_err(|d| d.in_file(skill_md))?;
    Ok(split.body.to_owned())
}

/// A candidate in the top-k heap. Ordered so that the *worst* is greatest:
/// lower score, then later name.
#[derive(Debug, Clone, Copy)]
struct Ranked {
    score: f64,
    order: u32,
    doc: u32,
}

impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .score
            .total_cmp(&self.score)
            .then(self.order.cmp(&other.order))
    }
}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Ranked {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Ranked {}

struct TopK {
    limit: usize,
    heap: BinaryHeap<Ranked>,
}

impl TopK {
    fn new(limit: usize) -> Self {
        TopK {
            limit,
            heap: BinaryHeap::new(),
        }
    }

    /// True when a candidate with this score and order would be kept.
    fn accepts(&self, score: f64, order: u32) -> bool {
        if self.heap.len() < self.limit {
            return true;
        }
        let candidate = Ranked {
            score,
            order,
            doc: 0,
        };
        self.heap.peek().is_some_and(|worst| candidate < *worst)
    }

    fn push(&mut self, score: f64, order: u32, doc: u32) {
        self.heap.push(Ranked { score, order, doc });
        if self.heap.len() > self.limit {
            self.heap.pop();
        }
    }

    /// Best first.
    fn into_sorted(self) -> Vec<Ranked> {
        self.heap.into_sorted_vec()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn tokenizer_splits_kebab_case_and_drops_stop_words() {
        assert_eq!(
            tokenize("Use when converting PDF-Tools files to CSV"),
            ["converting", "pdf", "tool", "file", "csv"]
        );
        assert_eq!(tokenize("class s3 glass"), ["class", "s3", "glass"]);
    }
}
