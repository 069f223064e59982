//! The level-1 catalog: the list of skills a host puts in its system prompt
//! (name, description and `SKILL.md` location of each), in one of four
//! formats, optionally fitted to a budget in characters or tokens.
//!
//! ```
//! use skilldeck::catalog::{self, Budget, CatalogOptions};
//!
//! let options = CatalogOptions { budget: Some(Budget::Chars(4_000)), ..CatalogOptions::default() };
//! let catalog = catalog::render(&[], &options, None).unwrap();
//! assert_eq!(catalog.text, ""); // no skills: no catalog, not an empty tag
//! ```
//!
//! # Which skills
//!
//! Skills that are not [`Skill::model_invocable`] (frontmatter
//! `disable-model-invocation: true`, or mode `manual` or `off`) are left out.
//! [`SkillMode::Pinned`] skills are never shortened or dropped, even when
//! they alone exceed the budget ([`Explanation::over_budget`] says so).
//! [`SkillMode::NameOnly`] skills never show their description.
//!
//! # Formats
//!
//! Every non-empty catalog ends with a newline. With no skill to show,
//! `xml`, `markdown` and `json` are the empty string.
//!
//! `xml` (default), the agentskills.io client guide's block:
//!
//! ```text
//! <available_skills>
//!   <skill>
//!     <name>pdf-tools</name>
//!     <description>Extract text and tables from PDF files. Use when…</description>
//!     <location>/abs/path/pdf-tools/SKILL.md</location>
//!   </skill>
//! </available_skills>
//! ```
//!
//! Name-only entries have no `<description>` line.
//!
//! `skills-ref`: byte-identical to the standard output of `agentskills
//! to-prompt DIR...` (PyPI `skills-ref` 0.1.1): no indentation, every value
//! on its own line, `'` written `&#x27;` (Python's `html.escape`), the
//! location *not* escaped and with symlinks resolved, description and name
//! stripped of surrounding whitespace, and a final newline (from
//! `click.echo`). Two exceptions to "empty means empty": with no skills it
//! is `<available_skills>\n</available_skills>\n`, as skills-ref prints
//! (unless a budget is too small even for that: then it is empty); and
//! it keeps the caller's order (skills-ref prints its arguments in order),
//! while the other formats list skills by rank (see below). Budgets still
//! apply; a shortened or name-only entry (no `<description>` lines) is of
//! course no longer what skills-ref would print. Names are compared after
//! NFKC normalisation (skills-ref does not normalise), which only matters
//! for names that are invalid anyway.
//!
//! `markdown`:
//!
//! ```text
//! ## Available skills
//!
//! - **pdf-tools**: Extract text and tables from PDF files. Use when… (`/abs/path/pdf-tools/SKILL.md`)
//! - **notes** (`/abs/path/notes/SKILL.md`)
//! ```
//!
//! One bullet per skill; whitespace runs in descriptions (newlines included)
//! become one space so each skill stays one line; `\ * _ `` ` `` [ ]` in
//! names are backslash-escaped; the location is a code span (with a longer
//! fence if the path holds backticks).
//!
//! `json`: one array, one object per line, keys always in this order:
//!
//! ```text
//! [
//!   {"name":"pdf-tools","description":"Extract…","location":"/abs/.../SKILL.md","scope":"project","mode":"auto","shortened":true},
//!   {"name":"notes","description":null,"location":"/abs/.../SKILL.md","scope":"user","mode":"name-only","shortened":false}
//! ]
//! ```
//!
//! | key | type | meaning |
//! |---|---|---|
//! | `name` | string | the skill's name |
//! | `description` | string or `null` | the description (shortened with `…` if `shortened`); `null` for name-only entries |
//! | `location` | string | absolute path of its `SKILL.md` (left out when [`CatalogOptions::locations`] is off) |
//! | `scope` | string | `explicit`, `project`, `user`, `extra` or `bundled` |
//! | `mode` | string | `pinned`, `auto` or `name-only` |
//! | `shortened` | boolean | the budget shortened the description |
//!
//! # Escaping
//!
//! The catalog goes into a prompt, so no value can forge structure around
//! it: `& < > " '` in names, descriptions and locations become `&amp; &lt;
//! &gt; &quot; &apos;` in `xml` and `markdown` (`&apos;` is XML's own
//! entity), `&amp; &lt; &gt; &quot; &#x27;` in `skills-ref` (whose location
//! is left as skills-ref leaves it), and `\u0026 \u003c \u003e \" \u0027`
//! in `json` strings (still plain JSON: a parser gets the original text).
//!
//! # Ranking and budgets
//!
//! Skills are ranked pinned first, then by relevance (a caller-supplied map
//! from name to score, higher first, missing or NaN = 0; the catalog does no
//! search itself), then by scope precedence and name, then input order.
//! With a [`Budget`], the whole rendered catalog must fit; if it does not:
//!
//! 1. descriptions of non-pinned skills are shortened evenly: one common
//!    cap, the largest (found by binary search) at or above the floor
//!    ([`CatalogOptions::floor_chars`]) that fits. A description longer than
//!    the cap is cut at the last word end so that it plus `…` has at most
//!    cap characters (a first word longer than that is cut inside);
//! 2. if the floor does not fit, the lowest-ranked skills are reduced to
//!    their name, as few as needed, the others keeping the floor cap;
//! 3. if names alone do not fit, the lowest-ranked skills are dropped.
//!
//! Characters are Unicode scalar values of the rendered text. Tokens are
//! exact `tiktoken` counts (`o200k_base` by default, or `cl100k_base`; text
//! counted as ordinary text, so `<|endoftext|>` in a description is not a
//! special token). To stay fast with thousands of skills, sizes are planned
//! from per-entry counts, computed lazily in rank order (a 8,000-token
//! budget never tokenizes 10,000 descriptions) and summed; each entry ends
//! at a token boundary, so the sum is normally the exact total, and a
//! shortened description's count is read off one tokenization of its full
//! entry (exact at word ends). The result is then counted whole; should it
//! still exceed the budget, the plan is redone with less room until it fits,
//! so the returned catalog is always within budget unless pinned skills
//! alone exceed it. Everything is deterministic: the same skills, options
//! and scores give the same bytes.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

use serde::Serialize;
use tiktoken_rs::CoreBPE;

use crate::error::Error;
use crate::limits::{CATALOG_DESCRIPTION_FLOOR_CHARS, CATALOG_MIN_FLOOR_CHARS};
use crate::skill::{Scope, Skill, SkillMode};

/// Appended to a shortened description.
pub const ELLIPSIS: &str = "…";

/// How the catalog is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CatalogFormat {
    /// The client guide's indented `<available_skills>` block.
    #[default]
    Xml,
    /// Byte-identical to `skills-ref to-prompt` (0.1.1).
    SkillsRef,
    /// A Markdown section with one bullet per skill.
    Markdown,
    /// A JSON array of objects.
    Json,
}

impl CatalogFormat {
    /// Every format.
    pub const ALL: [CatalogFormat; 4] = [
        CatalogFormat::Xml,
        CatalogFormat::SkillsRef,
        CatalogFormat::Markdown,
        CatalogFormat::Json,
    ];

    /// Its name (`xml`, `skills-ref`, `markdown`, `json`).
    pub fn as_str(self) -> &'static str {
        match self {
            CatalogFormat::Xml => "xml",
            CatalogFormat::SkillsRef => "skills-ref",
            CatalogFormat::Markdown => "markdown",
            CatalogFormat::Json => "json",
        }
    }
}

impl fmt::Display for CatalogFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for CatalogFormat {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        CatalogFormat::ALL
            .into_iter()
            .find(|f| f.as_str() == s)
            .ok_or_else(|| Error::InvalidValue {
                what: "catalog format",
                value: s.to_owned(),
                expected: "xml, skills-ref, markdown or json",
            })
    }
}

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
    fn bpe(self) -> Result<&'static CoreBPE, Error> {
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

