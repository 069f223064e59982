//! The `<skill_content>` envelope's escaping: no body or argument can close
//! the envelope or fake a new one.

use std::borrow::Cow;

/// True when the bytes after a `<` open or close our envelope tag (ASCII
/// case-insensitive).
pub(super) fn is_envelope_tag(after_lt: &[u8]) -> bool {
    const TAG: &[u8] = b"skill_content";
    let t = after_lt.strip_prefix(b"/").unwrap_or(after_lt);
    t.get(..TAG.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(TAG))
}

/// `text` with the `<` of every `<skill_content` / `</skill_content` (any
/// case) replaced by `&lt;`; borrowed when there is none.
pub(crate) fn neutralise_envelope_tags(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    for i in memchr::memchr_iter(b'<', bytes) {
        if is_envelope_tag(&bytes[i + 1..]) {
            let o = out.get_or_insert_with(|| String::with_capacity(text.len() + 16));
            o.push_str(&text[copied..i]);
            o.push_str("&lt;");
            copied = i + 1;
        }
    }
    match out {
        None => Cow::Borrowed(text),
        Some(mut o) => {
            o.push_str(&text[copied..]);
            Cow::Owned(o)
        }
    }
}

/// XML escaping, defined once in [`crate::text::xml`].
pub use crate::text::xml::escape_xml;
