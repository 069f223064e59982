//! The SKILL.md parser and validator on arbitrary bytes: the input is the
//! text of a SKILL.md.
//!
//! 1. `check_text` in strict and lenient mode, without a folder;
//! 2. the same bytes as `SKILL.md` in a skill folder (named after the
//!    input's `name:` line when that is a usable file name, so the
//!    folder-name rule and the link lints run on both outcomes, beside a
//!    script and a reference a body may link to): `validate_dir`, then
//!    discovery of that root, the catalog of what loaded, and the
//!    activation of every loaded skill with arguments taken from the input.
//!
//! Nothing may panic; every outcome (diagnostics, a refusal) is fine, as
//! long as discovery and lenient validation agree: an error that makes
//! discovery refuse the skill is an error of lenient validation too, with
//! the same code, whatever follows the frontmatter.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use skilldeck::{
    CatalogOptions, DiscoveryOptions, ValidationOptions, activate, check_text, discover,
    render_catalog, validate_dir,
};

/// The folder's name: the input's `name:` value when it is one path
/// component other than the skill file's name, else a fixed one.
fn folder_name(data: &[u8]) -> String {
    let text = String::from_utf8_lossy(data);
    let named = text
        .lines()
        .find_map(|l| l.strip_prefix("name:"))
        .map(|v| v.trim().trim_matches(|c| c == '"' || c == '\'').to_owned());
    match named {
        Some(n)
            if !n.is_empty()
                && n.len() <= 200
                && n != "."
                && n != ".."
                // A folder named like the skill file makes the root a
                // skill folder of its own, whose `SKILL.md` is a folder.
                && !n.eq_ignore_ascii_case("SKILL.md")
                && !n.contains(['/', '\0']) =>
        {
            n
        }
        _ => "fuzz-skill".to_owned(),
    }
}

fn in_a_folder(data: &[u8]) {
    let Ok(root) = tempfile::tempdir() else {
        return;
    };
    let dir = root.path().join(folder_name(data));
    if std::fs::create_dir(&dir).is_err() {
        return;
    }
    let written = std::fs::write(dir.join("SKILL.md"), data).is_ok()
        && std::fs::create_dir(dir.join("scripts")).is_ok()
        && std::fs::write(dir.join("scripts/run.sh"), "#!/bin/sh\necho hi\n").is_ok()
        && std::fs::create_dir(dir.join("references")).is_ok()
        && std::fs::write(dir.join("references/guide.md"), "# Guide\n").is_ok();
    if !written {
        return;
    }
    let _ = validate_dir(&dir, &ValidationOptions::strict());
    let lenient = validate_dir(&dir, &ValidationOptions::lenient());
    let deck = discover(&DiscoveryOptions::with_roots([root.path().to_path_buf()]));
    // One rule, one place: what makes discovery refuse the skill is an
    // error of lenient validation ("load like a host") too, with the same
    // code. Not the other way round: discovery reads only the frontmatter,
    // so a body that is not UTF-8 loads. A file that is not text past its
    // frontmatter has its frontmatter checked by validation all the same.
    let errors: Vec<_> = lenient
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .collect();
    for refused in deck.diagnostics().iter().filter(|d| d.is_error()) {
        assert!(
            errors.iter().any(|d| d.code == refused.code),
            "discovery refused the skill with {refused:?}; lenient validation said {:?}",
            lenient.diagnostics
        );
    }
    let _ = render_catalog(deck.skills(), &CatalogOptions::default(), None);
    let arguments = String::from_utf8_lossy(&data[..data.len().min(64)]);
    for skill in deck.skills() {
        let _ = skill.frontmatter();
        let _ = activate(skill, &arguments);
    }
    check_outside(root.path(), &dir);
}

/// Validation and activation read; they never write into the folder.
fn check_outside(root: &Path, dir: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        assert_eq!(entry.path(), dir, "a file appeared beside the skill folder");
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = check_text(text, None, &ValidationOptions::strict());
        let _ = check_text(text, None, &ValidationOptions::lenient());
    }
    in_a_folder(data);
});
