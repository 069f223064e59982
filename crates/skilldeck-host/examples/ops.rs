//! The in-process operations of `benches/core.rs`, one at a time, for
//! instruction counts (`bench/instructions` runs this under
//! `valgrind --tool=callgrind --toggle-collect='*measured*'`, so discovery
//! and setup are not counted):
//! `cargo run --release -p skilldeck --example ops -- DIR OP [REPEAT]`.
//!
//! OP: `catalog`, `catalog-8000-tokens`, `search`, `activation-first`,
//! `activation-cached`, `validate-rules`, `validate-lints`. Each operation
//! runs REPEAT times (default 10) inside a function named `measured_*`.
//! The first call of `catalog-8000-tokens` makes the tokenizer ready (its
//! start cost); run it with REPEAT 1 and 11 and take the difference for the
//! per-render cost (`catalog-8000-tokens-first` is the same operation,
//! named for the first render alone).
//!
//! Two more, not toggled: `discover` (count the whole process: discovery
//! runs on every core) and `generate` (writes the fixed set of REPEAT
//! skills the budgets measure into DIR; `skilldeck_testkit::generate`).

use std::hint::black_box;
use std::path::PathBuf;

use skilldeck::catalog::{Budget, CatalogOptions, Encoding};
use skilldeck::search::{SearchIndex, SearchQuery};
use skilldeck::{
    Deck, DiscoveryOptions, Skill, ValidationOptions, WalkLimits, discover, find_skill_dirs,
    validate_dir,
};
use skilldeck_host::ContentCache;

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(dir), Some(op)) = (args.next(), args.next()) else {
        eprintln!("usage: ops DIR OP [REPEAT]");
        std::process::exit(2);
    };
    let repeat: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(10);
    let dir = PathBuf::from(dir);
    let total = match op.as_str() {
        // The fixed set the budgets measure: REPEAT skills, seed 1.
        "generate" => {
            match skilldeck_testkit::generate::skill_set(&dir, repeat, 1) {
                Ok(bytes) => println!(
                    "generated {repeat} skills in {}: {bytes} bytes",
                    dir.display()
                ),
                Err(e) => {
                    eprintln!("cannot generate skills in {}: {e}", dir.display());
                    std::process::exit(1);
                }
            }
            return;
        }
        // Whole process (discovery runs on every core: count every thread).
        "discover" => discover(&DiscoveryOptions::with_roots([dir])).len(),
        "validate-rules" | "validate-lints" => {
            let dirs = find_skill_dirs(&dir, WalkLimits::default()).skill_dirs();
            let options = ValidationOptions {
                lints: op == "validate-lints",
                ..ValidationOptions::strict()
            };
            measured_validate(&dirs, &options, repeat)
        }
        _ => {
            let deck = discover(&DiscoveryOptions::with_roots([dir]));
            match op.as_str() {
                "catalog" => measured_catalog(&deck, &CatalogOptions::default(), repeat),
                "catalog-8000-tokens" | "catalog-8000-tokens-first" => {
                    let options = CatalogOptions {
                        budget: Some(Budget::Tokens {
                            limit: 8_000,
                            encoding: Encoding::O200kBase,
                        }),
                        ..CatalogOptions::default()
                    };
                    measured_catalog(&deck, &options, repeat)
                }
                "search" => {
                    let index = SearchIndex::from_deck(&deck);
                    measured_search(&index, repeat)
                }
                "activation-first" => measured_activation_first(deck.skills(), repeat),
                "activation-cached" => {
                    let skill = &deck.skills()[0];
                    let mut cache = ContentCache::new(skilldeck::limits::CONTENT_CACHE_CAPACITY);
                    let _ = cache.activate(skill, "src/lib.rs");
                    measured_activation_cached(&mut cache, skill, repeat)
                }
                _ => {
                    eprintln!("unknown OP {op}");
                    std::process::exit(2);
                }
            }
        }
    };
    println!("{op} x{repeat}: {total}");
}

#[inline(never)]
fn measured_catalog(deck: &Deck, options: &CatalogOptions, repeat: usize) -> usize {
    (0..repeat)
        .map(|_| {
            skilldeck::render_catalog(black_box(deck.skills()), options, None)
                .map_or(0, |c| c.text.len())
        })
        .sum()
}

#[inline(never)]
fn measured_search(index: &SearchIndex, repeat: usize) -> usize {
    let queries = [
        "deploy kubernetes",
        "pdf report audit",
        "nothing-matches-this",
    ];
    (0..repeat)
        .map(|i| {
            index
                .search(&SearchQuery::new(black_box(queries[i % queries.len()])).limit(10))
                .len()
        })
        .sum()
}

#[inline(never)]
fn measured_activation_first(skills: &[Skill], repeat: usize) -> usize {
    (0..repeat)
        .map(|i| {
            skilldeck::activate(&skills[(i * 7919) % skills.len()], "src/lib.rs security")
                .map_or(0, |a| a.body.len())
        })
        .sum()
}

#[inline(never)]
fn measured_activation_cached(cache: &mut ContentCache, skill: &Skill, repeat: usize) -> usize {
    (0..repeat)
        .map(|_| {
            cache
                .activate(black_box(skill), "src/lib.rs")
                .map_or(0, |a| a.rendered(skilldeck::ActivationFormat::Xml).len())
        })
        .sum()
}

/// One thread (callgrind counts only the thread whose stack holds this
/// function; `validate_many` is this loop spread over rayon's threads).
#[inline(never)]
fn measured_validate(dirs: &[PathBuf], options: &ValidationOptions, repeat: usize) -> usize {
    (0..repeat)
        .map(|_| {
            black_box(dirs)
                .iter()
                .map(|d| validate_dir(d, options))
                .filter(|r| r.valid)
                .count()
        })
        .sum()
}
