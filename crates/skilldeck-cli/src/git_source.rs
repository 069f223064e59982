//! Git sources for `install`, and the commands that follow a source over
//! time: `outdated`, `update` (for every channel that moves: git here,
//! OCI tags, well-known indexes and marketplace entries through
//! [`crate::channels`]) and `remove`.
//!
//! A git source (`git+https://HOST/REPO[#REF][:PATH]`, `git+file://...`,
//! `github:OWNER/REPO[/PATH][@REF]`) is resolved and written to a folder
//! by [`skilldeck_source::git`], then installed through the one install
//! path as a [`Source::Checkout`]: the lock records the canonical source,
//! the commit and the fingerprint.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use skilldeck_package::{InstallOptions, LockEntry, Lockfile, PackageLimits, Source, lock_path};
use skilldeck_source::git::{
    self, GitCheckout, GitSpec, RefKind, RemoteRefs, Resolved, check_tag_not_moved,
};

use crate::channels::{self, Channel, Now, ReachArgs};
use crate::error::CliError;
use crate::exit;
use crate::format::{self, Format};
use crate::pack::{refused, skills_root};
use crate::render;

/// True when `text` names a git source.
pub fn is_git(text: &str) -> bool {
    git::is_git_source(text)
}

fn source_error(e: skilldeck_source::Error) -> CliError {
    CliError::Usage(e.to_string())
}

/// The lock entries whose source is `spec` (the same repository, ref and
/// path), by skill name.
fn entries_of<'a>(lock: Option<&'a Lockfile>, spec: &GitSpec) -> Vec<(&'a str, &'a LockEntry)> {
    let text = spec.to_string();
    lock.map(|l| {
        l.skill
            .iter()
            .filter(|(_, e)| e.source == text)
            .map(|(n, e)| (n.as_str(), e))
            .collect()
    })
    .unwrap_or_default()
}

/// Fetches the git source `text` for `install`: its ref resolved now (a
/// tag the lock recorded at another commit is refused), that commit
/// written to a folder in `tmp`.
pub fn fetch_for_install(
    text: &str,
    lock: Option<&Lockfile>,
    tmp: &Path,
) -> Result<(GitCheckout, Source), CliError> {
    let spec = GitSpec::parse(text).map_err(source_error)?;
    let refs = RemoteRefs::list(&spec).map_err(source_error)?;
    let resolved = refs.resolve(&spec).map_err(source_error)?;
    for (_, entry) in entries_of(lock, &spec) {
        check_tag_not_moved(&spec, &resolved, entry.commit.as_deref()).map_err(source_error)?;
    }
    checkout(&spec, &resolved.commit, None, tmp)
}

/// Fetches a lock entry's git source at exactly its locked commit (for
/// `install --frozen`), refused unless it has the locked fingerprint; a
/// tag that moved since is refused too.
pub fn fetch_locked(
    name: &str,
    entry: &LockEntry,
    lockfile: &Path,
    tmp: &Path,
) -> Result<(GitCheckout, Source), CliError> {
    let spec = GitSpec::parse(&entry.source).map_err(source_error)?;
    let commit = entry.commit.as_deref().ok_or_else(|| {
        CliError::Usage(format!(
            "{}: skill '{name}' comes from {} but the lock records no commit: install it \
             again to record one",
            lockfile.display(),
            entry.source
        ))
    })?;
    if matches!(&spec.reference, Some(r) if !git::is_full_commit(r)) {
        let refs = RemoteRefs::list(&spec).map_err(source_error)?;
        let resolved = refs.resolve(&spec).map_err(source_error)?;
        check_tag_not_moved(&spec, &resolved, Some(commit)).map_err(source_error)?;
    }
    checkout(&spec, commit, Some(entry.fingerprint), tmp)
}

fn checkout(
    spec: &GitSpec,
    commit: &str,
    fingerprint: Option<skilldeck::Digest>,
    tmp: &Path,
) -> Result<(GitCheckout, Source), CliError> {
    let co = git::checkout(spec, commit, &PackageLimits::default(), tmp).map_err(source_error)?;
    let source = Source::Checkout {
        folder: co.folder(),
        source: co.source.clone(),
        commit: Some(co.commit.clone()),
        fingerprint,
    };
    Ok((co, source))
}

fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}

/// The lock of `root` (or `lock`), loaded; `None` when there is none.
fn load_lock(root: &Path, lock: Option<&Path>) -> Result<(PathBuf, Option<Lockfile>), CliError> {
    let lockfile = lock
        .map(Path::to_path_buf)
        .unwrap_or_else(|| lock_path(root));
    let loaded = Lockfile::load(&lockfile).map_err(|e| CliError::Usage(e.to_string()))?;
    Ok((lockfile, loaded))
}

/// Where a lock entry stands against its source.
#[derive(Debug, serde::Serialize)]
pub struct Standing {
    /// The skill.
    pub name: String,
    /// The channel: `git`, `oci`, `well-known` or `marketplace`.
    pub channel: &'static str,
    /// The source the lock records.
    pub source: String,
    /// What the lock pins: the commit (git), the manifest digest (OCI),
    /// the fingerprint (well-known, marketplace).
    pub locked: Option<String>,
    /// git: the kind of ref (`commit`, `tag`, `branch` or
    /// `default-branch`); OCI: `tag` (follows it) or `digest` (a pin);
    /// `index`; `marketplace-entry`.
    pub kind: &'static str,
    /// The same as `locked`, now.
    pub current: String,
    /// Pinned (a full commit or a tag): `update` keeps it.
    pub pinned: bool,
    /// Newer version tags than the pinned tag.
    pub newer_tags: Vec<String>,
    /// The ref names another commit than the lock's (for a tag: it moved).
    pub changed: bool,
}

fn standing(
    name: &str,
    entry: &LockEntry,
    cache: &mut BTreeMap<String, RemoteRefs>,
) -> Result<(GitSpec, Resolved, Standing), CliError> {
    let spec = GitSpec::parse(&entry.source).map_err(source_error)?;
    let refs = match cache.get(&spec.url) {
        Some(r) => r.clone(),
        None => {
            let r = RemoteRefs::list(&spec).map_err(source_error)?;
            cache.insert(spec.url.clone(), r.clone());
            r
        }
    };
    let resolved = refs.resolve(&spec).map_err(source_error)?;
    let (kind, newer_tags) = match &resolved.kind {
        RefKind::Commit => ("commit", Vec::new()),
        RefKind::Tag(t) => ("tag", refs.newer_tags(t)),
        RefKind::Branch(_) => ("branch", Vec::new()),
        RefKind::DefaultBranch => ("default-branch", Vec::new()),
    };
    let changed = entry
        .commit
        .as_deref()
        .is_none_or(|c| !c.eq_ignore_ascii_case(&resolved.commit));
    let s = Standing {
        name: name.to_owned(),
        channel: "git",
        source: entry.source.clone(),
        locked: entry.commit.clone(),
        kind,
        current: resolved.commit.clone(),
        pinned: resolved.kind.is_pinned(),
        newer_tags,
        changed,
    };
    Ok((spec, resolved, s))
}

/// The skills root and lock options every follow-up command shares.
#[derive(Debug, clap::Args)]
pub struct RootArgs {
    /// The skills root (default: .agents/skills of the current folder).
    #[arg(long, visible_alias = "root", value_name = "ROOT")]
    dir: Option<PathBuf>,
    /// The lockfile (default: skilldeck.lock next to the root).
    #[arg(long, value_name = "FILE")]
    lock: Option<PathBuf>,
}

/// A non-git entry's standing as an `outdated` row.
fn channel_standing(name: &str, entry: &LockEntry, channel: Channel, now: &Now) -> Standing {
    Standing {
        name: name.to_owned(),
        channel: channel.as_str(),
        source: entry.source.clone(),
        locked: Some(now.locked.clone()),
        kind: now.kind,
        current: now.current.clone(),
        pinned: now.pinned,
        newer_tags: Vec::new(),
        changed: now.changed,
    }
}

/// The tag an OCI lock source follows (`oci://R/REPO:TAG@DIGEST`).
fn oci_tag(source: &str) -> String {
    skilldeck_source::oci::OciRef::parse(source)
        .ok()
        .and_then(|r| r.followed_tag().map(str::to_owned))
        .unwrap_or_else(|| "?".to_owned())
}

