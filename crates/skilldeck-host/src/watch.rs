//! What a host watches to reload its deck: the rule a file watcher maps.
//!
//! Only what can change the deck is watched, one folder at a time and never
//! recursively by the kernel's walk (which follows symlinks): each folder
//! that may gain a skill, down to discovery's depth
//! ([`skilldeck::WalkLimits::max_depth`], `.git` and `node_modules`
//! skipped as discovery skips them), and each skill folder with its real
//! subfolders (edits there drop the cached activation). A symlink is never
//! followed out of a root, with one exception: a skill folder installed as
//! a symlink (where discovery serves it from) gets that one folder watched.
//! A symlink *inside* a skill (`assets/rootfs -> /`) adds no watch at all.
//!
//! A root that does not exist yet (the common flow: start the client, then
//! `mkdir -p .claude/skills`) is stood in for by its nearest existing
//! ancestor, watched alone, so the watch count stays tiny. When an event
//! names a path on the way down to a missing root, the watcher asks for a
//! new [`plan`]: the next level (or the root itself) now exists and is
//! watched in turn. A root deleted later falls back to its ancestor the
//! same way, and is watched again when re-created.
//!
//! Watches are a system-wide, per-user resource, so a plan holds at most a
//! budget of folders ([`WATCH_BUDGET`], [`crate::HostOptions::watch_budget`]).
//! A tree larger than that (or a system out of watches) is not watched:
//! the watcher polls it every [`WATCH_POLL_PERIOD`] instead, comparing a
//! [`Survey`]'s fingerprint (the folders' and skill files' stamps), so hot
//! reload keeps working, only later. Polling has two speeds: the files of
//! the skill folders already known are stamped every period
//! ([`stamp_skills`], cheap: skills only, however many empty folders
//! surround them), and the whole tree is surveyed again (to find new and
//! removed skills) only every [`POLL_IDLE_FACTOR`] times as long as the
//! last survey took.

use std::collections::{BTreeMap, VecDeque};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use skilldeck::DiscoveryOptions;
use skilldeck::fs::{SKILL_MD, SKILL_MD_LOWERCASE, SKIPPED_DIRS};

/// The most folders a host watches (each one inotify watch on Linux, whose
/// default per-user allowance is 8,192 on older kernels and often shared
/// by every editor and tool of the user). Beyond it the host polls.
pub const WATCH_BUDGET: usize = 8_192;

/// How often a tree too large to watch (or a system out of watches) is
/// polled for changes.
pub const WATCH_POLL_PERIOD: Duration = Duration::from_secs(2);

/// Full surveys of a polled tree are at least this many times as long
/// apart as the last one took (so they cost at most a tenth of one core on
/// a tree whose survey is slow), and never closer than the poll period;
/// the known skill folders are stamped every period in between.
pub const POLL_IDLE_FACTOR: u32 = 9;

/// One folder to watch (never recursively).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct WatchTarget {
    /// The folder (resolved when it exists).
    pub path: PathBuf,
    /// An existing ancestor standing in for a missing root (only its
    /// direct children matter), rather than a folder of the deck.
    pub stand_in: bool,
}

/// What to watch for a set of roots: the targets, and the roots that do
/// not exist yet (to recognise events on the way to them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WatchPlan {
    /// The folders to watch, sorted, each once.
    pub targets: Vec<WatchTarget>,
    /// Configured folders that do not exist: absolute, under the resolved
    /// form of their nearest existing ancestor (as events name them).
    pub missing: Vec<PathBuf>,
    /// Where events concern the deck: the existing roots and explicit
    /// skills (resolved), and skill folders a root links to.
    pub deck: Vec<PathBuf>,
    /// False when the tree has more folders than the budget allowed: the
    /// targets are then incomplete and the tree must be polled.
    pub complete: bool,
}

/// A plan over a whole tree (up to a folder limit) with a fingerprint of
/// what discovery and activation read, to poll it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Survey {
    /// The plan (complete when the tree fitted the limit).
    pub plan: WatchPlan,
    /// A hash of the folders' modification times (an entry added, removed
    /// or renamed) and the stamps of every file in the skill folders.
    pub fingerprint: u64,
    /// The folders' part of the fingerprint alone (what changes when a
    /// folder or skill appears, vanishes or is renamed), to compare with
    /// skills stamped by [`stamp_skills`] in between.
    pub folders: u64,
    /// Each skill folder's own part of the fingerprint, to tell which
    /// skills' files changed.
    pub skills: BTreeMap<PathBuf, u64>,
}

