//! Test fixtures for skilldeck: skill folders (a `SKILL.md` of YAML
//! frontmatter and a Markdown body, plus any other files) written into a
//! temporary root with a fluent builder.
//!
//! ```
//! let root = skilldeck_testkit::Root::new();
//! let dir = root
//!     .skill("pdf-tools")
//!     .description("Extract PDF text. Use when reading PDFs.")
//!     .field("license", "MIT")
//!     .body("# PDF\nSteps...\n")
//!     .file("scripts/run.sh", "echo hi\n")
//!     .write();
//! assert_eq!(
//!     std::fs::read_to_string(dir.join("SKILL.md")).unwrap(),
//!     "---\nname: pdf-tools\ndescription: Extract PDF text. Use when reading PDFs.\n\
//!      license: MIT\n---\n# PDF\nSteps...\n"
//! );
//! ```
//!
//! The file is written byte for byte as described, with nothing added:
//! values are raw YAML (quote them yourself when they need it), frontmatter
//! lines keep the order they were given in, and the body follows the closing
//! `---` line exactly. Every filesystem failure panics with the path, as a
//! test fixture should.
//!
//! The crate does not depend on `skilldeck`, so any crate's tests may use it.

#![deny(missing_docs)]

pub mod generate;
pub mod git;
pub mod mcp;
pub mod oci;
pub mod plugins;
pub mod process;
pub mod registry;
pub mod seeds;
pub mod simple_index;
pub mod ssh;

use std::ops::Deref;
use std::path::{Path, PathBuf};

/// The text of a `SKILL.md` with a name, a description and a body:
/// `---\nname: {name}\ndescription: {description}\n---\n{body}`.
pub fn skill_md(name: &str, description: &str, body: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n{body}")
}

/// A builder for the skill `name` in the folder `base/name` (see
/// [`Skill::folder`] to put it elsewhere). Nothing is written until
/// [`Skill::write`].
pub fn skill(base: impl AsRef<Path>, name: &str) -> Skill {
    Skill {
        base: base.as_ref().to_path_buf(),
        folder: PathBuf::from(name),
        file_name: "SKILL.md".to_owned(),
        name: Some(name.to_owned()),
        frontmatter: String::new(),
        body: Vec::new(),
        text: None,
        files: Vec::new(),
        dirs: Vec::new(),
    }
}

/// Creates the folder `base/rel` (and its parents) and returns its path.
pub fn dir(base: impl AsRef<Path>, rel: impl AsRef<Path>) -> PathBuf {
    let path = base.as_ref().join(rel);
    std::fs::create_dir_all(&path)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", path.display()));
    path
}

/// Writes `contents` to `path`, creating its parent folders, and returns the
/// path.
pub fn file(path: impl AsRef<Path>, contents: impl AsRef<[u8]>) -> PathBuf {
    let path = path.as_ref();
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", parent.display()));
    }
    std::fs::write(path, contents)
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    path.to_path_buf()
}

/// A temporary skills root, removed when dropped. It derefs to its [`Path`].
#[derive(Debug)]
pub struct Root {
    tmp: tempfile::TempDir,
}

impl Root {
    /// A new, empty temporary folder.
    pub fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("cannot create a tempdir: {e}"));
        Root { tmp }
    }

    /// The root folder.
    pub fn path(&self) -> &Path {
        self.tmp.path()
    }

    /// A builder for the skill `name` in the folder `name` of this root.
    pub fn skill(&self, name: &str) -> Skill {
        skill(self.path(), name)
    }

    /// Creates the folder `rel` (and its parents) in this root.
    pub fn dir(&self, rel: impl AsRef<Path>) -> PathBuf {
        dir(self.path(), rel)
    }

    /// Writes the file `rel` in this root, creating its parent folders.
    pub fn file(&self, rel: impl AsRef<Path>, contents: impl AsRef<[u8]>) -> PathBuf {
        file(self.path().join(rel), contents)
    }
}

impl Default for Root {
    fn default() -> Self {
        Self::new()
    }
}

impl Deref for Root {
    type Target = Path;

    fn deref(&self) -> &Path {
        self.path()
    }
}

impl AsRef<Path> for Root {
    fn as_ref(&self) -> &Path {
        self.path()
    }
}

/// A skill folder to write: its `SKILL.md` and any other files. Made by
/// [`skill`] or [`Root::skill`].
#[derive(Debug, Clone)]
#[must_use = "nothing is written until .write()"]
pub struct Skill {
    base: PathBuf,
    folder: PathBuf,
    file_name: String,
    name: Option<String>,
    frontmatter: String,
    body: Vec<u8>,
    text: Option<Vec<u8>>,
    files: Vec<(PathBuf, Vec<u8>)>,
    dirs: Vec<PathBuf>,
}

impl Skill {
    /// Puts the skill in `base/rel` instead of `base/name`; `rel` may nest
    /// (`"store/abc-pdf"`). The `name:` line is unchanged.
    pub fn folder(mut self, rel: impl AsRef<Path>) -> Self {
        self.folder = rel.as_ref().to_path_buf();
        self
    }