/// The most the whole rendered catalog may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Budget {
    /// Unicode characters.
    Chars(usize),
    /// Tokens of `encoding`.
    Tokens {
        /// Most tokens.
        limit: usize,
        /// The tokenizer.
        encoding: Encoding,
    },
}

impl Budget {
    /// The limit, in the budget's unit.
    pub fn limit(self) -> usize {
        match self {
            Budget::Chars(n) | Budget::Tokens { limit: n, .. } => n,
        }
    }

    /// The unit: `characters` or `tokens`.
    pub fn unit(self) -> &'static str {
        match self {
            Budget::Chars(_) => "characters",
            Budget::Tokens { .. } => "tokens",
        }
    }
}

impl fmt::Display for Budget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Budget::Chars(n) => write!(f, "{} characters", thousands(*n)),
            Budget::Tokens { limit, encoding } => {
                write!(f, "{} tokens ({encoding})", thousands(*limit))
            }
        }
    }
}

/// How to render a catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CatalogOptions {
    /// The format (default `xml`).
    pub format: CatalogFormat,
    /// The budget; `None` renders everything in full.
    pub budget: Option<Budget>,
    /// Descriptions are not shortened below this many characters (default
    /// [`CATALOG_DESCRIPTION_FLOOR_CHARS`], at least [`CATALOG_MIN_FLOOR_CHARS`]).
    pub floor_chars: usize,
    /// Show each skill's `SKILL.md` path (default true). Off for a model
    /// that cannot read the host's files (a remote MCP client): the paths
    /// would be useless to it and tell it the host's folder layout. The
    /// `skills-ref` format always carries them (its format requires them).
    pub locations: bool,
}

impl Default for CatalogOptions {
    fn default() -> Self {
        CatalogOptions {
            format: CatalogFormat::Xml,
            budget: None,
            floor_chars: CATALOG_DESCRIPTION_FLOOR_CHARS,
            locations: true,
        }
    }
}

impl CatalogOptions {
    /// The options a config file's `[catalog]` section asks for.
    pub fn from_config(config: &crate::config::CatalogConfig) -> Result<Self, Error> {
        let format = match &config.format {
            Some(f) => f.parse()?,
            None => CatalogFormat::default(),
        };
        let encoding = match &config.encoding {
            Some(e) => e.parse()?,
            None => Encoding::default(),
        };
        let budget = match (config.budget_chars, config.budget_tokens) {
            (Some(_), Some(_)) => {
                return Err(Error::ConflictingOptions(
                    "[catalog]: set budget-chars or budget-tokens, not both".to_owned(),
                ));
            }
            (Some(n), None) => Some(Budget::Chars(n)),
            (None, Some(limit)) => Some(Budget::Tokens { limit, encoding }),
            (None, None) => None,
        };
        Ok(CatalogOptions {
            format,
            budget,
            ..CatalogOptions::default()
        })
    }
}

/// A rendered catalog and what happened to each skill.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Catalog<'a> {
    /// The text for the system prompt.
    pub text: String,
    /// What was kept, shortened and dropped, and why.
    pub explanation: Explanation<'a>,
}

/// What happened to one skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "outcome")]
pub enum Outcome {
    /// In the catalog with its whole description.
    Kept,
    /// In the catalog with a shortened description.
    Shortened {
        /// Characters before.
        from: usize,
        /// Characters after (the `…` included).
        to: usize,
    },
    /// In the catalog without its description.
    NameOnly,
    /// Left out to fit the budget.
    Dropped,
    /// Never in the catalog (see the reason).
    Excluded,
}

/// Why a skill got its [`Outcome`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reason {
    /// Mode `pinned`: never shortened or dropped.
    Pinned,
    /// There is no budget, or everything fits.
    Fits,
    /// Shortened, reduced to its name or dropped to fit the budget; lower
    /// ranks go first.
    Budget,
    /// Mode `name-only`.
    ModeNameOnly,
    /// Frontmatter `disable-model-invocation: true`.
    DisableModelInvocation,
    /// Mode `manual`.
    ModeManual,
    /// Mode `off`.
    ModeOff,
}

/// One skill in an [`Explanation`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExplainedSkill<'a> {
    /// Its name (borrowed from the skill: no copy per skill).
    pub name: &'a str,
    /// Its scope.
    pub scope: Scope,
    /// Its mode.
    pub mode: SkillMode,
    /// 1-based rank (pinned first, then relevance, scope, name); `None` when excluded.
    pub rank: Option<usize>,
    /// Its relevance score, when scores were given.
    pub relevance: Option<f64>,
    /// What happened to it.
    #[serde(flatten)]
    pub outcome: Outcome,
    /// Why.
    pub reason: Reason,
}

/// What [`render`] did, for `--explain`. `Display` prints a report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Explanation<'a> {
    /// The format rendered.
    pub format: CatalogFormat,
    /// The budget, if any.
    pub budget: Option<Budget>,
    /// Size of the text, in the budget's unit (characters without a budget),
    /// counted on the whole text.
    pub size: usize,
    /// The common description cap, when descriptions had to be shortened.
    pub cap: Option<usize>,
    /// The floor used.
    pub floor: usize,
    /// True when the text exceeds the budget (only ever because of pinned skills).
    pub over_budget: bool,
    /// Every skill given: in rank order, then the excluded ones in input order.
    pub skills: Vec<ExplainedSkill<'a>>,
}

impl Explanation<'_> {
    /// How many skills had `outcome` (shortened ones counted whatever their sizes).
    pub fn count(&self, outcome: Outcome) -> usize {
        self.skills
            .iter()
            .filter(|s| std::mem::discriminant(&s.outcome) == std::mem::discriminant(&outcome))
            .count()
    }
}

impl fmt::Display for Explanation<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let unit = self.budget.map_or("characters", Budget::unit);
        write!(
            f,
            "catalog ({}): {} skills: {} kept, {} shortened, {} name-only, {} dropped, {} excluded; ",
            self.format,
            self.skills.len(),
            self.count(Outcome::Kept),
            self.count(Outcome::Shortened { from: 0, to: 0 }),
            self.count(Outcome::NameOnly),
            self.count(Outcome::Dropped),
            self.count(Outcome::Excluded),
        )?;
        match self.budget {
            Some(budget) => writeln!(
                f,
                "{} of {}",
                thousands(self.size),
                budget_text(budget, unit)
            )?,
            None => writeln!(f, "{} {unit}, no budget", thousands(self.size))?,
        }
        if self.over_budget {
            writeln!(
                f,
                "warning: over budget: pinned skills are never shortened or dropped, and they alone do not fit"
            )?;
        }
        if let Some(cap) = self.cap {
            writeln!(
                f,
                "descriptions shortened evenly to at most {cap} characters (floor {})",
                self.floor
            )?;
        }
        let width = self
            .skills
            .iter()
            .map(|s| s.name.chars().count())
            .max()
            .unwrap_or(0)
            .min(40);
        for s in &self.skills {
            let rank = s.rank.map_or_else(|| "-".to_owned(), |r| r.to_string());
            let what = match s.outcome {
                Outcome::Kept => "kept",
                Outcome::Shortened { .. } => "shortened",
                Outcome::NameOnly => "name-only",
                Outcome::Dropped => "dropped",
                Outcome::Excluded => "excluded",
            };
            let why = match (s.outcome, s.reason) {
                (_, Reason::Pinned) => "pinned: never shortened or dropped".to_owned(),
                (_, Reason::Fits) if self.budget.is_none() => "no budget".to_owned(),
                (_, Reason::Fits) => "fits the budget".to_owned(),
                (Outcome::Shortened { from, to }, _) => {
                    format!("budget: description {from} -> {to} characters")
                }
                (Outcome::NameOnly, Reason::Budget) => {
                    "budget: the floor did not fit; lowest ranks lose descriptions first".to_owned()
                }
                (Outcome::Dropped, _) => {
                    "budget: names alone did not fit; lowest ranks are dropped first".to_owned()
                }
                (_, Reason::ModeNameOnly) => "mode name-only".to_owned(),
                (_, Reason::DisableModelInvocation) => "disable-model-invocation: true".to_owned(),
                (_, Reason::ModeManual) => "mode manual".to_owned(),
                (_, Reason::ModeOff) => "mode off".to_owned(),
                (_, Reason::Budget) => "budget".to_owned(),
            };
            let relevance = s
                .relevance
                .map(|r| format!(" (relevance {r:.3})"))
                .unwrap_or_default();
            writeln!(
                f,
                "  {rank:>5}  {what:<9}  {:<width$}  {why}{relevance}",
                s.name
            )?;
        }
        Ok(())
    }
}

