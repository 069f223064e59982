//! In-process benchmarks of the core: discovery, catalog rendering, search,
//! activation (first and cached) and resource reads.
//!
//! `cargo bench -p skilldeck --bench core`. Skills come from
//! `SKILLDECK_BENCH_SKILLS=DIR` (e.g. made by `../shared/bench/gen_skills.py`),
//! else 1,000 synthetic skills are written to a temporary folder.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use skilldeck::catalog::{Budget, CatalogOptions, Encoding};
use skilldeck::search::{SearchIndex, SearchQuery};
use skilldeck::{Deck, DiscoveryOptions, discover};
use skilldeck_host::ContentCache;

fn main() {
    divan::main();
}

struct Fixture {
    root: PathBuf,
    deck: Deck,
    index: SearchIndex,
    _tmp: Option<tempfile::TempDir>,
}

const WORDS: &[&str] = &[
    "deploy",
    "schema",
    "kubernetes",
    "invoice",
    "pdf",
    "report",
    "migrate",
    "review",
    "audit",
    "cache",
    "token",
    "render",
    "search",
    "backup",
    "policy",
    "release",
    "lint",
    "format",
];

fn synthetic(dir: &Path, n: usize) {
    for i in 0..n {
        let a = WORDS[i % WORDS.len()];
        let b = WORDS[(i / WORDS.len()) % WORDS.len()];
        let name = format!("{a}-{b}-{i:05}");
        let d = dir.join(&name);
        std::fs::create_dir_all(d.join("references")).unwrap();
        std::fs::write(
            d.join("SKILL.md"),
            format!(
                "---\nname: {name}\ndescription: \"{a} {b} workflows for teams. Handles {b} files and {a} checks. Use when the user mentions {a} or {b}.\"\nlicense: MIT\nmetadata:\n  version: \"1.0\"\n---\n# {name}\n\nRun the {a} steps on $ARGUMENTS, then read [the reference](references/REFERENCE.md).\n{}",
                "Detailed instruction line.\n".repeat(60)
            ),
        )
        .unwrap();
        std::fs::write(
            d.join("references/REFERENCE.md"),
            "Reference text.\n".repeat(200),
        )
        .unwrap();
    }
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let (root, tmp) = match std::env::var_os("SKILLDECK_BENCH_SKILLS") {
            Some(dir) => (PathBuf::from(dir), None),
            None => {
                let tmp = tempfile::tempdir().unwrap();
                synthetic(tmp.path(), 1_000);
                (tmp.path().to_path_buf(), Some(tmp))
            }
        };
        let deck = discover(&DiscoveryOptions::with_roots([root.clone()]));
        let index = SearchIndex::from_deck(&deck);
        Fixture {
            root,
            deck,
            index,
            _tmp: tmp,
        }
    })
}

#[divan::bench(sample_count = 10)]
fn discovery() -> usize {
    let f = fixture();
    discover(&DiscoveryOptions::with_roots([f.root.clone()])).len()
}

#[divan::bench]
fn catalog_xml_unbudgeted() -> usize {
    let f = fixture();
    skilldeck::render_catalog(f.deck.skills(), &CatalogOptions::default(), None)
        .unwrap()
        .text
        .len()
}

#[divan::bench]
fn catalog_xml_8000_tokens() -> usize {
    let f = fixture();
    let options = CatalogOptions {
        budget: Some(Budget::Tokens {
            limit: 8_000,
            encoding: Encoding::O200kBase,
        }),
        ..CatalogOptions::default()
    };
    skilldeck::render_catalog(f.deck.skills(), &options, None)
        .unwrap()
        .text
        .len()
}

#[divan::bench(args = ["deploy kubernetes", "pdf report audit", "nothing-matches-this"])]
fn search_bm25(query: &str) -> usize {
    fixture()
        .index
        .search(&SearchQuery::new(query).limit(10))
        .len()
}

#[divan::bench]
fn activation_first(bencher: divan::Bencher) {
    let f = fixture();
    let skills = f.deck.skills();
    let mut i = 0;
    bencher.bench_local(|| {
        i = (i + 1) % skills.len();
        skilldeck::activate(&skills[i], "src/lib.rs security")
            .unwrap()
            .body
            .len()
    });
}

#[divan::bench]
fn activation_cached(bencher: divan::Bencher) {
    let f = fixture();
    let skill = &f.deck.skills()[0];
    let mut cache = ContentCache::new(skilldeck::limits::CONTENT_CACHE_CAPACITY);
    cache.activate(skill, "src/lib.rs").unwrap();
    bencher.bench_local(|| {
        cache
            .activate(skill, "src/lib.rs")
            .unwrap()
            .rendered(skilldeck::ActivationFormat::Xml)
            .len()
    });
}

#[divan::bench]
fn resource_read() -> usize {
    let f = fixture();
    skilldeck::read_resource(&f.deck.skills()[0], "references/REFERENCE.md")
        .unwrap()
        .size as usize
}
