//! Git sources: `git+https://HOST/REPO[#REF][:PATH]`, `git+ssh://...`,
//! `git+file://...` and the shorthand `github:OWNER/REPO[/PATH][@REF]`.
//!
//! The repository is hostile. It is read with the git CLI, never checked
//! out: the ref is resolved with `git ls-remote`, exactly that commit is
//! fetched shallow (`--depth 1`, no tags, no submodules) into a bare
//! repository of our own, and the skill's tree is listed (`ls-tree`),
//! held to the package limits before a byte of content is read, and
//! written with `cat-file`. No hook, filter, smudge (LFS) or attribute of
//! the fetched repository runs; only the transport the URL names is
//! allowed. The folder written is installed like any skill folder
//! ([`skilldeck_package::Source::Checkout`]), so the package rules
//! (symlinks leaving the skill, special files, names, limits) and the
//! fingerprint are the same as for a folder, a tar.gz or a zip.

use std::fmt;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use skilldeck_package::{PackageLimits, check_entry_path};

use crate::error::Error;

/// Most bytes of `git ls-remote` output read (a repository with a huge
/// number of refs is refused, not buffered).
pub const MAX_REMOTE_REFS_BYTES: u64 = 8 * 1024 * 1024;

/// Most bytes of the `git ls-tree` listing read for one skill.
pub const MAX_TREE_LISTING_BYTES: u64 = 4 * 1024 * 1024;

/// The host the `github:` shorthand points at.
pub const GITHUB_URL: &str = "https://github.com/";

/// The transports a git source may name (`git+SCHEME://`). Plain
/// `git+http` and git's `ext::` are refused: no integrity, or a command.
pub const GIT_SCHEMES: [&str; 3] = ["https", "ssh", "file"];

/// What a git source asks for: a repository, a ref (or the default
/// branch), a folder inside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitSpec {
    /// The repository URL git is given (`https://...`, `ssh://...`,
    /// `file:///...`).
    pub url: String,
    /// A tag, a branch or a full commit id; `None`: the default branch.
    pub reference: Option<String>,
    /// The skill's folder inside the repository (`/`-separated); empty:
    /// the repository's root.
    pub path: String,
}

/// True when `text` names a git source (`git+...` or `github:...`).
pub fn is_git_source(text: &str) -> bool {
    text.starts_with("git+") || text.starts_with("github:")
}

impl GitSpec {
    /// Parses `git+URL[#REF][:PATH]` or `github:OWNER/REPO[/PATH][@REF]`.
    pub fn parse(text: &str) -> Result<GitSpec, Error> {
        let bad = |why: String| Error::Git {
            spec: text.to_owned(),
            message: why,
        };
        let spec = if let Some(rest) = text.strip_prefix("github:") {
            let (body, reference) = match rest.rsplit_once('@') {
                Some((b, r)) => (b, Some(r.to_owned())),
                None => (rest, None),
            };
            let mut parts = body.splitn(3, '/');
            let owner = parts.next().unwrap_or_default();
            let repo = parts.next().unwrap_or_default();
            let path = parts.next().unwrap_or_default();
            for part in [owner, repo] {
                if part.is_empty()
                    || part.starts_with(['-', '.'])
                    || !part
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
                {
                    return Err(bad(format!(
                        "'{part}' is not a GitHub owner or repository name; write \
                         github:OWNER/REPO[/PATH][@REF]"
                    )));
                }
            }
            let repo = repo.strip_suffix(".git").unwrap_or(repo);
            GitSpec {
                url: format!("{GITHUB_URL}{owner}/{repo}.git"),
                reference,
                path: path.trim_end_matches('/').to_owned(),
            }
        } else if let Some(rest) = text.strip_prefix("git+") {
            let (scheme, after) = rest
                .split_once("://")
                .ok_or_else(|| bad("a git source is git+SCHEME://HOST/REPO[#REF][:PATH]".into()))?;
            if !GIT_SCHEMES.contains(&scheme) {
                return Err(bad(format!(
                    "the transport '{scheme}' is not allowed (only {}): plain http has no \
                     integrity; use https",
                    GIT_SCHEMES.join(", ")
                )));
            }
            let (location, fragment) = match after.split_once('#') {
                Some((l, f)) => (l, Some(f)),
                None => (after, None),
            };
            let (location, mut path) = match fragment {
                Some(_) => (location, String::new()),
                None => split_path(location),
            };
            let reference = match fragment {
                Some(f) => {
                    let (r, p) = match f.split_once(':') {
                        Some((r, p)) => (r, p),
                        None => (f, ""),
                    };
                    path = p.to_owned();
                    (!r.is_empty()).then(|| r.to_owned())
                }
                None => None,
            };
            let slash = location.find('/').unwrap_or(location.len());
            if scheme != "file" && slash == 0 {
                return Err(bad("the URL names no host".into()));
            }
            if location.starts_with('-') {
                return Err(bad("a host cannot start with '-'".into()));
            }
            GitSpec {
                url: format!("{scheme}://{location}"),
                reference,
                path: path.trim_end_matches('/').to_owned(),
            }
        } else {
            return Err(bad(
                "a git source starts with git+ (git+https://HOST/REPO) or github:".into(),
            ));
        };
        if let Some(r) = &spec.reference {
            check_ref(r).map_err(|why| bad(format!("the ref '{r}' {why}")))?;
        }
        if !spec.path.is_empty() {
            check_entry_path(spec.path.as_bytes())
                .map_err(|why| bad(format!("the path '{}': {why}", spec.path)))?;
        }
        if spec.url.chars().any(|c| c.is_control() || c == ' ') {
            return Err(bad("the URL holds a space or a control character".into()));
        }
        Ok(spec)
    }