/// What a well-known or marketplace entry follows, for the text output.
fn follows(channel: &str) -> &'static str {
    if channel == "well-known" {
        "follows its well-known index"
    } else {
        "follows its marketplace entry"
    }
}

/// `skilldeck outdated`.
#[derive(Debug, clap::Args)]
pub struct OutdatedArgs {
    #[command(flatten)]
    root: RootArgs,
    #[command(flatten)]
    reach: ReachArgs,
    /// Output format.
    #[arg(long = "output", value_parser = Format::parser(format::TABLE), default_value = "text")]
    output: Format,
}

/// Lists skills whose source names other content than the lock's now
/// (git refs, OCI tags, well-known indexes, marketplace entries:
/// [`channels`]), and pinned git tags with newer version tags. Exit 1
/// when any is outdated or a git tag moved.
pub fn outdated(args: &OutdatedArgs) -> Result<u8, CliError> {
    let root = skills_root(args.root.dir.as_deref())?;
    let (lockfile, lock) = load_lock(&root, args.root.lock.as_deref())?;
    let lock = lock.ok_or_else(|| {
        CliError::Usage(format!(
            "{}: no lockfile: install a skill first",
            lockfile.display()
        ))
    })?;
    let mut cache = BTreeMap::new();
    let mut rows = Vec::new();
    let tmp = std::env::temp_dir();
    for (name, entry) in &lock.skill {
        if git::is_git_source(&entry.source) {
            rows.push(standing(name, entry, &mut cache)?.2);
        } else if let Some(channel) = Channel::of(&entry.source) {
            let now = channels::now(channel, name, entry, &lockfile, &args.reach, false, &tmp)?;
            rows.push(channel_standing(name, entry, channel, &now));
        }
    }
    let stale = rows
        .iter()
        .filter(|s| s.changed || !s.newer_tags.is_empty())
        .count();
    let mut out = render::stdout_for(args.output == Format::Json);
    if args.output == Format::Json {
        render::write_json(&mut out, &rows)?;
    } else {
        for s in &rows {
            let locked = match s.locked.as_deref() {
                Some(l) if s.channel == "git" => short(l),
                Some(l) => l,
                None => "(none)",
            };
            let line = match (s.channel, s.kind, s.changed) {
                ("oci", "digest", _) => format!(
                    "{}: pinned at {locked} ({}: a digest never moves)",
                    s.name, s.source
                ),
                ("oci", _, true) => format!(
                    "{}: {locked} → {} (tag {}; `skilldeck update {}`)",
                    s.name,
                    s.current,
                    oci_tag(&s.source),
                    s.name
                ),
                ("oci", _, false) => format!(
                    "{}: up to date at {locked} (tag {})",
                    s.name,
                    oci_tag(&s.source)
                ),
                ("well-known" | "marketplace", _, true) => format!(
                    "{}: fingerprint {locked} → {} ({}; `skilldeck update {}`)",
                    s.name,
                    s.current,
                    follows(s.channel),
                    s.name
                ),
                ("well-known" | "marketplace", _, false) => format!(
                    "{}: up to date at {locked} ({})",
                    s.name,
                    follows(s.channel)
                ),
                (_, "tag", true) => format!(
                    "{}: the tag MOVED: locked {locked}, now {} (refused by install; see `skilldeck verify`)",
                    s.name,
                    short(&s.current)
                ),
                (_, _, true) => format!(
                    "{}: {locked} → {} ({}; `skilldeck update {}`)",
                    s.name,
                    short(&s.current),
                    s.kind,
                    s.name
                ),
                (_, _, false) if !s.newer_tags.is_empty() => format!(
                    "{}: pinned at {locked}; newer tags: {} (install {} at one to move)",
                    s.name,
                    s.newer_tags.join(", "),
                    s.source
                ),
                _ => format!("{}: up to date at {locked} ({})", s.name, s.kind),
            };
            writeln!(out, "{}", render::safe(&line))?;
        }
        writeln!(
            out,
            "{} skill{} checked, {stale} outdated",
            rows.len(),
            if rows.len() == 1 { "" } else { "s" }
        )?;
    }
    out.flush()?;
    Ok(if stale == 0 { exit::OK } else { exit::INVALID })
}

