//! SKILL.md to safe HTML: the frontmatter is cut off, the body rendered by
//! `pulldown-cmark` and the HTML ALWAYS passed through `ammonia` after it.
//! pulldown-cmark copies raw HTML (`<script>`, `<img onerror=...>`)
//! straight through, so its output is never trusted on its own: skill
//! content comes from whoever published it.

use pulldown_cmark::{Options, Parser, html};

use crate::limits::MAX_RENDERED_MARKDOWN_BYTES;

/// The body of a SKILL.md: the text after its `---` frontmatter block, or
/// the whole text when there is no such block.
pub fn skill_body(skill_md: &str) -> &str {
    let text = skill_md.strip_prefix('\u{feff}').unwrap_or(skill_md);
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return text;
    };
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        offset += line.len();
        if line.trim_end_matches(['\r', '\n']) == "---" {
            return &rest[offset..];
        }
    }
    // An unterminated frontmatter block: there is no body to show.
    ""
}

/// Markdown to HTML that is safe to place in a page: rendered, then
/// sanitised (no script, no event handler attribute, no `javascript:` or
/// other non-allowlisted URL scheme, no `style`, links get
/// `rel="noopener noreferrer nofollow"`). Text beyond
/// [`MAX_RENDERED_MARKDOWN_BYTES`] is cut at a character boundary first.
pub fn render_markdown(markdown: &str) -> String {
    let mut end = markdown.len().min(MAX_RENDERED_MARKDOWN_BYTES);
    while !markdown.is_char_boundary(end) {
        end -= 1;
    }
    let markdown = &markdown[..end];
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES;
    let mut unsafe_html = String::with_capacity(markdown.len() * 3 / 2);
    html::push_html(&mut unsafe_html, Parser::new_ext(markdown, options));
    sanitize_html(&unsafe_html)
}

/// The one place untrusted HTML is cleaned (ammonia's allowlist, links made
/// `noopener noreferrer nofollow`).
pub fn sanitize_html(untrusted: &str) -> String {
    ammonia::Builder::default()
        .link_rel(Some("noopener noreferrer nofollow"))
        .clean(untrusted)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_inert(html: &str) {
        let lower = html.to_ascii_lowercase();
        for needle in [
            "<script",
            "onerror",
            "onload",
            "onclick",
            "javascript:",
            "<iframe",
            "<style",
            "style=",
            "<object",
            "<embed",
            "<form",
            "srcdoc",
        ] {
            assert!(!lower.contains(needle), "{needle:?} survived in {html}");
        }
    }

    #[test]
    fn script_elements_in_a_skill_body_are_removed() {
        let out = render_markdown("# Hi\n\n<script>alert(1)</script>\n\ntext");
        assert_inert(&out);
        assert!(out.contains("<h1>Hi</h1>"), "{out}");
        assert!(out.contains("text"), "{out}");
    }

    #[test]
    fn event_handler_attributes_are_removed_from_raw_html() {
        let out =
            render_markdown("<img src=x onerror=alert(1)> and <a href=\"#\" onclick=\"x()\">a</a>");
        assert_inert(&out);
    }

    #[test]
    fn javascript_links_lose_their_href() {
        for md in [
            "[click](javascript:alert(1))",
            "<a href=\"javascript:alert(1)\">x</a>",
            "<a href=\"JaVaScRiPt:alert(1)\">x</a>",
            "[x](  javascript:alert(1) )",
            "![i](javascript:alert(1))",
            "<a href=\"data:text/html,<script>alert(1)</script>\">d</a>",
        ] {
            let out = render_markdown(md);
            assert_inert(&out);
            assert!(!out.contains("data:text/html"), "{out}");
        }
    }

    #[test]
    fn raw_html_blocks_frames_styles_and_forms_are_stripped() {
        let out = render_markdown(
            "<iframe src=\"https://evil\"></iframe>\n\n<style>body{display:none}</style>\n\n<form action=\"/ui/signout\" method=post><button>go</button></form>\n\n<p style=\"color:red\">p</p>\n\n<svg><script>alert(1)</script></svg>",
        );
        assert_inert(&out);
    }

    #[test]
    fn safe_markdown_keeps_its_structure_and_links_get_noopener() {
        let out = render_markdown(
            "## Use\n\n- one\n- two\n\n`code` and **bold**\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n[docs](https://example.org/x)",
        );
        for needle in [
            "<h2>Use</h2>",
            "<li>one</li>",
            "<code>code</code>",
            "<strong>bold</strong>",
            "<table>",
        ] {
            assert!(out.contains(needle), "{needle} missing in {out}");
        }
        assert!(out.contains("href=\"https://example.org/x\""), "{out}");
        assert!(
            out.contains("rel=\"noopener noreferrer nofollow\""),
            "{out}"
        );
    }

    #[test]
    fn the_frontmatter_is_not_part_of_the_rendered_body() {
        let md = "---\nname: x\ndescription: <script>alert(1)</script>\n---\n# Body\n";
        assert_eq!(skill_body(md), "# Body\n");
        assert_eq!(skill_body("---\r\nname: x\r\n---\r\nB"), "B");
        assert_eq!(skill_body("no frontmatter"), "no frontmatter");
        assert_eq!(skill_body("---\nname: x\nnever closed"), "");
    }

    #[test]
    fn oversized_markdown_is_cut_at_a_char_boundary() {
        let big = "é".repeat(MAX_RENDERED_MARKDOWN_BYTES);
        let out = render_markdown(&big);
        assert!(
            out.len() <= MAX_RENDERED_MARKDOWN_BYTES + 16,
            "{}",
            out.len()
        );
    }
}