    /// The same spec at another ref.
    pub fn at(&self, reference: Option<String>) -> GitSpec {
        GitSpec {
            reference,
            ..self.clone()
        }
    }

    fn scheme(&self) -> &str {
        self.url.split_once("://").map(|(s, _)| s).unwrap_or("")
    }
}

/// `HOST/REPO:PATH` → (`HOST/REPO`, `PATH`): a `:` after the first `/`
/// (a port comes before it).
fn split_path(location: &str) -> (&str, String) {
    let Some(slash) = location.find('/') else {
        return (location, String::new());
    };
    match location[slash..].find(':') {
        Some(i) => (&location[..slash + i], location[slash + i + 1..].to_owned()),
        None => (location, String::new()),
    }
}

/// `git check-ref-format`'s rules that matter here, plus: no leading `-`
/// (never an option to git).
fn check_ref(r: &str) -> Result<(), &'static str> {
    if r.starts_with('-') {
        return Err("starts with '-'");
    }
    if r.contains("..") || r.contains("@{") || r.ends_with(".lock") || r.ends_with('/') {
        return Err("is not a valid git ref name");
    }
    if r.chars()
        .any(|c| c.is_control() || matches!(c, ' ' | '~' | '^' | ':' | '?' | '*' | '[' | '\\'))
    {
        return Err("holds a character git refs cannot have");
    }
    Ok(())
}

/// The canonical text of a spec, as the lock records it:
/// `git+URL[#REF][:PATH]` (`github:` expanded).
impl fmt::Display for GitSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "git+{}", self.url)?;
        if let Some(r) = &self.reference {
            write!(f, "#{r}")?;
        }
        if !self.path.is_empty() {
            write!(f, ":{}", self.path)?;
        }
        Ok(())
    }
}

/// What a ref resolved to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefKind {
    /// A full commit id: pinned.
    Commit,
    /// A tag: pinned (a tag that moves is refused).
    Tag(String),
    /// A branch: follows the branch.
    Branch(String),
    /// No ref given: follows the default branch.
    DefaultBranch,
}

impl RefKind {
    /// Pinned: `update` keeps it (a full commit or a tag).
    pub fn is_pinned(&self) -> bool {
        matches!(self, RefKind::Commit | RefKind::Tag(_))
    }
}

/// A ref resolved against the remote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// What kind of ref it is.
    pub kind: RefKind,
    /// The commit it names now.
    pub commit: String,
}

/// The remote's refs (`git ls-remote`): names and the commit each names
/// (tags peeled).
#[derive(Debug, Clone, Default)]
pub struct RemoteRefs {
    /// `(name, commit)`, e.g. `("refs/tags/v1.0.0", "abc...")`.
    pub refs: Vec<(String, String)>,
}