fn budget_text(budget: Budget, unit: &str) -> String {
    match budget {
        Budget::Chars(n) => format!("{} {unit}", thousands(n)),
        Budget::Tokens { limit, encoding } => format!("{} {unit} ({encoding})", thousands(limit)),
    }
}

/// `12345` as `12,345`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Exact token count of `text` (as ordinary text: special-token markers are
/// counted as the characters they are).
pub fn count_tokens(text: &str, encoding: Encoding) -> Result<usize, Error> {
    Ok(encoding.bpe()?.count_ordinary(text))
}

/// Renders the catalog of `skills` (a deck's skills, for example).
///
/// `relevance` maps skill names to scores (higher is more relevant; missing
/// is 0), for example BM25 scores for the user's query; without it skills
/// rank by scope and name. See the [module documentation](self) for the
/// formats and the budget rules. Fails only if the tokenizer cannot be built.
pub fn render<'a, I>(
    skills: I,
    options: &CatalogOptions,
    relevance: Option<&HashMap<String, f64>>,
) -> Result<Catalog<'a>, Error>
where
    I: IntoIterator<Item = &'a Skill>,
{
    let format = options.format;
    let floor = options.floor_chars.max(CATALOG_MIN_FLOOR_CHARS);
    let skills = skills.into_iter();
    // Sized once (a deck's slice knows its length): no regrowth copies.
    let mut items: Vec<Item<'a>> = Vec::with_capacity(skills.size_hint().0);
    let mut excluded: Vec<ExplainedSkill<'a>> = Vec::new();
    for (input, skill) in skills.enumerate() {
        if !skill.model_invocable() {
            excluded.push(ExplainedSkill {
                name: &skill.name,
                scope: skill.scope,
                mode: skill.mode,
                rank: None,
                relevance: None,
                outcome: Outcome::Excluded,
                reason: match skill.mode {
                    SkillMode::Manual => Reason::ModeManual,
                    SkillMode::Off => Reason::ModeOff,
                    _ => Reason::DisableModelInvocation,
                },
            });
            continue;
        }
        items.push(Item::new(
            skill,
            input,
            format,
            relevance,
            options.locations,
        ));
    }

    // Rank order: pinned first, then relevance, scope, name, input order.
    // The keys sit side by side (no pointer chasing per comparison).
    let mut keys: Vec<RankKey<'a>> = items
        .iter()
        .enumerate()
        .map(|(i, item)| RankKey {
            unpinned: !item.pinned(),
            score: std::cmp::Reverse(total_order(item.score())),
            scope: item.skill.scope,
            name: &item.skill.name,
            input: item.input,
            item: i,
        })
        .collect();
    // Unstable is deterministic here: the input position breaks every tie.
    keys.sort_unstable();
    let ranked: Vec<usize> = keys.iter().map(|k| k.item).collect();
    drop(keys);
    // Output order: the caller's for skills-ref, the rank otherwise.
    let output: Vec<usize> = if format == CatalogFormat::SkillsRef {
        (0..items.len()).collect()
    } else {
        ranked.clone()
    };

    let mut views: Vec<View> = items
        .iter()
        .map(|item| {
            if item.name_only() {
                View::NameOnly
            } else {
                View::Full
            }
        })
        .collect();

    let (text, size, cap) = match options.budget {
        None => {
            let text = render_text(format, &items, &output, &views);
            // Everything but the skills' own text is ASCII; when that is
            // ASCII too, characters are bytes (a cheap check per skill
            // instead of counting the whole catalog's characters).
            let ascii = items.iter().all(|item| item.ascii);
            let size = if ascii {
                text.len()
            } else {
                text.chars().count()
            };
            (text, size, None)
        }
        Some(budget) => {
            let meter = match budget {
                Budget::Chars(_) => Meter::Chars,
                Budget::Tokens { encoding, .. } => Meter::Tokens(encoding.bpe()?),
            };
            let mut planner = Planner {
                format,
                items: &items,
                meter,
                floor,
                costs: items.iter().map(|_| Cost::default()).collect(),
                scratch: String::new(),
            };
            planner.fit(budget.limit(), &ranked, &output, &mut views)
        }
    };

    let mut explained = Vec::with_capacity(items.len() + excluded.len());
    for (position, &i) in ranked.iter().enumerate() {
        let item = &items[i];
        let (outcome, reason) = match views[i] {
            View::Full if item.pinned() => (Outcome::Kept, Reason::Pinned),
            View::Full => (Outcome::Kept, Reason::Fits),
            View::Cut(cap) => match cut_end(&item.desc, cap) {
                Some(end) => (
                    Outcome::Shortened {
                        from: item.desc.chars().count(),
                        to: item.desc[..end].chars().count() + 1,
                    },
                    Reason::Budget,
                ),
                None => (Outcome::Kept, Reason::Fits),
            },
            View::NameOnly if item.name_only() => (Outcome::NameOnly, Reason::ModeNameOnly),
            View::NameOnly => (Outcome::NameOnly, Reason::Budget),
            View::Dropped => (Outcome::Dropped, Reason::Budget),
        };
        explained.push(ExplainedSkill {
            name: &item.skill.name,
            scope: item.skill.scope,
            mode: item.skill.mode,
            rank: Some(position + 1),
            relevance: relevance.map(|_| item.score()),
            outcome,
            reason,
        });
    }
    explained.append(&mut excluded);
    let over_budget = options.budget.is_some_and(|b| size > b.limit());
    Ok(Catalog {
        text,
        explanation: Explanation {
            format,
            budget: options.budget,
            size,
            cap,
            floor,
            over_budget,
            skills: explained,
        },
    })
}

/// An item's place in the rank order (compared field by field).
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct RankKey<'a> {
    unpinned: bool,
    score: std::cmp::Reverse<i64>,
    scope: Scope,
    name: &'a str,
    input: usize,
    /// Its position in the items (the same order as `input`).
    item: usize,
}

/// `x` as an integer ordered as `f64::total_cmp` orders floats.
fn total_order(x: f64) -> i64 {
    let bits = x.to_bits().cast_signed();
    bits ^ (((bits >> 63).cast_unsigned() >> 1).cast_signed())
}

/// One skill that may appear in the catalog, prepared for rendering.
struct Item<'a> {
    skill: &'a Skill,
    /// Position in the caller's list.
    input: usize,
    /// The description as rendered (stripped; one line for markdown).
    desc: Cow<'a, str>,
    location: Cow<'a, str>,
    /// Name, description and location are all ASCII.
    ascii: bool,
    /// Which of name, description and location need no escaping in this
    /// format ([`PLAIN_NAME`], [`PLAIN_DESC`], [`PLAIN_LOCATION`]).
    plain: u8,
    relevance: Option<f64>,
}

const PLAIN_NAME: u8 = 1;
const PLAIN_DESC: u8 = 2;
const PLAIN_LOCATION: u8 = 4;

