//! Discovery: every skill from every root, with clear precedence.
//!
//! Roots, highest precedence first: skills listed in the config file
//! (`explicit`), project roots in the current folder and each ancestor up to
//! the repository root (`project`), user roots (`user`), extra roots from the
//! config or `--root` (`extra`), and the bundled examples (`bundled`).
//! Only the frontmatter of each `SKILL.md` is read. Roots are walked and
//! skills loaded in parallel; the result is deterministic.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;

use crate::deck::config::BundledMode;
use crate::deck::config::Config;
use crate::deck::deck::{Deck, RootReport, Shadowed};
use crate::deck::index::MetadataIndex;
use crate::diagnostic::{Code, Diagnostic, Severity};
use crate::fs::read::{SKILL_MD, SKILL_MD_LOWERCASE};
use crate::fs::stamp::FileStamp;
use crate::fs::walk::{self, WalkLimits};
use crate::plugin::scan::{Owner, RootPlugins};
use crate::skill::{HostFields, Scope, Skill, SkillMode};
use crate::spec::options::ValidationOptions;
use crate::spec::validate;

/// Project root folder names, searched in this order in each folder.
pub const PROJECT_ROOT_NAMES: [&str; 3] = [".agents/skills", ".claude/skills", ".skills"];

/// A folder searched for skills.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    /// The folder.
    pub path: PathBuf,
    /// Its scope.
    pub scope: Scope,
    /// Report it if missing (roots the user named); default roots that do
    /// not exist are skipped quietly.
    pub required: bool,
}

/// A skill listed by name and path in the config file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExplicitSkill {
    /// The name it must have.
    pub name: String,
    /// Its folder.
    pub path: PathBuf,
    /// Its mode, if set.
    pub mode: Option<SkillMode>,
}

/// Everything discovery needs.
#[derive(Debug, Clone)]
pub struct DiscoveryOptions {
    /// Explicit skills (scope `explicit`).
    pub explicit: Vec<ExplicitSkill>,
    /// Roots, in precedence order.
    pub roots: Vec<Root>,
    /// Walk bounds per root.
    pub limits: WalkLimits,
    /// How each `SKILL.md` is checked (lenient, lints off, by default).
    pub validation: ValidationOptions,
    /// Modes by skill name.
    pub modes: BTreeMap<String, SkillMode>,
    /// The on-disk metadata index to use and update (`None`: off).
    pub index: Option<PathBuf>,
    /// Files changed this recently are not stored in the index
    /// (default `RACY_WINDOW` (2 s)).
    pub index_racy_window: std::time::Duration,
    /// Roots of scope `bundled` are used only when no other root or
    /// explicit skill yields a skill folder (`[discovery] bundled =
    /// "fallback"`); false: always used.
    pub bundled_fallback: bool,
    /// Serve files with more than one hard link (`[resources]
    /// allow-hardlinks = true`); false by default: another name of such a
    /// file may lie outside the skill.
    pub allow_hardlinks: bool,
}

impl Default for DiscoveryOptions {
    fn default() -> Self {
        DiscoveryOptions {
            explicit: Vec::new(),
            roots: Vec::new(),
            limits: WalkLimits {
                max_depth: crate::limits::MAX_DISCOVERY_DEPTH,
                max_dirs: crate::limits::MAX_WALK_DIRS,
            },
            validation: ValidationOptions {
                lints: false,
                ..ValidationOptions::lenient()
            },
            modes: BTreeMap::new(),
            index: None,
            index_racy_window: crate::deck::index::RACY_WINDOW,
            bundled_fallback: false,
            allow_hardlinks: false,
        }
    }
}

impl DiscoveryOptions {
    /// Only the given folders (scope `extra`), nothing else.
    pub fn with_roots(roots: impl IntoIterator<Item = PathBuf>) -> Self {
        DiscoveryOptions {
            roots: roots
                .into_iter()
                .map(|path| Root {
                    path,
                    scope: Scope::Extra,
                    required: true,
                })
                .collect(),
            ..DiscoveryOptions::default()
        }
    }