impl RemoteRefs {
    /// Lists the refs of `spec`'s repository.
    pub fn list(spec: &GitSpec) -> Result<RemoteRefs, Error> {
        let out = run_git(
            spec,
            None,
            &["ls-remote", "--", &spec.url],
            MAX_REMOTE_REFS_BYTES,
        )?;
        let text = String::from_utf8_lossy(&out);
        let mut refs: Vec<(String, String)> = Vec::new();
        for line in text.lines() {
            let Some((oid, name)) = line.split_once('\t') else {
                continue;
            };
            if !is_full_commit(oid) {
                continue;
            }
            if let Some(base) = name.strip_suffix("^{}") {
                // A peeled annotated tag: the commit it points at wins.
                refs.retain(|(n, _)| n != base);
                refs.push((base.to_owned(), oid.to_owned()));
            } else if !refs.iter().any(|(n, _)| n == name) {
                refs.push((name.to_owned(), oid.to_owned()));
            }
        }
        Ok(RemoteRefs { refs })
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.refs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, c)| c.as_str())
    }

    /// Resolves `spec`'s ref: a full commit id as is, else a tag, else a
    /// branch, else the default branch (`HEAD`).
    pub fn resolve(&self, spec: &GitSpec) -> Result<Resolved, Error> {
        let err = |message: String| Error::Git {
            spec: spec.to_string(),
            message,
        };
        match &spec.reference {
            Some(r) if is_full_commit(r) => Ok(Resolved {
                kind: RefKind::Commit,
                commit: r.to_ascii_lowercase(),
            }),
            Some(r) => {
                if let Some(c) = self.get(&format!("refs/tags/{r}")) {
                    Ok(Resolved {
                        kind: RefKind::Tag(r.clone()),
                        commit: c.to_owned(),
                    })
                } else if let Some(c) = self.get(&format!("refs/heads/{r}")) {
                    Ok(Resolved {
                        kind: RefKind::Branch(r.clone()),
                        commit: c.to_owned(),
                    })
                } else {
                    Err(err(format!(
                        "the repository has no tag or branch '{r}' (a commit is named by its \
                         full 40-character id); `git ls-remote {}` lists them",
                        spec.url
                    )))
                }
            }
            None => self
                .get("HEAD")
                .map(|c| Resolved {
                    kind: RefKind::DefaultBranch,
                    commit: c.to_owned(),
                })
                .ok_or_else(|| err("the repository has no default branch (HEAD)".into())),
        }
    }

    /// The tags whose version is newer than `tag`'s (`v1.2.0` < `v1.10.0`),
    /// oldest first; empty when `tag` is not a version.
    pub fn newer_tags(&self, tag: &str) -> Vec<String> {
        let Some(current) = tag_version(tag) else {
            return Vec::new();
        };
        let mut newer: Vec<(Vec<u64>, String)> = self
            .refs
            .iter()
            .filter_map(|(n, _)| n.strip_prefix("refs/tags/"))
            .filter_map(|t| tag_version(t).map(|v| (v, t.to_owned())))
            .filter(|(v, _)| *v > current)
            .collect();
        newer.sort();
        newer.into_iter().map(|(_, t)| t).collect()
    }
}

/// `v1.2.3` / `1.2.3` → `[1, 2, 3]`; `None` for anything else (a
/// pre-release is not a newer version to offer).
fn tag_version(tag: &str) -> Option<Vec<u64>> {
    let t = tag.strip_prefix('v').unwrap_or(tag);
    t.split('.').map(|p| p.parse::<u64>().ok()).collect()
}

/// A full commit id (40 hex digits, or 64 for SHA-256 repositories).
pub fn is_full_commit(text: &str) -> bool {
    (text.len() == 40 || text.len() == 64) && text.chars().all(|c| c.is_ascii_hexdigit())
}

