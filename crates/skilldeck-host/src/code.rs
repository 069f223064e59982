//! `run_code`: code the model writes (python, bash, node where installed)
//! run in the same sandbox, under the same `[exec]` policy and caps as a
//! skill's scripts, offered only when the operator turns it on (`[exec]
//! code = true`, `serve --exec --code`, Python's `create_tools(...,
//! code=True)`).
//!
//! The rules, all here:
//!
//! - **Languages**: only those whose interpreter is on the sandbox `PATH`
//!   ([`skilldeck_exec::SANDBOX_PATH`]) are offered ([`Language::available`]);
//!   the code is passed as the interpreter's `-c`/`-e` argument (at most
//!   [`MAX_CODE_BYTES`], under the kernel's limit on one argument).
//! - **Skill**: with `skill`, that skill's folder is mounted read-only
//!   (`$SKILLDECK_SKILL_DIR`) and its `[exec.skills.<name>]` grants apply,
//!   after the same model-access rule as `run_skill_script`
//!   ([`crate::rules::model_access`]); without, an empty folder stands in
//!   and only the `[exec]` defaults apply.
//! - **Work folder**: each conversation has a folder that persists between
//!   its calls ([`WorkFolders`]): the code's working directory, granted
//!   writable on top of the policy. It is a host folder, not the run's
//!   tmpfs (which lives and dies in the run's mount namespace), so its
//!   quota (`[exec] code-quota-bytes`, and [`MAX_WORK_FOLDER_ENTRIES`]
//!   entries) is checked by the host: before a call (a folder over it is
//!   refused) and after (the entries the call created or changed are
//!   removed and the call fails saying so). A folder unused for `[exec]
//!   code-idle-secs` is removed; so is every folder when the host ends.
//! - **Outputs**: regular files under `outputs/` that the call created or
//!   changed come back with the result ([`OutputFile`]: name, MIME type
//!   by extension, bytes), at most [`MAX_OUTPUT_FILES`] files of at most
//!   [`MAX_OUTPUT_FILE_BYTES`] each and [`MAX_OUTPUT_TOTAL_BYTES`] in all;
//!   what is left out is named in the result's text. Symbolic links and
//!   files with more than one hard link are never read.
//! - **Audit**: the code's sha256 is recorded on a `run_code` span and an
//!   audit event (target `skilldeck::audit`), never the code itself.

use std::collections::{BTreeMap, HashMap};

use std::io::Read as _;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use skilldeck::{Skill, SkillMode};

use crate::tool_error::{ToolError, ToolErrorKind};

/// The tool's name.
pub const RUN_CODE: &str = "run_code";

/// Largest `code` accepted, in bytes (one command-line argument: the
/// kernel refuses one over 128 KiB).
pub const MAX_CODE_BYTES: usize = 100 * 1024;

/// The folder of the work folder whose new files come back with a result.
pub const OUTPUTS_DIR: &str = "outputs";

/// Most files of `outputs/` returned with one result.
pub const MAX_OUTPUT_FILES: usize = 16;

/// Largest file of `outputs/` returned (larger ones are named, not sent).
pub const MAX_OUTPUT_FILE_BYTES: u64 = 1024 * 1024;

/// Most bytes of `outputs/` files returned with one result.
pub const MAX_OUTPUT_TOTAL_BYTES: u64 = 4 * 1024 * 1024;

/// Most files and folders one work folder may hold (beside its byte
/// quota: each costs a scan).
pub const MAX_WORK_FOLDER_ENTRIES: usize = 10_000;

/// Most conversations holding a work folder at once; past it the one
/// unused longest is removed.
pub const MAX_WORK_FOLDERS: usize = 256;

/// The skill name a run without a skill is recorded under (not a valid
/// skill name, so no grant can match it).
pub const NO_SKILL: &str = "(none)";

/// How the code reaches the interpreter: the work folder is `$1`, the
/// interpreter and its arguments follow.
pub(crate) const LAUNCH: &str = "cd -- \"$1\" || exit 125; shift; exec \"$@\"";

/// A language `run_code` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Language {
    /// `python3 -c CODE`.
    Python,
    /// `bash -c CODE`.
    Bash,
    /// `node -e CODE`.
    Node,
}

