//! `skilldeck.toml`: project or user configuration.
//!
//! Looked up as `--config PATH`, else `./skilldeck.toml`, else
//! `$XDG_CONFIG_HOME/skilldeck/config.toml` (`~/.config/...` when unset).
//! Unknown keys are errors that name the key's line.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::Error;
use crate::name::NameCharset;
use crate::validate::{Mode, ValidationOptions};

/// The project config file name.
pub const CONFIG_FILE: &str = "skilldeck.toml";

/// Largest config file read (bytes).
pub const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// The whole config file.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Config {
    /// `[validate]`: validation defaults.
    #[serde(default)]
    pub validate: ValidateConfig,
}

/// `[validate]`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ValidateConfig {
    /// `mode = "strict" | "lenient"`.
    pub mode: Option<Mode>,
    /// `ascii-names = true` restricts names to `a-z0-9-`.
    pub ascii_names: Option<bool>,
    /// `allow-fields = ["argument-hint", ...]`: extra fields admitted in strict mode.
    #[serde(default)]
    pub allow_fields: Vec<String>,
    /// `max-skill-md-bytes = 1048576`: largest SKILL.md read.
    pub max_skill_md_bytes: Option<u64>,
}

impl Config {
    /// Parses config text; errors name `path` and the line of the problem.
    pub fn parse(text: &str, path: &Path) -> Result<Config, Error> {
        toml::from_str(text).map_err(|e| {
            let (line, column) = e
                .span()
                .map(|span| line_col(text, span.start))
                .unwrap_or((1, 1));
            Error::Config {
                path: path.to_path_buf(),
                line,
                column,
                message: e.message().trim().to_owned(),
            }
        })
    }

    /// Reads and parses `path`.
    pub fn load(path: &Path) -> Result<Config, Error> {
        use std::io::Read;
        let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        let mut text = String::new();
        file.take(MAX_CONFIG_BYTES)
            .read_to_string(&mut text)
            .map_err(|e| Error::io(path, e))?;
        Config::parse(&text, path)
    }

    /// Finds the config: `explicit` if given (it must exist), else the first
    /// of `./skilldeck.toml` and the user config that exists. `Ok(None)` when
    /// there is none.
    pub fn discover(explicit: Option<&Path>) -> Result<Option<(PathBuf, Config)>, Error> {
        if let Some(path) = explicit {
            return Config::load(path).map(|c| Some((path.to_path_buf(), c)));
        }
        let mut candidates = vec![PathBuf::from(CONFIG_FILE)];
        if let Some(dir) = user_config_dir() {
            candidates.push(dir.join("skilldeck").join("config.toml"));
        }
        for path in candidates {
            if path.is_file() {
                return Config::load(&path).map(|c| Some((path, c)));
            }
        }
        Ok(None)
    }

    /// Validation options from this config (command-line flags are applied
    /// on top by the caller).
    pub fn validation_options(&self) -> ValidationOptions {
        ValidationOptions {
            mode: self.validate.mode.unwrap_or_default(),
            charset: if self.validate.ascii_names == Some(true) {
                NameCharset::Ascii
            } else {
                NameCharset::Unicode
            },
            allowed_fields: self.validate.allow_fields.clone(),
            max_skill_md_bytes: self
                .validate
                .max_skill_md_bytes
                .unwrap_or(crate::limits::MAX_SKILL_MD_BYTES),
        }
    }
}

fn user_config_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
}

fn line_col(text: &str, offset: usize) -> (u32, u32) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (
        u32::try_from(line).unwrap_or(u32::MAX),
        u32::try_from(column).unwrap_or(u32::MAX),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_config_key_is_an_error_with_its_line() {
        let err = Config::parse(
            "[validate]\nmode = \"lenient\"\nallow-feilds = []\n",
            Path::new("s.toml"),
        )
        .unwrap_err();
        match err {
            Error::Config { line, message, .. } => {
                assert_eq!(line, 3);
                assert!(message.contains("allow-feilds"), "{message}");
            }
            other => panic!("{other}"),
        }
    }

    #[test]
    fn validate_section_sets_options() {
        let c = Config::parse(
            "[validate]\nmode = \"lenient\"\nascii-names = true\nallow-fields = [\"argument-hint\"]\n",
            Path::new("s.toml"),
        )
        .unwrap();
        let o = c.validation_options();
        assert_eq!(o.mode, Mode::Lenient);
        assert_eq!(o.charset, NameCharset::Ascii);
        assert_eq!(o.allowed_fields, vec!["argument-hint".to_owned()]);
    }
}