/// Which kind of event a path is, for a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relevance {
    /// Inside a watched root: the deck may have changed.
    Deck,
    /// A folder on the way to a missing root (or the root itself)
    /// appeared or vanished: ask for a new plan, then discover again.
    Replan,
    /// Something else in a stand-in ancestor: ignore it.
    Unrelated,
}

/// `path` made absolute against the current directory (lexically).
fn absolute(path: &Path) -> PathBuf {
    if path.is_absolute() {
        return path.to_path_buf();
    }
    match std::env::current_dir() {
        Ok(cwd) => cwd.join(path),
        Err(_) => path.to_path_buf(),
    }
}

/// The nearest ancestor of `path` that is an existing folder, resolved,
/// and `path` re-stated under it (the rest of `path` kept as written).
fn nearest_existing_ancestor(path: &Path) -> Option<(PathBuf, PathBuf)> {
    path.ancestors().skip(1).find(|a| a.is_dir()).and_then(|a| {
        let resolved = std::fs::canonicalize(a).ok()?;
        let rest = path.strip_prefix(a).ok()?;
        let restated = resolved.join(rest);
        Some((resolved, restated))
    })
}

/// What to watch for `discovery`'s roots and explicit skills, at most
/// `budget` folders (see the module documentation).
pub fn plan(discovery: &DiscoveryOptions, budget: usize) -> WatchPlan {
    survey(discovery, budget).plan
}

/// A folder's or file's stamp, hashed: modification time and length.
fn hash_stamp(meta: &std::fs::Metadata, hasher: &mut impl Hasher) {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
        .map(|d| d.as_nanos())
        .hash(hasher);
    meta.len().hash(hasher);
}

/// A folder waiting to be surveyed.
struct Pending {
    dir: PathBuf,
    /// Levels below its root.
    depth: usize,
    /// The skill folder it is in (itself included), if any.
    skill: Option<PathBuf>,
}

/// The walk behind [`survey`]: folders are taken level by level, each
/// level in sorted order, so a limit keeps the shallowest folders (where
/// skills are) and which ones does not depend on the directory order.
struct Walk<'a> {
    discovery: &'a DiscoveryOptions,
    limit: usize,
    targets: Vec<WatchTarget>,
    deck: Vec<PathBuf>,
    complete: bool,
    hasher: DefaultHasher,
    skills: BTreeMap<PathBuf, DefaultHasher>,
}

impl Walk<'_> {
    /// Takes one more folder to watch; false (and the walk incomplete)
    /// when the limit is reached.
    fn take(&mut self, dir: &Path) -> bool {
        if self.targets.len() >= self.limit {
            self.complete = false;
            return false;
        }
        self.targets.push(WatchTarget {
            path: dir.to_path_buf(),
            stand_in: false,
        });
        true
    }

    /// Surveys a resolved root (`skill`: an explicit skill's folder).
    fn root(&mut self, root: PathBuf, skill: bool) {
        self.deck.push(root.clone());
        // Breadth first: a limit keeps the shallow folders, where skills are.
        let mut queue = VecDeque::from([Pending {
            skill: skill.then(|| root.clone()),
            dir: root,
            depth: 0,
        }]);
        while let Some(next) = queue.pop_front() {
            if !self.complete {
                return;
            }
            self.folder(next, &mut queue);
        }
    }

    /// Surveys one folder: watches it, stamps it, and queues the folders
    /// below it that can matter.
    fn folder(&mut self, pending: Pending, queue: &mut VecDeque<Pending>) {
        let Pending { dir, depth, skill } = pending;
        if !self.take(&dir) {
            return;
        }
        dir.hash(&mut self.hasher);
        if let Ok(meta) = std::fs::symlink_metadata(&dir) {
            hash_stamp(&meta, &mut self.hasher);
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return;
        };
        let mut entries: Vec<(std::ffi::OsString, std::fs::FileType)> = entries
            .filter_map(Result::ok)
            .filter_map(|e| Some((e.file_name(), e.file_type().ok()?)))
            .collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let skill = skill.or_else(|| {
            entries
                .iter()
                .any(|(n, _)| n == SKILL_MD || n == SKILL_MD_LOWERCASE)
                .then(|| dir.clone())
        });
        let may_hold_skills = depth + 1 < self.discovery.limits.max_depth;
        let mut subdirs = Vec::new();
        for (name, file_type) in entries {
            let path = dir.join(&name);
            if file_type.is_dir() {
                let skipped = SKIPPED_DIRS.iter().any(|s| name == *s);
                if skill.is_some() || (may_hold_skills && !skipped) {
                    subdirs.push(path);
                }
            } else if file_type.is_symlink() {
                // Never followed inside a skill; the link itself is stamped.
                name.hash(&mut self.hasher);
                if skill.is_none() && may_hold_skills {
                    self.linked_skill(&path);
                }
            } else if let Some(skill) = &skill
                && let Ok(meta) = std::fs::symlink_metadata(&path)
            {
                let hasher = self.skills.entry(skill.clone()).or_default();
                path.hash(hasher);
                hash_stamp(&meta, hasher);
            }
        }
        for path in subdirs {
            queue.push_back(Pending {
                dir: path,
                depth: depth + 1,
                skill: skill.clone(),
            });
        }
    }

    /// A symlink where skills are found: when it is a skill folder outside
    /// every root (installed by symlink), that one folder is watched and
    /// its files stamped (its own real subfolders included, symlinks not
    /// followed); nothing else below it is watched.
    fn linked_skill(&mut self, link: &Path) {
        let Ok(target) = std::fs::canonicalize(link) else {
            return;
        };
        if !target.is_dir() || self.deck.iter().any(|d| target.starts_with(d)) {
            return;
        }
        let is_skill = [SKILL_MD, SKILL_MD_LOWERCASE]
            .iter()
            .any(|n| std::fs::symlink_metadata(target.join(n)).is_ok());
        if !is_skill {
            return;
        }
        if !self.take(&target) {
            return;
        }
        let hasher = self.skills.entry(target.clone()).or_default();
        stamp_skill_into(&target, hasher);
        self.deck.push(target);
    }
}