    /// The options a host gets from a config file, for a process running in
    /// `cwd`. `override_roots` (the CLI's `--root`) replaces the default
    /// roots (project, user, managed, bundled); config roots and explicit
    /// skills stay.
    pub fn from_config(
        config: &Config,
        cwd: &Path,
        override_roots: Option<&[PathBuf]>,
    ) -> DiscoveryOptions {
        let mut options = DiscoveryOptions {
            limits: WalkLimits {
                max_depth: config.discovery.max_depth,
                max_dirs: config.discovery.max_dirs,
            },
            modes: config.modes.clone(),
            allow_hardlinks: config.resources.allow_hardlinks,
            ..DiscoveryOptions::default()
        };
        options.validation.allowed_fields = config.validate.allow_fields.clone();
        if let Some(max) = config.validate.max_skill_md_bytes {
            options.validation.max_skill_md_bytes = max;
        }
        options.explicit = config
            .skills
            .iter()
            .map(|s| ExplicitSkill {
                name: s.name.clone(),
                path: absolute(cwd, &config.resolve(&s.path)),
                mode: s.mode,
            })
            .collect();
        let mut roots = Vec::new();
        match override_roots {
            Some(given) => roots.extend(given.iter().map(|p| Root {
                path: absolute(cwd, p),
                scope: Scope::Extra,
                required: true,
            })),
            None => {
                if config.discovery.project {
                    roots.extend(project_roots(cwd).into_iter().map(|path| Root {
                        path,
                        scope: Scope::Project,
                        required: false,
                    }));
                }
                if config.discovery.user {
                    roots.extend(user_roots().into_iter().map(|path| Root {
                        path,
                        scope: Scope::User,
                        required: false,
                    }));
                }
                roots.extend(config.managed_roots().into_iter().map(|path| Root {
                    path: absolute(cwd, &path),
                    scope: Scope::Managed,
                    required: false,
                }));
            }
        }
        roots.extend(config.roots.iter().map(|p| Root {
            path: absolute(cwd, &config.resolve(p)),
            scope: Scope::Extra,
            required: true,
        }));
        options.bundled_fallback = config.discovery.bundled == BundledMode::Fallback;
        if override_roots.is_none() && config.discovery.bundled != BundledMode::Never {
            // If the bundle cannot be written anywhere, discovery reports it.
            let path =
                crate::deck::bundled::materialize().unwrap_or_else(|_| PathBuf::from("<bundled>"));
            roots.push(Root {
                path,
                scope: Scope::Bundled,
                required: true,
            });
        }
        options.roots = roots;
        if config.discovery.index {
            options.use_default_index();
        }
        options
    }

    /// True when discovery would find a skill folder placed directly in
    /// `dir`'s child folders: `dir` is one of the roots or inside one,
    /// within the walk's depth. Paths are compared after resolving symlinks
    /// where they exist.
    pub fn searches(&self, dir: &Path) -> bool {
        let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let dir = real(dir);
        self.roots.iter().any(|root| {
            dir.strip_prefix(real(&root.path))
                // A skill in `dir` is one level deeper than `dir`.
                .is_ok_and(|rel| rel.components().count() < self.limits.max_depth)
        })
    }

    /// Turns the metadata index on, in its default place for these roots.
    pub fn use_default_index(&mut self) {
        let paths = self
            .roots
            .iter()
            .map(|r| r.path.as_path())
            .chain(self.explicit.iter().map(|e| e.path.as_path()));
        self.index = Some(crate::deck::index::default_path(paths));
    }
}

fn absolute(cwd: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    }
}

/// Project roots for `cwd`: each of [`PROJECT_ROOT_NAMES`] in `cwd` and in
/// each ancestor up to the repository root (the first folder with `.git`);
/// outside a repository, `cwd` only. Nearest first.
pub fn project_roots(cwd: &Path) -> Vec<PathBuf> {
    let repo_root = cwd.ancestors().find(|d| d.join(".git").exists());
    let folders: Vec<&Path> = match repo_root {
        Some(top) => cwd.ancestors().take_while(|d| d.starts_with(top)).collect(),
        None => vec![cwd],
    };
    folders
        .into_iter()
        .flat_map(|d| PROJECT_ROOT_NAMES.iter().map(move |n| d.join(n)))
        .collect()
}

/// User roots from the environment: `~/.agents/skills`, `~/.claude/skills`,
/// `$XDG_CONFIG_HOME/skilldeck/skills`.
pub fn user_roots() -> Vec<PathBuf> {
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    user_roots_for(home.as_deref(), crate::fs::dirs::config_home().as_deref())
}