impl Language {
    /// Every language, in the order they are offered.
    pub const ALL: [Language; 3] = [Language::Python, Language::Bash, Language::Node];

    /// The name the model uses.
    pub fn name(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::Bash => "bash",
            Language::Node => "node",
        }
    }

    /// The language named `name`.
    pub fn parse(name: &str) -> Option<Language> {
        Language::ALL.into_iter().find(|l| l.name() == name)
    }

    /// The interpreter's program name, looked up on the sandbox `PATH`.
    pub fn program(self) -> &'static str {
        match self {
            Language::Python => "python3",
            Language::Bash => "bash",
            Language::Node => "node",
        }
    }

    /// The interpreter's flag that takes the code as an argument.
    pub(crate) fn flag(self) -> &'static str {
        match self {
            Language::Node => "-e",
            Language::Python | Language::Bash => "-c",
        }
    }

    /// The interpreter on the sandbox `PATH`, if installed.
    pub fn interpreter(self) -> Option<PathBuf> {
        skilldeck_exec::on_sandbox_path(self.program())
    }

    /// The languages whose interpreter is installed, in offering order.
    pub fn available() -> Vec<Language> {
        Language::ALL
            .into_iter()
            .filter(|l| l.interpreter().is_some())
            .collect()
    }
}

/// The arguments of one `run_code` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeArgs {
    /// The language.
    pub language: Language,
    /// The code.
    pub code: String,
    /// The skill whose folder is mounted and whose grants apply.
    pub skill: Option<String>,
    /// A shorter timeout than `[exec] timeout-secs` (never longer).
    pub timeout: Option<Duration>,
}

impl CodeArgs {
    /// The lowercase hex sha256 of the code: what the audit records and
    /// what an approval of this code is bound to.
    pub fn code_sha256(&self) -> String {
        skilldeck::Digest::of(self.code.as_bytes()).hex()
    }
}

/// The arguments of `run_code` from a tool call: `language`, `code`,
/// optional `skill` and `timeout` (seconds).
pub fn code_arguments(arguments: &Map<String, Value>) -> Result<CodeArgs, ToolError> {
    let invalid = |m: String| ToolError::new(ToolErrorKind::InvalidArguments, m);
    if let Some(unknown) = arguments
        .keys()
        .find(|k| !["language", "code", "skill", "timeout"].contains(&k.as_str()))
    {
        return Err(invalid(format!(
            "unknown argument `{unknown}`; the accepted arguments are `language`, `code`, \
             `skill`, `timeout`"
        )));
    }
    let language = match arguments.get("language") {
        Some(Value::String(s)) => Language::parse(s).ok_or_else(|| {
            invalid(format!(
                "`language` '{s}' is not offered; use one of: {}",
                names(&Language::available())
            ))
        })?,
        None | Some(Value::Null) => return Err(invalid("`language` is required".to_owned())),
        Some(_) => return Err(invalid("`language` must be a string".to_owned())),
    };
    let code = match arguments.get("code") {
        Some(Value::String(s)) => s.clone(),
        None | Some(Value::Null) => return Err(invalid("`code` is required".to_owned())),
        Some(_) => return Err(invalid("`code` must be a string".to_owned())),
    };
    let skill = match arguments.get("skill") {
        Some(Value::String(s)) => Some(s.clone()),
        None | Some(Value::Null) => None,
        Some(_) => return Err(invalid("`skill` must be a string".to_owned())),
    };
    let timeout = match arguments.get("timeout") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => {
            let secs = n.as_f64().unwrap_or(f64::NAN);
            Some(skilldeck_exec::timeout_from_secs(secs).map_err(invalid)?)
        }
        Some(_) => return Err(invalid("`timeout` must be a number of seconds".to_owned())),
    };
    Ok(CodeArgs {
        language,
        code,
        skill,
        timeout,
    })
}

