//! Where skilldeck keeps its files, per the XDG base directory rules: the
//! user config (`$XDG_CONFIG_HOME`, else `~/.config`), caches
//! (`$XDG_CACHE_HOME/skilldeck`, else `~/.cache/skilldeck`), data
//! (`$XDG_DATA_HOME/skilldeck`, else `~/.local/share/skilldeck`) and state
//! (`$XDG_STATE_HOME/skilldeck`, else `~/.local/state/skilldeck`). An empty
//! variable counts as unset, as the specification says.

use std::ffi::OsString;
use std::path::PathBuf;

fn var(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|v: &OsString| !v.is_empty())
        .map(PathBuf::from)
}

/// The user's config home: `$XDG_CONFIG_HOME`, else `~/.config`; `None`
/// without either (no user config is read then).
pub fn config_home() -> Option<PathBuf> {
    var("XDG_CONFIG_HOME").or_else(|| home().map(|h| h.join(".config")))
}

/// skilldeck's cache folder: `$XDG_CACHE_HOME/skilldeck`, else
/// `~/.cache/skilldeck`, else under the temporary folder.
pub fn cache_dir() -> PathBuf {
    var("XDG_CACHE_HOME")
        .or_else(|| home().map(|h| h.join(".cache")))
        .unwrap_or_else(std::env::temp_dir)
        .join("skilldeck")
}

/// skilldeck's state folder: `$XDG_STATE_HOME/skilldeck`, else
/// `~/.local/state/skilldeck`, else under the temporary folder.
pub fn state_dir() -> PathBuf {
    var("XDG_STATE_HOME")
        .or_else(|| home().map(|h| h.join(".local/state")))
        .unwrap_or_else(std::env::temp_dir)
        .join("skilldeck")
}

/// skilldeck's data folder: `$XDG_DATA_HOME/skilldeck`, else
/// `~/.local/share/skilldeck`, else under the temporary folder.
pub fn data_dir() -> PathBuf {
    var("XDG_DATA_HOME")
        .or_else(|| home().map(|h| h.join(".local/share")))
        .unwrap_or_else(std::env::temp_dir)
        .join("skilldeck")
}