/// User roots for a given home and config folder.
pub fn user_roots_for(home: Option<&Path>, config_dir: Option<&Path>) -> Vec<PathBuf> {
    let mut roots = Vec::new();
    if let Some(home) = home {
        roots.push(home.join(".agents/skills"));
        roots.push(home.join(".claude/skills"));
    }
    if let Some(config) = config_dir {
        roots.push(config.join("skilldeck/skills"));
    }
    roots
}

/// A skill folder found, with where it came from. Small on purpose: at the
/// peak of a 100,000-skill load the candidates and the loaded skills are
/// both in memory (40 bytes and one path each).
struct Candidate {
    /// Walked: the skill file the walk found. Explicit: the folder (its
    /// skill file is looked up when it loads).
    path: PathBuf,
    /// Its [`Source`] (an index into the table shared by every candidate).
    source: u32,
    /// `path` is the skill file (walked), not the folder (explicit).
    walked: bool,
    /// The walk's listing typed the skill file as a regular file.
    listed_regular: bool,
    /// The path from the root crosses a symlinked folder.
    via_symlink: bool,
    /// For explicit skills: the name it must have and its mode.
    expected: Option<Box<(String, Option<SkillMode>)>>,
    /// For a plugin's skill: the plugin's name (an index into the table
    /// of plugin names every candidate shares); it is named
    /// `PLUGIN:SKILL` ([`crate::spec::plugin_name`]).
    plugin: Option<u32>,
}

/// Where candidates come from: a root, or one explicit skill.
struct Source {
    root: Arc<Path>,
    scope: Scope,
    /// The root's real location: a folder reached without crossing a
    /// symlink is really there plus its path below the root (one realpath
    /// per root, not one per skill).
    real_root: Option<Arc<Path>>,
}

impl Candidate {
    /// The skill folder.
    fn dir(&self) -> &Path {
        if self.walked {
            crate::fs::read::folder_of(&self.path)
        } else {
            &self.path
        }
    }

    /// Its real location when known without resolving.
    fn known_real_dir(&self, source: &Source) -> Option<PathBuf> {
        if self.via_symlink {
            return None;
        }
        let real = source.real_root.as_deref()?;
        let dir = self.dir();
        // Bytes first (the walk's own form), components when they differ.
        let rel = match crate::fs::path::below(dir, &source.root) {
            Some(rel) => rel,
            None => dir.strip_prefix(&*source.root).ok()?,
        };
        Some(real.join(rel))
    }
}

/// The skill folders discovery reads, without loading them: explicit skills,
/// then every skill folder under each existing root, in precedence order
/// (shadowed ones included), with the walks' warnings. A root the user named
/// that does not exist is a `path-not-found` error. `skilldeck validate`
/// with no PATH checks these.
pub fn skill_folders(options: &DiscoveryOptions) -> (Vec<PathBuf>, Vec<Diagnostic>) {
    let mut dirs: Vec<PathBuf> = options.explicit.iter().map(|e| e.path.clone()).collect();
    let mut diagnostics = Vec::new();
    for root in &options.roots {
        if !root.path.is_dir() {
            if root.required {
                diagnostics.push(
                    Diagnostic::new(
                        Code::PathNotFound,
                        Severity::Error,
                        format!("skill root does not exist: {}", root.path.display()),
                    )
                    .in_file(&root.path),
                );
            }
            continue;
        }
        let found = walk::find_skill_dirs(&root.path, options.limits);
        diagnostics.extend(found.diagnostics);
        dirs.extend(found.skills.iter().map(|f| f.dir().to_path_buf()));
    }
    (dirs, diagnostics)
}