pub(crate) fn names(languages: &[Language]) -> String {
    if languages.is_empty() {
        return "none (no interpreter is installed on the sandbox PATH)".to_owned();
    }
    languages
        .iter()
        .map(|l| l.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The JSON Schema of `run_code`'s arguments, offering `languages`.
pub fn code_input_schema(languages: &[Language]) -> Value {
    let names: Vec<&str> = languages.iter().map(|l| l.name()).collect();
    json!({
        "type": "object",
        "properties": {
            "language": {
                "type": "string",
                "enum": names,
                "description": "The language of `code`."
            },
            "code": {
                "type": "string",
                "maxLength": MAX_CODE_BYTES,
                "description": "The program. It runs in this conversation's work folder \
                                (the current directory), which keeps its files between calls; \
                                files it writes under outputs/ are returned with the result."
            },
            "skill": {
                "type": "string",
                "description": "Run with this skill's folder mounted read-only \
                                ($SKILLDECK_SKILL_DIR) and its grants."
            },
            "timeout": {
                "type": "number",
                "exclusiveMinimum": 0,
                "description": "Seconds before the run is stopped (at most the server's limit)."
            }
        },
        "required": ["language", "code"],
        "additionalProperties": false
    })
}

/// The tool's description for the model.
pub fn code_description(languages: &[Language]) -> String {
    format!(
        "Run code you write ({}) in a sandbox: no network unless the operator granted it, \
         time, memory and output limits. The current directory is this conversation's work \
         folder: files persist between calls (within a size quota, removed after a while \
         unused); files written under outputs/ are returned with the result. With `skill`, \
         that skill's folder is readable at $SKILLDECK_SKILL_DIR. stdout is the result; a \
         non-zero exit, a timeout or a refusal is an error saying what happened.",
        names(languages)
    )
}

/// A file the code wrote under `outputs/`, returned with the result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputFile {
    /// Its path under `outputs/` (`/`-separated), e.g. `chart.png`.
    pub name: String,
    /// Its MIME type, by extension ([`skilldeck::resources::mime_for`]).
    pub mime_type: &'static str,
    /// Its bytes.
    pub data: Vec<u8>,
}

impl OutputFile {
    /// The bytes as text, when they are UTF-8 without NUL.
    pub fn text(&self) -> Option<&str> {
        std::str::from_utf8(&self.data)
            .ok()
            .filter(|t| !t.contains('\0'))
    }
}

/// Where "now" comes from: the system clock, or a test's.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// The current instant.
    fn now(&self) -> Instant;
}

/// The system's monotonic clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
}

#[derive(Debug)]
struct Folder {
    path: PathBuf,
    last_used: Instant,
    /// Held while a call runs in the folder (calls of one conversation run
    /// one after the other; a folder in use is never removed).
    lock: Arc<Mutex<()>>,
}

/// The per-conversation work folders of `run_code`, under one private
/// root: persistence, quota, idle expiry, cleanup. See the module
/// documentation.
#[derive(Debug)]
pub struct WorkFolders {
    root: PathBuf,
    quota_bytes: u64,
    idle: Duration,
    clock: Arc<dyn Clock>,
    /// The uid the sandboxed code runs as when it is not ours (a root
    /// caller's runs drop to the sandbox user): folders are given to it.
    owner: Option<u32>,
    folders: Mutex<HashMap<String, Folder>>,
}

/// One folder in use by a call: [`WorkFolders::acquire`].
#[derive(Debug, Clone)]
pub struct FolderLease {
    /// The folder.
    pub path: PathBuf,
    lock: Arc<Mutex<()>>,
}

impl FolderLease {
    /// Runs `f` while holding the folder (other calls of the conversation
    /// wait).
    pub fn with<T>(&self, f: impl FnOnce(&Path) -> T) -> T {
        let _held = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        f(&self.path)
    }
}

/// What a scan of a work folder found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FolderScan {
    entries: BTreeMap<PathBuf, Stamp>,
    /// Bytes of its regular files.
    pub bytes: u64,
    /// True when it holds more than [`MAX_WORK_FOLDER_ENTRIES`] entries
    /// (the scan stopped).
    pub too_many: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    len: u64,
    mtime: (i64, i64),
    ino: u64,
    dev: u64,
    kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    File,
    Dir,
    Other,
}

impl FolderScan {
    /// True when the folder is over `quota` bytes or too many entries.
    pub fn over(&self, quota: u64) -> bool {
        self.too_many || self.bytes > quota
    }