/// `skilldeck update [NAME...]`.
#[derive(Debug, clap::Args)]
pub struct UpdateArgs {
    /// The skills to update (default: every skill of the lock that
    /// follows its source: git, OCI by tag, well-known, marketplace).
    names: Vec<String>,
    #[command(flatten)]
    root: RootArgs,
    #[command(flatten)]
    reach: ReachArgs,
    /// Replace skills with local edits.
    #[arg(long)]
    force: bool,
    /// Show what would change; change nothing.
    #[arg(long)]
    dry_run: bool,
    /// Output format.
    #[arg(long = "output", value_parser = Format::parser(format::TABLE), default_value = "text")]
    output: Format,
    #[command(flatten)]
    environments: crate::env::EnvArgs,
}

/// One skill's update.
#[derive(Debug, serde::Serialize)]
struct Change {
    name: String,
    /// `git`, `oci`, `well-known` or `marketplace`.
    channel: &'static str,
    source: String,
    /// The source the lock records after the update (an OCI tag's new
    /// digest; the same source for the other channels).
    new_source: String,
    old_commit: Option<String>,
    new_commit: Option<String>,
    /// OCI: the manifest digests.
    old_digest: Option<String>,
    new_digest: Option<String>,
    old_fingerprint: String,
    new_fingerprint: Option<String>,
    old_version: Option<String>,
    new_version: Option<String>,
    /// `updated`, `unchanged`, `pinned` or `would-update`.
    outcome: &'static str,
    newer_tags: Vec<String>,
}

fn outcome(pinned: bool, changed: bool, dry_run: bool) -> &'static str {
    if pinned {
        "pinned"
    } else if !changed {
        "unchanged"
    } else if dry_run {
        "would-update"
    } else {
        "updated"
    }
}

