//! [`render`]: from skills and options to a [`Catalog`].

use std::borrow::Cow;
use std::collections::HashMap;

use crate::catalog::budget::Cost;
use crate::catalog::budget::Planner;
use crate::catalog::entry::View;
use crate::catalog::entry::render_text;
use crate::catalog::explain::Catalog;
use crate::catalog::explain::Decided;
use crate::catalog::explain::ExplainedSkill;
use crate::catalog::explain::Explanation;
use crate::catalog::explain::Outcome;
use crate::catalog::explain::Reason;
use crate::catalog::format::CatalogFormat;
use crate::catalog::item::Item;
use crate::catalog::options::Budget;
use crate::catalog::options::CatalogOptions;
use crate::catalog::rank::RankKey;
use crate::catalog::rank::total_order;
use crate::catalog::text::cut_end;
use crate::catalog::tokens::Meter;
use crate::error::Error;
use crate::limits::CATALOG_MIN_FLOOR_CHARS;
use crate::skill::{Skill, SkillMode};

/// Renders the catalog of `skills` (a deck's skills, for example).
///
/// `relevance` maps skill names to scores (higher is more relevant; missing
/// is 0), for example BM25 scores for the user's query; without it skills
/// rank by scope and name. See the [module documentation](crate::catalog) for the
/// formats and the budget rules. Fails only if the tokenizer cannot be built.
///
/// Runs in a `render_catalog` span recording the skills offered, listed and
/// dropped to fit the budget, the text's size and the budget.
pub fn render<'a, I>(
    skills: I,
    options: &CatalogOptions,
    relevance: Option<&HashMap<String, f64>>,
) -> Result<Catalog<'a>, Error>
where
    I: IntoIterator<Item = &'a Skill>,
{
    let span = tracing::info_span!(
        "render_catalog",
        skilldeck.catalog.budget = options.budget.map(|b| b.limit() as i64),
        skilldeck.catalog.skills = tracing::field::Empty,
        skilldeck.catalog.listed = tracing::field::Empty,
        skilldeck.catalog.dropped = tracing::field::Empty,
        skilldeck.catalog.size = tracing::field::Empty,
    );
    let _entered = span.enter();
    let catalog = render_catalog(skills, options, relevance)?;
    if !span.is_disabled() {
        let summary = catalog.explanation.summary();
        span.record("skilldeck.catalog.skills", summary.skills as i64);
        span.record("skilldeck.catalog.listed", summary.listed() as i64);
        span.record("skilldeck.catalog.dropped", summary.unlisted as i64);
        span.record("skilldeck.catalog.size", summary.size as i64);
    }
    Ok(catalog)
}

fn render_catalog<'a, I>(
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
                name: Cow::Borrowed(&skill.name),
                scope: skill.scope,
                mode: skill.mode,
                rank: None,
                relevance: None,
                outcome: Outcome::Excluded,
                reason: match skill.mode {
                    SkillMode::Off => Reason::ModeOff,
                    _ if !skill.is_eligible() => Reason::Ineligible,
                    SkillMode::Manual => Reason::ModeManual,
                    _ => Reason::DisableModelInvocation,
                },
            });
            continue;
        }
        let mut item = Item::new(skill, input, format, relevance, options.locations);
        if !options.priorities.is_empty() {
            item.priority = options.priorities.get(&skill.name).copied().unwrap_or(0);
        }
        if !options.uses.is_empty() {
            item.uses = options.uses.get(&skill.name).copied().unwrap_or(0);
        }
        items.push(item);
    }

    // Rank order: pinned first, then priority, relevance, recent use,
    // scope, name, input order.
    // The keys sit side by side (no pointer chasing per comparison).
    let mut keys: Vec<RankKey<'a>> = items
        .iter()
        .enumerate()
        .map(|(i, item)| RankKey {
            unpinned: !item.pinned(),
            priority: std::cmp::Reverse(item.priority),
            score: std::cmp::Reverse(total_order(item.score())),
            uses: std::cmp::Reverse(item.uses),
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
    let input_order: Vec<usize>;
    let output: &[usize] = if format == CatalogFormat::SkillsRef {
        input_order = (0..items.len()).collect();
        &input_order
    } else {
        &ranked
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
            let text = render_text(format, &items, output, &views);
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
                hint: options.unlisted_hint.as_deref(),
                keep: None,
            };
            planner.fit(budget.limit(), &ranked, output, &mut views)
        }
    };

    // The per-skill explanation is made when asked for; what it needs is
    // kept here (the shortened descriptions' sizes need the rendered text,
    // so they are counted now; only a budget shortens anything).
    let mut shortened = Vec::new();
    for (i, (item, view)) in items.iter().zip(&views).enumerate() {
        if let View::Cut(cap) = *view
            && let Some(end) = cut_end(&item.desc, cap)
        {
            let outcome = Outcome::Shortened {
                from: item.desc.chars().count(),
                to: item.desc[..end].chars().count() + 1,
            };
            shortened.push((i, outcome));
        }
    }
    let decided = Decided {
        relevance: relevance.map(|_| items.iter().map(Item::score).collect()),
        offered: items.iter().map(|item| item.skill).collect(),
        ranked,
        views,
        shortened,
        excluded,
    };
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
            decided,
            skills: std::sync::OnceLock::new(),
        },
    })
}
