//! [`Item`]: one skill prepared for rendering (its texts, what needs
//! escaping, its rank).

use std::borrow::Cow;
use std::collections::HashMap;

use crate::catalog::format::CatalogFormat;
use crate::catalog::hints::hint;
use crate::catalog::text::all_ascii;
use crate::catalog::text::collapse_whitespace;
use crate::catalog::text::path_text;
use crate::catalog::text::python_strip;
use crate::skill::{Skill, SkillMode};
use crate::spec::control::one_line_without_controls;

/// One skill that may appear in the catalog, prepared for rendering.
pub(super) struct Item<'a> {
    pub(super) skill: &'a Skill,
    /// Position in the caller's list.
    pub(super) input: usize,
    /// The description as rendered (stripped; one line for markdown).
    pub(super) desc: Cow<'a, str>,
    pub(super) location: Cow<'a, str>,
    /// Name, description and location are all ASCII.
    pub(super) ascii: bool,
    /// Which of name, description and location need no escaping in this
    /// format ([`PLAIN_NAME`], [`PLAIN_DESC`], [`PLAIN_LOCATION`]).
    pub(super) plain: u8,
    pub(super) relevance: Option<f64>,
    /// Operator priority (`[catalog.priority]`; 0 when unset).
    pub(super) priority: i64,
    /// Recent activations (0 when unknown).
    pub(super) uses: u64,
}

pub(super) const PLAIN_NAME: u8 = 1;
pub(super) const PLAIN_DESC: u8 = 2;
pub(super) const PLAIN_LOCATION: u8 = 4;

impl<'a> Item<'a> {
    pub(super) fn new(
        skill: &'a Skill,
        input: usize,
        format: CatalogFormat,
        relevance: Option<&HashMap<String, f64>>,
        locations: bool,
    ) -> Self {
        let hints = skill.host.catalog_hints();
        let has = |bits: u16| hints & bits == bits;
        let stripped = if has(hint::DESC_STRIPPED) {
            skill.description.as_str()
        } else {
            python_strip(&skill.description)
        };
        let desc = if format == CatalogFormat::Markdown && !has(hint::DESC_ONE_LINE) {
            collapse_whitespace(stripped)
        } else {
            Cow::Borrowed(stripped)
        };
        // Whether the location holds a control character was checked once,
        // when the deck was built (the hint): a render does not scan again.
        let clean = has(hint::KNOWN | hint::LOCATION_CLEAN);
        // Empty: not shown (a real path is never empty).
        let location = if !locations && format != CatalogFormat::SkillsRef {
            Cow::Borrowed("")
        } else if format == CatalogFormat::SkillsRef {
            // skills-ref prints `Path(dir).resolve() / "SKILL.md"`.
            match skill.skill_md.file_name() {
                Some(file) => {
                    let dir = skill.real_dir().to_string_lossy();
                    let file = file.to_string_lossy();
                    let mut path = String::with_capacity(dir.len() + file.len() + 1);
                    path.push_str(&dir);
                    if !path.ends_with(std::path::MAIN_SEPARATOR) {
                        path.push(std::path::MAIN_SEPARATOR);
                    }
                    path.push_str(&file);
                    Cow::Owned(path)
                }
                None => path_text(&skill.skill_md),
            }
        } else {
            path_text(&skill.skill_md)
        };
        let location = if clean {
            location
        } else {
            one_line_without_controls(location)
        };
        let relevance = relevance.map(|scores| {
            scores
                .get(&skill.name)
                .copied()
                .filter(|s| !s.is_nan())
                .unwrap_or(0.0)
        });
        // What the hints say of each text (all zero when there are none).
        let known = |text: u32, bits: u16| has(hint::KNOWN | (bits << text));
        let ascii = if has(hint::KNOWN) {
            known(hint::NAME, hint::ASCII)
                && known(hint::DESC, hint::ASCII)
                && if format == CatalogFormat::SkillsRef {
                    all_ascii(&location)
                } else {
                    known(hint::LOCATION, hint::ASCII)
                }
        } else {
            all_ascii(&skill.name) && all_ascii(&desc) && all_ascii(&location)
        };
        let (name_bit, desc_bit, location_bit) = match format {
            CatalogFormat::Xml => (hint::XML, hint::XML, hint::XML),
            // Raw locations are never escaped; Markdown names and code
            // spans have their own escapes (0: never plain).
            CatalogFormat::SkillsRef => (hint::XML, hint::XML, 0),
            CatalogFormat::Markdown => (0, hint::XML, 0),
            CatalogFormat::Json => (hint::JSON, hint::JSON, hint::JSON),
        };
        let mut plain = 0;
        if name_bit != 0 && known(hint::NAME, name_bit) {
            plain |= PLAIN_NAME;
        }
        if desc_bit != 0 && known(hint::DESC, desc_bit) {
            plain |= PLAIN_DESC;
        }
        if location_bit != 0 && known(hint::LOCATION, location_bit) {
            plain |= PLAIN_LOCATION;
        }
        Item {
            skill,
            input,
            desc,
            location,
            ascii,
            plain,
            relevance,
            priority: 0,
            uses: 0,
        }
    }

    pub(super) fn pinned(&self) -> bool {
        self.skill.mode == SkillMode::Pinned
    }

    pub(super) fn name_only(&self) -> bool {
        self.skill.mode == SkillMode::NameOnly
    }

    pub(super) fn score(&self) -> f64 {
        self.relevance.unwrap_or(0.0)
    }
}