/// The refusal of a tag that moved: the lock recorded `locked` for
/// `spec`'s tag, the remote now says `now`. The one rule, used by
/// `install`, `update` and `verify`.
pub fn check_tag_not_moved(
    spec: &GitSpec,
    resolved: &Resolved,
    locked: Option<&str>,
) -> Result<(), Error> {
    let (RefKind::Tag(tag), Some(locked)) = (&resolved.kind, locked) else {
        return Ok(());
    };
    if locked.eq_ignore_ascii_case(&resolved.commit) {
        return Ok(());
    }
    Err(Error::Git {
        spec: spec.to_string(),
        message: format!(
            "the tag '{tag}' moved: the lock recorded commit {locked}, the repository now says \
             {} (its history was rewritten, or someone re-tagged). Nothing was installed. Ask \
             the publisher why; to keep what you have, pin the commit ({}); to accept the new \
             commit, remove the skill (`skilldeck remove NAME`) and install it again",
            resolved.commit,
            spec.at(Some(locked.to_owned()))
        ),
    })
}

/// A commit's skill folder, written out of the repository, removed when
/// dropped.
#[derive(Debug)]
pub struct GitCheckout {
    /// The spec's canonical text (what the lock records as the source).
    pub source: String,
    /// The commit the folder holds.
    pub commit: String,
    dir: tempfile::TempDir,
}

impl GitCheckout {
    /// The skill folder.
    pub fn folder(&self) -> PathBuf {
        self.dir.path().join("skill")
    }
}

/// Fetches `commit` of `spec`'s repository (shallow) into a fresh bare
/// repository under `dir` and writes the tree at `spec.path` to a folder,
/// held to `limits` before any content is read.
pub fn checkout(
    spec: &GitSpec,
    commit: &str,
    limits: &PackageLimits,
    dir: &Path,
) -> Result<GitCheckout, Error> {
    checkout_tree(spec, commit, limits, dir, true)
}

/// [`checkout`] of a folder that need not be one skill (a plugin: its
/// manifest and its skill folders), under the same rules and `limits`.
pub fn checkout_folder(
    spec: &GitSpec,
    commit: &str,
    limits: &PackageLimits,
    dir: &Path,
) -> Result<GitCheckout, Error> {
    checkout_tree(spec, commit, limits, dir, false)
}

fn checkout_tree(
    spec: &GitSpec,
    commit: &str,
    limits: &PackageLimits,
    dir: &Path,
    one_skill: bool,
) -> Result<GitCheckout, Error> {
    let err = |message: String| Error::Git {
        spec: spec.to_string(),
        message,
    };
    if !is_full_commit(commit) {
        return Err(err(format!("'{commit}' is not a full commit id")));
    }
    std::fs::create_dir_all(dir).map_err(|e| Error::Io {
        path: dir.to_path_buf(),
        source: e,
    })?;
    let tmp = tempfile::Builder::new()
        .prefix(".skilldeck-git-")
        .tempdir_in(dir)
        .map_err(|e| Error::Io {
            path: dir.to_path_buf(),
            source: e,
        })?;
    let repo = tmp.path().join("repo.git");
    let repo_arg = repo.to_string_lossy().into_owned();
    run_git(spec, None, &["init", "-q", "--bare", "--", &repo_arg], 4096)?;
    run_git(
        spec,
        Some(&repo),
        &[
            "fetch",
            "-q",
            "--depth",
            "1",
            "--no-tags",
            "--no-recurse-submodules",
            "--",
            &spec.url,
            commit,
        ],
        MAX_REMOTE_REFS_BYTES,
    )?;
    let tree = if spec.path.is_empty() {
        format!("{commit}^{{tree}}")
    } else {
        format!("{commit}:{}", spec.path)
    };
    let kind = run_git(spec, Some(&repo), &["cat-file", "-t", &tree], 4096).map_err(|_| {
        err(format!(
            "commit {commit} has no folder '{}' (the path after ':' names the skill's folder \
             inside the repository)",
            spec.path
        ))
    })?;
    if String::from_utf8_lossy(&kind).trim() != "tree" {
        return Err(err(format!(
            "'{}' at commit {commit} is a file, not a skill folder",
            spec.path
        )));
    }
    let listing = run_git(
        spec,
        Some(&repo),
        &["ls-tree", "-r", "-z", "--long", "--full-tree", &tree],
        MAX_TREE_LISTING_BYTES,
    )?;
    let entries = parse_tree(&listing, limits).map_err(err)?;
    if one_skill && let Some(help) = which_skill(spec, &entries) {
        return Err(err(help));
    }
    let folder = tmp.path().join("skill");
    std::fs::create_dir(&folder).map_err(|e| Error::Io {
        path: folder.clone(),
        source: e,
    })?;
    write_entries(spec, &repo, &folder, &entries)?;
    Ok(GitCheckout {
        source: spec.to_string(),
        commit: commit.to_ascii_lowercase(),
        dir: tmp,
    })
}