/// Surveys `discovery`'s roots and explicit skills, taking at most `limit`
/// folders (see the module documentation): the plan to watch them, and a
/// fingerprint to poll them.
pub fn survey(discovery: &DiscoveryOptions, limit: usize) -> Survey {
    let folders = discovery
        .roots
        .iter()
        .map(|r| (r.path.as_path(), false))
        .chain(discovery.explicit.iter().map(|e| (e.path.as_path(), true)));
    let mut walk = Walk {
        discovery,
        limit,
        targets: Vec::new(),
        deck: Vec::new(),
        complete: true,
        hasher: DefaultHasher::new(),
        skills: BTreeMap::new(),
    };
    let mut stand_ins = Vec::new();
    let mut missing = Vec::new();
    let mut seen = Vec::new();
    for (folder, skill) in folders {
        let folder = absolute(folder);
        match std::fs::canonicalize(&folder) {
            Ok(resolved) if resolved.is_dir() => {
                // A root inside another one is covered by it.
                if !seen.iter().any(|s: &PathBuf| resolved.starts_with(s)) {
                    seen.push(resolved.clone());
                    walk.root(resolved, skill);
                }
            }
            _ => match nearest_existing_ancestor(&folder) {
                Some((ancestor, restated)) => {
                    stand_ins.push(ancestor);
                    missing.push(restated);
                }
                None => missing.push(folder),
            },
        }
    }
    let mut targets = walk.targets;
    for ancestor in stand_ins {
        if !targets.iter().any(|t| t.path == ancestor) {
            targets.push(WatchTarget {
                path: ancestor,
                stand_in: true,
            });
        }
    }
    targets.sort();
    targets.dedup_by(|b, a| a.path == b.path);
    missing.sort();
    missing.dedup();
    let mut hasher = walk.hasher;
    missing.hash(&mut hasher);
    let folders = hasher.finish();
    let skills: BTreeMap<PathBuf, u64> = walk
        .skills
        .into_iter()
        .map(|(dir, h)| (dir, h.finish()))
        .collect();
    skills.hash(&mut hasher);
    Survey {
        plan: WatchPlan {
            targets,
            missing,
            deck: walk.deck,
            complete: walk.complete,
        },
        fingerprint: hasher.finish(),
        folders,
        skills,
    }
}

/// Hashes the files of the skill folder `dir` into `hasher` (path and
/// stamp of each, folders breadth first, each in sorted order; symlinks
/// never followed): the same hash a [`survey`] keeps for a skill whose
/// folders all fitted its limit.
fn stamp_skill_into(dir: &Path, hasher: &mut DefaultHasher) {
    let mut queue = VecDeque::from([dir.to_path_buf()]);
    while let Some(dir) = queue.pop_front() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut entries: Vec<(std::ffi::OsString, std::fs::FileType)> = entries
            .filter_map(Result::ok)
            .filter_map(|e| Some((e.file_name(), e.file_type().ok()?)))
            .collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, file_type) in entries {
            let path = dir.join(&name);
            if file_type.is_dir() {
                queue.push_back(path);
            } else if !file_type.is_symlink()
                && let Ok(meta) = std::fs::symlink_metadata(&path)
            {
                path.hash(hasher);
                hash_stamp(&meta, hasher);
            }
        }
    }
}