/// What every render would otherwise check in each skill's texts, checked
/// once by [`crate::Deck::new`] and kept in [`crate::skill::HostFields`]
/// (see [`hints_of`]). Bits of a `u16`.
mod hint {
    /// The hints were computed (0: nothing is known).
    pub const KNOWN: u16 = 1;
    /// `python_strip` leaves the description as it is.
    pub const DESC_STRIPPED: u16 = 1 << 1;
    /// `collapse_whitespace` leaves the stripped description as it is.
    pub const DESC_ONE_LINE: u16 = 1 << 2;
    /// Per text, shifted by `NAME`, `DESC` or `LOCATION`: ASCII.
    pub const ASCII: u16 = 1;
    /// No byte that `Esc::Xml`/`Esc::Html` replace.
    pub const XML: u16 = 2;
    /// No byte that `Esc::Json` replaces.
    pub const JSON: u16 = 4;
    pub const NAME: u32 = 3;
    /// The stripped description.
    pub const DESC: u32 = 6;
    /// `SKILL.md` as text (nothing is known when it is not UTF-8).
    pub const LOCATION: u32 = 9;
}

/// The catalog hints of `skill`'s current texts.
pub(crate) fn hints_of(skill: &Skill) -> u16 {
    // SIMD searches and a vectorized fold: this runs for every skill a
    // deck loads (a byte-table fold cost ~3,300 instructions per skill).
    let text = |s: &str| {
        let bytes = s.as_bytes();
        let mut bits = 0;
        if all_ascii(s) {
            bits |= hint::ASCII;
        }
        let xml = memchr::memchr3(b'&', b'<', b'>', bytes).is_none()
            && memchr::memchr2(b'"', b'\'', bytes).is_none();
        if xml {
            bits |= hint::XML;
            let control = bytes.iter().fold(false, |any, &b| any | (b < 0x20));
            if !control && memchr::memchr(b'\\', bytes).is_none() {
                bits |= hint::JSON;
            }
        }
        bits
    };
    let stripped = python_strip(&skill.description);
    let mut hints =
        hint::KNOWN | (text(&skill.name) << hint::NAME) | (text(stripped) << hint::DESC);
    if stripped.len() == skill.description.len() {
        hints |= hint::DESC_STRIPPED;
    }
    if is_one_line(stripped) {
        hints |= hint::DESC_ONE_LINE;
    }
    if let Some(location) = skill.skill_md.to_str() {
        hints |= text(location) << hint::LOCATION;
    }
    hints
}

impl<'a> Item<'a> {
    fn new(
        skill: &'a Skill,
        input: usize,
        format: CatalogFormat,
        relevance: Option<&HashMap<String, f64>>,
        locations: bool,
    ) -> Self {
        let hints = skill.host.catalog_hints();
        let has = |bits: u16| hints & bits == bits;
        let stripped = if has(hint::DESC_STRIPPED) {
            skill.description.as_str()
        } else {
            python_strip(&skill.description)
        };
        let desc = if format == CatalogFormat::Markdown && !has(hint::DESC_ONE_LINE) {
            collapse_whitespace(stripped)
        } else {
            Cow::Borrowed(stripped)
        };
        // Empty: not shown (a real path is never empty).
        let location = if !locations && format != CatalogFormat::SkillsRef {
            Cow::Borrowed("")
        } else if format == CatalogFormat::SkillsRef {
            // skills-ref prints `Path(dir).resolve() / "SKILL.md"`.
            match skill.skill_md.file_name() {
                Some(file) => {
                    let dir = skill.real_dir().to_string_lossy();
                    let file = file.to_string_lossy();
                    let mut path = String::with_capacity(dir.len() + file.len() + 1);
                    path.push_str(&dir);
                    if !path.ends_with(std::path::MAIN_SEPARATOR) {
                        path.push(std::path::MAIN_SEPARATOR);
                    }
                    path.push_str(&file);
                    Cow::Owned(path)
                }
                None => path_text(&skill.skill_md),
            }
        } else {
            path_text(&skill.skill_md)
        };
        let relevance = relevance.map(|scores| {
            scores
                .get(&skill.name)
                .copied()
                .filter(|s| !s.is_nan())
                .unwrap_or(0.0)
        });
        // What the hints say of each text (all zero when there are none).
        let known = |text: u32, bits: u16| has(hint::KNOWN | (bits << text));
        let ascii = if has(hint::KNOWN) {
            known(hint::NAME, hint::ASCII)
                && known(hint::DESC, hint::ASCII)
                && if format == CatalogFormat::SkillsRef {
                    all_ascii(&location)
                } else {
                    known(hint::LOCATION, hint::ASCII)
                }
        } else {
            all_ascii(&skill.name) && all_ascii(&desc) && all_ascii(&location)
        };
        let (name_bit, desc_bit, location_bit) = match format {
            CatalogFormat::Xml => (hint::XML, hint::XML, hint::XML),
            // Raw locations are never escaped; Markdown names and code
            // spans have their own escapes (0: never plain).
            CatalogFormat::SkillsRef => (hint::XML, hint::XML, 0),
            CatalogFormat::Markdown => (0, hint::XML, 0),
            CatalogFormat::Json => (hint::JSON, hint::JSON, hint::JSON),
        };
        let mut plain = 0;
        if name_bit != 0 && known(hint::NAME, name_bit) {
            plain |= PLAIN_NAME;
        }
        if desc_bit != 0 && known(hint::DESC, desc_bit) {
            plain |= PLAIN_DESC;
        }
        if location_bit != 0 && known(hint::LOCATION, location_bit) {
            plain |= PLAIN_LOCATION;
        }
        Item {
            skill,
            input,
            desc,
            location,
            ascii,
            plain,
            relevance,
        }
    }

    fn pinned(&self) -> bool {
        self.skill.mode == SkillMode::Pinned
    }

    fn name_only(&self) -> bool {
        self.skill.mode == SkillMode::NameOnly
    }

    fn score(&self) -> f64 {
        self.relevance.unwrap_or(0.0)
    }
}

/// `str::is_ascii` as a branch-free OR of whole words (the standard one
/// stops at the first non-ASCII byte and cost ~1 instruction per byte here;
/// a byte-wise fold was no better).
fn all_ascii(s: &str) -> bool {
    let bytes = s.as_bytes();
    let mut words = bytes.chunks_exact(8);
    let high = words
        .by_ref()
        .map(|w| <[u8; 8]>::try_from(w).map_or(HIGH_BITS, u64::from_le_bytes))
        .fold(0, |acc, w| acc | w)
        & HIGH_BITS;
    high == 0 && words.remainder().iter().all(u8::is_ascii)
}

/// A path as text: borrowed when it is UTF-8 (`to_str` validates with the
/// standard library's ASCII fast path, `to_string_lossy` chunk by chunk).
fn path_text(path: &std::path::Path) -> Cow<'_, str> {
    match path.to_str() {
        Some(text) => Cow::Borrowed(text),
        None => path.to_string_lossy(),
    }
}

/// Python's `str.strip()`: Unicode whitespace plus the ASCII separators
/// U+001C–U+001F, which Rust's `trim` keeps.
fn python_strip(s: &str) -> &str {
    // Most descriptions start and end with a visible ASCII character.
    let visible = |b: Option<&u8>| b.is_some_and(|&b| b > b' ' && b < 0x7f);
    if visible(s.as_bytes().first()) && visible(s.as_bytes().last()) {
        return s;
    }
    s.trim_matches(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c))
}

/// Every whitespace run as one space.
fn collapse_whitespace(s: &str) -> Cow<'_, str> {
    if is_one_line(s) {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(s.split_whitespace().collect::<Vec<_>>().join(" "))
    }
}

/// True when [`collapse_whitespace`] leaves `s` as it is.
fn is_one_line(s: &str) -> bool {
    let bytes = s.as_bytes();
    if bytes.is_ascii() {
        // ASCII whitespace other than the space is U+0009–U+000D; a
        // branch-free fold (vectorized) instead of a byte-by-byte search.
        let breaks = bytes
            .iter()
            .fold(false, |any, &b| any | (b.wrapping_sub(0x09) < 5));
        !breaks && memchr::memmem::find(bytes, b"  ").is_none()
    } else {
        let mut prev_space = false;
        s.chars().all(|c| {
            let ok = c == ' ' && !prev_space || !c.is_whitespace();
            prev_space = c == ' ';
            ok
        })
    }
}