/// Most skill folders named when a source points at a folder of several.
const MAX_SKILLS_NAMED: usize = 20;

/// When the folder is not one skill (no `SKILL.md` at its top, and not
/// exactly one skill folder below it), what to write instead: the skill
/// folders found, each as a source.
fn which_skill(spec: &GitSpec, entries: &[TreeEntry]) -> Option<String> {
    if entries.iter().any(|e| e.path == "SKILL.md") {
        return None;
    }
    let mut skills: Vec<&str> = entries
        .iter()
        .filter_map(|e| e.path.strip_suffix("/SKILL.md"))
        .collect();
    skills.sort_unstable();
    if skills.len() == 1 && !skills[0].contains('/') {
        return None;
    }
    let at = |folder: &str| {
        let path = if spec.path.is_empty() {
            folder.to_owned()
        } else {
            format!("{}/{folder}", spec.path)
        };
        GitSpec {
            path,
            ..spec.clone()
        }
        .to_string()
    };
    if skills.is_empty() {
        return Some(format!(
            "the folder '{}' holds no SKILL.md (no skill): name the skill's folder after ':'",
            if spec.path.is_empty() {
                "/"
            } else {
                &spec.path
            }
        ));
    }
    let more = skills.len().saturating_sub(MAX_SKILLS_NAMED);
    let mut list: Vec<String> = skills
        .iter()
        .take(MAX_SKILLS_NAMED)
        .map(|f| format!("  {}", at(f)))
        .collect();
    if more > 0 {
        list.push(format!("  ... and {more} more"));
    }
    Some(format!(
        "this folder holds {} skills, not one; install one of them:\n{}",
        skills.len(),
        list.join("\n")
    ))
}

/// One blob of the listed tree.
#[derive(Debug)]
struct TreeEntry {
    mode: u32,
    oid: String,
    path: String,
}

/// Reads `ls-tree -r -z --long` output: every entry a blob (a submodule is
/// refused: its content is another repository), a safe path, within the
/// file and byte limits (sizes as the listing states them; the writes
/// check them again).
fn parse_tree(listing: &[u8], limits: &PackageLimits) -> Result<Vec<TreeEntry>, String> {
    let mut out = Vec::new();
    let mut total = 0u64;
    for record in listing.split(|b| *b == 0).filter(|r| !r.is_empty()) {
        let tab = record
            .iter()
            .position(|b| *b == b'\t')
            .ok_or("git printed a tree listing this skilldeck cannot read")?;
        let meta = String::from_utf8_lossy(&record[..tab]);
        let path = check_entry_path(&record[tab + 1..]).map_err(|why| {
            format!(
                "the entry \"{}\": {why}",
                String::from_utf8_lossy(&record[tab + 1..]).escape_debug()
            )
        })?;
        let fields: Vec<&str> = meta.split_whitespace().collect();
        let [mode, kind, oid, size] = fields[..] else {
            return Err("git printed a tree listing this skilldeck cannot read".into());
        };
        if kind != "blob" {
            return Err(format!(
                "the entry '{path}' is a {kind} (a submodule): a skill holds its own files only"
            ));
        }
        let mode = u32::from_str_radix(mode, 8).map_err(|_| format!("'{path}': bad mode"))?;
        let size: u64 = size.parse().map_err(|_| format!("'{path}': bad size"))?;
        if out.len() >= limits.max_files {
            return Err(format!(
                "more than {} files in the skill (at '{path}')",
                limits.max_files
            ));
        }
        total = total.saturating_add(size);
        if total > limits.max_bytes {
            return Err(format!(
                "more than {} bytes in the skill (at '{path}')",
                limits.max_bytes
            ));
        }
        out.push(TreeEntry {
            mode,
            oid: oid.to_owned(),
            path,
        });
    }
    Ok(out)
}

