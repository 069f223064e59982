//! Marketplaces: Claude Code's `.claude-plugin/marketplace.json` and
//! Codex's `.agents/plugins/marketplace.json`, read as hostile input.
//!
//! A marketplace names plugins and where each one is: a folder inside the
//! marketplace's root (`"./plugins/pdf"`; Codex:
//! `{"source": "local", "path": "./plugins/pdf"}`), or a git repository
//! (`{"source": "github", "repo": "OWNER/REPO"}`, `{"source": "url",
//! "url": "https://HOST/REPO.git"}`, `{"source": "git-subdir", "url": ...,
//! "path": ...}`, each with an optional `ref` and `sha`). The root is the
//! folder that holds `.claude-plugin/` (Claude Code) or `.agents/`
//! (Codex). A local source that leaves the root is refused
//! (`plugin-path-escape`); a bad entry is left out with an error naming
//! it, the others stay usable.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::diagnostic::{Code, Diagnostic, Severity};
use crate::limits::{MAX_MARKETPLACE_BYTES, MAX_MARKETPLACE_PLUGINS};
use crate::plugin::manifest::{
    Plugin, PluginKind, PluginManifest, json_error, relative_path, shown, value_position,
};
use crate::spec::plugin_name::is_plugin_name;

/// `with_code`: the same diagnostic under another code.
trait Recode {
    fn with_code(self, code: Code) -> Self;
}

impl Recode for Diagnostic {
    fn with_code(mut self, code: Code) -> Self {
        self.code = code;
        self
    }
}

/// Where a marketplace entry's plugin is.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum PluginSource {
    /// A folder inside the marketplace root: the path relative to it,
    /// `/`-separated, checked (empty: the root itself).
    Local {
        /// The relative path.
        path: String,
    },
    /// A git repository.
    Git {
        /// The repository URL (`https://github.com/OWNER/REPO.git` for
        /// GitHub's `repo` shorthand).
        url: String,
        /// A branch or tag, when given.
        reference: Option<String>,
        /// A full commit id, when given (it wins over `reference`).
        sha: Option<String>,
        /// The plugin's folder inside the repository (`git-subdir`);
        /// empty: the repository's root.
        path: String,
    },
    /// A kind of source skilldeck does not fetch (`npm`, `pip`, ...).
    Unsupported {
        /// The kind as the marketplace names it.
        kind: String,
    },
}

/// One plugin a marketplace lists.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct MarketplaceEntry {
    /// The plugin's name.
    pub name: String,
    /// Where it is.
    pub source: PluginSource,
    /// The entry's `version`, when it has one.
    pub version: Option<String>,
    /// The entry's `description`, when it has one.
    pub description: Option<String>,
    /// The entry's own `skills` paths (Claude Code lets an entry define
    /// its plugin with `"strict": false`), checked like a manifest's.
    pub skills: Vec<String>,
}

impl MarketplaceEntry {
    /// The plugin in `dir` (this entry's folder): its manifest when it has
    /// one, else one made from the entry (Claude Code's `strict: false`
    /// plugins, and any plugin folder without a manifest).
    pub fn plugin_in(&self, dir: &Path, kind: PluginKind) -> Result<Plugin, Vec<Diagnostic>> {
        match crate::plugin::manifest::read_plugin(dir) {
            Some(result) => result,
            None => Ok(Plugin {
                dir: dir.to_path_buf(),
                manifest: PluginManifest {
                    kind,
                    name: self.name.clone(),
                    version: self.version.clone(),
                    description: self.description.clone(),
                    skills: self.skills.clone(),
                },
            }),
        }
    }
}

/// A marketplace file, read.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Marketplace {
    /// Which tool's marketplace it is.
    pub kind: PluginKind,
    /// Its `name`.
    pub name: String,
    /// The file.
    pub file: PathBuf,
    /// The folder local sources are relative to.
    pub root: PathBuf,
    /// The usable entries, in the file's order.
    pub plugins: Vec<MarketplaceEntry>,
}

impl Marketplace {
    /// The entry for plugin `name`.
    pub fn entry(&self, name: &str) -> Option<&MarketplaceEntry> {
        self.plugins.iter().find(|p| p.name == name)
    }