/// Where a description longer than `cap` characters is cut (byte offset):
/// the last word end that leaves room for `…`, or inside the first word when
/// it alone is too long. `None` when it fits.
fn cut_end(desc: &str, cap: usize) -> Option<usize> {
    let cap = cap.max(CATALOG_MIN_FLOOR_CHARS);
    let keep = cap - 1;
    let mut chars = desc.char_indices().skip(keep);
    let (keep_byte, keep_char) = chars.next()?; // the first character not kept
    chars.next()?; // the description has more than `cap` characters
    if keep_char.is_whitespace() {
        return Some(desc[..keep_byte].trim_end().len());
    }
    match desc[..keep_byte].rfind(char::is_whitespace) {
        Some(ws) => Some(desc[..ws].trim_end().len()),
        None => Some(keep_byte),
    }
}

/// How one skill is rendered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum View {
    Full,
    /// Description at most this many characters.
    Cut(usize),
    NameOnly,
    Dropped,
}

/// How special characters are written.
#[derive(Clone, Copy)]
enum Esc {
    /// `&apos;` for `'`.
    Xml,
    /// Python's `html.escape`: `&#x27;` for `'`.
    Html,
    /// Markdown names: XML entities plus `\` before Markdown syntax.
    MarkdownName,
    /// JSON string contents.
    Json,
    /// Nothing (skills-ref locations).
    Raw,
}

/// JSON escapes for the control characters U+0000–U+001F.
const JSON_CONTROL: [&str; 32] = [
    "\\u0000", "\\u0001", "\\u0002", "\\u0003", "\\u0004", "\\u0005", "\\u0006", "\\u0007", "\\b",
    "\\t", "\\n", "\\u000b", "\\f", "\\r", "\\u000e", "\\u000f", "\\u0010", "\\u0011", "\\u0012",
    "\\u0013", "\\u0014", "\\u0015", "\\u0016", "\\u0017", "\\u0018", "\\u0019", "\\u001a",
    "\\u001b", "\\u001c", "\\u001d", "\\u001e", "\\u001f",
];

/// The replacement for byte `b` (every escaped character is ASCII).
#[inline]
fn escape_byte(esc: Esc, b: u8) -> Option<&'static str> {
    match esc {
        Esc::Raw => None,
        Esc::Xml | Esc::Html | Esc::MarkdownName => match b {
            b'&' => Some("&amp;"),
            b'<' => Some("&lt;"),
            b'>' => Some("&gt;"),
            b'"' => Some("&quot;"),
            b'\'' => Some(if matches!(esc, Esc::Html) {
                "&#x27;"
            } else {
                "&apos;"
            }),
            _ if matches!(esc, Esc::MarkdownName) => match b {
                b'\\' => Some("\\\\"),
                b'*' => Some("\\*"),
                b'_' => Some("\\_"),
                b'`' => Some("\\`"),
                b'[' => Some("\\["),
                b']' => Some("\\]"),
                _ => None,
            },
            _ => None,
        },
        Esc::Json => match b {
            b'"' => Some("\\\""),
            b'\\' => Some("\\\\"),
            b'&' => Some("\\u0026"),
            b'<' => Some("\\u003c"),
            b'>' => Some("\\u003e"),
            b'\'' => Some("\\u0027"),
            0..=0x1f => Some(JSON_CONTROL[usize::from(b)]),
            _ => None,
        },
    }
}

/// A byte lookup table: `true` for the bytes in `special`, and for the
/// control characters when `control` is set.
const fn byte_table(special: &[u8], control: bool) -> [bool; 256] {
    let mut table = [false; 256];
    let mut i = 0;
    while i < special.len() {
        table[special[i] as usize] = true;
        i += 1;
    }
    if control {
        let mut c = 0;
        while c < 0x20 {
            table[c] = true;
            c += 1;
        }
    }
    table
}

static XML_SPECIAL: [bool; 256] = byte_table(b"&<>\"'", false);
static MARKDOWN_NAME_SPECIAL: [bool; 256] = byte_table(b"&<>\"'\\*_`[]", false);
static JSON_SPECIAL: [bool; 256] = byte_table(b"&<>\"'\\", true);
static NO_SPECIAL: [bool; 256] = [false; 256];

/// The bytes `esc` replaces (a fast scan for the common case: none).
fn special_bytes(esc: Esc) -> &'static [bool; 256] {
    match esc {
        Esc::Xml | Esc::Html => &XML_SPECIAL,
        Esc::MarkdownName => &MARKDOWN_NAME_SPECIAL,
        Esc::Json => &JSON_SPECIAL,
        Esc::Raw => &NO_SPECIAL,
    }
}

/// `s`, escaped unless `plain` says it needs no escape.
#[inline]
fn push_text(out: &mut String, s: &str, esc: Esc, plain: bool) {
    if plain {
        out.push_str(s);
    } else {
        push_escaped(out, s, esc);
    }
}

fn push_escaped(out: &mut String, s: &str, esc: Esc) {
    let bytes = s.as_bytes();
    match esc {
        Esc::Raw => out.push_str(s),
        // Names and most paths: a table scan beats starting SIMD searches.
        _ if bytes.len() < SHORT_TEXT_BYTES => push_escaped_scanning(out, s, esc),
        Esc::Xml | Esc::Html => push_escaped_searching(out, s, esc, |from| {
            let a = memchr::memchr3(b'&', b'<', b'>', &bytes[from..]);
            let b = memchr::memchr2(b'"', b'\'', &bytes[from..]);
            earliest(a, b).map(|i| from + i)
        }),
        // Control characters are rare; scan for them with the table.
        Esc::Json if !bytes.iter().any(|&b| b < 0x20) => {
            push_escaped_searching(out, s, esc, |from| {
                let a = memchr::memchr3(b'&', b'<', b'>', &bytes[from..]);
                let b = memchr::memchr3(b'"', b'\'', b'\\', &bytes[from..]);
                earliest(a, b).map(|i| from + i)
            })
        }
        Esc::Json | Esc::MarkdownName => push_escaped_scanning(out, s, esc),
    }
}

/// Texts shorter than this are escaped with a table scan.
const SHORT_TEXT_BYTES: usize = 64;

fn earliest(a: Option<usize>, b: Option<usize>) -> Option<usize> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Escapes with `next(from)`, which finds the next special byte at or
/// after `from` (SIMD searches: most text has none).
fn push_escaped_searching(
    out: &mut String,
    s: &str,
    esc: Esc,
    next: impl Fn(usize) -> Option<usize>,
) {
    let bytes = s.as_bytes();
    let mut start = 0;
    while let Some(at) = next(start) {
        out.push_str(&s[start..at]);
        out.push_str(escape_byte(esc, bytes[at]).unwrap_or_default());
        start = at + 1;
    }
    out.push_str(&s[start..]);
}

/// Escapes short texts: eight bytes at a time while no word holds a special
/// byte (SWAR, see [`word_may_hold_special`]), the table from the first word
/// that does. The last word overlaps the one before it, so no byte is left
/// for the table unless the text is shorter than a word.
fn push_escaped_scanning(out: &mut String, s: &str, esc: Esc) {
    let bytes = s.as_bytes();
    let clean_until = match esc {
        Esc::MarkdownName => 0,
        _ => clean_prefix(bytes, esc),
    };
    if clean_until == bytes.len() {
        out.push_str(s);
        return;
    }
    let special = special_bytes(esc);
    let mut start = 0;
    let mut i = clean_until;
    while let Some(offset) = bytes[i..].iter().position(|&b| special[usize::from(b)]) {
        let at = i + offset;
        out.push_str(&s[start..at]);
        out.push_str(escape_byte(esc, bytes[at]).unwrap_or_default());
        start = at + 1;
        i = start;
    }
    out.push_str(&s[start..]);
}

