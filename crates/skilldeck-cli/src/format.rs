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
/// `validate`: text (default) or json.
pub const VALIDATE: &[Format] = &[Format::Text, Format::Json];
