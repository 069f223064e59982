//! The example skills compiled into skilldeck, so a fresh install has
//! something to show.
//!
//! Agents read skill files by path, so the bundle is written once to a
//! versioned cache folder (`$XDG_CACHE_HOME/skilldeck/bundled-<version>-<hash>`,
//! else the system temp folder) and used from there like any other root.
//! The folder is built under a temporary name and renamed into place, so a
//! crash never leaves half a bundle; a complete one is never rewritten.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use include_dir::{Dir, DirEntry, include_dir};

use crate::error::Error;

static BUNDLE: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/../../examples/skills");

/// Every bundled file: path relative to the bundle root, and its bytes.
pub fn files() -> Vec<(&'static Path, &'static [u8])> {
    let mut out = Vec::new();
    collect(&BUNDLE, &mut out);
    out.sort_by(|a, b| a.0.cmp(b.0));
    out
}

fn collect(dir: &'static Dir<'static>, out: &mut Vec<(&'static Path, &'static [u8])>) {
    for entry in dir.entries() {
        match entry {
            DirEntry::Dir(d) => collect(d, out),
            DirEntry::File(f) => out.push((f.path(), f.contents())),
        }
    }
}

/// The names of the bundled skills (their top-level folders).
pub fn skill_names() -> Vec<String> {
    let mut names: Vec<String> = BUNDLE
        .dirs()
        .filter_map(|d| d.path().file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn fingerprint() -> String {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for (path, bytes) in files() {
        path.hash(&mut h);
        bytes.hash(&mut h);
    }
    format!("{:016x}", h.finish())
}

/// The folder holding the bundled skills on disk, written on first use.
pub fn materialize() -> Result<PathBuf, Error> {
    let name = format!("bundled-{}-{}", env!("CARGO_PKG_VERSION"), fingerprint());
    match materialize_in(&crate::fs::dirs::cache_dir(), &name) {
        Ok(path) => Ok(path),
        // Read-only home or cache: fall back to the temp folder.
        Err(_) => materialize_in(&std::env::temp_dir().join("skilldeck"), &name),
    }
}

fn materialize_in(base: &Path, name: &str) -> Result<PathBuf, Error> {
    let target = base.join(name);
    if target.join(".complete").is_file() {
        return Ok(target);
    }
    std::fs::create_dir_all(base).map_err(|e| Error::io(base, e))?;
    let staging = base.join(format!(".{name}.{}", std::process::id()));
    let write = || -> std::io::Result<()> {
        if staging.exists() {
            std::fs::remove_dir_all(&staging)?;
        }
        for (path, bytes) in files() {
            let dest = staging.join(path);
            if let Some(parent) = dest.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(&dest, bytes)?;
            if path.components().any(|c| c.as_os_str() == "scripts") {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&dest, std::fs::Permissions::from_mode(0o755))?;
            }
        }
        std::fs::write(staging.join(".complete"), "")?;
        Ok(())
    };
    if let Err(e) = write() {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(Error::io(&staging, e));
    }
    match std::fs::rename(&staging, &target) {
        Ok(()) => Ok(target),
        // Another process finished first: use its copy.
        Err(_) if target.join(".complete").is_file() => {
            let _ = std::fs::remove_dir_all(&staging);
            Ok(target)
        }
        Err(e) => {
            let _ = std::fs::remove_dir_all(&staging);
            Err(Error::io(&target, e))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundle_holds_the_example_skills() {
        let names = skill_names();
        assert!(names.contains(&"skill-authoring".to_owned()), "{names:?}");
        assert!(names.len() >= 3);
        assert!(files().iter().any(|(p, _)| p.ends_with("SKILL.md")));
    }

    #[test]
    fn materialize_writes_once_and_completely() {
        let tmp = tempfile::tempdir().unwrap();
        let a = materialize_in(tmp.path(), "b").unwrap();
        assert!(a.join(".complete").is_file());
        for (path, bytes) in files() {
            assert_eq!(std::fs::read(a.join(path)).unwrap(), bytes);
        }
        let b = materialize_in(tmp.path(), "b").unwrap();
        assert_eq!(a, b);
    }
}