/// How many leading bytes certainly need no escape, in steps of eight
/// bytes (all of them when no word holds a special byte).
fn clean_prefix(bytes: &[u8], esc: Esc) -> usize {
    let word_at = |i: usize| {
        bytes
            .get(i..i + 8)
            .and_then(|w| <[u8; 8]>::try_from(w).ok())
            .map(u64::from_le_bytes)
    };
    let mut i = 0;
    while i + 8 <= bytes.len() {
        if word_at(i).is_some_and(|w| word_may_hold_special(esc, w)) {
            return i;
        }
        i += 8;
    }
    if i == bytes.len() {
        return i;
    }
    // The tail: one last word ending at the end, when there is one.
    match bytes.len().checked_sub(8).and_then(word_at) {
        Some(w) if !word_may_hold_special(esc, w) => bytes.len(),
        _ => i,
    }
}

const LOW_BITS: u64 = 0x0101_0101_0101_0101;
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// High bit set in each byte lane of `word` that is zero, and possibly in
/// lanes above a zero lane: nonzero exactly when some byte of `word` is zero.
#[inline]
fn zero_lanes(word: u64) -> u64 {
    word.wrapping_sub(LOW_BITS) & !word & HIGH_BITS
}

/// True when some byte of `word` may need escaping under `esc` (exact for
/// the XML, HTML and JSON sets; always true for the larger Markdown set, which
/// the table scan handles alone). Pairs of special bytes one bit apart share
/// one test: `&` and `'` are 0x26 and 0x27, `<` and `>` are 0x3c and 0x3e.
#[inline]
fn word_may_hold_special(esc: Esc, w: u64) -> bool {
    let lanes = |b: u8| LOW_BITS * u64::from(b);
    let amp_apos = zero_lanes((w & !lanes(0x01)) ^ lanes(b'&'));
    let angles = zero_lanes((w & !lanes(0x02)) ^ lanes(b'<'));
    let quote = zero_lanes(w ^ lanes(b'"'));
    match esc {
        Esc::Raw => false,
        Esc::Xml | Esc::Html => amp_apos | angles | quote != 0,
        Esc::Json => {
            // A byte below 0x20 (a control character), or a backslash.
            let control = w.wrapping_sub(lanes(0x20)) & !w & HIGH_BITS;
            let backslash = zero_lanes(w ^ lanes(b'\\'));
            amp_apos | angles | quote | control | backslash != 0
        }
        Esc::MarkdownName => true,
    }
}

/// Escaped size of `c`: (bytes, characters).
fn escaped_size(esc: Esc, c: char) -> (usize, usize) {
    match u8::try_from(c).ok().and_then(|b| escape_byte(esc, b)) {
        Some(rep) => (rep.len(), rep.len()),
        None => (c.len_utf8(), 1),
    }
}

fn desc_esc(format: CatalogFormat) -> Esc {
    match format {
        CatalogFormat::Xml | CatalogFormat::Markdown => Esc::Xml,
        CatalogFormat::SkillsRef => Esc::Html,
        CatalogFormat::Json => Esc::Json,
    }
}

fn header(format: CatalogFormat) -> &'static str {
    match format {
        CatalogFormat::Xml | CatalogFormat::SkillsRef => "<available_skills>\n",
        CatalogFormat::Markdown => "## Available skills\n\n",
        CatalogFormat::Json => "[\n",
    }
}

fn footer(format: CatalogFormat) -> &'static str {
    match format {
        CatalogFormat::Xml | CatalogFormat::SkillsRef => "</available_skills>\n",
        CatalogFormat::Markdown => "",
        CatalogFormat::Json => "]\n",
    }
}

/// The description part of an entry: the first `end` bytes of the
/// description, with `…` when shortened.
#[derive(Clone, Copy)]
struct DescPart {
    end: usize,
    shortened: bool,
}

/// Appends one entry (JSON entries end in `,\n`; the last comma is removed
/// when the catalog is assembled). Returns the byte range of the escaped
/// description text in `out` (without the `…`), if there is one.
fn write_entry(
    out: &mut String,
    format: CatalogFormat,
    item: &Item<'_>,
    desc: Option<DescPart>,
) -> Option<(usize, usize)> {
    let name = item.skill.name.as_str();
    let plain_name = item.plain & PLAIN_NAME != 0;
    let plain_location = item.plain & PLAIN_LOCATION != 0;
    let mut range = None;
    let mut write_desc = |out: &mut String| range = write_desc(out, format, item, desc);
    match format {
        CatalogFormat::Xml => {
            // Fixed text between values goes in one piece.
            out.push_str("  <skill>\n    <name>");
            push_text(out, name, Esc::Xml, plain_name);
            if desc.is_some() {
                out.push_str("</name>\n    <description>");
                write_desc(out);
                out.push_str("</description>\n");
            } else {
                out.push_str("</name>\n");
            }
            if !item.location.is_empty() {
                out.push_str("    <location>");
                push_text(out, &item.location, Esc::Xml, plain_location);
                out.push_str("</location>\n");
            }
            out.push_str("  </skill>\n");
        }
        CatalogFormat::SkillsRef => {
            out.push_str("<skill>\n<name>\n");
            push_text(out, name, Esc::Html, plain_name);
            out.push_str("\n</name>\n");
            if desc.is_some() {
                out.push_str("<description>\n");
                write_desc(out);
                out.push_str("\n</description>\n");
            }
            out.push_str("<location>\n");
            push_escaped(out, &item.location, Esc::Raw);
            out.push_str("\n</location>\n</skill>\n");
        }
        CatalogFormat::Markdown => {
            out.push_str("- **");
            push_escaped(out, name, Esc::MarkdownName);
            out.push_str("**");
            if desc.is_some() {
                out.push_str(": ");
                write_desc(out);
            }
            if !item.location.is_empty() {
                out.push_str(" (");
                push_code_span(out, &item.location);
                out.push(')');
            }
            out.push('\n');
        }
        CatalogFormat::Json => {
            out.push_str("  {\"name\":\"");
            push_text(out, name, Esc::Json, plain_name);
            out.push_str("\",\"description\":");
            if desc.is_some() {
                out.push('"');
                write_desc(out);
                out.push('"');
            } else {
                out.push_str("null");
            }
            if !item.location.is_empty() {
                out.push_str(",\"location\":\"");
                push_text(out, &item.location, Esc::Json, plain_location);
                out.push('"');
            }
            out.push_str(",\"scope\":\"");
            out.push_str(item.skill.scope.as_str());
            out.push_str("\",\"mode\":\"");
            out.push_str(item.skill.mode.as_str());
            out.push_str("\",\"shortened\":");
            out.push_str(if desc.is_some_and(|d| d.shortened) {
                "true"
            } else {
                "false"
            });
            out.push_str("},\n");
        }
    }
    range
}

/// Appends the description part (escaped, with `…` when shortened) and
/// returns the byte range of its escaped text.
#[inline(always)]
fn write_desc(
    out: &mut String,
    format: CatalogFormat,
    item: &Item<'_>,
    desc: Option<DescPart>,
) -> Option<(usize, usize)> {
    let part = desc?;
    let start = out.len();
    push_text(
        out,
        &item.desc[..part.end],
        desc_esc(format),
        item.plain & PLAIN_DESC != 0,
    );
    let range = Some((start, out.len()));
    if part.shortened {
        out.push_str(ELLIPSIS);
    }
    range
}

/// A Markdown code span, its fence longer than any backtick run in `text`.
fn push_code_span(out: &mut String, text: &str) {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    let pad = if longest > 0 { " " } else { "" };
    out.push_str(&fence);
    out.push_str(pad);
    push_escaped(out, text, Esc::Xml);
    out.push_str(pad);
    out.push_str(&fence);
}

/// The description part for `view`, `None` for name-only.
fn desc_part(item: &Item<'_>, view: View) -> Option<DescPart> {
    match view {
        View::Full => Some(DescPart {
            end: item.desc.len(),
            shortened: false,
        }),
        View::Cut(cap) => Some(match cut_end(&item.desc, cap) {
            Some(end) => DescPart {
                end,
                shortened: true,
            },
            None => DescPart {
                end: item.desc.len(),
                shortened: false,
            },
        }),
        View::NameOnly | View::Dropped => None,
    }
}

