//! Plugin manifests: `.claude-plugin/plugin.json` (Claude Code) and
//! `.codex-plugin/plugin.json` (Codex), read as hostile input.
//!
//! Only what skills need is kept: the plugin's `name` (its skills'
//! namespace), `version`, `description`, and where its skills are. A
//! plugin's skills are the skill folders directly inside its `skills/`
//! folder, plus the paths its manifest's `skills` field names (a string or
//! a list; each a skill folder or a folder of skill folders). Every path
//! must stay inside the plugin folder: an absolute path, a `..`, or a path
//! whose real location (after symlinks) is outside is refused
//! (`plugin-path-escape`). Other fields (commands, agents, hooks, MCP
//! servers, Codex's `interface`) are not skilldeck's and are ignored, as
//! both tools ignore keys they do not know.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::diagnostic::{Code, Diagnostic, Pos, Severity};
use crate::limits::{MAX_PLUGIN_MANIFEST_BYTES, MAX_PLUGIN_SKILL_PATHS};
use crate::spec::plugin_name::is_plugin_name;

/// The folder, inside a plugin, whose skill folders are the plugin's
/// skills when the manifest names no other.
pub const DEFAULT_SKILLS_DIR: &str = "skills";

/// Which tool a plugin (or marketplace) is written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PluginKind {
    /// Claude Code: `.claude-plugin/plugin.json`.
    ClaudePlugin,
    /// Codex: `.codex-plugin/plugin.json`.
    CodexPlugin,
}

impl PluginKind {
    /// Both kinds, Claude Code's first: a folder with both manifests (one
    /// plugin published to both tools) is read through Claude Code's.
    pub const ALL: [PluginKind; 2] = [PluginKind::ClaudePlugin, PluginKind::CodexPlugin];

    /// The manifest's path inside the plugin folder.
    pub fn manifest_path(self) -> &'static str {
        match self {
            PluginKind::ClaudePlugin => ".claude-plugin/plugin.json",
            PluginKind::CodexPlugin => ".codex-plugin/plugin.json",
        }
    }

    /// The marketplace file's path inside a marketplace folder.
    pub fn marketplace_path(self) -> &'static str {
        match self {
            PluginKind::ClaudePlugin => ".claude-plugin/marketplace.json",
            PluginKind::CodexPlugin => ".agents/plugins/marketplace.json",
        }
    }

    /// `claude-plugin` or `codex-plugin` (the `export` argument).
    pub fn as_str(self) -> &'static str {
        match self {
            PluginKind::ClaudePlugin => "claude-plugin",
            PluginKind::CodexPlugin => "codex-plugin",
        }
    }

    /// The kind named `text` (`claude-plugin`, `codex-plugin`).
    pub fn parse(text: &str) -> Option<PluginKind> {
        PluginKind::ALL.into_iter().find(|k| k.as_str() == text)
    }
}

impl std::fmt::Display for PluginKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A plugin manifest, checked.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PluginManifest {
    /// Which tool's manifest it is.
    pub kind: PluginKind,
    /// The plugin's name: a slug, the namespace of its skills.
    pub name: String,
    /// Its `version`, when it has one.
    pub version: Option<String>,
    /// Its `description`, when it has one.
    pub description: Option<String>,
    /// The paths its `skills` field names, relative to the plugin folder,
    /// `/`-separated, without `./` (checked to stay inside it lexically;
    /// [`Plugin::skill_paths`] checks where they really lead).
    pub skills: Vec<String>,
}

/// A plugin folder and its manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plugin {
    /// The plugin folder.
    pub dir: PathBuf,
    /// Its manifest (or the marketplace entry standing for one).
    pub manifest: PluginManifest,
}

