//! The closing line of a catalog the budget could not list in full: how
//! many skills are not listed and how the model finds them
//! (`CatalogOptions::unlisted_hint`), so a shortened catalog never hides
//! that more exists. Written after the block in `xml` and `markdown`;
//! `json` (it must stay one JSON value) and `skills-ref` (it mirrors
//! skills-ref's output) carry no line: the explanation has the count.

use crate::catalog::escape::{Esc, push_escaped};
use crate::catalog::format::CatalogFormat;

/// The line for `unlisted` skills not listed, `listed` being listed; `None`
/// when there is nothing to say or the format carries no line.
pub(super) fn closing_line(
    format: CatalogFormat,
    unlisted: usize,
    listed: usize,
    hint: Option<&str>,
) -> Option<String> {
    if unlisted == 0 || matches!(format, CatalogFormat::Json | CatalogFormat::SkillsRef) {
        return None;
    }
    let skills = if unlisted == 1 { "skill" } else { "skills" };
    let mut line = if listed == 0 {
        let are = if unlisted == 1 { "is" } else { "are" };
        format!("{unlisted} {skills} {are} available but not listed here")
    } else {
        let are = if unlisted == 1 { "is" } else { "are" };
        format!("{unlisted} more {skills} {are} not listed here")
    };
    let mut out = String::with_capacity(line.len() + hint.map_or(0, str::len) + 8);
    if let Some(hint) = hint {
        line.push_str("; ");
        line.push_str(hint);
    }
    line.push('.');
    match format {
        CatalogFormat::Xml => push_escaped(&mut out, &line, Esc::Xml),
        _ => {
            if listed > 0 {
                out.push('\n');
            }
            out.push_str(&line);
        }
    }
    out.push('\n');
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_counts_and_points_to_the_search() {
        let hint = Some("find them with the `search_skills` tool");
        assert_eq!(
            closing_line(CatalogFormat::Xml, 3, 2, hint).as_deref(),
            Some("3 more skills are not listed here; find them with the `search_skills` tool.\n")
        );
        assert_eq!(
            closing_line(CatalogFormat::Markdown, 1, 4, None).as_deref(),
            Some("\n1 more skill is not listed here.\n")
        );
        assert_eq!(
            closing_line(CatalogFormat::Xml, 7, 0, None).as_deref(),
            Some("7 skills are available but not listed here.\n")
        );
        assert_eq!(closing_line(CatalogFormat::Json, 3, 2, hint), None);
        assert_eq!(closing_line(CatalogFormat::SkillsRef, 3, 2, hint), None);
        assert_eq!(closing_line(CatalogFormat::Xml, 0, 2, hint), None);
    }
}
