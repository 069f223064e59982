//! XML escaping: the five characters `& < > " '` written as entities, in
//! text and attribute values alike. The catalog's formats use the same
//! table through [`crate::catalog`]'s fast escaper, which calls
//! [`entity`] for each special byte.

use std::borrow::Cow;

/// The entity XML writes for `b`, when `b` is one of `& < > " '`.
#[inline]
pub fn entity(b: u8) -> Option<&'static str> {
    match b {
        b'&' => Some("&amp;"),
        b'<' => Some("&lt;"),
        b'>' => Some("&gt;"),
        b'"' => Some("&quot;"),
        b'\'' => Some("&apos;"),
        _ => None,
    }
}

/// `text` with `& < > " '` escaped for XML text and attribute values;
/// borrowed when there is nothing to escape.
pub fn escape_xml(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let Some(first) = bytes.iter().position(|&b| entity(b).is_some()) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 16);
    let mut copied = 0;
    for (i, &b) in bytes.iter().enumerate().skip(first) {
        if let Some(e) = entity(b) {
            out.push_str(&text[copied..i]);
            out.push_str(e);
            copied = i + 1;
        }
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_escaping_writes_the_five_entities_and_borrows_clean_text() {
        assert_eq!(
            escape_xml("a & b < c > d \" e ' f — é"),
            "a &amp; b &lt; c &gt; d &quot; e &apos; f — é"
        );
        assert_eq!(escape_xml("</skill_content>"), "&lt;/skill_content&gt;");
        assert!(matches!(escape_xml("plain — é"), Cow::Borrowed(_)));
    }
}