/// Finds and loads every skill. Never fails as a whole: everything skipped
/// is a diagnostic in the returned deck.
///
/// Runs in a `discover` span recording the skills found, loaded and failed
/// (with each failure's `file:line`, at most `SPAN_FAILURES` = 50); counts are
/// recorded as `i64` (OpenTelemetry has no unsigned attribute).
pub fn discover(options: &DiscoveryOptions) -> Deck {
    let span = tracing::info_span!(
        "discover",
        skilldeck.discovery.roots = options.roots.len() as i64,
        skilldeck.discovery.found = tracing::field::Empty,
        skilldeck.discovery.loaded = tracing::field::Empty,
        skilldeck.discovery.failed = tracing::field::Empty,
        skilldeck.discovery.failures = tracing::field::Empty,
        skilldeck.discovery.skills = tracing::field::Empty,
        skilldeck.discovery.tools_dropped = tracing::field::Empty,
    );
    let _entered = span.enter();
    let deck = discover_deck(options);
    if !span.is_disabled() {
        let found: usize = deck
            .roots()
            .iter()
            .filter(|r| r.used)
            .map(|r| r.found)
            .sum();
        let failures: Vec<String> = deck
            .diagnostics()
            .iter()
            .filter(|d| d.is_error())
            .map(|d| d.to_string())
            .collect();
        span.record(
            "skilldeck.discovery.found",
            (found + options.explicit.len()) as i64,
        );
        span.record("skilldeck.discovery.loaded", deck.len() as i64);
        span.record(
            "skilldeck.discovery.skills",
            skill_names_capped(&deck).as_str(),
        );
        span.record("skilldeck.discovery.failed", failures.len() as i64);
        if !failures.is_empty() {
            let shown = failures.len().min(SPAN_FAILURES);
            span.record("skilldeck.discovery.failures", failures[..shown].join("\n"));
        }
        // Declared tools left out (the skill loaded without them).
        let dropped: Vec<String> = deck
            .diagnostics()
            .iter()
            .filter(|d| d.code.is_tool_problem() && !d.is_error())
            .take(SPAN_FAILURES)
            .map(|d| d.to_string())
            .collect();
        if !dropped.is_empty() {
            span.record("skilldeck.discovery.tools_dropped", dropped.join("\n"));
        }
    }
    deck
}

/// Most load failures listed on the `discover` span (the count is whole).
const SPAN_FAILURES: usize = 50;

/// Most skill names listed on the `discover` span and a server's "skills
/// loaded" line (the count is whole).
pub const MAX_LOGGED_SKILL_NAMES: usize = 100;

/// The deck's skill names, comma-separated, at most
/// [`MAX_LOGGED_SKILL_NAMES`] of them, then `... and N more`: what a load
/// span or log line says was loaded.
pub fn skill_names_capped(deck: &Deck) -> String {
    let mut out = String::new();
    for (i, skill) in deck.skills().iter().enumerate() {
        if i == MAX_LOGGED_SKILL_NAMES {
            out.push_str(&format!(" ... and {} more", deck.len() - i));
            break;
        }
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(&skill.name);
    }
    out
}

