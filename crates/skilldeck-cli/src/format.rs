//! The one output format type of the commands, with one vocabulary:
//! `text` (for people: tables, rustc-style diagnostics), `markdown`, `json`
//! and `raw`. Older names stay accepted as aliases (`table` and `human` for
//! `text`, `md` for `markdown`). Each command accepts the subset it can
//! write ([`Format::parser`]): another value is a usage error listing the
//! accepted ones.

use clap::ValueEnum;
use clap::builder::{PossibleValuesParser, TypedValueParser};

/// How a command writes its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// For people: aligned columns (`list`, `search`, `doctor`),
    /// rustc-style diagnostics with source lines (`validate`).
    #[value(alias = "table", alias = "human")]
    Text,
    /// JSON (every command; the schema is the command's).
    Json,
    /// The bytes as they are (`read`).
    Raw,
    /// Markdown (`show`).
    #[value(alias = "md")]
    Markdown,
    /// SARIF 2.1.0 (`audit`: code-scanning UIs).
    Sarif,
}

impl Format {
    /// A parser accepting only `accepted` (and their aliases).
    pub fn parser(accepted: &'static [Format]) -> impl TypedValueParser<Value = Format> {
        PossibleValuesParser::new(accepted.iter().filter_map(ValueEnum::to_possible_value))
            .try_map(|s| <Format as ValueEnum>::from_str(&s, false))
    }
}

/// `read`: raw (default) or json.
pub const READ: &[Format] = &[Format::Raw, Format::Json];
/// `search`, `list`, `doctor`: text (default) or json.
pub const TABLE: &[Format] = &[Format::Text, Format::Json];
/// `show`: markdown (default) or json.
pub const SHOW: &[Format] = &[Format::Markdown, Format::Json];
/// `audit`: text (default), json or sarif.
pub const AUDIT: &[Format] = &[Format::Text, Format::Json, Format::Sarif];
/// `validate`: text (default) or json.
pub const VALIDATE: &[Format] = &[Format::Text, Format::Json];

/// serde_json's pretty printer, except that DEL, the C1 controls and the
/// bidi controls ([`skilldeck::spec::is_control`]) are written as `\uXXXX`
/// too: serde_json escapes only U+0000–U+001F, so a description holding
/// U+202E (RLO) or U+009B (CSI) would otherwise reach a terminal raw when
/// `--format json` is printed. The JSON is the same value either way.
pub struct SafeJson<'a>(serde_json::ser::PrettyFormatter<'a>);

impl SafeJson<'_> {
    /// Two-space indentation, like `serde_json::to_writer_pretty`.
    pub fn new() -> Self {
        SafeJson(serde_json::ser::PrettyFormatter::new())
    }
}

impl Default for SafeJson<'_> {
    fn default() -> Self {
        SafeJson::new()
    }
}

impl serde_json::ser::Formatter for SafeJson<'_> {
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        // Most text holds no candidate byte: one vectorized pass, no decoding.
        if !skilldeck::spec::may_hold_control(fragment) {
            return writer.write_all(fragment.as_bytes());
        }
        let mut start = 0;
        for (at, c) in fragment.char_indices() {
            if skilldeck::spec::is_control(c) {
                writer.write_all(&fragment.as_bytes()[start..at])?;
                write!(writer, "\\u{:04x}", u32::from(c))?;
                start = at + c.len_utf8();
            }
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }

    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_array(w)
    }

    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array(w)
    }

    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_array_value(w, first)
    }

    fn end_array_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array_value(w)
    }

    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object(w)
    }

    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object(w)
    }

    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_object_key(w, first)
    }

    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object_value(w)
    }

    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object_value(w)
    }
}

/// Writes `value` as pretty JSON with [`SafeJson`]'s escapes.
pub fn to_writer_safe<W: std::io::Write, T: serde::Serialize + ?Sized>(
    writer: W,
    value: &T,
) -> serde_json::Result<()> {
    let mut serializer = serde_json::Serializer::with_formatter(writer, SafeJson::new());
    value.serialize(&mut serializer)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn json_output_escapes_c1_and_bidi_controls_and_keeps_the_value() {
        let value = serde_json::json!({
            "d": "a\u{202e}b\u{9b}c\u{7f}d\u{1b}e — é 技",
            "list": [1, "x"],
        });
        let mut out = Vec::new();
        to_writer_safe(&mut out, &value).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(!text.chars().any(skilldeck::spec::is_control), "{text:?}");
        assert!(
            text.contains(r#""a\u202eb\u009bc\u007fd\u001be — é 技""#),
            "{text}"
        );
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, value);
        // The layout is serde_json's pretty one.
        assert_eq!(
            text.replace(r"\u202e", "\u{202e}")
                .replace(r"\u009b", "\u{9b}")
                .replace(r"\u007f", "\u{7f}"),
            serde_json::to_string_pretty(&value).unwrap()
        );
    }
}
