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
//! Skills that are not [`Skill::model_invocable`](crate::Skill::model_invocable) (frontmatter
//! `disable-model-invocation: true`, or mode `manual` or `off`) are left out.
//! [`SkillMode::Pinned`](crate::SkillMode::Pinned) skills are never shortened or dropped, even when
//! they alone exceed the budget ([`Explanation::over_budget`] says so).
//! [`SkillMode::NameOnly`](crate::SkillMode::NameOnly) skills never show their description.
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
//! Skills are ranked pinned first, then by the operator's priority
//! ([`CatalogOptions::priorities`], `[catalog.priority]` in the config;
//! higher first, missing = 0), then by relevance (a caller-supplied map
//! from name to score, higher first, missing or NaN = 0; the catalog does no
//! search itself), then by recent use ([`CatalogOptions::uses`], filled by a
//! host), then by scope precedence (project before user before bundled) and
//! name, then input order. With a [`Budget`], the whole rendered catalog
//! must fit; if it does not:
//!
//! 1. descriptions of non-pinned skills are shortened evenly: one common
//!    cap, the largest (found by binary search) at or above the floor
//!    ([`CatalogOptions::floor_chars`]) that fits. A description longer than
//!    the cap is cut at the last word end so that it plus `…` has at most
//!    cap characters (a first word longer than that is cut inside);
//! 2. if the floor does not fit, as many skills as fit at the floor are
//!    listed and the others are left out: **every listed skill keeps a
//!    description** (a bare name gives the model nothing to choose by).
//!    Which skills stay follows the rank, except that among skills equal in
//!    everything before the name, source folders take turns (the first
//!    skill of each collection, then the second of each, ...), so a large
//!    library is listed as a cross-section, not as its alphabetical head.
//!    The listed skills then get the largest common cap that fits;
//! 3. in `xml` and `markdown`, a closing line says how many skills are not
//!    listed and how to find them ([`CatalogOptions::unlisted_hint`]: the
//!    MCP server names its `search_skills` tool, the CLI `skilldeck
//!    search`); room for it is kept before skills are listed.
//!
//! Skills in mode `name-only` are listed without a description at every
//! stage; pinned skills are never shortened or left out.
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

pub(crate) mod budget;
pub(crate) mod entry;
pub(crate) mod escape;
pub(crate) mod explain;
pub(crate) mod format;
pub(crate) mod hints;
pub(crate) mod item;
pub(crate) mod options;
pub(crate) mod rank;
pub(crate) mod render;
pub(crate) mod text;
pub(crate) mod tokens;
pub(crate) mod unlisted;

pub use explain::{
    Catalog, CatalogSummary, ExplainedSkill, Explanation, Outcome, OwnedCatalog, Reason,
};
pub use format::CatalogFormat;
pub use options::{Budget, BudgetOverride, CatalogOptions};
pub use render::render;
pub use text::ELLIPSIS;
pub use tokens::{Encoding, count_tokens};