fn discover_deck(options: &DiscoveryOptions) -> Deck {
    let mut diagnostics = Vec::new();
    let mut sources: Vec<Source> = Vec::with_capacity(options.explicit.len() + options.roots.len());
    let mut candidates: Vec<Candidate> = Vec::with_capacity(options.explicit.len());
    for e in &options.explicit {
        candidates.push(Candidate {
            path: e.path.clone(),
            source: source_index(sources.len()),
            walked: false,
            listed_regular: false,
            via_symlink: false,
            expected: Some(Box::new((e.name.clone(), e.mode))),
            plugin: None,
        });
        sources.push(Source {
            root: Arc::from(e.path.as_path()),
            scope: Scope::Explicit,
            real_root: None,
        });
    }

    let walks: Vec<(usize, (walk::WalkOutcome, RootPlugins))> = options
        .roots
        .par_iter()
        .enumerate()
        .filter(|(_, root)| root.required || root.path.is_dir())
        .map(|(i, root)| {
            let outcome = walk_root(root, options.limits);
            let dirs: Vec<&Path> = outcome.skills.iter().map(|f| f.dir()).collect();
            let plugins = crate::plugin::scan::assign(&root.path, &dirs);
            (i, (outcome, plugins))
        })
        .collect();
    // Precedence is by scope, then by the order roots were given.
    let mut walks = walks;
    walks.sort_by_key(|(i, _)| (options.roots[*i].scope, *i));
    let mut reports: Vec<RootReport> = options
        .roots
        .iter()
        .map(|root| RootReport {
            path: root.path.clone(),
            scope: root.scope,
            exists: root.path.is_dir(),
            found: 0,
            used: true,
        })
        .collect();
    for (i, (outcome, _)) in &walks {
        reports[*i].found = outcome.skills.len();
    }
    // Fallback: the bundled examples only when nothing else has a skill.
    let others_found = !options.explicit.is_empty()
        || reports
            .iter()
            .any(|r| r.scope != Scope::Bundled && r.found > 0);
    if options.bundled_fallback && others_found {
        for r in reports.iter_mut().filter(|r| r.scope == Scope::Bundled) {
            r.used = false;
        }
        walks.retain(|(i, _)| options.roots[*i].scope != Scope::Bundled);
    }
    reports.sort_by_key(|r| r.scope);
    // The names of the plugins whose skills are candidates.
    let mut plugin_names: Vec<Arc<str>> = Vec::new();
    for (i, (outcome, plugins)) in walks {
        let root = &options.roots[i];
        diagnostics.extend(outcome.diagnostics);
        diagnostics.extend(plugins.diagnostics);
        let first_plugin = plugin_names.len();
        plugin_names.extend(
            plugins
                .plugins
                .iter()
                .map(|p| Arc::from(p.manifest.name.as_str())),
        );
        // One realpath per root instead of one per skill.
        let source = source_index(sources.len());
        sources.push(Source {
            root: Arc::from(root.path.as_path()),
            scope: root.scope,
            real_root: std::fs::canonicalize(&root.path)
                .ok()
                .map(|p| Arc::from(p.as_path())),
        });
        candidates.extend(outcome.skills.into_iter().zip(plugins.owners).filter_map(
            |(found, owner)| {
                let plugin = match owner {
                    Owner::None => None,
                    Owner::Plugin(p) => Some(source_index(first_plugin + p as usize)),
                    // Its plugin's manifest is broken: the error says so.
                    Owner::Refused => return None,
                };
                Some(Candidate {
                    path: found.skill_md,
                    source,
                    walked: true,
                    listed_regular: found.listed_regular,
                    via_symlink: found.via_symlink,
                    expected: None,
                    plugin,
                })
            },
        ));
    }

    let index = options
        .index
        .as_deref()
        .map(|path| MetadataIndex::load(path, &options.validation, options.index_racy_window));
    // The error side is boxed so a result is no larger than a skill: the
    // skills are then taken out of this array in place (one array of
    // skills at the peak of a 100,000-skill load, not two).
    let loaded: Vec<Loaded> = candidates
        .into_par_iter()
        .map(|c| {
            load_candidate(c, &sources, &plugin_names, options, index.as_ref())
                .map_err(Vec::into_boxed_slice)
        })
        .collect();

    // Which loaded skill wins its name, which is the same folder reached
    // twice (a symlinked root), which is shadowed (and by whom): decided
    // over borrowed names and paths (no key is copied), with a fast seeded
    // hasher.
    let mut fates: Vec<Fate> = Vec::with_capacity(loaded.len());
    // The winner's folder and scope, per shadowed skill, in order.
    let mut winners: Vec<(PathBuf, Scope)> = Vec::new();
    {
        let hasher = foldhash::fast::RandomState::default();
        let mut seen_dirs: HashSet<&std::ffi::OsStr, _> =
            HashSet::with_capacity_and_hasher(loaded.len(), hasher.clone());
        let mut by_name: HashMap<&str, &Skill, _> =
            HashMap::with_capacity_and_hasher(loaded.len(), hasher);
        for result in &loaded {
            let fate = match result {
                Err(_) => Fate::Failed,
                Ok(skill) if !seen_dirs.insert(skill.real_dir().as_os_str()) => Fate::Duplicate,
                Ok(skill) => match by_name.get(skill.name.as_str()) {
                    Some(winner) => {
                        winners.push((winner.dir().to_path_buf(), winner.scope));
                        Fate::Shadowed
                    }
                    None => {
                        by_name.insert(&skill.name, skill);
                        Fate::Wins
                    }
                },
            };
            fates.push(fate);
        }
    }
    let mut winners = winners.into_iter();
    let mut shadowed = Vec::new();
    let skills: Vec<Skill> = loaded
        .into_iter()
        .enumerate()
        .filter_map(|(i, result)| match (result, fates[i]) {
            (Err(ds), _) => {
                diagnostics.extend(ds);
                None
            }
            (Ok(skill), Fate::Wins) => {
                diagnostics.extend(skill.tool_diagnostics());
                Some(skill)
            }
            (Ok(skill), Fate::Shadowed) => {
                let (winner_dir, winner_scope) = winners.next()?;
                diagnostics.push(
                    Diagnostic::new(
                        Code::ShadowedSkill,
                        Severity::Warning,
                        format!(
                            "skill '{}' ({}) is shadowed by the {} skill at {}",
                            skill.name,
                            skill.scope,
                            winner_scope,
                            winner_dir.display()
                        ),
                    )
                    .in_file(&skill.skill_md)
                    .with_help("rename one of them, or remove the one you do not want"),
                );
                shadowed.push(Shadowed {
                    winner_dir,
                    winner_scope,
                    skill,
                });
                None
            }
            (Ok(_), _) => None,
        })
        .collect();
    let mut index_stats = None;
    if let Some(index) = &index {
        if let Err(e) = index.save(skills.iter().chain(shadowed.iter().map(|s| &s.skill))) {
            diagnostics.push(Diagnostic::new(
                Code::ReadError,
                Severity::Warning,
                format!("metadata index not saved: {e}"),
            ));
        }
        index_stats = Some(index.stats());
    }
    Deck::new(skills, shadowed, diagnostics)
        .with_index_stats(index_stats)
        .with_roots(reports)
}