    /// The folder of a local entry: the root joined with its path.
    pub fn local_dir(&self, path: &str) -> PathBuf {
        if path.is_empty() {
            self.root.clone()
        } else {
            self.root.join(path)
        }
    }
}

/// The marketplace file of `location`: the file itself, or, for a folder,
/// the first of its Claude Code and Codex marketplace files that exists.
pub fn marketplace_file(location: &Path) -> Option<PathBuf> {
    if location.is_dir() {
        PluginKind::ALL
            .into_iter()
            .map(|k| location.join(k.marketplace_path()))
            .find(|f| std::fs::symlink_metadata(f).is_ok())
    } else {
        Some(location.to_path_buf())
    }
}

/// The kind and root of the marketplace file `file`, from where it is:
/// `ROOT/.claude-plugin/marketplace.json`, `ROOT/.agents/plugins/
/// marketplace.json`; any other place is Claude Code's format with the
/// file's folder as the root.
fn kind_and_root(file: &Path) -> (PluginKind, PathBuf) {
    let parent = file.parent().unwrap_or(Path::new("."));
    let name = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned());
    if name(parent).as_deref() == Some(".claude-plugin") {
        return (
            PluginKind::ClaudePlugin,
            parent.parent().unwrap_or(Path::new(".")).to_path_buf(),
        );
    }
    if name(parent).as_deref() == Some("plugins")
        && let Some(agents) = parent.parent()
        && name(agents).as_deref() == Some(".agents")
    {
        return (
            PluginKind::CodexPlugin,
            agents.parent().unwrap_or(Path::new(".")).to_path_buf(),
        );
    }
    (PluginKind::ClaudePlugin, parent.to_path_buf())
}

/// Reads the marketplace file `file` with the core's safe reader (a
/// regular file, at most [`MAX_MARKETPLACE_BYTES`], UTF-8) and parses it:
/// the marketplace and the problems of the entries left out, or why none
/// of it is usable.
pub fn read_marketplace(file: &Path) -> Result<(Marketplace, Vec<Diagnostic>), Vec<Diagnostic>> {
    let text =
        crate::fs::read::read_skill_md_capped(file, MAX_MARKETPLACE_BYTES).map_err(|d| vec![d])?;
    let (kind, root) = kind_and_root(file);
    parse_marketplace(&text, file, kind, &root)
}

fn invalid(file: &Path, text: &str, at: Option<&str>, message: String) -> Diagnostic {
    let mut d = Diagnostic::new(Code::MarketplaceInvalid, Severity::Error, message).in_file(file);
    if let Some(pos) = at.and_then(|v| value_position(text, v)) {
        d = d.at(pos);
    }
    d
}

/// Parses marketplace text (`file` names it, `root` is where local
/// sources are).
pub fn parse_marketplace(
    text: &str,
    file: &Path,
    kind: PluginKind,
    root: &Path,
) -> Result<(Marketplace, Vec<Diagnostic>), Vec<Diagnostic>> {
    let value: Value = serde_json::from_str(text).map_err(|e| {
        vec![json_error(
            Code::MarketplaceInvalid,
            file,
            "invalid marketplace file",
            &e,
        )]
    })?;
    let Some(top) = value.as_object() else {
        return Err(vec![invalid(
            file,
            text,
            None,
            "a marketplace file is a JSON object with \"name\" and \"plugins\"".into(),
        )]);
    };
    let name = top
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let Some(list) = top.get("plugins").and_then(Value::as_array) else {
        return Err(vec![invalid(
            file,
            text,
            None,
            "the marketplace has no \"plugins\" list".into(),
        )]);
    };
    if list.len() > MAX_MARKETPLACE_PLUGINS {
        return Err(vec![invalid(
            file,
            text,
            None,
            format!(
                "the marketplace lists {} plugins; at most {MAX_MARKETPLACE_PLUGINS} are read",
                list.len()
            ),
        )]);
    }
    // Claude Code: `metadata.pluginRoot` is prepended to bare relative
    // sources.
    let plugin_root = top
        .get("metadata")
        .and_then(|m| m.get("pluginRoot"))
        .and_then(Value::as_str)
        .map(|r| relative_path(r, true))
        .transpose()
        .map_err(|why| {
            vec![
                invalid(file, text, None, format!("metadata.pluginRoot {why}"))
                    .with_code(Code::PluginPathEscape),
            ]
        })?;
    let mut plugins = Vec::new();
    let mut problems = Vec::new();
    for (i, item) in list.iter().enumerate() {
        match parse_entry(item, text, file, plugin_root.as_deref()) {
            Ok(entry) => {
                if plugins
                    .iter()
                    .any(|p: &MarketplaceEntry| p.name == entry.name)
                {
                    problems.push(invalid(
                        file,
                        text,
                        Some(&entry.name),
                        format!("plugin '{}' is listed twice; the first is used", entry.name),
                    ));
                } else {
                    plugins.push(entry);
                }
            }
            Err(mut d) => {
                d.message = format!("plugins[{i}]: {}", d.message);
                problems.push(d);
            }
        }
    }
    Ok((
        Marketplace {
            kind,
            name,
            file: file.to_path_buf(),
            root: root.to_path_buf(),
            plugins,
        },
        problems,
    ))
}

