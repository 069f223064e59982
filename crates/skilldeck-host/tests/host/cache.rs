//! Content cache: LRU by (skill, arguments), one `stat` per hit to notice an
//! edited SKILL.md, counters, clearing and per-skill invalidation.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use skilldeck::{ActivationFormat, DiscoveryOptions, Error, Skill, discover};
use skilldeck_host::{ContentCache, ContentCacheOptions};

fn load(root: &Path, name: &str) -> Skill {
    let deck = discover(&DiscoveryOptions::with_roots([root.to_path_buf()]));
    deck.get(name).unwrap().clone()
}

fn set_mtime(file: &Path, t: SystemTime) {
    std::fs::File::options()
        .write(true)
        .open(file)
        .unwrap()
        .set_modified(t)
        .unwrap();
}

#[test]
fn second_activation_is_a_hit_with_the_same_content() {
    let tmp = tempfile::tempdir().unwrap();
    skilldeck_testkit::skill(tmp.path(), "s")
        .description("Test skill. Use when testing.")
        .body("Hello $ARGUMENTS")
        .write();
    let skill = load(tmp.path(), "s");
    let mut cache = ContentCache::default();
    let a = cache.activate(&skill, "world").unwrap();
    let b = cache.activate(&skill, "world").unwrap();
    assert!(Arc::ptr_eq(&a, &b));
    assert_eq!(b.activation().body, "Hello world");
    let s = cache.stats();
    assert_eq!((s.hits, s.misses, s.reloads), (1, 1, 0));
}

#[test]
fn different_arguments_are_different_entries() {
    let tmp = tempfile::tempdir().unwrap();
    skilldeck_testkit::skill(tmp.path(), "s")
        .description("Test skill. Use when testing.")
        .body("Hello $ARGUMENTS")
        .write();
    let skill = load(tmp.path(), "s");
    let mut cache = ContentCache::default();
    assert_eq!(
        cache.activate(&skill, "a").unwrap().activation().body,
        "Hello a"
    );
    assert_eq!(
        cache.activate(&skill, "b").unwrap().activation().body,
        "Hello b"
    );
    assert_eq!(cache.len(), 2);
    assert_eq!(cache.stats().misses, 2);
}

#[test]
fn renderings_are_built_once_per_entry() {
    let tmp = tempfile::tempdir().unwrap();
    skilldeck_testkit::skill(tmp.path(), "s")
        .description("Test skill. Use when testing.")
        .body("Body")
        .write();
    let skill = load(tmp.path(), "s");
    let mut cache = ContentCache::default();
    let first = cache.activate(&skill, "").unwrap();
    let xml = first.rendered(ActivationFormat::Xml).as_ptr();
    let again = cache.activate(&skill, "").unwrap();
    assert_eq!(again.rendered(ActivationFormat::Xml).as_ptr(), xml);
    for format in ActivationFormat::ALL {
        assert_eq!(again.rendered(format), again.activation().render(format));
    }
}

#[test]
fn edited_skill_md_is_reloaded() {
    let tmp = tempfile::tempdir().unwrap();
    let md = skilldeck_testkit::skill(tmp.path(), "s")
        .description("Test skill. Use when testing.")
        .body("short")
        .write()
        .join("SKILL.md");
    let skill = load(tmp.path(), "s");
    let mut cache = ContentCache::default();
    assert_eq!(
        cache.activate(&skill, "").unwrap().activation().body,
        "short"
    );
    skilldeck_testkit::skill(tmp.path(), "s")
        .description("Test skill. Use when testing.")
        .body("a longer body")
        .write();
    set_mtime(&md, SystemTime::now() + Duration::from_secs(5));
    assert_eq!(
        cache.activate(&skill, "").unwrap().activation().body,
        "a longer body"
    );
    let s = cache.stats();
    assert_eq!((s.hits, s.misses, s.reloads), (0, 2, 1));
    assert_eq!(s.entries, 1);
    assert_eq!(s.bytes, "a longer body".len());
}