/// Mode of a symlink in a git tree.
const MODE_SYMLINK: u32 = 0o120000;

/// Writes every entry's blob below `folder` (one `cat-file --batch`):
/// files with their executable bit, symlinks as symlinks (the package
/// rules then decide whether they stay inside the skill).
fn write_entries(
    spec: &GitSpec,
    repo: &Path,
    folder: &Path,
    entries: &[TreeEntry],
) -> Result<(), Error> {
    let err = |message: String| Error::Git {
        spec: spec.to_string(),
        message,
    };
    let io = |path: &Path, e: std::io::Error| Error::Io {
        path: path.to_path_buf(),
        source: e,
    };
    let mut child = git_command(spec, Some(repo))
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| err(format!("cannot run git: {e}")))?;
    let mut stdin = child
        .stdin
        .take()
        .ok_or_else(|| err("git's input is not a pipe".into()))?;
    let oids: Vec<String> = entries.iter().map(|e| e.oid.clone()).collect();
    let writer = std::thread::spawn(move || {
        for oid in oids {
            if writeln!(stdin, "{oid}").is_err() {
                break;
            }
        }
    });
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| err("git's output is not a pipe".into()))?;
    let mut reader = BufReader::new(stdout);
    let result = (|| {
        for entry in entries {
            let mut header = String::new();
            reader
                .read_line(&mut header)
                .map_err(|e| err(format!("reading from git: {e}")))?;
            let size: u64 = match header.split_whitespace().collect::<Vec<_>>()[..] {
                [oid, "blob", size] if oid == entry.oid => size
                    .parse()
                    .map_err(|_| err("git printed a bad object header".into()))?,
                _ => return Err(err(format!("cannot read '{}' from git", entry.path))),
            };
            let mut bytes = Vec::new();
            (&mut reader)
                .take(size)
                .read_to_end(&mut bytes)
                .map_err(|e| err(format!("reading from git: {e}")))?;
            let mut newline = [0u8; 1];
            reader
                .read_exact(&mut newline)
                .map_err(|e| err(format!("reading from git: {e}")))?;
            let to = folder.join(&entry.path);
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
            }
            if entry.mode == MODE_SYMLINK {
                write_symlink(&bytes, &to).map_err(|e| io(&to, e))?;
            } else {
                write_file(&to, &bytes, entry.mode & 0o111 != 0).map_err(|e| io(&to, e))?;
            }
        }
        Ok(())
    })();
    drop(reader);
    let _ = writer.join();
    let _ = child.kill();
    let _ = child.wait();
    result
}

#[cfg(unix)]
fn write_symlink(target: &[u8], to: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    std::os::unix::fs::symlink(std::ffi::OsStr::from_bytes(target), to)
}

#[cfg(not(unix))]
fn write_symlink(_target: &[u8], to: &Path) -> std::io::Result<()> {
    Err(std::io::Error::other(format!(
        "{}: symlinks from git are not supported on this system",
        to.display()
    )))
}

fn write_file(path: &Path, bytes: &[u8], executable: bool) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(if executable { 0o755 } else { 0o644 });
    }
    #[cfg(not(unix))]
    let _ = executable;
    options.open(path)?.write_all(bytes)
}

/// A `git` command that runs nothing from a repository: no hooks, no
/// filters or LFS smudge, no fsmonitor, no submodules, only `spec`'s
/// transport, no prompt for a password, and no repository found through
/// the environment or the current folder.
fn git_command(spec: &GitSpec, repo: Option<&Path>) -> Command {
    let mut c = Command::new("git");
    let allow = format!("protocol.{}.allow=always", spec.scheme());
    for setting in [
        "core.hooksPath=/dev/null",
        "core.fsmonitor=false",
        "filter.lfs.smudge=",
        "filter.lfs.process=",
        "filter.lfs.required=false",
        "submodule.recurse=false",
        "fetch.recurseSubmodules=false",
        "protocol.allow=never",
        allow.as_str(),
        "credential.interactive=never",
    ] {
        c.args(["-c", setting]);
    }
    if let Some(repo) = repo {
        c.arg("--git-dir").arg(repo);
    }
    for var in [
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_CONFIG_PARAMETERS",
        "GIT_EXTERNAL_DIFF",
    ] {
        c.env_remove(var);
    }
    c.env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_PROTOCOL_FROM_USER", "0")
        .env("GIT_CEILING_DIRECTORIES", "/")
        .stdin(Stdio::null());
    c
}

