//! Layered configuration: the user's file and the project's, merged key by
//! key, the project winning, as Claude Code and Codex merge theirs.
//!
//! - **Which files**: `--config FILE` alone when given (nothing merged);
//!   else the user file (`$XDG_CONFIG_HOME/skilldeck/config.toml`) under
//!   the project file (`./skilldeck.toml`), each only when it exists
//!   ([`Config::candidates`] lists them, highest precedence first).
//! - **How**: each file is parsed and checked alone first (an error names
//!   its file, line and column); its relative paths are made absolute
//!   against its own folder ([`PATH_KEYS`]), so a merged value keeps
//!   pointing where its file meant; then tables merge recursively and any
//!   other value (a number, a string, an array) of the project replaces
//!   the user's whole.
//! - **What it shows**: [`ConfigLayers::origins`] names the file each key
//!   came from (`skilldeck doctor` prints them).
//!
//! Rejected: merging arrays (a project could then never remove a user
//! root, and two files' `[[skill]]` lists would interleave); reading only
//! the first file found (the behaviour before: a project file silently
//! dropped every user setting, e.g. the user's `[exec]` limits).

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::deck::config::{Config, MAX_CONFIG_BYTES};
use crate::error::Error;

/// The keys whose values are paths (relative to the file that sets them):
/// made absolute before files merge. A dotted path; `*` is any key of a
/// table, `[]` each element of an array.
pub const PATH_KEYS: &[&str] = &[
    "roots[]",
    "skill[].path",
    "discovery.managed[]",
    "exec.skills.*.read[]",
    "environments.find-links[]",
    "environments.uv",
    "environments.python",
    "environments.npm",
    "environments.node",
    "environments.npm-cache",
    "registry.ui.oidc.client-secret-file",
];

/// The configuration in force and where it came from.
#[derive(Debug, Clone)]
pub struct ConfigLayers {
    /// The files read, lowest precedence first (user, then project; or the
    /// one `--config` named).
    pub files: Vec<PathBuf>,
    /// The merged configuration.
    pub config: Config,
    /// Each key set by a file (dotted, `catalog.budget-tokens`) and the
    /// file whose value is in force.
    pub origins: BTreeMap<String, PathBuf>,
}

impl ConfigLayers {
    /// The file of highest precedence read.
    pub fn top(&self) -> Option<&Path> {
        self.files.last().map(PathBuf::as_path)
    }
}

fn read_text(path: &Path) -> Result<String, Error> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut text = String::new();
    file.take(MAX_CONFIG_BYTES)
        .read_to_string(&mut text)
        .map_err(|e| Error::io(path, e))?;
    Ok(text)
}