#[test]
fn same_size_edit_with_a_new_mtime_is_reloaded() {
    let tmp = tempfile::tempdir().unwrap();
    let md = skilldeck_testkit::skill(tmp.path(), "s")
        .description("Test skill. Use when testing.")
        .body("AAAA")
        .write()
        .join("SKILL.md");
    let base = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    set_mtime(&md, base);
    let skill = load(tmp.path(), "s");
    let mut cache = ContentCache::default();
    assert_eq!(
        cache.activate(&skill, "").unwrap().activation().body,
        "AAAA"
    );
    assert_eq!(
        cache.activate(&skill, "").unwrap().activation().body,
        "AAAA"
    );
    skilldeck_testkit::skill(tmp.path(), "s")
        .description("Test skill. Use when testing.")
        .body("BBBB")
        .write();
    set_mtime(&md, base + Duration::from_secs(1));
    assert_eq!(
        cache.activate(&skill, "").unwrap().activation().body,
        "BBBB"
    );
    let s = cache.stats();
    assert_eq!((s.hits, s.misses, s.reloads), (1, 2, 1));
}

#[test]
fn replaced_skill_md_with_a_new_inode_is_reloaded() {
    let tmp = tempfile::tempdir().unwrap();
    let md = skilldeck_testkit::skill(tmp.path(), "s")
        .description("Test skill. Use when testing.")
        .body("AAAA")
        .write()
        .join("SKILL.md");
    let base = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    set_mtime(&md, base);
    let skill = load(tmp.path(), "s");
    let mut cache = ContentCache::default();
    cache.activate(&skill, "").unwrap();
    // Atomic save: a new file renamed over the old one, same size and mtime.
    let staged = tmp.path().join("staged");
    std::fs::write(
        &staged,
        std::fs::read_to_string(&md)
            .unwrap()
            .replace("AAAA", "BBBB"),
    )
    .unwrap();
    set_mtime(&staged, base);
    std::fs::rename(&staged, &md).unwrap();
    assert_eq!(
        cache.activate(&skill, "").unwrap().activation().body,
        "BBBB"
    );
    assert_eq!(cache.stats().reloads, 1);
}

#[test]
fn deleted_skill_md_is_an_error_and_drops_the_entry() {
    let tmp = tempfile::tempdir().unwrap();
    let md = skilldeck_testkit::skill(tmp.path(), "s")
        .description("Test skill. Use when testing.")
        .body("Body")
        .write()
        .join("SKILL.md");
    let skill = load(tmp.path(), "s");
    let mut cache = ContentCache::default();
    cache.activate(&skill, "").unwrap();
    std::fs::remove_file(&md).unwrap();
    assert!(matches!(
        cache.activate(&skill, ""),
        Err(Error::Activation { .. })
    ));
    let s = cache.stats();
    assert_eq!((s.entries, s.bytes, s.reloads), (0, 0, 1));
}

#[test]
fn least_recently_used_entry_is_evicted_at_capacity() {
    let tmp = tempfile::tempdir().unwrap();
    skilldeck_testkit::skill(tmp.path(), "s")
        .description("Test skill. Use when testing.")
        .body("$ARGUMENTS")
        .write();
    let skill = load(tmp.path(), "s");
    let mut cache = ContentCache::new(2);
    cache.activate(&skill, "a").unwrap();
    cache.activate(&skill, "b").unwrap();
    cache.activate(&skill, "a").unwrap(); // `a` most recent
    cache.activate(&skill, "c").unwrap(); // evicts `b`
    assert_eq!(cache.stats().evictions, 1);
    assert_eq!(cache.len(), 2);
    cache.activate(&skill, "a").unwrap();
    assert_eq!(cache.stats().hits, 2);
    cache.activate(&skill, "b").unwrap();
    let s = cache.stats();
    assert_eq!((s.hits, s.misses, s.evictions), (2, 4, 2));
}

