//! The one output format type of the commands. Each command accepts the
//! subset it can write ([`Format::parser`]): another value is a usage
//! error listing the accepted ones.

use clap::ValueEnum;
use clap::builder::{PossibleValuesParser, TypedValueParser};

/// How a command writes its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Aligned columns (`list`, `search`).
    Table,
    /// JSON (every command; the schema is the command's).
    Json,
    /// The bytes as they are (`read`).
    Raw,
    /// Markdown (`show`).
    Md,
    /// rustc-style diagnostics with source lines (`validate`).
    Human,
}

impl Format {
    /// A parser accepting only `accepted`.
    pub fn parser(accepted: &'static [Format]) -> impl TypedValueParser<Value = Format> {
        PossibleValuesParser::new(accepted.iter().filter_map(ValueEnum::to_possible_value))
            .try_map(|s| <Format as ValueEnum>::from_str(&s, false))
    }
}

/// `read`: raw (default) or json.
pub const READ: &[Format] = &[Format::Raw, Format::Json];
/// `search` and `list`: table (default) or json.
pub const TABLE: &[Format] = &[Format::Table, Format::Json];
/// `show`: md (default) or json.
pub const SHOW: &[Format] = &[Format::Md, Format::Json];
/// `validate`: human (default) or json.
pub const VALIDATE: &[Format] = &[Format::Human, Format::Json];
