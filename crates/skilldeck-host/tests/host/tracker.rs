//! Activation tracking: a repeated activation gets a short notice; memory is
//! bounded by conversation count, skills per conversation and a TTL. Time is
//! passed in, so nothing sleeps.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use skilldeck::{ActivationFormat, DiscoveryOptions, activate, discover};
use skilldeck_host::{
    ActivationTracker, Seen, SharedActivationTracker, already_active_notice, is_skill_content,
};

const TTL: Duration = Duration::from_secs(600);

#[test]
fn first_activation_is_first_and_the_second_is_again() {
    let mut t = ActivationTracker::new(8, TTL);
    let now = Instant::now();
    assert_eq!(t.record_at("c1", "pdf", 0, now), Seen::First);
    assert_eq!(t.record_at("c1", "pdf", 0, now), Seen::Again);
    assert_eq!(t.record_at("c1", "docx", 0, now), Seen::First);
    assert!(t.is_active_at("c1", "pdf", now));
    assert!(t.record("c9", "pdf", 0) == Seen::First && t.record("c9", "pdf", 0) == Seen::Again);
}

#[test]
fn conversations_are_tracked_separately() {
    let mut t = ActivationTracker::new(8, TTL);
    let now = Instant::now();
    assert_eq!(t.record_at("c1", "pdf", 0, now), Seen::First);
    assert_eq!(t.record_at("c2", "pdf", 0, now), Seen::First);
    assert!(!t.is_active_at("c3", "pdf", now));
}

#[test]
fn activation_expires_after_the_ttl() {
    let mut t = ActivationTracker::new(8, TTL);
    let t0 = Instant::now();
    assert_eq!(t.record_at("c", "pdf", 0, t0), Seen::First);
    assert_eq!(
        t.record_at("c", "pdf", 0, t0 + TTL - Duration::from_secs(1)),
        Seen::Again
    );
    assert!(!t.is_active_at("c", "pdf", t0 + TTL));
    assert_eq!(t.record_at("c", "pdf", 0, t0 + TTL), Seen::First);
    // Re-sent at t0 + TTL: active again from then.
    assert_eq!(
        t.record_at("c", "pdf", 0, t0 + TTL + Duration::from_secs(1)),
        Seen::Again
    );
}

#[test]
fn again_does_not_extend_the_ttl() {
    let mut t = ActivationTracker::new(8, TTL);
    let t0 = Instant::now();
    t.record_at("c", "pdf", 0, t0);
    assert_eq!(t.record_at("c", "pdf", 0, t0 + TTL / 2), Seen::Again);
    assert_eq!(t.record_at("c", "pdf", 0, t0 + TTL), Seen::First);
}

#[test]
fn least_recently_active_conversation_is_evicted() {
    let mut t = ActivationTracker::new(2, TTL);
    let now = Instant::now();
    t.record_at("a", "s", 0, now);
    t.record_at("b", "s", 0, now);
    t.record_at("a", "other", 0, now); // `a` is now the most recent
    t.record_at("c", "s", 0, now); // evicts `b`
    assert_eq!(t.len(), 2);
    assert!(t.is_active_at("a", "s", now));
    assert!(!t.is_active_at("b", "s", now));
    assert_eq!(t.record_at("b", "s", 0, now), Seen::First);
}

#[test]
fn skills_per_conversation_are_bounded_oldest_forgotten() {
    let mut t = ActivationTracker::with_limits(4, TTL, 2);
    let t0 = Instant::now();
    t.record_at("c", "one", 0, t0);
    t.record_at("c", "two", 0, t0 + Duration::from_secs(1));
    t.record_at("c", "three", 0, t0 + Duration::from_secs(2));
    let now = t0 + Duration::from_secs(3);
    assert!(!t.is_active_at("c", "one", now));
    assert!(t.is_active_at("c", "two", now));
    assert!(t.is_active_at("c", "three", now));
}