    /// Writes `name: {raw}` instead of the name the builder was made with
    /// (the folder is unchanged): a name that differs from its folder, or a
    /// quoted YAML scalar.
    pub fn name(mut self, raw: &str) -> Self {
        self.name = Some(raw.to_owned());
        self
    }

    /// Leaves out the `name:` line.
    pub fn without_name(mut self) -> Self {
        self.name = None;
        self
    }

    /// Names the skill file `file_name` instead of `SKILL.md` (e.g. `skill.md`).
    pub fn file_name(mut self, file_name: &str) -> Self {
        self.file_name = file_name.to_owned();
        self
    }

    /// Adds the frontmatter line `description: {raw}`.
    pub fn description(self, raw: impl AsRef<str>) -> Self {
        self.field("description", raw)
    }

    /// Adds the frontmatter line `{key}: {raw}`.
    pub fn field(mut self, key: &str, raw: impl AsRef<str>) -> Self {
        self.frontmatter.push_str(key);
        self.frontmatter.push_str(": ");
        self.frontmatter.push_str(raw.as_ref());
        self.frontmatter.push('\n');
        self
    }

    /// Adds raw YAML to the frontmatter as it is (nested maps, lists,
    /// several lines); a final newline is added if it has none. Empty text
    /// adds nothing.
    pub fn frontmatter_raw(mut self, yaml: impl AsRef<str>) -> Self {
        let yaml = yaml.as_ref();
        self.frontmatter.push_str(yaml);
        if !yaml.is_empty() && !yaml.ends_with('\n') {
            self.frontmatter.push('\n');
        }
        self
    }

    /// The text after the closing `---` line, as it is (bytes allowed, so a
    /// body may be invalid UTF-8).
    pub fn body(mut self, body: impl AsRef<[u8]>) -> Self {
        self.body = body.as_ref().to_vec();
        self
    }

    /// The whole skill file as it is, in place of the frontmatter and body
    /// (for files without frontmatter, unclosed frontmatter and the like).
    pub fn text(mut self, text: impl AsRef<[u8]>) -> Self {
        self.text = Some(text.as_ref().to_vec());
        self
    }

    /// Another file in the skill folder, at `rel` (parent folders created).
    pub fn file(mut self, rel: impl AsRef<Path>, contents: impl AsRef<[u8]>) -> Self {
        self.files
            .push((rel.as_ref().to_path_buf(), contents.as_ref().to_vec()));
        self
    }

    /// An empty folder in the skill folder, at `rel`.
    pub fn dir(mut self, rel: impl AsRef<Path>) -> Self {
        self.dirs.push(rel.as_ref().to_path_buf());
        self
    }

    /// The bytes of the skill file: `---`, the `name:` line, the other
    /// frontmatter lines in the order given, `---`, then the body (or the
    /// [`Skill::text`] given instead).
    pub fn render(&self) -> Vec<u8> {
        if let Some(text) = &self.text {
            return text.clone();
        }
        let mut out = b"---\n".to_vec();
        if let Some(name) = &self.name {
            out.extend_from_slice(b"name: ");
            out.extend_from_slice(name.as_bytes());
            out.push(b'\n');
        }
        out.extend_from_slice(self.frontmatter.as_bytes());
        out.extend_from_slice(b"---\n");
        out.extend_from_slice(&self.body);
        out
    }

    /// Writes the folder (parents created), the skill file (replacing one
    /// already there in place, as `std::fs::write` does), then the other
    /// files and folders. Returns the skill folder.
    pub fn write(&self) -> PathBuf {
        let folder = dir(&self.base, &self.folder);
        file(folder.join(&self.file_name), self.render());
        for rel in &self.dirs {
            dir(&folder, rel);
        }
        for (rel, contents) in &self.files {
            file(folder.join(rel), contents);
        }
        folder
    }
}

/// Fixtures for the model-access rule: skills the model may not use, each
/// with a script and a declared tool whose run leaves a mark in the skill
/// folder, next to one the model may use.
///
/// Runs leave the mark only without a sandbox (`[exec] sandbox = "none"`,
/// the operator's explicit choice), which these fixtures are meant for:
/// the mark is the proof that skill code ran, or did not.
pub mod model_access {
    use std::path::Path;

