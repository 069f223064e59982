//! Hot reload of roots that do not exist when the server starts, driven
//! through the real file watcher on an in-process engine. Waits poll with
//! a deadline; nothing asserts how long a reload takes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use skilldeck::DiscoveryOptions;
use skilldeck_mcp::options::RELOAD_DEBOUNCE;
use skilldeck_mcp::{Engine, ServeOptions, reload};

/// How long a test waits for the watcher before it fails.
const DEADLINE: Duration = Duration::from_secs(30);
const POLL: Duration = Duration::from_millis(50);

fn activatable(engine: &Engine, name: &str) -> bool {
    let snapshot = engine.snapshot();
    let session = engine.new_session_key();
    engine.activate(&snapshot, &session, name, "").is_ok()
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < DEADLINE, "gave up waiting: {what}");
        std::thread::sleep(POLL);
    }
}

fn engine_over(root: &Path) -> Arc<Engine> {
    let options = ServeOptions::new(DiscoveryOptions::with_roots([root.to_path_buf()]));
    Arc::new(Engine::new(options).unwrap())
}

#[test]
fn a_root_created_after_start_is_watched_and_its_skills_served() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("project/.claude/skills");
    std::fs::create_dir_all(tmp.path().join("project")).unwrap();
    let engine = engine_over(&root);
    assert!(engine.snapshot().deck.is_empty());
    let mut changes = engine.subscribe();
    let watcher = reload::watch(Arc::clone(&engine), RELOAD_DEBOUNCE).unwrap();
    // Only the nearest existing ancestor, and not recursively.
    let watched = watcher.watched();
    assert_eq!(watched.len(), 1, "{watched:?}");
    assert!(!watched[0].recursive);

    skilldeck_testkit::skill(&root, "late")
        .description("Arrives after the server started.")
        .body("Late instructions.\n")
        .write();
    wait_until("the new root's skill is activatable", || {
        activatable(&engine, "late")
    });
    assert!(changes.try_recv().is_ok(), "clients were not told");
    wait_until("the root itself is watched recursively", || {
        watcher.watched().iter().any(|t| t.recursive)
    });
}

#[test]
fn a_root_deleted_and_created_again_is_watched_again() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("skills");
    skilldeck_testkit::skill(&root, "first")
        .description("There from the start.")
        .body("First.\n")
        .write();
    let engine = engine_over(&root);
    let _watcher = reload::watch(Arc::clone(&engine), RELOAD_DEBOUNCE).unwrap();
    assert!(activatable(&engine, "first"));

    std::fs::remove_dir_all(&root).unwrap();
    wait_until("the deleted root's skill is gone", || {
        engine.snapshot().deck.is_empty()
    });
    skilldeck_testkit::skill(&root, "second")
        .description("Written into the re-created root.")
        .body("Second.\n")
        .write();
    wait_until("the re-created root's skill is activatable", || {
        activatable(&engine, "second")
    });
}