/// The whole catalog: entries in `output` order, dropped ones left out.
fn render_text(
    format: CatalogFormat,
    items: &[Item<'_>],
    output: &[usize],
    views: &[View],
) -> String {
    let shown = || output.iter().filter(|&&i| views[i] != View::Dropped);
    if shown().next().is_none() && format != CatalogFormat::SkillsRef {
        return String::new();
    }
    let capacity: usize = shown()
        .map(|&i| {
            let item = &items[i];
            item.skill.name.len() + item.desc.len() + item.location.len() + 128
        })
        .sum();
    let mut out = String::with_capacity(capacity + 64);
    out.push_str(header(format));
    for &i in shown() {
        write_entry(&mut out, format, &items[i], desc_part(&items[i], views[i]));
    }
    if format == CatalogFormat::Json && out.ends_with(",\n") {
        out.truncate(out.len() - 2);
        out.push('\n');
    }
    out.push_str(footer(format));
    out
}

/// Measures text in the budget's unit.
#[derive(Clone, Copy)]
enum Meter {
    Chars,
    Tokens(&'static CoreBPE),
}

impl Meter {
    fn measure(self, s: &str) -> usize {
        match self {
            Meter::Chars => s.chars().count(),
            Meter::Tokens(bpe) => bpe.count_ordinary(s),
        }
    }
}

/// Where each token of `text` ends (byte offsets).
fn token_ends(bpe: &CoreBPE, text: &str) -> Vec<u32> {
    let mut at = 0usize;
    bpe.encode_ordinary(text)
        .into_iter()
        .map(|t| {
            at += bpe.decode_bytes(&[t]).map_or(0, |b| b.len());
            u32::try_from(at).unwrap_or(u32::MAX)
        })
        .collect()
}

/// Cached sizes of one item's entry.
#[derive(Default)]
struct Cost {
    name_only: Option<usize>,
    full: Option<usize>,
    floor: Option<usize>,
    desc_chars: Option<usize>,
    /// Tokens only: where each token of the full entry ends (bytes), until
    /// the cut table is built from them.
    token_ends: Option<Vec<u32>>,
    /// Cut points `(characters kept, entry size)`, by characters kept.
    cuts: Option<Vec<(u32, u32)>>,
}

/// Fits a catalog to a budget.
struct Planner<'s, 'a> {
    format: CatalogFormat,
    items: &'s [Item<'a>],
    meter: Meter,
    floor: usize,
    costs: Vec<Cost>,
    scratch: String,
}

impl Planner<'_, '_> {
    /// Plans, renders and counts the whole text, re-planning with less room
    /// while it exceeds `limit`. Returns the text, its size and the cap.
    fn fit(
        &mut self,
        limit: usize,
        ranked: &[usize],
        output: &[usize],
        views: &mut [View],
    ) -> (String, usize, Option<usize>) {
        let (pinned, rest): (Vec<usize>, Vec<usize>) =
            ranked.iter().partition(|&&i| self.items[i].pinned());
        let fixed =
            self.meter.measure(header(self.format)) + self.meter.measure(footer(self.format));
        let pinned_size: usize = pinned.iter().map(|&i| self.full(i)).sum();
        let mut room = limit.saturating_sub(fixed + pinned_size);
        let mut step = 1usize;
        loop {
            let cap = self.plan(&rest, room, views);
            let text = render_text(self.format, self.items, output, views);
            let size = self.meter.measure(&text);
            let any_left = rest.iter().any(|&i| views[i] != View::Dropped);
            if size <= limit {
                return (text, size, cap);
            }
            if !any_left {
                if pinned.is_empty() {
                    // Only the skills-ref frame of an empty catalog is
                    // left, and it does not fit either.
                    return (String::new(), 0, cap);
                }
                return (text, size, cap);
            }
            // The per-entry sum was short of the whole count: retry with
            // less room, shrinking faster each time.
            step = step.max(size - limit);
            room = room.saturating_sub(step);
            step = step.saturating_mul(2);
        }
    }

    /// Sets the view of every non-pinned item (`rest`, in rank order) so
    /// their summed sizes fit `room`. Returns the common cap, if any.
    fn plan(&mut self, rest: &[usize], room: usize, views: &mut [View]) -> Option<usize> {
        // Names alone do not fit: keep the longest ranked prefix, name-only.
        let mut sum = 0;
        for (pos, &i) in rest.iter().enumerate() {
            sum += self.name_only(i);
            if sum > room {
                for (p, &j) in rest.iter().enumerate() {
                    views[j] = if p < pos {
                        View::NameOnly
                    } else {
                        View::Dropped
                    };
                }
                return None;
            }
        }
        // From here on every item's names fit, so `rest` is small enough
        // for per-item work.
        if self.sum_within(rest, room, Self::full) {
            for &i in rest {
                views[i] = self.base_view(i, View::Full);
            }
            return None;
        }
        if self.sum_within(rest, room, Self::at_floor) {
            let cap = self.largest_cap(rest, room);
            for &i in rest {
                views[i] = self.base_view(i, View::Cut(cap));
            }
            return Some(cap);
        }
        // The floor does not fit: the lowest ranks lose their descriptions.
        // Keep the longest prefix at the floor with the rest name-only.
        let floors: Vec<usize> = rest.iter().map(|&i| self.at_floor(i)).collect();
        let names: Vec<usize> = rest.iter().map(|&i| self.name_only(i)).collect();
        let mut with_floor = names.iter().sum::<usize>();
        let mut keep = 0;
        for (k, (f, n)) in floors.iter().zip(&names).enumerate() {
            with_floor = with_floor - n + f;
            if with_floor > room {
                break;
            }
            keep = k + 1;
        }
        for (p, &i) in rest.iter().enumerate() {
            views[i] = if p < keep {
                self.base_view(i, View::Cut(self.floor))
            } else {
                View::NameOnly
            };
        }
        Some(self.floor)
    }

    fn base_view(&self, i: usize, view: View) -> View {
        if self.items[i].name_only() {
            View::NameOnly
        } else {
            view
        }
    }

    /// True when the sizes of `items` sum to at most `room` (stops early).
    fn sum_within(
        &mut self,
        items: &[usize],
        room: usize,
        size: fn(&mut Self, usize) -> usize,
    ) -> bool {
        let mut sum = 0;
        for &i in items {
            sum += size(self, i);
            if sum > room {
                return false;
            }
        }
        true
    }

    /// The largest cap at or above the floor at which `rest` fits `room`.
    fn largest_cap(&mut self, rest: &[usize], room: usize) -> usize {
        let longest = rest
            .iter()
            .filter(|&&i| !self.items[i].name_only())
            .map(|&i| self.desc_chars(i))
            .max()
            .unwrap_or(0);
        let (mut lo, mut hi) = (self.floor, longest.saturating_sub(1));
        let mut best = self.floor;
        while lo <= hi {
            let mid = lo + (hi - lo) / 2;
            let total: usize = rest.iter().map(|&i| self.at_cap(i, mid)).sum();
            if total <= room {
                best = mid;
                lo = mid + 1;
            } else {
                match mid.checked_sub(1) {
                    Some(m) => hi = m,
                    None => break,
                }
            }
        }
        best
    }

    /// Size of item `i`'s entry rendered with `desc`.
    fn measure_entry(&mut self, i: usize, desc: Option<DescPart>) -> usize {
        self.scratch.clear();
        write_entry(&mut self.scratch, self.format, &self.items[i], desc);
        self.meter.measure(&self.scratch)
    }

    fn name_only(&mut self, i: usize) -> usize {
        if let Some(n) = self.costs[i].name_only {
            return n;
        }
        let n = self.measure_entry(i, None);
        self.costs[i].name_only = Some(n);
        n
    }

    fn full(&mut self, i: usize) -> usize {
        if self.items[i].name_only() {
            return self.name_only(i);
        }
        if let Some(n) = self.costs[i].full {
            return n;
        }
        let desc = desc_part(&self.items[i], View::Full);
        let n = match self.meter {
            Meter::Chars => self.measure_entry(i, desc),
            Meter::Tokens(bpe) => {
                // Tokenized once: the cut table reuses the token ends.
                self.scratch.clear();
                write_entry(&mut self.scratch, self.format, &self.items[i], desc);
                let ends = token_ends(bpe, &self.scratch);
                let n = ends.len();
                self.costs[i].token_ends = Some(ends);
                n
            }
        };
        self.costs[i].full = Some(n);
        n
    }

    fn at_floor(&mut self, i: usize) -> usize {
        if self.items[i].name_only() {
            return self.name_only(i);
        }
        if let Some(n) = self.costs[i].floor {
            return n;
        }
        let n = match cut_end(&self.items[i].desc, self.floor) {
            None => self.full(i),
            Some(end) => self.measure_entry(
                i,
                Some(DescPart {
                    end,
                    shortened: true,
                }),
            ),
        };
        self.costs[i].floor = Some(n);
        n
    }

    fn desc_chars(&mut self, i: usize) -> usize {
        if let Some(n) = self.costs[i].desc_chars {
            return n;
        }
        let n = self.items[i].desc.chars().count();
        self.costs[i].desc_chars = Some(n);
        n
    }

    /// Size of item `i`'s entry with its description capped at `cap`
    /// characters, from its table of cut points.
    fn at_cap(&mut self, i: usize, cap: usize) -> usize {
        if self.items[i].name_only() {
            return self.name_only(i);
        }
        if self.desc_chars(i) <= cap {
            return self.full(i);
        }
        if self.costs[i].cuts.is_none() {
            let cuts = self.cut_table(i);
            self.costs[i].cuts = Some(cuts);
        }
        let keep = cap.saturating_sub(1);
        let cuts = self.costs[i].cuts.as_deref().unwrap_or_default();
        let found = match cuts.partition_point(|&(k, _)| k as usize <= keep) {
            0 => None,
            p => Some(cuts[p - 1].1 as usize),
        };
        found.unwrap_or_else(|| self.full(i))
    }

    /// Every place `cut_end` may cut item `i`'s description (at or above
    /// the floor), with the entry's size when cut there: one rendering and,
    /// for tokens, one tokenization of the full entry.
    fn cut_table(&mut self, i: usize) -> Vec<(u32, u32)> {
        self.full(i);
        let token_ends = self.costs[i].token_ends.take().unwrap_or_default();
        let items = self.items;
        let item = &items[i];
        let esc = desc_esc(self.format);
        self.scratch.clear();
        let Some((start, end)) = write_entry(
            &mut self.scratch,
            self.format,
            item,
            desc_part(item, View::Full),
        ) else {
            return Vec::new();
        };
        let entry = self.scratch.as_str();
        let tail = format!("{ELLIPSIS}{}", &entry[end..]);
        let tail_size = self.meter.measure(&tail);
        // Size of the entry's first `start + bytes` bytes.
        let head_chars = entry[..start].chars().count();
        let head = |bytes: usize, chars: usize| match self.meter {
            Meter::Chars => head_chars + chars,
            Meter::Tokens(_) => token_ends.partition_point(|&e| e as usize <= start + bytes),
        };
        let hard_from = self.floor.saturating_sub(1).max(1);
        let mut cuts = Vec::new();
        let (mut bytes, mut chars) = (0, 0);
        let mut prev_ws = false;
        let mut first_word = true;
        for (k, c) in item.desc.chars().enumerate() {
            let ws = c.is_whitespace();
            let word_end = ws && !prev_ws && k > 0;
            let inside_first = first_word && !ws && k >= hard_from;
            if word_end || inside_first {
                let size = head(bytes, chars) + tail_size;
                cuts.push((
                    u32::try_from(k).unwrap_or(u32::MAX),
                    u32::try_from(size).unwrap_or(u32::MAX),
                ));
            }
            if ws {
                first_word = false;
            }
            let (b, n) = escaped_size(esc, c);
            bytes += b;
            chars += n;
            prev_ws = ws;
        }
        cuts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_end_stops_at_word_ends_and_leaves_room_for_the_ellipsis() {
        let d = "alpha beta gamma delta";
        assert_eq!(cut_end(d, 100), None);
        assert_eq!(cut_end(d, 22), None);
        // cap 12: keep at most 11 chars: "alpha beta " -> "alpha beta"
        assert_eq!(&d[..cut_end(d, 12).unwrap_or(0)], "alpha beta");
        // cap 11: keep 10 = "alpha beta", char 10 is a space
        assert_eq!(&d[..cut_end(d, 11).unwrap_or(0)], "alpha beta");
        // cap 10: keep 9 = "alpha bet" -> back to "alpha"
        assert_eq!(&d[..cut_end(d, 10).unwrap_or(0)], "alpha");
        // one long word: cut inside it
        assert_eq!(
            &"abcdefghij"[..cut_end("abcdefghij", 5).unwrap_or(0)],
            "abcd"
        );
    }

    #[test]
    fn byte_tables_match_the_escapes() {
        for esc in [Esc::Xml, Esc::Html, Esc::MarkdownName, Esc::Json, Esc::Raw] {
            for b in 0..=255u8 {
                assert_eq!(
                    special_bytes(esc)[usize::from(b)],
                    escape_byte(esc, b).is_some(),
                    "byte {b}"
                );
            }
        }
    }

    #[test]
    fn word_tests_agree_with_the_tables() {
        for esc in [Esc::Xml, Esc::Html, Esc::Json, Esc::Raw] {
            for b in 0..=255u8 {
                for lane in 0..8 {
                    let mut word = *b"abcdefgh";
                    word[lane] = b;
                    let w = u64::from_le_bytes(word);
                    assert_eq!(
                        word_may_hold_special(esc, w),
                        special_bytes(esc)[usize::from(b)],
                        "byte {b} lane {lane}"
                    );
                }
            }
        }
        let cases = [
            ("0123456789<abcdefgh>'\"\u{1}é&", Esc::Json),
            ("0123456789abcdefghi&", Esc::Xml),
            ("0123456789abcdefghij", Esc::Xml),
            ("ab<", Esc::Xml),
            ("", Esc::Xml),
            ("é'é", Esc::Html),
            ("abcdefgh", Esc::Json),
            ("abcdefg\\", Esc::Json),
            ("a_b*c", Esc::MarkdownName),
        ];
        for (text, esc) in cases {
            let mut fast = String::new();
            push_escaped_scanning(&mut fast, text, esc);
            let slow: String = text
                .chars()
                .map(
                    |c| match u8::try_from(c).ok().and_then(|b| escape_byte(esc, b)) {
                        Some(rep) => rep.to_owned(),
                        None => c.to_string(),
                    },
                )
                .collect();
            assert_eq!(fast, slow, "{text:?}");
        }
    }

    #[test]
    fn all_ascii_matches_is_ascii() {
        for s in [
            "",
            "a",
            "abcdefgh",
            "abcdefghé",
            "é",
            "abcdefgh12345678x",
            "1234567é12345678",
        ] {
            assert_eq!(all_ascii(s), s.is_ascii(), "{s:?}");
        }
    }

    #[test]
    fn thousands_groups_digits() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
    }

    #[test]
    fn python_strip_also_strips_ascii_separators() {
        assert_eq!(python_strip("\u{1c} x \u{1f}\n"), "x");
    }

    #[test]
    fn collapse_whitespace_borrows_clean_text() {
        assert!(matches!(collapse_whitespace("a b c"), Cow::Borrowed(_)));
        assert_eq!(collapse_whitespace("a\n  b\tc"), "a b c");
        assert_eq!(collapse_whitespace("a\u{b}b  c"), "a b c");
        assert_eq!(collapse_whitespace("é\u{a0}b"), "é b");
        assert!(matches!(collapse_whitespace("é b"), Cow::Borrowed(_)));
    }
}