    /// A skill with `disable-model-invocation: true` (user-invoked only by
    /// its own frontmatter).
    pub const USER_ONLY: &str = "deploy";
    /// A skill the operator sets to mode `manual` ([`MODES_TOML`]).
    pub const MANUAL: &str = "payments";
    /// A skill the model may use, with the same script and tool.
    pub const OPEN: &str = "words";
    /// The script of each skill, relative to its folder.
    pub const SCRIPT: &str = "scripts/run.sh";
    /// The tool each skill declares (`{skill}__ship`).
    pub const TOOL: &str = "ship";
    /// The file a run leaves in the skill folder.
    pub const MARKER: &str = "ran.marker";
    /// The config lines that set [`MANUAL`]'s mode to `manual`.
    pub const MODES_TOML: &str = "[modes]\npayments = \"manual\"\n";
    /// A config with [`MODES_TOML`] and execution on without a sandbox,
    /// every skill tool offered from the start (`tools = "always"`).
    pub const EXEC_ALWAYS_TOML: &str = "[modes]\npayments = \"manual\"\n\n[exec]\nenabled = true\nsandbox = \"none\"\ntools = \"always\"\n";

    const TOOLS: &str = "tools:\n  - name: ship\n    description: Ship it (a side effect).\n    parameters:\n      target: {type: string}\n    run: scripts/run.sh\n";
    const SCRIPT_TEXT: &str = "touch \"$SKILLDECK_SKILL_DIR/ran.marker\"\necho '{\"ran\": true}'\n";

    /// The full name of [`TOOL`] of `skill`.
    pub fn tool_full_name(skill: &str) -> String {
        format!("{}__{TOOL}", skill.replace('-', "_"))
    }

    /// Writes [`USER_ONLY`], [`MANUAL`] and [`OPEN`] under `root`.
    pub fn write(root: impl AsRef<Path>) {
        let root = root.as_ref();
        for (name, extra) in [
            (USER_ONLY, "disable-model-invocation: true\n"),
            (MANUAL, ""),
            (OPEN, ""),
        ] {
            super::skill(root, name)
                .description(format!("Ships {name} things. Use when shipping."))
                .frontmatter_raw(format!("{extra}{TOOLS}"))
                .body(format!("# {name}\nRun {SCRIPT}.\n"))
                .file(SCRIPT, SCRIPT_TEXT)
                .write();
        }
    }

    /// True when a run of `skill`'s code left its mark.
    pub fn ran(root: impl AsRef<Path>, skill: &str) -> bool {
        root.as_ref().join(skill).join(MARKER).exists()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(path: &Path) -> String {
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    #[test]
    fn a_built_skill_has_the_frontmatter_it_was_given() {
        let root = Root::new();
        let dir = root
            .skill("pdf-tools")
            .description("Extract PDF text. Use when reading PDFs.")
            .field("license", "MIT")
            .frontmatter_raw("metadata:\n  version: \"1.0\"")
            .body("# PDF\n")
            .write();
        assert_eq!(dir, root.join("pdf-tools"));
        assert_eq!(
            read(&dir.join("SKILL.md")),
            "---\nname: pdf-tools\ndescription: Extract PDF text. Use when reading PDFs.\n\
             license: MIT\nmetadata:\n  version: \"1.0\"\n---\n# PDF\n"
        );
    }

    #[test]
    fn skill_md_is_the_text_the_builder_writes() {
        let root = Root::new();
        let dir = root.skill("s").description("D.").body("B\n").write();
        assert_eq!(read(&dir.join("SKILL.md")), skill_md("s", "D.", "B\n"));
    }

    #[test]
    fn lines_keep_their_order_and_the_name_may_differ_or_be_left_out() {
        let root = Root::new();
        let s = root
            .skill("s")
            .frontmatter_raw("license: MIT\n")
            .description("D.");
        assert_eq!(
            s.render(),
            b"---\nname: s\nlicense: MIT\ndescription: D.\n---\n"
        );
        let quoted = root.skill("odd").name("\"x&y\"").render();
        assert_eq!(quoted, b"---\nname: \"x&y\"\n---\n");
        assert_eq!(root.skill("bare").without_name().render(), b"---\n---\n");
    }

    #[test]
    fn folders_nest_files_are_added_and_text_replaces_the_whole_file() {
        let root = Root::new();
        let dir = root
            .skill("inner")
            .folder("a/b/c")
            .file_name("skill.md")
            .text(b"no frontmatter \xff")
            .file("scripts/run.sh", "echo hi\n")
            .dir("assets/empty")
            .write();
        assert_eq!(dir, root.join("a/b/c"));
        assert_eq!(
            std::fs::read(dir.join("skill.md")).unwrap_or_default(),
            b"no frontmatter \xff"
        );
        assert_eq!(read(&dir.join("scripts/run.sh")), "echo hi\n");
        assert!(dir.join("assets/empty").is_dir());
    }

    #[cfg(unix)]
    #[test]
    fn writing_again_replaces_the_file_in_place() {
        use std::os::unix::fs::MetadataExt;
        let root = Root::new();
        let dir = root.skill("s").body("one").write();
        let md = dir.join("SKILL.md");
        let inode = std::fs::metadata(&md).map(|m| m.ino()).unwrap_or_default();
        root.skill("s").body("two").write();
        assert_eq!(read(&md), "---\nname: s\n---\ntwo");
        assert_eq!(
            std::fs::metadata(&md).map(|m| m.ino()).unwrap_or_default(),
            inode
        );
    }
}
