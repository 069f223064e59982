//! The rules an entry's path must pass, the same for an archive entry and
//! a file of a folder being packed or installed.

use std::collections::HashSet;
use std::path::Path;

use skilldeck::{Code, Diagnostic, Severity};

use crate::limits::{MAX_ENTRY_DEPTH, MAX_ENTRY_PATH_BYTES};

/// A refusal about the entry `entry` of `package`.
pub fn refusal(code: Code, package: &Path, entry: &str, why: &str) -> Diagnostic {
    Diagnostic::new(
        code,
        Severity::Error,
        format!("entry \"{}\": {why}", entry.escape_debug()),
    )
    .in_file(package)
}

/// The entry's path, `/`-separated and relative, when it is safe: UTF-8,
/// not absolute (nor a `C:` drive), no `..`, `.` or empty component (a
/// leading `./` is dropped), no backslash, NUL or control character, at
/// most [`MAX_ENTRY_PATH_BYTES`] bytes and [`MAX_ENTRY_DEPTH`] deep. A
/// trailing `/` (a folder entry) is dropped. Otherwise the reason.
pub fn check_entry_path(raw: &[u8]) -> Result<String, &'static str> {
    let text = std::str::from_utf8(raw).map_err(|_| "the path is not UTF-8")?;
    if text.contains('\0') {
        return Err("the path holds a NUL byte");
    }
    if skilldeck::spec::has_control(text, true) {
        return Err("the path holds a control character");
    }
    if text.contains('\\') {
        return Err("the path holds a backslash");
    }
    if text.starts_with('/') {
        return Err("the path is absolute");
    }
    if text.len() > MAX_ENTRY_PATH_BYTES {
        return Err("the path is too long");
    }
    let bytes = text.as_bytes();
    if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
        return Err("the path starts with a drive letter");
    }
    let mut rest = text;
    while let Some(r) = rest.strip_prefix("./") {
        rest = r;
    }
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    if rest.is_empty() {
        return Err("the path is empty");
    }
    let mut depth = 0;
    for part in rest.split('/') {
        match part {
            "" => return Err("the path has an empty component"),
            "." => return Err("the path has a '.' component"),
            ".." => return Err("the path leaves the package ('..')"),
            _ => depth += 1,
        }
    }
    if depth > MAX_ENTRY_DEPTH {
        return Err("the path is nested too deep");
    }
    Ok(rest.to_owned())
}

/// The names seen so far, to refuse duplicates, names equal but for letter
/// case or Unicode normalisation (they collide on macOS and Windows, and
/// look the same everywhere: `café` composed and decomposed), and a file
/// where a folder is (or the reverse).
#[derive(Debug, Default)]
pub struct NameSet {
    files: HashSet<String>,
    dirs: HashSet<String>,
}

/// The core's look-alike key: NFKC, case folded, without invisible
/// characters.
fn fold(path: &str) -> String {
    skilldeck::spec::lookalike_key(path)
}

impl NameSet {
    /// Records the file `path`, or says why it collides.
    pub fn add_file(&mut self, path: &str) -> Result<(), &'static str> {
        let key = fold(path);
        if self.files.contains(&key) {
            return Err(
                "a second entry with this name (or one that looks the same: other letter case or Unicode normalisation)",
            );
        }
        if self.dirs.contains(&key) {
            return Err("a file where another entry has a folder");
        }
        self.add_parents(&key)?;
        self.files.insert(key);
        Ok(())
    }

    /// Records the folder `path`, or says why it collides.
    pub fn add_dir(&mut self, path: &str) -> Result<(), &'static str> {
        let key = fold(path);
        if self.files.contains(&key) {
            return Err("a folder where another entry has a file");
        }
        self.add_parents(&key)?;
        self.dirs.insert(key);
        Ok(())
    }

    fn add_parents(&mut self, key: &str) -> Result<(), &'static str> {
        let mut end = 0;
        while let Some(i) = key[end..].find('/') {
            let parent = &key[..end + i];
            if self.files.contains(parent) {
                return Err("a folder where another entry has a file");
            }
            self.dirs.insert(parent.to_owned());
            end += i + 1;
        }
        Ok(())
    }
}

/// True when `name` can be a skill folder's name: one safe component that
/// does not start with `.` (those are skilldeck's own leftovers).
pub fn is_safe_skill_dir_name(name: &str) -> bool {
    !name.starts_with('.') && !name.contains('/') && check_entry_path(name.as_bytes()).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsafe_paths_are_refused() {
        for bad in [
            "../../x",
            "/etc/passwd",
            "a/../b",
            "a\\..\\b",
            "a\0b",
            "C:/x",
            "a//b",
            "a/./b",
            "",
            "a\u{1b}b",
        ] {
            assert!(check_entry_path(bad.as_bytes()).is_err(), "{bad:?}");
        }
        assert!(check_entry_path(b"\xff").is_err());
    }

    #[test]
    fn an_entry_path_with_a_bidi_control_or_a_line_break_is_refused_by_the_core_rule() {
        // `run\u{202e}hs.md` shows as `rundm.sh` in a terminal.
        for bad in [
            "scripts/run\u{202e}hs.md",
            "a\u{2066}b",
            "a\nb",
            "a\tb",
            "a\u{85}b",
        ] {
            assert_eq!(
                check_entry_path(bad.as_bytes()),
                Err("the path holds a control character"),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn a_leading_dot_slash_and_a_trailing_slash_are_dropped() {
        assert_eq!(check_entry_path(b"./a/b.md").as_deref(), Ok("a/b.md"));
        assert_eq!(check_entry_path(b"a/").as_deref(), Ok("a"));
        assert_eq!(check_entry_path(b".hidden").as_deref(), Ok(".hidden"));
    }

    #[test]
    fn duplicate_and_case_colliding_names_are_refused() {
        let mut set = NameSet::default();
        assert!(set.add_file("a/SKILL.md").is_ok());
        assert!(set.add_file("a/SKILL.md").is_err());
        assert!(set.add_file("a/skill.md").is_err());
        assert!(set.add_file("A").is_err());
        assert!(set.add_file("a/SKILL.md/x").is_err());
        assert!(set.add_dir("a").is_ok());
    }

    #[test]
    fn names_equal_after_unicode_normalisation_are_refused() {
        let mut set = NameSet::default();
        assert!(set.add_file("caf\u{e9}.md").is_ok());
        assert!(set.add_file("cafe\u{301}.md").is_err(), "decomposed");
        assert!(set.add_file("CAF\u{c9}.md").is_err(), "other case");
        assert!(
            set.add_file("caf\u{200b}\u{e9}.md").is_err(),
            "zero-width space"
        );
        assert!(set.add_file("\u{fb01}le.md").is_ok());
        assert!(set.add_file("file.md").is_err(), "compatibility ligature");
    }
}