    /// The entries of `after` that are new or changed since `self`, sorted
    /// (a folder before what it holds).
    fn changed<'a>(&self, after: &'a FolderScan) -> Vec<(&'a PathBuf, &'a Stamp)> {
        after
            .entries
            .iter()
            .filter(|(path, stamp)| match self.entries.get(*path) {
                None => true,
                Some(before) if stamp.kind == Kind::Dir && before.kind == Kind::Dir => false,
                Some(before) => before != *stamp,
            })
            .collect()
    }
}

/// Scans `root` without following a symbolic link: every entry's stamp,
/// the bytes of its regular files, stopping past
/// [`MAX_WORK_FOLDER_ENTRIES`] entries.
pub fn scan(root: &Path) -> std::io::Result<FolderScan> {
    let mut out = FolderScan::default();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        for entry in std::fs::read_dir(root.join(&rel))? {
            let entry = entry?;
            let rel = rel.join(entry.file_name());
            let meta = std::fs::symlink_metadata(root.join(&rel))?;
            let kind = if meta.file_type().is_dir() {
                stack.push(rel.clone());
                Kind::Dir
            } else if meta.file_type().is_file() {
                out.bytes = out.bytes.saturating_add(meta.len());
                Kind::File
            } else {
                Kind::Other
            };
            out.entries.insert(
                rel,
                Stamp {
                    len: meta.len(),
                    mtime: (meta.mtime(), meta.mtime_nsec()),
                    ino: meta.ino(),
                    dev: meta.dev(),
                    kind,
                },
            );
            if out.entries.len() > MAX_WORK_FOLDER_ENTRIES {
                out.too_many = true;
                return Ok(out);
            }
        }
    }
    Ok(out)
}

impl WorkFolders {
    /// Work folders under `root` (created on first use, mode 0711; each
    /// folder 0700, given to `owner` when the code runs as another uid),
    /// each of at most `quota_bytes`, removed after `idle` unused, timed
    /// by `clock`.
    pub fn new(
        root: PathBuf,
        quota_bytes: u64,
        idle: Duration,
        owner: Option<u32>,
        clock: Arc<dyn Clock>,
    ) -> WorkFolders {
        WorkFolders {
            root,
            quota_bytes,
            idle,
            clock,
            owner,
            folders: Mutex::new(HashMap::new()),
        }
    }

    /// The folder holding every conversation's folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The quota of one folder, in bytes.
    pub fn quota_bytes(&self) -> u64 {
        self.quota_bytes
    }

    /// Conversations holding a folder now.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// True when no conversation holds a folder.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Folder>> {
        self.folders.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Removes the folders unused for the idle time (not those in use);
    /// returns how many.
    pub fn sweep(&self) -> usize {
        let now = self.clock.now();
        let mut folders = self.lock();
        let expired: Vec<String> = folders
            .iter()
            .filter(|(_, f)| {
                Arc::strong_count(&f.lock) == 1
                    && now.saturating_duration_since(f.last_used) >= self.idle
            })
            .map(|(k, _)| k.clone())
            .collect();
        for key in &expired {
            if let Some(folder) = folders.remove(key) {
                remove_folder(&folder.path);
            }
        }
        expired.len()
    }

    /// The folder of `conversation`, created when it has none (after
    /// removing expired folders; at [`MAX_WORK_FOLDERS`], the one unused
    /// longest goes). Its idle time restarts now.
    pub fn acquire(&self, conversation: &str) -> Result<FolderLease, ToolError> {
        self.sweep();
        let now = self.clock.now();
        let mut folders = self.lock();
        if let Some(folder) = folders.get_mut(conversation) {
            folder.last_used = now;
            return Ok(FolderLease {
                path: folder.path.clone(),
                lock: Arc::clone(&folder.lock),
            });
        }
        if folders.len() >= MAX_WORK_FOLDERS {
            let oldest = folders
                .iter()
                .filter(|(_, f)| Arc::strong_count(&f.lock) == 1)
                .min_by_key(|(_, f)| f.last_used)
                .map(|(k, _)| k.clone());
            match oldest.and_then(|k| folders.remove(&k)) {
                Some(folder) => remove_folder(&folder.path),
                None => {
                    return Err(ToolError::new(
                        ToolErrorKind::Busy,
                        format!(
                            "{RUN_CODE} was not run: all {MAX_WORK_FOLDERS} work folders are in \
                             use. Try again in a moment."
                        ),
                    ));
                }
            }
        }
        let path = self.create(conversation).map_err(|e| {
            ToolError::new(
                ToolErrorKind::Failed,
                format!("{RUN_CODE} was not run: its work folder cannot be created: {e}"),
            )
        })?;
        let lock = Arc::new(Mutex::new(()));
        folders.insert(
            conversation.to_owned(),
            Folder {
                path: path.clone(),
                last_used: now,
                lock: Arc::clone(&lock),
            },
        );
        Ok(FolderLease { path, lock })
    }