/// `path`'s folder, or `.` for a bare file name.
fn folder_of(path: &Path) -> PathBuf {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// Makes the string at each [`PATH_KEYS`] location in `table` absolute
/// against `base` (a path already absolute is kept).
fn absolutize(table: &mut toml::Table, base: &Path) {
    for key in PATH_KEYS {
        let parts: Vec<&str> = key.split('.').collect();
        absolutize_at(table, &parts, base);
    }
}

fn absolutize_at(table: &mut toml::Table, parts: &[&str], base: &Path) {
    let Some((first, rest)) = parts.split_first() else {
        return;
    };
    let (name, each) = match first.strip_suffix("[]") {
        Some(name) => (name, true),
        None => (*first, false),
    };
    let keys: Vec<String> = if name == "*" {
        table.keys().cloned().collect()
    } else {
        vec![name.to_owned()]
    };
    for key in keys {
        let Some(value) = table.get_mut(&key) else {
            continue;
        };
        let values: Vec<&mut toml::Value> = match (each, value) {
            (true, toml::Value::Array(items)) => items.iter_mut().collect(),
            (true, _) => continue,
            (false, v) => vec![v],
        };
        for v in values {
            match v {
                toml::Value::String(s) if rest.is_empty() => {
                    let path = Path::new(s.as_str());
                    if !path.is_absolute() {
                        *s = base.join(path).to_string_lossy().into_owned();
                    }
                }
                toml::Value::Table(t) => absolutize_at(t, rest, base),
                _ => {}
            }
        }
    }
}

/// Merges `over` into `under`: tables recursively, anything else replaced
/// whole; every key `over` sets is recorded in `origins` as `file`'s.
fn merge(
    under: &mut toml::Table,
    over: toml::Table,
    prefix: &str,
    file: &Path,
    origins: &mut BTreeMap<String, PathBuf>,
) {
    for (key, value) in over {
        let dotted = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        match (under.get_mut(&key), value) {
            (Some(toml::Value::Table(low)), toml::Value::Table(high)) => {
                merge(low, high, &dotted, file, origins);
            }
            (_, value) => {
                origins.retain(|k, _| !(k == &dotted || k.starts_with(&format!("{dotted}."))));
                record(&value, &dotted, file, origins);
                under.insert(key, value);
            }
        }
    }
}

/// Records `value` (and, for a table, each of its keys) as set by `file`.
fn record(value: &toml::Value, dotted: &str, file: &Path, origins: &mut BTreeMap<String, PathBuf>) {
    match value {
        toml::Value::Table(t) if !t.is_empty() => {
            for (k, v) in t {
                record(v, &format!("{dotted}.{k}"), file, origins);
            }
        }
        _ => {
            origins.insert(dotted.to_owned(), file.to_path_buf());
        }
    }
}

impl Config {
    /// The configuration in force: `explicit` alone when given (it must
    /// exist); else the user file under the project file, merged (see the
    /// module documentation). `Ok(None)` when no file exists.
    pub fn discover_layers(explicit: Option<&Path>) -> Result<Option<ConfigLayers>, Error> {
        let files: Vec<PathBuf> = match explicit {
            Some(path) => vec![path.to_path_buf()],
            None => Config::candidates(None)
                .into_iter()
                .rev()
                .filter(|p| p.is_file())
                .collect(),
        };
        Config::merge_files(&files)
    }

    /// Reads and merges `files`, lowest precedence first (each checked
    /// alone first, so an error names its file and line).
    pub fn merge_files(files: &[PathBuf]) -> Result<Option<ConfigLayers>, Error> {
        let Some(top) = files.last() else {
            return Ok(None);
        };
        let mut merged = toml::Table::new();
        let mut origins = BTreeMap::new();
        let mut single = None;
        for path in files {
            let text = read_text(path)?;
            // Checked alone: unknown keys and bad values are reported with
            // this file's line and column.
            let config = Config::parse(&text, path)?;
            if files.len() == 1 {
                single = Some(config);
            }
            let mut table: toml::Table =
                text.parse().map_err(|e: toml::de::Error| Error::Config {
                    path: path.clone(),
                    line: 1,
                    column: 1,
                    message: e.message().trim().to_owned(),
                })?;
            absolutize(&mut table, &folder_of(path));
            merge(&mut merged, table, "", path, &mut origins);
        }
        let config = match single {
            // One file: exactly what it says (relative paths resolved
            // against its folder by `Config::resolve`).
            Some(config) => config,
            None => {
                let mut config = Config::deserialize(merged).map_err(|e| Error::Config {
                    path: top.clone(),
                    line: 1,
                    column: 1,
                    message: format!(
                        "the merged configuration of {} is not valid: {}",
                        files
                            .iter()
                            .map(|f| f.display().to_string())
                            .collect::<Vec<_>>()
                            .join(" and "),
                        e.message().trim()
                    ),
                })?;
                config.base_dir = folder_of(top);
                config
            }
        };
        Ok(Some(ConfigLayers {
            files: files.to_vec(),
            config,
            origins,
        }))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        std::fs::create_dir_all(dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn the_project_file_wins_key_by_key_and_the_user_file_fills_the_rest() {
        let tmp = tempfile::tempdir().unwrap();
        let user = write(
            &tmp.path().join("user"),
            "config.toml",
            "roots = [\"mine\"]\n[catalog]\nbudget-tokens = 900\nformat = \"markdown\"\n\
             [exec]\ntimeout-secs = 9\n[exec.skills.web]\nread = [\"data\"]\n",
        );
        let project = write(
            &tmp.path().join("proj"),
            "skilldeck.toml",
            "[catalog]\nbudget-tokens = 2000\n[discovery]\nuser = false\n",
        );
        let layers = Config::merge_files(&[user.clone(), project.clone()])
            .unwrap()
            .unwrap();
        let c = &layers.config;
        assert_eq!(c.catalog.budget_tokens, Some(2000), "project wins");
        assert_eq!(c.catalog.format.as_deref(), Some("markdown"), "user fills");
        assert_eq!(c.exec.timeout_secs, 9);
        assert!(!c.discovery.user);
        // The user's relative paths still point into the user's folder.
        assert_eq!(c.roots, [tmp.path().join("user/mine")]);
        assert_eq!(c.resolve(&c.roots[0]), tmp.path().join("user/mine"));
        assert_eq!(c.exec.grant("web").read, [tmp.path().join("user/data")]);
        assert_eq!(layers.origins["catalog.budget-tokens"], project);
        assert_eq!(layers.origins["catalog.format"], user);
        assert_eq!(layers.origins["exec.skills.web.read"], user);
        assert_eq!(layers.top(), Some(project.as_path()));
    }

    #[test]
    fn an_array_of_the_project_replaces_the_users_whole() {
        let tmp = tempfile::tempdir().unwrap();
        let user = write(&tmp.path().join("u"), "c.toml", "roots = [\"a\", \"b\"]\n");
        let project = write(&tmp.path().join("p"), "c.toml", "roots = [\"c\"]\n");
        let layers = Config::merge_files(&[user, project.clone()])
            .unwrap()
            .unwrap();
        assert_eq!(layers.config.roots, [tmp.path().join("p/c")]);
        assert_eq!(layers.origins["roots"], project);
    }

    #[test]
    fn a_bad_key_in_either_file_is_reported_with_that_files_line() {
        let tmp = tempfile::tempdir().unwrap();
        let user = write(
            &tmp.path().join("u"),
            "c.toml",
            "[catalog]\n\nbudget-tokns = 5\n",
        );
        let project = write(
            &tmp.path().join("p"),
            "c.toml",
            "[catalog]\nbudget-tokens = 5\n",
        );
        match Config::merge_files(&[user.clone(), project]).unwrap_err() {
            Error::Config { path, line, .. } => {
                assert_eq!(path, user);
                assert_eq!(line, 3);
            }
            other => panic!("{other}"),
        }
    }

    #[test]
    fn one_file_is_read_as_written() {
        let tmp = tempfile::tempdir().unwrap();
        let only = write(tmp.path(), "skilldeck.toml", "roots = [\"rel\"]\n");
        let layers = Config::merge_files(std::slice::from_ref(&only))
            .unwrap()
            .unwrap();
        assert_eq!(layers.config.roots, [PathBuf::from("rel")]);
        assert_eq!(
            layers.config.resolve(&layers.config.roots[0]),
            tmp.path().join("rel")
        );
        assert!(Config::merge_files(&[]).unwrap().is_none());
    }
}