/// Stamps the files of each skill folder in `dirs` (see [`Survey::skills`]):
/// what polling checks every period between full surveys. Costs what the
/// skills hold, not what surrounds them: at 200,000 empty folders around
/// a few skills, a few file stamps.
pub fn stamp_skills<'a>(dirs: impl IntoIterator<Item = &'a Path>) -> BTreeMap<PathBuf, u64> {
    dirs.into_iter()
        .map(|dir| {
            let mut hasher = DefaultHasher::new();
            stamp_skill_into(dir, &mut hasher);
            (dir.to_path_buf(), hasher.finish())
        })
        .collect()
}

impl WatchPlan {
    /// How an event on `path` matters (see [`Relevance`]).
    pub fn relevance(&self, path: &Path) -> Relevance {
        if self.deck.iter().any(|d| path.starts_with(d)) {
            return Relevance::Deck;
        }
        // A folder on the way down to a missing root, the root itself, or
        // something inside it (created with it, before it is watched).
        if self
            .missing
            .iter()
            .any(|root| root.starts_with(path) || path.starts_with(root))
        {
            Relevance::Replan
        } else {
            Relevance::Unrelated
        }
    }
}
#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use skilldeck::{Root, Scope};

    fn roots(paths: &[&Path]) -> DiscoveryOptions {
        DiscoveryOptions {
            roots: paths
                .iter()
                .map(|p| Root {
                    path: p.to_path_buf(),
                    scope: Scope::Project,
                    required: false,
                })
                .collect(),
            ..DiscoveryOptions::default()
        }
    }

    #[test]
    fn a_missing_root_is_watched_through_its_nearest_existing_ancestor_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let root = base.join(".claude/skills");
        let plan = plan(&roots(&[&root]), WATCH_BUDGET);
        assert_eq!(
            plan.targets,
            vec![WatchTarget {
                path: base.clone(),
                stand_in: true
            }]
        );
        assert_eq!(plan.missing, vec![root.clone()]);
        assert_eq!(plan.relevance(&base.join(".claude")), Relevance::Replan);
        assert_eq!(
            plan.relevance(&base.join("notes.txt")),
            Relevance::Unrelated
        );
        std::fs::create_dir_all(&root).unwrap();
        let plan = super::plan(&roots(&[&root]), WATCH_BUDGET);
        assert_eq!(
            plan.targets,
            vec![WatchTarget {
                path: root.clone(),
                stand_in: false
            }]
        );
        assert!(plan.missing.is_empty());
        assert_eq!(plan.relevance(&root.join("x/SKILL.md")), Relevance::Deck);
    }

    #[test]
    fn a_root_inside_another_watched_root_is_covered_by_it() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir_all(base.join("a/b")).unwrap();
        let plan = plan(&roots(&[&base.join("a/b"), &base.join("a")]), WATCH_BUDGET);
        let paths: Vec<&Path> = plan.targets.iter().map(|t| t.path.as_path()).collect();
        assert_eq!(
            paths,
            vec![base.join("a").as_path(), base.join("a/b").as_path()]
        );
    }

    #[test]
    fn a_symlink_inside_a_skill_adds_no_watch_outside_the_root() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap().join("skills");
        std::fs::create_dir_all(root.join("pdf/assets")).unwrap();
        std::fs::write(root.join("pdf/SKILL.md"), "---\nname: pdf\n---\n").unwrap();
        std::os::unix::fs::symlink("/", root.join("pdf/assets/rootfs")).unwrap();
        std::os::unix::fs::symlink("/", root.join("rootfs")).unwrap();
        let plan = plan(&roots(&[&root]), WATCH_BUDGET);
        assert!(plan.complete);
        assert!(
            plan.targets.iter().all(|t| t.path.starts_with(&root)),
            "{:?}",
            plan.targets
        );
        assert_eq!(plan.targets.len(), 3, "{:?}", plan.targets);
    }

    #[test]
    fn a_skill_folder_installed_as_a_symlink_is_watched_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let elsewhere = base.join("store/pdf");
        std::fs::create_dir_all(elsewhere.join("references")).unwrap();
        std::fs::write(elsewhere.join("SKILL.md"), "---\nname: pdf\n---\n").unwrap();
        let root = base.join("skills");
        std::fs::create_dir_all(&root).unwrap();
        std::os::unix::fs::symlink(&elsewhere, root.join("pdf")).unwrap();
        let plan = plan(&roots(&[&root]), WATCH_BUDGET);
        let paths: Vec<&Path> = plan.targets.iter().map(|t| t.path.as_path()).collect();
        assert_eq!(paths, vec![root.as_path(), elsewhere.as_path()]);
        assert_eq!(plan.relevance(&elsewhere.join("SKILL.md")), Relevance::Deck);
    }

    #[test]
    fn a_tree_larger_than_the_budget_keeps_its_shallowest_folders_in_sorted_order() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        for i in 0..10 {
            std::fs::create_dir_all(root.join(format!("d{i}/deeper"))).unwrap();
        }
        let plan = plan(&roots(&[&root]), 4);
        assert!(!plan.complete);
        let paths: Vec<PathBuf> = plan.targets.iter().map(|t| t.path.clone()).collect();
        assert_eq!(
            paths,
            vec![
                root.clone(),
                root.join("d0"),
                root.join("d1"),
                root.join("d2")
            ]
        );
    }

    #[test]
    fn folders_deeper_than_discovery_are_not_watched_outside_skills() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir_all(root.join("a/b/c/d/e/f/g/h")).unwrap();
        std::fs::create_dir_all(root.join("s/x/y/z/w/v/u/t")).unwrap();
        std::fs::write(root.join("s/SKILL.md"), "---\nname: s\n---\n").unwrap();
        let plan = plan(&roots(&[&root]), WATCH_BUDGET);
        let has = |p: &str| plan.targets.iter().any(|t| t.path == root.join(p));
        assert!(has("a/b/c/d/e"));
        assert!(!has("a/b/c/d/e/f"));
        // Inside a skill every real folder is watched (edits drop its cache).
        assert!(has("s/x/y/z/w/v/u/t"));
    }

    #[test]
    fn an_edit_inside_a_skill_changes_the_fingerprint_and_names_the_skill() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir_all(root.join("pdf/references")).unwrap();
        std::fs::write(root.join("pdf/SKILL.md"), "---\nname: pdf\n---\n").unwrap();
        std::fs::write(root.join("pdf/references/a.md"), "a").unwrap();
        let before = survey(&roots(&[&root]), usize::MAX);
        assert_eq!(before, survey(&roots(&[&root]), usize::MAX));
        std::fs::write(root.join("pdf/references/a.md"), "longer").unwrap();
        let after = survey(&roots(&[&root]), usize::MAX);
        assert_ne!(before.fingerprint, after.fingerprint);
        assert_eq!(before.folders, after.folders);
        assert_ne!(
            before.skills.get(&root.join("pdf")),
            after.skills.get(&root.join("pdf"))
        );
    }

    #[test]
    fn stamping_the_known_skills_alone_agrees_with_a_survey_and_sees_an_edit() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir_all(root.join("pdf/references")).unwrap();
        std::fs::write(root.join("pdf/SKILL.md"), "---\nname: pdf\n---\n").unwrap();
        std::fs::write(root.join("pdf/references/a.md"), "a").unwrap();
        for i in 0..50 {
            std::fs::create_dir_all(root.join(format!("empty{i}"))).unwrap();
        }
        let survey = survey(&roots(&[&root]), usize::MAX);
        let quick = stamp_skills(survey.skills.keys().map(PathBuf::as_path));
        assert_eq!(quick, survey.skills);
        std::fs::write(root.join("pdf/SKILL.md"), "---\nname: pdf\n---\nedited\n").unwrap();
        let after = stamp_skills(survey.skills.keys().map(PathBuf::as_path));
        assert_ne!(after.get(&root.join("pdf")), quick.get(&root.join("pdf")));
    }

    #[test]
    fn a_new_skill_folder_changes_the_folders_part_of_the_fingerprint() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let before = survey(&roots(&[&root]), usize::MAX);
        std::fs::create_dir_all(root.join("new")).unwrap();
        std::fs::write(root.join("new/SKILL.md"), "---\nname: new\n---\n").unwrap();
        let after = survey(&roots(&[&root]), usize::MAX);
        assert_ne!(before.folders, after.folders);
        assert!(after.skills.contains_key(&root.join("new")));
    }
}