    /// Removes `conversation`'s folder (its session ended), unless a call
    /// is using it (the idle expiry takes it later); true when removed.
    pub fn forget(&self, conversation: &str) -> bool {
        let mut folders = self.lock();
        match folders.get(conversation) {
            Some(folder) if Arc::strong_count(&folder.lock) == 1 => {
                if let Some(folder) = folders.remove(conversation) {
                    remove_folder(&folder.path);
                }
                true
            }
            _ => false,
        }
    }

    /// Marks `conversation`'s folder used now (its idle time restarts).
    pub fn touch(&self, conversation: &str) {
        let now = self.clock.now();
        if let Some(folder) = self.lock().get_mut(conversation) {
            folder.last_used = now;
        }
    }

    /// Creates the root when missing (mode 0711) and checks it is a
    /// folder nobody else may write.
    pub(crate) fn ensure_root(&self) -> std::io::Result<()> {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o711)
            .create(&self.root)?;
        let meta = std::fs::symlink_metadata(&self.root)?;
        if !meta.is_dir() || meta.mode() & 0o022 != 0 {
            return Err(std::io::Error::other(format!(
                "{} is not a private folder (a symlink, or writable by others)",
                self.root.display()
            )));
        }
        Ok(())
    }

    fn create(&self, conversation: &str) -> std::io::Result<PathBuf> {
        use std::os::unix::fs::PermissionsExt;
        self.ensure_root()?;
        let digest = skilldeck::Digest::of(conversation.as_bytes()).hex();
        let path = self.root.join(&digest[..32]);
        if path.exists() {
            remove_folder(&path);
        }
        std::fs::create_dir(&path)?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700))?;
        let outputs = path.join(OUTPUTS_DIR);
        std::fs::create_dir(&outputs)?;
        if let Some(uid) = self.owner {
            std::os::unix::fs::chown(&path, Some(uid), Some(uid))?;
            std::os::unix::fs::chown(&outputs, Some(uid), Some(uid))?;
        }
        Ok(path)
    }

    /// After a call in `lease`: when the folder is over its quota, the
    /// entries the call created or changed (since `before`) are removed
    /// and the error says so; otherwise the scan after the call.
    pub fn enforce(&self, folder: &Path, before: &FolderScan) -> Result<FolderScan, ToolError> {
        let after = scan(folder).map_err(|e| {
            ToolError::new(
                ToolErrorKind::Failed,
                format!("{RUN_CODE}: the work folder cannot be read after the run: {e}"),
            )
        })?;
        if !after.over(self.quota_bytes) {
            return Ok(after);
        }
        let mut removed_under: Vec<&PathBuf> = Vec::new();
        let mut removed = 0usize;
        for (path, stamp) in before.changed(&after) {
            if removed_under.iter().any(|d| path.starts_with(d)) {
                continue;
            }
            let full = folder.join(path);
            let done = if stamp.kind == Kind::Dir {
                removed_under.push(path);
                std::fs::remove_dir_all(&full)
            } else {
                std::fs::remove_file(&full)
            };
            if done.is_ok() {
                removed += 1;
            }
        }
        let what = if after.too_many {
            format!("more than {MAX_WORK_FOLDER_ENTRIES} files and folders")
        } else {
            format!("{} bytes", after.bytes)
        };
        Err(ToolError::new(
            ToolErrorKind::Denied,
            format!(
                "{RUN_CODE}: the work folder went over its quota ({what}; the quota is {} bytes \
                 and {MAX_WORK_FOLDER_ENTRIES} entries): the {removed} files and folders this \
                 call created or changed were removed. Write less, or delete files you no \
                 longer need.",
                self.quota_bytes
            ),
        ))
    }
}