#[test]
fn byte_budget_evicts_and_oversized_bodies_are_not_kept() {
    let tmp = tempfile::tempdir().unwrap();
    skilldeck_testkit::skill(tmp.path(), "s")
        .description("Test skill. Use when testing.")
        .body("$ARGUMENTS")
        .write();
    let skill = load(tmp.path(), "s");
    let mut cache = ContentCache::with_options(ContentCacheOptions {
        max_bytes: 10,
        ..ContentCacheOptions::default()
    });
    cache.activate(&skill, "aaaa").unwrap();
    cache.activate(&skill, "bbbb").unwrap();
    assert_eq!(cache.stats().bytes, 8);
    cache.activate(&skill, "cccc").unwrap(); // 12 > 10: evicts `aaaa`
    let s = cache.stats();
    assert_eq!((s.entries, s.bytes, s.evictions), (2, 8, 1));
    let big = cache.activate(&skill, "0123456789ab").unwrap();
    assert_eq!(big.activation().body, "0123456789ab");
    assert_eq!(cache.stats().entries, 2);
}

#[test]
fn stats_count_hits_misses_bytes_and_hit_rate() {
    let tmp = tempfile::tempdir().unwrap();
    skilldeck_testkit::skill(tmp.path(), "s")
        .description("Test skill. Use when testing.")
        .body("12345")
        .write();
    let skill = load(tmp.path(), "s");
    let mut cache = ContentCache::default();
    assert_eq!(cache.stats().hit_rate, 0.0);
    for _ in 0..4 {
        cache.activate(&skill, "").unwrap();
    }
    let s = cache.stats();
    assert_eq!((s.hits, s.misses, s.entries, s.bytes), (3, 1, 1, 5));
    assert_eq!(s.hit_rate, 0.75);
}

#[test]
fn clear_empties_the_cache_but_keeps_the_counters() {
    let tmp = tempfile::tempdir().unwrap();
    skilldeck_testkit::skill(tmp.path(), "s")
        .description("Test skill. Use when testing.")
        .body("Body")
        .write();
    let skill = load(tmp.path(), "s");
    let mut cache = ContentCache::default();
    cache.activate(&skill, "").unwrap();
    cache.activate(&skill, "").unwrap();
    cache.clear();
    assert!(cache.is_empty());
    let s = cache.stats();
    assert_eq!((s.hits, s.misses, s.entries, s.bytes), (1, 1, 0, 0));
    cache.activate(&skill, "").unwrap();
    assert_eq!(cache.stats().misses, 2);
}

#[test]
fn invalidate_drops_every_entry_of_one_skill() {
    let tmp = tempfile::tempdir().unwrap();
    skilldeck_testkit::skill(tmp.path(), "one")
        .description("Test skill. Use when testing.")
        .body("$ARGUMENTS")
        .write();
    skilldeck_testkit::skill(tmp.path(), "two")
        .description("Test skill. Use when testing.")
        .body("$ARGUMENTS")
        .write();
    let one = load(tmp.path(), "one");
    let two = load(tmp.path(), "two");
    let mut cache = ContentCache::default();
    cache.activate(&one, "a").unwrap();
    cache.activate(&one, "bb").unwrap();
    cache.activate(&two, "ccc").unwrap();
    assert_eq!(cache.invalidate("one"), 2);
    assert_eq!(cache.invalidate("one"), 0);
    let s = cache.stats();
    assert_eq!((s.entries, s.bytes), (1, 3));
    cache.activate(&two, "ccc").unwrap();
    assert_eq!(cache.stats().hits, 1);
}

#[test]
fn zero_capacity_disables_caching() {
    let tmp = tempfile::tempdir().unwrap();
    skilldeck_testkit::skill(tmp.path(), "s")
        .description("Test skill. Use when testing.")
        .body("Body")
        .write();
    let skill = load(tmp.path(), "s");
    let mut cache = ContentCache::new(0);
    cache.activate(&skill, "").unwrap();
    cache.activate(&skill, "").unwrap();
    let s = cache.stats();
    assert_eq!((s.hits, s.misses, s.entries), (0, 2, 0));
}

#[test]
fn default_cache_uses_the_named_limits() {
    let cache = ContentCache::default();
    assert_eq!(
        cache.options().capacity,
        skilldeck::limits::CONTENT_CACHE_CAPACITY
    );
    assert_eq!(
        cache.options().max_bytes,
        skilldeck::limits::CONTENT_CACHE_MAX_BYTES
    );
}