/// Updates the skills that follow their source to what it names now, in
/// one install (all or nothing; nothing is written when anything cannot
/// be fetched or checked): git skills that follow a branch (or the
/// default branch), OCI skills installed by tag, well-known skills and
/// marketplace entries. Pinned ones (a full commit, a git tag, an OCI
/// digest) stay, with newer git tags shown. A git tag that moved is
/// refused.
pub fn update(args: &UpdateArgs) -> Result<u8, CliError> {
    let root = skills_root(args.root.dir.as_deref())?;
    let (lockfile, lock) = load_lock(&root, args.root.lock.as_deref())?;
    let lock = lock.ok_or_else(|| {
        CliError::Usage(format!(
            "{}: no lockfile: install a skill first",
            lockfile.display()
        ))
    })?;
    for n in &args.names {
        match lock.skill.get(n) {
            None => {
                return Err(CliError::Usage(format!(
                    "skill '{n}' is not in {}",
                    lockfile.display()
                )));
            }
            Some(e) if !git::is_git_source(&e.source) && Channel::of(&e.source).is_none() => {
                return Err(CliError::Usage(format!(
                    "skill '{n}' was installed from {}, which does not move (a package file, \
                     a folder or a registry version): install a newer package, folder or \
                     version to update it",
                    e.source
                )));
            }
            Some(_) => {}
        }
    }
    let tmp = std::env::temp_dir();
    let mut cache = BTreeMap::new();
    let mut changes = Vec::new();
    let mut checkouts = Vec::new();
    let mut held = Vec::new();
    let mut sources = Vec::new();
    for (name, entry) in &lock.skill {
        if !args.names.is_empty() && !args.names.contains(name) {
            continue;
        }
        if git::is_git_source(&entry.source) {
            let (spec, resolved, s) = standing(name, entry, &mut cache)?;
            check_tag_not_moved(&spec, &resolved, entry.commit.as_deref()).map_err(source_error)?;
            let outcome = outcome(resolved.kind.is_pinned(), s.changed, args.dry_run);
            if outcome == "updated" {
                let (co, source) = checkout(&spec, &resolved.commit, None, &tmp)?;
                checkouts.push(co);
                sources.push(source);
            }
            changes.push(Change {
                name: name.clone(),
                channel: "git",
                source: entry.source.clone(),
                new_source: entry.source.clone(),
                old_commit: entry.commit.clone(),
                new_commit: Some(resolved.commit.clone()),
                old_digest: None,
                new_digest: None,
                old_fingerprint: entry.fingerprint.to_string(),
                new_fingerprint: None,
                old_version: entry.version.clone(),
                new_version: None,
                outcome,
                newer_tags: s.newer_tags,
            });
        } else if let Some(channel) = Channel::of(&entry.source) {
            let mut now = channels::now(
                channel,
                name,
                entry,
                &lockfile,
                &args.reach,
                !args.dry_run,
                &tmp,
            )?;
            let outcome = outcome(now.pinned, now.changed, args.dry_run);
            if outcome == "updated" {
                let fetched = now.fetched.take().ok_or_else(|| {
                    CliError::Usage(format!(
                        "{}: nothing was fetched to update it",
                        entry.source
                    ))
                })?;
                sources.push(fetched.source());
                held.push(fetched);
            }
            let oci = channel == Channel::Oci;
            changes.push(Change {
                name: name.clone(),
                channel: channel.as_str(),
                source: entry.source.clone(),
                new_source: now.source.clone(),
                old_commit: entry.commit.clone(),
                new_commit: now.commit.clone(),
                old_digest: oci.then(|| now.locked.clone()),
                new_digest: oci.then(|| now.current.clone()),
                old_fingerprint: entry.fingerprint.to_string(),
                new_fingerprint: now.fingerprint.map(|f| f.to_string()),
                old_version: entry.version.clone(),
                new_version: None,
                outcome,
                newer_tags: Vec::new(),
            });
        }
    }
    if !sources.is_empty() {
        let options = InstallOptions {
            force: args.force,
            lockfile: args.root.lock.clone(),
            environments: args.environments.options()?,
            ..InstallOptions::default()
        };
        let installed = match skilldeck_package::install(&root, &sources, &options) {
            Ok(i) => i,
            Err(e) => return refused(e),
        };
        for i in installed {
            // The skill's name may have changed upstream: match by source.
            if let Some(c) = changes
                .iter_mut()
                .find(|c| c.outcome == "updated" && c.new_source == i.source)
            {
                c.new_fingerprint = Some(i.fingerprint.to_string());
                c.new_version = i.version.clone();
                if c.channel == "git" {
                    c.new_commit = i.commit.clone().or(c.new_commit.take());
                }
            }
        }
        drop(checkouts);
        drop(held);
    }
    let mut out = render::stdout_for(args.output == Format::Json);
    if args.output == Format::Json {
        render::write_json(&mut out, &changes)?;
    } else {
        for c in &changes {
            writeln!(out, "{}", render::safe(&change_line(c)))?;
        }
    }
    out.flush()?;
    Ok(exit::OK)
}