impl Plugin {
    /// The folders whose skill folders are this plugin's skills (and which
    /// may be skill folders themselves): `skills/` and each path the
    /// manifest names, in that order, without repeats. A path whose real
    /// location is outside the plugin folder is left out with a
    /// `plugin-path-escape` error.
    pub fn skill_paths(&self) -> (Vec<PathBuf>, Vec<Diagnostic>) {
        let mut paths = vec![self.dir.join(DEFAULT_SKILLS_DIR)];
        let mut diagnostics = Vec::new();
        let real_dir = std::fs::canonicalize(&self.dir).ok();
        for rel in &self.manifest.skills {
            let path = self.dir.join(rel);
            if let (Some(real_dir), Ok(real)) = (&real_dir, std::fs::canonicalize(&path))
                && !real.starts_with(real_dir)
            {
                diagnostics.push(
                    Diagnostic::new(
                        Code::PluginPathEscape,
                        Severity::Error,
                        format!(
                            "plugin '{}': the skills path '{rel}' leads outside the plugin \
                             folder (to {}); it is not read",
                            self.manifest.name,
                            real.display()
                        ),
                    )
                    .in_file(self.dir.join(self.manifest.kind.manifest_path()))
                    .with_help("a plugin's skills live inside its folder: copy them there"),
                );
                continue;
            }
            if !paths.contains(&path) {
                paths.push(path);
            }
        }
        (paths, diagnostics)
    }

    /// True when the skill folder `dir` is one of this plugin's skills:
    /// one of its skill paths, or a folder directly inside one.
    pub fn owns(&self, dir: &Path, skill_paths: &[PathBuf]) -> bool {
        skill_paths
            .iter()
            .any(|p| dir == p || dir.parent() == Some(p.as_path()))
    }
}

/// The `skills` field: one path or a list.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

#[derive(Debug, Deserialize)]
struct RawManifest {
    name: String,
    #[serde(default)]
    version: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    skills: Option<OneOrMany>,
}

/// `text` as a message shows it: control characters replaced, at most
/// [`SHOWN_CHARS`] characters.
pub(crate) fn shown(text: &str) -> String {
    let clean = crate::spec::control::replace_controls(text, true);
    let mut out: String = clean.chars().take(SHOWN_CHARS).collect();
    if clean.chars().count() > SHOWN_CHARS {
        out.push_str("...");
    }
    out
}

/// Most characters of a value a diagnostic quotes.
const SHOWN_CHARS: usize = 80;

/// Where the JSON string `value` first appears in `text` (its opening
/// quote), for a diagnostic about a field's value.
pub(crate) fn value_position(text: &str, value: &str) -> Option<Pos> {
    let quoted = serde_json::to_string(value).ok()?;
    let at = text.find(&quoted)?;
    let mut pos = Pos::of_offset(text.as_bytes(), at);
    pos.len = u32::try_from(quoted.chars().count()).unwrap_or(0);
    Some(pos)
}

/// A serde_json error as a diagnostic at its line and column.
pub(crate) fn json_error(code: Code, file: &Path, what: &str, e: &serde_json::Error) -> Diagnostic {
    let mut message = e.to_string();
    // serde_json appends " at line L column C": the position says it.
    if let Some(i) = message.find(" at line ") {
        message.truncate(i);
    }
    let mut d = Diagnostic::new(code, Severity::Error, format!("{what}: {message}"))
        .in_file(file)
        .with_help("fix the JSON (https://www.json.org); skilldeck reads none of it until then");
    if e.line() > 0 {
        d = d.at(Pos {
            line: u32::try_from(e.line()).unwrap_or(u32::MAX),
            column: u32::try_from(e.column().max(1)).unwrap_or(u32::MAX),
            len: 1,
        });
    }
    d
}

/// Checks one relative path of a manifest or marketplace: relative,
/// `/`-separated, no `..`, no empty or `.` part after an optional leading
/// `./`. Returns it without the `./` (empty for `./` itself when
/// `allow_self`).
pub(crate) fn relative_path(path: &str, allow_self: bool) -> Result<String, &'static str> {
    if path.contains(['\\', '\0']) || path.chars().any(char::is_control) {
        return Err("holds a backslash or a control character");
    }
    if path.starts_with('/') || (path.len() > 1 && path.as_bytes()[1] == b':') {
        return Err("is absolute");
    }
    let rest = path.strip_prefix("./").unwrap_or(path);
    let rest = rest.trim_end_matches('/');
    if rest.is_empty() || rest == "." {
        return if allow_self {
            Ok(String::new())
        } else {
            Err("names the plugin folder itself")
        };
    }
    let mut parts = Vec::new();
    for part in rest.split('/') {
        match part {
            ".." => return Err("holds '..'"),
            "" | "." => return Err("holds an empty or '.' part"),
            p => parts.push(p),
        }
    }
    Ok(parts.join("/"))
}

