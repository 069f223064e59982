//! `skilldeck new`: a new, valid skill folder.

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::spec::name::{NameCharset, SkillName};

/// The marker the scaffold writes where the author must write: the
/// description and the body's sections start with it. A skill still holding
/// it is unfinished: the `placeholder-text` lint, which defines it, looks
/// for it.
pub use crate::spec::lints::PLACEHOLDER_MARKER as SCAFFOLD_PLACEHOLDER;

/// The `SKILL.md` written for a new skill. Every text the author must
/// replace starts with [`SCAFFOLD_PLACEHOLDER`].
pub fn skill_md_template(name: &SkillName) -> String {
    let todo = SCAFFOLD_PLACEHOLDER;
    format!(
        r#"---
name: {name}
description: >-
  {todo} say in one or two sentences what {name} does and when to use it
  (the tasks, file types and keywords that should trigger it).
license: Apache-2.0
metadata:
  version: "0.1"
---

# {name}

## When to use

{todo} the situations where this skill applies, and the ones where it does not.

## Instructions

{todo} the steps, written as instructions to the agent. Put long reference
material in `references/` and scripts the agent can run in `scripts/`, and
link them from here.

## Examples

{todo} a short example request, and what a good result looks like.
"#
    )
}

/// Creates `parent/NAME/` with `SKILL.md` and empty `references/` and
/// `scripts/` folders (no placeholder files: they would be served as the
/// skill's resources). Refuses invalid names and existing folders. The folder is
/// built under a temporary name and renamed into place, so a failure never
/// leaves half a skill behind.
pub fn new_skill(parent: &Path, name: &str, charset: NameCharset) -> Result<PathBuf, Error> {
    let name = SkillName::with_charset(name, charset)?;
    let target = parent.join(name.as_str());
    if std::fs::symlink_metadata(&target).is_ok() {
        return Err(Error::AlreadyExists(target));
    }
    std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    let staging = parent.join(format!(".{}.skilldeck-new-{}", name, std::process::id()));
    let build = || -> std::io::Result<()> {
        std::fs::create_dir(&staging)?;
        std::fs::write(staging.join("SKILL.md"), skill_md_template(&name))?;
        for dir in ["references", "scripts"] {
            std::fs::create_dir(staging.join(dir))?;
        }
        Ok(())
    };
    if let Err(e) = build() {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(Error::io(&staging, e));
    }
    if std::fs::symlink_metadata(&target).is_ok() {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(Error::AlreadyExists(target));
    }
    if let Err(e) = std::fs::rename(&staging, &target) {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(Error::io(&target, e));
    }
    Ok(target)
}