impl Drop for WorkFolders {
    fn drop(&mut self) {
        let folders = std::mem::take(&mut *self.lock());
        for folder in folders.into_values() {
            remove_folder(&folder.path);
        }
        // Only this host's folders are there (the root is per process).
        remove_folder(&self.root);
    }
}

fn remove_folder(path: &Path) {
    if let Err(e) = std::fs::remove_dir_all(path)
        && e.kind() != std::io::ErrorKind::NotFound
    {
        tracing::warn!(
            target: "skilldeck::exec",
            "cannot remove the run_code work folder {}: {e}",
            path.display()
        );
    }
}

/// The files under `outputs/` the call created or changed (since
/// `before`), capped; the names of those left out, with why.
pub fn collect_outputs(
    folder: &Path,
    before: &FolderScan,
    after: &FolderScan,
) -> (Vec<OutputFile>, Vec<String>) {
    let mut files = Vec::new();
    let mut omitted = Vec::new();
    let mut total = 0u64;
    let prefix = Path::new(OUTPUTS_DIR);
    for (path, stamp) in before.changed(after) {
        if stamp.kind != Kind::File {
            continue;
        }
        let Ok(rel) = path.strip_prefix(prefix) else {
            continue;
        };
        let Some(name) = rel.to_str().map(str::to_owned) else {
            omitted.push(format!("{} (a name that is not UTF-8)", rel.display()));
            continue;
        };
        if files.len() >= MAX_OUTPUT_FILES {
            omitted.push(format!("{name} (over {MAX_OUTPUT_FILES} files)"));
            continue;
        }
        if stamp.len > MAX_OUTPUT_FILE_BYTES {
            omitted.push(format!(
                "{name} ({} bytes, over {MAX_OUTPUT_FILE_BYTES})",
                stamp.len
            ));
            continue;
        }
        if total + stamp.len > MAX_OUTPUT_TOTAL_BYTES {
            omitted.push(format!(
                "{name} (the result's {MAX_OUTPUT_TOTAL_BYTES} bytes are used up)"
            ));
            continue;
        }
        match read_output(&folder.join(path), stamp) {
            Ok(data) => {
                total += data.len() as u64;
                let is_text = std::str::from_utf8(&data).is_ok_and(|t| !t.contains('\0'));
                files.push(OutputFile {
                    mime_type: skilldeck::resources::mime_for(&name, is_text),
                    name,
                    data,
                });
            }
            Err(why) => omitted.push(format!("{name} ({why})")),
        }
    }
    (files, omitted)
}

/// The bytes of the output file at `path`, when it is still the regular
/// file `stamp` scanned (same device and inode: a symbolic link swapped in
/// is refused) and has one hard link (a link to a file elsewhere is never
/// read).
fn read_output(path: &Path, stamp: &Stamp) -> Result<Vec<u8>, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("cannot open: {e}"))?;
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot inspect: {e}"))?;
    if !meta.is_file() || meta.ino() != stamp.ino || meta.dev() != stamp.dev {
        return Err("not the file the scan found (a link?): not read".to_owned());
    }
    if meta.nlink() != 1 {
        return Err("a file with several hard links: not read".to_owned());
    }
    let mut data = Vec::new();
    file.take(MAX_OUTPUT_FILE_BYTES + 1)
        .read_to_end(&mut data)
        .map_err(|e| format!("cannot read: {e}"))?;
    if data.len() as u64 > MAX_OUTPUT_FILE_BYTES {
        return Err(format!("over {MAX_OUTPUT_FILE_BYTES} bytes"));
    }
    Ok(data)
}

/// The stand-in skill of a run without `skill`: an empty folder.
pub(crate) fn empty_skill(folder: &Path) -> Skill {
    let root: Arc<Path> = Arc::from(folder);
    Skill {
        name: NO_SKILL.to_owned(),
        description: String::new(),
        resolved_dir: None,
        skill_md: folder.join("SKILL.md"),
        scope: skilldeck::Scope::Explicit,
        root,
        mode: SkillMode::default(),
        host: skilldeck::HostFields::default(),
    }
}