/// Parses the text of a plugin manifest of `kind` (`file` names it in
/// diagnostics). Every problem is an error diagnostic with a stable code
/// (`plugin-manifest-invalid`, `plugin-name-invalid`,
/// `plugin-path-escape`), at its line and column where the text has one.
pub fn parse_manifest(
    text: &str,
    file: &Path,
    kind: PluginKind,
) -> Result<PluginManifest, Vec<Diagnostic>> {
    let raw: RawManifest = serde_json::from_str(text).map_err(|e| {
        vec![json_error(
            Code::PluginManifestInvalid,
            file,
            "invalid plugin manifest",
            &e,
        )]
    })?;
    let mut problems = Vec::new();
    if !is_plugin_name(&raw.name) {
        let mut d = Diagnostic::new(
            Code::PluginNameInvalid,
            Severity::Error,
            format!(
                "plugin name '{}' is not valid: 1 to 64 lowercase letters a-z, digits and single \
                 inner hyphens (it becomes its skills' namespace, as in '{}:SKILL')",
                shown(&raw.name),
                shown(&raw.name)
            ),
        )
        .in_file(file);
        if let Some(pos) = value_position(text, &raw.name) {
            d = d.at(pos);
        }
        problems.push(d);
    }
    let listed = match raw.skills {
        None => Vec::new(),
        Some(OneOrMany::One(p)) => vec![p],
        Some(OneOrMany::Many(v)) => v,
    };
    if listed.len() > MAX_PLUGIN_SKILL_PATHS {
        problems.push(
            Diagnostic::new(
                Code::PluginManifestInvalid,
                Severity::Error,
                format!(
                    "the manifest names {} skills paths; at most {MAX_PLUGIN_SKILL_PATHS} are read",
                    listed.len()
                ),
            )
            .in_file(file),
        );
    }
    let mut skills = Vec::new();
    for p in listed.iter().take(MAX_PLUGIN_SKILL_PATHS) {
        match relative_path(p, false) {
            Ok(rel) => {
                if !skills.contains(&rel) {
                    skills.push(rel);
                }
            }
            Err(why) => {
                let mut d = Diagnostic::new(
                    Code::PluginPathEscape,
                    Severity::Error,
                    format!(
                        "the skills path '{}' {why}: a plugin's paths stay inside its folder",
                        shown(p)
                    ),
                )
                .in_file(file)
                .with_help("write it relative to the plugin folder, starting with ./");
                if let Some(pos) = value_position(text, p) {
                    d = d.at(pos);
                }
                problems.push(d);
            }
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let clean = |s: Option<String>| s.map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
    Ok(PluginManifest {
        kind,
        name: raw.name,
        version: clean(raw.version),
        description: clean(raw.description),
        skills,
    })
}

/// Reads the manifest of `kind` in the folder `dir`: `None` when there is
/// none; else the manifest, or why it cannot be used (the file read with
/// the core's safe reader: a regular file, at most
/// [`MAX_PLUGIN_MANIFEST_BYTES`], UTF-8).
pub fn read_manifest(
    dir: &Path,
    kind: PluginKind,
) -> Option<Result<PluginManifest, Vec<Diagnostic>>> {
    let file = dir.join(kind.manifest_path());
    std::fs::symlink_metadata(&file).ok()?;
    Some(
        crate::fs::read::read_skill_md_capped(&file, MAX_PLUGIN_MANIFEST_BYTES)
            .map_err(|d| vec![d])
            .and_then(|text| parse_manifest(&text, &file, kind)),
    )
}

/// The plugin in `dir`, read through the first manifest it has
/// ([`PluginKind::ALL`] order): `None` when it has neither.
pub fn read_plugin(dir: &Path) -> Option<Result<Plugin, Vec<Diagnostic>>> {
    PluginKind::ALL.into_iter().find_map(|kind| {
        read_manifest(dir, kind).map(|r| {
            r.map(|manifest| Plugin {
                dir: dir.to_path_buf(),
                manifest,
            })
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<PluginManifest, Vec<Diagnostic>> {
        parse_manifest(
            text,
            Path::new("p/.claude-plugin/plugin.json"),
            PluginKind::ClaudePlugin,
        )
    }

    #[test]
    fn a_manifest_keeps_name_version_description_and_skills_paths() {
        let m = parse(
            r#"{"name":"document-skills","version":"1.2.0","description":"Docs",
                "author":{"name":"A"},"commands":"./c","skills":["./extra","more/"]}"#,
        )
        .unwrap();
        assert_eq!(m.name, "document-skills");
        assert_eq!(m.version.as_deref(), Some("1.2.0"));
        assert_eq!(m.skills, ["extra", "more"]);
        let codex = parse(r#"{"name":"x","skills":"./skills/"}"#).unwrap();
        assert_eq!(codex.skills, ["skills"]);
    }

    #[test]
    fn malformed_json_is_reported_at_its_line_and_column() {
        let e = parse("{\n  \"name\": \"x\",\n  \"version\": 1.0.0\n}").unwrap_err();
        assert_eq!(e[0].code, Code::PluginManifestInvalid);
        assert_eq!(e[0].line, Some(3));
        assert!(e[0].column.is_some());
        assert!(e[0].to_string().contains("plugin.json:3:"), "{}", e[0]);
        let missing = parse("{\"version\":\"1\"}").unwrap_err();
        assert!(missing[0].message.contains("name"), "{}", missing[0]);
        let wrong_type = parse("{\"name\":\"x\",\"skills\":5}").unwrap_err();
        assert_eq!(wrong_type[0].code, Code::PluginManifestInvalid);
    }

    #[test]
    fn skills_paths_that_leave_the_plugin_are_refused_at_their_position() {
        for bad in ["../outside", "/etc", "./a/../../b", "a\\b", "C:/x", "./"] {
            let text = format!(
                "{{\"name\":\"x\",\n\"skills\":[{}]}}",
                serde_json::to_string(bad).unwrap()
            );
            let e = parse(&text).unwrap_err();
            assert_eq!(e[0].code, Code::PluginPathEscape, "{bad}: {e:?}");
            assert_eq!(e[0].line, Some(2), "{bad}");
        }
    }

    #[test]
    fn a_plugin_name_that_is_not_a_slug_is_refused() {
        let e = parse(r#"{"name":"Docs Plugin"}"#).unwrap_err();
        assert_eq!(e[0].code, Code::PluginNameInvalid);
        assert_eq!((e[0].line, e[0].column), (Some(1), Some(9)));
    }

    #[test]
    fn too_many_skills_paths_are_refused() {
        let many: Vec<String> = (0..=MAX_PLUGIN_SKILL_PATHS)
            .map(|i| format!("./s{i}"))
            .collect();
        let text = serde_json::json!({"name": "x", "skills": many}).to_string();
        assert_eq!(
            parse(&text).unwrap_err()[0].code,
            Code::PluginManifestInvalid
        );
    }

    #[test]
    fn a_huge_manifest_is_refused_without_being_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".claude-plugin")).unwrap();
        let big = format!(
            "{{\"name\":\"x\",\"description\":\"{}\"}}",
            "a".repeat(usize::try_from(MAX_PLUGIN_MANIFEST_BYTES).unwrap())
        );
        std::fs::write(dir.path().join(".claude-plugin/plugin.json"), big).unwrap();
        let e = read_plugin(dir.path()).unwrap().unwrap_err();
        assert_eq!(e[0].code, Code::FileTooLarge, "{e:?}");
    }

    #[test]
    fn a_skills_path_through_a_symlink_out_of_the_plugin_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let plugin = dir.path().join("p");
        std::fs::create_dir_all(plugin.join(".claude-plugin")).unwrap();
        std::fs::create_dir(dir.path().join("outside")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("outside"), plugin.join("link")).unwrap();
        std::fs::write(
            plugin.join(".claude-plugin/plugin.json"),
            r#"{"name":"p","skills":"./link"}"#,
        )
        .unwrap();
        let p = read_plugin(&plugin).unwrap().unwrap();
        let (paths, problems) = p.skill_paths();
        assert_eq!(paths, [plugin.join("skills")]);
        assert_eq!(problems[0].code, Code::PluginPathEscape);
    }
}
