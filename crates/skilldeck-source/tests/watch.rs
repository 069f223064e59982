//! Hot reload of roots that do not exist when the server starts, driven
//! through the real file watcher on an in-process host. Waits poll with
//! a deadline; nothing asserts how long a reload takes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use std::sync::atomic::{AtomicUsize, Ordering};

use skilldeck::DiscoveryOptions;
use skilldeck_host::{Host, HostOptions};
use skilldeck_source::{RELOAD_DEBOUNCE, Target, WatchMode, watch};

/// A host and a count of the catalog changes its clients were told of.
struct Served {
    host: Host,
    catalog_changes: AtomicUsize,
}

impl Target for Served {
    fn host(&self) -> &Host {
        &self.host
    }

    fn reload(&self) -> Result<bool, skilldeck::Error> {
        let changed = self.host.reload()?.catalog_changed;
        if changed {
            self.catalog_changes.fetch_add(1, Ordering::SeqCst);
        }
        Ok(changed)
    }
}

type Engine = Served;

/// How long a test waits for the watcher before it fails.
const DEADLINE: Duration = Duration::from_secs(30);
const POLL: Duration = Duration::from_millis(50);

fn activatable(engine: &Engine, name: &str) -> bool {
    let snapshot = engine.host.snapshot();
    let session = engine.host.new_session_key();
    engine
        .host
        .activate(&snapshot, &session, name, "", false)
        .is_ok()
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < DEADLINE, "gave up waiting: {what}");
        std::thread::sleep(POLL);
    }
}

fn served(options: HostOptions) -> Arc<Served> {
    Arc::new(Served {
        host: Host::new(options).unwrap(),
        catalog_changes: AtomicUsize::new(0),
    })
}

fn engine_over(root: &Path) -> Arc<Engine> {
    served(HostOptions::new(DiscoveryOptions::with_roots([
        root.to_path_buf()
    ])))
}

#[test]
fn a_root_created_after_start_is_watched_and_its_skills_served() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("project/.claude/skills");
    std::fs::create_dir_all(tmp.path().join("project")).unwrap();
    let engine = engine_over(&root);
    assert!(engine.host.snapshot().deck.is_empty());
    let watcher = watch(Arc::clone(&engine), RELOAD_DEBOUNCE).unwrap();
    // Only the nearest existing ancestor, standing in for the root.
    let watched = watcher.watched();
    assert_eq!(watched.len(), 1, "{watched:?}");
    assert!(watched[0].stand_in);

    skilldeck_testkit::skill(&root, "late")
        .description("Arrives after the server started.")
        .body("Late instructions.\n")
        .write();
    wait_until("the new root's skill is activatable", || {
        activatable(&engine, "late")
    });
    assert!(
        engine.catalog_changes.load(Ordering::SeqCst) > 0,
        "clients were not told"
    );
    wait_until("the root itself is watched", || {
        watcher.watched().iter().any(|t| !t.stand_in)
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
    let _watcher = watch(Arc::clone(&engine), RELOAD_DEBOUNCE).unwrap();
    assert!(activatable(&engine, "first"));

    std::fs::remove_dir_all(&root).unwrap();
    wait_until("the deleted root's skill is gone", || {
        engine.host.snapshot().deck.is_empty()
    });
    skilldeck_testkit::skill(&root, "second")
        .description("Written into the re-created root.")
        .body("Second.\n")
        .write();
    wait_until("the re-created root's skill is activatable", || {
        activatable(&engine, "second")
    });
}

/// The inotify watches this process holds now, counted by the kernel
/// (`/proc/self/fdinfo`), whatever the watcher believes it holds.
fn system_watches() -> usize {
    let Ok(fds) = std::fs::read_dir("/proc/self/fdinfo") else {
        return 0;
    };
    fds.filter_map(Result::ok)
        .filter_map(|fd| std::fs::read_to_string(fd.path()).ok())
        .map(|info| {
            info.lines()
                .filter(|l| l.starts_with("inotify wd:"))
                .count()
        })
        .sum()
}

fn description_of(engine: &Engine, name: &str) -> Option<String> {
    engine
        .host
        .snapshot()
        .deck
        .get(name)
        .map(|s| s.description.clone())
}

#[test]
fn a_symlink_to_the_filesystem_root_inside_a_skill_adds_no_watch_and_edits_are_still_noticed() {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap().join("skills");
    skilldeck_testkit::skill(&root, "pdf")
        .description("Reads PDF files.")
        .body("Instructions.\n")
        .file("assets/readme.txt", "x")
        .write();
    std::os::unix::fs::symlink("/", root.join("pdf/assets/rootfs")).unwrap();
    std::os::unix::fs::symlink("/", root.join("rootfs")).unwrap();
    let engine = engine_over(&root);
    let watcher = watch(Arc::clone(&engine), RELOAD_DEBOUNCE).unwrap();
    assert_eq!(watcher.mode(), WatchMode::Watching);
    let watched = watcher.watched();
    // The root, the skill and its assets folder: nothing through the links.
    assert_eq!(watcher.watch_count(), 3, "{watched:?}");
    assert!(
        watched.iter().all(|t| t.path.starts_with(&root)),
        "{watched:?}"
    );
    let budget = engine.host.options().watch_budget;
    assert!(system_watches() <= budget, "{} watches", system_watches());

    skilldeck_testkit::skill(&root, "pdf")
        .description("Reads and fills PDF files.")
        .body("Instructions.\n")
        .write();
    wait_until("the edited description is served", || {
        description_of(&engine, "pdf").as_deref() == Some("Reads and fills PDF files.")
    });
    assert!(watcher.watch_count() <= budget);
}

/// Folders the many-folders test creates: far more than its budget.
const MANY_FOLDERS: usize = 2_000;

#[test]
fn a_root_with_more_folders_than_the_watch_budget_is_polled_and_edits_are_still_noticed() {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap().join("skills");
    skilldeck_testkit::skill(&root, "pdf")
        .description("Reads PDF files.")
        .body("Instructions.\n")
        .write();
    for i in 0..MANY_FOLDERS {
        std::fs::create_dir_all(root.join(format!("empty/{:03}/{i}", i % 20))).unwrap();
    }
    let mut options = HostOptions::new(DiscoveryOptions::with_roots([root.clone()]));
    options.watch_budget = 100;
    options.watch_poll_period = Duration::from_millis(500);
    let engine = served(options);
    let watcher = watch(Arc::clone(&engine), RELOAD_DEBOUNCE).unwrap();
    assert_eq!(watcher.mode(), WatchMode::Polling);
    assert!(watcher.watch_count() <= 100, "{}", watcher.watch_count());
    assert!(system_watches() <= engine.host.options().watch_budget.max(100) + 64);

    skilldeck_testkit::skill(&root, "pdf")
        .description("Reads and fills PDF files.")
        .body("Instructions.\n")
        .write();
    wait_until("the edited description is served by polling", || {
        description_of(&engine, "pdf").as_deref() == Some("Reads and fills PDF files.")
    });
    skilldeck_testkit::skill(root.join("empty/000"), "late")
        .description("Arrives while polling.")
        .body("Late.\n")
        .write();
    wait_until("the new skill is activatable", || {
        activatable(&engine, "late")
    });
    assert_eq!(watcher.mode(), WatchMode::Polling);
}