/// The text line `update` prints for one skill.
fn change_line(c: &Change) -> String {
    let old_commit = c.old_commit.as_deref().map(short).unwrap_or("(none)");
    let new_fingerprint = c.new_fingerprint.as_deref().unwrap_or("(not fetched)");
    let version = match (&c.old_version, &c.new_version) {
        (Some(a), Some(b)) if a != b => format!(", version {a} → {b}"),
        _ => String::new(),
    };
    let verb = if c.outcome == "updated" {
        "updated"
    } else {
        "would update"
    };
    match (c.channel, c.outcome) {
        ("git", "updated" | "would-update") => format!(
            "{verb} {}: commit {old_commit} → {}, fingerprint {} → {new_fingerprint}{version}",
            c.name,
            c.new_commit.as_deref().map(short).unwrap_or("(none)"),
            c.old_fingerprint,
        ),
        ("git", "pinned") if !c.newer_tags.is_empty() => format!(
            "pinned {} at {old_commit} ({}); newer tags: {}: install the source at one to move",
            c.name,
            c.source,
            c.newer_tags.join(", ")
        ),
        ("git", "pinned") => format!("pinned {} at {old_commit} ({})", c.name, c.source),
        ("git", _) => format!("unchanged {} at {old_commit}", c.name),
        ("oci", "updated" | "would-update") => format!(
            "{verb} {}: tag {} {} → {}, fingerprint {} → {new_fingerprint}{version}",
            c.name,
            oci_tag(&c.source),
            c.old_digest.as_deref().unwrap_or("(none)"),
            c.new_digest.as_deref().unwrap_or("(none)"),
            c.old_fingerprint,
        ),
        ("oci", "pinned") => format!(
            "pinned {} at {} ({}: a digest never moves; install the tag to follow it)",
            c.name,
            c.old_digest.as_deref().unwrap_or("(none)"),
            c.source
        ),
        ("oci", _) => format!(
            "unchanged {} at {} (tag {})",
            c.name,
            c.old_digest.as_deref().unwrap_or("(none)"),
            oci_tag(&c.source)
        ),
        (channel, "updated" | "would-update") => {
            let commit = match (&c.old_commit, &c.new_commit) {
                (a, Some(b)) if a.as_deref() != Some(b.as_str()) => format!(
                    ", commit {} → {}",
                    a.as_deref().map(short).unwrap_or("(none)"),
                    short(b)
                ),
                _ => String::new(),
            };
            format!(
                "{verb} {}: fingerprint {} → {new_fingerprint}{commit}{version} ({})",
                c.name,
                c.old_fingerprint,
                follows(channel)
            )
        }
        (channel, _) => format!(
            "unchanged {} at {} ({})",
            c.name,
            c.old_fingerprint,
            follows(channel)
        ),
    }
}

/// `skilldeck remove NAME...`.
#[derive(Debug, clap::Args)]
pub struct RemoveArgs {
    /// The skills to remove.
    #[arg(required = true)]
    names: Vec<String>,
    #[command(flatten)]
    root: RootArgs,
    /// Remove a skill with local edits, or one skilldeck did not install.
    #[arg(long)]
    force: bool,
}

/// Removes each skill's folder and its lock entry together
/// ([`skilldeck_package::remove`]).
pub fn remove(args: &RemoveArgs) -> Result<u8, CliError> {
    let root = skills_root(args.root.dir.as_deref())?;
    let options = InstallOptions {
        force: args.force,
        lockfile: args.root.lock.clone(),
        ..InstallOptions::default()
    };
    let mut out = std::io::stdout().lock();
    for name in &args.names {
        match skilldeck_package::remove(&root, name, &options) {
            Ok(r) => {
                let what = match (&r.path, &r.entry) {
                    (Some(_), Some(e)) => {
                        format!("removed {} {} ({})", r.name, e.fingerprint, e.source)
                    }
                    (Some(p), None) => format!(
                        "removed {} (folder {}, not in the lock)",
                        r.name,
                        p.display()
                    ),
                    (None, _) => format!(
                        "removed {} (lock entry only: its folder was already gone)",
                        r.name
                    ),
                };
                writeln!(out, "{}", render::safe(&what))?;
            }
            Err(e) => return refused(e),
        }
    }
    out.flush()?;
    Ok(exit::OK)
}

/// For `verify`: every git entry whose tag names another commit now than
/// the lock's (a moved tag), as `(name, message)`; an unreachable
/// repository is a problem too (verify cannot say the tag held).
pub fn moved_tags(lock: &Lockfile) -> Vec<(String, String)> {
    let mut cache = BTreeMap::new();
    let mut problems = Vec::new();
    for (name, entry) in &lock.skill {
        if !git::is_git_source(&entry.source) {
            continue;
        }
        let Ok(spec) = GitSpec::parse(&entry.source) else {
            problems.push((
                name.clone(),
                format!("{}: not a valid git source", entry.source),
            ));
            continue;
        };
        if !matches!(&spec.reference, Some(r) if !git::is_full_commit(r)) {
            continue;
        }
        match standing(name, entry, &mut cache) {
            Ok((spec, resolved, _)) => {
                if let Err(e) = check_tag_not_moved(&spec, &resolved, entry.commit.as_deref()) {
                    problems.push((name.clone(), e.to_string()));
                }
            }
            Err(e) => problems.push((
                name.clone(),
                format!("cannot check the tag (pass --offline to skip): {e}"),
            )),
        }
    }
    problems
}