#[test]
fn forgetting_makes_the_next_activation_first() {
    let mut t = ActivationTracker::new(8, TTL);
    let now = Instant::now();
    t.record_at("c", "pdf", 0, now);
    t.record_at("c", "docx", 0, now);
    assert!(t.forget("c", "pdf"));
    assert!(!t.forget("c", "pdf"));
    assert_eq!(t.record_at("c", "pdf", 0, now), Seen::First);
    assert!(t.forget_conversation("c"));
    assert!(!t.forget_conversation("c"));
    assert_eq!(t.record_at("c", "docx", 0, now), Seen::First);
}

#[test]
fn purge_drops_expired_activations_and_empty_conversations() {
    let mut t = ActivationTracker::new(8, TTL);
    let t0 = Instant::now();
    t.record_at("old", "a", 0, t0);
    t.record_at("mixed", "a", 0, t0);
    t.record_at("mixed", "b", 0, t0 + TTL);
    assert_eq!(t.purge_expired_at(t0 + TTL), 2);
    assert_eq!(t.len(), 1);
    assert!(t.is_active_at("mixed", "b", t0 + TTL));
    t.clear();
    assert!(t.is_empty());
}

#[test]
fn default_tracker_uses_the_named_limits() {
    let t = ActivationTracker::default();
    assert_eq!(t.capacity(), skilldeck::limits::TRACKER_CONVERSATIONS);
    assert_eq!(t.ttl(), skilldeck::limits::TRACKER_TTL);
}

#[test]
fn shared_tracker_gives_exactly_one_first_across_threads() {
    let shared = Arc::new(SharedActivationTracker::default());
    let handles: Vec<_> = (0..8)
        .map(|_| {
            let s = Arc::clone(&shared);
            std::thread::spawn(move || s.record("conv", "pdf", 0))
        })
        .collect();
    let firsts = handles
        .into_iter()
        .map(|h| h.join().unwrap())
        .filter(|s| *s == Seen::First)
        .count();
    assert_eq!(firsts, 1);
    assert!(shared.forget("conv", "pdf"));
    assert!(shared.forget_conversation("conv"));
}

#[test]
fn already_active_notice_is_short_escaped_and_recognised() {
    assert_eq!(
        already_active_notice("pdf"),
        "<skill_content name=\"pdf\" status=\"already-active\">Skill 'pdf' is already active \
         in this conversation with these arguments; its instructions are above. If they are \
         no longer in the conversation (it was compacted), call activate_skill again with \
         \"reload\": true to receive them again.</skill_content>"
    );
    let odd = already_active_notice("a\"<b>");
    assert!(
        odd.starts_with("<skill_content name=\"a&quot;&lt;b&gt;\" "),
        "{odd}"
    );
    assert!(is_skill_content(&odd));
}

#[test]
fn is_skill_content_recognises_every_rendering() {
    let tmp = tempfile::tempdir().unwrap();
    skilldeck_testkit::skill(tmp.path(), "s")
        .description("Test. Use when testing.")
        .body("Body \"quoted\"\n")
        .write();
    let deck = discover(&DiscoveryOptions::with_roots([tmp.path().to_path_buf()]));
    let a = activate(deck.get("s").unwrap(), "").unwrap();
    for format in ActivationFormat::ALL {
        let rendered = a.render(format);
        assert!(is_skill_content(&rendered), "{format}: {rendered}");
        assert!(is_skill_content(&format!("\n  {rendered}")), "{format}");
    }
}

#[test]
fn is_skill_content_rejects_other_text() {
    for text in [
        "",
        "hello",
        "<skill_contents>",
        "<skill_content_x name=\"a\">",
        "Here: <skill_content name=\"a\">",
        r#"{"name":"a","description":"b"}"#,
        r#"{"name":"a\"","skill":"b"}"#,
        "Base directory",
    ] {
        assert!(!is_skill_content(text), "{text}");
    }
    assert!(is_skill_content("<SKILL_CONTENT name=\"a\">"));
    assert!(is_skill_content(r#"{"name":"a\"b","skill_dir":"/x"}"#));
}
