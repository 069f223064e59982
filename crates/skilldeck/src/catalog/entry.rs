//! Writing entries: one skill per format ([`View`] decides full,
//! shortened or name-only), headers, footers and the whole text.

use crate::catalog::escape::Esc;
use crate::catalog::escape::push_escaped;
use crate::catalog::escape::push_text;
use crate::catalog::format::CatalogFormat;
use crate::catalog::item::Item;
use crate::catalog::item::PLAIN_DESC;
use crate::catalog::item::PLAIN_LOCATION;
use crate::catalog::item::PLAIN_NAME;
use crate::catalog::text::ELLIPSIS;
use crate::catalog::text::cut_end;

/// How one skill is rendered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum View {
    Full,
    /// Description at most this many characters.
    Cut(usize),
    NameOnly,
    Dropped,
}

pub(super) fn desc_esc(format: CatalogFormat) -> Esc {
    match format {
        CatalogFormat::Xml | CatalogFormat::Markdown => Esc::Xml,
        CatalogFormat::SkillsRef => Esc::Html,
        CatalogFormat::Json => Esc::Json,
    }
}

pub(super) fn header(format: CatalogFormat) -> &'static str {
    match format {
        CatalogFormat::Xml | CatalogFormat::SkillsRef => "<available_skills>\n",
        CatalogFormat::Markdown => "## Available skills\n\n",
        CatalogFormat::Json => "[\n",
    }
}

pub(super) fn footer(format: CatalogFormat) -> &'static str {
    match format {
        CatalogFormat::Xml | CatalogFormat::SkillsRef => "</available_skills>\n",
        CatalogFormat::Markdown => "",
        CatalogFormat::Json => "]\n",
    }
}

/// The description part of an entry: the first `end` bytes of the
/// description, with `…` when shortened.
#[derive(Clone, Copy)]
pub(super) struct DescPart {
    pub(super) end: usize,
    pub(super) shortened: bool,
}

/// Appends one entry (JSON entries end in `,\n`; the last comma is removed
/// when the catalog is assembled). Returns the byte range of the escaped
/// description text in `out` (without the `…`), if there is one.
pub(super) fn write_entry(
    out: &mut String,
    format: CatalogFormat,
    item: &Item<'_>,
    desc: Option<DescPart>,
) -> Option<(usize, usize)> {
    let name = item.skill.name.as_str();
    let plain_name = item.plain & PLAIN_NAME != 0;
    let plain_location = item.plain & PLAIN_LOCATION != 0;
    let mut range = None;
    let mut write_desc = |out: &mut String| range = write_desc(out, format, item, desc);
    match format {
        CatalogFormat::Xml => {
            // Fixed text between values goes in one piece.
            out.push_str("  <skill>\n    <name>");
            push_text(out, name, Esc::Xml, plain_name);
            if desc.is_some() {
                out.push_str("</name>\n    <description>");
                write_desc(out);
                out.push_str("</description>\n");
            } else {
                out.push_str("</name>\n");
            }
            if !item.location.is_empty() {
                out.push_str("    <location>");
                push_text(out, &item.location, Esc::Xml, plain_location);
                out.push_str("</location>\n");
            }
            out.push_str("  </skill>\n");
        }
        CatalogFormat::SkillsRef => {
            out.push_str("<skill>\n<name>\n");
            push_text(out, name, Esc::Html, plain_name);
            out.push_str("\n</name>\n");
            if desc.is_some() {
                out.push_str("<description>\n");
                write_desc(out);
                out.push_str("\n</description>\n");
            }
            out.push_str("<location>\n");
            push_escaped(out, &item.location, Esc::Raw);
            out.push_str("\n</location>\n</skill>\n");
        }
        CatalogFormat::Markdown => {
            out.push_str("- **");
            push_escaped(out, name, Esc::MarkdownName);
            out.push_str("**");
            if desc.is_some() {
                out.push_str(": ");
                write_desc(out);
            }
            if !item.location.is_empty() {
                out.push_str(" (");
                push_code_span(out, &item.location);
                out.push(')');
            }
            out.push('\n');
        }
        CatalogFormat::Json => {
            out.push_str("  {\"name\":\"");
            push_text(out, name, Esc::Json, plain_name);
            out.push_str("\",\"description\":");
            if desc.is_some() {
                out.push('"');
                write_desc(out);
                out.push('"');
            } else {
                out.push_str("null");
            }
            if !item.location.is_empty() {
                out.push_str(",\"location\":\"");
                push_text(out, &item.location, Esc::Json, plain_location);
                out.push('"');
            }
            out.push_str(",\"scope\":\"");
            out.push_str(item.skill.scope.as_str());
            out.push_str("\",\"mode\":\"");
            out.push_str(item.skill.mode.as_str());
            out.push_str("\",\"shortened\":");
            out.push_str(if desc.is_some_and(|d| d.shortened) {
                "true"
            } else {
                "false"
            });
            out.push_str("},\n");
        }
    }
    range
}

/// Appends the description part (escaped, with `…` when shortened) and
/// returns the byte range of its escaped text.
#[inline(always)]
pub(super) fn write_desc(
    out: &mut String,
    format: CatalogFormat,
    item: &Item<'_>,
    desc: Option<DescPart>,
) -> Option<(usize, usize)> {
    let part = desc?;
    let start = out.len();
    push_text(
        out,
        &item.desc[..part.end],
        desc_esc(format),
        item.plain & PLAIN_DESC != 0,
    );
    let range = Some((start, out.len()));
    if part.shortened {
        out.push_str(ELLIPSIS);
    }
    range
}

/// A Markdown code span, its fence longer than any backtick run in `text`.
pub(super) fn push_code_span(out: &mut String, text: &str) {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    let pad = if longest > 0 { " " } else { "" };
    out.push_str(&fence);
    out.push_str(pad);
    push_escaped(out, text, Esc::Xml);
    out.push_str(pad);
    out.push_str(&fence);
}

/// The description part for `view`, `None` for name-only.
pub(super) fn desc_part(item: &Item<'_>, view: View) -> Option<DescPart> {
    match view {
        View::Full => Some(DescPart {
            end: item.desc.len(),
            shortened: false,
        }),
        View::Cut(cap) => Some(match cut_end(&item.desc, cap) {
            Some(end) => DescPart {
                end,
                shortened: true,
            },
            None => DescPart {
                end: item.desc.len(),
                shortened: false,
            },
        }),
        View::NameOnly | View::Dropped => None,
    }
}

/// The whole catalog: entries in `output` order, dropped ones left out.
pub(super) fn render_text(
    format: CatalogFormat,
    items: &[Item<'_>],
    output: &[usize],
    views: &[View],
) -> String {
    let shown = || output.iter().filter(|&&i| views[i] != View::Dropped);
    if shown().next().is_none() && format != CatalogFormat::SkillsRef {
        return String::new();
    }
    let capacity: usize = shown()
        .map(|&i| {
            let item = &items[i];
            item.skill.name.len() + item.desc.len() + item.location.len() + 128
        })
        .sum();
    let mut out = String::with_capacity(capacity + 64);
    out.push_str(header(format));
    for &i in shown() {
        write_entry(&mut out, format, &items[i], desc_part(&items[i], views[i]));
    }
    if format == CatalogFormat::Json && out.ends_with(",\n") {
        out.truncate(out.len() - 2);
        out.push('\n');
    }
    out.push_str(footer(format));
    out
}
