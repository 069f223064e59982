//! The naming rule of plugin skills, once.
//!
//! A skill that comes with a plugin is named `PLUGIN:SKILL`, as Claude Code
//! and Codex show it (`document-skills:pdf`): the plugin's name, a `:`, the
//! skill's own name. That is the name a deck holds, a catalog shows, and
//! `show`, `activate` and `activate_skill` take. A `:` is never part of a
//! valid skill name, so a plugin skill never takes a standalone skill's
//! name: `pdf` and `document-skills:pdf` are two skills.
//!
//! Where a name must be an identifier (`[A-Za-z0-9_-]`: tool names, which
//! many model APIs restrict to that set, URI authorities, file names on
//! every system), the `:` is written `__` ([`identifier`]):
//! `document-skills__pdf`. A valid skill name never holds `_`, so the
//! identifier is unambiguous and [`from_identifier`] gives the name back.

use std::borrow::Cow;

use crate::limits::MAX_NAME_CHARS;
use crate::spec::slug::is_slug;

/// Between a plugin's name and its skill's name: `document-skills:pdf`.
pub const PLUGIN_SEPARATOR: char = ':';

/// The [`PLUGIN_SEPARATOR`] where a name must be an identifier.
pub const IDENTIFIER_SEPARATOR: &str = "__";

/// The name of skill `skill` of plugin `plugin`: `plugin:skill`.
pub fn qualified_name(plugin: &str, skill: &str) -> String {
    let mut out = String::with_capacity(plugin.len() + 1 + skill.len());
    out.push_str(plugin);
    out.push(PLUGIN_SEPARATOR);
    out.push_str(skill);
    out
}

/// `(plugin, skill)` of a plugin skill's name; `None` for a name without
/// a plugin (or with an empty part).
pub fn split_qualified(name: &str) -> Option<(&str, &str)> {
    let (plugin, skill) = name.split_once(PLUGIN_SEPARATOR)?;
    (!plugin.is_empty() && !skill.is_empty() && !skill.contains(PLUGIN_SEPARATOR))
        .then_some((plugin, skill))
}

/// True when `name` is a valid plugin name: a slug of at most
/// [`MAX_NAME_CHARS`] characters (`a-z`, `0-9`, single inner hyphens), as
/// Claude Code and Codex require (they use it as a namespace).
pub fn is_plugin_name(name: &str) -> bool {
    is_slug(name, MAX_NAME_CHARS)
}

/// `name` as an identifier: a plugin skill's `:` written
/// [`IDENTIFIER_SEPARATOR`] (`document-skills:pdf` →
/// `document-skills__pdf`); other names unchanged (borrowed).
pub fn identifier(name: &str) -> Cow<'_, str> {
    if name.contains(PLUGIN_SEPARATOR) {
        Cow::Owned(name.replace(PLUGIN_SEPARATOR, IDENTIFIER_SEPARATOR))
    } else {
        Cow::Borrowed(name)
    }
}

/// The name an [`identifier`] stands for (`document-skills__pdf` →
/// `document-skills:pdf`); other texts unchanged (borrowed).
pub fn from_identifier(text: &str) -> Cow<'_, str> {
    match text.split_once(IDENTIFIER_SEPARATOR) {
        Some((plugin, skill)) if !plugin.is_empty() && !skill.is_empty() => {
            Cow::Owned(qualified_name(plugin, skill))
        }
        _ => Cow::Borrowed(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plugin_skill_is_named_plugin_colon_skill() {
        assert_eq!(
            qualified_name("document-skills", "pdf"),
            "document-skills:pdf"
        );
        assert_eq!(
            split_qualified("document-skills:pdf"),
            Some(("document-skills", "pdf"))
        );
        assert_eq!(split_qualified("pdf"), None);
        assert_eq!(split_qualified(":pdf"), None);
        assert_eq!(split_qualified("a:b:c"), None);
    }

    #[test]
    fn the_identifier_form_round_trips_and_is_identifier_safe() {
        let id = identifier("document-skills:pdf");
        assert_eq!(id, "document-skills__pdf");
        assert!(
            id.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        );
        assert_eq!(from_identifier(&id), "document-skills:pdf");
        assert!(matches!(identifier("pdf"), Cow::Borrowed("pdf")));
        assert!(matches!(from_identifier("pdf-tools"), Cow::Borrowed(_)));
    }

    #[test]
    fn a_plugin_name_is_a_slug() {
        assert!(is_plugin_name("document-skills"));
        for bad in [
            "",
            "Doc",
            "a--b",
            "-a",
            "a b",
            "a:b",
            "a/b",
            &"a".repeat(65),
        ] {
            assert!(!is_plugin_name(bad), "{bad}");
        }
    }
}
