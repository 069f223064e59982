//! What a host watches to reload its deck: the rule a file watcher maps.
//!
//! Each configured root (and each explicit skill's folder) that exists is
//! watched recursively. One that does not exist yet (the common flow:
//! start the client, then `mkdir -p .claude/skills`) is stood in for by its
//! nearest existing ancestor, watched **non-recursively**, so the watch
//! count stays tiny (never a recursive watch on `$HOME` or `/`). When an
//! event names a path on the way down to a missing root, the watcher asks
//! for a new [`plan`]: the next level (or the root itself) now exists and
//! is watched in turn. A root deleted later falls back to its ancestor the
//! same way, and is watched again when re-created.

use std::path::{Path, PathBuf};

use skilldeck::DiscoveryOptions;

/// One folder to watch.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct WatchTarget {
    /// The folder (resolved when it exists).
    pub path: PathBuf,
    /// Watch everything below it (a root or skill folder that exists), or
    /// only its direct children (an ancestor standing in for a missing
    /// root).
    pub recursive: bool,
}

/// What to watch for a set of roots: the targets, and the roots that do
/// not exist yet (to recognise events on the way to them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WatchPlan {
    /// The folders to watch, sorted, without a folder already covered by a
    /// recursive target above it.
    pub targets: Vec<WatchTarget>,
    /// Configured folders that do not exist: absolute, under the resolved
    /// form of their nearest existing ancestor (as events name them).
    pub missing: Vec<PathBuf>,
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

/// What to watch for `discovery`'s roots and explicit skills (see the
/// module documentation).
pub fn plan(discovery: &DiscoveryOptions) -> WatchPlan {
    let folders = discovery
        .roots
        .iter()
        .map(|r| r.path.as_path())
        .chain(discovery.explicit.iter().map(|e| e.path.as_path()));
    let mut targets = Vec::new();
    let mut missing = Vec::new();
    for folder in folders {
        let folder = absolute(folder);
        match std::fs::canonicalize(&folder) {
            Ok(resolved) if resolved.is_dir() => targets.push(WatchTarget {
                path: resolved,
                recursive: true,
            }),
            _ => match nearest_existing_ancestor(&folder) {
                Some((ancestor, restated)) => {
                    targets.push(WatchTarget {
                        path: ancestor,
                        recursive: false,
                    });
                    missing.push(restated);
                }
                None => missing.push(folder),
            },
        }
    }
    // Recursive first for each path, so a duplicate keeps the stronger watch.
    targets.sort_by(|a, b| a.path.cmp(&b.path).then(b.recursive.cmp(&a.recursive)));
    targets.dedup_by(|b, a| a.path == b.path);
    let all = targets.clone();
    targets.retain(|t| {
        !all.iter()
            .any(|o| o.recursive && o.path != t.path && t.path.starts_with(&o.path))
    });
    missing.sort();
    missing.dedup();
    WatchPlan { targets, missing }
}

impl WatchPlan {
    /// How an event on `path` matters (see [`Relevance`]).
    pub fn relevance(&self, path: &Path) -> Relevance {
        if self
            .targets
            .iter()
            .any(|t| t.recursive && path.starts_with(&t.path))
        {
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
    fn a_missing_root_is_watched_through_its_nearest_existing_ancestor_non_recursively() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let root = base.join(".claude/skills");
        let plan = plan(&roots(&[&root]));
        assert_eq!(
            plan.targets,
            vec![WatchTarget {
                path: base.clone(),
                recursive: false
            }]
        );
        assert_eq!(plan.missing, vec![root.clone()]);
        assert_eq!(plan.relevance(&base.join(".claude")), Relevance::Replan);
        assert_eq!(
            plan.relevance(&base.join("notes.txt")),
            Relevance::Unrelated
        );
        std::fs::create_dir_all(&root).unwrap();
        let plan = super::plan(&roots(&[&root]));
        assert_eq!(
            plan.targets,
            vec![WatchTarget {
                path: root.clone(),
                recursive: true
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
        let plan = plan(&roots(&[&base.join("a/b"), &base.join("a")]));
        assert_eq!(plan.targets.len(), 1);
        assert_eq!(plan.targets[0].path, base.join("a"));
        assert!(plan.targets[0].recursive);
    }
}