fn parse_entry(
    item: &Value,
    text: &str,
    file: &Path,
    plugin_root: Option<&str>,
) -> Result<MarketplaceEntry, Diagnostic> {
    let name = item
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid(file, text, None, "an entry has no \"name\" string".into()))?;
    if !is_plugin_name(name) {
        return Err(invalid(
            file,
            text,
            Some(name),
            format!(
                "plugin name '{}' is not valid: 1 to 64 lowercase letters a-z, digits and \
                 single inner hyphens",
                shown(name)
            ),
        )
        .with_code(Code::PluginNameInvalid));
    }
    let str_field = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
    let escape = |p: &str, why: &str| {
        invalid(
            file,
            text,
            Some(p),
            format!(
                "plugin '{name}': the source path '{}' {why}: a local source stays inside the \
                 marketplace's folder",
                shown(p)
            ),
        )
        .with_code(Code::PluginPathEscape)
    };
    let source = match item.get("source") {
        Some(Value::String(p)) => {
            let path = relative_path(p, true).map_err(|why| escape(p, why))?;
            let bare = !p.starts_with("./") && !p.starts_with('.');
            let path = match plugin_root {
                Some(r) if bare && !r.is_empty() => format!("{r}/{path}"),
                _ => path,
            };
            PluginSource::Local { path }
        }
        Some(obj @ Value::Object(_)) => {
            let kind = str_field(obj, "source").unwrap_or_default();
            let reference = str_field(obj, "ref");
            let sha = str_field(obj, "sha");
            let git_url = |u: String| {
                if u.contains("://") || u.starts_with("git@") {
                    u
                } else {
                    // `OWNER/REPO` shorthand.
                    format!("https://github.com/{}.git", u.trim_end_matches(".git"))
                }
            };
            match kind.as_str() {
                "local" => {
                    let p = str_field(obj, "path").unwrap_or_default();
                    PluginSource::Local {
                        path: relative_path(&p, true).map_err(|why| escape(&p, why))?,
                    }
                }
                "github" => {
                    let repo = str_field(obj, "repo").ok_or_else(|| {
                        invalid(
                            file,
                            text,
                            Some(name),
                            format!(
                                "plugin '{name}': a github source needs \"repo\": \"OWNER/REPO\""
                            ),
                        )
                    })?;
                    PluginSource::Git {
                        url: git_url(repo),
                        reference,
                        sha,
                        path: String::new(),
                    }
                }
                "url" | "git" | "git-subdir" => {
                    let url = str_field(obj, "url")
                        .or_else(|| str_field(obj, "repo"))
                        .ok_or_else(|| {
                            invalid(
                                file,
                                text,
                                Some(name),
                                format!("plugin '{name}': a {kind} source needs \"url\""),
                            )
                        })?;
                    let path = match str_field(obj, "path") {
                        Some(p) => relative_path(&p, true).map_err(|why| escape(&p, why))?,
                        None => String::new(),
                    };
                    PluginSource::Git {
                        url: git_url(url),
                        reference,
                        sha,
                        path,
                    }
                }
                other => PluginSource::Unsupported { kind: shown(other) },
            }
        }
        _ => {
            return Err(invalid(
                file,
                text,
                Some(name),
                format!("plugin '{name}' has no \"source\" (a path or a source object)"),
            ));
        }
    };
    let mut skills = Vec::new();
    let listed = match item.get("skills") {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    };
    for p in listed.iter().take(crate::limits::MAX_PLUGIN_SKILL_PATHS) {
        skills.push(relative_path(p, false).map_err(|why| escape(p, why))?);
    }
    let clean = |s: Option<String>| s.map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
    Ok(MarketplaceEntry {
        name: name.to_owned(),
        source,
        version: clean(str_field(item, "version")),
        description: clean(str_field(item, "description")),
        skills,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<(Marketplace, Vec<Diagnostic>), Vec<Diagnostic>> {
        parse_marketplace(
            text,
            Path::new("m/.claude-plugin/marketplace.json"),
            PluginKind::ClaudePlugin,
            Path::new("m"),
        )
    }

    #[test]
    fn every_source_form_is_read() {
        let (m, problems) = parse(
            r#"{"name":"acme","owner":{"name":"A"},"metadata":{"pluginRoot":"./plugins"},
               "plugins":[
                 {"name":"local","source":"./plugins/local"},
                 {"name":"bare","source":"bare"},
                 {"name":"gh","source":{"source":"github","repo":"acme/gh","ref":"v1"}},
                 {"name":"url","source":{"source":"url","url":"https://git.example/x.git","sha":"0123456789012345678901234567890123456789"}},
                 {"name":"sub","source":{"source":"git-subdir","url":"acme/mono","path":"plugins/sub"}},
                 {"name":"codex","source":{"source":"local","path":"./plugins/codex"}},
                 {"name":"npm","source":{"source":"npm","package":"x"}}
               ]}"#,
        )
        .unwrap();
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(m.name, "acme");
        let src = |n: &str| m.entry(n).unwrap().source.clone();
        assert_eq!(
            src("local"),
            PluginSource::Local {
                path: "plugins/local".into()
            }
        );
        assert_eq!(
            src("bare"),
            PluginSource::Local {
                path: "plugins/bare".into()
            }
        );
        assert!(
            matches!(src("gh"), PluginSource::Git { url, reference: Some(r), .. }
            if url == "https://github.com/acme/gh.git" && r == "v1")
        );
        assert!(matches!(src("sub"), PluginSource::Git { url, path, .. }
            if url == "https://github.com/acme/mono.git" && path == "plugins/sub"));
        assert_eq!(
            src("codex"),
            PluginSource::Local {
                path: "plugins/codex".into()
            }
        );
        assert!(matches!(src("npm"), PluginSource::Unsupported { .. }));
    }

    #[test]
    fn a_local_source_that_leaves_the_root_is_refused_and_the_others_stay() {
        let (m, problems) = parse(
            "{\"name\":\"acme\",\"plugins\":[\n{\"name\":\"evil\",\"source\":\"../../etc\"},\n\
             {\"name\":\"good\",\"source\":\"./good\"}]}",
        )
        .unwrap();
        assert_eq!(m.plugins.len(), 1);
        assert_eq!(problems[0].code, Code::PluginPathEscape);
        assert_eq!(problems[0].line, Some(2));
    }

    #[test]
    fn a_marketplace_that_is_not_json_is_refused_at_its_position() {
        let e = parse("{\"name\": \"acme\",\n \"plugins\": [,]}").unwrap_err();
        assert_eq!(e[0].code, Code::MarketplaceInvalid);
        assert_eq!(e[0].line, Some(2));
        assert_eq!(parse("[]").unwrap_err()[0].code, Code::MarketplaceInvalid);
    }

    #[test]
    fn the_root_follows_the_files_place() {
        let (k, r) = kind_and_root(Path::new("/m/.agents/plugins/marketplace.json"));
        assert_eq!((k, r.as_path()), (PluginKind::CodexPlugin, Path::new("/m")));
        let (k, r) = kind_and_root(Path::new("/m/.claude-plugin/marketplace.json"));
        assert_eq!(
            (k, r.as_path()),
            (PluginKind::ClaudePlugin, Path::new("/m"))
        );
    }
}