/// One candidate's load: the skill, or why it did not load.
type Loaded = Result<Skill, Box<[Diagnostic]>>;

/// What discovery does with one loaded skill.
#[derive(Clone, Copy)]
enum Fate {
    /// It did not load (its diagnostics are kept).
    Failed,
    /// First of its name: in the deck.
    Wins,
    /// A folder already loaded, reached again: dropped.
    Duplicate,
    /// Its name is taken by a skill loaded before it.
    Shadowed,
}

/// `text` with its control characters replaced (see
/// [`crate::spec::control`]); moved through unchanged when it has none.
fn without_controls(text: String, one_line: bool) -> String {
    match crate::spec::control::replace_controls(&text, one_line) {
        std::borrow::Cow::Borrowed(_) => text,
        std::borrow::Cow::Owned(clean) => clean,
    }
}

fn walk_root(root: &Root, limits: WalkLimits) -> walk::WalkOutcome {
    if !root.path.is_dir() {
        let message = if root.path.exists() {
            format!("skill root {} is not a folder", root.path.display())
        } else {
            format!("skill root {} does not exist", root.path.display())
        };
        return walk::WalkOutcome {
            skills: Vec::new(),
            diagnostics: vec![
                Diagnostic::new(Code::PathNotFound, Severity::Warning, message).in_file(&root.path),
            ],
        };
    }
    walk::find_skill_dirs(&root.path, limits)
}

/// `i` as a source index: a deck has far fewer roots than `u32::MAX`.
fn source_index(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(u32::MAX)
}