/// Runs git with `args`; its output (at most `max` bytes), or an error
/// with what git said.
fn run_git(spec: &GitSpec, repo: Option<&Path>, args: &[&str], max: u64) -> Result<Vec<u8>, Error> {
    let err = |message: String| Error::Git {
        spec: spec.to_string(),
        message,
    };
    let mut child = git_command(spec, repo)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            err(format!(
                "cannot run git ({e}): git sources need the git command on PATH"
            ))
        })?;
    let stderr = child.stderr.take();
    let errors = std::thread::spawn(move || {
        let mut text = Vec::new();
        if let Some(s) = stderr {
            let _ = s.take(64 * 1024).read_to_end(&mut text);
        }
        text
    });
    let mut out = Vec::new();
    if let Some(stdout) = child.stdout.take() {
        let _ = stdout.take(max + 1).read_to_end(&mut out);
    }
    let too_long = out.len() as u64 > max;
    if too_long {
        let _ = child.kill();
    }
    let status = child
        .wait()
        .map_err(|e| err(format!("waiting for git: {e}")))?;
    let errors = errors.join().unwrap_or_default();
    if too_long {
        return Err(err(format!(
            "git {} printed more than {max} bytes",
            args.first().unwrap_or(&"")
        )));
    }
    if !status.success() {
        let said = String::from_utf8_lossy(&errors);
        return Err(err(format!(
            "git {} failed: {}",
            args.first().unwrap_or(&""),
            said.trim()
        )));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_git_source_parses_its_url_ref_and_path() {
        let s = GitSpec::parse("git+https://example.com/org/repo.git#v1.0.0:skills/pdf").unwrap();
        assert_eq!(s.url, "https://example.com/org/repo.git");
        assert_eq!(s.reference.as_deref(), Some("v1.0.0"));
        assert_eq!(s.path, "skills/pdf");
        assert_eq!(
            s.to_string(),
            "git+https://example.com/org/repo.git#v1.0.0:skills/pdf"
        );
        let s = GitSpec::parse("git+https://example.com:8443/org/repo:skills/pdf").unwrap();
        assert_eq!(s.url, "https://example.com:8443/org/repo");
        assert_eq!(s.path, "skills/pdf");
        assert_eq!(s.reference, None);
        let s = GitSpec::parse("github:acme/skills/pdf/tools@main").unwrap();
        assert_eq!(s.url, "https://github.com/acme/skills.git");
        assert_eq!(s.path, "pdf/tools");
        assert_eq!(s.reference.as_deref(), Some("main"));
        assert_eq!(
            GitSpec::parse(&s.to_string()).unwrap(),
            s,
            "the canonical text parses back"
        );
    }

    #[test]
    fn a_git_source_refuses_unsafe_transports_refs_and_paths() {
        for bad in [
            "git+http://example.com/r",
            "git+ext::sh -c touch% /tmp/x",
            "git+https://example.com/r#--upload-pack=touch",
            "git+https://example.com/r#v1:../../etc",
            "git+https://-oProxyCommand=x/r",
            "github:-x/repo",
            "github:acme/../x",
        ] {
            assert!(GitSpec::parse(bad).is_err(), "{bad} was accepted");
        }
    }

    #[test]
    fn newer_tags_compare_as_versions() {
        let refs = RemoteRefs {
            refs: ["v1.2.0", "v1.10.0", "v1.9.0", "v0.9.0", "latest"]
                .iter()
                .map(|t| (format!("refs/tags/{t}"), "0".repeat(40)))
                .collect(),
        };
        assert_eq!(refs.newer_tags("v1.2.0"), ["v1.9.0", "v1.10.0"]);
        assert!(refs.newer_tags("latest").is_empty());
    }
}