fn load_candidate(
    c: Candidate,
    sources: &[Source],
    plugin_names: &[Arc<str>],
    options: &DiscoveryOptions,
    index: Option<&MetadataIndex>,
) -> Result<Skill, Vec<Diagnostic>> {
    let fail = |code: Code, message: String| {
        vec![Diagnostic::new(code, Severity::Error, message).in_file(c.dir())]
    };
    let Some(source) = sources.get(c.source as usize) else {
        return Err(fail(
            Code::ReadError,
            "internal: a skill folder without its root".to_owned(),
        ));
    };
    let known_real_dir = c.known_real_dir(source);
    let (skill_md, expected) = if c.walked {
        (c.path, c.expected)
    } else {
        let dir = c.dir();
        if !dir.is_dir() {
            return Err(fail(
                Code::PathNotFound,
                format!("skill folder {} does not exist", dir.display()),
            ));
        }
        let found = [SKILL_MD, SKILL_MD_LOWERCASE]
            .iter()
            .map(|n| crate::fs::read::skill_file_path(dir, n))
            .find(|p| std::fs::symlink_metadata(p).is_ok())
            .ok_or_else(|| {
                fail(
                    Code::MissingSkillMd,
                    format!("Missing required file: SKILL.md in {}", dir.display()),
                )
            })?;
        (found, c.expected)
    };
    let dir = crate::fs::read::folder_of(&skill_md);
    // With an index: one stat, before any read, serves both the lookup and
    // the entry recorded after a fresh parse.
    let stamp = index.and_then(|_| FileStamp::read(&skill_md));
    let cached = index
        .zip(stamp)
        .and_then(|(ix, stamp)| ix.lookup(&skill_md, stamp));
    let (name, description, host) = match cached {
        Some(cached) => (cached.name, cached.description, cached.host),
        None => {
            let cap = options.validation.max_skill_md_bytes;
            let prefix = if c.listed_regular {
                crate::fs::read::read_listed_frontmatter_prefix(&skill_md, cap)
            } else {
                crate::fs::read::read_frontmatter_prefix(&skill_md, cap)
            }
            .map_err(|d| vec![d])?;
            let checked = validate::check_text(&prefix, Some(dir), &options.validation);
            let diagnostics: Vec<Diagnostic> = checked
                .diagnostics
                .into_iter()
                .map(|d| d.in_file(&skill_md))
                .collect();
            let Some(mut frontmatter) = checked.frontmatter else {
                return Err(diagnostics);
            };
            if diagnostics.iter().any(Diagnostic::is_error) {
                return Err(diagnostics);
            }
            // Seed 004's entry points take their descriptions from the
            // body's list: only those skills read the rest of the file.
            if frontmatter
                .tools
                .iter()
                .any(|t| t.call == crate::spec::ToolCall::EntryPoint)
                && let Ok(full) = crate::fs::read::read_skill_md_capped(&skill_md, cap)
                && let Some(whole) =
                    validate::check_text(&full, Some(dir), &options.validation).frontmatter
            {
                frontmatter.tools = whole.tools;
            }
            if let Some((ix, stamp)) = index.zip(stamp) {
                ix.record(&skill_md, stamp);
            }
            // Only what hosts act on is kept; the rest of the frontmatter
            // is read again on demand (`Skill::frontmatter`).
            let mut host = HostFields::from_frontmatter(&frontmatter);
            host.keep_tool_problems(&diagnostics);
            (frontmatter.name, frontmatter.description, host)
        }
    };
    let folder = || {
        dir.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    // Moved, not copied: a deck of 10,000 skills holds each text once, at
    // its length.
    // The deck never holds a control character in a name or description
    // (lenient mode loads such a skill with a `control-character` warning):
    // each is replaced once here, so no catalog, listing or client sees it.
    let mut name = without_controls(name.unwrap_or_else(folder), true);
    if let Some(plugin) = c.plugin.and_then(|p| plugin_names.get(p as usize)) {
        name = crate::spec::plugin_name::qualified_name(plugin, &name);
    }
    name.shrink_to_fit();
    let mut description = without_controls(description.unwrap_or_default(), false);
    description.shrink_to_fit();
    let mut mode = options.modes.get(&name).copied().unwrap_or_default();
    if let Some((expected, explicit_mode)) = expected.as_deref() {
        if *expected != name {
            return Err(vec![
                Diagnostic::new(
                    Code::NameDirMismatch,
                    Severity::Error,
                    format!(
                        "config lists skill '{expected}' at {}, but its SKILL.md names it '{name}'",
                        dir.display()
                    ),
                )
                .in_file(dir),
            ]);
        }
        if let Some(m) = explicit_mode {
            mode = *m;
        }
    }
    let real_dir = match known_real_dir {
        Some(known) => known,
        None => std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf()),
    };
    // Hold each path once, at its length: a deck of 10,000 skills is mostly
    // paths (the walk made the skill file's path at its length).
    let resolved_dir = (real_dir != dir).then(|| real_dir.into_boxed_path());
    let mut skill_md = skill_md;
    skill_md.shrink_to_fit();
    let mut host = host;
    host.set_allow_hardlinks(options.allow_hardlinks);
    Ok(Skill {
        name,
        description,
        resolved_dir,
        skill_md,
        scope: source.scope,
        root: Arc::clone(&source.root),
        mode,
        host,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The in-place collect of `discover_deck` keeps one array of skills at
    /// the peak of a large load only while a load result is no larger than
    /// a skill (the error boxed, the result in the skill's niche).
    #[test]
    fn a_load_result_is_no_larger_than_a_skill() {
        assert_eq!(size_of::<Loaded>(), size_of::<Skill>());
    }
}
